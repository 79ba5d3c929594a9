"""Read TREC run files into a run frame: :func:`read_run`.

The files of a source (:func:`pdeval.sources.paths.resolve_sources`) are parsed in worker
threads (:mod:`pdeval.sources.runparse`), screened for documents repeated within a list on
integer keys of the ids (:mod:`pdeval.engine.ids`: only a list that may repeat a document is
checked on the frame), checked in file order (:func:`read_run_files`) and stacked
(:func:`stack`). Parquet and Arrow IPC files among them are read as tables
(:mod:`pdeval.sources.tables`). The rules for every quirk of real files are listed in
:mod:`pdeval.sources.io`.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from pdeval.common import threads
from pdeval.common.contract import Choice, ListOf, Nullable, OneOf, Text, contract
from pdeval.engine.ids import encode, short_keys
from pdeval.engine.ranking import groups_with_repeats, row_blocks
from pdeval.errors import DuplicateError, PdevalError, SchemaError
from pdeval.frames.canonical import DuplicatePolicy, as_run, canonicalize, take_rows
from pdeval.frames.domains import DUPLICATES, Source
from pdeval.sources.checks import validate_with_path
from pdeval.sources.paths import RunSource, resolve_names, resolve_sources, run_name
from pdeval.sources.runparse import parse_run_file, report_skipped
from pdeval.sources.tables import is_source, is_table_file, load_table, read_source
from pdeval.sources.tokens import numeric_array, string_series

__all__ = ["read_run", "read_run_files", "screened_run_file", "stack"]


@contract(
    source=Source(),
    name=Nullable(OneOf(Text("a run name"), ListOf(Text("a run name"), lone=False))),
    duplicates=DUPLICATES,
    run_from=Choice("file", "tag"),
    engine=Choice("auto", "python"),
)
def read_run(
    source: RunSource,
    name: Union[str, Sequence[str], None] = None,
    *,
    duplicates: DuplicatePolicy = "error",
    run_from: Literal["file", "tag"] = "file",
    engine: Literal["auto", "python"] = "auto",
) -> pd.DataFrame:
    r"""Read TREC run files into a run frame.

    Lines end with ``\n``, ``\r\n`` or ``\r``. A line starting with ``#`` is data when it is a
    well-formed run line (a query id such as ``#1``); otherwise it is a comment, skipped with a
    :class:`~pdeval.errors.PdevalWarning` naming the file, the count and the first line. The
    rank may be an integral float (``1.0``).

    Parameters
    ----------
    source : str, path, list of them, or frame
        A file path, a directory (every regular, non-hidden file in it, sorted by name), a
        glob pattern (``"runs/*.gz"``), or a list of any of these. ``.gz``, ``.bz2`` and
        ``.xz`` files are decompressed transparently. A directory or a pattern leaves out
        files that cannot be runs (``README.md``, ``*.json``, ``*.py``...: see
        :func:`pdeval.sources.paths.could_be_run`) with a warning naming them. Parquet and
        Arrow IPC files (``.parquet``, ``.arrow``, ``.feather``...) are read as tables: their
        ``run`` column names their runs, else the file's name does. Also a frame (pandas,
        Polars, Arrow), a ranx ``Run`` or ir_datasets records.
    name : str or list of str, optional
        The run name: a string (one file) or a list with one name per file, in the order the
        files are read. By default each file's name under :func:`run_name`'s rule
        (``IELAB_01.txt.gz`` -> ``IELAB_01``). Two files with the same name raise
        :class:`~pdeval.errors.SchemaError`.
    duplicates : {'error', 'first', 'max'}, default 'error'
        ``"error"`` (default): a document repeated within a topic of one run raises
        :class:`~pdeval.errors.DuplicateError` naming the file, both line numbers and the
        keys. ``"first"`` keeps the first line, ``"max"`` the highest score, each warning
        (:class:`~pdeval.errors.PdevalWarning`) with the file and the number of rows dropped.
    run_from : {'file', 'tag'}, default 'file'
        ``"file"`` (default) names runs by file; ``"tag"`` uses the 6th column, for files
        that hold several runs (such as those :func:`write_run` writes into one file). A tag
        found in two files raises :class:`~pdeval.errors.SchemaError` naming the tag and the
        files (CLEF 2018's IELAB runs all carry ``clef2018b``: read them with ``"file"``);
        runs of two files are never merged, under no ``duplicates`` policy.
    engine : {'auto', 'python'}, default 'auto'
        ``"auto"`` uses the pyarrow fast path when it can; ``"python"`` forces the
        line-by-line parser (same result, slower; for tests).

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

    See Also
    --------
    read_qrels : Read a qrels file.
    write_run : Write a run frame as TREC run files.
    read_table : Read a Parquet or Arrow IPC file.

    Examples
    --------
    >>> run = pd.DataFrame({"run": "bm25", "query_id": ["1", "1", "2"],
    ...                     "doc_id": ["d1", "d2", "d1"], "score": [2.0, 1.0, 0.5]})
    >>> paths = pdeval.write_run(run, "runs/")
    >>> pdeval.read_run("runs/")
        run query_id doc_id  score  rank
    0  bm25        1     d1    2.0     1
    1  bm25        1     d2    1.0     2
    2  bm25        2     d1    0.5     1
    """
    if is_source(source):  # Parquet / Arrow IPC, Polars, Arrow, ranx, ir_datasets records
        frame = read_source(source)
        if name is not None:
            if not isinstance(name, str):
                raise SchemaError("name= takes one run name for a frame, records or table files")
            frame = frame.assign(run=name)
        return as_run(frame, duplicates=duplicates)
    files = resolve_sources(source)
    if run_from == "tag":
        if name is not None:
            raise SchemaError("name= cannot be combined with run_from='tag' (the tags name the runs)")
        names: list[Optional[str]] = [None] * len(files)
    else:
        names = list(resolve_names(files, name))
    frame = stack(list(read_run_files(files, names, duplicates, run_from, engine)))
    pa.default_memory_pool().release_unused()  # what parsing and dropping duplicates freed
    return frame


def read_run_files(
    files: Sequence[Path], names: Sequence[Optional[str]], duplicates: DuplicatePolicy, run_from: str, engine: str
):
    """The columns of each run file, in order, after its checks: the files are parsed and
    screened for repeated documents ahead, in worker threads (:func:`screened_run_file`),
    and reported, checked against each other and the duplicate policy here, in file order,
    so that warnings and the first error are those of a reading one file after the other.

    A run name (a tag with ``run_from="tag"``, or a run of a table file) found in two files
    raises :class:`~pdeval.errors.SchemaError` naming the files: runs of different files are
    never merged (under no duplicate policy)."""
    owners: dict[str, Path] = {}
    screened = threads.ordered(
        functools.partial(screened_run_file, want_tag=run_from == "tag", engine=engine), zip(files, names)
    )
    for path, columns, columns_of_file, suspect in screened:
        if columns is None:  # a Parquet / Arrow IPC file
            columns_of_file = _checked_table(path, columns_of_file, duplicates)
            _claim(owners, pd.unique(columns_of_file["run"]), path, run_from, screened)
            yield columns_of_file
            continue
        report_skipped(path, columns)
        runs = pd.unique(columns_of_file["run"]) if run_from == "tag" else [columns_of_file["run"].iloc[0]]
        _claim(owners, runs, path, run_from, screened)
        keys = ["run", "query_id", "doc_id"]
        if duplicates not in ("error", "first", "max"):  # refused with the policy's message
            validate_with_path(pd.DataFrame(columns_of_file), keys, columns.line, duplicates, str(path), "run")
        if suspect is not None:
            # the exact check of pdeval.frames.canonical.as_run, on the rows of those lists only
            rows = np.flatnonzero(suspect)
            lines = columns.line[rows] if isinstance(columns.line, np.ndarray) else columns.line.start + rows
            try:
                kept = validate_with_path(
                    take_rows(pd.DataFrame(columns_of_file, copy=False), rows), keys, lines, duplicates, str(path),
                    "run", stacklevel=4,
                )
            except DuplicateError as exc:
                if run_from != "tag":
                    raise
                raise DuplicateError(f"{exc} With run_from='tag' (--run-from tag) a tag that names several runs "
                                     "of the file repeats documents too: then read the runs with run_from='file' "
                                     "(--run-from file) rather than drop rows") from None
            if len(kept) < len(rows):
                keep = ~suspect
                keep[rows[kept.index.to_numpy()]] = True
                for name in list(columns_of_file):
                    columns_of_file[name] = without_dropped(columns_of_file.pop(name), keep)
        yield columns_of_file


def _claim(owners: dict, runs, path: Path, run_from: str, rest) -> None:
    """Record the file of each run name; a name already held by another file is refused,
    naming every file that holds it (the files still to read are scanned for it)."""
    for run in runs:
        if run not in owners:
            owners[run] = path
            continue
        holders = [owners[run], path]
        try:
            for other, columns, columns_of_file, _ in rest:
                if run in set(pd.unique(columns_of_file["run"])):
                    holders.append(other)
        except PdevalError:  # a later file that cannot be read: the collision is reported first
            pass
        listed = ", ".join(repr(str(p)) for p in holders)
        count = {2: "two", 3: "three", 4: "four"}.get(len(holders), str(len(holders)))
        if run_from == "tag":
            raise SchemaError(
                f"the tag {run!r} names runs in {count} files ({listed}); with run_from='tag' "
                "(--run-from tag) each run must come from one file. Name the runs by their files "
                "instead: run_from='file' (--run-from file)"
            )
        raise SchemaError(
            f"the run {run!r} comes from {count} files ({listed}); runs of different files are "
            "not merged: give each file's runs their own names"
        )


def _checked_table(path: Path, frame: pd.DataFrame, duplicates: DuplicatePolicy) -> dict:
    """The columns of a run read from a Parquet / Arrow IPC file, validated (rows are
    counted from 1 where a text file would name lines)."""
    lines = np.arange(1, len(frame) + 1)
    frame = validate_with_path(frame, ["run", "query_id", "doc_id"], lines, duplicates, str(path), "run",
                               stacklevel=4).reset_index(drop=True)
    rank = frame["rank"] if "rank" in frame.columns else None
    if rank is None or not pd.api.types.is_integer_dtype(rank.dtype):
        rank = frame.groupby(["run", "query_id"], sort=False).cumcount() + 1  # the order of the rows
    return {
        "run": frame["run"].astype("str"),
        "query_id": frame["query_id"].astype("str"),
        "doc_id": frame["doc_id"].astype("str"),
        "score": frame["score"].to_numpy(dtype=np.float64),
        "rank": rank.to_numpy(dtype=np.int64),
    }


def without_dropped(values, keep: np.ndarray):
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
    return string_series(pa.chunked_array(kept, type=pa.large_string()))


def screened_run_file(path_and_name: tuple, want_tag: bool, engine: str) -> tuple:
    """A run file parsed into its frame's columns, and the rows of its lists in which a
    document may repeat (:func:`lists_that_may_repeat`). Raises and warns of nothing but
    the file's own parse errors: it runs in a worker thread."""
    path, name = path_and_name
    if is_table_file(path):  # validated in the calling thread (it may warn)
        frame = canonicalize(load_table(path))
        if "run" not in frame.columns:
            frame = frame.assign(run=name if name is not None else run_name(path))
        return path, None, frame, None
    columns = parse_run_file(path, want_tag, engine)
    fields = columns.fields
    if want_tag:
        run = string_series(fields["tag"])
    else:
        run = string_series(pa.repeat(pa.scalar(name, pa.large_string()), len(columns.line)))
    columns_of_file = {
        "run": run,
        "query_id": string_series(fields["query_id"]),
        "doc_id": string_series(fields["doc_id"]),
        "score": numeric_array(fields["score"], np.float64),
        "rank": numeric_array(fields["rank"], np.int64),
    }
    columns.fields = {}  # (only the line numbers are needed from here on)
    return path, columns, columns_of_file, lists_that_may_repeat(columns_of_file, one_run=not want_tag)


def lists_that_may_repeat(columns: dict, one_run: bool) -> Optional[np.ndarray]:
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


def stack(files: list) -> pd.DataFrame:
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

