"""Annealed importance sampling (AIS) of a binary RBM's ``log Z``: the
temperature schedules, the base-rate model the chains start from, the
importance-weight band. Public through :mod:`sklearn_rbm.likelihood`."""

import numbers

import numpy as np
from scipy.special import logit
from sklearn.utils import check_array

from ._kernels.partition import ais_log_weights
from ._partition_exact import LogPartition, _check_rbm
from ._sklearn_compat import Interval, StrOptions, validate_params
from ._utils import blas_threads_for, check_unit_interval, kernel_rng

#: What a temperature schedule may be (see :func:`ais_betas`), for
#: ``validate_params`` and ``_parameter_constraints``.
SCHEDULE_CONSTRAINT = [
    Interval(numbers.Integral, 2, None, closed="left"),
    StrOptions({"linear", "three-segment"}),
    "array-like",
]


def ais_betas(schedule):
    """The inverse temperatures of an AIS run, from a name or a count.

    Parameters
    ----------
    schedule : int, {'linear', 'three-segment'} or array-like
        * an int ``K``: ``K`` temperatures evenly spaced on [0, 1];
        * ``'linear'``: 10,000 evenly spaced temperatures (as in Upadhya
          & Sastry 2017);
        * ``'three-segment'``: 500, 4,000 and 10,000 temperatures evenly spaced
          on [0, 0.5), [0.5, 0.9) and [0.9, 1] (14,500; as in Ping, Liu & Ihler 2016,
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
        "betas": [*SCHEDULE_CONSTRAINT, None],
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
        Number of independent AIS runs ``M`` (Upadhya & Sastry 2017 and Ping, Liu &
        Ihler 2016 use 100).
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
