"""Sparse couplings of a Boltzmann-machine Potts fit: which coupling entries
``J_ij(a, b)`` are active, grown by activation (eaDCA, Calvanese et al.
2024, in adabmDCA 2.0, Rosset et al. 2025) or pruned by decimation (edDCA,
Barrat-Charlaix et al. 2021).

The active set is a boolean ``(L, L, q, q)`` mask, symmetric (``mask[i, j,
a, b] == mask[j, i, b, a]``) with empty diagonal blocks; entries are chosen
among the pairs ``i < j`` and mirrored. Inactive couplings are exactly zero:
the fit never re-gauges them (the zero-sum gauge would fill them in).
"""

import math

import numpy as np

#: Fraction of the inactive entries activated at each activation step, and
#: updates between two steps (adabmDCA 2.0's ``factivate`` and ``gsteps``).
ACTIVATE_FRACTION, ACTIVATE_EVERY = 0.001, 10

#: Fraction of the active entries removed at each decimation step
#: (adabmDCA 2.0's ``drate``).
DECIMATE_FRACTION = 0.01


def upper_pairs(L):
    """The pairs ``i < j`` whose blocks hold the entries to choose from."""
    return np.triu_indices(L, k=1)


def density(mask):
    """Fraction of the off-diagonal coupling entries that are active."""
    L = mask.shape[0]
    rows, cols = upper_pairs(L)
    return float(mask[rows, cols].mean()) if rows.size else 0.0


def _switch(mask, rows, cols, chosen, value):
    """Set the chosen flat entries of the upper blocks ``(rows, cols)`` and
    their mirrors to ``value``."""
    q = mask.shape[2]
    pair, rest = np.divmod(chosen, q * q)
    a, b = np.divmod(rest, q)
    i, j = rows[pair], cols[pair]
    mask[i, j, a, b] = value
    mask[j, i, b, a] = value


def activate(mask, f2, p2):
    """Activate the ``ACTIVATE_FRACTION`` of the inactive entries (at least
    one) whose gradient ``|f_ij(a, b) - p_ij(a, b)|`` is largest, in place;
    the number activated."""
    rows, cols = upper_pairs(mask.shape[0])
    inactive = ~mask[rows, cols].ravel()
    n_inactive = int(inactive.sum())
    n = min(n_inactive, max(1, math.ceil(ACTIVATE_FRACTION * n_inactive)))
    if n == 0:
        return 0
    gain = np.abs(f2[rows, cols] - p2[rows, cols]).ravel()
    gain[~inactive] = -1.0
    chosen = np.argpartition(-gain, n - 1)[:n]
    _switch(mask, rows, cols, chosen, True)
    return n


def removal_cost(J, p2):
    """The model's Kullback-Leibler divergence from itself with one entry
    set to zero, ``p J + log(1 - p + p exp(-J))`` with ``p = p_ij(a, b)``
    (Barrat-Charlaix et al. 2021): the information an entry carries."""
    with np.errstate(over="ignore"):
        return p2 * J + np.log1p(p2 * np.expm1(-J))


def decimate(mask, J, p2, target):
    """Remove the ``DECIMATE_FRACTION`` of the active entries (at least one,
    down to the ``target`` density, not below) that cost the least, in place; set
    them to zero in ``J``; the number removed."""
    rows, cols = upper_pairs(mask.shape[0])
    active = mask[rows, cols].ravel()
    n_active = int(active.sum())
    keep = math.floor(target * active.size)
    n = min(n_active - keep, max(1, math.ceil(DECIMATE_FRACTION * n_active)))
    if n <= 0:
        return 0
    cost = removal_cost(J[rows, cols], p2[rows, cols]).ravel()
    cost[~active] = np.inf
    chosen = np.argpartition(cost, n - 1)[:n]
    _switch(mask, rows, cols, chosen, False)
    J *= mask
    return n
