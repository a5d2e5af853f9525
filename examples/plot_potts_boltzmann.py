"""
========================================================================
Generative Potts models: Boltzmann-machine learning and mutation effects
========================================================================

A Potts model fitted by pseudo-likelihood predicts contacts well, but its
samples do not reproduce the family's statistics: its connected two-site
correlations are too weak. :class:`~sklearn_rbm.PottsBoltzmannMachine` fits
the same model by maximum likelihood on persistent Gibbs chains (bmDCA,
Figliuzzi, Barrat-Charlaix & Weigt 2018; adabmDCA, Muntoni et al. 2021), so
that its samples do (by default it starts from a pseudo-likelihood fit of
its own and corrects it). The left panels plot the models' connected
correlations against the data's (:func:`sklearn_rbm.sequences.compare_correlations`
gives their Pearson correlation and slope); the right panel is the map of
single-mutant effects ``log P(mutant) - log P(wild type)`` of the Boltzmann
machine at the family's first sequence (EVmutation, Hopf et al. 2017).

The alignment is read from the path in the environment variable
``SKLEARN_RBM_PF00014`` (the file ``PF00014_mgap6.fasta.gz``) or the first
argument; without it the example uses sequences sampled from a synthetic
Potts model. ``SKLEARN_RBM_EXAMPLE_QUICK=1`` runs a small, fast version.
"""

# %%
# The data
# --------
import os
import sys
import warnings

import matplotlib.pyplot as plt
import numpy as np

from sklearn_rbm import PottsBoltzmannMachine, PottsPseudoLikelihood
from sklearn_rbm.sequences import (
    ALPHABETS,
    compare_correlations,
    connected_correlations,
    parse_mutations,
    read_alignment,
    sequence_weights,
)

quick = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
path = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("SKLEARN_RBM_PF00014")

if path and os.path.exists(path) and not quick:
    X, _ = read_alignment(path)
    n_states, title = 21, "PF00014 (Kunitz domain)"
else:
    from sklearn_rbm.datasets import make_potts

    X = make_potts(2000 if quick else 5000, 12, n_states=4, random_state=0)[0]
    n_states, title = 4, "synthetic Potts model"
w = sequence_weights(X)
print(f"{title}: {X.shape[0]} sequences x {X.shape[1]} positions")

# %%
# Pseudo-likelihood and Boltzmann-machine fits
# --------------------------------------------
plm = PottsPseudoLikelihood(n_states=n_states, n_jobs=2).fit(X, sample_weight=w)
settings = {"n_chains": 2000, "max_iter": 300} if quick else {}
with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # a quick run may stop before the target
    bm = PottsBoltzmannMachine(
        n_states=n_states, n_jobs=2, random_state=0, **settings
    ).fit(X, sample_weight=w)
print(f"Boltzmann machine: {bm.n_iter_} updates, {bm.history_['time'][-1]:.0f} s")

# As many samples of each model: the correlations of few samples are noisy,
# which lowers the Pearson correlation of even a perfect model.
n_samples = 2000 if quick else 100_000
samples = {
    "pseudo-likelihood": plm.sample(n_samples, random_state=0),
    "Boltzmann machine": bm.sample(n_samples, random_state=0),
}
data = connected_correlations(X, w, n_states=n_states, pseudocount=1 / w.sum())
rows, cols = np.triu_indices(X.shape[1], k=1)

# %%
# Connected correlations and mutation effects
# -------------------------------------------
fig, axes = plt.subplots(1, 3, figsize=(15, 4.5))
for ax, (name, S) in zip(axes[:2], samples.items(), strict=True):
    model = connected_correlations(S, n_states=n_states)
    check = compare_correlations(X, S, sample_weight=w, n_states=n_states)
    ax.scatter(data[rows, cols].ravel(), model[rows, cols].ravel(), s=1, alpha=0.3)
    top = np.abs(data[rows, cols]).max()
    ax.plot([-top, top], [-top, top], "k--", lw=0.8)
    ax.set_title(f"{name}\nPearson {check.pearson:.3f}, slope {check.slope:.2f}")
    ax.set_xlabel("data $C_{ij}(a, b)$")
    ax.set_ylabel("samples $C_{ij}(a, b)$")
    print(f"{name}: {check}")

wild_type = X[0]
effects = bm.mutation_effects(wild_type)
image = axes[2].imshow(effects.T, aspect="auto", cmap="RdBu", vmin=-8, vmax=8)
axes[2].set_xlabel("position")
axes[2].set_ylabel("mutant state")
axes[2].set_title("log P(mutant) - log P(wild type)")
fig.colorbar(image, ax=axes[2])
fig.tight_layout()

# %%
# A deep-mutational-scanning table is scored in a few lines: parse the
# labels against the wild type, read the single mutants off the map.
if n_states == 21:
    alphabet = ALPHABETS["protein"]
    wild = "".join(alphabet[c] for c in wild_type)
    column = int(np.argmax(wild_type > 0))
    labels = [f"{wild[column]}{column + 1}{mutant}" for mutant in "AVW"]
    labels = [label for label in labels if label[0] != label[-1]]
    for label, (i, a) in zip(labels, parse_mutations(labels, wild), strict=True):
        print(f"{label}: {effects[i[0], a[0]]:+.2f}")
plt.show()
