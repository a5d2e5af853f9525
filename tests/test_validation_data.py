"""Validation data of the caller's own, ``fit(X, ..., X_val=...)``, for the
three estimators that monitor held-out data while they train.

Passing ``X_val`` is the way to keep related rows on one side of the split
(several corruptions of one clean image): a ``validation_fraction`` of the
rows would put copies of one image in training and validation alike.
"""

import numpy as np
import pytest
import sklearn
from numpy.testing import assert_array_equal
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import FunctionTransformer

from sklearn_rbm import ConditionalRBMRegressor, DCPBernoulliRBM, FrankWolfeRBM


@pytest.fixture
def binary_data():
    rs = np.random.RandomState(0)
    prototypes = rs.rand(3, 10) < 0.5
    pick = rs.randint(3, size=80)
    X = prototypes[pick] ^ (rs.rand(80, 10) < 0.1)
    return X[:60].astype(np.float64), X[60:].astype(np.float64)


def _dcp(**params):
    return DCPBernoulliRBM(
        n_components=4, n_iter=4, batch_size=10, random_state=0, **params
    )


def _frank_wolfe(**params):
    return FrankWolfeRBM(
        max_components=4,
        n_samples_per_step=50,
        n_gibbs_steps=2,
        n_bias_steps=2,
        random_state=0,
        **params,
    )


def _crbm(**params):
    return ConditionalRBMRegressor(
        n_components=3, n_iter=4, batch_size=10, random_state=0, **params
    )


def test_dcp_early_stopping_scores_the_given_data(binary_data):
    X, X_val = binary_data
    rbm = _dcp(early_stopping=True, n_iter_no_change=10).fit(X, X_val=X_val)
    scores = rbm.history_["validation_log_likelihood"]
    assert len(scores) == 4
    # The best parameters are restored, so their score is the best one seen.
    assert rbm.best_validation_score_ == pytest.approx(rbm.score(X_val), abs=1e-12)
    assert rbm.best_validation_score_ == max(scores)


def test_frank_wolfe_scores_every_size_on_the_given_data(binary_data):
    X, X_val = binary_data
    fw = _frank_wolfe(score_every=1, early_stopping=False).fit(X, X_val=X_val)
    scored = fw.history_["validation_log_likelihood"]
    expected = [fw.submodel(k).score(X_val) for k in range(1, fw.n_iter_ + 1)]
    np.testing.assert_allclose(scored, expected, rtol=1e-12)
    assert fw.n_components_ == int(np.argmax(expected)) + 1


def test_crbm_validation_error_is_the_error_on_the_given_data(binary_data):
    X, X_val = binary_data
    # Without early stopping the kept parameters are the last epoch's (with
    # it, the best epoch's or logistic regression's, init='auto').
    crbm = _crbm(early_stopping=False).fit(X, X[:, :5], X_val=X_val, Y_val=X_val[:, :5])
    errors = crbm.history_["validation_error"]
    assert len(errors) == 4
    error = np.mean(crbm.predict(X_val) != X_val[:, :5])
    assert errors[-1] == pytest.approx(error, abs=1e-12)


@pytest.mark.parametrize(
    "make, fit",
    [
        (_dcp, lambda est, X, V: est.fit(X, X_val=V)),
        (_frank_wolfe, lambda est, X, V: est.fit(X, X_val=V)),
        (_crbm, lambda est, X, V: est.fit(X, X[:, :5], X_val=V, Y_val=V[:, :5])),
    ],
    ids=["dcp", "frank_wolfe", "crbm"],
)
def test_given_data_replace_the_validation_fraction(binary_data, make, fit):
    """Nothing is held out of ``X`` when ``X_val`` is given: the fit is the
    same, bit for bit, whatever ``validation_fraction`` says."""
    X, X_val = binary_data
    with_fraction = fit(make(validation_fraction=0.5), X, X_val)
    without = fit(make(validation_fraction=None), X, X_val)
    np.testing.assert_array_equal(with_fraction.components_, without.components_)


@pytest.mark.parametrize("make", [_dcp, _frank_wolfe], ids=["dcp", "frank_wolfe"])
def test_unsupervised_X_val_with_other_features_is_an_error(binary_data, make):
    X, X_val = binary_data
    with pytest.raises(ValueError, match="X_val: X has 7 features.*expecting 10"):
        make().fit(X, X_val=X_val[:, :7])


@pytest.mark.parametrize(
    "bad, message",
    [
        (dict(X_val="V"), "X_val was passed to fit without Y_val"),
        (dict(Y_val="Y"), "Y_val was passed to fit without X_val"),
        (dict(X_val="V7", Y_val="Y"), "X_val: X has 7 features.*expecting 10"),
        (dict(X_val="V", Y_val="Y2"), r"Y_val must have shape \(20, 5\)"),
        (
            dict(X_val="V", Y_val="Y*2"),
            r"binary outputs Y_val .*found the values \[2.0\]",
        ),
        (dict(X_val="Vnan", Y_val="Y"), "X_val: Input X contains NaN"),
        (dict(X_val="V5", Y_val="Y"), r"Y_val must have shape \(5, 5\)"),
    ],
)
def test_crbm_bad_validation_data(binary_data, bad, message):
    X, X_val = binary_data
    Y_val = X_val[:, :5]
    values = {
        "V": X_val,
        "V7": X_val[:, :7],
        "V5": X_val[:5],
        "Vnan": np.where(X_val > 0, np.nan, 0.0),
        "Y": Y_val,
        "Y2": Y_val[:, :2],
        "Y*2": 2 * Y_val,
    }
    with pytest.raises(ValueError, match=message):
        _crbm().fit(X, X[:, :5], **{k: values[v] for k, v in bad.items()})


def test_crbm_one_output_validation_targets_may_be_1d(binary_data):
    X, X_val = binary_data
    one_d = _crbm().fit(X, X[:, 0], X_val=X_val, Y_val=X_val[:, 0])
    two_d = _crbm().fit(X, X[:, 0], X_val=X_val, Y_val=X_val[:, :1])
    key = "validation_error"
    assert_array_equal(one_d.history_[key], two_d.history_[key])


def test_pipeline_transforms_X_val_like_X(binary_data):
    """With metadata routing, a Pipeline passes ``X_val`` through its earlier
    steps (``transform_input``), so the RBM sees it as it sees ``X``."""
    X, X_val = binary_data
    flip = FunctionTransformer(lambda Z: 1.0 - Z)
    with sklearn.config_context(enable_metadata_routing=True):
        pipe = Pipeline(
            [
                ("flip", flip),
                ("rbm", _dcp(early_stopping=True).set_fit_request(X_val=True)),
            ],
            transform_input=["X_val"],
        ).fit(X, X_val=X_val)
    direct = _dcp(early_stopping=True).fit(1.0 - X, X_val=1.0 - X_val)
    key = "validation_log_likelihood"
    assert_array_equal(pipe[-1].history_[key], direct.history_[key])
