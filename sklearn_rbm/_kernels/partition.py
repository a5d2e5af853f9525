"""Log partition functions of binary RBMs: Gray-code enumeration, AIS, and
reverse annealing (RAISE) for per-example log-likelihoods.

Orientation: ``W`` of shape ``(n_enumerated, n_summed)`` for the enumeration
(the caller passes ``W`` or ``W.T`` so that the smaller layer is enumerated),
``(n_hidden, n_visible)`` for AIS and RAISE. Log-weights and sums are float64
whatever the dtype of ``W``.
"""

import numba
import numpy as np

from ._jit import jit
from .blas import gemm_
from .gibbs import add_bias_sample_, add_bias_sample_keyed_
from .random import new_key, uniform
from .vecmath import exp_minus_abs, log_positive, softplus
from .vecmath import jit as vector_jit

# States per block of the parallel enumeration: large enough that the O(k m)
# cost of computing a block's first state directly is negligible, small enough
# that both cores get many blocks.
_BLOCK_BITS = 12
_TWO_POW_53 = 9007199254740992.0


@jit
def _gray(i):
    return i ^ (i >> 1)


@jit
def _lowest_set_bit(i):
    bit = 0
    while (i & 1) == 0:
        i >>= 1
        bit += 1
    return bit


@vector_jit
def _enumerate_block(W, summed_bias, enumerated_bias, first, count):
    """Log-sum-exp of the unnormalised log-marginals of states ``first..first+count``.

    States are visited in Gray-code order, so consecutive states differ in one
    unit ``j`` and the summed layer's pre-activations change by ``+-W[j]``:
    O(n_summed) per state instead of O(n_enumerated * n_summed). Returns
    ``(max, sum of exp(term - max))`` for a stable combination across blocks.
    """
    n_enum, n_sum = W.shape
    state = _gray(first)
    pre = summed_bias.astype(np.float64)
    softplus_pre = np.empty(n_sum)
    linear = 0.0
    for j in range(n_enum):
        if (state >> j) & 1:
            linear += enumerated_bias[j]
            for i in range(n_sum):
                pre[i] += W[j, i]
    running_max = -np.inf
    running_sum = 0.0
    for step in range(count):
        if step > 0:
            j = _lowest_set_bit(first + step)
            sign = 1.0 if ((state >> j) & 1) == 0 else -1.0
            state ^= 1 << j
            linear += sign * enumerated_bias[j]
            for i in range(n_sum):
                pre[i] += sign * W[j, i]
        # Softplus into a scratch row (a loop that vectorises), then the sum.
        for i in range(n_sum):
            softplus_pre[i] = softplus(pre[i])
        term = linear
        for i in range(n_sum):
            term += softplus_pre[i]
        if term > running_max:
            running_sum = running_sum * np.exp(running_max - term) + 1.0
            running_max = term
        else:
            running_sum += np.exp(term - running_max)
    return running_max, running_sum


@jit
def log_partition_enumerate(W, summed_bias, enumerated_bias):
    """``log sum_s exp(a^T s + sum_i softplus(summed_bias_i + (W^T s)_i))``.

    ``s`` runs over all ``2 ** W.shape[0]`` binary states of the enumerated
    layer (Gray-code enumeration; the layer with fewer units is enumerated).
    Up to ``2 ** _BLOCK_BITS`` states are one block, enumerated serially:
    starting numba's threads costs more than such a block (milliseconds when
    the cores are busy, for a conditional RBM's per-row enumeration of a few
    states); larger ones go to :func:`_log_partition_blocks`.
    """
    if W.shape[0] <= _BLOCK_BITS:
        first = np.int64(0)  # typed as the parallel path's: one specialisation
        running_max, running_sum = _enumerate_block(
            W, summed_bias, enumerated_bias, first, 1 << W.shape[0]
        )
        return running_max + np.log(running_sum)
    return _log_partition_blocks(W, summed_bias, enumerated_bias)


@jit(parallel=True)
def _log_partition_blocks(W, summed_bias, enumerated_bias):
    """:func:`log_partition_enumerate` by blocks of states processed in
    parallel and combined in a fixed order, so the result does not depend on
    the thread count."""
    n_enum = W.shape[0]
    block_size = 1 << _BLOCK_BITS
    n_blocks = 1 << (n_enum - _BLOCK_BITS)
    maxima = np.empty(n_blocks)
    sums = np.empty(n_blocks)
    for block in numba.prange(n_blocks):
        maxima[block], sums[block] = _enumerate_block(
            W, summed_bias, enumerated_bias, block * block_size, block_size
        )
    overall_max = maxima.max()
    total = 0.0
    for block in range(n_blocks):
        total += sums[block] * np.exp(maxima[block] - overall_max)
    return overall_max + np.log(total)


@vector_jit
def _ais_weights_and_hidden_(log_w, A, V, c, bias_shift, beta, beta_prev, key, sample):
    """Add each chain's log-weight increment; optionally replace ``A`` by ``h`` draws.

    ``A`` holds ``V W^T`` on entry. The increment of chain ``r`` is
    ``log p*_beta(v_r) - log p*_beta_prev(v_r)``, whose hidden part is
    ``sum_j softplus(beta a_j) - softplus(beta_prev a_j)``. Each term is
    computed as ``(beta - beta_prev) max(a_j, 0) + log(1 + e_j) - log(1 + e'_j)``
    with ``e_j = exp(-beta |a_j|)``, ``e'_j = exp(-beta_prev |a_j|)``, so the
    difference of two close softplus values loses nothing to cancellation.
    ``e_j`` also gives ``sigmoid(beta a_j)`` for drawing ``h``. The terms go to
    a scratch row first: that loop has no reduction and vectorises (the
    ``vecmath`` functions); the sum that follows is a cheap serial pass.
    """
    n_chains, n_hidden = A.shape
    n_visible = V.shape[1]
    step = beta - beta_prev
    terms = np.empty(n_hidden)
    for r in range(n_chains):
        for j in range(n_hidden):
            a = A[r, j] + c[j]
            e = exp_minus_abs(beta * a)
            e_prev = exp_minus_abs(beta_prev * a)
            terms[j] = step * max(a, 0.0) + (
                log_positive(1.0 + e) - log_positive(1.0 + e_prev)
            )
            if sample:
                s = 1.0 / (1.0 + e)
                p = s if a >= 0.0 else e * s
                A[r, j] = 1.0 if uniform(key, r * n_hidden + j) < p else 0.0
        visible_linear = 0.0
        for i in range(n_visible):
            visible_linear += V[r, i] * bias_shift[i]
        increment = step * visible_linear
        for j in range(n_hidden):
            increment += terms[j]
        log_w[r] += increment


@vector_jit
def _annealed_visible_bias_(out, base_bias, b, beta):
    """In place: ``out = (1 - beta) base_bias + beta b``, the visible biases of
    ``p_beta`` (its couplings and hidden biases are ``beta W`` and ``beta c``)."""
    for i in range(out.shape[0]):
        out[i] = (1.0 - beta) * base_bias[i] + beta * b[i]


@jit
def ais_log_weights(W, b, c, base_bias, betas, n_chains, rng):
    """Annealed importance sampling from the base-rate model to the RBM.

    Salakhutdinov & Murray (2008). The intermediate distributions are
    ``p*_beta(v) = exp(((1-beta) base_bias + beta b)^T v)
    prod_j (1 + exp(beta (W_j v + c_j)))``; chains start from exact samples of
    the base model (``beta = 0``). At each temperature one GEMM gives the
    hidden pre-activations ``V W^T``, used both for the weight increment and
    for drawing ``h``; a second GEMM gives the visible pre-activations for
    drawing ``v``: two matrix products per temperature, the element-wise work
    fused around them (serially: see the note on BLAS threads in ``gibbs.py``).
    Returns the float64 log importance weights, one per chain.
    """
    n_hidden, n_visible = W.shape
    bias_shift = (b - base_bias).astype(np.float64)
    V = np.zeros((n_chains, n_visible), dtype=W.dtype)
    add_bias_sample_(V, base_bias, rng)
    log_w = np.zeros(n_chains)
    visible_bias = np.empty(n_visible, dtype=W.dtype)
    n_betas = betas.shape[0]
    for k in range(1, n_betas):
        beta, beta_prev = betas[k], betas[k - 1]
        last = k == n_betas - 1
        A = np.dot(V, W.T)
        key = new_key(rng)
        _ais_weights_and_hidden_(
            log_w, A, V, c, bias_shift, beta, beta_prev, key, not last
        )
        if last:
            break
        # A now holds h ~ p_beta(h | v); draw v ~ p_beta(v | h).
        V = np.dot(A, W)
        V *= beta
        _annealed_visible_bias_(visible_bias, base_bias, b, beta)
        add_bias_sample_(V, visible_bias, rng)
    return log_w


@jit
def _step_key(key, step):
    """The key of sampling step ``step`` in the stream ``key``: two of the
    stream's uniforms make a fresh 64-bit key, as ``new_key`` makes one from
    two Generator draws."""
    high = np.uint64(uniform(key, 2 * step) * _TWO_POW_53)
    low = np.uint64(uniform(key, 2 * step + 1) * _TWO_POW_53)
    return (high << np.uint64(11)) ^ low


@jit
def raise_log_weights(V_data, W, b, c, base_bias, betas, n_chains, keys):
    """Reverse annealing from each data row down to the base-rate model.

    RAISE, Burda, Grosse & Salakhutdinov (2015), Algorithm 1, on the path of
    :func:`ais_log_weights` (``0 = beta_0 < ... < beta_K = 1``). Every row
    ``v`` of ``V_data`` starts ``n_chains`` chains at ``v_K = v``; for
    ``k = K, ..., 1`` a chain makes the Gibbs transition that leaves
    ``p_{beta_k}`` invariant (``h ~ p_{beta_k}(h | v)``, then
    ``v ~ p_{beta_k}(v | h)``), giving ``v_{k-1}``, and adds
    ``log p*_{beta_{k-1}}(v_{k-1}) - log p*_{beta_k}(v_{k-1})``. Returned, of
    shape ``(n_examples, n_chains)`` and float64, is that sum; the caller adds
    ``log p*_1(v) - log Z_0`` (the free energy and the base model) to get the
    log importance weight.

    All ``n_examples * n_chains`` chains advance together: per temperature
    one GEMM ``V W^T`` (the weight increment at ``beta_{k-1}``, ``beta_k``
    and the hidden draw at ``beta_{k-1}`` share it, as in forward AIS) and one
    GEMM ``beta_{k-1} H W`` for the visible draw. The path (the increment and
    the conditionals of ``p_beta``) is that of forward AIS, in
    ``_ais_weights_and_hidden_`` and ``_annealed_visible_bias_``; this
    function only runs it backwards and keeps the books.

    Random numbers are keyed per example: ``keys[e]`` (uint64) is the stream
    of row ``e``, and sampling step ``s`` of its chains uses the key
    ``_step_key(keys[e], s)`` with the counter ``chain * n_units + unit``. So
    a row's chains draw the same numbers whichever rows share the call.
    """
    n_examples, n_visible = V_data.shape
    n_hidden = W.shape[0]
    V = np.empty((n_examples * n_chains, n_visible), dtype=W.dtype)
    for e in range(n_examples):
        for r in range(e * n_chains, (e + 1) * n_chains):
            V[r] = V_data[e]
    A = np.empty((n_examples * n_chains, n_hidden), dtype=W.dtype)
    log_w = np.zeros(n_examples * n_chains)
    bias_shift = (b - base_bias).astype(np.float64)
    visible_bias = np.empty(n_visible, dtype=W.dtype)
    top = betas.shape[0] - 1
    for k in range(top, -1, -1):
        # The state is v_k (the data at the top, else the draw of the
        # transition at beta_{k+1}): add log p*_k(v_k) - log p*_{k+1}(v_k),
        # then start the transition at beta_k with h ~ p_k(h | v_k). At the
        # top beta_above = beta = 1 and the increment is exactly zero.
        beta, beta_above = betas[k], betas[min(k + 1, top)]
        gemm_(1.0, V, W.T, 0.0, A)
        step = 2 * (top - k)
        for e in range(n_examples):
            rows = slice(e * n_chains, (e + 1) * n_chains)
            _ais_weights_and_hidden_(
                log_w[rows], A[rows], V[rows], c, bias_shift, beta, beta_above,
                _step_key(keys[e], step), k > 0,
            )  # fmt: skip
        if k == 0:
            break
        # A holds h ~ p_beta(h | v_k); V becomes v ~ p_beta(v | h).
        gemm_(beta, A, W, 0.0, V)
        _annealed_visible_bias_(visible_bias, base_bias, b, beta)
        for e in range(n_examples):
            add_bias_sample_keyed_(
                V[e * n_chains : (e + 1) * n_chains],
                visible_bias,
                _step_key(keys[e], step + 1),
            )
    return log_w.reshape((n_examples, n_chains))
