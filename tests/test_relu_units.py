"""ReLU and dReLU hidden units (``_rbm/layers/relu.py``): cumulant, mean and
variance against numerical integration of ``exp(-U(h) + a_in h)``, and the
sampler's moments against them."""

import math

import numpy as np
import pytest
from numba import njit
from scipy.integrate import quad
from scipy.special import erfcx as scipy_erfcx

from sklearn_rbm._numerics.random import new_key
from sklearn_rbm._rbm.layers.relu import (
    _erfcx_pair,
    drelu_cumulant,
    drelu_moments,
    drelu_sample,
    erfcx,
    log_erfcx,
    relu_cumulant,
    relu_moments,
    relu_sample,
)


def _integrals(potential, a_in, lower, upper):
    """``log Z``, mean and variance of ``exp(-U(h) + a_in h)`` on ``[lower,
    upper]`` by quadrature, scaled by the density at its mode, in pieces
    split at 0 (the kink of dReLU) and at the modes."""
    grid = np.linspace(lower, upper, 20001)
    log_density = np.array([-potential(h) + a_in * h for h in grid])
    shift = log_density.max()

    def density(h):
        return math.exp(-potential(h) + a_in * h - shift)

    cuts = sorted({lower, upper, *(p for p in (0.0, grid[np.argmax(log_density)])
                                   if lower < p < upper)})  # fmt: skip

    def integral(f):
        return sum(
            quad(f, a, b, limit=200, epsabs=0, epsrel=1e-13)[0]
            for a, b in zip(cuts[:-1], cuts[1:], strict=True)
        )

    z = integral(density)
    m1 = integral(lambda h: h * density(h)) / z
    m2 = integral(lambda h: (h - m1) ** 2 * density(h)) / z
    return math.log(z) + shift, m1, m2


def test_erfcx_matches_scipy():
    for x in (-20.0, -3.0, -0.5, 0.0, 0.7, 5.0, 24.9, 25.1, 100.0, 1e4):
        assert erfcx(x) == pytest.approx(scipy_erfcx(x), rel=1e-13)
        assert log_erfcx(x) == pytest.approx(math.log(scipy_erfcx(x)), rel=1e-13,
                                             abs=1e-13)  # fmt: skip
    assert log_erfcx(-100.0) == pytest.approx(1e4 + math.log(2.0), rel=1e-15)


def test_erfcx_pair_is_erfcx_and_log_erfcx_bit_for_bit():
    # The moments take both from one erfc; the cumulants and the moments
    # must not drift apart (fits are compared bit for bit across refactors).
    for x in (-30.0, -26.7, -20.0, -3.0, -1e-300, 0.0, 0.7, 25.9, 26.0, 100.0,
              np.inf, -np.inf):  # fmt: skip
        value, log_value = _erfcx_pair(x)
        assert (value, log_value) == (erfcx(x), log_erfcx(x))


@pytest.mark.parametrize("a_in", [-6.0, -1.5, 0.0, 0.8, 4.0])
@pytest.mark.parametrize("gamma, theta", [(1.0, 0.0), (2.5, -0.7), (0.4, 1.3)])
def test_relu_against_quadrature(a_in, gamma, theta):
    def potential(h):
        return gamma * h * h / 2 + theta * h

    sigma = 1 / math.sqrt(gamma)
    upper = max(0.0, (a_in - theta) / gamma) + 40 * sigma
    log_z, mean, variance = _integrals(potential, a_in, 0.0, upper)
    assert relu_cumulant(a_in, gamma, theta) == pytest.approx(log_z, abs=1e-10)
    m, v = relu_moments(a_in, gamma, theta)
    assert m == pytest.approx(mean, rel=1e-8, abs=1e-10)
    assert v == pytest.approx(variance, rel=1e-7, abs=1e-10)


@pytest.mark.parametrize("a_in", [-5.0, -1.0, 0.0, 0.6, 3.5])
@pytest.mark.parametrize(
    "gamma_p, gamma_m, theta_p, theta_m",
    [(1.0, 1.0, 0.0, 0.0), (2.0, 0.5, 1.0, -1.5), (0.7, 3.0, -0.5, 0.8)],
)
def test_drelu_against_quadrature(a_in, gamma_p, gamma_m, theta_p, theta_m):
    def potential(h):
        if h >= 0:
            return gamma_p * h * h / 2 + theta_p * h
        return gamma_m * h * h / 2 + theta_m * h

    width = 40 / math.sqrt(min(gamma_p, gamma_m))
    log_z, mean, variance = _integrals(potential, a_in, -width - abs(a_in) / gamma_m,
                                       width + abs(a_in) / gamma_p)  # fmt: skip
    args = (gamma_p, gamma_m, theta_p, theta_m)
    assert drelu_cumulant(a_in, *args) == pytest.approx(log_z, abs=1e-10)
    m, v, _ = drelu_moments(a_in, *args)
    assert m == pytest.approx(mean, rel=1e-8, abs=1e-10)
    assert v == pytest.approx(variance, rel=1e-7, abs=1e-10)


def test_cumulants_are_finite_far_out():
    """The erfcx route: inputs where exp and erfc alone overflow/underflow."""
    for a_in in (-1e3, -50.0, 50.0, 1e3):
        r = relu_cumulant(a_in, 1.0, 0.0)
        d = drelu_cumulant(a_in, 1.0, 2.0, 0.5, -0.5)
        assert math.isfinite(r) and math.isfinite(d)
    # Large positive input: the cumulant of the Gaussian a_in^2 / 2 + log sqrt(2 pi).
    assert relu_cumulant(50.0, 1.0, 0.0) == pytest.approx(
        1250 + 0.5 * math.log(2 * math.pi), rel=1e-14
    )


@njit
def _draws(kind, a_in, n, seed_rng):
    key = new_key(seed_rng)
    out = np.empty(n)
    for k in range(n):
        if kind == 0:
            out[k] = relu_sample(a_in, 1.5, 0.3, key, k)
        else:
            out[k] = drelu_sample(a_in, 1.5, 0.6, 0.3, -0.8, key, k)
    return out


@pytest.mark.parametrize("kind", [0, 1])
@pytest.mark.parametrize("a_in", [-4.0, 0.0, 2.5])
def test_sampler_moments(kind, a_in):
    n = 40000
    draws = _draws(kind, a_in, n, np.random.default_rng(0))
    if kind == 0:
        mean, variance = relu_moments(a_in, 1.5, 0.3)
        assert draws.min() >= 0.0
    else:
        mean, variance, _ = drelu_moments(a_in, 1.5, 0.6, 0.3, -0.8)
    assert abs(draws.mean() - mean) < 4 * math.sqrt(variance / n)
    assert abs(draws.var() - variance) < 0.05 * variance
