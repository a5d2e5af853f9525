"""Element-wise passes of the FVBM's joint solvers, between their matrix products.

The joint solvers (Newton, MM at any size) evaluate the log pseudo-likelihood,
its gradient and Hessian products with BLAS: the fields ``A = X M + b`` and the
sums ``X^T R`` are matrix products done by numpy. What lies between them is
element-wise over the ``n x d`` fields and is done here, in one vectorised pass
each (:mod:`.vecmath`: no libm call, so the loops compile to SIMD code).

For ``x = +-1`` and field ``a``, with ``z = exp(-2|a|)`` in (0, 1]:

* ``log P(x | a) = x a - log(2 cosh a) = x a - |a| - log(1 + z)``;
* ``tanh a = sign(a) (1 - z) / (1 + z)``;
* ``1 - tanh^2 a = 4 z / (1 + z)^2``, the curvature of ``log cosh`` at ``a``.

The fields ``A`` may be float32 or float64; every sum is accumulated in float64.
"""

import numpy as np

from .._numerics.jit import vector_jit
from .._numerics.vecmath import exp_minus_abs, log_positive


@vector_jit
def complete_fields(A, X, intercept):
    """Turn ``A = X Theta`` into the fields ``X M + b``, in place.

    ``Theta = M + diag(b)`` holds the intercepts on its diagonal; the product
    ``X Theta`` then adds ``x_ij b_j`` where ``a_ij`` needs ``b_j``, so each
    entry gets ``b_j (1 - x_ij)``.
    """
    n, d = A.shape
    for i in range(n):
        for j in range(d):
            A[i, j] += intercept[j] * (1.0 - X[i, j])


@vector_jit(inline="always")
def _log_conditional(x, a, z):
    """``log P(x | a) = x a - |a| - log(1 + z)`` for ``x = +-1``, ``z = exp(-2|a|)``."""
    return x * a - abs(a) - log_positive(1.0 + z)


@vector_jit
def conditional_pass(X, A, w, R=None, D=None):
    """The weighted log-PL and, given ``R`` and ``D``, the two ``n x d``
    arrays its derivatives need.

    Returns ``sum_i w_i sum_j log P(x_ij | a_ij)`` and fills ``R_ij = w_i (x_ij
    - tanh a_ij)`` (the residuals: the gradient is ``X^T R`` arranged by
    parameter) and ``D_ij = w_i (1 - tanh^2 a_ij)`` (the curvatures: minus the
    Hessian is ``sum_ij D_ij z_ij z_ij^T``). Without them (``None``, compiled
    out) it is the log-PL alone, as a line-search trial needs. The sum runs
    per unit, down the rows: a running sum across a row would be a serial
    dependence that stops the loop from vectorising.
    """
    n, d = A.shape
    totals = np.zeros(d)
    for i in range(n):
        wi = w[i]
        for j in range(d):
            a = np.float64(A[i, j])
            x = np.float64(X[i, j])
            z = exp_minus_abs(2.0 * a)
            if R is not None and D is not None:
                inverse = 1.0 / (1.0 + z)
                t = (1.0 - z) * inverse
                t = t if a >= 0.0 else -t
                R[i, j] = wi * (x - t)
                D[i, j] = wi * 4.0 * z * inverse * inverse
            totals[j] += wi * _log_conditional(x, a, z)
    return totals.sum()


@vector_jit
def curvature_weighted_fields(dA, X, intercept, D):
    """``S = D * (dA completed as in complete_fields)``, in place on ``dA``.

    ``dA = X V`` for a direction ``V = dM + diag(db)``; the result is the
    ``n x d`` array whose transposed product with ``X`` is minus the Hessian
    applied to ``V``. Returns the column sums of ``S`` (accumulated in
    float64), the product's intercept entries, from the same pass.
    """
    n, d = dA.shape
    sums = np.zeros(d)
    for i in range(n):
        for j in range(d):
            s = D[i, j] * (dA[i, j] + intercept[j] * (1.0 - X[i, j]))
            dA[i, j] = s
            sums[j] += s
    return sums
