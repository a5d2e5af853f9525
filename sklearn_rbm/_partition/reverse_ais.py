"""Reverse annealing (RAISE, Burda, Grosse & Salakhutdinov 2015): a
per-row log-likelihood estimate that errs low, and the bracket it makes with
forward AIS. One worker of each (:func:`raise_estimates`,
:func:`likelihood_bounds`) runs on the annealing path of any visible layer
(binary, Gaussian, categorical: ``annealing_path`` in ``_rbm/layers/``); the
binary and Gaussian-Bernoulli functions public through
:mod:`sklearn_rbm.likelihood` are validated faces over them."""

import hashlib
import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import logsumexp

from .._core.sklearn_compat import validate_params
from .._core.utils import blas_threads_for, check_chains_memory, child_seed, warn
from .._rbm.layers.bernoulli import annealing_path as _bernoulli_path
from .._rbm.layers.bernoulli import check_base_rate as _check_base_rate
from .._rbm.layers.gaussian import annealing_path as _gaussian_path
from .._rbm.layers.gaussian import check_gaussian_base as _check_gaussian_base
from .._rbm.layers.gaussian import check_gaussian_rbm as _check_gaussian_rbm
from .._rbm.layers.gaussian import check_gaussian_rows as _check_gaussian_rows
from .annealing import (
    MAX_AIS_TEMPERATURES,
    ais_betas,
    row_blocks,
    run_ais,
    run_in_blocks,
)
from .annealing import check_log_weights as _check_log_weights
from .exact import _check_rbm, check_rows
from .kernels import raise_log_weights
from .parameters import (
    ANNEALING_CONSTRAINTS,
    BOUNDS_CHAINS,
    GAUSSIAN_BASE_CONSTRAINTS,
    RBM_CONSTRAINTS,
    SIGMA_CONSTRAINTS,
    chains,
    shared_docstring,
)


class LikelihoodBounds(NamedTuple):
    """The mean log-likelihood per sample bracketed from both sides, in nats.

    Both ends are stochastic, each widened by three standard errors of its
    Monte Carlo noise, so each is a bound with high probability (see
    :func:`log_likelihood_bounds` for which sense); ``lower <= upper``.

    A named tuple; its fields are read back as attributes of the same names.

    Parameters
    ----------
    lower : float
        Mean over the rows of the RAISE estimates (Burda, Grosse &
        Salakhutdinov 2015) from a base model fitted to the RBM, less three
        standard errors (errs low).
    upper : float
        Mean over the rows of ``-F(v)`` less the lower end of the AIS band of
        ``log Z`` (Salakhutdinov & Murray 2008; errs high).
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


def _raise_rows(X, path, schedule, n_chains, seed):
    """RAISE estimates of checked rows on the annealing ``path`` (an
    :class:`~sklearn_rbm._partition.annealing.AnnealingPath`) and their
    Monte Carlo variances (the delta method: ``var(w) / (M mean(w)^2)``).

    Blocks of rows hold about ``_RAISE_ROWS`` chains; a block's rows are
    keyed by :func:`_row_keys` of ``seed``, and its rows are shared between
    numba's threads as AIS shares its chains (``annealing.row_blocks``; a
    row's draws come from its own key, so the sharing changes none).
    """
    n_hidden, n_visible = path.W.shape
    rows_per_call = max(1, _RAISE_ROWS // n_chains)
    log_mean_w = np.empty(X.shape[0])
    variance = np.empty(X.shape[0])
    for start in range(0, X.shape[0], rows_per_call):
        block = X[start : start + rows_per_call]
        block = block.toarray() if sp.issparse(block) else block
        if path.statistics is not None:
            block = path.statistics(block)
        block = np.array(block, dtype=path.W.dtype, order="C")
        keys = _row_keys(block, seed, path.binary)

        def anneal(rows, block=block, keys=keys):
            return raise_log_weights(
                path.units, path.hidden, path.base, path.W, block[rows[0] : rows[1]],
                schedule, n_chains, keys[rows[0] : rows[1]],
            )  # fmt: skip

        shares = row_blocks(block.shape[0], path.W.size, n_chains)
        with blas_threads_for(block.shape[0] * n_chains * n_hidden * n_visible):
            log_w = np.concatenate(run_in_blocks(shares, anneal))
        _check_log_weights(log_w, "RAISE")
        stop = start + block.shape[0]
        log_mean_w[start:stop] = logsumexp(log_w, axis=1) - np.log(n_chains)
        # Weights relative to each row's largest: no overflow.
        w = np.exp(log_w - log_w.max(axis=1, keepdims=True))
        variance[start:stop] = w.var(axis=1) / (n_chains * w.mean(axis=1) ** 2)
    # log w = -F(v) - log Z_0 + (the kernel's sum over the reverse chain).
    return log_mean_w - path.free_energy(X) - path.log_z_base, variance


def raise_estimates(X, path, n_chains, betas, random_state):
    """The RAISE estimate of each checked row on ``path``, as
    :func:`log_likelihood_raise` returns them, for any visible layer."""
    schedule = ais_betas(_DEFAULT_TEMPERATURES if betas is None else betas)
    check_chains_memory(n_chains, sum(path.W.shape), "n_chains")
    return _raise_rows(X, path, schedule, n_chains, child_seed(random_state))[0]


def likelihood_bounds(X, path, n_chains, n_reverse_chains, betas, random_state):
    """:func:`log_likelihood_bounds` of checked rows on the annealing
    ``path``, for any visible layer: forward AIS from the path's base model,
    RAISE from that base model refitted to the forward chains (the layer's
    ``fit_base``)."""
    check_chains_memory(n_chains, sum(path.W.shape), "n_chains")
    check_chains_memory(n_reverse_chains, sum(path.W.shape), "n_reverse_chains")

    def forward(schedule):
        return run_ais(path, schedule, n_chains, random_state, return_states=True)

    def reverse(schedule, states, weights, seed):
        base, log_z_base = path.fit_base(states, weights)
        fitted = path._replace(base=base, log_z_base=log_z_base)
        return _raise_rows(X, fitted, schedule, n_reverse_chains, seed)

    return _bracket(-path.free_energy(X), forward, reverse, betas, random_state)


_RAISE_CONSTRAINTS = {
    "X": ["array-like", "sparse matrix"],
    **RBM_CONSTRAINTS,
    "base_rate": ["array-like", None],
    **ANNEALING_CONSTRAINTS,
}


@validate_params(
    {**_RAISE_CONSTRAINTS, "n_chains": chains(1)}, prefer_skip_nested_validation=True
)
@shared_docstring
def log_likelihood_raise(X, components, intercept_visible, intercept_hidden, *,
                         base_rate=None, n_chains=100, betas=None,
                         random_state=None):  # fmt: skip
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
    %(binary_rows)s
    %(rbm)s
    base_rate : array-like of shape (n_visible,), default=None
        Visible biases of the base model, as in :func:`log_partition_ais`.
    n_chains : int, default=100
        Reverse chains per row.
    %(schedule)s
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
    path = _binary_path(components, intercept_visible, intercept_hidden, base_rate)
    X = _check_binary_rows(X, path.W.shape[1])
    return raise_estimates(X, path, n_chains, betas, random_state)


def _binary_path(components, intercept_visible, intercept_hidden, base_rate):
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    return _bernoulli_path(W, b, c, _check_base_rate(base_rate, W))


@validate_params(
    {**_RAISE_CONSTRAINTS, **BOUNDS_CHAINS}, prefer_skip_nested_validation=True
)
@shared_docstring
def log_likelihood_bounds(X, components, intercept_visible, intercept_hidden, *,
                          base_rate=None, n_chains=100, n_reverse_chains=10,
                          betas=None, random_state=None):  # fmt: skip
    """Bracket the mean log-likelihood of ``X`` between RAISE and forward AIS.

    ``upper`` comes from annealed importance sampling (AIS, Salakhutdinov &
    Murray 2008) of ``log Z`` and ``lower`` from the Reverse AIS Estimator
    (RAISE, Burda, Grosse & Salakhutdinov 2015) of each row's ``log p(v)``;
    both are stochastic, and each end is widened by three Monte Carlo
    standard errors, so that ``lower <= log p <= upper`` holds with high
    probability, not only on average. :ref:`likelihood_user_guide`
    reports the coverage measured against exact values.

    **Upper end.** AIS estimates ``Z`` without bias, so ``log Z_AIS`` errs
    low in expectation (Jensen's inequality) and ``mean(-F(v)) - log Z_AIS``
    errs high. ``upper`` uses the lower end of the AIS band
    (:func:`log_partition_ais`: ``log`` of the mean weight minus three
    standard errors), which guards against a run whose heavy weights
    happened to overshoot.

    **Lower end.** RAISE estimates without bias ``p_ann(v)``, the probability
    of ``v`` under the *annealed model* (forward AIS from the base model),
    so its log errs low in expectation below ``log p_ann(v)``. That is a
    lower bound on ``log p(v)`` only if ``p_ann`` does not favour the data
    more than the RBM does. With the data's base rate as the base model it
    does (the annealed model leans towards the data: measured +5 nats on
    MNIST test digits with a 784 x 20 RBM at 1,000 temperatures). RAISE here
    therefore starts from a base fitted to the *RBM*: the base model of the
    RBM's visible layer fitted to the RBM's mean (and, for Gaussian units,
    deviation), estimated by the forward AIS chains' last states weighted
    by their importance weights (unweighted, they over-represent the modes
    the annealing reaches easily, and the annealed model leans towards
    the data again). Its annealed model approximates the RBM without
    leaning towards ``X``. Its temperatures are ``1 - (1 - u)^3``
    for ``u`` evenly spaced (as many as the forward run), dense near
    ``beta = 1`` where the reverse chains leave the data and where the gap
    between ``p_ann`` and ``p`` closes. ``lower`` is the mean estimate minus
    three standard errors of the chains' Monte Carlo noise.

    **Adaptation.** With ``betas`` ``None`` or an int, the temperature count
    starts there; the forward run's count is doubled (at most four times)
    while its weights are too uneven for a band (cheap: ``n_chains``
    chains), and both directions' counts are doubled (at most four times)
    while the two ends cross; both say the annealing is too short. If the
    ends still cross, or ``betas`` is an explicit schedule, a warning says
    what to increase and the pair returned is the span of the two
    estimates: ``lower <= upper`` always.

    Parameters
    ----------
    %(binary_rows)s
    %(rbm)s
    base_rate : array-like of shape (n_visible,), default=None
        Visible biases of the base model of forward AIS, as in
        :func:`log_partition_ais` (usually :func:`base_rate_bias` of the
        training data).
    n_chains : int, default=100
        Forward AIS chains.
    n_reverse_chains : int, default=10
        Reverse chains per row (the cost of RAISE is proportional to
        ``n_samples * n_reverse_chains``).
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperatures. ``None`` or an int ``K`` (``None`` means 1,000): ``K``
        evenly spaced temperatures for forward AIS and ``K`` for RAISE as
        above, adapted as described. A name or an array: that
        schedule for both directions, not adapted.
    random_state : int, RandomState instance or None, default=None
        Seed of both directions: forward AIS is
        ``log_partition_ais(..., random_state=random_state)``; each row's
        reverse chains draw from a stream keyed by a hash of the row and a
        seed drawn from ``random_state``.

    Returns
    -------
    bounds : LikelihoodBounds
        ``(lower, upper)``, mean log-likelihoods per sample in nats, with
        ``lower <= upper``.

    Warns
    -----
    UserWarning
        When the ends still cross after adaptation (increase ``betas``), or
        when the forward AIS weights are too uneven for a finite upper end
        (increase ``n_chains`` or ``betas``).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import (
    ...     free_energy, log_likelihood_bounds, log_partition_exact)
    >>> rng = np.random.RandomState(0)
    >>> W = rng.randn(6, 12); b = rng.randn(12); c = rng.randn(6)
    >>> X = (rng.rand(40, 12) < 0.5).astype(float)
    >>> lower, upper = log_likelihood_bounds(X, W, b, c, random_state=0)
    >>> exact = np.mean(-free_energy(X, W, b, c)) - log_partition_exact(W, b, c)
    >>> bool(lower <= exact <= upper)
    True
    """
    path = _binary_path(components, intercept_visible, intercept_hidden, base_rate)
    X = _check_binary_rows(X, path.W.shape[1])
    return likelihood_bounds(X, path, n_chains, n_reverse_chains, betas, random_state)


#: Temperatures when ``betas`` is None, and how many times an int count is
#: doubled while the bracket's ends cross.
_DEFAULT_TEMPERATURES = 1000
_MAX_DOUBLINGS = 4


def _reverse_schedule(betas, count):
    """RAISE's temperatures: ``1 - (1 - u)^3`` for ``count`` evenly spaced
    ``u`` when the schedule is a count (dense near ``beta = 1``, where the
    annealed model's last transitions must settle in the RBM's modes; on
    MNIST 784 x 20, 1,000 such temperatures close 80% of the gap that 1,000
    even ones leave), else the given schedule."""
    if betas is None or isinstance(betas, numbers.Integral):
        u = np.linspace(0.0, 1.0, count)
        return 1.0 - (1.0 - u) ** 3
    return ais_betas(betas)


def _bracket(neg_free_energy, forward, reverse, betas, random_state):
    """``LikelihoodBounds`` from the forward run ``forward(schedule) ->
    (LogPartition, states, log_weights)`` and the reverse one
    ``reverse(schedule, states, weights, seed) -> (estimates, variances)``,
    adapting a count of temperatures (see :func:`log_likelihood_bounds`)."""
    adaptive = betas is None or isinstance(betas, numbers.Integral)
    count = _DEFAULT_TEMPERATURES if betas is None else betas
    forward_count, forward_doublings, doublings = count, 0, 0
    mean_neg_free_energy = float(np.mean(neg_free_energy))
    while True:
        estimate, states, log_w = forward(
            ais_betas(forward_count if adaptive else betas)
        )
        if (
            adaptive
            and not np.isfinite(estimate.lower)
            and forward_doublings < _MAX_DOUBLINGS
            and 2 * forward_count <= MAX_AIS_TEMPERATURES
        ):
            # The forward weights are too uneven for a band: more forward
            # temperatures (cheap: n_chains chains), the reverse chains (far
            # costlier) keeping theirs.
            forward_count *= 2
            forward_doublings += 1
            continue
        # Self-normalised importance weights: the weighted last states
        # estimate expectations under the RBM. Unweighted, they over-represent
        # the modes the annealing reaches easily, and a base fitted to them
        # leans RAISE's annealed model back towards the data (measured: +0.2
        # to +1 nats above the exact value on MNIST 784 x 20; weighted, 1.7
        # below).
        weights = np.exp(log_w - log_w.max())
        weights /= weights.sum()
        seed = child_seed(random_state)
        estimates, variances = reverse(
            _reverse_schedule(betas, count), states, weights, seed
        )
        # The AIS band's lower end is log(mean w - 3 standard errors).
        upper = mean_neg_free_energy - estimate.lower
        # Three standard errors of the mean of independent row estimates.
        margin = 3.0 * np.sqrt(np.sum(variances)) / estimates.shape[0]
        lower = float(np.mean(estimates) - margin)
        # Both directions get more temperatures while the ends cross (the
        # annealing is too short).
        crossed = lower > upper
        if not (crossed and adaptive and doublings < _MAX_DOUBLINGS):
            break
        if 2 * max(count, forward_count) > MAX_AIS_TEMPERATURES:
            break
        doublings += 1
        count *= 2
        forward_count = max(forward_count, count)
    if not np.isfinite(upper):
        warn(
            "The forward AIS importance weights are too uneven for a finite "
            "upper bound (their band reaches 0): increase n_chains or the "
            "temperatures (betas)."
        )
    if lower > upper:
        more = f"betas={8 * count}" if adaptive else "more temperatures (betas)"
        warn(
            f"The RAISE lower estimate {lower:.4f} exceeds the AIS upper "
            f"estimate {upper:.4f} at {count if adaptive else len(ais_betas(betas))}"
            " temperatures: the annealing is too short for this model. Returned "
            f"the span of the two; increase the temperatures ({more}) and "
            "n_chains."
        )
        lower, upper = upper, lower
    return LikelihoodBounds(float(lower), float(upper))


# ---------------------------------------------------------------------------
# Gaussian-Bernoulli RBMs: the same reverse chains on the path of
# gaussian_log_partition_ais, from the data down to independent Gaussians.

_GAUSSIAN_RAISE_CONSTRAINTS = {
    "X": ["array-like", "sparse matrix"],
    **RBM_CONSTRAINTS,
    **SIGMA_CONSTRAINTS,
    **GAUSSIAN_BASE_CONSTRAINTS,
    **ANNEALING_CONSTRAINTS,
}


@validate_params(
    {**_GAUSSIAN_RAISE_CONSTRAINTS, "n_chains": chains(1)},
    prefer_skip_nested_validation=True,
)
@shared_docstring
def gaussian_log_likelihood_raise(X, components, intercept_visible, intercept_hidden,
                                  sigma, *, base_mean=None, base_sigma=None,
                                  n_chains=100, betas=None,
                                  random_state=None):  # fmt: skip
    """Estimate each row's log-density under a Gaussian-Bernoulli RBM by RAISE.

    :func:`log_likelihood_raise` for real-valued rows: the reverse chains of
    Burda, Grosse & Salakhutdinov (2015), Algorithm 1, run from each row down
    the path of :func:`gaussian_log_partition_ais` to its base model of
    independent Gaussians, with the same meaning (an estimate that errs low
    in expectation for rows typical of the RBM) and the same per-row random
    streams.

    Parameters
    ----------
    %(real_rows)s
    %(rbm)s
    %(sigma)s
    base_mean, base_sigma : array-like of shape (n_visible,), default=None
        The base model, as in :func:`gaussian_log_partition_ais`.
    n_chains : int, default=100
        Reverse chains per row.
    %(schedule)s
    random_state : int, RandomState instance or None, default=None
        Seed of the chains (each row's stream is keyed by a hash of the row).

    Returns
    -------
    log_density : ndarray of shape (n_samples,)
        Each row's RAISE estimate of its log-density ``log p(v)``, in nats
        (float64).

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
    X, path = _gaussian_rows_and_path(
        X, components, intercept_visible, intercept_hidden, sigma, base_mean,
        base_sigma,
    )  # fmt: skip
    return raise_estimates(X, path, n_chains, betas, random_state)


def _gaussian_rows_and_path(X, components, intercept_visible, intercept_hidden, sigma,
                            base_mean, base_sigma):  # fmt: skip
    W, b, c, sigma = _check_gaussian_rbm(
        components, intercept_visible, intercept_hidden, sigma
    )
    X = _check_gaussian_rows(X, sigma, W.shape)
    base_mean, base_sigma = _check_gaussian_base(base_mean, base_sigma, b, sigma)
    return X, _gaussian_path(W, b, c, sigma, base_mean, base_sigma)


@validate_params(
    {**_GAUSSIAN_RAISE_CONSTRAINTS, **BOUNDS_CHAINS}, prefer_skip_nested_validation=True
)
@shared_docstring
def gaussian_log_likelihood_bounds(X, components, intercept_visible, intercept_hidden,
                                   sigma, *, base_mean=None, base_sigma=None,
                                   n_chains=100, n_reverse_chains=10, betas=None,
                                   random_state=None):  # fmt: skip
    """Bracket the mean log-density of ``X`` between RAISE and forward AIS.

    :func:`log_likelihood_bounds` for a Gaussian-Bernoulli RBM, in the same
    sense (each end a bound with high probability, widened by three Monte
    Carlo standard errors, ``lower <= upper`` always): ``upper`` is
    ``mean(-F(v))`` minus the lower end of the band of
    :func:`gaussian_log_partition_ais` (AIS, Salakhutdinov & Murray 2008);
    ``lower`` the mean of the RAISE estimates (Burda, Grosse &
    Salakhutdinov 2015) from a base model of independent Gaussians fitted to
    the RBM (the mean and standard deviation of the forward chains' last
    states, the deviation at least ``sigma``), not to the data, so that the
    annealed model does not lean towards ``X``; a count of temperatures is
    doubled while the ends cross.

    Parameters
    ----------
    %(real_rows)s
    %(rbm)s
    sigma : float or array-like of shape (n_visible,)
        Standard deviations of the visible units.
    base_mean, base_sigma : array-like of shape (n_visible,), default=None
        The base model of forward AIS, as in
        :func:`gaussian_log_partition_ais`.
    n_chains : int, default=100
        Forward AIS chains.
    n_reverse_chains : int, default=10
        Reverse chains per row.
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperatures, as in :func:`log_likelihood_bounds`.
    random_state : int, RandomState instance or None, default=None
        Seed of both directions.

    Returns
    -------
    bounds : LikelihoodBounds
        ``(lower, upper)`` with ``lower <= upper``: mean log-densities per
        sample, in nats.

    Warns
    -----
    UserWarning
        As :func:`log_likelihood_bounds`.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import (gaussian_free_energy,
    ...     gaussian_log_likelihood_bounds, gaussian_log_partition_exact)
    >>> rng = np.random.RandomState(0)
    >>> W = rng.randn(3, 5); b = rng.randn(5); c = rng.randn(3)
    >>> X = rng.randn(40, 5)
    >>> lower, upper = gaussian_log_likelihood_bounds(X, W, b, c, 1.0,
    ...                                               random_state=0)
    >>> exact = (np.mean(-gaussian_free_energy(X, W, b, c, 1.0))
    ...          - gaussian_log_partition_exact(W, b, c, 1.0))
    >>> bool(lower <= exact <= upper)
    True
    """
    X, path = _gaussian_rows_and_path(
        X, components, intercept_visible, intercept_hidden, sigma, base_mean,
        base_sigma,
    )  # fmt: skip
    return likelihood_bounds(X, path, n_chains, n_reverse_chains, betas, random_state)
