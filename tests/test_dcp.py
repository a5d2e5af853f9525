"""DCPBernoulliRBM: the update rules, Upadhya & Sastry's (2017) small-data
results, the scikit-learn surface and bad input. (The generic properties --
bit-identity across processes, float32, sparse and memory-mapped input,
persistence -- run over every solver in tests/test_common.py.)"""

import itertools

import numpy as np
import pytest
from scipy.special import expit, logsumexp
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import RidgeClassifier
from sklearn.model_selection import GridSearchCV
from sklearn.pipeline import Pipeline

from sklearn_rbm import DCPBernoulliRBM
from sklearn_rbm._rbm.kernels import minibatch_update_
from sklearn_rbm._rbm.layers.base import weight_step_
from sklearn_rbm._rbm.layers.bernoulli import BernoulliUnits
from sklearn_rbm.datasets import (
    load_binary_digits,
    make_bars_and_stripes,
    make_shifting_bar,
)

from instances import solvers_of

SOLVERS = ["cd", "pcd", "cg", "sdcp", "csdcp"]


# --------------------------------------------------------------- the kernel
def exact_statistics(W, b, c, mu, lam):
    """E_model[(h - lam)(v - mu)^T], E[v], E[h] of a tiny RBM by enumeration."""
    V = np.array(list(itertools.product([0.0, 1.0], repeat=W.shape[1])))
    log_p = V @ b + np.logaddexp(0.0, V @ W.T + c).sum(axis=1)
    p = np.exp(log_p - logsumexp(log_p))
    H = expit(V @ W.T + c)
    return ((H - lam) * p[:, None]).T @ (V - mu), p @ V, p @ H


@pytest.mark.parametrize("centred", [False, True])
def test_long_chain_update_follows_the_exact_gradient(centred):
    """With many Gibbs steps, one update is eta times the exact (centred) gradient."""
    rng = np.random.default_rng(0)
    n_hidden, n_visible, n_rows = 3, 5, 20_000
    W = 0.5 * rng.standard_normal((n_hidden, n_visible))
    b, c = rng.standard_normal(n_visible), rng.standard_normal(n_hidden)
    V = (rng.random((n_rows, n_visible)) < 0.3).astype(float)
    mu = V.mean(axis=0) if centred else np.zeros(n_visible)
    lam = np.full(n_hidden, 0.5 if centred else 0.0)
    # The kernel's biases are the centred ones; the uncentred model is (W, b, c).
    b_centred, c_centred = b + lam @ W, c + W @ mu
    H_data = expit(V @ W.T + c)
    model_W, model_v, model_h = exact_statistics(W, b, c, mu, lam)
    expected_W = (H_data - lam).T @ (V - mu) / n_rows - model_W
    expected_b = V.mean(axis=0) - model_v
    expected_c = H_data.mean(axis=0) - model_h

    eta = 1e-6
    W_new, b_new, c_new = W.copy(), b_centred.copy(), c_centred.copy()
    minibatch_update_(
        V, W_new, BernoulliUnits(b_new, np.zeros_like(b)),
        BernoulliUnits(c_new, np.zeros_like(c)), (mu.copy(), lam.copy(), 0.0, 0.0),
        (np.zeros((n_rows, n_hidden)), False, np.zeros(0, dtype=np.int64)),
        (np.empty(0), np.zeros_like(b)), (1, 50), (eta, 0.0, 0.0),
        (np.zeros_like(W), np.empty_like(W)), np.random.default_rng(1), np.empty(0),
    )  # fmt: skip
    tolerance = 4.0 / np.sqrt(n_rows)  # Monte Carlo error of 20,000 chains
    np.testing.assert_allclose((W_new - W) / eta, expected_W, atol=tolerance)
    np.testing.assert_allclose((b_new - b_centred) / eta, expected_b, atol=tolerance)
    np.testing.assert_allclose((c_new - c_centred) / eta, expected_c, atol=tolerance)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("use_data_term", [False, True])
@pytest.mark.parametrize("momentum, decay", [(0.0, 0.0), (0.0, 0.01), (0.9, 0.01)])
def test_weight_step_matches_its_formula(dtype, use_data_term, momentum, decay):
    """The GEMM-fused weight step equals the textbook momentum / decay update."""
    rng = np.random.default_rng(0)
    n_hidden, n_visible, n_data, n_chains = 4, 6, 5, 3
    W = rng.standard_normal((n_hidden, n_visible)).astype(dtype)
    velocity = rng.standard_normal(W.shape).astype(dtype)
    H_data, V_data = (rng.random((n_data, k)).astype(dtype) for k in W.shape)
    H_model, V_model = (rng.random((n_chains, k)).astype(dtype) for k in W.shape)
    data_term = (H_data.T @ V_data) if use_data_term else np.full_like(W, np.nan)
    rate = 0.1
    gradient = H_data.T @ V_data / n_data - H_model.T @ V_model / n_chains
    expected_velocity = momentum * velocity + rate * (gradient - decay * W)
    expected_W = W + expected_velocity

    units = BernoulliUnits(np.zeros(n_visible, dtype), np.zeros(n_visible, dtype))
    # A kept data term is the data product of an earlier inner iteration.
    terms = (data_term, use_data_term, False)
    data = (V_data, V_data, H_data, None, None)
    chain = (V_model, H_model, None, None, n_chains)
    centring = (np.zeros(n_visible, dtype), np.zeros(n_hidden, dtype), False)
    weight_step_(
        units, None, W, velocity, terms, data, chain, centring, (rate, momentum, decay)
    )
    tolerance = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(W, expected_W, rtol=tolerance, atol=tolerance)
    if momentum > 0:
        np.testing.assert_allclose(velocity, expected_velocity, rtol=tolerance)


def test_sdcp_with_one_inner_step_is_cd():
    X = make_bars_and_stripes(60, random_state=0)
    params = dict(
        n_components=5, n_gibbs_steps=3, n_iter=4, batch_size=20, random_state=0
    )
    cd = DCPBernoulliRBM(solver="cd", **params).fit(X)
    sdcp = DCPBernoulliRBM(solver="sdcp", n_inner_steps=1, **params).fit(X)
    np.testing.assert_array_equal(cd.components_, sdcp.components_)


def test_centred_solver_exposes_the_equivalent_uncentred_rbm():
    X = make_bars_and_stripes(100, random_state=0)
    rbm = DCPBernoulliRBM(n_components=6, solver="csdcp", n_iter=5, random_state=0).fit(
        X
    )
    assert np.any(rbm.offset_visible_ != 0) and np.any(rbm.offset_hidden_ != 0)
    W, mu, lam = rbm.components_, rbm.offset_visible_, rbm.offset_hidden_
    # p(h=1|v) = sigmoid(W (v - mu) + c_centred): the same as the public model's.
    centred_h = expit((X - mu) @ W.T + rbm._centred_hidden_bias)
    np.testing.assert_allclose(rbm.transform(X), centred_h, atol=1e-12)
    H = (np.random.default_rng(0).random((7, 6)) < 0.5).astype(float)
    centred_v = expit((H - lam) @ W + rbm._centred_visible_bias)
    np.testing.assert_allclose(
        expit(H @ W + rbm.intercept_visible_), centred_v, atol=1e-12
    )


# ------------------------- Upadhya & Sastry's (2017) small-data results
def mean_final_atll(X, solver, n_epochs, learning_rate, seeds=(0, 1, 2)):
    """Mean exact average log-likelihood over seeds, Upadhya & Sastry's
    protocol."""
    K = 12 if solver in ("cd", "pcd", "cg") else 4  # equal cost: d * K' = K
    scores = []
    for seed in seeds:
        rbm = DCPBernoulliRBM(
            n_components=4, solver=solver, n_gibbs_steps=K,
            n_inner_steps=3 if solver.endswith("dcp") else None,
            learning_rate=learning_rate, batch_size=X.shape[0], n_iter=n_epochs,
            random_state=seed,
        ).fit(X)  # fmt: skip
        scores.append(rbm.score(X))
    return np.mean(scores)


def test_dcp_solvers_escape_where_cd_and_pcd_stall_on_shifting_bar():
    """Upadhya & Sastry, Fig. 1: CD and PCD stall near -3.15, (C)S-DCP get close
    to the optimum -ln 9 = -2.197 (4 hidden units, full batch, eta = 0.3)."""
    X = make_shifting_bar()
    atll = {s: mean_final_atll(X, s, 5000, 0.3) for s in ("cd", "pcd", "sdcp", "csdcp")}
    assert -3.2 < atll["cd"] < -3.05 and -3.2 < atll["pcd"] < -3.05
    assert atll["csdcp"] > -2.45
    assert atll["sdcp"] > -2.85
    assert min(atll["sdcp"], atll["csdcp"]) > max(atll["cd"], atll["pcd"]) + 0.3


def test_dcp_solvers_learn_bars_and_stripes_faster_than_cd():
    """Bars & stripes (14 patterns): after 1,000 epochs the DCP solvers are well
    ahead of CD at equal cost (measured over 5 seeds: CD -4.61, S-DCP -3.75,
    CS-DCP -3.61). -ln 14 = -2.64 bounds every model; with 4 hidden units
    exact-gradient ascent reaches about -3.3 (see the user guide)."""
    X = make_bars_and_stripes()
    atll = {s: mean_final_atll(X, s, 1000, 0.3) for s in ("cd", "sdcp", "csdcp")}
    assert atll["csdcp"] > -3.9 and atll["sdcp"] > -4.0
    assert min(atll["sdcp"], atll["csdcp"]) > atll["cd"] + 0.5


# ------------------------------------------------------ scikit-learn surface
@pytest.fixture(scope="module")
def digits():
    X, y = load_binary_digits()
    return X, y


def test_pipeline_grid_search_over_every_solver(digits):
    """The solver is a hyperparameter like any other: a grid search over all
    of them in a Pipeline fits each, and every one gives features that carry
    the digit identity (chance 0.1; measured 0.53-0.68 per solver, 0.81 held
    out)."""
    X, y = digits
    pipe = Pipeline(
        [
            ("rbm", DCPBernoulliRBM(32, batch_size=10, n_iter=5, random_state=0)),
            ("clf", RidgeClassifier()),
        ]
    )
    solvers = sorted(solvers_of(DCPBernoulliRBM))
    grid = GridSearchCV(pipe, {"rbm__solver": solvers}, cv=2).fit(X[:600], y[:600])
    assert [p["rbm__solver"] for p in grid.cv_results_["params"]] == solvers
    assert np.all(grid.cv_results_["mean_test_score"] > 0.4)
    assert grid.score(X[600:900], y[600:900]) > 0.6


@pytest.mark.parametrize("solver", SOLVERS)
def test_fit_then_partial_fit_equals_partial_fit_epochs(solver):
    X = make_bars_and_stripes(50, random_state=1)
    params = dict(n_components=4, solver=solver, batch_size=16, random_state=3)
    fitted = DCPBernoulliRBM(n_iter=3, **params).fit(X)
    stepped = DCPBernoulliRBM(**params)
    for _ in range(3):
        assert stepped.partial_fit(X) is stepped
    np.testing.assert_array_equal(fitted.components_, stepped.components_)
    np.testing.assert_array_equal(fitted.intercept_visible_, stepped.intercept_visible_)
    assert stepped.n_iter_ == 3


def test_score_is_the_exact_log_likelihood():
    X = make_shifting_bar()
    rbm = DCPBernoulliRBM(n_components=3, n_iter=50, batch_size=9, random_state=0).fit(
        X
    )
    V = np.array(list(itertools.product([0.0, 1.0], repeat=9)))
    log_p = V @ rbm.intercept_visible_ + np.logaddexp(
        0.0, V @ rbm.components_.T + rbm.intercept_hidden_
    ).sum(axis=1)
    log_p -= logsumexp(log_p)
    rows = (X @ (2 ** np.arange(8, -1, -1))).astype(int)
    np.testing.assert_allclose(rbm.score_samples(X), log_p[rows], atol=1e-10)
    assert rbm.log_partition_function().method == "exact"


def test_ais_score_is_cached_and_row_independent(digits):
    X = digits[0]
    rbm = DCPBernoulliRBM(
        n_components=18, n_iter=2, score_method="ais", ais_betas=200, random_state=0
    ).fit(X)
    first = rbm.score_samples(X[:10])
    assert rbm.log_partition_function() is rbm.log_partition_function()
    np.testing.assert_array_equal(rbm.score_samples(X[5:10]), first[5:])
    # Exact for comparison (18 hidden units): AIS must be close.
    exact = rbm.set_params(score_method="exact").score(X[:10])
    assert exact == pytest.approx(first.mean(), abs=0.5)


def test_further_training_invalidates_the_cached_log_partition(digits):
    X = digits[0]
    rbm = DCPBernoulliRBM(n_components=8, n_iter=1, random_state=0).fit(X)
    before = rbm.log_partition_function()
    rbm.partial_fit(X)
    assert rbm.log_partition_function() != before


def test_sample_and_gibbs_are_binary_and_reproducible(digits):
    X = digits[0]
    rbm = DCPBernoulliRBM(n_components=16, n_iter=3, random_state=0).fit(X)
    samples = rbm.sample(5, n_steps=20)
    assert samples.shape == (5, 64) and set(np.unique(samples)) <= {0.0, 1.0}
    np.testing.assert_array_equal(samples, rbm.sample(5, n_steps=20))
    stepped = rbm.gibbs(X[:4])
    assert stepped.shape == (4, 64) and set(np.unique(stepped)) <= {0.0, 1.0}


def test_init_starts_from_another_fitted_rbm(digits):
    X = digits[0]
    source = DCPBernoulliRBM(n_components=8, n_iter=2, random_state=0).fit(X)
    warm = DCPBernoulliRBM(n_components=8, solver="csdcp", n_iter=0, init=source).fit(X)
    np.testing.assert_allclose(warm.components_, source.components_)
    np.testing.assert_allclose(
        warm.intercept_visible_, source.intercept_visible_, atol=1e-12
    )
    np.testing.assert_allclose(
        warm.intercept_hidden_, source.intercept_hidden_, atol=1e-12
    )
    with pytest.raises(ValueError, match="init was fitted on 64 features but X has 10"):
        DCPBernoulliRBM(n_components=8, init=source).fit(X[:, :10])
    with pytest.raises(ValueError, match="init has 8 hidden units but n_components=5"):
        DCPBernoulliRBM(n_components=5, init=source).fit(X)


def test_early_stopping_keeps_the_best_model(digits):
    X = digits[0]
    rbm = DCPBernoulliRBM(
        n_components=8, n_iter=40, learning_rate=0.5, early_stopping=True,
        n_iter_no_change=2, random_state=0,
    ).fit(X)  # fmt: skip
    assert rbm.n_iter_ < 40
    assert rbm.best_validation_score_ == max(rbm.history_["validation_log_likelihood"])


def test_verbose_reports_each_epoch(digits, capsys):
    X = digits[0]
    DCPBernoulliRBM(
        n_components=4, n_iter=2, verbose=1, validation_fraction=0.2, random_state=0
    ).fit(X)
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2
    assert "epoch 2" in lines[1] and "held-out" in lines[1]


def test_feature_names_and_pandas_output(digits):
    pd = pytest.importorskip("pandas")
    X = digits[0]
    rbm = DCPBernoulliRBM(n_components=3, n_iter=1, random_state=0).set_output(
        transform="pandas"
    )
    out = rbm.fit_transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == [
        "dcpbernoullirbm0",
        "dcpbernoullirbm1",
        "dcpbernoullirbm2",
    ]


def test_unused_solver_settings_warn():
    X = make_shifting_bar()
    with pytest.warns(UserWarning, match="solver='cd' does not use n_inner_steps"):
        DCPBernoulliRBM(n_components=2, solver="cd", n_inner_steps=3, n_iter=1).fit(X)
    with pytest.warns(UserWarning, match="centering_rate_visible"):
        DCPBernoulliRBM(
            n_components=2, solver="pcd", centering_rate_visible=0.1, n_iter=1
        ).fit(X)


# ------------------------------------------------------------- bad input
@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_input_is_rejected(bad, digits):
    X = digits[0][:50].copy()
    X[3, 7] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        DCPBernoulliRBM(n_components=4).fit(X)


def test_wrong_number_of_features_at_query_time(digits):
    X = digits[0]
    rbm = DCPBernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(X)
    for method in (rbm.transform, rbm.score, rbm.score_samples, rbm.gibbs):
        with pytest.raises(
            ValueError, match="63 features, but DCPBernoulliRBM is expecting 64"
        ):
            method(X[:, :63])


def test_empty_and_single_sample_input(digits):
    X = digits[0]
    with pytest.raises(ValueError, match="0 sample"):
        DCPBernoulliRBM(n_components=4).fit(X[:0])
    one = DCPBernoulliRBM(n_components=4, n_iter=2, random_state=0).fit(X[:1])
    # The base-rate start gives each of the row's pixels probability 1 - 1e-3:
    # the one row is nearly certain (exact log-likelihood, 4 hidden units),
    # any other row nearly impossible.
    assert one.score(X[:1]) > -1.0
    assert one.score(X[1:2]) < -100.0


@pytest.mark.parametrize(
    "params, message",
    [
        ({"n_components": 0}, "n_components"),
        ({"batch_size": 0}, "batch_size"),
        ({"solver": "adam"}, "solver.*'cd'"),
        ({"learning_rate": -1.0}, "learning_rate"),
    ],
)
def test_invalid_hyperparameters(params, message, digits):
    with pytest.raises(ValueError, match=message):
        DCPBernoulliRBM(**params).fit(digits[0])


def test_exact_score_on_a_model_too_large_to_enumerate():
    rng = np.random.default_rng(0)
    X = (rng.random((40, 40)) < 0.5).astype(float)
    rbm = DCPBernoulliRBM(
        n_components=35, n_iter=1, score_method="exact", random_state=0
    ).fit(X)
    with pytest.raises(ValueError, match="2 \\*\\* 35 states.*Use score_method='ais'"):
        rbm.score(X)


def test_diverging_learning_rate_raises_and_keeps_finite_parameters(digits):
    X = digits[0]
    rbm = DCPBernoulliRBM(n_components=8, learning_rate=1e12, n_iter=3, random_state=0)
    with pytest.raises(FloatingPointError, match="learning_rate=1e\\+12"):
        rbm.fit(X)
    assert np.all(np.isfinite(rbm.components_))
    assert np.abs(rbm.components_).max() < 1e8


def test_grey_levels_train_but_score_warns(digits):
    X = digits[0] * 0.8  # values in [0, 1] that are not binary
    rbm = DCPBernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(X)
    with pytest.warns(UserWarning, match="only defined for binary data"):
        rbm.score(X)


def test_not_fitted():
    with pytest.raises(NotFittedError):
        DCPBernoulliRBM().transform(np.zeros((2, 3)))
