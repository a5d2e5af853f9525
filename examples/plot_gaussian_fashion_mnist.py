"""
==========================================================================
Gaussian-Bernoulli RBM on grey-level images: features, filters and samples
==========================================================================

A :class:`~sklearn_rbm.GaussianBernoulliRBM` models real-valued data: here the
grey levels of Fashion-MNIST (Xiao, Rasul & Vollgraf 2017), standardised
pixel by pixel. Its hidden-unit probabilities ``p(h = 1 | v)`` are features
for a classifier. We compare, on 10,000 training images and the 10,000 test
images:

* logistic regression on the raw pixels (scaled to [0, 1]);
* scikit-learn's :class:`~sklearn.neural_network.BernoulliRBM` on the pixels
  scaled to [0, 1] (grey levels read as probabilities), then logistic
  regression;
* ``Pipeline([StandardScaler, GaussianBernoulliRBM, LogisticRegression])``,
  with ``sigma`` fixed at 1 (the standardised data's scale) and learned,

every RBM with 500 hidden units, 10 epochs, mini-batches of 20 and a learning
rate of 0.01. Then we look at the weights (one filter per hidden unit) and at
samples of the model.

Without Fashion-MNIST (``apt-get install dataset-fashion-mnist``) the example
runs on scikit-learn's 8x8 digits.
"""

# %%
import os
import time

import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import BernoulliRBM
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_rbm import GaussianBernoulliRBM
from sklearn_rbm.datasets import load_fashion_mnist

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"

try:
    X_train, y_train = load_fashion_mnist("train")
    X_test, y_test = load_fashion_mnist("test")
    X_train, y_train = X_train[:10_000], y_train[:10_000]
    data_name, side, n_components = "Fashion-MNIST", 28, 500
except FileNotFoundError:
    X, y = load_digits(return_X_y=True)
    X = X / 16.0
    X_train, X_test, y_train, y_test = X[:1200], X[1200:], y[:1200], y[1200:]
    data_name, side, n_components = "8x8 digits", 8, 128
if QUICK:
    X_train, y_train, n_components = X_train[:2000], y_train[:2000], 100
    X_test, y_test = X_test[:2000], y_test[:2000]
n_epochs = 3 if QUICK else 10


def classifier():
    return LogisticRegression(max_iter=1000)


# %%
# The models. The Gaussian RBMs use the centred gradient ('cg'), which stays
# stable with many hidden units; their steps are in the units of the
# standardised data.
def gaussian_rbm(sigma):
    return GaussianBernoulliRBM(
        n_components=n_components, solver="cg", sigma=sigma, learning_rate=0.01,
        batch_size=20, n_iter=n_epochs, n_gibbs_steps=1, momentum=0.0,
        random_state=0,
    )  # fmt: skip


models = {
    "logistic regression, raw pixels": Pipeline([("clf", classifier())]),
    "BernoulliRBM (sklearn) + LR": Pipeline(
        [
            ("rbm", BernoulliRBM(n_components=n_components, learning_rate=0.01,
                                 batch_size=20, n_iter=n_epochs, random_state=0)),
            ("clf", classifier()),
        ]
    ),
    "GaussianBernoulliRBM sigma=1 + LR": Pipeline(
        [("scale", StandardScaler()), ("rbm", gaussian_rbm(1.0)),
         ("clf", classifier())]
    ),
    "GaussianBernoulliRBM learned sigma + LR": Pipeline(
        [("scale", StandardScaler()), ("rbm", gaussian_rbm("learn")),
         ("clf", classifier())]
    ),
}  # fmt: skip

results = {}
for name, model in models.items():
    start = time.perf_counter()
    model.fit(X_train, y_train)
    results[name] = (model.score(X_test, y_test), time.perf_counter() - start)

print(
    f"{data_name}: {len(X_train)} training and {len(X_test)} test images, "
    f"{n_components} hidden units, {n_epochs} epochs"
)
print(f"{'features':40s} {'test accuracy':>14s} {'fit time (s)':>13s}")
for name, (accuracy, seconds) in results.items():
    print(f"{name:40s} {accuracy:14.3f} {seconds:13.1f}")

# %%
# Fixing ``sigma`` at the data's scale gives the better features; learning it
# gives the better density model (see the user guide). Filters and samples of
# the latter: each row of ``components_`` is the change of the mean image
# ``b + W^T h`` when that hidden unit turns on; the samples are ends of Gibbs
# chains started from independent Gaussians, shown in grey levels (the
# scaler's inverse transform).
pipe = models["GaussianBernoulliRBM learned sigma + LR"]
rbm, scaler = pipe.named_steps["rbm"], pipe.named_steps["scale"]
samples = scaler.inverse_transform(rbm.sample(16, n_steps=200, random_state=0))
strongest = np.argsort(-np.linalg.norm(rbm.components_, axis=1))[:32]

fig, axes = plt.subplots(6, 8, figsize=(8, 6.4))
for ax, unit in zip(axes[:4].ravel(), strongest, strict=True):
    ax.imshow(rbm.components_[unit].reshape(side, side), cmap="RdBu_r")
for ax, sample in zip(axes[4:].ravel(), samples, strict=True):
    ax.imshow(np.clip(sample, 0, 1).reshape(side, side), cmap="gray_r")
for ax in axes.ravel():
    ax.set_xticks([])
    ax.set_yticks([])
axes[0, 0].set_title("filters (largest 32)", loc="left", fontsize=9)
axes[4, 0].set_title("samples (200 Gibbs steps)", loc="left", fontsize=9)
fig.suptitle(f"GaussianBernoulliRBM on {data_name}")
fig.tight_layout()
plt.show()
