"""Polars and Arrow: frames in and out, Parquet and Arrow IPC files.

pdeval's engine reads string ids straight from Arrow buffers (:mod:`pdeval.ids`), and
pandas keeps Arrow-backed string columns as they are, so a pyarrow Table becomes a pandas
frame without copying its ids or (``split_blocks=True``) its numeric columns. A Polars
frame is first exported to Arrow (Polars' own zero-copy export).

Results (and any frame) go back with :func:`from_pandas` (``output="polars"`` or
``"arrow"`` of :func:`pdeval.evaluate`). :func:`read_table` / :func:`write_table` read and
write runs, qrels and results as Parquet (``.parquet``, ``.pq``) or Arrow IPC
(``.arrow``, ``.feather``, ``.ipc``) files, the format chosen by the file's suffix.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal, Optional, Union

import pandas as pd

from ..errors import SchemaError

Output = Literal["pandas", "polars", "arrow"]
PathLike = Union[str, "os.PathLike[str]"]

#: file suffixes read and written as Parquet, and as Arrow IPC (Feather v2)
PARQUET_SUFFIXES = (".parquet", ".pq")
IPC_SUFFIXES = (".arrow", ".feather", ".ipc")


def to_pandas(obj: Any) -> pd.DataFrame:
    """A pyarrow Table / RecordBatch or a Polars DataFrame / LazyFrame as a pandas frame.

    String columns stay Arrow-backed (no copy), numeric columns without nulls share the
    Arrow buffers (``split_blocks=True``); Polars exports to Arrow without copying.
    """
    import pyarrow as pa

    module = type(obj).__module__.split(".")[0]
    if module == "polars":
        import polars as pl

        if isinstance(obj, pl.LazyFrame):
            obj = obj.collect()
        if not isinstance(obj, pl.DataFrame):
            raise SchemaError(f"expected a Polars DataFrame or LazyFrame, got {type(obj).__name__}")
        obj = obj.to_arrow()
    if isinstance(obj, pa.RecordBatch):
        obj = pa.Table.from_batches([obj])
    if not isinstance(obj, pa.Table):
        raise SchemaError(f"expected a pyarrow Table or RecordBatch, got {type(obj).__name__}")
    # Polars exports string views; pandas' Arrow-backed strings take (large) strings
    columns = [
        column.cast(pa.large_string()) if pa.types.is_string_view(column.type) else column
        for column in obj.columns
    ]
    table = pa.Table.from_arrays(columns, names=obj.column_names)
    return table.to_pandas(split_blocks=True)


def from_pandas(frame: pd.DataFrame, output: Output = "pandas") -> Any:
    """``frame`` as ``output``: ``"pandas"`` (itself), ``"arrow"`` (a pyarrow Table) or
    ``"polars"`` (a Polars DataFrame, through Arrow)."""
    if output == "pandas":
        return frame
    if output not in ("arrow", "polars"):
        raise SchemaError(f"output must be 'pandas', 'polars' or 'arrow', not {output!r}")
    import pyarrow as pa

    table = pa.Table.from_pandas(frame, preserve_index=False)
    if output == "arrow":
        return table
    import polars as pl

    return pl.from_arrow(table)


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
    from ..io import MissingFileError

    file = Path(path)
    if not file.is_file():
        raise MissingFileError(f"no such file: {str(file)!r}", str(file))
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    table = pq.read_table(file) if _format(file) == "parquet" else feather.read_table(file, memory_map=True)
    return to_pandas(table)


def read_table(path: PathLike, kind: Optional[Literal["run", "qrels", "result"]] = None) -> pd.DataFrame:
    """Read a run, qrels or result frame from a Parquet or Arrow IPC file.

    ``kind`` validates the frame as that kind (:func:`pdeval.frames.as_run`, ``as_qrels``,
    ``as_result``); by default the kind is told from the columns
    (:func:`pdeval.frames.frame_kind`) and the frame is validated as that kind.
    """
    from .. import frames

    frame = load_table(path)
    kind = kind or frames.frame_kind(frame)
    if kind is None:
        raise SchemaError(
            f"{str(path)!r} holds columns {list(frame.columns)}: neither a run, qrels nor result frame"
        )
    check = {"run": frames.as_run, "qrels": frames.as_qrels, "result": frames.as_result}
    if kind not in check:
        raise SchemaError(f"kind must be 'run', 'qrels' or 'result', not {kind!r}")
    return check[kind](frame)


def write_table(frame: Any, path: PathLike) -> Path:
    """Write a frame (pandas, Polars or Arrow) as Parquet or Arrow IPC, by the file's
    suffix; return the path. Columns and types are kept, so :func:`read_table` gives the
    same frame back."""
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq

    from . import to_frame

    file = Path(path)
    fmt = _format(file)
    table = pa.Table.from_pandas(to_frame(frame), preserve_index=False)
    if fmt == "parquet":
        pq.write_table(table, file)
    else:
        feather.write_feather(table, file)
    return file


__all__ = ["from_pandas", "is_table_file", "load_table", "read_table", "to_pandas", "write_table"]
