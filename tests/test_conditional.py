"""ConditionalRBMRegressor: gradients against finite differences of a
brute-force conditional likelihood, inference and scores against enumeration,
Ping & Ihler's (2017) completion result at smoke size, the defaults against
per-output logistic regression, the scikit-learn surface and bad input."""

import itertools
import re
import signal
import warnings

import numpy as np
import pytest
from scipy.special import expit, logsumexp
from sklearn.datasets import make_multilabel_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import GridSearchCV

from sklearn_rbm import ConditionalRBMRegressor
from sklearn_rbm._conditional import bp_kernels, solvers, start
from sklearn_rbm._conditional.solvers import TrainingState, gradient
from sklearn_rbm._core.sklearn_compat import InvalidParameterError
from sklearn_rbm.datasets import flip_pixels, load_binary_digits, occlude_patches

SOLVERS = ["cd", "cd-percloss", "mf", "bp", "mssvm", "lssvm"]
PARAMETERS = ["components_", "coef_", "hidden_coef_", "intercept_", "intercept_hidden_"]


# ------------------------------------------------------ brute-force model
def all_states(n_units):
    return np.array(list(itertools.product([0.0, 1.0], repeat=n_units)))


def joint_scores(params, x):
    """``-E(v, h, x)`` for every (v, h) pair: rows v, columns h."""
    W, Wvx, Whx, b, c = params
    V, H = all_states(W.shape[1]), all_states(W.shape[0])
    b1, b2 = b + Wvx @ x, c + Whx @ x
    return (V @ b1)[:, None] + (H @ b2)[None, :] + V @ W.T @ H.T


def brute_log_likelihood(params, X, Y):
    """Mean ``log p(y | x)`` by summing ``exp(-E)`` over every (v, h)."""
    V = all_states(params[0].shape[1])
    total = 0.0
    for x, y in zip(X, Y, strict=True):
        scores = joint_scores(params, x)
        row = np.flatnonzero((V == y).all(axis=1))[0]
        total += logsumexp(scores[row]) - logsumexp(scores)
    return total / len(X)


def brute_marginals(params, x):
    scores = joint_scores(params, x)
    p = np.exp(scores - logsumexp(scores)).sum(axis=1)
    return p @ all_states(params[0].shape[1])


def random_params(rng, n_hidden, n_outputs, n_features, scale=1.0):
    return [
        scale * rng.standard_normal((n_hidden, n_outputs)),
        scale * rng.standard_normal((n_outputs, n_features)),
        scale * rng.standard_normal((n_hidden, n_features)),
        scale * rng.standard_normal(n_outputs),
        scale * rng.standard_normal(n_hidden),
    ]


def random_data(rng, n_samples, n_features, n_outputs):
    X = rng.standard_normal((n_samples, n_features))
    Y = (rng.random((n_samples, n_outputs)) < 0.5).astype(float)
    return X, Y


def model_with(params, X, Y, **kwargs):
    """An estimator holding ``params`` (fitted for zero epochs, then set)."""
    kwargs = {"n_iter": 0, "random_state": 0, "inference_tol": 1e-12, **kwargs}
    est = ConditionalRBMRegressor(n_components=params[0].shape[0], **kwargs)
    est.fit(X, Y)
    for name, value in zip(PARAMETERS, params, strict=True):
        setattr(est, name, np.array(value, dtype=float))
    est.inference_max_iter_ = 200
    return est


def finite_difference_gradient(params, X, Y, eps=1e-5):
    gradient = []
    for k, p in enumerate(params):
        g = np.zeros_like(p)
        for idx in np.ndindex(p.shape):
            shifted = [q.copy() for q in params]
            shifted[k][idx] += eps
            up = brute_log_likelihood(shifted, X, Y)
            shifted[k][idx] -= 2 * eps
            down = brute_log_likelihood(shifted, X, Y)
            g[idx] = (up - down) / (2 * eps)
        gradient.append(g)
    return gradient


# ----------------------------------------------------------- gradients
def solver_step(est, X, Y, max_iter=200, rng=None):
    """One step of the estimator's solver on ``(X, Y)`` with learning rate 1
    and the estimator's parameters: the parameter change (the ascent
    direction) and the rows it learnt from."""
    parameters = est._parameters()
    state = TrainingState(
        parameters, 1.0, est.n_gibbs_steps, est.chain_start,
        float(est.inference_tol), float(est.inference_damping),
        np.random.RandomState(0), rng, max_iter=max_iter,
    )  # fmt: skip
    before = [p.copy() for p in parameters]
    solvers.SOLVERS[est.solver].make_step(state)((X, Y))
    change = [p - q for p, q in zip(parameters, before, strict=True)]
    return change, state.n_rows_used


def exact_expectations(params, X):
    """``E[v]``, ``E[h]`` and ``sum_rows E[h v^T]`` of each row by enumeration."""
    V, H = all_states(params[0].shape[1]), all_states(params[0].shape[0])
    visible, hidden, pairwise = [], [], 0.0
    for x in X:
        scores = joint_scores(params, x)
        p = np.exp(scores - logsumexp(scores))
        visible.append(p.sum(axis=1) @ V)
        hidden.append(p.sum(axis=0) @ H)
        pairwise = pairwise + H.T @ p.T @ V
    return np.array(visible), np.array(hidden), pairwise


def test_gradient_with_exact_expectations_matches_finite_differences():
    rng = np.random.default_rng(0)
    params = random_params(rng, n_hidden=2, n_outputs=3, n_features=2)
    X, Y = random_data(rng, 5, 2, 3)
    W, _, Whx, _, c = params
    B2 = X @ Whx.T + c
    ours = gradient(W, X, Y, B2, *exact_expectations(params, X))
    for g, reference in zip(
        ours, finite_difference_gradient(params, X, Y), strict=True
    ):
        np.testing.assert_allclose(g, reference, atol=1e-7)


def test_bp_step_is_the_exact_gradient_with_one_hidden_unit():
    """One hidden unit makes the model a star (a tree): BP is exact."""
    rng = np.random.default_rng(1)
    params = random_params(rng, n_hidden=1, n_outputs=4, n_features=3)
    X, Y = random_data(rng, 6, 3, 4)
    est = model_with(params, X, Y, solver="bp")
    bp, n_rows = solver_step(est, X, Y, max_iter=50)
    assert n_rows == len(X)
    for ours, reference in zip(
        bp, finite_difference_gradient(params, X, Y), strict=True
    ):
        np.testing.assert_allclose(ours, reference, atol=1e-7)


def test_mf_step_is_the_exact_gradient_without_output_couplings():
    """With W^{vh} = 0 the outputs and hidden units are independent given x."""
    rng = np.random.default_rng(2)
    params = random_params(rng, n_hidden=2, n_outputs=3, n_features=2)
    params[0][...] = 0.0
    X, Y = random_data(rng, 5, 2, 3)
    est = model_with(params, X, Y, solver="mf")
    mf, _ = solver_step(est, X, Y, max_iter=50)
    for ours, reference in zip(
        mf, finite_difference_gradient(params, X, Y), strict=True
    ):
        np.testing.assert_allclose(ours, reference, atol=1e-7)


@pytest.mark.parametrize("chain_start", ["random", "data"])
def test_long_cd_chains_follow_the_exact_gradient(chain_start):
    rng = np.random.default_rng(3)
    params = random_params(rng, n_hidden=2, n_outputs=3, n_features=2, scale=0.7)
    X, Y = random_data(rng, 4, 2, 3)
    n_copies = 5000  # each row's chain repeated: a Monte Carlo average
    X_many, Y_many = np.repeat(X, n_copies, axis=0), np.repeat(Y, n_copies, axis=0)
    est = model_with(
        params, X, Y, solver="cd", n_gibbs_steps=30, chain_start=chain_start
    )
    cd, _ = solver_step(est, X_many, Y_many, rng=np.random.default_rng(4))
    tolerance = 5.0 / np.sqrt(len(X_many))
    for ours, reference in zip(
        cd, finite_difference_gradient(params, X, Y), strict=True
    ):
        np.testing.assert_allclose(ours, reference, atol=tolerance)


def test_percloss_step_contrasts_the_data_with_the_free_energy_minimiser():
    """CD-PercLoss contrasts the data with argmin_v F(v | x) (Mnih et al. 2011):
    its visible-bias step is mean(y - argmin_v F(v | x))."""
    rng = np.random.default_rng(5)
    params = random_params(rng, n_hidden=2, n_outputs=3, n_features=2)
    X, Y = random_data(rng, 8, 2, 3)
    est = model_with(params, X, Y, solver="cd-percloss", n_gibbs_steps=60)
    change, _ = solver_step(est, X, Y, rng=np.random.default_rng(6))
    V = all_states(3)
    minimisers = np.array(
        [V[np.argmax(logsumexp(joint_scores(params, x), axis=1))] for x in X]
    )
    np.testing.assert_allclose(change[3], (Y - minimisers).mean(axis=0))


def test_lssvm_step_uses_the_loss_augmented_joint_map():
    """Max-product BP on a star finds argmax_{v,h} [Hamming(v, y) - E(v, h, x)];
    the LSSVM step contrasts it with the data's latent MAP."""
    rng = np.random.default_rng(7)
    params = random_params(rng, n_hidden=1, n_outputs=4, n_features=2, scale=1.5)
    X, Y = random_data(rng, 10, 2, 4)
    est = model_with(params, X, Y, solver="lssvm")
    change, n_rows = solver_step(est, X, Y, max_iter=100)
    assert n_rows == len(X)
    V, H = all_states(4), all_states(1)
    v_map, h_map = [], []
    for x, y in zip(X, Y, strict=True):
        scores = joint_scores(params, x) + np.abs(V - y).sum(axis=1)[:, None]
        v_best, h_best = np.unravel_index(np.argmax(scores), scores.shape)
        v_map.append(V[v_best])
        h_map.append(H[h_best])
    v_map, h_map = np.array(v_map), np.array(h_map)
    W, _, Whx, _, c = params
    h_data = ((Y @ W.T + X @ Whx.T + c) > 0).astype(float)
    np.testing.assert_allclose(change[3], (Y - v_map).mean(axis=0))
    np.testing.assert_allclose(change[4], (h_data - h_map).mean(axis=0))


def test_mssvm_step_follows_eq_7():
    """Ping & Ihler (2017) Eq. (7): E_{p(h | v_hat, x)}[v_hat h^T] - v mu^T at
    the mixed-product decoding v_hat."""
    rng = np.random.default_rng(8)
    params = random_params(rng, n_hidden=2, n_outputs=3, n_features=2)
    X, Y = random_data(rng, 6, 2, 3)
    est = model_with(params, X, Y, solver="mssvm")
    B1, B2 = est._biases(X)
    change, n_rows = solver_step(est, X, Y, max_iter=100)
    assert n_rows == len(X)
    V = all_states(3)
    v_hat = []
    for x, y in zip(X, Y, strict=True):  # brute-force loss-augmented marginal MAP
        scores = joint_scores(params, x) + np.abs(V - y).sum(axis=1)[:, None]
        v_hat.append(V[np.argmax(logsumexp(scores, axis=1))])
    v_hat = np.array(v_hat)
    W = params[0]
    h_hat = 1 / (1 + np.exp(-(v_hat @ W.T + B2)))
    mu = 1 / (1 + np.exp(-(Y @ W.T + B2)))
    np.testing.assert_allclose(change[0], (mu.T @ Y - h_hat.T @ v_hat) / len(X))
    np.testing.assert_allclose(change[3], (Y - v_hat).mean(axis=0))


def test_learning_uses_only_rows_where_inference_converged(monkeypatch):
    rng = np.random.default_rng(9)
    params = random_params(rng, n_hidden=2, n_outputs=3, n_features=2)
    X, Y = random_data(rng, 6, 2, 3)
    converged = np.array([True, False, True, True, False, True])
    full, _ = solver_step(model_with(params, X, Y, solver="bp"), X, Y)
    subset, _ = solver_step(
        model_with(params, X, Y, solver="bp"), X[converged], Y[converged]
    )
    real_bp = bp_kernels.belief_propagation

    def partly_converged_bp(*args):
        tau_v, tau_h, gamma, n_iter, _ = real_bp(*args)
        garbage = ~converged  # an unconverged row's beliefs must not matter
        tau_v[garbage], tau_h[garbage], gamma[garbage] = 0.5, 0.5, 0.25
        return tau_v, tau_h, gamma, n_iter, converged

    monkeypatch.setattr(bp_kernels, "belief_propagation", partly_converged_bp)
    partial, n_rows = solver_step(model_with(params, X, Y, solver="bp"), X, Y)
    assert n_rows == converged.sum()
    for ours, reference in zip(partial, subset, strict=True):
        np.testing.assert_allclose(ours, reference)
    assert not np.allclose(partial[3], full[3])


def test_batches_without_converged_rows_are_skipped_and_counted():
    rng = np.random.default_rng(10)
    X, Y = random_data(rng, 40, 3, 5)
    # tol=0 and one iteration: BP never reports convergence.
    est = ConditionalRBMRegressor(
        n_components=3, inference_max_iter=1, inference_tol=0.0, n_iter=2,
        batch_size=10, early_stopping=False, random_state=0,
    ).fit(X, Y)  # fmt: skip
    assert est.n_skipped_batches_ == 8
    np.testing.assert_array_equal(est.history_["converged_fraction"], [0.0, 0.0])
    initial = ConditionalRBMRegressor(
        n_components=3, n_iter=0, early_stopping=False, random_state=0
    ).fit(X, Y)
    np.testing.assert_array_equal(est.coef_, initial.coef_)
    result = est.infer(X)
    assert not result.converged.any() and np.all(np.isfinite(result.visible))


# ----------------------------------------------------- inference, score
@pytest.mark.parametrize("n_hidden", [1, 3])
def test_exact_inference_and_score_match_enumeration(n_hidden):
    rng = np.random.default_rng(11)
    params = random_params(rng, n_hidden=n_hidden, n_outputs=4, n_features=2)
    X, Y = random_data(rng, 7, 2, 4)
    est = model_with(params, X, Y, inference="exact", score_method="exact")
    expected = np.array([brute_marginals(params, x) for x in X])
    np.testing.assert_allclose(est.predict_proba(X), expected, atol=1e-12)
    np.testing.assert_array_equal(est.predict(X), expected > 0.5)
    assert est.score(X, Y) == pytest.approx(brute_log_likelihood(params, X, Y))


def test_bp_predictions_and_bethe_score_are_exact_on_a_star():
    rng = np.random.default_rng(12)
    params = random_params(rng, n_hidden=1, n_outputs=5, n_features=2)
    X, Y = random_data(rng, 7, 2, 5)
    est = model_with(params, X, Y, solver="bp", score_method="bethe")
    expected = np.array([brute_marginals(params, x) for x in X])
    np.testing.assert_allclose(est.predict_proba(X), expected, atol=1e-9)
    assert est.score(X, Y) == pytest.approx(brute_log_likelihood(params, X, Y))


def test_ais_score_is_close_to_exact_and_deterministic_per_row():
    rng = np.random.default_rng(13)
    params = random_params(rng, n_hidden=3, n_outputs=4, n_features=2, scale=0.5)
    X, Y = random_data(rng, 5, 2, 4)
    est = model_with(params, X, Y, score_method="ais", ais_betas=300)
    ais = est.conditional_log_likelihood(X, Y)
    exact = [brute_log_likelihood(params, X[i : i + 1], Y[i : i + 1]) for i in range(5)]
    np.testing.assert_allclose(ais, exact, atol=0.05)
    np.testing.assert_array_equal(
        est.conditional_log_likelihood(X[2:4], Y[2:4]), ais[2:4]
    )


def test_auto_matches_inference_to_solver():
    expected = {
        "cd": "mf", "cd-percloss": "mf", "mf": "mf",
        "bp": "bp", "mssvm": "mixed", "lssvm": "max",
    }  # fmt: skip
    for solver, inference in expected.items():
        est = ConditionalRBMRegressor(solver=solver)
        assert est._resolved_inference() == inference


# ------------------------- learning (Ping & Ihler 2017, Sec. 6, smoke)
def test_mle_bp_completes_digits_better_than_lr_and_as_well_as_cd10():
    """Ping & Ihler (2017), Table 2, at smoke size: occluded digits (a 4x4
    patch set to 0).

    Measured for random_state 0-5 when the test was written (test error in
    points of per-pixel error): MLE-BP minus LR -0.73 to -0.23; MLE-BP minus
    CD-10 (same hidden units, rate, batches and epochs) -0.45 to +0.45,
    4 of 6 below 0. So MLE-BP beats LR here, but not CD-10: the two are tied
    at this size, as on the full digits task (doc/conditional.rst: MLE-BP
    below CD-10 in 1 of 4 seeds with 3x3 patches, 2 of 4 with 4x4), and the
    test asserts the tie within 0.75 points. The LR margin also owes to the
    budget: LR has half as many steps (batches of 20, as in the example);
    at batches of 10 the three methods are within noise at this size.
    """
    Y, _ = load_binary_digits()
    Y = Y[np.random.RandomState(0).permutation(len(Y))][:1000]
    X = occlude_patches(Y, 4, random_state=1)
    train, test = slice(0, 800), slice(800, 1000)
    errors = {}
    for name, n_hidden, solver, batch_size in (
        ("lr", 0, "bp", 20),
        ("bp", 32, "bp", 10),
        ("cd", 32, "cd", 10),
    ):
        est = ConditionalRBMRegressor(
            n_components=n_hidden, solver=solver, learning_rate=0.2,
            batch_size=batch_size, n_iter=10, init=None, early_stopping=False,
            random_state=0,
        ).fit(X[train], Y[train])  # fmt: skip
        errors[name] = 100 * np.mean(est.predict(X[test]) != Y[test])
    corrupted = 100 * np.mean(X[test] != Y[test])
    assert errors["bp"] < errors["lr"] - 0.1 and errors["lr"] < corrupted
    assert errors["cd"] < corrupted
    assert abs(errors["bp"] - errors["cd"]) < 0.75


@pytest.mark.parametrize("solver", SOLVERS)
def test_same_random_state_gives_identical_parameters(solver):
    rng = np.random.default_rng(14)
    X, Y = random_data(rng, 30, 3, 4)
    params = dict(n_components=3, solver=solver, n_iter=3, batch_size=8)
    first = ConditionalRBMRegressor(random_state=0, **params).fit(X, Y)
    second = ConditionalRBMRegressor(random_state=0, **params).fit(X, Y)
    other = ConditionalRBMRegressor(random_state=1, **params).fit(X, Y)
    for name in PARAMETERS:
        np.testing.assert_array_equal(getattr(first, name), getattr(second, name))
    assert not np.array_equal(first.coef_, other.coef_)


def test_early_stopping_keeps_the_best_validation_epoch():
    rng = np.random.default_rng(15)
    X, Y = random_data(rng, 80, 3, 4)
    est = ConditionalRBMRegressor(
        n_components=4, n_iter=15, early_stopping=True, n_iter_no_change=3,
        learning_rate=0.5, init=None, random_state=0,
    ).fit(X, Y)  # fmt: skip
    errors = est.history_["validation_error"]
    best_epoch = 1 + int(np.argmin(errors))
    assert est.best_validation_error_ == min(errors)
    assert est.n_iter_ == len(errors) > best_epoch  # it stopped early
    assert est.inference_max_iter_ == 7 + best_epoch  # the kept epoch's schedule


def test_warm_start_copies_the_logistic_regression_part():
    rng = np.random.default_rng(20)
    X, Y = random_data(rng, 40, 3, 4)
    lr = ConditionalRBMRegressor(n_components=0, n_iter=5, random_state=0).fit(X, Y)
    crbm = ConditionalRBMRegressor(n_components=3, n_iter=0, init=lr, random_state=0)
    crbm.fit(X, Y)
    # Copied into the fit's standardised coordinates and back: equal up to
    # rounding.
    np.testing.assert_allclose(crbm.coef_, lr.coef_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(crbm.intercept_, lr.intercept_, rtol=1e-12, atol=1e-14)
    again = ConditionalRBMRegressor(n_components=2, n_iter=0, init=crbm).fit(X, Y)
    np.testing.assert_array_equal(again.components_, crbm.components_[:2])
    with pytest.raises(ValueError, match="same inputs and outputs"):
        ConditionalRBMRegressor(init=lr).fit(X, Y[:, :3])


def test_verbose_reports_convergence(capsys):
    rng = np.random.default_rng(16)
    X, Y = random_data(rng, 30, 3, 4)
    ConditionalRBMRegressor(
        n_components=3, n_iter=2, validation_fraction=0.2, verbose=1, random_state=0
    ).fit(X, Y)
    out = capsys.readouterr().out
    assert re.search(
        r"epoch 2/2, .*converged fraction 1.0000, held-out error 0\.\d+, "
        r"inference iterations 9, skipped batches 0",
        out,
    )


def test_grid_search_selects_by_conditional_log_likelihood():
    rng = np.random.default_rng(17)
    X, Y = random_data(rng, 60, 3, 4)
    search = GridSearchCV(
        ConditionalRBMRegressor(n_components=2, n_iter=2, random_state=0),
        {"solver": SOLVERS},
        cv=2,
    ).fit(X, Y)
    best = search.best_estimator_
    assert search.best_score_ == max(search.cv_results_["mean_test_score"])
    assert search.best_score_ < 0  # a log-likelihood, not R²
    assert best.score(X, Y) == pytest.approx(
        best.conditional_log_likelihood(X, Y).mean()
    )


def test_float32_input_gives_float32_parameters_and_outputs():
    """float32 X keeps float32 parameters and outputs (DESIGN.md); training
    and message passing compute in float64, so the fit is the float64 fit of
    the same numbers, rounded once at the end."""
    rng = np.random.default_rng(22)
    X, Y = random_data(rng, 40, 3, 5)
    X32 = X.astype(np.float32)
    params = dict(n_components=3, n_iter=3, batch_size=10, random_state=0)
    est32 = ConditionalRBMRegressor(**params).fit(X32, Y)
    est64 = ConditionalRBMRegressor(**params).fit(X32.astype(np.float64), Y)
    for name in PARAMETERS:
        assert getattr(est32, name).dtype == np.float32
        np.testing.assert_array_equal(
            getattr(est32, name), getattr(est64, name).astype(np.float32)
        )
    proba = est32.predict_proba(X32)
    assert proba.dtype == np.float32 and est32.predict(X32).dtype == np.float32
    assert est32.infer(X32).visible.dtype == np.float32
    np.testing.assert_allclose(proba, est64.predict_proba(X32), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(est32.predict(X), est64.predict(X))
    assert est32.score(X32, Y) == pytest.approx(est64.score(X32, Y), rel=1e-5)
    assert est64.coef_.dtype == np.float64  # float64 (and int) X stay float64
    warm = ConditionalRBMRegressor(init=est32, **params).fit(X, Y)
    assert warm.coef_.dtype == np.float64


# ------------------------------------------------------------- bad input
def test_non_binary_outputs_are_refused_with_their_values():
    X = np.zeros((3, 2))
    with pytest.raises(ValueError, match=r"binary outputs.*\[0\.5, 2\.0\]"):
        ConditionalRBMRegressor().fit(X, [[0, 0.5], [1, 2], [0, 1]])


def test_rows_of_X_and_Y_must_agree():
    with pytest.raises(ValueError, match="inconsistent numbers of samples"):
        ConditionalRBMRegressor().fit(np.zeros((4, 2)), np.zeros((3, 2)))


def test_one_output_as_1d_y():
    rng = np.random.default_rng(18)
    X = rng.standard_normal((40, 2))
    y = (X[:, 0] > 0).astype(float)
    est = ConditionalRBMRegressor(n_components=2, n_iter=20, learning_rate=0.5)
    est.fit(X, y)
    assert est.predict(X).shape == (40,) and est.predict_proba(X).shape == (40,)
    assert est.n_outputs_ == 1
    assert np.mean(est.predict(X) == y) > 0.9


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_features_are_refused(value):
    X = np.zeros((3, 2))
    X[1, 1] = value
    with pytest.raises(ValueError, match="NaN|infinity"):
        ConditionalRBMRegressor().fit(X, np.zeros((3, 2)))


def test_wrong_number_of_features_at_predict_time():
    est = ConditionalRBMRegressor(n_components=2, n_iter=1).fit(
        np.zeros((4, 3)), np.zeros((4, 2))
    )
    with pytest.raises(ValueError, match="3 features"):
        est.predict(np.zeros((2, 4)))


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_non_finite_features_are_refused_at_predict_time(value):
    est = ConditionalRBMRegressor(n_components=2, n_iter=1).fit(
        np.zeros((4, 2)), np.zeros((4, 2))
    )
    X = np.zeros((3, 2))
    X[2, 0] = value
    for query in (est.predict, est.predict_proba, est.infer):
        with pytest.raises(ValueError, match="NaN|infinity"):
            query(X)


def test_bp_that_does_not_converge_is_reported_per_row_and_stays_finite():
    """Strong frustrated couplings: BP oscillates on the row with no input
    (biases 0) and converges on the row whose input sets biases of +-30
    (the model of test_inference.py's test_each_model_of_a_batch_stops_on_its_own)."""
    rng = np.random.default_rng(2)
    W = 5.0 * rng.standard_normal((10, 12))
    signs = np.where(np.arange(12) % 2, 30.0, -30.0)
    params = [W, signs[:, None], np.full((10, 1), -30.0), np.zeros(12), np.zeros(10)]
    X = np.array([[0.0], [1.0]])
    Y = np.zeros((2, 12))
    est = model_with(params, X, Y, solver="bp", inference_tol=1e-6)
    est.inference_max_iter_ = 50
    result = est.infer(X)
    np.testing.assert_array_equal(result.converged, [False, True])
    np.testing.assert_array_equal(result.n_iter, [50, result.n_iter[1]])
    for beliefs in (result.visible, result.hidden, est.predict_proba(X)):
        assert np.all(np.isfinite(beliefs)) and np.all((beliefs >= 0) & (beliefs <= 1))
    _, n_rows = solver_step(est, X, Y, max_iter=50)  # learns from row 2 only
    assert n_rows == 1


def test_infer_with_an_unknown_method_lists_the_valid_ones():
    est = ConditionalRBMRegressor(n_components=2, n_iter=1).fit(
        np.zeros((4, 2)), np.zeros((4, 2))
    )
    with pytest.raises(
        ValueError, match=r"one of \['bp', 'exact', 'max', 'mf', 'mixed'\]"
    ):
        est.infer(np.zeros((2, 2)), inference="gibbs")


@pytest.mark.parametrize(
    "params, valid",
    [
        ({"solver": "pcd"}, "'bp'"),
        ({"inference": "gibbs"}, "'mixed'"),
        ({"score_method": "pseudo"}, "'bethe'"),
    ],
)
def test_unknown_solver_or_inference_lists_the_valid_ones(params, valid):
    with pytest.raises(InvalidParameterError, match=valid):
        ConditionalRBMRegressor(**params).fit(np.zeros((4, 2)), np.zeros((4, 2)))


def test_exact_inference_of_a_large_model_is_refused():
    est = ConditionalRBMRegressor(n_components=25, n_iter=0, inference="exact")
    est.fit(np.zeros((2, 2)), np.zeros((2, 30)))
    with pytest.raises(ValueError, match="limited to 20 units"):
        est.predict(np.zeros((2, 2)))


def test_divergence_names_the_learning_rate_and_keeps_finite_parameters():
    rng = np.random.default_rng(19)
    X = 1e6 * rng.standard_normal((20, 3))
    Y = (rng.random((20, 4)) < 0.5).astype(float)
    est = ConditionalRBMRegressor(n_components=3, learning_rate=1e4, n_iter=3)
    with pytest.raises(FloatingPointError, match="learning_rate=10000"):
        est.fit(X, Y)
    for name in PARAMETERS:
        assert np.all(np.isfinite(getattr(est, name)))


# ------------------------------------------- defaults on users' data (issue 22)
@pytest.fixture
def hang_guard():
    """Fail instead of hanging: a fit with defaults past 60 s raises (speed
    itself is measured by benchmarks/bench_defaults.py)."""

    def expire(signum, frame):
        raise TimeoutError("a fit with default settings ran past 60 s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(60)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, previous)


def per_output_logistic_regression(X, Y, X_test):
    """scikit-learn's per-output baseline; a constant output is predicted
    as its constant (LogisticRegression refuses one class)."""
    columns = []
    for y in Y.T:
        if np.all(y == y[0]):
            columns.append(np.full(len(X_test), y[0]))
        else:
            columns.append(LogisticRegression().fit(X, y).predict(X_test))
    return np.column_stack(columns)


def wrong_outputs(X, Y, test, **params):
    """Which held-out outputs the defaults and the baseline get wrong."""
    train = np.setdiff1d(np.arange(len(X)), test)
    crbm = ConditionalRBMRegressor(random_state=0, **params).fit(X[train], Y[train])
    ours = crbm.predict(X[test]) != Y[test]
    baseline = per_output_logistic_regression(X[train], Y[train], X[test])
    return ours, baseline != Y[test]


def hamming_errors(X, Y, test, **params):
    """Held-out Hamming error of the defaults and of the baseline."""
    ours, baseline = wrong_outputs(X, Y, test, **params)
    return np.mean(ours), np.mean(baseline)


def excess_errors_in_standard_errors(ours, baseline):
    """How many more outputs the defaults get wrong than the baseline, in
    standard errors of that difference (McNemar's ``sqrt(discordant)``)."""
    excess = np.sum(ours) - np.sum(baseline)
    return excess / max(np.sqrt(np.sum(ours != baseline)), 1.0)


def test_defaults_on_multilabel_counts_match_logistic_regression(hang_guard):
    """Issue 22: 2,000 x 30 -> 8 labels took 245 s and lost to per-label
    logistic regression (Hamming 0.296 against 0.262 on the issue's split).
    The defaults fit in seconds and are at least as good, up to one label in
    a thousand."""
    X, Y = make_multilabel_classification(
        n_samples=2000, n_features=30, n_classes=8, random_state=0
    )
    ours, baseline = hamming_errors(X, Y, np.arange(1500, 2000))
    assert ours <= baseline + 0.001


@pytest.mark.parametrize("task", ["noisy", "occluded"])
def test_defaults_on_binarised_digits_never_lose_to_logistic_regression(
    task, hang_guard
):
    """Issue 36: on 8x8 digits, denoised (10% of the pixels flipped) or
    completed (a 4x4 patch set to 0), the defaults are never worse than
    per-pixel LogisticRegression() beyond two standard errors of the paired
    difference. Smoke size: 400 training images, 100 test images (64
    outputs, some constant)."""
    clean, _ = load_binary_digits()
    clean = clean[:500]
    if task == "noisy":
        corrupted = flip_pixels(clean, 0.1, random_state=0)
    else:
        corrupted = occlude_patches(clean, 4, random_state=0)
    ours, baseline = wrong_outputs(corrupted, clean, np.arange(400, 500))
    assert excess_errors_in_standard_errors(ours, baseline) <= 2.0


def test_epochs_from_logistic_regression_that_beat_it_are_kept():
    """Issue 36: when logistic regression beats the epochs from the random
    start (on 400 noisy 8x8 digits it does), init='auto' runs n_iter epochs
    from logistic regression itself, and keeps them when they beat it on
    the held-out rows: then they are run again on every row (held-out ones
    included), from logistic regression on every row, with BP's schedule
    restarted each time, and the outputs are coupled."""
    clean, _ = load_binary_digits()
    noisy = flip_pixels(clean[:400], 0.1, random_state=0)
    est = ConditionalRBMRegressor(random_state=0).fit(noisy, clean[:400])
    held_out = est.history_["validation_error"]
    refit = np.isnan(held_out)
    n_random = est.n_iter_ - 2 * est.n_iter
    # The random start's epochs and the continuation's are watched on the
    # held-out rows, the refit on every row is not.
    assert n_random >= 1
    assert np.all(refit == (np.arange(est.n_iter_) >= est.n_iter_ - est.n_iter))
    assert est.inference_max_iter_ == 7 + est.n_iter
    assert np.any(est.components_ != 0.0)
    # Kept because it beat the random start's rival on the held-out rows.
    assert est.best_validation_error_ == held_out[n_random + est.n_iter - 1]
    assert est.best_validation_error_ < np.min(held_out[:n_random])
    again = ConditionalRBMRegressor(random_state=0).fit(noisy, clean[:400])
    np.testing.assert_array_equal(again.components_, est.components_)


def test_steps_are_invariant_to_the_scale_and_offset_of_features():
    """The steps work in standardised coordinates: rescaling and shifting a
    feature changes the fitted weights accordingly and nothing else."""
    rng = np.random.default_rng(21)
    X, Y = random_data(rng, 120, 3, 4)
    scale, offset = np.array([1000.0, 0.01, 1.0]), np.array([5.0, -3.0, 100.0])
    # From a random start: the logistic start's penalty, like scikit-learn's,
    # is on the raw weights.
    params = dict(n_components=3, n_iter=3, init=None, random_state=0)
    plain = ConditionalRBMRegressor(**params).fit(X, Y)
    moved = ConditionalRBMRegressor(**params).fit(X * scale + offset, Y)
    np.testing.assert_allclose(moved.coef_ * scale, plain.coef_, rtol=1e-8)
    np.testing.assert_allclose(
        moved.hidden_coef_ * scale, plain.hidden_coef_, rtol=1e-8
    )
    np.testing.assert_allclose(moved.components_, plain.components_, rtol=1e-8)
    np.testing.assert_allclose(
        moved.predict_proba(X * scale + offset), plain.predict_proba(X), rtol=1e-8
    )


def test_logistic_start_is_scikit_learns_logistic_regression(monkeypatch):
    """init='logistic' starts from LogisticRegression() per output, fitted on
    the raw features (its L2 penalty too, which matters on 100 rows): the
    same minimiser, here both solved to a tight tolerance."""
    monkeypatch.setattr(start, "_LOGISTIC_GTOL", 1e-10)
    monkeypatch.setattr(start, "_LOGISTIC_MAX_ITER", 10_000)
    rng = np.random.default_rng(22)
    Z = rng.standard_normal((100, 4))
    X = Z * [1.0, 10.0, 0.1, 3.0] + [0.0, 50.0, 1.0, -2.0]
    Y = (rng.random((100, 3)) < expit(Z[:, :3])).astype(float)
    est = ConditionalRBMRegressor(
        n_components=2, n_iter=0, init="logistic", early_stopping=False,
        random_state=0,
    ).fit(X, Y)  # fmt: skip
    ours = expit(X @ est.coef_.T + est.intercept_)
    for k in range(3):
        lr = LogisticRegression(tol=1e-12, max_iter=10_000).fit(X, Y[:, k])
        np.testing.assert_allclose(ours[:, k], lr.predict_proba(X)[:, 1], atol=1e-4)


@pytest.mark.parametrize("init", ["auto", "logistic"])
def test_logistic_regression_that_no_epoch_beats_is_kept(init):
    """Outputs that are independent given the inputs: the hidden units have
    nothing to add, the held-out rows do not show them beating logistic
    regression (the rival of a random start, init='auto', or the start,
    init='logistic'), and the fit is logistic regression on every row
    (held-out ones included), with no output coupling."""
    rng = np.random.default_rng(23)
    X = rng.standard_normal((400, 3))
    Y = (rng.random((400, 4)) < expit(X @ rng.standard_normal((3, 4)))).astype(float)
    est = ConditionalRBMRegressor(n_components=4, n_iter=5, init=init, random_state=0)
    est.fit(X, Y)
    assert est.n_iter_ >= 1 and np.all(est.components_ == 0.0)
    # Up to the tolerance both optimisers stop at (scikit-learn's 1e-4).
    ours = expit(X @ est.coef_.T + est.intercept_)
    for k in range(4):
        lr = LogisticRegression().fit(X, Y[:, k])  # all 400 rows
        np.testing.assert_allclose(ours[:, k], lr.predict_proba(X)[:, 1], atol=3e-3)


def test_early_stopping_on_too_few_rows_says_nothing_is_held_out():
    """Ten per cent of two rows is no row: early stopping cannot watch
    anything, and says so instead of silently running every epoch."""
    rng = np.random.default_rng(0)
    X, Y = rng.normal(size=(2, 3)), np.array([[0, 1], [1, 0]])
    params = dict(n_components=2, n_iter=3, random_state=0)
    with pytest.warns(UserWarning, match="nothing is held out"):
        crbm = ConditionalRBMRegressor(early_stopping=True, **params).fit(X, Y)
    assert crbm.n_iter_ == 3
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ConditionalRBMRegressor(early_stopping=False, **params).fit(X, Y)
        ConditionalRBMRegressor(early_stopping=True, **params).fit(
            X, Y, X_val=X, Y_val=Y
        )
