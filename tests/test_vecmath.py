"""The branch-free math of ``sklearn_rbm/_numerics/vecmath.py``: accuracy
against libm over the whole input range, the edge cases, and that the kernels
built on it really compile to SIMD code (the reason it exists)."""

import os
import subprocess
import sys
import textwrap

import numba
import numpy as np
import pytest
from scipy.special import expit

from sklearn_rbm._conditional import kernels as conditional
from sklearn_rbm._numerics import vecmath
from sklearn_rbm._numerics.random import uniform
from sklearn_rbm._rbm.layers import bernoulli as gibbs


def _apply(function, values):
    return np.array([function(value) for value in values])


def test_exp_and_log_are_accurate_to_about_one_rounding():
    rng = np.random.default_rng(0)
    x = -np.concatenate([rng.uniform(0, 700, 1000), rng.uniform(0, 1, 1000)])
    x[:3] = [0.0, -700.0, -1e-300]
    exp = _apply(vecmath.exp_nonpositive, x)
    np.testing.assert_allclose(exp, np.exp(x), rtol=4.5e-16, atol=0)
    y = np.exp(rng.uniform(-700, 1, 2000))
    y[:1000] = 1.0 + rng.uniform(-1e-6, 1e-6, 1000)
    y[:3] = [1.0, 2.2250738585072014e-308, 2.0]
    log = _apply(vecmath.log_positive, y)
    np.testing.assert_allclose(log, np.log(y), rtol=5e-16, atol=2.3e-16)


def test_sigmoid_and_softplus_match_scipy_and_numpy():
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [rng.normal(0, 3, 1000), rng.uniform(-745, 745, 1000), [0.0, -0.0, 1e-300]]
    )
    # atol: below -700 the sigmoid returns its documented floor, exp(-700).
    np.testing.assert_allclose(
        _apply(vecmath.sigmoid, x), expit(x), rtol=1e-15, atol=1e-304
    )
    np.testing.assert_allclose(
        _apply(vecmath.softplus, x), np.logaddexp(0.0, x), rtol=1e-15, atol=3e-16
    )


def test_near_series_match_libm_and_the_near_gap_has_no_cancellation():
    rng = np.random.default_rng(5)
    x = rng.uniform(-vecmath.NEAR_STEP, vecmath.NEAR_STEP, 2000)
    x[:4] = [0.0, 1e-300, vecmath.NEAR_STEP, -vecmath.NEAR_STEP]
    np.testing.assert_allclose(
        _apply(vecmath.expm1_near, x), np.expm1(x), rtol=4.5e-16, atol=0
    )
    y = rng.uniform(-0.07, 0.07, 2000)
    np.testing.assert_allclose(
        _apply(vecmath.log1p_near, y), np.log1p(y), rtol=4.5e-16, atol=0
    )
    # softplus(beta a) - softplus(beta' a) against 80-bit arithmetic, for
    # steps up to NEAR_STEP in both directions (reverse annealing: step < 0).
    a = np.concatenate([rng.normal(0, 5, 2000), rng.uniform(-400, 400, 500)])
    step = rng.uniform(-1, 1, a.size) * vecmath.NEAR_STEP / np.abs(a)
    beta = rng.uniform(0.3, 1, a.size)
    e = _apply(vecmath.exp_minus_abs, beta * a)
    near = [
        vecmath.softplus_gap_near(*args)
        for args in zip(a, e, 1.0 / (1.0 + e), step, strict=True)
    ]
    wide = np.longdouble
    exact = np.logaddexp(wide(0), wide(beta) * wide(a)) - np.logaddexp(
        wide(0), (wide(beta) - wide(step)) * wide(a)
    )
    # The gap is at most |step a|, so this is a few roundings absolute.
    assert np.max(np.abs(near - exact)) < 1e-16 * (1 + np.max(np.abs(step * a)))


def test_extreme_and_nan_arguments():
    # NaN must propagate (a diverging fit is detected from NaN parameters),
    # infinities give the limits (up to the documented 1e-304 floor).
    assert np.isnan(vecmath.sigmoid(np.nan))
    assert np.isnan(vecmath.softplus(np.nan))
    assert np.isnan(vecmath.exp_minus_abs(np.nan))
    assert vecmath.sigmoid(np.inf) == 1.0
    assert 0.0 < vecmath.sigmoid(-np.inf) < 1e-300
    assert vecmath.softplus(np.inf) == np.inf
    assert vecmath.softplus(-np.inf) == 0.0
    assert vecmath.softplus(800.0) == 800.0


@numba.njit(error_model="numpy")
def _native_sigmoids(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = vecmath.sigmoid_native(x[i])
    return out


def test_native_sigmoid_keeps_float32_and_is_accurate_to_two_float32_roundings():
    rng = np.random.default_rng(2)
    x = np.concatenate(
        [rng.normal(0, 3, 5000), rng.uniform(-86, 86, 5000), [0.0, -0.0, 1e-30, 87.0]]
    ).astype(np.float32)
    y = _native_sigmoids(x)
    assert y.dtype == np.float32
    exact = expit(x.astype(np.float64))
    eps = np.finfo(np.float32).eps
    np.testing.assert_allclose(y, exact, rtol=2 * eps, atol=0)
    # Edge cases as in float64, with the float32 floor exp(-87) below -87.
    edges = _native_sigmoids(np.array([np.nan, np.inf, -np.inf, -200.0], np.float32))
    assert np.isnan(edges[0]) and edges[1] == 1.0
    assert 0.0 < edges[2] == edges[3] < 2e-38
    # float64 arguments still get the float64 sigmoid.
    x64 = rng.normal(0, 3, 100)
    np.testing.assert_array_equal(_native_sigmoids(x64), _apply(vecmath.sigmoid, x64))


def test_element_wise_kernels_compile_to_vector_code():
    # Only uncached code can be inspected, so compile in a fresh process with
    # the cache off. A regression (a branch, a libm call, the Python error
    # model) would leave these loops scalar: several times slower.
    script = textwrap.dedent(
        """
        import re
        import numpy as np
        from sklearn_rbm._conditional import kernels as conditional
        from sklearn_rbm._partition import enumeration as partition
        from sklearn_rbm._rbm.layers import bernoulli as gibbs

        H, c = np.random.rand(4, 3), np.zeros(3)
        gibbs.add_bias_sigmoid_(H, c)
        gibbs.add_bias_sample_(H, c, np.random.default_rng(0))
        H32, c32 = H.astype(np.float32), c.astype(np.float32)
        gibbs.add_bias_sigmoid_(H32, c32)
        gibbs.add_bias_sample_(H32, c32, np.random.default_rng(0))
        gibbs.add_bias_sample_keyed_(H.copy(), c, np.uint64(1), 0.5)
        partition.log_partition_enumerate(np.zeros((2, 3)), c, np.zeros(2))
        log_w, key = np.zeros(4), np.uint64(1)
        gibbs.anneal_(log_w, H.copy(), np.zeros(4), c, 0.5, 0.25, key, True)
        betas = np.array([0.5, 0.75])
        gibbs._tempered_sample_keyed(H.copy(), c, c, betas, 1 - betas, 2, key)
        conditional._add_bias_sample_rows_(H.copy(), H.copy(), key)
        for kernel in (
            gibbs.add_bias_sigmoid_,
            gibbs.add_bias_sample_keyed_,
            partition._enumerate_block,
            gibbs.anneal_,
            gibbs._tempered_sample_keyed,
            conditional._add_bias_sample_rows_,
        ):
            for signature, ir in kernel.inspect_llvm().items():
                # float32 loops must stay in float32 lanes (sigmoid_native).
                lanes = "float" if "float32" in str(signature) else "double"
                found = re.search(rf"<(2|4|8|16) x {lanes}>", ir)
                print(kernel.__name__, bool(found))
        """
    )
    env = dict(os.environ, SKLEARN_RBM_NUMBA_CACHE="0")
    result = subprocess.run(
        [sys.executable, "-c", script], env=env, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.split("\n")
    assert [line.split()[1] for line in lines if line] == ["True"] * 9, result.stdout


# ------------------------------------------------------------ Bernoulli draws
@numba.njit(error_model="numpy")
def _sure_and_exact(u, x):
    sure, exact = np.empty_like(u), np.empty_like(u)
    for i in range(u.size):
        sure[i] = vecmath.sure_draw(u[i], x[i])
        exact[i] = 1.0 if u[i] < vecmath.sigmoid(x[i]) else 0.0
    return sure, exact


def test_sure_draw_decides_as_the_exact_sigmoid_even_for_adversarial_uniforms():
    # Every decision must be the exact comparison's; the uniforms sit where
    # a decision is hardest: at the probability itself, one float either
    # side, within a few margins of it, and at the ends of [0, 1).
    x = np.concatenate(
        [np.linspace(-750, 750, 300_001), [np.inf, -np.inf, np.nan, 0.0, -0.0]]
    )
    x = np.concatenate([x, np.random.default_rng(3).normal(0, 3, 20_000)])
    s, m = _native_sigmoids(x), vecmath.DRAW_MARGIN
    uniforms = [s, np.nextafter(s, 0), np.nextafter(s, 1), np.zeros_like(s),
                np.full_like(s, 1 - 2**-53), s * (1 - 1.5 * m), s * (1 + 1.5 * m),
                s * (1 - 0.5 * m), s * (1 + 0.5 * m)]  # fmt: skip
    for u in uniforms:
        u = np.clip(np.nan_to_num(u), 0.0, 1 - 2**-53)
        sure, exact = _sure_and_exact(u, x)
        decided = sure >= 0
        np.testing.assert_array_equal(sure[decided], exact[decided])
        assert not decided[np.isnan(x)].any()
    # Not vacuous: 1.5 margins below the probability it always decides, and
    # at random uniforms it leaves about one draw in 10 ** 4 open.
    assert np.all(_sure_and_exact(s * (1 - 1.5 * m), x)[0][~np.isnan(x)] == 1)
    u = np.random.default_rng(4).random(x.size)
    assert np.mean(_sure_and_exact(u, x)[0] < 0) < 1e-3


@numba.njit(error_model="numpy")
def _reference_draws(pre, bias, key, scale, betas, rests, base, n_chains):
    # The kernels' loops before the sure draws, one entry at a time: the
    # plain, the scaled, the tempered (betas) and the row-biased (2-D bias).
    n_rows, n_cols = pre.shape
    for r in range(n_rows):
        for j in range(n_cols):
            u = uniform(key, r * n_cols + j)
            if betas is not None:
                beta, rest = betas[r // n_chains], rests[r // n_chains]
                x = beta * (pre[r, j] + bias[j]) + rest * base[j]
            elif bias.ndim == 2:
                x = pre[r, j] + bias[r, j]
            else:
                if scale is not None:
                    pre[r, j] *= scale
                x = pre[r, j] + bias[j]
            pre[r, j] = 1.0 if u < vecmath.sigmoid_native(x) else 0.0


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("kind", ["plain", "scaled", "tempered", "row biased"])
def test_bernoulli_draw_kernels_match_the_exact_loop_bit_for_bit(dtype, kind):
    rng = np.random.default_rng(6)
    pre = (3 * rng.standard_normal((400, 784))).astype(dtype)
    pre[0, :6] = [np.inf, -np.inf, np.nan, 800.0, -800.0, 0.0]
    bias = (rng.standard_normal(784) - 1).astype(dtype)
    key, n_chains = np.uint64(11), 100
    betas = rng.uniform(0, 1, 4).astype(dtype)
    base = rng.standard_normal(784).astype(dtype)
    rests = np.ones_like(betas) - betas
    expected, got = pre.copy(), pre.copy()
    if kind in ("plain", "scaled"):
        scale = 0.37 if kind == "scaled" else None
        _reference_draws(expected, bias, key, scale, None, None, None, 1)
        gibbs.add_bias_sample_keyed_(got, bias, key, scale)
    elif kind == "tempered":
        _reference_draws(expected, bias, key, None, betas, rests, base, n_chains)
        gibbs._tempered_sample_keyed(got, bias, base, betas, rests, n_chains, key)
    else:
        # The conditional RBM's chains, in float64 whatever the dtype.
        biases = rng.standard_normal(pre.shape)
        expected, got = expected.astype(np.float64), got.astype(np.float64)
        _reference_draws(expected, biases, key, None, None, None, None, 1)
        conditional._add_bias_sample_rows_(got, biases, key)
    np.testing.assert_array_equal(got, expected)
    assert 0.2 < np.mean(got) < 0.8
    if kind == "plain" and dtype == np.float64:
        # Some draws were left to the exact sigmoid (its pass ran).
        x = (pre + bias).ravel()
        assert np.sum(_sure_and_exact(_uniforms(key, x.size), x)[0] < 0) > 5


@numba.njit
def _uniforms(key, n):
    return np.array([uniform(key, i) for i in range(n)])
