"""Exact ``log Z`` of a binary RBM by Gray-code enumeration of one layer.

Orientation: ``W`` of shape ``(n_enumerated, n_summed)`` (the caller passes
``W`` or ``W.T`` so that the smaller layer is enumerated); sums are float64
whatever the dtype of ``W``.
"""

import numba
import numpy as np

from .._numerics.gray import gray_code, lowest_set_bit
from .._numerics.jit import jit, vector_jit
from .._numerics.vecmath import softplus

# States per block of the parallel enumeration: large enough that the O(k m)
# cost of computing a block's first state directly is negligible, small enough
# that both cores get many blocks.
_BLOCK_BITS = 12


@vector_jit
def _enumerate_block(W, summed_bias, enumerated_bias, first, count):
    """Log-sum-exp of the unnormalised log-marginals of states ``first..first+count``.

    States are visited in Gray-code order, so consecutive states differ in one
    unit ``j`` and the summed layer's pre-activations change by ``+-W[j]``:
    O(n_summed) per state instead of O(n_enumerated * n_summed). Returns
    ``(max, sum of exp(term - max))`` for a stable combination across blocks.
    """
    n_enum, n_sum = W.shape
    state = gray_code(first)
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
            j = lowest_set_bit(first + step)
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


def log_partition_enumerate(W, summed_bias, enumerated_bias):
    """``log sum_s exp(a^T s + sum_i softplus(summed_bias_i + (W^T s)_i))``.

    ``s`` runs over all ``2 ** W.shape[0]`` binary states of the enumerated
    layer (Gray-code enumeration; the layer with fewer units is enumerated).
    Up to ``2 ** _BLOCK_BITS`` states are one block, enumerated serially:
    starting numba's threads costs more than such a block (milliseconds when
    the cores are busy, for a conditional RBM's per-row enumeration of a few
    states); larger ones go to :func:`_log_partition_blocks`. The choice is
    made here, in Python, so that a small model never compiles the parallel
    kernel (seconds of a first fit's compile time).
    """
    if W.shape[0] <= _BLOCK_BITS:
        return _log_partition_one_block(W, summed_bias, enumerated_bias)
    return _log_partition_blocks(W, summed_bias, enumerated_bias)


@jit
def _log_partition_one_block(W, summed_bias, enumerated_bias):
    """:func:`log_partition_enumerate` of at most ``2 ** _BLOCK_BITS`` states."""
    first = np.int64(0)  # typed as the parallel path's: one specialisation
    running_max, running_sum = _enumerate_block(
        W, summed_bias, enumerated_bias, first, 1 << W.shape[0]
    )
    return running_max + np.log(running_sum)


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
