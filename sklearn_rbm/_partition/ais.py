"""Annealed importance sampling (AIS) of a binary RBM's ``log Z`` and the
base-rate model its chains start from: the validated public functions,
through :mod:`sklearn_rbm.likelihood`. The schedules and the annealing
kernel are ``annealing.py``'s; the base-rate path is the Bernoulli layer's
(``_rbm/layers/bernoulli.py``)."""

import numbers

import numpy as np

from .._core.sklearn_compat import Interval, validate_params
from .._core.utils import check_named_array, check_unit_interval
from .._rbm.layers.bernoulli import base_rate_bias as _base_rate_bias
from .._rbm.layers.bernoulli import log_partition_ais_of
from .annealing import SCHEDULE_CONSTRAINT, ais_betas  # noqa: F401 (re-exported)
from .parameters import ANNEALING_CONSTRAINTS, RBM_CONSTRAINTS, chains, shared_docstring


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
        The visible biases of the base-rate model.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import base_rate_bias
    >>> base_rate_bias(np.array([[1, 0], [1, 1]]))  # means 1 (clipped) and 1/2
    array([6.90675478, 0.        ])
    """
    X = check_named_array(X, "X", accept_sparse="csr", dtype=[np.float64, np.float32])
    return _base_rate_bias(check_unit_interval(X), clip)


@validate_params(
    {
        **RBM_CONSTRAINTS,
        "base_rate": ["array-like", None],
        "n_chains": chains(2),
        **ANNEALING_CONSTRAINTS,
    },
    prefer_skip_nested_validation=True,
)
@shared_docstring
def log_partition_ais(components, intercept_visible, intercept_hidden, *,
                      base_rate=None, n_chains=100, betas=None,
                      random_state=None):  # fmt: skip
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
    %(rbm)s
    base_rate : array-like of shape (n_visible,), default=None
        Visible biases ``b_A`` of the base model, usually
        :func:`base_rate_bias` of the training data; ``None`` uses zeros (the
        uniform distribution), which needs more temperatures for the same
        accuracy.
    n_chains : int, default=100
        Number of independent AIS runs ``M`` (Upadhya & Sastry 2017 and Ping, Liu &
        Ihler 2016 use 100).
    %(schedule)s
    %(seed)s

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
    return log_partition_ais_of(
        components, intercept_visible, intercept_hidden, base_rate=base_rate,
        n_chains=n_chains, betas=betas, random_state=random_state,
    )  # fmt: skip
