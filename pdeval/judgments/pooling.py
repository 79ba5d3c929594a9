"""Pools and what is measured on them: depth-k pools, mixed pools, run exclusion, judged
shares and pool bias.

Every function here takes plain frames and returns plain frames (MEASURES.md Part II):

* :func:`pool` and :func:`mixed_pool` — depth-k pools of a set of runs and the qrels derived
  from them, and depth-k plus random judgments (Yilmaz & Aslam 2008; E5, E6).
* :func:`exclude_runs` — the run exclusion rules of Buckley & Voorhees 2004 and Ahlgren &
  Grönqvist 2008 (E7).
* :func:`judged` — the share of judged documents in the top k (Ahlgren & Grönqvist 2008,
  Table 2; trec_eval's ``judged@k``).
* :func:`leave_out_pooling` — leave-one-group-out pool bias (Zobel 1998; Buckley, Dimmick,
  Soboroff & Voorhees 2007).

Derived qrels are built with the machinery of :mod:`pdeval.judgments.reduction` (the same rows, the same
``-1`` or absent reading of a removed judgment) and mixed pools draw as reductions do
(:mod:`pdeval.judgments.draws`).
"""

from __future__ import annotations

import numbers
import warnings
from fractions import Fraction
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.seeds import Seed, base_seed
from pdeval.judgments.draws import random_keys, ranks_by_key
from pdeval.errors import PdevalError, PdevalWarning
from pdeval.engine.options import EngineOptions
from pdeval.evaluation.core import evaluate_frames
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.judgments.reduction import (
    DESIGN_COLUMNS, PreparedQrels, RemovedAs, assemble_variants, emit_rows, plain_qrels,
)
from pdeval.common.options import check_choice, check_int, is_int
from pdeval.common.progress import check_progress, progress_bar
from pdeval.engine.ranking import ScorePrecision, rank_run

__all__ = ["DEPTH_GRIDS", "pool", "mixed_pool", "exclude_runs", "judged", "leave_out_pooling"]

#: Named grids of pool depths (Yilmaz & Aslam 2008): the depths of their mixed pools
#: (Section 4.5.3, Fig. 22) and of their shallow-pool scatter plots (depth 30, 8, 4 ≈ 30%,
#: 10% and 5% of the TREC 8 judgments).
DEPTH_GRIDS: dict[str, tuple[int, ...]] = {
    "yilmaz2008_mixed": (1, 2, 3, 4, 5, 10, 20, 30, 40, 50),
    "yilmaz2008_figures": (30, 8, 4),
}


# ---------------------------------------------------------------------------------------------
# helpers shared with sampling.py


def _parse_depths(depth: Union[int, str, Iterable[int]], name: str = "depth") -> tuple[list[int], bool]:
    """Depths as a list of distinct positive ints; the flag says whether a list was given."""
    if isinstance(depth, str):
        if depth.lower() not in DEPTH_GRIDS:
            raise PdevalError(f"unknown depth grid {depth!r}; known grids: {', '.join(sorted(DEPTH_GRIDS))}")
        depth = DEPTH_GRIDS[depth.lower()]
    if is_int(depth):
        return [check_int(name, depth, 1)], False
    try:
        values = [check_int(name, d, 1) for d in depth]  # type: ignore[union-attr]
    except TypeError:
        raise PdevalError(f"{name} must be a positive integer or a list of them, not {depth!r}") from None
    if not values:
        raise PdevalError(f"{name} is empty; give at least one positive integer")
    if len(set(values)) != len(values):
        raise PdevalError(f"{name} repeats a value: {values}")
    return values, True



def check_runs(names: Iterable[str], runs: Union[str, Iterable[str]], what: str = "runs") -> list[str]:
    """The run names ``runs`` (one name or several), refused when one is not among ``names``."""
    present = set(names)
    wanted = [runs] if isinstance(runs, str) else list(runs)
    missing = [r for r in wanted if r not in present]
    if missing:
        raise PdevalError(
            f"{what} {missing[:5]} are not in the run frame; it has {len(present)} run(s), "
            f"e.g. {sorted(present)[:5]}"
        )
    return wanted


def check_pooled(names: Iterable[str], pooled: Optional[Iterable[str]]) -> list[str]:
    """The runs that built the pool, sorted (``pooled``; default every run of ``names``), refused
    when unknown or empty."""
    names = list(names)
    chosen = names if pooled is None else check_runs(names, pooled, "pooled runs")
    if not chosen:
        raise PdevalError("pooled is empty: name the runs that built the pool")
    return sorted(set(chosen))


def select_runs(run: pd.DataFrame, pooled: Optional[Iterable[str]]) -> pd.DataFrame:
    """The rows of the runs that build the pool (``pooled``; default every run)."""
    if pooled is None:
        return run
    return run.loc[run["run"].isin(check_runs(run["run"].unique(), pooled, "pooled runs"))]


def row_positions(
    keys: pd.DataFrame, query_id: pd.Series, doc_id: pd.Series
) -> np.ndarray:
    """Row position in ``keys`` of every (query_id, doc_id) pair, -1 when absent."""
    index = pd.MultiIndex.from_arrays([keys["query_id"].to_numpy(), keys["doc_id"].to_numpy()])
    wanted = pd.MultiIndex.from_arrays([query_id.to_numpy(), doc_id.to_numpy()])
    return index.get_indexer(wanted)



# ---------------------------------------------------------------------------------------------
# pools


def best_ranks(
    run: pd.DataFrame,
    pool_depth: int,
    pooled: Optional[Iterable[str]],
    score_precision: ScorePrecision,
) -> pd.DataFrame:
    """``query_id, doc_id, best_rank``: the best trec_eval rank of each document over the pooled
    runs' top ``pool_depth``."""
    r = select_runs(as_run(run), pooled)
    ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], score_precision=score_precision,
                      depth=pool_depth)
    best = (
        ranked.groupby(["query_id", "doc_id"], sort=True, observed=True)["rank"].min()
        .rename("best_rank").reset_index()
    )
    return best


def _report_unjudged_pool(best: pd.DataFrame, in_qrels: np.ndarray, depths: list[int],
                          function: str) -> dict[int, int]:
    """Count pooled documents absent from the qrels per depth; warn when there are any."""
    best_rank = best["best_rank"].to_numpy()
    counts = {k: int(((best_rank <= k) & ~in_qrels).sum()) for k in depths}
    if any(counts.values()):
        shown = ", ".join(f"depth {k}: {n}" for k, n in counts.items() if n)
        topics = best.loc[~in_qrels & (best_rank <= max(depths)), "query_id"].nunique()
        warnings.warn(
            f"{function}: pooled documents absent from the qrels ({shown}; {topics} topic(s)) stay "
            f"absent, since no judgment can be invented. See result.attrs['pooled_not_in_qrels'].",
            PdevalWarning,
            stacklevel=3,
        )
    return counts


def pool(
    run: pd.DataFrame,
    pool_depth: Union[int, str, Iterable[int]],
    *,
    pooled: Optional[Iterable[str]] = None,
    qrels: Optional[pd.DataFrame] = None,
    score_precision: ScorePrecision = "float64",
    removed_as: RemovedAs = "pooled",
) -> pd.DataFrame:
    """The depth-k pool of a set of runs, or the qrels derived from it (MEASURES.md E5).

    ``P_k(t) = ∪_{s ∈ S} {first k documents of s for t}``, with trec_eval's ranking (score
    descending, doc id descending; the run's ``rank`` column is ignored), ``k`` = ``pool_depth``.
    ``S`` = the runs named in ``pooled`` (default: every run of the frame). Yilmaz & Aslam 2008 use such shallow pools of
    a depth-100 pool (depth 30, 8 and 4 ≈ 30%, 10% and 5% of the TREC 8 judgments).

    Without ``qrels`` the result is the pool itself, ``query_id, doc_id`` (sorted). With
    ``qrels`` (the complete ``Q*``) it is the derived qrels over the same (query_id, doc_id)
    pairs as ``Q*``: an entry keeps its level if its document is in ``P_k(t)`` and becomes -1
    otherwise (``removed_as="absent"`` drops it instead); negative entries stay negative. Pooled
    documents absent from ``Q*`` stay absent — no judgment is invented — and are counted per
    depth in ``result.attrs["pooled_not_in_qrels"]`` (``{depth: count}``) with a
    :class:`PdevalWarning`.

    ``pool_depth`` is a positive int, a list of them, or a name in :data:`DEPTH_GRIDS`; a list
    adds an int column ``depth`` as the first column, a variant key for ``evaluate``.

    Parameters
    ----------
    run : DataFrame
        Run frame of the runs that build the pool.
    pool_depth : int, str or list of int
        The pool depth(s), or a name in :data:`DEPTH_GRIDS`.
    pooled : list of str, optional
        The runs that build the pool (default: all).
    qrels : DataFrame, optional
        The complete qrels ``Q*``: the result is then the qrels derived from the pool (above).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.
    removed_as : {'pooled', 'absent'}, default 'pooled'
        How an entry of ``Q*`` outside the pool appears: -1, or dropped.

    Returns
    -------
    DataFrame
        A qrels frame (with a ``depth`` column when several depths are given).
    """
    check_choice("removed_as", removed_as, ("pooled", "absent"))
    depths, as_list = _parse_depths(pool_depth, "pool_depth")
    best = best_ranks(run, max(depths), pooled, score_precision)
    best_rank = best["best_rank"].to_numpy()
    if qrels is None:
        pieces = []
        for k in depths:
            rows = np.flatnonzero(best_rank <= k)
            piece = best.iloc[rows][["query_id", "doc_id"]]
            if as_list:
                piece.insert(0, "depth", np.int64(k))
            pieces.append(piece)
        return pd.concat(pieces, ignore_index=True)

    q = plain_qrels(qrels, "pool")
    in_qrels = row_positions(q, best["query_id"], best["doc_id"]) >= 0
    counts = _report_unjudged_pool(best, in_qrels, depths, "pool")
    position = row_positions(best, q["query_id"], q["doc_id"])
    rank_of_entry = np.where(position >= 0, best_rank[np.maximum(position, 0)], np.iinfo(np.int64).max)
    relevance = q["relevance"].to_numpy(dtype=np.int64)
    negative = relevance < 0
    parts = []
    for k in depths:
        pooled = rank_of_entry <= k
        if removed_as == "pooled":
            rows = np.arange(len(q))
            values = np.where(pooled | negative, relevance, -1)
        else:
            rows = np.flatnonzero(pooled | negative)
            values = relevance[rows]
        parts.append((k, 0, rows, values))
    result = assemble_variants(q, parts, "depth", np.dtype(np.int64)).drop(columns="sample")
    if not as_list:
        result = result.drop(columns="depth")
    result.attrs["pooled_not_in_qrels"] = counts
    return result


def mixed_pool(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    pool_depths: Union[int, str, Iterable[int]] = DEPTH_GRIDS["yilmaz2008_mixed"],
    *,
    samples: int = 1,
    seed: Seed = 0,
    pooled: Optional[Iterable[str]] = None,
    score_precision: ScorePrecision = "float64",
    removed_as: RemovedAs = "pooled",
    progress: Optional[bool] = None,
) -> pd.DataFrame:
    """Depth-k pool plus as many random judgments from outside it (Yilmaz & Aslam 2008, E6).

    For each depth k of ``pool_depths`` and topic t: ``P_k(t)`` as in :func:`pool`, ``m_t = |P_k(t) ∩ J_t|``
    (judged documents of ``Q*`` in the pool) and a uniform random sample of
    ``min(m_t, |J_t \\ P_k(t)|)`` documents of ``J_t \\ P_k(t)`` (judged documents of the
    complete pool outside the depth-k pool). The union keeps its judgments; every other judged
    document becomes -1 (or is dropped with ``removed_as="absent"``); negative entries stay.

    Returns ``depth, sample, query_id, doc_id, relevance``. Draw ``s`` uses
    ``np.random.default_rng([seed, s])``: one uniform key per judged document (topics in sorted
    order), and depth k takes the outside documents with the smallest keys, so a depth's sample
    does not depend on which other depths are requested. Pooled documents absent from ``Q*`` are
    reported as in :func:`pool`.

    Parameters
    ----------
    run : DataFrame
        Run frame of the runs that build the pools.
    qrels : DataFrame
        The full qrels ``Q*``.
    pool_depths : int, str or list of int
        The pool depths (or a name in :data:`DEPTH_GRIDS`).
    samples : int, default 1
        Random samples per depth.
    seed : int, Generator or None, default 0
        Seeds the samples.
    pooled : list of str, optional
        The runs that build the pools (default: all).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.
    removed_as : {'pooled', 'absent'}, default 'pooled'
        How an entry of ``Q*`` outside a variant appears in it: -1, or dropped.
    progress : bool, optional
        A progress bar (None: only for long work on a terminal or in a notebook).

    Returns
    -------
    DataFrame
        Qrels variants keyed by ``depth`` and ``sample``.
    """
    check_choice("removed_as", removed_as, ("pooled", "absent"))
    depth_list, _ = _parse_depths(pool_depths, "pool_depths")
    samples = check_int("samples", samples, 1)
    check_progress(progress)
    base = base_seed(seed)
    best = best_ranks(run, max(depth_list), pooled, score_precision)
    prepared = PreparedQrels(plain_qrels(qrels, "mixed_pool"), 1)
    q = prepared.q
    in_qrels = row_positions(q, best["query_id"], best["doc_id"]) >= 0
    counts = _report_unjudged_pool(best, in_qrels, depth_list, "mixed_pool")
    position = row_positions(best, q["query_id"], q["doc_id"])
    best_rank = best["best_rank"].to_numpy()
    rank_of_entry = np.where(position >= 0, best_rank[np.maximum(position, 0)], np.iinfo(np.int64).max)

    judged = prepared.judged_rows
    topic = prepared.topic[judged]
    judged_rank = rank_of_entry[judged]
    bits = prepared.key_bits
    parts = []
    for s in progress_bar(range(samples), enabled=progress, total=samples, desc="mixed_pool"):
        keys = random_keys(np.random.default_rng([base, s]), len(judged), bits)
        for k in depth_list:
            inside = judged_rank <= k
            m = np.bincount(topic[inside], minlength=prepared.n_topics)
            # rank the outside documents by key within their topic; group inside ones apart
            group = topic * 2 + inside
            rank = ranks_by_key(group, keys, bits)
            keep = inside | (rank < m[topic])
            rows, relevance = emit_rows(prepared, keep, removed_as)
            parts.append((k, s, rows, relevance))
    result = assemble_variants(q, parts, "depth", np.dtype(np.int64))
    result.attrs["pooled_not_in_qrels"] = counts
    return result


# ---------------------------------------------------------------------------------------------
# run exclusion and judged shares


def exclude_runs(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    max_docs: int = 1000,
    min_share: float = 0.95,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Apply the run exclusion rules of Buckley & Voorhees 2004 / Ahlgren & Grönqvist 2008 (E7).

    With ``T`` the qrels topics, ``M = max_docs`` and ``ret_s(t) = min(M, documents of s for
    t)``, a run is excluded if

    1. ``Σ_{t ∈ T} ret_s(t) < min_share · |T| · M`` (rule ``"too_few_documents"``; strict, so
       with 50 topics 47,500 documents are kept and 47,499 excluded), or
    2. ``ret_s(t) = 0`` for some ``t ∈ T`` (rule ``"empty_topic"``).

    Run rows for topics outside ``T`` are ignored by both rules (and kept in the output). The
    comparison is exact (``min_share`` is read as the decimal written).

    Returns ``(kept, excluded)``: the canonical run frame restricted to the kept runs, and a
    frame ``run, rule, detail`` with one row per rule an excluded run broke.

    Parameters
    ----------
    run : DataFrame
        Run frame of one or more runs.
    qrels : DataFrame
        The qrels the runs are judged against.
    max_docs : int, default 1000
        ``M``: the documents of a run per topic that count (rule 1).
    min_share : float, default 0.95
        The share of ``|T| · M`` a run must retrieve in all (rule 1).

    Returns
    -------
    tuple of DataFrame
        ``(kept, excluded)`` as described above.
    """
    max_docs = check_int("max_docs", max_docs, 1)
    if isinstance(min_share, bool) or not isinstance(min_share, numbers.Real) or not 0 <= min_share <= 1:
        raise PdevalError(f"min_share must be a number in [0, 1], not {min_share!r}")
    share = Fraction(repr(float(min_share))) if not is_int(min_share) else Fraction(int(min_share))
    r = as_run(run)
    topics = pd.Index(pd.unique(as_qrels(qrels)["query_id"])).sort_values()
    if len(topics) == 0:
        raise PdevalError("the qrels hold no topic; the exclusion rules need the qrels topics")
    run_codes, run_names = pd.factorize(r["run"], sort=True)
    topic_codes = topics.get_indexer(r["query_id"])
    inside = topic_codes >= 0
    n_runs, n_topics = len(run_names), len(topics)
    counts = np.bincount(run_codes[inside] * n_topics + topic_codes[inside],
                         minlength=n_runs * n_topics).reshape(n_runs, n_topics)
    ret = np.minimum(counts, max_docs)
    total = ret.sum(axis=1)
    # total < share * |T| * M, in integers
    too_few = total * share.denominator < share.numerator * n_topics * max_docs
    empty = (ret == 0).any(axis=1)
    threshold = share * n_topics * max_docs
    threshold_text = str(threshold.numerator) if threshold.denominator == 1 else f"{float(threshold):g}"
    records = []
    for i in np.flatnonzero(too_few | empty):
        if too_few[i]:
            records.append((run_names[i], "too_few_documents",
                            f"{int(total[i])} documents over {n_topics} topics (at most {max_docs} "
                            f"counted per topic) < {min_share} x {n_topics} x {max_docs} = {threshold_text}"))
        if empty[i]:
            missing = topics[ret[i] == 0].tolist()
            shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
            records.append((run_names[i], "empty_topic",
                            f"no documents for {len(missing)} of {n_topics} topics: {shown}"))
    excluded = pd.DataFrame(records, columns=["run", "rule", "detail"])
    excluded_names = set(excluded["run"])
    kept = r.loc[~r["run"].isin(excluded_names)].reset_index(drop=True)
    return kept, excluded


def judged(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    k: Union[int, Iterable[int]] = (1, 10, 100, 1000),
    *,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Share of judged documents in the top k, per run and topic (the measure ``Judged@k``).

    ``judged@k = |{d at ranks 1..k : d judged (relevance >= 0)}| / min(k, n)`` with n the
    number of documents the run retrieved for the topic (ir_measures' ``Judged@k``).
    Pooled-but-unjudged entries (-1) do not count as judged. Ahlgren & Grönqvist 2008
    (Table 2) report its complement, the share of unjudged documents down to a rank.

    Topics of the run absent from the qrels are ignored (MEASURES.md 0.5). Returns a tidy frame
    ``run, query_id, k, judged`` sorted by run, query_id, k.

    Parameters
    ----------
    run : DataFrame
        Run frame of one or more runs.
    qrels : DataFrame
        The qrels (any variant keys are refused).
    k : int or list of int, default (1, 10, 100, 1000)
        The depths at which the judged share is measured.
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.

    Returns
    -------
    DataFrame
        ``run, query_id, k, judged``.
    """
    ks, _ = _parse_depths(k, "k")
    names = {f"Judged@{cutoff}": cutoff for cutoff in ks}
    options = EngineOptions(score_precision=score_precision)
    result = evaluate_frames(run, plain_qrels(qrels, "judged", design="drop"), list(names), options)
    return (
        result.assign(k=result["measure"].map(names).astype(np.int64))
        .rename(columns={"value": "judged"})[["run", "query_id", "k", "judged"]]
        .sort_values(["run", "query_id", "k"], kind="stable", ignore_index=True)
    )


# ---------------------------------------------------------------------------------------------
# leave-one-group-out pooling


def run_groups(
    names: Sequence[str], group: Union[None, Mapping[str, str], Callable[[str], str]]
) -> dict[str, str]:
    """The run -> group mapping of ``group=`` (None: each run its own group; a mapping that
    must name every run; or a callable), validated."""
    if group is None:
        return {name: name for name in names}
    if callable(group) and not isinstance(group, Mapping):
        mapping = {name: group(name) for name in names}
    elif isinstance(group, Mapping):
        missing = [name for name in names if name not in group]
        if missing:
            raise PdevalError(
                f"the group mapping lacks {len(missing)} run(s): {missing[:10]}; map every run to "
                f"a group (or pass a callable such as lambda run: run.split('__')[0])"
            )
        mapping = {name: group[name] for name in names}
    else:
        raise PdevalError(f"group must be None, a mapping run -> group or a callable, not {type(group).__name__}")
    bad = [name for name, g in mapping.items() if g is None or (isinstance(g, float) and np.isnan(g))]
    if bad:
        raise PdevalError(f"runs {bad[:10]} have no group (None or NaN)")
    return {name: str(g) for name, g in mapping.items()}


def _group_codes(run_names: pd.Series, groups: Mapping[str, str], group_index: Mapping[str, int]) -> np.ndarray:
    """The group code of every row, looked up once per distinct run name."""
    codes, uniques = pd.factorize(run_names)
    lookup = np.array([group_index[groups[name]] for name in uniques], dtype=np.int64)
    return lookup[codes]


def leave_out_pooling(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    pool_depth: int = 100,
    *,
    group: Union[None, Mapping[str, str], Callable[[str], str]] = None,
    measures: Sequence[str] = ("AP", "Bpref", "infAP", "AP'"),
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

    Returns a tidy frame ``run, group, query_id, measure, value_pooled, value_left_out,
    difference`` (``difference = value_left_out - value_pooled``, usually <= 0 for AP) plus
    ``removed_judged`` and ``removed_relevant``: how many judged and relevant (``>= 1``)
    entries of ``Q*`` the topic lost for that group (Zobel's "unique relevant documents").
    With ``removed_as="absent"``, a topic whose every ``Q*`` entry came from G alone vanishes
    from ``Q_{-G}``, so ``evaluate`` skips it and ``value_left_out`` is NaN there (rare; with
    ``removed_as="pooled"`` the topic stays, with R = 0).

    Parameters
    ----------
    run : DataFrame
        The pooled runs (every run given contributes to the pool ``P``).
    qrels : DataFrame
        The full qrels ``Q*``.
    pool_depth : int, default 100
        The pool depth.
    group : mapping or callable, optional
        The group of each run (default: each run its own group).
    measures : list of str, default ("AP", "Bpref", "infAP", "AP'")
        The measures to evaluate.
    removed_as : {'absent', 'pooled'}, default 'absent'
        How the left-out documents appear in ``Q_{-G}`` (see above).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.

    Returns
    -------
    DataFrame
        ``run, group, query_id, measure, value_pooled, value_left_out, difference,
        removed_judged, removed_relevant``.
    """

    check_choice("removed_as", removed_as, ("pooled", "absent"))
    pool_depth = check_int("pool_depth", pool_depth, 1)
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
