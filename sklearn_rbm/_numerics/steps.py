"""The small pieces of every gradient step: column sums, scaled accumulation
and the step of a bias vector with momentum; and the vector copies kernels use
instead of slice assignments.

A slice assignment from an array (``out[:] = x``, ``out[i] = row``, ``out[a:b]
+= x``) compiles, for its shape-mismatch message, numba's string formatting:
about two seconds of compile time in every fresh process that compiles a
kernel holding one (a tenth of the build). Kernels copy with :func:`copy_` and
accumulate with :func:`add_` instead.
"""

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


@jit
def row_sums(X, w, start):
    """``start[r] + sum_i X[r, i] w[i]`` for every row of ``X`` (``w=None``:
    every weight 1), float64.

    Each row is summed from ``i = 0`` up, as a plain loop would, so the bits
    are those of that loop; but four rows go at a time. A single row's sum is
    one chain of dependent additions, each waiting for the one before, and
    four independent chains fill the time it waits (0.064 -> 0.020 ms for the
    100 x 784 visible terms of an AIS temperature).
    """
    n_rows, n_cols = X.shape
    out = np.empty(n_rows)
    for r0 in range(0, n_rows - 3, 4):
        t0, t1, t2, t3 = start[r0], start[r0 + 1], start[r0 + 2], start[r0 + 3]
        for i in range(n_cols):
            if w is None:
                t0, t1, t2, t3 = (
                    t0 + X[r0, i], t1 + X[r0 + 1, i], t2 + X[r0 + 2, i],
                    t3 + X[r0 + 3, i],
                )  # fmt: skip
            else:
                s = w[i]
                t0, t1, t2, t3 = (
                    t0 + X[r0, i] * s, t1 + X[r0 + 1, i] * s,
                    t2 + X[r0 + 2, i] * s, t3 + X[r0 + 3, i] * s,
                )  # fmt: skip
        out[r0], out[r0 + 1], out[r0 + 2], out[r0 + 3] = t0, t1, t2, t3
    for r in range(n_rows - n_rows % 4, n_rows):
        total = start[r]
        for i in range(n_cols):
            total += X[r, i] if w is None else X[r, i] * w[i]
        out[r] = total
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


@vector_jit
def copy_(out, source):
    """In place ``out[:] = source`` for vectors of one length, as a loop (no
    slice assignment: see the module docstring)."""
    for i in range(out.shape[0]):
        out[i] = source[i]


@vector_jit
def add_(out, source):
    """In place ``out[:] += source`` for vectors of one length, as a loop."""
    for i in range(out.shape[0]):
        out[i] += source[i]
