"""Pool bias: corrected scores for runs outside the pool, and how well the corrections work.

A depth-k pool judges only what the pooled runs retrieved; a run that did not contribute meets
unjudged documents (counted as non-relevant) and is underscored. Two estimators correct its score:

* **Webber & Park (SIGIR 2009)**, score adjustment from the pooled runs' leave-one-out
  behaviour: every pooled run ``p`` is scored with the full qrels ``Q`` and with ``Q_{-p}``
  (``Q`` without the documents only ``p``'s unit — the run, or its group with ``group=`` —
  brought into the pool); the mean loss ``a(t) = mean_p [M_t(p, Q) - M_t(p, Q_{-p})]`` is
  added to the new run's score, per topic: ``M̂_t(u) = M_t(u, Q) + a(t)`` (the implementation
  of Lipani's PoolBiasEstimators, ``WebberOnRuns``). It applies to any measure; here to P@k and
  R@k (recall at k).
* **Lipani, Lupu & Hanbury (SIGIR 2015)**, precision and anti-precision: with ``s_u``, ``ā_u``
  the precision and anti-precision (share of judged non-relevant documents) at n of the new run
  ``u`` and ``k_u = 1 - s_u - ā_u`` its unjudged share, every pooled run ``p`` is re-ranked like
  ``u`` (``p∘u``: a document of ``p`` that ``u`` also retrieved takes ``u``'s rank, the others
  keep ``p``'s; among equal positions a document moved up comes first, then one that stays, then
  one moved down, then ``p``'s order) and ``δs_p``, ``δā_p`` are the changes of precision and
  anti-precision from ``p`` to ``p∘u``, ``δk_p = -δs_p - δā_p``. With the means ``Δs``, ``Δā``,
  ``Δk`` over the pooled runs, the correction is ``k_u · max(Δk, 0)`` when
  ``k_u (Δs · ā_u - Δā · s_u) > 0`` and 0 otherwise: ``P̂@n(u) = s_u + correction``. All
  quantities are means over the qrels topics (trec_eval ``-c``). Defined for P@n only; recall
  (and AP) are not covered by this estimator (rows are omitted).
* ``"pool"`` — no correction (the score on the pool as it is), the baseline.

Scores here are means over **all qrels topics** (a topic the run lacks counts 0, trec_eval ``-c``)
of P@k = relevant in the top k / k and R@k = relevant in the top k / R (topics with R = 0 count
0), computed from the runs ranked in trec_eval order; they equal :func:`pdeval.evaluate`'s P@k
and R@k per topic.

:func:`pool_bias_correction` corrects runs outside the pool; :func:`leave_out_bias` leaves
every pooled run (or group) out in turn, estimates its score with every estimator, and
:func:`bias_summary` reports the mean absolute error, the system rank error (SRE) and Kendall's
τ-b against the scores on the full pool (Lipani et al. 2015, Section 5).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.correlation import kendall_tau
from pdeval.common.options import check_choice, check_int
from pdeval.engine.ranking import rank_run
from pdeval.errors import PdevalError
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.judgments.pooling import run_groups
from pdeval.measures import parse as parse_measure

__all__ = ["ESTIMATORS", "pool_bias_correction", "leave_out_bias", "bias_summary"]

#: the estimators: no correction, Webber & Park 2009, Lipani, Lupu & Hanbury 2015
ESTIMATORS = ("pool", "webber", "lipani")
GroupLike = Union[None, Mapping[str, str], Callable[[str], str]]


def _measures(measures: Union[str, Sequence[str]]) -> list[tuple[str, str, int]]:
    names = [measures] if isinstance(measures, str) else list(measures)
    if not names:
        raise PdevalError("measures is empty; give P@k or R@k measures")
    out = []
    for name in names:
        m = parse_measure(name)
        if m.name not in ("P", "R") or not m.cutoff:
            raise PdevalError(
                f"measures: {name!r} is not supported by the pool-bias estimators; use P@k (both "
                "estimators) or R@k (Webber & Park only)"
            )
        out.append((str(name), m.name, int(m.cutoff)))
    return out


def _estimators(estimators: Union[str, Sequence[str]]) -> list[str]:
    names = [estimators] if isinstance(estimators, str) else list(estimators)
    for name in names:
        check_choice("estimators", name, ESTIMATORS)
    if not names:
        raise PdevalError(f"estimators is empty; choose among {', '.join(ESTIMATORS)}")
    return names


@dataclass
class Entries:
    """Ranked run rows with integer codes: run, topic, document (per topic), rank, label, and
    the pool contributors of each document (count and the two smallest unit codes)."""

    run: np.ndarray
    topic: np.ndarray
    doc: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    n_contrib: np.ndarray
    g1: np.ndarray
    g2: np.ndarray
    run_names: np.ndarray
    n_topics: int
    n_docs: int
    relevant: np.ndarray  # per topic: number of relevant qrels entries
    rel_removed: dict  # frozenset of units -> per-topic relevant entries they remove


class Collection:
    """Runs, qrels and the depth-k pool of the pooled runs, as arrays."""

    def __init__(self, run, qrels, pooled, depth, group, run_depth):
        r = as_run(run)
        q = as_qrels(qrels)
        q = q.loc[q["relevance"] >= 0]
        topics = np.sort(pd.unique(q["query_id"]))
        if len(topics) == 0:
            raise PdevalError("the qrels hold no judged topic")
        names = sorted(pd.unique(r["run"]).tolist())
        pooled = names if pooled is None else ([pooled] if isinstance(pooled, str) else list(pooled))
        unknown = [p for p in pooled if p not in set(names)]
        if unknown:
            raise PdevalError(f"pooled runs {unknown[:5]} are not in the run frame")
        if not pooled:
            raise PdevalError("pooled is empty: name the runs that formed the pool")
        self.pooled = sorted(pooled)
        self.groups = run_groups(names, group)
        self.units = sorted({self.groups[p] for p in self.pooled})
        unit_code = {u: i for i, u in enumerate(self.units)}
        r = r.loc[r["query_id"].isin(set(topics))]
        ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], depth=run_depth)
        topic = np.searchsorted(topics, ranked["query_id"].to_numpy())
        run_code, run_names = pd.factorize(ranked["run"], sort=True)
        q_topic = np.searchsorted(topics, q["query_id"].to_numpy())
        names_codes, doc_names = pd.factorize(np.concatenate([ranked["doc_id"].to_numpy(dtype=object),
                                                              q["doc_id"].to_numpy(dtype=object)]))
        pair = np.concatenate([topic, q_topic]).astype(np.int64) * max(len(doc_names), 1) + names_codes
        doc, uniques = pd.factorize(pair)
        doc_e, doc_q = doc[: len(ranked)], doc[len(ranked):]
        n_docs = len(uniques)
        label_of = np.full(n_docs, -1, dtype=np.int64)
        label_of[doc_q] = (q["relevance"].to_numpy() >= 1).astype(np.int64)
        rank = ranked["rank"].to_numpy(dtype=np.int64)
        # contributors: units of the pooled runs that have the document in their top `depth`
        run_unit = np.array([unit_code.get(self.groups[n], -1) if n in set(self.pooled) else -1
                             for n in run_names], dtype=np.int64)
        inpool = (run_unit[run_code] >= 0) & (rank <= depth)
        pairs = np.unique(np.stack([doc_e[inpool], run_unit[run_code][inpool]], axis=1), axis=0)
        n_contrib = np.bincount(pairs[:, 0], minlength=n_docs)
        big = np.iinfo(np.int64).max
        g1 = np.full(n_docs, big)
        np.minimum.at(g1, pairs[:, 0], pairs[:, 1])
        rest = pairs[pairs[:, 1] != g1[pairs[:, 0]]]
        g2 = np.full(n_docs, big)
        np.minimum.at(g2, rest[:, 0], rest[:, 1])
        self.topics = topics
        self.q_doc, self.q_topic = doc_q, q_topic
        self.q_rel = label_of[doc_q] == 1
        self.unit_code = unit_code
        self.e = Entries(run=run_code.astype(np.int64), topic=topic, doc=doc_e, rank=rank,
                         label=label_of[doc_e], n_contrib=n_contrib, g1=g1, g2=g2,
                         run_names=np.asarray(run_names), n_topics=len(topics), n_docs=n_docs,
                         relevant=np.bincount(self.q_topic[self.q_rel], minlength=len(topics)),
                         rel_removed={})
        self.all_names = names

    def removed(self, docs: np.ndarray, units: Sequence[int]) -> np.ndarray:
        """Whether leaving the units out removes each document (all its contributors are left out)."""
        e = self.e
        n, a, b = e.n_contrib[docs], e.g1[docs], e.g2[docs]
        if len(units) == 1:
            return (n == 1) & (a == units[0])
        lo, hi = min(units), max(units)
        return ((n == 1) & ((a == lo) | (a == hi))) | ((n == 2) & (a == lo) & (b == hi))

    def relevant_left(self, units: Sequence[int]) -> np.ndarray:
        """R per topic once the units are left out."""
        if not units:
            return self.e.relevant.astype(np.float64)
        gone = self.removed(self.q_doc, units) & self.q_rel
        return (self.e.relevant - np.bincount(self.q_topic[gone], minlength=self.e.n_topics)).astype(np.float64)


def _topic_scores(c: Collection, rows: np.ndarray, units: Sequence[int], kind: str, k: int,
                  n_runs: int, run_index: np.ndarray) -> np.ndarray:
    """(runs x topics) P@k or R@k of the given entries with the units left out (``run_index``
    numbers their runs)."""
    e = c.e
    top = rows[e.rank[rows] <= k]
    hit = _labels(c, top, units) == 1
    counts = np.zeros((n_runs, e.n_topics))
    np.add.at(counts, (run_index[e.run[top][hit]], e.topic[top][hit]), 1.0)
    if kind == "P":
        return counts / k
    relevant = c.relevant_left(units)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(relevant > 0, counts / relevant, 0.0)


def _labels(c: Collection, rows: np.ndarray, units: Sequence[int]) -> np.ndarray:
    """Labels of the entries (1 relevant, 0 non-relevant, -1 unjudged) with the units left out."""
    label = c.e.label[rows]
    if len(units):
        label = np.where(c.removed(c.e.doc[rows], units), -1, label)
    return label


def _webber_adjustment(c: Collection, left_out: Sequence[int], kind: str, k: int) -> np.ndarray:
    """Per-topic mean loss of the pooled runs outside ``left_out`` when their unit is left out too."""
    e = c.e
    pool_runs = [i for i, n in enumerate(e.run_names) if n in set(c.pooled)
                 and c.unit_code[c.groups[n]] not in left_out]
    if not pool_runs:
        raise PdevalError("Webber & Park's adjustment needs at least one pooled run outside the left-out unit")
    index = np.full(len(e.run_names), -1)
    index[pool_runs] = np.arange(len(pool_runs))
    rows = np.flatnonzero(index[e.run] >= 0)
    rows = rows[e.rank[rows] <= k]
    base = _topic_scores(c, rows, left_out, kind, k, len(pool_runs), index)
    loss = np.zeros_like(base)
    for unit in sorted({c.unit_code[c.groups[e.run_names[i]]] for i in pool_runs}):
        units = [*left_out, unit]
        mine = np.array([c.unit_code[c.groups[e.run_names[i]]] == unit for i in pool_runs])
        sub_rows = rows[mine[index[e.run[rows]]]]
        scores = _topic_scores(c, sub_rows, units, kind, k, len(pool_runs), index)
        loss[mine] = base[mine] - scores[mine]
    return loss.mean(axis=0)


def _reranked_top(c: Collection, pool_rows: np.ndarray, group_bits: np.ndarray, new_rank_of_doc: np.ndarray,
                  n: int) -> np.ndarray:
    """Rows of the top n of every p∘u (p: the runs of ``pool_rows``; u: given by its ranks).

    ``group_bits`` is ``(run * n_topics + topic) << (2 * bits + 2)`` of every pool row, with
    ``bits`` the bit length of the deepest rank: one packed int64 sorts by run, topic,
    position, tie and rank in p."""
    e = c.e
    bits = max(int(e.rank.max(initial=1)).bit_length(), 1)
    ru = new_rank_of_doc[e.doc[pool_rows]]
    rp = e.rank[pool_rows]
    key = np.where(ru > 0, ru, rp)
    tie = np.sign(key - rp) + 1  # moved up (0) before staying (1) before moved down (2)
    rows = pool_rows[np.argsort(group_bits | (key << (bits + 2)) | (tie << bits) | rp, kind="stable")]
    group = e.run[rows] * e.n_topics + e.topic[rows]
    start = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    position = np.arange(len(rows)) - np.repeat(start, np.diff(np.r_[start, len(rows)]))
    return rows[position < n]


def _lipani(c: Collection, left_out: Sequence[int], new_runs: Sequence[int], n: int) -> np.ndarray:
    """Lipani et al.'s corrected P@n of each new run (mean over topics)."""
    e = c.e
    pooled = np.array([name in set(c.pooled) and c.unit_code[c.groups[name]] not in left_out
                       for name in e.run_names])
    pool_rows = np.flatnonzero(pooled[e.run])
    n_pool = int(pooled.sum())
    T = e.n_topics

    def precision_pair(top):
        label = _labels(c, top, left_out)
        rel = np.bincount(e.run[top], weights=(label == 1), minlength=len(e.run_names))
        non = np.bincount(e.run[top], weights=(label == 0), minlength=len(e.run_names))
        return rel / (n * T), non / (n * T)

    s_p, a_p = precision_pair(pool_rows[e.rank[pool_rows] <= n])
    bits = max(int(e.rank.max(initial=1)).bit_length(), 1)
    group_bits = (e.run[pool_rows] * T + e.topic[pool_rows]) << (2 * bits + 2)
    out = []
    for u in new_runs:
        u_label = _labels(c, np.flatnonzero((e.run == u) & (e.rank <= n)), left_out)
        s_u = np.sum(u_label == 1) / (n * T)
        a_u = np.sum(u_label == 0) / (n * T)
        k_u = 1.0 - s_u - a_u
        if k_u <= 0 or n_pool == 0:
            out.append(s_u)
            continue
        all_u = np.flatnonzero(e.run == u)
        rank_of = np.zeros(e.n_docs, dtype=np.int64)
        rank_of[e.doc[all_u]] = e.rank[all_u]
        s_pu, a_pu = precision_pair(_reranked_top(c, pool_rows, group_bits, rank_of, n))
        ds = (s_pu - s_p)[pooled].mean()
        da = (a_pu - a_p)[pooled].mean()
        dk = -ds - da
        correction = k_u * max(dk, 0.0) if k_u * (ds * a_u - da * s_u) > 0 else 0.0
        out.append(s_u + correction)
    return np.asarray(out)


def _estimate(c: Collection, left_out: Sequence[int], new_runs: Sequence[int], measures, estimators):
    """Rows (run, measure, estimator, value) for the new runs with the given units left out."""
    e = c.e
    records = []
    index = np.full(len(e.run_names), -1)
    index[list(new_runs)] = np.arange(len(new_runs))
    rows = np.flatnonzero(index[e.run] >= 0)
    for name, kind, k in measures:
        scores = _topic_scores(c, rows, left_out, kind, k, len(new_runs), index)
        values = {"pool": scores.mean(axis=1)}
        if "webber" in estimators:
            values["webber"] = (scores + _webber_adjustment(c, left_out, kind, k)).mean(axis=1)
        if "lipani" in estimators and kind == "P":
            values["lipani"] = _lipani(c, left_out, new_runs, k)
        for estimator in estimators:
            if estimator in values:
                records += [(e.run_names[u], name, estimator, float(v)) for u, v in zip(new_runs, values[estimator])]
    return records


def pool_bias_correction(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    pooled: Iterable[str],
    measures: Union[str, Sequence[str]] = ("P@10",),
    *,
    depth: int = 10,
    group: GroupLike = None,
    estimators: Union[str, Sequence[str]] = ESTIMATORS,
    run_depth: int = 1000,
) -> pd.DataFrame:
    """Corrected scores of the runs outside the pool (Webber & Park 2009; Lipani et al. 2015).

    Parameters
    ----------
    run : DataFrame
        The pooled runs and the runs to correct (every run not in ``pooled``).
    qrels : DataFrame
        The judgments of the depth-``depth`` pool of ``pooled``.
    pooled : list of str
        The runs that formed the pool.
    measures : str or list of str
        ``P@k`` and ``R@k`` measures (see the module documentation for what each estimator covers).
    depth : int
        The pool depth (contributors of a document are the pooled runs with it in their top depth).
    group : mapping or callable, optional
        Unit of Webber & Park's leave-one-out: each pooled run alone (default) or its group.
    estimators : str or list of str
        Names in :data:`ESTIMATORS`.
    run_depth : int
        Depth to which every run is read (trec_eval's 1000).

    Returns
    -------
    DataFrame
        ``run, measure, estimator, value`` (means over the qrels topics).

    Raises
    ------
    PdevalError
        Unknown runs or estimators, measures other than P@k and R@k, no run outside the pool.
    """
    ms, ests = _measures(measures), _estimators(estimators)
    c = Collection(run, qrels, pooled, check_int("depth", depth, 1), group, check_int("run_depth", run_depth, 1))
    new = [i for i, n in enumerate(c.e.run_names) if n not in set(c.pooled)]
    if not new:
        raise PdevalError("every run of the frame is pooled: there is no run outside the pool to correct")
    return pd.DataFrame(_estimate(c, [], new, ms, ests), columns=["run", "measure", "estimator", "value"])


def leave_out_bias(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[str, Sequence[str]] = ("P@10",),
    *,
    depth: int = 10,
    pooled: Optional[Iterable[str]] = None,
    group: GroupLike = None,
    estimators: Union[str, Sequence[str]] = ESTIMATORS,
    run_depth: int = 1000,
) -> pd.DataFrame:
    """Leave-one-run-out (or, with ``group``, leave-one-group-out) estimates of every pooled run.

    For every unit G of the pooled runs (a run, or a group such as a team), ``Q_{-G}`` is ``Q``
    without the documents that only G brought into the depth-``depth`` pool (Zobel 1998; as in
    :func:`pdeval.leave_out_pooling`); the runs of G are scored on ``Q_{-G}`` by every estimator,
    with the other pooled runs as the pool, and compared with their score on ``Q`` (``true``).

    Parameters
    ----------
    run, qrels, measures, depth, group, estimators, run_depth
        As in :func:`pool_bias_correction`.
    pooled : list of str, optional
        The runs that formed the pool (default: every run).

    Returns
    -------
    DataFrame
        ``run, group, measure, estimator, true, estimate, error`` (``error = estimate - true``),
        one row per pooled run, measure and estimator; :func:`bias_summary` aggregates it.

    Raises
    ------
    PdevalError
        As :func:`pool_bias_correction`; a pool of one unit (nothing left to estimate from).
    """
    ms, ests = _measures(measures), _estimators(estimators)
    c = Collection(run, qrels, pooled, check_int("depth", depth, 1), group, check_int("run_depth", run_depth, 1))
    if len(c.units) < 2:
        raise PdevalError("leave-out needs at least two pooled units (runs or groups)")
    pooled_idx = [i for i, n in enumerate(c.e.run_names) if n in set(c.pooled)]
    true = pd.DataFrame(_estimate(c, [], pooled_idx, ms, ["pool"]), columns=["run", "measure", "estimator", "true"])
    records = []
    for unit, code in c.unit_code.items():
        members = [i for i in pooled_idx if c.groups[c.e.run_names[i]] == unit]
        records += _estimate(c, [code], members, ms, ests)
    out = pd.DataFrame(records, columns=["run", "measure", "estimator", "estimate"])
    out = out.merge(true.drop(columns="estimator"), on=["run", "measure"], how="left")
    out.insert(1, "group", out["run"].map(c.groups))
    out["error"] = out["estimate"] - out["true"]
    return out[["run", "group", "measure", "estimator", "true", "estimate", "error"]]


def _sre(true: np.ndarray, estimate: np.ndarray) -> int:
    """Σ_r |rank of r among the others' true scores with its estimate - its true rank|."""
    n = len(true)
    total = 0
    for i in range(n):  # n runs: a small loop over a ranking, not a hot path
        others = np.delete(true, i)
        true_rank = int(np.sum(others > true[i]))
        est_rank = int(np.sum(others > estimate[i]))
        total += abs(true_rank - est_rank)
    return total


def bias_summary(result: pd.DataFrame) -> pd.DataFrame:
    """MAE, SRE and Kendall's τ-b of every estimator and measure of :func:`leave_out_bias`.

    ``MAE = mean_r |estimate_r - true_r|``; ``SRE = Σ_r |rank_r - rank'_r|`` with ``rank_r`` the
    rank of r's true score among the other runs' true scores and ``rank'_r`` that of its estimate
    among the same (Lipani, Lupu & Hanbury 2015); τ-b between the estimates and the true scores
    over the runs.

    Parameters
    ----------
    result : DataFrame
        The result of :func:`leave_out_bias` (or any frame with ``measure, estimator, true,
        estimate``).

    Returns
    -------
    DataFrame
        ``measure, estimator, runs, mae, sre, tau_b``.

    Raises
    ------
    PdevalError
        A frame without those columns.
    """
    needed = ["measure", "estimator", "true", "estimate"]
    absent = [col for col in needed if col not in result.columns]
    if absent:
        raise PdevalError(f"bias_summary needs columns {needed}; the frame lacks {absent}")
    rows = []
    for (measure, estimator), g in result.groupby(["measure", "estimator"], sort=True):
        t, e = g["true"].to_numpy(float), g["estimate"].to_numpy(float)
        tau = kendall_tau(e, t) if len(g) > 1 else np.nan
        rows.append((measure, estimator, len(g), float(np.mean(np.abs(e - t))), _sre(t, e), tau))
    return pd.DataFrame(rows, columns=["measure", "estimator", "runs", "mae", "sre", "tau_b"])
