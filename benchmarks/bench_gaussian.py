"""GaussianBernoulliRBM: speed against the matrix-product floor, and held-out
density on digits against scikit-learn's GaussianMixture.

``python benchmarks/bench_gaussian.py`` prints, from one run,

(a) one epoch of PCD-1 (500 hidden units, batch 100, 784 standardised pixels,
    5,000 Fashion-MNIST images; the MNIST subset or random data when it is
    absent) with ``sigma`` learned and fixed, in float64 and float32, against
    the floor of the five matrix products a PCD-1 mini-batch needs (timed in
    numpy; the floor of ``bench_dcp.py``), for a whole ``fit`` of one epoch and
    for the marginal epoch of a longer fit; and ``DCPBernoulliRBM``'s epoch on
    the same images scaled to [0, 1], for reference;
(b) with ``--density``: the held-out log-density (nats per image) of the 8x8
    digits as grey levels, dequantised (uniform noise in [0, 1) added to the
    17 levels) and standardised, 70/30 split, for Gaussian mixtures and for
    RBMs of several sizes (exact log-likelihood up to 20 hidden units, AIS
    with its band beyond). Each RBM is trained on 90% of the training part;
    the other 10%, scored every 50 epochs of 600, chooses the epoch. About
    half an hour on two idle cores.

(c) with ``--bounds``: a 20-hidden-unit RBM fitted to those digits (centred
    S-DCP, 200 epochs), its exact held-out log-density, and the bracket of
    ``log_likelihood_bounds`` (RAISE below, forward AIS above) on 100 test
    images for several temperature counts, with the time of each side and
    their ratio (RAISE runs its chains from every row: about ``n_rows`` times
    one forward AIS run).

``--quick`` makes a smoke-sized run; ``--blas-threads 1`` gives steadier
ratios on a shared machine (see ``bench_dcp.py``).
"""

import argparse
import copy
import os
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from sklearn_rbm import DCPBernoulliRBM, GaussianBernoulliRBM

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_dcp import pcd_floor  # noqa: E402


def load_images():
    """5,000 grey-level images in [0, 1] and their standardised version."""
    try:
        from sklearn_rbm.datasets import load_fashion_mnist

        X = load_fashion_mnist("train")[0][:5000]
        name = "Fashion-MNIST"
    except FileNotFoundError:
        try:
            from sklearn_rbm.datasets import load_mnist_subset

            X, name = load_mnist_subset()[0], "MNIST subset"
        except ImportError:
            X, name = np.random.default_rng(0).random((5000, 784)), "random"
    return X, StandardScaler().fit_transform(X), name


# ------------------------------------------------------------------- speed
def _fit(estimator, X):
    return lambda: estimator.fit(X)


def interleaved_best(functions, repeat):
    """Smallest wall time of each function over ``repeat`` rounds, each round
    calling every function once (after one warm-up round): on a machine shared
    with other work, all of them see the same load."""
    times = {name: [] for name in functions}
    for round_ in range(repeat + 1):
        for name, function in functions.items():
            start = time.perf_counter()
            function()
            if round_ > 0:
                times[name].append(time.perf_counter() - start)
    return {name: min(values) for name, values in times.items()}


def bench_pcd(unit_scaled, standardised, repeat):
    """PCD-1 epochs of 500 hidden units, batch 100, against the 5-GEMM floor."""
    settings = dict(n_components=500, solver="pcd", batch_size=100, random_state=0)
    rows = []
    for dtype in (np.float64, np.float32):
        X, name = standardised.astype(dtype), np.dtype(dtype).name
        functions = {"floor": pcd_floor(X, 500, 100)}
        for sigma in ("learn", 1.0):
            for n_iter in (1, 3):
                rbm = GaussianBernoulliRBM(
                    learning_rate=0.001, sigma=sigma, n_iter=n_iter, **settings
                )
                functions[sigma, n_iter] = _fit(rbm, X)
        binary = DCPBernoulliRBM(learning_rate=0.05, n_iter=1, **settings)
        functions["binary"] = _fit(binary, unit_scaled.astype(dtype))
        best = interleaved_best(functions, repeat)
        floor = best["floor"]
        for sigma in ("learn", 1.0):
            one, three = best[sigma, 1], best[sigma, 3]
            label = f"PCD-1 epoch, {name}, sigma={sigma}"
            rows.append((label, one, "5-GEMM floor (numpy)", floor))
            # fit(n_iter=1) also pays the set-up of a fit; the marginal epoch
            # (from fits of 1 and 3 epochs) does not.
            rows.append(
                (f"{label} (marginal)", (three - one) / 2, "5-GEMM floor", floor)
            )
        rows.append(
            (
                f"DCPBernoulliRBM PCD-1 epoch, {name}",
                best["binary"],
                "5-GEMM floor",
                floor,
            )
        )
    return rows


def print_speed(rows):
    print(
        f"{'task':44s} {'ours (s)':>9s}  {'peer':22s} {'peer (s)':>9s} "
        f"{'ours/peer':>9s}"
    )
    for task, ours, peer_name, peer in rows:
        print(f"{task:44s} {ours:9.3f}  {peer_name:22s} {peer:9.3f} {ours / peer:9.2f}")


# ----------------------------------------------------------------- density
def dequantised_digits(seed=0):
    """Digits grey levels plus uniform noise, standardised, 70/30 split."""
    X = load_digits().data
    X = X + np.random.default_rng(seed).random(X.shape)
    X_train, X_test = train_test_split(X, test_size=0.3, random_state=0)
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test)


def mixture_rows(X_train, X_test, quick):
    rows = []
    for covariance, sizes in (("full", (1, 2, 3, 4, 6, 8)), ("diag", (1, 20, 33, 50))):
        for k in sizes[:2] if quick else sizes:
            start = time.perf_counter()
            scores = [
                GaussianMixture(k, covariance_type=covariance, max_iter=500,
                                random_state=seed).fit(X_train).score(X_test)
                for seed in range(3)
            ]  # fmt: skip
            rows.append((
                f"GaussianMixture {covariance}, {k} component(s)",
                np.mean(scores), f"mean of 3 seeds (sd {np.std(scores):.2f})",
                time.perf_counter() - start,
            ))  # fmt: skip
    return rows


# CD-25 at every size; centred S-DCP at two, at equal cost per mini-batch
# (d = 3 inner steps of K' = 8 Gibbs steps; Upadhya & Sastry compare CD-K with
# d * K' = K).
CD_25 = ("CD-25", dict(solver="cd", n_gibbs_steps=25, learning_rate=0.01))
CS_DCP = (
    "CS-DCP (3 x 8)",
    dict(solver="csdcp", n_gibbs_steps=8, n_inner_steps=3, learning_rate=0.003),
)
RBM_RUNS = [(16, CD_25), (20, CD_25), (20, CS_DCP), (64, CD_25), (128, CD_25),
            (128, CS_DCP), (256, CD_25)]  # fmt: skip


def train_with_validation(rbm, X_train, n_epochs, every, seed=0):
    """``partial_fit`` epochs on 90% of ``X_train``; every ``every`` epochs the
    other 10% is scored (AIS beyond 20 hidden units) and the best model kept."""
    order = np.random.default_rng(seed).permutation(len(X_train))
    n_val = len(X_train) // 10
    X_fit, X_val = X_train[order[n_val:]], X_train[order[:n_val]]
    best, best_score, best_epoch = None, -np.inf, 0
    for epoch in range(1, n_epochs + 1):
        rbm.partial_fit(X_fit)
        if epoch % every == 0:
            score = rbm.score(X_val)
            if score > best_score:
                best, best_score, best_epoch = copy.deepcopy(rbm), score, epoch
    return best, best_epoch


def rbm_rows(X_train, X_test, quick):
    rows = []
    runs = [(16, CD_25), (64, CS_DCP)] if quick else RBM_RUNS
    for n_components, (name, settings) in runs:
        start = time.perf_counter()
        rbm = GaussianBernoulliRBM(
            n_components=n_components, batch_size=20, ais_betas=1000,
            random_state=0, **settings,
        )  # fmt: skip
        rbm, epoch = train_with_validation(
            rbm, X_train, n_epochs=20 if quick else 600, every=10 if quick else 50
        )
        fit_seconds = time.perf_counter() - start
        rbm.set_params(ais_betas=1000 if quick else 10_000)
        score = rbm.score(X_test)
        estimate = rbm.log_partition_
        band = (
            "exact"
            if estimate.method == "exact"
            else f"AIS, band [{score + estimate.log_z - estimate.upper:.2f}, "
            f"{score + estimate.log_z - estimate.lower:.2f}]"
        )
        rows.append((
            f"GaussianBernoulliRBM {n_components:3d} hidden, {name}",
            score, f"epoch {epoch}, {band}", fit_seconds,
        ))  # fmt: skip
    return rows


def print_density(rows):
    print(f"\n{'model':46s} {'held-out nats/image':>20s}  {'note':46s} {'s':>6s}")
    for model, score, note, seconds in rows:
        print(f"{model:46s} {score:20.2f}  {note:46s} {seconds:6.0f}")


def bounds_rows(X_train, X_test, temperatures):
    """The bracket of a 20-unit RBM against its exact log-density."""
    rbm = GaussianBernoulliRBM(
        n_components=20, batch_size=20, n_iter=200, learning_rate=0.01,
        random_state=0,
    ).fit(X_train)  # fmt: skip
    X = X_test[:100]
    exact = rbm.score(X)
    print(f"\n20 hidden units, 100 test images: exact {exact:.3f} nats/image")
    print(
        f"{'temperatures':>12s} {'lower':>9s} {'upper':>9s} {'width':>7s} "
        f"{'AIS (s)':>8s} {'RAISE (s)':>9s} {'RAISE/AIS':>9s}"
    )
    for n_betas in temperatures:
        rbm.set_params(ais_betas=n_betas, score_method="ais")
        start = time.perf_counter()
        rbm.log_partition_function()
        ais_seconds = time.perf_counter() - start
        start = time.perf_counter()
        lower, upper = rbm.log_likelihood_bounds(X)
        both_seconds = time.perf_counter() - start
        raise_seconds = both_seconds - ais_seconds
        print(
            f"{n_betas:12d} {lower:9.3f} {upper:9.3f} {upper - lower:7.3f} "
            f"{ais_seconds:8.2f} {raise_seconds:9.2f} "
            f"{raise_seconds / ais_seconds:9.1f}"
        )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run")
    parser.add_argument("--density", action="store_true", help="the digits table")
    parser.add_argument("--bounds", action="store_true", help="the RAISE bracket")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timing rounds (default: 3)"
    )
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="BLAS threads (default: all)"
    )
    args = parser.parse_args()
    with threadpool_limits(args.blas_threads, user_api="blas"):
        if args.bounds:
            X_train, X_test = dequantised_digits()
            bounds_rows(X_train, X_test, (10, 100) if args.quick else (30, 300, 3000))
        elif args.density:
            X_train, X_test = dequantised_digits()
            print_density(
                mixture_rows(X_train, X_test, args.quick)
                + rbm_rows(X_train, X_test, args.quick)
            )
        else:
            unit_scaled, standardised, name = load_images()
            if args.quick:
                unit_scaled, standardised = unit_scaled[:1000], standardised[:1000]
            n_images, n_pixels = standardised.shape
            print(f"{name}: {n_images} images of {n_pixels} pixels")
            print_speed(
                bench_pcd(unit_scaled, standardised, 1 if args.quick else args.repeat)
            )


if __name__ == "__main__":
    main()
