"""Likelihood of Gaussian-Bernoulli RBMs: real-valued visible units, binary
hidden units. Public through :mod:`sklearn_rbm.likelihood`; the arithmetic is
the Gaussian layer's (``_rbm/layers/gaussian.py``).

The energy of Cho, Ilin & Raiko (2011) with per-feature standard deviations
sigma, ``E(v, h) = sum_i (v_i - b_i)^2 / (2 sigma_i^2) - sum_ij W_ji h_j v_i /
sigma_i^2 - c^T h``. Its log-likelihood ``log p(v) = -F(v) - log Z`` is a log
*density* (nats per sample; it can be positive); ``log Z`` integrates over
``v`` in closed form and sums over ``h``.
"""

from .._core.sklearn_compat import validate_params
from .._rbm.layers.gaussian import (
    check_gaussian_rbm,
    check_gaussian_rows,
    free_energy_of,
    log_partition_ais_of,
    log_partition_exact_of,
)
from .parameters import (
    ANNEALING_CONSTRAINTS,
    GAUSSIAN_BASE_CONSTRAINTS,
    RBM_CONSTRAINTS,
    SIGMA_CONSTRAINTS,
    chains,
    shared_docstring,
)

__all__ = [
    "gaussian_free_energy",
    "gaussian_log_partition_exact",
    "gaussian_log_partition_ais",
]


_GAUSSIAN_RBM_CONSTRAINTS = {**RBM_CONSTRAINTS, **SIGMA_CONSTRAINTS}


@validate_params(
    {"X": ["array-like", "sparse matrix"], **_GAUSSIAN_RBM_CONSTRAINTS},
    prefer_skip_nested_validation=True,
)
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
        The free energy ``F(v)`` of each row.
    """
    W, b, c, sigma = check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    X = check_gaussian_rows(X, sigma, W.shape)
    return free_energy_of(X, W, b, c, sigma)


@validate_params(_GAUSSIAN_RBM_CONSTRAINTS, prefer_skip_nested_validation=True)
@shared_docstring
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
    %(rbm)s
    %(sigma)s

    Returns
    -------
    log_z : float
        The exact ``log Z``.

    Raises
    ------
    ValueError
        Beyond ``MAX_ENUMERABLE_UNITS`` (30) hidden units: use
        :func:`gaussian_log_partition_ais` there.

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
    return log_partition_exact_of(
        components, intercept_visible, intercept_hidden, sigma
    )


@validate_params(
    {
        **_GAUSSIAN_RBM_CONSTRAINTS,
        **GAUSSIAN_BASE_CONSTRAINTS,
        "n_chains": chains(2),
        **ANNEALING_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
@shared_docstring
def gaussian_log_partition_ais(components, intercept_visible, intercept_hidden, sigma,
                               *, base_mean=None, base_sigma=None, n_chains=100,
                               betas=None, random_state=None):  # fmt: skip
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
    %(rbm)s
    %(sigma)s
    base_mean : array-like of shape (n_visible,), default=None
        Means of the base model, usually the training data's; ``None`` uses
        ``intercept_visible``.
    base_sigma : float or array-like of shape (n_visible,), default=None
        Standard deviations of the base model, usually the training data's;
        ``None`` uses ``sigma``.
    n_chains : int, default=100
        Number of independent AIS runs ``M``.
    %(schedule)s
    %(seed)s

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
    return log_partition_ais_of(
        components, intercept_visible, intercept_hidden, sigma, base_mean=base_mean,
        base_sigma=base_sigma, n_chains=n_chains, betas=betas,
        random_state=random_state,
    )  # fmt: skip
