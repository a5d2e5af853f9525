"""scikit-learn's estimator checks over every estimator and every solver,
plus the checks scikit-learn runs by hand on its own estimators (parameter
validation, set_output, feature names)."""

import pytest
from sklearn.base import TransformerMixin
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

from sklearn_rbm import DCPBernoulliRBM


def _dcp_instances():
    # Small and quick, one instance per solver: every solver must pass.
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp"):
        yield DCPBernoulliRBM(
            n_components=8, solver=solver, n_iter=3, batch_size=10, random_state=0
        )


ESTIMATORS = [*_dcp_instances()]


def _expected_failures(estimator):
    """Checks an estimator is known to fail, with the reason (none so far)."""
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _name(estimator):
    return f"{type(estimator).__name__}-{getattr(estimator, 'solver', '')}"


@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_name)
def test_parameter_validation(estimator):
    check_param_validation(type(estimator).__name__, estimator)


TRANSFORMERS = [e for e in ESTIMATORS if isinstance(e, TransformerMixin)]
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
    check(type(estimator).__name__, estimator)
