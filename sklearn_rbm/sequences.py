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
gap_filter
    The sequences without long runs of gaps or too many gaps.
apc
    The average product correction of a score matrix.
top_contacts
    Pairs ranked by score, with a minimum separation along the chain.
contact_precision
    The fraction of the top-ranked pairs that are contacts (PPV@k).
frequencies, connected_correlations
    Weighted one- and two-site frequencies, connected correlations.
compare_correlations
    The generative check: a model's samples against the data's two- and
    three-site connected correlations (Pearson, slope).
parse_mutations
    Mutation labels ("A23V", "A23V:G45D") to columns and states.
"""

import numbers
from typing import NamedTuple as _NamedTuple

import numpy as np
from sklearn.utils import check_random_state as _check_random_state

from ._core.sklearn_compat import Interval, validate_params
from ._core.utils import check_named_array, warn
from ._core.utils import check_sample_weight as _check_sample_weight
from ._potts import alignment as _alignment
from ._potts import contacts as _contacts
from ._potts import data as _data
from ._potts import mutations as _mutations
from ._potts import statistics as _statistics

__all__ = [
    "ALPHABETS",
    "apc",
    "compare_correlations",
    "connected_correlations",
    "contact_precision",
    "CorrelationComparison",
    "frequencies",
    "gap_filter",
    "parse_mutations",
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
        alignment's text itself (wrap that in ``io.StringIO``).
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


@validate_params(
    {
        "X": ["array-like"],
        "max_gap_run": [Interval(numbers.Integral, 0, None, closed="left"), None],
        "max_gap_fraction": [Interval(numbers.Real, 0, 1, closed="both"), None],
    },
    prefer_skip_nested_validation=True,
)
def gap_filter(X, *, max_gap_run=None, max_gap_fraction=None):
    """Which sequences have few gaps: a boolean mask to select rows with.

    Fragments and badly aligned sequences carry long runs of gaps, which a
    Potts model of the family then fits as correlations of the gap state. A
    sequence is kept when its longest run of consecutive
    gaps (code 0, the gap of every alphabet of :func:`read_alignment`) is at
    most ``max_gap_run`` and its fraction of gaps at most
    ``max_gap_fraction``; a criterion left at None is not applied.
    adabmDCA's curated alignment of the beta-lactamase family
    (``PF13354_mgap6``) is ArDCA's ``PF13354_wo_ref_seqs`` with
    ``max_gap_run=6``.

    Parameters
    ----------
    X : array-like of shape (n_sequences, L)
        State codes.
    max_gap_run : int, default=None
        Longest run of consecutive gaps a kept sequence may have.
    max_gap_fraction : float, default=None
        Largest fraction of a kept sequence's columns that may be gaps.

    Returns
    -------
    keep : ndarray of shape (n_sequences,), dtype bool
        True for the sequences that meet every criterion given; select them
        (and their ids) with ``X[keep]``, and weigh the kept sequences anew
        with :func:`sequence_weights`.

    Examples
    --------
    >>> from sklearn_rbm.sequences import gap_filter
    >>> X = [[1, 0, 0, 0, 2], [0, 1, 0, 2, 0], [1, 2, 3, 4, 5]]
    >>> gap_filter(X, max_gap_run=2).tolist()
    [False, True, True]
    >>> gap_filter(X, max_gap_fraction=0.5).tolist()
    [False, False, True]
    """
    if max_gap_run is None and max_gap_fraction is None:
        raise ValueError(
            "gap_filter needs a criterion: give max_gap_run (e.g. 6, the "
            "longest run of consecutive gaps to keep) or max_gap_fraction "
            "(e.g. 0.2), or both."
        )
    X = _codes(X)
    keep = np.ones(X.shape[0], dtype=bool)
    if max_gap_run is not None:
        keep &= _data.longest_gap_runs(X) <= max_gap_run
    if max_gap_fraction is not None:
        # The fraction as a quotient, rounded as the literal is: 29 gaps of
        # 100 columns meet 0.29, which 29 <= 0.29 * 100 (28.999...) would not.
        keep &= np.count_nonzero(X == 0, axis=1) / X.shape[1] <= max_gap_fraction
    return keep


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


# -- generative checks and mutation effects (Boltzmann-machine learning) ------


class CorrelationComparison(_NamedTuple):
    """How well samples reproduce a data set's connected correlations.

    The result of :func:`compare_correlations`; a named tuple, its fields
    read back as attributes of the same names.

    Parameters
    ----------
    pearson : float
        Pearson correlation of the samples' connected two-site correlations
        with the data's.
    slope : float
        Least-squares slope of the samples' against the data's (1: the same
        scale).
    pearson_three_site : float
        Pearson correlation of the connected three-site correlations over
        the random entries (NaN when none were drawn).
    slope_three_site : float
        Their slope.
    """

    pearson: float
    slope: float
    pearson_three_site: float
    slope_three_site: float


def _weights_of(sample_weight, n, name="sample_weight"):
    weights = _check_sample_weight(sample_weight, n)
    if weights is not None:
        return weights
    return np.ones(n)


def _codes_with_states(X, n_states, name="X"):
    X = _codes(X, name)
    q = n_states if n_states is not None else max(int(X.max()) + 1, 2)
    if int(X.max(initial=0)) >= q:
        raise ValueError(
            f"{name} holds the code {int(X.max())}, not below n_states={q}: set "
            "n_states to the size of the alphabet."
        )
    return X, q


#: The arguments of the frequency statistics, checked alike.
_FREQUENCY_PARAMETERS = {
    "X": ["array-like"],
    "sample_weight": ["array-like", None],
    "n_states": [Interval(numbers.Integral, 2, 255, closed="both"), None],
    "pseudocount": [Interval(numbers.Real, 0, 1, closed="both")],
}


@validate_params(_FREQUENCY_PARAMETERS, prefer_skip_nested_validation=True)
def frequencies(X, sample_weight=None, *, n_states=None, pseudocount=0.0):
    """Weighted one- and two-site frequencies of integer-coded sequences.

    ``f_i(a) = (1 - pi) sum_n w_n [x_ni = a] / sum_n w_n + pi / q`` and
    ``f_ij(a, b) = (1 - pi) sum_n w_n [x_ni = a][x_nj = b] / sum_n w_n + pi
    / q^2``, with the pseudocount ``pi`` of Boltzmann-machine learning
    (adabmDCA's default is ``1 / N_eff``).

    Parameters
    ----------
    X : array-like of shape (n_sequences, L)
        State codes.
    sample_weight : array-like of shape (n_sequences,), default=None
        Sequence weights (:func:`sequence_weights`); None weighs each 1.
    n_states : int, default=None
        Number of states ``q``; None takes ``max(X) + 1``.
    pseudocount : float, default=0.0
        Weight ``pi`` of the uniform distribution.

    Returns
    -------
    f1 : ndarray of shape (L, q)
        One-site frequencies.
    f2 : ndarray of shape (L, L, q, q)
        Two-site frequencies; ``f2[i, i]`` is the diagonal matrix of ``f1[i]``.

    Examples
    --------
    >>> from sklearn_rbm.sequences import frequencies
    >>> f1, f2 = frequencies([[0, 1], [1, 1]], n_states=2)
    >>> f1.tolist()
    [[0.5, 0.5], [0.0, 1.0]]
    >>> f2[0, 1].tolist()
    [[0.0, 0.5], [0.0, 0.5]]
    """
    X, q = _codes_with_states(X, n_states)
    w = _weights_of(sample_weight, X.shape[0])
    return _statistics.frequencies(X, w, q, float(pseudocount))


@validate_params(_FREQUENCY_PARAMETERS, prefer_skip_nested_validation=True)
def connected_correlations(X, sample_weight=None, *, n_states=None, pseudocount=0.0):
    """Connected two-site correlations ``C_ij(a, b) = f_ij(a, b) - f_i(a) f_j(b)``.

    Parameters
    ----------
    X : array-like of shape (n_sequences, L)
        State codes.
    sample_weight : array-like of shape (n_sequences,), default=None
        Sequence weights; None weighs each 1.
    n_states : int, default=None
        Number of states ``q``; None takes ``max(X) + 1``.
    pseudocount : float, default=0.0
        Weight of the uniform distribution in the frequencies
        (:func:`frequencies`).

    Returns
    -------
    C : ndarray of shape (L, L, q, q)
        ``C[i, j, a, b]``, symmetric (``C[j, i, b, a]``), zero diagonal blocks.

    Examples
    --------
    >>> from sklearn_rbm.sequences import connected_correlations
    >>> C = connected_correlations([[0, 0], [1, 1]])
    >>> C[0, 1].tolist()
    [[0.25, -0.25], [-0.25, 0.25]]
    """
    f1, f2 = frequencies(X, sample_weight, n_states=n_states, pseudocount=pseudocount)
    C = f2 - f1[:, None, :, None] * f1[None, :, None, :]
    sites = np.arange(f1.shape[0])
    C[sites, sites] = 0.0
    return C


@validate_params(
    {
        "X": ["array-like"],
        "samples": ["array-like"],
        "sample_weight": ["array-like", None],
        "n_states": [Interval(numbers.Integral, 2, 255, closed="both"), None],
        "pseudocount": [Interval(numbers.Real, 0, 1, closed="both"), None],
        "n_triplets": [Interval(numbers.Integral, 1, 10**7, closed="both")],
        "random_state": ["random_state"],
    },
    prefer_skip_nested_validation=True,
)
def compare_correlations(
    X,
    samples,
    *,
    sample_weight=None,
    n_states=None,
    pseudocount=None,
    n_triplets=10000,
    random_state=0,
):
    """How well a model's samples reproduce a data set's correlations.

    The generative check of Boltzmann-machine learning (Figliuzzi,
    Barrat-Charlaix & Weigt 2018; adabmDCA, Muntoni et al. 2021): the
    Pearson correlation and the least-squares slope of the samples'
    connected two-site correlations ``C_ij(a, b)`` against the data's, over
    every ``i < j`` and ``a, b`` (adabmDCA stops its fits at a Pearson
    correlation of 0.95), and of the connected three-site correlations
    ``C_ijk(a, b, c) = f_ijk - f_ij f_k - f_ik f_j - f_jk f_i + 2 f_i f_j
    f_k`` over ``n_triplets`` random entries. The samples come from any
    model: :meth:`sklearn_rbm.PottsBoltzmannMachine.sample`,
    :meth:`sklearn_rbm.PottsPseudoLikelihood.sample`,
    :meth:`sklearn_rbm.CategoricalRBM.sample`. Their number matters: the
    noise of few samples' correlations lowers the Pearson correlation of
    even a perfect model (on PF00014 the data's own rows, redrawn with their
    weights, read 0.96 at 8,000 and 0.997 at 128,000), so judge a model on
    100,000 samples or more.

    Parameters
    ----------
    X : array-like of shape (n_sequences, L)
        The data's state codes.
    samples : array-like of shape (n_samples, L)
        The model's samples (state codes), weighed equally.
    sample_weight : array-like of shape (n_sequences,), default=None
        Weights of the data's sequences; None weighs each 1.
    n_states : int, default=None
        Number of states ``q``; None takes the largest code of both plus one.
    pseudocount : float, default=None
        Pseudocount of the data's frequencies; None is ``1 / N_eff`` (the
        data's inverse total weight, adabmDCA's default). The samples get
        none.
    n_triplets : int, default=10000
        Random three-site entries compared.
    random_state : int, RandomState instance or None, default=0
        Chooses the three-site entries.

    Returns
    -------
    comparison : CorrelationComparison
        Named tuple ``(pearson, slope, pearson_three_site,
        slope_three_site)``: a slope below 1 means the samples' correlations
        are weaker than the data's.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn_rbm.sequences import compare_correlations
    >>> rng = np.random.default_rng(0)
    >>> X = rng.integers(0, 3, size=(2000, 5))
    >>> X[:, 1] = np.where(rng.random(2000) < 0.6, X[:, 0], X[:, 1])
    >>> result = compare_correlations(X[:1000], X[1000:], n_triplets=100)
    >>> bool(result.pearson > 0.9)
    True
    """
    X = _codes(X)
    S = _codes(samples, "samples")
    if S.shape[1] != X.shape[1]:
        raise ValueError(
            f"samples must have the {X.shape[1]} columns of X, got {S.shape[1]}."
        )
    top = max(int(X.max()), int(S.max()))
    q = n_states if n_states is not None else max(top + 1, 2)
    if top >= q:
        raise ValueError(
            f"X or samples hold the code {top}, not below n_states={q}: set "
            "n_states to the size of the alphabet."
        )
    w = _weights_of(sample_weight, X.shape[0])
    pi = 1.0 / float(w.sum()) if pseudocount is None else float(pseudocount)
    pi = min(pi, 1.0)
    L = X.shape[1]
    if L < 3:
        raise ValueError(f"X has {L} columns: the three-site check needs at least 3.")
    rows, cols = np.triu_indices(L, k=1)
    data = _statistics.connected(*_statistics.frequencies(X, w, q, pi), rows, cols)
    ones = np.ones(S.shape[0])
    model = _statistics.connected(*_statistics.frequencies(S, ones, q), rows, cols)
    pearson, slope = _statistics.pearson_slope(data, model)
    rng = _check_random_state(random_state)
    generator = np.random.default_rng(rng.randint(np.iinfo(np.int32).max))
    sites, states = _statistics.random_triplets(L, q, n_triplets, generator)
    data3 = _statistics.three_site_connected(X, w, sites, states)
    model3 = _statistics.three_site_connected(S, ones, sites, states)
    pearson3, slope3 = _statistics.pearson_slope(data3, model3)
    return CorrelationComparison(
        float(pearson), float(slope), float(pearson3), float(slope3)
    )


@validate_params(
    {
        "mutations": [str, list, tuple, np.ndarray],
        "wild_type": [str, "array-like"],
        "offset": [numbers.Integral],
        "alphabet": [str],
    },
    prefer_skip_nested_validation=True,
)
def parse_mutations(mutations, wild_type, *, offset=1, alphabet="protein"):
    """Positions and states of mutation labels such as ``"A23V"`` or ``"A23V:G45D"``.

    Each label is one or more single mutations joined by ``':'``, each the
    wild-type letter, the residue number and the mutant letter. The residue
    number of the first column of the alignment is ``offset``; the
    wild-type letter must be the wild type's at that column.

    Parameters
    ----------
    mutations : str or list of str
        The labels (e.g. a deep-mutational-scanning table's column).
    wild_type : str or array-like of shape (L,)
        The aligned wild-type sequence, as letters of ``alphabet`` or state
        codes.
    offset : int, default=1
        Residue number of the first column.
    alphabet : {'protein', 'rna', 'dna'} or str, default='protein'
        The alphabet of :func:`read_alignment` (its first symbol is the
        gap, code 0).

    Returns
    -------
    parsed : list of (ndarray, ndarray)
        For each label, the columns (0-based) and the mutant state codes.
        A single mutant ``(i, a)`` indexes
        :meth:`~sklearn_rbm.PottsBoltzmannMachine.mutation_effects`; a
        multiple mutant is scored by the energy of the mutated sequence.

    Examples
    --------
    >>> from sklearn_rbm.sequences import parse_mutations
    >>> parsed = parse_mutations(["C3A", "K1R:C3W"], "KLC")
    >>> [(i.tolist(), a.tolist()) for i, a in parsed]
    [([2], [1]), ([0, 2], [15, 19])]
    """
    return _mutations.parse_mutations(mutations, wild_type, offset, alphabet)
