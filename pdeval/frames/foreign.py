"""Inbound conversions: the frames and objects of other tools as pandas frames.

:func:`to_frame` is the one entry point (:func:`pdeval.frames.canonicalize` calls it for
anything that is not a pandas DataFrame):

* pyarrow Tables and RecordBatches, Polars DataFrames and LazyFrames (:func:`to_pandas`):
  string columns stay Arrow-backed, so the engine reads their buffers without a copy;
* ranx ``Run`` and ``Qrels``, and the dict ``{name: Run}`` (or list of ``Run``) of a
  multi-run ranx workflow (:func:`from_ranx`);
* iterables of named-tuple records such as ir_datasets' ``TrecQrel``, ``TrecPrel``,
  ``GenericScoredDoc`` or ir_measures' ``Qrel``/``ScoredDoc`` (:func:`records_to_frame`):
  the record fields become columns; ``TrecPrel``'s inclusion probability ``iprob`` becomes
  ``inclusion_prob`` (the column the sampling estimators read) and its ``method`` is dropped.

The other tools are imported only when one of their objects is met.
"""

from __future__ import annotations

import itertools
from typing import Any, Iterable

import numpy as np
import pandas as pd

from pdeval.common.contract import ALIEN, Domain, Refused, contract
from pdeval.errors import SchemaError


class RanxObject(Domain):
    """A ranx ``Run`` or ``Qrels``, or a dict or list of ranx runs."""

    text = "a ranx Run or Qrels, or a dict or list of ranx runs"

    def convert(self, value: Any) -> Any:
        if _module_of(value) == "ranx" or _ranx_runs(value):
            return value
        raise Refused(error=SchemaError)

    def outside(self) -> list:
        return [ALIEN, None, "run.txt", pd.DataFrame({"query_id": ["1"], "doc_id": ["d1"], "score": [1.0]})]

    def example(self) -> Any:
        import ranx

        return ranx.Run({"1": {"d1": 1.0, "d2": 0.5}}, name="bm25")


def _module_of(obj: Any) -> str:
    return type(obj).__module__.split(".")[0]


def is_foreign(obj: Any) -> bool:
    """Whether :func:`to_frame` (or the dask path) would try to read ``obj``: a Polars, Arrow,
    ranx or dask object, a dict or list of ranx runs, or an iterable of records."""
    if _module_of(obj) in ("pyarrow", "polars", "ranx", "dask") or _ranx_runs(obj):
        return True
    return not isinstance(obj, (str, bytes, dict, pd.Series)) and hasattr(obj, "__iter__")


def to_frame(obj: Any) -> pd.DataFrame:
    """A pandas DataFrame holding what ``obj`` holds, with the peer's column names.

    Accepted: pandas DataFrames (returned as they are), pyarrow Tables and RecordBatches,
    Polars DataFrames and LazyFrames (:func:`to_pandas`), ranx ``Run`` and ``Qrels`` and
    dicts (or lists) of ranx runs (:func:`from_ranx`), and iterables of records such as ir_datasets' ``TrecQrel``,
    ``TrecPrel``, ``GenericScoredDoc`` or ir_measures' ``Qrel``/``ScoredDoc``
    (:func:`records_to_frame`). Anything else raises
    :class:`~pdeval.errors.SchemaError`.
    """
    if isinstance(obj, pd.DataFrame):
        return obj
    module = _module_of(obj)
    if module in ("pyarrow", "polars"):
        return to_pandas(obj)
    if module == "ranx" or _ranx_runs(obj):
        return from_ranx(obj)
    if isinstance(obj, (str, bytes, dict, pd.Series)) or not hasattr(obj, "__iter__"):
        raise SchemaError(
            f"expected a frame (pandas, Polars, pyarrow), a ranx Run/Qrels or an iterable of "
            f"ir_datasets records, got {type(obj).__name__}"
        )
    return records_to_frame(obj)


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


def _rows(nested: Any) -> tuple[list, list, list]:
    """query ids, doc ids and values of ranx's ``{query: {doc: value}}`` dict of dicts."""
    queries, docs, values = [], [], []
    for query, scored in nested.items():
        queries.extend([query] * len(scored))
        docs.extend(scored.keys())
        values.extend(scored.values())
    return queries, docs, values


def _ranx_runs(obj: Any) -> bool:
    """True for a non-empty dict or list whose values are all ranx ``Run`` objects."""
    items = list(obj.values()) if isinstance(obj, dict) else obj if isinstance(obj, (list, tuple)) else None
    return bool(items) and all(_module_of(item) == "ranx" and type(item).__name__ == "Run" for item in items)


def _run_frame(run: Any, name: Any) -> pd.DataFrame:
    queries, docs, scores = _rows(run.to_dict())
    return pd.DataFrame(
        {
            "run": pd.Series([str(name)] * len(queries), dtype=str),
            "query_id": pd.Series(queries, dtype=str),
            "doc_id": pd.Series(docs, dtype=str),
            "score": np.asarray(scores, dtype=np.float64),
        }
    )


@contract(obj=RanxObject())
def from_ranx(obj: Any) -> pd.DataFrame:
    """ranx objects as pdeval frames.

    Parameters
    ----------
    obj : ranx.Run, ranx.Qrels, dict of str to ranx.Run, or list of ranx.Run
        A ``Run`` becomes a run frame (``run``, ``query_id``, ``doc_id``, ``score``; the run
        is named by ``Run.name``, ``"run"`` when it has none). A dict ``{name: Run}`` -- what a
        multi-run ranx workflow holds, and what :func:`pdeval.to_ranx` returns for several
        runs -- becomes one run frame holding every run, each named by its key (in the dict's
        order); a list of runs is named by each ``Run.name``. A ``Qrels`` becomes a qrels frame
        (``query_id``, ``doc_id``, ``relevance``). Ids become pandas strings (pandas 3's
        ``str`` dtype), scores float64, relevance int64.

    Returns
    -------
    pandas.DataFrame
        The run frame or the qrels frame.

    Raises
    ------
    SchemaError
        Anything else, or runs of a list whose names repeat.

    See Also
    --------
    to_ranx : The way back.
    read_run : Reads ranx objects too.

    Examples
    --------
    >>> import ranx
    >>> pdeval.from_ranx(ranx.Run({"1": {"d1": 2.0, "d2": 1.0}}, name="bm25"))
        run query_id doc_id  score
    0  bm25        1     d1    2.0
    1  bm25        1     d2    1.0
    """
    import ranx

    if isinstance(obj, ranx.Run):
        return _run_frame(obj, obj.name if obj.name is not None else "run")
    if _ranx_runs(obj):
        named = obj.items() if isinstance(obj, dict) else [(r.name if r.name is not None else "run", r) for r in obj]
        names = [str(name) for name, _ in named]
        repeated = sorted({name for name in names if names.count(name) > 1})
        if repeated:
            raise SchemaError(f"the ranx runs repeat the name(s) {repeated}: pass a dict {{name: Run}} to name them apart")
        return pd.concat([_run_frame(run, name) for name, run in named], ignore_index=True)
    if isinstance(obj, ranx.Qrels):
        queries, docs, levels = _rows(obj.to_dict())
        return pd.DataFrame(
            {
                "query_id": pd.Series(queries, dtype=str),
                "doc_id": pd.Series(docs, dtype=str),
                "relevance": np.asarray(levels, dtype=np.int64),
            }
        )
    raise SchemaError(f"expected a ranx Run or Qrels, or a dict {{name: Run}}, got {type(obj).__name__}")


#: record field -> pdeval column; None drops the field
FIELDS = {"iprob": "inclusion_prob", "method": None}


def records_to_frame(records: Iterable[Any]) -> pd.DataFrame:
    """A frame with one row per record and one column per field of the (named tuple) records.

    Raises :class:`~pdeval.errors.SchemaError` for an empty iterable or items that are not
    named tuples.
    """
    iterator = iter(records)
    try:
        first = next(iterator)
    except StopIteration:
        raise SchemaError("the iterable of records is empty: no run or qrels rows") from None
    fields = getattr(type(first), "_fields", None)
    if not fields:
        raise SchemaError(
            f"expected records with named fields (ir_datasets' TrecQrel, TrecPrel, GenericScoredDoc, "
            f"ir_measures' Qrel/ScoredDoc ...), got {type(first).__name__}"
        )
    frame = pd.DataFrame.from_records(list(itertools.chain([first], iterator)), columns=list(fields))
    keep = [f for f in fields if FIELDS.get(f, f) is not None]
    return frame[keep].rename(columns={f: FIELDS[f] for f in keep if f in FIELDS})


__all__ = ["from_ranx", "is_foreign", "records_to_frame", "to_frame", "to_pandas"]
