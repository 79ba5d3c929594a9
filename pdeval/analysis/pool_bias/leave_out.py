"""The leave-one-group-out pooling experiment (Zobel 1998; Buckley, Dimmick, Soboroff &
Voorhees 2007): how a group's runs would have been scored had the group not contributed to
the pool. The pools and the derived qrels it builds on are in :mod:`pdeval.judgments.pooling`.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import contract
from pdeval.engine.options import OPTION_DOMAINS, EngineOptions
from pdeval.engine.ranking import ScorePrecision, rank_run
from pdeval.evaluation.core import MeasureLike, evaluate_frames
from pdeval.frames.canonical import as_run
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import GROUP, POOL_DEPTH, REMOVED_AS
from pdeval.judgments.pooling import row_positions, run_groups
from pdeval.judgments.reduction import DESIGN_COLUMNS, RemovedAs, plain_qrels
from pdeval.measures.domains import Measures

__all__ = ["leave_out_pooling"]


def _group_codes(run_names: pd.Series, groups: Mapping[str, str], group_index: Mapping[str, int]) -> np.ndarray:
    """The group code of every row, looked up once per distinct run name."""
    codes, uniques = pd.factorize(run_names)
    lookup = np.array([group_index[groups[name]] for name in uniques], dtype=np.int64)
    return lookup[codes]



@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    pool_depth=POOL_DEPTH,
    group=GROUP,
    measures=Measures(),
    removed_as=REMOVED_AS,
    score_precision=OPTION_DOMAINS["score_precision"],
)
def leave_out_pooling(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    pool_depth: int = 100,
    group: Union[None, Mapping[str, str], Callable[[str], str]] = None,
    measures: Union[MeasureLike, Iterable[MeasureLike]] = ("AP", "Bpref", "infAP", "AP'"),
    removed_as: RemovedAs = "absent",
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Leave-one-group-out pool bias (Zobel 1998; Buckley, Dimmick, Soboroff & Voorhees 2007).

    Zobel 1998 asked how a system that did not contribute to the pool would be scored: remove
    from the qrels the documents that only that system's runs brought into the pool, score the
    system again, and compare. Buckley et al. 2007 stress that the unit must be the *group*
    (all runs of one participant), because sibling runs share most of their unique documents:
    leaving out one run while keeping its siblings barely changes the pool and hides the bias.

    For each group G (``group``: a mapping run -> group, or a callable such as
    ``lambda run: run.split("__")[0]``; default: each run is its own group):

    * ``P(t)`` = the depth-``pool_depth`` pool of **all** runs given, ``P_{-G}(t)`` the pool of the
      runs outside G (both with trec_eval's ranking);
    * ``U_G(t) = P(t) \\ P_{-G}(t)``: documents in the pool only thanks to G;
    * the left-out qrels ``Q_{-G}`` = ``Q*`` without the entries of ``U_G`` (relevant,
      nonrelevant and -1 alike). Entries of ``Q*`` outside ``P(t)`` (judged for other reasons,
      e.g. manual or unsubmitted runs) and in ``P_{-G}(t)`` are kept unchanged.

    **Why "absent" and not -1 by default.** Had G not been pooled, the documents of ``U_G``
    would never have entered the pool: they would be ABSENT (MEASURES.md 0.2), not "pooled but
    unjudged". The distinction does not matter for AP, AP', P@k or the bpref family (they treat
    -1 and absent alike), but it does for infAP, subAP and indAP: a -1 tells infAP that the
    document was in the pool and missed only by sampling, so it would estimate its relevance
    from the judged pool documents and credit G for documents that nobody else found —
    precisely the bias the experiment measures. ``removed_as="pooled"`` (-1) is available to
    study that reading.

    The runs of each group are evaluated with ``pdeval.evaluation.core.evaluate`` against ``Q*``
    and against their own ``Q_{-G}``, in two calls: the left-out qrels of all groups go into one
    frame whose topic ids are made distinct per group, so each run meets only its own group's
    qrels (per-topic measures do not look across topics, so this equals one evaluation per
    group).

    Parameters
    ----------
    run : DataFrame
        The pooled runs (every run given contributes to the pool ``P``).
    qrels : DataFrame
        The full qrels ``Q*`` (of one variant).
    pool_depth : int, default 100
        The pool depth.
    group : mapping or callable, optional
        The group of each run: a mapping run -> group that names every run, or a function
        such as ``lambda run: run.split("__")[0]`` (default: each run its own group).
    measures : str, Measure or list of them, default ("AP", "Bpref", "infAP", "AP'")
        The measures to evaluate (a lone string is one measure).
    removed_as : {'absent', 'pooled'}, default 'absent'
        How the left-out documents appear in ``Q_{-G}`` (see above).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.

    Returns
    -------
    DataFrame
        ``run, group, query_id, measure, value_pooled, value_left_out, difference,
        removed_judged, removed_relevant``: ``difference = value_left_out - value_pooled``
        (usually <= 0 for AP), and ``removed_judged`` / ``removed_relevant`` how many judged
        and relevant (``>= 1``) entries of ``Q*`` the topic lost for that group (Zobel's
        "unique relevant documents"). With ``removed_as="absent"``, a topic whose every
        ``Q*`` entry came from G alone vanishes from ``Q_{-G}``, so ``evaluate`` skips it and
        ``value_left_out`` is NaN there (rare; with ``removed_as="pooled"`` the topic stays,
        with R = 0).

    Raises
    ------
    PdevalError
        A group mapping that lacks a run, a run without a group, a parameter outside its
        domain.

    See Also
    --------
    pool : The depth-k pool and its qrels.
    leave_out_bias : The bias summarised per run, with corrections.
    pool_bias_correction : Corrected scores for runs left out of the pool.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["q1"] * 6,
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5"],
    ...                     "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1"] * 5, "doc_id": ["d1", "d2", "d3", "d4", "d5"],
    ...                       "relevance": [1, 1, 0, 1, 0]})
    >>> out = pdeval.leave_out_pooling(run, qrels, pool_depth=2, measures="P@2")
    >>> out[["run", "measure", "value_pooled", "value_left_out", "removed_relevant"]]
      run measure  value_pooled  value_left_out  removed_relevant
    0   a     P@2           1.0             0.5                 1
    1   b     P@2           1.0             0.5                 1
    """
    r = as_run(run)
    q = plain_qrels(qrels, "leave_out_pooling", design="keep")  # each kept row keeps its stratum / probability
    names = sorted(pd.unique(r["run"]).tolist())
    groups = run_groups(names, group)
    group_names = sorted(set(groups.values()))
    group_index = {g: i for i, g in enumerate(group_names)}

    ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], score_precision=score_precision, depth=pool_depth)
    ranked_group = _group_codes(ranked["run"], groups, group_index)
    # contributors of each pooled document: distinct groups per (query_id, doc_id)
    contributions = (
        pd.DataFrame({"query_id": ranked["query_id"].to_numpy(), "doc_id": ranked["doc_id"].to_numpy(),
                      "g": ranked_group})
        .drop_duplicates()
    )
    n_groups_of = contributions.groupby(["query_id", "doc_id"], sort=False, observed=True)["g"].transform("size")
    unique = contributions.loc[n_groups_of.to_numpy() == 1]
    # owner group of each qrels entry that only one group pooled (-1: none)
    position = row_positions(unique, q["query_id"], q["doc_id"])
    owner = np.where(position >= 0, unique["g"].to_numpy()[np.maximum(position, 0)], -1)
    relevance = q["relevance"].to_numpy(dtype=np.int64)

    # stack the left-out qrels of every group, topic ids made distinct per group
    n_groups = len(group_names)
    n = len(q)
    rows = np.tile(np.arange(n), n_groups)
    g_of_row = np.repeat(np.arange(n_groups), n)
    removed = owner[rows] == g_of_row
    values = relevance[rows].copy()
    if removed_as == "pooled":
        values[removed] = -1
    else:
        rows, g_of_row, values = rows[~removed], g_of_row[~removed], values[~removed]
    sep = "\x1f"
    qid = q["query_id"].to_numpy().astype(str)
    prefixes = np.array([f"{i}{sep}" for i in range(n_groups)], dtype=object)
    stacked_qrels = pd.DataFrame(
        {
            "query_id": prefixes[g_of_row] + qid[rows].astype(object),
            "doc_id": q["doc_id"].to_numpy()[rows],
            "relevance": values,
            **{column: q[column].to_numpy()[rows] for column in DESIGN_COLUMNS if column in q.columns},
        }
    )
    run_group = _group_codes(r["run"], groups, group_index)
    stacked_run = r[["run", "query_id", "doc_id", "score"]].assign(
        query_id=prefixes[run_group] + r["query_id"].to_numpy().astype(str).astype(object)
    )

    options = EngineOptions(score_precision=score_precision)
    full = evaluate_frames(r[["run", "query_id", "doc_id", "score"]], q, list(measures), options)
    # each run meets only its own group's copy of the topics: no overlap to report
    left = evaluate_frames(stacked_run, stacked_qrels, list(measures), options, coverage=False)
    full = full[["run", "query_id", "measure", "value"]].rename(columns={"value": "value_pooled"})
    split = left["query_id"].astype(str).str.split(sep, n=1, regex=False)
    left = pd.DataFrame(
        {
            "run": left["run"].to_numpy(),
            "query_id": split.str[1].to_numpy(),
            "measure": left["measure"].to_numpy(),
            "value_left_out": left["value"].to_numpy(dtype=np.float64),
        }
    )
    out = full.merge(left, on=["run", "query_id", "measure"], how="outer", validate="one_to_one")
    out.insert(1, "group", out["run"].map(groups))
    out["difference"] = out["value_left_out"] - out["value_pooled"]

    # what each (group, topic) lost
    removed_rows = np.flatnonzero(owner >= 0)
    lost = pd.DataFrame(
        {
            "group": np.array(group_names, dtype=object)[owner[removed_rows]],
            "query_id": q["query_id"].to_numpy()[removed_rows],
            "removed_judged": (relevance[removed_rows] >= 0).astype(np.int64),
            "removed_relevant": (relevance[removed_rows] >= 1).astype(np.int64),
        }
    ).groupby(["group", "query_id"], as_index=False, sort=True).sum()
    out = out.merge(lost, on=["group", "query_id"], how="left")
    out[["removed_judged", "removed_relevant"]] = out[["removed_judged", "removed_relevant"]].fillna(0).astype(np.int64)
    return out.sort_values(["run", "query_id", "measure"], kind="stable", ignore_index=True)
