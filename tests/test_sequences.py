"""sklearn_rbm.sequences: reading alignments, sequence weights, APC and
contact precision, against hand-made alignments and brute force."""

import bz2
import gzip
import io
import lzma
import os
import time

import numba
import numpy as np
import pytest

from sklearn_rbm.sequences import (
    ALPHABETS,
    apc,
    contact_precision,
    gap_filter,
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


def _brute_force_longest_gap_run(row):
    text = "".join("-" if code == 0 else "x" for code in row)
    return max((len(run) for run in text.split("x")), default=0)


@pytest.mark.parametrize("max_gap_run", [0, 1, 3, 12])
@pytest.mark.parametrize("max_gap_fraction", [None, 0.0, 0.25, 1.0])
def test_gap_filter_equals_brute_force(max_gap_run, max_gap_fraction):
    rng = np.random.default_rng(2)
    # Gaps in runs of every length, from none to whole rows of gaps.
    gap_probability = np.linspace(0.0, 0.9, 60)[:, None]
    X = rng.integers(1, 5, size=(60, 12)) * (rng.random((60, 12)) > gap_probability)
    X[0] = 0
    X[1, 3:9] = 0
    runs = np.array([_brute_force_longest_gap_run(row) for row in X])
    fractions = (X == 0).mean(axis=1)
    expected = runs <= max_gap_run
    if max_gap_fraction is not None:
        expected &= fractions <= max_gap_fraction
    keep = gap_filter(X, max_gap_run=max_gap_run, max_gap_fraction=max_gap_fraction)
    assert keep.dtype == bool and keep.tolist() == expected.tolist()
    # Each setting keeps some rows, and refuses some unless it allows all gaps.
    assert expected.any()
    assert not expected.all() or (max_gap_run == 12 and max_gap_fraction in (None, 1))


def test_gap_filter_needs_a_criterion_and_checks_it():
    X = [[0, 1], [1, 1]]
    assert gap_filter(X, max_gap_fraction=0.5).tolist() == [True, True]
    assert gap_filter(X, max_gap_fraction=0.49).tolist() == [False, True]
    # A fraction met exactly, which the product 0.29 * 100 = 28.999... misses.
    exactly = np.ones((1, 100), dtype=int)
    exactly[0, :29] = 0
    assert gap_filter(exactly, max_gap_fraction=0.29).tolist() == [True]
    assert gap_filter(exactly, max_gap_fraction=0.28).tolist() == [False]
    with pytest.raises(ValueError, match="max_gap_run.*max_gap_fraction"):
        gap_filter(X)
    with pytest.raises(ValueError, match="max_gap_fraction"):
        gap_filter(X, max_gap_fraction=1.5)
    with pytest.raises(ValueError, match="max_gap_run"):
        gap_filter(X, max_gap_run=-1)
    with pytest.raises(ValueError, match="state codes"):
        gap_filter([[0, -1]], max_gap_run=1)


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


# ------------------------------------------------ the formats users have (issue 35)
def _alignment_with_inserts(n=12, L=9, seed=3):
    """Ids, match columns (uppercase and '-') and, after each match column,
    an insert of 0 to 2 lowercase letters per sequence: the FASTA (A2M), A3M
    and Stockholm texts of one alignment, and its codes."""
    rng = np.random.default_rng(seed)
    ids = [f"seq{k}/1-{L} description {k}" for k in range(n)]
    match = rng.choice(list(PROTEIN), size=(n, L))
    inserts = [[rng.choice(list("acdefg"), size=rng.integers(0, 3)) for _ in range(L)]
               for _ in range(n)]  # fmt: skip
    longest = [max(len(inserts[s][i]) for s in range(n)) for i in range(L)]
    a2m, a3m = [], []
    for s in range(n):
        a2m_row, a3m_row = "", ""
        for i in range(L):
            extra = "".join(inserts[s][i])
            a2m_row += match[s, i] + extra + "." * (longest[i] - len(extra))
            a3m_row += match[s, i] + extra
        a2m.append(a2m_row)
        a3m.append(a3m_row)
    rf = "".join("x" + "." * longest[i] for i in range(L))
    codes = np.array([[PROTEIN.index(c) for c in row] for row in match])
    return ids, a2m, a3m, rf, codes


def _fasta_text(ids, rows, width=7):
    """FASTA with the sequences wrapped over lines of ``width`` letters."""
    out = []
    for name, row in zip(ids, rows, strict=True):
        out.append(f">{name}")
        out += [row[k : k + width] for k in range(0, len(row), width)]
    return "\n".join(out) + "\n"


def _stockholm_text(ids, rows, rf, block=10):
    """Interleaved Stockholm blocks, descriptions in #=GS lines, an RF line."""
    names = [name.split(" ", 1) for name in ids]
    out = ["# STOCKHOLM 1.0", "#=GF ID test"]
    out += [f"#=GS {short} DE {text}" for short, text in names]
    for k in range(0, len(rf), block):
        out.append("")
        for (short, _), row in zip(names, rows, strict=True):
            out.append(f"{short:<12} {row[k : k + block]}")
        out.append(f"#=GC RF      {rf[k : k + block]}")
    return "\n".join(out) + "\n//\n"


def test_stockholm_and_a3m_read_as_the_fasta_of_the_same_alignment(tmp_path):
    ids, a2m, a3m, rf, codes = _alignment_with_inserts()
    fasta = tmp_path / "family.a2m"
    fasta.write_text(_fasta_text(ids, a2m))
    X, fasta_ids = read_alignment(fasta)
    assert np.array_equal(X, codes) and fasta_ids == ids
    # HHblits' A3M: inserts of any length, no '.'; a comment line and a
    # secondary-structure record, which are not sequences.
    a3m_text = "#9 1\n>ss_pred PSIPRED\nCCHHHEEEC\n" + _fasta_text(ids, a3m)
    (tmp_path / "family.a3m").write_text(a3m_text)
    X3, ids3 = read_alignment(tmp_path / "family.a3m")
    assert np.array_equal(X3, codes) and ids3 == ids
    # HMMER's Stockholm: the RF line marks the match columns; in them '.'
    # would be a gap; interleaved blocks; descriptions appended to the ids.
    (tmp_path / "family.sto").write_text(_stockholm_text(ids, a2m, rf))
    XS, idsS = read_alignment(tmp_path / "family.sto")
    assert np.array_equal(XS, codes) and idsS == ids
    # Pfam's Stockholm without RF: the A2M convention.
    no_rf = "\n".join(
        line for line in _stockholm_text(ids, a2m, rf).splitlines()
        if not line.startswith("#=GC")
    )  # fmt: skip
    XP, _ = read_alignment(io.StringIO(no_rf + "\n"))
    assert np.array_equal(XP, codes)


def test_stockholm_reference_columns_keep_lowercase_and_dots_as_residues_and_gaps():
    text = "# STOCKHOLM 1.0\na AcD.k\nb a.Dgk\n#=GC RF xx.x.\n//\n"
    X, ids = read_alignment(io.StringIO(text))
    assert ids == ["a", "b"]
    assert X.tolist() == [[1, 2, 0], [1, 0, PROTEIN.index("G")]]


@pytest.mark.parametrize(
    "opener, suffix",
    [(gzip.open, ".txt"), (bz2.open, ".gz"), (lzma.open, ".fasta")],
    ids=["gzip", "bz2", "xz"],
)
def test_compression_is_recognised_by_content_not_name(tmp_path, opener, suffix):
    path = tmp_path / f"ali{suffix}"
    with opener(path, "wt") as handle:
        handle.write(">x\nACDE\n>y\nKLMN\n")
    X, ids = read_alignment(path)
    assert ids == ["x", "y"] and X[1].tolist() == [PROTEIN.index(c) for c in "KLMN"]


def test_byte_order_mark_is_skipped_and_utf8_ids_are_kept(tmp_path):
    text = ">α-helix 1\nACDE\n>β\nKLMN\n"
    path = tmp_path / "bom.fasta"
    path.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    X, ids = read_alignment(path)
    assert ids == ["α-helix 1", "β"] and X.shape == (2, 4)
    X2, ids2 = read_alignment(io.StringIO("\ufeff" + text))
    assert ids2 == ids and np.array_equal(X, X2)
    plain = tmp_path / "bom.aln"
    plain.write_bytes(b"\xef\xbb\xbfACDE\nKLMN\n")
    assert read_alignment(plain)[0].tolist() == X.tolist()


def _truncated_gzip(path):
    path.write_bytes(gzip.compress(b">a\nACDE\n>b\nKLMN\n" * 50)[:40])


def _corrupt_gzip(path):
    data = bytearray(gzip.compress(b">a\nACDE\n>b\nKLMN\n" * 50))
    data[20:30] = b"\xff" * 10
    path.write_bytes(bytes(data))


@pytest.mark.parametrize(
    "write, words",
    [
        (lambda p: p.write_text(">a\n>b\n>c\n"), ("line 1", "no sequence line")),
        (lambda p: p.write_text(">a\nACD\n>b\n>c\nACD\n"), ("line 3", ">b")),
        (_truncated_gzip, ("truncated or corrupt gzip",)),
        (_corrupt_gzip, ("truncated or corrupt gzip",)),
        (lambda p: p.write_bytes(b"\x00\x01\x02binary"), ("not a text file",)),
        (lambda p: p.write_text("# STOCKHOLM 1.0\na ACD\nb ACD\n"), ("'//'",)),
        (
            lambda p: p.write_text("# STOCKHOLM 1.0\na ACD\n//\n# STOCKHOLM 1.0\n"),
            ("line 4", "second alignment"),
        ),
        (lambda p: p.write_text("# STOCKHOLM 1.0\na\n//\n"), ("line 2",)),
        (
            lambda p: p.write_text("# STOCKHOLM 1.0\na AC.D\n#=GC RF xx.\n//\n"),
            ("line 2", "#=GC RF"),
        ),
    ],  # fmt: skip
    ids=[
        "headers only",
        "one header without sequence",
        "truncated gzip",
        "corrupt gzip",
        "binary",
        "stockholm without //",
        "two stockholm",
        "stockholm line without sequence",
        "RF of another width",
    ],  # fmt: skip
)
def test_a_bad_file_gets_one_error_naming_the_file_and_the_line(tmp_path, write, words):
    path = tmp_path / "bad.fasta"
    write(path)
    with pytest.raises(ValueError) as raised:
        read_alignment(path)
    message = str(raised.value)
    assert "bad.fasta" in message
    for word in words:
        assert word in message


def test_paths_that_are_not_files_get_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="is a directory"):
        read_alignment(tmp_path)
    with pytest.raises(ValueError, match=r"looks like the alignment itself.*StringIO"):
        read_alignment(">a\nACDE\n>b\nKLMN\n")
    with pytest.raises(ValueError, match="too long to be a path|alignment itself"):
        read_alignment("A" * 5000)
    with pytest.raises(ValueError, match="too long to be a path"):
        read_alignment(os.fsencode("A" * 5000))
    with pytest.raises(FileNotFoundError, match="no file at"):
        read_alignment(tmp_path / "missing.fasta")


def test_an_alphabet_symbol_must_be_ascii():
    with pytest.raises(ValueError, match="not ASCII"):
        read_alignment(io.StringIO(">a\nΩA\n"), alphabet="-AΩ")


def test_reads_100000_sequences_in_seconds(tmp_path):
    n, L = 100_000, 60
    rng = np.random.default_rng(0)
    letters = np.frombuffer(PROTEIN.encode(), dtype=np.uint8)
    rows = letters[rng.integers(0, len(PROTEIN), size=(n, L))]
    lines = np.full((n, L + 1), ord("\n"), dtype=np.uint8)
    lines[:, :L] = rows
    body = lines.tobytes().split(b"\n")[:-1]
    path = tmp_path / "big.fasta"
    path.write_bytes(b"".join(b">s%d\n%s\n" % (k, row) for k, row in enumerate(body)))
    start = time.perf_counter()
    X, ids = read_alignment(path)
    elapsed = time.perf_counter() - start
    code_of = np.zeros(256, dtype=np.uint8)
    code_of[letters] = np.arange(len(PROTEIN))
    assert X.shape == (n, L) and ids[-1] == f"s{n - 1}"
    assert np.array_equal(X, code_of[rows])
    print(f"read_alignment: {n} sequences of {L} columns in {elapsed:.2f} s")
    assert elapsed < 10.0, f"read {n} sequences in {elapsed:.1f} s"


def test_apc_of_huge_finite_scores_is_finite_and_scales_with_them():
    rng = np.random.default_rng(5)
    S = rng.random((6, 6))
    S = S + S.T
    for factor in (1e150, 1e300 / S.max()):
        corrected = apc(S * factor)
        assert np.all(np.isfinite(corrected))
        assert np.allclose(corrected / factor, apc(S), rtol=1e-12, atol=0)
    assert np.array_equal(apc(np.full((4, 4), 1e300)), np.zeros((4, 4)))


def test_contact_precision_needs_a_pair_far_enough_apart():
    S = np.random.default_rng(6).random((6, 6))
    truth = np.zeros((6, 6), dtype=bool)
    with pytest.raises(ValueError, match="min_separation=6 leaves no pair"):
        contact_precision(S + S.T, truth, 3, min_separation=6)
    with pytest.warns(UserWarning, match="Only 1 pairs"):
        assert contact_precision(S + S.T, truth, 3, min_separation=5) == 0.0


def test_sequence_weights_refuse_a_billion_zero_stride_rows_before_any_copy():
    """np.broadcast_to rows cost nothing until compared or copied: the size
    is checked on the shape first (under the battery's memory limits)."""
    from contract import _Guards

    huge = np.broadcast_to(np.arange(5, dtype=np.int64)[None, :], (10**9, 5))
    with _Guards(), pytest.raises(MemoryError, match="X of shape"):
        sequence_weights(huge)


@pytest.mark.parametrize(
    "text",
    ["# STOCKHOLM 1.0\n//\n", ">ss_pred PSIPRED\nCCHHC\n", "#a comment\n\n# another\n"],
    ids=["empty stockholm", "annotation only", "comments only"],
)
def test_a_file_without_sequences_says_so(text):
    with pytest.raises(ValueError, match="no sequence"):
        read_alignment(io.StringIO(text))
