"""Leaderboards under several label sets, compared with a reference leaderboard.

:func:`leaderboards` evaluates every run against every label set at once (the label sets as
qrels variants); :func:`compare_leaderboards` compares the system rankings under each label
set with the reference ranking (Kendall's tau_b and tau_AP through
:func:`pdeval.rank_correlation`, plus top-k overlap); :func:`leaderboard_changes` lists how
far each run moves.
"""

from __future__ import annotations

from typing import Literal, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.rankings.correlation import rank_correlation
from pdeval.evaluation.results import summarize
from pdeval.analysis.rankings.alignment import MISSING_POLICIES
from pdeval.analysis.rankings.coefficients import METHOD
from pdeval.analysis.judges.labels import GRADE_MAP, LABEL_SET, LABEL_SETS, GradeMap, LabelSets, label_sets, map_grades
from pdeval.common.contract import Choice, Integer, ListOf, Real, Text, contract
from pdeval.frames.domains import Frame
from pdeval.measures.domains import Measures
from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.errors import SchemaError
from pdeval.evaluation.core import evaluate_frames
from pdeval.frames.canonical import as_result

__all__ = ["check_overlap", "compare_leaderboards", "leaderboard_changes", "leaderboards", "split_reference"]


@contract(run=Frame("run"), sets=LABEL_SETS, measures=Measures(), grade_map=GRADE_MAP)
@takes_engine_options
def leaderboards(
    run: pd.DataFrame,
    sets: LabelSets,
    measures,
    *,
    grade_map: GradeMap = None,
    **options,
) -> pd.DataFrame:
    """Evaluate every run against every label set at once (the label sets as qrels variants).

    Each label set is evaluated on the topics it labels.

    Parameters
    ----------
    run : DataFrame
        A run frame.
    sets : DataFrame or dict of str to DataFrame
        The label sets, as :func:`pdeval.label_sets` takes them (a mapping name -> qrels, or a
        long frame with a ``label_set`` column).
    measures : str or list of str
        Measure strings (a string or a list), as :func:`pdeval.evaluate` takes them.
    grade_map : dict, optional
        A grade mapping as :func:`pdeval.map_grades` takes it, applied first (e.g. fold a 0-4
        set onto 0-3 before comparing it with a 0-3 set: a gain or threshold means the same
        grade only on the same scale).
    {engine_options}

    Returns
    -------
    pandas.DataFrame
        The result frame, keyed by ``run``, ``label_set``, ``query_id``.

    Raises
    ------
    SchemaError
        Label sets that are not qrels frames, or variant columns besides ``label_set``.

    See Also
    --------
    compare_leaderboards : Compares them with the reference.
    leaderboard_changes : Each run's rank change.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> llm = qrels.assign(relevance=[1, 0, 0, 1, 1])
    >>> boards = pdeval.leaderboards(run, {"human": qrels, "llm": llm}, "P@2")
    >>> boards
      run label_set query_id measure  value
    0   a     human        1     P@2    1.0
    1   b     human        1     P@2    0.5
    2   c     human        1     P@2    0.5
    3   a       llm        1     P@2    0.5
    4   b       llm        1     P@2    1.0
    5   c       llm        1     P@2    0.0
    """
    return evaluate_frames(run, map_grades(label_sets(sets), grade_map), measures,
                           EngineOptions.of(options, where="leaderboards"))


def _ranked_means(result: pd.DataFrame, system: str, by: list[str]) -> pd.DataFrame:
    """Per-system means with a rank per (measure, by) group: descending mean, ties by name."""
    means = summarize(result, system=system, by=by)
    means = means.loc[means["value"].notna()]
    means = means.sort_values(["measure", *by, "value", system], ascending=[True] * (1 + len(by)) + [False, True],
                              kind="stable")
    means["rank"] = means.groupby(["measure", *by], sort=False, observed=True).cumcount() + 1
    return means.reset_index(drop=True)


def split_reference(result: pd.DataFrame, reference: str, system: str):
    result = as_result(result)
    if LABEL_SET not in result.columns:
        raise SchemaError(f"the result has no {LABEL_SET!r} column; evaluate with pdeval.leaderboards first")
    names = result[LABEL_SET].astype(str)
    if not (names == reference).any():
        raise SchemaError(f"reference label set {reference!r} is not in the result; it has {sorted(names.unique())}")
    ref = result.loc[names == reference].drop(columns=LABEL_SET)
    est = result.loc[names != reference]
    if est.empty:
        raise SchemaError(f"the result holds only the reference label set {reference!r}: nothing to compare")
    by = [c for c in as_result(est).columns if c not in ("measure", "value", system, "query_id")]
    return est, ref, by


def check_overlap(est: pd.DataFrame, ref: pd.DataFrame, reference: str, system: str) -> None:
    """Every label set must share at least two systems with the reference: name the sets that
    do not (a correlation of one system, or of none, says nothing)."""
    ref_systems = set(ref[system].astype(str).unique())
    names = est[system].astype(str)
    shared = names[names.isin(ref_systems)].groupby(est[LABEL_SET], observed=True).nunique()
    shared = shared.reindex(est[LABEL_SET].unique(), fill_value=0)
    lacking = shared[shared < 2]
    if len(lacking):
        shown = ", ".join(f"{name!r} ({int(n)} shared)" for name, n in lacking.items())
        raise SchemaError(
            f"compare_leaderboards(): the label set(s) {shown} share fewer than two systems ({system!r}) with the "
            f"reference {reference!r}, which has {sorted(ref_systems)[:5]}: evaluate the same runs under every label set"
        )


@contract(result=Frame("result", allowed=("label_set",)), reference=Text("a label set name"),
          methods=ListOf(METHOD, unique=True), k=ListOf(Integer(1), unique=True),
          system=Text("a column name"),
          missing=Choice(*MISSING_POLICIES, renamed={"raise": "error", "default": "fill"}), fill_value=Real())
def compare_leaderboards(
    result: pd.DataFrame,
    reference: str,
    *,
    methods: Union[str, Sequence[str]] = ("tau_b", "tau_ap"),
    k: Union[int, Sequence[int]] = (5, 10),
    system: str = "run",
    missing: Literal["warn", "error", "skip", "fill"] = "warn",
    fill_value: float = 0.0,
) -> pd.DataFrame:
    """Compare the system ranking under every label set with the ranking under ``reference``.

    ``result`` is a result frame with a ``label_set`` column (:func:`leaderboards`). For each
    measure and label set the per-system means (:func:`pdeval.summarize`) are compared with
    the reference label set's by :func:`pdeval.rank_correlation` (``methods``: ``tau_b``,
    ``tau_ap`` with the reference as the true ranking, ``tau_ap_b``, ``tau_gap``, ...,
    ``"tau_b@10"`` on the reference's 10 best systems) and by top-k overlap:

    ``top@k = |top_k(set) & top_k(reference)| / k``

    where ``top_k`` holds the k systems with the highest means, ties at the k-th place broken by
    the system name. Systems under one of the two only follow ``missing`` (as in
    :func:`pdeval.rank_correlation`; the overlap uses the systems under both).

    Parameters
    ----------
    result : DataFrame
        A result frame with a ``label_set`` column.
    reference : str
        The label set whose ranking is the reference.
    methods : str or list of str, default ('tau_b', 'tau_ap')
        Coefficients of :func:`pdeval.rank_correlation` (a string or a list; ``name@k`` for
        the reference's k best systems).
    k : int or list of int, default (5, 10)
        The cutoff(s) of the top-k overlap.
    system : str, default 'run'
        The column naming the systems.
    missing : {'warn', 'error', 'skip', 'fill'}, default 'warn'
        A system under one of the two only: warn and leave out, raise, leave out, or fill.
    fill_value : float, default 0.0
        With ``missing="fill"``, the label set's value of a system it lacks.

    Returns
    -------
    pandas.DataFrame
        A tidy frame ``measure, label_set, method, value, n_runs`` (methods ``tau_b``,
        ``tau_ap``, ..., ``top@5``, ``top@10``).

    Raises
    ------
    PdevalError
        A cutoff that is not a positive integer.
    SchemaError
        No ``label_set`` column, an unknown reference, or nothing but the reference.

    See Also
    --------
    leaderboards : The result frame compared.
    rank_correlation : The coefficients.
    compare_judges : With intervals and paired comparisons.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> llm = qrels.assign(relevance=[1, 0, 0, 1, 1])
    >>> boards = pdeval.leaderboards(run, {"human": qrels, "llm": llm}, "P@2")
    >>> pdeval.compare_leaderboards(boards, "human", k=1).round(3)
      measure label_set  method  value  n_runs
    0     P@2       llm   tau_b   0.00       3
    1     P@2       llm  tau_ap  -0.25       3
    2     P@2       llm   top@1   0.00       3
    """
    est, ref, by = split_reference(result, reference, system)
    ks = list(k)
    check_overlap(est, ref, reference, system)
    correlations = rank_correlation(est, ref, methods=methods, by=by, system=system, missing=missing,
                                    fill_value=fill_value)
    correlations = correlations.drop(columns="reference")
    est_ranks = _ranked_means(est, system, by)
    ref_ranks = _ranked_means(ref, system, [b for b in by if b != LABEL_SET])
    common = est_ranks.merge(ref_ranks[[system, "measure", "rank"]], on=[system, "measure"], suffixes=("", "_reference"))
    parts = []
    for cutoff in ks:  # a few cutoffs, each a vectorised group count
        # ranks are recomputed on the common systems so that both top-k sets are drawn from them
        both = common.assign(
            rank=common.groupby(["measure", *by], observed=True)["rank"].rank(method="first"),
            rank_reference=common.groupby(["measure", *by], observed=True)["rank_reference"].rank(method="first"),
        )
        hit = (both["rank"] <= cutoff) & (both["rank_reference"] <= cutoff)
        top = both.assign(_hit=hit).groupby(["measure", *by], sort=True, observed=True).agg(
            value=("_hit", "sum"), n_runs=(system, "size")
        ).reset_index()
        top["value"] = top["value"] / np.minimum(cutoff, top["n_runs"])
        parts.append(top.assign(method=f"top@{cutoff}"))
    columns = ["measure", *by, "method", "value", "n_runs"]
    out = pd.concat([correlations[columns], *[p[columns] for p in parts]], ignore_index=True)
    out["n_runs"] = out["n_runs"].astype(np.int64)
    return out


@contract(result=Frame("result", allowed=("label_set",)), reference=Text("a label set name"), system=Text("a column name"))
def leaderboard_changes(result: pd.DataFrame, reference: str, *, system: str = "run") -> pd.DataFrame:
    """How far each system moves between the reference leaderboard and each other label set's.

    Ranks are 1 for the highest mean, ties broken by system name (as in
    :func:`compare_leaderboards`), over the systems present under both.

    Parameters
    ----------
    result : DataFrame
        A result frame with a ``label_set`` column.
    reference : str
        The label set whose leaderboard is the reference.
    system : str, default 'run'
        The column naming the systems.

    Returns
    -------
    pandas.DataFrame
        A tidy frame ``measure, label_set, run, value, value_reference, rank, rank_reference,
        change`` (``change = rank_reference - rank``: positive when the system climbs), sorted
        by the largest absolute change first within each (measure, label set).

    Raises
    ------
    SchemaError
        No ``label_set`` column, an unknown reference, or nothing but the reference.

    See Also
    --------
    leaderboards : The result frame compared.
    compare_leaderboards : One number per label set.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> llm = qrels.assign(relevance=[1, 0, 0, 1, 1])
    >>> boards = pdeval.leaderboards(run, {"human": qrels, "llm": llm}, "P@2")
    >>> pdeval.leaderboard_changes(boards, "human")
      measure label_set run  value  value_reference  rank  rank_reference  change
    0     P@2       llm   a    0.5              1.0     2               1      -1
    1     P@2       llm   b    1.0              0.5     1               2       1
    2     P@2       llm   c    0.0              0.5     3               3       0
    """
    est, ref, by = split_reference(result, reference, system)
    est_ranks = _ranked_means(est, system, by)
    ref_ranks = _ranked_means(ref, system, [b for b in by if b != LABEL_SET])
    both = est_ranks.merge(
        ref_ranks[[system, "measure", "value", "rank"]], on=[system, "measure"], suffixes=("", "_reference")
    )
    group = both.groupby(["measure", *by], observed=True)
    both["rank"] = group["rank"].rank(method="first").astype(np.int64)
    both["rank_reference"] = group["rank_reference"].rank(method="first").astype(np.int64)
    both["change"] = both["rank_reference"] - both["rank"]
    both = both.assign(_size=-both["change"].abs()).sort_values(["measure", *by, "_size", system], kind="stable")
    return both[["measure", *by, system, "value", "value_reference", "rank", "rank_reference", "change"]].reset_index(drop=True)


