"""Bad input gets a clear error that says what is wrong and how to fix it
(issue classes of the trust review: out-of-range data, weights, sparse
targets, arguments of fitted-model methods). Each case below was accepted
silently, or failed with an unrelated error, before."""

import re

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_rbm import ConditionalRBMRegressor, DCPBernoulliRBM, FrankWolfeRBM
from sklearn_rbm.datasets import load_binary_digits
from sklearn_rbm.inference import belief_propagation, bethe_log_partition, mean_field
from sklearn_rbm.likelihood import (
    base_rate_bias,
    free_energy,
    log_partition_ais,
    log_partition_exact,
)


@pytest.fixture(scope="module")
def binary():
    return load_binary_digits()[0][:200]


@pytest.fixture(scope="module")
def fitted(binary):
    return DCPBernoulliRBM(n_components=4, n_iter=1, random_state=0).fit(binary)


# ------------------------------------------------- values outside [0, 1]
@pytest.mark.parametrize("Estimator", [DCPBernoulliRBM, FrankWolfeRBM])
@pytest.mark.parametrize(
    "value, advice",
    [(2.0, "MinMaxScaler"), (-0.5, "MinMaxScaler"), (1e200, "MinMaxScaler")],
)
def test_binary_rbms_refuse_values_outside_the_unit_interval(
    binary, Estimator, value, advice
):
    X = binary.copy()
    X[3, 5] = value
    with pytest.raises(ValueError, match=f"found {re.escape(repr(value))}.*{advice}"):
        Estimator(random_state=0).fit(X)


@pytest.mark.parametrize("Estimator", [DCPBernoulliRBM, FrankWolfeRBM])
def test_spin_coding_gets_the_conversion(binary, Estimator):
    with pytest.raises(ValueError, match=r"-1/\+1 coding.*\(X \+ 1\) / 2"):
        Estimator(random_state=0).fit(2 * binary - 1)


def test_queries_refuse_raw_grey_levels(fitted):
    """Raw 0-16 digits used to score at a positive 'log-likelihood'."""
    from sklearn.datasets import load_digits

    raw = load_digits().data[:5]
    for method in (fitted.score, fitted.score_samples, fitted.transform):
        with pytest.raises(ValueError, match=r"found \d+\.0 \(min 0.0, max 16.0\)"):
            method(raw)


def test_held_out_data_are_checked_too(binary):
    with pytest.raises(ValueError, match="X_val must hold values in"):
        DCPBernoulliRBM(n_components=2, n_iter=1).fit(binary, X_val=binary * 3)


def test_sparse_values_outside_the_unit_interval(binary):
    X = sp.csr_matrix(binary * 2)
    with pytest.raises(ValueError, match="found 2.0"):
        DCPBernoulliRBM(n_components=2, n_iter=1).fit(X)


# ------------------------------------------------------- sample weights
@pytest.mark.parametrize(
    "weights, message",
    [
        (np.full(40, np.nan), "finite and non-negative; found nan"),
        (np.zeros(40), "sums to zero"),
        (-np.ones(40), "non-negative; found -1.0"),
        (np.ones(3), r"shape \(40,\)"),
    ],
)
def test_conditional_score_checks_sample_weight(weights, message):
    rng = np.random.RandomState(0)
    X, Y = rng.randn(40, 5), (rng.rand(40, 3) < 0.5).astype(float)
    crbm = ConditionalRBMRegressor(n_components=2, n_iter=1, random_state=0)
    crbm.fit(X, Y)
    with pytest.raises(ValueError, match=message):
        crbm.score(X, Y, sample_weight=weights)
    weighted = crbm.score(X, Y, sample_weight=np.r_[np.ones(20), np.zeros(20)])
    assert weighted == pytest.approx(crbm.score(X[:20], Y[:20]))


# ------------------------------------------------------------- sparse data
@pytest.mark.parametrize("solver", ["cd", "bp", "lssvm"])
def test_conditional_rbm_accepts_sparse_x_and_y(solver):
    """Sparse Y (a multi-label indicator matrix) used to fail with 'setting
    an array element with a sequence', sparse X was refused: both give the
    dense fit."""
    rng = np.random.RandomState(0)
    X, Y = rng.randn(40, 5), (rng.rand(40, 3) < 0.5).astype(float)
    # Binary features (most of them zero), as bag-of-words indicators: the
    # fit leaves them as they are, dense or sparse (other features it
    # centres when dense and only scales when sparse, so that they stay so).
    X = (X > 0.5).astype(float)
    params = dict(n_components=2, n_iter=2, solver=solver, random_state=0)
    dense = ConditionalRBMRegressor(**params).fit(X, Y)
    sparse = ConditionalRBMRegressor(**params).fit(sp.csr_matrix(X), sp.csr_matrix(Y))
    for name in ("components_", "coef_", "hidden_coef_", "intercept_"):
        np.testing.assert_allclose(getattr(sparse, name), getattr(dense, name))
    np.testing.assert_array_equal(sparse.predict(sp.csr_matrix(X)), dense.predict(X))
    assert sparse.score(sp.csr_matrix(X), Y) == pytest.approx(dense.score(X, Y))


# ---------------------------------------------------- fitted-model methods
def test_frank_wolfe_submodel_and_fine_tune_arguments(binary):
    fw = FrankWolfeRBM(
        max_components=3, n_samples_per_step=20, validation_fraction=None,
        random_state=0,
    ).fit(binary)  # fmt: skip
    with pytest.raises(ValueError, match=r"n_components=2.5 was not reached.*0 to 3"):
        fw.submodel(2.5)
    with pytest.raises(ValueError, match=r"submodel\(size\).fine_tune"):
        fw.fine_tune(binary, n_components=5)


# --------------------------------------------------------- absurd sizes
@pytest.mark.parametrize(
    "make, parameter",
    [
        (lambda: DCPBernoulliRBM(n_components=10**9), "n_components=1000000000"),
        (lambda: DCPBernoulliRBM(batch_size=10**9), "batch_size=1000000000"),
        (lambda: FrankWolfeRBM(max_components=10**9), "max_components=1000000000"),
        (
            lambda: FrankWolfeRBM(n_samples_per_step=10**9),
            "n_samples_per_step=1000000000",
        ),
        (
            lambda: ConditionalRBMRegressor(n_components=10**9),
            "n_components=1000000000",
        ),
    ],
)
def test_absurd_sizes_are_refused_before_any_work(binary, make, parameter):
    """They used to end in numpy's 'Unable to allocate 119 GiB', some after
    seconds of work."""
    estimator = make()
    args = (
        (binary[:, :5], binary[:, 5:8])
        if "Conditional" in repr(estimator)
        else (binary,)
    )
    with pytest.raises(MemoryError, match=f"{parameter} .* more than this machine"):
        estimator.fit(*args)


# ------------------------------------------------------------ ais_betas
@pytest.mark.parametrize(
    "betas", [[0.0, np.nan, 1.0], [0.0, 0.6, 0.5, 1.0], [1.0, 0.5, 0.0]]
)
@pytest.mark.parametrize("Estimator", [DCPBernoulliRBM, ConditionalRBMRegressor])
def test_bad_ais_betas_are_refused_at_fit(binary, betas, Estimator):
    """NaN or non-increasing temperatures used to give NaN scores or a
    misleading 'parameters too large to anneal'."""
    estimator = Estimator(n_components=2, n_iter=1, ais_betas=betas)
    args = (
        (binary[:, :5], binary[:, 5:8])
        if Estimator is ConditionalRBMRegressor
        else (binary,)
    )
    with pytest.raises(ValueError, match="ais_betas: .*increase strictly from 0 to 1"):
        estimator.fit(*args)


# ------------------------------------------- public likelihood and inference
def _rbm():
    return np.zeros((2, 3)), np.zeros(3), np.zeros(2)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda W, b, c: free_energy(np.ones(3), W, b, c), "Expected 2D array"),
        (lambda W, b, c: free_energy(np.ones((4, 5)), W, b, c), "5 features but"),
        (lambda W, b, c: free_energy(np.full((4, 3), np.nan), W, b, c), "NaN"),
        (lambda W, b, c: free_energy(np.ones((0, 3)), W, b, c), "0 sample"),
        (lambda W, b, c: free_energy(np.ones((4, 3)), W, np.zeros(5), c), "shape"),
        (lambda W, b, c: base_rate_bias(np.ones(3)), "Expected 2D array"),
        (lambda W, b, c: base_rate_bias(np.full((3, 2), np.nan)), "NaN"),
        (lambda W, b, c: base_rate_bias(np.ones((0, 3))), "0 sample"),
        (lambda W, b, c: base_rate_bias(np.ones((2, 3)), clip=0.7), "clip"),
        (lambda W, b, c: base_rate_bias(np.ones((2, 3)), clip=0.0), "clip"),
        (lambda W, b, c: base_rate_bias(2 * np.ones((2, 3))), "values in"),
        (lambda W, b, c: log_partition_exact(W + 1j, b, c), "must be real"),
        (lambda W, b, c: log_partition_ais(W + 0j, b, c, betas=10), "must be real"),
        (lambda W, b, c: log_partition_exact(sp.csr_matrix(W), b, c), "toarray"),
        (lambda W, b, c: belief_propagation(W + 1j, b, c), "must be real"),
        (lambda W, b, c: belief_propagation(sp.csr_matrix(W), b, c), "toarray"),
        (lambda W, b, c: mean_field(W, b.astype(object), c), "must hold numbers"),
        (
            lambda W, b, c: belief_propagation(W + 1e308, b, c, pairwise=True),
            "too large for inference",
        ),
    ],
)
def test_public_functions_validate_their_arguments(call, message):
    """These raised AttributeError, broadcasting or axis errors, returned NaN
    or -inf, truncated complex values, or (huge weights) returned NaN pairwise
    beliefs while reporting convergence."""
    with pytest.raises(ValueError, match=message):
        call(*_rbm())


def test_empty_batches_of_models_give_empty_results():
    W = np.zeros((2, 3))
    empty_b, empty_c = np.zeros((0, 3)), np.zeros((0, 2))
    assert bethe_log_partition(W, empty_b, empty_c).shape == (0,)
    assert belief_propagation(W, empty_b, empty_c).visible.shape == (0, 3)
    assert mean_field(W, empty_b, empty_c).hidden.shape == (0, 2)
