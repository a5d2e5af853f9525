"""The files of multiple sequence alignments, opened and split into records.

One opener (:func:`read_source`) for every reader: a path or an open file
(binary or text), compressed or not (gzip, bz2 and xz recognised by their
first bytes, whatever the file is called), a UTF-8 byte-order mark skipped.
Every failure becomes one ``ValueError`` that names the file, and the line
where there is one, and says what to do.

Then one parser per format, each giving :class:`Records`: the id, the
aligned text and the line of every sequence, for ``alignment.py`` to encode.

* FASTA and A2M (``>`` headers); A3M (HHblits, HHsuite) is A2M without the
  '.' padding of insert columns: both drop lowercase letters and '.', so one
  parser reads the three. Comment lines starting with '#' before the first
  header (A3M files of ColabFold) are skipped, and so are HHsuite's
  secondary-structure records (``>ss_pred``, ``>ss_conf``, ``>ss_dssp``,
  ``>sa_dssp``), which are annotations, not sequences.
* Stockholm (Pfam, HMMER, Rfam; ``# STOCKHOLM 1.0``): interleaved blocks of
  ``name aligned-sequence`` lines. With a ``#=GC RF`` line (HMMER's
  ``hmmalign``) its '.', '-' and '~' columns are the insert columns, and in
  the others '.' is a gap and a lowercase letter the residue; without it
  the A2M convention holds (Pfam). ``#=GS name DE text`` descriptions are
  appended to the ids, as ``esl-reformat`` does when it writes FASTA.
* Plain (PSICOV's and freecontact's ``.aln``): one aligned sequence a line
  ('#' lines are comments).
"""

import bz2
import dataclasses
import errno
import gzip
import lzma
import os
import zlib

#: First bytes of the compressed formats, and how to open each.
_COMPRESSED = (
    (b"\x1f\x8b", "gzip", gzip.decompress),
    (b"BZh", "bz2", bz2.decompress),
    (b"\xfd7zXZ\x00", "xz", lzma.decompress),
)
_UTF8_BOM = b"\xef\xbb\xbf"
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")
#: HHsuite's annotation records of an A3M file (secondary structure).
_ANNOTATIONS = {b"ss_pred", b"ss_conf", b"ss_dssp", b"sa_dssp"}
#: The insert-column marks of a Stockholm ``#=GC RF`` line.
_RF_INSERTS = b".-~"
# A str argument longer than this, or holding a line break or a '>', is the
# alignment's text given by mistake, not a path.
_LONGEST_PATH = 4096


@dataclasses.dataclass
class Records:
    """The sequences of one alignment: ``ids`` (str), ``sequences`` (the
    aligned bytes of each, lines joined), ``lines`` (the 1-based line where
    each starts), the file's ``name`` for messages, and ``rf``: the columns
    of a Stockholm reference annotation (bytes), or None."""

    ids: list
    sequences: list
    lines: list
    name: str
    rf: bytes = None


class AlignmentFileError(ValueError):
    """A file that is not a readable alignment; the message names it."""


def _name_of(path_or_file):
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        return repr(os.fsdecode(path_or_file))
    name = getattr(path_or_file, "name", None)
    return repr(name) if isinstance(name, str) else "<stream>"


def _check_path_text(path):
    """Refuse a str that is the alignment's text rather than a path."""
    if isinstance(path, str) and (
        "\n" in path or path.lstrip().startswith(">") or len(path) > _LONGEST_PATH
    ):
        start = path[:40].replace("\n", "\\n")
        raise AlignmentFileError(
            f"path_or_file is a str that looks like the alignment itself "
            f"({start!r}...), not the path of a file. Pass the text as "
            "io.StringIO(text), or give the file's path."
        )


def _read_path(path):
    _check_path_text(path)
    name = _name_of(path)
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError as error:
        raise FileNotFoundError(
            f"path_or_file: no file at {name}. Give the path of an alignment "
            "(FASTA, A2M, A3M, Stockholm or plain; compressed or not), or an "
            "open file."
        ) from error
    except IsADirectoryError as error:
        raise AlignmentFileError(
            f"path_or_file {name} is a directory: give the path of one "
            "alignment file inside it."
        ) from error
    except OSError as error:
        if error.errno == errno.ENAMETOOLONG:
            raise AlignmentFileError(
                f"path_or_file ({len(os.fsdecode(path))} characters) is too long "
                "to be a path: give a file's path, or the text as io.StringIO(text)."
            ) from error
        raise AlignmentFileError(
            f"path_or_file {name} cannot be read ({error.strerror or error}): "
            "give a readable file."
        ) from error


def _read_stream(stream):
    name = _name_of(stream)
    try:
        raw = stream.read()
    except (OSError, UnicodeDecodeError) as error:
        raise AlignmentFileError(
            f"path_or_file {name} cannot be read ({error}): open it in binary "
            "mode ('rb'), or give its path."
        ) from error
    if isinstance(raw, str):
        # A text stream holds characters: written back as UTF-8, the
        # encoding the ids are decoded from.
        return raw.encode("utf-8", errors="surrogateescape")
    if isinstance(raw, (bytes, bytearray, memoryview)):
        return bytes(raw)
    raise TypeError(
        f"path_or_file's read() must return bytes or str, got "
        f"{type(raw).__name__}: pass an open file or a path."
    )


def _decompress(raw, name):
    for magic, kind, decompress in _COMPRESSED:
        if raw.startswith(magic):
            try:
                return decompress(raw)
            except (EOFError, OSError, zlib.error, lzma.LZMAError, ValueError) as error:
                raise AlignmentFileError(
                    f"path_or_file {name} is a truncated or corrupt {kind} file "
                    f"({error}): give a complete file (download or compress it again)."
                ) from error
    return raw


def read_source(path_or_file):
    """``(text, name)``: the bytes of an alignment (decompressed, without a
    byte-order mark) and the file's name for messages."""
    if isinstance(path_or_file, (str, bytes, os.PathLike)):
        raw = _read_path(path_or_file)
    elif hasattr(path_or_file, "read"):
        raw = _read_stream(path_or_file)
    else:
        raise TypeError(
            "path_or_file must be a path or an open file, got "
            f"{type(path_or_file).__name__}."
        )
    name = _name_of(path_or_file)
    raw = _decompress(raw, name)
    if raw.startswith(_UTF8_BOM):
        raw = raw[len(_UTF8_BOM) :]
    elif raw.startswith(_UTF16_BOMS):
        try:
            raw = raw.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError as error:
            raise AlignmentFileError(
                f"path_or_file {name} starts with a UTF-16 byte-order mark but "
                f"is not UTF-16 ({error}): save it as UTF-8."
            ) from error
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        raise AlignmentFileError(
            f"path_or_file {name} is not a text file (a zero byte at line "
            f"{line}): give a FASTA, A2M, A3M, Stockholm or plain alignment, "
            "uncompressed or compressed with gzip, bz2 or xz."
        )
    return raw, name


def decode_id(raw):
    """An id as written: UTF-8, or Latin-1 for the older files that are not
    UTF-8 (every byte is a Latin-1 character)."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


# ------------------------------------------------------------------ formats
def _fasta(lines, name):
    ids, chunks, starts = [], [], []
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if line.startswith(b">"):
            ids.append(line[1:].strip())
            chunks.append([])
            starts.append(number)
        elif not line or (not ids and line.startswith(b"#")):
            continue  # blank lines; A3M comments before the first header
        elif not ids:
            raise AlignmentFileError(
                f"path_or_file {name}, line {number}: sequence text before the "
                "first '>' header. Remove it, or give each sequence a header."
            )
        else:
            chunks[-1].append(line)
    records = Records([], [], [], name)
    for raw_id, chunk, line in zip(ids, chunks, starts, strict=True):
        if raw_id.split(b" ", 1)[0] in _ANNOTATIONS:
            continue
        if not chunk:
            raise AlignmentFileError(
                f"path_or_file {name}, line {line}: the header "
                f">{decode_id(raw_id)[:40]} has no sequence line below it. Give "
                "every header its aligned sequence, or remove the header."
            )
        records.ids.append(decode_id(raw_id))
        records.sequences.append(b"".join(chunk))
        records.lines.append(line)
    return records


def _plain(lines, name):
    records = Records([], [], [], name)
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith(b"#"):
            continue  # blank lines and comments
        if line.startswith(b">"):
            raise AlignmentFileError(
                f"path_or_file {name}, line {number}: the file mixes plain "
                "sequence lines with FASTA headers (its first sequence has no "
                "header). In FASTA, the first non-empty line must start with "
                "'>'; in a plain alignment no line does."
            )
        records.ids.append(str(len(records.ids) + 1))
        records.sequences.append(line)
        records.lines.append(number)
    return records


def _stockholm_line(line, number, name):
    parts = line.split(None, 1)
    if len(parts) != 2 or not parts[1].strip():
        raise AlignmentFileError(
            f"path_or_file {name}, line {number}: a Stockholm sequence line must "
            "be 'name aligned-sequence'; this one has no sequence. Fix or "
            "remove the line."
        )
    return parts[0], parts[1].replace(b" ", b"").replace(b"\t", b"")


def _stockholm(lines, name):
    rows, first_line, descriptions, rf = {}, {}, {}, []
    ended = False
    for number, line in enumerate(lines, start=1):
        line = line.strip()
        if not line or line.startswith(b"# STOCKHOLM"):
            if ended and line:
                raise AlignmentFileError(
                    f"path_or_file {name}, line {number}: a second alignment "
                    "(Stockholm files may hold several, as Pfam's do). Split the "
                    "file and give one alignment at a time."
                )
            continue
        if ended:
            raise AlignmentFileError(
                f"path_or_file {name}, line {number}: text after the '//' that "
                "ends the alignment: a file must hold one alignment. Remove the text."
            )
        if line == b"//":
            ended = True
        elif line.startswith(b"#=GC"):
            parts = line.split(None, 2)
            if len(parts) == 3 and parts[1] == b"RF":
                rf.append(parts[2].replace(b" ", b""))
        elif line.startswith(b"#=GS"):
            parts = line.split(None, 3)
            if len(parts) == 4 and parts[2] == b"DE":
                descriptions[parts[1]] = parts[3].strip()
        elif not line.startswith(b"#"):
            seq_name, text = _stockholm_line(line, number, name)
            if seq_name not in rows:
                rows[seq_name], first_line[seq_name] = [], number
            rows[seq_name].append(text)
    if not ended:
        raise AlignmentFileError(
            f"path_or_file {name}, line {len(lines)}: the Stockholm alignment "
            "does not end with '//' (the file may be truncated): a Stockholm "
            "alignment must end with a line '//'. Download it again, or add it."
        )
    records = Records([], [], [], name, b"".join(rf) if rf else None)
    for seq_name, chunks in rows.items():
        described = (
            seq_name + b" " + descriptions[seq_name]
            if (seq_name in descriptions)
            else seq_name
        )
        records.ids.append(decode_id(described))
        records.sequences.append(b"".join(chunks))
        records.lines.append(first_line[seq_name])
    return records


def split_records(text, name):
    """The :class:`Records` of an alignment's bytes, by its format: Stockholm
    when it starts with ``# STOCKHOLM``, FASTA / A2M / A3M when its first
    line that is not a '#' comment starts with '>', plain otherwise (its
    '#' lines skipped as comments too)."""
    lines = text.splitlines()
    significant = (line.strip() for line in lines)
    first = next((line for line in significant if line), None)
    if first is None:
        raise AlignmentFileError(
            f"path_or_file {name} holds no sequence (it is empty): give a "
            "non-empty alignment."
        )
    if first.startswith(b"# STOCKHOLM"):
        return _stockholm(lines, name)
    first_sequence = next(
        (line.strip() for line in lines if line.strip()[:1] not in (b"", b"#")),
        None,
    )
    if first_sequence is None:
        raise AlignmentFileError(
            f"path_or_file {name} holds only '#' comment lines, no sequence: "
            "give a non-empty alignment."
        )
    if first_sequence.startswith(b">"):
        return _fasta(lines, name)
    return _plain(lines, name)
