"""The binary RBM in closed form: its parameters checked, its free energy,
and ``log Z`` by enumerating the smaller layer; the size limits of every
enumeration in the package and :class:`LogPartition`, the result of every
``log Z`` computation. Public through :mod:`sklearn_rbm.likelihood`."""

from typing import NamedTuple

import numpy as np

from .._core.sklearn_compat import validate_params
from .._core.utils import as_real_array, check_named_array, kernel_array
from .._numerics.blas import kernel_dot
from .enumeration import log_partition_enumerate
from .parameters import RBM_CONSTRAINTS, shared_docstring

#: ``score_method='auto'`` enumerates exactly while the enumerated layer (the
#: smaller layer of an RBM, the hidden layer of a Gaussian RBM, the units of an
#: FVBM) has at most this many units: 2 ** 20 states of a 784-pixel model take
#: about a second on one core. Enumerations repeated for every row (a
#: conditional RBM's exact ``log Z(x)`` and exact inference) stop here too.
MAX_EXACT_UNITS = 20

#: ``score_method='exact'`` enumerates one model up to this many units
#: (2 ** 30 states: minutes) and refuses beyond; use AIS there.
MAX_ENUMERABLE_UNITS = 30


class LogPartition(NamedTuple):
    """A log partition function with its uncertainty band.

    For an exact value the band is the value itself. For AIS, ``lower`` and
    ``upper`` are ``log(mean(w) -+ 3 std(w) / sqrt(M))`` over the ``M``
    importance weights ``w``; ``lower`` is ``-inf`` when the band reaches zero
    (too few chains or temperatures for the weights' spread).

    A named tuple; its fields are read back as attributes of the same names.

    Parameters
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
    for name, value in (
        ("components", W), ("intercept_visible", b), ("intercept_hidden", c)
    ):  # fmt: skip
        if not np.all(np.isfinite(value)):
            raise ValueError(
                f"{name} contains NaN or infinite values; the RBM parameters must "
                "be finite (non-finite ones come from a fit that diverged)."
            )
    return W, b, c


@validate_params(
    {"X": ["array-like", "sparse matrix"], **RBM_CONSTRAINTS},
    prefer_skip_nested_validation=True,
)
@shared_docstring
def free_energy(X, components, intercept_visible, intercept_hidden):
    """Free energy ``F(v) = -b^T v - sum_j softplus(W_j v + c_j)`` of each row.

    ``log p(v) = -F(v) - log Z``: free energies compare rows under one model
    without its partition function.

    Parameters
    ----------
    X : {array-like, sparse matrix} of shape (n_samples, n_visible)
        Visible vectors (finite; dense or CSR).
    %(rbm)s

    Returns
    -------
    free_energy : ndarray of shape (n_samples,)
        In float64, whatever the dtype of the inputs.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.likelihood import free_energy
    >>> W, b, c = np.zeros((2, 3)), np.ones(3), np.zeros(2)
    >>> free_energy(np.eye(3), W, b, c)  # -1 - 2 log 2 for each row
    array([-2.38629436, -2.38629436, -2.38629436])
    """
    W, b, c = _check_rbm(components, intercept_visible, intercept_hidden)
    X = check_rows(X, W.shape[1])
    return _free_energy(X, W, b, c)


def check_rows(X, n_visible, name="X"):
    """``X`` checked for a function of an RBM with ``n_visible`` visible
    units: finite, float, dense or CSR, of the right width; errors name it."""
    X = check_named_array(X, name, accept_sparse="csr", dtype=[np.float64, np.float32])
    if X.shape[1] != n_visible:
        raise ValueError(
            f"{name} has {X.shape[1]} features but components has {n_visible} "
            f"visible units: pass rows of {n_visible} values."
        )
    return X


def _free_energy(X, W, b, c):
    """:func:`free_energy` without the checks, for internal callers."""
    pre = kernel_dot(X, np.asarray(W).T)
    pre = pre + c
    visible_term = kernel_dot(X, np.asarray(b))
    return -np.asarray(visible_term, dtype=np.float64).ravel() - np.logaddexp(
        0.0, pre.astype(np.float64)
    ).sum(axis=1)


@shared_docstring
def log_partition_exact(components, intercept_visible, intercept_hidden):
    """Exact ``log Z`` of a binary RBM by enumerating its smaller layer.

    With ``n`` hidden and ``m`` visible units and ``n <= m``,
    ``log Z = logsumexp_h [c^T h + sum_i softplus(b_i + (W^T h)_i)]`` over the
    ``2 ** n`` hidden states (symmetrically when ``m < n``). States are walked
    in Gray-code order so each costs O(max(m, n)); blocks of states run in
    parallel on numba's threads.

    Parameters
    ----------
    %(rbm)s

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
