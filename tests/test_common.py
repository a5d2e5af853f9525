"""scikit-learn's estimator checks over every estimator and every solver."""

import pytest
from sklearn.utils.estimator_checks import parametrize_with_checks

from sklearn_rbm import DCPBernoulliRBM


def _dcp_instances():
    # Small and quick, one instance per solver: every solver must pass.
    for solver in ("cd", "pcd", "cg", "sdcp", "csdcp"):
        yield DCPBernoulliRBM(
            n_components=8, solver=solver, n_iter=3, batch_size=10, random_state=0
        )


ESTIMATORS = [*_dcp_instances()]


def _expected_failures(estimator):
    return {}


@parametrize_with_checks(ESTIMATORS, expected_failed_checks=_expected_failures)
def test_sklearn_compatible_estimator(estimator, check):
    check(estimator)
