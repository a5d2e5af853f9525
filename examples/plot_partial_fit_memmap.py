"""
===================================================================
Training on data larger than memory: partial_fit over a memory map
===================================================================

:meth:`~sklearn_rbm.DCPBernoulliRBM.partial_fit` makes one pass of
mini-batch updates over the rows it is given and keeps everything else (the
weights, the persistent chains of ``solver='pcd'``, the centring offsets) for
the next call. A data set that does not fit in memory can therefore be
streamed from disk one chunk at a time. Here the 60,000 training images of
Fashion-MNIST (Xiao, Rasul & Vollgraf 2017) are written once to a
memory-mapped ``.npy`` file, in a shuffled order (a chunk should look like
the whole data set, not like one class), and an RBM with 100 hidden units
learns from chunks of 5,000 rows read from that file. Only one chunk is in
memory at a time; the operating system pages the rest in and out.

After each chunk the example prints one progress line, and it measures how
well the model reconstructs 1,000 held-out images: the cross-entropy of the
pixels under ``p(v | h)`` with ``h = p(h | v)``, in nats per image (the
uniform model, every pixel 0.5, gives 784 log 2 = 543 nats).

Fashion-MNIST comes from the Debian package ``dataset-fashion-mnist``; without
it the example streams scikit-learn's 8x8 digits (grey levels scaled to
[0, 1]) instead. ``SKLEARN_RBM_EXAMPLE_QUICK=1`` streams 10,000 rows once.
"""

# %%
import os
import tempfile
import time

import matplotlib.pyplot as plt
import numpy as np
from scipy.special import log_expit
from sklearn.datasets import load_digits

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.datasets import load_fashion_mnist

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"
CHUNK_ROWS = 2_000 if QUICK else 5_000
N_PASSES = 1 if QUICK else 2

try:
    images, _ = load_fashion_mnist("train", dtype=np.float32)
    data_name, image_shape = "Fashion-MNIST", (28, 28)
except FileNotFoundError as missing:
    print(f"{missing}\nStreaming scikit-learn's 8x8 digits instead.")
    images = (load_digits().data / 16.0).astype(np.float32)
    data_name, image_shape, CHUNK_ROWS = "8x8 digits", (8, 8), 300
if QUICK:
    images = images[:10_000]

# %%
# Write the memory map once
# -------------------------
# ``numpy.lib.format.open_memmap`` creates a ``.npy`` file that ``np.load``
# can open later with ``mmap_mode='r'``. The rows go in a random order, and
# the last 1,000 are kept aside as held-out images.
rng = np.random.default_rng(0)
order = rng.permutation(len(images))
folder = tempfile.mkdtemp(prefix="sklearn_rbm_")
path = os.path.join(folder, "images.npy")
on_disk = np.lib.format.open_memmap(
    path, mode="w+", dtype=images.dtype, shape=images.shape
)
for start in range(0, len(images), CHUNK_ROWS):
    on_disk[start : start + CHUNK_ROWS] = images[order[start : start + CHUNK_ROWS]]
on_disk.flush()
del on_disk, images  # from here on, the data live on disk only

X = np.load(path, mmap_mode="r")
n_held_out = 1_000 if len(X) > 5_000 else 200
X_held_out = np.array(X[-n_held_out:])
n_train = len(X) - n_held_out
print(f"{data_name}: {n_train:,} training rows in {path} ({X.nbytes / 2**20:.0f} MiB)")


def reconstruction_cross_entropy(rbm, V):
    """Mean cross-entropy (nats per image) of ``V`` under ``p(v | p(h | v))``."""
    logits = rbm.transform(V) @ rbm.components_ + rbm.intercept_visible_
    return -np.mean(np.sum(V * log_expit(logits) + (1 - V) * log_expit(-logits), 1))


# %%
# Stream the chunks through partial_fit
# -------------------------------------
# Each call reads one chunk from the file (a slice of a memory map is read
# only when it is used) and makes ``CHUNK_ROWS / batch_size`` updates.
rbm = DCPBernoulliRBM(
    n_components=100, solver="pcd", learning_rate=0.02, batch_size=50, random_state=0
)
chunk_starts = range(0, n_train, CHUNK_ROWS)
rows_seen, curve = 0, []
for n_pass in range(1, N_PASSES + 1):
    for index, start in enumerate(chunk_starts, 1):
        stop = min(start + CHUNK_ROWS, n_train)
        tick = time.perf_counter()
        rbm.partial_fit(X[start:stop])
        seconds = time.perf_counter() - tick
        rows_seen += stop - start
        curve.append((rows_seen, reconstruction_cross_entropy(rbm, X_held_out)))
        print(
            f"pass {n_pass}/{N_PASSES}, chunk {index}/{len(chunk_starts)} "
            f"(rows {start:,}-{stop:,}), {seconds:.2f} s, "
            f"held-out reconstruction {curve[-1][1]:.1f} nats"
        )

# %%
# What was learnt
# ---------------
# The held-out reconstruction improves chunk by chunk; the filters (rows of
# ``components_``) show the shapes of clothes.
fig = plt.figure(figsize=(10, 4.5))
curve_axis = fig.add_subplot(1, 2, 1)
rows, nats = np.array(curve).T
curve_axis.plot(rows, nats, marker="o")
curve_axis.set(
    xlabel="training rows streamed",
    ylabel="held-out reconstruction (nats per image)",
    title=f"partial_fit over a memory map ({data_name})",
)
for k in range(16):
    axis = fig.add_subplot(4, 8, 5 + 8 * (k // 4) + k % 4)
    axis.imshow(rbm.components_[k].reshape(image_shape), cmap="RdBu_r")
    axis.set_axis_off()
fig.tight_layout()
plt.show()

# %%
# The file is not needed any more.
del X
os.remove(path)
os.rmdir(folder)
