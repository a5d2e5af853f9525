"""PottsPseudoLikelihood against plmc on a protein family alignment.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_potts.py ALIGNMENT STRUCT_DAT \\
        [--plmc PATH_TO_PLMC] [--threads 2]

``ALIGNMENT`` is a FASTA / A2M file (gzip allowed), ``STRUCT_DAT`` a text file
of residue pairs whose rows start ``i j ... distance`` (1-based columns of the
alignment, the minimum heavy-atom distance in Angstrom in the last column, as
the PF00014 files of PlmDCA.jl / ArDCA.jl), or ``none`` for the timings
alone (another family without a structure). plmc (debbiemarkslab/plmc) is
built separately (``make all-openmp``) and given by ``--plmc`` or the
environment variable ``PLMC``; it is never part of this repository.

Both programs use the same number of threads and plmc's README settings for
proteins (``-le 16.0 -lh 0.01 -m 100``, theta = 0.2). Printed:

* wall time, reading + weighting + fitting for ours (numba compile excluded:
  a warm-up fit compiles the kernels first and its time is printed apart),
  the whole plmc process for plmc; the objective (plmc's ``fx``), iterations;
* PPV@L/5, L/2, L, 2L of the APC-corrected Frobenius scores (pairs with
  ``|i - j| >= 5``, contact = distance < 8 Angstrom) for both;
* the time ours takes to reach plmc's final objective value (a separate run
  without stopping rule, timed from the start of reading);
* the largest difference between our sequence weights and plmc's
  ``--save-weights`` file.

``--repeats R`` runs ours and plmc alternately ``R`` times and prints every
repeat's ratio and the ratio of the best times (the machine may be shared).
``--solver`` picks our solver. ``--scaling`` instead times both on row and
column subsamples of the alignment and on synthetic Potts data
(``datasets.make_potts``, q = 21, ``--synthetic-rows`` sequences, 5,000 by
default, and ``--synthetic`` sites).
"""

import argparse
import os
import re
import subprocess
import tempfile
import time
import warnings

import numba
import numpy as np

from sklearn_rbm import PottsPseudoLikelihood
from sklearn_rbm._numerics.lbfgs import lbfgs
from sklearn_rbm._potts.data import distinct_rows
from sklearn_rbm._potts.model import (
    PairLayout,
    Preconditioned,
    PseudoLikelihoodObjective,
    diagonal_preconditioner,
    independent_fields,
)
from sklearn_rbm.datasets import make_potts
from sklearn_rbm.sequences import (
    ALPHABETS,
    contact_precision,
    read_alignment,
    sequence_weights,
)

LAMBDA_H, LAMBDA_E, PLMC_MAX_ITER = 0.01, 16.0, 100


def contact_map(path, L, cutoff=8.0):
    data = np.loadtxt(path)
    i = data[:, 0].astype(int) - 1
    j = data[:, 1].astype(int) - 1
    contacts = np.zeros((L, L), dtype=bool)
    close = data[:, -1] < cutoff
    contacts[i[close], j[close]] = contacts[j[close], i[close]] = True
    return contacts


def precisions(scores, contacts):
    """PPV@L/5, L/2, L, 2L; NaN without a distance file (``STRUCT`` = none)."""
    L = scores.shape[0]
    if contacts is None:
        return [np.nan] * 4
    return [contact_precision(scores, contacts, k) for k in (L // 5, L // 2, L, 2 * L)]


def run_ours(path, threads, solver="lbfgs"):
    start = time.perf_counter()
    X, _ = read_alignment(path)
    w = sequence_weights(X)
    t_read = time.perf_counter() - start
    potts = PottsPseudoLikelihood(
        n_states=21, lambda_h=LAMBDA_H, lambda_e=LAMBDA_E, solver=solver,
        n_jobs=threads,
    )  # fmt: skip
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        potts.fit(X, sample_weight=w)
    return time.perf_counter() - start, t_read, potts, X, w


def time_to_objective(path, threads, target, max_iter=400):
    """Seconds from the start of reading until our L-BFGS objective is at or
    below ``target`` (the same preconditioned solver as the estimator, no
    stopping rule), and the iterations it took."""
    start = time.perf_counter()
    X, _ = read_alignment(path)
    w = sequence_weights(X)
    rows, rw, _ = distinct_rows(X, w)
    layout = PairLayout(X.shape[1], 21)
    objective = PseudoLikelihoodObjective(
        rows, rw, layout, LAMBDA_H, LAMBDA_E, dtype=np.float32
    )
    theta0 = np.zeros(layout.size)
    theta0[: layout.n_fields] = independent_fields(rows, rw, 21).ravel()
    reached = {}

    def reached_target(iteration, value):
        reached["n_iter"] = iteration
        if value <= target:
            reached["seconds"] = time.perf_counter() - start
            return True
        return False

    previous = numba.get_num_threads()
    numba.set_num_threads(threads)
    try:
        scaled = Preconditioned(
            objective, diagonal_preconditioner(rows, rw, layout, LAMBDA_H, LAMBDA_E)
        )
        history = PottsPseudoLikelihood().history  # the estimator's default
        lbfgs(
            scaled, theta0 / scaled.scale, history, max_iter, 4 * max_iter + 20,
            reached_target, scaled.gradient_dtype,
        )  # fmt: skip
    finally:
        numba.set_num_threads(previous)
    return reached.get("seconds", float("nan")), reached.get("n_iter", 0)


def write_fasta(X, path):
    """Codes back to protein letters, for plmc (all columns upper case)."""
    letters = np.frombuffer(ALPHABETS["protein"].encode(), dtype=np.uint8)
    with open(path, "w") as out:
        for k, row in enumerate(X):
            out.write(f">s{k}\n{letters[row].tobytes().decode()}\n")


def run_plmc(binary, path, threads, workdir):
    fasta = path
    if open(path, "rb").read(2) == b"\x1f\x8b":  # plmc reads plain text
        import gzip

        fasta = os.path.join(workdir, "alignment.fasta")
        with gzip.open(path, "rb") as src, open(fasta, "wb") as dst:
            dst.write(src.read())
    couplings = os.path.join(workdir, "plmc.ec")
    weights = os.path.join(workdir, "plmc.weights")
    command = [
        binary, "-c", couplings, "--save-weights", weights, "-le", str(LAMBDA_E),
        "-lh", str(LAMBDA_H), "-m", str(PLMC_MAX_ITER), fasta,
    ]  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    rows = [
        line.split() for line in done.stderr.splitlines() if re.match(r"^\d+\t", line)
    ]
    fx = float(rows[-1][3]) if rows else float("nan")
    scores_raw = np.loadtxt(couplings, usecols=(0, 2, 5))
    L = int(scores_raw[:, 1].max())
    scores = np.zeros((L, L))
    i = scores_raw[:, 0].astype(int) - 1
    j = scores_raw[:, 1].astype(int) - 1
    scores[i, j] = scores[j, i] = scores_raw[:, 2]  # already APC-corrected
    return seconds, fx, len(rows), scores, np.loadtxt(weights)


def scaling(args):
    """Ours (defaults) against plmc on subsamples of the alignment's rows
    and columns and on synthetic Potts data: time, ratio, PPV@L where the
    distances apply (full columns)."""
    X, _ = read_alignment(args.alignment)
    rng = np.random.default_rng(0)
    cases = []
    for fraction in (0.25, 0.5):
        rows = np.sort(rng.choice(len(X), int(fraction * len(X)), replace=False))
        cases.append((f"N = {len(rows)} (rows)", X[rows]))
    for n_columns in (20, 35):
        cases.append((f"L = {n_columns} (first columns)", X[:, :n_columns]))
    n_rows = args.synthetic_rows
    for n_sites in args.synthetic:
        Y, *_ = make_potts(n_rows, n_sites, 21, random_state=0)
        cases.append((f"make_potts {n_rows} x {n_sites}, q=21", Y))
    print(f"{'case':<34}{'ours (s)':>10}{'plmc (s)':>10}{'ratio':>8}")
    with tempfile.TemporaryDirectory() as workdir:
        for name, Y in cases:
            path = os.path.join(workdir, "case.fasta")
            write_fasta(Y, path)
            ours, *_ = run_ours(path, args.threads, args.solver)
            theirs, *_ = run_plmc(args.plmc, path, args.threads, workdir)
            print(
                f"{name:<34}{ours:>10.2f}{theirs:>10.2f}{ours / theirs:>8.3f}",
                flush=True,
            )


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("alignment")
    parser.add_argument(
        "struct", help="residue distance file, or 'none' for timings without PPV"
    )
    parser.add_argument("--plmc", default=os.environ.get("PLMC", "plmc"))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--solver", default="lbfgs")
    parser.add_argument(
        "--repeats", type=int, default=1,
        help="ours and plmc alternately this many times; the best of each",
    )  # fmt: skip
    parser.add_argument("--scaling", action="store_true", help="the scaling runs only")
    parser.add_argument(
        "--synthetic", type=int, nargs="*", default=[50, 100],
        help="numbers of sites of the synthetic scaling cases",
    )  # fmt: skip
    parser.add_argument(
        "--synthetic-rows", type=int, default=5000,
        help="number of sequences of the synthetic scaling cases",
    )  # fmt: skip
    args = parser.parse_args()

    # Compile (or load the cached kernels) before timing.
    start = time.perf_counter()
    tiny = np.random.default_rng(0).integers(0, 21, size=(50, 6)).astype(np.uint8)
    sequence_weights(tiny)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        PottsPseudoLikelihood(
            n_states=21, max_iter=2, solver=args.solver, n_jobs=args.threads
        ).fit(tiny)
    warm_up = time.perf_counter() - start
    if args.scaling:
        scaling(args)
        return

    ratios = []
    for _ in range(args.repeats):
        ours_time, ours_read, potts, X, w = run_ours(
            args.alignment, args.threads, args.solver
        )
        with tempfile.TemporaryDirectory() as workdir:
            plmc_time, plmc_fx, plmc_iter, plmc_scores, plmc_weights = run_plmc(
                args.plmc, args.alignment, args.threads, workdir
            )
        ratios.append((ours_time, plmc_time))
    ours_time = min(t for t, _ in ratios)
    plmc_time = min(t for _, t in ratios)
    L = X.shape[1]
    contacts = None if args.struct == "none" else contact_map(args.struct, L)
    ours_ppv = precisions(potts.contact_scores(apc=True), contacts)
    print(
        f"alignment: {X.shape[0]} sequences x {L} columns, "
        f"N_eff = {w.sum():.1f}, threads = {args.threads}, solver = {args.solver}"
    )
    print(
        f"warm-up (kernel compile or cache load): {warm_up:.2f} s; "
        f"our reading + weighting: {ours_read:.2f} s"
    )
    print(
        f"{'':<24}{'time (s)':>10}{'objective':>14}{'iter':>6}"
        + "".join(f"{name:>8}" for name in ("L/5", "L/2", "L", "2L"))
    )

    def row(name, t, fx, it, ppv=()):
        print(
            f"{name:<24}{t:>10.2f}{fx:>14.1f}{it:>6d}"
            + "".join(f"{p:>8.2f}" for p in ppv),
            flush=True,
        )

    row("ours (defaults)", ours_time, potts.objective_, potts.n_iter_, ours_ppv)
    row("plmc", plmc_time, plmc_fx, plmc_iter, precisions(plmc_scores, contacts))
    if plmc_weights.shape == w.shape:
        print(
            f"sequence weights: largest difference to plmc's --save-weights "
            f"{np.abs(plmc_weights - w).max():.1e}"
        )
    reach_time, reach_iter = time_to_objective(args.alignment, args.threads, plmc_fx)
    row("ours to plmc objective", reach_time, plmc_fx, reach_iter)
    print(
        "ratio ours/plmc (defaults), each repeat: "
        + ", ".join(f"{a / b:.3f}" for a, b in ratios)
    )
    print(
        f"ratio of the best times: {ours_time / plmc_time:.3f}; "
        f"to plmc's objective: {reach_time / plmc_time:.3f}"
    )


if __name__ == "__main__":
    main()
