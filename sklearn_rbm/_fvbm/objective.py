"""The objective every FVBM solver maximises, and the stopping rule they share.

The objective is the mean log pseudo-likelihood of the distinct rows ``X``
with weights ``w`` minus a penalty: Nguyen & Wood's (2016) ``P_n`` (eq. 2.1)
divided by ``n``. Its progress is recorded by :class:`Monitor`, which also
prints the one progress line of the package when ``verbose``.
"""

import time

import numpy as np

from .._core.engine import progress_line


class Problem:
    """The data of one solve: distinct rows ``X`` with weights ``w``
    (multiplicity over ``n_samples``), the penalties, and the iterations it
    may run.

    The objective is ``f(theta) = sum_i w_i sum_j log P(x_ij | x_i,-j)`` minus
    ``alpha_l2 / 2 ||theta||^2`` and ``alpha_l1 sum_{j<k} |m_jk|``; with no
    penalty it is ``P_n / n``.
    A fit may run several solves in a row: ``done`` iterations came before
    this one, which may run ``max_iter`` more and stops at ``tol`` (by
    default the estimator's). :meth:`penalty` is the L2
    penalty of the coordinate-wise solvers.
    """

    def __init__(
        self, X, w, n_samples, *, alpha_l2=0.0, alpha_l1=0.0, max_iter, done=0,
        tol=None,
    ):  # fmt: skip
        self.X = X
        self.w = w
        self.n_samples = n_samples
        self.alpha_l2 = alpha_l2
        self.alpha_l1 = alpha_l1
        self.max_iter = max_iter
        self.done = done
        self.tol = tol  # None: the estimator's
        self.n_features = X.shape[1]

    def penalty(self, intercept, coupling):
        if self.alpha_l2 == 0:
            return 0.0
        upper = np.triu_indices(self.n_features, 1)
        # A diverging fit may square huge values: let that be inf, which the
        # monitor turns into an error naming the step size.
        with np.errstate(over="ignore"):
            squares = intercept @ intercept + coupling[upper] @ coupling[upper]
        return 0.5 * self.alpha_l2 * squares


class Monitor:
    """The objective after every iteration, and the stopping rule all solvers share.

    A solver stops when ``P_n`` (the sum over samples, i.e. ``n`` times the
    mean recorded here) changes by less than ``tol`` in one iteration, or when
    the objective is no longer finite (a diverging fit). With ``verbose``,
    every iteration prints one progress line.
    """

    def __init__(self, value, problem, options):
        self.curve = [value]
        self.n_samples = problem.n_samples
        self.done = problem.done  # iterations of earlier solves of the same fit
        self.tol = options.tol if problem.tol is None else problem.tol
        self.max_iter = options.max_iter
        self.estimator = options.reporter  # named in progress lines; None: quiet
        self.stopped = False
        self._clock = time.perf_counter()

    @property
    def n_iter(self):
        return len(self.curve) - 1

    @property
    def converged(self):
        """Whether the stopping rule (not ``max_iter``) ended the run."""
        return self.stopped and bool(np.isfinite(self.curve[-1]))

    def record(self, value, next_rise=None, **figures):
        """Append ``value``; True when the solver should stop.

        ``next_rise`` is a solver's estimate, from above, of what its next
        iteration can add (Newton's, from its preconditioner): below ``tol``
        it stops the run one iteration early. ``figures`` are extra numbers
        for the progress line (e.g. a Newton iteration's conjugate-gradient
        steps).
        """
        self.curve.append(value)
        rise = abs(value - self.curve[-2])
        if next_rise is not None:
            rise = min(rise, next_rise)
        if self.estimator is not None:
            now = time.perf_counter()
            print(
                progress_line(
                    self.estimator,
                    "iteration",
                    self.done + self.n_iter,
                    self.max_iter,
                    now - self._clock,
                    {"mean_log_pseudo_likelihood": value, **figures},
                )
            )
            self._clock = now
        self.stopped = not np.isfinite(value) or rise * self.n_samples < self.tol
        return self.stopped
