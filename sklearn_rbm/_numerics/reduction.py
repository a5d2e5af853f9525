"""Dot products in float64 of float32 or float64 vectors, vectorised.

An ordered float64 sum is one chain of dependent additions: LLVM may not
split it over SIMD lanes, and a loop holding one does not vectorise at all.
:func:`dot` is compiled alone with ``REDUCTION_MATH`` (``jit.py``), which
allows the split; its callers keep their own rounding elsewhere, and the
order of the sum is fixed by the compiled code (the same result from run to
run and for any thread count).
"""

import numpy as np

from .jit import REDUCTION_MATH, jit


@jit(fastmath=REDUCTION_MATH)
def dot(a, b):
    """``sum_k a[k] b[k]`` in float64 (pass views that start at 0, such as
    slices: an offset index needs a wraparound check, which stops
    vectorisation)."""
    total = 0.0
    for k in range(a.size):
        total += np.float64(a[k]) * np.float64(b[k])
    return total
