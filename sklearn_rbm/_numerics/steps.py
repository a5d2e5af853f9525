"""The small pieces of every gradient step: column sums, scaled accumulation
and the step of a bias vector with momentum."""

import numpy as np

from .jit import jit, vector_jit


@jit
def column_sum(X):
    """Column sums of a matrix, float64 whatever its dtype."""
    out = np.zeros(X.shape[1])
    for r in range(X.shape[0]):
        for j in range(X.shape[1]):
            out[j] += X[r, j]
    return out


@vector_jit
def scale_add_(alpha, X, beta, out):
    """In place: ``out = alpha * X + beta * out``."""
    x, o = X.reshape(-1), out.reshape(-1)
    for k in range(o.size):
        o[k] = alpha * x[k] + beta * o[k]


@jit
def bias_step_(theta, positive, negative, scale_pos, scale_neg, rate, momentum, vel):
    """In place: ``theta += vel`` with ``vel = momentum * vel + rate *
    (scale_pos * positive - scale_neg * negative)`` (the bias terms are short)."""
    for k in range(theta.size):
        step = rate * (scale_pos * positive[k] - scale_neg * negative[k])
        if momentum > 0.0:
            step += momentum * vel[k]
            vel[k] = step
        theta[k] += step
