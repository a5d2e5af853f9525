"""Group-L1 on the coupling blocks: the proximal solver.

The penalty ``alpha sum_{i<j} ||e_ij||_F`` (a group lasso with one group per
pair of sites; Schmidt, Murphy, Fung & Rosales 2008 for Markov random field
structure learning) is not differentiable where a block is zero, which is
where it sets blocks: the solver is accelerated proximal gradient descent
(FISTA; Beck & Teboulle 2009) with a backtracking step and adaptive restart
(O'Donoghue & Candes 2015), whose proximal step shrinks each (q x q) block
towards zero by ``step * alpha`` in Frobenius norm and sets it to zero
exactly when it is shorter.
"""

import numpy as np

from .._numerics.newton import MAX_HALVINGS


def block_soft_threshold(theta, n_fields, block_size, threshold):
    """``theta`` with each coupling block shrunk by ``threshold`` in
    Frobenius norm (the fields untouched): the proximal map of
    ``threshold * sum ||e_ij||_F``."""
    out = theta.copy()
    blocks = out[n_fields:].reshape(-1, block_size)
    norms = np.sqrt(np.einsum("pk,pk->p", blocks, blocks))
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(norms > threshold, 1.0 - threshold / norms, 0.0)
    blocks *= shrink[:, None]
    return out


def group_norm(theta, n_fields, block_size):
    blocks = theta[n_fields:].reshape(-1, block_size)
    return float(np.sqrt(np.einsum("pk,pk->p", blocks, blocks)).sum())


def fista(objective, theta0, alpha, max_iter, tol, report, stationary, unit=1.0):
    """Minimise ``objective(theta) + alpha * group_norm(theta)`` from
    ``theta0``; returns ``(theta, value, n_iter, converged)``.

    Stops when an iteration lowers the total by less than ``tol`` times its
    value, or when its step moves the parameters by less than their rounding
    (a fixed point of the proximal map), or when a plain proximal step (no
    momentum left to drop) cannot lower the total: converged then only if
    ``stationary(fall, value)`` says the fall the step's quadratic model
    still promises, ``||moved||^2 / (2 step)``, is negligible. ``objective``
    may be the fit's divided by ``unit`` (``solvers._divided``): the floor of
    the ``tol`` rule is 1 in the fit's own units. The first
    step size is the inverse of a finite-difference curvature along the
    gradient; each step halves it (at most ``MAX_HALVINGS`` times) until the
    quadratic model bounds the objective, and later steps start from twice
    the last.
    """
    n_fields, q = objective.layout.n_fields, objective.layout.q
    block = q * q

    def total(theta, smooth):
        return smooth + alpha * group_norm(theta, n_fields, block)

    theta = block_soft_threshold(theta0, n_fields, block, 0.0)
    smooth, grad = objective(theta)
    value = total(theta, smooth)
    probe = 1e-3 / max(np.linalg.norm(grad), 1e-12)
    _, grad_probe = objective(theta - probe * grad)
    curvature = np.dot(grad - grad_probe, grad) / (probe * np.dot(grad, grad) + 1e-300)
    step = 1.0 / curvature if np.isfinite(curvature) and curvature > 1e-12 else 1.0
    y, y_smooth, y_grad = theta, smooth, grad
    momentum = 1.0
    for n_iter in range(1, max_iter + 1):
        for _ in range(MAX_HALVINGS):
            trial = block_soft_threshold(
                y - step * y_grad, n_fields, block, step * alpha
            )
            moved = trial - y
            trial_smooth, trial_grad = objective(trial)
            bound = y_smooth + y_grad @ moved + (moved @ moved) / (2.0 * step)
            if trial_smooth <= bound + 1e-12 * abs(bound):
                break
            step *= 0.5
        trial_value = total(trial, trial_smooth)
        fall = value - trial_value
        if trial_value > value:
            if momentum == 1.0:  # y is theta: no step can make progress
                promised = float(moved @ moved) / (2.0 * step)
                return theta, value, n_iter, stationary(promised, value)
            # Adaptive restart: drop the momentum.
            momentum, y, y_smooth, y_grad = 1.0, theta, smooth, grad
            continue
        next_momentum = 0.5 * (1.0 + np.sqrt(1.0 + 4.0 * momentum**2))
        y = trial + ((momentum - 1.0) / next_momentum) * (trial - theta)
        momentum = next_momentum
        theta, smooth, grad, value = trial, trial_smooth, trial_grad, trial_value
        y_smooth, y_grad = objective(y)
        report(n_iter, value)
        # A move below the parameters' rounding is a fixed point only where
        # the objective is flat: under a penalty of 1e300 a move of 1e-30
        # still promises most of the objective.
        still = np.abs(moved).max() <= 1e-15 * max(np.abs(theta).max(), 1.0)
        still = still and stationary(float(moved @ moved) / (2.0 * step), value)
        if fall <= tol * max(abs(value), 1.0 / unit) or still:
            return theta, value, n_iter, True
        step *= 2.0
    return theta, value, max_iter, False
