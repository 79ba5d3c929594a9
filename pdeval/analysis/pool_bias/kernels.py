"""Array kernels of the pool-bias estimators (:mod:`pdeval.analysis.pool_bias.correction`).

Everything is computed for all estimated runs (*cases*) at once. A case is a run code and the
pool unit left out for it (``-1``: none): :func:`pdeval.pool_bias_correction` estimates the runs
outside the pool with nothing left out, :func:`pdeval.leave_out_bias` every pooled run with its
own unit left out. Leaving units out never needs a copy of the qrels: a document is removed when
all of its contributors (at most two units matter: the case's and, for Webber & Park, the pooled
run's) are left out, which the contributor count and the two smallest contributor codes of every
document decide (:func:`gone`). Counts at several cut-offs come from one ``bincount`` followed by
a cumulative sum over the cut-offs (:func:`at_cutoffs`).

The only loops are over blocks of about :data:`BLOCK_ROWS` expanded rows (bounded memory; one
block on collections the size of CLEF 2015 or TREC DL 2021) and over the doubling depth of
:func:`reranked_counts` (at most ``log2(run depth)`` rounds, each on fewer groups).
"""

from __future__ import annotations

import numpy as np

from pdeval.errors import PdevalError

#: rows expanded at once by :func:`reranked_counts` (bounded memory)
BLOCK_ROWS = 1 << 21


def expand(starts: np.ndarray, lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows ``start .. start + length - 1`` of every group: (rows, group of each row, offset in it)."""
    lengths = np.asarray(lengths, dtype=np.int64)
    group = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    first = np.cumsum(lengths) - lengths
    within = np.arange(len(group), dtype=np.int64) - first[group]
    return np.asarray(starts, dtype=np.int64)[group] + within, group, within


def blocks(sizes: np.ndarray) -> list[np.ndarray]:
    """Consecutive index ranges whose ``sizes`` (rows each entry expands to) add up to about
    :data:`BLOCK_ROWS` (one range when everything fits)."""
    cum = np.cumsum(sizes)
    if not len(cum) or cum[-1] <= BLOCK_ROWS:
        return [np.arange(len(sizes))]
    cuts = np.searchsorted(cum, np.arange(1, int(cum[-1]) // BLOCK_ROWS + 1) * BLOCK_ROWS)
    return np.split(np.arange(len(sizes)), np.unique(cuts[(cuts > 0) & (cuts < len(sizes))]))


def gone(e, docs: np.ndarray, a, b=-1) -> np.ndarray:
    """Whether leaving units ``a`` and ``b`` out (``-1``: none) removes each document: it has
    contributors and all of them are among ``a``, ``b``."""
    n, g1, g2 = e.n_contrib[docs], e.g1[docs], e.g2[docs]
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    return ((n == 1) & ((g1 == a) | (g1 == b))) | ((n == 2) & (g1 == lo) & (g2 == hi))


def doc_labels(e, docs: np.ndarray, a, b=-1) -> np.ndarray:
    """Labels of documents (1 relevant, 0 non-relevant, -1 unjudged) with units a, b left out."""
    return np.where(gone(e, docs, a, b), -1, e.label_of[docs])


def at_cutoffs(slot: np.ndarray, rank: np.ndarray, label: np.ndarray, cuts: np.ndarray,
               n_slots: int) -> tuple[np.ndarray, np.ndarray]:
    """Relevant and non-relevant counts ``(n_slots, len(cuts))`` among ranks ``<= cuts[i]``."""
    index = np.searchsorted(cuts, rank, side="left")
    keep = index < len(cuts)
    where = slot[keep] * len(cuts) + index[keep]
    size = n_slots * len(cuts)
    rel = np.bincount(where, weights=label[keep] == 1, minlength=size).reshape(n_slots, len(cuts))
    non = np.bincount(where, weights=label[keep] == 0, minlength=size).reshape(n_slots, len(cuts))
    return np.cumsum(rel, axis=1), np.cumsum(non, axis=1)


def top_rows(c, runs: np.ndarray, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Rows of the top ``depth`` of every (entry of ``runs``, topic): (rows, entry, topic)."""
    T = c.e.n_topics
    runs = np.asarray(runs, dtype=np.int64)
    starts = c.start[runs].ravel()
    lengths = np.minimum(c.length[runs], depth).ravel()
    rows, group, _ = expand(starts, lengths)
    return rows, group // T, group % T


def case_counts(c, runs: np.ndarray, left: np.ndarray, cuts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Relevant and non-relevant counts ``(cases, topics, cuts)`` of the cases' top ranks."""
    e = c.e
    T = e.n_topics
    rows, case, topic = top_rows(c, runs, int(cuts[-1]))
    label = doc_labels(e, e.doc[rows], left[case])
    rel, non = at_cutoffs(case * T + topic, e.rank[rows], label, cuts, len(runs) * T)
    return rel.reshape(len(runs), T, len(cuts)), non.reshape(len(runs), T, len(cuts))


def relevant_left(c, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """R per topic ``(len(a), topics)`` once units ``a[i]`` and ``b[i]`` (-1: none) are left out."""
    T, U = c.e.n_topics, max(len(c.units), 1)
    a, b = np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)
    R = c.e.relevant[None, :] - c.single[:, a + 1].T - c.single[:, b + 1].T
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    key = (np.arange(T, dtype=np.int64)[None, :] * U + lo[:, None]) * U + hi[:, None]
    if len(c.pair_keys):
        at = np.minimum(np.searchsorted(c.pair_keys, key), len(c.pair_keys) - 1)
        hit = (c.pair_keys[at] == key) & (lo >= 0)[:, None]
        R = R - np.where(hit, c.pair_counts[at], 0)
    return R.astype(np.float64)


def scores(rel: np.ndarray, R: np.ndarray, is_p: np.ndarray, k: np.ndarray, cut: np.ndarray) -> np.ndarray:
    """P@k (hits / k) or R@k (hits / R, 0 where R = 0): ``(m, topics, measures)``."""
    hits = rel[..., cut]
    denom = np.where(is_p[None, None, :], k[None, None, :].astype(np.float64), R[..., None])
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(denom > 0, hits / denom, 0.0)


def pool_pairs(c, left: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every (entry of ``left``, pooled run outside that unit): (entry, pooled run, pairs per entry)."""
    pool = c.pool_codes
    ok = c.run_unit[pool][None, :] != np.asarray(left)[:, None]
    entry, which = np.nonzero(ok)
    return entry, pool[which], ok.sum(axis=1)


def webber(c, left: np.ndarray, is_p, k, cut, cuts) -> np.ndarray:
    """Webber & Park's per-topic adjustment ``(len(left), topics, measures)`` for each distinct
    left-out unit: the mean over the pooled runs p outside it of ``M_t(p, Q_{-L}) -
    M_t(p, Q_{-L-unit(p)})``."""
    e = c.e
    T = e.n_topics
    entry_all, pool_all, count = pool_pairs(c, left)
    if (count == 0).any():
        raise PdevalError("Webber & Park's adjustment needs at least one pooled run outside the left-out unit")
    total = np.zeros((len(left), T, len(k)))
    for block in blocks(np.minimum(c.length[pool_all], cuts[-1]).sum(axis=1)):
        entry, pool = entry_all[block], pool_all[block]
        rows, pair, topic = top_rows(c, pool, int(cuts[-1]))
        a, b = left[entry][pair], c.run_unit[pool][pair]
        slot, rank, docs = pair * T + topic, e.rank[rows], e.doc[rows]
        size = len(pool) * T
        with_p = at_cutoffs(slot, rank, doc_labels(e, docs, a), cuts, size)[0].reshape(len(pool), T, -1)
        without = at_cutoffs(slot, rank, doc_labels(e, docs, a, b), cuts, size)[0].reshape(len(pool), T, -1)
        R1 = relevant_left(c, left[entry], np.full(len(entry), -1))
        R2 = relevant_left(c, left[entry], c.run_unit[pool])
        np.add.at(total, entry, scores(with_p, R1, is_p, k, cut) - scores(without, R2, is_p, k, cut))
    return total / count[:, None, None]


def rank_in(c, runs: np.ndarray, docs: np.ndarray) -> np.ndarray:
    """Rank of each document in the paired run (0 where the run does not hold it)."""
    keys, ranks = c.lookup
    query = runs.astype(np.int64) * c.e.n_docs + docs
    at = np.minimum(np.searchsorted(keys, query), len(keys) - 1)
    return np.where(keys[at] == query, ranks[at], 0)


def _candidates(c, p, u, t, depth):
    """Documents of p that may reach the top of p∘u: p's top ``depth`` and u's top ``depth``
    documents that p holds deeper. Returns (group, key, tie, rank in p, doc)."""
    e = c.e
    rows_a, g_a, _ = expand(c.start[p, t], np.minimum(c.length[p, t], depth))
    r_u = rank_in(c, u[g_a], e.doc[rows_a])
    r_p = e.rank[rows_a]
    key_a = np.where(r_u > 0, r_u, r_p)
    rows_b, g_b, _ = expand(c.start[u, t], np.minimum(c.length[u, t], depth))
    deeper = rank_in(c, p[g_b], e.doc[rows_b])
    keep = deeper > depth
    rows_b, g_b, deeper = rows_b[keep], g_b[keep], deeper[keep]
    key = np.concatenate([key_a, e.rank[rows_b]])
    r_all = np.concatenate([r_p, deeper])
    return (np.concatenate([g_a, g_b]), key, np.sign(key - r_all) + 1, r_all,
            np.concatenate([e.doc[rows_a], e.doc[rows_b]]))


def _reranked_round(c, p, u, t, left, depth, n):
    """One round on groups (p, u, t): positions < n of the certified groups (group, position,
    doc) and whether each group is certified."""
    e = c.e
    g, key, tie, r_p, docs = _candidates(c, p, u, t, depth)
    bits = max(int(e.rank.max(initial=1)).bit_length(), 1)
    order = np.argsort((((g << bits) | key) << (bits + 2)) | (tie << bits) | r_p, kind="stable")
    g, key, docs = g[order], key[order], docs[order]
    start = np.searchsorted(g, np.arange(len(p)))
    position = np.arange(len(g)) - start[g]
    close = np.bincount(g, weights=key <= depth, minlength=len(p))
    certified = (close >= n) | (c.length[p, t] <= depth)
    take = certified[g] & (position < n)
    label = doc_labels(e, docs[take], left[g[take]])
    return g[take], position[take], label, certified


def reranked_counts(c, p, u, left, cuts) -> tuple[np.ndarray, np.ndarray]:
    """Relevant and non-relevant counts ``(pairs, cuts)`` over topics in the top of ``p∘u``
    (pooled run p re-ranked like u; Lipani, Lupu & Hanbury 2015) for every pair (p[i], u[i]),
    with unit ``left[i]`` left out.

    The top n of p∘u merges p's documents outside u (keys: their ranks in p) with those in u
    (keys: their ranks in u). Every document outside p's top D and u's top D has a key above D,
    so once the candidates of depth D hold n keys ``<= D`` (or p's list is shorter than D) their
    first n are exact; the remaining (pair, topic) groups are redone with D doubled."""
    T, n = c.e.n_topics, int(cuts[-1])
    rel = np.zeros((len(p), len(cuts)))
    non = np.zeros((len(p), len(cuts)))
    group = np.flatnonzero(c.length[np.repeat(p, T), np.tile(np.arange(T), len(p))] > 0)
    depth = 2 * n
    while len(group):
        pair, t = group // T, group % T
        size = np.minimum(c.length[p[pair], t], depth) + np.minimum(c.length[u[pair], t], depth)
        left_over = []
        for block in blocks(size):
            bp = pair[block]
            g, position, label, certified = _reranked_round(c, p[bp], u[bp], t[block], left[bp], depth, n)
            r, a = at_cutoffs(bp[g], position + 1, label, cuts, len(p))
            rel += r
            non += a
            left_over.append(group[block][~certified])
        group = np.concatenate(left_over) if left_over else group[:0]
        depth *= 2
    return rel, non


def lipani(c, runs, left, rel_u, non_u, ns) -> np.ndarray:
    """Lipani, Lupu & Hanbury's corrected P@n ``(cases, len(ns))`` (see the module
    :mod:`pdeval.analysis.pool_bias.correction`); ``rel_u``, ``non_u``: the cases' counts at ``ns``
    summed over topics."""
    T = c.e.n_topics
    scale = ns[None, :].astype(np.float64) * T
    s_u, a_u = rel_u / scale, non_u / scale
    k_u = 1.0 - s_u - a_u
    entry, pool, count = pool_pairs(c, left)
    rel_p, non_p = np.zeros((len(pool), len(ns))), np.zeros((len(pool), len(ns)))
    for block in blocks(np.minimum(c.length[pool], ns[-1]).sum(axis=1)):
        rows, pair, _ = top_rows(c, pool[block], int(ns[-1]))
        label = doc_labels(c.e, c.e.doc[rows], left[entry[block]][pair])
        rel_p[block], non_p[block] = at_cutoffs(pair, c.e.rank[rows], label, ns, len(block))
    rel_pu, non_pu = reranked_counts(c, pool, runs[entry], left[entry], ns)
    ds = np.zeros_like(s_u)
    da = np.zeros_like(s_u)
    np.add.at(ds, entry, rel_pu / scale - rel_p / scale)
    np.add.at(da, entry, non_pu / scale - non_p / scale)
    with np.errstate(divide="ignore", invalid="ignore"):
        ds, da = ds / count[:, None], da / count[:, None]
    dk = -ds - da
    correction = np.where(k_u * (ds * a_u - da * s_u) > 0, k_u * np.maximum(dk, 0.0), 0.0)
    return s_u + np.where((k_u > 0) & (count[:, None] > 0), correction, 0.0)
