"""Likelihood of Gaussian-Bernoulli RBMs: real-valued visible units, binary
hidden units. Public through :mod:`sklearn_rbm.likelihood`.

The energy of Cho, Ilin & Raiko (2011) with per-feature standard deviations
sigma, ``E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_ij W_ji h_j v_i /
sigma_i^2 - c^T h``. Its log-likelihood ``log p(v) = -F(v) - log Z`` is a log
*density* (nats per sample; it can be positive); ``log Z`` integrates over
``v`` in closed form and sums over ``h``.
"""

import numbers

import numpy as np
import scipy.sparse as sp
from sklearn.utils.extmath import safe_sparse_dot

from ._annealing import SCHEDULE_CONSTRAINT, _ais_band, _check_log_weights, ais_betas
from ._kernels.fvbm import log_partition_exact as _spin_log_partition
from ._kernels.gaussian import ais_log_weights as _gaussian_ais_log_weights
from ._partition_exact import LogPartition, _check_rbm, check_enumerable
from ._sklearn_compat import Interval, validate_params
from ._utils import blas_threads_for, kernel_rng

__all__ = [
    "gaussian_free_energy",
    "gaussian_log_partition_exact",
    "gaussian_log_partition_ais",
]


def _check_gaussian_rbm(components, intercept_visible, intercept_hidden, sigma):
    """``(W, b, c, sigma)`` as contiguous arrays of one floating dtype, with
    ``sigma`` broadcast to one positive, finite value per visible unit."""
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    sigma = _check_scales(sigma, W.shape[1], "sigma", W.dtype)
    return W, b, c, sigma


def _check_scales(values, n_visible, name, dtype):
    """A positive, finite scalar or vector of ``n_visible`` values, as a vector."""
    values = np.asarray(values, dtype=dtype)
    if values.ndim == 0:
        values = np.full(n_visible, values, dtype=dtype)
    if values.shape != (n_visible,):
        raise ValueError(
            f"{name} must be a scalar or have shape ({n_visible},) (one value per "
            f"visible unit), got shape {values.shape}."
        )
    bad = ~(np.isfinite(values) & (values > 0))
    if np.any(bad):
        raise ValueError(
            f"{name} must be positive and finite, got {values[bad][:3]} among "
            "its values. Standard deviations are positive: standardise the "
            "data or floor them."
        )
    return np.ascontiguousarray(values)


def gaussian_free_energy(X, components, intercept_visible, intercept_hidden, sigma):
    """Free energy of each row under a Gaussian-Bernoulli RBM.

    ``F(v) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_j softplus(c_j +
    sum_i W_ji v_i / sigma_i^2)``, so that ``log p(v) = -F(v) - log Z`` with
    ``log Z`` from :func:`gaussian_log_partition_exact` or
    :func:`gaussian_log_partition_ais`.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Real-valued visible vectors.
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b`` (the means of ``p(v | h = 0)``).
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    sigma : float or array-like of shape (n_visible,)
        Standard deviations of the visible units, positive.

    Returns
    -------
    free_energy : ndarray of shape (n_samples,), float64
    """

    W, b, c, sigma = _check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    inv_var = 1.0 / sigma.astype(np.float64) ** 2
    scaled_W = np.ascontiguousarray(W * inv_var)
    pre = safe_sparse_dot(X, scaled_W.T, dense_output=True) + c
    hidden_term = np.logaddexp(0.0, np.asarray(pre, dtype=np.float64)).sum(axis=1)
    if sp.issparse(X):
        # sum_i (v_i - b_i)^2 / (2 sigma_i^2) expanded: sparse rows stay sparse.
        squares = np.asarray(X.multiply(X) @ (0.5 * inv_var)).ravel()
        cross = np.asarray(X @ (b * inv_var)).ravel()
        visible_term = squares - cross + 0.5 * np.sum(b * b * inv_var)
    else:
        # Row sums of an element-wise product: each row's value depends on
        # that row only (a matrix-vector product's rounding may not).
        deviation = np.asarray(X, dtype=np.float64) - b
        visible_term = 0.5 * np.sum(deviation * deviation * inv_var, axis=1)
    return visible_term - hidden_term


def gaussian_log_partition_exact(
    components, intercept_visible, intercept_hidden, sigma
):
    """Exact ``log Z`` of a Gaussian-Bernoulli RBM by enumerating its hidden layer.

    The visible integral is Gaussian:
    ``log Z = sum_i log(sqrt(2 pi) sigma_i) + logsumexp_h [c^T h + sum_i
    ((b_i + (W^T h)_i)^2 - b_i^2) / (2 sigma_i^2)]``. The bracket is a
    quadratic form of ``h``, ``h^T (c + W D b) + 1/2 h^T (W D W^T) h`` with
    ``D = diag(sigma^-2)``: summed out over ``v``, the RBM is a fully visible
    Boltzmann machine over ``h``. Its ``2 ** n_hidden`` states are walked in
    Gray-code order at O(n_hidden) each, whatever the number of visible units.

    Parameters
    ----------
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    sigma : float or array-like of shape (n_visible,)
        Standard deviations of the visible units, positive.

    Returns
    -------
    log_z : float

    Raises
    ------
    ValueError
        When the hidden layer has more than ``MAX_ENUMERABLE_UNITS`` (30)
        units (use :func:`gaussian_log_partition_ais`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import gaussian_log_partition_exact
    >>> # No couplings: Z = prod_i sqrt(2 pi) sigma_i * prod_j (1 + e^{c_j}).
    >>> W = np.zeros((2, 3)); b = np.ones(3); c = np.zeros(2)
    >>> float(gaussian_log_partition_exact(W, b, c, sigma=1.0))
    4.14310...
    >>> float(1.5 * np.log(2 * np.pi) + 2 * np.log(2))
    4.14310...
    """
    W, b, c, sigma = _check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    n_hidden, n_visible = W.shape
    check_enumerable(
        n_hidden,
        f"The exact log Z of a Gaussian-Bernoulli RBM with {n_hidden} hidden units",
        instead="gaussian_log_partition_ais (score_method='ais')",
    )
    W, b, c = (a.astype(np.float64) for a in (W, b, c))
    sigma = sigma.astype(np.float64)
    scaled = W / sigma
    coupling = scaled @ scaled.T
    # h_j^2 = h_j: the diagonal of the coupling joins the linear term.
    linear = c + W @ (b / sigma**2) + 0.5 * np.diag(coupling)
    np.fill_diagonal(coupling, 0.0)
    # h = (x + 1) / 2 with spins x in {-1, 1}: the same sum as an FVBM's
    # logsumexp_x (x^T M x / 2 + f^T x), plus a constant.
    spin_coupling = np.ascontiguousarray(coupling / 4.0)
    spin_field = linear / 2.0 + coupling.sum(axis=1) / 4.0
    constant = linear.sum() / 2.0 + coupling.sum() / 8.0
    gaussian_integral = np.sum(np.log(np.sqrt(2.0 * np.pi) * sigma))
    return float(
        gaussian_integral + constant + _spin_log_partition(spin_coupling, spin_field)
    )


@validate_params(
    {
        "components": ["array-like"],
        "intercept_visible": ["array-like"],
        "intercept_hidden": ["array-like"],
        "sigma": [Interval(numbers.Real, 0, None, closed="neither"), "array-like"],
        "base_mean": ["array-like", None],
        "base_sigma": ["array-like", None],
        "n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
        "betas": [*SCHEDULE_CONSTRAINT, None],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def gaussian_log_partition_ais(
    components,
    intercept_visible,
    intercept_hidden,
    sigma,
    *,
    base_mean=None,
    base_sigma=None,
    n_chains=100,
    betas=None,
    random_state=None,
):
    """Estimate ``log Z`` of a Gaussian-Bernoulli RBM by annealed importance sampling.

    The chains anneal from a base model of independent Gaussians
    ``N_A(v) = prod_i N(v_i; base_mean_i, base_sigma_i^2)`` with disconnected
    hidden units (``log Z_A = sum_i log(sqrt(2 pi) base_sigma_i) + n_hidden
    log 2``) to the RBM through ``p*_beta(v, h) = N_A(v)^(1 - beta)
    exp(-beta E(v, h))``, where every conditional is still Gaussian or
    Bernoulli (Neal 2001; Salakhutdinov & Murray 2008 for binary RBMs). The
    band is the one of :func:`log_partition_ais`.

    Parameters
    ----------
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    sigma : float or array-like of shape (n_visible,)
        Standard deviations of the visible units, positive.
    base_mean : array-like of shape (n_visible,), default=None
        Means of the base model, usually the training data's; ``None`` uses
        ``intercept_visible``.
    base_sigma : float or array-like of shape (n_visible,), default=None
        Standard deviations of the base model, usually the training data's;
        ``None`` uses ``sigma``.
    n_chains : int, default=100
        Number of independent AIS runs ``M``.
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperature schedule, see :func:`ais_betas`; ``None`` means 1,000
        evenly spaced temperatures.
    random_state : int, RandomState instance or None, default=None
        Seed of the chains.

    Returns
    -------
    estimate : LogPartition
        ``log_z`` and the band of plus or minus three standard errors of the
        mean importance weight, in log space.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import (
    ...     gaussian_log_partition_ais, gaussian_log_partition_exact)
    >>> rng = np.random.RandomState(0)
    >>> W = 0.3 * rng.randn(5, 12); b = rng.randn(12); c = rng.randn(5)
    >>> est = gaussian_log_partition_ais(W, b, c, sigma=1.0, random_state=0)
    >>> bool(est.lower <= gaussian_log_partition_exact(W, b, c, 1.0) <= est.upper)
    True
    """
    W, b, c, sigma = _check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    base_mean, base_sigma = _check_gaussian_base(base_mean, base_sigma, b, sigma)
    schedule = ais_betas(1000 if betas is None else betas)
    n_hidden, n_visible = W.shape
    with blas_threads_for(n_chains * n_hidden * n_visible):
        log_w = _gaussian_ais_log_weights(
            W, b, c, sigma, base_mean, base_sigma, schedule, n_chains,
            kernel_rng(random_state),
        )  # fmt: skip
    _check_log_weights(log_w, "AIS")
    log_z_base = _gaussian_base_log_partition(base_sigma, n_hidden)
    return LogPartition(*_ais_band(log_w, log_z_base), method="ais")


def _check_gaussian_base(base_mean, base_sigma, b, sigma):
    """The AIS base model's means and standard deviations, as contiguous
    vectors in the dtype of ``b``; ``None`` takes the RBM's ``b`` and
    ``sigma``."""
    n_visible = b.shape[0]
    base_mean = b if base_mean is None else np.asarray(base_mean, dtype=b.dtype)
    if base_mean.shape != (n_visible,) or not np.all(np.isfinite(base_mean)):
        raise ValueError(
            f"base_mean must be a finite vector of length {n_visible} (one mean "
            f"per visible unit), got shape {base_mean.shape}."
        )
    base_sigma = _check_scales(
        sigma if base_sigma is None else base_sigma, n_visible, "base_sigma", b.dtype
    )
    return np.ascontiguousarray(base_mean), base_sigma


def _gaussian_base_log_partition(base_sigma, n_hidden):
    """``log Z_A`` of the base model: independent Gaussians (unnormalised)
    and ``n_hidden`` disconnected hidden units."""
    return float(
        np.sum(np.log(np.sqrt(2.0 * np.pi) * base_sigma.astype(np.float64)))
        + n_hidden * np.log(2.0)
    )
