"""The result-frame toolkit: per-run means of result frames."""

from __future__ import annotations

import pandas as pd

from pdeval.errors import PdevalWarning, warn
from pdeval.evaluation.bounds import summarize_bounds
from pdeval.frames.canonical import as_result, result_keys


def summarize(result: pd.DataFrame, *, wide: bool = False) -> pd.DataFrame:
    """Per-run means over topics of a result frame.

    Groups by every key column except ``query_id`` (so ``level``/``sample`` and ``by`` keys
    are kept). Columns: the keys, ``measure``, ``value`` (the mean, NaN values skipped),
    ``topics`` (how many topics were averaged) and ``undefined`` (how many NaN values were
    skipped; 0 unless evaluated with ``undefined="nan"``). With ``wide=True`` a table with one
    column per measure. A frame of :func:`pdeval.evaluation.bounds` gets the mean ``high`` and
    ``residual`` beside the mean (:func:`pdeval.evaluation.bounds.summarize_bounds`).
    """
    if {"low", "high", "residual"} <= set(result.columns):
        return summarize_bounds(result, wide=wide)
    result = as_result(result)
    keys = [k for k in result_keys(result) if k != "query_id"]
    grouped = result.groupby(keys + ["measure"], sort=False, observed=True)["value"]
    summary = grouped.agg(value="mean", topics="count", size="size").reset_index()
    summary["undefined"] = summary.pop("size") - summary["topics"]
    if int(summary["undefined"].sum()):
        warn(f"{int(summary['undefined'].sum())} undefined (NaN) per-topic value(s) skipped in the means", PdevalWarning)
    if wide:
        table = summary.pivot_table(index=keys, columns="measure", values="value", sort=False)
        table.columns.name = None
        return table.reset_index()
    return summary


__all__ = ["summarize"]
