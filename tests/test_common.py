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

from sklearn_rbm import DCPBernoulliRBM, FrankWolfeRBM


def _dcp_instances():
    # Small and quick, one instance per solver: every solver must pass.
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp"):
        yield DCPBernoulliRBM(
            n_components=8, solver=solver, n_iter=3, batch_size=10, random_state=0
        )


def _frank_wolfe_instances():
    # Both ways of inserting a unit: the line search and the literal alpha_t = t.
    for unit_scale in ("line-search", "one"):
        yield FrankWolfeRBM(
            max_components=3,
            unit_scale=unit_scale,
            n_samples_per_step=20,
            n_gibbs_steps=2,
            n_bias_steps=2,
            random_state=0,
        )


# ConditionalRBMRegressor and FVBMPseudoLikelihood run the same checks in their
# own test modules, next to the expected failures that are specific to them.
ESTIMATORS = [*_dcp_instances(), *_frank_wolfe_instances()]


def _expected_failures(estimator):
    """Checks an estimator is known to fail, with the reason (none so far)."""
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)


def _name(estimator):
    setting = getattr(estimator, "solver", getattr(estimator, "unit_scale", ""))
    return f"{type(estimator).__name__}-{setting}"


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
