"""Digits denoising/completion with noise augmentation: LR, CD-10, MLE-BP.

Protocol (per random_state r):
* the 1,797 binarised digits shuffled with RandomState(0); the first 1,300
  are training images, the last 497 test images (as in the example);
* the 1,300 training images split by r into 1,040 fitting and 260 validation
  *images*; every image corrupted K times (independent draws whose random
  states depend on r), so fitting has 1,040*K pairs, validation 260*K pairs of
  held-out images;
* the test images corrupted K_TEST times (random states depending on r);
* every method fitted with every rate of its grid, {0.1, 0.05, 0.02} for the
  CRBMs (64 hidden units) and {0.1, 0.05, 0.02, 0.01} for LR, mini-batches of
  20, at most 100 epochs (200 for LR), early stopping on the held-out images'
  pixel error with patience 5, and the rate with the lowest held-out error
  kept (the test images are used only for the reported errors).

The estimator's own ``validation_fraction`` splits *rows*, which with K
corruptions per image would put corruptions of the same clean image on both
sides; the held-out images are used instead. ``HeldOut`` below passes them
through ``fit(X, Y, X_val=..., Y_val=...)`` and, to reproduce the committed
results (produced before ``fit`` took held-out data, by a row split that drew
one permutation), draws that one permutation before the initial weights, so
that the random stream, and every number in
``exp_crbm_augmented_results.jsonl``, is reproduced bit for bit. New code
should call ``fit(X, Y, X_val=..., Y_val=...)`` as it is (other, equally
valid, initial weights).

One JSON line per (random state, task, method) on stdout; its ``seed`` field
is the random state r.

Usage: python exp_crbm_augmented.py SEEDS TASKS METHODS [K] [K_TEST] [HIDDEN]
       [RATES, colon-separated] [BATCH_SIZE]
(SEEDS: comma-separated random states r.)
"""

import json
import sys
import time

import numpy as np

from sklearn_rbm import ConditionalRBMRegressor
from sklearn_rbm.datasets import flip_pixels, load_binary_digits, occlude_patches

PATIENCE = 5


class HeldOut(ConditionalRBMRegressor):
    """``fit`` with held-out images, drawing the permutation that the row
    split of the original runs drew (the random stream of the results)."""

    def fit(self, X, Y, **held_out):
        self._n_fit_rows = len(X)
        return super().fit(X, Y, **held_out)

    def _initialise(self, n_features, n_outputs, rs):
        rs.permutation(self._n_fit_rows)
        super()._initialise(n_features, n_outputs, rs)


def corrupt(Y, task, k, seed):
    Xs = []
    for d in range(k):
        rs = 1000 * seed + d
        if task == "f10":
            Xs.append(flip_pixels(Y, 0.1, random_state=rs))
        elif task == "f20":
            Xs.append(flip_pixels(Y, 0.2, random_state=rs))
        elif task == "o3":
            Xs.append(occlude_patches(Y, 3, random_state=rs))
        elif task == "o4":
            Xs.append(occlude_patches(Y, 4, random_state=rs))
    return np.vstack(Xs), np.tile(Y, (k, 1))


METHODS = {
    "LR": dict(n_components=0, n_iter=200, rates=(0.1, 0.05, 0.02, 0.01)),
    "CD-10": dict(solver="cd", n_gibbs_steps=10, n_iter=100, rates=(0.1, 0.05, 0.02)),
    "MLE-BP": dict(solver="bp", n_iter=100, rates=(0.1, 0.05, 0.02)),
}


def main():
    seeds = [int(s) for s in sys.argv[1].split(",")]
    tasks = sys.argv[2].split(",")
    methods = sys.argv[3].split(",")
    k = int(sys.argv[4]) if len(sys.argv) > 4 else 5
    k_test = int(sys.argv[5]) if len(sys.argv) > 5 else 5
    hidden = int(sys.argv[6]) if len(sys.argv) > 6 else 64
    rates_override = sys.argv[7] if len(sys.argv) > 7 else None
    batch_size = int(sys.argv[8]) if len(sys.argv) > 8 else 20
    Yall, _ = load_binary_digits()
    Yall = Yall[np.random.RandomState(0).permutation(len(Yall))]
    Ytr, Yte = Yall[:1300], Yall[1300:]
    for seed in seeds:
        perm = np.random.RandomState(seed).permutation(1300)
        Yfit, Yval = Ytr[perm[260:]], Ytr[perm[:260]]
        for task in tasks:
            Xf, Yf = corrupt(Yfit, task, k, 10 * seed + 1)
            Xv, Yv = corrupt(Yval, task, k, 10 * seed + 2)
            Xt, Yt = corrupt(Yte, task, k_test, 10 * seed + 3)
            for name in methods:
                spec = dict(METHODS[name])
                rates = spec.pop("rates")
                if rates_override:
                    rates = tuple(float(r) for r in rates_override.split(":"))
                if name != "LR":
                    spec["n_components"] = hidden
                best, log = None, []
                t0 = time.perf_counter()
                for rate in rates:
                    t1 = time.perf_counter()
                    m = HeldOut(
                        learning_rate=rate, batch_size=batch_size, early_stopping=True,
                        n_iter_no_change=PATIENCE, random_state=seed, **spec,
                    ).fit(Xf, Yf, X_val=Xv, Y_val=Yv)  # fmt: skip
                    errors = m.history_["validation_error"]
                    log.append(
                        (rate, m.best_validation_error_, 1 + int(np.argmin(errors)),
                         len(errors), time.perf_counter() - t1)
                    )  # fmt: skip
                    if (
                        best is None
                        or m.best_validation_error_ < best.best_validation_error_
                    ):
                        best = m
                wrong = best.predict(Xt) != Yt
                res = dict(
                    seed=seed, task=task, method=name, k=k, k_test=k_test,
                    hidden=spec["n_components"], batch_size=batch_size,
                    rate=best.learning_rate,
                    all=100 * wrong.mean(), changed=100 * wrong[Xt != Yt].mean(),
                    val=100 * best.best_validation_error_, grid=log,
                    seconds=time.perf_counter() - t0,
                )  # fmt: skip
                print(json.dumps(res), flush=True)


if __name__ == "__main__":
    main()
