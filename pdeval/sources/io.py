"""Read and write TREC run and qrels files.

Formats
-------
A **run** file holds one line per retrieved document::

    query_id  Q0  doc_id  rank  score  tag  [anything else ...]

A **qrels** file holds one line per judgment::

    query_id  iteration  doc_id  relevance

Fields are separated by any run of ASCII whitespace (spaces, tabs, ``\\r``, ``\\v``, ``\\f``),
as trec_eval's parser (C ``isspace``) does; lines end with ``\\n``.

How each quirk of real files is handled (trec_eval's behaviour in brackets, from its
``get_trec_results.c`` / ``get_qrels.c``):

==========================  =====================================================================
quirk                       pdeval
==========================  =====================================================================
column 2 of a run           ignored, any token (``Q0``, ``q0``, ``0``...) [same]
tabs, repeated spaces,      any run of whitespace separates fields [same]
leading/trailing blanks
rank column                 kept as the ``rank`` column (int64) but never used for ordering;
                            it may start at 0. It must be an integer (an integral float such as
                            ``1.0`` is accepted) [trec_eval ignores it entirely], so a shifted
                            column is caught
fields after the 6th        ignored (``results.trunc``) [same]
fewer than 6 run fields     :class:`ParseError` with file and line [trec_eval: "Malformed line"];
                            a line that looks like a qrels line (and a qrels line that looks
                            like a run line) says so: the files were probably swapped
the tag (6th field)         required but dropped: runs are named by file (see :func:`run_name`),
                            or by tag with ``run_from="tag"`` [trec_eval keeps the last line's tag]
score                       a decimal number (``1``, ``-2.5``, ``.5``, ``3e-4``) or ``inf``;
                            anything else or NaN is a :class:`ParseError` [trec_eval reads it
                            with ``atof``: ``abc`` silently becomes 0]
``#`` inside a doc id       kept: only a line whose first non-blank character is ``#`` can be a
                            comment [same]
``#`` lines in a run        a line starting with ``#`` that is a well-formed run line is read as
                            data (its query id starts with ``#``), as trec_eval 9 does [trec_eval
                            10 skips it]; any other ``#`` line is a comment, skipped with a
                            :class:`PdevalWarning` naming the file, the count and the first line
blank lines                 skipped (run and qrels) [runs: skipped; qrels: "Malformed line"]
comment lines in qrels      skipped and counted in an INFO log message of the ``pdeval.sources.io``
                            logger [only ``#`` in column 1]
line endings                ``\n`` and ``\r\n``; a lone ``\r`` (old Mac files, or a file
                            mixing conventions) also ends a line [trec_eval: whitespace, so a
                            CR-only file is one line]
qrels fields                exactly 4, else :class:`ParseError` [same]
relevance                   an integer; an integral float such as ``1.0`` is accepted, ``1.5``,
                            ``0x37``, ``1e+8`` raise :class:`ParseError` [trec_eval reads it
                            with ``atol``: ``1.5`` -> 1, ``1e+8`` -> 1, ``0x37`` -> 0]
negative relevance          kept (pooled but unjudged) [same]
duplicate doc in a topic    :class:`DuplicateError` naming file, lines and keys, unless
                            ``duplicates="first"|"max"`` (then a :class:`PdevalWarning` per file
                            with the count) [trec_eval refuses the run]
empty file                  :class:`ParseError` naming the file [trec_eval: cannot read]
missing file                :class:`MissingFileError` (a :class:`PdevalError` and a
                            :class:`FileNotFoundError`)
compression                 ``.gz``, ``.bz2`` and ``.xz`` are decompressed transparently
encoding                    UTF-8; an invalid byte sequence is a :class:`ParseError`; a UTF-8
                            byte-order mark at the start is dropped [trec_eval: part of the qid]
NUL bytes                   :class:`ParseError` [trec_eval: "File may contain no NULL characters"]
==========================  =====================================================================

Speed
-----
A run file is decompressed and parsed in blocks of whole lines (32 MiB), so that its text is
never held whole (a gzip file's compressed bytes are), also on the way to an error. Each
block goes to the first parser that accepts it: Arrow's CSV reader when the lines are plainly separated by single spaces or
single tabs (the common case; what it returns is checked against the rules above), else
Arrow's string kernels (split lines, split on whitespace, validate numbers with a regular
expression, cast), else a plain-Python parser that applies the same rules line by line and
raises the error with the exact line number. All of them build the same frame (this is
tested on every quirk). The duplicate check runs on integer keys of the ids
(:mod:`pdeval.engine.ids`); only a file that may repeat a document is checked on the frame.
"""

from __future__ import annotations

import bz2
import codecs
import functools
import gzip
import logging
import lzma
import os
import re
import warnings
import zlib

try:  # Intel's ISA-L inflates gzip about twice as fast as zlib, with zlib's interface
    from isal import isal_zlib as _inflate
except ImportError:  # pragma: no cover - platforms without an isal wheel
    _inflate = zlib
from glob import glob
from pathlib import Path
from typing import Iterable, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.errors import MissingFileError, ColumnWarning, DuplicateError, ParseError, PdevalWarning, SchemaError, warn
from pdeval.frames.canonical import DuplicatePolicy, as_qrels, as_run, take_rows, variant_keys
from pdeval.engine.ids import encode, short_keys
from pdeval.sources.tables import is_source, read_source
from pdeval.engine.ranking import groups_with_repeats, rank_run, row_blocks
from pdeval.common import threads

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

__all__ = [
    "MissingFileError",
    "RUN_EXTENSIONS",
    "read_run",
    "read_qrels",
    "write_run",
    "write_qrels",
    "run_name",
]

logger = logging.getLogger("pdeval.sources.io")

PathLike = Union[str, "os.PathLike[str]"]
RunSource = Union[PathLike, Iterable[PathLike]]


#: compression suffixes read (and written) transparently
COMPRESSION_SUFFIXES = {".gz": gzip, ".bz2": bz2, ".xz": lzma}

#: file extensions that only say "a text file of results" and are dropped from run names
RUN_EXTENSIONS = (".txt", ".tsv", ".res", ".result", ".results", ".run", ".runs", ".out", ".trec", ".dat")

#: the 6 leading fields of a run line, for messages
_RUN_FIELDS = "query_id Q0 doc_id rank score tag"
_QRELS_FIELDS = "query_id iteration doc_id relevance"

# Number grammars, shared by both parsers (Python ``re`` with ASCII digits, RE2 in Arrow).
_SCORE_PATTERN = r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)$"
_NAN_PATTERN = r"^[+-]?[nN][aA][nN]$"
_INT_PATTERN = r"^[+-]?[0-9]+$"
_RELEVANCE_PATTERN = r"^[+-]?[0-9]+(?:\.0*)?$"  # an integer or an integral float (``1.0``)
_SCORE_RE = re.compile(_SCORE_PATTERN, re.ASCII)
_NAN_RE = re.compile(_NAN_PATTERN, re.ASCII)
_INT_RE = re.compile(_INT_PATTERN, re.ASCII)
_RELEVANCE_RE = re.compile(_RELEVANCE_PATTERN, re.ASCII)
_LEADING_INT_RE = re.compile(r"^[+-]?[0-9]+", re.ASCII)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1

#: characters an id cannot hold in a TREC file: the field separators (C ``isspace``) and NUL
_UNWRITABLE = r"[ \t\n\r\x0b\x0c\x00]"


# --------------------------------------------------------------------------- paths and names


def run_name(path: PathLike) -> str:
    """The run name pdeval gives the run file at ``path``.

    The rule: take the file name, drop one compression suffix (``.gz``, ``.bz2``, ``.xz``),
    then drop one extension if it is in :data:`RUN_EXTENSIONS` (``.txt``, ``.tsv``,
    ``.res``, ``.result``, ``.results``, ``.run``, ``.runs``, ``.out``, ``.trec``, ``.dat``).
    Other extensions are part of the name, because real run files use them as numbers:
    ``CUNI_en.run1.gz`` -> ``CUNI_en.run1``, ``CUNI_EN_Run.2.dat.gz`` -> ``CUNI_EN_Run.2``,
    ``results.test`` -> ``results.test``, ``IELAB_01.txt.gz`` -> ``IELAB_01``.
    """
    name = Path(path).name
    lower = name.lower()
    for suffix in COMPRESSION_SUFFIXES:
        if lower.endswith(suffix) and len(name) > len(suffix):
            name = name[: -len(suffix)]
            lower = name.lower()
            break
    for ext in RUN_EXTENSIONS:
        if lower.endswith(ext) and len(name) > len(ext):
            return name[: -len(ext)]
    return name


def _is_hidden(path: Path) -> bool:
    return path.name.startswith(".")


def _has_glob_magic(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def _resolve_sources(source: RunSource) -> list[Path]:
    """Expand a path, directory, glob pattern or list of them into a list of files."""
    if isinstance(source, (str, os.PathLike)):
        items: list = [source]
    else:
        try:
            items = list(source)
        except TypeError:
            raise SchemaError(
                f"source must be a path, a directory, a glob pattern or a list of them, "
                f"not {type(source).__name__}"
            ) from None
        if not items:
            raise MissingFileError("no run file given (the list of sources is empty)")
    files: list[Path] = []
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise SchemaError(f"a run source must be a path or a glob pattern, not {type(item).__name__}: {item!r}")
        path = Path(item)
        if path.is_dir():
            found = sorted(p for p in path.iterdir() if p.is_file() and not _is_hidden(p))
            if not found:
                raise MissingFileError(f"directory {str(path)!r} holds no (non-hidden) file", str(path))
            files.extend(found)
        elif path.exists():
            files.append(path)
        elif isinstance(item, str) and _has_glob_magic(item):
            found = sorted(Path(p) for p in glob(item) if Path(p).is_file() and not _is_hidden(Path(p)))
            if not found:
                raise MissingFileError(f"no file matches the pattern {item!r}", item)
            files.extend(found)
        else:
            raise MissingFileError(f"file not found: {str(path)!r}", str(path))
    return files


def _read_bytes(path: Path) -> bytes:
    """The whole content of ``path``, decompressed according to its suffix, without a leading
    byte-order mark and with every lone CR line end made a LF (CRLF stays: every parser takes
    it; the block reader's pieces, joined)."""
    return b"".join(_line_blocks(path, _BLOCK_BYTES))


#: decompressed bytes parsed at a time: a file of any size is never held whole
_BLOCK_BYTES = 1 << 25


def _blocks(path: Path):
    """The content of ``path``, decompressed according to its suffix, as blocks of whole
    lines of about :data:`_BLOCK_BYTES`: yields ``(block, number of its first line)``."""
    line, pending = 1, None
    for block in _line_blocks(path, _BLOCK_BYTES):
        if pending is not None:
            yield pending, line
            line += pending.count(b"\n")
        pending = block
    if pending is not None:
        yield pending, line


def _line_blocks(path: Path, block_bytes: int):
    """Blocks of whole lines of the decompressed content of ``path``."""
    rest = carry = b""
    first = True
    for piece in _decompressed(path, block_bytes):
        if first:
            first = False
            if piece.startswith(codecs.BOM_UTF8):  # a byte-order mark is not part of the first query id
                piece = piece[len(codecs.BOM_UTF8) :]
        piece, carry = carry + piece, b""
        if piece.endswith(b"\r"):  # it may be half of a CRLF split between two pieces
            piece, carry = piece[:-1], b"\r"
        if _has_lone_return(piece):
            # a CR alone (old Mac files) ends a line too; CRLF stays (the parsers take it)
            piece = piece.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        end = piece.rfind(b"\n")
        if end < 0:  # no line ends in this piece: read on
            rest += piece
            continue
        block, rest = rest + piece[: end + 1], piece[end + 1 :]
        yield block
    if carry:  # the file ends with a lone CR
        rest += b"\n"
    if rest:
        yield rest


def _has_lone_return(data: bytes) -> bool:
    """Whether some CR in ``data`` is not followed by a LF (one vectorised pass where there is
    a CR at all: counting CRs and CRLFs with ``bytes.count`` takes four times as long)."""
    if b"\r" not in data:
        return False
    text = np.frombuffer(data, dtype=np.uint8)
    returns = np.flatnonzero(text == 13)
    return bool(len(returns)) and (returns[-1] + 1 == len(text) or bool((text[returns + 1] != 10).any()))


def _decompressed(path: Path, block_bytes: int):
    """Pieces of about ``block_bytes`` of the content of ``path``, decompressed."""
    module = COMPRESSION_SUFFIXES.get(path.suffix.lower())
    try:
        handle = open(path, "rb")
    except FileNotFoundError:
        raise MissingFileError(f"file not found: {str(path)!r}", str(path)) from None
    except IsADirectoryError:
        raise MissingFileError(f"{str(path)!r} is a directory, not a file", str(path)) from None
    except OSError as exc:
        raise ParseError(f"cannot read the file ({exc.strerror or exc})", str(path)) from exc
    with handle:
        try:
            if module is None:
                while piece := handle.read(block_bytes):
                    yield piece
            elif module is gzip:  # zlib's interface directly: it checks the CRC, and members follow each other
                # the compressed bytes are read a piece at a time too (a file is never held whole)
                raw = handle.read(block_bytes)
                while raw:
                    inflater = _inflate.decompressobj(wbits=31)
                    while raw and not inflater.eof:
                        yield inflater.decompress(raw, block_bytes)
                        raw = inflater.unconsumed_tail or (b"" if inflater.eof else handle.read(block_bytes))
                    if not inflater.eof:
                        raise EOFError("the compressed data end before the end-of-stream marker")
                    raw = inflater.unused_data or handle.read(block_bytes)
            else:
                with module.open(handle, "rb") as stream:
                    while piece := stream.read(block_bytes):
                        yield piece
        except (OSError, EOFError, zlib.error, _inflate.error, lzma.LZMAError, ValueError) as exc:
            raise ParseError(f"cannot decompress the {path.suffix} file ({exc})", str(path)) from exc


def _show(line: bytes, limit: int = 120) -> str:
    text = line.decode("utf-8", errors="replace").rstrip("\r")
    if len(text) > limit:
        text = text[:limit] + "..."
    return repr(text)


# --------------------------------------------------------------------------- parsed columns


class _Columns:
    """Parsed fields of one file as Arrow arrays (or Python lists) plus 1-based line numbers."""

    __slots__ = ("line", "fields", "comments", "blanks", "first_comment")

    def __init__(self, line: np.ndarray, fields: dict, comments: int, blanks: int, first_comment: int = 0):
        self.line = line
        self.fields = fields
        self.comments = comments
        self.blanks = blanks
        self.first_comment = first_comment  # line number of the first comment line (0: none)


def _string_series(values) -> pd.Series:
    """A pandas string Series (the default ``str`` dtype) from an Arrow array or a list."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values, type=pa.large_string())
    return values.to_pandas().rename(None)


def _numeric_array(values, dtype) -> np.ndarray:
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return np.asarray(values.to_numpy(zero_copy_only=False), dtype=dtype)
    return np.asarray(values, dtype=dtype)


# --------------------------------------------------------------------------- fast path (pyarrow)


def _fast_tokens(data: bytes, first_line: int = 1):
    """Lines of ``data`` (the first one being line ``first_line`` of its file) split on
    whitespace, with blank and comment lines removed.

    Returns ``(tokens, line_numbers, n_comments, n_blanks)`` or ``None`` when the fast path
    cannot handle the data (then the Python parser decides).
    """
    if b"\x00" in data:
        return None
    lines = pc.split_pattern(pa.array([data], type=pa.large_binary()), pattern=b"\n").flatten()
    if len(lines) and len(lines[len(lines) - 1].as_py()) == 0:
        lines = lines.slice(0, len(lines) - 1)
    try:
        text = lines.cast(pa.large_string())
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return None  # invalid UTF-8: the Python parser reports the line
    trimmed = pc.ascii_trim_whitespace(text)
    blank = pc.equal(trimmed, "")
    comment = pc.starts_with(trimmed, "#")
    keep = pc.invert(pc.or_(blank, comment))
    keep_np = keep.to_numpy(zero_copy_only=False)
    n_blanks = int(pc.sum(blank).as_py() or 0)
    n_comments = int(pc.sum(comment).as_py() or 0)
    line_numbers = np.flatnonzero(keep_np).astype(np.int64) + first_line
    tokens = pc.ascii_split_whitespace(trimmed.filter(keep))
    return tokens, line_numbers, n_comments, n_blanks


def _fast_all_match(values, pattern: str) -> bool:
    return bool(pc.all(pc.match_substring_regex(values, pattern)).as_py() in (True, None))


def _fast_run(data: bytes, want_tag: bool, first_line: int = 1) -> Optional[_Columns]:
    got = _fast_tokens(data, first_line)
    if got is None:
        return None
    tokens, line_numbers, n_comments, n_blanks = got
    if n_comments:  # a '#' line may be data or a comment: the Python parser decides (and warns)
        return None
    if len(tokens) and pc.min(pc.list_value_length(tokens)).as_py() < 6:
        return None
    score_text = pc.list_element(tokens, 4)
    rank_text = pc.list_element(tokens, 3)
    if not _fast_all_match(score_text, _SCORE_PATTERN):
        return None
    if not _fast_all_match(rank_text, _INT_PATTERN):
        if not _fast_all_match(rank_text, _RELEVANCE_PATTERN):
            return None
        rank_text = pc.replace_substring_regex(rank_text, r"\.0*$", "")
    try:
        score = pc.cast(score_text, pa.float64())
        rank = pc.cast(rank_text, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    fields = {
        "query_id": pc.list_element(tokens, 0),
        "doc_id": pc.list_element(tokens, 2),
        "score": score,
        "rank": rank,
    }
    if want_tag:
        fields["tag"] = pc.list_element(tokens, 5)
    return _Columns(line_numbers, fields, n_comments, n_blanks)


#: the leading fields of a run line as the CSV reader names them
_CSV_RUN_FIELDS = ["query_id", "q0", "doc_id", "rank", "score", "tag"]


def _csv_run(data: bytes, want_tag: bool, first_line: int = 1) -> Optional[_Columns]:
    """Arrow's CSV reader on a run file whose lines are fields separated by single spaces or
    single tabs, the common case, or None (then :func:`_fast_run` decides).

    The reader splits on one delimiter and converts, in the calling thread (files are read in
    parallel by :mod:`pdeval.common.threads`, and memory freed where it was allocated is reused at
    once: with Arrow's own threads, a large file held its discarded blocks longer), but knows
    nothing of the other rules, so only data it cannot misread is given to it, and what it returns is
    checked: no NUL, ``\\v``, ``\\f``, ``#`` (comments), ``\\r`` only before ``\\n``, and no
    byte of the other separator; every line the same number of fields (else the reader fails: blank lines,
    repeated separators); no empty field among the six (a doubled separator on a short
    line); ranks checked against the integer grammar (Arrow would read ``0x10``) and scores
    not NaN. Trailing fields (a separator at the end of every line) are ignored.
    """
    if not data or any(byte in data for byte in (b"\x00", b"\x0b", b"\x0c", b"#")):
        return None
    if _has_lone_return(data):  # the reader takes Windows line ends, "\r\n"
        return None
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)]
    delimiter, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    n_fields = first.count(delimiter) + 1
    if n_fields < 6 or other in data:
        return None
    names = _CSV_RUN_FIELDS + [f"extra{i}" for i in range(n_fields - 6)]
    # Arrow reads "0x10" as an integer: with an "x" anywhere, ranks are read as text (few
    # distinct values) and checked against the integer grammar
    hexadecimal = b"x" in data or b"X" in data
    rank_type = pa.dictionary(pa.int32(), pa.string()) if hexadecimal else pa.int64()
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pa_csv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(
                include_columns=_CSV_RUN_FIELDS,
                column_types={"query_id": pa.string(), "q0": pa.string(), "doc_id": pa.string(), "rank": rank_type,
                              "score": pa.float64(), "tag": pa.string()},
                null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    for name in ("query_id", "q0", "doc_id", "tag"):
        if table.num_rows and pc.min(pc.binary_length(table[name])).as_py() == 0:
            return None
    if table.num_rows and pc.any(pc.is_nan(table["score"])).as_py():
        return None
    rank = table["rank"]
    if hexadecimal:
        ranks = []
        for chunk in rank.chunks:
            if not _fast_all_match(chunk.dictionary, _INT_PATTERN):
                return None
            try:
                ranks.append(pc.take(pc.cast(chunk.dictionary, pa.int64()), chunk.indices))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                return None
        rank = pa.chunked_array(ranks, type=pa.int64())
    fields = {
        "query_id": table["query_id"],
        "doc_id": table["doc_id"],
        "score": table["score"],
        "rank": rank,
    }
    if want_tag:
        fields["tag"] = table["tag"]
    return _Columns(range(first_line, first_line + table.num_rows), fields, 0, 0)


def _fast_qrels(data: bytes) -> Optional[_Columns]:
    got = _fast_tokens(data)
    if got is None:
        return None
    tokens, line_numbers, n_comments, n_blanks = got
    if len(tokens):
        lengths = pc.list_value_length(tokens)
        if pc.min(lengths).as_py() != 4 or pc.max(lengths).as_py() != 4:
            return None
    relevance_text = pc.list_element(tokens, 3)
    if not _fast_all_match(relevance_text, _RELEVANCE_PATTERN):
        return None
    try:
        relevance = pc.cast(pc.replace_substring_regex(relevance_text, r"\.0*$", ""), pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    fields = {
        "query_id": pc.list_element(tokens, 0),
        "doc_id": pc.list_element(tokens, 2),
        "relevance": relevance,
    }
    return _Columns(line_numbers, fields, n_comments, n_blanks)


# --------------------------------------------------------------------------- Python path


def _looks_like_run(fields: Sequence[bytes]) -> bool:
    """Whether the whitespace-separated ``fields`` of a line form a well-formed run line."""
    try:
        rank, score = fields[3].decode("ascii"), fields[4].decode("ascii")
    except (IndexError, UnicodeDecodeError):
        return False
    return len(fields) >= 6 and bool(_RELEVANCE_RE.match(rank)) and bool(_SCORE_RE.match(score))


def _looks_like_qrels(fields: Sequence[str]) -> bool:
    """Whether ``fields`` form a well-formed qrels line (4 fields, an integer relevance)."""
    return len(fields) == 4 and bool(_RELEVANCE_RE.match(fields[3]))


def _python_lines(data: bytes, path: str, hash_data=None, first_line: int = 1):
    """Yield ``(line_number, fields)`` for every data line (the first line of ``data`` being
    line ``first_line`` of the file); count blanks and comments.

    A line whose first field starts with ``#`` is a comment unless ``hash_data(fields)``
    says it is data (runs: a well-formed run line whose query id starts with ``#``).
    """
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    counts = {"comments": 0, "blanks": 0, "first_comment": 0}

    def generate():
        for number, raw in enumerate(lines, start=first_line):
            if b"\x00" in raw:
                raise ParseError("the line holds a NUL byte (run and qrels files are text)", path, number)
            parts = raw.split()
            if not parts:
                counts["blanks"] += 1
                continue
            if parts[0].startswith(b"#") and not (hash_data is not None and hash_data(parts)):
                counts["comments"] += 1
                counts["first_comment"] = counts["first_comment"] or number
                continue
            try:
                fields = [part.decode("utf-8") for part in parts]
            except UnicodeDecodeError as exc:
                raise ParseError(f"the line is not valid UTF-8 ({exc.reason}): {_show(raw)}", path, number) from None
            yield number, raw, fields

    return generate(), counts


def _parse_int(text: str, what: str, path: str, number: int, raw: bytes) -> int:
    value = int(text)
    if not _INT64_MIN <= value <= _INT64_MAX:
        raise ParseError(f"{what} {text!r} does not fit a 64-bit integer: {_show(raw)}", path, number)
    return value


def _python_run(data: bytes, path: str, want_tag: bool, first_line: int = 1) -> _Columns:
    lines, counts = _python_lines(data, path, hash_data=_looks_like_run, first_line=first_line)
    numbers: list[int] = []
    qid: list[str] = []
    doc: list[str] = []
    score: list[float] = []
    rank: list[int] = []
    tag: list[str] = []
    for number, raw, fields in lines:
        if len(fields) < 6:
            hint = ""
            if _looks_like_qrels(fields):
                hint = (
                    f"; it looks like a qrels line ({_QRELS_FIELDS}): is this a qrels file given "
                    f"as a run? (pdeval eval takes the qrels file first, then the runs)"
                )
            raise ParseError(
                f"expected at least 6 whitespace-separated fields ({_RUN_FIELDS}), found "
                f"{len(fields)}: {_show(raw)}{hint}",
                path,
                number,
            )
        score_text, rank_text = fields[4], fields[3]
        if not _SCORE_RE.match(score_text):
            if _NAN_RE.match(score_text):
                raise ParseError(f"the score is NaN: {_show(raw)}", path, number)
            raise ParseError(f"the score {score_text!r} (field 5) is not a number: {_show(raw)}", path, number)
        if not _RELEVANCE_RE.match(rank_text):
            raise ParseError(
                f"the rank {rank_text!r} (field 4) is not an integer: {_show(raw)}. "
                f"Expected the fields {_RUN_FIELDS}.",
                path,
                number,
            )
        numbers.append(number)
        qid.append(fields[0])
        doc.append(fields[2])
        score.append(float(score_text))
        rank.append(_parse_int(rank_text.split(".")[0], "the rank", path, number, raw))
        if want_tag:
            tag.append(fields[5])
    out = {"query_id": qid, "doc_id": doc, "score": score, "rank": rank}
    if want_tag:
        out["tag"] = tag
    numbers_array = np.asarray(numbers, dtype=np.int64)
    return _Columns(numbers_array, out, counts["comments"], counts["blanks"], counts["first_comment"])


def _python_qrels(data: bytes, path: str) -> _Columns:
    lines, counts = _python_lines(data, path)
    numbers: list[int] = []
    qid: list[str] = []
    doc: list[str] = []
    relevance: list[int] = []
    for number, raw, fields in lines:
        if len(fields) != 4:
            hint = ""
            if _looks_like_run(raw.split()):
                hint = (
                    f"; it looks like a run line ({_RUN_FIELDS}): is this a run file given as the "
                    f"qrels? (pdeval eval takes the qrels file first, then the runs)"
                )
            raise ParseError(
                f"expected 4 whitespace-separated fields ({_QRELS_FIELDS}), found {len(fields)}: "
                f"{_show(raw)}{hint}",
                path,
                number,
            )
        text = fields[3]
        if not _RELEVANCE_RE.match(text):
            leading = _LEADING_INT_RE.match(text)
            atol = f" (trec_eval would silently read it as {int(leading.group(0))})" if leading else ""
            raise ParseError(
                f"the relevance {text!r} (field 4) is not an integer{atol}: {_show(raw)}", path, number
            )
        numbers.append(number)
        qid.append(fields[0])
        doc.append(fields[2])
        relevance.append(_parse_int(text.split(".")[0], "the relevance", path, number, raw))
    out = {"query_id": qid, "doc_id": doc, "relevance": relevance}
    return _Columns(np.asarray(numbers, dtype=np.int64), out, counts["comments"], counts["blanks"])


# --------------------------------------------------------------------------- frames from columns


def _log_skipped(path: str, columns: _Columns) -> None:
    if columns.comments or columns.blanks:
        logger.info(
            "%s: skipped %d comment line(s) and %d blank line(s)", path, columns.comments, columns.blanks
        )


def _parse_run_file(path: Path, want_tag: bool, engine: str) -> _Columns:
    """Parse a run file block by block: Arrow's CSV reader where the lines are plainly
    separated (:func:`_csv_run`), else Arrow's string kernels (:func:`_fast_run`), else (and
    with ``engine="python"``) the line-by-line parser, which raises the error with its line
    number. Only one block of text is held at a time, also on the way to an error. Warns of
    nothing (it may run in a worker thread): :func:`_report_skipped` does."""
    parts = []
    for block, first_line in _blocks(path):
        columns = None
        if engine == "auto":
            columns = _csv_run(block, want_tag, first_line)
            if columns is None:
                columns = _fast_run(block, want_tag, first_line)
        if columns is None:
            columns = _python_run(block, str(path), want_tag, first_line)
        parts.append(columns)
    columns = _concatenate(parts)
    if len(parts) > 1:  # a large file: Arrow's pool keeps what its blocks no longer use
        del parts
        pa.default_memory_pool().release_unused()
    if len(columns.line) == 0:
        # a file without data lines is empty unless some line holds a comment
        what = "is empty" if not columns.comments else "holds no run line (only comments or blank lines)"
        raise ParseError(f"the run file {what}; expected lines of {_RUN_FIELDS}", str(path))
    return columns


def _report_skipped(path: Path, columns: _Columns) -> None:
    """Warn of the comment lines a run file's parse skipped, and log the blank ones."""
    if columns.comments:  # trec_eval 9 has no comment lines in runs: never skip them silently
        warnings.warn(
            f"{path}: skipped {columns.comments} line(s) starting with '#' that are not run lines "
            f"(comments), the first at line {columns.first_comment}",
            PdevalWarning,
            stacklevel=4,
        )
    _log_skipped(str(path), columns)


def _concatenate(parts: list) -> _Columns:
    """One file's blocks as one :class:`_Columns` (Arrow columns of one chunk per block)."""
    if len(parts) <= 1:
        return parts[0] if parts else _Columns(range(1, 1), {}, 0, 0)
    lines = [part.line for part in parts]
    if all(isinstance(each, range) for each in lines) and all(
        a.stop == b.start for a, b in zip(lines[:-1], lines[1:])
    ):
        line = range(lines[0].start, lines[-1].stop)
    else:
        line = np.concatenate([np.asarray(each, dtype=np.int64) if not isinstance(each, range)
                               else np.arange(each.start, each.stop, dtype=np.int64) for each in lines])
    fields = {}
    for name, first in parts[0].fields.items():
        values = [part.fields[name] for part in parts]
        if name in ("score", "rank"):
            fields[name] = np.concatenate([_numeric_array(v, np.float64 if name == "score" else np.int64) for v in values])
        else:
            chunks = []
            for v in values:
                v = v if isinstance(v, (pa.Array, pa.ChunkedArray)) else pa.array(v, type=pa.large_string())
                chunks.extend(v.chunks if isinstance(v, pa.ChunkedArray) else [v])
            fields[name] = pa.chunked_array([c.cast(pa.large_string()) for c in chunks], type=pa.large_string())
    return _Columns(line, fields, sum(p.comments for p in parts), sum(p.blanks for p in parts))


def _duplicate_details(frame: pd.DataFrame, keys: Sequence[str], line: np.ndarray) -> str:
    """Where the first repeated key of ``frame`` occurs, as file line numbers."""
    repeated = frame.duplicated(list(keys), keep="first").to_numpy()
    position = int(np.flatnonzero(repeated)[0])
    row = frame.iloc[position]
    same = np.ones(len(frame), dtype=bool)
    for key in keys:
        same &= (frame[key] == row[key]).to_numpy()
    first = int(np.flatnonzero(same)[0])
    shown = ", ".join(f"{key}={row[key]!r}" for key in keys)
    return f"line {line[position]} repeats ({shown}) of line {line[first]}"


def _validate_with_path(
    frame: pd.DataFrame, keys: Sequence[str], line: np.ndarray, duplicates: DuplicatePolicy, path: str, kind: str,
    stacklevel: int = 3,
) -> pd.DataFrame:
    """Run ``as_run``/``as_qrels`` on one file's frame; name the file in errors and warnings
    (which point ``stacklevel`` frames up: the caller of the public reader)."""
    validate = as_run if kind == "run" else as_qrels
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PdevalWarning)
            out = validate(frame, duplicates=duplicates)
    except DuplicateError as exc:
        raise DuplicateError(f"{path}: {_duplicate_details(frame, keys, line)}; {exc}") from None
    for item in caught:
        if issubclass(item.category, PdevalWarning):
            warnings.warn(f"{path}: {item.message}", item.category, stacklevel=stacklevel)  # keeps the class
        else:  # pragma: no cover - other warnings pass through unchanged
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    return out


def _resolve_names(files: Sequence[Path], name) -> list[str]:
    if name is None:
        names = [run_name(path) for path in files]
    elif isinstance(name, str):
        if len(files) != 1:
            raise SchemaError(
                f"name={name!r} names one run but the source holds {len(files)} files; "
                f"pass a list of {len(files)} names (in the order {[p.name for p in files][:5]}...)"
            )
        names = [name]
    else:
        names = list(name)
        if len(names) != len(files):
            raise SchemaError(f"name= holds {len(names)} name(s) for {len(files)} file(s): {[str(p) for p in files]}")
    for path, each in zip(files, names):
        if not isinstance(each, str) or not each:
            raise SchemaError(f"the run name for {str(path)!r} must be a non-empty string, not {each!r}")
    seen: dict[str, Path] = {}
    for path, each in zip(files, names):
        if each in seen:
            raise SchemaError(
                f"two files get the run name {each!r}: {str(seen[each])!r} and {str(path)!r}. "
                f"Run names come from file names (see pdeval.sources.io.run_name); pass name=[...] to choose them."
            )
        seen[each] = path
    return names


def read_run(
    source: RunSource,
    name: Union[str, Sequence[str], None] = None,
    *,
    duplicates: DuplicatePolicy = "error",
    run_from: Literal["file", "tag"] = "file",
    engine: Literal["auto", "python"] = "auto",
) -> pd.DataFrame:
    """Read TREC run files into a run frame.

    Parameters
    ----------
    source
        A file path, a directory (every regular, non-hidden file in it, sorted by name), a
        glob pattern (``"runs/*.gz"``), or a list of any of these. ``.gz``, ``.bz2`` and
        ``.xz`` files are decompressed transparently.
    name
        The run name: a string (one file) or a list with one name per file, in the order the
        files are read. By default each file's name under :func:`run_name`'s rule
        (``IELAB_01.txt.gz`` -> ``IELAB_01``). Two files with the same name raise
        :class:`~pdeval.errors.SchemaError`.
    duplicates
        ``"error"`` (default): a document repeated within a topic of one run raises
        :class:`~pdeval.errors.DuplicateError` naming the file, both line numbers and the
        keys. ``"first"`` keeps the first line, ``"max"`` the highest score, each warning
        (:class:`~pdeval.errors.PdevalWarning`) with the file and the number of rows dropped.
    run_from
        ``"file"`` (default) names runs by file; ``"tag"`` uses the 6th column, for files
        that hold several runs (such as those :func:`write_run` writes into one file). A tag
        found in two files raises :class:`~pdeval.errors.SchemaError`.
    engine
        ``"auto"`` uses the pyarrow fast path when it can; ``"python"`` forces the
        line-by-line parser (same result, slower; for tests).

    Lines end with ``\n``, ``\r\n`` or ``\r``. A line starting with ``#`` is data when it is a
    well-formed run line (a query id such as ``#1``); otherwise it is a comment, skipped with a
    :class:`~pdeval.errors.PdevalWarning` naming the file, the count and the first line. The
    rank may be an integral float (``1.0``).

    Returns
    -------
    DataFrame
        Columns ``run, query_id, doc_id, score, rank`` (str, str, str, float64, int64), rows
        in file order, files in the order read. ``rank`` is the file's rank column, which
        pdeval (like trec_eval) never uses for ordering; see :func:`pdeval.engine.ranking.rank_run`.

    Raises
    ------
    MissingFileError
        A file, directory or pattern does not exist or names no file.
    ParseError
        A malformed line (its file and 1-based line number are in the message and in the
        ``path``/``line`` attributes), or an empty file.
    DuplicateError, SchemaError
        See ``duplicates``, ``name`` and ``run_from``.
    """
    if run_from not in ("file", "tag"):
        raise SchemaError(f"run_from must be 'file' or 'tag', not {run_from!r}")
    if is_source(source):  # Parquet / Arrow IPC, Polars, Arrow, ranx, ir_datasets records
        frame = read_source(source)
        if name is not None:
            if not isinstance(name, str):
                raise SchemaError("name= takes one run name for a frame, records or table files")
            frame = frame.assign(run=name)
        return as_run(frame, duplicates=duplicates)
    if engine not in ("auto", "python"):
        raise SchemaError(f"engine must be 'auto' or 'python', not {engine!r}")
    files = _resolve_sources(source)
    if run_from == "tag":
        if name is not None:
            raise SchemaError("name= cannot be combined with run_from='tag' (the tags name the runs)")
        names: list[Optional[str]] = [None] * len(files)
    else:
        names = list(_resolve_names(files, name))
    frame = _stack(list(_read_run_files(files, names, duplicates, run_from, engine)))
    pa.default_memory_pool().release_unused()  # what parsing and dropping duplicates freed
    return frame


def _read_run_files(
    files: Sequence[Path], names: Sequence[Optional[str]], duplicates: DuplicatePolicy, run_from: str, engine: str
):
    """The columns of each run file, in order, after its checks: the files are parsed and
    screened for repeated documents ahead, in worker threads (:func:`_screened_run_file`),
    and reported, checked against each other and the duplicate policy here, in file order,
    so that warnings and the first error are those of a reading one file after the other."""
    tag_files: dict[str, Path] = {}
    screened = threads.ordered(
        functools.partial(_screened_run_file, want_tag=run_from == "tag", engine=engine), zip(files, names)
    )
    for path, columns, columns_of_file, suspect in screened:
        _report_skipped(path, columns)
        if run_from == "tag":
            for tag in pd.unique(columns_of_file["run"]):
                if tag in tag_files:
                    raise SchemaError(
                        f"the tag {tag!r} names runs in two files, {str(tag_files[tag])!r} and "
                        f"{str(path)!r}; with run_from='tag' every run must come from one file"
                    )
                tag_files[tag] = path
        keys = ["run", "query_id", "doc_id"]
        if duplicates not in ("error", "first", "max"):  # refused with the policy's message
            _validate_with_path(pd.DataFrame(columns_of_file), keys, columns.line, duplicates, str(path), "run")
        if suspect is not None:
            # the exact check of pdeval.frames.canonical.as_run, on the rows of those lists only
            rows = np.flatnonzero(suspect)
            lines = columns.line[rows] if isinstance(columns.line, np.ndarray) else columns.line.start + rows
            kept = _validate_with_path(
                take_rows(pd.DataFrame(columns_of_file, copy=False), rows), keys, lines, duplicates, str(path), "run",
                stacklevel=4,
            )
            if len(kept) < len(rows):
                keep = ~suspect
                keep[rows[kept.index.to_numpy()]] = True
                for name in list(columns_of_file):
                    columns_of_file[name] = _without_dropped(columns_of_file.pop(name), keep)
        yield columns_of_file


def _without_dropped(values, keep: np.ndarray):
    """``values[keep]`` for a file's column (numpy, or pandas strings over Arrow), copied a
    block of rows at a time, each old block freed once copied, so that dropping a few
    duplicate rows never holds a large column twice (a pandas mask would also build an
    index of every row)."""
    if not isinstance(values, pd.Series):
        return values[keep]
    blocks = list(pa.chunked_array(pa.array(values)).chunks)
    del values
    bounds = np.cumsum([0] + [len(block) for block in blocks])
    kept = []
    for index, (low, high) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist())):
        kept.append(pc.filter(blocks[index], keep[low:high]))
        blocks[index] = None
    pa.default_memory_pool().release_unused()
    return _string_series(pa.chunked_array(kept, type=pa.large_string()))


def _screened_run_file(path_and_name: tuple, want_tag: bool, engine: str) -> tuple:
    """A run file parsed into its frame's columns, and the rows of its lists in which a
    document may repeat (:func:`_lists_that_may_repeat`). Raises and warns of nothing but
    the file's own parse errors: it runs in a worker thread."""
    path, name = path_and_name
    columns = _parse_run_file(path, want_tag, engine)
    fields = columns.fields
    if want_tag:
        run = _string_series(fields["tag"])
    else:
        run = _string_series(pa.repeat(pa.scalar(name, pa.large_string()), len(columns.line)))
    columns_of_file = {
        "run": run,
        "query_id": _string_series(fields["query_id"]),
        "doc_id": _string_series(fields["doc_id"]),
        "score": _numeric_array(fields["score"], np.float64),
        "rank": _numeric_array(fields["rank"], np.int64),
    }
    columns.fields = {}  # (only the line numbers are needed from here on)
    return path, columns, columns_of_file, _lists_that_may_repeat(columns_of_file, one_run=not want_tag)


def _lists_that_may_repeat(columns: dict, one_run: bool) -> Optional[np.ndarray]:
    """Which rows of a file's columns belong to a (run, topic) list in which two rows have
    the same key (:func:`pdeval.engine.ids.short_keys`), or None: a document repeated in a list
    always is such a pair, so the other lists need no check."""
    topic, topics = encode(columns["query_id"])
    if not one_run:
        topic = encode(columns["run"])[0] * len(topics) + topic
    keys = short_keys(columns["doc_id"])
    # whole lists a million rows or so at a time: the sorts' copies exist for one slice
    slices = row_blocks(topic, -(-len(topic) // (1 << 20)))
    found = [(low, groups_with_repeats(topic[low:high], keys[low:high])) for low, high in slices]
    if all(suspect is None for _, suspect in found):
        return None
    suspect = np.zeros(len(topic), dtype=bool)
    for low, part in found:
        if part is not None:
            suspect[low : low + len(part)] = part
    return suspect


def _stack(files: list) -> pd.DataFrame:
    """The files' columns one under the other (Arrow string columns as chunks, no copy)."""
    if len(files) == 1:
        return pd.DataFrame(files[0], copy=False)
    columns = {}
    for name in files[0]:
        if name in ("score", "rank"):
            columns[name] = np.concatenate([np.asarray(each[name]) for each in files])
        else:
            chunks = [chunk for each in files for chunk in pa.chunked_array(pa.array(each[name])).chunks]
            chunks = [chunk if chunk.type == pa.large_string() else chunk.cast(pa.large_string()) for chunk in chunks]
            columns[name] = pa.chunked_array(chunks, type=pa.large_string()).to_pandas()
    return pd.DataFrame(columns, copy=False)


def read_qrels(
    source: PathLike,
    *,
    duplicates: DuplicatePolicy = "error",
    engine: Literal["auto", "python"] = "auto",
    format: Literal["auto", "trec", "sample_eval", "prels"] = "auto",
) -> pd.DataFrame:
    """Read a TREC qrels file (``query_id iteration doc_id relevance``) into a qrels frame.

    ``format`` also reads the judgments of sampled evaluations (:mod:`pdeval.sources.sampled`):
    ``"sample_eval"`` qrels (``topic iteration docno stratum relevance``, a ``stratum``
    column) and statAP ``"prels"`` (``topic docno relevance method probability``, an
    ``inclusion_prob`` column); ``"auto"`` (the default) tells the three apart by the
    fields of the first lines.

    The iteration column is ignored, so the judgment groups of trec_eval's ``qrels_jg``
    format (the same pair judged in several groups) are duplicates here. Lines whose first non-blank character is ``#`` and
    blank lines are skipped (counted in an INFO message of the ``pdeval.sources.io`` logger).
    Relevance must be an integer (``1.0`` is accepted as 1; ``1.5`` is a
    :class:`~pdeval.errors.ParseError`, where trec_eval would silently truncate it); negative
    values are kept (pooled but not judged). A repeated (query_id, doc_id) raises
    :class:`~pdeval.errors.DuplicateError` naming the file, both lines and the keys, unless
    ``duplicates="first"|"max"`` (which warn with the count dropped).

    Returns a frame with columns ``query_id, doc_id, relevance`` (str, str, int64) in file
    order. ``.gz``/``.bz2``/``.xz`` files are decompressed transparently.
    """
    path = source
    if engine not in ("auto", "python"):
        raise SchemaError(f"engine must be 'auto' or 'python', not {engine!r}")
    if is_source(path):  # Parquet / Arrow IPC, Polars, Arrow, ranx, ir_datasets records
        return as_qrels(read_source(path), duplicates=duplicates)
    file = Path(path)
    if file.is_dir():
        raise MissingFileError(f"{str(file)!r} is a directory; read_qrels takes one qrels file", str(file))
    data = _read_bytes(file)
    if format not in ("auto", "trec", "sample_eval", "prels"):
        raise SchemaError(f"format must be 'auto', 'trec', 'sample_eval' or 'prels', not {format!r}")
    if format != "trec":
        from pdeval.sources.sampled import detect_format, read_sampled

        kind = detect_format(data, str(file)) if format == "auto" else format
        if kind != "trec":
            return read_sampled(file, data, kind, duplicates)
    columns = _fast_qrels(data) if engine == "auto" else None
    if columns is None:
        columns = _python_qrels(data, str(file))
    if len(columns.line) == 0:
        what = "is empty" if not data.strip() else "holds no judgment line (only comments or blank lines)"
        raise ParseError(f"the qrels file {what}; expected lines of {_QRELS_FIELDS}", str(file))
    _log_skipped(str(file), columns)
    fields = columns.fields
    frame = pd.DataFrame(
        {
            "query_id": _string_series(fields["query_id"]),
            "doc_id": _string_series(fields["doc_id"]),
            "relevance": _numeric_array(fields["relevance"], np.int64),
        }
    )
    return _validate_with_path(frame, ["query_id", "doc_id"], columns.line, duplicates, str(file), "qrels")


# --------------------------------------------------------------------------- writing


def _check_tokens(series: pd.Series, what: str, *, leading: bool = False) -> None:
    """Ids written into a whitespace-separated file may not be empty or hold whitespace.

    The first field of a line (``leading``) may not start with ``#`` either: the line would
    read back as a comment.
    """
    text = series.astype(str)
    bad = (text.str.len() == 0) | text.str.contains(_UNWRITABLE, regex=True)
    if leading:
        bad |= text.str.startswith("#")
    if bool(bad.any()):
        first = text[bad.to_numpy()].iloc[0]
        rule = "empty, holding ASCII whitespace or NUL" + (", or starting with '#'" if leading else "")
        raise SchemaError(
            f"{int(bad.sum())} {what} value(s) cannot be written to a TREC file ({rule}), first: {first!r}"
        )


def _format_floats(values: np.ndarray) -> list[str]:
    """Shortest strings that read back as exactly the same float64."""
    return pc.cast(pa.array(values, type=pa.float64()), pa.string()).to_pylist()


def _open_for_writing(path: Path):
    if path.suffix.lower() == ".gz":
        handle = open(path, "wb")
        # level 6 as the gzip command (9 is 3x slower for ~3% less); no name or time stamp
        return gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=6), handle
    module = COMPRESSION_SUFFIXES.get(path.suffix.lower())
    if module is not None:
        return module.open(path, "wb"), None
    return open(path, "wb"), None


def _write_text(path: Path, lines: list[str]) -> None:
    stream, handle = _open_for_writing(path)
    try:
        stream.write(("\n".join(lines) + "\n").encode("utf-8") if lines else b"")
    finally:
        stream.close()
        if handle is not None:
            handle.close()


def _run_lines(ranked: pd.DataFrame) -> list[str]:
    qid = ranked["query_id"].astype(str).tolist()
    doc = ranked["doc_id"].astype(str).tolist()
    tag = ranked["run"].astype(str).tolist()
    rank = ranked["rank"].to_numpy().tolist()
    score = _format_floats(ranked["score"].to_numpy(dtype=np.float64))
    return [f"{q} Q0 {d} {r} {s} {t}" for q, d, r, s, t in zip(qid, doc, rank, score, tag)]


def _is_directory_target(path: Path, raw: PathLike, per_run: Optional[bool]) -> bool:
    if per_run is not None:
        if not per_run and path.is_dir():
            raise SchemaError(f"{str(path)!r} is a directory; per_run=False writes one file")
        return bool(per_run)
    return path.is_dir() or (isinstance(raw, str) and raw.endswith(("/", os.sep)))


def write_run(
    run: pd.DataFrame, path: PathLike, *, per_run: Optional[bool] = None, suffix: str = ".txt"
) -> list[Path]:
    """Write a run frame as TREC run files; return the paths written.

    Each line is ``query_id Q0 doc_id rank score tag`` with the tag set to the run name, the
    rank recomputed in trec_eval order (score descending, doc id descending;
    :func:`pdeval.engine.ranking.rank_run`), lines grouped by run and topic in that order, and the
    score written with the shortest text that reads back as the same float64.

    ``per_run`` decides the layout (by default from ``path``):

    * ``per_run=True``, or ``path`` is an existing directory or a string ending with ``/``:
      ``path`` is a directory (created if needed) with one file per run, ``<run><suffix>``
      (``suffix=".txt.gz"`` compresses). :func:`read_run` on the directory gives the same run
      names back. Run names must then be usable as file names.
    * otherwise: one file holding every run (tags tell them apart; read it back with
      ``read_run(path, run_from="tag")``). A ``.gz``/``.bz2``/``.xz`` suffix compresses.

    The frame is validated by :func:`pdeval.frames.canonical.as_run` (duplicates are an error); ids and
    run names must be non-empty and free of whitespace.
    """
    frame = as_run(run)
    for column in ("run", "query_id", "doc_id"):
        _check_tokens(frame[column], column, leading=column == "query_id")
    ranked = rank_run(frame)
    target = Path(path)
    if _is_directory_target(target, path, per_run):
        if run_name("x" + suffix) != "x":
            raise SchemaError(
                f"suffix={suffix!r} would not give the run name back on reading; use one of "
                f"{list(RUN_EXTENSIONS)} optionally followed by .gz, e.g. '.txt' or '.txt.gz'"
            )
        target.mkdir(parents=True, exist_ok=True)
        written = []
        for name, group in ranked.groupby("run", sort=True, observed=True):
            name = str(name)
            if name in (".", "..") or name.startswith(".") or "/" in name or os.sep in name or "\x00" in name:
                raise SchemaError(f"the run name {name!r} cannot be used as a file name")
            file = target / f"{name}{suffix}"
            _write_text(file, _run_lines(group))
            written.append(file)
        return written
    if target.parent and not target.parent.exists():
        raise MissingFileError(f"the directory of {str(target)!r} does not exist", str(target.parent))
    _write_text(target, _run_lines(ranked))
    return [target]


def write_qrels(qrels: pd.DataFrame, path: PathLike) -> Path:
    """Write a qrels frame as a TREC qrels file ``query_id 0 doc_id relevance``; return the path.

    Rows are written in frame order with iteration ``0``. A frame with variant keys (e.g.
    ``level``, ``sample``) is refused: select one variant first. A ``.gz``/``.bz2``/``.xz``
    suffix compresses. Sampled qrels keep their sampling column: a ``stratum`` column writes
    ``sample_eval.pl`` qrels (``query_id 0 doc_id stratum relevance``), an ``inclusion_prob``
    column statAP prels (``query_id doc_id relevance 1 probability``, method 1: sampled).
    """
    frame = as_qrels(qrels)
    keys = variant_keys(frame)
    if keys:
        raise SchemaError(
            f"the qrels frame has variant key column(s) {keys}; a TREC qrels file holds one "
            f"variant, so select one first (e.g. qrels[qrels.level == ...])"
        )
    for column in ("query_id", "doc_id"):
        _check_tokens(frame[column], column, leading=column == "query_id")
    target = Path(path)
    if target.parent and not target.parent.exists():
        raise MissingFileError(f"the directory of {str(target)!r} does not exist", str(target.parent))
    if "source" in frame.columns:  # TREC qrels have no field for it: say so rather than drop it silently
        sources = frame["source"].astype(str).value_counts()
        warn(f"{target}: the label provenance column 'source' is not written (a TREC qrels file has no "
             f"field for it): {', '.join(f'{n} {s!r}' for s, n in sources.items())} labels. Write one file "
             "per source to keep it", ColumnWarning)
    qid = frame["query_id"].astype(str).tolist()
    doc = frame["doc_id"].astype(str).tolist()
    rel = frame["relevance"].to_numpy().tolist()
    if "stratum" in frame.columns:
        _check_tokens(frame["stratum"].astype(str), "stratum")
        stratum = frame["stratum"].astype(str).tolist()
        lines = [f"{q} 0 {d} {c} {r}" for q, d, c, r in zip(qid, doc, stratum, rel)]
    elif "inclusion_prob" in frame.columns:
        prob = _format_floats(frame["inclusion_prob"].to_numpy(dtype=np.float64))
        lines = [f"{q} {d} {r} 1 {p}" for q, d, r, p in zip(qid, doc, rel, prob)]
    else:
        lines = [f"{q} 0 {d} {r}" for q, d, r in zip(qid, doc, rel)]
    _write_text(target, lines)
    return target
