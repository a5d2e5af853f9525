"""Tests of FVBMPseudoLikelihood: Nguyen & Wood's claims, exactness against brute force,
agreement with an independent optimiser, standard errors, and bad input.

Reference: Nguyen & Wood (2016), Neural Computation 28.
"""

import contextlib
import itertools
import re
import signal
import warnings

import numpy as np
import pytest
import scipy.optimize
from scipy.special import logsumexp
from sklearn.datasets import load_breast_cancer, load_digits, load_wine
from sklearn.exceptions import ConvergenceWarning, NotFittedError
from sklearn.model_selection import GridSearchCV

from sklearn_rbm import FVBMPseudoLikelihood, MPLEDoesNotExistWarning
from sklearn_rbm._core.utils import one_blas_thread
from sklearn_rbm._fvbm import diagnostics, existence
from sklearn_rbm._fvbm.diagnostics import FitCurvature
from sklearn_rbm._fvbm.estimator import kernels
from sklearn_rbm._fvbm.existence import separating_direction
from sklearn_rbm._fvbm.joint import (
    NodeGramPreconditioner,
    PseudoLikelihood,
    theta_matrix,
)
from sklearn_rbm._fvbm.model import distinct_rows, pack, unpack
from sklearn_rbm._fvbm.proximal import FreeSetModel, ProximalNewtonState
from sklearn_rbm.datasets import make_fvbm, sample_fvbm

SOLVERS = ["bslm", "ga", "mm", "lbfgs"]
ALL_SOLVERS = ["newton", "nodewise", *SOLVERS]
JOINT_SOLVERS = ["newton", *SOLVERS]  # all maximise the joint log-PL


# ---------------------------------------------------------------------------
# Independent numpy oracles (no package code)


def numpy_log_pl(theta, X, alpha=0.0):
    """Mean log pseudo-likelihood (Nguyen & Wood 2016, eq. 2.1, over n) minus
    the L2 penalty."""
    d = X.shape[1]
    b = theta[:d]
    M = np.zeros((d, d))
    M[np.triu_indices(d, 1)] = theta[d:]
    M = M + M.T
    A = X @ M + b
    # log P(x_j | rest) = x_j a_j - log(e^a_j + e^-a_j)
    return (
        np.mean(np.sum(X * A - np.logaddexp(A, -A), axis=1))
        - 0.5 * alpha * theta @ theta
    )


def numpy_unpack(theta, d):
    M = np.zeros((d, d))
    M[np.triu_indices(d, 1)] = theta[d:]
    return theta[:d], M + M.T


def numpy_transpose_map(R, X):
    """``sum_i sum_j R_ij dA_ij/dtheta / n``: b_j collects column j, m_jk both
    ``R_ij x_ik`` and ``R_ik x_ij`` (m_jk enters a_ij and a_ik)."""
    n, d = X.shape
    grad_M = (R.T @ X + X.T @ R) / n
    return np.concatenate([R.mean(axis=0), grad_M[np.triu_indices(d, 1)]])


def numpy_gradient(theta, X, alpha=0.0):
    """Gradient of :func:`numpy_log_pl`: per unit, the logistic-regression score."""
    b, M = numpy_unpack(theta, X.shape[1])
    return numpy_transpose_map(X - np.tanh(X @ M + b), X) - alpha * theta


def numpy_hessian(theta, X):
    """Central differences of :func:`numpy_gradient`."""
    rows = [
        (numpy_gradient(theta + 1e-5 * e, X) - numpy_gradient(theta - 1e-5 * e, X))
        / 2e-5
        for e in np.eye(theta.size)
    ]
    return 0.5 * (np.array(rows) + np.array(rows).T)


def numpy_maximiser(X, alpha=0.0):
    """MPLE by scipy's BFGS on the numpy log-PL, to a gradient of 1e-11."""
    p = X.shape[1] * (X.shape[1] + 1) // 2
    result = scipy.optimize.minimize(
        lambda t: (-numpy_log_pl(t, X, alpha), -numpy_gradient(t, X, alpha)),
        np.zeros(p),
        jac=True,
        method="BFGS",
        options={"gtol": 1e-11, "maxiter": 5000},
    )
    return result.x


def all_states(d):
    return np.array(list(itertools.product([-1.0, 1.0], repeat=d)))


def brute_force_log_z(coupling, intercept):
    S = all_states(intercept.shape[0])
    return logsumexp(0.5 * np.einsum("ij,jk,ik->i", S, coupling, S) + S @ intercept)


def theta_of(est):
    return pack(est.intercept_, est.coupling_)


# ---------------------------------------------------------------------------
# Data


@pytest.fixture(autouse=True)
def single_threaded_blas():
    """The oracles' matrices are small: BLAS threads only cost, a lot on busy cores."""
    with one_blas_thread():
        yield


@pytest.fixture(scope="module")
def well_posed():
    """d = 6, n = 3000 from couplings N(0, 0.5 / d): the MPLE exists."""
    return make_fvbm(3000, 6, coupling_variance=0.5 / 6, random_state=0)


@pytest.fixture(scope="module")
def reference_theta(well_posed):
    return numpy_maximiser(well_posed[0])


# ---------------------------------------------------------------------------
# Nguyen & Wood's claims


@pytest.mark.parametrize(
    "solver, step_size",
    [("bslm", 1.0), ("mm", 1.0), ("ga", 0.5), ("newton", 1.0), ("nodewise", 1.0)],
)
def test_monotone_solvers_never_decrease_the_log_pl(well_posed, solver, step_size):
    # Nguyen & Wood's Theorem 1 (bslm), Sec. 4 (ga with mu <= 1), the same
    # bound for mm; Newton's line search.
    X = well_posed[0]
    est = FVBMPseudoLikelihood(
        solver=solver, step_size=step_size, init="random", tol=1e-9, random_state=3
    ).fit(X)
    curve = est.pseudo_likelihood_curve_
    assert curve.shape == (est.n_iter_ + 1,)
    assert np.all(np.diff(curve) >= -1e-12), np.diff(curve).min()
    assert curve[-1] - curve[0] > 0.1  # it did climb from the random start


@pytest.mark.parametrize("alpha", [0.0, 0.01])
@pytest.mark.parametrize("solver", JOINT_SOLVERS)
def test_every_solver_reaches_the_independent_maximiser(well_posed, solver, alpha):
    X = well_posed[0]
    reference = numpy_maximiser(X, alpha) if alpha else None
    est = FVBMPseudoLikelihood(
        solver=solver,
        step_size=0.8,
        alpha=alpha,
        tol=1e-10,
        max_iter=5000,
        compute_std=False,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # step_size ignored by non-ga
        est.fit(X)
    if reference is None:
        reference = numpy_maximiser(X)
    np.testing.assert_allclose(theta_of(est), reference, atol=1e-5)
    assert est.pseudo_likelihood_curve_[-1] == pytest.approx(
        numpy_log_pl(reference, X, alpha), abs=1e-9
    )


def packed_jacobian(rows):
    """``d a_ij / d theta`` for every row and unit, ``(rows * d, p)``, in numpy
    (columns by finite differences, exact since ``A`` is linear in ``theta``)."""
    d = rows.shape[1]
    p = d * (d + 1) // 2
    columns = [(rows @ numpy_unpack(e, d)[1] + numpy_unpack(e, d)[0]).ravel()
               for e in np.eye(p)]  # fmt: skip
    return np.array(columns).T


def as_packed(T):
    return np.concatenate([np.diag(T), T[np.triu_indices(T.shape[0], 1)]])


def test_mm_bound_and_hessian_are_grams_of_the_field_gradients(well_posed):
    # The MM bound B = sum_i w_i sum_j z_ij z_ij^T, never formed (its products
    # cost O(d^3)), and minus the Hessian sum_i w_i sum_j sech^2(a_ij) z_ij
    # z_ij^T, assembled by matrix products for the standard errors: both
    # against the Gram of the numpy Jacobian of A.
    X = well_posed[0][:300]
    rows, w = distinct_rows(X)
    jacobian = packed_jacobian(rows)
    weights = np.repeat(w, 6)
    bound = jacobian.T @ (weights[:, None] * jacobian)
    product = NodeGramPreconditioner(rows, w, np.ones(6), 0.0, np.arange(6), True)
    for e in np.eye(21):
        V = theta_matrix(*numpy_unpack(e, 6))
        np.testing.assert_allclose(
            as_packed(product.block_product(V)), bound @ e, atol=1e-12
        )
    theta = np.random.default_rng(0).normal(0, 0.3, 21)
    b, M = numpy_unpack(theta, 6)
    curvature = FitCurvature(rows, w, b, M, 0.0, dense=True)
    factor, lower = curvature.factor
    L = np.tril(factor) if lower else np.triu(factor).T
    sech2 = 1 - np.tanh(rows @ M + b).ravel() ** 2
    hessian = jacobian.T @ ((weights * sech2)[:, None] * jacobian)
    np.testing.assert_allclose(L @ L.T, hessian, atol=1e-12)


def test_ga_with_unit_step_is_bslm(well_posed):
    # Nguyen & Wood (2016), Sec. 4: "the BSLM algorithm is the mu = 1 case of
    # the GA algorithm".
    X = well_posed[0]
    bslm = FVBMPseudoLikelihood(solver="bslm", compute_std=False).fit(X)
    ga = FVBMPseudoLikelihood(solver="ga", step_size=1.0, compute_std=False).fit(X)
    np.testing.assert_array_equal(bslm.coupling_, ga.coupling_)
    np.testing.assert_array_equal(
        bslm.pseudo_likelihood_curve_, ga.pseudo_likelihood_curve_
    )


def test_mm_needs_fewer_iterations_than_bslm_at_d20():
    X, _, _ = make_fvbm(2000, 20, coupling_variance=0.5 / 20, random_state=20)
    bslm = FVBMPseudoLikelihood(solver="bslm", compute_std=False).fit(X)
    mm = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(X)
    assert mm.n_iter_ < bslm.n_iter_ / 2, (mm.n_iter_, bslm.n_iter_)
    gap = mm.pseudo_likelihood_curve_[-1] - bslm.pseudo_likelihood_curve_[-1]
    assert abs(gap) < 1e-6


@pytest.mark.parametrize("n_features", [5, 10])
def test_nguyen_wood_simulation_mse_matches_its_standard_errors(n_features):
    # Nguyen & Wood's protocol (n = 16,000, exact simulation) with well-posed couplings
    # N(0, 0.5 / d): the MSE to the truth is the estimator's variance, which
    # the sandwich predicts; it sits far above their published 1e-6 - 1e-7.
    X, coupling, intercept = make_fvbm(
        16000, n_features, coupling_variance=0.5 / n_features, random_state=n_features
    )
    est = FVBMPseudoLikelihood(solver="mm").fit(X)
    errors = theta_of(est) - pack(intercept, coupling)
    predicted = np.mean(pack(est.intercept_std_, est.coupling_std_) ** 2)
    mse = np.mean(errors**2)
    # mse / predicted is about chi^2_p / p (p = 15 or 55 parameters).
    assert 0.3 < mse / predicted < 2.5, (mse, predicted)
    assert mse > 1e-5  # not their published 1e-6 - 1e-7


def test_nguyen_wood_couplings_give_nonexistent_mple_and_it_is_detected():
    # Nguyen & Wood's N(0, 0.5) couplings at d = 10: nearly frozen data, and for some
    # draws the MPLE does not exist. Each verdict is certified independently:
    # "does not exist" by a direction along which no conditional of the data
    # decreases (numpy), "exists" by a stationary point with a negative
    # definite Hessian of the numpy log-PL (strictly concave, so the maximum).
    verdicts = []
    for seed in range(5):
        X, _, _ = make_fvbm(16000, 10, random_state=1000 + seed)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est = FVBMPseudoLikelihood(
                solver="lbfgs", tol=1e-10, compute_std=False
            ).fit(X)
        flagged = any(issubclass(w.category, MPLEDoesNotExistWarning) for w in caught)
        assert flagged == (est.mple_exists_ is False)
        verdicts.append(est.mple_exists_)
        rows, w = distinct_rows(X)
        theta = theta_of(est)
        if est.mple_exists_:
            assert np.abs(numpy_gradient(theta, X)).max() < 1e-6
            assert np.linalg.eigvalsh(numpy_hessian(theta, X)).max() < 0
        else:
            margins = rows * kernels.predictors(rows, np.zeros(10), np.zeros((10, 10)))
            _, _, direction = separating_direction(rows, w, margins)
            b, M = unpack(direction, 10)
            change = X * (X @ M + b)  # how each conditional x_ij a_ij moves
            assert change.min() > -1e-9 and change.max() > 1e-3
            values = [numpy_log_pl(theta + t * direction, X) for t in (0, 1, 10)]
            assert values[0] < values[1] < values[2]
    assert True in verdicts and False in verdicts


def test_newton_certificate_balances_every_conditional(well_posed):
    # Stiemke: the MPLE exists iff some lambda > 0 has G^T lambda = 0. Built
    # from a deliberately loose fit and one Newton step, in numpy.
    X = well_posed[0]
    est = FVBMPseudoLikelihood(solver="bslm", tol=1e-1, compute_std=False).fit(X)
    theta = theta_of(est)
    b, M = numpy_unpack(theta, 6)
    T = np.tanh(X @ M + b)
    step = np.linalg.solve(-numpy_hessian(theta, X), numpy_gradient(theta, X))
    step_b, step_M = numpy_unpack(step, 6)
    moves = X * (X @ step_M + step_b)
    lam = (1 - X * T) * (1 - (1 + X * T) * moves)
    assert np.abs(numpy_gradient(theta, X)).max() > 1e-4  # far from converged
    assert lam.min() > 0
    np.testing.assert_allclose(numpy_transpose_map(lam * X, X), 0, atol=1e-8)


@pytest.mark.parametrize("separable", [False, True])
def test_cutting_plane_separation_check_on_many_distinct_rows(separable):
    # ~5000 distinct rows x 16 units: beyond the direct LP's 50,000 constraints.
    rng = np.random.default_rng(3)
    X = np.where(rng.random((5000, 16)) < 0.5, 1.0, -1.0)
    if separable:
        X[:, 7] = -X[:, 3]
    rows, w = distinct_rows(X)
    assert rows.shape[0] * 16 > 50_000
    exists, features, direction = separating_direction(rows, w, np.zeros(rows.shape))
    assert exists is (not separable)
    if separable:
        np.testing.assert_array_equal(features, [3, 7])
        b, M = numpy_unpack(direction, 16)
        change = X * (X @ M + b)
        assert change.min() > -1e-9 and change.max() > 1e-3


def test_separating_direction_really_raises_the_log_pl():
    rng = np.random.default_rng(0)
    X = np.where(rng.random((400, 5)) < 0.5, 1.0, -1.0)
    X[:, 1] = X[:, 0]  # unit 0 is perfectly predicted by unit 1 and vice versa
    rows, w = distinct_rows(X)
    exists, features, direction = separating_direction(rows, w, np.zeros(rows.shape))
    assert exists is False
    np.testing.assert_array_equal(features, [0, 1])
    est = FVBMPseudoLikelihood(alpha=1.0, compute_std=False).fit(X)  # a finite start
    values = [numpy_log_pl(theta_of(est) + t * direction, X) for t in (0, 0.5, 1, 2)]
    assert np.all(np.diff(values) > 0)


# ---------------------------------------------------------------------------
# Likelihood, partition function, sampling


@pytest.mark.parametrize("n_features", [2, 7, 12])
def test_exact_score_matches_brute_force_enumeration(n_features):
    X, _, _ = make_fvbm(600, n_features, coupling_variance=0.3, random_state=n_features)
    est = FVBMPseudoLikelihood(solver="lbfgs", alpha=1e-3, compute_std=False).fit(X)
    log_z = brute_force_log_z(est.coupling_, est.intercept_)
    assert est.log_partition_function().log_z == pytest.approx(log_z, abs=1e-10)
    S = all_states(n_features)
    expected = (
        0.5 * np.einsum("ij,jk,ik->i", S, est.coupling_, S) + S @ est.intercept_ - log_z
    )
    np.testing.assert_allclose(est.score_samples(S), expected, rtol=0, atol=1e-10)
    assert logsumexp(est.score_samples(S)) == pytest.approx(0.0, abs=1e-10)


def test_exact_log_partition_with_strong_couplings():
    rng = np.random.default_rng(1)
    upper = np.triu(rng.normal(0.0, 3.0, (12, 12)), 1)
    coupling, intercept = upper + upper.T, rng.normal(0.0, 3.0, 12)
    exact = kernels.log_partition_exact(coupling, intercept)
    assert exact == pytest.approx(brute_force_log_z(coupling, intercept), abs=1e-10)


def test_ais_lands_within_its_band_of_the_exact_value_at_d20():
    X, _, _ = make_fvbm(2000, 20, coupling_variance=0.5 / 20, random_state=20)
    est = FVBMPseudoLikelihood(solver="mm", compute_std=False, random_state=0).fit(X)
    exact = est.log_partition_function()
    assert exact.method == "exact" and exact.lower == exact.log_z == exact.upper
    est.set_params(score_method="ais")
    ais = est.log_partition_function()
    assert ais.method == "ais"
    assert ais.lower <= exact.log_z <= ais.upper, (ais, exact.log_z)
    assert 0 < ais.upper - ais.lower < 0.1
    # Cached per fitted state: score_samples is deterministic and row-wise.
    first = est.score_samples(X[:50])
    np.testing.assert_array_equal(first, est.score_samples(X[:50]))
    np.testing.assert_array_equal(first[10:20], est.score_samples(X[10:20]))
    np.testing.assert_allclose(
        first,
        est.set_params(score_method="exact").score_samples(X[:50]),
        atol=ais.upper - ais.lower,
    )


def test_auto_score_uses_ais_beyond_enumeration_and_exact_raises():
    rng = np.random.default_rng(0)
    X = np.where(rng.random((300, 31)) < 0.5, 1.0, 0.0)
    est = FVBMPseudoLikelihood(
        solver="mm", alpha=0.01, compute_std=False, ais_betas=200, random_state=0
    ).fit(X)
    assert np.isfinite(est.score(X))
    assert est.log_partition_function().method == "ais"
    est.set_params(score_method="exact")
    with pytest.raises(ValueError, match=r"2 \*\* 31 states.*limited to 30.*'ais'"):
        est.score(X)


def exact_probabilities(coupling, intercept):
    S = all_states(intercept.shape[0])
    log_p = 0.5 * np.einsum("ij,jk,ik->i", S, coupling, S) + S @ intercept
    return S, np.exp(log_p - logsumexp(log_p))


def empirical_tv(draws, coupling, intercept):
    """Total variation distance between the draws' histogram and the exact law."""
    S, p = exact_probabilities(coupling, intercept)
    codes = {tuple(s): k for k, s in enumerate(S)}
    counts = np.bincount([codes[tuple(x)] for x in draws], minlength=len(S))
    return 0.5 * np.abs(counts / len(draws) - p).sum()


@pytest.mark.parametrize("method", ["exact", "gibbs"])
def test_sampler_draws_from_the_model(method):
    _, coupling, intercept = make_fvbm(10, 4, coupling_variance=0.8, random_state=5)

    def draw():
        return sample_fvbm(
            coupling,
            intercept,
            20000,
            method=method,
            burn_in=50,
            thinning=2,
            random_state=0,
        )

    draws = draw()
    assert empirical_tv(draws, coupling, intercept) < 0.03
    np.testing.assert_array_equal(draws, draw())


@pytest.mark.parametrize("values", [(0, 1), (-1, 1)])
def test_sample_returns_the_training_convention(well_posed, values):
    X = well_posed[0] if values == (-1, 1) else (well_posed[0] + 1) / 2
    est = FVBMPseudoLikelihood(solver="mm", compute_std=False, random_state=0).fit(X)
    assert est.input_values_ == values
    draws = est.sample(500)
    assert set(np.unique(draws)) == set(values)
    np.testing.assert_array_equal(draws, est.sample(500))
    assert not np.array_equal(draws, est.sample(500, random_state=1))


def test_gibbs_sample_beyond_enumeration_is_reproducible():
    rng = np.random.default_rng(0)
    X = np.where(rng.random((200, 22)) < 0.5, 1.0, -1.0)
    est = FVBMPseudoLikelihood(
        solver="mm", alpha=0.05, compute_std=False, random_state=0
    ).fit(X)
    draws = est.sample(40, burn_in=20)
    assert draws.shape == (40, 22)
    np.testing.assert_array_equal(draws, est.sample(40, burn_in=20))


# ---------------------------------------------------------------------------
# Standard errors


def test_sandwich_intervals_cover_the_truth_at_the_nominal_rate():
    _, coupling, intercept = make_fvbm(10, 5, coupling_variance=0.3, random_state=7)
    truth = pack(intercept, coupling)
    covered, estimates, stds = [], [], []
    for rep in range(150):
        X = sample_fvbm(coupling, intercept, 1500, random_state=rep)
        est = FVBMPseudoLikelihood(solver="lbfgs", tol=1e-8).fit(X)
        coupling_ci, intercept_ci = est.confidence_intervals(0.05)
        low = pack(intercept_ci[:, 0], coupling_ci[..., 0])
        high = pack(intercept_ci[:, 1], coupling_ci[..., 1])
        covered.append((low <= truth) & (truth <= high))
        estimates.append(theta_of(est))
        stds.append(pack(est.intercept_std_, est.coupling_std_))
    coverage = np.mean(covered)
    assert 0.93 < coverage < 0.97, coverage
    # The standard errors match the spread of the estimates across replicates.
    ratio = np.mean(stds, axis=0) / np.std(estimates, axis=0)
    assert np.all((0.75 < ratio) & (ratio < 1.3)), ratio


def test_standard_errors_shapes_and_symmetry(well_posed):
    est = FVBMPseudoLikelihood(solver="mm").fit(well_posed[0])
    assert est.coupling_std_.shape == (6, 6)
    np.testing.assert_array_equal(est.coupling_std_, est.coupling_std_.T)
    assert np.all(np.diag(est.coupling_std_) == 0)
    assert np.all(est.intercept_std_ > 0)
    coupling_ci, intercept_ci = est.confidence_intervals(0.1)
    assert np.all(coupling_ci[..., 0] <= coupling_ci[..., 1])
    narrower, _ = est.confidence_intervals(0.5)
    assert np.all(
        narrower[..., 1] - narrower[..., 0] <= coupling_ci[..., 1] - coupling_ci[..., 0]
    )


# ---------------------------------------------------------------------------
# Conventions, determinism, scikit-learn integration


def test_both_conventions_give_the_same_model(well_posed):
    X = well_posed[0]
    spins = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(X)
    bits = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit((X + 1) / 2)
    np.testing.assert_array_equal(spins.coupling_, bits.coupling_)
    assert spins.score(X) == pytest.approx(bits.score((X + 1) / 2), abs=1e-12)
    float32 = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(
        X.astype(np.float32)
    )
    np.testing.assert_array_equal(spins.coupling_, float32.coupling_)


def test_pseudo_log_likelihood_is_the_fitted_objective(well_posed):
    X = well_posed[0]
    est = FVBMPseudoLikelihood(solver="mm", tol=1e-9, compute_std=False).fit(X)
    per_sample = est.pseudo_log_likelihood(X)
    assert per_sample.shape == (X.shape[0],)
    assert per_sample.mean() == pytest.approx(numpy_log_pl(theta_of(est), X), abs=1e-12)
    assert per_sample.mean() == pytest.approx(
        est.pseudo_likelihood_curve_[-1], abs=1e-12
    )
    # Pseudo-likelihood is not likelihood.
    assert abs(est.score(X) - per_sample.mean()) > 1e-3


def test_same_random_state_gives_bit_identical_results(well_posed):
    X = well_posed[0]
    params = dict(solver="bslm", init="random", score_method="ais", random_state=11)
    first = FVBMPseudoLikelihood(**params).fit(X)
    second = FVBMPseudoLikelihood(**params).fit(X)
    np.testing.assert_array_equal(first.coupling_, second.coupling_)
    np.testing.assert_array_equal(first.coupling_std_, second.coupling_std_)
    np.testing.assert_array_equal(first.score_samples(X), second.score_samples(X))
    np.testing.assert_array_equal(first.sample(100), second.sample(100))
    other = FVBMPseudoLikelihood(**{**params, "random_state": 12}).fit(X)
    assert not np.array_equal(
        first.pseudo_likelihood_curve_, other.pseudo_likelihood_curve_
    )


def test_grid_search_over_solvers(well_posed):
    X = well_posed[0][:600]
    search = GridSearchCV(
        FVBMPseudoLikelihood(compute_std=False), {"solver": SOLVERS}, cv=2
    ).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores))
    assert np.ptp(scores) < 1e-3  # the same maximiser, whichever solver


@pytest.mark.parametrize("solver", ALL_SOLVERS)
def test_verbose_prints_one_progress_line_per_iteration(well_posed, solver, capsys):
    # The package's one progress format (the training engine's progress_line).
    est = FVBMPseudoLikelihood(solver=solver, verbose=1, compute_std=False)
    est.fit(well_posed[0])
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == est.n_iter_
    pattern = (
        r"\[FVBMPseudoLikelihood\] iteration (\d+)/1000, \d+\.\d\d s, "
        r"mean log pseudo likelihood (-\d+\.\d{4})"
    )
    for iteration, line in enumerate(lines, start=1):
        match = re.match(pattern, line)
        assert match and int(match[1]) == iteration, line
        value = est.pseudo_likelihood_curve_[iteration]
        assert float(match[2]) == pytest.approx(value, abs=5e-5)


# ---------------------------------------------------------------------------
# The joint solvers' linear algebra (Ising-model sizes), L1 and node-wise fits


def numpy_objective(T, X, units, l2, l1):
    """The penalised log-PL of ``PseudoLikelihood`` in numpy: each modelled
    unit's logistic regression on ``z_ij`` summed, penalties by entry."""
    total = 0.0
    for c, j in enumerate(units):
        Z = X.copy()
        Z[:, j] = 1.0
        a = Z @ T[:, c]
        total += np.mean(X[:, j] * a - np.logaddexp(a, -a))
    symmetric = T.shape[0] == T.shape[1] and np.array_equal(units, np.arange(len(T)))
    weight = np.where(np.eye(*T.shape, dtype=bool), 1.0, 0.5) if symmetric else 1.0
    # the packed inner product counts each coupling once
    return total - 0.5 * np.sum(weight * l2 * T**2) - np.sum(weight * l1 * np.abs(T))


@pytest.mark.parametrize("units", [None, [1, 4, 5]], ids=["joint", "nodewise"])
@pytest.mark.parametrize("alpha_l2, alpha_l1", [(0.0, 0.0), (0.1, 0.0), (0.05, 0.02)])
def test_matrix_product_derivatives_match_finite_differences(units, alpha_l2, alpha_l1):
    rng = np.random.default_rng(0)
    X = np.where(rng.random((300, 6)) < 0.6, 1.0, -1.0)
    objective = PseudoLikelihood(
        X, np.full(300, 1 / 300), units=units, alpha_l2=alpha_l2, alpha_l1=alpha_l1
    )
    T = rng.normal(0.0, 0.3, objective.shape)
    if units is None:
        T = T + T.T
    cols = objective.units

    def f(T):
        return numpy_objective(T, X, cols, objective.l2, objective.l1)

    value, gradient = objective.derivatives(T)
    assert value == pytest.approx(f(T), abs=1e-12)
    # derivatives along directions that respect the layout (a symmetric
    # coupling moves both entries)
    for _ in range(5):
        V = rng.normal(size=objective.shape)
        if units is None:
            V = V + V.T
        slope = (f(T + 1e-6 * V) - f(T - 1e-6 * V)) / 2e-6
        smooth_slope = slope + objective.inner(objective.l1 * np.sign(T), V)
        assert objective.inner(gradient, V) == pytest.approx(smooth_slope, abs=1e-7)
        change = objective.derivatives(T + 1e-6 * V)[1]
        change -= objective.derivatives(T - 1e-6 * V)[1]
        objective.derivatives(T)
        np.testing.assert_allclose(
            objective.hessian_product(V), -change / 2e-6, atol=1e-7
        )


@pytest.mark.parametrize("units", [None, [0, 2, 3]], ids=["joint", "nodewise"])
def test_woodbury_preconditioner_inverts_every_unit_block(units):
    # Unit j's block sum_i omega_i s_j z_ij z_ij^T, inverted explicitly in
    # numpy; the symmetric layout splits each coupling evenly and averages.
    rng = np.random.default_rng(1)
    X = np.where(rng.random((400, 5)) < 0.3, 1.0, -1.0)
    units_ = np.arange(5) if units is None else np.array(units)
    omega = rng.random(400) / 400
    scale = rng.random(units_.size) + 0.5
    preconditioner = NodeGramPreconditioner(X, omega, scale, 0.0, units_, units is None)
    R = rng.normal(size=(5, units_.size))
    if units is None:
        R = R + R.T
    rhs = R.copy()
    if units is None:
        rhs = 0.5 * R
        rhs[np.diag_indices(5)] = np.diag(R)
    Y = np.empty_like(R)
    for c, j in enumerate(units_):
        Z = X.copy()
        Z[:, j] = 1.0
        Y[:, c] = np.linalg.solve(scale[c] * (Z.T * omega) @ Z, rhs[:, c])
    if units is None:
        expected = 0.5 * (Y + Y.T)
        expected[np.diag_indices(5)] = np.diag(Y)
    else:
        expected = Y
    np.testing.assert_allclose(preconditioner(R), expected, rtol=1e-10, atol=1e-12)


def split_variable_l1_oracle(X, alpha):
    """The joint L1 problem by scipy's L-BFGS-B on ``m = u - v``, ``u, v >=
    0`` (smooth), in numpy: an independent optimiser."""
    n, d = X.shape
    upper = np.triu_indices(d, 1)
    q = upper[0].size

    def negative(z):
        b, u, v = z[:d], z[d : d + q], z[d + q :]
        M = np.zeros((d, d))
        M[upper] = u - v
        M = M + M.T
        A = X @ M + b
        value = np.mean(np.sum(X * A - np.logaddexp(A, -A), axis=1))
        R = X - np.tanh(A)
        g = ((R.T @ X + X.T @ R) / n)[upper]
        value -= alpha * (u.sum() + v.sum())
        return -value, -np.concatenate([R.mean(axis=0), g - alpha, -g - alpha])

    bounds = [(None, None)] * d + [(0.0, None)] * (2 * q)
    result = scipy.optimize.minimize(
        negative,
        np.zeros(d + 2 * q),
        jac=True,
        method="L-BFGS-B",
        bounds=bounds,
        options={"ftol": 0.0, "gtol": 1e-12, "maxiter": 100_000},
    )
    M = np.zeros((d, d))
    M[upper] = result.x[d : d + q] - result.x[d + q :]
    return result.x[:d], M + M.T, -result.fun


def test_l1_newton_matches_a_split_variable_oracle(well_posed):
    X = well_posed[0]
    intercept, coupling, best = split_variable_l1_oracle(X, 0.02)
    est = FVBMPseudoLikelihood(penalty="l1", alpha=0.02, tol=1e-12).fit(X)
    np.testing.assert_allclose(est.coupling_, coupling, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, intercept, atol=1e-6)
    zeros = est.coupling_[np.triu_indices(6, 1)] == 0.0
    assert zeros.any()  # exact zeros, where the oracle sits at 0
    np.testing.assert_array_less(np.abs(coupling[np.triu_indices(6, 1)][zeros]), 1e-8)
    assert est.pseudo_likelihood_curve_[-1] == pytest.approx(best, abs=1e-10)
    assert np.all(np.diff(est.pseudo_likelihood_curve_) >= -1e-12)


def test_l1_above_the_largest_covariance_gradient_is_the_independent_model():
    # At M = 0 with the intercepts fitted (b_j = arctanh(mean x_j)) the
    # coupling gradients are the exact threshold: above the largest, every
    # coupling stays 0 (the KKT conditions hold there); just below, one enters.
    X, _, _ = make_fvbm(2000, 6, coupling_variance=0.1, random_state=3)
    b = np.arctanh(X.mean(axis=0))
    grad = numpy_gradient(np.concatenate([b, np.zeros(15)]), X)[6:]
    largest = np.abs(grad).max()
    empty = FVBMPseudoLikelihood(penalty="l1", alpha=1.001 * largest).fit(X)
    assert not empty.coupling_.any()
    np.testing.assert_allclose(empty.intercept_, b, atol=1e-9)
    one = FVBMPseudoLikelihood(penalty="l1", alpha=0.95 * largest).fit(X)
    nonzero = np.flatnonzero(one.coupling_[np.triu_indices(6, 1)])
    np.testing.assert_array_equal(nonzero, [np.argmax(np.abs(grad))])


def test_subsampled_hessian_products_use_the_reweighted_rows():
    # hessian_rows: the product of the sampled rows, reweighted to the total
    # weight; value and gradient still from every row.
    rng = np.random.default_rng(7)
    X = np.where(rng.random((400, 6)) < 0.5, 1.0, -1.0)
    w = np.full(400, 1 / 400)
    rows = np.sort(rng.permutation(400)[:100])
    sampled = PseudoLikelihood(X, w, hessian_rows=rows)
    full = PseudoLikelihood(X, w)
    on_sample = PseudoLikelihood(X[rows], np.full(100, 1 / 100))
    T = rng.normal(0.0, 0.2, (6, 6))
    T = T + T.T
    V = rng.normal(size=(6, 6))
    V = V + V.T
    value, gradient = sampled.derivatives(T)
    expected_value, expected_gradient = full.derivatives(T)
    assert value == expected_value
    np.testing.assert_array_equal(gradient, expected_gradient)
    on_sample.derivatives(T)
    np.testing.assert_allclose(
        sampled.hessian_product(V), on_sample.hessian_product(V), rtol=1e-12
    )


def test_newton_with_a_sampled_hessian_reaches_the_mple():
    # With many distinct rows (here 5,000 > 100 d) the Newton directions use
    # 50 d of them; the line search and the stopping rule use all, so the fit
    # ends at the maximiser that L-BFGS-B (all rows throughout) finds.
    from sklearn_rbm._fvbm.solvers import _HESSIAN_ROWS_PER_UNIT

    X, _, _ = make_fvbm(5000, 20, coupling_variance=0.5 / 20, random_state=8)
    assert len(distinct_rows(X)[0]) >= 2 * _HESSIAN_ROWS_PER_UNIT * 20
    newton = FVBMPseudoLikelihood(tol=1e-10, compute_std=False).fit(X)
    lbfgs = FVBMPseudoLikelihood(solver="lbfgs", tol=1e-10, compute_std=False)
    lbfgs.fit(X)
    assert newton.pseudo_likelihood_curve_[-1] == pytest.approx(
        lbfgs.pseudo_likelihood_curve_[-1], rel=1e-11
    )
    np.testing.assert_allclose(newton.coupling_, lbfgs.coupling_, atol=1e-5)
    assert np.all(np.diff(newton.pseudo_likelihood_curve_) >= 0)


def test_free_set_blocks_are_the_hessian_on_the_free_coordinates():
    # Proximal Newton's unit blocks B_j, used through per_unit and the flat
    # layout, against the dense Hessian product of PseudoLikelihood on a
    # direction supported on the free set (intercepts and a few couplings).
    rng = np.random.default_rng(4)
    X = np.where(rng.random((500, 7)) < 0.4, 1.0, -1.0)
    objective = PseudoLikelihood(X, np.full(500, 1 / 500), hessian_dtype=np.float64)
    T = rng.normal(0.0, 0.2, (7, 7))
    objective.derivatives(T + T.T)
    free_j, free_k = np.array([0, 0, 2, 3, 5]), np.array([1, 4, 6, 4, 6])
    model = FreeSetModel(
        np.ascontiguousarray(X.T),
        objective.curvatures,
        np.arange(7),
        (free_j, free_k),
        (free_k, free_j),
    )
    step_b, step_m = rng.normal(size=7), rng.normal(size=5)
    V = np.zeros((7, 7))
    V[free_j, free_k] = V[free_k, free_j] = step_m
    V[np.diag_indices(7)] = step_b
    expected = objective.hessian_product(V)
    # U_j = B_j v_j by unit; a coordinate's product sums its units' entries
    U = np.zeros(model.columns.size)
    per_unit = model.per_block(step_b, step_m)
    for j in range(7):
        start, stop = model.offsets[j], model.offsets[j + 1]
        k = stop - start
        block = model.blocks[model.block_start[j] : model.block_start[j] + k * k]
        U[start:stop] = block.reshape(k, k) @ per_unit[start:stop]
    for j in range(7):
        assert U[model.offsets[j] + model.self_pos[j]] == pytest.approx(
            expected[j, j], rel=1e-10
        )
    for q, (j, k) in enumerate(zip(free_j, free_k, strict=True)):
        product = U[model.offsets[j] + model.pos_first[q]]
        product += U[model.offsets[k] + model.pos_second[q]]
        assert product == pytest.approx(expected[j, k], rel=1e-10)


def test_l1_newton_meets_the_optimality_conditions_when_the_working_set_binds():
    # From the independent start far more couplings pass the gradient test
    # than the working set admits (max(d, nonzero)); the fit must still end
    # where every coupling satisfies the L1 optimality conditions, checked
    # with the numpy gradient: |g| <= alpha at zero, g = alpha sign(m) off it.
    X, _, _ = make_fvbm(3000, 24, coupling_variance=0.08, random_state=5)
    alpha = 0.004
    b = np.arctanh(X.mean(axis=0))
    start = numpy_gradient(np.concatenate([b, np.zeros(276)]), X)[24:]
    assert np.count_nonzero(np.abs(start) > alpha) > 24  # the limit binds
    est = FVBMPseudoLikelihood(penalty="l1", alpha=alpha, tol=1e-12).fit(X)
    upper = np.triu_indices(24, 1)
    m = est.coupling_[upper]
    g = numpy_gradient(pack(est.intercept_, est.coupling_), X)
    np.testing.assert_allclose(g[:24], 0.0, atol=1e-8)
    zero = m == 0.0
    assert zero.any() and not zero.all()
    np.testing.assert_array_less(np.abs(g[24:][zero]), alpha + 1e-8)
    np.testing.assert_allclose(g[24:][~zero], alpha * np.sign(m[~zero]), atol=1e-8)
    assert np.all(np.diff(est.pseudo_likelihood_curve_) >= -1e-12)


def test_proximal_newton_in_the_nodewise_layout_solves_each_lasso():
    # solver='nodewise' with L1: each modelled unit's L1 logistic regression
    # (half of each coupling's penalty per unit), checked per unit with the
    # numpy gradient of its conditional log-likelihood.
    X, _, _ = make_fvbm(2000, 12, coupling_variance=0.1, random_state=6)
    units, alpha = np.array([0, 4, 5, 11]), 0.02
    objective = PseudoLikelihood(
        X, np.full(2000, 1 / 2000), units=units, alpha_l1=alpha,
        hessian_dtype=np.float32,
    )  # fmt: skip
    Theta = np.zeros((12, 4))
    Theta[units, np.arange(4)] = np.arctanh(X[:, units].mean(axis=0))
    state = ProximalNewtonState(objective, Theta)
    for _ in range(100):
        state.step()
        if state.next_rise < 1e-14:
            break
    W = state.Theta
    for c, j in enumerate(units):
        Z = X.copy()
        Z[:, j] = 1.0
        residual = X[:, j] - np.tanh(Z @ W[:, c])
        g = Z.T @ residual / 2000
        assert abs(g[j]) < 1e-8  # the free intercept
        others = np.delete(np.arange(12), j)
        w, g = W[others, c], g[others]
        assert (w == 0).any() and (w != 0).any()
        np.testing.assert_array_less(np.abs(g[w == 0]), alpha / 2 + 1e-8)
        np.testing.assert_allclose(g[w != 0], alpha / 2 * np.sign(w[w != 0]), atol=1e-8)


def test_l1_newton_on_binarised_digits_meets_the_optimality_conditions():
    # Binarised images are the hard case for Newton-CG (most pixels nearly
    # deterministic given the others: a badly conditioned Hessian); proximal
    # Newton with exact unit blocks reaches the L1 optimum in a few dozen
    # iterations, checked with the numpy gradient.
    from sklearn.datasets import load_digits

    images = load_digits().data >= 8
    X = np.where(images[:, images.any(axis=0) & ~images.all(axis=0)], 1.0, -1.0)
    d = X.shape[1]
    alpha = 0.01
    est = FVBMPseudoLikelihood(penalty="l1", alpha=alpha, tol=1e-10).fit(X)
    assert est.n_iter_ <= 40
    m = est.coupling_[np.triu_indices(d, 1)]
    g = numpy_gradient(pack(est.intercept_, est.coupling_), X)
    np.testing.assert_allclose(g[:d], 0.0, atol=1e-7)
    zero = m == 0.0
    assert 0.3 < zero.mean() < 0.95  # a sparse graph, not an empty one
    np.testing.assert_array_less(np.abs(g[d:][zero]), alpha + 1e-7)
    np.testing.assert_allclose(g[d:][~zero], alpha * np.sign(m[~zero]), atol=1e-7)


def cycle_graph(d, strength):
    coupling = np.zeros((d, d))
    for j in range(d):
        coupling[j, (j + 1) % d] = coupling[(j + 1) % d, j] = strength
    return coupling


@pytest.mark.parametrize("solver", ["newton", "nodewise"])
def test_l1_recovers_the_edges_of_a_cycle(solver):
    # Ravikumar, Wainwright & Lafferty (2010): on a sparse graph with enough
    # samples, the L1 fit finds exactly the edges (here a cycle of 8 units).
    # (At alpha = 0.08 the joint fit keeps one spurious coupling of 0.002;
    # from 0.1 both solvers find exactly the cycle.)
    truth = cycle_graph(8, 0.5)
    X = sample_fvbm(truth, np.zeros(8), 4000, random_state=0)
    est = FVBMPseudoLikelihood(solver=solver, penalty="l1", alpha=0.12).fit(X)
    np.testing.assert_array_equal(est.coupling_ != 0, truth != 0)
    assert np.all(est.coupling_[truth != 0] > 0.2)


def test_nodewise_is_per_unit_logistic_regression(well_posed):
    # Each unit's unpenalised logistic regression on the others, fitted by
    # scikit-learn: P(x_j = 1 | rest) = sigmoid(2 a_j), so the coefficients
    # are twice the couplings; the estimate averages the two of each pair.
    from sklearn.linear_model import LogisticRegression

    X = well_posed[0]
    W = np.zeros((6, 6))
    intercept = np.zeros(6)
    for j in range(6):
        others = np.delete(np.arange(6), j)
        model = LogisticRegression(C=np.inf, tol=1e-12, max_iter=10_000)
        model.fit(X[:, others], X[:, j])
        W[others, j] = model.coef_[0] / 2
        intercept[j] = model.intercept_[0] / 2
    est = FVBMPseudoLikelihood(solver="nodewise", tol=1e-10).fit(X)
    np.testing.assert_allclose(est.coupling_, (W + W.T) / 2, atol=1e-6)
    np.testing.assert_allclose(est.intercept_, intercept, atol=1e-6)
    assert not hasattr(est, "coupling_std_")  # not the joint MPLE: no sandwich
    with pytest.warns(UserWarning, match="compute_std=True.*'nodewise'"):
        FVBMPseudoLikelihood(solver="nodewise", compute_std=True).fit(X)


def test_nodewise_groups_in_parallel_agree_and_repeat_exactly(well_posed):
    X = well_posed[0]
    params = dict(solver="nodewise", penalty="l1", alpha=0.01, tol=1e-10)
    one = FVBMPseudoLikelihood(**params).fit(X)
    two = FVBMPseudoLikelihood(**params, n_jobs=2).fit(X)
    again = FVBMPseudoLikelihood(**params, n_jobs=2).fit(X)
    np.testing.assert_allclose(two.coupling_, one.coupling_, atol=1e-6)
    np.testing.assert_array_equal(two.coupling_ == 0, one.coupling_ == 0)
    np.testing.assert_array_equal(two.coupling_, again.coupling_)


def test_newton_at_d64_reaches_an_independent_optimiser():
    # d >= 63 rows go through the packed-bits distinct rows; the objective is
    # compared with scipy's L-BFGS-B on the numpy log-PL run to precision.
    # (n = 4,000: at n = 1,500 some conditionals are separated, no MPLE)
    X, _, _ = make_fvbm(4000, 64, coupling_variance=0.5 / 64, random_state=64)
    X[:300] = X[300:600]  # duplicated rows: weights 2 / n
    rows, w = distinct_rows(X)
    assert rows.shape[0] == 3700 and np.isclose(w.sum(), 1.0) and w.max() == 2 / 4000
    est = FVBMPseudoLikelihood().fit(X)
    result = scipy.optimize.minimize(
        lambda t: (-numpy_log_pl(t, X), -numpy_gradient(t, X)),
        np.zeros(64 * 65 // 2),
        jac=True,
        method="L-BFGS-B",
        options={"ftol": 0.0, "gtol": 1e-9, "maxiter": 20_000},
    )
    ours = numpy_log_pl(theta_of(est), X)
    assert (-result.fun - ours) / abs(result.fun) < 1e-9
    assert est.n_iter_ < 15
    assert est.mple_exists_ is True  # the certificate by conjugate gradients


def test_mm_has_no_size_limit_and_agrees_with_newton():
    rng = np.random.default_rng(0)
    X = np.where(rng.random((300, 105)) < 0.5, 1.0, -1.0)  # p = 5,565 > 5,050
    mm = FVBMPseudoLikelihood(solver="mm", alpha=0.05, tol=1e-9).fit(X)
    newton = FVBMPseudoLikelihood(alpha=0.05, tol=1e-9).fit(X)
    np.testing.assert_allclose(mm.coupling_, newton.coupling_, atol=1e-5)
    assert np.all(np.diff(mm.pseudo_likelihood_curve_) >= -1e-12)


def test_sandwich_matches_a_numpy_sandwich(well_posed):
    # H from finite differences of the numpy gradient, J from numpy scores.
    X = well_posed[0]
    est = FVBMPseudoLikelihood(tol=1e-10).fit(X)
    theta = theta_of(est)
    H = -numpy_hessian(theta, X)
    b, M = numpy_unpack(theta, 6)
    R = X - np.tanh(X @ M + b)
    scores = np.array(
        [numpy_transpose_map(R[i : i + 1], X[i : i + 1]) for i in range(len(X))]
    )
    J = np.cov(scores.T, bias=True)
    covariance = np.linalg.solve(H, np.linalg.solve(H, J).T) / len(X)
    expected = np.sqrt(np.diag(covariance))
    np.testing.assert_allclose(
        pack(est.intercept_std_, est.coupling_std_), expected, rtol=1e-4
    )


def test_penalty_and_n_jobs_are_checked_against_the_solver(well_posed):
    X = well_posed[0]
    with pytest.raises(
        ValueError, match=r"solver='bslm' supports only penalty='l2'.*'newton'"
    ):
        FVBMPseudoLikelihood(solver="bslm", penalty="l1", alpha=0.1).fit(X)
    with pytest.warns(UserWarning, match="n_jobs is only used by solver='nodewise'"):
        FVBMPseudoLikelihood(solver="mm", n_jobs=2).fit(X)
    l1 = FVBMPseudoLikelihood(penalty="l1", alpha=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        l1.fit(X)  # compute_std='auto': no standard errors under L1, no warning
    assert not hasattr(l1, "coupling_std_")
    with pytest.warns(UserWarning, match="compute_std=True.*penalty='l1'"):
        l1.set_params(compute_std=True).fit(X)


def test_l1_with_a_constant_feature_warns_and_removing_it_works(well_posed):
    # The L1 penalty leaves the intercepts free: a constant feature's would run
    # off. It gets the automatic ridge; the advice, removing it, leaves the
    # well-posed data.
    X = well_posed[0].copy()
    X[:, 3] = -1.0
    with pytest.warns(
        MPLEDoesNotExistWarning, match=r"features \[3\] are constant.*Remove these"
    ):
        est = FVBMPseudoLikelihood(penalty="l1", alpha=0.05).fit(X)
    assert est.mple_exists_ is False
    # the ridge MAP of a feature seen at -1 on every row: 2 (1 - tanh) ~ b / n
    b = -est.intercept_[3]
    assert 3 < b < 6 and np.all(np.isfinite(est.coupling_))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = FVBMPseudoLikelihood(penalty="l1", alpha=0.05).fit(np.delete(X, 3, 1))
    assert kept.mple_exists_ is True


def test_alpha_path_by_grid_search(well_posed):
    # The documented path over alpha: held-out exact log-likelihood (score),
    # or held-out pseudo-likelihood where d is too large for AIS.
    X = well_posed[0][:1200]
    grid = {"alpha": [0.001, 0.01, 0.1, 1.0]}
    search = GridSearchCV(FVBMPseudoLikelihood(penalty="l1"), grid, cv=3).fit(X)
    scores = search.cv_results_["mean_test_score"]
    assert np.all(np.isfinite(scores)) and scores[-1] < scores[0]
    pseudo = GridSearchCV(
        FVBMPseudoLikelihood(penalty="l1"),
        grid,
        cv=3,
        scoring=lambda est, X, y=None: est.pseudo_log_likelihood(X).mean(),
    ).fit(X)
    assert pseudo.best_params_["alpha"] < 1.0


# ---------------------------------------------------------------------------
# Bad input and warnings


def test_non_binary_input_shows_an_offending_value():
    X = np.ones((10, 3))
    X[4, 2] = 0.5
    with pytest.raises(
        ValueError, match=r"\{0, 1\} or in \{-1, 1\}; found X\[4, 2\] = .*0\.5"
    ):
        FVBMPseudoLikelihood().fit(X)


def test_mixed_conventions_are_rejected():
    X = np.array([[0.0, 1.0], [1.0, -1.0], [1.0, 1.0]])
    with pytest.raises(
        ValueError, match=r"mixes the \{0, 1\} and \{-1, 1\}.*X\[0, 0\] = 0"
    ):
        FVBMPseudoLikelihood().fit(X)


def test_constant_feature_warns_and_alpha_fixes_it(well_posed):
    X = well_posed[0].copy()
    X[:, 2] = 1.0
    with pytest.warns(
        MPLEDoesNotExistWarning, match=r"features \[2\] are constant.*alpha > 0"
    ) as caught:
        est = FVBMPseudoLikelihood(solver="lbfgs").fit(X)
    assert caught[0].filename == __file__  # points at the user's call
    assert est.mple_exists_ is False
    assert est.alpha_ == 0.0  # fitted apart, the rest's MPLE exists
    assert np.all(np.isfinite(est.coupling_)) and np.all(np.isfinite(est.intercept_))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        penalised = FVBMPseudoLikelihood(solver="lbfgs", alpha=1e-3).fit(X)
    assert penalised.mple_exists_ is True and penalised.alpha_ == 1e-3
    assert np.all(np.isfinite(penalised.intercept_std_))


def test_separable_data_warn(well_posed):
    X = well_posed[0].copy()
    X[:, 4] = -X[:, 0]
    with pytest.warns(
        MPLEDoesNotExistWarning, match=r"feature 4 is the opposite of feature 0"
    ) as caught:
        est = FVBMPseudoLikelihood(solver="lbfgs", compute_std=False).fit(X)
    assert caught[0].filename == __file__
    assert est.mple_exists_ is False


def test_single_feature_is_rejected():
    with pytest.raises(ValueError, match=r"1 feature\(s\).*minimum of 2"):
        FVBMPseudoLikelihood().fit(np.array([[0.0], [1.0]]))


@pytest.mark.parametrize("bad, message", [(np.nan, "NaN"), (np.inf, "infinity")])
def test_non_finite_input_is_rejected(bad, message):
    X = np.ones((5, 3))
    X[1, 1] = bad
    with pytest.raises(ValueError, match=message):
        FVBMPseudoLikelihood().fit(X)


def test_wrong_number_of_features_at_score_time(well_posed):
    est = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(well_posed[0])
    with pytest.raises(
        ValueError, match="X has 5 features, but FVBMPseudoLikelihood is expecting 6"
    ):
        est.score(well_posed[0][:, :5])
    with pytest.raises(ValueError, match="binary"):
        est.score_samples(well_posed[0] * 2)


def test_unknown_solver_lists_the_valid_ones(well_posed):
    valid = "".join(f"(?=.*'{name}')" for name in ALL_SOLVERS)
    with pytest.raises(ValueError, match=rf"'solver' parameter {valid}"):
        FVBMPseudoLikelihood(solver="newton-cg").fit(well_posed[0])


def test_step_size_warnings(well_posed):
    X = well_posed[0]
    with pytest.warns(
        UserWarning, match="no monotone or convergence guarantee"
    ) as caught:
        FVBMPseudoLikelihood(solver="ga", step_size=1.5, compute_std=False).fit(X)
    assert caught[0].filename == __file__
    with pytest.warns(UserWarning, match="only used by solver='ga'"):
        FVBMPseudoLikelihood(solver="mm", step_size=0.5, compute_std=False).fit(X)


def test_diverging_fit_raises_naming_the_step_size(well_posed):
    est = FVBMPseudoLikelihood(solver="ga", step_size=1e300, compute_std=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        with pytest.raises(FloatingPointError, match="step_size=1e\\+300"):
            est.fit(well_posed[0])


def test_max_iter_gives_convergence_warning(well_posed):
    with pytest.warns(
        ConvergenceWarning, match="max_iter=3.*solver='newton'"
    ) as caught:
        FVBMPseudoLikelihood(solver="bslm", max_iter=3, compute_std=False).fit(
            well_posed[0]
        )
    assert caught[0].filename == __file__


def test_dense_parameter_limit(well_posed, monkeypatch):
    # Pretend d = 6 is beyond the d <= 100 limit of the p x p matrices: the
    # standard errors are skipped ('auto') or refused with a warning (True);
    # no solver and no existence check needs the p x p matrices.
    monkeypatch.setattr(diagnostics, "MAX_DENSE_PARAMETERS", 20)
    X = well_posed[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        est = FVBMPseudoLikelihood(solver="mm").fit(X)
    assert not hasattr(est, "coupling_std_")
    assert est.mple_exists_ is True  # the certificate, by conjugate gradients
    with pytest.warns(
        UserWarning, match=r"compute_std=True.*p = d\(d\+1\)/2 = 21.*d <= 5"
    ):
        est = FVBMPseudoLikelihood(compute_std=True).fit(X)
    assert not hasattr(est, "coupling_std_")


def test_sample_fvbm_rejects_invalid_parameters():
    with pytest.raises(ValueError, match="symmetric with a zero diagonal"):
        sample_fvbm(np.array([[0.0, 1.0], [0.0, 0.0]]), np.zeros(2), 5)
    with pytest.raises(ValueError, match="symmetric with a zero diagonal"):
        sample_fvbm(np.eye(2), np.zeros(2), 5)
    with pytest.raises(ValueError, match="finite"):
        sample_fvbm(np.zeros((2, 2)), np.array([0.0, np.nan]), 5)
    with pytest.raises(ValueError, match=r"shape \(2, 2\)"):
        sample_fvbm(np.zeros((3, 3)), np.zeros(2), 5)
    with pytest.raises(ValueError, match="method='gibbs'"):
        sample_fvbm(np.zeros((21, 21)), np.zeros(21), 5, method="exact")


def test_queries_before_fit_raise():
    with pytest.raises(NotFittedError):
        FVBMPseudoLikelihood().sample(3)


def test_sparse_X_is_refused_with_the_fix(well_posed):
    # {0, 1} data become dense spins (0 -> -1): nothing in the arithmetic
    # could use the sparsity, so sparse X is refused with the conversion.
    import scipy.sparse

    X = scipy.sparse.csr_matrix((well_posed[0][:500] > 0).astype(float))
    with pytest.raises(TypeError, match=r"dense data is required.*\.toarray\(\)"):
        FVBMPseudoLikelihood().fit(X)
    est = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(X.toarray())
    with pytest.raises(TypeError, match=r"\.toarray\(\)"):
        est.score_samples(X)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda est: est.confidence_intervals("x"), r"'alpha' parameter .* Got 'x'"),
        (lambda est: est.confidence_intervals(1.5), r"range \(0(\.0)?, 1(\.0)?\)"),
        (lambda est: est.sample(0), r"'n_samples' parameter .* Got 0"),
        (lambda est: est.sample(2, burn_in=-1), r"'burn_in' parameter .* Got -1"),
        (lambda est: est.sample(2, thinning="x"), r"'thinning' parameter"),
        (lambda est: est.sample(2, random_state="x"), r"'random_state' parameter"),
    ],
    ids=["ci-str", "ci-range", "n_samples", "burn_in", "thinning", "random_state"],
)
def test_bad_arguments_to_methods_raise_value_errors(well_posed, call, message):
    est = FVBMPseudoLikelihood(compute_std=True).fit(well_posed[0][:500])
    with pytest.raises(ValueError, match=message):
        call(est)


def test_sample_fvbm_rejects_bad_shapes():
    with pytest.raises(ValueError, match=r"intercept must be 1-D.*\(1, 2\)"):
        sample_fvbm(np.zeros((2, 2)), np.zeros((1, 2)), 5)
    with pytest.raises(ValueError, match=r"shape \(3, 3\) to match .* \(3, 2\)"):
        sample_fvbm(np.zeros((3, 2)), np.zeros(3), 5)


def test_occlude_patches_rejects_a_bad_image_shape():
    from sklearn_rbm.datasets import occlude_patches

    images = np.ones((2, 12))
    for shape in [(3, 2, 2), (-3, -4), (3.0, 4.0), ("a", 4)]:
        with pytest.raises(ValueError, match="pair of positive ints"):
            occlude_patches(images, 2, image_shape=shape)
    with pytest.raises(ValueError, match=r"holds 10 pixels but the images have 12"):
        occlude_patches(images, 2, image_shape=(2, 5))


def test_absurd_sizes_are_refused_before_allocating(well_posed, monkeypatch):
    from sklearn_rbm import datasets
    from sklearn_rbm._core import utils as _utils

    monkeypatch.setattr(_utils, "_machine_memory", lambda: 16 * 2**30)  # 16 GiB
    coupling = np.zeros((5, 5))
    est = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(well_posed[0])
    images = np.zeros((3, 16))
    calls = {
        "n_samples=1000000000 with 5 features": [
            lambda: datasets.make_fvbm(10**9, 5),
            lambda: datasets.sample_fvbm(coupling, np.zeros(5), 10**9),
        ],
        "n_samples=1000000000 with 6 features": [lambda: est.sample(10**9)],
        "n_features=1000000": [
            lambda: datasets.make_fvbm(10, 10**6),
            lambda: datasets.make_shifting_bar(10**6),
        ],
        "n_samples=1000000000 with size=3": [
            lambda: datasets.make_bars_and_stripes(10**9)
        ],
        "n_samples=None with size=40": [
            lambda: datasets.make_bars_and_stripes(size=40)
        ],
        "n_draws=1000000000 with 3 images of 16 pixels": [
            lambda: datasets.flip_pixels(images, 0.1, n_draws=10**9),
            lambda: datasets.occlude_patches(images, 2, n_draws=10**9),
        ],
    }
    for what, functions in calls.items():
        for function in functions:
            with pytest.raises(MemoryError, match=f"{what} needs about .* 16 GiB"):
                function()


# ---------------------------------------------------------------------------
# The data users bring (issues 22 and 23): existence decided before the fit
# runs away, bounded checks, and advice that leads somewhere


def binarised_at_median(data):
    return (data > np.median(data, axis=0)).astype(float)


def user_data(name):
    """Small versions of the data of the issues, so that the tests stay fast."""
    if name == "digits":
        return (load_digits().data[:240] > 7).astype(float)  # 17 constant pixels
    if name == "breast cancer":
        return binarised_at_median(load_breast_cancer().data)
    if name == "wine":
        return binarised_at_median(load_wine().data)
    sample = make_fvbm(600, 8, coupling_variance=0.05, random_state=0)[0]
    return np.hstack([sample, np.ones((600, 1)), sample[:, 2:3]])


@contextlib.contextmanager
def deadline(seconds):
    """Fail, instead of hanging, when the block runs past ``seconds``."""

    def expire(signum, frame):
        raise TimeoutError(f"still running after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def numpy_margins(X, theta):
    """``x_ij a_ij(theta)`` for every row and unit, in numpy."""
    b, M = numpy_unpack(theta, X.shape[1])
    return X * (X @ M + b)


DEFAULTS = [{"solver": solver} for solver in ALL_SOLVERS] + [
    {"solver": solver, "penalty": "l1", "alpha": 0.01}
    for solver in ("newton", "nodewise")
]


@pytest.mark.parametrize(
    "params", DEFAULTS, ids=lambda p: "-".join(map(str, p.values()))
)
@pytest.mark.parametrize(
    "name", ["digits", "breast cancer", "wine", "constant and duplicate"]
)
def test_defaults_fit_the_data_users_bring(name, params):
    # Before: binarised digits ran 17 minutes with the defaults, 'mm' with a
    # constant column did not answer in 300 s. Now every solver stops, with
    # a finite estimate and at most one existence warning naming the
    # constant features (the 60 s limit only catches a hang).
    X = user_data(name)
    with deadline(60), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = FVBMPseudoLikelihood(**params).fit(X)
    assert np.all(np.isfinite(est.coupling_)) and np.all(np.isfinite(est.intercept_))
    assert np.all(np.isfinite(est.pseudo_log_likelihood(X)))
    existence = [
        str(w.message) for w in caught if w.category is MPLEDoesNotExistWarning
    ]
    stopped = any(w.category is ConvergenceWarning for w in caught)
    assert len(existence) <= 1
    constant = np.flatnonzero(np.ptp(X, axis=0) == 0)
    if constant.size:
        assert f"features {constant.tolist()} are constant" in existence[0]
        assert np.all(est.coupling_[constant] == 0)
    l1 = params.get("penalty") == "l1"
    expected = {
        "digits": False,
        "breast cancer": True if l1 else None if stopped else False,
        "wine": None if stopped else True,
        "constant and duplicate": False,
    }[name]
    assert est.mple_exists_ is expected
    if not l1 and est.mple_exists_ is not True:
        assert est.alpha_ == 1 / X.shape[0] and existence + [stopped] != [False]


def test_existence_is_screened_before_the_first_iteration(well_posed, capsys):
    # Before: the warning came after the fit (after 17 minutes on digits).
    X = well_posed[0].copy()
    X[:, 2] = 1.0

    def show(message, category, *args, **kwargs):
        print(f"warning: {category.__name__}")

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        warnings.showwarning = show  # restored on leaving the block
        FVBMPseudoLikelihood(solver="bslm", max_iter=3, verbose=1).fit(X)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "warning: MPLEDoesNotExistWarning"
    assert "iteration 1/3" in lines[1]


def test_screen_names_each_reason_and_each_is_a_separation(well_posed):
    X = well_posed[0]
    pattern = np.array([1.0, 1.0, -1.0])  # x_9 = +1 exactly where x_0:3 = pattern
    rare = np.where(np.all(X[:, :3] == pattern, axis=1), 1.0, -1.0)[:, None]
    X = np.hstack([X, np.ones((3000, 1)), X[:, 1:2], -X[:, 2:3], rare])
    found = existence.screen(distinct_rows(X)[0])
    np.testing.assert_array_equal(found.constant, [6])
    assert found.pairs == [(1, 7, True), (2, 8, False)]
    np.testing.assert_array_equal(found.determined, [9])
    assert not existence.screen(distinct_rows(well_posed[0])[0])  # MPLE exists
    # A separating direction for each, built in numpy: no conditional falls,
    # the named one rises on every row.
    d = X.shape[1]
    p = d * (d + 1) // 2
    upper = np.transpose(np.triu_indices(d, 1))  # packed order of numpy_unpack
    index = {(int(j), int(k)): d + i for i, (j, k) in enumerate(upper)}
    constant, equal, opposite, determined = np.zeros((4, p))
    constant[6] = 1.0  # b_6 = +1
    equal[index[1, 7]], opposite[index[2, 8]] = 1.0, -1.0
    # a_9 = sum_k p_k x_k - 2 is +1 where x_0:3 = pattern, <= -1 elsewhere;
    # b_k = p_k keeps the margins of units 0, 1, 2 >= 0.
    determined[9] = -2.0
    for k in range(3):
        determined[index[k, 9]] = determined[k] = pattern[k]
    for direction, unit in [(constant, 6), (equal, 7), (opposite, 8), (determined, 9)]:
        margins = numpy_margins(X, direction)
        assert margins.min() >= 0 and margins[:, unit].min() > 0


def test_no_mple_gives_the_ridge_maximiser(well_posed):
    # A duplicated feature: the estimate is the maximiser with alpha = 1/n
    # (the numpy oracle), not wherever a run-off stopped.
    X = np.hstack([well_posed[0], well_posed[0][:, :1]])
    with pytest.warns(MPLEDoesNotExistWarning, match="feature 6 equals feature 0"):
        est = FVBMPseudoLikelihood(solver="lbfgs", tol=1e-10, compute_std=False).fit(X)
    assert est.mple_exists_ is False and est.alpha_ == 1 / 3000
    # (m_06 is large and flat: compare the objective tightly, theta loosely)
    reference = numpy_maximiser(X, 1 / 3000)
    ours = numpy_log_pl(theta_of(est), X, 1 / 3000)
    assert ours == pytest.approx(numpy_log_pl(reference, X, 1 / 3000), abs=1e-10)
    np.testing.assert_allclose(theta_of(est), reference, atol=1e-4)


def test_constant_features_are_fitted_apart_and_the_rest_is_the_mple(well_posed):
    X = np.hstack([well_posed[0], -np.ones((3000, 1))])
    with pytest.warns(MPLEDoesNotExistWarning, match=r"\[6\] are fitted apart"):
        est = FVBMPseudoLikelihood(tol=1e-10).fit(X)
    assert est.mple_exists_ is False and est.alpha_ == 0.0
    np.testing.assert_allclose(
        pack(est.intercept_[:6], est.coupling_[:6, :6]),
        numpy_maximiser(well_posed[0]),
        atol=1e-5,
    )
    assert np.all(est.coupling_[6] == 0) and np.all(est.coupling_[:, 6] == 0)
    # the ridge MAP of a feature at -1 on every row: 2 / (1 + e^{2b}) = b / n
    b = -est.intercept_[6]
    assert 2 / (1 + np.exp(2 * b)) == pytest.approx(b / 3000, rel=1e-9)
    assert np.isinf(est.intercept_std_[6]) and np.all(
        np.isfinite(est.intercept_std_[:6])
    )
    assert est.pseudo_likelihood_curve_[-1] == pytest.approx(
        est.pseudo_log_likelihood(X).mean(), abs=1e-9
    )


def test_separation_found_after_the_ridge_fit_is_a_real_direction():
    # Breast cancer binarised at the median: no feature is constant or
    # duplicated, yet six conditionals are separable together.
    X = user_data("breast cancer")
    with pytest.warns(MPLEDoesNotExistWarning, match="perfectly predicted together"):
        est = FVBMPseudoLikelihood(compute_std=False).fit(X)
    assert est.mple_exists_ is False and est.alpha_ == 1 / X.shape[0]
    rows, w = distinct_rows(np.where(X > 0, 1.0, -1.0))
    verdict = existence.decide(rows, w, est.intercept_, est.coupling_)
    margins = numpy_margins(2 * X - 1, verdict.direction)
    assert margins.min() > -1e-9 and margins.max() > 1e-3
    spins = 2 * X - 1
    values = [
        numpy_log_pl(theta_of(est) + t * verdict.direction, spins) for t in (0, 1, 4)
    ]
    assert values[0] < values[1] < values[2]


@pytest.mark.parametrize("solver", ["newton", "mm"])
def test_a_fit_stopped_by_max_iter_never_runs_the_existence_check(solver, monkeypatch):
    # Before: max_iter=1 at d = 100 ran the existence LP for minutes, though
    # the estimate of one iteration says nothing about existence.
    X = np.where(np.random.default_rng(0).random((1000, 100)) < 0.5, 1.0, 0.0)

    def forbidden(*args, **kwargs):
        raise AssertionError("the existence check ran")

    monkeypatch.setattr(existence, "unbalanced_features", forbidden)
    monkeypatch.setattr(existence, "_solve_separation_lp", forbidden)
    with deadline(60), pytest.warns(ConvergenceWarning, match="was not checked"):
        est = FVBMPseudoLikelihood(solver=solver, max_iter=1, compute_std=False).fit(X)
    assert est.mple_exists_ is None and est.n_iter_ == 1


def test_mm_with_a_constant_feature_at_d110_stops():
    # Before: no answer in 300 s (the constant column was found only after
    # max_iter iterations of a run-off).
    X = np.where(np.random.default_rng(1).random((1000, 110)) < 0.5, 1.0, 0.0)
    X[:, 7] = 1.0
    with (
        deadline(60),
        pytest.warns(MPLEDoesNotExistWarning, match=r"\[7\] are constant"),
    ):
        est = FVBMPseudoLikelihood(solver="mm", compute_std=False).fit(X)
    assert est.mple_exists_ is False and est.n_iter_ < 200
    assert np.all(est.coupling_[7] == 0)


def test_the_separation_lp_is_bounded(monkeypatch):
    X = user_data("breast cancer")
    rows, w = distinct_rows(2 * X - 1)
    est = FVBMPseudoLikelihood(alpha=1 / X.shape[0], compute_std=False).fit(X)
    monkeypatch.setattr(existence, "_SEPARATION_MAX_SIZE", 100)
    verdict = existence.decide(rows, w, est.intercept_, est.coupling_)
    assert verdict.exists is None and "beyond its size budget" in verdict.why
    monkeypatch.setattr(existence, "_SEPARATION_MAX_SIZE", 10**7)
    monkeypatch.setattr(existence, "_SEPARATION_MAX_ITERATIONS", 10)
    verdict = existence.decide(rows, w, est.intercept_, est.coupling_)
    assert verdict.exists is None and "10 simplex iterations" in verdict.why
    # The estimator says so, and its advice (alpha > 0) silences it.
    with pytest.warns(MPLEDoesNotExistWarning, match=r"Could not decide.*alpha > 0"):
        undecided = FVBMPseudoLikelihood(compute_std=False).fit(X)
    assert undecided.mple_exists_ is None and undecided.alpha_ == 1 / X.shape[0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FVBMPseudoLikelihood(alpha=0.01, compute_std=False).fit(X)


# -- advice that leads somewhere: every message that gives advice, followed


def test_l1_confidence_intervals_say_what_to_do_and_it_works(well_posed):
    # Before: "refit with compute_std=True", which only warned that L1 fits
    # have no standard errors: the advice looped.
    X = well_posed[0]
    l1 = FVBMPseudoLikelihood(penalty="l1", alpha=0.02).fit(X)
    with pytest.raises(
        AttributeError, match=r"L1-penalised.*penalty='l2'.*coupling_ != 0"
    ):
        l1.confidence_intervals()
    with pytest.warns(UserWarning, match="compute_std=True, but an L1-penalised"):
        FVBMPseudoLikelihood(penalty="l1", alpha=0.02, compute_std=True).fit(X)
    refit = FVBMPseudoLikelihood(penalty="l2").fit(X)  # the advice
    coupling_ci, _ = refit.confidence_intervals()
    selected = coupling_ci[l1.coupling_ != 0]
    assert selected.shape[0] > 0 and np.all(selected[:, 0] < selected[:, 1])


@pytest.mark.parametrize(
    "params, message, advice",
    [
        ({"compute_std": False}, "compute_std=False", {"compute_std": "auto"}),
        ({"solver": "nodewise"}, "solver='nodewise'", {"solver": "newton"}),
    ],
)
def test_missing_standard_errors_say_what_to_do_and_it_works(
    well_posed, params, message, advice
):
    est = FVBMPseudoLikelihood(**params).fit(well_posed[0])
    with pytest.raises(AttributeError, match=message):
        est.confidence_intervals()
    est.set_params(**advice).fit(well_posed[0])
    assert np.all(np.isfinite(est.confidence_intervals()[0]))


def test_standard_errors_beyond_the_size_limit_say_what_to_do(well_posed, monkeypatch):
    monkeypatch.setattr(diagnostics, "MAX_DENSE_PARAMETERS", 20)  # d <= 5
    est = FVBMPseudoLikelihood().fit(well_posed[0])
    with pytest.raises(AttributeError, match="Fit at most 5 of the features"):
        est.confidence_intervals()
    est.fit(well_posed[0][:, :5])
    assert np.all(np.isfinite(est.confidence_intervals()[0]))


def test_existence_advice_works(well_posed):
    # "Set alpha > 0 ..., or remove features [...] and refit": both work.
    X = well_posed[0]
    rare = np.where(np.all(X[:, :2] == 1.0, axis=1), 1.0, -1.0)[:, None]
    bad = np.hstack([X, np.ones((3000, 1)), -X[:, 2:3], rare])
    with pytest.warns(MPLEDoesNotExistWarning, match=r"remove features \[6, 7, 8\]"):
        FVBMPseudoLikelihood().fit(bad)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert FVBMPseudoLikelihood(alpha=0.01).fit(bad).mple_exists_ is True
        kept = FVBMPseudoLikelihood().fit(np.delete(bad, [6, 7, 8], axis=1))
    assert kept.mple_exists_ is True and kept.alpha_ == 0.0


def test_max_iter_advice_works(well_posed):
    X = well_posed[0]
    with pytest.warns(
        ConvergenceWarning, match="Increase max_iter, or use solver='newton'"
    ):
        FVBMPseudoLikelihood(solver="bslm", max_iter=3).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        FVBMPseudoLikelihood(solver="bslm", max_iter=1000).fit(X)
        FVBMPseudoLikelihood(solver="newton").fit(X)


def test_solver_and_step_size_advice_works(well_posed):
    X = well_posed[0]
    with pytest.raises(ValueError, match=r"Use solver='newton' \(or 'nodewise'\)"):
        FVBMPseudoLikelihood(solver="mm", penalty="l1", alpha=0.05).fit(X)
    with pytest.warns(UserWarning, match="Use step_size <= 1 or solver='bslm'"):
        FVBMPseudoLikelihood(solver="ga", step_size=1.5).fit(X)
    with pytest.raises(FloatingPointError, match="Use step_size <= 1.*solver='bslm'"):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            FVBMPseudoLikelihood(solver="ga", step_size=1e300).fit(X)
    with pytest.warns(UserWarning, match="Set compute_std='auto' or False"):
        FVBMPseudoLikelihood(solver="nodewise", compute_std=True).fit(X)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for params in [
            {"solver": "newton", "penalty": "l1", "alpha": 0.05},
            {"solver": "nodewise", "penalty": "l1", "alpha": 0.05},
            {"solver": "ga", "step_size": 1.0},
            {"solver": "bslm"},
            {"solver": "nodewise", "compute_std": "auto"},
        ]:
            FVBMPseudoLikelihood(**params).fit(X)


@pytest.mark.parametrize(
    "X",
    [
        np.array([[0.2, 0.9], [0.7, 0.1], [0.5, 0.6]]),
        np.array([[-0.5, 1.5], [0.5, -1.0], [0.2, 0.3]]),
    ],
)
def test_binarising_advice_works(X):
    with pytest.raises(ValueError, match=r"X > 0.5 for values in \[0, 1\], X > 0"):
        FVBMPseudoLikelihood().fit(X)
    fixed = X > 0.5 if X.min() >= 0 else X > 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MPLEDoesNotExistWarning)  # three rows
        FVBMPseudoLikelihood(compute_std=False).fit(fixed.astype(float))


def test_model_advice_works():
    coupling = np.array([[0.0, 0.4], [0.1, 0.0]])
    with pytest.raises(ValueError, match=r"use \(C \+ C.T\) / 2"):
        sample_fvbm(coupling, np.zeros(2), 5)
    symmetric = (coupling + coupling.T) / 2
    assert sample_fvbm(symmetric, np.zeros(2), 5, random_state=0).shape == (5, 2)
    with pytest.raises(ValueError, match=r"np.ravel\(intercept\)"):
        sample_fvbm(symmetric, np.zeros((1, 2)), 5)
    assert sample_fvbm(symmetric, np.ravel(np.zeros((1, 2))), 5).shape == (5, 2)


def test_an_unconverged_fit_has_no_standard_errors_and_says_how_to_get_them():
    """Standard errors hold only at the maximiser: a fit stopped by max_iter
    skips them, confidence_intervals says to raise max_iter, and doing so
    gives them."""
    X, _, _ = make_fvbm(2000, 6, coupling_variance=0.1, random_state=0)
    with pytest.warns(ConvergenceWarning, match="max_iter=1"):
        short = FVBMPseudoLikelihood(max_iter=1).fit(X)
    with pytest.raises(AttributeError, match="Refit with a larger max_iter"):
        short.confidence_intervals()
    longer = FVBMPseudoLikelihood(max_iter=100).fit(X)
    low, high = np.moveaxis(longer.confidence_intervals()[0], -1, 0)
    off_diagonal = ~np.eye(6, dtype=bool)
    assert np.all((low < longer.coupling_) & (longer.coupling_ < high) | ~off_diagonal)


def test_infinite_confidence_intervals_warn_at_the_call(well_posed):
    """A constant feature admits no MPLE: its intervals are infinite, and the
    call that returns them says so (not only the fit, long before)."""
    X = well_posed[0].copy()
    X[:, 2] = 1.0
    with pytest.warns(MPLEDoesNotExistWarning):
        est = FVBMPseudoLikelihood(solver="lbfgs").fit(X)
    with pytest.warns(MPLEDoesNotExistWarning, match="confidence intervals are inf"):
        coupling_ci, intercept_ci = est.confidence_intervals()
    assert np.isinf(intercept_ci[2]).all() and np.isfinite(intercept_ci[0]).all()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        finite = FVBMPseudoLikelihood(solver="lbfgs").fit(np.delete(X, 2, 1))
        assert np.all(np.isfinite(finite.confidence_intervals()[0]))
