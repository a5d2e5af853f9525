"""Structure learning with ``penalty='l1'``: the edges of a sparse Ising model.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_fvbm_structure.py            # d = 100
    PYTHONPATH=. python benchmarks/bench_fvbm_structure.py --quick    # d = 30

The truth: d = 100 units on a random graph in which every unit has 3 to 5
neighbours, couplings of magnitude U(0.3, 0.6) with random signs, intercepts
N(0, 0.1); n = 5,000 samples drawn by Gibbs sampling (``sample_fvbm``).

For the joint L1 fit ('newton') and the node-wise route of Ravikumar,
Wainwright & Lafferty (2010) ('nodewise', AND rule), alpha is chosen by
3-fold cross-validation on the held-out pseudo-likelihood (``GridSearchCV``
with ``scoring=`` the mean of ``pseudo_log_likelihood``; at d = 100 the exact
likelihood cannot be enumerated and AIS for every fold and alpha would cost
more than the fits). The table gives the precision and recall of the
recovered edge set at the chosen alpha, and along the whole path, with the
seconds of one fit.
"""

import argparse
import time

import numpy as np
from sklearn.model_selection import GridSearchCV
from threadpoolctl import threadpool_limits

from sklearn_rbm import FVBMPseudoLikelihood
from sklearn_rbm.datasets import sample_fvbm

ALPHAS = np.geomspace(0.005, 0.2, 9)


def random_graph(d, rng, degrees=(3, 4, 5)):
    """Symmetric couplings on a random graph whose degrees lie in ``degrees``
    (the configuration model: pair up stubs, drop loops and repeats, retry
    until every degree is in range)."""
    while True:
        stubs = np.repeat(np.arange(d), rng.choice(degrees, size=d))
        if stubs.size % 2:
            continue
        rng.shuffle(stubs)
        coupling = np.zeros((d, d))
        for j, k in stubs.reshape(-1, 2):
            if j != k and coupling[j, k] == 0:
                value = rng.choice([-1, 1]) * rng.uniform(0.3, 0.6)
                coupling[j, k] = coupling[k, j] = value
        degree = np.count_nonzero(coupling, axis=0)
        if degree.min() >= min(degrees) and degree.max() <= max(degrees):
            return coupling


def pseudo_likelihood_score(estimator, X, y=None):
    return estimator.pseudo_log_likelihood(X).mean()


def precision_recall(coupling, truth):
    upper = np.triu_indices(truth.shape[0], 1)
    found, real = coupling[upper] != 0, truth[upper] != 0
    true_positive = np.sum(found & real)
    precision = true_positive / max(found.sum(), 1)
    return precision, true_positive / real.sum(), found.sum()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="d = 30, n = 2,000")
    args = parser.parse_args()
    d, n = (30, 2_000) if args.quick else (100, 5_000)
    rng = np.random.default_rng(0)
    truth = random_graph(d, rng)
    intercept = rng.normal(0.0, np.sqrt(0.1), d)
    start = time.perf_counter()
    X = sample_fvbm(truth, intercept, n, random_state=0)
    n_edges = np.count_nonzero(np.triu(truth))
    print(
        f"d = {d}, n = {n}, {n_edges} edges (degrees 3 to 5), "
        f"sampled in {time.perf_counter() - start:.0f} s"
    )
    with threadpool_limits(limits=1, user_api="blas"):
        for solver in ("newton", "nodewise"):
            estimator = FVBMPseudoLikelihood(solver=solver, penalty="l1")
            search = GridSearchCV(
                estimator,
                {"alpha": ALPHAS},
                cv=3,
                scoring=pseudo_likelihood_score,
            ).fit(X)
            best = search.best_params_["alpha"]
            print(f"\nsolver={solver!r}: alpha chosen by 3-fold CV = {best:.4f}")
            print(f"{'alpha':>8} {'edges':>6} {'precision':>10} {'recall':>7} "
                  f"{'seconds':>8} {'CV score':>9}")  # fmt: skip
            for alpha, score in zip(
                ALPHAS, search.cv_results_["mean_test_score"], strict=True
            ):
                start = time.perf_counter()
                est = FVBMPseudoLikelihood(solver=solver, penalty="l1", alpha=alpha)
                est.fit(X)
                seconds = time.perf_counter() - start
                precision, recall, found = precision_recall(est.coupling_, truth)
                mark = "  <- CV" if alpha == best else ""
                print(
                    f"{alpha:8.4f} {found:6d} {precision:10.3f} {recall:7.3f} "
                    f"{seconds:8.2f} {score:9.4f}{mark}"
                )


if __name__ == "__main__":
    main()
