"""Compiled kernels of the Potts family.

Coupling layout. The fitted model keeps ``J`` of shape (L, L, q, q) with
``J[i, j, a, b] = J[j, i, b, a]`` and ``J[i, i] = 0``. The kernels read the
site-major transpose ``Jt[i, j, b, a] = J[i, j, a, b]`` (``Jt`` is ``J`` with
its last two axes swapped): the conditional field of site ``i``,
``H_i(a) = h_i(a) + sum_j J[i, j, a, x_j]``, is then a sum of ``L``
contiguous rows ``Jt[i, j, x_j, :]`` (a gather, not a one-hot matrix
product), and every site's rows lie in one contiguous (L, q, q) block.

Parallel loops run over sites (pseudo-likelihood) or rows (weights); each
iteration writes only its own slice and sums are taken in a fixed order
afterwards, so the results do not depend on the thread count.
"""

import numba
import numpy as np

from .._numerics.jit import jit

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


@jit(parallel=True)
def pseudo_likelihood_terms(X, w, h, Jt, grad_h, grad_Jt, site_loss):
    """Weighted negative log pseudo-likelihood of every site and its gradient.

    ``site_loss[i] = -sum_s w_s log P(x_si | x_s,-i)``; ``grad_h[i]`` and
    ``grad_Jt[i]`` (overwritten) are its derivatives with respect to
    ``h[i]`` and to the entries ``Jt[i]`` taken as free (the caller folds the
    two entries of each symmetric coupling together). ``grad_Jt[i, i]`` is
    not meaningful.
    """
    n, L = X.shape
    q = h.shape[1]
    for i in numba.prange(L):
        H = np.empty(q)
        P = np.empty(q)
        G = grad_Jt[i]
        G[:] = 0.0
        gh = grad_h[i]
        gh[:] = 0.0
        Ji = Jt[i]
        loss = 0.0
        for s in range(n):
            for a in range(q):
                H[a] = h[i, a]
            for j in range(L):  # Jt[i, i] = 0: no branch
                row = Ji[j, X[s, j]]
                for a in range(q):
                    H[a] += row[a]
            top = H[0]
            for a in range(1, q):
                top = max(top, H[a])
            z = 0.0
            for a in range(q):
                P[a] = np.exp(H[a] - top)
                z += P[a]
            ws = w[s]
            xi = X[s, i]
            loss += ws * (top + np.log(z) - H[xi])
            scale = ws / z
            for a in range(q):
                P[a] *= scale
            P[xi] -= ws
            for a in range(q):
                gh[a] += P[a]
            for j in range(L):
                row = G[j, X[s, j]]
                for a in range(q):
                    row[a] += P[a]
        site_loss[i] = loss


@jit(parallel=True)
def site_log_conditionals(X, h, Jt):
    """``log P(x_si | x_s,-i)`` of every row and site, shape (n, L)."""
    n, L = X.shape
    q = h.shape[1]
    out = np.empty((n, L))
    for s in numba.prange(n):
        H = np.empty(q)
        for i in range(L):
            for a in range(q):
                H[a] = h[i, a]
            for j in range(L):
                row = Jt[i, j, X[s, j]]
                for a in range(q):
                    H[a] += row[a]
            top = H[0]
            for a in range(1, q):
                top = max(top, H[a])
            z = 0.0
            for a in range(q):
                z += np.exp(H[a] - top)
            out[s, i] = H[X[s, i]] - top - np.log(z)
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
        top = H[0]
        for a in range(1, q):
            top = max(top, H[a])
        z = 0.0
        for a in range(q):
            P[a] = np.exp(H[a] - top)
            z += P[a]
        u = rng.random() * z
        acc = 0.0
        choice = q - 1
        for a in range(q):
            acc += P[a]
            if u < acc:
                choice = a
                break
        x[i] = choice


@jit
def _draw_independent(x, base, P, rng):
    """``x`` drawn from the independent-site model ``softmax(base[i])``."""
    L, q = base.shape
    for i in range(L):
        top = base[i].max()
        z = 0.0
        for a in range(q):
            P[a] = np.exp(base[i, a] - top)
            z += P[a]
        u = rng.random() * z
        acc = 0.0
        choice = q - 1
        for a in range(q):
            acc += P[a]
            if u < acc:
                choice = a
                break
        x[i] = choice


@jit
def gibbs_sample(h, Jt, start, n_per_chain, burn_in, thinning, rng):
    """Samples of ``len(start)`` Gibbs chains, ``n_per_chain`` each, chain
    after chain (one random stream, a fixed order)."""
    n_chains, L = start.shape
    q = h.shape[1]
    out = np.empty((n_chains * n_per_chain, L), dtype=np.uint8)
    H = np.empty(q)
    P = np.empty(q)
    zero = np.zeros_like(h)
    x = np.empty(L, dtype=np.int64)
    for c in range(n_chains):
        for i in range(L):
            x[i] = start[c, i]
        for _ in range(burn_in):
            _gibbs_sweep(x, h, Jt, 1.0, zero, H, P, rng)
        for k in range(n_per_chain):
            for _ in range(thinning):
                _gibbs_sweep(x, h, Jt, 1.0, zero, H, P, rng)
            for i in range(L):
                out[c * n_per_chain + k, i] = x[i]
    return out


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
