"""Reading multiple sequence alignments (FASTA, A2M and plain one-line-per-
sequence files) into integer codes.

The codes follow plmc (Hopf et al. 2017; debbiemarkslab/plmc): a letter's
code is its position in the alphabet string, so with the protein alphabet
``-ACDEFGHIKLMNPQRSTVWY`` the gap is 0 and alanine 1. Plain Python: reading
13,600 sequences of 53 columns takes a few tens of milliseconds, far below
the fit.
"""

import gzip
import io
import os

import numpy as np

from .._core.utils import warn

#: The named alphabets of :func:`read_alignment`; the first symbol is the gap.
ALPHABETS = {
    "protein": "-ACDEFGHIKLMNPQRSTVWY",
    "rna": "-ACGU",
    "dna": "-ACGT",
}


def resolve_alphabet(alphabet):
    """The alphabet string of a name or a user string, checked."""
    if not isinstance(alphabet, str):
        raise TypeError(
            f"alphabet must be 'protein', 'rna', 'dna' or a string of symbols, "
            f"got {type(alphabet).__name__}."
        )
    symbols = ALPHABETS.get(alphabet.lower(), alphabet)
    if len(symbols) < 2 or len(symbols) > 255:
        raise ValueError(
            f"alphabet must have 2 to 255 symbols (the first is the gap); got "
            f"{len(symbols)} in {alphabet!r}. Use 'protein', 'rna', 'dna' or a "
            "string such as '-ACGT'."
        )
    if len(set(symbols)) != len(symbols):
        raise ValueError(f"alphabet {alphabet!r} repeats a symbol; give each once.")
    return symbols


def _code_table(symbols, rna):
    """Byte -> code lookup: -1 for A2M inserts (lowercase letters not in the
    alphabet, and '.'), -2 for unknown symbols."""
    table = np.full(256, -2, dtype=np.int16)
    for code, symbol in enumerate(symbols):
        table[ord(symbol)] = code
    for byte in range(256):
        char = chr(byte)
        if table[byte] == -2 and (char == "." or char.islower()):
            table[byte] = -1  # an insert column of A2M
    if rna and "T" not in symbols and "U" in symbols:
        table[ord("T")] = symbols.index("U")
    for byte in (ord(" "), ord("\t"), ord("\r"), ord("*")):
        if table[byte] == -2:
            table[byte] = -3  # white space and the stop symbol: skipped
    return table


def _open_text(path_or_file):
    """Lines of a path (gzip detected by its magic bytes) or an open file."""
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        try:
            with open(path_or_file, "rb") as handle:
                raw = handle.read()
        except FileNotFoundError as error:
            raise FileNotFoundError(
                f"path_or_file: no file at {path_or_file!r}. Give the path of a "
                "FASTA or A2M alignment (gzipped or not), or an open file."
            ) from error
    elif hasattr(path_or_file, "read"):
        raw = path_or_file.read()
        if isinstance(raw, str):
            raw = raw.encode("latin-1")
    else:
        raise TypeError(
            "path_or_file must be a path or an open file, got "
            f"{type(path_or_file).__name__}."
        )
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    return io.BytesIO(raw).read().splitlines()


def _fasta_records(lines):
    """``(ids, chunks)``: each header without '>' and its sequence lines."""
    ids, chunks = [], []
    for line in lines:
        if line.startswith(b">"):
            ids.append(line[1:].strip().decode("latin-1"))
            chunks.append([])
        elif line.strip():
            chunks[-1].append(line.strip())
    return ids, chunks


def _plain_records(lines):
    """``(ids, chunks)`` of a plain alignment (PSICOV's and freecontact's
    ``.aln``): one aligned sequence per line, ids its number from 1."""
    rows = [line.strip() for line in lines if line.strip()]
    if any(row.startswith(b">") for row in rows):
        raise ValueError(
            "path_or_file mixes plain sequence lines with FASTA headers: in "
            "FASTA the first non-empty line starts with '>'; in a plain "
            "alignment no line does."
        )
    return [str(k) for k in range(1, len(rows) + 1)], [[row] for row in rows]


def parse_alignment(path_or_file, symbols):
    """``(codes, ids, n_unknown)`` of a FASTA / A2M alignment, or of a plain
    one (no line starts with '>'; ids '1', '2', ...)."""
    lines = _open_text(path_or_file)
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        raise ValueError("path_or_file holds no sequence (it is empty).")
    if first.startswith(b">"):
        ids, chunks = _fasta_records(lines)
    else:
        ids, chunks = _plain_records(lines)
    table = _code_table(symbols, rna=symbols in (ALPHABETS["rna"],))
    rows = []
    n_unknown = 0
    width = None
    for name, chunk in zip(ids, chunks, strict=True):
        raw = np.frombuffer(b"".join(chunk), dtype=np.uint8)
        codes = table[raw]
        codes = codes[codes != -3]
        codes = codes[codes != -1]  # A2M insert columns
        unknown = codes == -2
        n_unknown += int(unknown.sum())
        codes[unknown] = 0
        if width is None:
            width = codes.size
        elif codes.size != width:
            raise ValueError(
                f"sequence {name!r} has {codes.size} aligned columns, the first "
                f"sequence {width}: the file is not an alignment (in A2M, "
                "lowercase letters and '.' are insert columns and are dropped)."
            )
        rows.append(codes)
    if width == 0:
        raise ValueError(
            "path_or_file has no aligned columns (every letter was lowercase or '.', "
            "which A2M reads as inserts). Upper-case the match columns."
        )
    return np.array(rows, dtype=np.uint8), ids, n_unknown


def read_alignment(path_or_file, alphabet="protein"):
    """The body of :func:`sklearn_rbm.sequences.read_alignment`."""
    symbols = resolve_alphabet(alphabet)
    X, ids, n_unknown = parse_alignment(path_or_file, symbols)
    if n_unknown:
        warn(
            f"{n_unknown} letters outside the alphabet {symbols!r} were read as "
            f"the gap {symbols[0]!r} (code 0). Pass the alphabet that the file "
            "uses to keep them."
        )
    return X, ids
