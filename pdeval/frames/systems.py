"""Whether the repeated rows of a run frame are several systems taken for one.

A run frame whose system column is not called ``run`` (``name``, ``runid``, ``model``...), or
a file of several runs that share a tag, shows its runs as one run that repeats documents. A
duplicates policy would then merge different systems into one wrong ranking, so
:func:`pdeval.frames.canonical.drop_duplicates` asks :func:`several_systems` first, and
:func:`unknown_run_columns` names the columns :func:`pdeval.frames.canonical.as_run` ignores.
"""

from __future__ import annotations

from typing import Optional, Sequence

import pandas as pd

__all__ = ["SYSTEM_LIKE", "several_systems", "unknown_run_columns"]

#: run frame columns that are information, never a system (besides the required ones)
#: (the query and document text columns are what PyTerrier frames carry beside the ranking)
RUN_INFORMATION = ("run", "rank", "Q0", "iteration", "iter", "query", "query_0", "text")

#: column names that usually name a system
SYSTEM_LIKE = ("name", "runid", "run_name", "runname", "model", "system_name", "method", "team")


def unknown_run_columns(frame: pd.DataFrame, required: Sequence[str], by: Sequence[str]) -> list[str]:
    """The columns of a run frame that no function reads: without a ``run`` column every row
    is one run named ``'run'``, so such a column may well be the systems' names."""
    known = {*required, *RUN_INFORMATION, *by}
    unknown = [str(c) for c in frame.columns if c not in known]
    return sorted(unknown, key=lambda c: c not in SYSTEM_LIKE)


def several_systems(frame: pd.DataFrame, keys: Sequence[str], value: str) -> Optional[str]:
    """Why the rows of ``frame`` that repeat ``keys`` look like several systems, or ``None``:
    a column that differs between the repeated rows, or a ranking that restarts (a rank
    repeated within one run and topic)."""
    repeated = frame.duplicated(list(keys), keep=False).to_numpy()
    rows = frame.loc[repeated]
    for column in rows.columns:
        if column in keys or column in (value, "rank"):
            continue
        differ = rows.groupby(list(keys), sort=False, observed=True, dropna=False)[column].nunique(dropna=False)
        if (differ > 1).any():
            shown = pd.unique(rows[column].astype(str))[:3].tolist()
            return f"the column {str(column)!r} differs between the repeated rows ({', '.join(map(repr, shown))}...)"
    if "rank" in frame.columns:
        lists = [k for k in keys if k != "doc_id"]
        restarts = frame.duplicated([*lists, "rank"], keep=False).to_numpy() & repeated
        if restarts.any():
            first = frame.loc[restarts].iloc[0]
            where = ", ".join(f"{k}={first[k]!r}" for k in lists)
            count = int(((frame[lists] == first[lists]).all(axis=1) & (frame["rank"] == first["rank"])).sum())
            return f"the ranking of {where} restarts: rank {first['rank']} appears {count} times (several rankings)"
    return None
