"""Branch-free ``exp``, ``log``, sigmoid and softplus that LLVM can vectorise.

numba has no vector math library here (no SVML), so ``np.exp`` and ``np.log``
inside a loop are scalar libm calls (about 4.5 ns each), and a sigmoid written
with a branch on the sign of its argument costs about 9 ns per element. Every
RBM kernel spends its element-wise time on these functions between matrix
products: the sigmoids and Bernoulli draws of Gibbs sampling, the softplus
sums of free energies and AIS weights, the messages of belief propagation.

The versions here are polynomials with the argument reduction done on the
IEEE-754 bits, accurate to about one rounding, with no branch and no call, so
a loop over them compiles to SIMD code (measured: about 1 ns per sigmoid
instead of 9 on one AVX-512 core). Two conditions make that happen:

* they are inlined by numba (``inline="always"``): left to LLVM's inliner a
  polynomial is large enough to stay a call, and a call stops vectorisation;
* the calling kernel is compiled with ``error_model='numpy'`` (use
  ``vector_jit`` from ``jit.py``): with numba's default Python error model every
  division checks its denominator for zero and raises, a branch in every
  iteration. The denominators here are at least 1.

Arguments are float64 (a float32 argument is widened); results are float64.
The exceptions are :func:`sigmoid_native` and :func:`exp_nonpositive_native`,
which keep a float32 argument in float32 (half the bytes per SIMD lane and a
shorter polynomial): the Gibbs kernels use the sigmoid so that float32
training does its element-wise work in float32, as its matrix products are,
and the Potts kernels the exponential for their float32 softmax.

A Bernoulli draw ``u < sigmoid(x)`` needs the comparison, not the
probability: :func:`sure_draw` decides it from an ``exp`` of degree 5, with
a margin that provably covers its error, and leaves the rare close calls to
the exact sigmoid; :func:`draw_bernoulli_row_` does a row of draws that way,
with the bits of the exact comparison (0.17 -> 0.13 ms per 100 x 784 draw).
"""

import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .._core.numba_compat import inline_overload
from .jit import vector_jit
from .random import uniform


@intrinsic
def _float_bits(typingctx, x):
    """The IEEE-754 bits of a float64, as an int64 (a register move, no memory)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(types.float64), codegen


@intrinsic
def _bits_float(typingctx, bits):
    """The float64 whose IEEE-754 bits are ``bits``."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.int64), codegen


@intrinsic
def _bits_float32(typingctx, bits):
    """The float32 whose IEEE-754 bits are ``bits`` (an int32)."""

    def codegen(context, builder, signature, args):
        return builder.bitcast(args[0], ir.FloatType())

    return types.float32(types.int32), codegen


_LOG2_E = 1.4426950408889634
# ln 2 split so that k * _LN2_HIGH is exact for |k| < 2 ** 11 (fdlibm's values).
_LN2_HIGH = 6.93147180369123816490e-01
_LN2_LOW = 1.90821492927058770002e-10
_EXP_TAYLOR = tuple(1.0 / math.factorial(k) for k in range(14))
_ATANH_SERIES = tuple(2.0 / (2 * k + 1) for k in range(11))
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
_MANTISSA = 0x000FFFFFFFFFFFFF
# exp(-_EXP_FLOOR) = 9.9e-305 is the smallest value exp_nonpositive returns.
EXP_FLOOR = 700.0


@vector_jit(inline="always")
def horner(coefficients, x):
    """``sum_k coefficients[k] * x ** k`` by Horner's rule. The tuple is a
    compile-time constant, so LLVM unrolls the loop into straight-line code."""
    p = coefficients[-1]
    for k in range(len(coefficients) - 2, -1, -1):
        p = p * x + coefficients[k]
    return p


@vector_jit(inline="always")
def exp_nonpositive(x):
    """``exp(x)`` for ``x`` in [-700, 0], within about one rounding.

    ``x = k ln 2 + r`` with ``|r| <= ln(2) / 2`` (Cody-Waite), ``exp(r)`` by
    its Taylor polynomial of degree 13 (truncation below 1e-17), and ``2 ** k``
    assembled from its exponent bits (``k >= -1010``: a normal number). A NaN
    argument gives NaN.
    """
    return _exp_by_taylor(x, _EXP_TAYLOR)


@vector_jit(inline="always")
def _exp_by_taylor(x, coefficients):
    """``exp(x)`` for ``x`` in [-700, 0] by the range reduction of
    :func:`exp_nonpositive` and the Taylor ``coefficients`` of ``exp(r)``
    (the whole series, or a short one where a bound will do)."""
    k = np.floor(x * _LOG2_E + 0.5)
    r = (x - k * _LN2_HIGH) - k * _LN2_LOW
    return horner(coefficients, r) * _bits_float((np.int64(k) + 1023) << 52)


@vector_jit(inline="always")
def log_positive(y):
    """``log(y)`` for a positive normal ``y``, within about one rounding.

    ``y = 2 ** e * m`` with ``m`` in [sqrt(1/2), sqrt(2)) (subtracting the bits
    of sqrt(1/2) first makes the split branch-free, as in musl's ``log``), then
    ``log m = 2 atanh(s)`` with ``s = (m - 1) / (m + 1)``, ``|s| <= 0.172``, by
    its series to ``s ** 21`` (truncation below 1e-17).
    """
    bits = _float_bits(y) - _SQRT_HALF_BITS
    e = np.float64(bits >> 52)
    m = _bits_float((bits & _MANTISSA) + _SQRT_HALF_BITS)
    s = (m - 1.0) / (m + 1.0)
    s2 = s * s
    return e * _LN2_HIGH + (s * horner(_ATANH_SERIES, s2) + e * _LN2_LOW)


@vector_jit(inline="always")
def exp_minus_abs(x):
    """``exp(-|x|)``, in (0, 1]; floored at ``exp(-700)`` (changes nothing a
    sigmoid or softplus of ``x`` can show). NaN gives NaN."""
    return exp_nonpositive(-min(abs(x), EXP_FLOOR))


@vector_jit(inline="always")
def sigmoid(x):
    """Logistic function ``1 / (1 + exp(-x))``, without overflow for large ``|x|``.

    With ``z = exp(-|x|)``: ``1 / (1 + z)`` for ``x >= 0`` and ``z / (1 + z)``
    otherwise, chosen by a select, not a branch. For ``x < -700`` it returns
    about 1e-304 instead of a smaller number or 0.
    """
    z = exp_minus_abs(x)
    s = 1.0 / (1.0 + z)
    return s if x >= 0.0 else z * s


@vector_jit(inline="always")
def softplus(x):
    """``log(1 + exp(x))`` computed without overflow.

    ``max(x, 0) + log(1 + z)`` with ``z = exp(-|x|)`` in (0, 1]: the absolute
    error of ``log(1 + z)`` is at most one rounding of ``1 + z`` (2e-16), which
    is all a sum of softplus terms needs.
    """
    return max(x, 0.0) + log_positive(1.0 + exp_minus_abs(x))


# float32 versions: every constant is a float32, so numba does not widen.
_F32 = np.float32
_LOG2_E_32 = _F32(_LOG2_E)
_HALF_32, _ONE_32, _ZERO_32 = _F32(0.5), _F32(1.0), _F32(0.0)
# ln 2 split so that k * _LN2_HIGH_32 is exact for |k| < 2 ** 7 (cephes' expf).
_LN2_HIGH_32 = _F32(0.693359375)
_LN2_LOW_32 = _F32(-2.12194440e-4)
# Taylor to degree 7: truncation below 6e-9 on |r| <= ln(2) / 2.
_EXP_TAYLOR_32 = tuple(_F32(1.0 / math.factorial(k)) for k in range(8))
# exp(-87) = 1.6e-38 is the smallest float32 exp_nonpositive32 returns (a normal).
EXP_FLOOR_32 = _F32(87.0)


@vector_jit(inline="always")
def exp_nonpositive32(x):
    """``exp(x)`` in float32 for a float32 ``x`` in [-87, 0], within about two
    float32 roundings; the float32 twin of :func:`exp_nonpositive`."""
    k = np.floor(x * _LOG2_E_32 + _HALF_32)
    r = (x - k * _LN2_HIGH_32) - k * _LN2_LOW_32
    return horner(_EXP_TAYLOR_32, r) * _bits_float32((np.int32(k) + 127) << 23)


@vector_jit(inline="always")
def sigmoid32(x):
    """The float32 twin of :func:`sigmoid` (floor ``exp(-87)`` below -87)."""
    z = exp_nonpositive32(-min(abs(x), EXP_FLOOR_32))
    s = _ONE_32 / (_ONE_32 + z)
    return s if x >= _ZERO_32 else z * s


def sigmoid_native(x):
    """:func:`sigmoid` in the precision of its argument: float32 for a float32,
    float64 otherwise (resolved at compile time, inlined)."""
    return sigmoid(x)


@inline_overload(sigmoid_native)
def _sigmoid_native(x):
    if x == types.float32:
        return lambda x: sigmoid32(x)
    return lambda x: sigmoid(x)


def exp_nonpositive_native(x):
    """``exp(x)`` for ``x <= 0`` in the precision of its argument (float32:
    :func:`exp_nonpositive32`, else :func:`exp_nonpositive`), floored at
    ``exp(-87)`` or ``exp(-700)``: the terms of a softmax after its largest
    is subtracted, where the floor changes no sum of at least 1."""
    return exp_nonpositive(max(x, -EXP_FLOOR))


@inline_overload(exp_nonpositive_native)
def _exp_nonpositive_native(x):
    if x == types.float32:
        return lambda x: exp_nonpositive32(max(x, -EXP_FLOOR_32))
    return lambda x: exp_nonpositive(max(x, -EXP_FLOOR))


@vector_jit(inline="always")
def softplus_gap(x, beta, beta_next):
    """``softplus(beta x) - softplus(beta_next x)`` without cancellation, as
    ``(beta - beta_next) max(x, 0) + log(1 + e^{-beta|x|})
    - log(1 + e^{-beta_next|x|})``: the difference of a Bernoulli unit's
    cumulant between two inverse temperatures (AIS weight increments, the
    Metropolis ratio of a tempering swap)."""
    return (beta - beta_next) * max(x, 0.0) + (
        log_positive(1.0 + exp_minus_abs(beta * x))
        - log_positive(1.0 + exp_minus_abs(beta_next * x))
    )


#: The largest ``|x|`` of :func:`expm1_near`, so the largest ``|(beta -
#: beta_next) a|`` for which :func:`softplus_gap_near` holds.
NEAR_STEP = 0.125
# Taylor to x ** 10: truncation below 3e-17 relative on |x| <= 1/8.
_EXPM1_TAYLOR = tuple(1.0 / math.factorial(k + 1) for k in range(10))
_ATANH_NEAR = _ATANH_SERIES[:6]


@vector_jit(inline="always")
def expm1_near(x):
    """``exp(x) - 1`` for ``|x| <= NEAR_STEP``, within about one rounding
    relative (no cancellation for small ``x``): its Taylor series."""
    return x * horner(_EXPM1_TAYLOR, x)


@vector_jit(inline="always")
def log1p_near(y):
    """``log(1 + y)`` for ``|y| <= 0.07``, within about one rounding relative:
    ``2 atanh(z)``, ``z = y / (2 + y)``, ``|z| <= 0.036``, by its series to
    ``z ** 11`` (truncation below 1e-18)."""
    z = y / (2.0 + y)
    return z * horner(_ATANH_NEAR, z * z)


@vector_jit(inline="always")
def near_gap_log_argument(x, e, s, step):
    """``y`` of :func:`softplus_gap_near`: ``e s expm1(step |x|)``, with
    ``log(1 + y) = log(1 + e') - log(1 + e)``."""
    return e * s * expm1_near(step * abs(x))


@vector_jit(inline="always")
def softplus_gap_near(x, e, s, step):
    """:func:`softplus_gap` ``(x, beta, beta_next)`` for ``|step x| <=
    NEAR_STEP`` (``step = beta - beta_next``), given ``e = exp(-beta |x|)``
    and ``s = 1 / (1 + e)``, which a sigmoid at ``beta`` computes anyway.

    With ``e' = exp(-beta_next |x|) = e exp(step |x|)``, the logarithms'
    difference is ``log(1 + e) - log(1 + e') = -log(1 + y)``, ``y = e s
    expm1(step |x|)`` (``|y| <= 0.067``): one short series for ``exp`` and
    one for ``log`` instead of a whole ``exp`` and two ``log``, and no
    cancellation (about 1e-17 absolute, against 1e-16 for the difference of
    two logarithms).
    """
    return step * max(x, 0.0) - log1p_near(near_gap_log_argument(x, e, s, step))


# ------------------------------------------------------------ Bernoulli draws
# exp(r)'s Taylor polynomial to degree 5 on |r| <= ln(2) / 2: relative
# truncation error below |r| ** 6 e ** |r| / 6! = 3.41e-6.
_EXP_TAYLOR_ROUGH = _EXP_TAYLOR[:6]
#: The margin of :func:`sure_draw`, relative to the probability: 28 times
#: the errors it has to cover (see there).
DRAW_MARGIN = 1e-4


@vector_jit(inline="always")
def exp_nonpositive_rough(x):
    """``exp(x)`` for ``x`` in [-700, 0] within 3.5e-6 relative: the range
    reduction of :func:`exp_nonpositive` and Taylor to degree 5."""
    return _exp_by_taylor(x, _EXP_TAYLOR_ROUGH)


@vector_jit(inline="always")
def sure_draw(u, x):
    """The Bernoulli draw ``u < sigmoid(x)`` (float64 ``x``, ``u`` in [0,
    1)) decided with a cheap ``exp``: 1.0 or 0.0 where that is sure, -1.0
    where the caller must compute :func:`sigmoid` to tell (when ``u`` is
    within about ``M s`` of ``s = sigmoid(x)``, ``M = DRAW_MARGIN``: with
    probability ``2 M s``). Where it decides, it decides as the exact
    comparison does, for every ``u`` and ``x``: a proof, not a probability.

    Why. Let ``z = exp(-min(|x|, 700))`` and ``c = 1`` for ``x >= 0``, ``c =
    z`` otherwise: ``sigmoid(x)`` is ``s = c / (1 + z)`` within ``eta s``,
    ``eta = 1e-15`` (the error of :func:`exp_nonpositive` and three
    roundings; the tests check it). So with ``T = u (1 + z) - c``, ``T <
    -eta c`` means ``u < s (1 - eta)``, a 1, and ``T >= eta c`` means ``u >=
    s (1 + eta)``, a 0. The computed ``t`` takes ``z~`` of
    :func:`exp_nonpositive_rough`, within ``eps z``, ``eps = 3.5e-6``: that
    moves ``T`` by ``|u - [x < 0]| |z~ - z| <= eps c``, and the three
    roundings (``1 + z~``, the product, the difference) by at most ``2 **
    -51 (|T| + c)``. Hence ``t < -M c~`` (``c~ = 1`` or ``z~``, at least
    ``(1 - eps) c``) gives ``T < -(M (1 - eps) - eps - 2 ** -51) c / (1 + 2
    ** -51) < -eta c``, as ``M = 1e-4`` is 28 times ``eps + eta + 2 **
    -50``; ``t > M c~`` gives ``T > eta c`` alike. ``M c~`` is at least
    ``1e-4 exp(-700) = 9.9e-309``, subnormal but within 5e-16 of itself.
    ``u = 0`` gives ``t = -c~``, a 1, as ``s > 0``; ``x = +-inf`` is clamped
    like any ``|x| > 700``; a NaN ``x`` gives a NaN ``t``, which neither
    comparison takes: -1.0.
    """
    z = exp_nonpositive_rough(-min(abs(x), EXP_FLOOR))
    c = 1.0 if x >= 0.0 else z
    t = u * (1.0 + z) - c
    margin = DRAW_MARGIN * c
    return 1.0 if t < -margin else (0.0 if t > margin else -1.0)


def is_float32(x):
    """Whether the array ``x`` holds float32, as a compile-time constant."""
    return x.dtype == np.float32


@inline_overload(is_float32)
def _is_float32(x):
    answer = x.dtype == types.float32
    return lambda x: answer


@vector_jit(inline="always")
def draw_bernoulli_row_(out, x, key, offset, input_of, args):
    """Fill ``out`` with Bernoulli draws: ``out[j] = 1`` if ``uniform(key,
    offset + j) < sigmoid_native(x_j)``, else 0, with ``x_j = input_of(out,
    j, args)`` (the input, which may also update ``out[j]``; an inlined
    jitted function, so the row stays one SIMD loop).

    float64 inputs are decided by :func:`sure_draw` in the pass over the
    row, kept in the scratch row ``x``; the few it leaves open (marked -1
    in ``out``; about one row in 20 of a 784-unit layer has one) get
    :func:`sigmoid` after it, between the first and the last open index.
    float32 inputs (``x`` float32, not used) are compared with
    :func:`sigmoid32` at once: in float32 lanes the exact sigmoid costs
    less than the float64 bound. The bits are those of the exact comparison
    either way.
    """
    n = out.shape[0]
    first, last = n, -1  # integer min and max vectorise
    if is_float32(x):
        for j in range(n):
            u = uniform(key, offset + j)
            out[j] = 1.0 if u < sigmoid32(input_of(out, j, args)) else 0.0
    else:
        for j in range(n):
            x[j] = input_of(out, j, args)
            out[j] = sure_draw(uniform(key, offset + j), x[j])
            first = min(first, j if out[j] < 0.0 else n)
            last = max(last, j if out[j] < 0.0 else -1)
    for j in range(first, last + 1):
        if out[j] < 0.0:
            out[j] = 1.0 if uniform(key, offset + j) < sigmoid_native(x[j]) else 0.0
