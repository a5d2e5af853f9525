"""A step size that wrecks the model stops the fit with a FloatingPointError
that names the step size, and keeps the parameters of the last good epoch
(sklearn_rbm/_core/divergence.py: the model's likelihood is provably far below
that of independent units). Before, these fits returned silently with weights
of 1e3-1e7 and log-likelihoods thousands of nats below independent pixels."""

import numpy as np
import pytest
import scipy.sparse as sp

from sklearn_rbm import (
    ConditionalRBMRegressor,
    DCPBernoulliRBM,
    FrankWolfeRBM,
    GaussianBernoulliRBM,
)
from sklearn_rbm._core.divergence import likelihood_ceiling, softplus_row_sums
from sklearn_rbm._partition.exact import _free_energy
from sklearn_rbm._rbm.layers.bernoulli import _check_log_unnormalised
from sklearn_rbm.datasets import flip_pixels, load_binary_digits, make_bars_and_stripes


@pytest.fixture(scope="module")
def digits():
    return load_binary_digits()[0][:500]


def _independent_log_likelihood(X):
    p = np.clip(X.mean(axis=0), 1e-3, 1 - 1e-3)
    return float(np.mean(X @ np.log(p) + (1 - X) @ np.log(1 - p)))


@pytest.mark.parametrize("solver", ["cd", "pcd", "cg", "sdcp", "csdcp"])
def test_dcp_divergence_stops_and_keeps_the_last_good_epoch(digits, solver):
    rbm = DCPBernoulliRBM(
        n_components=16, solver=solver, learning_rate=1e6, n_iter=3, batch_size=20,
        random_state=0,
    )  # fmt: skip
    with pytest.raises(FloatingPointError, match="Use a smaller learning_rate"):
        rbm.fit(digits)
    assert rbm.n_iter_ == 0  # the first epoch diverged: the initial model is kept
    assert np.abs(rbm.components_).max() < 1.0
    assert rbm.score(digits) > _independent_log_likelihood(digits) - 1.0
    assert rbm.transform(digits).std() > 0  # not the dead all-zero features


@pytest.mark.parametrize("solver", ["cd", "pcd", "cg", "sdcp", "csdcp"])
def test_dcp_divergence_by_momentum(digits, solver):
    rbm = DCPBernoulliRBM(
        n_components=16, solver=solver, learning_rate=5.0, momentum=0.999,
        n_iter=10, batch_size=20, random_state=0,
    )  # fmt: skip
    with pytest.raises(FloatingPointError, match="and less momentum"):
        rbm.fit(digits)
    assert rbm.n_iter_ < 10 and np.all(np.isfinite(rbm.components_))


def test_dcp_partial_fit_divergence(digits):
    rbm = DCPBernoulliRBM(n_components=8, learning_rate=0.05, random_state=0)
    rbm.partial_fit(digits)
    good = rbm.components_.copy()
    rbm.set_params(learning_rate=1e6)
    with pytest.raises(FloatingPointError, match="learning_rate=1e\\+06"):
        rbm.partial_fit(digits)
    np.testing.assert_array_equal(rbm.components_, good)


@pytest.mark.parametrize("solver", ["cd", "cd-percloss", "mf", "bp", "mssvm", "lssvm"])
def test_conditional_divergence_stops(digits, solver):
    X = flip_pixels(digits, 0.1, random_state=0)
    crbm = ConditionalRBMRegressor(
        n_components=8, solver=solver, learning_rate=1e6, n_iter=2,
        n_gibbs_steps=2, random_state=0,
    )  # fmt: skip
    with pytest.raises(FloatingPointError, match="learning_rate=1e\\+06"):
        crbm.fit(X, digits)
    assert np.abs(crbm.components_).max() < 1.0  # the initial weights, kept


def test_frank_wolfe_visible_rate_divergence(digits):
    fw = FrankWolfeRBM(
        max_components=4, visible_learning_rate=1e6, n_samples_per_step=50,
        validation_fraction=None, random_state=0,
    )  # fmt: skip
    with pytest.raises(FloatingPointError, match="visible_learning_rate=1e\\+06"):
        fw.fit(digits)
    assert fw.score(digits) > _independent_log_likelihood(digits) - 1.0


@pytest.mark.parametrize("solver", ["cd", "pcd", "cg", "sdcp", "csdcp"])
def test_healthy_fits_are_not_flagged(solver):
    """Large but sane rates on bars & stripes (Upadhya & Sastry use 0.3-0.5)."""
    X = make_bars_and_stripes()
    rbm = DCPBernoulliRBM(
        n_components=4, solver=solver, learning_rate=0.5, batch_size=14,
        n_iter=300, n_gibbs_steps=4, random_state=0,
    ).fit(X)  # fmt: skip
    # Every epoch ran (no false alarm), the final state passes the check, and
    # the model really is better than independent units (exact likelihood).
    assert rbm.n_iter_ == 300
    assert rbm._divergence() is None
    assert rbm.score(X) > _independent_log_likelihood(X)


def test_the_ceiling_bounds_the_exact_log_likelihood(digits):
    """mean log p~ - max log p~ >= mean log p, for any model (Z >= max p~)."""
    rbm = DCPBernoulliRBM(n_components=10, n_iter=2, random_state=0).fit(digits)
    log_p = rbm.score_samples(digits)
    log_p_tilde = log_p + rbm.log_partition_function().log_z
    assert likelihood_ceiling(log_p_tilde) >= log_p.mean()


def test_softplus_row_sums_matches_logaddexp_to_rounding():
    rng = np.random.default_rng(0)
    pre = np.vstack([30.0 * rng.standard_normal((40, 57)), np.zeros((1, 57))])
    pre[0, :3] = [800.0, -800.0, 0.0]  # exp overflows / underflows in one branch
    expected = np.logaddexp(0.0, pre).sum(axis=1)
    np.testing.assert_allclose(softplus_row_sums(pre), expected, rtol=1e-13)
    edge = softplus_row_sums(np.array([[np.inf, 1.0], [-np.inf, 1.0], [np.nan, 1.0]]))
    assert edge[0] == np.inf and edge[1] == np.log1p(np.e) and np.isnan(edge[2])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_the_binary_check_scores_rows_as_the_free_energy(dtype):
    """The per-epoch check's -F(v) (vectorised softplus) is the free
    energy's to rounding, dense or sparse rows."""
    rng = np.random.default_rng(0)
    X = (rng.random((60, 30)) < 0.3).astype(dtype)
    W = (3.0 * rng.standard_normal((20, 30))).astype(dtype)
    b, c = rng.standard_normal(30).astype(dtype), rng.standard_normal(20).astype(dtype)
    expected = -_free_energy(X, W, b, c)
    for rows in (X, sp.csr_matrix(X)):
        np.testing.assert_allclose(
            _check_log_unnormalised(rows, W, b, c),
            expected,
            rtol=1e-5 if dtype == np.float32 else 1e-12,
        )


class _CountedChecks(DCPBernoulliRBM):
    """Records the epochs whose divergence check ran and the weights after
    every epoch; reports a divergence at the check of epoch ``fail_at``."""

    fail_at = None

    def _end_epoch(self):
        super()._end_epoch()
        self.weights_after_.append(self.components_.copy())

    def _divergence(self):
        epoch = len(self.weights_after_)
        self.checked_epochs_.append(epoch)
        return "it was told to." if epoch == self.fail_at else None

    def fit(self, X, y=None):
        self.weights_after_, self.checked_epochs_ = [], []
        return super().fit(X, y)


def test_small_data_sets_are_checked_every_thousand_rows(digits):
    """100 rows: the first ten epochs, then one in ten (1,000 rows), and the
    last; every epoch when it is scored (early stopping) or printed."""
    X = digits[:100]
    rbm = _CountedChecks(n_components=4, n_iter=35, random_state=0).fit(X)
    assert rbm.checked_epochs_ == [*range(1, 11), 20, 30, 35]
    # Epochs of 1,000 rows or more are all checked.
    X = np.tile(digits[:100], (10, 1))
    rbm = _CountedChecks(n_components=4, n_iter=12, random_state=0).fit(X)
    assert rbm.checked_epochs_ == list(range(1, 13))
    rbm = _CountedChecks(
        n_components=4, n_iter=12, early_stopping=True, validation_fraction=0.2,
        n_iter_no_change=100, random_state=0,
    ).fit(digits[:100])  # fmt: skip
    assert rbm.checked_epochs_ == list(range(1, 13))
    rbm = _CountedChecks(n_components=4, n_iter=12, verbose=1, random_state=0)
    rbm.fit(digits[:100])
    assert rbm.checked_epochs_ == list(range(1, 13))


def test_a_divergence_between_checks_keeps_the_last_checked_epoch(digits):
    rbm = _CountedChecks(n_components=4, n_iter=35, random_state=0)
    rbm.fail_at = 30  # checked at 20, then 30
    with pytest.raises(FloatingPointError, match="between epochs 21 and 30"):
        rbm.fit(digits[:100])
    assert rbm.n_iter_ == 20
    assert len(rbm.history_["epoch"]) == 20
    np.testing.assert_array_equal(rbm.components_, rbm.weights_after_[19])
    # At a check right after a passing one, the message names the epoch.
    rbm.fail_at = 7
    with pytest.raises(FloatingPointError, match="diverged in epoch 7:"):
        rbm.fit(digits[:100])
    assert rbm.n_iter_ == 6
    np.testing.assert_array_equal(rbm.components_, rbm.weights_after_[5])


def test_gaussian_divergence_on_constant_features_says_to_drop_them():
    """Standardising a constant feature leaves it constant: the advice that
    helps is to drop it."""
    X = np.ones((50, 5))
    X[:, 0] = np.random.default_rng(0).standard_normal(50)
    with pytest.raises(FloatingPointError, match=r"4 of the 5 features of X are con"):
        GaussianBernoulliRBM(random_state=0).fit(X)
