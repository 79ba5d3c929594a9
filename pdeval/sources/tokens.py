"""Lines of TREC text split into fields: the number grammars, a fast path over Arrow's
string kernels (:func:`fast_tokens`) and a plain-Python path (:func:`python_lines`) that
applies the same rules line by line and names the exact line of an error.

Fields are separated by any run of ASCII whitespace (C ``isspace``, as trec_eval); a line
whose first field starts with ``#`` is a comment (a run line may be data: ``hash_data``);
blank lines are counted and skipped. The parsed fields of a file travel as :class:`Columns`.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pdeval.errors import ParseError
from pdeval.sources.blocks import show

__all__ = [
    "Columns",
    "INT_PATTERN",
    "NAN_PATTERN",
    "QRELS_FIELDS",
    "RELEVANCE_PATTERN",
    "RUN_FIELDS",
    "SCORE_PATTERN",
    "fast_all_match",
    "fast_tokens",
    "first_lines",
    "looks_like_qrels",
    "looks_like_run",
    "numeric_array",
    "parse_int",
    "python_lines",
    "string_series",
]

#: the 6 leading fields of a run line, for messages
RUN_FIELDS = "query_id Q0 doc_id rank score tag"
QRELS_FIELDS = "query_id iteration doc_id relevance"

# Number grammars, shared by both parsers (Python ``re`` with ASCII digits, RE2 in Arrow).
SCORE_PATTERN = r"^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|[iI][nN][fF](?:[iI][nN][iI][tT][yY])?)$"
NAN_PATTERN = r"^[+-]?[nN][aA][nN]$"
INT_PATTERN = r"^[+-]?[0-9]+$"
RELEVANCE_PATTERN = r"^[+-]?[0-9]+(?:\.0*)?$"  # an integer or an integral float (``1.0``)
SCORE_RE = re.compile(SCORE_PATTERN, re.ASCII)
NAN_RE = re.compile(NAN_PATTERN, re.ASCII)
INT_RE = re.compile(INT_PATTERN, re.ASCII)
RELEVANCE_RE = re.compile(RELEVANCE_PATTERN, re.ASCII)
LEADING_INT_RE = re.compile(r"^[+-]?[0-9]+", re.ASCII)

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


class Columns:
    """Parsed fields of one file as Arrow arrays (or Python lists) plus 1-based line numbers."""

    __slots__ = ("line", "fields", "comments", "blanks", "first_comment", "unique")

    def __init__(self, line: np.ndarray, fields: dict, comments: int, blanks: int, first_comment: int = 0):
        self.line = line
        self.fields = fields
        self.comments = comments
        self.blanks = blanks
        self.first_comment = first_comment  # line number of the first comment line (0: none)
        self.unique = None  # True: no key repeats (a parser that knows it); None: not known


def string_series(values) -> pd.Series:
    """A pandas string Series (the default ``str`` dtype) from an Arrow array or a list."""
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values, type=pa.large_string())
    return values.to_pandas().rename(None)


def numeric_array(values, dtype) -> np.ndarray:
    """A writable numpy array of ``dtype`` from an Arrow array or a list (a zero-copy view of an
    Arrow buffer is read-only: it is copied, so the frames handed to users can be edited)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        array = np.asarray(values.to_numpy(zero_copy_only=False), dtype=dtype)
        return array if array.flags.writeable else array.copy()
    return np.asarray(values, dtype=dtype)


# --------------------------------------------------------------------------- fast path (pyarrow)


def fast_tokens(data: bytes, first_line: int = 1):
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


def fast_all_match(values, pattern: str) -> bool:
    """Whether every value matches ``pattern`` (RE2)."""
    return bool(pc.all(pc.match_substring_regex(values, pattern)).as_py() in (True, None))


# --------------------------------------------------------------------------- Python path


def looks_like_run(fields: Sequence[bytes]) -> bool:
    """Whether the whitespace-separated ``fields`` of a line form a well-formed run line."""
    try:
        rank, score = fields[3].decode("ascii"), fields[4].decode("ascii")
    except (IndexError, UnicodeDecodeError):
        return False
    return len(fields) >= 6 and bool(RELEVANCE_RE.match(rank)) and bool(SCORE_RE.match(score))


def looks_like_qrels(fields: Sequence[str]) -> bool:
    """Whether ``fields`` form a well-formed qrels line (4 fields, an integer relevance)."""
    return len(fields) == 4 and bool(RELEVANCE_RE.match(fields[3]))


def python_lines(data: bytes, path: str, hash_data=None, first_line: int = 1):
    """Yield ``(line_number, raw line, fields)`` for every data line (the first line of
    ``data`` being line ``first_line`` of the file); count blanks and comments in the dict
    returned with the generator.

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
                raise ParseError(f"the line is not valid UTF-8 ({exc.reason}): {show(raw)}; save the file "
                                 "as UTF-8 (e.g. iconv -f latin1 -t utf-8)", path, number) from None
            yield number, raw, fields

    return generate(), counts


def parse_int(text: str, what: str, path: str, number: int, raw: bytes) -> int:
    """``int(text)``, refused (naming the line) when it does not fit 64 bits."""
    value = int(text)
    if not INT64_MIN <= value <= INT64_MAX:
        raise ParseError(f"{what} {text!r} does not fit a 64-bit integer: {show(raw)}", path, number)
    return value


def first_lines(data: bytes, n: int) -> list[bytes]:
    """Up to ``n`` whole lines from the start of ``data`` (without scanning the rest)."""
    found, start = [], 0
    while len(found) < n:
        end = data.find(b"\n", start)
        if end < 0:
            if start < len(data):
                found.append(data[start:])
            break
        found.append(data[start:end])
        start = end + 1
    return found

