"""Compiled kernels of the Potts family.

Coupling layout. The fitted model keeps ``J`` of shape (L, L, q, q) with
``J[i, j, a, b] = J[j, i, b, a]`` and ``J[i, i] = 0``. The kernels read the
site-major transpose ``Jt[i, j, b, a] = J[i, j, a, b]`` (``Jt`` is ``J`` with
its last two axes swapped): the conditional field of site ``i``,
``H_i(a) = h_i(a) + sum_j J[i, j, a, x_j]``, is then a sum of ``L``
contiguous rows ``Jt[i, j, x_j, :]`` (a gather, not a one-hot matrix
product), and every site's rows lie in one contiguous (L, q, q) block.
The pseudo-likelihood objective's own kernels use a row-major layout,
relative to each site's most common state, that gives every site's field
of a sequence at once (:func:`pseudo_likelihood_residuals`).

Parallel loops run over sites (pseudo-likelihood) or rows (weights); each
iteration writes only its own slice and sums are taken in a fixed order
afterwards, so the results do not depend on the thread count.
"""

import numba
import numpy as np
from numba import types

from .._core.numba_compat import inline_overload
from .._numerics.jit import jit
from .._numerics.reduction import dot
from .._numerics.steps import copy_
from .._numerics.vecmath import exp_nonpositive_native

# -- sequence weights ---------------------------------------------------------


@jit(parallel=True)
def neighbour_counts(XT, multiplicity, threshold):
    """For each distinct row ``s`` (column ``s`` of the transposed codes
    ``XT``, shape (L, n)), the number of rows, counted with ``multiplicity``
    and itself included, that agree with it in at least ``threshold``
    columns.

    The comparison runs column by column over all other rows at once (a
    contiguous byte loop that vectorises), blocks of 64 rows per thread; each
    count is a sum in row order, so the result does not depend on the thread
    count.
    """
    L, n = XT.shape
    counts = np.empty(n)
    n_blocks = (n + 63) // 64
    for block in numba.prange(n_blocks):
        same = np.empty(n, dtype=np.uint16)
        for s in range(block * 64, min(n, block * 64 + 64)):
            same[:] = 0
            for k in range(L):
                code = XT[k, s]
                column = XT[k]
                for t in range(n):
                    same[t] += np.uint16(column[t] == code)
            total = 0.0
            for t in range(n):
                if same[t] >= threshold:
                    total += multiplicity[t]
            counts[s] = total
    return counts


# -- pseudo-likelihood ----------------------------------------------------------


@jit(inline="always")
def _site_fields(H, h_i, Jt_i, x):
    """``H <- h_i + sum_j Jt_i[j, x_j]``, site ``i``'s conditional fields
    in the site-major layout (``Jt_i[i] = 0``)."""
    for a in range(H.shape[0]):
        H[a] = h_i[a]
    for j in range(x.shape[0]):
        row = Jt_i[j, x[j]]
        for a in range(H.shape[0]):
            H[a] += row[a]


@jit(inline="always")
def _exponentiate(H):
    """``H <- exp(H - max(H))`` in place; returns ``(max(H), sum)``, so that
    ``log sum exp(H) = top + log(sum)`` and ``H / sum`` is the softmax.

    The exponentials in ``H``'s precision, branch-free (``vecmath``): they
    vectorise, where ``np.exp`` is a scalar call per state (a fifth of the
    conditional-fields kernel's time at q = 21)."""
    top = H[0]
    for a in range(1, H.shape[0]):
        top = max(top, H[a])
    for a in range(H.shape[0]):
        H[a] = exp_nonpositive_native(H[a] - top)
    z = 0.0
    for a in range(H.shape[0]):
        z += H[a]
    return top, z


@jit(inline="always")
def _add_one(out, row):
    """``out += row``."""
    for m in range(out.shape[0]):
        out[m] += row[m]


@jit(inline="always")
def _add_four(out, r0, r1, r2, r3):
    """``out += (r0 + r1) + (r2 + r3)``: one pass over ``out`` for four rows.

    The rows stream from the last-level cache; four at once keep four streams
    in flight and load and store ``out`` once instead of four times (on
    PF00071, L = 161, q = 21, 2 threads: the conditional fields 38 to 25 ms,
    the scatter 31 to 22 ms per evaluation)."""
    for m in range(out.shape[0]):
        out[m] += (r0[m] + r1[m]) + (r2[m] + r3[m])


@jit(inline="always")
def _next_group(x, order, common, saves, k, picked):
    """From column ``k`` of ``order``, the next sites (at most four, written
    to ``picked``) where row ``x`` is not in its most common state, up to
    the first partial sum to keep (``saves[end]``) or the last column.
    Returns ``(end, number picked)``."""
    n = 0
    end = k
    while end < x.shape[0] and n < 4:
        j = order[end]
        end += 1
        if x[j] != common[j]:
            picked[n] = j
            n += 1
        if saves[end]:
            break
    return end, n


@jit
def _prefix_checkpoints(X, order, first, last):
    """For the rows ``first .. last - 1`` of a block: ``shared[u]``, the
    number of leading columns (in ``order``) row ``first + u`` shares with
    the row before it (0 for the first), and ``saves[u, k]``, whether that
    row must keep its partial sum after ``k`` columns because a later row
    starts from it (the latest row before it that sums past column ``k``)."""
    L = X.shape[1]
    n = last - first
    shared = np.zeros(n, dtype=np.int64)
    for u in range(1, n):
        s = first + u
        k = 0
        while k < L and X[s, order[k]] == X[s - 1, order[k]]:
            k += 1
        shared[u] = k
    saves = np.zeros((n, L + 1), dtype=np.bool_)
    for u in range(1, n):
        k = shared[u]
        if k > 0:
            r = u - 1
            while shared[r] >= k:
                r -= 1
            saves[r, k] = True
    return shared, saves


@jit(parallel=True)
def pseudo_likelihood_residuals(X, order, common, w, base, D, R, row_loss, start):
    """The negative log pseudo-likelihood of rows ``start .. start + len(R)``
    and its derivatives in their conditional fields.

    ``D`` (L, q, L q) is the row-major coupling layout relative to the
    sites' most common states ``common`` (:func:`stage_parameters`): with
    ``K[j, b, i q + a] = J[i, j, a, b]``, ``D[j, b] = K[j, b] - K[j,
    common[j]]`` for the other states, and ``base = h + sum_j K[j,
    common[j]]``, the fields of a row in every site's most common state.
    The conditional fields of all sites of row ``s`` are then ``H_s = base +
    sum_j D[j, x_sj]`` over the sites where ``x_sj`` is not the most common
    state: additions of contiguous vectors of length ``L q`` (long loops
    that vectorise, where the site-major layout adds ``L^2`` vectors of
    length ``q``), 0.58 of the sites on PF00071.

    The sum runs over the columns in ``order``, so a row that agrees with
    the one before it in its first ``k`` columns of ``order`` starts from the
    partial sum after ``k`` columns: with the rows sorted in that column
    order and the most conserved columns first, neighbouring rows share
    long prefixes. The running sum is accumulated in the row's own output
    ``R[s - start]`` (in cache) and copied out only at the partial sums a
    later row starts from (:func:`_prefix_checkpoints`). With both, a fit
    adds 0.53 (PF00071) and 0.42 (PF00014) of the ``L`` rows per sequence.
    The rows of ``D`` are added four at a time (:func:`_add_four`), groups
    ending early only where a partial sum must be kept.

    ``R[s - start]`` is overwritten with ``w_s (P_si - onehot(x_si))`` for
    every site, ``row_loss[s]`` with ``-w_s sum_i log P(x_si | x_s,-i)``.
    Blocks of 64 rows per thread.
    """
    L = X.shape[1]
    q = D.shape[1]
    size = D.shape[2]
    stop = min(X.shape[0], start + R.shape[0])
    n_blocks = (stop - start + 63) // 64
    for block in numba.prange(n_blocks):
        first = start + block * 64
        last = min(stop, first + 64)
        shared, saves = _prefix_checkpoints(X, order, first, last)
        checkpoint = np.empty((L + 1, size), dtype=D.dtype)
        copy_(checkpoint[0], base)
        picked = np.empty(4, dtype=np.int64)
        for u in range(last - first):
            s = first + u
            H = R[s - start]
            copy_(H, checkpoint[shared[u]])
            k = shared[u]
            while k < L:
                k, n = _next_group(X[s], order, common, saves[u], k, picked)
                if n == 4:
                    _add_four(
                        H,
                        D[picked[0], X[s, picked[0]]],
                        D[picked[1], X[s, picked[1]]],
                        D[picked[2], X[s, picked[2]]],
                        D[picked[3], X[s, picked[3]]],
                    )
                else:
                    for c in range(n):
                        _add_one(H, D[picked[c], X[s, picked[c]]])
                if saves[u, k]:
                    copy_(checkpoint[k], H)
            ws = w[s]
            loss = 0.0
            for i in range(L):
                Hi = H[i * q : (i + 1) * q]
                xi = X[s, i]
                observed = Hi[xi]
                top, z = _exponentiate(Hi)
                loss += top + np.log(z) - observed
                scale = ws / z
                for a in range(q):
                    Hi[a] *= scale
                Hi[xi] -= ws
            row_loss[s] = ws * loss


def _segment(v, lo, hi):
    """``v[lo:hi]``, or None for None (compiled: see the overload below)."""
    return None if v is None else v[lo:hi]


@inline_overload(_segment)
def _segment_compiled(v, lo, hi):
    if isinstance(v, types.NoneType):
        return lambda v, lo, hi: None
    return lambda v, lo, hi: v[lo:hi]


# The helpers below take ``d`` and ``scale`` as arguments (not inlined in
# numba's IR): only there is ``is None`` decided at compile time.


@jit
def _times(v, scale, k):
    """``v * scale[k]``, or ``v`` when ``scale`` is None."""
    if scale is None:
        return v
    return v * scale[k]


@jit
def _parameter(x, d, t, scale, k):
    """``theta[k] = (x[k] + t d[k]) scale[k]`` (``d`` or ``scale`` None: left
    out): the parameters at a line-search step of the scaled variables,
    never stored as a vector."""
    v = np.float64(x[k])
    if d is not None:
        v += t * d[k]
    return _times(v, scale, k)


@jit
def _block_slope(v, d):
    """``v . d`` in float64, 0 when ``d`` is None."""
    if d is None:
        return 0.0
    return dot(v, d)


@jit
def _along(v, d, k):
    """``v * d[k]``, or 0 when ``d`` is None."""
    if d is None:
        return 0.0
    return v * d[k]


@jit(inline="always")
def _stage_block(x, d, t, scale, i, j, lo, common, v, D):
    """One pair block of :func:`stage_parameters`: its values into ``v``,
    then ``D``'s row and column entries relative to the most common states;
    returns the block's sum of squares and largest magnitude."""
    q = D.shape[1]
    # Views that start at 0: an offset index needs a wraparound check.
    xp, dp = x[lo : lo + q * q], _segment(d, lo, lo + q * q)
    sp = _segment(scale, lo, lo + q * q)
    for k in range(q * q):
        v[k] = _parameter(xp, dp, t, sp, k)
    top = 0.0
    for k in range(q * q):
        top = max(top, abs(v[k]))
    ci, cj = common[i], common[j]
    common_i = v[ci * q : (ci + 1) * q]
    for a in range(q):
        va = v[a * q : (a + 1) * q]
        row = D[i, a, j * q : (j + 1) * q]
        if a == ci:
            for b in range(q):
                row[b] = va[b]
        else:
            for b in range(q):
                row[b] = va[b] - common_i[b]
        column = D[j, :, i * q + a]
        for b in range(q):
            column[b] = va[b] - va[cj]
        column[cj] = va[cj]
    return dot(v, v), top


@jit(parallel=True)
def stage_parameters(x, d, t, scale, rows, cols, common, base, D):
    """The fields of the most common states ``base`` and the relative
    couplings ``D`` (L, q, L q) of :func:`pseudo_likelihood_residuals` (both
    in ``D``'s dtype) from the parameter vector ``theta`` of ``_parameter``
    (the fields, then the pair blocks ``J[rows[p], cols[p]]``); the diagonal
    blocks of ``D`` are left as they are (zero).

    Each pair block is evaluated once into a local buffer, then written
    twice: ``D[i, a, j q + b]`` and ``D[j, b, i q + a]``, less the values
    of the block's most common states ``common[i]`` and ``common[j]``
    (except in those states' own rows, which keep ``K``), in float64 before
    rounding. ``base = h + sum_j D[j, common[j]]`` is summed in float64.

    Returns ``(max |theta|, ||theta_h||^2, ||theta_e||^2)``, the sums per
    pair block added in pair order (independent of the thread count).
    """
    L, q = D.shape[0], D.shape[1]
    n_fields = base.size
    n_pairs = rows.size
    squares = np.empty(n_pairs)
    largest = np.zeros(n_pairs)
    n_chunks = (n_pairs + 63) // 64
    for chunk in numba.prange(n_chunks):
        v = np.empty(q * q)  # one block's values, reused by 64 pairs
        for p in range(chunk * 64, min(n_pairs, chunk * 64 + 64)):
            squares[p], largest[p] = _stage_block(
                x, d, t, scale, rows[p], cols[p], n_fields + p * q * q, common, v, D
            )
    fields = 0.0
    top = 0.0
    for k in range(n_fields):
        value = _parameter(x, d, t, scale, k)
        fields += value * value
        top = max(top, abs(value))
    # base, in slices of 512 entries: each site's row read contiguously.
    for lo in numba.prange((n_fields + 511) // 512):
        segment = slice(lo * 512, min(n_fields, lo * 512 + 512))
        total_fields = np.empty(segment.stop - segment.start)
        for k in range(total_fields.size):
            total_fields[k] = _parameter(x, d, t, scale, segment.start + k)
        for j in range(L):
            row = D[j, common[j], segment]
            for k in range(total_fields.size):
                total_fields[k] += row[k]
        copy_(base[segment], total_fields)
    coupling = 0.0
    for p in range(n_pairs):
        coupling += squares[p]
        top = max(top, largest[p])
    return top, fields, coupling


@jit(parallel=True)
def gather_gradient(
    G, grad_h, unit, x, d, t, scale, rows, cols, lambda_h, lambda_e, out
):
    """The penalised objective's gradient in the variables of ``_parameter``:
    ``out[k] = scale[k] (unit * data[k] + 2 lambda theta[k])``, where the data
    term's gradient is ``grad_h`` for the fields and, for a coupling
    ``J[i, j, a, b]``, the two entries ``G[i, a, j q + b] + G[j, b, i q + a]``
    of the row-major free-entry gradient (:func:`scatter_residuals`).

    Returns ``out . d`` (0 when ``d`` is None, ``out`` as stored), summed per
    pair block in pair order.
    """
    q = G.shape[1]
    n_fields = grad_h.size
    n_pairs = rows.size
    slopes = np.empty(n_pairs)
    for p in numba.prange(n_pairs):
        i, j = rows[p], cols[p]
        lo = n_fields + p * q * q
        xp, dp = x[lo : lo + q * q], _segment(d, lo, lo + q * q)
        sp, op = _segment(scale, lo, lo + q * q), out[lo : lo + q * q]
        for a in range(q):
            row = G[i, a, j * q : (j + 1) * q]
            column = G[j, :, i * q + a]
            for b in range(q):
                k = a * q + b
                data = np.float64(row[b]) + np.float64(column[b])
                v = unit * data + 2.0 * lambda_e * _parameter(xp, dp, t, sp, k)
                op[k] = _times(v, sp, k)
        # Apart: an ordered sum in the loop above would keep it from
        # vectorising (a third of its time).
        slopes[p] = _block_slope(op, dp)
    total = 0.0
    for k in range(n_fields):
        v = unit * grad_h[k] + 2.0 * lambda_h * _parameter(x, d, t, scale, k)
        v = _times(v, scale, k)
        out[k] = v
        total += _along(v, d, k)
    for p in range(n_pairs):
        total += slopes[p]
    return total


@jit
def _rows_by_state(column, q):
    """The positions in ``column`` grouped by their state, each group in
    increasing order: ``members[offsets[b] : offsets[b + 1]]`` hold state
    ``b`` (a counting sort)."""
    offsets = np.zeros(q + 1, dtype=np.int64)
    for v in column:
        offsets[v + 1] += 1
    for b in range(q):
        offsets[b + 1] += offsets[b]
    members = np.empty(column.size, dtype=np.int64)
    cursor = offsets[:q].copy()
    for u in range(column.size):
        members[cursor[column[u]]] = u
        cursor[column[u]] += 1
    return members, offsets


@jit(parallel=True)
def scatter_residuals(X, R, G, start, common):
    """``G[j, x_sj] += R[s - start]`` for every row of the chunk ``R`` and
    every site ``j`` whose state is not ``common[j]``: the coupling gradient
    in the row-major layout of :func:`pseudo_likelihood_residuals`, but for
    the rows ``G[j, common[j]]`` (cleared; :func:`complete_common_rows` fills
    them from the total after the last chunk, so that the site's most common
    state, 42 % of the rows on PF00071, costs no additions). ``G`` is cleared
    by the first chunk (``start = 0``; each row while it is in cache, rather
    than a pass of its own). Each ``G[j, b]`` sums the residuals of the rows
    in state ``b`` at ``j`` four at a time (:func:`_add_four`), in row order.
    Parallel over ``j``: the sums do not depend on the thread count."""
    L = X.shape[1]
    q = G.shape[1]
    stop = min(X.shape[0], start + R.shape[0])
    for j in numba.prange(L):
        members, offsets = _rows_by_state(X[start:stop, j], q)
        for b in range(q):
            out = G[j, b]
            if start == 0:
                out[:] = 0.0
            if b == common[j]:
                continue
            u, last = offsets[b], offsets[b + 1]
            while u + 4 <= last:
                _add_four(
                    out,
                    R[members[u]],
                    R[members[u + 1]],
                    R[members[u + 2]],
                    R[members[u + 3]],
                )
                u += 4
            for v in range(u, last):
                _add_one(out, R[members[v]])


@jit(parallel=True)
def complete_common_rows(G, total, common):
    """``G[j, common[j]] = total - sum_{b != common[j]} G[j, b]``: the rows
    :func:`scatter_residuals` leaves out, from ``total``, the float64 sum of
    every row's residuals (a site's states partition the rows)."""
    L, q, size = G.shape
    for j in numba.prange(L):
        rest = total.copy()
        for b in range(q):
            if b != common[j]:
                other = G[j, b]
                for m in range(size):
                    rest[m] -= other[m]
        out = G[j, common[j]]
        for m in range(size):
            out[m] = rest[m]


@jit
def site_terms(X, w, i, h, W, grad_h, grad_W):
    """Site ``i``'s conditional alone: ``-sum_s w_s log P(x_si | x_s,-i)``
    under the fields ``h`` (q,) and couplings ``W[j, b, a]`` (of ``x_i = a``
    with ``x_j = b``; ``W[i]`` is not read), and its gradient (overwritten).
    Serial: the node-wise solver runs sites in parallel threads."""
    n, L = X.shape
    q = h.shape[0]
    H = np.empty(q)
    P = np.empty(q)
    grad_h[:] = 0.0
    grad_W[:] = 0.0
    loss = 0.0
    for s in range(n):
        for a in range(q):
            H[a] = h[a]
        for j in range(L):
            if j != i:
                row = W[j, X[s, j]]
                for a in range(q):
                    H[a] += row[a]
        ws = w[s]
        xi = X[s, i]
        observed = H[xi]
        top, z = _exponentiate(H)
        loss += ws * (top + np.log(z) - observed)
        scale = ws / z
        for a in range(q):
            P[a] = H[a] * scale
        P[xi] -= ws
        for a in range(q):
            grad_h[a] += P[a]
        for j in range(L):
            if j != i:
                row = grad_W[j, X[s, j]]
                for a in range(q):
                    row[a] += P[a]
    return loss


@jit(parallel=True)
def conditional_probabilities(X, h, Jt):
    """``P(x_si = a | x_s,-i)`` of every row, site and state, shape (n, L, q)."""
    n, L = X.shape
    q = h.shape[1]
    out = np.empty((n, L, q))
    for s in numba.prange(n):
        for i in range(L):
            H = out[s, i]
            _site_fields(H, h[i], Jt[i], X[s])
            _, z = _exponentiate(H)
            for a in range(q):
                H[a] /= z
    return out


@jit(parallel=True)
def pseudo_likelihood_hessian_product(X, w, P, vh, Vt, out_h, out_Jt):
    """The data term's Hessian times a direction ``(vh, Vt)`` (``Vt`` site
    major, both entries of each coupling set), as free-entry derivatives like
    :func:`pseudo_likelihood_terms`'s gradient.

    Each conditional is a softmax of the fields ``H_si``, linear in the
    parameters; its negative log has the Hessian ``diag(P) - P P^T`` in
    ``H_si``, so the product is the scatter of ``w_s P (dH - <P, dH>)`` with
    ``dH_si`` the direction's conditional fields (a gather). ``P`` are the
    conditionals at the expansion point (:func:`conditional_probabilities`).
    """
    n, L = X.shape
    q = vh.shape[1]
    for i in numba.prange(L):
        D = np.empty(q)
        G = out_Jt[i]
        G[:] = 0.0
        gh = out_h[i]
        gh[:] = 0.0
        Vi = Vt[i]
        for s in range(n):
            for a in range(q):
                D[a] = vh[i, a]
            for j in range(L):
                row = Vi[j, X[s, j]]
                for a in range(q):
                    D[a] += row[a]
            Ps = P[s, i]
            mean = 0.0
            for a in range(q):
                mean += Ps[a] * D[a]
            ws = w[s]
            for a in range(q):
                D[a] = ws * Ps[a] * (D[a] - mean)
                gh[a] += D[a]
            for j in range(L):
                row = G[j, X[s, j]]
                for a in range(q):
                    row[a] += D[a]


@jit(parallel=True)
def site_log_conditionals(X, h, Jt):
    """``log P(x_si | x_s,-i)`` of every row and site, shape (n, L)."""
    n, L = X.shape
    q = h.shape[1]
    out = np.empty((n, L))
    for s in numba.prange(n):
        H = np.empty(q)
        for i in range(L):
            _site_fields(H, h[i], Jt[i], X[s])
            observed = H[X[s, i]]
            top, z = _exponentiate(H)
            out[s, i] = observed - top - np.log(z)
    return out


# -- the model ------------------------------------------------------------------


@jit
def energies(X, h, J):
    """``sum_i h_i(x_i) + sum_{i<j} J_ij(x_i, x_j)`` of each row."""
    n, L = X.shape
    out = np.empty(n)
    for s in range(n):
        e = 0.0
        for i in range(L):
            xi = X[s, i]
            e += h[i, xi]
            for j in range(i + 1, L):
                e += J[i, j, xi, X[s, j]]
        out[s] = e
    return out


@jit
def log_partition_enumerate(h, J):
    """``log Z`` by visiting all ``q ** L`` states (mixed-radix counter)."""
    L, q = h.shape
    x = np.zeros(L, dtype=np.int64)
    # Energy of the state, kept up to date when the counter moves.
    total = 0.0
    top = -np.inf
    n_states = q**L
    for _ in range(n_states):
        e = 0.0
        for i in range(L):
            e += h[i, x[i]]
            for j in range(i + 1, L):
                e += J[i, j, x[i], x[j]]
        if e > top:
            total = total * np.exp(top - e) + 1.0
            top = e
        else:
            total += np.exp(e - top)
        k = 0
        while k < L:
            x[k] += 1
            if x[k] < q:
                break
            x[k] = 0
            k += 1
    return top + np.log(total)


@jit(inline="always")
def _draw_softmax(logits, P, rng):
    """A state drawn from ``softmax(logits)`` by one uniform of ``rng``
    (inversion; ``P`` is scratch of the same length)."""
    q = logits.shape[0]
    top = logits[0]
    for a in range(1, q):
        top = max(top, logits[a])
    z = 0.0
    for a in range(q):
        P[a] = np.exp(logits[a] - top)
        z += P[a]
    u = rng.random() * z
    acc = 0.0
    for a in range(q):
        acc += P[a]
        if u < acc:
            return a
    return q - 1


@jit
def _gibbs_sweep(x, h, Jt, beta, base, H, P, rng):
    """One in-place Gibbs sweep over the sites of ``x`` under
    ``beta * (h + couplings) + (1 - beta) * base``."""
    L, q = h.shape
    for i in range(L):
        for a in range(q):
            H[a] = beta * h[i, a] + (1.0 - beta) * base[i, a]
        for j in range(L):
            if j != i:
                row = Jt[i, j, x[j]]
                for a in range(q):
                    H[a] += beta * row[a]
        x[i] = _draw_softmax(H, P, rng)


@jit
def _draw_independent(x, base, P, rng):
    """``x`` drawn from the independent-site model ``softmax(base[i])``."""
    for i in range(base.shape[0]):
        x[i] = _draw_softmax(base[i], P, rng)


@jit
def ais_log_weights(h, J, Jt, base, betas, n_chains, rng):
    """Log importance weights of AIS runs from the independent-site model
    ``softmax(base[i])`` at ``beta = 0`` to the Potts model at ``beta = 1``
    (Neal 2001), one Gibbs sweep per temperature."""
    L, q = h.shape
    log_w = np.zeros(n_chains)
    H = np.empty(q)
    P = np.empty(q)
    x = np.empty(L, dtype=np.int64)
    X1 = np.empty((1, L), dtype=np.int64)
    for c in range(n_chains):
        _draw_independent(x, base, P, rng)
        for k in range(1, betas.shape[0]):
            for i in range(L):
                X1[0, i] = x[i]
            model = energies(X1, h, J)[0]
            independent = 0.0
            for i in range(L):
                independent += base[i, x[i]]
            log_w[c] += (betas[k] - betas[k - 1]) * (model - independent)
            if k < betas.shape[0] - 1:
                _gibbs_sweep(x, h, Jt, betas[k], base, H, P, rng)
    return log_w


@jit(parallel=True)
def coupling_curvature(XT, w, f, rows, cols, lambda_e, out):
    """``out[p, a, b] = (c_ij(a, b) + 1 / q) ((1 - f_i(a)) + (1 - f_j(b))) +
    2 lambda_e`` for the pair ``p = (rows[p], cols[p])``, ``c_ij(a, b) = sum_s
    w_s [x_si = a][x_sj = b]`` from the transposed codes ``XT`` (L, n): the
    coupling part of ``model.diagonal_preconditioner``, one pair block per
    iteration (its counts summed in row order) instead of an (L, L, q, q)
    count tensor."""
    q = f.shape[1]
    for p in numba.prange(rows.size):
        i, j = rows[p], cols[p]
        block = out[p]
        block[:] = 0.0
        xi, xj = XT[i], XT[j]
        for s in range(w.size):
            block[xi[s], xj[s]] += w[s]
        for a in range(q):
            for b in range(q):
                spread = (1.0 - f[i, a]) + (1.0 - f[j, b])
                block[a, b] = (block[a, b] + 1.0 / q) * spread + 2.0 * lambda_e


@jit(parallel=True)
def pair_counts(X, w, q):
    """Weighted counts ``C[i, j, a, b] = sum_s w_s [x_si = a][x_sj = b]``."""
    n, L = X.shape
    out = np.zeros((L, L, q, q))
    for i in numba.prange(L):
        block = out[i]
        for s in range(n):
            a = X[s, i]
            ws = w[s]
            for j in range(L):
                block[j, a, X[s, j]] += ws
    return out
