"""From pairwise couplings to ranked contacts and their precision: the
Frobenius norms of the coupling blocks, the average product correction (Dunn,
Wahl & Gloor 2008) and the positive predictive value of the top-ranked pairs.
Shared by every model of categorical data (the Potts model's couplings, an
RBM's effective couplings)."""

import numpy as np

#: Scores beyond this magnitude are corrected at a smaller scale: the product
#: of two row means squares them, which overflows float64 past ~1e154.
_LARGEST_UNSCALED = 1e100


def average_product_correction(scores):
    """``S_ij - S_i. S_.j / S_..`` with means over the off-diagonal entries
    (Dunn, Wahl & Gloor 2008, as plmc computes it); zero diagonal.

    The correction is homogeneous of degree one in ``S``: scores of
    magnitude beyond ``_LARGEST_UNSCALED`` are divided by their largest
    magnitude first and the result multiplied back, so that huge finite
    scores give finite corrections (smaller ones are computed unscaled, as
    before)."""
    L = scores.shape[0]
    S = np.array(scores, dtype=np.float64)
    np.fill_diagonal(S, 0.0)
    largest = float(np.max(np.abs(S))) if S.size else 0.0
    scale = largest if largest > _LARGEST_UNSCALED else 1.0
    if scale != 1.0:
        S /= scale
    row_mean = S.sum(axis=1) / (L - 1)
    overall = S.sum() / (L * (L - 1))
    if overall == 0.0:
        corrected = S.copy()
    else:
        corrected = S - np.outer(row_mean, row_mean) / overall
    np.fill_diagonal(corrected, 0.0)
    if scale != 1.0:
        corrected *= scale
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
    """Fraction of the ``n_top`` best-scored pairs that are contacts, and the
    number of pairs ranked (fewer than ``n_top`` when few pairs are
    ``min_separation`` apart, or none: the caller checks)."""
    pairs, _ = ranked_pairs(scores, min_separation)
    top = pairs[: int(n_top)]
    if top.shape[0] == 0:
        return 0.0, 0
    return float(np.mean(contacts[top[:, 0], top[:, 1]])), top.shape[0]
