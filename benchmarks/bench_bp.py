"""Speed of matrix belief propagation against a straightforward numpy version.

Prints, from one run, our time, the time of a vectorised numpy implementation
of the same equations (Ping & Ihler 2017, Algorithm 1, in log-odds form with
``np.logaddexp``; written below) and their ratio, for

(a) 10 iterations of sum-product BP on one random RBM with 1000 visible and
    500 hidden units (Ping & Ihler report 0.5 s for their Matlab code);
(b) 10 iterations on a batch of 100 input-dependent models of 784 visible x
    256 hidden units sharing ``W`` (a conditional RBM's mini-batch);
(c) Ping & Ihler's largest case, 10,000 visible x 2,000 hidden units: 10
    iterations against numpy, and our time until convergence (tol 1e-3).

Each row also prints the largest difference between our beliefs and numpy's.
Run: ``python benchmarks/bench_bp.py`` (``--quick`` skips the numpy run of (c)).
"""

import argparse
import time

import numpy as np

from sklearn_rbm.inference import belief_propagation


def best_of(function, repeat):
    """Smallest wall time of ``repeat`` calls, and the last result."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
    return min(times), result


def numpy_bp(W, B1, B2, n_iter, chunk=10):
    """Ping & Ihler's Algorithm 1 (sum product) in numpy, ``chunk`` models at once.

    Messages are log-odds arrays of shape (chunk, n_hidden, n_visible): ``A``
    from h to v (their Eq. (13)) and ``B`` from v to h (their Eq. (14)), each
    ``softplus(W + cavity) - softplus(cavity)`` with ``np.logaddexp``.
    """
    visible, hidden = np.empty(B1.shape), np.empty(B2.shape)
    for start in range(0, B1.shape[0], chunk):
        b, c = B1[start : start + chunk], B2[start : start + chunk]
        A = np.zeros((b.shape[0],) + W.shape)
        B = np.zeros_like(A)
        visible_logit, hidden_logit = b, c
        for _ in range(n_iter):
            cavity = hidden_logit[:, :, None] - B
            A = np.logaddexp(0.0, W + cavity) - np.logaddexp(0.0, cavity)
            visible_logit = b + A.sum(axis=1)
            cavity = visible_logit[:, None, :] - A
            B = np.logaddexp(0.0, W + cavity) - np.logaddexp(0.0, cavity)
            hidden_logit = c + B.sum(axis=2)
        visible[start : start + chunk] = 1.0 / (1.0 + np.exp(-visible_logit))
        hidden[start : start + chunk] = 1.0 / (1.0 + np.exp(-hidden_logit))
    return visible, hidden


def random_models(n_samples, n_visible, n_hidden, scale, seed=0):
    rng = np.random.default_rng(seed)
    W = scale * rng.standard_normal((n_hidden, n_visible))
    return (
        W,
        rng.standard_normal((n_samples, n_visible)),
        rng.standard_normal((n_samples, n_hidden)),
    )


def compare(task, W, B1, B2, repeat, n_iter=10):
    """One table row: ours and numpy for ``n_iter`` iterations, and the gap."""
    ours, result = best_of(
        lambda: belief_propagation(W, B1, B2, max_iter=n_iter, tol=0.0), repeat
    )
    peer, (visible, hidden) = best_of(lambda: numpy_bp(W, B1, B2, n_iter), repeat)
    gap = max(
        np.abs(result.visible - visible).max(), np.abs(result.hidden - hidden).max()
    )
    return (task, ours, "numpy", peer, gap)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip numpy on (c)")
    args = parser.parse_args()
    # Compile (or load the cached kernels) before timing.
    belief_propagation(np.zeros((2, 3)), np.zeros(3), np.zeros(2))
    rows = [
        compare("(a) 1000 x 500, 10 iter", *random_models(1, 1000, 500, 0.1), 3),
        compare(
            "(b) 100 x (784 x 256), 10 iter", *random_models(100, 784, 256, 0.1), 1
        ),
    ]
    W, B1, B2 = random_models(1, 10_000, 2_000, 0.1)
    if args.quick:
        ours, _ = best_of(lambda: belief_propagation(W, B1, B2, max_iter=10, tol=0), 1)
        rows.append(("(c) 10000 x 2000, 10 iter", ours, "-", np.nan, np.nan))
    else:
        rows.append(compare("(c) 10000 x 2000, 10 iter", W, B1, B2, 1))
    ours, result = best_of(lambda: belief_propagation(W, B1, B2, tol=1e-3), 1)
    task = f"(c) to tol 1e-3 ({result.n_iter[0]} iter)"
    rows.append((task, ours, "-", np.nan, np.nan))

    print(
        f"{'task':34s} {'ours (s)':>9s}  {'peer':6s} {'peer (s)':>9s} "
        f"{'ours/peer':>9s} {'max |diff|':>10s}"
    )
    for task, ours, peer_name, peer, gap in rows:
        print(
            f"{task:34s} {ours:9.3f}  {peer_name:6s} {peer:9.3f} "
            f"{ours / peer:9.3f} {gap:10.1e}"
        )


if __name__ == "__main__":
    main()
