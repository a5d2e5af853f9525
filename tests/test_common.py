"""scikit-learn's estimator checks over every estimator and every solver,
from one registry of instances and expected failures (as imbalanced-learn's
``instance_generator``), plus the checks scikit-learn runs by hand on its own
estimators (parameter validation, set_output, feature names), and the generic
properties every estimator and solver must have: bit-identical results across
processes and thread counts, sparse = dense, float32 against float64,
read-only memory maps, persistence through pickle, joblib and skops.io
before and after ``score``, and ``clone``."""

import functools
import json
import os
import pickle
import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator, TransformerMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.pipeline import make_pipeline
from sklearn.utils import get_tags
from sklearn.utils.estimator_checks import (
    check_get_feature_names_out_error,
    check_global_output_transform_pandas,
    check_param_validation,
    check_set_output_transform,
    check_set_output_transform_pandas,
    check_transformer_get_feature_names_out,
    check_transformer_get_feature_names_out_pandas,
    parametrize_with_checks,
)

from sklearn_rbm import (
    CategoricalRBM,
    ConditionalRBMRegressor,
    DCPBernoulliRBM,
    FrankWolfeRBM,
    FVBMPseudoLikelihood,
    PottsBoltzmannMachine,
    PottsPseudoLikelihood,
)
from sklearn_rbm._core.engine import EpochTrainingMixin
from sklearn_rbm._core.likelihood_mixin import LikelihoodMixin
from sklearn_rbm._core.sklearn_compat import estimator_check_domain

from instances import (
    INSTANCES,
    fingerprint,
    fingerprints,
    fitted_arrays,
    instance_id,
    solvers_of,
    training_data,
)

# ----------------------------------------------------------------- registry
# The instances (one per estimator and solver) live in tests/instances.py,
# shared with the bad-input contract of tests/test_contract.py.

# Checks an estimator is known to fail, with the reason.
_UNIT_INTERVAL_ONLY = {
    "check_positive_only_tag_during_fit": (
        "feeds data with negative values directly (not through the domain "
        "mapping); a Bernoulli RBM accepts values in [0, 1] only"
    )
}
_MARGINALS = (
    "predict_proba gives the marginals p(y_i = 1 | x) of the structured "
    "prediction, one column per output, by design"
)
EXPECTED_FAILURES = {
    CategoricalRBM: {
        "check_positive_only_tag_during_fit": (
            "feeds data with negative values directly (not through the domain "
            "mapping); a categorical RBM accepts integer codes 0 .. q - 1 only"
        ),
        "check_sample_weight_equivalence_on_dense_data": (
            "integer weights equal repeated rows only in expectation: the "
            "stochastic gradient shuffles and batches different rows"
        ),
    },
    DCPBernoulliRBM: _UNIT_INTERVAL_ONLY,
    FrankWolfeRBM: _UNIT_INTERVAL_ONLY,
    ConditionalRBMRegressor: {
        "check_regressors_train": (
            "asserts score > 0.5, an R^2 threshold; score is the conditional "
            "log-likelihood, negative by nature"
        ),
        "check_regressor_multioutput": (
            "draws continuous targets without the domain hook; the outputs must be 0/1"
        ),
        "check_regressors_no_decision_function": _MARGINALS,
        # Sparse X is supported (tests/test_bad_input.py); the check then
        # asserts a binary classifier's predict_proba shape (n, 2).
        "check_estimator_sparse_array": _MARGINALS,
        "check_estimator_sparse_matrix": _MARGINALS,
    },
    PottsPseudoLikelihood: {
        check: (
            "feeds continuous data directly (not through the domain mapping); "
            "PottsPseudoLikelihood accepts only integer state codes (sample "
            "weights are tested in tests/test_potts.py)"
        )
        for check in (
            "check_positive_only_tag_during_fit",
            "check_sample_weight_equivalence_on_dense_data",
        )
    },
    PottsBoltzmannMachine: {
        check: (
            "feeds continuous data directly (not through the domain mapping); "
            "PottsBoltzmannMachine accepts only integer state codes, and its "
            "persistent chains see integer weights and repeated rows only alike "
            "in expectation"
        )
        for check in (
            "check_positive_only_tag_during_fit",
            "check_sample_weight_equivalence_on_dense_data",
        )
    },
    FVBMPseudoLikelihood: {
        "check_positive_only_tag_during_fit": (
            "feeds continuous data with negative values directly (not through "
            "the domain mapping); FVBMPseudoLikelihood accepts only binary X"
        )
    },
}


#: The checks that feed their own data to an RBM of one-hot input, not
#: through the domain mapping: random floats, or widths that are no multiple
#: of its n_states.
_ONE_HOT_INPUT = {
    check: (
        "feeds data that is not one-hot (or not n_states columns per column) "
        "directly, not through the domain mapping"
    )
    for check in (
        "check_sample_weights_shape",
        "check_sample_weights_not_overwritten",
        "check_sample_weight_equivalence_on_sparse_data",
    )
}


def expected_failures(estimator):
    failures = dict(EXPECTED_FAILURES.get(type(estimator), {}))
    if getattr(estimator, "one_hot", False):
        failures.update(_ONE_HOT_INPUT)
    return failures


# ------------------------------------------------------ the checks' domains
# scikit-learn maps its random check data into an estimator's domain through
# hooks that know positive and categorical data but not "binary only"; the
# models of binary data get the same data binarised at each column's median.
def _binarised_X(estimator, X, X_test=None, **kwargs):
    threshold = np.median(X, axis=0)

    def binarise(A):
        return (A > threshold).astype(A.dtype)

    return binarise(X) if X_test is None else (binarise(X), binarise(X_test))


def _codes_X(estimator, X, X_test=None, **kwargs):
    """Data cut at each column's tertiles into the state codes 0, 1, 2 (a
    Potts model's domain), as a user's KBinsDiscretizer would."""
    edges = np.quantile(X, [1 / 3, 2 / 3], axis=0)

    def cut(A):
        return ((A > edges[0]).astype(np.int64) + (A > edges[1])).astype(A.dtype)

    return cut(X) if X_test is None else (cut(X), cut(X_test))


def _unit_interval_X(estimator, X, X_test=None, **kwargs):
    """Data min-max scaled into [0, 1], a Bernoulli RBM's domain (grey levels
    read as probabilities), as a user's MinMaxScaler would."""

    def scale(A):
        low, high = A.min(axis=0), A.max(axis=0)
        return ((A - low) / np.where(high > low, high - low, 1.0)).astype(A.dtype)

    return scale(X) if X_test is None else (scale(X), scale(X_test))


def _standardised_X(estimator, X, X_test=None, **kwargs):
    """Features standardised, as a user's StandardScaler would: stochastic
    gradient steps on raw features of size 100 diverge."""

    def scale(A):
        return ((A - A.mean(axis=0)) / np.maximum(A.std(axis=0), 1e-12)).astype(A.dtype)

    return scale(X) if X_test is None else (scale(X), scale(X_test))


def _binary_y(estimator, y):
    """Finite targets as 0/1 at their median (a conditional RBM's outputs);
    NaN and infinite ones stay, for the checks that they are refused."""
    y = np.asarray(y, dtype=np.float64)
    finite = np.isfinite(y)
    if not finite.any():
        return y
    return np.where(finite, (y > np.median(y[finite])).astype(np.float64), y)


def _codes_X(estimator, X, X_test=None, **kwargs):
    """Each column cut into 3 states at its terciles: integer codes 0-2, a
    categorical RBM's domain (one-hot, 3 columns per column, for an RBM of
    one-hot input; a non-finite value fills its block)."""
    edges = np.quantile(X, [1 / 3, 2 / 3], axis=0)

    def encode(A):
        codes = (A > edges[0]).astype(np.int64) + (A > edges[1])
        if not getattr(estimator, "one_hot", False):
            return codes.astype(A.dtype)
        blocks = (codes[..., None] == np.arange(3)).astype(A.dtype)
        blocks = np.where(np.isfinite(A)[..., None], blocks, A[..., None])
        return blocks.reshape(A.shape[0], -1)

    return encode(X) if X_test is None else (encode(X), encode(X_test))


DOMAINS = {
    CategoricalRBM: {"map_X": _codes_X},
    DCPBernoulliRBM: {"map_X": _unit_interval_X},
    FrankWolfeRBM: {"map_X": _unit_interval_X},
    FVBMPseudoLikelihood: {"map_X": _binarised_X},
    PottsPseudoLikelihood: {"map_X": _codes_X},
    PottsBoltzmannMachine: {"map_X": _codes_X},
    ConditionalRBMRegressor: {"map_X": _standardised_X, "map_y": _binary_y},
}


@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    with estimator_check_domain(**DOMAINS.get(type(estimator), {})):
        check(estimator)


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_parameter_validation(estimator):
    with estimator_check_domain(**DOMAINS.get(type(estimator), {})):
        check_param_validation(type(estimator).__name__, estimator)


TRANSFORMERS = [e for e in INSTANCES if isinstance(e, TransformerMixin)]
OUTPUT_CHECKS = [
    check_set_output_transform,
    check_set_output_transform_pandas,
    check_global_output_transform_pandas,
    check_transformer_get_feature_names_out,
    check_transformer_get_feature_names_out_pandas,
    check_get_feature_names_out_error,
]


@pytest.mark.parametrize("check", OUTPUT_CHECKS, ids=lambda c: c.__name__)
@pytest.mark.parametrize("estimator", TRANSFORMERS, ids=instance_id)
def test_set_output_and_feature_names(estimator, check):
    if "pandas" in check.__name__:
        pytest.importorskip("pandas")
    with estimator_check_domain(**DOMAINS.get(type(estimator), {})):
        check(type(estimator).__name__, estimator)


# ------------------------------------------------------------------ warnings
def _warning_from(call):
    with pytest.warns(Warning) as record:
        call()
    return record[0]


def test_warnings_point_at_the_callers_line():
    """A warning raised deep inside a fit (past scikit-learn's decorators and
    our helpers) is reported at the user's own line, here this file."""
    X = (np.random.RandomState(0).random_sample((30, 6)) > 0.5).astype(float)
    cases = {
        "unused solver setting": lambda: DCPBernoulliRBM(
            n_components=2, solver="cd", n_inner_steps=2, n_iter=1
        ).fit(X),
        "through a Pipeline": lambda: make_pipeline(
            DCPBernoulliRBM(n_components=2, solver="pcd", centering_rate_visible=0.1)
        ).fit(X),
        "non-binary data scored": lambda: (
            DCPBernoulliRBM(n_components=2, n_iter=1).fit(X).score(X * 0.5)
        ),
        "unconverged sub-problem": lambda: FrankWolfeRBM(
            max_components=2,
            lbfgs_max_iter=1,
            n_samples_per_step=10,
            validation_fraction=None,
            random_state=0,
        ).fit(X),  # fmt: skip
    }
    for what, call in cases.items():
        warning = _warning_from(call)
        assert warning.filename == __file__, (what, warning.filename)


# --------------------------------------------------------- the registry
def test_every_estimator_and_solver_has_an_instance():
    """A new public estimator, or a new solver of one, fails here until it
    has an instance in tests/instances.py (and so every check below)."""
    import sklearn_rbm

    estimators = {
        obj
        for obj in map(functools.partial(getattr, sklearn_rbm), sklearn_rbm.__all__)
        if isinstance(obj, type) and issubclass(obj, BaseEstimator)
    }
    assert estimators == {type(e) for e in INSTANCES}
    for Estimator in estimators:
        covered = {
            getattr(e, "solver", None) for e in INSTANCES if type(e) is Estimator
        }
        assert solvers_of(Estimator) <= covered, Estimator.__name__


# ----------------------------------------------------- generic properties
# Each runs once over the registry, for every estimator and solver.
def _fitted(estimator, data=None):
    data = training_data(estimator) if data is None else data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # e.g. unconverged on tiny data
        warnings.simplefilter("ignore", ConvergenceWarning)
        return clone(estimator).fit(*data)


def _queries(fitted, X):
    """The deterministic answers of a fitted estimator on ``X``, by method."""
    answers = {}
    for method in (
        "transform", "predict", "predict_proba", "score_samples", "free_energy",
        "pseudo_log_likelihood",
    ):  # fmt: skip
        if hasattr(fitted, method):
            answers[method] = getattr(fitted, method)(X)
    return answers


@pytest.fixture(scope="module")
def other_process_fingerprints():
    """Every instance's fingerprint (tests/instances.py) computed ONCE in
    another process, on one thread where this one has numba's default."""
    tests = os.path.dirname(os.path.abspath(__file__))
    one_thread = {
        name: "1"
        for name in ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS")
    }
    result = subprocess.run(
        [sys.executable, os.path.join(tests, "instances.py")],
        env={**os.environ, "PYTHONPATH": os.path.dirname(tests), **one_thread},
        capture_output=True,
        text=True,
        check=True,
    )
    return json.loads(result.stdout)


def test_instance_ids_tell_every_instance_apart():
    """The tests key results by :func:`instance_id` (the other process's
    fingerprints, the bad-input surfaces): two instances sharing an id would
    compare one with the other."""
    ids = [instance_id(estimator) for estimator in INSTANCES]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_same_random_state_is_bit_identical_across_processes(
    estimator, other_process_fingerprints
):
    """Fitted arrays, samples and AIS scores: the same bits in another process
    with another thread count."""
    assert fingerprint(estimator) == other_process_fingerprints[instance_id(estimator)]


def test_random_public_functions_are_bit_identical_across_processes(
    other_process_fingerprints,
):
    here = fingerprints()
    for name in here:
        assert here[name] == other_process_fingerprints[name], name


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_sparse_input_gives_the_dense_result(estimator):
    """Sparse X fits the model dense X fits (to rounding), and queries agree;
    an estimator without sparse support says how to densify."""
    data = training_data(estimator)
    sparse_data = (sp.csr_matrix(data[0]), *data[1:])
    if not get_tags(estimator).input_tags.sparse:
        with pytest.raises((TypeError, ValueError), match=r"toarray\(\)"):
            clone(estimator).fit(*sparse_data)
        return
    dense, sparse = _fitted(estimator, data), _fitted(estimator, sparse_data)
    for name, value in fitted_arrays(dense).items():
        np.testing.assert_allclose(
            fitted_arrays(sparse)[name], value, rtol=1e-9, atol=1e-12, err_msg=name
        )
    sparse_answers = _queries(sparse, sparse_data[0])
    for method, answer in _queries(dense, data[0]).items():
        np.testing.assert_allclose(
            sparse_answers[method], answer, rtol=1e-9, atol=1e-12, err_msg=method
        )


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_float32_agrees_with_float64(estimator):
    """float32 data give the float64 model to float32 accuracy (chains may
    flip a draw where a probability rounds differently: a loose tolerance),
    and the answers keep float32 where the estimator says it does."""
    data = training_data(estimator)
    single = (data[0].astype(np.float32), *data[1:])
    double, single_fit = _fitted(estimator, data), _fitted(estimator, single)
    for name, value in fitted_arrays(double).items():
        np.testing.assert_allclose(
            fitted_arrays(single_fit)[name], value, rtol=0, atol=0.05, err_msg=name
        )
    answers = _queries(single_fit, single[0])
    for method, answer in _queries(double, data[0]).items():
        np.testing.assert_allclose(answers[method], answer, atol=0.05, err_msg=method)
    transformer = get_tags(estimator).transformer_tags
    if transformer is not None and "float32" in transformer.preserves_dtype:
        assert answers["transform"].dtype == np.float32


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_read_only_memmap_gives_the_in_memory_result(estimator, tmp_path):
    """joblib hands workers read-only memory maps: the fit and the answers
    are the in-memory ones, bit for bit, and the file is untouched."""
    data = training_data(estimator)
    path = tmp_path / "X.npy"
    np.save(path, data[0])
    mapped = np.load(path, mmap_mode="r")
    from_memory = _fitted(estimator, data)
    from_map = _fitted(estimator, (mapped, *data[1:]))
    for name, value in fitted_arrays(from_memory).items():
        np.testing.assert_array_equal(fitted_arrays(from_map)[name], value, name)
    answers = _queries(from_map, mapped)
    for method, answer in _queries(from_memory, data[0]).items():
        np.testing.assert_array_equal(answers[method], answer, method)
    np.testing.assert_array_equal(np.load(path), data[0])


def _round_trips(fitted, tmp_path):
    """``fitted`` through pickle, joblib and skops.io, each restored."""
    import joblib
    import skops.io

    path = tmp_path / "model.joblib"
    joblib.dump(fitted, path)
    blob = skops.io.dumps(fitted)
    untrusted = skops.io.get_untrusted_types(data=blob)
    # skops trusts numpy and scikit-learn by itself; only our classes remain.
    assert all(name.startswith("sklearn_rbm.") for name in untrusted), untrusted
    return {
        "pickle": pickle.loads(pickle.dumps(fitted)),
        "joblib": joblib.load(path),
        "skops": skops.io.loads(blob, trusted=untrusted),
    }


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_persistence_before_and_after_score(estimator, tmp_path):
    """pickle, joblib and skops.io round-trips give the same answers, before
    and after ``score`` (which caches log Z in the estimator)."""
    pytest.importorskip("skops")
    data = training_data(estimator)
    fitted = _fitted(estimator, data)
    expected = _queries(fitted, data[0])
    for moment in ("before score", "after score"):
        for way, restored in _round_trips(fitted, tmp_path).items():
            answers = _queries(restored, data[0])
            for method, answer in expected.items():
                np.testing.assert_array_equal(answers[method], answer, (moment, way))
            assert restored.score(*data) == fitted.score(*data)
        fitted.score(*data)


@pytest.mark.parametrize("estimator", INSTANCES, ids=instance_id)
def test_clone_is_unfitted_and_refits_the_same_model(estimator):
    fitted = _fitted(estimator)
    copy = clone(fitted)
    assert copy.get_params() == fitted.get_params()
    assert not fitted_arrays(copy)
    refitted = _fitted(copy)
    for name, value in fitted_arrays(fitted).items():
        np.testing.assert_array_equal(fitted_arrays(refitted)[name], value, name)


@pytest.mark.parametrize("mixin", [EpochTrainingMixin, LikelihoodMixin])
def test_a_class_missing_a_hook_cannot_be_instantiated(mixin):
    """The hooks the engine and the likelihood mixin call are declared
    abstract: a new estimator that forgets one fails at construction, not in
    the middle of a fit."""

    class Incomplete(mixin, BaseEstimator):
        pass

    with pytest.raises(TypeError, match="abstract"):
        Incomplete()
