"""Biological sequences as data: reading alignments, sequence weights and
contact prediction from coupling scores.

The validated public face of the Potts family (``sklearn_rbm._potts``);
plain arrays in and out. Typical direct coupling analysis::

    from sklearn_rbm import PottsPseudoLikelihood
    from sklearn_rbm.sequences import read_alignment, sequence_weights, top_contacts

    X, ids = read_alignment("PF00014.fasta.gz")
    w = sequence_weights(X)                       # plmc's theta = 0.2
    potts = PottsPseudoLikelihood(n_states=21).fit(X, sample_weight=w)
    pairs, scores = top_contacts(potts.contact_scores(), min_separation=5)

Functions
---------
read_alignment
    FASTA / A2M / A3M / Stockholm / plain (gzip, bz2, xz too) to uint8 codes
    in plmc's alphabet order.
sequence_weights
    1 / the number of sequences at least 80 % identical (plmc, CCMpred).
apc
    The average product correction of a score matrix.
top_contacts
    Pairs ranked by score, with a minimum separation along the chain.
contact_precision
    The fraction of the top-ranked pairs that are contacts (PPV@k).
"""

import numbers

import numpy as np

from ._core.sklearn_compat import Interval, validate_params
from ._core.utils import check_named_array, warn
from ._potts import alignment as _alignment
from ._potts import contacts as _contacts
from ._potts import data as _data

__all__ = [
    "ALPHABETS",
    "apc",
    "contact_precision",
    "read_alignment",
    "sequence_weights",
    "top_contacts",
]

#: The named alphabets of :func:`read_alignment` (the first symbol is the gap,
#: code 0): 'protein' is plmc's ``-ACDEFGHIKLMNPQRSTVWY``.
ALPHABETS = dict(_alignment.ALPHABETS)


def read_alignment(path_or_file, alphabet="protein"):
    """Read a multiple sequence alignment (FASTA, A2M, A3M, Stockholm or plain).

    The format is recognised from the content: Stockholm (Pfam's, HMMER's
    and Rfam's ``.sto``) when the file starts with ``# STOCKHOLM``; FASTA,
    A2M or A3M (HHblits) when its first line that is not a '#' comment
    starts with '>'; otherwise a plain alignment, one aligned sequence per
    line (PSICOV's and freecontact's ``.aln``). Compression (gzip, bz2, xz)
    is recognised from the first bytes, a UTF-8 byte-order mark is skipped
    and ids are decoded as UTF-8 (Latin-1 where a file is not UTF-8).

    Each symbol becomes its position in the alphabet, so with the protein
    alphabet ``-ACDEFGHIKLMNPQRSTVWY`` (plmc's order) the gap is 0. Insert
    columns are dropped: in A2M, A3M and Stockholm without a ``#=GC RF``
    line the lowercase letters and '.'; in Stockholm with one, the columns
    it marks '.', '-' or '~' (in the others '.' is a gap and a lowercase
    letter its residue). HHsuite's secondary-structure records
    (``>ss_pred``, ``>ss_conf``, ...) are not sequences and are skipped.
    Letters outside the alphabet (``X``, ``B``, ``Z``, ...) are read as the
    gap and counted in one warning (plmc instead drops such sequences).
    White space and '*' are skipped. A file that cannot be read as an
    alignment raises one ``ValueError`` naming the file and the line.

    Parameters
    ----------
    path_or_file : str, path-like or file object
        The alignment's path, or an open file (binary or text); not the
        alignment's text itself (wrap that in :class:`io.StringIO`).
    alphabet : {'protein', 'rna', 'dna'} or str, default='protein'
        'rna' is ``-ACGU`` (T read as U), 'dna' ``-ACGT``; any other string is
        the alphabet itself (ASCII symbols), its first symbol the gap.

    Returns
    -------
    X : ndarray of shape (n_sequences, L), dtype uint8
        State codes.
    ids : list of str
        The header line of each sequence, without '>' (in Stockholm the
        name, then its ``#=GS DE`` description if any; in a plain alignment
        the sequence's number, from '1').

    Examples
    --------
    >>> import io
    >>> from sklearn_rbm.sequences import read_alignment
    >>> X, ids = read_alignment(io.StringIO(">a\\nAC-D\\n>b\\nAcC-D\\n"))
    >>> X.tolist(), ids
    ([[1, 2, 0, 3], [1, 2, 0, 3]], ['a', 'b'])
    """
    return _alignment.read_alignment(path_or_file, alphabet)


def _codes(X, name="X"):
    X = check_named_array(X, name, dtype=None, ensure_min_features=1)
    return _data.check_codes(X, name)


@validate_params(
    {"X": ["array-like"], "identity": [Interval(numbers.Real, 0, 1, closed="both")]},
    prefer_skip_nested_validation=True,
)
def sequence_weights(X, identity=0.8):
    """Weight each sequence by 1 / the size of its neighbourhood.

    The neighbourhood of a sequence is the set of sequences (itself
    included) identical to it in at least ``identity * L`` columns, gaps
    counted as letters: plmc's and CCMpred's reweighting with ``theta = 1 -
    identity`` (Morcos et al. 2011). Compiled, parallel over sequences and
    deterministic; duplicated sequences are compared once.

    Parameters
    ----------
    X : array-like of shape (n_sequences, L)
        State codes.
    identity : float, default=0.8
        Fraction of identical columns that makes two sequences neighbours.

    Returns
    -------
    weights : ndarray of shape (n_sequences,)
        Weights in (0, 1]; their sum is the effective number of sequences.

    Examples
    --------
    >>> from sklearn_rbm.sequences import sequence_weights
    >>> sequence_weights([[1, 2, 3, 4, 5], [1, 2, 3, 4, 6], [7, 7, 7, 7, 7]]).tolist()
    [0.5, 0.5, 1.0]
    """
    X = _codes(X)
    return _data.sequence_weights(X, float(identity))


def _square_scores(scores):
    """The one check of every score matrix: finite (scikit-learn's check),
    square and at least 2 x 2."""
    S = check_named_array(scores, "scores", dtype=np.float64)
    if S.shape[0] != S.shape[1] or S.shape[0] < 2:
        raise ValueError(
            f"scores must be a square (L, L) matrix with L >= 2, got shape {S.shape}."
        )
    return S


def _check_ranked(n_pairs, L, n_top, min_separation):
    """Refuse a ranking of no pair; warn when fewer than ``n_top`` are ranked."""
    if n_pairs == 0:
        raise ValueError(
            f"min_separation={min_separation} leaves no pair of sites to rank "
            f"among L={L} (pairs need j - i >= min_separation): use a "
            f"min_separation below {L}."
        )
    if n_pairs < n_top:
        warn(
            f"Only {n_pairs} pairs of sites are at least min_separation="
            f"{min_separation} apart among L={L}; the precision is over those "
            f"{n_pairs}, not n_top={n_top}. Use a smaller n_top or min_separation."
        )


@validate_params({"scores": ["array-like"]}, prefer_skip_nested_validation=True)
def apc(scores):
    """Average product correction of contact scores.

    ``S_ij - S_i. S_.j / S_..`` (Dunn, Wahl & Gloor 2008), with means over
    the off-diagonal entries as in plmc.

    Parameters
    ----------
    scores : array-like of shape (L, L)
        Symmetric coupling scores (e.g. Frobenius norms); the diagonal is
        ignored.

    Returns
    -------
    corrected : ndarray of shape (L, L)
        Zero diagonal.
    """
    corrected = _contacts.average_product_correction(_square_scores(scores))
    if not np.all(np.isfinite(corrected)):
        # Scores of both signs whose off-diagonal mean is almost zero: the
        # correction divides by that mean.
        raise ValueError(
            "scores: the average product correction overflows because the mean "
            "off-diagonal score is almost zero next to the row means. APC "
            "expects non-negative scores (coupling norms): pass those."
        )
    return corrected


@validate_params(
    {
        "scores": ["array-like"],
        "min_separation": [Interval(numbers.Integral, 1, None, closed="left")],
        "n_top": [Interval(numbers.Integral, 1, None, closed="left"), None],
    },
    prefer_skip_nested_validation=True,
)
def top_contacts(scores, *, min_separation=5, n_top=None):
    """Pairs of sites ranked by score, best first.

    Parameters
    ----------
    scores : array-like of shape (L, L)
        Symmetric scores (the upper triangle is read).
    min_separation : int, default=5
        Keep pairs with ``j - i >= min_separation`` (5 is the usual cut for
        medium- and long-range contacts).
    n_top : int or None, default=None
        Return at most this many pairs; None returns all.

    Returns
    -------
    pairs : ndarray of shape (n_pairs, 2)
        ``(i, j)`` with ``i < j``, 0-based.
    values : ndarray of shape (n_pairs,)
        Their scores, non-increasing (ties broken by ``(i, j)``).
    """
    pairs, values = _contacts.ranked_pairs(_square_scores(scores), min_separation)
    if n_top is not None:
        pairs, values = pairs[:n_top], values[:n_top]
    return pairs, values


@validate_params(
    {
        "scores": ["array-like"],
        "contacts": ["array-like"],
        "n_top": [Interval(numbers.Integral, 1, None, closed="left")],
        "min_separation": [Interval(numbers.Integral, 1, None, closed="left")],
    },
    prefer_skip_nested_validation=True,
)
def contact_precision(scores, contacts, n_top, *, min_separation=5):
    """Positive predictive value of the ``n_top`` best-scored pairs (PPV@k).

    Parameters
    ----------
    scores : array-like of shape (L, L)
        Coupling scores.
    contacts : array-like of shape (L, L)
        True where two sites touch (e.g. a distance below 8 Å).
    n_top : int
        Number of top-ranked pairs (``L``, ``L // 2``, ...).
    min_separation : int, default=5
        Pairs closer along the chain are not ranked.

    Returns
    -------
    precision : float
        Fraction of the top ``n_top`` pairs that are contacts (of all the
        ranked pairs, with a warning, when there are fewer than ``n_top``;
        a ``ValueError`` when ``min_separation`` leaves none).

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.sequences import contact_precision
    >>> scores = np.zeros((8, 8)); scores[0, 7] = scores[7, 0] = 1.0
    >>> truth = np.zeros((8, 8), dtype=bool); truth[0, 7] = True
    >>> contact_precision(scores, truth, 1, min_separation=5)
    1.0
    """
    S = _square_scores(scores)
    C = check_named_array(contacts, "contacts", dtype=None)
    if C.shape != S.shape:
        raise ValueError(
            f"contacts must have the shape of scores {S.shape}, got {C.shape}."
        )
    if C.dtype.kind not in "biuf" or not np.all(np.isin(C, (0, 1))):
        raise ValueError("contacts must be a boolean (or 0/1) matrix.")
    precision, n_ranked = _contacts.precision_at(
        S, C.astype(bool), n_top, min_separation
    )
    _check_ranked(n_ranked, S.shape[0], n_top, min_separation)
    return precision
