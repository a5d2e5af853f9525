"""Where a fit of :class:`ConditionalRBMRegressor` starts: the standardised
coordinates its gradient steps work in, and the logistic-regression start.

**Standardised coordinates.** The input weights ``W^{vx}``, ``W^{hx}`` multiply
the raw features, so the size of a safe step depends on the features' scale:
on count features (``make_multilabel_classification``, values up to 20) a
rate that suits binary images makes the stochastic steps noisy enough to
lose to plain logistic regression (held-out Hamming error 0.184 / 0.168 /
0.174 on three draws of 2,000 x 30 -> 8, against 0.181 / 0.163 / 0.166 with
standardised steps). A fit therefore steps on ``z = (x - mean) / scale`` and
maps the parameters back to raw ``x`` when it ends; the model is the same
(the map is exact, ``W z + b = (W / scale) x + b - W (mean / scale)``), only
the path of the steps changes, and it no longer depends on the units or the
offset of a feature. Binary features are left as they are: they have the
scale the learning rates were chosen for (Ping & Ihler's images), and
dividing a rare pixel by its small standard deviation only amplifies it.
Sparse ``X`` is centred without densifying it (:class:`CentredRows`), so it
gives the fit dense ``X`` gives.

**The logistic start.** Ping & Ihler (2017, Sec. 6) view logistic regression
as the conditional RBM with only ``W^{vx}`` and ``b^v``. ``init='logistic'``
fits that model exactly (scikit-learn's ``LogisticRegression()`` per output,
by one L-BFGS run on the convex losses) and starts the hidden units from
small random weights around it, so the fit starts where the per-output
baseline ends.
"""

from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.utils.extmath import safe_sparse_dot
from sklearn.utils.sparsefuncs import mean_variance_axis

# L-BFGS of the logistic start: scikit-learn's tolerance for lbfgs, on the
# projected gradient of the mean loss. Standardised multi-label data converge
# in 10-20 iterations, noisy digits in about 80 (1e-6 took 309 and changed
# the held-out error by 0.004 points).
_LOGISTIC_MAX_ITER = 300
_LOGISTIC_GTOL = 1e-4


class CentredRows:
    """Sparse rows ``X`` minus one dense row ``shift``, kept sparse: what
    centring a sparse ``X`` means without densifying it. Slicing rows and the
    two products the fit needs (:func:`times_weights`, :func:`residuals_times`)
    account for the shift."""

    def __init__(self, X, shift):
        self.X, self.shift = X, shift

    @property
    def shape(self):
        return self.X.shape

    def __getitem__(self, rows):
        return CentredRows(self.X[rows], self.shift)


def times_weights(Z, W):
    """``Z @ W.T`` (dense), ``Z`` dense, sparse or :class:`CentredRows`."""
    if isinstance(Z, CentredRows):
        return safe_sparse_dot(Z.X, W.T, dense_output=True) - W @ Z.shift
    return safe_sparse_dot(Z, W.T, dense_output=True)


def residuals_times(D, Z):
    """``D.T @ Z`` (dense), ``Z`` dense, sparse or :class:`CentredRows`."""
    if isinstance(Z, CentredRows):
        product = safe_sparse_dot(D.T, Z.X, dense_output=True)
        return product - np.outer(D.sum(axis=0), Z.shift)
    return safe_sparse_dot(D.T, Z, dense_output=True)


def row_biases(parameters, X):
    """Each row's RBM biases ``B1 = b^v + W^{vx} x`` and ``B2 = b^h + W^{hx}
    x`` (contiguous), ``parameters`` being ``(W^{vh}, W^{vx}, W^{hx}, b^v,
    b^h)``."""
    _, coef, hidden_coef, intercept, intercept_hidden = parameters
    B1 = times_weights(X, coef) + intercept
    B2 = times_weights(X, hidden_coef) + intercept_hidden
    return np.ascontiguousarray(B1), np.ascontiguousarray(B2)


def stack_rows(A, B):
    """The rows of ``A`` above those of ``B`` (both in one standardisation)."""
    if isinstance(A, CentredRows):
        return CentredRows(sp.vstack((A.X, B.X), format="csr"), A.shift)
    return np.vstack((A, B))


class Standardisation(NamedTuple):
    """Per-feature ``mean`` and ``scale`` of the training rows: ``z = (x -
    mean) / scale``. Binary features (only 0 and 1) and constant ones keep
    their values (mean 0, scale 1)."""

    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def of(cls, X):
        if sp.issparse(X):
            mean, variance = mean_variance_axis(X, axis=0)
        else:
            mean, variance = X.mean(axis=0), X.var(axis=0)
        scale = np.sqrt(variance)
        # As scikit-learn's StandardScaler: a (near) constant feature keeps
        # its scale, so that no weight is divided by a rounding error.
        rounding = 10 * np.finfo(np.float64).eps * np.maximum(1.0, np.abs(mean))
        unchanged = (scale < rounding) | _binary_columns(X)
        return cls(np.where(unchanged, 0.0, mean), np.where(unchanged, 1.0, scale))

    def transform(self, X):
        """``X`` in standardised coordinates (sparse ``X`` as
        :class:`CentredRows` over CSR)."""
        if sp.issparse(X):
            scaled = sp.csr_matrix(X.multiply(1.0 / self.scale))
            return CentredRows(scaled, self.mean / self.scale)
        return (X - self.mean) / self.scale

    def to_standardised(self, weights, intercept):
        """In place: parameters on raw features -> on standardised ones."""
        intercept += weights @ self.mean
        weights *= self.scale

    def to_raw(self, weights, intercept):
        """In place: parameters on standardised features -> on raw ones."""
        weights /= self.scale
        intercept -= weights @ self.mean


def _binary_columns(X):
    """Which columns hold only 0 and 1."""
    if sp.issparse(X):
        X = sp.coo_matrix(X)
        bad = (X.data != 0) & (X.data != 1)
        return np.bincount(X.col[bad], minlength=X.shape[1]) == 0
    return np.all((X == 0) | (X == 1), axis=0)


def logistic_start(X, Y, coef, intercept, scale):
    """In place: ``coef`` and ``intercept`` of logistic regression per output.

    ``X`` are the training rows in standardised coordinates (``scale`` the
    features' scales), ``Y`` their 0/1 outputs. Minimises ``sum_rows
    sum_outputs logloss + |coef / scale|^2 / 2``: the penalty is on the
    weights of the *raw* features, so this is scikit-learn's
    ``LogisticRegression()`` (``C = 1``, intercept unpenalised) on the user's
    ``X``, only better conditioned. (A penalty on the standardised weights
    penalises rare binary pixels less; on noisy digits it raised the held-out
    error from 5.31% to 5.48%.) The outputs are independent problems, so
    their sum is solved by one L-BFGS run.
    """
    n_rows, n_features = X.shape
    n_outputs = Y.shape[1]
    # The mean loss (divided by the rows): the same minimiser, values of order 1.
    penalty = 1.0 / (n_rows * scale**2)

    def loss(theta):
        W = theta[: n_outputs * n_features].reshape(n_outputs, n_features)
        b = theta[n_outputs * n_features :]
        logits = times_weights(X, W) + b
        # logloss(y, s) = softplus(s) - y s
        value = (np.logaddexp(0.0, logits) - Y * logits).sum() / n_rows
        residual = (expit(logits) - Y) / n_rows
        grad_W = residuals_times(residual, X) + penalty * W
        value += 0.5 * float(np.sum(penalty * W * W))
        return value, np.concatenate([np.ravel(grad_W), residual.sum(axis=0)])

    # The losses are convex: the start is zero, not the random initial
    # weights (whose weight_scale may be large enough to overflow the loss).
    start = np.zeros(coef.size + intercept.size)
    result = minimize(
        loss, start, jac=True, method="L-BFGS-B",
        options={"maxiter": _LOGISTIC_MAX_ITER, "gtol": _LOGISTIC_GTOL},
    )  # fmt: skip
    coef[...] = result.x[: n_outputs * n_features].reshape(n_outputs, n_features)
    intercept[...] = result.x[n_outputs * n_features :]
