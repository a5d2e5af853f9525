"""scikit-learn's estimator checks over every estimator and every solver,
from one registry of instances and expected failures (as imbalanced-learn's
``instance_generator``), plus the checks scikit-learn runs by hand on its own
estimators (parameter validation, set_output, feature names)."""

import numpy as np
import pytest
from sklearn.base import TransformerMixin
from sklearn.pipeline import make_pipeline
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
    ConditionalRBMRegressor,
    DCPBernoulliRBM,
    FrankWolfeRBM,
    FVBMPseudoLikelihood,
    GaussianBernoulliRBM,
)
from sklearn_rbm._sklearn_compat import estimator_check_domain

# ----------------------------------------------------------------- registry
# Small and quick instances, one per solver (every solver must pass).
INSTANCES = [
    *(
        DCPBernoulliRBM(
            n_components=8, solver=solver, n_iter=3, batch_size=10, random_state=0
        )
        for solver in ("cd", "pcd", "cg", "sdcp", "csdcp", "pt", "cpt")
    ),
    # Both ways of inserting a unit: the line search and the literal alpha_t = t.
    *(
        FrankWolfeRBM(
            max_components=3,
            unit_scale=unit_scale,
            n_samples_per_step=20,
            n_gibbs_steps=2,
            n_bias_steps=2,
            random_state=0,
        )  # fmt: skip
        for unit_scale in ("line-search", "one")
    ),
    *(
        ConditionalRBMRegressor(
            n_components=3, solver=solver, n_iter=2, n_gibbs_steps=2, random_state=0
        )
        for solver in ("cd", "cd-percloss", "mf", "bp", "mssvm", "lssvm")
    ),
    *(
        FVBMPseudoLikelihood(solver=solver)
        for solver in ("newton", "nodewise", "bslm", "ga", "mm", "lbfgs")
    ),
    FVBMPseudoLikelihood(penalty="l1", alpha=0.01),
    # sigma learned with every solver, and fixed (the kernel's other branch).
    *(
        GaussianBernoulliRBM(
            n_components=4, solver=solver, n_iter=3, batch_size=10, random_state=0
        )
        for solver in ("cd", "pcd", "cg", "sdcp", "csdcp", "pt")
    ),
    GaussianBernoulliRBM(
        n_components=4, solver="cd", sigma=1.0, n_iter=3, batch_size=10, random_state=0
    ),
]

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
    FVBMPseudoLikelihood: {
        "check_positive_only_tag_during_fit": (
            "feeds continuous data with negative values directly (not through "
            "the domain mapping); FVBMPseudoLikelihood accepts only binary X"
        )
    },
}


def expected_failures(estimator):
    return EXPECTED_FAILURES.get(type(estimator), {})


# ------------------------------------------------------ the checks' domains
# scikit-learn maps its random check data into an estimator's domain through
# hooks that know positive and categorical data but not "binary only"; the
# models of binary data get the same data binarised at each column's median.
def _binarised_X(estimator, X, X_test=None, **kwargs):
    threshold = np.median(X, axis=0)

    def binarise(A):
        return (A > threshold).astype(A.dtype)

    return binarise(X) if X_test is None else (binarise(X), binarise(X_test))


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


DOMAINS = {
    DCPBernoulliRBM: {"map_X": _unit_interval_X},
    FrankWolfeRBM: {"map_X": _unit_interval_X},
    FVBMPseudoLikelihood: {"map_X": _binarised_X},
    ConditionalRBMRegressor: {"map_X": _standardised_X, "map_y": _binary_y},
}


def _name(estimator):
    setting = getattr(estimator, "solver", getattr(estimator, "unit_scale", ""))
    if getattr(estimator, "penalty", None) == "l1":
        setting += "-l1"
    return f"{type(estimator).__name__}-{setting}"


@parametrize_with_checks(INSTANCES, expected_failed_checks=expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    with estimator_check_domain(**DOMAINS.get(type(estimator), {})):
        check(estimator)


@pytest.mark.parametrize("estimator", INSTANCES, ids=_name)
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
@pytest.mark.parametrize("estimator", TRANSFORMERS, ids=_name)
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
