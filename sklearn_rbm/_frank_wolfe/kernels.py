"""The element-wise pass of the Frank-Wolfe sub-problem (Ping, Liu & Ihler 2016,
Eq. (9)).

The sub-problem objective over fixed rows ``a_r`` (the training data and the
model samples, each with a constant 1 appended for the hidden bias) is
``f(w) = lambda/2 |w|^2 + sum_r coef_r softplus(a_r . w)`` with
``coef_r = -1/N`` for data rows and ``+1/S`` for sample rows, and its gradient
``lambda w + sum_r coef_r sigmoid(a_r . w) a_r``. The two matrix-vector
products go to BLAS (numpy); between them sits this one fused pass, which
turns the pre-activations into the weights of the second product in place and
returns the softplus sum, without temporaries.
"""

import numpy as np

from .._numerics.jit import jit
from .._numerics.vecmath import sigmoid, softplus


@jit
def signed_softplus_sum_(pre, coef):
    """In place ``pre[r] <- coef[r] * sigmoid(pre[r])``; returns
    ``sum_r coef[r] * softplus(pre[r])`` (accumulated in float64)."""
    total = 0.0
    for r in range(pre.shape[0]):
        x = pre[r]
        total += coef[r] * softplus(x)
        pre[r] = coef[r] * sigmoid(x)
    return total


@jit
def softplus_rows(pre):
    """``softplus`` of every entry of a vector, as a new float64 vector."""
    out = np.empty(pre.shape[0])
    for r in range(pre.shape[0]):
        out[r] = softplus(pre[r])
    return out
