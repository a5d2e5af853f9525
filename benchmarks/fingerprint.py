"""Fingerprints of fitted models, to show that a refactor changed no result.

``record OUT.npz`` fits every estimator with every solver in the settings a
refactor is likely to disturb (dense, sparse and float32 data, momentum,
early stopping with exact and AIS scores, partial_fit, warm starts, held-out
data) and saves every fitted array and history column; ``compare A.npz
B.npz`` reports the arrays that differ, bit for bit. Timing columns are left
out. Fitted bits depend on the BLAS library, so compare fingerprints recorded
on the same machine and environment:

    git stash; python benchmarks/fingerprint.py record before.npz; git stash pop
    python benchmarks/fingerprint.py record after.npz
    python benchmarks/fingerprint.py compare before.npz after.npz
"""

import argparse
import hashlib
import warnings

import numpy as np
import scipy.sparse as sp
from sklearn.datasets import load_digits

from sklearn_rbm import (
    ConditionalRBMRegressor,
    DCPBernoulliRBM,
    FrankWolfeRBM,
    FVBMPseudoLikelihood,
    GaussianBernoulliRBM,
)
from sklearn_rbm.datasets import load_binary_digits, make_fvbm

RBM = ["components_", "intercept_visible_", "intercept_hidden_", "n_iter_", "history_"]
CRBM = [
    "components_", "coef_", "hidden_coef_", "intercept_", "intercept_hidden_",
    "n_iter_", "n_skipped_batches_", "history_", "inference_max_iter_",
]  # fmt: skip
FVBM = ["coupling_", "intercept_", "n_iter_", "pseudo_likelihood_curve_"]
GAUSSIAN = RBM + ["sigma_"]
TIMINGS = ("seconds", "time")


def _put(out, name, estimator, attributes):
    for attribute in attributes:
        value = getattr(estimator, attribute, None)
        if isinstance(value, dict):
            for key, column in value.items():
                if key not in TIMINGS:
                    out[f"{name}|{attribute}|{key}"] = np.asarray(column)
        elif value is not None:
            out[f"{name}|{attribute}"] = np.asarray(value)


def _dcp(out, X):
    variants = {
        "dense": (X, {}),
        "f32": (X.astype(np.float32), {}),
        "sparse": (sp.csr_matrix(X), {}),
        "momentum": (X, dict(momentum=0.5, weight_decay=1e-3)),
        "early": (X, dict(early_stopping=True, n_iter_no_change=2, n_iter=8)),
        "k3": (X, dict(n_gibbs_steps=3)),
    }
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp"):
        for tag, (data, extra) in variants.items():
            params = dict(
                n_components=16, solver=solver, n_iter=4, batch_size=20,
                learning_rate=0.05, random_state=0,
            )  # fmt: skip
            params.update(extra)
            _put(out, f"dcp-{solver}-{tag}", DCPBernoulliRBM(**params).fit(data), RBM)
        rbm = DCPBernoulliRBM(n_components=16, solver=solver, random_state=1)
        rbm.partial_fit(X[:200]).partial_fit(X[200:])
        _put(out, f"dcp-{solver}-partial", rbm, RBM)
        rbm = DCPBernoulliRBM(
            n_components=30, solver=solver, n_iter=2, batch_size=50, random_state=2,
            early_stopping=True, n_iter_no_change=1, ais_betas=50, ais_n_chains=10,
        ).fit(X)  # fmt: skip
        _put(out, f"dcp-{solver}-ais", rbm, RBM)
        out[f"dcp-{solver}-ais|score"] = np.asarray(rbm.score(X[:50]))


def _frank_wolfe(out, X):
    for scale in ("line-search", "one"):
        fw = FrankWolfeRBM(
            max_components=6, unit_scale=scale, n_samples_per_step=100, random_state=0
        ).fit(X)
        _put(out, f"fw-{scale}", fw, RBM + ["n_components_"])
    fw = FrankWolfeRBM(
        max_components=5, n_samples_per_step=100, score_every=2, random_state=3
    ).fit(X, X_val=X[:50])
    _put(out, "fw-held-out", fw, RBM + ["n_components_"])
    _put(out, "fw-fine-tune", fw.fine_tune(X, n_iter=2, random_state=0), RBM)


def _conditional(out, X):
    rng = np.random.RandomState(0)
    Y, Xc = X[:300, :16], X[:300, 16:] + 0.1 * rng.randn(300, 48)
    for solver in ("cd", "cd-percloss", "mf", "bp", "mssvm", "lssvm"):
        crbm = ConditionalRBMRegressor(
            n_components=8, solver=solver, n_iter=3, n_gibbs_steps=2, random_state=0
        ).fit(Xc, Y)
        _put(out, f"crbm-{solver}", crbm, CRBM)
        out[f"crbm-{solver}|predict"] = crbm.predict(Xc[:20])
        crbm = ConditionalRBMRegressor(
            n_components=8, solver=solver, n_iter=6, n_gibbs_steps=2,
            early_stopping=True, n_iter_no_change=2, random_state=1,
        ).fit(Xc.astype(np.float32), Y)  # fmt: skip
        _put(out, f"crbm-{solver}-early", crbm, CRBM)
    lr = ConditionalRBMRegressor(n_components=0, n_iter=3, random_state=0).fit(Xc, Y)
    _put(out, "crbm-lr", lr, CRBM)
    warm = ConditionalRBMRegressor(n_components=8, n_iter=2, init=lr, random_state=0)
    _put(out, "crbm-warm", warm.fit(Xc, Y), CRBM)
    out["crbm-warm|score"] = np.asarray(warm.score(Xc, Y))


def _fvbm(out):
    X, _, _ = make_fvbm(2000, 8, random_state=0)
    for solver in ("bslm", "ga", "mm", "lbfgs"):
        fvbm = FVBMPseudoLikelihood(solver=solver, random_state=0).fit(X)
        _put(out, f"fvbm-{solver}", fvbm, FVBM + ["coupling_std_", "intercept_std_"])
        out[f"fvbm-{solver}|score"] = np.asarray(fvbm.score(X[:50]))
    for name, params in (
        ("newton", dict(solver="newton")),
        ("nodewise", dict(solver="nodewise")),
        ("newton-l1", dict(solver="newton", penalty="l1", alpha=0.01)),
    ):
        fvbm = FVBMPseudoLikelihood(random_state=0, **params).fit(X)
        _put(out, f"fvbm-{name}", fvbm, FVBM)


def _tempering(out, X):
    for solver in ("pt", "cpt"):
        rbm = DCPBernoulliRBM(
            n_components=16, solver=solver, n_iter=3, batch_size=20,
            n_temperatures=3, random_state=0,
        ).fit(X)  # fmt: skip
        _put(out, f"dcp-{solver}", rbm, RBM + ["betas_"])


def _gaussian(out, X):
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp", "pt"):
        for sigma in ("learn", 1.0):
            rbm = GaussianBernoulliRBM(
                n_components=8, solver=solver, sigma=sigma, n_iter=3,
                batch_size=20, random_state=0,
            ).fit(X)  # fmt: skip
            _put(out, f"gaussian-{solver}-{sigma}", rbm, GAUSSIAN)
            out[f"gaussian-{solver}-{sigma}|score"] = np.asarray(rbm.score(X[:50]))


def record(path):
    warnings.simplefilter("ignore")
    X = load_binary_digits()[0][:400]
    out = {}
    _dcp(out, X)
    _frank_wolfe(out, X)
    _conditional(out, X)
    _fvbm(out)
    _tempering(out, X)
    grey = load_digits().data[:400]
    _gaussian(out, (grey - grey.mean(axis=0)) / (grey.std(axis=0) + 1.0))
    np.savez(path, **out)
    digest = hashlib.sha256()
    for key in sorted(out):
        digest.update(key.encode() + np.ascontiguousarray(out[key]).tobytes())
    print(f"{len(out)} arrays, digest {digest.hexdigest()[:16]}, saved to {path}")


def compare(before, after):
    a, b = np.load(before), np.load(after)
    for key in sorted(set(a.files) - set(b.files)):
        print(f"only in {before}: {key}")
    for key in sorted(set(b.files) - set(a.files)):
        print(f"only in {after}: {key}")
    shared = sorted(set(a.files) & set(b.files))
    differ = [k for k in shared if a[k].dtype != b[k].dtype or a[k].shape != b[k].shape
              or a[k].tobytes() != b[k].tobytes()]  # fmt: skip
    for key in differ:
        print(f"differs: {key}")
    print(f"{len(shared) - len(differ)} of {len(shared)} shared arrays identical")
    return not differ


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    commands.add_parser("record").add_argument("path")
    compare_parser = commands.add_parser("compare")
    compare_parser.add_argument("before")
    compare_parser.add_argument("after")
    args = parser.parse_args()
    if args.command == "record":
        record(args.path)
    else:
        raise SystemExit(0 if compare(args.before, args.after) else 1)


if __name__ == "__main__":
    main()
