"""Categorical columns with their own numbers of states, and one-hot input.

**Padding.** The categorical layer (``categorical.py``) lays every site out
over the same ``q`` states, ``q`` the largest number of states of any
column, so that its kernels keep one stride. A column ``i`` with ``q_i < q``
states has ``q - q_i`` *padded* states: their weights are 0 and their
fields :data:`PADDED_FIELD`, far enough below any real field that their
probability is zero to the precision of the arithmetic (``exp(-700)`` at
most, once the softmax clamps its exponents), so they are never drawn and
their gradients vanish; the gauge fix after every epoch keeps the real
states zero-sum and puts the padded entries back where they were (the
field penalty would otherwise move them). :func:`state_mask` says which
states are real.

**One-hot input.** A one-hot row has ``sum_i q_i`` columns, the ``q_i``
indicator columns of site ``i`` side by side in site order (the layout of
scikit-learn's ``OneHotEncoder``); :func:`decode_one_hot` checks that each
block holds a single 1 and returns the integer codes, so a fit on one-hot
rows is the fit on their codes; :func:`encode_one_hot` is its inverse.
"""

import numpy as np
import scipy.sparse as sp

#: The field of a padded state (see the module docstring).
PADDED_FIELD = -1e4


def state_mask(site_states, n_states):
    """``(L, n_states)`` bool: whether state ``a`` of site ``i`` is real
    (``a < site_states[i]``)."""
    return np.arange(n_states)[None, :] < np.asarray(site_states)[:, None]


def block_starts(site_states):
    """The first one-hot column of each site's block."""
    return np.concatenate(([0], np.cumsum(site_states)[:-1])).astype(np.int64)


def decode_one_hot(X, site_states, what="X"):
    """The integer codes ``(n, L)`` (in ``X``'s dtype) of one-hot rows ``X`` (dense or
    sparse, ``sum(site_states)`` columns, already finite); a ValueError naming
    ``what``, the row and the site's columns where a value is not 0 or 1 or a
    block does not hold exactly one 1."""
    site_states = np.asarray(site_states, dtype=np.int64)
    n_rows, n_sites = X.shape[0], site_states.size
    starts = block_starts(site_states)
    site_of = np.repeat(np.arange(n_sites), site_states)
    if sp.issparse(X):
        # The stored entries, explicit zeros skipped by a mask: the matrix
        # may be the caller's own (no copy made), never to be rewritten.
        X = sp.csr_matrix(X)
        rows = np.repeat(np.arange(n_rows), np.diff(X.indptr))
        stored = X.data != 0
        rows, columns, values = rows[stored], X.indices[stored], X.data[stored]
        columns = columns.astype(np.int64)
    else:
        rows, columns = np.nonzero(X)
        values = X[rows, columns]
    not_binary = np.flatnonzero(values != 1)
    if not_binary.size:
        k = not_binary[0]
        raise ValueError(
            f"{what} is one-hot input (one_hot=True) and must hold 0 or 1; found "
            f"{values[k].item()!r} at row {rows[k]}, column {columns[k]}. Pass "
            "the one-hot codes, or integer codes with one_hot=False."
        )
    counts = np.bincount(rows * n_sites + site_of[columns], minlength=n_rows * n_sites)
    bad = np.flatnonzero(counts != 1)
    if bad.size:
        r, i = divmod(int(bad[0]), n_sites)
        raise ValueError(
            f"{what} is one-hot input (one_hot=True) but row {r} has "
            f"{counts[bad[0]]} ones in the block of site {i} (columns "
            f"{starts[i]} to {starts[i] + site_states[i] - 1}); each block of "
            "n_states[i] columns must hold exactly one."
        )
    codes = np.empty((n_rows, n_sites), dtype=X.dtype)
    codes[rows, site_of[columns]] = columns - starts[site_of[columns]]
    return codes


def encode_one_hot(codes, site_states, dtype=np.float64):
    """Dense one-hot rows ``(n, sum(site_states))`` of integer ``codes``."""
    codes = np.asarray(codes, dtype=np.int64)
    starts = block_starts(site_states)
    out = np.zeros((codes.shape[0], int(np.sum(site_states))), dtype=dtype)
    out[np.arange(codes.shape[0])[:, None], starts[None, :] + codes] = 1.0
    return out
