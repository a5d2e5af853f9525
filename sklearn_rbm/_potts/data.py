"""Integer-coded sequence data: checking codes, collapsing duplicated rows
into weights, and plmc's sequence weights."""

import math
import numbers

import numpy as np

from .._core.utils import check_array_memory, check_memory
from . import kernels

#: Largest number of states: codes are stored as uint8.
MAX_STATES = 255


def check_codes(X, name, n_states=None, dtype=np.uint8):
    """``X`` (a 2-D numeric array) as ``dtype`` if it holds integer codes in
    ``0 .. n_states - 1`` (``n_states=None``: below ``MAX_STATES``; an array:
    the number of states of each column); a ValueError naming ``name``, the
    first bad value and where it is, otherwise. The one check of state codes
    for every model of categorical data (the Potts model, the categorical
    RBM)."""
    # Before any temporary: the masks below take 3 bytes a value, a float's
    # rounding 8 and 2 more, the codes 1.
    kind = getattr(getattr(X, "dtype", None), "kind", "f")
    check_array_memory(X, name, 4 + 10 * (kind not in "iub"))
    X = np.asarray(X)
    if X.dtype.kind == "O":
        try:
            X = X.astype(np.float64)
        except (TypeError, ValueError) as error:
            raise TypeError(
                f"{name} must hold integer state codes; its objects are not "
                f"numbers: {error}."
            ) from error
    if X.dtype.kind == "b":
        X = X.astype(np.uint8)
    if X.dtype.kind not in "iuf":
        raise ValueError(
            f"{name} must hold integer state codes, got dtype {X.dtype}. Read "
            "alignments with sklearn_rbm.sequences.read_alignment."
        )
    limit = MAX_STATES if n_states is None else n_states
    with np.errstate(invalid="ignore"):
        bad = (X < 0) | (X >= limit)
        if X.dtype.kind == "f":
            bad |= ~np.isfinite(X) | (X != np.round(X))
    if X.size and np.any(bad):
        r, i = np.argwhere(bad)[0]
        value = X[r, i].item()
        if X.dtype.kind == "f" and not np.isfinite(value):
            problem = "NaN or infinity"
        elif X.dtype.kind == "f" and value != np.round(value):
            problem = f"the non-integer value {value!r}"
        else:
            problem = f"the code {value!r}"
        fix = (
            "set n_states to the size of the alphabet, or encode each category "
            "as a code below it."
            if n_states is not None
            else f"models of categorical data take at most {MAX_STATES} states."
        )
        if np.ndim(limit):  # one number of states per column
            limit = int(limit[i])
            given = f" in column {i} (n_states[{i}]={limit})"
        else:
            given = f" (n_states={n_states})" if n_states is not None else ""
        raise ValueError(
            f"{name} must hold integer state codes 0 to {limit - 1}{given}; found "
            f"{problem} at row {r}, column {i}: {fix}"
        )
    return np.ascontiguousarray(X, dtype=dtype)


def distinct_rows(X, weights):
    """The distinct rows of ``X`` with the summed ``weights`` of their copies,
    and the index of each row's distinct row."""
    rows, inverse = np.unique(X, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    return rows, np.bincount(inverse, weights=weights, minlength=rows.shape[0]), inverse


def sequence_weights(X, identity):
    """``1 / (number of rows at least identity * L identical to the row)``,
    itself included, gaps counted as letters (plmc's reweighting, with
    ``identity = 1 - theta``)."""
    n, L = X.shape
    check_memory(
        2 * n * 8 + L * n,
        f"sequence_weights of {n} sequences",
        "Weight a subsample of the sequences.",
    )
    rows, multiplicity, inverse = distinct_rows(X, np.ones(n))
    # plmc compares the integer identity with (1 - theta) * L: the same
    # threshold as the smallest integer >= identity * L.
    threshold = min(max(math.ceil(identity * L), 0), L)
    counts = kernels.neighbour_counts(
        np.ascontiguousarray(rows.T), multiplicity, threshold
    )
    return 1.0 / counts[inverse]


def longest_gap_runs(X):
    """The length of the longest run of consecutive gaps (code 0) in each row
    of the codes ``X``: one pass over the columns, vectorised over rows."""
    run = np.zeros(X.shape[0], dtype=np.intp)
    longest = np.zeros(X.shape[0], dtype=np.intp)
    for column in X.T:
        run = np.where(column == 0, run + 1, 0)
        np.maximum(longest, run, out=longest)
    return longest


def check_identity(identity):
    if (
        isinstance(identity, bool)
        or not isinstance(identity, numbers.Real)
        or not 0.0 <= identity <= 1.0
    ):
        raise ValueError(
            f"identity must be a fraction in [0, 1] (0.8 is plmc's and "
            f"CCMpred's default), got {identity!r}."
        )
    return float(identity)
