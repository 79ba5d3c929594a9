"""Parquet and Arrow IPC files, and in-memory objects, as sources of frames.

:func:`read_table` / :func:`write_table` read and write runs, qrels and results as Parquet
(``.parquet``, ``.pq``) or Arrow IPC (``.arrow``, ``.feather``, ``.ipc``) files, the format
chosen by the file's suffix. :func:`is_source` / :func:`read_source` let the TREC readers
(:func:`pdeval.read_run`, :func:`pdeval.read_qrels`) take such files and in-memory objects
(frames, ranx objects, records) as well as text files.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional, Union

import pandas as pd

from pdeval.common.contract import Choice, FilePath, Nullable, contract
from pdeval.errors import MissingFileError, ParseError, SchemaError
from pdeval.frames import canonical as frames
from pdeval.frames.domains import Frame
from pdeval.frames.foreign import to_frame, to_pandas

PathLike = Union[str, "os.PathLike[str]"]

#: file suffixes read and written as Parquet, and as Arrow IPC (Feather v2)
PARQUET_SUFFIXES = (".parquet", ".pq")
IPC_SUFFIXES = (".arrow", ".feather", ".ipc")


def _format(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in PARQUET_SUFFIXES:
        return "parquet"
    if suffix in IPC_SUFFIXES:
        return "ipc"
    raise SchemaError(
        f"{str(path)!r}: cannot tell the table format from the suffix {suffix!r}; use one of "
        f"{list(PARQUET_SUFFIXES + IPC_SUFFIXES)}"
    )


def is_table_file(path: Any) -> bool:
    """Whether ``path`` names a Parquet or Arrow IPC file (by its suffix)."""
    return isinstance(path, (str, os.PathLike)) and Path(path).suffix.lower() in PARQUET_SUFFIXES + IPC_SUFFIXES


def load_table(path: PathLike) -> pd.DataFrame:
    """The frame in a Parquet or Arrow IPC file (memory-mapped), as it is stored."""
    file = Path(path)
    if not file.is_file():
        raise MissingFileError(f"no such file: {str(file)!r}", str(file))
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    fmt = _format(file)
    try:
        table = pq.read_table(file) if fmt == "parquet" else feather.read_table(file, memory_map=True)
    except (pa.ArrowException, OSError, ValueError) as exc:
        name = "a Parquet" if fmt == "parquet" else "an Arrow IPC (Feather)"
        raise ParseError(
            f"the suffix {file.suffix!r} names {name} file, but the file is not one or is damaged (pyarrow: {exc}). A TREC "
            f"text file must not carry a table suffix: rename it (e.g. to .txt); else write the table again",
            str(file),
        ) from None
    return to_pandas(table)


@contract(source=FilePath(), kind=Nullable(Choice("run", "qrels", "result")))
def read_table(source: PathLike, kind: Optional[Literal["run", "qrels", "result"]] = None) -> pd.DataFrame:
    """Read a run, qrels or result frame from a Parquet or Arrow IPC file (``source``).

    ``kind`` validates the frame as that kind (:func:`pdeval.frames.canonical.as_run`, ``as_qrels``,
    ``as_result``); by default the kind is told from the columns
    (:func:`pdeval.frames.canonical.frame_kind`) and the frame is validated as that kind.

    Parameters
    ----------
    source : str or path
        A Parquet (``.parquet``, ``.pq``) or Arrow IPC (``.arrow``, ``.feather``, ``.ipc``) file.
    kind : {'run', 'qrels', 'result'}, optional
        The kind of frame to validate it as.

    Returns
    -------
    DataFrame
        The validated frame.

    See Also
    --------
    write_table : Write a frame as Parquet or Arrow IPC.
    read_run : Read TREC run files (and table files among them).

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    >>> path = pdeval.write_table(qrels, "qrels.parquet")
    >>> pdeval.read_table(path)
      query_id doc_id  relevance
    0        1     d1          1
    1        1     d2          0
    """
    frame = load_table(source)
    kind = kind or frames.frame_kind(frame)
    if kind is None:
        raise SchemaError(
            f"{str(source)!r} holds columns {list(frame.columns)}: neither a run, qrels nor result frame"
        )
    check = {"run": frames.as_run, "qrels": frames.as_qrels, "result": frames.as_result}
    return check[kind](frame)


@contract(frame=Frame("any", foreign=True), path=FilePath())
def write_table(frame: Any, path: PathLike) -> Path:
    """Write a frame (pandas, Polars or Arrow) as Parquet or Arrow IPC, by the file's
    suffix; return the path. Columns and types are kept, so :func:`read_table` gives the
    same frame back.

    Parameters
    ----------
    frame : DataFrame
        Any frame (pandas, Polars or Arrow).
    path : str or path
        A ``.parquet``/``.pq`` or ``.arrow``/``.feather``/``.ipc`` file.

    Returns
    -------
    Path
        The path written.

    See Also
    --------
    read_table : Read the file back.
    write_run : Write a run frame as TREC run files.

    Examples
    --------
    >>> result = pd.DataFrame({"run": ["a"], "query_id": ["1"], "measure": ["AP"], "value": [0.5]})
    >>> pdeval.write_table(result, "result.arrow").name
    'result.arrow'
    >>> pdeval.read_table("result.arrow")
      run query_id measure  value
    0   a        1      AP    0.5
    """
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    file = Path(path)
    fmt = _format(file)
    table = pa.Table.from_pandas(to_frame(frame), preserve_index=False)
    if fmt == "parquet":
        pq.write_table(table, file)
    else:
        feather.write_feather(table, file)
    return file


def is_source(obj: Any) -> bool:
    """Whether a reader should take ``obj`` through :func:`read_source` rather than parse
    TREC text: a Parquet or Arrow IPC file, or anything that is not a path or a list of
    paths (a frame, a ranx object, an iterable of records)."""
    if isinstance(obj, (str, os.PathLike)):
        return is_table_file(obj)
    if isinstance(obj, (list, tuple)):
        if not obj or not isinstance(obj[0], (str, os.PathLike)):
            return bool(obj)  # records (an empty list is left to the readers' own message)
        return all(is_table_file(item) for item in obj)
    return True


def read_source(obj: Any) -> pd.DataFrame:
    """The frame held by a Parquet / Arrow IPC file (by its suffix), by a list of such files
    (concatenated; a file without a ``run`` column is named after the file, without its suffix),
    or by ``obj`` itself (:func:`to_frame`)."""
    if isinstance(obj, (str, os.PathLike)):
        return load_table(obj)
    if isinstance(obj, (list, tuple)) and obj and all(is_table_file(item) for item in obj):
        frames = [load_table(path) for path in obj]
        frames = [f if "run" in f.columns else f.assign(run=Path(path).stem) for f, path in zip(frames, obj)]
        return pd.concat(frames, ignore_index=True)
    return to_frame(obj)


__all__ = ["is_source", "is_table_file", "load_table", "read_source", "read_table", "write_table"]
