"""Do the persistent chains of a PottsBoltzmannMachine fit sample its model?

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_potts_bm_drift.py ALIGNMENT START \\
        [--n-chains 2000] [--n-sweeps 10] [--learning-rate 0.002] \\
        [--n-temperatures 1] [--min-beta 0.8] \\
        [--max-iter 40] [--probe 10,20,50,100,200,400] [--threads 1] \\
        [--stopping-test] [--save FITTED.pkl] [--lambda-e 4] [--start-only]
        [--coupling-scale 1]

``ALIGNMENT`` is a FASTA / A2M file (gzip allowed). ``START`` is a pickle of
the pseudo-likelihood start (``PottsPseudoLikelihood(lambda_e=4)``, the
default ``init``'s): it is fitted and written there when the file does not
exist (816 s of CPU on PF13354, 202 columns), and read otherwise, so that
several settings can be compared from one start. ``--lambda-e`` fits the
start with another coupling penalty (a pickle holds the penalty it was
fitted with, and another is refused).

The fit runs ``--max-iter`` updates with ``target_pearson=1``: no stopping
test interrupts it, and ``history_`` records the persistent chains' in-fit
Pearson correlation and slope at every update. Then the chains are swept on
at the fitted, fixed parameters, and the statistics of 10 sweeps (those of
one update) are compared with the data's after each number of sweeps in
``--probe``, with adabmDCA's decorrelation test (``_decorrelated``: the
chains' overlap with their state at the end of the fit down to that of two
different chains). When the chains sample the model, the Pearson correlation
stays where the fit left it; when they trail it, it falls as they relax
towards the model's own equilibrium: the gap is the bias of the learning
signal (on PF13354, at the defaults' rate and 10 sweeps an update, with the
same loop in ``bench_potts_bm_schedules.py``: 0.988 in the fit, 0.955 100
sweeps later, 0.919 200 sweeps later; see the User Guide). Printed: the
in-fit trajectory (update, Pearson, slope), the probe's (sweeps, Pearson,
slope, the chains' mean site entropy and mean distance between two chains,
the fraction of sites that differ, against the reweighted data's,
decorrelated, CPU seconds), and the CPU seconds of the fit and of the probe.
A model whose chains lose the data's diversity as they relax (entropy and
distance falling together) has a condensed equilibrium.

``--start-only`` skips the fit and probes the start itself, from 2,000
(``--n-chains``) rows drawn from the reweighted alignment: on PF13354 the
starts of ``lambda_e`` 4, 16 and 64 all condense (see the User Guide).
``--coupling-scale`` multiplies the start's couplings for that probe (its
fields unchanged): where between the disordered model (0) and the start (1)
the condensation sets in.

``--stopping-test`` then runs the estimator's own stopping test on the
chains as the fit left them (``_Chains.equilibrate``: sweeps until they
have forgotten that state, at most ``_EQUILIBRATION_SWEEPS``, then the
statistics of one update), and prints its sweeps, Pearson correlation,
slope and whether it passes the estimator's defaults (``target_pearson``
0.95, a slope within ``slope_tolerance`` 0.05 of one). Its chains draw
from fresh random streams; with ``--n-temperatures`` above 1 they are
tempered on the fit's ladder (every temperature starting from the fit's
``beta = 1`` states), as the estimator's test is; the drift probe stays at ``beta = 1``.
"""

import argparse
import os
import pickle
import time
import warnings

import numba
import numpy as np

from sklearn_rbm import PottsBoltzmannMachine, PottsPseudoLikelihood
from sklearn_rbm._core.utils import kernel_rng
from sklearn_rbm._potts.boltzmann import _START_LAMBDA_E, _Chains, _decorrelated
from sklearn_rbm._potts.model import site_counts
from sklearn_rbm._potts.statistics import connected, frequencies, pearson_slope
from sklearn_rbm.sequences import read_alignment, sequence_weights

_STATES = 21


def load_start(path, X, w, threads, lambda_e=_START_LAMBDA_E):
    """The pseudo-likelihood start with coupling penalty ``lambda_e``, read
    from ``path`` or fitted and written there."""
    if os.path.exists(path):
        with open(path, "rb") as handle:
            plm = pickle.load(handle)
        if plm.lambda_e != lambda_e:
            raise SystemExit(
                f"{path} holds a start fitted with lambda_e={plm.lambda_e}, not "
                f"{lambda_e}: name another file for this penalty."
            )
        # The sampler's kernel trusts its shapes: a start of another family
        # would crash it, not raise.
        if plm.coupling_.shape[:2] != (X.shape[1], X.shape[1]):
            raise SystemExit(
                f"{path} holds a model of {plm.coupling_.shape[0]} sites, but the "
                f"alignment has {X.shape[1]} columns: give the start of this family."
            )
        return plm
    cpu = time.process_time()
    plm = PottsPseudoLikelihood(
        n_states=_STATES, lambda_e=lambda_e, n_jobs=threads
    ).fit(X, sample_weight=w)
    print(f"pseudo-likelihood start: {time.process_time() - cpu:.0f} s CPU")
    with open(path, "wb") as handle:
        pickle.dump(plm, handle)
    return plm


def data_correlations(X, w):
    """The reweighted data's connected correlations (the fit's pseudocount)
    and the pairs ``i < j`` they are of."""
    f1, f2 = frequencies(X, w, _STATES, 1.0 / w.sum())
    pairs = np.triu_indices(X.shape[1], k=1)
    return connected(f1, f2, *pairs), pairs


def diversity(states, weights=None, n_pairs=20000, seed=0):
    """``(mean site entropy in nats, mean fraction of sites at which two
    rows differ)`` of ``states`` (rows weighted by ``weights``, if given;
    the distance over ``n_pairs`` random pairs of rows)."""
    n = states.shape[0]
    weights = np.ones(n) if weights is None else weights
    counts = site_counts(states, weights, _STATES)
    f = counts / counts.sum(axis=1, keepdims=True)
    entropy = -np.sum(f * np.log(np.where(f > 0.0, f, 1.0)), axis=1).mean()
    rng = np.random.default_rng(seed)
    p = weights / weights.sum()
    a, b = rng.choice(n, n_pairs, p=p), rng.choice(n, n_pairs, p=p)
    keep = a != b
    return float(entropy), float(np.mean(states[a[keep]] != states[b[keep]]))


def drift(chains, h, J, reference, pairs, checkpoints, seed=1):
    """Copies of ``chains`` swept on at the fixed parameters ``h, J``:
    ``(sweeps, Pearson, slope, site entropy, distance, decorrelated, CPU
    seconds)`` at every checkpoint, the statistics on the states of 10
    sweeps, the diversity (:func:`diversity`) on the chains' states."""
    sampler = _Chains(chains.copy(), 10, _STATES, np.random.default_rng(seed))
    sampler.set_model(h, J)
    start = chains.copy()
    cpu, done, rows = time.process_time(), 0, []
    for checkpoint in checkpoints:
        if checkpoint - done > 10:
            sampler.sweep(checkpoint - done - 10)
        p1, p2 = sampler.statistics()  # the states of 10 sweeps
        done = max(checkpoint, done + 10)
        pearson, slope = pearson_slope(reference, connected(p1, p2, *pairs))
        rows.append((done, pearson, slope, *diversity(sampler.states),
                     bool(_decorrelated(sampler.states, start)),
                     time.process_time() - cpu))  # fmt: skip
        print("  +%d sweeps: Pearson %.4f slope %.4f site entropy %.3f distance "
              "%.3f decorrelated %s, %.0f s CPU" % rows[-1], flush=True)  # fmt: skip
    return rows


def stopping_test(bm, reference, pairs):
    """The estimator's stopping test on the fitted ``bm``'s chains at its
    fixed parameters (tempered on its ladder), against the estimator's
    default target and slope tolerance: ``(sweeps, Pearson, slope,
    passed)``."""
    defaults = PottsBoltzmannMachine()
    target, tolerance = defaults.target_pearson, defaults.slope_tolerance
    ladder = np.linspace(1.0, bm.min_beta, bm.n_temperatures)
    states = np.tile(bm.chains_, (ladder.size, 1))
    sampler = _Chains(states, bm.n_sweeps, bm.n_states_, kernel_rng(2), ladder)
    sampler.set_model(bm.intercept_, bm.coupling_)
    cpu = time.process_time()
    sweeps, forgot = sampler.equilibrate()
    pearson, slope = pearson_slope(reference, connected(*sampler.statistics(), *pairs))
    passed = pearson >= target and abs(slope - 1.0) <= tolerance
    print(f"stopping test: {sweeps} sweeps of equilibration (states forgotten: "
          f"{forgot}), Pearson {pearson:.4f} slope {slope:.4f}, passed {passed}, "
          f"{time.process_time() - cpu:.0f} s CPU", flush=True)  # fmt: skip
    return sweeps, pearson, slope, passed


def family_parser(description):
    """The arguments both probes take: the alignment, the start's pickle,
    the chains, the drift checkpoints and the threads."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("alignment")
    parser.add_argument("start", help="pickle of the pseudo-likelihood start")
    parser.add_argument("--n-chains", type=int, default=2000)
    parser.add_argument("--probe", default="10,20,50,100,200,400")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument(
        "--lambda-e", type=float, default=_START_LAMBDA_E, help="the start's penalty"
    )
    return parser


def load_family(args):
    """The alignment, its sequence weights and the pseudo-likelihood start
    of the parsed ``args``; sets the threads and prints what was read."""
    numba.set_num_threads(args.threads)
    X, _ = read_alignment(args.alignment)
    w = sequence_weights(X)
    print(f"{args.alignment}: {X.shape[0]} sequences x {X.shape[1]} columns, "
          f"N_eff {w.sum():.0f}; {vars(args)}", flush=True)  # fmt: skip
    return X, w, load_start(args.start, X, w, args.threads, args.lambda_e)


def main():
    parser = family_parser(__doc__.split("\n")[0])
    parser.add_argument("--n-sweeps", type=int, default=10)
    parser.add_argument("--learning-rate", type=float, default=None)
    parser.add_argument("--n-temperatures", type=int, default=1)
    parser.add_argument("--min-beta", type=float, default=0.8)
    parser.add_argument("--max-iter", type=int, default=40)
    parser.add_argument("--stopping-test", action="store_true")
    parser.add_argument("--save", help="pickle the fitted estimator there")
    parser.add_argument(
        "--start-only", action="store_true", help="probe the start alone, no fit"
    )
    parser.add_argument("--coupling-scale", type=float, default=1.0)
    args = parser.parse_args()
    if args.coupling_scale != 1.0 and not args.start_only:
        parser.error("--coupling-scale scales the start for --start-only's probe")
    X, w, plm = load_family(args)
    reference, pairs = data_correlations(X, w)
    checkpoints = [int(c) for c in args.probe.split(",")]
    print("the data: site entropy %.3f distance %.3f" % diversity(X, w))
    if args.start_only:
        rows = np.random.default_rng(0).choice(X.shape[0], args.n_chains, p=w / w.sum())
        scale = args.coupling_scale
        print(f"the start's chains (couplings times {scale}), from rows of the data:")
        drift(X[rows], plm.intercept_, scale * plm.coupling_, reference, pairs,
              checkpoints)  # fmt: skip
        return
    bm = PottsBoltzmannMachine(
        n_states=_STATES, init=plm, n_chains=args.n_chains, n_sweeps=args.n_sweeps,
        learning_rate=args.learning_rate, max_iter=args.max_iter,
        n_temperatures=args.n_temperatures, min_beta=args.min_beta,
        target_pearson=1.0, n_jobs=args.threads, random_state=0,
    )  # fmt: skip
    cpu = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # max_iter is the point here
        bm.fit(X, sample_weight=w)
    print(f"fit: {bm.n_iter_} updates, {time.process_time() - cpu:.0f} s CPU")
    if args.save:
        with open(args.save, "wb") as handle:
            pickle.dump(bm, handle)
    if bm.n_temperatures > 1:
        print(f"  swaps accepted per pair: {np.round(bm.swap_acceptance_, 3)}")
    for update, (pearson, slope) in enumerate(
        zip(bm.history_["pearson"], bm.history_["slope"], strict=True), start=1
    ):
        print(f"  update {update}: in-fit Pearson {pearson:.4f} slope {slope:.4f}")

    print("the chains swept on at the fitted parameters:")
    drift(bm.chains_, bm.intercept_, bm.coupling_, reference, pairs, checkpoints)
    if args.stopping_test:
        stopping_test(bm, reference, pairs)


if __name__ == "__main__":
    main()
