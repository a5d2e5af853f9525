"""Compile the kernels a first use needs into a folder that ships with the package.

``python -m sklearn_rbm._precompile FOLDER`` is what ``pip install`` runs (the
build step in ``setup.py``): every kernel compiled by the calls of
:data:`SHIPPED` is written to ``FOLDER`` (see ``_numerics/cache.py``). They
reach each estimator's default fit (float64; float32 too for the Gaussian
RBM, whose real-valued data often comes as float32) with its queries and
exact and AIS scores, and every call of the demo tour (``python -m
sklearn_rbm``), on data a few rows long, so the time goes to compiling and
not to fitting. The solvers of an RBM share one compiled update (the ladder
and the weights are run-time switches), so the default fit ships them all. A
kernel reached otherwise (a hidden unit type other than Bernoulli and the
categorical RBM's dReLU, a conditional-RBM solver off the tour, float32 data)
compiles on its first call into the per-user folder, and every later
environment of the user finds it there.

The groups run in separate processes, ``--jobs`` at a time (the number of
cores, at most 4), each filling a folder of its own with
``SKLEARN_RBM_KERNEL_CACHE_BUILD`` set; the folders are merged at the end
through numba's index files (two processes that compiled the same kernel for
the same types wrote the same code; one copy is kept). The build reads and
fills the per-user folder too, so a second installation of the same sources
copies instead of compiling.

:data:`COVERAGE` is the wider set the build shipped before it was cut to the
first use (every solver, hidden unit type and dtype):
``benchmarks/bench_compile.py --coverage`` measures what it costs to compile.
"""

import argparse
import os
import shutil
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np


def _binary(n_rows, n_features, dtype, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.random((n_rows, n_features)) < 0.4).astype(dtype)


def _real(n_rows, n_features, dtype, seed=0):
    return (
        np.random.default_rng(seed).standard_normal((n_rows, n_features)).astype(dtype)
    )


def dcp_uses(dtype):
    """DCPBernoulliRBM: every solver, exact and AIS scores, the queries."""
    from sklearn_rbm import DCPBernoulliRBM

    X = _binary(24, 6, dtype)
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp", "pt", "cpt"):
        rbm = DCPBernoulliRBM(
            n_components=3, solver=solver, batch_size=8, n_iter=1, random_state=0
        ).fit(X)
    _rbm_queries(rbm, X)
    # Exact log Z by parallel blocks of states (more than 12 units in each layer).
    X14 = _binary(24, 14, dtype)
    DCPBernoulliRBM(n_components=14, n_iter=1, random_state=0).fit(X14).score(X14)
    # The defaults: 256 hidden units, early stopping on held-out rows.
    DCPBernoulliRBM(n_iter=1, random_state=0).fit(X)
    DCPBernoulliRBM(
        n_components=3, n_iter=2, early_stopping=True, validation_fraction=0.25,
        random_state=0,
    ).fit(X)  # fmt: skip


def _rbm_queries(rbm, X):
    """Every query of a fitted RBM, exact and AIS scores included."""
    rbm.score(X)
    rbm.transform(X)
    rbm.gibbs(X)
    rbm.free_energy(X)
    rbm.sample(2, n_steps=2, random_state=0)
    rbm.partial_fit(X)
    rbm.set_params(score_method="ais", ais_betas=10, ais_n_chains=4)
    rbm.score(X)
    rbm.log_likelihood_bounds(X[:2])


def gaussian_uses(dtype):
    """GaussianBernoulliRBM: every solver, learned and fixed sigma, the queries."""
    from sklearn_rbm import GaussianBernoulliRBM

    X = _real(24, 5, dtype)
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp", "pt", "cpt"):
        for sigma in ("learn", 1.0):
            rbm = GaussianBernoulliRBM(
                n_components=3, solver=solver, sigma=sigma, batch_size=8, n_iter=1,
                random_state=0,
            ).fit(X)  # fmt: skip
    _rbm_queries(rbm, X)
    GaussianBernoulliRBM(n_components=14, n_iter=1, random_state=0).fit(X).score(X)
    GaussianBernoulliRBM(n_iter=1, random_state=0).fit(X)


def conditional_uses(dtype):
    """ConditionalRBMRegressor: every solver and inference, the queries."""
    from sklearn_rbm import ConditionalRBMRegressor
    from sklearn_rbm._conditional.inference import INFERENCES

    X, Y = _real(20, 5, dtype), _binary(20, 4, dtype, seed=1)
    for solver in ("cd", "cd-percloss", "mf", "bp", "mssvm", "lssvm"):
        for n_components in (3, 0):
            crbm = ConditionalRBMRegressor(
                n_components=n_components, solver=solver, batch_size=10, n_iter=1,
                random_state=0,
            ).fit(X, Y)  # fmt: skip
            crbm.predict(X)
    crbm = ConditionalRBMRegressor(n_components=3, n_iter=1, random_state=0).fit(X, Y)
    for inference in INFERENCES:
        crbm.infer(X, inference=inference)
    crbm.predict_proba(X)
    for score_method in ("auto", "exact", "bethe", "ais"):
        crbm.set_params(score_method=score_method, ais_betas=10, ais_n_chains=4)
        crbm.score(X, Y)
    ConditionalRBMRegressor(n_iter=1, random_state=0).fit(X, Y)


def frank_wolfe_uses(dtype):
    """FrankWolfeRBM: growth with exact and AIS scores, fine-tuning."""
    from sklearn_rbm import FrankWolfeRBM

    X = _binary(40, 6, dtype)
    fw = FrankWolfeRBM(max_components=3, n_samples_per_step=20, random_state=0).fit(X)
    fw.score(X)
    fw.transform(X)
    FrankWolfeRBM(
        max_components=3, n_samples_per_step=20, score_method="ais", ais_betas=10,
        ais_n_chains=4, score_every=1, unit_scale="one", random_state=0,
    ).fit(X)  # fmt: skip
    fw.fine_tune(X, n_iter=1, batch_size=10, random_state=0)
    FrankWolfeRBM(max_components=2, random_state=0).fit(X)


def fvbm_uses(dtype):
    """FVBMPseudoLikelihood: every solver and penalty, the queries."""
    from sklearn_rbm import FVBMPseudoLikelihood
    from sklearn_rbm._fvbm.solvers import SOLVERS

    X = _binary(60, 5, dtype)
    for solver, spec in SOLVERS.items():
        for penalty in getattr(spec, "penalties", ("l2",)):
            fvbm = FVBMPseudoLikelihood(
                solver=solver, penalty=penalty, alpha=0.01, max_iter=2, random_state=0
            ).fit(X)
    fvbm = FVBMPseudoLikelihood(alpha=0.01, random_state=0).fit(X)
    fvbm.score(X)
    fvbm.pseudo_log_likelihood(X)
    fvbm.sample(2, burn_in=2, thinning=1, random_state=0)
    fvbm.confidence_intervals()
    fvbm.set_params(score_method="ais", ais_betas=10, ais_n_chains=4)
    fvbm.score(X)
    FVBMPseudoLikelihood(random_state=0).fit(X)


def potts_uses():
    """PottsPseudoLikelihood and sklearn_rbm.sequences: the fit (uint8 codes,
    as read_alignment gives them), the queries, exact and AIS scores."""
    from sklearn_rbm import PottsPseudoLikelihood
    from sklearn_rbm.sequences import sequence_weights

    X = np.random.default_rng(0).integers(0, 3, size=(40, 5)).astype(np.uint8)
    w = sequence_weights(X)
    potts = PottsPseudoLikelihood(max_iter=2, random_state=0).fit(X, sample_weight=w)
    potts.score(X)
    potts.energy(X)
    potts.pseudo_log_likelihood(X)
    potts.sample(2, burn_in=2, thinning=1, random_state=0)
    potts.set_params(score_method="ais", ais_betas=10, ais_n_chains=4)
    potts.score(X)


def categorical_uses(dtype):
    """CategoricalRBM: every solver and hidden unit type, sample weights,
    exact and AIS scores, the bounds, the queries."""
    from sklearn_rbm import CategoricalRBM

    rng = np.random.RandomState(0)
    X = rng.randint(0, 3, size=(24, 4)).astype(dtype)
    weights = np.linspace(0.5, 1.5, 24)
    for hidden_unit in ("bernoulli", "gaussian", "relu", "drelu"):
        for solver in ("cd", "pcd", "cg", "sdcp", "csdcp", "pt", "cpt"):
            rbm = CategoricalRBM(
                n_components=3, hidden_unit=hidden_unit, solver=solver, batch_size=8,
                n_iter=1, random_state=0,
            )  # fmt: skip
            rbm.fit(X)
            rbm.fit(X, sample_weight=weights)
        rbm.score(X)
        rbm.transform(X)
        rbm.gibbs(X)
        rbm.sample(2, n_steps=2, random_state=0)
        rbm.sample(2, n_steps=2, method="pt", random_state=0)
        rbm.set_params(score_method="ais", ais_betas=10, ais_n_chains=4)
        rbm.score(X)
        rbm.log_likelihood_bounds(X[:2])
    CategoricalRBM(n_components=3, l1b=0.1, l2_fields=0.1, n_iter=1).fit(X)


def first_use_binary():
    """The defaults of the RBMs of binary data (every solver: one compiled
    update per pair of layers), their queries, and the tour's calls of them."""
    from sklearn_rbm import DCPBernoulliRBM, FrankWolfeRBM

    X = _binary(24, 6, np.float64)
    _rbm_queries(DCPBernoulliRBM(n_iter=1, random_state=0).fit(X), X)
    FrankWolfeRBM(max_components=2, random_state=0).fit(_binary(40, 6, np.float64))
    # The tour: exact log Z by blocks (more than 12 units in each layer),
    # early stopping on held-out rows.
    X14 = _binary(24, 14, np.float64)
    DCPBernoulliRBM(n_components=14, n_iter=1, random_state=0).fit(X14).score(X14)
    DCPBernoulliRBM(
        n_components=3, n_iter=2, early_stopping=True, validation_fraction=0.25,
        random_state=0,
    ).fit(X)  # fmt: skip


def first_use_real():
    """The Gaussian RBM's defaults in float64 and float32 (real data often
    comes as float32), its queries, a fixed sigma (the tour's), and the
    conditional RBM's defaults and the tour's solvers."""
    from sklearn_rbm import ConditionalRBMRegressor, GaussianBernoulliRBM

    for dtype in (np.float64, np.float32):
        R = _real(24, 5, dtype)
        _rbm_queries(GaussianBernoulliRBM(n_iter=1, random_state=0).fit(R), R)
    GaussianBernoulliRBM(n_components=3, sigma=1.0, n_iter=1, random_state=0).fit(R)
    X, Y = _real(20, 5, np.float64), _binary(20, 4, np.float64, seed=1)
    crbm = ConditionalRBMRegressor(n_iter=1, random_state=0).fit(X, Y)
    crbm.predict(X)
    crbm.predict_proba(X)
    crbm.score(X, Y)
    for solver in ("cd", "bp"):  # the tour's, from a random start
        ConditionalRBMRegressor(
            n_components=3, solver=solver, batch_size=10, n_iter=1, init=None,
            random_state=0,
        ).fit(X, Y).predict(X)  # fmt: skip


def first_use_sequences():
    """The categorical RBM's, the Potts model's and the FVBM's defaults,
    their queries, and the tour's calls of them."""
    from sklearn_rbm import CategoricalRBM

    codes = np.random.RandomState(0).randint(0, 3, size=(24, 4)).astype(np.float64)
    rbm = CategoricalRBM(n_iter=1, random_state=0).fit(codes)
    rbm.fit(codes, sample_weight=np.linspace(0.5, 1.5, 24))
    _rbm_queries(rbm, codes)
    potts_uses()
    fvbm_uses(np.float64)


def first_use_drelu():
    """The categorical RBM with dReLU hidden units (Tubiana, Cocco & Monasson
    2019, the protein model of the sequences part): its update serves every
    solver, so the first fit of any of them loads instead of compiling (it
    compiled for about 15 s, parallel tempering's for 20 s)."""
    from sklearn_rbm import CategoricalRBM

    codes = np.random.RandomState(0).randint(0, 3, size=(24, 4)).astype(np.float64)
    for solver in ("csdcp", "pt"):  # the default's kernels, and tempering's
        CategoricalRBM(
            n_components=3, hidden_unit="drelu", solver=solver, batch_size=8,
            n_iter=1, random_state=0,
        ).fit(codes)  # fmt: skip


#: The groups of calls whose kernels ship (``--group`` runs one), in the order
#: the build starts them: ``binary`` first, whose kernels ``sequences`` then
#: reuses through the per-user folder (54 instead of 65 s), and ``drelu``
#: last, after ``real`` (88 s), so that both workers of a two-core build end
#: at about the same time.
SHIPPED = {
    "binary": first_use_binary,
    "real": first_use_real,
    "sequences": first_use_sequences,
    "drelu": first_use_drelu,
}

#: Every solver, hidden unit type and dtype: what the build shipped before.
COVERAGE = {
    "categorical": lambda: [
        categorical_uses(dtype) for dtype in (np.float64, np.float32)
    ],
    "dcp": lambda: [dcp_uses(dtype) for dtype in (np.float64, np.float32)],
    "gaussian": lambda: [gaussian_uses(dtype) for dtype in (np.float64, np.float32)],
    "conditional": lambda: [
        conditional_uses(dtype) for dtype in (np.float64, np.float32)
    ],
    "frank_wolfe": lambda: [
        frank_wolfe_uses(dtype) for dtype in (np.float64, np.float32)
    ],
    "fvbm": lambda: [fvbm_uses(dtype) for dtype in (np.float64, np.float32)],
    "potts": potts_uses,
}
GROUPS = {**SHIPPED, **COVERAGE}


def run(group):
    """Run one group of calls in this process (whose kernels write to the
    folder named by ``SKLEARN_RBM_KERNEL_CACHE_BUILD``). A failing call is
    reported, not fatal: its kernels then compile on first use."""
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            GROUPS[group]()
        except Exception as error:  # noqa: BLE001 (best effort by design)
            print(f"  {group}: {type(error).__name__}: {error}", file=sys.stderr)
            return 1
    print(f"  {group}: {time.perf_counter() - start:.0f} s", flush=True)
    return 0


def build(folder, groups, n_jobs, time_limit):
    """Fill ``folder``: each group in a process of its own, ``n_jobs`` at a
    time, each writing a part folder; then merge the parts of the groups that
    finished within ``time_limit`` seconds (the others are stopped)."""
    from sklearn_rbm._numerics.cache import BUILD_FOLDER_VARIABLE, merge

    folder = Path(folder).resolve()
    parts = folder / ".parts"
    shutil.rmtree(parts, ignore_errors=True)
    deadline = time.monotonic() + time_limit
    waiting, running, finished = list(groups), {}, []
    while (waiting or running) and time.monotonic() < deadline:
        while waiting and len(running) < n_jobs:
            group = waiting.pop(0)
            env = dict(os.environ, **{BUILD_FOLDER_VARIABLE: str(parts / group)})
            command = ["-m", "sklearn_rbm._precompile", "--group", group]
            running[group] = subprocess.Popen([sys.executable, *command], env=env)
        time.sleep(0.2)
        for group, process in list(running.items()):
            if process.poll() is not None:
                del running[group]
                finished.append(group)
    for group, process in running.items():
        print(f"  {group}: stopped after {time_limit} s", file=sys.stderr)
        process.kill()
        process.wait()
    merge([parts / group for group in finished if (parts / group).is_dir()], folder)
    shutil.rmtree(parts, ignore_errors=True)
    return len(groups) - len(finished)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", nargs="?")
    parser.add_argument("--jobs", type=int, default=min(os.cpu_count() or 1, 4))
    parser.add_argument("--time-limit", type=float, default=1800.0)
    parser.add_argument("--group", choices=list(GROUPS))
    args = parser.parse_args(argv)
    if args.group:
        return run(args.group)
    if not args.folder:
        parser.error("name the folder to fill")
    incomplete = build(args.folder, list(SHIPPED), max(args.jobs, 1), args.time_limit)
    return 1 if incomplete else 0


if __name__ == "__main__":
    sys.exit(main())
