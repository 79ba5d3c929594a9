"""The result-frame toolkit: key splitting, per-run means and score matrices of result frames.

A result frame (:func:`pdeval.evaluate`) is tidy: key columns (``run``, ``by`` columns, qrels
variant columns such as ``level`` and ``sample``, ``query_id``), ``measure`` and ``value``.
Every analysis reads it the same three ways, defined here once:

* :func:`split_keys` -- which key columns define a ranking of systems (``by``) and which are
  averaged over with the topics;
* :func:`summarize` -- per-system means over topics (MAP = mean AP), tidy or wide; also the
  per-run means of a :func:`pdeval.bounds` frame;
* :func:`score_matrices` -- the systems x topics matrix of each (measure, variant), for the
  paired tests, the bootstrap, ANOVA and Tukey's HSD.

Correlation, significance, statistics and the report use these functions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Iterator, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import Boolean, ListOf, Nullable, Text, contract
from pdeval.errors import PdevalWarning, SchemaError, warn
from pdeval.evaluation.bounds import summarize_bounds
from pdeval.frames.canonical import as_result, result_keys
from pdeval.frames.domains import Frame

__all__ = ["split_keys", "summarize", "require_systems", "ScoreMatrix", "score_matrices"]


def _listify(columns: Union[None, str, Iterable[str]]) -> Optional[list[str]]:
    if columns is None:
        return None
    if isinstance(columns, str):
        return [columns]
    return list(columns)


def split_keys(
    result: pd.DataFrame, *, system: str = "run", by: Union[None, str, Iterable[str]] = None
) -> tuple[list[str], list[str]]:
    """The ``by`` (ranking-defining) and averaged-over key columns of a result frame.

    Parameters
    ----------
    result : pandas.DataFrame
        A result frame.
    system : str, default 'run'
        The column that names a system.
    by : str or list of str, optional
        The key columns that define a ranking; default every key column other than
        ``system`` and ``query_id``.

    Returns
    -------
    tuple of (list of str, list of str)
        ``(by, averaged)``; ``averaged`` always holds ``query_id`` when present.

    Raises
    ------
    SchemaError
        No ``system`` column, or ``by`` naming a column that is not a key (or the system or
        ``query_id``).
    """
    keys = result_keys(result)
    if system not in keys:
        raise SchemaError(
            f"the result frame has no system column {system!r}; its key columns are {keys}. "
            f"Pass system= to name the column that identifies a system."
        )
    by_list = _listify(by)
    if by_list is None:
        by_list = [k for k in keys if k not in (system, "query_id")]
    else:
        unknown = [k for k in by_list if k not in keys]
        if unknown:
            raise SchemaError(f"by= names column(s) {unknown} that are not key columns of the result {keys}")
        if system in by_list or "query_id" in by_list:
            raise SchemaError(f"by= must not contain the system column {system!r} or 'query_id'")
    averaged = [k for k in keys if k not in by_list and k != system]
    return by_list, averaged


@contract(result=Frame("result"), by=Nullable(ListOf(Text("a column name"), min_len=0)),
          system=Text("a column name"), wide=Boolean())
def summarize(
    result: pd.DataFrame,
    *,
    by: Union[None, str, Iterable[str]] = None,
    system: str = "run",
    wide: bool = False,
) -> pd.DataFrame:
    """Per-system means over topics of a result frame (MAP = mean AP over topics, etc.).

    ``mean_t value(system, t)`` for each (``system``, ``by``..., ``measure``) group, where
    ``by`` defaults to every key column other than ``system`` and ``query_id`` (``level``,
    ``sample``, a swept parameter...); key columns outside ``by`` are averaged over with the
    topics. NaN values (undefined topics under ``undefined="nan"``) are skipped, counted in
    ``undefined`` and warned about (MEASURES.md 0.5).

    Parameters
    ----------
    result : pandas.DataFrame
        A result frame of :func:`pdeval.evaluate`, or a frame of :func:`pdeval.bounds`.
    by : str or list of str, optional
        The key columns kept apart (default: every key but ``system`` and ``query_id``).
    system : str, default 'run'
        The column that names a system.
    wide : bool, default False
        One row per system (and ``by`` values), one column per measure.

    Returns
    -------
    pandas.DataFrame
        Tidy: ``system``, ``by``..., ``measure``, ``value`` (the mean), ``topics`` (values
        averaged) and ``undefined`` (NaN values skipped). A :func:`pdeval.bounds` frame gives
        the means of ``value``, ``if_nonrelevant``, ``if_relevant``, ``low``, ``high`` and
        ``residual`` with ``monotone`` (:func:`pdeval.evaluation.bounds.summarize_bounds`).

    Raises
    ------
    SchemaError
        Not a result frame, or a bad ``system``/``by``; a frame of :func:`pdeval.estimate`
        (its run means with intervals computed jointly over the topics come from
        ``estimate(..., per="run")``; averaging per-topic intervals would not give them).

    See Also
    --------
    evaluate : The result frame summarised here.
    compare : Significance tests between the systems.
    write_trec_eval : The means as trec_eval's ``all`` lines.

    Examples
    --------
    >>> result = pd.DataFrame({"run": ["a", "a", "b", "b"], "query_id": ["1", "2", "1", "2"],
    ...                        "measure": "AP", "value": [0.5, 0.25, 0.75, 0.5]})
    >>> pdeval.summarize(result)
      run measure  value  topics  undefined
    0   a      AP  0.375       2          0
    1   b      AP  0.625       2          0
    >>> pdeval.summarize(result, wide=True)
      run     AP
    0   a  0.375
    1   b  0.625
    """
    if {"low", "high", "residual"} <= set(result.columns):
        return summarize_bounds(result, wide=wide)
    result = as_result(result)  # (an empty result summarizes to an empty frame)
    by_list, _ = split_keys(result, system=system, by=by)
    groups = [system, *by_list, "measure"]
    values = pd.to_numeric(result["value"], errors="coerce").astype(np.float64)
    grouped = result[groups].assign(value=values).groupby(groups, sort=False, observed=True, dropna=False)["value"]
    summary = grouped.agg(value="mean", topics="count", size="size").reset_index()
    summary["undefined"] = (summary.pop("size") - summary["topics"]).astype(np.int64)
    summary["topics"] = summary["topics"].astype(np.int64)
    skipped = int(summary["undefined"].sum())
    if skipped:
        warn(f"{skipped} undefined (NaN) per-topic value(s) skipped in the means of "
             f"{int((summary['undefined'] > 0).sum())} (system, measure, variant) group(s); see the undefined column",
             PdevalWarning)
    if wide:
        table = summary.pivot_table(index=[system, *by_list], columns="measure", values="value", sort=False)
        table.columns.name = None
        return table.reset_index()
    return summary


def require_systems(means: pd.DataFrame, system: str, by: Sequence[str], what: str) -> None:
    """Refuse per-system means (:func:`summarize`) in which a (measure, variant) ranking holds
    fewer than two systems: there is no ranking to correlate.

    Raises
    ------
    SchemaError
        Naming the first such group and its systems.
    """
    counts = means.groupby(["measure", *by], sort=False, observed=True, dropna=False)[system].nunique()
    few = counts[counts < 2]
    if len(few):
        key = few.index[0] if isinstance(few.index[0], tuple) else (few.index[0],)
        names = means.loc[means["measure"] == key[0], system].unique()[:3].tolist()
        raise SchemaError(
            f"{what}: the ranking of measure {key[0]!r}" + (f" ({dict(zip(by, key[1:]))})" if by else "")
            + f" holds {int(few.iloc[0])} system(s) {names}; a rank correlation needs at least two systems"
        )


@dataclass
class ScoreMatrix:
    """The systems x topics scores of one (measure, variant) group."""

    measure: str
    variant: dict
    runs: list
    topics: list
    scores: np.ndarray


def score_matrices(
    result: pd.DataFrame,
    measures: Union[None, str, Sequence[str]] = None,
    *,
    system: str = "run",
) -> Iterator[ScoreMatrix]:
    """Yield the runs x topics score matrix of every (measure, variant) group of ``result``.

    Variant keys are every key column other than ``system`` and ``query_id``. Runs keep
    their order of first appearance (the "input order" of MEASURES.md E9/E10), topics are
    sorted. A duplicated (run, topic) or a missing / NaN cell raises
    :class:`~pdeval.errors.SchemaError` naming the first offending cells: paired methods
    need every run evaluated on every topic (evaluate with ``complete=True``); so do fewer
    than two systems or two topics in a group.
    """
    result = as_result(result)
    if "query_id" not in result.columns:
        raise SchemaError("this analysis needs per-topic values: the result frame has no 'query_id' column")
    if result.empty:
        raise SchemaError("this analysis needs per-topic values: the result frame has no rows")
    by_list, _ = split_keys(result, system=system)
    if measures is not None:
        wanted = [measures] if isinstance(measures, str) else list(measures)
        present = set(pd.unique(result["measure"]))
        missing = [m for m in wanted if m not in present]
        if missing:
            raise SchemaError(f"measure(s) {missing} are not in the result; it has {sorted(present, key=str)}")
        result = result[result["measure"].isin(wanted)]
        order = {m: i for i, m in enumerate(wanted)}
    else:
        order = {m: i for i, m in enumerate(pd.unique(result["measure"]))}
    items = list(result.groupby(["measure", *by_list], dropna=False, sort=True, observed=True))
    items.sort(key=lambda kv: order[kv[0][0] if isinstance(kv[0], tuple) else kv[0]])
    for key, part in items:
        key = key if isinstance(key, tuple) else (key,)
        yield _matrix(part, key[0], dict(zip(by_list, key[1:])), system)


def _matrix(part: pd.DataFrame, measure: str, variant: dict, system: str) -> ScoreMatrix:
    run_codes, runs = pd.factorize(part[system], sort=False)
    topic_codes, topics = pd.factorize(part["query_id"], sort=True)
    m, n = len(runs), len(topics)
    where = f"measure {measure!r}" + (f", {variant}" if variant else "")
    if m < 2 or n < 2:  # no pair to compare, or no variation over topics to test against
        raise SchemaError(
            f"{where}: {m} system(s) x {n} topic(s) ({', '.join(map(repr, runs[:3]))} on "
            f"{', '.join(map(repr, topics[:3]))}); the paired analyses need at least two systems and two topics"
        )
    cell = run_codes.astype(np.int64) * n + topic_codes
    counts = np.bincount(cell, minlength=m * n)
    if (counts > 1).any():
        bad = np.flatnonzero(counts > 1)[:3]
        raise SchemaError(
            f"{where}: {int((counts > 1).sum())} (run, topic) cell(s) have several values, first: "
            + ", ".join(f"({runs[c // n]!r}, {topics[c % n]!r})" for c in bad)
            + ". Is a variant key column missing?"
        )
    scores = np.full(m * n, np.nan)
    scores[cell] = pd.to_numeric(part["value"], errors="coerce").to_numpy(np.float64)
    if np.isnan(scores).any():
        bad = np.flatnonzero(np.isnan(scores))
        raise SchemaError(
            f"{where}: {bad.size} (run, topic) cell(s) are missing or NaN, first: "
            + ", ".join(f"({runs[c // n]!r}, {topics[c % n]!r})" for c in bad[:3])
            + ". Paired analyses need every run on every topic (evaluate with complete=True, "
            "undefined='zero', or drop those runs/topics)."
        )
    return ScoreMatrix(measure, variant, list(runs), list(topics), scores.reshape(m, n))
