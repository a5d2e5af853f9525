"""The solvers of :class:`~sklearn_rbm.FVBMPseudoLikelihood` and their table.

Every solver maximises the same strictly concave objective
(:class:`~sklearn_rbm._fvbm_objective.Problem`) and records its progress in a
:class:`~sklearn_rbm._fvbm_objective.Monitor`; ``_SOLVERS`` says what each
name means. A solver is called as ``solve(problem, intercept, coupling,
estimator, settings)`` with the starting point and returns ``(intercept,
coupling, monitor)``.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import scipy.linalg
import scipy.optimize

from ._fvbm_diagnostics import MAX_DENSE_PARAMETERS, dense_fits
from ._fvbm_model import pack, unpack
from ._fvbm_objective import Monitor
from ._kernels import fvbm as kernels


def _solve_coordinate(problem, intercept, coupling, estimator, settings):
    """BSLM, or gradient ascent with ``step_size`` (Nguyen & Wood 2016, updates
    2.4 and 2.7, and 4.1-4.2): one compiled sweep per iteration."""
    step_size = estimator.step_size if settings.uses_step_size else 1.0
    X, w, alpha = problem.X, problem.w, problem.alpha
    XT = np.ascontiguousarray(X.T)
    ones = np.ones(X.shape[0])
    intercept, coupling = intercept.copy(), coupling.copy()
    ET = np.empty(XT.shape)
    TT = np.empty(XT.shape)
    log_pl = kernels.bslm_resync(X, w, intercept, coupling, ET, TT)
    monitor = Monitor(
        log_pl - problem.penalty(intercept, coupling), problem.n_samples, estimator
    )
    for _ in range(estimator.max_iter):
        log_pl = kernels.bslm_sweep(
            X, XT, w, ones, intercept, coupling, ET, TT, step_size, alpha
        )
        if monitor.record(log_pl - problem.penalty(intercept, coupling)):
            break
    return intercept, coupling, monitor


def _solve_mm(problem, intercept, coupling, estimator, settings):
    """Minorise-maximise on the whole parameter vector at once.

    Since ``d^2/da^2 log cosh(a) <= 1``, ``f(theta + delta) >= f(theta) +
    g^T delta - 1/2 delta^T B delta`` with ``B = sum_i w_i sum_j z_ij z_ij^T +
    alpha I`` fixed by the data (the argument of Nguyen & Wood's Theorem 1
    applied to the full vector). Each step maximises the bound, ``delta =
    B^{-1} g``: monotone like BSLM, with one Cholesky factorisation for the
    whole fit.
    """
    d = problem.n_features
    if not dense_fits(d):
        raise ValueError(
            f"solver='mm' factorises a p x p matrix, p = d(d+1)/2 = {d * (d + 1) // 2} "
            f"here, and is limited to p <= {MAX_DENSE_PARAMETERS} (d <= 100); use "
            "solver='lbfgs' or 'bslm'."
        )
    curvature = kernels.bound_curvature(
        problem.X, problem.w, kernels.parameter_index(d)
    )
    # The 1e-10 keeps B positive definite when a feature is constant (then
    # the MPLE does not exist anyway); a larger B is still a valid bound.
    curvature[np.diag_indices_from(curvature)] += problem.alpha + 1e-10
    factor = scipy.linalg.cho_factor(curvature)
    theta = pack(intercept, coupling)
    value, gradient = problem.value_and_gradient(theta)
    monitor = Monitor(value, problem.n_samples, estimator)
    for _ in range(estimator.max_iter):
        theta = theta + scipy.linalg.cho_solve(factor, gradient)
        value, gradient = problem.value_and_gradient(theta)
        if monitor.record(value):
            break
    return (*unpack(theta, d), monitor)


def _solve_lbfgs(problem, intercept, coupling, estimator, settings):
    """scipy's L-BFGS-B on ``-f`` with the exact gradient from the compiled kernel.

    scipy's own stopping rules are switched off (``ftol = gtol = 0``) so that
    all solvers stop on the same rise of ``P_n``; without them L-BFGS-B stops
    early only when its line search can make no more progress (converged to
    machine precision), which counts as converged.
    """
    theta = pack(intercept, coupling)
    monitor = Monitor(
        problem.value_and_gradient(theta)[0], problem.n_samples, estimator
    )

    def negative(theta):
        value, gradient = problem.value_and_gradient(theta)
        return -value, -gradient

    def callback(intermediate_result):
        if monitor.record(-intermediate_result.fun):
            raise StopIteration

    result = scipy.optimize.minimize(
        negative,
        theta,
        jac=True,
        method="L-BFGS-B",
        callback=callback,
        options={"maxiter": estimator.max_iter, "ftol": 0.0, "gtol": 0.0},
    )
    if not monitor.stopped and monitor.n_iter < estimator.max_iter:
        monitor.stopped = True
    return (*unpack(result.x, problem.n_features), monitor)


@dataclass(frozen=True)
class _Solver:
    """Everything a solver name means."""

    solve: Callable  # (problem, intercept, coupling, estimator, settings)
    monotone: bool  # never decreases the objective (with step_size <= 1 for 'ga')
    uses_step_size: bool = False  # reads the estimator's step_size
    max_iter_advice: str = (
        ", or use solver='lbfgs', which copes better with nearly deterministic "
        "conditionals"
    )


_SOLVERS = {
    "bslm": _Solver(_solve_coordinate, monotone=True),
    "ga": _Solver(_solve_coordinate, monotone=True, uses_step_size=True),
    "mm": _Solver(_solve_mm, monotone=True),
    "lbfgs": _Solver(_solve_lbfgs, monotone=False, max_iter_advice=""),
}
