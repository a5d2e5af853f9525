"""Counter-based standard normal draws that LLVM can vectorise.

The Gaussian-Bernoulli RBM draws one normal per visible unit and chain at
every Gibbs step: about 10^5 per mini-batch of a 784-pixel model, between
matrix products that take a few milliseconds. numba's ``Generator.normal`` is
a scalar call (ziggurat with rejection) and ``np.cos`` a scalar libm call, so
a draw would cost several nanoseconds and a fifth of the epoch. Here each
normal is Box-Muller's ``sqrt(-2 log u1) cos(2 pi u2)`` of two counter-based
uniforms (``random.py``: element ``k`` of a matrix uses position ``k`` of two
keyed streams, so the draws do not depend on the order or the thread that
makes them), with the logarithm of ``vecmath.py`` and a branch-free cosine
polynomial: a loop of draws compiles to SIMD code.
"""

import math

import numpy as np

from .jit import vector_jit
from .random import uniform
from .vecmath import horner, log_positive

_TWO_PI = 2.0 * math.pi
# Taylor coefficients of sin(x) / x and cos(x) in x**2, to x**16 and x**18:
# on |x| <= pi / 4 the truncation is below 1e-17.
_SIN_SERIES = tuple((-1.0) ** k / math.factorial(2 * k + 1) for k in range(9))
_COS_SERIES = tuple((-1.0) ** k / math.factorial(2 * k) for k in range(10))


@vector_jit(inline="always")
def cos_two_pi(u):
    """``cos(2 pi u)`` for ``u`` in [0, 1), within about one rounding, no branch.

    ``u = q / 4 + r`` with the quarter turn ``q`` the nearest integer to
    ``4 u`` and ``|r| <= 1/8``; with ``x = 2 pi r`` in [-pi/4, pi/4],
    ``cos(2 pi u)`` is ``cos x``, ``-sin x``, ``-cos x`` or ``sin x`` for
    ``q mod 4 = 0, 1, 2, 3``, chosen by selects.
    """
    q = np.floor(4.0 * u + 0.5)
    x = _TWO_PI * (u - 0.25 * q)
    x2 = x * x
    sine = x * horner(_SIN_SERIES, x2)
    cosine = horner(_COS_SERIES, x2)
    quarter = np.int64(q) & 3
    value = sine if quarter & 1 else cosine
    return -value if (quarter == 1 or quarter == 2) else value


@vector_jit(inline="always")
def standard_normal(radius_key, angle_key, counter):
    """The standard normal at position ``counter`` of two keyed uniform streams
    (Box-Muller; ``1 - u`` is in (0, 1], so the logarithm is finite)."""
    u = 1.0 - uniform(radius_key, counter)
    return np.sqrt(-2.0 * log_positive(u)) * cos_two_pi(uniform(angle_key, counter))
