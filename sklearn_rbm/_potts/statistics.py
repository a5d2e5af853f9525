"""One-, two- and three-site statistics of categorical sequences, and the
comparison of a model's with the data's: the generative checks of
Boltzmann-machine learning (Figliuzzi, Barrat-Charlaix & Weigt 2018;
Muntoni et al. 2021).

Frequencies take the weights as given and normalise them to sum one; the
pseudocount ``pi`` mixes in the uniform distribution,
``f_i(a) = (1 - pi) f_i(a) + pi / q`` and ``f_ij(a, b) = (1 - pi)
f_ij(a, b) + pi / q^2`` (adabmDCA's convention, which keeps ``f_ij``
consistent with ``f_i``).
"""

import numba
import numpy as np

from .._numerics.jit import jit
from . import kernels


def frequencies(X, w, q, pseudocount=0.0):
    """``(f1, f2)``: the weighted one-site frequencies (L, q) and two-site
    frequencies (L, L, q, q) of the uint8 codes ``X``, ``f2[i, i]`` the
    diagonal matrix of ``f1[i]``."""
    L = X.shape[1]
    w = np.asarray(w, dtype=np.float64)
    f2 = kernels.pair_counts(np.ascontiguousarray(X), w / w.sum(), q)
    sites = np.arange(L)
    f1 = np.diagonal(f2[sites, sites], axis1=1, axis2=2).copy()
    if pseudocount:
        f1 *= 1.0 - pseudocount
        f1 += pseudocount / q
        f2 *= 1.0 - pseudocount
        f2 += pseudocount / (q * q)
        f2[sites, sites] = 0.0
        f2[sites, sites, :, :] += f1[:, :, None] * np.eye(q)
    return f1, f2


def connected(f1, f2, rows, cols):
    """``C_ij(a, b) = f_ij(a, b) - f_i(a) f_j(b)`` of the pairs ``(rows[p],
    cols[p])``, shape (n_pairs, q, q)."""
    return f2[rows, cols] - f1[rows, :, None] * f1[cols, None, :]


def pearson_slope(reference, other):
    """Pearson's correlation of two flattened arrays and the slope of the
    least-squares line of ``other`` on ``reference`` (1 when they agree)."""
    x = reference.ravel() - reference.mean()
    y = other.ravel() - other.mean()
    xx, yy, xy = float(x @ x), float(y @ y), float(x @ y)
    if xx == 0.0 or yy == 0.0:
        return 0.0, 0.0 if xx == 0.0 else xy / xx
    scale = np.sqrt(xx * yy)
    if scale == 0.0:  # the product underflowed (correlations below 1e-77)
        scale = np.sqrt(xx) * np.sqrt(yy)
    return xy / scale, xy / xx


def random_triplets(L, q, n, rng):
    """``n`` random entries of the three-site statistics: sites ``i < j <
    k`` (n, 3) and their states (n, 3)."""
    sites = np.empty((n, 3), dtype=np.intp)
    for r in range(n):
        sites[r] = np.sort(rng.choice(L, size=3, replace=False))
    states = rng.integers(0, q, size=(n, 3)).astype(np.intp)
    return sites, states


@jit(parallel=True)
def triplet_frequencies(X, w, sites, states):
    """``f_ijk(a, b, c) = sum_s w_s [x_si = a][x_sj = b][x_sk = c]`` of each
    entry (``w`` sums to one), and the matching two- and one-site ones
    ``f_ij, f_ik, f_jk, f_i, f_j, f_k`` (n, 7)."""
    n = sites.shape[0]
    out = np.zeros((n, 7))
    for r in numba.prange(n):
        i, j, k = sites[r, 0], sites[r, 1], sites[r, 2]
        a, b, c = states[r, 0], states[r, 1], states[r, 2]
        t = np.zeros(7)
        for s in range(X.shape[0]):
            xa = X[s, i] == a
            xb = X[s, j] == b
            xc = X[s, k] == c
            if xa or xb or xc:
                ws = w[s]
                if xa and xb and xc:
                    t[0] += ws
                if xa and xb:
                    t[1] += ws
                if xa and xc:
                    t[2] += ws
                if xb and xc:
                    t[3] += ws
                if xa:
                    t[4] += ws
                if xb:
                    t[5] += ws
                if xc:
                    t[6] += ws
        for m in range(7):
            out[r, m] = t[m]
    return out


def three_site_connected(X, w, sites, states):
    """``C_ijk(a, b, c) = f_ijk - f_ij f_k - f_ik f_j - f_jk f_i + 2 f_i f_j
    f_k`` of the chosen entries (no pseudocount)."""
    w = np.asarray(w, dtype=np.float64)
    t = triplet_frequencies(np.ascontiguousarray(X), w / w.sum(), sites, states)
    f_ijk, f_ij, f_ik, f_jk, f_i, f_j, f_k = t.T
    return f_ijk - f_ij * f_k - f_ik * f_j - f_jk * f_i + 2.0 * f_i * f_j * f_k
