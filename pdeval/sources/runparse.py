"""TREC run text parsed into columns, a block of lines at a time.

Each block of a run file (:func:`pdeval.sources.blocks.blocks`) goes to the first parser that
accepts it: Arrow's CSV reader when the lines are plainly separated by single spaces or single
tabs (:func:`csv_run`, the common case; what it returns is checked against the rules of
:mod:`pdeval.sources.io`), else Arrow's string kernels (:func:`fast_run`: split lines, split on
whitespace, validate numbers with a regular expression, cast), else the plain-Python parser
(:func:`python_run`), which applies the same rules line by line and raises the error with the
exact line number. All of them build the same columns (tested on every quirk).
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Optional

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pa_csv

from pdeval.errors import ParseError, PdevalWarning
from pdeval.sources.blocks import blocks, has_lone_return, show
from pdeval.sources.checks import log_skipped
from pdeval.sources.tokens import (
    INT_PATTERN,
    NAN_RE,
    QRELS_FIELDS,
    RELEVANCE_PATTERN,
    RELEVANCE_RE,
    RUN_FIELDS,
    SCORE_PATTERN,
    SCORE_RE,
    Columns,
    fast_all_match,
    fast_tokens,
    looks_like_qrels,
    looks_like_run,
    numeric_array,
    parse_int,
    python_lines,
)

__all__ = ["concatenate", "csv_run", "fast_run", "parse_run_file", "python_run", "report_skipped"]


def fast_run(data: bytes, want_tag: bool, first_line: int = 1) -> Optional[Columns]:
    got = fast_tokens(data, first_line)
    if got is None:
        return None
    tokens, line_numbers, n_comments, n_blanks = got
    if n_comments:  # a '#' line may be data or a comment: the Python parser decides (and warns)
        return None
    if len(tokens) and pc.min(pc.list_value_length(tokens)).as_py() < 6:
        return None
    score_text = pc.list_element(tokens, 4)
    rank_text = pc.list_element(tokens, 3)
    if not fast_all_match(score_text, SCORE_PATTERN):
        return None
    if not fast_all_match(rank_text, INT_PATTERN):
        if not fast_all_match(rank_text, RELEVANCE_PATTERN):
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
    return Columns(line_numbers, fields, n_comments, n_blanks)


#: the leading fields of a run line as the CSV reader names them
_CSV_RUN_FIELDS = ["query_id", "q0", "doc_id", "rank", "score", "tag"]


def csv_run(data: bytes, want_tag: bool, first_line: int = 1, lone_returns: bool = True) -> Optional[Columns]:
    """Arrow's CSV reader on a run file whose lines are fields separated by single spaces or
    single tabs, the common case, or None (then :func:`fast_run` decides).

    The reader splits on one delimiter and converts, in the calling thread (files are read in
    parallel by :mod:`pdeval.common.threads`, and memory freed where it was allocated is reused at
    once: with Arrow's own threads, a large file held its discarded blocks longer), but knows
    nothing of the other rules, so only data it cannot misread is given to it, and what it returns is
    checked: no NUL, ``\\v``, ``\\f``, ``#`` (comments), ``\\r`` only before ``\\n``, and no
    byte of the other separator; every line the same number of fields (else the reader fails: blank lines,
    repeated separators); no empty field among the six (a doubled separator on a short
    line); ranks checked against the integer grammar (Arrow would read ``0x10``) and scores
    not NaN. Trailing fields (a separator at the end of every line) are ignored.
    ``lone_returns=False`` skips the search for a lone ``\\r`` in text known to hold none (the
    blocks of :func:`pdeval.sources.blocks.blocks` end their lines with ``\\n``).
    """
    if not data or any(byte in data for byte in (b"\x00", b"\x0b", b"\x0c", b"#")):
        return None
    if lone_returns and has_lone_return(data):  # the reader takes Windows line ends, "\r\n"
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
            # one block for the whole text: every column one chunk (the numbers need no copy)
            read_options=pa_csv.ReadOptions(column_names=names, use_threads=False, block_size=len(data) + 1),
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
            if not fast_all_match(chunk.dictionary, INT_PATTERN):
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
    return Columns(range(first_line, first_line + table.num_rows), fields, 0, 0)



def python_run(data: bytes, path: str, want_tag: bool, first_line: int = 1) -> Columns:
    lines, counts = python_lines(data, path, hash_data=looks_like_run, first_line=first_line)
    numbers: list[int] = []
    qid: list[str] = []
    doc: list[str] = []
    score: list[float] = []
    rank: list[int] = []
    tag: list[str] = []
    for number, raw, fields in lines:
        if len(fields) < 6:
            hint = ""
            if looks_like_qrels(fields):
                hint = (
                    f"; it looks like a qrels line ({QRELS_FIELDS}): is this a qrels file given "
                    f"as a run? (read_run and evaluate take the run first, read_qrels the qrels; "
                    f"pdeval eval takes the qrels file first, then the runs)"
                )
            raise ParseError(
                f"expected at least 6 whitespace-separated fields ({RUN_FIELDS}), found "
                f"{len(fields)}: {show(raw)}{hint}",
                path,
                number,
            )
        score_text, rank_text = fields[4], fields[3]
        if not SCORE_RE.match(score_text):
            if NAN_RE.match(score_text):
                raise ParseError(f"the score is NaN: {show(raw)}", path, number)
            raise ParseError(f"the score {score_text!r} (field 5) is not a number: {show(raw)}", path, number)
        if not RELEVANCE_RE.match(rank_text):
            raise ParseError(
                f"the rank {rank_text!r} (field 4) is not an integer: {show(raw)}. "
                f"Expected the fields {RUN_FIELDS}.",
                path,
                number,
            )
        numbers.append(number)
        qid.append(fields[0])
        doc.append(fields[2])
        score.append(float(score_text))
        rank.append(parse_int(rank_text.split(".")[0], "the rank", path, number, raw))
        if want_tag:
            tag.append(fields[5])
    out = {"query_id": qid, "doc_id": doc, "score": score, "rank": rank}
    if want_tag:
        out["tag"] = tag
    numbers_array = np.asarray(numbers, dtype=np.int64)
    return Columns(numbers_array, out, counts["comments"], counts["blanks"], counts["first_comment"])



def parse_run_file(path: Path, want_tag: bool, engine: str) -> Columns:
    """Parse a run file block by block: Arrow's CSV reader where the lines are plainly
    separated (:func:`csv_run`), else Arrow's string kernels (:func:`fast_run`), else (and
    with ``engine="python"``) the line-by-line parser, which raises the error with its line
    number. Only one block of text is held at a time, also on the way to an error. Warns of
    nothing (it may run in a worker thread): :func:`report_skipped` does."""
    parts = []
    for block, first_line in blocks(path):
        columns = None
        if engine == "auto":
            columns = csv_run(block, want_tag, first_line, lone_returns=False)  # blocks() made them "\n"
            if columns is None:
                columns = fast_run(block, want_tag, first_line)
        if columns is None:
            columns = python_run(block, str(path), want_tag, first_line)
        parts.append(columns)
    columns = concatenate(parts)
    if len(parts) > 1:  # a large file: Arrow's pool keeps what its blocks no longer use
        del parts
        pa.default_memory_pool().release_unused()
    if len(columns.line) == 0:
        # a file without data lines is empty unless some line holds a comment
        what = "is empty" if not columns.comments else "holds no run line (only comments or blank lines)"
        raise ParseError(f"the run file {what}; expected lines of {RUN_FIELDS}", str(path))
    return columns


def report_skipped(path: Path, columns: Columns) -> None:
    """Warn of the comment lines a run file's parse skipped, and log the blank ones."""
    if columns.comments:  # trec_eval 9 has no comment lines in runs: never skip them silently
        warnings.warn(
            f"{path}: skipped {columns.comments} line(s) starting with '#' that are not run lines "
            f"(comments), the first at line {columns.first_comment}",
            PdevalWarning,
            stacklevel=4,
        )
    log_skipped(str(path), columns)


def concatenate(parts: list) -> Columns:
    """One file's blocks as one :class:`Columns` (Arrow columns of one chunk per block)."""
    if len(parts) <= 1:
        return parts[0] if parts else Columns(range(1, 1), {}, 0, 0)
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
            fields[name] = np.concatenate([numeric_array(v, np.float64 if name == "score" else np.int64) for v in values])
        else:
            chunks = []
            for v in values:
                v = v if isinstance(v, (pa.Array, pa.ChunkedArray)) else pa.array(v, type=pa.large_string())
                chunks.extend(v.chunks if isinstance(v, pa.ChunkedArray) else [v])
            fields[name] = pa.chunked_array([c.cast(pa.large_string()) for c in chunks], type=pa.large_string())
    return Columns(line, fields, sum(p.comments for p in parts), sum(p.blanks for p in parts))
