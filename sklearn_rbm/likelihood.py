"""True log-likelihood of binary RBMs: exact log partition functions by
enumeration and annealed importance sampling (AIS) estimates.

The log-likelihood of a visible vector is ``log p(v) = -F(v) - log Z`` with
the free energy ``F`` in closed form; all the difficulty is ``log Z``.

* :func:`log_partition_exact` sums out the larger layer analytically and
  enumerates the ``2 ** k`` states of the smaller one in Gray-code order
  (``k`` up to ``MAX_ENUMERABLE_UNITS``; ``score_method='auto'`` stops at
  ``MAX_EXACT_UNITS``).
* :func:`log_partition_ais` estimates ``log Z`` by AIS from the base-rate model
  (Salakhutdinov & Murray, 2008) and reports a band of plus or minus three
  standard errors of the importance weights.
* :func:`log_likelihood_raise` estimates each example's log-likelihood by
  reverse annealing (RAISE, Burda, Grosse & Salakhutdinov, 2015), which errs
  low where AIS errs high; :func:`log_likelihood_bounds` brackets the mean
  log-likelihood between the two.

Parameters use scikit-learn's orientation: ``components`` of shape
``(n_hidden, n_visible)``.
"""

import hashlib
import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from scipy.special import logit, logsumexp
from sklearn.utils import check_array
from sklearn.utils.extmath import safe_sparse_dot

from ._kernels.partition import (
    ais_log_weights,
    log_partition_enumerate,
    raise_log_weights,
)
from ._sklearn_compat import Interval, StrOptions, validate_params
from ._utils import (
    as_real_array,
    blas_threads_for,
    check_unit_interval,
    child_seed,
    kernel_array,
    kernel_rng,
)

__all__ = [
    "MAX_ENUMERABLE_UNITS",
    "MAX_EXACT_UNITS",
    "LogPartition",
    "LikelihoodBounds",
    "free_energy",
    "log_partition_exact",
    "log_partition_ais",
    "log_likelihood_raise",
    "log_likelihood_bounds",
    "ais_betas",
    "base_rate_bias",
]

#: ``score_method='auto'`` enumerates exactly while the enumerated layer (the
#: smaller layer of an RBM, the hidden layer of a Gaussian RBM, the units of an
#: FVBM) has at most this many units: 2 ** 20 states of a 784-pixel model take
#: about a second on one core. Enumerations repeated for every row (a
#: conditional RBM's exact ``log Z(x)`` and exact inference) stop here too.
MAX_EXACT_UNITS = 20

#: ``score_method='exact'`` enumerates one model up to this many units
#: (2 ** 30 states: minutes) and refuses beyond; use AIS there.
MAX_ENUMERABLE_UNITS = 30

#: Constraints of the likelihood hyperparameters every estimator shares
#: (``score_method``, ``ais_n_chains``, ``ais_betas``), for
#: ``_parameter_constraints``.
SCORE_PARAMETER_CONSTRAINTS = {
    "score_method": [StrOptions({"auto", "exact", "ais"})],
    "ais_n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
    "ais_betas": [
        Interval(numbers.Integral, 2, None, closed="left"),
        StrOptions({"linear", "three-segment"}),
        "array-like",
    ],
}


class LogPartition(NamedTuple):
    """A log partition function with its uncertainty band.

    For an exact value the band is the value itself. For AIS, ``lower`` and
    ``upper`` are ``log(mean(w) -+ 3 std(w) / sqrt(M))`` over the ``M``
    importance weights ``w``; ``lower`` is ``-inf`` when the band reaches zero
    (too few chains or temperatures for the weights' spread).

    Attributes
    ----------
    log_z : float
        The value (exact) or the estimate (AIS) of ``log Z``.
    lower : float
        Lower end of the band; ``-inf`` when the AIS band reaches zero.
    upper : float
        Upper end of the band.
    method : {'exact', 'ais'}
        How ``log_z`` was obtained.
    """

    log_z: float
    lower: float
    upper: float
    method: str


def check_enumerable(n_units, what, *, limit=MAX_ENUMERABLE_UNITS, instead):
    """Refuse to enumerate ``2 ** n_units`` states beyond ``limit``.

    ``what`` names the request ("score_method='exact'") and ``instead`` the
    remedy ("score_method='ais'"); both go into the error message.
    """
    if n_units > limit:
        raise ValueError(
            f"{what} enumerates 2 ** {n_units} states; exact enumeration is "
            f"limited to {limit} units (2 ** {limit} states). Use {instead}."
        )


def _check_rbm(components, intercept_visible, intercept_hidden):
    W = as_real_array(components, "components")
    W = kernel_array(W, W.dtype if W.dtype in (np.float32, np.float64) else np.float64)
    b = kernel_array(as_real_array(intercept_visible, "intercept_visible"), W.dtype)
    c = kernel_array(as_real_array(intercept_hidden, "intercept_hidden"), W.dtype)
    if W.ndim != 2 or b.shape != (W.shape[1],) or c.shape != (W.shape[0],):
        raise ValueError(
            "components must have shape (n_hidden, n_visible) with "
            "intercept_visible of shape (n_visible,) and intercept_hidden of "
            f"shape (n_hidden,); got {W.shape}, {b.shape} and {c.shape}."
        )
    if not (
        np.all(np.isfinite(W)) and np.all(np.isfinite(b)) and np.all(np.isfinite(c))
    ):
        raise ValueError("The RBM parameters contain NaN or infinite values.")
    return W, b, c


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "components": ["array-like"],
        "intercept_visible": ["array-like"],
        "intercept_hidden": ["array-like"],
    },
    prefer_skip_nested_validation=True,
)
def free_energy(X, components, intercept_visible, intercept_hidden):
    """Free energy ``F(v) = -b^T v - sum_j softplus(W_j v + c_j)`` of each row.

    ``log p(v) = -F(v) - log Z``: free energies compare rows under one model
    without its partition function.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Visible vectors (finite; dense or CSR).
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.

    Returns
    -------
    free_energy : ndarray of shape (n_samples,)
        float64, whatever the dtype of the inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import free_energy
    >>> W, b, c = np.zeros((2, 3)), np.ones(3), np.zeros(2)
    >>> free_energy(np.eye(3), W, b, c)  # -1 - 2 log 2 for each row
    array([-2.38629436, -2.38629436, -2.38629436])
    """
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
    if X.shape[1] != W.shape[1]:
        raise ValueError(
            f"X has {X.shape[1]} features but components has {W.shape[1]} "
            "visible units."
        )
    return _free_energy(X, W, b, c)


def _free_energy(X, W, b, c):
    """:func:`free_energy` without the checks, for internal callers."""
    pre = safe_sparse_dot(X, np.asarray(W).T, dense_output=True)
    pre = pre + c
    visible_term = safe_sparse_dot(X, np.asarray(b), dense_output=True)
    return -np.asarray(visible_term, dtype=np.float64).ravel() - np.logaddexp(
        0.0, pre.astype(np.float64)
    ).sum(axis=1)


def log_partition_exact(components, intercept_visible, intercept_hidden):
    """Exact ``log Z`` of a binary RBM by enumerating its smaller layer.

    With ``n`` hidden and ``m`` visible units and ``n <= m``,
    ``log Z = logsumexp_h [c^T h + sum_i softplus(b_i + (W^T h)_i)]`` over the
    ``2 ** n`` hidden states (symmetrically when ``m < n``). States are walked
    in Gray-code order so each costs O(max(m, n)); blocks of states run in
    parallel on numba's threads.

    Parameters
    ----------
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.

    Returns
    -------
    log_z : float
        The log partition function.

    Raises
    ------
    ValueError
        When the smaller layer has more than ``MAX_ENUMERABLE_UNITS`` (30)
        units (use :func:`log_partition_ais`).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import log_partition_exact
    >>> # No couplings: Z = prod_i (1 + e^{b_i}) prod_j (1 + e^{c_j}).
    >>> W = np.zeros((2, 3)); b = np.zeros(3); c = np.zeros(2)
    >>> float(log_partition_exact(W, b, c)), float(5 * np.log(2))
    (3.46573..., 3.46573...)
    """
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    n_hidden, n_visible = W.shape
    check_enumerable(
        min(n_hidden, n_visible),
        f"The exact log Z of an RBM with {n_visible} visible and {n_hidden} "
        "hidden units",
        instead="log_partition_ais (score_method='ais')",
    )
    if n_hidden <= n_visible:
        return float(log_partition_enumerate(W, b, c))
    return float(log_partition_enumerate(np.ascontiguousarray(W.T), c, b))


def ais_betas(schedule):
    """The inverse temperatures of an AIS run, from a name or a count.

    Parameters
    ----------
    schedule : int, {'linear', 'three-segment'} or array-like
        * an int ``K``: ``K`` temperatures evenly spaced on [0, 1];
        * ``'linear'``: 10,000 evenly spaced temperatures (the DCP seed,
          Upadhya & Sastry 2017);
        * ``'three-segment'``: 500, 4,000 and 10,000 temperatures evenly spaced
          on [0, 0.5), [0.5, 0.9) and [0.9, 1] (14,500; the Frank-Wolfe seed,
          after Salakhutdinov & Murray 2008);
        * an increasing array from 0 to 1.

    Returns
    -------
    betas : ndarray of float64
    """
    if isinstance(schedule, str):
        if schedule == "linear":
            return np.linspace(0.0, 1.0, 10_000)
        if schedule == "three-segment":
            return np.concatenate(
                [
                    np.linspace(0.0, 0.5, 500, endpoint=False),
                    np.linspace(0.5, 0.9, 4_000, endpoint=False),
                    np.linspace(0.9, 1.0, 10_000),
                ]
            )
        raise ValueError(
            f"Unknown AIS schedule {schedule!r}; use 'linear', 'three-segment', "
            "an int or an array of inverse temperatures."
        )
    if isinstance(schedule, numbers.Integral):
        if schedule < 2:
            raise ValueError(f"AIS needs at least 2 temperatures, got {schedule}.")
        return np.linspace(0.0, 1.0, int(schedule))
    betas = np.asarray(schedule, dtype=np.float64)
    if (
        betas.ndim != 1
        or betas.size < 2
        or not np.all(np.isfinite(betas))
        or betas[0] != 0.0
        or betas[-1] != 1.0
        or np.any(np.diff(betas) <= 0)
    ):
        raise ValueError(
            "An array of AIS inverse temperatures must increase strictly from "
            "0 to 1, hold at least two values and no NaN; got "
            f"{np.array2string(betas.ravel()[:6], precision=3)}"
            f"{' ...' if betas.size > 6 else ''} (shape {betas.shape})."
        )
    return betas


@validate_params(
    {
        "X": ["array-like", "sparse matrix"],
        "clip": [Interval(numbers.Real, 0, 0.5, closed="neither")],
    },
    prefer_skip_nested_validation=True,
)
def base_rate_bias(X, *, clip=1e-3):
    """Visible biases of the base-rate model: ``logit`` of the clipped data mean.

    The independent model that matches the data's mean of each unit: the
    initial visible biases of Upadhya & Sastry (2017) and the base model of
    AIS. The mean is clipped to ``[clip, 1 - clip]`` so that units that are
    always 0 or always 1 get finite biases.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Data with values in [0, 1], at least one row.
    clip : float in (0, 0.5), default=1e-3
        Smallest distance of a unit's probability from 0 and 1.

    Returns
    -------
    bias : ndarray of shape (n_visible,)

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import base_rate_bias
    >>> base_rate_bias(np.array([[1, 0], [1, 1]]))  # means 1 (clipped) and 1/2
    array([6.90675478, 0.        ])
    """
    X = check_array(X, accept_sparse="csr", dtype=[np.float64, np.float32])
    return _base_rate_bias(check_unit_interval(X), clip)


def _base_rate_bias(X, clip=1e-3):
    """:func:`base_rate_bias` without the checks, for internal callers."""
    mean = np.asarray(X.mean(axis=0), dtype=np.float64).ravel()
    return logit(np.clip(mean, clip, 1.0 - clip))


def _check_base_rate(base_rate, W):
    """The base model's visible biases in the dtype of ``W`` (zeros for None)."""
    n_visible = W.shape[1]
    if base_rate is None:
        return np.zeros(n_visible, dtype=W.dtype)
    base = np.ascontiguousarray(base_rate, dtype=W.dtype)
    if base.shape != (n_visible,) or not np.all(np.isfinite(base)):
        raise ValueError(
            f"base_rate must be a finite vector of length {n_visible} "
            f"(one bias per visible unit), got shape {base.shape}."
        )
    return base


def _base_log_partition(base, W):
    """``log Z_0`` of the base model: independent visible units with biases
    ``base`` and ``n_hidden`` disconnected hidden units."""
    return float(
        np.logaddexp(0.0, base.astype(np.float64)).sum() + W.shape[0] * np.log(2.0)
    )


def _check_log_weights(log_w, method):
    if not np.all(np.isfinite(log_w)):
        raise FloatingPointError(
            f"{method} produced non-finite importance weights; the RBM "
            "parameters are too large to anneal (check that the model did not "
            "diverge)."
        )


def _ais_band(log_w, log_z_base):
    """``log Z`` and ``log(mean(w) -+ 3 std(w)/sqrt(M))``, computed in log space."""
    n_chains = log_w.shape[0]
    shift = log_w.max()
    w = np.exp(log_w - shift)  # the largest weight is 1: no overflow
    mean = w.mean()
    stderr = w.std() / np.sqrt(n_chains)
    log_z = log_z_base + shift + np.log(mean)
    upper = log_z_base + shift + np.log(mean + 3.0 * stderr)
    low = mean - 3.0 * stderr
    lower = log_z_base + shift + np.log(low) if low > 0.0 else -np.inf
    return float(log_z), float(lower), float(upper)


@validate_params(
    {
        "components": ["array-like"],
        "intercept_visible": ["array-like"],
        "intercept_hidden": ["array-like"],
        "base_rate": ["array-like", None],
        "n_chains": [Interval(numbers.Integral, 2, None, closed="left")],
        "betas": [
            Interval(numbers.Integral, 2, None, closed="left"),
            StrOptions({"linear", "three-segment"}),
            "array-like",
            None,
        ],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def log_partition_ais(
    components,
    intercept_visible,
    intercept_hidden,
    *,
    base_rate=None,
    n_chains=100,
    betas=None,
    random_state=None,
):
    """Estimate ``log Z`` of a binary RBM by annealed importance sampling.

    AIS (Neal 2001) as applied to RBMs by Salakhutdinov & Murray (2008): the
    chains anneal from a model with no couplings whose visible biases are the
    base rate (``logit`` of the training-data mean, whose ``log Z`` is known) to
    the RBM through the distributions
    ``p_beta(v) ∝ exp(((1 - beta) b_A + beta b)^T v)
    prod_j (1 + exp(beta (W_j v + c_j)))``.
    All chains advance together: each temperature costs two matrix products
    of shape (chains x visible x hidden).

    Parameters
    ----------
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W``.
    intercept_visible : array-like of shape (n_visible,)
        Visible biases ``b``.
    intercept_hidden : array-like of shape (n_hidden,)
        Hidden biases ``c``.
    base_rate : array-like of shape (n_visible,), default=None
        Visible biases ``b_A`` of the base model, usually
        :func:`base_rate_bias` of the training data; ``None`` uses zeros (the
        uniform distribution), which needs more temperatures for the same
        accuracy.
    n_chains : int, default=100
        Number of independent AIS runs ``M`` (the seeds use 100).
    betas : int, {'linear', 'three-segment'}, array-like or None, default=None
        Temperature schedule, see :func:`ais_betas`; ``None`` means 1,000
        evenly spaced temperatures.
    random_state : int, RandomState instance or None, default=None
        Seed of the chains.

    Returns
    -------
    estimate : LogPartition
        ``log_z`` (the log of the mean importance weight times ``Z_A``) and the
        band ``lower``/``upper`` of plus or minus three standard errors of the
        mean weight, in log space; never NaN.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import log_partition_ais, log_partition_exact
    >>> rng = np.random.RandomState(0)
    >>> W = 0.3 * rng.randn(5, 12); b = rng.randn(12); c = rng.randn(5)
    >>> est = log_partition_ais(W, b, c, betas=2000, random_state=0)
    >>> bool(est.lower <= log_partition_exact(W, b, c) <= est.upper)
    True
    """
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    n_hidden, n_visible = W.shape
    base = _check_base_rate(base_rate, W)
    schedule = ais_betas(1000 if betas is None else betas)
    with blas_threads_for(n_chains * n_hidden * n_visible):
        log_w = ais_log_weights(
            W, b, c, base, schedule, n_chains, kernel_rng(random_state)
        )
    _check_log_weights(log_w, "AIS")
    return LogPartition(*_ais_band(log_w, _base_log_partition(base, W)), method="ais")


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
    X = check_array(
        X, accept_sparse="csr", dtype=(np.float64, np.float32), input_name="X"
    )
    if X.shape[1] != n_visible:
        raise ValueError(
            f"X has {X.shape[1]} features, but the RBM has {n_visible} visible units."
        )
    values = X.data if sp.issparse(X) else X
    offending = values[(values != 0) & (values != 1)]
    if offending.size:
        raise ValueError(
            "X must be binary (0 or 1): reverse annealing starts its chains at "
            f"the rows of X, but X holds {float(offending.flat[0])!r}. Binarise X "
            "first (e.g. X > 0.5)."
        )
    return X


def _row_keys(rows, seed):
    """One 64-bit random-stream key per row: BLAKE2b of the row's bits, keyed
    by ``seed``. A row's chains then draw the same numbers wherever the row
    stands and whatever rows it is scored with (identical rows share them)."""
    secret = int(seed).to_bytes(8, "little")
    packed = np.packbits(rows != 0, axis=1)
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


_RAISE_CONSTRAINTS = {
    "X": ["array-like", "sparse matrix"],
    "components": ["array-like"],
    "intercept_visible": ["array-like"],
    "intercept_hidden": ["array-like"],
    "base_rate": ["array-like", None],
    "betas": [
        Interval(numbers.Integral, 2, None, closed="left"),
        StrOptions({"linear", "three-segment"}),
        "array-like",
        None,
    ],
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
    seed = child_seed(random_state)
    rows_per_call = max(1, _RAISE_ROWS // n_chains)
    log_mean_w = np.empty(X.shape[0])
    for start in range(0, X.shape[0], rows_per_call):
        block = X[start : start + rows_per_call]
        block = block.toarray() if sp.issparse(block) else block
        block = np.array(block, dtype=W.dtype, order="C")
        with blas_threads_for(block.shape[0] * n_chains * n_hidden * n_visible):
            log_w = raise_log_weights(
                block, W, b, c, base, schedule, n_chains, _row_keys(block, seed)
            )
        _check_log_weights(log_w, "RAISE")
        stop = start + block.shape[0]
        log_mean_w[start:stop] = logsumexp(log_w, axis=1) - np.log(n_chains)
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
