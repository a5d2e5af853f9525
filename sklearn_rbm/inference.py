"""Approximate and exact inference in binary RBMs: belief propagation (sum,
mixed and max product), naive mean field, and brute-force enumeration.

The model is ``p(v, h) = exp(h^T W v + b^T v + c^T h) / Z`` with ``v`` in
``{0, 1}^m``, ``h`` in ``{0, 1}^n`` and ``W = components`` of shape
``(n_hidden, n_visible)`` (scikit-learn's orientation, as
``BernoulliRBM.components_``). Biases may be batched, one row per model: a
conditional RBM (Ping & Ihler, AISTATS 2017) is an RBM whose biases depend on
the input ``x`` while ``W`` is shared, so one call runs inference for a whole
mini-batch of ``x``.

* :func:`belief_propagation`: the matrix BP of Ping & Ihler (2017), Sec. 5,
  Algorithm 1 and Eqs. (13)-(18), with messages kept as log-odds.
* :func:`mean_field`: the naive mean-field fixed point.
* :func:`exact_marginals`, :func:`exact_log_partition`: enumeration of the
  smaller layer, for tiny models, tests and exact conditional likelihoods.
* :func:`bethe_log_partition`: the Bethe approximation of ``log Z`` at the
  sum-product beliefs (exact on trees).
"""

import numbers
from dataclasses import dataclass

import numpy as np

from ._conditional import bp_kernels as _bp
from ._conditional.exact import (
    ExactMarginals,
    bethe_log_partition_rows,
    check_enumerable_rows,
    exact_log_partition_rows,
    exact_marginals_rows,
)
from ._core.docstrings import fill_doc
from ._core.utils import as_real_array, kernel_array

__all__ = [
    "InferenceResult",
    "ExactMarginals",
    "belief_propagation",
    "mean_field",
    "exact_marginals",
    "exact_log_partition",
    "bethe_log_partition",
]

# The model parameters every function here takes: one ``W`` and a batch of
# biases, one row per model.
_shared_doc = fill_doc(
    batch_of_models="""
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W`` (shared by every model of the batch).
    visible_bias : array-like of shape (n_visible,) or (n_samples, n_visible)
        Visible biases ``b``, one row per model (e.g. ``b^v + W^{vx} x`` of a
        conditional RBM). A 1-D bias is shared by every row.
    hidden_bias : array-like of shape (n_hidden,) or (n_samples, n_hidden)
        Hidden biases ``c``, likewise.
    """
)

_PRODUCTS = {
    "sum": _bp.SUM_PRODUCT,
    "mixed": _bp.MIXED_PRODUCT,
    "max": _bp.MAX_PRODUCT,
}

# Largest field (bias plus a sum of |W|) inference accepts: far below the
# float64 overflow at 1.8e308, far above any meaningful RBM.
_LARGEST_FIELD = 1e300


@dataclass(frozen=True)
class InferenceResult:
    """Beliefs returned by :func:`belief_propagation` and :func:`mean_field`.

    The leading ``n_samples`` axis is present when either bias was 2-D and
    absent when both were 1-D. The fields are the constructor's parameters
    and are read back as attributes of the same names.

    Parameters
    ----------
    visible : ndarray of shape (n_samples, n_visible) or (n_visible,)
        Belief that each visible unit is 1: the marginal ``tau^v`` for
        sum-product BP and mean field; the normalised max-marginal
        ``max_{v_i=1} / (max_{v_i=0} + max_{v_i=1})`` for max product (and the
        mixed-product belief for mixed product). ``visible > 0.5`` decodes.
    hidden : ndarray of shape (n_samples, n_hidden) or (n_hidden,)
        The same for the hidden units (``tau^h``).
    pairwise : ndarray of shape (n_samples, n_hidden, n_visible) or \
(n_hidden, n_visible), or None
        Belief that ``h_j = 1`` and ``v_i = 1`` (``Gamma`` of Ping & Ihler's Eq. (18),
        transposed to ``W``'s orientation), i.e. the estimate of
        ``E[h v^T]``; ``None`` unless ``pairwise=True``. For mean field it is
        the outer product ``tau^h tau^v^T``.
    n_iter : ndarray of int64 of shape (n_samples,) or int
        Iterations run (each one update of both layers).
    converged : ndarray of bool of shape (n_samples,) or bool
        Whether the largest change of a singleton belief in the last
        iteration was below ``tol``. Beliefs of unconverged samples are the
        last iterate (always finite).
    """

    visible: np.ndarray
    hidden: np.ndarray
    pairwise: np.ndarray | None
    n_iter: np.ndarray | int
    converged: np.ndarray | bool


def _check_model(components, visible_bias, hidden_bias):
    """Validated float64 ``W (n, m)``, ``B1 (S, m)``, ``B2 (S, n)`` and batchedness."""
    W = as_real_array(components, "components").astype(np.float64)
    if W.ndim != 2 or 0 in W.shape:
        raise ValueError(
            "components must be a non-empty 2-D array of shape (n_hidden, "
            f"n_visible); got shape {W.shape}."
        )
    n_hidden, n_visible = W.shape
    b = as_real_array(visible_bias, "visible_bias").astype(np.float64)
    c = as_real_array(hidden_bias, "hidden_bias").astype(np.float64)
    if b.ndim not in (1, 2) or b.shape[-1] != n_visible:
        raise ValueError(
            f"visible_bias must have shape ({n_visible},) or (n_samples, "
            f"{n_visible}) for components of shape {W.shape}; got {b.shape}."
        )
    if c.ndim not in (1, 2) or c.shape[-1] != n_hidden:
        raise ValueError(
            f"hidden_bias must have shape ({n_hidden},) or (n_samples, "
            f"{n_hidden}) for components of shape {W.shape}; got {c.shape}."
        )
    if b.ndim == 2 and c.ndim == 2 and b.shape[0] != c.shape[0]:
        raise ValueError(
            "visible_bias and hidden_bias must have the same number of rows "
            f"(one per model); got {b.shape[0]} and {c.shape[0]}."
        )
    for name, value in (
        ("components", W),
        ("visible_bias", b),
        ("hidden_bias", c),
    ):
        if not np.all(np.isfinite(value)):
            raise ValueError(
                f"{name} contains NaN or infinite values; the parameters must be "
                "finite (non-finite ones come from a fit that diverged)."
            )
    _check_fields(W, b, c)
    batched = b.ndim == 2 or c.ndim == 2
    n_samples = b.shape[0] if b.ndim == 2 else (c.shape[0] if c.ndim == 2 else 1)
    B1 = np.broadcast_to(b, (n_samples, n_visible))
    B2 = np.broadcast_to(c, (n_samples, n_hidden))
    return kernel_array(W), kernel_array(B1), kernel_array(B2), batched


def _check_fields(W, b, c):
    """Refuse parameters whose fields overflow float64.

    Every message, belief and field is bounded by a bias plus a row or column
    sum of ``|W|`` (plus one ``|W_ji|`` for the pairwise beliefs); beyond
    float64's range they become infinities whose differences are NaN.
    """
    with np.errstate(over="ignore"):  # an overflow here is what we look for
        largest = max(
            np.abs(b).max(initial=0.0) + np.abs(W).sum(axis=0).max(initial=0.0),
            np.abs(c).max(initial=0.0) + np.abs(W).sum(axis=1).max(initial=0.0),
        ) + np.abs(W).max(initial=0.0)
    if not largest < _LARGEST_FIELD:
        raise ValueError(
            "The parameters are too large for inference in float64: a bias plus "
            f"a row or column sum of |components| reaches {largest:.3g}, beyond "
            f"{_LARGEST_FIELD:.0e}. (Sigmoids saturate near 40; parameters this "
            "large come from a diverged fit.)"
        )


def _check_iteration(max_iter, tol, damping):
    if not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1; got {max_iter!r}.")
    if not isinstance(tol, numbers.Real) or not tol >= 0:
        raise ValueError(f"tol must be a real number >= 0; got {tol!r}.")
    if not isinstance(damping, numbers.Real) or not 0 <= damping < 1:
        raise ValueError(f"damping must be a real number in [0, 1); got {damping!r}.")
    return int(max_iter), float(tol), float(damping)


def _result(outputs, batched):
    visible, hidden, pairwise, n_iter, converged = outputs
    if pairwise.shape[0] == 0:
        pairwise = None
    if batched:
        return InferenceResult(visible, hidden, pairwise, n_iter, converged)
    return InferenceResult(
        visible[0],
        hidden[0],
        None if pairwise is None else pairwise[0],
        int(n_iter[0]),
        bool(converged[0]),
    )


@_shared_doc
def belief_propagation(
    components,
    visible_bias,
    hidden_bias,
    *,
    product="sum",
    max_iter=100,
    tol=1e-3,
    damping=0.0,
    pairwise=False,
):
    """Loopy belief propagation on a binary RBM (matrix form, batched).

    Runs Algorithm 1 of Ping & Ihler (2017): messages start at 1/2 and
    beliefs at ``sigmoid(bias)``; each iteration sends every hidden-to-visible
    message (Eq. (13)), updates the visible beliefs (Eq. (16)), sends every
    visible-to-hidden message (Eq. (14), or Eq. (15) for mixed product) and
    updates the hidden beliefs (Eq. (17)). Messages are kept as log-odds, and
    ``log((e^W L1 + L2) / (L1 + L2))`` is evaluated as a difference of
    softplus terms through ``exp(-|W|)``, so nothing overflows whatever the
    size of the weights.

    Parameters
    ----------
    %(batch_of_models)s
    product : {'sum', 'mixed', 'max'}, default='sum'
        * ``'sum'``: sum-product BP, approximate marginals (exact on trees,
          e.g. one hidden unit).
        * ``'mixed'``: mixed-product BP for the marginal MAP
          ``argmax_v sum_h p(v, h)``: hidden-to-visible messages sum over
          ``h``; visible-to-hidden messages clamp ``v`` at the current
          decoding ``1[tau^v > 1/2]`` (Eq. (15)).
        * ``'max'``: max-product BP for the joint MAP ``argmax_{v,h} p(v, h)``:
          Eqs. (13)-(14) with max in place of sum, i.e. the message log-odds
          ``max(W + u, 0) - max(u, 0)`` for a cavity log-odds ``u``; the
          beliefs are normalised max-marginals.
    max_iter : int, default=100
        Most iterations per model (Ping & Ihler's ``T``).
    tol : float, default=1e-3
        A model stops after the first iteration in which no singleton belief
        changed by ``tol`` or more (Ping & Ihler's tolerance).
    damping : float in [0, 1), default=0.0
        Each new message is ``(1 - damping) * update + damping * old``,
        mixed in log-odds space. Ping & Ihler use no damping; damping can help
        BP converge on strongly coupled models.
    pairwise : bool, default=False
        Also return the pairwise beliefs ``tau(h_j = 1, v_i = 1)`` (their
        Eq. (18)).

    Returns
    -------
    result : InferenceResult
        ``visible``, ``hidden``, ``pairwise``, ``n_iter``, ``converged``;
        batched when either bias is 2-D.

    See Also
    --------
    mean_field : The naive mean-field approximation.
    exact_marginals : Exact marginals of tiny models.

    Notes
    -----
    Messages are log-odds in ``W``'s orientation:
    ``A[j, i] = log m_{j->i}(v_i=1) - log m_{j->i}(v_i=0)`` (logit of the
    Ping & Ihler's ``M^{vh}_{ij}``) and ``B[j, i]`` likewise from ``v_i`` to ``h_j``.
    With the cavity log-odds ``u = logit tau^h_j - B[j, i]`` (the belief of
    ``h_j`` without ``v_i``'s message), Eq. (8) gives
    ``m_{j->i}(v) ~ sum_h exp(v W_ji h + u h)``, so Eq. (13) is
    ``A[j, i] = softplus(W_ji + u) - softplus(u)``, and Eq. (16) is
    ``logit tau^v = b + sum_j A[j, :]``. Max product replaces the sum by a
    max, ``m_{j->i}(v) ~ max(1, exp(v W_ji + u))``, so
    ``A[j, i] = max(W_ji + u, 0) - max(u, 0)``; the beliefs are then
    log-ratios of max-marginals, and on a tree the argmax of each is the
    joint MAP (when it is unique).

    A message update costs about 4 ns (one vectorised exponential and
    logarithm); models of a batch are processed one after the other, each
    with its own ``(n_hidden, n_visible)`` message matrices, and stop
    independently; a batched call equals per-row calls bit for bit.

    References
    ----------
    W. Ping and A. Ihler. Belief propagation in conditional RBMs for
    structured prediction. AISTATS 2017.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.inference import belief_propagation, exact_marginals
    >>> rng = np.random.default_rng(0)
    >>> W = rng.normal(size=(1, 5))  # one hidden unit: a tree, BP is exact
    >>> b, c = rng.normal(size=5), rng.normal(size=1)
    >>> result = belief_propagation(W, b, c)
    >>> bool(result.converged), result.n_iter
    (True, 3)
    >>> bool(np.allclose(result.visible, exact_marginals(W, b, c).visible))
    True
    >>> # A batch of three models sharing W, each with its own visible bias:
    >>> belief_propagation(W, rng.normal(size=(3, 5)), c).visible.shape
    (3, 5)
    """
    if product not in _PRODUCTS:
        raise ValueError(
            f"product must be one of {sorted(_PRODUCTS)}; got {product!r}."
        )
    W, B1, B2, batched = _check_model(components, visible_bias, hidden_bias)
    max_iter, tol, damping = _check_iteration(max_iter, tol, damping)
    outputs = _bp.belief_propagation(
        W, B1, B2, _PRODUCTS[product], max_iter, tol, damping, bool(pairwise)
    )
    return _result(outputs, batched)


@_shared_doc
def mean_field(
    components,
    visible_bias,
    hidden_bias,
    *,
    max_iter=100,
    tol=1e-3,
    damping=0.0,
    pairwise=False,
):
    """Naive mean-field beliefs of a binary RBM (batched).

    Iterates ``tau^v = sigmoid(b + W^T tau^h)`` then
    ``tau^h = sigmoid(c + W tau^v)`` from ``tau = sigmoid(bias)``, the
    fixed point of the fully factorised variational approximation (the
    "MF" inference of Ping & Ihler 2017, Sec. 4.1).

    Parameters
    ----------
    %(batch_of_models)s
    max_iter : int, default=100
        Most iterations per model (each updates both layers).
    tol : float, default=1e-3
        Stop after the first iteration in which no belief changed by ``tol``
        or more.
    damping : float in [0, 1), default=0.0
        The new log-odds of a layer are ``(1 - damping) * update + damping *
        old``.
    pairwise : bool, default=False
        Also return ``tau^h tau^v^T``, the mean-field estimate of ``E[h v^T]``.

    Returns
    -------
    result : InferenceResult
        Mean-field ``visible``, ``hidden`` and ``pairwise`` beliefs,
        ``n_iter`` and ``converged``; batched when either bias is 2-D.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.inference import mean_field
    >>> W = np.zeros((2, 3))  # no couplings: the beliefs are sigmoid(bias)
    >>> mean_field(W, np.zeros(3), np.array([0.0, 2.0])).hidden
    array([0.5       , 0.88079708])
    """
    W, B1, B2, batched = _check_model(components, visible_bias, hidden_bias)
    max_iter, tol, damping = _check_iteration(max_iter, tol, damping)
    outputs = _bp.mean_field(W, B1, B2, max_iter, tol, damping, bool(pairwise))
    return _result(outputs, batched)


@_shared_doc
def exact_marginals(components, visible_bias, hidden_bias):
    """Exact singleton and pairwise marginals and ``log Z`` by enumeration.

    Enumerates the ``2 ** k`` states of the smaller layer (``k`` at most
    ``likelihood.MAX_EXACT_UNITS``) and sums the other out analytically; a
    batch of biases is handled one model at a time. Meant for tiny models:
    tests, and exact scores of conditional RBMs with few outputs.

    Parameters
    ----------
    %(batch_of_models)s

    Returns
    -------
    marginals : ExactMarginals
        ``visible``, ``hidden``, ``pairwise`` (``E[h v^T]``, W's orientation)
        and ``log_partition``.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.inference import exact_marginals
    >>> exact = exact_marginals(np.zeros((1, 2)), np.zeros(2), np.zeros(1))
    >>> exact.visible, float(exact.log_partition), float(3 * np.log(2))
    (array([0.5, 0.5]), 2.0794..., 2.0794...)
    """
    W, B1, B2, batched = _check_model(components, visible_bias, hidden_bias)
    check_enumerable_rows(W)
    marginals = exact_marginals_rows(W, B1, B2)
    if batched:
        return marginals
    return ExactMarginals(*(m[0] for m in marginals[:3]), float(marginals[3][0]))


@_shared_doc
def exact_log_partition(components, visible_bias, hidden_bias):
    """Exact ``log Z`` of each model of a batch, by Gray-code enumeration.

    The batched counterpart of
    :func:`sklearn_rbm.likelihood.log_partition_exact` (same kernel, one call
    per row): with it, the exact conditional log-likelihood of a conditional
    RBM is ``log p(v | x) = -F(v) - log Z(x)``.

    Parameters
    ----------
    %(batch_of_models)s

    Returns
    -------
    log_z : ndarray of shape (n_samples,) or float
        Exact ``log Z`` of each model; a float when both biases are 1-D.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.inference import exact_log_partition
    >>> exact_log_partition(np.zeros((1, 2)), np.zeros((2, 2)), np.zeros(1))
    array([2.07944154, 2.07944154])
    """
    W, B1, B2, batched = _check_model(components, visible_bias, hidden_bias)
    check_enumerable_rows(W)
    log_z = exact_log_partition_rows(W, B1, B2)
    return log_z if batched else float(log_z[0])


@_shared_doc
def bethe_log_partition(
    components, visible_bias, hidden_bias, *, max_iter=100, tol=1e-6, damping=0.0
):
    """Bethe approximation of ``log Z`` at the sum-product BP beliefs.

    ``log Z ~ -F_Bethe = sum_{ji} W_ji Gamma_ji + b^T tau^v + c^T tau^h
    + sum_{ji} H(tau_ji) - (n - 1) sum_i H(tau^v_i) - (m - 1) sum_j H(tau^h_j)``
    with ``H`` the entropy of the edge beliefs ``tau_ji`` (over four states)
    and of the singleton beliefs; each visible unit has ``n`` neighbours and
    each hidden unit ``m``. Exact when the graph is a tree (one hidden or one
    visible unit) and BP has converged (Yedidia, Freeman & Weiss 2005). Where
    BP has not converged the value is computed at its last beliefs and has no
    such meaning; check ``belief_propagation(...).converged`` if it matters.

    Parameters
    ----------
    %(batch_of_models)s
    max_iter : int, default=100
        Most BP iterations per model, passed to :func:`belief_propagation`.
    tol : float, default=1e-6
        BP's tolerance, passed to :func:`belief_propagation`; tighter than
        its default because the estimate is only as good as the fixed point.
    damping : float in [0, 1), default=0.0
        BP's message damping, passed to :func:`belief_propagation`.

    Returns
    -------
    log_z : ndarray of shape (n_samples,) or float
        Bethe estimate of ``log Z`` of each model; a float when both biases
        are 1-D.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.inference import bethe_log_partition
    >>> from sklearn_rbm.likelihood import log_partition_exact
    >>> W = np.array([[2.0, -1.0, 0.5]]); b = np.zeros(3); c = np.zeros(1)
    >>> error = bethe_log_partition(W, b, c) - log_partition_exact(W, b, c)
    >>> bool(abs(error) < 1e-10)
    True
    """
    W, B1, B2, batched = _check_model(components, visible_bias, hidden_bias)
    max_iter, tol, damping = _check_iteration(max_iter, tol, damping)
    log_z = bethe_log_partition_rows(W, B1, B2, max_iter, tol, damping)
    return log_z if batched else float(log_z[0])
