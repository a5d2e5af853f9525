"""Parallel tempering: the swap rule against brute force, the chain's
stationary distribution against enumeration, PT with one rung as PCD, the
'pt' solvers against PCD on the small data sets, sampling, the swap history
and its gap warning, reproducibility and bad input."""

import itertools
import warnings

import numpy as np
import pytest
from scipy.special import logsumexp
from scipy.stats import binom

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._core.utils import one_blas_thread
from sklearn_rbm._numerics.jit import jit
from sklearn_rbm._rbm.kernels import (
    draw_tempered_hidden,
    minibatch_update_,
    pt_sample,
    swap_log_ratio,
    swap_replicas_,
)
from sklearn_rbm._rbm.layers.base import context, tempered_mean_
from sklearn_rbm._rbm.layers.bernoulli import sample_bernoulli, units_of
from sklearn_rbm._rbm.layers.relu import DReLUUnits, drelu_moments
from sklearn_rbm._rbm.tempering import SwapMonitor, temperature_ladder
from sklearn_rbm.datasets import make_bars_and_stripes, make_shifting_bar


# ------------------------------------------------------------ ground truth
def all_states(n_units):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n_units)))


def tempered_log_marginal(V, W, b, c, base, beta):
    """``log sum_h exp(beta (h^T W v + b^T v + c^T h) + (1 - beta) base^T v)``
    for each row of ``V``, by summing over every hidden state."""
    H = all_states(W.shape[0])
    log_joint = beta * (H @ W @ V.T + (V @ b)[None, :] + (H @ c)[:, None])
    return logsumexp(log_joint, axis=0) + (1.0 - beta) * (V @ base)


def tiny_rbm(seed=0, n_hidden=3, n_visible=6, scale=2.0):
    rng = np.random.default_rng(seed)
    W = scale * rng.standard_normal((n_hidden, n_visible))
    return W, rng.standard_normal(n_visible) - 0.5, rng.standard_normal(n_hidden)


def state_index(V):
    return (V @ (2 ** np.arange(V.shape[1] - 1, -1, -1))).astype(int)


def assert_draws_follow(p, V):
    """The rows of ``V`` are independent draws of the distribution ``p`` over
    all binary states: each state's count is binomial, so its frequency may
    miss ``p`` by at most 4.5 standard errors (an exact sampler fails this
    for one of 512 states with probability about 0.3 %), and the total
    variation distance may exceed its expectation under exact sampling
    (computed from the binomial distributions) by at most 40 % (its relative
    spread over 64 states or more is below 10 %)."""
    n = V.shape[0]
    q = np.bincount(state_index(V), minlength=p.size) / n
    assert np.all(np.abs(q - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-12)
    counts = np.arange(n + 1)
    expected = 0.5 * sum(
        binom.pmf(counts, n, p_state) @ np.abs(counts / n - p_state) for p_state in p
    )
    assert 0.5 * np.abs(q - p).sum() < 1.4 * expected


# ------------------------------------------------------------- the swap rule
@pytest.mark.parametrize("base_scale", [0.0, 1.0])
def test_swap_log_ratio_is_the_metropolis_ratio_of_the_tempered_marginals(
    base_scale,
):
    """Hand-built states: the kernel's log ratio is
    log p_t(v') p_t+1(v) / p_t(v) p_t+1(v'), with the tempered marginals
    computed by summing over h; the 'free energy in place of E' shortcut
    (beta_t - beta_t+1)(F(v) - F(v')) with the model's F is a different number."""
    W, b, c = tiny_rbm(1)
    base = base_scale * np.random.default_rng(2).standard_normal(W.shape[1])
    v = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    v_next = np.array([0.0, 1.0, 1.0, 0.0, 0.0, 1.0])
    beta, beta_next = 0.8, 0.3
    ratio = swap_log_ratio(
        units_of(c), v, W @ v, v_next, W @ v_next, b - base, c, beta, beta_next,
        np.empty((2, 3)),
    )  # fmt: skip
    pair = np.vstack([v, v_next])
    log_p = tempered_log_marginal(pair, W, b, c, base, beta)
    log_p_next = tempered_log_marginal(pair, W, b, c, base, beta_next)
    expected = log_p[1] + log_p_next[0] - log_p[0] - log_p_next[1]
    assert ratio == pytest.approx(expected, abs=1e-12)

    free_energy = -pair @ b - np.logaddexp(0.0, pair @ W.T + c).sum(axis=1)
    shortcut = (beta - beta_next) * (free_energy[0] - free_energy[1])
    assert abs(shortcut - expected) > 0.1


def test_swap_round_accepts_at_the_metropolis_rate_and_moves_whole_states():
    """Three temperatures, every chain holding the same hand-built states: the
    even pair (0, 1) swaps with probability min(1, ratio), then the odd pair
    (1, 2) is proposed with whatever pair (0, 1) left in replica 1."""
    W, b, c = tiny_rbm(3)
    base = np.zeros(W.shape[1])
    states = np.array(
        [[1.0, 1.0, 0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0, 1.0, 1.0], [1.0] * 6]
    )
    betas = np.array([1.0, 0.6, 0.25])
    n_chains = 40_000
    V = np.repeat(states, n_chains, axis=0)
    A = V @ W.T
    accepted = np.zeros(2, dtype=np.int64)
    swap_replicas_(
        units_of(c), V, A, V, b, c, betas, n_chains, np.random.default_rng(0),
        accepted, False,
    )  # fmt: skip

    def acceptance(x, beta_x, y, beta_y):
        log_p = tempered_log_marginal(np.vstack([x, y]), W, b, c, base, beta_x)
        log_q = tempered_log_marginal(np.vstack([x, y]), W, b, c, base, beta_y)
        return min(1.0, np.exp(log_p[1] + log_q[0] - log_p[0] - log_q[1]))

    p01 = acceptance(states[0], betas[0], states[1], betas[1])
    # Replica 1 then holds states[0] where (0, 1) swapped, states[1] elsewhere.
    p12 = p01 * acceptance(states[0], betas[1], states[2], betas[2]) + (
        1 - p01
    ) * acceptance(states[1], betas[1], states[2], betas[2])
    assert 0.05 < p01 < 0.95 and 0.05 < p12 < 0.95  # both outcomes are tested
    for rate, p in zip(accepted / n_chains, (p01, p12), strict=True):
        assert abs(rate - p) < 4.5 * np.sqrt(p * (1 - p) / n_chains)
    # Rows move as whole states, with their pre-activations.
    assert {tuple(row) for row in V} <= {tuple(s) for s in states}
    np.testing.assert_allclose(A, V @ W.T, atol=1e-12)
    counts = [np.unique(V[t * n_chains : (t + 1) * n_chains], axis=0) for t in range(3)]
    assert all(len(replica) >= 2 for replica in counts)


# ------------------------------------------------- the stationary distribution
@pytest.mark.parametrize("base_scale", [0.0, 1.0])
def test_tempering_chains_sample_every_tempered_distribution_exactly(base_scale):
    """The final states of 4,000 independent tempering systems after 100
    rounds, against the exact tempered marginals of a 6 x 3 RBM with strong
    couplings, at every rung of the ladder."""
    W, b, c = tiny_rbm(0)
    base = base_scale * np.random.default_rng(5).standard_normal(W.shape[1])
    betas = np.geomspace(1.0, 0.2, 4)
    n_chains = 4000
    start = (np.random.default_rng(1).random((4 * n_chains, 6)) < 0.5).astype(float)
    accepted = np.zeros(3, dtype=np.int64)
    with one_blas_thread():
        V = pt_sample(
            units_of(b), None, units_of(c), base, start, W, c, betas, 100,
            np.random.default_rng(2), accepted,
        )  # fmt: skip
    assert np.all(accepted > 0.3 * 100 * n_chains)  # swaps happen: they are tested
    everything = all_states(6)
    for t, beta in enumerate(betas):
        log_p = tempered_log_marginal(everything, W, b, c, base, beta)
        assert_draws_follow(
            np.exp(log_p - logsumexp(log_p)), V[t * n_chains : (t + 1) * n_chains]
        )


# ------------------------------------------------------- PT with one rung is PCD
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("centred", [False, True])
def test_one_temperature_is_pcd_bit_for_bit(dtype, centred):
    """A ladder of the single inverse temperature 1 has no pairs to swap: the
    tempered update is the persistent update without a tempering system (PCD,
    or PCD with moving centring offsets), bit for bit, over several
    mini-batches."""
    rng = np.random.default_rng(0)
    n_hidden, n_visible, n_chains = 5, 12, 8
    W0 = (0.5 * rng.standard_normal((n_hidden, n_visible))).astype(dtype)
    b0, c0 = (rng.standard_normal(k).astype(dtype) for k in (n_visible, n_hidden))
    X = (rng.random((40, n_visible)) < 0.4).astype(dtype)
    mu0 = X.mean(axis=0) if centred else np.zeros(n_visible)
    lam0 = np.full(n_hidden, 0.5 if centred else 0.0)
    nu = 0.01 if centred else 0.0

    def train(tempered):
        W, b, c = W0.copy(), b0.copy(), c0.copy()
        mu, lam = mu0.astype(dtype), lam0.astype(dtype)
        visible = units_of(b)._replace(velocity=np.zeros_like(b))
        hidden = units_of(c)._replace(velocity=np.zeros_like(c))
        chains = np.zeros((n_chains, n_hidden), dtype=dtype)
        rng = np.random.default_rng(5)
        ladder = np.ones(1) if tempered else np.empty(0)  # empty: plain PCD
        tempering = (ladder, np.zeros(n_visible, dtype))
        for start in range(0, 40, n_chains):
            V = X[start : start + n_chains]
            minibatch_update_(
                V, W, visible, hidden, (mu, lam, nu, nu),
                (chains, True, np.zeros(0, dtype=np.int64)), tempering, (1, 3),
                (0.1, 0.5, 0.01), (np.zeros_like(W), np.empty_like(W)), rng,
                np.empty(0),
            )  # fmt: skip
        return W, visible.bias, hidden.bias, mu, lam, chains

    for ours, pcd in zip(train(True), train(False), strict=True):
        assert ours.dtype == dtype
        np.testing.assert_array_equal(ours, pcd)


# ----------------------------------------- the small data sets against PCD-12
def mean_exact_log_likelihood(X, solver, n_epochs, seeds, **params):
    scores = []
    for seed in seeds:
        rbm = DCPBernoulliRBM(
            n_components=4, solver=solver, learning_rate=0.3,
            batch_size=X.shape[0], n_iter=n_epochs, random_state=seed, **params,
        ).fit(X)  # fmt: skip
        scores.append(rbm.score(X))
    return np.mean(scores)


@pytest.mark.parametrize(
    "make, n_epochs, margin",
    [(make_shifting_bar, 1000, -0.005), (make_bars_and_stripes, 2000, 0.05)],
)
def test_pt_at_pcd12_cost_reaches_at_least_pcd(make, n_epochs, margin):
    """4 temperatures x 3 sweeps cost what PCD-12 costs; over 5 random states
    PT ends at least as high (smoke size; the full comparison is the gallery
    example). On shifting bar both stay at the base-rate model's -3.14, a
    saddle point of the likelihood (Upadhya & Sastry 2017); on bars & stripes
    PT is ahead once the model sharpens (measured: -3.95 against -4.03 after
    2,000 epochs, -3.77 against -4.12 after 5,000)."""
    X, seeds = make(), range(5)
    pcd = mean_exact_log_likelihood(X, "pcd", n_epochs, seeds, n_gibbs_steps=12)
    pt = mean_exact_log_likelihood(
        X, "pt", n_epochs, seeds, n_gibbs_steps=3, n_temperatures=4
    )
    assert pt >= pcd + margin


# ---------------------------------------------------- the estimator surface
def test_history_records_the_swap_acceptance_of_every_pair():
    X = make_bars_and_stripes(60, random_state=0)
    rbm = DCPBernoulliRBM(
        n_components=4, solver="pt", n_temperatures=5, n_gibbs_steps=2,
        batch_size=20, n_iter=3, learning_rate=0.1, random_state=0,
    ).fit(X)  # fmt: skip
    np.testing.assert_allclose(rbm.betas_, [1.0, 0.875, 0.75, 0.625, 0.5])
    keys = [f"swap_acceptance_{t}" for t in range(4)]
    assert all(rbm.history_[key].shape == (3,) for key in keys)
    rates = np.array([rbm.history_[key] for key in keys])
    assert np.all((rates > 0.0) & (rates <= 1.0))
    # 3 mini-batches x 20 chains per epoch: rates are multiples of 1/60.
    np.testing.assert_allclose(rates * 60, np.round(rates * 60), atol=1e-9)


def test_a_gap_in_the_ladder_warns():
    """Two sharp modes (all pixels on, all off) and a ladder jumping from 1 to
    0.02: once the modes are sharp (about epoch 30), states from near the base
    rate are almost never accepted at beta = 1."""
    X = np.vstack([np.ones((20, 40)), np.zeros((20, 40))])
    rbm = DCPBernoulliRBM(
        n_components=8, solver="pt", beta_ladder=[1.0, 0.02], n_gibbs_steps=1,
        batch_size=20, n_iter=50, learning_rate=0.5, random_state=0,
    )  # fmt: skip
    with pytest.warns(UserWarning, match="1 <-> 0.02: 0.0% of 200 proposals.*gap"):
        rbm.fit(X)
    assert rbm.history_["swap_acceptance_0"][0] > 0.5
    assert np.all(rbm.history_["swap_acceptance_0"][-8:] == 0.0)


def test_swap_monitor_waits_for_enough_proposals_and_warns_once():
    monitor = SwapMonitor(np.array([1.0, 0.5, 0.25]), n_chains=10)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(19):  # 190 proposals per pair: not yet judged
            monitor.start_epoch()
            monitor.rounds, monitor.accepted[:] = 1, (5, 0)
            monitor.warn_about_gaps("in a test")
    monitor.start_epoch()
    monitor.rounds, monitor.accepted[:] = 1, (5, 0)
    with pytest.warns(UserWarning, match=r"0\.5 <-> 0\.25: 0\.0% of 200 proposals"):
        monitor.warn_about_gaps("in a test")
    assert monitor.figures() == {"swap_acceptance_0": 0.5, "swap_acceptance_1": 0.0}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        monitor.warn_about_gaps("again")


def test_sample_by_parallel_tempering_draws_the_model_distribution():
    """sample(method='pt') of a fitted 9 x 4 RBM against its exact distribution."""
    X = make_bars_and_stripes()
    rbm = DCPBernoulliRBM(
        n_components=4, solver="cpt", n_temperatures=3, n_gibbs_steps=2,
        learning_rate=0.3, batch_size=14, n_iter=300, random_state=0,
    ).fit(X)  # fmt: skip
    samples = rbm.sample(3000, n_steps=50, method="pt", random_state=0)
    assert samples.shape == (3000, 9) and samples.dtype == np.float64
    assert_draws_follow(np.exp(rbm.score_samples(all_states(9))), samples)
    again = rbm.sample(3000, n_steps=50, method="pt", random_state=0)
    np.testing.assert_array_equal(samples, again)
    # A model fitted by another solver samples on the default ladder.
    pcd = DCPBernoulliRBM(n_components=4, solver="pcd", n_iter=2).fit(X)
    assert pcd.sample(7, n_steps=5, method="pt").shape == (7, 9)
    with pytest.raises(ValueError, match="method must be 'gibbs'.*or 'pt'.*'mcmc'"):
        rbm.sample(3, method="mcmc")


def test_float32_sparse_and_partial_fit():
    import scipy.sparse as sp

    X = make_bars_and_stripes(40, random_state=2)
    params = dict(
        n_components=4, solver="pt", n_temperatures=3, batch_size=10, random_state=3
    )
    fitted = DCPBernoulliRBM(n_iter=3, **params).fit(X)
    stepped = DCPBernoulliRBM(**params)
    for _ in range(3):
        stepped.partial_fit(X)
    np.testing.assert_array_equal(fitted.components_, stepped.components_)
    np.testing.assert_array_equal(
        fitted.history_["swap_acceptance_1"], stepped.history_["swap_acceptance_1"]
    )
    sparse = DCPBernoulliRBM(n_iter=3, **params).fit(sp.csr_matrix(X))
    np.testing.assert_array_equal(fitted.components_, sparse.components_)
    single = DCPBernoulliRBM(n_iter=3, **params).fit(X.astype(np.float32))
    assert single.components_.dtype == np.float32
    assert single.sample(4, n_steps=3, method="pt").dtype == np.float32
    np.testing.assert_allclose(single.components_, fitted.components_, atol=0.05)


# ------------------------------------------------------------------ bad input
def test_tempering_settings_warn_for_other_solvers():
    X = make_shifting_bar()
    with pytest.warns(UserWarning, match="solver='pcd' does not use n_temperatures"):
        DCPBernoulliRBM(n_components=2, solver="pcd", n_temperatures=3, n_iter=1).fit(X)
    with pytest.warns(UserWarning, match="min_beta, beta_ladder; they are ignored"):
        DCPBernoulliRBM(
            n_components=2, solver="csdcp", min_beta=0.2, beta_ladder="linear", n_iter=1
        ).fit(X)


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_temperatures": 1}, r"'n_temperatures' parameter .* range \[2, inf\)"),
        ({"min_beta": 0.0}, r"'min_beta' parameter .* range \(0.0, 1.0\)"),
        ({"min_beta": 1.0}, r"'min_beta' parameter .* range \(0.0, 1.0\)"),
        ({"beta_ladder": "cubic"}, r"'beta_ladder' parameter .*'geometric'"),
        ({"beta_ladder": [0.9, 0.5]}, r"must start at 1 .* got \[0\.9 0\.5\]"),
        ({"beta_ladder": [1.0, 0.5, 0.7]}, "must decrease strictly from 1"),
        ({"beta_ladder": [1.0, 0.5, 0.0]}, r"inverse temperatures in \(0, 1\]"),
        ({"beta_ladder": [1.0, 0.5, -0.2]}, r"inverse temperatures in \(0, 1\]"),
        ({"beta_ladder": [1.0]}, "at least two inverse temperatures"),
        (
            {"beta_ladder": [1.0, 0.5], "n_temperatures": 3},
            "leave n_temperatures and min_beta at None .*n_temperatures=3",
        ),
    ],
)
def test_bad_ladders_are_refused_with_the_fix(params, message):
    X = make_shifting_bar()
    with pytest.raises(ValueError, match=message):
        DCPBernoulliRBM(n_components=2, solver="pt", n_iter=1, **params).fit(X)


def test_ladders():
    np.testing.assert_allclose(temperature_ladder(3, 0.2), [1.0, 0.6, 0.2])
    np.testing.assert_allclose(temperature_ladder(3, 0.25, "geometric"), [1, 0.5, 0.25])
    np.testing.assert_array_equal(temperature_ladder(ladder=[1, 0.3]), [1.0, 0.3])


@jit
def _tempered_means(units, A, W, c, betas, n_chains):
    ctx = context(units, W)
    return tempered_mean_(units, ctx, A, c, betas.astype(W.dtype), n_chains)


@jit
def _draw_from_inputs(units, A, W, c, betas, n_chains, rng):
    ctx = context(units, W)
    return draw_tempered_hidden(units, ctx, A, W, c, betas, n_chains, rng)


def test_bernoulli_chains_continue_from_the_inputs_as_from_the_means():
    """The chains draw their next hidden state from the hidden inputs
    (draw_tempered_hidden), no longer from the tempered means: for Bernoulli
    units the same draws, bit for bit, as the means gave."""
    rng = np.random.default_rng(0)
    n_chains, betas = 40, np.array([1.0, 0.6, 0.3])
    A = rng.normal(0.0, 2.0, (3 * n_chains, 5))
    W, c = np.zeros((5, 7)), rng.normal(size=5)
    units = units_of(c)
    means = _tempered_means(units, A.copy(), W, c, betas, n_chains)
    from_means = sample_bernoulli(means, np.random.default_rng(5))
    from_inputs = _draw_from_inputs(
        units, A.copy(), W, c, betas, n_chains, np.random.default_rng(5)
    )
    assert np.array_equal(from_inputs, from_means)


def test_drelu_chains_draw_each_replica_at_its_temperature():
    """dReLU units: 20,000 draws per replica at one input follow the
    conditional at ``beta (a + c)`` (its mean, within 4.5 standard errors)."""
    n_chains, betas = 20000, np.array([1.0, 0.5, 0.2])
    a, c = np.array([1.5, -2.0, 0.3]), np.array([0.5, 0.1, -0.2])
    potential = np.array([[1.5] * 3, [0.7] * 3, [0.3] * 3, [-0.4] * 3])
    units = DReLUUnits(c, np.zeros(3), potential, np.zeros_like(potential), 0.1)
    A = np.tile(a, (3 * n_chains, 1))
    draws = _draw_from_inputs(
        units, A, np.zeros((3, 4)), c, betas, n_chains, np.random.default_rng(1)
    )
    for t, beta in enumerate(betas):
        rows = draws[t * n_chains : (t + 1) * n_chains]
        for j in range(3):
            mean, variance, _ = drelu_moments(beta * (a[j] + c[j]), *potential[:, j])
            error = np.sqrt(variance / n_chains)
            assert abs(rows[:, j].mean() - mean) < 4.5 * error
