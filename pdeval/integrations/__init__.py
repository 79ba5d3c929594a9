"""pdeval in the IR ecosystem: converters between pdeval's frames and its peers' objects.

One module per peer:

* :mod:`.arrow` -- Polars DataFrames and pyarrow Tables in (zero-copy where the engine
  reads Arrow buffers) and out (``output="polars"`` / ``"arrow"``); Parquet and Arrow IPC files;
* :mod:`.ir_measures` -- pdeval measures as ir_measures measures (so in
  ``ir_measures.calc_aggregate`` and PyTerrier's ``pt.Experiment``), and ir_measures measure
  objects accepted wherever pdeval takes a measure string;
* :mod:`.pyterrier` -- PyTerrier frames, ``pt.Experiment``-compatible test callables and
  :func:`~.pyterrier.experiment`, PyTerrier's experiment table from pdeval's paired tests;
* :mod:`.ranx` -- :func:`~.ranx.from_ranx` / :func:`~.ranx.to_ranx`;
* :mod:`.ir_datasets` -- iterables of ir_datasets (and ir_measures) records;
* :mod:`.trec_eval` -- trec_eval's output as result frames and back.

:func:`to_frame` is the one entry point the rest of pdeval calls at its boundary
(:func:`pdeval.frames.canonicalize`): anything that is not a pandas DataFrame goes through it.
The peers are imported only when an object of theirs is met.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import SchemaError


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def to_frame(obj: Any) -> pd.DataFrame:
    """A pandas DataFrame holding what ``obj`` holds, with the peer's column names.

    Accepted: pandas DataFrames (returned as they are), pyarrow Tables and RecordBatches,
    Polars DataFrames and LazyFrames (:func:`.arrow.to_pandas`), ranx ``Run`` and ``Qrels``
    (:func:`.ranx.from_ranx`), and iterables of records such as ir_datasets' ``TrecQrel``,
    ``TrecPrel``, ``GenericScoredDoc`` or ir_measures' ``Qrel``/``ScoredDoc``
    (:func:`.ir_datasets.records_to_frame`). Anything else raises
    :class:`~pdeval.errors.SchemaError`.
    """
    if isinstance(obj, pd.DataFrame):
        return obj
    module = _module_of(obj)
    if module in ("pyarrow", "polars"):
        from .arrow import to_pandas

        return to_pandas(obj)
    if module == "ranx":
        from .ranx import from_ranx

        return from_ranx(obj)
    if isinstance(obj, (str, bytes, dict, pd.Series)) or not hasattr(obj, "__iter__"):
        raise SchemaError(
            f"expected a frame (pandas, Polars, pyarrow), a ranx Run/Qrels or an iterable of "
            f"ir_datasets records, got {type(obj).__name__}"
        )
    from .ir_datasets import records_to_frame

    return records_to_frame(obj)


def is_source(obj: Any) -> bool:
    """Whether a reader should take ``obj`` through :func:`read_source` rather than parse
    TREC text: a Parquet or Arrow IPC file, or anything that is not a path or a list of
    paths (a frame, a ranx object, an iterable of records)."""
    from .arrow import is_table_file

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
    from .arrow import is_table_file, load_table

    if isinstance(obj, (str, os.PathLike)):
        return load_table(obj)
    if isinstance(obj, (list, tuple)) and obj and all(is_table_file(item) for item in obj):
        frames = [load_table(path) for path in obj]
        frames = [f if "run" in f.columns else f.assign(run=Path(path).stem) for f, path in zip(frames, obj)]
        return pd.concat(frames, ignore_index=True)
    return to_frame(obj)


__all__ = ["is_source", "read_source", "to_frame"]
