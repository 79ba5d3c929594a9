"""Polars and Arrow: frames in and out, Parquet and Arrow IPC files.

pdeval's engine reads string ids straight from Arrow buffers (:mod:`pdeval.engine.ids`), and
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
from typing import Any, Literal, Union

import pandas as pd

from pdeval.errors import SchemaError

Output = Literal["pandas", "polars", "arrow"]
PathLike = Union[str, "os.PathLike[str]"]

#: file suffixes read and written as Parquet, and as Arrow IPC (Feather v2)
PARQUET_SUFFIXES = (".parquet", ".pq")
IPC_SUFFIXES = (".arrow", ".feather", ".ipc")


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


__all__ = ["from_pandas"]
