"""Adjudication strategies as judging orders: which document a strategy would judge next.

:func:`judging_order` simulates, for a set of runs and the complete qrels, the order in which
each strategy would send documents to the assessors; :func:`budget_qrels` turns the orders into
qrels variants with a ``budget`` key (and the ``strategy`` key), so that every strategy and
budget evaluates in one :func:`pdeval.evaluate` pass.

Static strategies order the documents once (a sort); sequential ones judge one document per
topic per step, **all topics in lockstep** (one array operation per step over all topics), and
read the label of each judged document from the qrels (simulation): a document the qrels do not
hold (or holds as -1) is unjudged, counted as non-relevant by the adaptive strategies and left
out of the qrels that :func:`budget_qrels` builds.

Strategies (``strategies=``):

* ``"depth"`` — depth-k pooling as a judging order: round robin by rank (every run's rank-1
  document in run order, then rank 2, ...); the first ``k·|runs|`` distinct documents are the
  depth-k pool.
* ``"take"`` — take@N (Lipani, Losada, Zuccon & Lupu, TKDE 2019): documents by best rank over
  the runs; ties by the number of runs that retrieved the document (more first), then doc id.
* ``"borda"``, ``"rrf"``, ``"combsum"`` — fusion-based pooling: documents by their Borda
  count (``Σ_s (L_s - r_s(d) + 1)``; Aslam & Montague 2001), reciprocal rank fusion
  (``Σ_s 1/(k + r_s(d))``, k = 60; Cormack, Clarke & Büttcher 2009) or CombSUM of the min-max
  normalised scores (Fox & Shaw 1994); ties (sums equal to 12 decimals) by doc id.
* ``"rbp"`` — RBP-based pooling (Moffat, Webber & Zobel, SIGIR 2007, method A): documents by
  their summed RBP weight ``Σ_s (1-p) p^(r_s(d)-1)`` (p = 0.8); ties (equal to 12 decimals: two
  documents at ranks {1, 3, 4} and {4, 1, 3} of three runs) by doc id. Their adaptive
  methods B and C are not implemented.
* ``"mtf"`` — move-to-front (Cormack, Palmer & Clarke, SIGIR 1998): every run starts with the
  same priority; the run of highest priority (lowest run index among equals) gives its best
  unjudged document; a non-relevant one lowers the run's priority by one, a relevant one keeps
  the run in front.
* ``"hedge"`` — Hedge (Aslam, Pavlu & Savell, SIGIR 2003): run weights ``w_s ∝ β^{L_s}``
  (β = 0.1, ``L_s`` the run's cumulative loss), each step judges the unjudged document of
  largest ``Σ_s w_s v_s(d)`` with the rank value ``v_s(d) = (H_N - H_{r-1}) / H_N`` (``H`` the
  harmonic numbers, ``N`` the run's length, 0 when not retrieved); the loss is ``1 - v`` for a
  relevant and ``v`` for a non-relevant document (a [0, 1] rescaling of the paper's
  ``±½(1 + H_N - H_r)``); scores equal to 12 decimals are ties, won by the first doc id.
* ``"maxmean"`` and ``"thompson"`` — multi-armed bandits (Losada, Parapar & Barreiro, SAC 2016
  and IP&M 2017): arms are runs, pulling one judges its best unjudged document; an arm's
  statistics are the labels of the judged documents at the head of its list (those it pulled
  and those other arms judged first, read when its pointer passes them). MaxMean pulls the arm
  of largest posterior mean ``(rel + 1) / (n + 2)`` (lowest run index among equals); Thompson
  sampling draws ``θ_s ~ Beta(rel + 1, n - rel + 1)`` for every (topic, run) each step from
  ``numpy.random.default_rng(seed)`` and pulls the largest.

Every strategy stops in a topic when its budget is spent or no candidate document is left. The
candidates are the documents the runs retrieve down to ``pool_depth``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import Choice, Integer, ListOf, Nullable, Real, contract
from pdeval.engine.ranking import rank_run
from pdeval.errors import PdevalError
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.common.seeds import Seed, base_seed
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import ORDER_COLUMNS, POOL_DEPTH, SEED, OrderFrame

__all__ = ["STRATEGIES", "judging_order", "budget_qrels", "split_budget"]

STATIC = ("depth", "take", "borda", "rrf", "combsum", "rbp")
#: scores equal to this many decimals are ties (float noise is no order): the fused orders and
#: Hedge here, :func:`pdeval.bias_summary`'s ranks
TIE_DECIMALS = 12
SEQUENTIAL = ("mtf", "hedge", "maxmean", "thompson")
#: every strategy :func:`judging_order` knows
STRATEGIES = STATIC + SEQUENTIAL
BudgetLike = Union[None, int, Iterable[int]]


@dataclass
class Candidates:
    """The candidate documents of every topic, as arrays with topic offsets.

    ``doc_*`` arrays are over the distinct (topic, document) pairs, grouped by topic and sorted by
    doc id; ``entry_*`` arrays over the ranked run rows (one per run, topic and rank);
    ``lists[t, s, i]`` is the document at rank ``i + 1`` of run ``s`` for topic ``t`` (-1 past
    the end).
    """

    topics: np.ndarray
    run_names: np.ndarray
    doc_topic: np.ndarray
    doc_id: np.ndarray
    doc_start: np.ndarray
    label: np.ndarray
    entry_topic: np.ndarray
    entry_run: np.ndarray
    entry_doc: np.ndarray
    entry_rank: np.ndarray
    entry_score: np.ndarray
    entry_length: np.ndarray
    lists: np.ndarray

    @property
    def n_topics(self) -> int:
        return len(self.topics)

    @property
    def n_runs(self) -> int:
        return len(self.run_names)


def candidates(run: pd.DataFrame, qrels: pd.DataFrame, pool_depth: int) -> Candidates:
    """Rank the runs (trec_eval order, cut at ``pool_depth``) and index their documents per topic."""
    r = as_run(run)
    q = as_qrels(qrels)
    q_topics = pd.unique(q["query_id"])
    r_topics = set(pd.unique(r["query_id"]))
    missing = sorted(t for t in q_topics if t not in r_topics)
    if missing:
        raise PdevalError(
            f"the runs hold no document for {len(missing)} of the {len(q_topics)} qrels topic(s) "
            f"(e.g. {missing[:5]}); a judging order needs candidates in every topic: give runs for "
            "them or drop those topics from the qrels"
        )
    r = r.loc[r["query_id"].isin(set(q_topics))]
    ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], depth=pool_depth)
    topic_codes, topics = pd.factorize(ranked["query_id"], sort=True)
    run_codes, run_names = pd.factorize(ranked["run"], sort=True)
    pairs = pd.DataFrame({"t": topic_codes, "doc_id": ranked["doc_id"].to_numpy()})
    doc_codes, uniques = pd.factorize(pd.MultiIndex.from_frame(pairs), sort=True)
    doc_topic = uniques.get_level_values(0).to_numpy(dtype=np.int64)
    doc_id = uniques.get_level_values(1).to_numpy()
    doc_start = np.searchsorted(doc_topic, np.arange(len(topics) + 1))
    # labels: 1 relevant, 0 judged non-relevant, -1 not held by the qrels (unjudged)
    held = q.loc[q["relevance"] >= 0]
    lookup = pd.MultiIndex.from_arrays([held["query_id"].to_numpy(), held["doc_id"].to_numpy()])
    wanted = pd.MultiIndex.from_arrays([np.asarray(topics)[doc_topic], doc_id])
    position = lookup.get_indexer(wanted)
    rel = np.append(held["relevance"].to_numpy(dtype=np.int64), 0)
    label = np.where(position >= 0, (rel[np.maximum(position, 0)] >= 1).astype(np.int64), -1)
    rank = ranked["rank"].to_numpy(dtype=np.int64)
    n_t, n_s = len(topics), len(run_names)
    lists = np.full((n_t, n_s, int(rank.max()) if len(rank) else 0), -1, dtype=np.int64)
    lists[topic_codes, run_codes, rank - 1] = doc_codes
    length = (lists >= 0).sum(axis=2)
    return Candidates(
        topics=np.asarray(topics), run_names=np.asarray(run_names), doc_topic=doc_topic, doc_id=doc_id,
        doc_start=doc_start, label=label, entry_topic=topic_codes.astype(np.int64),
        entry_run=run_codes.astype(np.int64), entry_doc=doc_codes.astype(np.int64), entry_rank=rank,
        entry_score=ranked["score"].to_numpy(dtype=np.float64),
        entry_length=length[topic_codes, run_codes], lists=lists,
    )


def split_budget(budget: int, n_topics: int, per: str) -> np.ndarray:
    """Per-topic budgets: ``budget`` in every topic (``per="topic"``), or a total split evenly
    (``budget // n`` each, one more for the first ``budget % n`` topics in sorted order)."""
    if per == "topic":
        return np.full(n_topics, budget, dtype=np.int64)
    share = np.full(n_topics, budget // n_topics, dtype=np.int64)
    share[: budget % n_topics] += 1
    return share


# ---------------------------------------------------------------------------------------------
# static strategies: one priority per document, one sort


def _static_keys(c: Candidates, strategy: str, rrf_k: float, rbp_p: float) -> list[np.ndarray]:
    """Sort keys (ascending, most significant last, for ``np.lexsort``) of every document."""
    n = len(c.doc_id)
    if strategy == "depth":
        key = c.entry_rank * c.n_runs + c.entry_run
        first = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(first, c.entry_doc, key)
        return [first]
    if strategy == "take":
        best = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
        np.minimum.at(best, c.entry_doc, c.entry_rank)
        count = np.bincount(c.entry_doc, minlength=n)
        return [-count, best]
    if strategy == "borda":
        value = (c.entry_length - c.entry_rank + 1).astype(np.float64)
    elif strategy == "rrf":
        value = 1.0 / (rrf_k + c.entry_rank)
    elif strategy == "rbp":
        value = (1 - rbp_p) * rbp_p ** (c.entry_rank - 1.0)
    else:  # combsum: min-max normalised scores per (topic, run)
        group = c.entry_topic * c.n_runs + c.entry_run
        size = c.n_topics * c.n_runs
        low = np.full(size, np.inf)
        high = np.full(size, -np.inf)
        np.minimum.at(low, group, c.entry_score)
        np.maximum.at(high, group, c.entry_score)
        span = high[group] - low[group]
        value = np.where(span > 0, (c.entry_score - low[group]) / np.where(span > 0, span, 1.0), 1.0)
    total = np.bincount(c.entry_doc, weights=value, minlength=n)
    # sums equal to TIE_DECIMALS decimals are ties (broken by doc id): the order in which the
    # runs' weights were added (float noise) never decides
    return [-np.round(total, TIE_DECIMALS)]


def _static_order(c: Candidates, strategy: str, rrf_k: float, rbp_p: float) -> np.ndarray:
    """The documents in judging order, topics one after the other."""
    keys = _static_keys(c, strategy, rrf_k, rbp_p)
    # doc indices are sorted by doc id within topic: the index is the final tie-break
    return np.lexsort([np.arange(len(c.doc_id)), *keys, c.doc_topic])


# ---------------------------------------------------------------------------------------------
# sequential strategies: all topics advance in lockstep


class _Lockstep:
    """Shared state of a sequential strategy: judged documents and the order they got."""

    def __init__(self, c: Candidates, budgets: np.ndarray):
        self.c = c
        self.judged = np.zeros(len(c.doc_id), dtype=bool)
        self.sequence = np.zeros(len(c.doc_id), dtype=np.int64)  # 1-based order, 0 = not judged
        self.done = np.zeros(c.n_topics, dtype=np.int64)
        sizes = np.diff(c.doc_start)
        self.limit = np.minimum(budgets, sizes)

    def active(self) -> np.ndarray:
        return self.done < self.limit

    def judge(self, topics: np.ndarray, docs: np.ndarray) -> np.ndarray:
        """Judge one document in each of ``topics``; returns their labels (1 relevant, else 0)."""
        self.done[topics] += 1
        self.judged[docs] = True
        self.sequence[docs] = self.done[topics]
        return (self.c.label[docs] == 1).astype(np.int64)

    def order(self) -> np.ndarray:
        rows = np.flatnonzero(self.judged)
        return rows[np.lexsort([self.sequence[rows], self.c.doc_topic[rows]])]


def _advance(state: _Lockstep, pointer: np.ndarray, rel: Optional[np.ndarray], seen: Optional[np.ndarray]) -> np.ndarray:
    """Move every run's pointer past judged documents (recording their labels in the run's
    statistics when given); returns the head document of every (topic, run), -1 when exhausted."""
    c = state.c
    width = c.lists.shape[2]
    t_idx, s_idx = np.indices(pointer.shape)
    while True:
        head = np.where(pointer < width, c.lists[t_idx, s_idx, np.minimum(pointer, width - 1)], -1)
        passing = (head >= 0) & state.judged[np.maximum(head, 0)]
        if not passing.any():
            return head
        if rel is not None:
            seen[passing] += 1
            rel[passing] += c.label[head[passing]] == 1
        pointer[passing] += 1


def _run_based(c: Candidates, budgets: np.ndarray, strategy: str, rng: np.random.Generator) -> np.ndarray:
    """Move-to-front and the bandits: each step every active topic picks a run and judges its head."""
    state = _Lockstep(c, budgets)
    shape = (c.n_topics, c.n_runs)
    pointer = np.zeros(shape, dtype=np.int64)
    priority = np.zeros(shape, dtype=np.float64)
    rel = np.zeros(shape, dtype=np.int64)
    seen = np.zeros(shape, dtype=np.int64)
    stats = strategy != "mtf"
    all_topics = np.arange(c.n_topics)
    while True:
        head = _advance(state, pointer, rel if stats else None, seen if stats else None)
        if strategy == "maxmean":
            priority = (rel + 1.0) / (seen + 2.0)
        elif strategy == "thompson":
            priority = rng.beta(rel + 1.0, seen - rel + 1.0)
        eligible = head >= 0
        active = state.active() & eligible.any(axis=1)
        if not active.any():
            return state.order()
        choice = np.argmax(np.where(eligible, priority, -np.inf), axis=1)
        topics = all_topics[active]
        arms = choice[active]
        labels = state.judge(topics, head[topics, arms])
        if strategy == "mtf":
            priority[topics, arms] -= 1 - labels


def _harmonic(n: np.ndarray) -> np.ndarray:
    table = np.concatenate([[0.0], np.cumsum(1.0 / np.arange(1, int(n.max(initial=0)) + 1))])
    return table[n]


def _hedge(c: Candidates, budgets: np.ndarray, beta: float) -> np.ndarray:
    """Hedge: each step every active topic judges the document of largest weighted rank value."""
    state = _Lockstep(c, budgets)
    n_docs = len(c.doc_id)
    value = (_harmonic(c.entry_length) - _harmonic(c.entry_rank - 1)) / _harmonic(c.entry_length)
    weight = np.full((c.n_topics, c.n_runs), 1.0 / c.n_runs)
    starts = c.doc_start[:-1]
    while True:
        active = state.active()
        if not active.any():
            return state.order()
        score = np.bincount(c.entry_doc, weights=weight[c.entry_topic, c.entry_run] * value, minlength=n_docs)
        score = np.round(score, TIE_DECIMALS)  # equal to 12 decimals: a tie, the first doc id wins
        score[state.judged] = -np.inf
        best = np.maximum.reduceat(score, starts)
        hits = np.flatnonzero(score == best[c.doc_topic])
        topic_of_hit, first = np.unique(c.doc_topic[hits], return_index=True)
        docs = hits[first]
        keep = active[topic_of_hit]
        topics, docs = topic_of_hit[keep], docs[keep]
        labels = state.judge(topics, docs)
        # v_s(d) of the judged document of each topic, for every run (0 where not retrieved)
        v = np.zeros_like(weight)
        picked = np.full(c.n_topics, -1, dtype=np.int64)
        picked[topics] = docs
        mine = c.entry_doc == picked[c.entry_topic]
        v[c.entry_topic[mine], c.entry_run[mine]] = value[mine]
        relevant = np.zeros(c.n_topics, dtype=bool)
        relevant[topics] = labels == 1
        loss = np.where(relevant[:, None], 1.0 - v, v)
        updated = weight * beta**loss
        updated /= updated.sum(axis=1, keepdims=True)
        weight = np.where(active[:, None], updated, weight)


# ---------------------------------------------------------------------------------------------
# public functions


#: the option of one strategy each -> (its strategy, its default)
STRATEGY_OPTIONS = {"rrf_k": ("rrf", 60.0), "rbp_p": ("rbp", 0.8), "hedge_beta": ("hedge", 0.1)}


@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    strategies=ListOf(Choice(*STRATEGIES), unique=True),
    budget=Nullable(Integer(1)),
    budget_per=Choice("topic", "total"),
    pool_depth=POOL_DEPTH,
    seed=SEED,
    rrf_k=Real(0),
    rbp_p=Real(0, 1, closed="neither"),
    hedge_beta=Real(0, 1, closed="neither"),
    remedies={"rrf_k": "RRF's constant, e.g. 60", "rbp_p": "RBP's persistence, e.g. 0.8",
              "hedge_beta": "Hedge's learning rate, e.g. 0.1", "budget": "judgments per topic or in total"},
)
def judging_order(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    strategies: Union[str, Sequence[str]] = STRATEGIES,
    *,
    budget: Optional[int] = None,
    budget_per: str = "topic",
    pool_depth: int = 100,
    seed: Seed = 0,
    rrf_k: float = STRATEGY_OPTIONS["rrf_k"][1],
    rbp_p: float = STRATEGY_OPTIONS["rbp_p"][1],
    hedge_beta: float = STRATEGY_OPTIONS["hedge_beta"][1],
) -> pd.DataFrame:
    """The order in which each adjudication strategy would judge the runs' documents.

    Parameters
    ----------
    run : DataFrame
        The runs (``run, query_id, doc_id, score``); ranked in trec_eval order and cut at
        ``pool_depth``. Topics the qrels do not hold are ignored.
    qrels : DataFrame
        The complete judgments, of one variant; adaptive strategies read the label of each
        document they judge from it (relevant: ``relevance >= 1``; a document absent or -1 is
        unjudged and counts as non-relevant).
    strategies : str or list of str, default every strategy
        Names in :data:`STRATEGIES` (see the module documentation for each rule and paper).
    budget : int, optional
        Judgments per topic (``budget_per="topic"``) or in total (``"total"``: split evenly over
        the topics, see :func:`split_budget`); default: every candidate document.
    budget_per : {'topic', 'total'}, default 'topic'
        Whether ``budget`` counts the judgments of each topic or of all topics.
    pool_depth : int, default 100
        Rank down to which the runs' documents are candidates (the depth of the pool the
        strategies order).
    seed : int, numpy Generator or None, default 0
        Seed of the randomised strategy (``"thompson"``); identical input gives identical output.
    rrf_k : float, default 60.0
        The constant ``k`` of reciprocal rank fusion (``"rrf"``), >= 0.
    rbp_p : float, default 0.8
        The persistence ``p`` of RBP-based pooling (``"rbp"``), in (0, 1).
    hedge_beta : float, default 0.1
        Hedge's ``β`` (``"hedge"``), in (0, 1).

    Returns
    -------
    DataFrame
        ``strategy, query_id, doc_id, order`` (``order`` 1-based within strategy and topic).

    Raises
    ------
    PdevalError
        A parameter outside its domain, an option of a strategy not chosen (``rrf_k=`` without
        ``"rrf"``), qrels of several variants, qrels topics the runs lack.

    See Also
    --------
    budget_qrels : The qrels each strategy collects at each budget.
    pool : The depth-k pool.
    leave_out_bias : Pool bias of runs left out of the pool.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3, "query_id": ["q1"] * 6,
    ...                     "doc_id": ["d1", "d2", "d3", "d2", "d4", "d1"],
    ...                     "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["d1", "d2", "d3", "d4"],
    ...                       "relevance": [1, 1, 0, 0]})
    >>> order = pdeval.judging_order(run, qrels, ["depth", "rrf"])
    >>> order.pivot(index="order", columns="strategy", values="doc_id")
    strategy depth rrf
    order
    1           d1  d2
    2           d2  d1
    3           d4  d4
    4           d3  d3
    """
    names = strategies
    given = {"rrf_k": rrf_k, "rbp_p": rbp_p, "hedge_beta": hedge_beta}
    for option, (strategy, default) in STRATEGY_OPTIONS.items():
        if strategy not in names and given[option] != default:
            raise PdevalError(
                f"judging_order(): {option}= applies to the strategy {strategy!r} only, which strategies={names} "
                f"lacks (leave {option} out, or add {strategy!r} to strategies)"
            )
    c = candidates(run, qrels, pool_depth)
    sizes = np.diff(c.doc_start)
    budgets = sizes.copy() if budget is None else split_budget(budget, c.n_topics, budget_per)
    rng = np.random.default_rng(base_seed(seed))
    pieces = []
    for name in names:
        if name in STATIC:
            rows = _static_order(c, name, rrf_k, rbp_p)
            position = np.arange(len(rows)) - c.doc_start[c.doc_topic[rows]] + 1
            keep = position <= budgets[c.doc_topic[rows]]
            rows, position = rows[keep], position[keep]
        else:
            rows = _hedge(c, budgets, hedge_beta) if name == "hedge" else _run_based(c, budgets, name, rng)
            counts = np.bincount(c.doc_topic[rows], minlength=c.n_topics)
            position = np.arange(len(rows)) - np.repeat(np.cumsum(counts) - counts, counts) + 1
        pieces.append(pd.DataFrame({
            "strategy": name, "query_id": c.topics[c.doc_topic[rows]], "doc_id": c.doc_id[rows],
            "order": position.astype(np.int64),
        }))
    return pd.concat(pieces, ignore_index=True)


@contract(
    order=OrderFrame(),
    qrels=Frame("qrels", variants=False),
    budgets=ListOf(Integer(1), unique=True),
    budget_per=Choice("topic", "total"),
    remedies={"budgets": "positive judgment budgets, e.g. [25, 50, 100]"},
)
def budget_qrels(
    order: pd.DataFrame,
    qrels: pd.DataFrame,
    budgets: Union[int, Iterable[int]],
    *,
    budget_per: str = "topic",
) -> pd.DataFrame:
    """The qrels each strategy would have collected at each budget, as qrels variants.

    For budget ``b`` (per topic, or in total split as in :func:`split_budget`), the qrels of a
    strategy hold the entries of ``qrels`` for the documents with ``order <= b_t`` in topic
    ``t``; a judged document the qrels do not hold stays absent (no label is invented).

    Parameters
    ----------
    order : DataFrame
        The result of :func:`judging_order` (``strategy, query_id, doc_id, order``).
    qrels : DataFrame
        The complete judgments, of one variant.
    budgets : int or list of int
        Distinct positive budgets.
    budget_per : {'topic', 'total'}, default 'topic'
        Whether a budget counts the judgments of each topic or of all topics.

    Returns
    -------
    DataFrame
        ``strategy, budget, query_id, doc_id, relevance``; ``strategy`` and ``budget`` are
        variant keys of :func:`pdeval.evaluate`.

    Raises
    ------
    PdevalError
        A parameter outside its domain (a budget that is not a positive integer, an order
        frame without its columns).

    See Also
    --------
    judging_order : The judging orders this function cuts.
    evaluate : Evaluates every strategy and budget at once.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a", "a", "b"], "query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"],
    ...                     "score": [2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"], "relevance": [1, 0, 1]})
    >>> order = pdeval.judging_order(run, qrels, "depth")
    >>> pdeval.budget_qrels(order, qrels, [1, 2])
      strategy  budget query_id doc_id  relevance
    0    depth       1       q1     d1          1
    1    depth       2       q1     d1          1
    2    depth       2       q1     d3          1
    """
    q = as_qrels(qrels)
    q = q.loc[q["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    joined = order[list(ORDER_COLUMNS)].merge(q, on=["query_id", "doc_id"], how="inner")
    topics = np.sort(pd.unique(order["query_id"]))
    topic_code = np.searchsorted(topics, joined["query_id"].to_numpy())
    pieces = []
    for b in budgets:
        limit = split_budget(b, len(topics), budget_per)
        keep = joined["order"].to_numpy() <= limit[topic_code]
        piece = joined.loc[keep, ["strategy", "query_id", "doc_id", "relevance"]]
        piece.insert(1, "budget", np.int64(b))
        pieces.append(piece)
    return pd.concat(pieces, ignore_index=True).sort_values(
        ["strategy", "budget", "query_id", "doc_id"], kind="stable", ignore_index=True)
