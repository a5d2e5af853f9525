"""The solvers of :class:`~sklearn_rbm.FVBMPseudoLikelihood` and their table.

Every solver maximises a penalised log pseudo-likelihood and records its
progress in a :class:`~sklearn_rbm._fvbm.objective.Monitor`; ``SOLVERS``
says what each name means, in the shape of every family's table
(``_core/solvers.py``): ``make_step(problem, options)`` takes the fit's data
and penalties (:class:`~sklearn_rbm._fvbm.objective.Problem`) and the
estimator's settings the solvers read (:class:`SolverOptions`; never the
estimator) and returns ``run(intercept, coupling) -> (intercept, coupling,
monitor)``, the whole solve from a starting point.

* 'newton': truncated Newton on all parameters at once. Each step solves the
  Newton system by preconditioned conjugate gradients with exact
  Hessian-vector products (two matrix products each, :mod:`._fvbm_joint`),
  on a fixed sample of the rows where there are many.
  With an L1 penalty it is proximal Newton on the free couplings, with exact
  per-unit Hessian blocks (:mod:`._fvbm_proximal`).
* 'nodewise': the truncated Newton iteration on each unit's logistic
  regression separately (Ravikumar, Wainwright & Lafferty 2010), groups of
  units in parallel through joblib; the couplings are then symmetrised. With
  an L1 penalty it is proximal Newton too, one exact block per unit.
* 'mm': the lower bound of Nguyen & Wood (2016) on every conditional at once,
  maximised by conjugate gradients on its fixed curvature (never formed).
* 'bslm', 'ga': Nguyen & Wood's coordinate-wise algorithm (compiled sweep).
* 'lbfgs': scipy's L-BFGS-B with the exact gradient.
"""

from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from typing import NamedTuple

import numpy as np
import scipy.optimize
from joblib import Parallel, delayed, effective_n_jobs

from .._core.solvers import Solver
from .._core.utils import one_blas_thread
from .._numerics.newton import ARMIJO, MAX_HALVINGS, conjugate_gradient
from . import kernels
from .joint import NodeGramPreconditioner, PseudoLikelihood, split_theta, theta_matrix
from .model import pack, unpack
from .objective import Monitor
from .proximal import ProximalNewtonState

# A Newton system is solved to this relative residual: tight enough for
# Newton's fast local convergence, loose enough to stop CG early (Dembo,
# Eisenstat & Steihaug 1982 call it the forcing term).
_NEWTON_FORCING = 0.1
_NEWTON_MAX_CG_STEPS = 200
# The MM step solves its bound's system to this relative residual. Any
# truncated solve still raises the bound (monotone), and a tighter one buys
# no fewer MM iterations (118 on binarised wine and 159 at d = 20 at 1e-2 as
# at 1e-10) for 2-3 times the conjugate-gradient steps.
_MM_RTOL = 1e-2
_MM_MAX_CG_STEPS = 500
# The node-Gram preconditioner assumes curvatures of one row profile for all
# units; where they differ per unit (binarised images: most pixels are nearly
# deterministic on most rows) it needs hundreds of steps where the Hessian's
# diagonal needs tens. A solve that has not converged in this many steps
# switches the fit to the diagonal for good.
_NODE_GRAM_MAX_CG_STEPS = 50
_HESSIAN_ROWS_PER_UNIT = 50


# ---------------------------------------------------------------------------
# Newton's method (joint and node-wise)


class _NewtonState:
    """A truncated Newton iterate of the smooth objective (L2 or no penalty):
    ``Theta``, the objective there, its gradient, the preconditioner for the
    Hessian there, and the estimated next rise. :meth:`step` moves it."""

    def __init__(self, objective, Theta):
        self.objective = objective
        self.diagonal = False  # precondition by the Hessian's diagonal
        self.move(Theta)

    def move(self, Theta):
        self.Theta = Theta
        self.value, self.gradient = self.objective.derivatives(Theta)
        self._prepare()

    def _prepare(self):
        """The preconditioner at ``Theta``, and the rise a Newton step could
        bring, ``<g, M g> / 2`` with ``M`` the preconditioner: it
        underestimates the curvature (one curvature per row and unit scale,
        each coupling's two units solved apart), so this overestimates the
        rise, by 1 to 25 times in our runs."""
        objective = self.objective
        bound = objective.preconditioner()
        self.precondition = (
            objective.diagonal_preconditioner() if self.diagonal else bound
        )
        self.next_rise = 0.5 * objective.inner(self.gradient, bound(self.gradient))

    def step(self):
        """One truncated Newton step with a backtracking line search.

        Returns the figures of the progress line (conjugate-gradient steps);
        the state moves to the new point, or stays with ``next_rise = 0``
        when no step raises the objective (converged).
        """
        objective, Theta = self.objective, self.Theta
        step, n_steps = self._newton_system()
        if n_steps == _NODE_GRAM_MAX_CG_STEPS and not self.diagonal:
            self.diagonal = True
            self.precondition = objective.diagonal_preconditioner()
            step, more_steps = self._newton_system()
            n_steps += more_steps
        t = 1.0
        for _ in range(MAX_HALVINGS):
            trial = Theta + t * step
            value = objective.value(trial)
            rise = objective.inner(self.gradient, trial - Theta)
            if value >= self.value + ARMIJO * rise:
                self.move(trial)
                return {"cg_steps": n_steps}
            t *= 0.5
        self.next_rise = 0.0  # no step raises the objective: converged
        return {"cg_steps": n_steps}

    def _newton_system(self):
        """Truncated conjugate gradients on the Newton system."""
        return conjugate_gradient(
            self.objective.hessian_product,
            self.gradient,
            self.precondition,
            self.objective.inner,
            _NEWTON_FORCING,
            _NEWTON_MAX_CG_STEPS if self.diagonal else _NODE_GRAM_MAX_CG_STEPS,
        )


def _newton_state(objective, Theta):
    """Proximal Newton under an L1 penalty, truncated Newton otherwise."""
    if objective.has_l1:
        return ProximalNewtonState(objective, Theta)
    return _NewtonState(objective, Theta)


def _objective(problem, units=None, hessian_rows=None):
    return PseudoLikelihood(
        problem.X,
        problem.w,
        units=units,
        alpha_l2=problem.alpha_l2,
        alpha_l1=problem.alpha_l1,
        hessian_dtype=np.float32,
        hessian_rows=hessian_rows,
    )


def _hessian_sample(problem):
    """Rows for the Hessian products of the smooth Newton solver, or None (all).

    The Hessian only steers the search direction; a fixed sample of
    ``_HESSIAN_ROWS_PER_UNIT`` rows per unit (a fixed seed: the fit stays
    deterministic) estimates each unit's block to a few percent, so the
    Newton steps converge as fast while every conjugate-gradient step costs a
    fraction of a full product (Byrd, Chin, Neveitt & Nocedal 2011).
    """
    n, d = problem.X.shape
    size = _HESSIAN_ROWS_PER_UNIT * d
    if n < 2 * size:
        return None
    return np.sort(np.random.default_rng(0).permutation(n)[:size])


def _solve_newton(problem, options, intercept, coupling):
    """Truncated Newton on all parameters, proximal Newton with an L1 penalty
    (see the module docstring)."""
    smooth = problem.alpha_l1 == 0
    sample = _hessian_sample(problem) if smooth else None  # proximal: exact blocks
    objective = _objective(problem, hessian_rows=sample)
    state = _newton_state(objective, theta_matrix(intercept, coupling))
    monitor = Monitor(state.value, problem, options)
    for _ in range(problem.max_iter):
        figures = state.step()
        if monitor.record(state.value, state.next_rise, **figures):
            break
    return (*split_theta(state.Theta), monitor)


def _solve_nodewise(problem, options, intercept, coupling):
    """Each unit's penalised logistic regression, then symmetric couplings.

    Ravikumar, Wainwright & Lafferty (2010) estimate each unit's neighbourhood
    by an L1-penalised logistic regression on the other units; here every
    unit's regression is fitted by the Newton iteration of 'newton', the units
    split into ``n_jobs`` groups run in parallel. The couplings are the means
    ``(w_jk + w_kj) / 2`` of the two regressions; with an L1 penalty a
    coupling is nonzero only if both are (their "AND" rule). The recorded
    objective is the sum of the units' objectives.
    """
    d = problem.n_features
    groups = np.array_split(np.arange(d), min(d, effective_n_jobs(options.n_jobs)))
    Theta = theta_matrix(intercept, coupling)
    states = [
        _newton_state(_objective(problem, units), Theta[:, units].copy())
        for units in groups
    ]
    monitor = Monitor(sum(s.value for s in states), problem, options)
    # The jobs are the parallelism: one BLAS thread each.
    blas = one_blas_thread() if len(groups) > 1 else nullcontext()
    with blas, Parallel(n_jobs=len(groups), prefer="threads") as parallel:
        for _ in range(problem.max_iter):
            figures = parallel(delayed(state.step)() for state in states)
            value = sum(s.value for s in states)
            next_rise = sum(s.next_rise for s in states)
            totals = {key: sum(f[key] for f in figures) for key in figures[0]}
            if monitor.record(value, next_rise, **totals):
                break
    W = np.hstack([s.Theta for s in states])
    intercept = np.diagonal(W).copy()
    coupling = 0.5 * (W + W.T)
    if problem.alpha_l1 > 0:
        coupling[(W == 0.0) | (W.T == 0.0)] = 0.0
    coupling[np.diag_indices(d)] = 0.0
    return intercept, coupling, monitor


# ---------------------------------------------------------------------------
# Nguyen & Wood's lower bound: coordinate-wise (BSLM, GA) and joint (MM)


def _solve_coordinate(problem, options, intercept, coupling):
    """BSLM, or gradient ascent with ``step_size`` (Nguyen & Wood 2016, updates
    2.4 and 2.7, and 4.1-4.2): one compiled sweep per iteration."""
    step_size = options.step_size
    X, w, alpha = problem.X, problem.w, problem.alpha_l2
    XT = np.ascontiguousarray(X.T)
    ones = np.ones(X.shape[0])
    intercept, coupling = intercept.copy(), coupling.copy()
    ET = np.empty(XT.shape)
    TT = np.empty(XT.shape)
    log_pl = kernels.bslm_resync(X, w, intercept, coupling, ET, TT)
    monitor = Monitor(log_pl - problem.penalty(intercept, coupling), problem, options)
    for _ in range(problem.max_iter):
        log_pl = kernels.bslm_sweep(
            X, XT, w, ones, intercept, coupling, ET, TT, step_size, alpha
        )
        if monitor.record(log_pl - problem.penalty(intercept, coupling)):
            break
    return intercept, coupling, monitor


def _solve_mm(problem, options, intercept, coupling):
    """Minorise-maximise on the whole parameter vector at once.

    Since ``d^2/da^2 log cosh(a) <= 1``, ``f(theta + delta) >= f(theta) +
    g^T delta - 1/2 delta^T B delta`` with ``B = sum_i w_i sum_j z_ij z_ij^T +
    alpha I`` fixed by the data (the argument of Nguyen & Wood's Theorem 1
    applied to the full vector). Each step maximises the bound, ``delta =
    B^{-1} g``, by conjugate gradients with ``O(d^3)`` products with ``B``
    (:meth:`NodeGramPreconditioner.block_product`), which also
    preconditions them. Any truncated solve still raises the bound, so the
    iteration is monotone like BSLM.
    """
    objective = _objective(problem)
    d = problem.n_features
    # The preconditioner's ridge: half the L2 penalty, which each coupling
    # gets from both of its units' blocks (as in PseudoLikelihood's
    # preconditioner), and a tiny one that keeps it positive definite when a
    # feature is constant. The bound itself is B plus the penalty.
    ridge = 0.5 * objective.l2.max(initial=0.0) + 1e-10
    bound = NodeGramPreconditioner(
        problem.X, problem.w, np.ones(d), ridge, objective.units, True
    )
    Theta = theta_matrix(intercept, coupling)
    value, gradient = objective.derivatives(Theta)
    monitor = Monitor(value, problem, options)
    for _ in range(problem.max_iter):
        step, n_steps = conjugate_gradient(
            lambda V: bound.block_product(V) + objective.l2 * V,
            gradient,
            bound,
            objective.inner,
            _MM_RTOL,
            _MM_MAX_CG_STEPS,
        )
        Theta = Theta + step
        value, gradient = objective.derivatives(Theta)
        if monitor.record(value, cg_steps=n_steps):
            break
    return (*split_theta(Theta), monitor)


def _solve_lbfgs(problem, options, intercept, coupling):
    """scipy's L-BFGS-B on ``-f`` with the exact gradient by matrix products.

    scipy's own stopping rules are switched off (``ftol = gtol = 0``) so that
    all solvers stop on the same rise of ``P_n``; without them L-BFGS-B stops
    early only when its line search can make no more progress (converged to
    machine precision), which counts as converged.
    """
    objective = _objective(problem)
    d = problem.n_features

    def negative(theta):
        value, gradient = objective.derivatives(theta_matrix(*unpack(theta, d)))
        return -value, -pack(np.diagonal(gradient).copy(), gradient)

    theta = pack(intercept, coupling)
    monitor = Monitor(-negative(theta)[0], problem, options)

    def callback(intermediate_result):
        if monitor.record(-intermediate_result.fun):
            raise StopIteration

    result = scipy.optimize.minimize(
        negative,
        theta,
        jac=True,
        method="L-BFGS-B",
        callback=callback,
        options={"maxiter": problem.max_iter, "ftol": 0.0, "gtol": 0.0},
    )
    if not monitor.stopped and monitor.n_iter < problem.max_iter:
        monitor.stopped = True
    return (*unpack(result.x, d), monitor)


# ---------------------------------------------------------------------------
# The table


class SolverOptions(NamedTuple):
    """The estimator's settings the solvers read, resolved once per fit."""

    tol: float
    max_iter: int
    step_size: float  # 'ga'; 1.0 for the other solvers
    n_jobs: object  # 'nodewise'
    reporter: object  # the estimator named in progress lines (verbose), or None


def _runner(solve):
    """``make_step`` of a solver that runs the whole fit."""

    def make_step(problem, options):
        return partial(solve, problem, options)

    return make_step


@dataclass(frozen=True)
class FVBMSolver(Solver):
    """Everything a solver name means."""

    monotone: bool = True  # never decreases the objective (step_size <= 1 for 'ga')
    penalties: tuple = ("l2",)
    joint: bool = True  # maximises the joint (symmetric) log-PL: the MPLE
    start: str = "zeros"  # what init='auto' means
    uses_step_size: bool = False  # reads the estimator's step_size
    uses_n_jobs: bool = False  # runs groups of units in parallel through joblib
    max_iter_advice: str = ", or use solver='newton'"


SOLVERS = {
    "newton": FVBMSolver(
        _runner(_solve_newton),
        monotone=True,
        penalties=("l2", "l1"),
        start="independent",
        max_iter_advice="",
    ),
    "nodewise": FVBMSolver(
        _runner(_solve_nodewise),
        monotone=True,
        penalties=("l2", "l1"),
        joint=False,
        uses_n_jobs=True,
        start="independent",
    ),
    "mm": FVBMSolver(_runner(_solve_mm), monotone=True),
    "bslm": FVBMSolver(_runner(_solve_coordinate), monotone=True),
    "ga": FVBMSolver(_runner(_solve_coordinate), monotone=True, uses_step_size=True),
    "lbfgs": FVBMSolver(_runner(_solve_lbfgs), monotone=False),
}
