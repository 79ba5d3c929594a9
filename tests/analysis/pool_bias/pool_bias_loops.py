"""The pool-bias estimators as first written: one array pass per left-out unit, per pooled run
of Webber & Park's adjustment and per corrected run of Lipani et al.'s estimator (Python loops).

Kept as a slow reference for :mod:`pdeval.analysis.pool_bias.correction`, whose kernels do all units, runs
and pairs in one pass: ``test_pool_bias.py`` compares both on Hypothesis cases and on CLEF 2015.
It reads the arrays of :class:`pdeval.analysis.pool_bias.correction.Collection` only.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

from pdeval.analysis.pool_bias.correction import Collection
from pdeval.errors import PdevalError


def removed(c: Collection, docs: np.ndarray, units: Sequence[int]) -> np.ndarray:
    e = c.e
    n, a, b = e.n_contrib[docs], e.g1[docs], e.g2[docs]
    if len(units) == 1:
        return (n == 1) & (a == units[0])
    lo, hi = min(units), max(units)
    return ((n == 1) & ((a == lo) | (a == hi))) | ((n == 2) & (a == lo) & (b == hi))


def relevant_left(c: Collection, units: Sequence[int]) -> np.ndarray:
    if not units:
        return c.e.relevant.astype(np.float64)
    gone = removed(c, c.q_doc, units) & c.q_rel
    return (c.e.relevant - np.bincount(c.q_topic[gone], minlength=c.e.n_topics)).astype(np.float64)


def labels(c: Collection, rows: np.ndarray, units: Sequence[int]) -> np.ndarray:
    label = c.e.label[rows]
    if len(units):
        label = np.where(removed(c, c.e.doc[rows], units), -1, label)
    return label


def topic_scores(c, rows, units, kind, k, n_runs, run_index):
    e = c.e
    top = rows[e.rank[rows] <= k]
    hit = labels(c, top, units) == 1
    counts = np.zeros((n_runs, e.n_topics))
    np.add.at(counts, (run_index[e.run[top][hit]], e.topic[top][hit]), 1.0)
    if kind == "P":
        return counts / k
    relevant = relevant_left(c, units)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(relevant > 0, counts / relevant, 0.0)


def webber_adjustment(c, left_out, kind, k):
    e = c.e
    pool_runs = [i for i, n in enumerate(e.run_names) if n in set(c.pooled)
                 and c.unit_code[c.groups[n]] not in left_out]
    if not pool_runs:
        raise PdevalError("Webber & Park's adjustment needs at least one pooled run outside the left-out unit")
    index = np.full(len(e.run_names), -1)
    index[pool_runs] = np.arange(len(pool_runs))
    rows = np.flatnonzero(index[e.run] >= 0)
    rows = rows[e.rank[rows] <= k]
    base = topic_scores(c, rows, left_out, kind, k, len(pool_runs), index)
    loss = np.zeros_like(base)
    for unit in sorted({c.unit_code[c.groups[e.run_names[i]]] for i in pool_runs}):
        units = [*left_out, unit]
        mine = np.array([c.unit_code[c.groups[e.run_names[i]]] == unit for i in pool_runs])
        sub_rows = rows[mine[index[e.run[rows]]]]
        scores = topic_scores(c, sub_rows, units, kind, k, len(pool_runs), index)
        loss[mine] = base[mine] - scores[mine]
    return loss.mean(axis=0)


def reranked_top(c, pool_rows, group_bits, new_rank_of_doc, n):
    e = c.e
    bits = max(int(e.rank.max(initial=1)).bit_length(), 1)
    ru = new_rank_of_doc[e.doc[pool_rows]]
    rp = e.rank[pool_rows]
    key = np.where(ru > 0, ru, rp)
    tie = np.sign(key - rp) + 1
    rows = pool_rows[np.argsort(group_bits | (key << (bits + 2)) | (tie << bits) | rp, kind="stable")]
    group = e.run[rows] * e.n_topics + e.topic[rows]
    start = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    position = np.arange(len(rows)) - np.repeat(start, np.diff(np.r_[start, len(rows)]))
    return rows[position < n]


def lipani(c, left_out, new_runs, n):
    e = c.e
    pooled = np.array([name in set(c.pooled) and c.unit_code[c.groups[name]] not in left_out
                       for name in e.run_names])
    pool_rows = np.flatnonzero(pooled[e.run])
    n_pool = int(pooled.sum())
    T = e.n_topics

    def precision_pair(top):
        label = labels(c, top, left_out)
        rel = np.bincount(e.run[top], weights=(label == 1), minlength=len(e.run_names))
        non = np.bincount(e.run[top], weights=(label == 0), minlength=len(e.run_names))
        return rel / (n * T), non / (n * T)

    s_p, a_p = precision_pair(pool_rows[e.rank[pool_rows] <= n])
    bits = max(int(e.rank.max(initial=1)).bit_length(), 1)
    group_bits = (e.run[pool_rows] * T + e.topic[pool_rows]) << (2 * bits + 2)
    out = []
    for u in new_runs:
        u_label = labels(c, np.flatnonzero((e.run == u) & (e.rank <= n)), left_out)
        s_u = np.sum(u_label == 1) / (n * T)
        a_u = np.sum(u_label == 0) / (n * T)
        k_u = 1.0 - s_u - a_u
        if k_u <= 0 or n_pool == 0:
            out.append(s_u)
            continue
        all_u = np.flatnonzero(e.run == u)
        rank_of = np.zeros(e.n_docs, dtype=np.int64)
        rank_of[e.doc[all_u]] = e.rank[all_u]
        s_pu, a_pu = precision_pair(reranked_top(c, pool_rows, group_bits, rank_of, n))
        ds = (s_pu - s_p)[pooled].mean()
        da = (a_pu - a_p)[pooled].mean()
        dk = -ds - da
        correction = k_u * max(dk, 0.0) if k_u * (ds * a_u - da * s_u) > 0 else 0.0
        out.append(s_u + correction)
    return np.asarray(out)


def estimate(c, left_out, new_runs, measures, estimators):
    e = c.e
    records = []
    index = np.full(len(e.run_names), -1)
    index[list(new_runs)] = np.arange(len(new_runs))
    rows = np.flatnonzero(index[e.run] >= 0)
    for name, kind, k in measures:
        scores = topic_scores(c, rows, left_out, kind, k, len(new_runs), index)
        values = {"pool": scores.mean(axis=1)}
        if "webber" in estimators:
            values["webber"] = (scores + webber_adjustment(c, left_out, kind, k)).mean(axis=1)
        if "lipani" in estimators and kind == "P":
            values["lipani"] = lipani(c, left_out, new_runs, k)
        for estimator in estimators:
            if estimator in values:
                records += [(e.run_names[u], name, estimator, float(v)) for u, v in zip(new_runs, values[estimator])]
    return records


def parse(measures):
    return [(m, m.split("@")[0], int(m.split("@")[1])) for m in measures]


def correction_loops(run, qrels, pooled, measures, pool_depth=10, group=None,
                     estimators=("pool", "webber", "lipani"), depth=1000, runs=None):
    """Old ``pool_bias_correction`` (``runs``: only these unpooled runs)."""
    c = Collection(run, qrels, pooled, pool_depth, group, depth)
    new = [i for i, n in enumerate(c.e.run_names) if n not in set(c.pooled) and (runs is None or n in runs)]
    return pd.DataFrame(estimate(c, [], new, parse(measures), list(estimators)),
                        columns=["run", "measure", "estimator", "value"])


def leave_out_loops(run, qrels, measures, pool_depth=10, pooled=None, group=None,
                    estimators=("pool", "webber", "lipani"), depth=1000):
    """Old ``leave_out_bias``: the estimates only (run, measure, estimator, estimate)."""
    c = Collection(run, qrels, pooled, pool_depth, group, depth)
    pooled_idx = [i for i, n in enumerate(c.e.run_names) if n in set(c.pooled)]
    records = []
    for unit, code in c.unit_code.items():
        members = [i for i in pooled_idx if c.groups[c.e.run_names[i]] == unit]
        records += estimate(c, [code], members, parse(measures), list(estimators))
    return pd.DataFrame(records, columns=["run", "measure", "estimator", "estimate"])
