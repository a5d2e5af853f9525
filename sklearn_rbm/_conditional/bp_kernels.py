"""Matrix belief propagation (sum, mixed and max product) and naive mean field
on binary RBMs, batched over models that share ``W`` and differ in biases.

Ping & Ihler (AISTATS 2017), Sec. 5 and Algorithm 1.
Orientation follows scikit-learn: ``W`` of shape ``(n_hidden, n_visible)``,
visible biases ``B1`` of shape ``(n_samples, n_visible)``, hidden biases ``B2``
of shape ``(n_samples, n_hidden)``.

Messages are stored as log-odds, in ``W``'s orientation:

* ``A[j, i] = log m_{j->i}(v_i=1) / m_{j->i}(v_i=0)``, the logit of Ping & Ihler's
  ``M^{vh}_{ij}`` (h to v);
* ``B[j, i] = log m_{i->j}(h_j=1) / m_{i->j}(h_j=0)``, the logit of
  ``M^{hv}_{ji}`` (v to h).

The beliefs of Eqs. (16)-(17) are then sums, ``logit tau^v_i = b_i + sum_j
A[j, i]`` and ``logit tau^h_j = c_j + sum_i B[j, i]``, and the message of
Eq. (13) is ``A[j, i] = softplus(W[j, i] + u) - softplus(u)`` with the cavity
field ``u = logit tau^h_j - B[j, i]`` (Eq. (14) likewise with the roles of the
layers swapped). Samples are processed one after the other with their own
``(n_hidden, n_visible)`` message matrices, which stay in cache, stop
independently when they converge, and make a batched call equal to per-row
calls bit for bit.

Speed: a sum-product message costs one exponential and one logarithm, the
branch-free polynomial versions of ``vecmath.py`` that LLVM vectorises; with
them a message update costs about 4 ns instead of 16 with libm's scalar
``exp``/``log`` (measured on one AVX-512 core). The message functions are
inlined by numba (``inline="always"``): left to LLVM's inliner, the message
function is too large to inline and the call inside the loop stops
vectorisation.

The loop over samples is serial: a ``prange`` version (bit-identical, each
sample its own work arrays) was no faster on the project's shared two-core
machine (20 models of 784 x 256, 10 iterations: 0.38-0.63 s serial, 0.44-0.66 s
parallel), and it would cost a longer compile.
"""

import numpy as np

from .._numerics.jit import vector_jit
from .._numerics.steps import copy_
from .._numerics.vecmath import (
    EXP_FLOOR,
    exp_minus_abs,
    exp_nonpositive,
    log_positive,
    sigmoid,
)

SUM_PRODUCT = 0
MIXED_PRODUCT = 1
MAX_PRODUCT = 2


@vector_jit(inline="always")
def _sum_message(w, d, u):
    """``softplus(w + u) - softplus(u)`` with ``d = exp(-|w|)``, never ``exp(w)``.

    The message odds are ``(1 - p) + p e^w`` with ``p = sigmoid(u)`` (Appendix
    B.1). Writing ``z = exp(-|u|)`` and factoring ``e^max(w, 0)`` out, the
    odds are ``e^max(w, 0) (1 + z d) / (1 + z)`` when ``u`` and ``w`` have the
    same sign and ``e^max(w, 0) (z + d) / (1 + z)`` otherwise: sums of positive
    terms (no cancellation, no overflow) at the cost of one exponential, one
    division and one logarithm, against two of each for two softplus calls.
    Both numerators are formed so that the choice is a select, not a branch
    (the signs are random, so a branch would be mispredicted half the time).
    ``|u|`` is capped at 700 so that ``z + d`` stays positive when both
    ``|u|`` and ``|w|`` exceed 745 (where ``exp`` underflows to 0); this
    changes the message only where ``sigmoid(u)`` is 1 - 1e-304.
    """
    z = exp_minus_abs(u)
    same_sign = 1.0 + z * d
    opposite_sign = z + d
    odds = same_sign if (u >= 0.0) == (w > 0.0) else opposite_sign
    # odds >= z / 2 >= exp(-700) / 2: a positive normal number.
    return max(w, 0.0) + log_positive(odds / (1.0 + z))


@vector_jit(inline="always")
def _max_message(w, u):
    """Max-product analogue of :func:`_sum_message`: ``max(w + u, 0) - max(u, 0)``.

    ``log max_h exp(v w h + u h)`` at ``v = 1`` minus at ``v = 0``.
    """
    return max(w + u, 0.0) - max(u, 0.0)


@vector_jit
def _messages_(w, d, field, old, code, out):
    """One row of new messages: ``out[i] = message(w[i], field - old[i])``.

    ``field - old[i]`` is the cavity log-odds of the sending unit (its belief
    without the receiver's own message). The product is chosen outside the
    loop so that the loop body is branch-free.
    """
    if code == MAX_PRODUCT:
        for i in range(w.shape[0]):
            out[i] = _max_message(w[i], field - old[i])
    else:
        for i in range(w.shape[0]):
            out[i] = _sum_message(w[i], d[i], field - old[i])


@vector_jit
def _messages_columns_(w, d, field, old, code, out):
    """As :func:`_messages_` with a field per element: ``field[i] - old[i]``."""
    if code == MAX_PRODUCT:
        for i in range(w.shape[0]):
            out[i] = _max_message(w[i], field[i] - old[i])
    else:
        for i in range(w.shape[0]):
            out[i] = _sum_message(w[i], d[i], field[i] - old[i])


@vector_jit
def _damp_(new, old, keep):
    """``old = (1 - keep) new + keep old`` in log-odds; ``new`` takes the result."""
    if keep > 0.0:
        for i in range(new.shape[0]):
            new[i] = (1.0 - keep) * new[i] + keep * old[i]
    copy_(old, new)


@vector_jit
def _send_to_visible(W, D, A, B, hidden_logit, visible_bias, visible_logit, code, keep):
    """Ping & Ihler's Eq. (13): every ``h -> v`` message into ``A``, then
    ``logit tau^v`` (their Eq. (16))."""
    n_hidden, n_visible = W.shape
    row = np.empty(n_visible)
    copy_(visible_logit, visible_bias)
    for j in range(n_hidden):
        _messages_(W[j], D[j], hidden_logit[j], B[j], code, row)
        _damp_(row, A[j], keep)
        for i in range(n_visible):
            visible_logit[i] += row[i]


_LANES = 8


@vector_jit
def _row_sum(x, lanes):
    """``sum(x)`` in a fixed order that LLVM can vectorise.

    A plain running sum is a chain of dependent additions (about 1 ns per
    element) that LLVM may not reorder without fastmath. Eight running sums
    over ``x[k::8]``, added at the end, are independent lanes: twice as fast,
    and the order is fixed by this code, not by the hardware, so results do
    not depend on the machine's vector width.
    """
    lanes[:] = 0.0
    n = x.shape[0]
    full = n - n % _LANES
    for start in range(0, full, _LANES):
        for k in range(_LANES):
            lanes[k] += x[start + k]
    total = 0.0
    for k in range(_LANES):
        total += lanes[k]
    for i in range(full, n):
        total += x[i]
    return total


@vector_jit
def _send_to_hidden(W, D, A, B, visible_logit, hidden_bias, hidden_logit, code, keep):
    """Ping & Ihler's Eq. (14) (sum), (15) (mixed) or its max analogue into
    ``B``, then their Eq. (17).

    Mixed product sends ``W[j, i] * v~_i`` with the decoded ``v~ = 1[tau^v > 1/2]``
    (their Eq. (15): the v-side of the message is clamped at the current decoding).
    """
    n_hidden, n_visible = W.shape
    row = np.empty(n_visible)
    lanes = np.empty(_LANES)
    for j in range(n_hidden):
        if code == MIXED_PRODUCT:
            for i in range(n_visible):
                row[i] = W[j, i] if visible_logit[i] > 0.0 else 0.0
        else:
            _messages_columns_(W[j], D[j], visible_logit, A[j], code, row)
        _damp_(row, B[j], keep)
        hidden_logit[j] = hidden_bias[j] + _row_sum(row, lanes)


@vector_jit
def _update_beliefs(logit, belief):
    """``belief = sigmoid(logit)`` in place; returns the largest change."""
    change = 0.0
    for k in range(logit.shape[0]):
        new = sigmoid(logit[k])
        change = max(change, abs(new - belief[k]))
        belief[k] = new
    return change


@vector_jit(inline="always")
def _exp_shifted(x):
    """``exp(x)`` for ``x <= 0``, floored at ``exp(-700)`` (1e-304).

    Used on exponents from which the largest one was subtracted: the floor
    changes a normalised value by at most 1e-304.
    """
    return exp_nonpositive(max(x, -EXP_FLOOR))


@vector_jit
def _pairwise_beliefs(W, A, B, visible_logit, hidden_logit, out):
    """Ping & Ihler's Eq. (18): ``out[j, i] = tau(v_i = 1, h_j = 1)`` from the
    cavity fields.

    The edge belief is ``exp(v a + h g + w v h)`` normalised over the four
    states, with cavity log-odds ``a`` (of ``v_i``) and ``g`` (of ``h_j``);
    the largest exponent is subtracted before exponentiating, so that no
    ``exp(W)`` is ever formed.
    """
    n_hidden, n_visible = W.shape
    for j in range(n_hidden):
        for i in range(n_visible):
            a = visible_logit[i] - A[j, i]
            g = hidden_logit[j] - B[j, i]
            both = W[j, i] + a + g
            top = max(max(0.0, a), max(g, both))
            e11 = _exp_shifted(both - top)
            rest = _exp_shifted(-top) + _exp_shifted(a - top) + _exp_shifted(g - top)
            out[j, i] = e11 / (rest + e11)


@vector_jit
def _propagate(W, D, b, c, code, max_iter, tol, damping, A, B, logits, tau_v, tau_h):
    """Algorithm 1 for one model, in the caller's work arrays.

    ``A``, ``B`` (messages) and ``logits = (logit tau^v, logit tau^h)`` hold
    the final state on return, for the pairwise beliefs. Returns the number
    of iterations and whether the beliefs settled.
    """
    visible_logit, hidden_logit = logits
    # Algorithm 1's start: messages 1/2 (log-odds 0), beliefs sigmoid(bias).
    A[:] = 0.0
    B[:] = 0.0
    copy_(hidden_logit, c)
    _update_beliefs(b, tau_v)
    _update_beliefs(c, tau_h)
    for t in range(max_iter):
        _send_to_visible(W, D, A, B, hidden_logit, b, visible_logit, code, damping)
        change = _update_beliefs(visible_logit, tau_v)
        _send_to_hidden(W, D, A, B, visible_logit, c, hidden_logit, code, damping)
        change = max(change, _update_beliefs(hidden_logit, tau_h))
        if change < tol:
            return t + 1, True
    return max_iter, False


@vector_jit
def _belief_outputs(n_samples, n_hidden, n_visible, want_pairwise):
    """The arrays :func:`belief_propagation` and :func:`mean_field` return,
    allocated: singleton beliefs, pairwise beliefs (none unless asked for),
    iteration counts and convergence flags, one row per sample."""
    tau_v = np.empty((n_samples, n_visible))
    tau_h = np.empty((n_samples, n_hidden))
    pairwise = np.empty((n_samples if want_pairwise else 0, n_hidden, n_visible))
    n_iter = np.zeros(n_samples, dtype=np.int64)
    converged = np.zeros(n_samples, dtype=np.bool_)
    return tau_v, tau_h, pairwise, n_iter, converged


@vector_jit
def belief_propagation(W, B1, B2, code, max_iter, tol, damping, want_pairwise):
    """Run Algorithm 1 on each row of ``(B1, B2)``; see the module docstring.

    Parameters are float64 C-contiguous arrays ``W (n, m)``, ``B1 (S, m)``,
    ``B2 (S, n)``; ``code`` one of ``SUM_PRODUCT``, ``MIXED_PRODUCT``,
    ``MAX_PRODUCT``. A sample stops after the iteration in which no singleton
    belief moved by ``tol`` or more, or after ``max_iter`` iterations.

    Returns ``(tau_v (S, m), tau_h (S, n), pairwise (S, n, m) or (0, n, m),
    n_iter (S,), converged (S,))``.
    """
    n_hidden, n_visible = W.shape
    n_samples = B1.shape[0]
    # exp(-|W|) is in (0, 1]: computed once per call, it saves an exponential
    # per message update and never overflows (see _sum_message).
    D = np.exp(-np.abs(W))
    A = np.empty((n_hidden, n_visible))
    B = np.empty((n_hidden, n_visible))
    logits = (np.empty(n_visible), np.empty(n_hidden))
    tau_v, tau_h, pairwise, n_iter, converged = _belief_outputs(
        n_samples, n_hidden, n_visible, want_pairwise
    )
    for s in range(n_samples):
        n_iter[s], converged[s] = _propagate(
            W, D, B1[s], B2[s], code, max_iter, tol, damping, A, B, logits,
            tau_v[s], tau_h[s],
        )  # fmt: skip
        if want_pairwise:
            _pairwise_beliefs(W, A, B, logits[0], logits[1], pairwise[s])
    return tau_v, tau_h, pairwise, n_iter, converged


@vector_jit
def _field_(out, bias, rows, weights):
    """``out = bias + sum_k weights[k] rows[k]``, row by row (axpy form).

    Each output element is summed in the order ``k = 0, 1, ...`` as a plain
    loop would, but the inner loop runs along a contiguous row with no
    reduction, so LLVM vectorises it without reordering any sum (and the
    result does not depend on BLAS threading).
    """
    copy_(out, bias)
    for k in range(rows.shape[0]):
        weight = weights[k]
        for i in range(rows.shape[1]):
            out[i] += weight * rows[k, i]


@vector_jit
def _mean_field_one(W, WT, b, c, max_iter, tol, damping, logits, tau_v, tau_h):
    """Mean-field iterations for one model; returns ``(n_iter, converged)``."""
    visible_logit, hidden_logit, new = logits
    copy_(visible_logit, b)
    copy_(hidden_logit, c)
    _update_beliefs(b, tau_v)
    _update_beliefs(c, tau_h)
    for t in range(max_iter):
        _field_(new[: b.shape[0]], b, W, tau_h)
        _damp_(new[: b.shape[0]], visible_logit, damping)
        change = _update_beliefs(visible_logit, tau_v)
        _field_(new[: c.shape[0]], c, WT, tau_v)
        _damp_(new[: c.shape[0]], hidden_logit, damping)
        change = max(change, _update_beliefs(hidden_logit, tau_h))
        if change < tol:
            return t + 1, True
    return max_iter, False


@vector_jit
def mean_field(W, B1, B2, max_iter, tol, damping, want_pairwise):
    """Naive mean field: ``tau^v = sigmoid(b + W^T tau^h)``, then
    ``tau^h = sigmoid(c + W tau^v)``, until the beliefs settle.

    Same schedule (visible layer first), damping (of the log-odds) and
    stopping rule as :func:`belief_propagation`; the pairwise beliefs are the
    outer products ``tau^h tau^v^T``. Explicit loops rather than BLAS keep the
    summation order, hence the result, independent of BLAS threading.
    """
    n_hidden, n_visible = W.shape
    n_samples = B1.shape[0]
    WT = np.ascontiguousarray(W.T)
    logits = (
        np.empty(n_visible),
        np.empty(n_hidden),
        np.empty(max(n_visible, n_hidden)),
    )
    tau_v, tau_h, pairwise, n_iter, converged = _belief_outputs(
        n_samples, n_hidden, n_visible, want_pairwise
    )
    for s in range(n_samples):
        n_iter[s], converged[s] = _mean_field_one(
            W, WT, B1[s], B2[s], max_iter, tol, damping, logits, tau_v[s], tau_h[s]
        )
        if want_pairwise:
            for j in range(n_hidden):
                for i in range(n_visible):
                    pairwise[s, j, i] = tau_h[s, j] * tau_v[s, i]
    return tau_v, tau_h, pairwise, n_iter, converged
