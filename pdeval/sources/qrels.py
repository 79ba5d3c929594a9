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
import pyarrow.csv as pa_csv

from pdeval.common.contract import Choice, contract
from pdeval.engine.ids import encode, short_keys
from pdeval.engine.ranking import groups_with_repeats
from pdeval.errors import MissingFileError, ParseError, SchemaError
from pdeval.frames.canonical import DuplicatePolicy, as_qrels
from pdeval.frames.domains import DUPLICATES, Source
from pdeval.sources.blocks import has_lone_return, read_bytes, show
from pdeval.sources.checks import log_skipped, validate_with_path
from pdeval.sources.paths import PathLike
from pdeval.sources.sampled import detect_format, read_sampled
from pdeval.sources.tables import is_source, read_source
from pdeval.sources.tokens import (
    INT_PATTERN,
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

__all__ = ["LAYOUTS", "csv_qrels", "fast_qrels", "python_qrels", "read_qrels"]


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
    relevance = _relevance(pc.list_element(tokens, 3))
    if relevance is None:
        return None
    fields = {
        "query_id": pc.list_element(tokens, 0),
        "doc_id": pc.list_element(tokens, 2),
        "relevance": relevance,
    }
    return Columns(line_numbers, fields, n_comments, n_blanks)


def csv_qrels(data: bytes) -> Optional[Columns]:
    """Arrow's CSV reader on a small TREC qrels file (under :data:`SMALL_BYTES`) whose lines are
    four fields separated by single spaces or single tabs (the common case), or None (then
    :func:`fast_qrels` decides). As for runs (:func:`pdeval.sources.runparse.csv_run`), only
    data it cannot misread is given to it: no NUL, ``\\v``, ``\\f``, ``#``, lone ``\\r`` or byte
    of the other separator, every line four fields (else the reader fails), no empty field;
    the relevance is read as text and checked against the integer grammar. The ids are read
    dictionary-encoded, so that the columns' ``unique`` (no (query_id, doc_id) repeated) costs
    one sort of integer codes: a small file's fixed costs stay below pandas' ``read_csv``."""
    if not data or len(data) >= SMALL_BYTES or any(byte in data for byte in (b"\x00", b"\x0b", b"\x0c", b"#")):
        return None
    end = data.find(b"\n")
    first = data[: end if end >= 0 else len(data)]
    delimiter, other = (b"\t", b" ") if b"\t" in first else (b" ", b"\t")
    if first.rstrip(b"\r").count(delimiter) != 3 or other in data or has_lone_return(data):
        return None
    ids = pa.dictionary(pa.int32(), pa.string())
    # Arrow reads "0x10" as an integer: with an "x" anywhere, the relevance is read as text
    # and checked against the integer grammar (as it is when it is not an integer: "1.0")
    hexadecimal = b"x" in data or b"X" in data
    relevance_type = pa.string() if hexadecimal else pa.int64()
    try:
        table = pa_csv.read_csv(
            pa.py_buffer(data),
            read_options=pa_csv.ReadOptions(column_names=_CSV_QRELS_FIELDS, use_threads=False, block_size=len(data) + 1),
            parse_options=pa_csv.ParseOptions(delimiter=delimiter.decode(), quote_char=False, ignore_empty_lines=False),
            convert_options=pa_csv.ConvertOptions(
                column_types={"query_id": ids, "iteration": pa.string(), "doc_id": ids, "relevance": relevance_type},
                include_columns=["query_id", "doc_id", "relevance"],
                null_values=[], strings_can_be_null=False, quoted_strings_can_be_null=False,
            ),
            # from the system allocator: Arrow's default pool (mimalloc) took up to ten times
            # as long now and then, returning the memory of the file read before
            memory_pool=pa.system_memory_pool(),
        )
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None  # (a relevance such as 1.0 too: the other parsers take it)
    if not table.num_rows or any(table[name].num_chunks != 1 for name in table.column_names):
        return None
    query, doc = table["query_id"].chunk(0), table["doc_id"].chunk(0)
    relevance = table["relevance"] if not hexadecimal else _relevance(table["relevance"])
    if relevance is None:
        return None
    for values in (query.dictionary, doc.dictionary) + ((table["relevance"],) if hexadecimal else ()):
        if pc.min(pc.binary_length(values)).as_py() == 0:
            return None
    fields = {"query_id": query.dictionary.take(query.indices), "doc_id": doc.dictionary.take(doc.indices),
              "relevance": relevance}
    columns = Columns(range(1, table.num_rows + 1), fields, 0, 0)
    if len(doc.dictionary) == len(doc):  # no document judged twice: no (query_id, doc_id) twice
        columns.unique = True
    else:
        key = query.indices.to_numpy().astype(np.int64) * len(doc.dictionary) + doc.indices.to_numpy()
        key.sort()
        columns.unique = not bool((key[1:] == key[:-1]).any())
    return columns


#: bytes of a "small" qrels file, read by :func:`csv_qrels`
SMALL_BYTES = 1 << 24

#: the fields of a qrels line as the CSV reader names them
_CSV_QRELS_FIELDS = ["query_id", "iteration", "doc_id", "relevance"]


def _relevance(text) -> Optional[pa.ChunkedArray]:
    """Relevance text as int64 (an integral float such as ``1.0`` accepted), or None."""
    if not fast_all_match(text, INT_PATTERN):
        if not fast_all_match(text, RELEVANCE_PATTERN):
            return None
        text = pc.replace_substring_regex(text, r"\.0*$", "")
    try:
        return pc.cast(text, pa.int64())
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None


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


@contract(
    source=Source(),
    duplicates=DUPLICATES,
    engine=Choice("auto", "python"),
    format=Choice("auto", "trec", "sample_eval", "prels"),
)
def read_qrels(
    source: PathLike,
    *,
    duplicates: DuplicatePolicy = "error",
    engine: Literal["auto", "python"] = "auto",
    format: Literal["auto", "trec", "sample_eval", "prels"] = "auto",
) -> pd.DataFrame:
    """Read a TREC qrels file (``query_id iteration doc_id relevance``, the path ``source``) into
    a qrels frame; a Parquet or Arrow IPC file, or a frame or records, are read as they are.

    ``format`` also reads the judgments of sampled evaluations (:mod:`pdeval.sources.sampled`):
    ``"sample_eval"`` qrels (``topic iteration docno stratum relevance``, a ``stratum``
    column) and statAP ``"prels"`` (``topic docno relevance method probability``, an
    ``inclusion_prob`` column); ``"auto"`` (the default) tells the three apart from the
    first 20 data lines, by majority (:func:`pdeval.sources.sampled.detect_format`). A line
    that does not fit is a :class:`~pdeval.errors.ParseError` naming the line, the format the
    file was read as and the ``format=`` values that read it otherwise.

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

    Parameters
    ----------
    source : str or path
        The qrels file (or a Parquet / Arrow IPC file, a frame, records).
    duplicates : {'error', 'first', 'max'}, default 'error'
        Policy for a repeated (query_id, doc_id).
    engine : {'auto', 'python'}, default 'auto'
        The parser (``'python'`` is the slow, line-by-line reference).
    format : {'auto', 'trec', 'sample_eval', 'prels'}, default 'auto'
        The file format (see above).

    Returns
    -------
    DataFrame
        ``query_id, doc_id, relevance`` (and ``stratum`` or ``inclusion_prob`` for sampled
        judgments), in file order.

    Raises
    ------
    ParseError
        A malformed line, naming the file, the line and the format it was read as.

    See Also
    --------
    read_run : Read TREC run files.
    write_qrels : Write a qrels frame as a TREC qrels file.
    prels_qrels : The qrels of statAP prels.

    Examples
    --------
    >>> _ = open("qrels.txt", "w").write("1 0 d1 1\\n1 0 d2 0\\n2 0 d1 2\\n")
    >>> pdeval.read_qrels("qrels.txt")
      query_id doc_id  relevance
    0        1     d1          1
    1        1     d2          0
    2        2     d1          2
    """
    if is_source(source):  # Parquet / Arrow IPC, Polars, Arrow, ranx, ir_datasets records
        return as_qrels(read_source(source), duplicates=duplicates)
    file = Path(source)
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
    columns = None
    if engine == "auto":
        columns = csv_qrels(data)
        if columns is None:
            columns = fast_qrels(data)
    if columns is None:
        columns = python_qrels(data, path)
    if len(columns.line) == 0:
        what = "is empty" if not data.strip() else "holds no judgment line (only comments or blank lines)"
        raise ParseError(f"the qrels file {what}; expected lines of {QRELS_FIELDS}", path)
    log_skipped(path, columns)
    fields = columns.fields
    if isinstance(fields["query_id"], (pa.Array, pa.ChunkedArray)):  # Arrow's parsers: one conversion
        frame = pa.table({name: fields[name] for name in ("query_id", "doc_id", "relevance")}).to_pandas(
            use_threads=False)
    else:
        frame = pd.DataFrame(
            {
                "query_id": string_series(fields["query_id"]),
                "doc_id": string_series(fields["doc_id"]),
                "relevance": numeric_array(fields["relevance"], np.int64),
            }
        )
    if duplicates in ("error", "first", "max"):
        # the parsers leave nothing for as_qrels to change but repeated judgments: a (query_id,
        # doc_id) repeated is such a pair of 32-bit keys, so a file without one needs no check
        unique = columns.unique
        if unique is None:
            unique = groups_with_repeats(encode(frame["query_id"])[0], short_keys(frame["doc_id"])) is None
        if unique:
            return frame
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
