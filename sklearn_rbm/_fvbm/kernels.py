"""Kernels of the fully visible Boltzmann machine (FVBM) fitted by pseudo-likelihood.

The model is ``P(x) = exp(1/2 x^T M x + b^T x) / Z`` on ``x in {-1, 1}^d`` with
``M`` symmetric and zero on the diagonal (Nguyen & Wood 2016, eq. 1.1). The
linear predictors are ``A = X M + b``: ``a_ij`` is the field that the other
units exert on unit ``j`` of row ``i``, and ``P(x_ij | x_i,-j) = exp(x_ij a_ij) /
(2 cosh a_ij)``.

Data arrive as *distinct rows with weights* ``w`` (the multiplicities divided by
the number of samples, so ``sum(w) == 1``): every sum over samples is a weighted
sum over distinct rows, which is exact and makes nearly frozen data cheap.

Conventions of this module
--------------------------
* ``X`` is ``(n, d)`` C-contiguous float64 holding -1.0 and 1.0; ``XT`` is its
  transpose, also C-contiguous, for the column sweeps of BSLM.
* Predictors are also kept as ``E = exp(2 A)``: then ``tanh(a) = 1 - 2 / (1 + E)``
  costs one division instead of a libm ``tanh`` call, and moving ``a`` by
  ``delta * x`` (``x = +-1``) multiplies ``E`` by ``exp(+-2 delta)``. The error of
  ``tanh`` computed this way stays at a few ulps in absolute terms even for
  saturated units (the sensitivity of ``tanh`` to ``log E`` is ``(1 - tanh^2) / 2``),
  which the addition formula for ``tanh`` does not achieve. Overflow of ``E`` to
  ``inf`` (``a > 354``) or underflow to 0 gives ``tanh = +-1``, never NaN.
* The parameter vector ``theta`` of the joint solvers is ``[b, M[triu(d, 1)]]``
  (Nguyen & Wood's); ``index[j, k]`` is the position in ``theta`` of the
  coefficient that multiplies ``z_ijk`` in ``a_ij``, where ``z_ij`` is row
  ``i`` with entry ``j`` replaced by 1 (so ``index[j, j]`` is ``b_j``).
"""

import numpy as np

from .._numerics.gray import gray_code, lowest_set_bit
from .._numerics.jit import jit

LOG2 = np.log(2.0)


# ---------------------------------------------------------------------------
# Elementwise helpers


@jit
def _tanh_from_exp2(e):
    """``tanh(a)`` from ``e = exp(2 a)``."""
    return 1.0 - 2.0 / (1.0 + e)


@jit
def _log_cosh_from_exp2(a, e):
    """``log cosh(a) = |a| + log(1 + exp(-2|a|)) - log 2``, given ``e = exp(2a)``.

    ``log(1 + u)`` rather than ``log1p(u)``: for ``u`` in (0, 1] both are exact
    to an ulp in absolute terms, which is all a sum of log-probabilities needs,
    and ``log`` is twice as fast.
    """
    small = e if a < 0.0 else 1.0 / e
    return abs(a) + np.log(1.0 + small) - LOG2


@jit
def _conditional(x, a):
    """``(log P(x | a), tanh a, exp(2a))`` for one unit with value ``x = +-1`` and
    field ``a``: ``log P = x a - log cosh a - log 2`` (the summand of
    Nguyen & Wood 2016, eq. 2.1).
    """
    e = np.exp(2.0 * a)
    return x * a - _log_cosh_from_exp2(a, e) - LOG2, _tanh_from_exp2(e), e


@jit
def predictors(X, b, M):
    """Linear predictors ``A = X M + b`` of shape ``(n, d)`` (``M`` symmetric)."""
    n, d = X.shape
    A = np.empty((n, d))
    for i in range(n):
        for j in range(d):
            A[i, j] = b[j]
        for k in range(d):
            xk = X[i, k]
            for j in range(d):
                A[i, j] += xk * M[k, j]
    return A


@jit
def conditional_terms(X, b, M):
    """Log-conditionals ``log P(x_ij | x_i,-j)`` and ``tanh(a_ij)``, both ``(n, d)``.

    ``log P(x_ij | rest) = x_ij a_ij - log cosh(a_ij) - log 2``: the summand of
    the log pseudo-likelihood (Nguyen & Wood 2016, eq. 2.1).
    """
    A = predictors(X, b, M)
    n, d = A.shape
    log_cond = np.empty((n, d))
    T = np.empty((n, d))
    for i in range(n):
        for j in range(d):
            log_cond[i, j], T[i, j], _ = _conditional(X[i, j], A[i, j])
    return log_cond, T


# ---------------------------------------------------------------------------
# BSLM / gradient-ascent sweep (Nguyen & Wood 2016, updates 2.4, 2.7, 4.1, 4.2)


@jit
def _shift_column(E, T, signs, delta):
    """Move the predictors of one unit by ``delta * signs`` (signs are +-1).

    ``E`` is multiplied by ``exp(+-2 delta)`` and ``tanh`` refreshed from it,
    O(n) with no transcendental call per row.
    """
    up = np.exp(2.0 * delta)
    down = np.exp(-2.0 * delta)
    # factor = up for sign +1 and down for sign -1, written without a branch so
    # that the loop vectorises (a select on random signs runs 10x slower).
    mid = 0.5 * (up + down)
    half_gap = 0.5 * (up - down)
    for i in range(E.shape[0]):
        e = E[i] * (mid + half_gap * signs[i])
        E[i] = e
        T[i] = _tanh_from_exp2(e)


@jit
def bslm_resync(X, w, b, M, ET, TT):
    """Recompute ``E = exp(2A)`` and ``tanh(A)`` from the parameters (layout (d, n)).

    Called once per sweep so that the rounding of the multiplicative updates
    never accumulates across sweeps. Returns the weighted mean log-PL at
    ``(b, M)``.
    """
    A = predictors(X, b, M)
    n, d = A.shape
    value = 0.0
    for i in range(n):
        acc = 0.0
        for j in range(d):
            log_p, TT[j, i], ET[j, i] = _conditional(X[i, j], A[i, j])
            acc += log_p
        value += w[i] * acc
    return value


@jit
def bslm_sweep(X, XT, w, ones, b, M, ET, TT, step, alpha):
    """One sweep of block successive lower-bound maximisation (Nguyen & Wood 2016).

    b-step (eq. 2.4) for ``j = 1..d``, then M-step (eq. 2.7) over ``j < k`` in
    lexicographic order, each coordinate maximising the quadratic minorant with
    curvature ``1`` (intercepts) or ``2`` (couplings) per sample, which bounds
    ``-d^2/dtheta^2`` of the mean log-PL (Nguyen & Wood 2016, proof of
    Theorem 1). ``step`` is the gradient-ascent step ``mu`` of eqs. 4.1-4.2
    (``mu = 1`` is BSLM; ``mu <= 1`` keeps monotonicity). The L2 penalty
    ``alpha / 2 * ||theta||^2`` adds ``alpha`` to both curvatures, so the
    minorant stays exact for it.

    ``b``, ``M`` (the solver's own work copies) and the predictor state ``ET``,
    ``TT`` (layout (d, n)) are updated in place; ``ET``, ``TT`` must be current
    on entry (see :func:`bslm_resync`). Cost O(n d^2). Returns the weighted
    mean log-PL after the sweep.
    """
    d, n = XT.shape
    for j in range(d):
        g = 0.0
        for i in range(n):
            g += w[i] * (XT[j, i] - TT[j, i])
        delta = step * (g - alpha * b[j]) / (1.0 + alpha)
        b[j] += delta
        _shift_column(ET[j], TT[j], ones, delta)
    for j in range(d - 1):
        for k in range(j + 1, d):
            g = 0.0
            for i in range(n):
                xj = XT[j, i]
                xk = XT[k, i]
                g += w[i] * (2.0 * xj * xk - xk * TT[j, i] - xj * TT[k, i])
            delta = step * (g - alpha * M[j, k]) / (2.0 + alpha)
            M[j, k] += delta
            M[k, j] += delta
            # a_ij moves by delta * x_ik and a_ik by delta * x_ij.
            _shift_column(ET[j], TT[j], XT[k], delta)
            _shift_column(ET[k], TT[k], XT[j], delta)
    return bslm_resync(X, w, b, M, ET, TT)


# ---------------------------------------------------------------------------
# The dense curvature of the log-PL and per-sample scores (diagnostics)


@jit
def parameter_index(d):
    """``index[j, k]``: position in ``theta = [b, M[triu(d, 1)]]`` of the
    coefficient of ``z_ijk`` in ``a_ij`` (``index[j, j] = j``, the intercept)."""
    index = np.empty((d, d), dtype=np.int64)
    pos = d
    for j in range(d):
        index[j, j] = j
        for k in range(j + 1, d):
            index[j, k] = pos
            index[k, j] = pos
            pos += 1
    return index


@jit
def pair_products(X, out):
    """``out[i, q] = x_ik x_il`` for the ``q``-th pair ``k < l`` (row-major).

    ``out^T D`` then holds ``sum_i D_ij x_ik x_il`` for every unit ``j`` and
    pair: the off-diagonal entries of all ``d`` node blocks in one product.
    """
    n, d = X.shape
    for i in range(n):
        q = 0
        for k in range(d - 1):
            xk = X[i, k]
            for m in range(k + 1, d):
                out[i, q] = xk * X[i, m]
                q += 1


@jit
def node_blocks(pair_moments, DX, column_sums):
    """Unit ``j``'s block ``Z_j^T diag(D_j) Z_j`` for every ``j``, shape (d, d, d).

    ``z_ij`` is row ``i`` with entry ``j`` replaced by 1, so the block holds
    ``sum_i D_ij x_ik x_il`` (``pair_moments[q, j]``) off row and column
    ``j``, ``sum_i D_ij x_il`` (``DX[j, l]``) on them, and ``sum_i D_ij`` on
    the diagonal (``x^2 = 1``).
    """
    d = column_sums.shape[0]
    blocks = np.empty((d, d, d))
    for j in range(d):
        q = 0
        for k in range(d):
            blocks[j, k, k] = column_sums[j]
            for m in range(k + 1, d):
                blocks[j, k, m] = pair_moments[q, j]
                blocks[j, m, k] = pair_moments[q, j]
                q += 1
        for m in range(d):
            blocks[j, j, m] = DX[j, m]
            blocks[j, m, j] = DX[j, m]
        blocks[j, j, j] = column_sums[j]
    return blocks


@jit
def scatter_blocks(blocks, index):
    """Sum unit ``j``'s ``d x d`` block into the ``p x p`` parameter space."""
    d = blocks.shape[0]
    p = d + d * (d - 1) // 2
    H = np.zeros((p, p))
    for j in range(d):
        for k in range(d):
            for m in range(d):
                H[index[j, k], index[j, m]] += blocks[j, k, m]
    return H


@jit
def mirror_triangle(A, lower):
    """Copy one triangle of the square ``A`` onto the other, in place (LAPACK
    and BLAS routines for symmetric matrices fill one triangle only)."""
    p = A.shape[0]
    for i in range(p):
        for j in range(i + 1, p):
            if lower:
                A[i, j] = A[j, i]
            else:
                A[j, i] = A[i, j]


@jit
def packed_scores(X, R, out):
    """Each row's score in the packed parameter space: ``out[i] = sum_j R_ij
    z_ij`` arranged as ``theta = [b, M[triu(d, 1)]]``, i.e. ``R_ij`` for
    ``b_j`` and ``R_ij x_ik + R_ik x_ij`` for ``m_jk`` (it enters both
    conditionals). Written row by row in packed order (``out`` is ``n x p``).
    """
    n, d = X.shape
    for i in range(n):
        for j in range(d):
            out[i, j] = R[i, j]
        pos = d
        for j in range(d - 1):
            rj = R[i, j]
            xj = X[i, j]
            for k in range(j + 1, d):
                out[i, pos] = rj * X[i, k] + R[i, k] * xj
                pos += 1


# ---------------------------------------------------------------------------
# Exact enumeration of the 2^d states in Gray-code order

_CHUNK_BITS = 10  # energies restart from scratch every 1024 states


@jit
def _gray_chunk(M, b, start, energies, codes):
    """Energies ``1/2 x^T M x + b^T x`` of the states ``gray(start + t)``.

    Consecutive Gray codes differ in one unit ``k`` (the lowest set bit of the
    counter), and flipping it changes the energy by ``-2 x_k (M x + b)_k``, so
    each state costs O(d). The walk restarts from scratch at every chunk, which
    bounds the rounding accumulated along it. Bit ``j`` of a code is unit ``j``
    being +1.
    """
    d = b.shape[0]
    code = gray_code(start)
    x = np.empty(d)
    for j in range(d):
        x[j] = 1.0 if (code >> j) & 1 else -1.0
    field = np.empty(d)
    energy = 0.0
    for j in range(d):
        f = b[j]
        for k in range(d):
            f += M[j, k] * x[k]
        field[j] = f
        energy += x[j] * (0.5 * (f - b[j]) + b[j])
    energies[0] = energy
    codes[0] = code
    for t in range(1, energies.shape[0]):
        k = lowest_set_bit(start + t)
        xk = x[k]
        energy -= 2.0 * xk * field[k]
        for m in range(d):
            field[m] -= 2.0 * xk * M[m, k]
        x[k] = -xk
        code ^= 1 << k
        energies[t] = energy
        codes[t] = code


@jit
def log_partition_exact(M, b):
    """``log Z = logsumexp_x (1/2 x^T M x + b^T x)`` over all ``2^d`` states.

    O(2^d d) time and O(1) memory: chunk log-sum-exps are merged pairwise into a
    running (max, scaled sum).
    """
    d = b.shape[0]
    total = 1 << d
    chunk = min(total, 1 << _CHUNK_BITS)
    energies = np.empty(chunk)
    codes = np.empty(chunk, dtype=np.int64)
    run_max = -np.inf
    run_sum = 0.0
    for c in range(total // chunk):
        _gray_chunk(M, b, c * chunk, energies, codes)
        m = energies.max()
        s = 0.0
        for t in range(chunk):
            s += np.exp(energies[t] - m)
        if m > run_max:
            run_sum = run_sum * np.exp(run_max - m) + s
            run_max = m
        else:
            run_sum += s * np.exp(m - run_max)
    return run_max + np.log(run_sum)


@jit
def state_energies(M, b):
    """Energies of all ``2^d`` states, indexed by code (bit ``j``: unit ``j`` is +1)."""
    d = b.shape[0]
    total = 1 << d
    chunk = min(total, 1 << _CHUNK_BITS)
    energies = np.empty(chunk)
    codes = np.empty(chunk, dtype=np.int64)
    out = np.empty(total)
    for c in range(total // chunk):
        _gray_chunk(M, b, c * chunk, energies, codes)
        for t in range(chunk):
            out[codes[t]] = energies[t]
    return out


# ---------------------------------------------------------------------------
# Gibbs sampling and annealed importance sampling


@jit
def _draw_independent(x, fields, rng):
    """``x_j = +1`` with probability ``1 / (1 + exp(-2 fields_j))``, else -1."""
    for j in range(x.shape[0]):
        x[j] = 1.0 if rng.random() < 1.0 / (1.0 + np.exp(-2.0 * fields[j])) else -1.0


@jit
def _coupling_field(M, x, h):
    """``h = M x``."""
    d = x.shape[0]
    for j in range(d):
        s = 0.0
        for k in range(d):
            s += M[j, k] * x[k]
        h[j] = s


@jit
def _gibbs_sweep(x, h, M, beta, offset, rng):
    """One systematic-scan Gibbs sweep of ``p(x) ~ exp(beta/2 x^T M x + offset^T x)``.

    ``h = M x`` is kept current: a flip of unit ``j`` adds ``(x_new - x_old)``
    times column ``j`` of ``M`` (O(d) per flip, nothing otherwise).
    """
    d = x.shape[0]
    for j in range(d):
        field = beta * h[j] + offset[j]
        new = 1.0 if rng.random() < 1.0 / (1.0 + np.exp(-2.0 * field)) else -1.0
        if new != x[j]:
            diff = new - x[j]
            for m in range(d):
                h[m] += M[m, j] * diff
            x[j] = new


@jit
def gibbs_samples(M, b, start_fields, n_chains, n_per_chain, burn_in, thinning, rng):
    """Draws from the FVBM by Gibbs sampling, shape ``(n_chains * n_per_chain, d)``.

    Each chain starts from the independent model with fields ``start_fields``,
    runs ``burn_in`` sweeps, then records its state every ``thinning`` sweeps.
    Chains run one after the other from one stream, so the result does not
    depend on threads.
    """
    d = b.shape[0]
    out = np.empty((n_chains * n_per_chain, d))
    x = np.empty(d)
    h = np.empty(d)
    row = 0
    for _ in range(n_chains):
        _draw_independent(x, start_fields, rng)
        _coupling_field(M, x, h)
        for _ in range(burn_in):
            _gibbs_sweep(x, h, M, 1.0, b, rng)
        for s in range(n_per_chain):
            if s > 0:
                for _ in range(thinning):
                    _gibbs_sweep(x, h, M, 1.0, b, rng)
            out[row] = x
            row += 1
    return out


@jit
def ais_log_weights(M, b, base, betas, n_chains, rng):
    """Log importance weights of annealed importance sampling (Neal 2001).

    The path ``f_beta(x) = beta (1/2 x^T M x + b^T x) + (1 - beta) base^T x``
    runs from the independent model with fields ``base`` (``beta = 0``, whose
    ``log Z_0 = sum_j log(2 cosh base_j)``) to the FVBM (``beta = 1``); each
    intermediate distribution is left invariant by one Gibbs sweep. Then
    ``log Z ~ log Z_0 + log mean exp(log_w)``.
    """
    d = b.shape[0]
    n_betas = betas.shape[0]
    log_w = np.zeros(n_chains)
    x = np.empty(d)
    h = np.empty(d)
    offset = np.empty(d)
    for c in range(n_chains):
        _draw_independent(x, base, rng)
        _coupling_field(M, x, h)
        lw = 0.0
        for t in range(1, n_betas):
            beta = betas[t]
            gap = 0.0  # f_1(x) - f_0(x)
            for j in range(d):
                gap += x[j] * (0.5 * h[j] + b[j] - base[j])
            lw += (beta - betas[t - 1]) * gap
            if t < n_betas - 1:
                for j in range(d):
                    offset[j] = beta * b[j] + (1.0 - beta) * base[j]
                _gibbs_sweep(x, h, M, beta, offset, rng)
        log_w[c] = lw
    return log_w
