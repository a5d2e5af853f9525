"""Coordinate descent on the L1-penalised Newton model of the FVBM's log-PL.

The proximal Newton solver (:mod:`sklearn_rbm._fvbm.proximal`) replaces the
smooth part of the objective by its second-order model at the current point
and maximises the model minus the L1 term over the free coordinates: the
intercepts and the free couplings. Minus the Hessian there is a sum of one
block per unit (unit ``j``'s logistic regression on its free columns), so the
model's gradient is kept block by block: ``U_j = B_j (new_j - theta_j)``, and
a change of one coupling ``m_jk`` updates ``U_j`` and ``U_k`` (two rows of
two blocks) instead of a product with the whole Hessian.

Layout (all flat, built by :class:`sklearn_rbm._fvbm.proximal.FreeSetModel`):

* block ``c`` (unit ``c``'s logistic regression) has its free columns at
  ``offsets[c]:offsets[c + 1]`` of the per-block arrays (``U`` here),
  ``k_c`` of them, its own intercept at ``self_pos[c]``; the block itself
  (``k_c x k_c``, symmetric, row-major) starts at ``block_start[c]`` of
  ``blocks``;
* free coefficient ``q`` is column ``pos_first[q]`` of block
  ``block_first[q]`` and, for a coupling shared by two units (the symmetric
  layout), also column ``pos_second[q]`` of block ``block_second[q]``
  (``-1`` in the node-wise layout, where each unit has its own).
"""

from .._numerics.jit import jit


@jit
def _add_row(U, u0, blocks, row_start, k, step):
    """``U[u0:u0 + k] += step * blocks[row_start:row_start + k]``."""
    for c in range(k):
        U[u0 + c] += blocks[row_start + c] * step


@jit
def l1_model_descent(
    blocks,
    block_start,
    offsets,
    self_pos,
    block_first,
    block_second,
    pos_first,
    pos_second,
    grad_b,
    grad_m,
    theta_b,
    theta_m,
    l2_b,
    l2_m,
    l1_m,
    new_b,
    new_m,
    U,
    min_curvature,
    max_sweeps,
    rtol,
):
    """Maximise the model ``g^T delta - delta^T (H + L2) delta / 2 - L1(theta +
    delta)`` by cyclic coordinate descent.

    ``new_b``, ``new_m`` hold ``theta + delta`` and are updated in place, as is
    ``U``. Each coordinate moves to the maximiser of the model along it (a
    soft-thresholded Newton step for a coupling, so couplings reach exact
    zeros). Sweeps stop when the curvature-weighted change of a sweep, ``sum
    h delta_c^2``, falls below ``rtol^2`` times the first sweep's, or after
    ``max_sweeps``; returns the number of sweeps.
    """
    n_blocks = grad_b.size
    n_pairs = grad_m.size
    first = 0.0
    sweep = 0
    while sweep < max_sweeps:
        change = 0.0
        for j in range(n_blocks):
            k = offsets[j + 1] - offsets[j]
            s = self_pos[j]
            row = block_start[j] + s * k
            h = max(blocks[row + s] + l2_b[j], min_curvature)
            delta = new_b[j] - theta_b[j]
            step = (grad_b[j] - U[offsets[j] + s] - l2_b[j] * delta) / h
            if step != 0.0:
                new_b[j] += step
                _add_row(U, offsets[j], blocks, row, k, step)
                change += h * step * step
        for q in range(n_pairs):
            j = block_first[q]
            kj = offsets[j + 1] - offsets[j]
            row_j = block_start[j] + pos_first[q] * kj
            h_data = blocks[row_j + pos_first[q]]
            model_product = U[offsets[j] + pos_first[q]]
            m = block_second[q]
            shared = m >= 0
            km = 0
            row_m = 0
            if shared:
                km = offsets[m + 1] - offsets[m]
                row_m = block_start[m] + pos_second[q] * km
                h_data += blocks[row_m + pos_second[q]]
                model_product += U[offsets[m] + pos_second[q]]
            h = max(h_data + l2_m[q], min_curvature)
            current = new_m[q]
            gradient = grad_m[q] - model_product - l2_m[q] * (current - theta_m[q])
            target = current + gradient / h
            threshold = l1_m[q] / h
            if target > threshold:
                target -= threshold
            elif target < -threshold:
                target += threshold
            else:
                target = 0.0
            step = target - current
            if step != 0.0:
                new_m[q] = target
                _add_row(U, offsets[j], blocks, row_j, kj, step)
                if shared:
                    _add_row(U, offsets[m], blocks, row_m, km, step)
                change += h * step * step
        sweep += 1
        if sweep == 1:
            first = change
        if change <= rtol * rtol * first:
            break
    return sweep


@jit
def per_block_values(
    offsets, self_pos, block_first, block_second, pos_first, pos_second,
    values_b, values_m, out,
):  # fmt: skip
    """Scatter packed values (intercepts, free coefficients) to the per-block layout."""
    for c in range(values_b.size):
        out[offsets[c] + self_pos[c]] = values_b[c]
    for q in range(values_m.size):
        out[offsets[block_first[q]] + pos_first[q]] = values_m[q]
        if block_second[q] >= 0:
            out[offsets[block_second[q]] + pos_second[q]] = values_m[q]
