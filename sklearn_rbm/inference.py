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
from typing import NamedTuple

import numpy as np
from scipy.special import expit, logsumexp, xlogy

from ._conditional import bp_kernels as _bp
from ._core.utils import as_real_array, kernel_array
from ._partition.enumeration import log_partition_enumerate
from ._partition.exact import MAX_EXACT_UNITS, check_enumerable

__all__ = [
    "InferenceResult",
    "ExactMarginals",
    "belief_propagation",
    "mean_field",
    "exact_marginals",
    "exact_log_partition",
    "bethe_log_partition",
]

_PRODUCTS = {
    "sum": _bp.SUM_PRODUCT,
    "mixed": _bp.MIXED_PRODUCT,
    "max": _bp.MAX_PRODUCT,
}

# Largest field (bias plus a sum of |W|) inference accepts: far below the
# float64 overflow at 1.8e308, far above any meaningful RBM.
_LARGEST_FIELD = 1e300

# States per chunk of the vectorised enumeration in exact_marginals.
_CHUNK = 4096


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


class ExactMarginals(NamedTuple):
    """Exact marginals of :func:`exact_marginals` (batched like the biases).

    A named tuple; its fields are read back as attributes of the same names.

    Parameters
    ----------
    visible : ndarray of shape (n_samples, n_visible) or (n_visible,)
        ``p(v_i = 1)``.
    hidden : ndarray of shape (n_samples, n_hidden) or (n_hidden,)
        ``p(h_j = 1)``.
    pairwise : ndarray of shape (n_samples, n_hidden, n_visible) or \
(n_hidden, n_visible)
        ``p(h_j = 1, v_i = 1) = E[h v^T]``.
    log_partition : ndarray of shape (n_samples,) or float
        ``log Z``.
    """

    visible: np.ndarray
    hidden: np.ndarray
    pairwise: np.ndarray
    log_partition: np.ndarray | float


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
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W`` (shared by every model of the batch).
    visible_bias : array-like of shape (n_visible,) or (n_samples, n_visible)
        Visible biases ``b``, one row per model (e.g. ``b^v + W^{vx} x`` of a
        conditional RBM). A 1-D bias is shared by every row.
    hidden_bias : array-like of shape (n_hidden,) or (n_samples, n_hidden)
        Hidden biases ``c``, likewise.
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
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W`` (shared by every model of the batch).
    visible_bias : array-like of shape (n_visible,) or (n_samples, n_visible)
        Visible biases ``b``, one row per model; a 1-D bias is shared by
        every row.
    hidden_bias : array-like of shape (n_hidden,) or (n_samples, n_hidden)
        Hidden biases ``c``, likewise.
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


def _check_enumerable(W):
    # One enumeration per model of the batch: the per-row limit.
    check_enumerable(
        min(W.shape),
        f"Exact inference on a model with {W.shape[1]} visible and "
        f"{W.shape[0]} hidden units",
        limit=MAX_EXACT_UNITS,
        instead="belief_propagation or mean_field",
    )


def _states(n_units, start, stop):
    """Binary states ``start..stop-1`` of ``n_units`` units, one per row."""
    codes = np.arange(start, stop)[:, None]
    return ((codes >> np.arange(n_units)) & 1).astype(np.float64)


def _enumerate_marginals(W, summed_bias, enumerated_bias):
    """Marginals with layer ``s`` (rows of ``W``) enumerated and ``t`` summed out.

    ``log p(s) = a^T s + sum_i softplus(b_i + (W^T s)_i) - log Z`` and
    ``E[t | s] = sigmoid(b + W^T s)``; returns ``E[t]``, ``E[s]``,
    ``E[s t^T]`` and ``log Z``.
    """
    n_enum, n_sum = W.shape
    n_states = 2**n_enum
    # Two passes over chunks of states, the second recomputing each chunk's
    # conditionals: only the 2 ** k log-weights are held at once (2 ** 20
    # states of a 784-unit layer would otherwise take gigabytes).
    log_weights = np.empty(n_states)
    for start in range(0, n_states, _CHUNK):
        S = _states(n_enum, start, min(start + _CHUNK, n_states))
        pre = S @ W + summed_bias
        log_weights[start : start + S.shape[0]] = S @ enumerated_bias + np.logaddexp(
            0.0, pre
        ).sum(axis=1)
    log_z = logsumexp(log_weights)
    mean_t, mean_s, mean_st = np.zeros(n_sum), np.zeros(n_enum), np.zeros(W.shape)
    for start in range(0, n_states, _CHUNK):
        S = _states(n_enum, start, min(start + _CHUNK, n_states))
        T = expit(S @ W + summed_bias)
        p = np.exp(log_weights[start : start + S.shape[0]] - log_z)
        mean_t += p @ T
        mean_s += p @ S
        mean_st += (S * p[:, None]).T @ T
    return mean_t, mean_s, mean_st, log_z


def exact_marginals(components, visible_bias, hidden_bias):
    """Exact singleton and pairwise marginals and ``log Z`` by enumeration.

    Enumerates the ``2 ** k`` states of the smaller layer (``k`` at most
    ``likelihood.MAX_EXACT_UNITS``) and sums the other out analytically; a
    batch of biases is handled one model at a time. Meant for tiny models:
    tests, and exact scores of conditional RBMs with few outputs.

    Parameters
    ----------
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W`` (shared by every model of the batch).
    visible_bias : array-like of shape (n_visible,) or (n_samples, n_visible)
        Visible biases ``b``, one row per model; a 1-D bias is shared by
        every row.
    hidden_bias : array-like of shape (n_hidden,) or (n_samples, n_hidden)
        Hidden biases ``c``, likewise.

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
    _check_enumerable(W)
    marginals = _exact_marginals(W, B1, B2)
    if batched:
        return marginals
    return ExactMarginals(*(m[0] for m in marginals[:3]), float(marginals[3][0]))


def _exact_marginals(W, B1, B2):
    """:func:`exact_marginals` of checked float64 arrays, always batched."""
    n_samples = B1.shape[0]
    visible, hidden = np.empty(B1.shape), np.empty(B2.shape)
    pairwise, log_z = np.empty((n_samples,) + W.shape), np.empty(n_samples)
    for s in range(n_samples):
        if W.shape[0] <= W.shape[1]:  # enumerate the hidden layer
            visible[s], hidden[s], pairwise[s], log_z[s] = _enumerate_marginals(
                W, B1[s], B2[s]
            )
        else:
            hidden[s], visible[s], vh, log_z[s] = _enumerate_marginals(
                np.ascontiguousarray(W.T), B2[s], B1[s]
            )
            pairwise[s] = vh.T
    return ExactMarginals(visible, hidden, pairwise, log_z)


def exact_log_partition(components, visible_bias, hidden_bias):
    """Exact ``log Z`` of each model of a batch, by Gray-code enumeration.

    The batched counterpart of
    :func:`sklearn_rbm.likelihood.log_partition_exact` (same kernel, one call
    per row): with it, the exact conditional log-likelihood of a conditional
    RBM is ``log p(v | x) = -F(v) - log Z(x)``.

    Parameters
    ----------
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W`` (shared by every model of the batch).
    visible_bias : array-like of shape (n_visible,) or (n_samples, n_visible)
        Visible biases ``b``, one row per model; a 1-D bias is shared by
        every row.
    hidden_bias : array-like of shape (n_hidden,) or (n_samples, n_hidden)
        Hidden biases ``c``, likewise.

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
    _check_enumerable(W)
    log_z = _exact_log_partition(W, B1, B2)
    return log_z if batched else float(log_z[0])


def _exact_log_partition(W, B1, B2):
    """:func:`exact_log_partition` of checked float64 arrays, always batched."""
    if W.shape[0] <= W.shape[1]:
        log_z = [log_partition_enumerate(W, b, c) for b, c in zip(B1, B2, strict=True)]
    else:
        WT = np.ascontiguousarray(W.T)
        log_z = [log_partition_enumerate(WT, c, b) for b, c in zip(B1, B2, strict=True)]
    return np.asarray(log_z, dtype=np.float64)


def _entropy(p):
    """Binary entropy of each probability, 0 at 0 and 1."""
    return -xlogy(p, p) - xlogy(1.0 - p, 1.0 - p)


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
    components : array-like of shape (n_hidden, n_visible)
        Weight matrix ``W`` (shared by every model of the batch).
    visible_bias : array-like of shape (n_visible,) or (n_samples, n_visible)
        Visible biases ``b``, one row per model; a 1-D bias is shared by
        every row.
    hidden_bias : array-like of shape (n_hidden,) or (n_samples, n_hidden)
        Hidden biases ``c``, likewise.
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
    log_z = _bethe_log_partition(W, B1, B2, max_iter, tol, damping)
    return log_z if batched else float(log_z[0])


def _bethe_log_partition(W, B1, B2, max_iter, tol, damping):
    """:func:`bethe_log_partition` of checked float64 arrays, always batched."""
    tv, th, both, _, _ = _bp.belief_propagation(
        W, B1, B2, _bp.SUM_PRODUCT, max_iter, tol, damping, True
    )
    n_hidden, n_visible = W.shape
    tv3, th3 = tv[:, None, :], th[:, :, None]
    # The four edge probabilities from the free beliefs (Sec. 5.2); clipped at
    # 0 against rounding in the differences.
    edge = [both, tv3 - both, th3 - both, 1.0 - tv3 - th3 + both]
    edge_entropy = sum(-xlogy(p, p) for p in (np.clip(q, 0.0, 1.0) for q in edge))
    energy = (W * both).sum(axis=(1, 2)) + (B1 * tv).sum(axis=1) + (B2 * th).sum(1)
    entropy = (
        edge_entropy.sum(axis=(1, 2))
        - (n_hidden - 1) * _entropy(tv).sum(axis=1)
        - (n_visible - 1) * _entropy(th).sum(axis=1)
    )
    return energy + entropy
