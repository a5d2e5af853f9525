"""The solvers of :class:`~sklearn_rbm.PottsPseudoLikelihood` and their table.

Each entry's ``make_step(problem, options)`` returns ``run(theta0) ->
Result``, the whole minimisation of the penalised pseudo-likelihood from the
parameter vector ``theta0`` (the layout of ``model.PairLayout``):

* 'lbfgs': L-BFGS (``_numerics.lbfgs``) on the variables scaled by the
  square root of an estimate of the Hessian's diagonal
  (``model.diagonal_preconditioner``).
* 'newton': truncated Newton. Each step solves the Newton system by
  conjugate gradients preconditioned by the same diagonal, with exact
  Hessian-vector products on a fixed sample of the rows (all of them when
  there are few), then a backtracking line search on the full objective.
* 'nodewise': every site's conditional likelihood fitted alone (``nodewise.py``).
* 'proximal': accelerated proximal gradient, the solver of the group-L1
  penalty ``alpha`` on the coupling blocks (``proximal.py``).
"""

from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from .._core.solvers import Solver
from .._numerics.lbfgs import lbfgs
from .._numerics.newton import ARMIJO, MAX_HALVINGS, conjugate_gradient
from .model import Preconditioned
from .nodewise import fit_sites
from .proximal import fista

#: Iterations over which the L-BFGS stopping rule averages the objective's fall.
STOP_WINDOW = 5

# A Newton system is solved to this relative residual (the forcing term of
# Dembo, Eisenstat & Steihaug 1982): Newton converges fast from far away on
# this objective, so a loose solve saves more products than it costs steps.
_NEWTON_FORCING = 0.1
_NEWTON_MAX_CG_STEPS = 100
# Rows per site in the Hessian sample of 'newton' (see ``_hessian_sample``).
HESSIAN_ROWS_PER_SITE = 40


def stationary(remaining_fall, value, tol, dtype):
    """Whether a solver that can no longer lower the objective stopped at its
    minimum: the fall still to come, as the local quadratic model predicts it
    (``remaining_fall``), is below ``tol`` times the objective, or below the
    rounding of the objective's ``dtype`` (no step can realise less). A line
    search that fails far from the minimum (extreme penalties, overflow) is
    no convergence."""
    floor = max(tol, float(np.finfo(dtype).eps))
    return bool(remaining_fall <= floor * max(abs(value), 1.0))


@dataclass
class Result:
    """What a solver returns: the parameters, the objective there, the
    iterations run and whether the stopping rule (not ``max_iter``) ended it."""

    x: np.ndarray
    fun: float
    nit: int
    converged: bool


@dataclass(frozen=True)
class Problem:
    """What a solver needs from the fit: the objective (``model``), the
    preconditioning diagonal, the settings."""

    objective: object
    diagonal: np.ndarray
    max_iter: int
    tol: float
    history: int
    verbose: int
    n_jobs: int = 1
    alpha: float = 0.0


def _report(problem, iteration, value):
    if problem.verbose:
        print(f"PottsPseudoLikelihood: iteration {iteration}, objective {value:.8g}")


def _make_lbfgs(problem, options=None):
    """L-BFGS (``_numerics.lbfgs``, the objective's step and scaling fused
    into its own passes) stopped when the objective fell by less than ``tol``
    times its value per iteration on average over the last ``STOP_WINDOW``
    iterations (one iteration's decrease is too noisy a signal: a short
    line-search step stops a fit that is far from done), or when no step
    along steepest descent lowers it."""
    scaled = Preconditioned(problem.objective, problem.diagonal)

    def run(theta0):
        values = []

        def stop(iteration, value):
            values.append(value)
            _report(problem, iteration, value)
            if len(values) <= STOP_WINDOW:
                return False
            fall = values[-1 - STOP_WINDOW] - value
            return fall <= problem.tol * STOP_WINDOW * max(abs(value), 1.0)

        result = lbfgs(
            scaled, theta0 / scaled.scale, problem.history, problem.max_iter,
            4 * problem.max_iter + 20, stop, scaled.gradient_dtype,
        )  # fmt: skip
        # In the scaled variables the Hessian's diagonal is about 1, so the
        # fall left to the minimum is about half the squared gradient.
        converged = result.status == "callback" or (
            result.status == "line_search"
            and stationary(
                0.5 * result.gradient_norm**2, result.fun, problem.tol,
                problem.objective.dtype,
            )
        )  # fmt: skip
        theta = np.multiply(result.x, scaled.scale, out=result.x)  # L-BFGS's own
        return Result(theta, result.fun, result.nit, converged)

    return run


def _hessian_sample(n_rows, n_sites):
    """Rows for the Hessian products of 'newton', or None (all of them).

    ``HESSIAN_ROWS_PER_SITE`` rows per site estimate the Hessian well enough
    to steer the direction while a product costs a fraction of a gradient;
    the rows are evenly spaced through the (sorted, distinct) rows, so the
    fit stays deterministic without a random stream."""
    size = HESSIAN_ROWS_PER_SITE * n_sites
    if n_rows < 2 * size:
        return None
    return np.linspace(0, n_rows - 1, size).round().astype(np.intp)


class _Divided:
    """``objective / unit``, its gradient and Hessian products."""

    def __init__(self, objective, unit):
        self.objective, self.unit = objective, unit
        self.X, self.layout = objective.X, objective.layout

    def __call__(self, theta):
        value, grad = self.objective(theta)
        return value / self.unit, grad / self.unit

    def hessian(self, theta, sample=None):
        product = self.objective.hessian(theta, sample)
        return lambda v: product(v) / self.unit


def _divided(problem):
    """The objective divided so that its curvature stays below 1e100.

    Neither Newton's step nor the proximal step changes when the objective
    (and the group-L1 weight) is divided by a constant; both square its
    gradient, which a penalty of 1e300 would overflow."""
    return _Divided(problem.objective, max(1.0, float(problem.diagonal.max()) / 1e100))


def _make_newton(problem, options=None):
    """Truncated Newton with a backtracking (Armijo) line search, stopped
    when one step lowers the objective by less than ``tol`` times its value
    (Newton's steps shrink fast near the minimum, so one step is a reliable
    signal) or when no step lowers it: converged then only if the Newton
    decrement (half the slope along the step, the fall the quadratic model
    still predicts) says the minimum is reached (:func:`stationary`)."""
    objective = _divided(problem)
    diagonal = problem.diagonal / objective.unit

    def run(theta0):
        theta = theta0
        value, grad = objective(theta)
        sample = _hessian_sample(objective.X.shape[0], objective.layout.L)
        converged = False
        nit = 0
        while nit < problem.max_iter and not converged:
            product = objective.hessian(theta, sample)
            step, _ = conjugate_gradient(
                product, -grad, lambda r: r / diagonal, np.dot,
                _NEWTON_FORCING, _NEWTON_MAX_CG_STEPS,
            )  # fmt: skip
            slope = float(grad @ step)
            t = 1.0
            for _ in range(MAX_HALVINGS):
                trial = theta + t * step
                new_value, new_grad = objective(trial)
                if new_value <= value + ARMIJO * t * slope:
                    break
                t *= 0.5
            else:
                converged = stationary(
                    -0.5 * slope * objective.unit, value * objective.unit,
                    problem.tol, objective.objective.dtype,
                )  # fmt: skip
                break
            nit += 1
            fall = value - new_value
            theta, value, grad = trial, new_value, new_grad
            _report(problem, nit, value * objective.unit)
            # The floor 1.0 is in the objective's own units, not the divided.
            converged = fall <= problem.tol * max(abs(value), 1.0 / objective.unit)
        return Result(theta, value * objective.unit, nit, converged)

    return run


def _make_nodewise(problem, options=None):
    """Every site's conditional by the scaled L-BFGS of 'lbfgs' with the
    same settings, ``n_jobs`` sites at a time; the objective reported is the
    symmetric one at the symmetrised parameters."""
    objective = problem.objective

    def solve(site_objective, diagonal, theta0):
        site_problem = replace(
            problem, objective=site_objective, diagonal=diagonal, verbose=0
        )
        return _make_lbfgs(site_problem)(theta0)

    def run(theta0):
        layout = objective.layout
        h0, _ = layout.split(theta0)
        h, e, nit, converged = fit_sites(
            objective.X, objective.w, layout, objective.lambda_h,
            objective.lambda_e, h0, solve, problem.n_jobs,
        )  # fmt: skip
        theta = np.concatenate([h.ravel(), e.ravel()])
        value, _ = objective(theta)
        _report(problem, nit, value)
        return Result(theta, value, nit, converged)

    return run


def _make_proximal(problem, options=None):
    """Accelerated proximal gradient on the objective plus ``alpha`` times
    the coupling blocks' Frobenius norms (``proximal.py``)."""

    objective = _divided(problem)

    def run(theta0):
        unit = objective.unit
        theta, value, nit, converged = fista(
            objective, theta0, problem.alpha / unit, problem.max_iter,
            problem.tol, lambda n, v: _report(problem, n, v * unit),
            lambda fall, value: stationary(
                fall * unit, value * unit, problem.tol, problem.objective.dtype
            ),
            unit,
        )  # fmt: skip
        return Result(theta, value * objective.unit, nit, converged)

    return run


@dataclass(frozen=True)
class PottsSolver(Solver):
    """A Potts solver: ``make_step``, and ``blocks(history, n_sites,
    n_jobs)``, the peak memory of a fit in units of the coupling tensor,
    ``L^2 q^2`` float64 values (measured with tracemalloc at L = 40 and 120,
    q = 21: L-BFGS keeps its ``2 history`` correction vectors, its gradients
    and its direction in float32, a quarter block each; the node-wise fits
    hold one site's ``L q^2`` values, and its L-BFGS vectors, per thread)."""

    blocks: Callable = None
    formula: str = ""


SOLVERS = {
    "lbfgs": PottsSolver(
        _make_lbfgs, lambda history, L, n_jobs: 4 + history / 2, "4 + history / 2"
    ),
    "newton": PottsSolver(_make_newton, lambda history, L, n_jobs: 9.5, "9.5"),
    "nodewise": PottsSolver(
        _make_nodewise,
        lambda history, L, n_jobs: 4.5 + n_jobs * (2 * history + 8) / L,
        "4.5 + n_jobs * (2 history + 8) / L",
    ),
    "proximal": PottsSolver(_make_proximal, lambda history, L, n_jobs: 8.5, "8.5"),
}
