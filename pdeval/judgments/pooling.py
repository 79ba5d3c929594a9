"""Pools: depth-k pools and mixed pools, and the helpers the pool-based experiments share
(which runs built a pool, the best rank of a pooled document, the run groups).

Every function here takes plain frames and returns plain frames (MEASURES.md Part II):

* :func:`pool` and :func:`mixed_pool` — depth-k pools of a set of runs and the qrels derived
  from them, and depth-k plus random judgments (Yilmaz & Aslam 2008; E5, E6).
* :func:`run_groups` — the run -> group mapping of the leave-one-group-out experiments
  (:func:`pdeval.analysis.pool_bias.leave_out.leave_out_pooling` and the pool-bias analyses).

Derived qrels are built with the machinery of :mod:`pdeval.judgments.reduction` (the same rows, the same
``-1`` or absent reading of a removed judgment) and mixed pools draw as reductions do
(:mod:`pdeval.judgments.draws`).
"""

from __future__ import annotations

import warnings
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.seeds import Seed, base_seed
from pdeval.judgments.draws import random_keys, ranks_by_key
from pdeval.errors import PdevalError, PdevalWarning
from pdeval.frames.canonical import as_run
from pdeval.judgments.reduction import (
    PreparedQrels, RemovedAs, assemble_variants, emit_rows, plain_qrels,
)
from pdeval.common.contract import Choice, Integer, Nullable, contract
from pdeval.common.progress import progress_bar
from pdeval.engine.options import OPTION_DOMAINS
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import POOL_DEPTH, POOL_DEPTHS, POOLED, PROGRESS, REMOVED_AS, SEED
from pdeval.engine.ranking import ScorePrecision, rank_run

__all__ = ["DEPTH_GRIDS", "pool", "mixed_pool", "run_groups"]

#: Named grids of pool depths (Yilmaz & Aslam 2008): the depths of their mixed pools
#: (Section 4.5.3, Fig. 22) and of their shallow-pool scatter plots (depth 30, 8, 4 ≈ 30%,
#: 10% and 5% of the TREC 8 judgments).
DEPTH_GRIDS: dict[str, tuple[int, ...]] = {
    "yilmaz2008_mixed": (1, 2, 3, 4, 5, 10, 20, 30, 40, 50),
    "yilmaz2008_figures": (30, 8, 4),
}


# ---------------------------------------------------------------------------------------------
# helpers shared with sampling.py


def _depth_list(depths: Union[str, list]) -> list[int]:
    """Pool depths the contract checked (a list of distinct positive integers), or the depths
    of a grid named in :data:`DEPTH_GRIDS`."""
    return list(DEPTH_GRIDS[depths]) if isinstance(depths, str) else depths


#: ``pool_depths=``: distinct pool depths, or the name of a grid in :data:`DEPTH_GRIDS`
GRID = Choice(*DEPTH_GRIDS) | POOL_DEPTHS


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
            stacklevel=4,  # the caller of pool or mixed_pool (through the contract's wrapper)
        )
    return counts


@contract(
    run=Frame("run"),
    pool_depth=Nullable(POOL_DEPTH),
    pool_depths=Nullable(GRID),
    pooled=POOLED,
    qrels=Nullable(Frame("qrels", variants=False)),
    score_precision=OPTION_DOMAINS["score_precision"],
    removed_as=REMOVED_AS,
    remedies={
        "pool_depth": "one pool depth; for a grid of depths give pool_depths=[...]",
        "pool_depths": f"distinct positive integers, or a grid name: {', '.join(DEPTH_GRIDS)}",
    },
)
def pool(
    run: pd.DataFrame,
    *,
    pool_depth: Optional[int] = None,
    pool_depths: Union[None, str, Iterable[int]] = None,
    pooled: Optional[Iterable[str]] = None,
    qrels: Optional[pd.DataFrame] = None,
    score_precision: ScorePrecision = "float64",
    removed_as: RemovedAs = "pooled",
) -> pd.DataFrame:
    """The depth-k pool of a set of runs, or the qrels derived from it (MEASURES.md E5).

    ``P_k(t) = ∪_{s ∈ S} {first k documents of s for t}``, with trec_eval's ranking (score
    descending, doc id descending; the run's ``rank`` column is ignored), ``k`` the pool depth
    and ``S`` the runs named in ``pooled`` (default: every run of the frame). Yilmaz & Aslam
    2008 use such shallow pools of a depth-100 pool (depth 30, 8 and 4 ≈ 30%, 10% and 5% of
    the TREC 8 judgments).

    Without ``qrels`` the result is the pool itself, ``query_id, doc_id`` (sorted). With
    ``qrels`` (the complete ``Q*``) it is the derived qrels over the same (query_id, doc_id)
    pairs as ``Q*``: an entry keeps its level if its document is in ``P_k(t)`` and becomes -1
    otherwise (``removed_as="absent"`` drops it instead); negative entries stay negative. Pooled
    documents absent from ``Q*`` stay absent — no judgment is invented — and are counted per
    depth in ``result.attrs["pooled_not_in_qrels"]`` (``{depth: count}``) with a
    :class:`~pdeval.errors.PdevalWarning`.

    Parameters
    ----------
    run : DataFrame
        Run frame of the runs that build the pool.
    pool_depth : int, optional
        One pool depth ``k`` (give ``pool_depth`` or ``pool_depths``).
    pool_depths : str or list of int, optional
        A grid of pool depths, or the name of one in :data:`DEPTH_GRIDS`: the result gains an
        int column ``depth`` as its first column, a variant key of :func:`pdeval.evaluate`.
    pooled : list of str, optional
        The runs that build the pool (default: every run).
    qrels : DataFrame, optional
        The complete qrels ``Q*``: the result is then the qrels derived from the pool (above).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.
    removed_as : {'pooled', 'absent'}, default 'pooled'
        How an entry of ``Q*`` outside the pool appears: -1, or dropped.

    Returns
    -------
    DataFrame
        The pool ``[depth,] query_id, doc_id``, or with ``qrels`` a qrels frame
        ``[depth,] query_id, doc_id, relevance`` (``depth`` with ``pool_depths``).

    Raises
    ------
    PdevalError
        Neither or both of ``pool_depth`` and ``pool_depths``, an unknown pooled run, a
        parameter outside its domain.

    See Also
    --------
    mixed_pool : A depth pool plus as many random judgments.
    reduce : Random reductions of a complete qrels.
    judged : The share of judged documents in the top k.
    evaluate : Evaluates every pool depth at once.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a", "a", "a", "b", "b", "b"], "query_id": ["q1"] * 6,
    ...                     "doc_id": ["d1", "d2", "d3", "d4", "d1", "d5"],
    ...                     "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    >>> pdeval.pool(run, pool_depth=1)
      query_id doc_id
    0       q1     d1
    1       q1     d4
    >>> pdeval.pool(run, pool_depths=[1, 2]).groupby("depth").size()
    depth
    1    2
    2    3
    dtype: int64
    """
    if (pool_depth is None) == (pool_depths is None):
        given = "both" if pool_depth is not None else "neither"
        raise PdevalError(
            f"pool(): {given} of pool_depth= and pool_depths= given; give one pool depth as pool_depth=10 "
            "or a grid of them as pool_depths=[5, 10, 20]"
        )
    as_list = pool_depths is not None
    depths = _depth_list(pool_depths) if as_list else [pool_depth]
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


@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    pool_depths=GRID,
    samples=Integer(1),
    seed=SEED,
    pooled=POOLED,
    score_precision=OPTION_DOMAINS["score_precision"],
    removed_as=REMOVED_AS,
    progress=PROGRESS,
    remedies={"pool_depths": f"distinct positive integers, or a grid name: {', '.join(DEPTH_GRIDS)}"},
)
def mixed_pool(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    pool_depths: Union[int, str, Iterable[int]] = "yilmaz2008_mixed",
    samples: int = 1,
    seed: Seed = 0,
    pooled: Optional[Iterable[str]] = None,
    score_precision: ScorePrecision = "float64",
    removed_as: RemovedAs = "pooled",
    progress: Optional[bool] = None,
) -> pd.DataFrame:
    """Depth-k pool plus as many random judgments from outside it (Yilmaz & Aslam 2008, E6).

    For each depth k of ``pool_depths`` and topic t: ``P_k(t)`` as in :func:`pool`,
    ``m_t = |P_k(t) ∩ J_t|`` (judged documents of ``Q*`` in the pool) and a uniform random
    sample of ``min(m_t, |J_t \\ P_k(t)|)`` documents of ``J_t \\ P_k(t)`` (judged documents of
    the complete pool outside the depth-k pool). The union keeps its judgments; every other
    judged document becomes -1 (or is dropped with ``removed_as="absent"``); negative entries
    stay.

    Draw ``s`` uses ``np.random.default_rng([seed, s])``: one uniform key per judged document
    (topics in sorted order), and depth k takes the outside documents with the smallest keys,
    so a depth's sample does not depend on which other depths are requested. Pooled documents
    absent from ``Q*`` are reported as in :func:`pool`.

    Parameters
    ----------
    run : DataFrame
        Run frame of the runs that build the pools.
    qrels : DataFrame
        The full qrels ``Q*``.
    pool_depths : int, str or list of int, default 'yilmaz2008_mixed'
        The pool depths, or the name of a grid in :data:`DEPTH_GRIDS` (the default is Yilmaz &
        Aslam's 1, 2, 3, 4, 5, 10, 20, 30, 40, 50).
    samples : int, default 1
        Random samples per depth.
    seed : int, numpy Generator or None, default 0
        Seeds the samples.
    pooled : list of str, optional
        The runs that build the pools (default: every run).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.
    removed_as : {'pooled', 'absent'}, default 'pooled'
        How an entry of ``Q*`` outside a variant appears in it: -1, or dropped.
    progress : bool, optional
        A progress bar (None: only for long work on a terminal or in a notebook).

    Returns
    -------
    DataFrame
        Qrels variants ``depth, sample, query_id, doc_id, relevance``, keyed by ``depth`` and
        ``sample``.

    Raises
    ------
    PdevalError
        An unknown pooled run, a parameter outside its domain.

    See Also
    --------
    pool : The depth-k pool alone.
    reduce : Random reductions of a complete qrels.

    Examples
    --------
    >>> docs = ["d1", "d2", "d3", "d4", "d5"]
    >>> run = pd.concat([pd.DataFrame({"run": name, "query_id": "q1", "doc_id": ranking, "score": [3.0, 2, 1]})
    ...                  for name, ranking in [("a", docs[:3]), ("b", ["d4", "d1", "d5"])]])
    >>> qrels = pd.DataFrame({"query_id": "q1", "doc_id": docs, "relevance": [1, 0, 1, 0, 1]})
    >>> mixed = pdeval.mixed_pool(run, qrels, pool_depths=[1], samples=2)
    >>> (mixed["relevance"] >= 0).groupby(mixed["sample"]).sum()  # 2 pooled + 2 drawn
    sample
    0    4
    1    4
    Name: relevance, dtype: int64
    """
    depth_list = _depth_list(pool_depths)
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
