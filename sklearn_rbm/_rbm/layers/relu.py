"""ReLU and double-ReLU (dReLU) hidden units: their cumulants, moments and
conditional sampler (Tubiana, Cocco & Monasson 2019).

A hidden unit with potential ``U(h)`` and input ``I`` has the conditional
``p(h | I) ∝ exp(-U(h) + I h)``; its *cumulant* ``Gamma(I) = log ∫
exp(-U(h) + I h) dh`` is its term in the free energy (``F(v) = -b . s -
sum_j Gamma_j(I_j(v))``), and ``Gamma'`` and ``Gamma''`` are the conditional
mean and variance. Potentials:

* ReLU: ``U(h) = gamma h^2 / 2 + theta h`` for ``h >= 0`` (``+inf`` below);
* dReLU: ``U(h) = gamma_p h_+^2 / 2 + theta_p h_+ + gamma_m h_-^2 / 2 +
  theta_m h_-`` with ``h_+ = max(h, 0)``, ``h_- = min(h, 0)``.

Each half-line integral is ``∫_0^inf exp(-gamma u^2 / 2 - t u) du =
sqrt(pi / (2 gamma)) erfcx(t / sqrt(2 gamma))`` (``t = theta_p - I`` for the
positive side, ``t = I - theta_m`` for the negative one), so ``Gamma`` is a
log-sum of two ``log erfcx`` terms: the *erfcx route*, stable for inputs of
any size where ``exp`` and ``erfc`` separately overflow or underflow. The
conditional given the side is a Gaussian truncated to it, whose mean and
variance follow from the inverse Mills ratio ``sqrt(2 / pi) / erfcx(x)``.

Every function here is a scalar numba function usable from the layers'
kernels and from Python. The layer that makes these units a
``hidden_unit`` of the RBMs is not written yet: the trainer's hidden layer
is Bernoulli (see ``doc/categorical.rst``).
"""

import math

from ..._numerics.jit import jit
from ..._numerics.random import uniform

_LOG_SQRT_PI_2 = 0.5 * math.log(math.pi / 2.0)
_SQRT_2_PI = math.sqrt(2.0 / math.pi)
_SQRT_2 = math.sqrt(2.0)


@jit
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


@jit
def log_erfcx(x):
    """``log erfcx(x)`` for any finite ``x``: ``x^2 + log erfc(x)`` for
    negative ``x`` (``erfc`` is then in (1, 2))."""
    if x < 0.0:
        return x * x + math.log(math.erfc(x))
    return math.log(erfcx(x))


@jit
def _half_line(gamma, t):
    """``log ∫_0^inf exp(-gamma u^2 / 2 - t u) du`` and the argument ``x =
    t / sqrt(2 gamma)`` of its erfcx."""
    x = t / math.sqrt(2.0 * gamma)
    return _LOG_SQRT_PI_2 - 0.5 * math.log(gamma) + log_erfcx(x), x


@jit
def _truncated_moments(gamma, x, sign):
    """Mean and variance of the Gaussian of precision ``gamma`` truncated to
    one half-line (``sign`` +1: ``h >= 0``; -1: ``h <= 0``) whose half-line
    integral has erfcx argument ``x``."""
    sigma = 1.0 / math.sqrt(gamma)
    ratio = _SQRT_2_PI / erfcx(x)  # the inverse Mills ratio
    alpha = _SQRT_2 * x  # the standardised distance of the mode beyond 0
    mean = sign * sigma * (ratio - alpha)
    variance = sigma * sigma * (1.0 + alpha * ratio - ratio * ratio)
    return mean, variance


@jit
def relu_cumulant(I, gamma, theta):
    """``Gamma(I)`` of a ReLU unit."""
    return _half_line(gamma, theta - I)[0]


@jit
def relu_moments(I, gamma, theta):
    """``(mean, variance)`` of ``h | I`` for a ReLU unit."""
    x = _half_line(gamma, theta - I)[1]
    return _truncated_moments(gamma, x, 1.0)


@jit
def drelu_cumulant(I, gamma_p, gamma_m, theta_p, theta_m):
    """``Gamma(I)`` of a dReLU unit: the log-sum of its two half-lines."""
    log_p = _half_line(gamma_p, theta_p - I)[0]
    log_m = _half_line(gamma_m, I - theta_m)[0]
    top = max(log_p, log_m)
    return top + math.log(math.exp(log_p - top) + math.exp(log_m - top))


@jit
def drelu_moments(I, gamma_p, gamma_m, theta_p, theta_m):
    """``(mean, variance, p_plus)`` of ``h | I`` for a dReLU unit,
    ``p_plus`` the probability that ``h > 0``."""
    log_p, x_p = _half_line(gamma_p, theta_p - I)
    log_m, x_m = _half_line(gamma_m, I - theta_m)
    p_plus = 1.0 / (1.0 + math.exp(log_m - log_p))
    mean_p, var_p = _truncated_moments(gamma_p, x_p, 1.0)
    mean_m, var_m = _truncated_moments(gamma_m, x_m, -1.0)
    mean = p_plus * mean_p + (1.0 - p_plus) * mean_m
    second = p_plus * (var_p + mean_p**2) + (1.0 - p_plus) * (var_m + mean_m**2)
    return mean, second - mean * mean, p_plus


@jit
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


@jit
def relu_sample(I, gamma, theta, key, counter):
    """A draw of ``h | I`` for a ReLU unit (uniforms from positions
    ``1024 * counter`` onwards of the stream ``key``)."""
    sigma = 1.0 / math.sqrt(gamma)
    m = (I - theta) / gamma
    z = _standard_normal_tail(-m / sigma, key, 1024 * counter)
    return m + sigma * z


@jit
def drelu_sample(I, gamma_p, gamma_m, theta_p, theta_m, key, counter):
    """A draw of ``h | I`` for a dReLU unit: the side with probability
    ``p_plus``, then the Gaussian truncated to it."""
    log_p = _half_line(gamma_p, theta_p - I)[0]
    log_m = _half_line(gamma_m, I - theta_m)[0]
    p_plus = 1.0 / (1.0 + math.exp(log_m - log_p))
    base = 1024 * counter
    if uniform(key, base + 1023) < p_plus:
        sigma = 1.0 / math.sqrt(gamma_p)
        m = (I - theta_p) / gamma_p
        return m + sigma * _standard_normal_tail(-m / sigma, key, base)
    sigma = 1.0 / math.sqrt(gamma_m)
    m = (I - theta_m) / gamma_m
    return m - sigma * _standard_normal_tail(m / sigma, key, base)
