"""Boltzmann-machine learning schedules the estimator has no option for.

Run from the repository root::

    PYTHONPATH=. python benchmarks/bench_potts_bm_schedules.py ALIGNMENT START \\
        [--n-chains 2000] [--burn-in 300] [--updates 40] \\
        [--learning-rate 0.002] [--extra-sweeps 0] [--warm 0] [--offset 0] \\
        [--load STATE] [--save STATE] [--probe 10,20,50,100,200,400] \\
        [--step rmsprop|plain] [--eps-noise 0] [--fall-after 0]

``ALIGNMENT`` and ``START`` (the pseudo-likelihood start's pickle, fitted
and written when missing) are those of ``bench_potts_bm_drift.py``. This
runs the steps of ``PottsBoltzmannMachine``'s fit (its sampler, RMSprop
and the rate's decay ``rate / sqrt(1 + t / 100)``, 10 recorded sweeps an
update) with what the estimator does not offer, to measure schedules
before making them options or defaults:

* ``--burn-in``: sweeps of the start's chains (from the independent-site
  model) at the start's parameters before the first update, with the
  Pearson correlation every 100;
* ``--extra-sweeps``: unrecorded sweeps before each update's 10 recorded
  ones (more sweeps an update at the counting cost of 10);
* ``--load`` / ``--save``: the parameters and chains (pickle) at the start
  and at the end, to continue a run with another rate; ``--offset`` carries
  the update count of the rate's decay on, and ``--warm`` updates first fill
  the step sizes' running scales without a step (a continued run's
  optimiser starts afresh);
* ``--step plain``: adabmDCA's step, ``rate`` times the gradient (the
  frequency difference), no per-parameter scale (adabmDCA's rate is 0.05);
* ``--eps-noise C``: RMSprop's ``eps`` of every entry raised to ``C``
  times the chains' sampling noise of its frequency, ``sqrt(f (1 - f) /
  n_chains)`` at the data's ``f``: a gradient below the noise takes a step
  in proportion to it, not a step of about the rate;
* ``--fall-after P``: once the in-fit Pearson correlation has reached
  ``P``, the rate falls as ``1 / (1 + k / 10)``, ``k`` the updates since.

Printed: every update's in-fit Pearson correlation and slope with the CPU
seconds so far, then the chains swept on at the final parameters
(``bench_potts_bm_drift.drift``). No stopping test runs. Measured on
PF13354 with it: see the User Guide.
"""

import pickle
import time

import numpy as np
from bench_potts_bm_drift import (
    _STATES,
    data_correlations,
    drift,
    family_parser,
    load_family,
)

from sklearn_rbm._core.utils import kernel_rng
from sklearn_rbm._potts.boltzmann import (
    _DECAY_UPDATES,
    _Chains,
    _independent_chains,
    _RMSprop,
    log_likelihood_gradient,
)
from sklearn_rbm._potts.statistics import connected, frequencies, pearson_slope


class _Plain:
    """adabmDCA's step: the same ``rate`` for every parameter."""

    def steps(self, gradients, rate):
        return [rate for _ in gradients]


class _NoiseRMSprop(_RMSprop):
    """RMSprop with one ``eps`` array per parameter array."""

    def __init__(self, *eps):
        super().__init__(*(e.shape for e in eps))
        self.eps_arrays = eps

    def steps(self, gradients, rate):
        self.t += 1
        correction = 1.0 - self.decay**self.t
        out = []
        for second, gradient, eps in zip(
            self.second, gradients, self.eps_arrays, strict=True
        ):
            second *= self.decay
            second += (1.0 - self.decay) * gradient**2
            out.append(rate / (np.sqrt(second / correction) + eps))
        return out


def make_optimiser(args, f1, f2, h, J):
    """The step rule of ``--step`` and ``--eps-noise``."""
    if args.step == "plain":
        return _Plain()
    if not args.eps_noise:
        return _RMSprop(h.shape, J.shape)
    # RMSprop's own 1e-8 too: the diagonal blocks' off-diagonal entries
    # have f = 0 and no gradient.
    return _NoiseRMSprop(*(
        args.eps_noise * np.sqrt(f * (1.0 - f) / args.n_chains) + 1e-8
        for f in (f1, f2)
    ))  # fmt: skip


def main():
    parser = family_parser(__doc__.split("\n")[0])
    parser.add_argument("--burn-in", type=int, default=0)
    parser.add_argument("--updates", type=int, default=40)
    parser.add_argument("--learning-rate", type=float, default=0.002)
    parser.add_argument("--extra-sweeps", type=int, default=0)
    parser.add_argument("--warm", type=int, default=0)
    parser.add_argument("--offset", type=int, default=0)
    parser.add_argument("--load", default=None)
    parser.add_argument("--save", default=None)
    parser.add_argument("--step", choices=("rmsprop", "plain"), default="rmsprop")
    parser.add_argument("--eps-noise", type=float, default=0.0)
    parser.add_argument("--fall-after", type=float, default=0.0)
    args = parser.parse_args()
    X, w, plm = load_family(args)
    f1, f2 = frequencies(X, w, _STATES, 1.0 / w.sum())
    reference, pairs = data_correlations(X, w)
    h = np.array(plm.intercept_, dtype=np.float64)
    J = np.array(plm.coupling_, dtype=np.float64)
    rng = kernel_rng(0)
    sampler = _Chains(
        _independent_chains(np.exp(h), args.n_chains, rng), 10, _STATES, rng
    )
    if args.load:
        with open(args.load, "rb") as handle:
            h, J, sampler.states, sampler.keys, sampler.counters = pickle.load(handle)

    def pearson(p1, p2):
        return pearson_slope(reference, connected(p1, p2, *pairs))

    cpu = time.process_time()
    sampler.set_model(h, J)
    for done in range(100, args.burn_in + 1, 100):
        sampler.sweep(90)
        print("burn-in %d sweeps: Pearson %.4f slope %.4f, %.0f s CPU"
              % (done, *pearson(*sampler.statistics()), time.process_time() - cpu),
              flush=True)  # fmt: skip
    optimiser = make_optimiser(args, f1, f2, h, J)
    passed = None  # the update at which the in-fit Pearson reached --fall-after
    for t in range(args.updates):
        sampler.set_model(h, J)
        if args.extra_sweeps:
            sampler.sweep(args.extra_sweeps)
        p1, p2 = sampler.statistics()
        r, slope = pearson(p1, p2)
        print("update %d: in-fit Pearson %.4f slope %.4f, %.0f s CPU"
              % (t + 1 + args.offset, r, slope, time.process_time() - cpu),
              flush=True)  # fmt: skip
        if args.fall_after and passed is None and r >= args.fall_after:
            passed = t
        grad_h, grad_J = log_likelihood_gradient(f1, f2, p1, p2, J, 0.0)
        rate = args.learning_rate / np.sqrt(1.0 + (t + args.offset) / _DECAY_UPDATES)
        if passed is not None:
            rate /= 1.0 + (t - passed) / 10.0
        step_h, step_J = optimiser.steps((grad_h, grad_J), rate * (t >= args.warm))
        h += step_h * grad_h
        J += step_J * grad_J
    if args.save:
        with open(args.save, "wb") as handle:
            state = (h, J, sampler.states, sampler.keys, sampler.counters)
            pickle.dump(state, handle)
    print("the chains swept on at the final parameters:")
    checkpoints = [int(c) for c in args.probe.split(",")]
    drift(sampler.states, h, J, reference, pairs, checkpoints)


if __name__ == "__main__":
    main()
