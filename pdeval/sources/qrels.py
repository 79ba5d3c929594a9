"""Read qrels files into a qrels frame: :func:`read_qrels`.

A qrels file is TREC qrels (``query_id iteration doc_id relevance``), ``sample_eval`` qrels or
statAP prels (:mod:`pdeval.sources.sampled`), told apart from the first lines
(:func:`pdeval.sources.sampled.detect_format`) or chosen by ``format=``; an error names the
line, the format the file was read as and how to choose another. TREC qrels are parsed by
Arrow's string kernels (:func:`fast_qrels`) where they can be, else line by line
(:func:`python_qrels`), which names the first bad line. The rules for every quirk of real
files are listed in :mod:`pdeval.sources.io`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Optional

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pdeval.errors import MissingFileError, ParseError, SchemaError
from pdeval.frames.canonical import DuplicatePolicy, as_qrels
from pdeval.sources.blocks import read_bytes, show
from pdeval.sources.checks import log_skipped, validate_with_path
from pdeval.sources.paths import PathLike
from pdeval.sources.sampled import detect_format, read_sampled
from pdeval.sources.tables import is_source, read_source
from pdeval.sources.tokens import (
    LEADING_INT_RE,
    QRELS_FIELDS,
    RELEVANCE_PATTERN,
    RELEVANCE_RE,
    RUN_FIELDS,
    Columns,
    fast_all_match,
    fast_tokens,
    looks_like_run,
    numeric_array,
    parse_int,
    python_lines,
    string_series,
)

__all__ = ["LAYOUTS", "fast_qrels", "python_qrels", "read_qrels"]


def fast_qrels(data: bytes) -> Optional[Columns]:
    """TREC qrels lines through Arrow's string kernels, or None (then :func:`python_qrels` decides)."""
    got = fast_tokens(data)
    if got is None:
        return None
    tokens, line_numbers, n_comments, n_blanks = got
    if len(tokens):
        lengths = pc.list_value_length(tokens)
        if pc.min(lengths).as_py() != 4 or pc.max(lengths).as_py() != 4:
            return None
    relevance_text = pc.list_element(tokens, 3)
    if not fast_all_match(relevance_text, RELEVANCE_PATTERN):
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
    return Columns(line_numbers, fields, n_comments, n_blanks)


def python_qrels(data: bytes, path: str) -> Columns:
    """TREC qrels lines one by one; raises the error of the first bad line."""
    lines, counts = python_lines(data, path)
    numbers: list[int] = []
    qid: list[str] = []
    doc: list[str] = []
    relevance: list[int] = []
    for number, raw, fields in lines:
        if len(fields) != 4:
            hint = ""
            if looks_like_run(raw.split()):
                hint = (
                    f"; it looks like a run line ({RUN_FIELDS}): is this a run file given as the "
                    f"qrels? (read_qrels reads qrels, read_run runs; pdeval eval takes the qrels file first, "
                    f"then the runs)"
                )
            raise ParseError(
                f"expected 4 whitespace-separated fields ({QRELS_FIELDS}), found {len(fields)}: "
                f"{show(raw)}{hint}",
                path,
                number,
            )
        text = fields[3]
        if not RELEVANCE_RE.match(text):
            leading = LEADING_INT_RE.match(text)
            atol = f" (trec_eval would silently read it as {int(leading.group(0))})" if leading else ""
            raise ParseError(
                f"the relevance {text!r} (field 4) is not an integer{atol}: {show(raw)}", path, number
            )
        numbers.append(number)
        qid.append(fields[0])
        doc.append(fields[2])
        relevance.append(parse_int(text.split(".")[0], "the relevance", path, number, raw))
    out = {"query_id": qid, "doc_id": doc, "relevance": relevance}
    return Columns(np.asarray(numbers, dtype=np.int64), out, counts["comments"], counts["blanks"])


def read_qrels(
    path: PathLike,
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
    blank lines are skipped (counted in an INFO message of the ``pdeval.sources`` logger).
    Relevance must be an integer (``1.0`` is accepted as 1; ``1.5`` is a
    :class:`~pdeval.errors.ParseError`, where trec_eval would silently truncate it); negative
    values are kept (pooled but not judged). A repeated (query_id, doc_id) raises
    :class:`~pdeval.errors.DuplicateError` naming the file, both lines and the keys, unless
    ``duplicates="first"|"max"`` (which warn with the count dropped).

    Returns a frame with columns ``query_id, doc_id, relevance`` (str, str, int64) in file
    order. ``.gz``/``.bz2``/``.xz`` files are decompressed transparently.
    """
    if engine not in ("auto", "python"):
        raise SchemaError(f"engine must be 'auto' or 'python', not {engine!r}")
    if format not in ("auto", "trec", "sample_eval", "prels"):
        raise SchemaError(f"format must be 'auto', 'trec', 'sample_eval' or 'prels', not {format!r}")
    if is_source(path):  # Parquet / Arrow IPC, Polars, Arrow, ranx, ir_datasets records
        return as_qrels(read_source(path), duplicates=duplicates)
    file = Path(path)
    if file.is_dir():
        raise MissingFileError(f"{str(file)!r} is a directory; read_qrels takes one qrels file", str(file))
    data = read_bytes(file)
    kind = detect_format(data, str(file)) if format == "auto" else format
    try:
        if kind != "trec":
            return read_sampled(file, data, kind, duplicates)
        return _read_trec(data, str(file), duplicates, engine)
    except ParseError as exc:
        raise _read_as(exc, kind, format) from None


def _read_trec(data: bytes, path: str, duplicates: DuplicatePolicy, engine: str) -> pd.DataFrame:
    columns = fast_qrels(data) if engine == "auto" else None
    if columns is None:
        columns = python_qrels(data, path)
    if len(columns.line) == 0:
        what = "is empty" if not data.strip() else "holds no judgment line (only comments or blank lines)"
        raise ParseError(f"the qrels file {what}; expected lines of {QRELS_FIELDS}", path)
    log_skipped(path, columns)
    fields = columns.fields
    frame = pd.DataFrame(
        {
            "query_id": string_series(fields["query_id"]),
            "doc_id": string_series(fields["doc_id"]),
            "relevance": numeric_array(fields["relevance"], np.int64),
        }
    )
    return validate_with_path(frame, ["query_id", "doc_id"], columns.line, duplicates, path, "qrels", stacklevel=4)


#: the layout of each qrels format, for messages
LAYOUTS = {
    "trec": "TREC qrels: " + QRELS_FIELDS,
    "sample_eval": "sample_eval qrels: topic iteration docno stratum relevance",
    "prels": "statAP prels: topic docno relevance method inclusion-probability",
}


def _read_as(exc: ParseError, kind: str, format: str) -> ParseError:
    """``exc`` with the format the file was read as, and how to choose another."""
    if exc.line is None or "looks like a run line" in str(exc):
        return exc
    where = "" if exc.path is None else f"{exc.path}, line {exc.line}: "
    text = str(exc)[len(where):] if str(exc).startswith(where) else str(exc)
    others = " or ".join(f"format={other!r}" for other in LAYOUTS if other != kind)
    how = "told from its first lines" if format == "auto" else f"format={format!r}"
    return ParseError(f"{text} [read as {LAYOUTS[kind]} ({how}); if the file is another format, pass {others}]",
                      exc.path, exc.line)
