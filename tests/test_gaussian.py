"""GaussianBernoulliRBM: the log-density against brute force and numerical
integration, the updates against finite differences, AIS against exact, the
sampler against exact moments, the scikit-learn surface and bad input."""

import copy
import itertools
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.special import expit, logsumexp
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from sklearn_rbm import GaussianBernoulliRBM
from sklearn_rbm._core.divergence import N_CHECKED_ROWS
from sklearn_rbm._core.sklearn_compat import InvalidParameterError
from sklearn_rbm._numerics.jit import vector_jit
from sklearn_rbm._numerics.normal import cos_two_pi, standard_normal
from sklearn_rbm._rbm.kernels import minibatch_update_, swap_replicas_, tempering_round
from sklearn_rbm._rbm.layers.bernoulli import BernoulliUnits, sample_bernoulli, units_of
from sklearn_rbm._rbm.layers.gaussian import (
    GaussianTraining,
    GaussianUnits,
    _offset_corrections,
    _path_quadratic,
    _quadratic_sums,
    _scaled_weight_step_,
    log_density_ceiling,
)
from sklearn_rbm.likelihood import (
    gaussian_free_energy,
    gaussian_log_likelihood_bounds,
    gaussian_log_likelihood_raise,
    gaussian_log_partition_ais,
    gaussian_log_partition_exact,
)


def gaussian_update(
    V, W, b, c, z, mu, lam, nu_mu, nu_lam, chain_h, persistent, n_inner, n_gibbs,
    rate, z_rate, z_floor, momentum, decay, vel_W, vel_b, vel_c, vel_z,
    data_term, model_term, tempering, accepted, rng,
):  # fmt: skip
    """The trainer's update with Gaussian visible units, from plain arrays
    (``tempering``: ``None`` or ``(betas, base_mean, base_precision)``)."""
    visible = GaussianTraining(
        b, vel_b, z, vel_z, z_rate, z_floor, model_term, np.zeros(W.shape[1])
    )
    if tempering is None:  # an empty ladder: plain chains
        n = W.shape[1]
        tempering = (np.empty(0), np.zeros(n), np.ones(n))
    ladder = (tempering[0], tuple(tempering[1:]))
    minibatch_update_(
        V, W, visible, BernoulliUnits(c, vel_c), (mu, lam, nu_mu, nu_lam),
        (chain_h, persistent, accepted), ladder, (n_inner, n_gibbs),
        (rate, momentum, decay), (vel_W, data_term), rng, np.empty(0),
    )  # fmt: skip


SOLVERS = ["cd", "pcd", "cg", "sdcp", "csdcp"]


# ------------------------------------------------------- independent truth
def hidden_states(n_hidden):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n_hidden)))


def minus_energy(V, H, W, b, c, sigma):
    """``-E(v, h)`` for every pair of rows, straight from Cho et al.'s energy."""
    quadratic = (((V[:, None, :] - b) ** 2) / (2 * sigma**2)).sum(axis=2)
    coupling = np.einsum("ri,ki,i->rk", V, H @ W, 1.0 / sigma**2)
    return -quadratic + coupling + H @ c


def brute_log_partition(W, b, c, sigma):
    """``log Z``: the visible integral of each hidden state done by hand
    (completing the square), the hidden states summed one by one."""
    H = hidden_states(W.shape[0])
    means = b + H @ W
    log_integrals = ((means**2 - b**2) / (2 * sigma**2)).sum(axis=1)
    return np.log(np.sqrt(2 * np.pi) * sigma).sum() + logsumexp(H @ c + log_integrals)


def brute_log_density(V, W, b, c, sigma):
    H = hidden_states(W.shape[0])
    return logsumexp(minus_energy(V, H, W, b, c, sigma), axis=1) - brute_log_partition(
        W, b, c, sigma
    )


def random_model(n_hidden, n_visible, seed=0, scale=0.7):
    rng = np.random.default_rng(seed)
    W = scale * rng.standard_normal((n_hidden, n_visible))
    b, c = rng.standard_normal(n_visible), rng.standard_normal(n_hidden)
    return W, b, c, rng.uniform(0.5, 1.5, n_visible)


def fitted(W, b, c, sigma):
    """A fitted estimator holding exactly the parameters ``(W, b, c, sigma)``."""
    rbm = GaussianBernoulliRBM(n_components=W.shape[0], sigma=sigma, n_iter=0)
    rbm.fit(np.random.default_rng(0).standard_normal((5, W.shape[1])))
    rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_ = W, b, c
    rbm.sigma_ = sigma
    rbm._forget_log_partition()
    return rbm


# --------------------------------------------------------------- likelihood
@pytest.mark.parametrize("n_hidden, n_visible", [(1, 1), (3, 2), (6, 9), (13, 4)])
def test_exact_log_partition_equals_brute_force(n_hidden, n_visible):
    W, b, c, sigma = random_model(n_hidden, n_visible)
    assert gaussian_log_partition_exact(W, b, c, sigma) == pytest.approx(
        brute_log_partition(W, b, c, sigma), abs=1e-10
    )


def test_score_samples_equals_brute_force_over_hidden_states():
    W, b, c, sigma = random_model(5, 4, seed=1)
    rbm = fitted(W, b, c, sigma)
    V = np.random.default_rng(2).standard_normal((30, 4)) * 2
    np.testing.assert_allclose(
        rbm.score_samples(V), brute_log_density(V, W, b, c, sigma), atol=1e-10
    )
    assert rbm.log_partition_function().method == "exact"


def test_density_integrates_to_one_in_one_dimension():
    W, b, c, sigma = random_model(4, 1, seed=3, scale=1.5)
    rbm = fitted(W, b, c, sigma)
    grid = np.linspace(-40, 40, 400_001)
    density = np.exp(rbm.score_samples(grid[:, None]))
    # The trapezoid rule is spectrally accurate for a smooth density that
    # vanishes at both ends of the grid.
    assert np.trapezoid(density, grid) == pytest.approx(1.0, abs=1e-10)


def test_density_integrates_to_one_in_two_dimensions():
    W, b, c, sigma = random_model(3, 2, seed=4, scale=1.2)
    rbm = fitted(W, b, c, sigma)
    axis = np.linspace(-25, 25, 1201)
    X, Y = np.meshgrid(axis, axis, indexing="ij")
    density = np.exp(rbm.score_samples(np.column_stack([X.ravel(), Y.ravel()])))
    total = np.trapezoid(np.trapezoid(density.reshape(X.shape), axis), axis)
    assert total == pytest.approx(1.0, abs=1e-10)


def test_exact_log_partition_float32_matches_float64():
    W, b, c, sigma = random_model(8, 20, seed=5, scale=0.3)
    exact64 = gaussian_log_partition_exact(W, b, c, sigma)
    f32 = (a.astype(np.float32) for a in (W, b, c, sigma))
    assert gaussian_log_partition_exact(*f32) == pytest.approx(exact64, abs=1e-3)


def test_free_energy_of_sparse_rows_equals_dense():
    W, b, c, sigma = random_model(4, 6, seed=6)
    X = np.random.default_rng(0).standard_normal((10, 6))
    X[X < 0.3] = 0.0
    np.testing.assert_allclose(
        gaussian_free_energy(sp.csr_matrix(X), W, b, c, sigma),
        gaussian_free_energy(X, W, b, c, sigma),
        atol=1e-12,
    )


def test_ais_lands_in_its_band_on_a_digits_model(digits):
    """64 features, 18 hidden units: exact enumeration is the referee."""
    X_train = digits[0]
    rbm = GaussianBernoulliRBM(
        n_components=18, solver="cd", learning_rate=0.01, batch_size=20, n_iter=5,
        random_state=0,
    ).fit(X_train)  # fmt: skip
    exact = rbm.log_partition_function()
    assert exact.method == "exact"
    rbm.set_params(score_method="ais", ais_betas=3000)
    ais = rbm.log_partition_function()
    assert ais.method == "ais"
    assert ais.lower <= exact.log_z <= ais.upper
    assert ais.upper - ais.lower < 1.0


def test_ais_is_exact_for_the_base_model():
    """Without couplings the base model (b, sigma) is the model: every
    importance weight equals Z exactly."""
    _, b, c, sigma = random_model(3, 5, seed=7)
    W = np.zeros((3, 5))
    estimate = gaussian_log_partition_ais(W, b, c, sigma, betas=10, random_state=0)
    exact = gaussian_log_partition_exact(W, b, c, sigma)
    assert estimate.log_z == pytest.approx(exact, abs=1e-12)


def test_ais_is_reproducible():
    W, b, c, sigma = random_model(6, 10, seed=8)
    first = gaussian_log_partition_ais(W, b, c, sigma, betas=50, random_state=3)
    again = gaussian_log_partition_ais(W, b, c, sigma, betas=50, random_state=3)
    assert first == again and np.isfinite(first.log_z)


@pytest.mark.parametrize(
    "sigma, message",
    [
        (0.0, r"'sigma' parameter .* range \(0.0, inf\)"),
        (-1.0, r"'sigma' parameter .* range \(0.0, inf\)"),
        ([1.0, np.nan], "positive"),
        ([1, 2, 3], "shape"),
    ],
)
def test_likelihood_functions_check_sigma(sigma, message):
    W, b, c, _ = random_model(2, 2)
    with pytest.raises(ValueError, match=message):
        gaussian_log_partition_exact(W, b, c, sigma)


# ------------------------------------------------------------------ kernels
def mean_log_likelihood(V, theta, mu, lam):
    """Exact mean log-likelihood of the centred parameters ``theta = (W, b~,
    c~, log sigma^2)`` with offsets ``(mu, lam)``."""
    W, b_centred, c_centred, log_var = theta
    b, c = b_centred - lam @ W, c_centred - W @ mu
    sigma = np.exp(0.5 * log_var)
    free = gaussian_free_energy(V, W, b, c, sigma)
    return -free.mean() - gaussian_log_partition_exact(W, b, c, sigma)


def finite_differences(V, theta, mu, lam, eps=1e-6):
    gradients = []
    for k, parameter in enumerate(theta):
        gradient = np.zeros_like(parameter)
        for index in np.ndindex(parameter.shape):
            shifted = [[p.copy() for p in theta] for _ in range(2)]
            shifted[0][k][index] += eps
            shifted[1][k][index] -= eps
            up, down = (mean_log_likelihood(V, s, mu, lam) for s in shifted)
            gradient[index] = (up - down) / (2 * eps)
        gradients.append(gradient)
    return gradients


@pytest.mark.parametrize("learn_sigma", [True, False])
@pytest.mark.parametrize("solver", SOLVERS)
def test_update_follows_the_exact_gradient(solver, learn_sigma):
    """With long chains and a tiny step, one update of every solver is the
    step times the exact gradient of the log-likelihood (finite differences
    of the enumerated log-likelihood) in W, b, c and log sigma^2, the steps of
    W and b scaled by sigma^2 per visible unit; the S-DCP solvers make d such
    steps, the centred ones in centred coordinates."""
    rng = np.random.default_rng(0)
    n_hidden, n_visible, n_rows = 3, 2, 20_000
    W, b, c, sigma = random_model(n_hidden, n_visible, seed=9, scale=0.6)
    log_var = 2 * np.log(sigma)
    V = 1.3 * rng.standard_normal((n_rows, n_visible)) + 0.4
    centred, persistent = solver in ("cg", "csdcp"), solver == "pcd"
    n_inner = 3 if solver.endswith("dcp") else 1
    mu = (V / sigma**2).mean(axis=0) if centred else np.zeros(n_visible)
    lam = np.full(n_hidden, 0.5 if centred else 0.0)
    theta = [W, b + lam @ W, c + W @ mu, log_var]
    expected = finite_differences(V, theta, mu, lam)
    step_scales = [sigma**2, sigma**2, 1.0, 1.0]

    eta = 1e-6
    updated = [p.copy() for p in theta]
    velocities = [np.zeros_like(p) for p in theta]
    chain_h = (rng.random((n_rows, n_hidden)) < 0.5).astype(float)
    gaussian_update(
        V, *updated, mu.copy(), lam.copy(), 0.0, 0.0, chain_h, persistent,
        n_inner, 30, eta, eta if learn_sigma else 0.0, -20.0, 0.0, 0.0,
        *velocities, np.empty((n_hidden, n_visible)),
        np.empty((n_hidden, n_visible)), None, np.zeros(0, dtype=np.int64),
        np.random.default_rng(1),
    )  # fmt: skip
    tolerance = 4.0 / np.sqrt(n_rows)  # Monte Carlo error of 20,000 chains
    for name, new, old, gradient, scale in zip(
        "Wbcz", updated, theta, expected, step_scales, strict=True
    ):
        if name == "z" and not learn_sigma:
            np.testing.assert_array_equal(new, old)
            continue
        step = (new - old) / (eta * n_inner * scale)
        size = max(1.0, np.abs(gradient).max())
        np.testing.assert_allclose(step, gradient, atol=tolerance * size, err_msg=name)


@pytest.mark.parametrize("centred", [False, True])
def test_hidden_part_of_the_log_variance_gradient(centred):
    """The weight step's pass sums the centred products ``(H - lam)^T (S - mu)``
    against ``W``; with the offset corrections that gives ``sum_r s_ri (W^T
    h_r)_i``, and the step itself is the textbook one."""
    rng = np.random.default_rng(0)
    W = rng.standard_normal((4, 6))
    S, H = rng.standard_normal((9, 6)), rng.random((9, 4))
    S_model, H_model = rng.standard_normal((5, 6)), rng.random((5, 4))
    mu = rng.standard_normal(6) if centred else np.zeros(6)
    lam = rng.random(4) if centred else np.zeros(4)
    data_term, model_term = (H - lam).T @ (S - mu), (H_model - lam).T @ (S_model - mu)
    scale, velocity = rng.uniform(0.5, 2, 6), np.zeros_like(W)
    data_dots, model_dots = np.zeros(6), np.zeros(6)
    W_new = W.copy()
    _scaled_weight_step_(
        W_new, velocity, data_term, model_term, 1 / 9, 1 / 5, scale, 0.1, 0.0,
        0.01, data_dots, model_dots, True,
    )  # fmt: skip
    for dots, S_, H_ in ((data_dots, S, H), (model_dots, S_model, H_model)):
        corrections = _offset_corrections(
            W, lam, mu, S_.sum(0), H_.sum(0), len(S_), centred
        )
        np.testing.assert_allclose(
            dots + corrections, (S_ * (H_ @ W)).sum(axis=0), rtol=1e-12
        )
    gradient = scale * (data_term / 9 - model_term / 5) - 0.01 * W
    np.testing.assert_allclose(W_new, W + 0.1 * gradient, rtol=1e-12)
    b, variance = rng.standard_normal(6), rng.uniform(0.5, 2, 6)
    np.testing.assert_allclose(
        _quadratic_sums(S, b, variance),
        (0.5 * S**2 * variance - S * b).sum(axis=0),
        rtol=1e-12,
    )


@vector_jit
def _draw_normals(out, radius_key, angle_key):
    for k in range(out.size):
        out[k] = standard_normal(radius_key, angle_key, k)


@vector_jit
def _cosines(u, out):
    for k in range(u.size):
        out[k] = cos_two_pi(u[k])


def test_normal_draws_are_standard_normal():
    u = np.linspace(0.0, 1.0, 100_001)[:-1]
    cosines = np.empty_like(u)
    _cosines(u, cosines)
    np.testing.assert_allclose(cosines, np.cos(2 * np.pi * u), atol=1e-15)
    z = np.empty(400_000)
    _draw_normals(z, np.uint64(12345), np.uint64(6789))
    # Standard errors of the mean, variance and fourth moment: 0.0016,
    # 0.0022, 0.016 for 400,000 draws; tolerances are about 4 of them.
    assert abs(z.mean()) < 0.007 and abs(z.var() - 1.0) < 0.01
    assert abs(np.mean(z**4) - 3.0) < 0.07
    # The fraction below each quantile of N(0, 1).
    for quantile, fraction in [(-1.959964, 0.025), (0.0, 0.5), (1.0, 0.841345)]:
        assert abs(np.mean(z < quantile) - fraction) < 0.004


def test_gibbs_sampler_reaches_the_exact_moments():
    """Long Gibbs chains reproduce the model's mean and covariance, which
    enumeration gives exactly: E[v] = sum_h p(h) (b + W^T h) and
    Cov[v] = diag(sigma^2) + Cov_h[W^T h]."""
    W, b, c, sigma = random_model(3, 3, seed=10, scale=0.8)
    rbm = fitted(W, b, c, sigma)
    H = hidden_states(3)
    log_p = H @ c + (((b + H @ W) ** 2 - b**2) / (2 * sigma**2)).sum(axis=1)
    p = np.exp(log_p - logsumexp(log_p))
    means = b + H @ W
    mean = p @ means
    covariance = np.diag(sigma**2) + (means - mean).T @ ((means - mean) * p[:, None])
    samples = rbm.sample(20_000, n_steps=30, random_state=0)
    np.testing.assert_allclose(samples.mean(axis=0), mean, atol=0.05)
    np.testing.assert_allclose(np.cov(samples.T), covariance, atol=0.07)


# -------------------------------------------------------------- the solvers
@pytest.fixture(scope="module")
def digits():
    """Digits grey levels, dequantised (uniform noise on the 17 levels) and
    standardised, split 70/30."""
    X, y = load_digits(return_X_y=True)
    X = X + np.random.default_rng(0).random(X.shape)
    X_train, X_test, y_train, y_test = train_test_split(
        X, y, test_size=0.3, random_state=0
    )
    scaler = StandardScaler().fit(X_train)
    return scaler.transform(X_train), scaler.transform(X_test), y_train, y_test


def test_sdcp_with_one_inner_step_is_cd(digits):
    X = digits[0][:200]
    params = dict(n_components=5, n_gibbs_steps=3, n_iter=2, batch_size=20)
    cd = GaussianBernoulliRBM(solver="cd", random_state=0, **params).fit(X)
    sdcp = GaussianBernoulliRBM(
        solver="sdcp", n_inner_steps=1, random_state=0, **params
    ).fit(X)
    np.testing.assert_array_equal(cd.components_, sdcp.components_)
    np.testing.assert_array_equal(cd.sigma_, sdcp.sigma_)


def test_centred_solver_exposes_the_equivalent_uncentred_rbm(digits):
    X = digits[0][:300]
    rbm = GaussianBernoulliRBM(n_components=6, solver="csdcp", n_iter=3).fit(X)
    assert np.any(rbm.offset_visible_ != 0) and np.any(rbm.offset_hidden_ != 0)
    W, mu, lam, sigma = (
        rbm.components_, rbm.offset_visible_, rbm.offset_hidden_, rbm.sigma_,
    )  # fmt: skip
    centred_h = expit((X / sigma**2 - mu) @ W.T + rbm._centred_hidden_bias)
    np.testing.assert_allclose(rbm.transform(X), centred_h, atol=1e-12)
    H = (np.random.default_rng(0).random((7, 6)) < 0.5).astype(float)
    np.testing.assert_allclose(
        (H - lam) @ W + rbm._centred_visible_bias,
        H @ W + rbm.intercept_visible_,
        atol=1e-12,
    )


@pytest.mark.parametrize("solver", SOLVERS)
def test_every_solver_beats_independent_gaussians_on_held_out_digits(solver, digits):
    """Held-out log-density (exact, 16 hidden units) above the independent
    Gaussians that fit the training data, the model's starting point (20
    epochs, measured: 7.0 to 7.2 nats better for CD, PCD and CG, 11.4 and 11.8
    for S-DCP and CS-DCP)."""
    X_train, X_test = digits[:2]
    rbm = GaussianBernoulliRBM(
        n_components=16, solver=solver, learning_rate=0.01, batch_size=20,
        n_iter=20, random_state=0,
    ).fit(X_train)  # fmt: skip
    independent = (
        -0.5 * (X_test - rbm.base_mean_) ** 2 / rbm.base_sigma_**2
        - np.log(np.sqrt(2 * np.pi) * rbm.base_sigma_)
    ).sum(axis=1)
    assert rbm.score(X_test) > independent.mean() + 5.0


def test_features_in_a_pipeline_on_digits(digits):
    """The smoke-sized version of the Fashion-MNIST comparison: on 8x8 digits
    100 hidden units are about as good a classifier input as the 64 pixels
    themselves (measured: 0.950 and 0.954; on Fashion-MNIST the RBM is ahead,
    see the user guide)."""
    X_train, X_test, y_train, y_test = digits

    def classifier():
        return LogisticRegression(C=10, max_iter=200)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        raw = classifier().fit(X_train, y_train).score(X_test, y_test)
        pipe = make_pipeline(
            StandardScaler(),
            GaussianBernoulliRBM(
                n_components=100, solver="cg", learning_rate=0.01, batch_size=10,
                n_iter=10, n_gibbs_steps=1, momentum=0.0, random_state=0,
            ),
            classifier(),
        ).fit(X_train, y_train)  # fmt: skip
    accuracy = pipe.score(X_test, y_test)
    assert accuracy > raw - 0.015 and accuracy > 0.93


def test_fixed_sigma_stays_fixed_and_learned_sigma_moves(digits):
    X = digits[0][:300]
    fixed = GaussianBernoulliRBM(n_components=4, sigma=0.7, n_iter=2).fit(X)
    np.testing.assert_array_equal(fixed.sigma_, np.full(64, 0.7))
    per_feature = np.linspace(0.5, 1.5, 64)
    fixed = GaussianBernoulliRBM(n_components=4, sigma=per_feature, n_iter=2).fit(X)
    np.testing.assert_array_equal(fixed.sigma_, per_feature)
    learned = GaussianBernoulliRBM(
        n_components=4, n_iter=3, learning_rate=0.05, random_state=0
    ).fit(X)
    assert not np.allclose(learned.sigma_, learned.base_sigma_)


def test_constant_feature_sits_at_the_documented_floor():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((200, 3))
    X[:, 1] = 2.0
    with pytest.warns(UserWarning, match=r"sigma of 1 feature\(s\) \(first: \[1\]\)"):
        rbm = GaussianBernoulliRBM(
            n_components=2, min_sigma=0.05, learning_rate=0.05, n_iter=100,
            batch_size=50, random_state=0,
        ).fit(X)  # fmt: skip
    assert rbm.sigma_[1] == pytest.approx(0.05)
    assert np.all(rbm.sigma_[[0, 2]] > 0.5)
    assert np.isfinite(rbm.score(X))


# ---------------------------------------------------- scikit-learn surface
@pytest.mark.parametrize("solver", SOLVERS)
def test_fit_then_partial_fit_equals_partial_fit_epochs(solver, digits):
    X = digits[0][:100]
    params = dict(n_components=4, solver=solver, batch_size=16, random_state=3)
    fitted_model = GaussianBernoulliRBM(n_iter=3, **params).fit(X)
    stepped = GaussianBernoulliRBM(**params)
    for _ in range(3):
        assert stepped.partial_fit(X) is stepped
    np.testing.assert_array_equal(fitted_model.components_, stepped.components_)
    np.testing.assert_array_equal(fitted_model.sigma_, stepped.sigma_)
    assert stepped.n_iter_ == 3


def test_gibbs_steps_from_sparse_rows_draw_as_from_dense_rows(digits):
    """(Sparse fits and queries are a generic property: tests/test_common.py.)"""
    X = np.where(digits[0][:200] > 0.5, digits[0][:200], 0.0)
    rbm = GaussianBernoulliRBM(n_components=6, n_iter=2, random_state=0).fit(X)
    dense = copy.deepcopy(rbm).gibbs(X[:5])
    np.testing.assert_allclose(rbm.gibbs(sp.csr_matrix(X[:5])), dense, atol=1e-12)


def test_score_cache_and_row_independence(digits):
    X = digits[0]
    rbm = GaussianBernoulliRBM(
        n_components=24, n_iter=1, ais_betas=100, ais_n_chains=20, random_state=0
    ).fit(X)
    first = rbm.score_samples(X[:10])
    before = rbm.log_partition_function()
    assert before.method == "ais"  # 24 > 20 units
    assert rbm.log_partition_function() is before
    np.testing.assert_array_equal(rbm.score_samples(X[5:10]), first[5:])
    rbm.partial_fit(X[:100])
    assert rbm.log_partition_function().log_z != before.log_z


def test_sample_and_gibbs_are_real_and_reproducible(digits):
    X = digits[0]
    rbm = GaussianBernoulliRBM(n_components=8, n_iter=2, random_state=0).fit(X)
    samples = rbm.sample(4, n_steps=10)
    assert samples.shape == (4, 64) and np.unique(samples).size > 100
    np.testing.assert_array_equal(samples, rbm.sample(4, n_steps=10))
    assert rbm.gibbs(X[:3]).shape == (3, 64)


def test_early_stopping_and_verbose(digits, capsys):
    X = digits[0]
    rbm = GaussianBernoulliRBM(
        n_components=8, n_iter=30, learning_rate=0.05, early_stopping=True,
        n_iter_no_change=2, verbose=1, random_state=0,
    ).fit(X)  # fmt: skip
    assert rbm.n_iter_ < 30
    assert rbm.best_validation_score_ == max(rbm.history_["validation_log_likelihood"])
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("[GaussianBernoulliRBM] epoch 1/30")
    assert "held-out log-likelihood" in lines[0]


def test_feature_names_out(digits):
    rbm = GaussianBernoulliRBM(n_components=3, n_iter=1).fit(digits[0][:50])
    assert list(rbm.get_feature_names_out()) == [
        f"gaussianbernoullirbm{k}" for k in range(3)
    ]


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_input_is_rejected(bad, digits):
    X = digits[0][:50].copy()
    X[3, 7] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        GaussianBernoulliRBM(n_components=4).fit(X)
    with pytest.raises(ValueError, match="NaN|infinity"):
        GaussianBernoulliRBM(n_components=4).partial_fit(X)
    with pytest.raises(ValueError, match="X_val.*(NaN|infinity)|(NaN|infinity)"):
        GaussianBernoulliRBM(n_components=4, n_iter=1).fit(digits[0][:50], X_val=X)
    rbm = GaussianBernoulliRBM(n_components=4, n_iter=1).fit(digits[0][:50])
    for query in (rbm.transform, rbm.score_samples, rbm.free_energy, rbm.gibbs):
        with pytest.raises(ValueError, match="NaN|infinity"):
            query(X)
    with pytest.raises(ValueError, match="NaN|infinity"):
        rbm.score(sp.csr_matrix(X))


@pytest.mark.parametrize(
    "make, call, parameter",
    [
        (lambda: GaussianBernoulliRBM(n_components=10**9), "fit", "n_components"),
        (lambda: GaussianBernoulliRBM(batch_size=10**9), "fit", "batch_size"),
        (lambda: GaussianBernoulliRBM(n_components=10**9), "partial_fit", "n_comp"),
        (lambda: GaussianBernoulliRBM(n_components=3, n_iter=1), "sample", "n_samp"),
    ],
)
def test_absurd_sizes_are_refused_before_any_work(make, call, parameter, digits):
    """MemoryError naming the parameter, before numpy's 'Unable to allocate'."""
    rbm = make()
    with pytest.raises(MemoryError, match=f"{parameter}.* more than this machine"):
        if call == "sample":
            rbm.fit(digits[0][:50]).sample(10**11)
        else:
            getattr(rbm, call)(digits[0][:50])


def test_log_density_ceiling_bounds_the_exact_log_density():
    """The divergence check's ceiling is an upper bound (a lower bound on log Z
    from probed hidden states): never below the exact mean log-density, and
    within a few nats of it on a model dominated by few hidden states."""
    rng = np.random.default_rng(3)
    X = rng.standard_normal((40, 5))
    for seed, scale in itertools.product(range(4), (0.1, 0.7, 2.0)):
        W, b, c, sigma = random_model(6, 5, seed=seed, scale=scale)
        exact = brute_log_density(X, W, b, c, sigma).mean()
        ceiling = log_density_ceiling(X, W, b, c, sigma)
        assert exact <= ceiling + 1e-9, (seed, scale)
    W, b, c, sigma = random_model(6, 5, scale=0.0)  # independent Gaussians
    gap = (
        log_density_ceiling(X, W, b, c, sigma)
        - brute_log_density(X, W, b, c, sigma).mean()
    )
    assert gap == pytest.approx(np.sum(np.logaddexp(0, c)) - np.sum(np.maximum(c, 0)))


def test_collapsed_variances_are_a_divergence(digits):
    """What divergence does to a Gaussian RBM: variances collapsing onto the
    data (the density far below the independent Gaussians it started from)
    stop the fit; a healthy model passes the same check."""
    X = digits[0][:N_CHECKED_ROWS]  # the rows the check looks at
    rbm = GaussianBernoulliRBM(n_components=8, n_iter=2, random_state=0).fit(X)
    rbm._watch_divergence(X)
    state = (rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_)
    assert rbm._diagnose_divergence(*state) is None
    assert rbm._checked_baseline == pytest.approx(
        np.mean(
            np.sum(
                -0.5 * ((X - rbm.base_mean_) / rbm.base_sigma_) ** 2
                - np.log(np.sqrt(2 * np.pi) * rbm.base_sigma_),
                axis=1,
            )
        )
    )
    rbm.sigma_ = rbm.sigma_ * 1e-3
    problem = rbm._diagnose_divergence(*state)
    assert problem is not None
    assert "far below" in problem and "independent Gaussians" in problem
    # The same through the training engine: a partial_fit from collapsed
    # variances (at the floor min_sigma, 1% of the data's spread) stops.
    rbm.set_params(learning_rate=1e-6)._log_variance[:] = 2 * np.log(rbm.min_sigma)
    with pytest.raises(FloatingPointError, match=r"far below the -9\d"):
        rbm.partial_fit(X)


@pytest.mark.parametrize(
    "sigma, error, message",
    [
        (0.0, InvalidParameterError, "sigma"),
        (-1.0, InvalidParameterError, "sigma"),
        ("fixed", InvalidParameterError, "sigma"),
        (np.r_[np.ones(63), 0.0], ValueError, "feature 63 has sigma=0.0"),
        (np.ones(5), ValueError, r"shape \(64,\)"),
    ],
)
def test_non_positive_or_misshapen_sigma_is_rejected(sigma, error, message, digits):
    with pytest.raises(error, match=message):
        GaussianBernoulliRBM(n_components=2, sigma=sigma).fit(digits[0][:50])


def test_exact_score_on_a_model_too_large_to_enumerate(digits):
    rbm = GaussianBernoulliRBM(n_components=35, n_iter=0, score_method="exact")
    rbm.fit(digits[0][:50])
    with pytest.raises(ValueError, match="2 \\*\\* 35 states.*Use score_method='ais'"):
        rbm.score(digits[0][:5])


def test_diverging_learning_rate_raises_and_keeps_finite_parameters(digits):
    rbm = GaussianBernoulliRBM(n_components=8, learning_rate=1e6, n_iter=3)
    with pytest.raises(FloatingPointError, match="learning_rate=1e\\+06"):
        rbm.fit(digits[0])
    assert np.all(np.isfinite(rbm.components_)) and np.all(np.isfinite(rbm.sigma_))


def test_wrong_number_of_features_and_not_fitted(digits):
    X = digits[0]
    with pytest.raises(NotFittedError):
        GaussianBernoulliRBM().transform(X)
    rbm = GaussianBernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(X)
    for method in (rbm.transform, rbm.score_samples, rbm.gibbs, rbm.free_energy):
        with pytest.raises(ValueError, match="63 features"):
            method(X[:, :63])


# ------------------------------------------------- RAISE and the bracket
def exact_samples(W, b, c, sigma, n_samples, seed):
    """Exact draws from a tiny RBM: ``h`` from its enumerated marginal
    ``p(h) ∝ exp(q(h))``, then ``v ~ N(b + W^T h, sigma^2)``."""
    rng = np.random.default_rng(seed)
    H = hidden_states(W.shape[0])
    means = b + H @ W
    log_p = H @ c + ((means**2 - b**2) / (2 * sigma**2)).sum(axis=1)
    picks = rng.choice(len(H), size=n_samples, p=np.exp(log_p - logsumexp(log_p)))
    return means[picks] + sigma * rng.standard_normal((n_samples, W.shape[1]))


def test_raise_and_ais_bracket_the_exact_log_density():
    """On tiny models (exact log Z by enumeration) and rows drawn from the
    model, 1,000 temperatures bracket the exact mean log-density (each end
    widened by three Monte Carlo standard errors: a bracket 0.03 to 0.09 nats
    wide); with 3 temperatures forward AIS errs high, as it does in
    expectation, and the bracket still holds."""
    errors = {3: [], 1000: []}
    for seed in range(3):
        W, b, c, sigma = random_model(8, 10, seed=seed, scale=0.6)
        X = exact_samples(W, b, c, sigma, 30, seed)
        exact = brute_log_density(X, W, b, c, sigma).mean()
        for n_betas in errors:
            lower, upper = gaussian_log_likelihood_bounds(
                X, W, b, c, sigma, base_mean=X.mean(0), base_sigma=X.std(0),
                n_chains=100, betas=n_betas, random_state=seed,
            )  # fmt: skip
            errors[n_betas].append((lower - exact, upper - exact))
        for lower_error, upper_error in (errors[3][-1], errors[1000][-1]):
            assert lower_error <= 0.0 <= upper_error, (seed, errors)
        (lower_error, upper_error) = errors[1000][-1]
        assert upper_error - lower_error < 0.1, (seed, errors)
    assert np.mean([upper for _, upper in errors[3]]) > 0.05, errors


def test_raise_is_reproducible_and_per_row():
    W, b, c, sigma = random_model(3, 4, seed=2)
    X = np.random.default_rng(0).standard_normal((6, 4))
    kwargs = dict(n_chains=10, betas=50, random_state=7)
    first = gaussian_log_likelihood_raise(X, W, b, c, sigma, **kwargs)
    np.testing.assert_array_equal(
        first, gaussian_log_likelihood_raise(X, W, b, c, sigma, **kwargs)
    )
    # A row's chains are keyed by the row: the same estimate wherever it stands.
    reordered = gaussian_log_likelihood_raise(X[::-1], W, b, c, sigma, **kwargs)
    np.testing.assert_allclose(reordered[::-1], first, rtol=1e-12)
    other = gaussian_log_likelihood_raise(
        X, W, b, c, sigma, **{**kwargs, "random_state": 8}
    )
    assert not np.array_equal(other, first)


def test_estimator_log_likelihood_bounds(digits):
    X_train, X_test = digits[0][:400], digits[1][:40]
    rbm = GaussianBernoulliRBM(
        n_components=6, n_iter=5, ais_betas=300, ais_n_chains=30, random_state=0
    ).fit(X_train)
    lower, upper = rbm.log_likelihood_bounds(X_test)
    assert (lower, upper) == rbm.log_likelihood_bounds(X_test)  # bit-identical
    exact = rbm.score(X_test)  # 6 hidden units: enumerated
    assert lower <= exact <= upper, (lower, exact, upper)
    ais = rbm.set_params(score_method="ais").log_partition_function()
    assert upper == pytest.approx(rbm.score(X_test) + ais.log_z - ais.lower)


# ------------------------------------------------------- parallel tempering
def tempered_log_hidden(W, b, c, sigma, base_mean, base_sigma, beta):
    """``log p*_beta(h)`` for every hidden state on the path ``N_A(v)^(1 - beta)
    exp(-beta E(v, h))``, the visible integral done by hand: ``-beta E`` is
    ``-beta sum_i (v_i - mean_i)^2 / (2 sigma_i^2) + beta sum_i (mean_i^2 -
    b_i^2) / (2 sigma_i^2) + beta c^T h`` with ``mean = b + W^T h``, and the
    integral of two Gaussian factors of precisions ``alpha`` and ``gamma`` is
    ``sqrt(2 pi / (alpha + gamma)) exp(-alpha gamma d^2 / (2 (alpha + gamma)))``
    with ``d`` the distance of their centres. At ``beta = 1`` this is
    ``c^T h + sum_i ((b_i + (W^T h)_i)^2 - b_i^2) / (2 sigma_i^2)`` + const."""
    H = hidden_states(W.shape[0])
    means = b + H @ W
    alpha, gamma = (1 - beta) / base_sigma**2, beta / sigma**2
    gap = means - base_mean
    visible = (
        0.5 * np.log(2 * np.pi / (alpha + gamma))
        - alpha * gamma * gap**2 / (2 * (alpha + gamma))
        + beta * (means**2 - b**2) / (2 * sigma**2)
    ).sum(axis=1)
    return visible + beta * (H @ c)


def tempered_log_marginal_v(V, W, b, c, sigma, base_mean, base_sigma, beta):
    """``log p*_beta(v)`` (up to a constant), summing ``h`` out by hand."""
    H = hidden_states(W.shape[0])
    base = -(((V - base_mean) ** 2) / (2 * base_sigma**2)).sum(axis=1)
    joint = beta * minus_energy(V, H, W, b, c, sigma) + (1 - beta) * base[:, None]
    return logsumexp(joint, axis=1)


def pt_model(seed=4):
    """A 2-visible, 3-hidden RBM whose p(h) has separated modes."""
    W, b, c, sigma = random_model(3, 2, seed=seed, scale=1.5)
    return W, b, c, sigma, np.array([0.3, -0.2]), np.array([1.2, 0.9])


def test_tempering_chains_sample_the_exact_hidden_distributions():
    """4,000 independent tempering systems, 150 rounds of one sweep and one
    swap round on a 2 x 3 model: the hidden states drawn from the final
    p_t(h | v) follow the exact tempered p_t(h) at every rung (at beta = 1 the
    closed form p(h) ∝ exp(c^T h + sum_i ((b_i + (W^T h)_i)^2 - b_i^2) / (2
    sigma_i^2))). Each of the 8 states' counts is binomial: a frequency may
    miss its probability by 4.5 standard errors (an exact sampler fails one of
    the 32 comparisons with probability about 0.02 %)."""
    W, b, c, sigma, base_mean, base_sigma = pt_model()
    betas = np.array([1.0, 0.7, 0.45, 0.25])
    n_chains, n_rounds = 4000, 150
    rng = np.random.default_rng(0)
    H = (rng.random((betas.size * n_chains, 3)) < 0.5).astype(float)
    accepted = np.zeros(3, dtype=np.int64)
    variance, inv_sigma = sigma**2, 1.0 / sigma
    for _ in range(n_rounds):
        _, P, _ = tempering_round(
            GaussianUnits(b, sigma), (variance, inv_sigma), units_of(c), None,
            (base_mean, 1.0 / base_sigma**2), H, W, b, c, betas, n_chains, 1, rng,
            accepted,
        )  # fmt: skip
        H = sample_bernoulli(P, rng)
    assert np.all(accepted > 0.2 * n_rounds * n_chains)  # swaps are tested too
    exact_p1 = np.exp(c @ hidden_states(3).T) * np.exp(
        (((b + hidden_states(3) @ W) ** 2 - b**2) / (2 * sigma**2)).sum(axis=1)
    )
    index = (H @ np.array([4, 2, 1])).astype(int)
    for t, beta in enumerate(betas):
        log_p = tempered_log_hidden(W, b, c, sigma, base_mean, base_sigma, beta)
        p = np.exp(log_p - logsumexp(log_p))
        if t == 0:
            np.testing.assert_allclose(p, exact_p1 / exact_p1.sum(), rtol=1e-12)
        counts = np.bincount(index[t * n_chains : (t + 1) * n_chains], minlength=8)
        error = np.sqrt(p * (1 - p) / n_chains)
        assert np.all(np.abs(counts / n_chains - p) <= 4.5 * error), (t, counts, p)


def test_swap_acceptance_is_the_metropolis_rule_on_the_tempered_marginals():
    """Three rungs, every chain holding the same hand-built states: pair (0, 1)
    swaps with probability min(1, ratio) of the brute-force tempered marginals,
    then pair (1, 2) with whatever (0, 1) left in replica 1; rows move whole."""
    W, b, c, sigma, base_mean, base_sigma = pt_model()
    states = np.array([[-1.5, -0.3], [-1.0, 1.2], [0.1, -0.6]])
    betas = np.array([1.0, 0.6, 0.3])
    n_chains = 40_000
    S = np.repeat(states / sigma**2, n_chains, axis=0)
    A = S @ W.T
    Q = _path_quadratic(S, b, sigma**2, base_mean, 1.0 / base_sigma**2)
    accepted = np.zeros(2, dtype=np.int64)
    swap_replicas_(
        units_of(c), S, A, Q, np.ones(1), c, betas, n_chains,
        np.random.default_rng(0), accepted, True,
    )  # fmt: skip

    def acceptance(x, beta_x, y, beta_y):
        pair = np.vstack([x, y])
        log_p = tempered_log_marginal_v(pair, W, b, c, sigma, base_mean, base_sigma,
                                        beta_x)  # fmt: skip
        log_q = tempered_log_marginal_v(pair, W, b, c, sigma, base_mean, base_sigma,
                                        beta_y)  # fmt: skip
        return min(1.0, np.exp(log_p[1] + log_q[0] - log_p[0] - log_q[1]))

    p01 = acceptance(states[0], betas[0], states[1], betas[1])
    p12 = p01 * acceptance(states[0], betas[1], states[2], betas[2]) + (
        1 - p01
    ) * acceptance(states[1], betas[1], states[2], betas[2])
    assert 0.05 < p01 < 0.95 and 0.05 < p12 < 0.95, (p01, p12)
    for rate, p in zip(accepted / n_chains, (p01, p12), strict=True):
        assert abs(rate - p) < 4.5 * np.sqrt(p * (1 - p) / n_chains)
    V = S * sigma**2
    assert {tuple(np.round(row, 9)) for row in V} <= {
        tuple(np.round(s, 9)) for s in states
    }
    np.testing.assert_allclose(A, S @ W.T, atol=1e-12)
    np.testing.assert_allclose(
        Q, _path_quadratic(S, b, sigma**2, base_mean, 1.0 / base_sigma**2)
    )


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("centred", [False, True])
@pytest.mark.parametrize("learn_sigma", [False, True])
def test_one_temperature_is_gaussian_pcd_bit_for_bit(dtype, centred, learn_sigma):
    """A ladder of the single inverse temperature 1 proposes no swap: the
    tempered update (its sampler, slicing and chain update) is the persistent
    Gaussian update, bit for bit, over several mini-batches."""
    rng = np.random.default_rng(0)
    n_hidden, n_visible, n_chains = 5, 7, 8
    W0 = (0.5 * rng.standard_normal((n_hidden, n_visible))).astype(dtype)
    b0, c0 = (rng.standard_normal(k).astype(dtype) for k in (n_visible, n_hidden))
    z0 = (0.3 * rng.standard_normal(n_visible)).astype(dtype)
    X = (1.2 * rng.standard_normal((40, n_visible))).astype(dtype)
    mu0 = (X / np.exp(z0)).mean(axis=0) if centred else np.zeros(n_visible)
    lam0 = np.full(n_hidden, 0.5 if centred else 0.0)
    nu = 0.01 if centred else 0.0
    base = (np.zeros(n_visible), np.ones(n_visible))

    def train(tempered):
        W, b, c, z = W0.copy(), b0.copy(), c0.copy(), z0.copy()
        mu, lam = mu0.astype(dtype), lam0.astype(dtype)
        velocities = [np.zeros_like(p) for p in (W, b, c, z)]
        chains = np.zeros((n_chains, n_hidden), dtype=dtype)
        rng = np.random.default_rng(5)
        for start in range(0, 40, n_chains):
            gaussian_update(
                X[start : start + n_chains], W, b, c, z, mu, lam, nu, nu, chains,
                True, 1, 3, 0.05, 0.01 if learn_sigma else 0.0, -9.0, 0.5, 0.01,
                *velocities, np.empty_like(W), np.empty_like(W),
                (np.ones(1), *base) if tempered else None,
                np.zeros(0, dtype=np.int64), rng,
            )  # fmt: skip
        return W, b, c, z, mu, lam, chains

    for ours, pcd in zip(train(True), train(False), strict=True):
        assert ours.dtype == dtype
        np.testing.assert_array_equal(ours, pcd)


@pytest.mark.parametrize("solver", ["pt", "cpt"])
def test_tempered_solvers_fit_digits_and_record_swaps(solver, digits):
    """Held-out log-density (exact, 16 hidden units, 20 epochs) above the
    independent Gaussians, as for the other solvers (measured: 7.2 nats for
    'pt', 7.4 for 'cpt', 7.2 for PCD-3 at the same Gibbs cost); one
    swap-acceptance column per pair; the same random_state gives the same
    bits."""
    X_train, X_test = digits[:2]
    params = dict(
        n_components=16, solver=solver, learning_rate=0.01, batch_size=20,
        n_iter=20, n_temperatures=3, random_state=0,
    )  # fmt: skip
    rbm = GaussianBernoulliRBM(**params).fit(X_train)
    assert rbm.betas_.tolist() == [1.0, 0.75, 0.5]
    assert rbm._chain_hidden.shape == (3 * 20, 16)
    independent = (
        -0.5 * (X_test - rbm.base_mean_) ** 2 / rbm.base_sigma_**2
        - np.log(np.sqrt(2 * np.pi) * rbm.base_sigma_)
    ).sum(axis=1)
    assert rbm.score(X_test) > independent.mean() + 5.0
    rates = np.array([rbm.history_[f"swap_acceptance_{t}"] for t in range(2)])
    assert rates.shape == (2, 20) and np.all((rates > 0.0) & (rates <= 1.0))
    assert "swap_acceptance_2" not in rbm.history_
    again = GaussianBernoulliRBM(**params).fit(X_train)
    np.testing.assert_array_equal(rbm.components_, again.components_)
    np.testing.assert_array_equal(rbm.sigma_, again.sigma_)
    np.testing.assert_array_equal(rates[0], again.history_["swap_acceptance_0"])


@pytest.mark.parametrize(
    "params, error, message",
    [
        (dict(n_temperatures=1), InvalidParameterError, "n_temperatures"),
        (dict(min_beta=1.0), InvalidParameterError, "min_beta"),
        (dict(min_beta=0.0), InvalidParameterError, "min_beta"),
        (dict(beta_ladder=[1.0, 0.4, 0.6]), ValueError, "decrease strictly"),
        (dict(beta_ladder=[0.9, 0.5]), ValueError, "must start at 1"),
        (dict(beta_ladder=[1.0, 0.5, -0.1]), ValueError, r"in \(0, 1\]"),
        (dict(beta_ladder=[1.0]), ValueError, "at least two"),
        (dict(beta_ladder="cubic"), InvalidParameterError, "beta_ladder"),
        (dict(beta_ladder=[1.0, 0.5], n_temperatures=2), ValueError, "leave"),
    ],
)
def test_bad_tempering_settings_are_refused(params, error, message, digits):
    rbm = GaussianBernoulliRBM(n_components=2, solver="pt", n_iter=1, **params)
    with pytest.raises(error, match=message):
        rbm.fit(digits[0][:40])


def test_tempering_settings_warn_for_other_solvers(digits):
    with pytest.warns(UserWarning, match="solver='pcd' does not use min_beta"):
        GaussianBernoulliRBM(n_components=2, solver="pcd", min_beta=0.3, n_iter=1).fit(
            digits[0][:40]
        )


def test_a_gap_in_the_ladder_warns(digits):
    """sigma fixed at 0.2 on standardised data, against a base model of unit
    spread: the beta = 1 replicas sit within about 0.2 of the model's means
    where the beta = 0.05 ones spread about 0.7, so the quadratic part of the
    log swap ratio is of order -0.95 x 64 x 0.45 / 0.08, about -340: no swap
    is accepted and fit says so."""
    rbm = GaussianBernoulliRBM(
        n_components=16, solver="pt", sigma=0.2, beta_ladder=[1.0, 0.05],
        n_iter=1, batch_size=20, learning_rate=0.001, random_state=0,
    )  # fmt: skip
    with pytest.warns(UserWarning, match=r"1 <-> 0.05: 0.0% .* the ladder has a gap"):
        rbm.fit(digits[0][:400])
    assert rbm.history_["swap_acceptance_0"].tolist() == [0.0]


# ------------------------------------------- through the shared RBM trainer
def test_init_warm_starts_from_another_fitted_gaussian_rbm():
    """``init`` (a warm start the Gaussian RBM gained from the shared trainer)
    copies the weights, both biases and the learned sigma; the same checks of
    width and size as the binary RBM's."""
    X = np.random.default_rng(0).standard_normal((60, 5))
    source = GaussianBernoulliRBM(n_components=3, n_iter=3, random_state=0).fit(X)
    warm = GaussianBernoulliRBM(
        n_components=3, solver="cpt", n_iter=0, init=source, random_state=1
    ).fit(X)
    for name in ("components_", "intercept_visible_", "intercept_hidden_", "sigma_"):
        np.testing.assert_allclose(
            getattr(warm, name), getattr(source, name), rtol=1e-12, err_msg=name
        )
    with pytest.raises(ValueError, match="init was fitted on 5 features but X has 4"):
        GaussianBernoulliRBM(n_components=3, init=source).fit(X[:, :4])


def test_parallel_tempering_samples_have_the_exact_mean():
    """``sample(method='pt')`` (which the Gaussian RBM gained from the shared
    trainer) draws from the model: on a bimodal model with three hidden
    units the sample mean of ``v`` is the exact ``E[v] = b + W^T
    E[h]`` (``p(h)`` by enumeration, ``p(v | h) = N(b + W^T h, sigma^2)``) to
    within a few standard errors."""
    W, b, c, sigma = random_model(3, 4, seed=2, scale=1.0)  # modes of 0.42, 0.41
    rbm = fitted(W, b, c, sigma)
    H = hidden_states(3)
    log_p = H @ c + (((b + H @ W) ** 2 - b**2) / (2 * sigma**2)).sum(axis=1)
    p_h = np.exp(log_p - logsumexp(log_p))
    exact_mean = b + p_h @ H @ W
    exact_var = sigma**2 + p_h @ (b + H @ W) ** 2 - exact_mean**2
    n = 4000
    samples = rbm.sample(n, n_steps=200, method="pt", random_state=0)
    assert samples.shape == (n, 4)
    z = (samples.mean(axis=0) - exact_mean) / np.sqrt(exact_var / n)
    assert np.all(np.abs(z) < 4.5), z
    again = rbm.sample(n, n_steps=200, method="pt", random_state=0)
    np.testing.assert_array_equal(samples, again)


@pytest.mark.parametrize("name", ["wine", "breast cancer", "digits"])
def test_defaults_fit_the_data_users_bring(name):
    """With every default on standardised real data the fit stops and scores
    a finite held-out log-density above independent Gaussians' (the base
    model every fit starts from); on dequantised digits (split 0 of
    ``bench_defaults.py --only grbm``, 1,347 images to fit, where the
    defaults were chosen; 600 are too few, they overfit) it beats one
    full-covariance Gaussian by more than 3 nats. The alarm only catches a
    hang; the speed is the benchmark's."""
    import signal

    from sklearn.datasets import load_breast_cancer, load_wine
    from sklearn.mixture import GaussianMixture

    loaders = {
        "wine": lambda: load_wine().data,
        "breast cancer": lambda: load_breast_cancer().data,
        # Dequantised: uniform noise spreads the 17 grey levels.
        "digits": lambda: (
            load_digits().data + np.random.default_rng(0).random((1797, 64))
        ),
    }
    X_train, X_test = train_test_split(loaders[name](), random_state=0)
    scaler = StandardScaler().fit(X_train)
    X_train, X_test = scaler.transform(X_train), scaler.transform(X_test)

    def expire(signum, frame):
        raise TimeoutError("the default fit is still running after 60 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    try:
        rbm = GaussianBernoulliRBM(random_state=0).fit(X_train)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    independent = (
        -0.5
        * np.sum(
            np.log(2 * np.pi * X_train.var(axis=0))
            + (X_test - X_train.mean(axis=0)) ** 2 / X_train.var(axis=0),
            axis=1,
        ).mean()
    )
    held_out = rbm.score(X_test)
    assert np.isfinite(held_out)
    assert held_out > independent
    if name == "digits":
        gaussian = GaussianMixture(1, covariance_type="full", reg_covar=1e-3)
        assert held_out > gaussian.fit(X_train).score(X_test) + 3.0
