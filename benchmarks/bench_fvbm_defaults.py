"""FVBMPseudoLikelihood with its default settings on the data users bring.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_fvbm_defaults.py            # full data
    PYTHONPATH=. python benchmarks/bench_fvbm_defaults.py --quick    # 400 rows each

For each data set and solver (``penalty='l2'`` with the default ``alpha=0``,
and ``penalty='l1'`` with ``alpha=0.01`` for the solvers that support it) the
table gives the wall-clock and CPU seconds of one fit (kernels compiled
beforehand; on a busy machine the CPU seconds are the better guide), the
iterations, the warnings raised (category and count), ``mple_exists_``,
``alpha_`` (the penalty the fit kept: the automatic ridge ``1/n_samples`` where
the MPLE does not exist) and the mean log pseudo-likelihood per sample on the
training rows and on held-out rows (a quarter of each data set).

The data: ``load_digits`` binarised at 8 (10 pixels constant, two on in one
image only), ``load_breast_cancer`` and ``load_wine`` binarised at each
feature's median, and a well-posed FVBM sample (d = 10, n = 2,000) with a
constant and a duplicated column appended.
"""

import argparse
import time
import warnings
from collections import Counter

import numpy as np
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.model_selection import train_test_split

from sklearn_rbm import FVBMPseudoLikelihood
from sklearn_rbm.datasets import make_fvbm

SOLVERS = ["newton", "nodewise", "mm", "bslm", "ga", "lbfgs"]
L1_SOLVERS = ["newton", "nodewise"]
L1_ALPHA = 0.01


def binarised_at_median(data):
    return (data > np.median(data, axis=0)).astype(float)


def data_sets():
    sample = make_fvbm(2000, 10, coupling_variance=0.05, random_state=0)[0]
    constant = np.ones((2000, 1))
    return {
        "digits > 7": (load_digits().data > 7).astype(float),
        "breast cancer": binarised_at_median(load_breast_cancer().data),
        "wine": binarised_at_median(load_wine().data),
        "constant + duplicate": np.hstack([sample, constant, sample[:, :1]]),
    }


def configurations():
    for solver in SOLVERS:
        yield solver, {"solver": solver}
    for solver in L1_SOLVERS:
        yield f"{solver} l1", {"solver": solver, "penalty": "l1", "alpha": L1_ALPHA}


def warmed_up():
    """Compile every solver's kernels on a tiny fit, so that the table times runs."""
    X = make_fvbm(200, 4, coupling_variance=0.1, random_state=1)[0]
    for _, params in configurations():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            FVBMPseudoLikelihood(**params).fit(X)


def summary(caught):
    counts = Counter(w.category.__name__ for w in caught)
    return ", ".join(f"{name} x{n}" if n > 1 else name for name, n in counts.items())


def run(name, X, label, params):
    train, test = train_test_split(X, test_size=0.25, random_state=0)
    est = FVBMPseudoLikelihood(**params)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        start, cpu = time.perf_counter(), time.process_time()
        est.fit(train)
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
    return (
        f"| {name} | {label} | {seconds:.2f} | {cpu:.2f} | {est.n_iter_} | "
        f"{summary(caught) or '-'} | {est.mple_exists_} | {est.alpha_:.2g} | "
        f"{est.pseudo_log_likelihood(train).mean():.3f} | "
        f"{est.pseudo_log_likelihood(test).mean():.3f} |"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="400 rows per data set")
    args = parser.parse_args()
    warmed_up()
    print(
        "| data | solver | seconds | CPU seconds | iterations | warnings "
        "| mple_exists_ | alpha_ | train log-PL | held-out log-PL |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, X in data_sets().items():
        if args.quick:
            X = X[np.random.default_rng(0).permutation(X.shape[0])[:400]]
        for label, params in configurations():
            print(run(name, X, label, params), flush=True)


if __name__ == "__main__":
    main()
