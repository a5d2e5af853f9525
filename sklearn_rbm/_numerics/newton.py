"""The truncated Newton machinery the pseudo-likelihood solvers share (the
FVBM's and the Potts model's): preconditioned conjugate gradients for the
Newton system and the constants of their backtracking line searches."""

import numpy as np

#: The Newton solvers' backtracking line search: a step is accepted once the
#: objective improves by ``ARMIJO`` times what its first-order model promised,
#: halving it up to ``MAX_HALVINGS`` times (then the fit has converged).
ARMIJO = 1e-4
MAX_HALVINGS = 40


def _identity(residual):
    return residual


def conjugate_gradient(product, rhs, precondition, inner, rtol, max_steps):
    """Preconditioned conjugate gradients for ``H V = rhs`` from ``V = 0``.

    Stops when the residual's norm falls below ``rtol`` times the right-hand
    side's, or after ``max_steps``. Every iterate raises the quadratic model
    ``<rhs, V> - <V, H V> / 2`` from its start at 0, so a truncated solve is
    still an ascent direction (and, for a curvature bound, a monotone step).
    Returns ``(V, steps)``.
    """
    V = np.zeros_like(rhs)
    residual = rhs.copy()
    z = precondition(residual)
    rz = inner(residual, z)
    if not rz > 0.0 and rz != 0.0:  # a non-finite preconditioner: do without
        precondition = _identity
        z = residual.copy()
        rz = inner(residual, z)
    direction = z.copy()
    target = rtol * np.sqrt(inner(rhs, rhs))
    steps = 0
    while steps < max_steps and np.sqrt(inner(residual, residual)) > target:
        Hd = product(direction)
        curvature = inner(direction, Hd)
        if not curvature > 0.0:
            # No curvature along direction: the objective rises along it
            # without bound (to second order); return it at once if it is
            # the first, so that the caller's line search can follow it.
            if steps == 0:
                V = direction
            break
        step = rz / curvature
        V += step * direction
        residual -= step * Hd
        z = precondition(residual)
        rz_new = inner(residual, z)
        direction *= rz_new / rz
        direction += z
        rz = rz_new
        steps += 1
    return V, steps
