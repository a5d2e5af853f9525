"""Reverse annealing (RAISE, Burda, Grosse & Salakhutdinov 2015): a
per-row log-likelihood estimate that errs low, and the bracket it makes with
forward AIS, for binary and Gaussian-Bernoulli RBMs. Public through
:mod:`sklearn_rbm.likelihood`."""

import hashlib
import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from .._core.sklearn_compat import Interval, validate_params
from .._core.utils import blas_threads_for, check_chains_memory, child_seed
from .._rbm.gaussian_kernels import raise_log_weights as _gaussian_raise_log_weights
from .._rbm.layers.bernoulli import base_log_partition as _base_log_partition
from .._rbm.layers.bernoulli import check_base_rate as _check_base_rate
from .._rbm.layers.gaussian import base_log_partition as _gaussian_base_log_partition
from .._rbm.layers.gaussian import check_gaussian_base as _check_gaussian_base
from .._rbm.layers.gaussian import check_gaussian_rbm as _check_gaussian_rbm
from .._rbm.layers.gaussian import check_gaussian_rows as _check_gaussian_rows
from .ais import log_partition_ais
from .annealing import SCHEDULE_CONSTRAINT, ais_betas
from .annealing import check_log_weights as _check_log_weights
from .exact import _check_rbm, _free_energy, check_rows
from .gaussian import gaussian_free_energy, gaussian_log_partition_ais
from .kernels import raise_log_weights


class LikelihoodBounds(NamedTuple):
    """The mean log-likelihood per sample bracketed from both sides, in nats.

    Both ends are stochastic: each is a bound *in expectation* over the
    random numbers (see :func:`log_likelihood_bounds` for which sense).

    Attributes
    ----------
    lower : float
        Mean over the rows of the RAISE estimates of
        :func:`log_likelihood_raise` (errs low on data typical of the RBM).
    upper : float
        Mean over the rows of ``-F(v) - log Z_AIS`` with ``log Z_AIS`` from
        :func:`log_partition_ais` (errs high).
    """

    lower: float
    upper: float


# Chains advanced together by one call of the reverse-annealing kernel: two
# buffers of this many rows (25 MB and 16 MB for a 784 x 500 float64 RBM), and
# matrix products large enough to run near the BLAS peak.
_RAISE_ROWS = 4096

# BLAKE2b personalisation of the row keys (see _row_keys).
_ROW_KEY_PERSON = b"sklearn_rbm.rais"


def _check_binary_rows(X, n_visible):
    """``X`` as a float array or CSR matrix of 0/1 rows with ``n_visible`` columns."""
    X = check_rows(X, n_visible)
    values = X.data if sp.issparse(X) else X
    offending = values[(values != 0) & (values != 1)]
    if offending.size:
        raise ValueError(
            "X must be binary (0 or 1): reverse annealing starts its chains at "
            f"the rows of X, but X holds {float(offending.flat[0])!r}. Binarise X "
            "first (e.g. X > 0.5)."
        )
    return X


def _row_keys(rows, seed, binary=True):
    """One 64-bit random-stream key per row: BLAKE2b of the row (its bits when
    ``binary``, else its float64 values), keyed by ``seed``. A row's chains
    then draw the same numbers wherever the row stands and whatever rows it is
    scored with (identical rows share them)."""
    secret = int(seed).to_bytes(8, "little")
    if binary:
        packed = np.packbits(rows != 0, axis=1)
    else:
        packed = np.ascontiguousarray(rows, dtype=np.float64)
    return np.array(
        [
            int.from_bytes(
                hashlib.blake2b(
                    row.tobytes(), digest_size=8, key=secret, person=_ROW_KEY_PERSON
                ).digest(),
                "little",
            )
            for row in packed
        ],
        dtype=np.uint64,
    )


def _reverse_log_mean_weights(
    X, run, *, dtype, n_chains, seed, work_per_row, binary=True
):
    """``log mean(w)`` over each row's ``n_chains`` reverse chains.

    ``run(block, keys)`` is the RAISE kernel on a dense block of rows
    (``dtype``, C order) with their row keys (:func:`_row_keys` of ``seed``);
    blocks hold about ``_RAISE_ROWS`` chains, each block with the BLAS
    threads that ``work_per_row`` multiply-adds per chain deserve.
    """
    rows_per_call = max(1, _RAISE_ROWS // n_chains)
    log_mean_w = np.empty(X.shape[0])
    for start in range(0, X.shape[0], rows_per_call):
        block = X[start : start + rows_per_call]
        block = block.toarray() if sp.issparse(block) else block
        block = np.array(block, dtype=dtype, order="C")
        with blas_threads_for(block.shape[0] * n_chains * work_per_row):
            log_w = run(block, _row_keys(block, seed, binary))
        _check_log_weights(log_w, "RAISE")
        stop = start + block.shape[0]
        log_mean_w[start:stop] = logsumexp(log_w, axis=1) - np.log(n_chains)
    return log_mean_w


_RAISE_CONSTRAINTS = {
    "X": ["array-like", "sparse matrix"],
    "components": ["array-like"],
    "intercept_visible": ["array-like"],
    "intercept_hidden": ["array-like"],
    "base_rate": ["array-like", None],
    "betas": [*SCHEDULE_CONSTRAINT, None],
    "random_state": ["random_state"],
}


@validate_params(
    {
        **_RAISE_CONSTRAINTS,
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def log_likelihood_raise(
    X,
    components,
    intercept_visible,
    intercept_hidden,
    *,
    base_rate=None,
    n_chains=100,
    betas=None,
    random_state=None,
):
    """Estimate each row's log-likelihood by reverse annealing (RAISE).

    The Reverse AIS Estimator of Burda, Grosse & Salakhutdinov (2015),
    Algorithm 1, on the path of :func:`log_partition_ais`. From each row
    ``v``, ``n_chains`` chains anneal backwards from the RBM (``beta = 1``,
    starting with ``h ~ p(h | v)``) to the base model (``beta = 0``) by the
    Gibbs transitions of forward AIS, and a chain's log-weight is
    ``log w = -F(v) - log Z_0 + sum_{k<K} [log p*_k(v_k) - log p*_{k+1}(v_k)]``
    over the states ``v_k`` it visits. The estimate is
    ``log mean(w)`` over the chains.

    ``mean(w)`` is an unbiased estimate of ``p_ann(v)``, the probability of
    ``v`` under the *annealed model* that runs forward AIS from the base model
    and ends with one Gibbs step of the RBM; ``p_ann`` tends to the RBM as
    temperatures are added. By Jensen's inequality each estimate is below
    ``log p_ann(v)`` in expectation, and it exceeds it by more than ``t``
    nats with probability at most ``exp(-t)`` (Markov's inequality).

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Binary rows to score.
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    base_rate : array-like of shape (n_visible,), default=None
        Visible biases of the base model, as in :func:`log_partition_ais`.
    n_chains : int, default=100
        Reverse chains per row.
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperature schedule, see :func:`ais_betas`; ``None`` means 1,000
        evenly spaced temperatures.
    random_state : int, RandomState instance or None, default=None
        Seed of the chains. Each row's chains draw from a stream keyed by a
        hash of the row and this seed, so a row's estimate does not depend on
        its position in ``X`` or on the other rows (up to the rounding of the
        batched matrix products).

    Returns
    -------
    log_likelihood : ndarray of shape (n_samples,)
        The RAISE estimate of ``log p(v)`` of each row, in nats (float64).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import free_energy, log_likelihood_raise
    >>> from sklearn_rbm.likelihood import log_partition_exact
    >>> rng = np.random.RandomState(0)
    >>> W = 0.3 * rng.randn(4, 10); b = rng.randn(10); c = rng.randn(4)
    >>> X = (rng.rand(50, 10) < 0.5).astype(float)
    >>> exact = -free_energy(X, W, b, c) - log_partition_exact(W, b, c)
    >>> estimate = log_likelihood_raise(X, W, b, c, betas=200, random_state=0)
    >>> bool(abs(estimate.mean() - exact.mean()) < 0.01)
    True
    """
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    n_hidden, n_visible = W.shape
    base = _check_base_rate(base_rate, W)
    X = _check_binary_rows(X, n_visible)
    # Writeable copies of read-only parameters (joblib's memmaps): one
    # compiled kernel per dtype instead of a second one for read-only arrays.
    W, b, c, base = (np.require(a, requirements=["C", "W"]) for a in (W, b, c, base))
    schedule = ais_betas(1000 if betas is None else betas)
    check_chains_memory(n_chains, sum(W.shape), "n_chains")
    log_mean_w = _reverse_log_mean_weights(
        X,
        lambda block, keys: raise_log_weights(
            block, W, b, c, base, schedule, n_chains, keys
        ),
        dtype=W.dtype, n_chains=n_chains, seed=child_seed(random_state),
        work_per_row=n_hidden * n_visible,
    )  # fmt: skip
    # log w = log p*_1(v) - log Z_0 + (the kernel's sum over the reverse chain).
    return log_mean_w - _free_energy(X, W, b, c) - _base_log_partition(base, W)


@validate_params(
    {
        **_RAISE_CONSTRAINTS,
        "n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def log_likelihood_bounds(
    X,
    components,
    intercept_visible,
    intercept_hidden,
    *,
    base_rate=None,
    n_chains=100,
    betas=None,
    random_state=None,
):
    """Bracket the mean log-likelihood of ``X`` between RAISE and forward AIS.

    ``upper`` is the mean of ``-F(v) - log Z_AIS`` with ``log Z_AIS`` from
    :func:`log_partition_ais`; ``lower`` is the mean of
    :func:`log_likelihood_raise` (Burda, Grosse & Salakhutdinov, 2015). Both
    use the same base model, temperatures and number of chains.

    Which sense of "bound": AIS estimates ``Z`` without bias, so by Jensen's
    inequality ``E[log Z_AIS] <= log Z`` and ``E[upper]`` is at least the
    true mean log-likelihood. RAISE estimates ``p_ann(v)`` without bias, so
    ``E[lower]`` is at most the mean ``log p_ann(v)`` of the annealed model.
    That lies below the RBM's own mean log-likelihood for rows typical of the
    RBM (for rows drawn from the RBM the gap is the Kullback-Leibler
    divergence from the RBM to the annealed model), but not for every data
    set: rows the RBM fits poorly can score higher under the annealed model,
    and then ``lower`` exceeds the truth until there are enough temperatures.
    Both gaps shrink as temperatures are added, so a bracket that stays
    narrow when the temperatures are multiplied means both estimates are
    accurate; a single run may still stray outside by its Monte Carlo error.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Binary rows to score.
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    base_rate : array-like of shape (n_visible,), default=None
        Visible biases of the base model, as in :func:`log_partition_ais`.
    n_chains : int, default=100
        Forward AIS chains, and reverse chains per row.
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperature schedule of both directions, see :func:`ais_betas`;
        ``None`` means 1,000 evenly spaced temperatures.
    random_state : int, RandomState instance or None, default=None
        Seed of both directions: ``log_partition_ais(...,
        random_state=random_state)`` for the upper end and
        ``log_likelihood_raise(..., random_state=random_state)`` for the
        lower one.

    Returns
    -------
    bounds : LikelihoodBounds
        ``(lower, upper)``, mean log-likelihoods per sample in nats.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import free_energy, log_likelihood_bounds
    >>> from sklearn_rbm.likelihood import log_partition_exact
    >>> rng = np.random.RandomState(0)
    >>> W = rng.randn(6, 12); b = rng.randn(12); c = rng.randn(6)
    >>> X = (rng.rand(40, 12) < 0.5).astype(float)
    >>> lower, upper = log_likelihood_bounds(X, W, b, c, betas=1000, random_state=0)
    >>> exact = np.mean(-free_energy(X, W, b, c)) - log_partition_exact(W, b, c)
    >>> np.round([lower, exact, upper], 2)
    array([-13.37, -13.37, -13.37])
    """
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    X = _check_binary_rows(X, W.shape[1])
    settings = dict(
        base_rate=base_rate, n_chains=n_chains, betas=betas, random_state=random_state
    )
    log_z = log_partition_ais(W, b, c, **settings).log_z
    upper = np.mean(-_free_energy(X, W, b, c) - log_z)
    lower = np.mean(log_likelihood_raise(X, W, b, c, **settings))
    return LikelihoodBounds(float(lower), float(upper))


# ---------------------------------------------------------------------------
# Gaussian-Bernoulli RBMs: the same reverse chains on the path of
# gaussian_log_partition_ais, from the data down to independent Gaussians.

_GAUSSIAN_RAISE_CONSTRAINTS = {
    **{name: rule for name, rule in _RAISE_CONSTRAINTS.items() if name != "base_rate"},
    "sigma": [Interval(numbers.Real, 0, None, closed="neither"), "array-like"],
    "base_mean": ["array-like", None],
    "base_sigma": ["array-like", None],
}


@validate_params(
    {
        **_GAUSSIAN_RAISE_CONSTRAINTS,
        "n_chains": [Interval(numbers.Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def gaussian_log_likelihood_raise(
    X,
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
    """Estimate each row's log-density under a Gaussian-Bernoulli RBM by RAISE.

    :func:`log_likelihood_raise` for real-valued rows: the reverse chains of
    Burda, Grosse & Salakhutdinov (2015), Algorithm 1, run from each row down
    the path of :func:`gaussian_log_partition_ais` to its base model of
    independent Gaussians, with the same meaning (an estimate that errs low
    in expectation for rows typical of the RBM) and the same per-row random
    streams.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Real-valued rows to score.
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    sigma : float or array-like of shape (n_visible,)
        Standard deviations of the visible units, positive.
    base_mean, base_sigma : array-like of shape (n_visible,), default=None
        The base model, as in :func:`gaussian_log_partition_ais`.
    n_chains : int, default=100
        Reverse chains per row.
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperature schedule, see :func:`ais_betas`; ``None`` means 1,000
        evenly spaced temperatures.
    random_state : int, RandomState instance or None, default=None
        Seed of the chains (each row's stream is keyed by a hash of the row).

    Returns
    -------
    log_density : ndarray of shape (n_samples,)
        The RAISE estimate of ``log p(v)`` of each row, in nats (float64).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import (gaussian_free_energy,
    ...     gaussian_log_likelihood_raise, gaussian_log_partition_exact)
    >>> rng = np.random.RandomState(0)
    >>> W = 0.3 * rng.randn(4, 6); b = rng.randn(6); c = rng.randn(4)
    >>> X = rng.randn(50, 6)
    >>> exact = (-gaussian_free_energy(X, W, b, c, 1.0)
    ...          - gaussian_log_partition_exact(W, b, c, 1.0))
    >>> estimate = gaussian_log_likelihood_raise(X, W, b, c, 1.0, betas=200,
    ...                                          random_state=0)
    >>> bool(abs(estimate.mean() - exact.mean()) < 0.01)
    True
    """
    W, b, c, sigma = _check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    n_hidden, n_visible = W.shape
    X = _check_gaussian_rows(X, sigma, W.shape)
    base_mean, base_sigma = _check_gaussian_base(base_mean, base_sigma, b, sigma)
    # Writeable copies of read-only parameters, as in log_likelihood_raise.
    W, b, c, sigma, base_mean, base_sigma = (
        np.require(a, requirements=["C", "W"])
        for a in (W, b, c, sigma, base_mean, base_sigma)
    )
    schedule = ais_betas(1000 if betas is None else betas)
    check_chains_memory(n_chains, sum(W.shape), "n_chains")
    log_mean_w = _reverse_log_mean_weights(
        X,
        lambda block, keys: _gaussian_raise_log_weights(
            block, W, b, c, sigma, base_mean, base_sigma, schedule, n_chains, keys
        ),
        dtype=W.dtype, n_chains=n_chains, seed=child_seed(random_state),
        work_per_row=n_hidden * n_visible, binary=False,
    )  # fmt: skip
    # log w = -F(v) - log Z_A + (the kernel's sum over the reverse chain).
    return (
        log_mean_w
        - gaussian_free_energy(X, W, b, c, sigma)
        - _gaussian_base_log_partition(base_sigma, n_hidden)
    )


@validate_params(
    {
        **_GAUSSIAN_RAISE_CONSTRAINTS,
        "n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def gaussian_log_likelihood_bounds(
    X,
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
    """Bracket the mean log-density of ``X`` between RAISE and forward AIS.

    :func:`log_likelihood_bounds` for a Gaussian-Bernoulli RBM: ``upper`` is
    the mean of ``-F(v) - log Z_AIS`` with ``log Z_AIS`` from
    :func:`gaussian_log_partition_ais`, ``lower`` the mean of
    :func:`gaussian_log_likelihood_raise`, both with the same base model,
    temperatures, chains and ``random_state``, and bounds in the same
    (expected, stochastic) sense.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Real-valued rows to score.
    components, intercept_visible, intercept_hidden, sigma
        The RBM, as in :func:`gaussian_log_partition_ais`.
    base_mean, base_sigma : array-like of shape (n_visible,), default=None
        The base model, as in :func:`gaussian_log_partition_ais`.
    n_chains : int, default=100
        Forward AIS chains, and reverse chains per row.
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperature schedule of both directions, see :func:`ais_betas`.
    random_state : int, RandomState instance or None, default=None
        Seed of both directions.

    Returns
    -------
    bounds : LikelihoodBounds
        ``(lower, upper)``, mean log-densities per sample in nats.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import gaussian_log_likelihood_bounds
    >>> rng = np.random.RandomState(0)
    >>> W = rng.randn(3, 5); b = rng.randn(5); c = rng.randn(3)
    >>> X = rng.randn(40, 5)
    >>> lower, upper = gaussian_log_likelihood_bounds(X, W, b, c, 1.0,
    ...                                               random_state=0)
    >>> bool(lower <= upper)
    True
    """
    W, b, c, sigma = _check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    X = _check_gaussian_rows(X, sigma, W.shape)
    settings = dict(
        base_mean=base_mean, base_sigma=base_sigma, n_chains=n_chains, betas=betas,
        random_state=random_state,
    )  # fmt: skip
    log_z = gaussian_log_partition_ais(W, b, c, sigma, **settings).log_z
    upper = np.mean(-gaussian_free_energy(X, W, b, c, sigma) - log_z)
    lower = np.mean(gaussian_log_likelihood_raise(X, W, b, c, sigma, **settings))
    return LikelihoodBounds(float(lower), float(upper))
