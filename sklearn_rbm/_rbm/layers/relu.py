"""ReLU and double-ReLU (dReLU) hidden units: their cumulants, moments and
conditional sampler (Tubiana, Cocco & Monasson 2019).

A hidden unit with potential ``U(h)`` and input ``a`` has the conditional
``p(h | a) ∝ exp(-U(h) + a h)``; its *cumulant* ``Gamma(a) = log ∫
exp(-U(h) + a h) dh`` is its term in the free energy (``F(v) = -b . s -
sum_j Gamma_j(I_j(v))``), and ``Gamma'`` and ``Gamma''`` are the conditional
mean and variance. Potentials:

* ReLU: ``U(h) = gamma h^2 / 2 + theta h`` for ``h >= 0`` (``+inf`` below);
* dReLU: ``U(h) = gamma_p h_+^2 / 2 + theta_p h_+ + gamma_m h_-^2 / 2 +
  theta_m h_-`` with ``h_+ = max(h, 0)``, ``h_- = min(h, 0)``.

Each half-line integral is ``∫_0^inf exp(-gamma u^2 / 2 - t u) du =
sqrt(pi / (2 gamma)) erfcx(t / sqrt(2 gamma))`` (``t = theta_p - a`` for the
positive side, ``t = a - theta_m`` for the negative one), so ``Gamma`` is a
log-sum of two ``log erfcx`` terms: the *erfcx route*, stable for inputs of
any size where ``exp`` and ``erfc`` separately overflow or underflow. The
conditional given the side is a Gaussian truncated to it, whose mean and
variance follow from the inverse Mills ratio ``sqrt(2 / pi) / erfcx(x)``.

The scalar functions are numba functions usable from the kernels and from
Python, compiled with numpy's error model: a non-finite input (weights that
overflowed) gives NaN, which the trainer's divergence check reports, and
not a ZeroDivisionError from inside a kernel. The hidden layers built on
them, for the hooks of ``base.py`` (``mean_``, ``sample_``,
the tempered draws, ``cumulant_gap`` and ``anneal_``), are ReLU units and
Gaussian units (the linear member of the family), both of unit curvature,
with the hidden bias ``c`` as their only trained parameter (``theta =
-c``); :class:`BernoulliHidden`,
:class:`GaussianHidden` and :class:`ReLUHidden` are their estimator side.
Annealing and tempering scale the hidden units' *input* and keep their
potential, so the base model at ``beta = 0`` is the visible base model times
``exp(-U(h))``, whose ``log Z`` is ``sum_j Gamma_j(0)``. The dReLU hidden
layer, whose four parameters per unit are trained, is ``drelu.py``, over
the scalar functions here.
"""

import math
from typing import NamedTuple

import numpy as np
from scipy.special import erfc, expit
from scipy.special import erfcx as scipy_erfcx

from ..._numerics.jit import vector_jit
from ..._numerics.normal import standard_normal
from ..._numerics.random import new_key, uniform
from . import base
from .base import implements

_LOG_SQRT_PI_2 = 0.5 * math.log(math.pi / 2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_SQRT_2 = math.sqrt(2.0)


@vector_jit
def erfcx(x):
    """``exp(x^2) erfc(x)``, without overflow for large positive ``x``
    (asymptotic series beyond 26; overflows to inf below about -26.6 as the
    function itself does)."""
    if x < 26.0:
        return math.exp(x * x) * math.erfc(x)
    # sum_n (-1)^n (2n - 1)!! y^n, y = 1 / (2 x^2) < 7.4e-4: nine terms
    # leave an error below 1e-20.
    y = 1.0 / (2.0 * x * x)
    term, total = 1.0, 1.0
    for n in range(1, 9):
        term *= -(2 * n - 1) * y
        total += term
    return total / (x * math.sqrt(math.pi))


@vector_jit
def log_erfcx(x):
    """``log erfcx(x)`` for any finite ``x``: ``x^2 + log erfc(x)`` for
    negative ``x`` (``erfc`` is then in (1, 2))."""
    if x < 0.0:
        return x * x + math.log(math.erfc(x))
    return math.log(erfcx(x))


@vector_jit
def _erfcx_pair(x):
    """``(erfcx(x), log erfcx(x))`` from one ``erfc``: the values of
    :func:`erfcx` and :func:`log_erfcx`, bit for bit, for the moments, which
    need both (calling the two costs twice the ``erfc`` and ``exp``)."""
    if x >= 26.0:
        value = erfcx(x)
        return value, math.log(value)
    tail = math.erfc(x)
    value = math.exp(x * x) * tail
    if x < 0.0:
        return value, x * x + math.log(tail)
    return value, math.log(value)


@vector_jit
def _half_line(gamma, t):
    """``log ∫_0^inf exp(-gamma u^2 / 2 - t u) du`` and the argument ``x =
    t / sqrt(2 gamma)`` of its erfcx."""
    x = t / math.sqrt(2.0 * gamma)
    return _LOG_SQRT_PI_2 - 0.5 * math.log(gamma) + log_erfcx(x), x


@vector_jit
def _half_line_moments(gamma, t, sign):
    """:func:`_half_line`'s logarithm with the mean and variance of the
    Gaussian of precision ``gamma`` truncated to that half-line (``sign`` +1:
    ``h >= 0``; -1: ``h <= 0``), sharing one erfcx."""
    x = t / math.sqrt(2.0 * gamma)
    value, log_value = _erfcx_pair(x)
    sigma = 1.0 / math.sqrt(gamma)
    ratio = _SQRT_2_PI / value  # the inverse Mills ratio
    alpha = _SQRT_2 * x  # the standardised distance of the mode beyond 0
    mean = sign * sigma * (ratio - alpha)
    variance = sigma * sigma * (1.0 + alpha * ratio - ratio * ratio)
    return _LOG_SQRT_PI_2 - 0.5 * math.log(gamma) + log_value, mean, variance


@vector_jit
def relu_cumulant(a, gamma, theta):
    """``Gamma(a)`` of a ReLU unit."""
    return _half_line(gamma, theta - a)[0]


@vector_jit
def relu_moments(a, gamma, theta):
    """``(mean, variance)`` of ``h | a`` for a ReLU unit."""
    _, mean, variance = _half_line_moments(gamma, theta - a, 1.0)
    return mean, variance


@vector_jit
def drelu_cumulant(a, gamma_p, gamma_m, theta_p, theta_m):
    """``Gamma(a)`` of a dReLU unit: the log-sum of its two half-lines."""
    log_p = _half_line(gamma_p, theta_p - a)[0]
    log_m = _half_line(gamma_m, a - theta_m)[0]
    top = max(log_p, log_m)
    return top + math.log(math.exp(log_p - top) + math.exp(log_m - top))


@vector_jit
def drelu_sides(a, gamma_p, gamma_m, theta_p, theta_m):
    """``(p_plus, mean_p, var_p, mean_m, var_m)`` of ``h | a`` for a dReLU
    unit: the probability that ``h > 0`` and the mean and variance of ``h``
    on each side (``h_+`` given ``h > 0``, ``h_-`` given ``h < 0``)."""
    log_p, mean_p, var_p = _half_line_moments(gamma_p, theta_p - a, 1.0)
    log_m, mean_m, var_m = _half_line_moments(gamma_m, a - theta_m, -1.0)
    p_plus = 1.0 / (1.0 + math.exp(log_m - log_p))
    return p_plus, mean_p, var_p, mean_m, var_m


@vector_jit
def drelu_moments(a, gamma_p, gamma_m, theta_p, theta_m):
    """``(mean, variance, p_plus)`` of ``h | a`` for a dReLU unit,
    ``p_plus`` the probability that ``h > 0``."""
    p_plus, mean_p, var_p, mean_m, var_m = drelu_sides(
        a, gamma_p, gamma_m, theta_p, theta_m
    )
    mean = p_plus * mean_p + (1.0 - p_plus) * mean_m
    second = p_plus * (var_p + mean_p**2) + (1.0 - p_plus) * (var_m + mean_m**2)
    return mean, second - mean * mean, p_plus


@vector_jit
def _standard_normal_tail(a, key, counter):
    """A draw of a standard normal truncated to ``[a, inf)``: plain
    rejection for ``a < 0.5``, Robert's (1995) exponential rejection beyond;
    uniforms from positions ``counter, counter + 1, ...`` of ``key`` (every
    call uses its own block of 1024)."""
    k = 0
    if a < 0.5:
        while k < 1022:
            u1 = uniform(key, counter + k)
            u2 = uniform(key, counter + k + 1)
            k += 2
            z = math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2)
            if z >= a:
                return z
        return a
    rate = 0.5 * (a + math.sqrt(a * a + 4.0))
    while k < 1022:
        z = a - math.log(1.0 - uniform(key, counter + k)) / rate
        u = uniform(key, counter + k + 1)
        k += 2
        if u <= math.exp(-0.5 * (z - rate) ** 2):
            return z
    return a


@vector_jit
def relu_sample(a, gamma, theta, key, counter):
    """A draw of ``h | a`` for a ReLU unit (uniforms from positions
    ``1024 * counter`` onwards of the stream ``key``)."""
    sigma = 1.0 / math.sqrt(gamma)
    m = (a - theta) / gamma
    z = _standard_normal_tail(-m / sigma, key, 1024 * counter)
    return m + sigma * z


@vector_jit
def drelu_sample(a, gamma_p, gamma_m, theta_p, theta_m, key, counter):
    """A draw of ``h | a`` for a dReLU unit: the side with probability
    ``p_plus``, then the Gaussian truncated to it."""
    log_p = _half_line(gamma_p, theta_p - a)[0]
    log_m = _half_line(gamma_m, a - theta_m)[0]
    p_plus = 1.0 / (1.0 + math.exp(log_m - log_p))
    base = 1024 * counter
    if uniform(key, base + 1023) < p_plus:
        sigma = 1.0 / math.sqrt(gamma_p)
        m = (a - theta_p) / gamma_p
        return m + sigma * _standard_normal_tail(-m / sigma, key, base)
    sigma = 1.0 / math.sqrt(gamma_m)
    m = (a - theta_m) / gamma_m
    return m - sigma * _standard_normal_tail(m / sigma, key, base)


# ------------------------------------------------------------ numpy faces
def log_erfcx_array(x):
    """:func:`log_erfcx` of an array (numpy, through scipy's ``erfcx``)."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        negative = x * x + np.log(erfc(np.minimum(x, 0.0)))
        positive = np.log(scipy_erfcx(np.maximum(x, 0.0)))
    return np.where(x < 0.0, negative, positive)


def relu_cumulant_array(A, gamma=1.0):
    """``Gamma(a)`` of ReLU units (``theta = 0``: the bias is in ``A``)."""
    x = -np.asarray(A, np.float64) / math.sqrt(2.0 * gamma)
    return _LOG_SQRT_PI_2 - 0.5 * math.log(gamma) + log_erfcx_array(x)


def relu_mean_array(A, gamma=1.0):
    """``E[h | a]`` of ReLU units."""
    x = -np.asarray(A, np.float64) / math.sqrt(2.0 * gamma)
    ratio = _SQRT_2_PI / scipy_erfcx(x)
    return (ratio - _SQRT_2 * x) / math.sqrt(gamma)


# -------------------------------------------------------- the kernel units
class ReLUUnits(NamedTuple):
    """Hidden ReLU units with potential ``gamma h^2 / 2`` on ``h >= 0`` and
    the linear term ``-bias h`` (``theta = -bias``); ``gamma`` is fixed."""

    bias: np.ndarray
    velocity: np.ndarray
    gamma: float


class GaussianHiddenUnits(NamedTuple):
    """Hidden Gaussian units with potential ``gamma h^2 / 2`` and the linear
    term ``-bias h``; ``gamma`` is fixed."""

    bias: np.ndarray
    velocity: np.ndarray
    gamma: float


class DReLUUnits(NamedTuple):
    """Hidden dReLU units (their layer is ``drelu.py``): the linear term
    ``bias`` (``c``) and its velocity, the ``potential`` ``(4, n_hidden)``
    (float64 rows ``gamma_p, gamma_m, theta_p, theta_m``) and its velocity
    (both zeros outside training), and the floor of the curvatures."""

    bias: np.ndarray
    velocity: np.ndarray
    potential: np.ndarray
    potential_velocity: np.ndarray
    min_gamma: float


# The ReLU family's own hooks (scalar, per unit): the conditional mean and
# a draw of unit ``j`` at total input ``a``. The layer hooks below are
# written once over them for ReLU and dReLU units.
def unit_mean(units, j, a):
    """``E[h_j | a]``."""
    return base._hook(units, j, a)


def unit_draw(units, j, a, key, counter):
    """A draw of ``h_j | a`` from position ``counter`` of the stream ``key``
    (each draw owns a block of 1024 positions)."""
    return base._hook(units, j, a, key, counter)


@vector_jit
def unit_rows_(units, pre, bias, betas, n_chains, key, sample):
    """In place: ``pre[r, j]`` becomes the mean (or, with ``sample``, a draw)
    of ``h_j | beta_r (pre[r, j] + bias[j])`` (ReLU-family units)."""
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        beta = betas[r // n_chains]
        for j in range(n_cols):
            a = beta * (np.float64(pre[r, j]) + np.float64(bias[j]))
            if sample:
                pre[r, j] = unit_draw(units, j, a, key, r * n_cols + j)
            else:
                pre[r, j] = unit_mean(units, j, a)
    return pre


@vector_jit
def _gaussian_rows_(pre, bias, gamma, betas, n_chains, key, sample):
    """:func:`unit_rows_` for Gaussian hidden units (``gamma`` fixed: one
    vectorised loop)."""
    n_rows, n_cols = pre.shape
    angle = key ^ np.uint64(0x5DEECE66D)
    scale = 1.0 / math.sqrt(gamma)
    for r in range(n_rows):
        beta = betas[r // n_chains]
        for j in range(n_cols):
            mean = beta * (np.float64(pre[r, j]) + np.float64(bias[j])) / gamma
            if sample:
                mean += scale * standard_normal(key, angle, r * n_cols + j)
            pre[r, j] = mean
    return pre


@vector_jit
def _ones(n):
    return np.ones(n)


_CONTINUOUS = (ReLUUnits, GaussianHiddenUnits, DReLUUnits)


def rows_(units, pre, bias, betas, n_chains, key, sample):
    """In place: ``pre[r, j]`` becomes the mean (or, with ``sample``, a draw
    from the stream ``key``) of unit ``j`` given its input ``beta (pre[r, j]
    + bias[j])``, ``beta = betas[r // n_chains]``: :func:`unit_rows_` or
    :func:`_gaussian_rows_`, whichever the class of ``units`` asks for (the
    four sampling hooks below are one for every continuous unit type)."""
    return base._hook(units, pre, bias, betas, n_chains, key, sample)


@implements(rows_, (ReLUUnits, DReLUUnits))
def _family_rows(units, pre, bias, betas, n_chains, key, sample):
    return unit_rows_(units, pre, bias, betas, n_chains, key, sample)


@implements(rows_, GaussianHiddenUnits)
def _gaussian_rows(units, pre, bias, betas, n_chains, key, sample):
    return _gaussian_rows_(pre, bias, units.gamma, betas, n_chains, key, sample)


@implements(base.context, _CONTINUOUS)
def _context(units, W):
    return None


@implements(unit_mean, ReLUUnits)
def _relu_unit_mean(units, j, a):
    return relu_moments(a, units.gamma, 0.0)[0]


@implements(unit_draw, ReLUUnits)
def _relu_unit_draw(units, j, a, key, counter):
    return relu_sample(a, units.gamma, 0.0, key, counter)


@implements(base.mean_, _CONTINUOUS)
def _mean(units, ctx, inputs, field):
    return rows_(units, inputs, field, _ones(1), inputs.shape[0], np.uint64(0), False)


@implements(base.sample_, _CONTINUOUS)
def _sample(units, ctx, inputs, field, rng):
    return rows_(units, inputs, field, _ones(1), inputs.shape[0], new_key(rng), True)


@implements(base.tempered_sample_, _CONTINUOUS)
def _tempered_sample(units, ctx, tempered, inputs, field, betas, n_chains, rng):
    return rows_(units, inputs, field, betas, n_chains, new_key(rng), True)


@implements(base.tempered_mean_, _CONTINUOUS)
def _tempered_mean(units, ctx, inputs, field, betas, n_chains):
    return rows_(units, inputs, field, betas, n_chains, np.uint64(0), False)


@implements(base.anneal_, (ReLUUnits, DReLUUnits))
def _family_anneal(units, log_w, inputs, visible_terms, field, beta, beta_prev, key,
                   sample, first_row):  # fmt: skip
    n_chains, n_hidden = inputs.shape
    for r in range(n_chains):
        counter = (first_row + r) * n_hidden
        increment = (beta - beta_prev) * visible_terms[r]
        for j in range(n_hidden):
            a = np.float64(inputs[r, j]) + np.float64(field[j])
            increment += base.cumulant_gap(units, j, a, beta, beta_prev)
            if sample:
                inputs[r, j] = unit_draw(units, j, beta * a, key, counter + j)
        log_w[r] += increment


@implements(base.cumulant_gap, ReLUUnits)
def _relu_cumulant_gap(units, j, a, beta, beta_next):
    return relu_cumulant(beta * a, units.gamma, 0.0) - relu_cumulant(
        beta_next * a, units.gamma, 0.0
    )


@implements(base.cumulant_gap, GaussianHiddenUnits)
def _gaussian_cumulant_gap(units, j, a, beta, beta_next):
    return (beta * beta - beta_next * beta_next) * a * a / (2.0 * units.gamma)


@implements(base.anneal_, GaussianHiddenUnits)
def _gaussian_anneal(units, log_w, inputs, visible_terms, field, beta, beta_prev,
                     key, sample, first_row):  # fmt: skip
    n_chains, n_hidden = inputs.shape
    gamma = units.gamma
    gap = (beta * beta - beta_prev * beta_prev) / (2.0 * gamma)
    angle = key ^ np.uint64(0x5DEECE66D)
    scale = 1.0 / math.sqrt(gamma)
    for r in range(n_chains):
        counter = (first_row + r) * n_hidden
        increment = (beta - beta_prev) * visible_terms[r]
        for j in range(n_hidden):
            a = np.float64(inputs[r, j]) + np.float64(field[j])
            increment += gap * a * a
            if sample:
                inputs[r, j] = beta * a / gamma + scale * standard_normal(
                    key, angle, counter + j
                )
        log_w[r] += increment


# ------------------------------------------------------- the estimator side
class BernoulliHidden:
    """Binary hidden units (the default): ``Gamma(a) = softplus(a)``.

    The estimator side of a hidden layer: ``units_of`` makes its kernel
    units, ``mean``, ``cumulant`` and ``variance`` act on arrays of total
    inputs (bias included). The hooks of a layer with trained parameters
    besides its bias (dReLU) have defaults here for those without.
    """

    name = "bernoulli"
    enumerable = True
    initial_offset = 0.5  # the centring offset of Upadhya & Sastry (2017)
    #: The trained arrays of the layer besides its bias (training state).
    state_attributes = ()
    #: Every attribute a fit of these units sets on the estimator beyond the
    #: trainer's own (training state and published parameters).
    fitted_attributes = ()

    def bind(self, model):
        """The layer with the fitted parameters of ``model`` (itself when the
        units have none besides the bias)."""
        return self

    def start_training(self, model, dtype, init):
        """Set the arrays of :attr:`state_attributes`, fresh or from ``init``."""
        return None

    def publish(self, model):
        """Set the fitted attributes derived from :attr:`state_attributes`."""
        return None

    def training_units(self, model, bias, velocity):
        """The kernel units of a fit: the centred ``bias`` and its
        ``velocity``, with the layer's trained arrays."""
        return self.units_of(bias, velocity)

    def units_of(self, bias, velocity=None):
        from .bernoulli import BernoulliUnits

        velocity = np.empty(0, bias.dtype) if velocity is None else velocity
        return BernoulliUnits(bias, velocity)

    def mean(self, A):
        return expit(A, out=A)

    def cumulant(self, A):
        return np.logaddexp(0.0, np.asarray(A, np.float64))

    def cumulant_at_zero(self):
        return math.log(2.0)

    def variance(self, A):
        s = expit(np.asarray(A, np.float64))
        return s * (1.0 - s)


class GaussianHidden(BernoulliHidden):
    """Gaussian hidden units of unit precision: ``Gamma(a) = a^2 / 2 +
    log sqrt(2 pi)``."""

    name = "gaussian"
    enumerable = False
    initial_offset = 0.0  # the mean at zero input

    def units_of(self, bias, velocity=None):
        velocity = np.empty(0, bias.dtype) if velocity is None else velocity
        return GaussianHiddenUnits(bias, velocity, 1.0)

    def mean(self, A):
        return A

    def cumulant(self, A):
        A = np.asarray(A, np.float64)
        return 0.5 * A * A + 0.5 * math.log(2.0 * math.pi)

    def cumulant_at_zero(self):
        return 0.5 * math.log(2.0 * math.pi)

    def variance(self, A):
        return np.ones_like(np.asarray(A, np.float64))


class ReLUHidden(BernoulliHidden):
    """ReLU hidden units of unit curvature: ``U(h) = h^2 / 2`` on ``h >= 0``,
    threshold ``-c``."""

    name = "relu"
    enumerable = False
    initial_offset = _SQRT_2_PI  # the mean at zero input

    def units_of(self, bias, velocity=None):
        velocity = np.empty(0, bias.dtype) if velocity is None else velocity
        return ReLUUnits(bias, velocity, 1.0)

    def mean(self, A):
        A[...] = relu_mean_array(A)
        return A

    def cumulant(self, A):
        return relu_cumulant_array(A)

    def cumulant_at_zero(self):
        return float(relu_cumulant_array(0.0))

    def variance(self, A):
        x = -np.asarray(A, np.float64) / _SQRT_2
        ratio = _SQRT_2_PI / scipy_erfcx(x)
        return 1.0 + _SQRT_2 * x * ratio - ratio * ratio
