"""CategoricalRBM: categorical (Potts) visible units over the shared trainer.

Ground truth is brute-force enumeration of every (v, h) of tiny models (L = 4
sites, q = 3 states, 3-5 hidden units) and finite differences of the exact
log-likelihood.
"""

import itertools

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.integrate import quad
from scipy.special import logsumexp

from sklearn_rbm import CategoricalRBM
from sklearn_rbm._rbm.layers.categorical import (
    codes_one_hot,
    independent_site_fields,
    site_frequencies,
)
from sklearn_rbm._rbm.layers.drelu import MIN_GAMMA, drelu_statistics, potential_of
from sklearn_rbm._rbm.layers.site_states import encode_one_hot, state_mask
from sklearn_rbm.datasets import make_potts

L, Q = 4, 3


def _all_codes(n_sites=L, n_states=Q):
    return np.array(list(itertools.product(range(n_states), repeat=n_sites)), float)


def _brute_log_unnormalised(V, W, b, c, n_states=Q):
    """``log sum_h exp(-E(v, h))`` by summing over every binary ``h``."""
    n_hidden = W.shape[0]
    W3 = W.reshape(n_hidden, -1, n_states)
    b2 = b.reshape(-1, n_states)
    H = np.array(list(itertools.product((0.0, 1.0), repeat=n_hidden)))
    out = []
    for v in V.astype(int):
        sites = np.arange(v.size)
        field = b2[sites, v].sum()
        inputs = W3[:, sites, v].sum(axis=1)  # (n_hidden,)
        out.append(logsumexp(field + H @ (c + inputs)))
    return np.array(out)


def _quadrature_log_unnormalised(V, W, b, c, hidden_unit, n_states=Q):
    """``log p~(v) = b . s + sum_j log ∫ exp(-U(h) + a_j h) dh`` with the
    hidden integrals by quadrature (``U = h^2 / 2``, on ``h >= 0`` for ReLU)."""
    n_hidden = W.shape[0]
    W3 = W.reshape(n_hidden, -1, n_states)
    b2 = b.reshape(-1, n_states)
    lower = 0.0 if hidden_unit == "relu" else -np.inf
    out = []
    for v in V.astype(int):
        sites = np.arange(v.size)
        total = b2[sites, v].sum()
        for a in c + W3[:, sites, v].sum(axis=1):
            # Scaled by the density's maximum, at max(a, 0) or a.
            mode = max(a, 0.0) if hidden_unit == "relu" else a
            top = -mode * mode / 2 + a * mode

            def density(h, a=a, top=top):
                return np.exp(-h * h / 2 + a * h - top)

            value = quad(density, lower, np.inf, epsabs=0, epsrel=1e-13, limit=200)[0]
            total += np.log(value) + top
        out.append(total)
    return np.array(out)


def _model(n_hidden, seed=0, scale=1.0, n_sites=L, n_states=Q, hidden_unit="bernoulli"):
    """A fitted CategoricalRBM whose parameters are replaced by random ones
    (for dReLU units also their potentials: curvatures in [0.5, 2], thresholds
    in [-1, 1])."""
    rng = np.random.default_rng(seed)
    X = rng.integers(0, n_states, size=(30, n_sites)).astype(float)
    X[:n_states] = np.arange(n_states)[:, None]
    rbm = CategoricalRBM(n_components=n_hidden, n_iter=1, batch_size=10,
                         hidden_unit=hidden_unit, random_state=0)  # fmt: skip
    rbm.fit(X)
    W = scale * rng.standard_normal((n_hidden, n_sites * n_states))
    b = scale * rng.standard_normal(n_sites * n_states)
    c = scale * rng.standard_normal(n_hidden)
    if hidden_unit == "drelu":
        _set_potential(rbm, *rng.uniform(0.5, 2.0, (2, n_hidden)),
                       *rng.uniform(-1.0, 1.0, (2, n_hidden)))  # fmt: skip
    rbm._set_fitted_parameters(W, b, c)
    return rbm


def _set_potential(rbm, gamma_plus, gamma_minus, theta_plus, theta_minus):
    """Replace a fitted dReLU RBM's potentials (and forget its ``log Z``)."""
    rbm.gamma_plus_, rbm.gamma_minus_ = gamma_plus, gamma_minus
    rbm.theta_plus_, rbm.theta_minus_ = theta_plus, theta_minus
    rbm._forget_log_partition()


def _drelu_log_integral(a, gamma_plus, gamma_minus, theta_plus, theta_minus):
    """``log ∫ exp(-U(h) + a h) dh`` of a dReLU unit by quadrature on each
    half-line, scaled by the density's largest value (at the modes of the
    two sides)."""

    def log_density(h):
        if h >= 0:
            return -gamma_plus * h * h / 2 - theta_plus * h + a * h
        return -gamma_minus * h * h / 2 - theta_minus * h + a * h

    modes = (max((a - theta_plus) / gamma_plus, 0.0),
             min((a - theta_minus) / gamma_minus, 0.0))  # fmt: skip
    top = max(log_density(h) for h in modes)

    def density(h):
        return np.exp(log_density(h) - top)

    total = sum(
        quad(density, lower, upper, epsabs=0, epsrel=1e-13, limit=200)[0]
        for lower, upper in ((-np.inf, 0.0), (0.0, np.inf))
    )
    return np.log(total) + top


@pytest.mark.parametrize("n_hidden", [3, 4, 5])
def test_exact_log_likelihood_matches_brute_force(n_hidden):
    rbm = _model(n_hidden, seed=n_hidden)
    V = _all_codes()
    brute = _brute_log_unnormalised(V, rbm.components_, rbm.intercept_visible_,
                                    rbm.intercept_hidden_)  # fmt: skip
    brute -= logsumexp(brute)
    assert rbm.log_partition_function().method == "exact"
    np.testing.assert_allclose(rbm.score_samples(V), brute, rtol=0, atol=1e-10)
    np.testing.assert_allclose(np.exp(brute).sum(), 1.0, atol=1e-12)


@pytest.mark.parametrize("hidden_unit", ["gaussian", "relu"])
@pytest.mark.parametrize("n_hidden", [3, 5])
def test_exact_log_likelihood_with_continuous_hidden_units(hidden_unit, n_hidden):
    """The free energy's closed-form cumulants and the enumeration of the
    visible states against quadrature of every hidden integral."""
    rbm = _model(n_hidden, seed=n_hidden, scale=0.5, hidden_unit=hidden_unit)
    V = _all_codes()
    brute = _quadrature_log_unnormalised(
        V, rbm.components_, rbm.intercept_visible_, rbm.intercept_hidden_,
        hidden_unit,
    )  # fmt: skip
    brute -= logsumexp(brute)
    assert rbm.log_partition_function().method == "exact"
    np.testing.assert_allclose(rbm.score_samples(V), brute, rtol=0, atol=1e-10)


@pytest.mark.parametrize("n_hidden", [3, 4])
def test_exact_log_likelihood_with_drelu_hidden_units(n_hidden):
    """dReLU units with random potentials: the erfcx cumulants summed over
    the enumerated visible states against quadrature of every hidden
    integral."""
    rbm = _model(n_hidden, seed=20 + n_hidden, scale=0.7, hidden_unit="drelu")
    V = _all_codes()
    W3 = rbm.components_.reshape(n_hidden, L, Q)
    b2 = rbm.intercept_visible_.reshape(L, Q)
    potentials = np.array([rbm.gamma_plus_, rbm.gamma_minus_, rbm.theta_plus_,
                           rbm.theta_minus_]).T  # fmt: skip
    brute = []
    for v in V.astype(int):
        sites = np.arange(L)
        inputs = rbm.intercept_hidden_ + W3[:, sites, v].sum(axis=1)
        brute.append(b2[sites, v].sum() + sum(
            _drelu_log_integral(a, *p) for a, p in zip(inputs, potentials,
                                                         strict=True)
        ))  # fmt: skip
    brute = np.array(brute) - logsumexp(brute)
    assert rbm.log_partition_function().method == "exact"
    scores = rbm.score_samples(V)
    np.testing.assert_allclose(scores, brute, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(-rbm.free_energy(V) - logsumexp(-rbm.free_energy(V)),
                               brute, rtol=1e-10, atol=1e-10)  # fmt: skip


def _exact_gradient(rbm, X, weights):
    """The gradient of the weighted mean log-likelihood with exact
    expectations, from the estimator's own statistics: one-hot codes and
    ``transform`` (``p(h = 1 | v)``), the model term over every ``v``
    weighted by the exact ``p(v)``."""
    V = _all_codes()
    p = np.exp(rbm.score_samples(V))

    def moments(rows, mass):
        S, H = codes_one_hot(rows, Q), rbm.transform(rows)
        return (H * mass[:, None]).T @ S, mass @ S, mass @ H

    data = moments(X, weights / weights.sum())
    model = moments(V, p)
    return [d - m for d, m in zip(data, model, strict=True)]


@pytest.mark.parametrize("hidden_unit", ["bernoulli", "gaussian", "relu", "drelu"])
def test_gradient_matches_finite_differences_of_the_exact_log_likelihood(hidden_unit):
    rbm = _model(4, seed=11, scale=0.5, hidden_unit=hidden_unit)
    rng = np.random.default_rng(1)
    X = rng.integers(0, Q, size=(25, L)).astype(float)
    weights = rng.random(25)
    analytic = _exact_gradient(rbm, X, weights)
    params = [rbm.components_.copy(), rbm.intercept_visible_.copy(),
              rbm.intercept_hidden_.copy()]  # fmt: skip

    def objective(values):
        rbm._set_fitted_parameters(*values)
        return np.average(rbm.score_samples(X), weights=weights)

    step = 1e-5
    for k, name in enumerate(("W", "b", "c")):
        flat = params[k].ravel()
        for index in rng.choice(flat.size, size=min(8, flat.size), replace=False):
            values = [p.copy() for p in params]
            values[k].ravel()[index] += step
            up = objective(values)
            values[k].ravel()[index] -= 2 * step
            down = objective(values)
            numeric = (up - down) / (2 * step)
            assert abs(numeric - analytic[k].ravel()[index]) < 1e-7, (name, index)


def test_drelu_potential_gradient_matches_finite_differences():
    """The statistics the trainer's kernel steps the dReLU potential with
    (``drelu_statistics``: conditional means of ``h_+^2 / 2``, ``h_-^2 /
    2``, ``h_+``, ``h_-``), taken over the data and over every visible state
    weighted by its exact probability: their difference (model minus data)
    is the gradient of the exact weighted log-likelihood."""
    rbm = _model(3, seed=13, scale=0.6, hidden_unit="drelu")
    rng = np.random.default_rng(2)
    X = rng.integers(0, Q, size=(20, L)).astype(float)
    weights = rng.random(20)
    V = _all_codes()
    potential = potential_of(rbm)

    def statistics(rows, mass):
        A = rbm._visible_layer().hidden_input(rbm, rows)
        return drelu_statistics(A, rbm.intercept_hidden_, potential, mass)

    analytic = statistics(V, np.exp(rbm.score_samples(V))) - statistics(
        X, weights / weights.sum()
    )

    def objective(values):
        _set_potential(rbm, *values)
        return np.average(rbm.score_samples(X), weights=weights)

    step = 1e-5
    for k in range(4):
        for j in range(3):
            values = potential.copy()
            values[k, j] += step
            up = objective(values)
            values[k, j] -= 2 * step
            down = objective(values)
            numeric = (up - down) / (2 * step)
            assert abs(numeric - analytic[k, j]) < 1e-7, (k, j, numeric)


@pytest.mark.parametrize("solver", ["cd", "pcd", "cg", "sdcp", "csdcp", "pt", "cpt"])
def test_drelu_fit_trains_the_potential_and_beats_independent_sites(solver):
    """A small generated Potts family: every solver trains the dReLU
    potentials (away from the Gaussian start) and reaches a held-out exact
    log-likelihood above the independent-site model's."""
    X, *_ = make_potts(1200, 6, 3, coupling_scale=1.5, random_state=0)
    X = X.astype(float)
    train, test = X[:900], X[900:]
    rbm = CategoricalRBM(n_components=6, hidden_unit="drelu", solver=solver,
                         n_iter=40, learning_rate=0.05, batch_size=50,
                         random_state=0).fit(train)  # fmt: skip
    fields = independent_site_fields(train, 3)
    independent = fields[np.arange(6), test.astype(int)].sum(axis=1).mean()
    assert rbm.log_partition_function().method == "exact"
    # -4.31 to -4.47 by solver against -4.62.
    assert rbm.score(test) > independent + 0.1, (rbm.score(test), independent)
    moved = np.abs(potential_of(rbm) - [[1.0], [1.0], [0.0], [0.0]]).max()
    assert moved > 0.01
    assert min(rbm.gamma_plus_.min(), rbm.gamma_minus_.min()) >= MIN_GAMMA
    for name in ("gamma_plus_", "gamma_minus_", "theta_plus_", "theta_minus_"):
        assert getattr(rbm, name).shape == (6,)


def test_refit_with_another_hidden_unit_drops_the_drelu_potential():
    """A dReLU fit, then a refit of the same estimator with ReLU units: the
    potential of the first fit is gone (not read back as the ReLU model's),
    and the refit equals a fresh ReLU fit."""
    X = np.random.default_rng(0).integers(0, Q, size=(60, L)).astype(float)
    settings = dict(n_components=3, n_iter=2, random_state=0)
    rbm = CategoricalRBM(hidden_unit="drelu", **settings).fit(X)
    assert hasattr(rbm, "gamma_plus_")
    rbm.set_params(hidden_unit="relu").fit(X)
    assert not any(name.startswith(("gamma_", "theta_", "_hidden_potential"))
                   for name in vars(rbm))  # fmt: skip
    fresh = CategoricalRBM(hidden_unit="relu", **settings).fit(X)
    np.testing.assert_array_equal(rbm.transform(X), fresh.transform(X))


@pytest.mark.parametrize("solver", ["pcd", "pt", "cpt"])
def test_integer_weights_equal_repeated_rows(solver):
    """The kernel's weighted data term (and the weighted offsets, base model
    and initial fields): full-batch persistent fits with integer weights
    equal fits on the repeated rows, to rounding."""
    rng = np.random.default_rng(2)
    X = rng.integers(0, Q, size=(12, L)).astype(float)
    counts = rng.integers(1, 4, size=12)
    repeated = np.repeat(X, counts, axis=0)
    settings = dict(n_components=3, solver=solver, batch_size=64, n_iter=4,
                    learning_rate=0.1, random_state=0)  # fmt: skip
    weighted = CategoricalRBM(**settings).fit(X, sample_weight=counts)
    plain = CategoricalRBM(**settings).fit(repeated)
    for name in ("components_", "intercept_visible_", "intercept_hidden_",
                 "site_fields_", "offset_visible_"):  # fmt: skip
        np.testing.assert_allclose(
            getattr(weighted, name), getattr(plain, name), rtol=0, atol=1e-10,
            err_msg=name,
        )  # fmt: skip


def test_base_model_is_the_weighted_independent_site_model():
    rng = np.random.default_rng(3)
    X = rng.integers(0, Q, size=(50, L)).astype(float)
    w = rng.random(50)
    rbm = CategoricalRBM(n_components=2, n_iter=1, random_state=0).fit(
        X, sample_weight=w
    )
    f = np.zeros((L, Q))
    for i in range(L):
        for a in range(Q):
            f[i, a] = w[X[:, i] == a].sum() / w.sum()
    np.testing.assert_allclose(site_frequencies(X, Q, w), f, atol=1e-14)
    np.testing.assert_allclose(
        np.exp(rbm.site_fields_), (1 - 1e-3) * f + 1e-3 / Q, atol=1e-14
    )
    np.testing.assert_allclose(rbm.site_fields_, independent_site_fields(X, Q, w))


@pytest.mark.parametrize("solver", ["pcd", "csdcp"])
def test_zero_sum_gauge_is_kept_and_leaves_the_model_unchanged(solver):
    rng = np.random.default_rng(4)
    X = rng.integers(0, Q, size=(60, L)).astype(float)
    rbm = CategoricalRBM(n_components=3, solver=solver, n_iter=3, learning_rate=0.1,
                         batch_size=20, random_state=0).fit(X)  # fmt: skip
    W3 = rbm.components_.reshape(3, L, Q)
    np.testing.assert_allclose(W3.sum(axis=2), 0.0, atol=1e-12)
    V = _all_codes()
    before = rbm.score_samples(V)
    # Leave the gauge: add per-(unit, site) constants to W and move the
    # hidden bias by what keeps the model (checked independently first).
    m = rng.standard_normal((3, L, 1))
    W_new = (W3 + m).reshape(3, -1)
    c_new = rbm.intercept_hidden_ - m.sum(axis=(1, 2))
    b = rbm.intercept_visible_
    probe = CategoricalRBM(n_components=3).fit(X[:10])
    probe._set_fitted_parameters(W_new, b, c_new)
    np.testing.assert_allclose(probe.score_samples(V), before, atol=1e-10)
    # The training state of that model; the epoch's gauge fix restores it.
    rbm.components_[...] = W_new
    rbm._centred_hidden_bias[...] = c_new + W_new @ rbm.offset_visible_
    rbm._centred_visible_bias[...] = b + rbm.offset_hidden_ @ W_new
    rbm._visible_layer().end_epoch(rbm)
    rbm._publish()
    np.testing.assert_allclose(
        rbm.components_.reshape(3, L, Q).sum(axis=2), 0.0, atol=1e-12
    )
    np.testing.assert_allclose(rbm.score_samples(V), before, atol=1e-10)


@pytest.mark.parametrize(
    "method, hidden_unit",
    [("gibbs", "bernoulli"), ("pt", "bernoulli"), ("gibbs", "relu"),
     ("pt", "gaussian"), ("gibbs", "drelu"), ("pt", "drelu")],
)  # fmt: skip
def test_samples_follow_the_exact_distribution(method, hidden_unit):
    rbm = _model(3, seed=5, scale=0.8, n_sites=3, hidden_unit=hidden_unit)
    V = _all_codes(n_sites=3)
    exact = np.exp(rbm.score_samples(V))
    samples = rbm.sample(4000, n_steps=30, method=method, random_state=0)
    assert samples.shape == (4000, 3)
    index = (samples * np.array([9, 3, 1])).sum(axis=1)
    empirical = np.bincount(index, minlength=27) / 4000
    assert 0.5 * np.abs(empirical - exact).sum() < 0.05


def test_ais_lands_in_its_band_of_the_exact_value():
    rng = np.random.default_rng(6)
    n_sites, n_states = 10, 4
    X = rng.integers(0, n_states, size=(300, n_sites)).astype(float)
    X[:, 1] = X[:, 0]
    X[:, 3] = (X[:, 2] + 1) % n_states
    rbm = CategoricalRBM(n_components=12, n_iter=15, learning_rate=0.05,
                         batch_size=30, random_state=0).fit(X)  # fmt: skip
    exact = rbm.log_partition_function()
    assert exact.method == "exact"
    rbm.set_params(score_method="ais", ais_betas=3000, ais_n_chains=100)
    ais = rbm.log_partition_function()
    assert ais.method == "ais"
    assert ais.lower <= exact.log_z <= ais.upper
    assert ais.upper - ais.lower < 0.5


def _assert_ais_band_holds_exact(rbm, n_betas):
    """The AIS band of ``rbm``'s log Z (100 chains) holds its exact value and
    is narrower than half a nat."""
    exact = rbm.log_partition_function()
    assert exact.method == "exact"
    rbm.set_params(score_method="ais", ais_betas=n_betas, ais_n_chains=100)
    ais = rbm.log_partition_function()
    assert ais.lower <= exact.log_z <= ais.upper
    assert ais.upper - ais.lower < 0.5


@pytest.mark.parametrize("hidden_unit", ["gaussian", "relu", "drelu"])
def test_ais_with_continuous_hidden_units_lands_in_its_band(hidden_unit):
    rng = np.random.default_rng(6)
    X = rng.integers(0, 3, size=(300, 6)).astype(float)
    X[:, 1] = X[:, 0]
    rbm = CategoricalRBM(n_components=5, hidden_unit=hidden_unit, solver="csdcp",
                         n_iter=10, learning_rate=0.05, batch_size=30,
                         random_state=0).fit(X)  # fmt: skip
    _assert_ais_band_holds_exact(rbm, n_betas=3000)


def test_fits_are_bit_identical_for_the_same_seed():
    rng = np.random.default_rng(7)
    X = rng.integers(0, Q, size=(40, L)).astype(float)
    w = rng.random(40)
    fits = [
        CategoricalRBM(n_components=3, solver="csdcp", n_iter=3, batch_size=10,
                       l1b=0.1, l2_fields=0.01, random_state=3).fit(X, sample_weight=w)
        for _ in range(2)
    ]  # fmt: skip
    for name in ("components_", "intercept_visible_", "intercept_hidden_"):
        assert np.array_equal(getattr(fits[0], name), getattr(fits[1], name))
    assert np.array_equal(fits[0].sample(5, n_steps=5), fits[1].sample(5, n_steps=5))


def test_learns_a_coupling_the_independent_site_model_misses():
    rng = np.random.default_rng(8)
    X = rng.integers(0, Q, size=(600, 6)).astype(float)
    X[:, 1] = X[:, 0]
    rbm = CategoricalRBM(n_components=4, n_iter=30, learning_rate=0.2,
                         batch_size=30, random_state=0).fit(X)  # fmt: skip
    independent = independent_site_fields(X, Q)
    base = independent[np.arange(6), X.astype(int)].sum(axis=1).mean()
    assert rbm.score(X) > base + 0.8  # the copy is worth log 3 = 1.1 nats
    scores = rbm.contact_scores(apc=True)
    assert np.allclose(scores, scores.T)
    i, j = np.unravel_index(np.argmax(scores), scores.shape)
    assert {i, j} == {0, 1}
    J = rbm.effective_couplings()
    np.testing.assert_allclose(J, J.transpose(1, 0, 3, 2), atol=1e-12)
    assert np.all(J[np.arange(6), np.arange(6)] == 0.0)


def test_penalties_shrink_weights_and_fields():
    rng = np.random.default_rng(9)
    X = rng.integers(0, Q, size=(200, L)).astype(float)
    X[:, 1] = X[:, 0]
    settings = dict(n_components=3, n_iter=10, learning_rate=0.05, batch_size=20,
                    random_state=0)  # fmt: skip
    plain = CategoricalRBM(**settings).fit(X)
    l1b = CategoricalRBM(l1b=1.0, **settings).fit(X)
    l2 = CategoricalRBM(l2_fields=1.0, **settings).fit(X)
    assert np.abs(l1b.components_).sum() < 0.8 * np.abs(plain.components_).sum()
    fields = plain.intercept_visible_.reshape(L, Q)
    fields_l2 = l2.intercept_visible_.reshape(L, Q)
    spread = np.ptp(fields, axis=1).sum()
    assert np.ptp(fields_l2, axis=1).sum() < 0.8 * spread


def test_partial_fit_and_transform():
    rng = np.random.default_rng(10)
    X = rng.integers(0, Q, size=(40, L)).astype(float)
    rbm = CategoricalRBM(n_components=3, batch_size=10, random_state=0)
    rbm.partial_fit(X, sample_weight=np.ones(40))
    rbm.partial_fit(X)
    assert rbm.n_iter_ == 2 and len(rbm.history_["epoch"]) == 2
    H = rbm.transform(X)
    W3 = rbm.components_.reshape(3, L, Q)
    pre = rbm.intercept_hidden_ + W3[:, np.arange(L), X.astype(int)].sum(axis=2).T
    np.testing.assert_allclose(H, 1 / (1 + np.exp(-pre)), atol=1e-12)


# ----------------------------------------------------------------- bad input
@pytest.fixture(scope="module")
def fitted():
    rng = np.random.default_rng(12)
    X = rng.integers(0, Q, size=(40, L)).astype(float)
    X[:Q] = np.arange(Q)[:, None]
    return CategoricalRBM(n_components=3, n_iter=1, random_state=0).fit(X), X


@pytest.mark.parametrize(
    "value, match",
    [(3.0, r"integer state codes 0 to 2.*3\.0 at row 2, column 1"),
     (-1.0, r"integer state codes.*-1\.0"), (0.5, r"non-integer value 0\.5"),
     (np.nan, "NaN")],
)  # fmt: skip
def test_bad_codes_are_refused(fitted, value, match):
    rbm, X = fitted
    bad = X.copy()
    bad[2, 1] = value
    for method in (rbm.score_samples, rbm.transform, rbm.free_energy):
        with pytest.raises(ValueError, match=match):
            method(bad)
    if not np.isnan(value) and value != 3.0:
        with pytest.raises(ValueError, match=match):
            CategoricalRBM(n_components=2, n_states=Q).fit(bad)
    before = bad.copy()
    with pytest.raises(ValueError):
        CategoricalRBM(n_components=2, n_states=Q).fit(bad)
    np.testing.assert_array_equal(bad, before)  # the input is not touched


def test_wrong_width_and_sparse_input_are_refused(fitted):
    import scipy.sparse as sp

    rbm, X = fitted
    with pytest.raises(ValueError, match="features"):
        rbm.score(X[:, :3])
    with pytest.raises(TypeError, match=r"toarray\(\)"):
        CategoricalRBM(n_components=2).fit(sp.csr_matrix(X))


@pytest.mark.parametrize(
    "weights, match",
    [(-1.0, "non-negative"), (np.nan, "finite"), ("short", r"shape \(40,\)")],
)
def test_bad_sample_weights_are_refused(fitted, weights, match):
    _, X = fitted
    w = np.ones(40)
    if weights == "short":
        w = w[:-1]
    else:
        w[3] = weights
    for method in ("fit", "partial_fit"):
        rbm = CategoricalRBM(n_components=2)
        with pytest.raises(ValueError, match=match):
            getattr(rbm, method)(X, sample_weight=w)
        assert not hasattr(rbm, "components_")


# ------------------------------------------- states per column, one-hot input
SITE_STATES = np.array([2, 4, 3, 3])


def _ragged_codes(n_rows, seed):
    rng = np.random.default_rng(seed)
    X = np.column_stack([rng.integers(0, q, n_rows) for q in SITE_STATES])
    X[:, 2] = X[:, 1] % 3  # a coupling to learn
    return X.astype(float)


def _ragged_states():
    return np.array(list(itertools.product(*(range(q) for q in SITE_STATES))), float)


@pytest.mark.parametrize("hidden_unit", ["bernoulli", "drelu"])
def test_states_per_column_exact_log_likelihood(hidden_unit):
    """Columns with 2, 4, 3 and 3 states: the exact log-likelihood against
    brute force over the real states only (every binary ``h``; dReLU
    integrals by quadrature), and the padded states keep weight 0."""
    X = _ragged_codes(200, 0)
    rbm = CategoricalRBM(n_components=3, n_states=SITE_STATES, hidden_unit=hidden_unit,
                         n_iter=5, batch_size=20, l2_fields=0.05, learning_rate=0.1,
                         random_state=0).fit(X)  # fmt: skip
    assert list(rbm.n_states_) == [2, 4, 3, 3]
    W3 = rbm.components_.reshape(3, 4, 4)
    padded = ~state_mask(SITE_STATES, 4)
    assert np.all(W3[:, padded] == 0.0)
    np.testing.assert_allclose(W3.sum(axis=2), 0.0, atol=1e-12)
    V = _ragged_states()
    b2 = rbm.intercept_visible_.reshape(4, 4)
    sites = np.arange(4)
    if hidden_unit == "bernoulli":
        H = np.array(list(itertools.product((0.0, 1.0), repeat=3)))
        brute = [logsumexp(b2[sites, v].sum() + H @ (rbm.intercept_hidden_
                 + W3[:, sites, v].sum(axis=1))) for v in V.astype(int)]  # fmt: skip
    else:
        potentials = potential_of(rbm).T
        brute = [b2[sites, v].sum() + sum(
            _drelu_log_integral(a, *p) for a, p in zip(
                rbm.intercept_hidden_ + W3[:, sites, v].sum(axis=1), potentials,
                strict=True))
            for v in V.astype(int)]  # fmt: skip
    brute = np.array(brute) - logsumexp(brute)
    assert rbm.log_partition_function().method == "exact"
    np.testing.assert_allclose(rbm.score_samples(V), brute, rtol=1e-10, atol=1e-10)
    samples = rbm.sample(500, n_steps=3, random_state=0)
    assert np.all(samples < SITE_STATES)
    J = rbm.effective_couplings()  # padded states couple to nothing
    assert J.shape == (4, 4, 4, 4)
    assert np.all(J[0, :, 2:] == 0.0) and np.all(J[:, 2, :, 3] == 0.0)


@pytest.mark.parametrize("solver", ["pcd", "csdcp", "cpt"])
@pytest.mark.parametrize("hidden_unit", ["bernoulli", "drelu"])
def test_one_hot_input_gives_the_fit_of_the_codes(solver, hidden_unit):
    X = _ragged_codes(120, 1)
    w = np.random.default_rng(1).random(120)
    settings = dict(n_components=3, n_states=SITE_STATES, hidden_unit=hidden_unit,
                    solver=solver, n_iter=3, batch_size=20, random_state=0)  # fmt: skip
    codes = CategoricalRBM(**settings).fit(X, sample_weight=w)
    onehot = encode_one_hot(X, SITE_STATES)
    assert onehot.shape == (120, 12)
    for rows in (onehot, sp.csr_matrix(onehot)):
        one_hot = CategoricalRBM(one_hot=True, **settings).fit(rows, sample_weight=w)
        for name in ("components_", "intercept_visible_", "intercept_hidden_"):
            assert np.array_equal(getattr(one_hot, name), getattr(codes, name)), name
        np.testing.assert_array_equal(one_hot.transform(rows), codes.transform(X))
        np.testing.assert_array_equal(one_hot.score_samples(rows),
                                      codes.score_samples(X))  # fmt: skip
    drawn = one_hot.sample(4, n_steps=3, random_state=0)
    np.testing.assert_array_equal(
        drawn, encode_one_hot(codes.sample(4, n_steps=3, random_state=0), SITE_STATES)
    )


@pytest.mark.parametrize(
    "edit, match",
    [((2, 1, 2.0), r"0 or 1; found 2\.0 at row 2, column 1"),
     ((3, 3, 1.0), r"row 3 has 2 ones in the block of site 1 \(columns 2 to 5\)"),
     ((4, 0, 0.0), r"row 4 has 0 ones in the block of site 0 \(columns 0 to 1\)")],
)  # fmt: skip
def test_one_hot_input_that_is_not_one_hot_is_refused(edit, match):
    X = _ragged_codes(30, 2)
    X[4, 0] = 0  # row 4's site 0 is the one edited to all zeros
    onehot = encode_one_hot(X, SITE_STATES)
    rbm = CategoricalRBM(n_components=2, n_states=SITE_STATES, one_hot=True, n_iter=1,
                         random_state=0).fit(onehot)  # fmt: skip
    r, column, value = edit
    bad = onehot.copy()
    bad[r, column] = value
    for rows in (bad, sp.csr_matrix(bad)):
        with pytest.raises(ValueError, match=match):
            CategoricalRBM(n_components=2, n_states=SITE_STATES, one_hot=True).fit(rows)
        for method in (rbm.score_samples, rbm.transform):
            with pytest.raises(ValueError, match=match):
                method(rows)


def test_states_per_column_bad_input_is_refused():
    X = _ragged_codes(30, 3)
    bad = X.copy()
    bad[5, 0] = 2  # column 0 has 2 states
    with pytest.raises(ValueError, match=r"0 to 1 in column 0 \(n_states\[0\]=2\)"
                       r".*row 5, column 0"):  # fmt: skip
        CategoricalRBM(n_components=2, n_states=SITE_STATES).fit(bad)
    with pytest.raises(ValueError, match="n_states has 4 entries.*X has 3 columns"):
        CategoricalRBM(n_components=2, n_states=SITE_STATES).fit(X[:, :3])
    onehot = encode_one_hot(X, SITE_STATES)
    with pytest.raises(ValueError, match=r"summing to 12\) but X has 11 columns"):
        CategoricalRBM(n_components=2, n_states=SITE_STATES, one_hot=True).fit(
            onehot[:, 1:]
        )
    with pytest.raises(ValueError, match="one_hot=True needs n_states"):
        CategoricalRBM(n_components=2, one_hot=True).fit(onehot)
    with pytest.raises(ValueError, match="ints >= 2"):
        CategoricalRBM(n_components=2, n_states=[2, 1, 3, 3]).fit(X)
    rbm = CategoricalRBM(n_components=2, n_states=SITE_STATES, one_hot=True,
                         n_iter=1).fit(onehot)  # fmt: skip
    with pytest.raises(ValueError, match="features"):
        rbm.score(onehot[:, :11])


@pytest.mark.parametrize("hidden_unit", ["bernoulli", "drelu"])
def test_states_per_column_ais_lands_in_its_band(hidden_unit):
    """AIS from the independent-site model with padded states (their fields
    far below the softmax's clamp) against the exact log Z."""
    X = _ragged_codes(300, 4)
    rbm = CategoricalRBM(n_components=4, n_states=SITE_STATES, hidden_unit=hidden_unit,
                         solver="pt", n_iter=8, learning_rate=0.1, batch_size=30,
                         random_state=0).fit(X)  # fmt: skip
    _assert_ais_band_holds_exact(rbm, n_betas=2000)


# --------------------------------- the caller's data and the work (issue 35)
def _tiny_codes(n=60, seed=0):
    return np.random.default_rng(seed).integers(0, Q, size=(n, L)).astype(float)


def _with_stored_zeros(codes):
    """The one-hot CSR matrix of ``codes`` with three explicit zeros stored."""
    dense = encode_one_hot(codes, [Q] * L)
    rows, columns = np.nonzero(dense)
    zero_rows, zero_columns = np.nonzero(dense[:3] == 0)
    picks = [np.flatnonzero(zero_rows == r)[0] for r in range(3)]
    matrix = sp.csr_matrix(
        (np.r_[dense[rows, columns], np.zeros(3)],
         (np.r_[rows, zero_rows[picks]], np.r_[columns, zero_columns[picks]])),
        shape=dense.shape,
    )  # fmt: skip
    assert matrix.nnz == rows.size + 3
    return matrix, dense


@pytest.mark.parametrize("read_only", [False, True], ids=["shared", "read-only"])
def test_one_hot_sparse_input_with_explicit_zeros_is_not_rewritten(read_only):
    """fit and transform read a CSR matrix with stored zeros as its dense
    rows, without eliminating the zeros from the caller's matrix (or
    failing on a read-only one)."""
    X, dense = _with_stored_zeros(_tiny_codes())
    before = [X.data.copy(), X.indices.copy(), X.indptr.copy()]
    if read_only:
        for array in (X.data, X.indices, X.indptr):
            array.setflags(write=False)
    params = dict(n_states=Q, one_hot=True, n_iter=2, random_state=0)
    rbm = CategoricalRBM(4, **params).fit(X)
    H = rbm.transform(X)
    for old, new in zip(before, [X.data, X.indices, X.indptr], strict=True):
        assert np.array_equal(old, new)
    reference = CategoricalRBM(4, **params).fit(dense)
    assert np.array_equal(reference.components_, rbm.components_)
    assert np.array_equal(reference.transform(dense), H)


def test_init_must_be_a_categorical_rbm():
    from sklearn_rbm import DCPBernoulliRBM

    codes = _tiny_codes()
    binary = DCPBernoulliRBM(4, n_iter=1, random_state=0)
    binary.fit(encode_one_hot(codes, [Q] * L))  # the same L * q width
    with pytest.raises(TypeError, match="init must be a fitted CategoricalRBM"):
        CategoricalRBM(4, n_states=Q, init=binary, n_iter=1).fit(codes)
    source = CategoricalRBM(4, n_states=Q, n_iter=1, random_state=0).fit(codes)
    CategoricalRBM(4, n_states=Q, init=source, n_iter=1).fit(codes)


def test_sample_refuses_unbounded_work():
    rbm = CategoricalRBM(4, n_states=Q, n_iter=1, random_state=0).fit(_tiny_codes())
    with pytest.raises(ValueError, match=r"n_steps=1000000000.*limit"):
        rbm.sample(3, n_steps=10**9)
    with pytest.raises(ValueError, match=r"n_steps=1000000000.*limit"):
        rbm.sample(3, n_steps=10**9, method="pt")
    assert rbm.sample(3, n_steps=5, random_state=0).shape == (3, L)


def test_zero_stride_codes_of_a_billion_rows_are_refused_before_any_copy():
    """np.broadcast_to rows cost nothing until copied: the size is checked on
    the shape, under the battery's memory limits (no allocation is tried)."""
    from contract import _Guards

    codes = _tiny_codes()
    rbm = CategoricalRBM(4, n_states=Q, n_iter=1, random_state=0).fit(codes)
    for dtype in (np.float64, np.int64):
        huge = np.broadcast_to(codes[:1].astype(dtype), (10**9, L))
        unfitted = CategoricalRBM(4, n_states=Q, n_iter=1)
        for method in (unfitted.fit, rbm.transform, rbm.score_samples):
            with _Guards(), pytest.raises(MemoryError, match="X of shape"):
                method(huge)
