"""PottsBoltzmannMachine against adabmDCA 1.0 (C++) on a protein family.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_potts_bm.py ALIGNMENT STRUCT_DAT \\
        [--adabmdca PATH_TO_adabmDCA] [--threads 2] [--cap 1800]

``ALIGNMENT`` is a FASTA / A2M file (gzip allowed), ``STRUCT_DAT`` the
residue-pair distance file of ``bench_potts.py`` (or ``none``). adabmDCA
(public ``anna-pa-m/adabmDCA``, ``make`` in ``src/``; single-threaded) is
built separately and given by ``--adabmdca`` or the environment variable
``ADABMDCA``; it is never part of this repository.

Both fits race to the same target: a Pearson correlation of
``--target`` (0.95) between the model's and the reweighted data's connected
two-site correlations (adabmDCA's ``pears_all``, printed every iteration with
``-z 1``; its own stopping rule is switched off with ``-c 1e-9``). adabmDCA
runs with ``--adabmdca-args`` (default: persistent Gibbs chains at fixed
sampling times, ``-P -G -L -e 2 -t 2 -s 1000 -n 10``, the fastest of its
documented settings found here; its README's adaptive sampling took 20-25 s
an iteration) until it reaches the target or ``--cap`` seconds. Printed:

``--init`` is the estimator's (default ``auto``: a pseudo-likelihood fit
first, its time included; ``independent``: the independent-site model).

* ours: wall and CPU seconds of the fit with default settings (numba compile
  excluded: a warm-up fit on a few rows compiles first), updates, the fit's
  last Pearson and slope (on equilibrated chains: the stopping test), then
  the generative check on fresh samples (the chains swept on: ``4 *
  n_chains`` samples, 10 and 100 sweeps apart) and on 128,000 independent
  samples of the model (``sample``: chains from random states, 1,000 sweeps
  of burn-in) with :func:`sklearn_rbm.sequences.compare_correlations` (two-
  and three-site), and PPV@L of ``contact_scores``;
* adabmDCA: its time to the target (its ``el_time``) or the Pearson it
  reached by the cap, wall and CPU seconds of the process;
* the ratio of our time to adabmDCA's (an upper bound ``<`` when adabmDCA
  did not reach the target by the cap), and a table of both times to the
  Pearson levels ``--levels`` (ours from ``history_``, whose Pearson is, as
  adabmDCA's ``pears_all``, that of the persistent chains), with the ratio
  at every level both reached: the comparison where adabmDCA stops short
  of the target.
"""

import argparse
import gzip
import os
import re
import resource
import subprocess
import tempfile
import time
import warnings

import numpy as np
from bench_potts import contact_map  # the distance file's reader

from sklearn_rbm import PottsBoltzmannMachine, PottsPseudoLikelihood
from sklearn_rbm._potts.boltzmann import _Chains
from sklearn_rbm.sequences import (
    compare_correlations,
    contact_precision,
    read_alignment,
    sequence_weights,
)

_LINE = re.compile(r"it:\s*(\d+)\s+el_time:\s*([\d.eE+-]+).*pears_all:\s*([\d.eE+-]+)")


def fresh_samples(bm, n_snapshots=4, sweeps_between=10, seed=1):
    """``n_snapshots`` snapshots of the fitted chains, swept on."""
    sampler = _Chains(bm.chains_.copy(), 1, bm.n_states_, np.random.default_rng(seed))
    sampler.set_model(bm.intercept_, bm.coupling_)
    snapshots = []
    for _ in range(n_snapshots):
        sampler.sweep(sweeps_between)
        snapshots.append(sampler.states.copy())
    return np.vstack(snapshots)


def run_ours(X, w, threads, contacts, init="auto", learning_rate=None):
    warm = PottsBoltzmannMachine(
        n_states=21, n_chains=64, max_iter=2, n_jobs=threads, init="independent"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm.fit(X[:200])  # compiles the kernels
        PottsPseudoLikelihood(n_states=21, max_iter=2).fit(X[:200])
    bm = PottsBoltzmannMachine(n_states=21, n_jobs=threads, random_state=0, init=init)
    if learning_rate is not None:
        bm.set_params(learning_rate=learning_rate)
    wall, cpu = time.perf_counter(), time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bm.fit(X, sample_weight=w)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    L = X.shape[1]
    ppv = (
        contact_precision(bm.contact_scores(), contacts, L)
        if contacts is not None
        else float("nan")
    )
    print(f"ours ({threads} threads, init={init}): fit {wall:.1f} s wall, "
          f"{cpu:.1f} s CPU, {bm.n_iter_} updates, last Pearson "
          f"{bm.history_['pearson'][-1]:.4f} slope {bm.history_['slope'][-1]:.3f}"
          f" (equilibrated: {bool(bm.history_['equilibrated'][-1])}); "
          f"PPV@L {ppv:.3f}")  # fmt: skip
    for gap in (10, 100):
        samples = fresh_samples(bm, sweeps_between=gap)
        check = compare_correlations(X, samples, sample_weight=w, n_states=21)
        print(f"ours, {samples.shape[0]} fresh samples {gap} sweeps apart: "
              f"two-site Pearson {check.pearson:.4f} slope {check.slope:.3f}; "
              f"three-site Pearson {check.pearson_three_site:.4f} slope "
              f"{check.slope_three_site:.3f}")  # fmt: skip
    # The model's own equilibrium, away from the fit's chains: the
    # correlations of fewer samples are too noisy for the check.
    started = time.perf_counter()
    samples = bm.sample(128_000, random_state=1)
    drawn = time.perf_counter() - started
    check = compare_correlations(X, samples, sample_weight=w, n_states=21)
    print(f"ours, 128000 independent samples ({drawn:.0f} s): two-site "
          f"Pearson {check.pearson:.4f} slope {check.slope:.3f}; three-site "
          f"Pearson {check.pearson_three_site:.4f} slope "
          f"{check.slope_three_site:.3f}")  # fmt: skip
    return wall, cpu, bm


def first_times(times, pearsons, levels):
    """The first time at which the Pearson correlation reached each level
    (None where it never did)."""
    out = []
    for level in levels:
        reached = np.nonzero(np.asarray(pearsons) >= level)[0]
        out.append(float(times[reached[0]]) if reached.size else None)
    return out


def print_levels(levels, ours, theirs):
    print("Pearson level: ours (s), adabmDCA (s), ratio")
    for level, a, b in zip(levels, ours, theirs, strict=True):
        ratio = f"{a / b:.4f}" if a is not None and b is not None else "-"
        a = "-" if a is None else f"{a:.0f}"
        b = "-" if b is None else f"{b:.0f}"
        print(f"  {level:.2f}: {a}, {b}, {ratio}")


def read_progress(lines):
    """adabmDCA's ``(el_time, pears_all)`` of every iteration it printed."""
    times, pearsons = [], []
    for line in lines:
        match = _LINE.search(line)
        if match:
            times.append(float(match.group(2)))
            pearsons.append(float(match.group(3)))
    return times, pearsons


def run_adabmdca(program, fasta, arguments, target, cap, log_path):
    """``(times, pearsons, wall, CPU)`` of adabmDCA, stopped at the target
    or the cap."""
    folder = tempfile.mkdtemp(prefix="adabmdca-")
    command = [program, "-f", fasta, "-k", os.path.join(folder, "run"), "-z", "1",
               "-c", "1e-9", "-i", "1000000", *arguments.split()]  # fmt: skip
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    lines = []
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            command, stdout=subprocess.PIPE, text=True, cwd=folder
        )
        for line in process.stdout:
            log.write(line)
            log.flush()
            lines.append(line)
            match = _LINE.search(line)
            reached = match is not None and float(match.group(3)) >= target
            if reached or time.perf_counter() - started > cap:
                process.kill()
                break
        process.wait()
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    times, pearsons = read_progress(lines)
    return times, pearsons, wall, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("alignment")
    parser.add_argument("struct")
    parser.add_argument("--adabmdca", default=os.environ.get("ADABMDCA"))
    parser.add_argument("--adabmdca-args", default="-P -G -L -e 2 -t 2 -s 1000 -n 10")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--cap", type=float, default=1800.0)
    parser.add_argument("--log", default="adabmdca.log")
    parser.add_argument(
        "--init", choices=("auto", "independent", "pseudolikelihood"), default="auto"
    )
    parser.add_argument("--learning-rate", type=float, default=None)
    parser.add_argument(
        "--levels", default="0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.95",
        help="Pearson levels of the table of times",
    )  # fmt: skip
    parser.add_argument(
        "--adabmdca-log",
        default=None,
        help="read adabmDCA's progress from the stdout log of an "
        "earlier run (-z 1) instead of running it: the ratios then compare "
        "two runs (and their machines' loads)",
    )
    args = parser.parse_args()
    levels = [float(level) for level in args.levels.split(",")]

    X, _ = read_alignment(args.alignment)
    w = sequence_weights(X)
    contacts = None if args.struct == "none" else contact_map(args.struct, X.shape[1])
    print(f"{args.alignment}: {X.shape[0]} sequences x {X.shape[1]} columns, "
          f"N_eff {w.sum():.0f}")  # fmt: skip
    ours, _, bm = run_ours(X, w, args.threads, contacts, args.init, args.learning_rate)
    ours_levels = first_times(bm.history_["time"], bm.history_["pearson"], levels)
    if args.adabmdca_log:
        with open(args.adabmdca_log) as log:
            times, pearsons = read_progress(log)
        source = f"log {args.adabmdca_log}"
    elif args.adabmdca:
        with tempfile.NamedTemporaryFile("wb", suffix=".fasta", delete=False) as f:
            fasta = f.name
            with open(args.alignment, "rb") as handle:
                raw = handle.read()
            f.write(gzip.decompress(raw) if raw[:2] == b"\x1f\x8b" else raw)
        times, pearsons, wall, cpu = run_adabmdca(
            args.adabmdca, fasta, args.adabmdca_args, args.target, args.cap, args.log
        )
        source = f"{args.adabmdca_args}; 1 thread; process {wall:.0f} s wall, " \
            f"{cpu:.0f} s CPU"  # fmt: skip
    else:
        print("adabmDCA not given (--adabmdca or ADABMDCA): ours only.")
        return
    if not times:
        print(f"adabmDCA ({source}) printed no iteration.")
        return
    (reached,) = first_times(times, pearsons, [args.target])
    if reached is not None:
        print(f"adabmDCA ({source}): Pearson {args.target} after {reached:.0f} s")
        print(f"ratio ours / adabmDCA: {ours / reached:.4f}")
    else:
        print(f"adabmDCA ({source}): Pearson {pearsons[-1]:.3f} after "
              f"{times[-1]:.0f} s; target {args.target} not reached")  # fmt: skip
        print(f"ratio ours / adabmDCA: < {ours / times[-1]:.4f}")
    print_levels(levels, ours_levels, first_times(times, pearsons, levels))


if __name__ == "__main__":
    main()
