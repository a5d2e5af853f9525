"""sklearn_rbm.sequences: reading alignments, sequence weights, APC and
contact precision, against hand-made alignments and brute force."""

import gzip
import io
import os

import numba
import numpy as np
import pytest

from sklearn_rbm.sequences import (
    ALPHABETS,
    apc,
    contact_precision,
    read_alignment,
    sequence_weights,
    top_contacts,
)

PROTEIN = ALPHABETS["protein"]


def test_protein_codes_follow_plmc_order_and_the_gap_is_zero():
    X, ids = read_alignment(io.StringIO(">s1 first\n-ACD\nEFGH\n>s2\nWY-A\nCDEF\n"))
    assert ids == ["s1 first", "s2"]
    assert X.dtype == np.uint8
    assert X.tolist() == [
        [PROTEIN.index(c) for c in "-ACDEFGH"],
        [PROTEIN.index(c) for c in "WY-ACDEF"],
    ]
    assert PROTEIN == "-ACDEFGHIKLMNPQRSTVWY"


def test_a2m_insert_columns_are_dropped():
    text = ">a\nAC.D\n>b\nAcCeD\n>c\nA-.-\n"
    X, _ = read_alignment(io.StringIO(text))
    assert X.tolist() == [[1, 2, 3], [1, 2, 3], [1, 0, 0]]


def test_gzip_path_and_binary_file(tmp_path):
    path = tmp_path / "ali.fasta.gz"
    with gzip.open(path, "wt") as handle:
        handle.write(">x\nACDE\n>y\nKLMN\n")
    X, ids = read_alignment(path)
    X2, _ = read_alignment(io.BytesIO(path.read_bytes()))
    assert ids == ["x", "y"] and np.array_equal(X, X2)
    assert X[1].tolist() == [PROTEIN.index(c) for c in "KLMN"]


def test_unknown_letters_become_gaps_with_a_count():
    with pytest.warns(UserWarning, match="2 letters outside the alphabet"):
        X, _ = read_alignment(io.StringIO(">a\nAXCB\n>b\nACCA\n"))
    assert X[0].tolist() == [1, 0, 2, 0]


def test_rna_and_user_alphabets():
    X, _ = read_alignment(io.StringIO(">a\nACGU\n>b\nACGT\n"), alphabet="rna")
    assert X.tolist() == [[1, 2, 3, 4], [1, 2, 3, 4]]
    X, _ = read_alignment(io.StringIO(">a\n_*^\n"), alphabet="_*^")
    assert X.tolist() == [[0, 1, 2]]


def test_plain_alignment_one_sequence_per_line():
    X, ids = read_alignment(io.StringIO("AC-D\n\nKLMN\n"))
    assert ids == ["1", "2"]
    assert X.tolist() == [[1, 2, 0, 3], [PROTEIN.index(c) for c in "KLMN"]]


FREECONTACT_ALN = "/usr/share/doc/freecontact/examples/demo_1000.aln"


@pytest.mark.skipif(
    not os.path.exists(FREECONTACT_ALN), reason="Debian package freecontact"
)
def test_freecontact_plain_alignment_reads():
    X, ids = read_alignment(FREECONTACT_ALN)
    with open(FREECONTACT_ALN) as handle:
        lines = [line.strip() for line in handle if line.strip()]
    assert X.shape == (len(lines), len(lines[0])) and ids[-1] == str(len(lines))
    assert X[0].tolist() == [PROTEIN.index(c) for c in lines[0]]


def test_bad_alignments_name_the_problem():
    with pytest.raises(ValueError, match="aligned columns"):
        read_alignment(io.StringIO(">a\nACD\n>b\nAC\n"))
    with pytest.raises(ValueError, match="mixes plain sequence lines with FASTA"):
        read_alignment(io.StringIO("ACD\n>b\nACD\n"))
    with pytest.raises(ValueError, match="aligned columns"):
        read_alignment(io.StringIO("ACD\nAC\n"))
    with pytest.raises(ValueError, match="no sequence"):
        read_alignment(io.StringIO(""))
    with pytest.raises(ValueError, match="repeats a symbol"):
        read_alignment(io.StringIO(">a\nAA\n"), alphabet="-AA")


def _brute_force_weights(X, identity):
    n, L = X.shape
    same = (X[:, None, :] == X[None, :, :]).sum(axis=2)
    return 1.0 / (same >= identity * L).sum(axis=1)


@pytest.mark.parametrize("identity", [0.0, 0.5, 0.8, 1.0])
def test_sequence_weights_equal_brute_force(identity):
    rng = np.random.default_rng(0)
    base = rng.integers(0, 4, size=(12, 10))
    X = np.concatenate([base, base[:5]])  # duplicated rows
    X[np.arange(17), rng.integers(0, 10, 17)] = rng.integers(0, 4, 17)
    expected = _brute_force_weights(X, identity)
    assert np.allclose(sequence_weights(X, identity=identity), expected, rtol=0, atol=0)


def test_sequence_weights_hand_made_and_gaps_count_as_letters():
    X = [[0, 0, 0, 0, 1], [0, 0, 0, 0, 2], [1, 1, 1, 1, 1]]
    # 4 of 5 identical (gaps included) reaches 0.8: the first two are neighbours.
    assert sequence_weights(X).tolist() == [0.5, 0.5, 1.0]
    assert sequence_weights(X, identity=0.81).tolist() == [1.0, 1.0, 1.0]


def test_sequence_weights_do_not_depend_on_the_thread_count():
    X = np.random.default_rng(1).integers(0, 3, size=(300, 20))
    previous = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = sequence_weights(X, identity=0.5)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        many = sequence_weights(X, identity=0.5)
    finally:
        numba.set_num_threads(previous)
    assert np.array_equal(one, many)


def test_sequence_weights_refuse_bad_codes():
    with pytest.raises(ValueError, match="state codes"):
        sequence_weights([[0, -1], [1, 1]])
    with pytest.raises(ValueError, match="identity"):
        sequence_weights([[0, 1], [1, 1]], identity=1.5)


def test_apc_is_the_average_product_correction():
    rng = np.random.default_rng(2)
    S = rng.random((6, 6))
    S = S + S.T
    off = ~np.eye(6, dtype=bool)
    row = np.array([S[i, off[i]].mean() for i in range(6)])
    expected = S - np.outer(row, row) / S[off].mean()
    np.fill_diagonal(expected, 0)
    assert np.allclose(apc(S), expected)
    assert np.array_equal(S, S.T)  # input untouched


def test_top_contacts_rank_with_min_separation_and_precision():
    L = 10
    S = np.zeros((L, L))
    for (i, j), value in {(0, 9): 5.0, (1, 3): 9.0, (2, 8): 4.0, (0, 6): 3.0}.items():
        S[i, j] = S[j, i] = value
    pairs, values = top_contacts(S, min_separation=5, n_top=3)
    assert pairs.tolist() == [[0, 9], [2, 8], [0, 6]]
    assert values.tolist() == [5.0, 4.0, 3.0]
    truth = np.zeros((L, L), dtype=bool)
    truth[0, 9] = truth[9, 0] = truth[0, 6] = truth[6, 0] = True
    assert contact_precision(S, truth, 1) == 1.0
    assert contact_precision(S, truth, 3) == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="square"):
        top_contacts(np.zeros((3, 4)))
