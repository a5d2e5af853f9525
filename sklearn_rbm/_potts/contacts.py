"""From pairwise couplings to ranked contacts and their precision: the
Frobenius norms of the coupling blocks, the average product correction (Dunn,
Wahl & Gloor 2008) and the positive predictive value of the top-ranked pairs.
Shared by every model of categorical data (the Potts model's couplings, an
RBM's effective couplings)."""

import numpy as np


def average_product_correction(scores):
    """``S_ij - S_i. S_.j / S_..`` with means over the off-diagonal entries
    (Dunn, Wahl & Gloor 2008, as plmc computes it); zero diagonal."""
    L = scores.shape[0]
    S = np.array(scores, dtype=np.float64)
    np.fill_diagonal(S, 0.0)
    row_mean = S.sum(axis=1) / (L - 1)
    overall = S.sum() / (L * (L - 1))
    if overall == 0.0:
        corrected = S.copy()
    else:
        corrected = S - np.outer(row_mean, row_mean) / overall
    np.fill_diagonal(corrected, 0.0)
    return corrected


def coupling_scores(J, apc=True):
    """Contact scores of the ``(L, L, q, q)`` couplings ``J`` (in the gauge the
    caller chose): the Frobenius norm of each block, zero diagonal, APC when
    ``apc``."""
    scores = np.sqrt(np.sum(J * J, axis=(2, 3)))
    np.fill_diagonal(scores, 0.0)
    return average_product_correction(scores) if apc else scores


def ranked_pairs(scores, min_separation):
    """Pairs ``i < j`` with ``j - i >= min_separation``, best score first
    (ties by ``(i, j)``), and their scores."""
    L = scores.shape[0]
    i, j = np.triu_indices(L, k=max(int(min_separation), 1))
    values = scores[i, j]
    order = np.lexsort((j, i, -values))  # stable, deterministic ties
    return np.stack([i[order], j[order]], axis=1), values[order]


def precision_at(scores, contacts, n_top, min_separation):
    """Fraction of the ``n_top`` best-scored pairs that are contacts."""
    pairs, _ = ranked_pairs(scores, min_separation)
    top = pairs[: int(n_top)]
    if top.shape[0] == 0:
        return 0.0
    return float(np.mean(contacts[top[:, 0], top[:, 1]]))
