"""Preference judgments and trec_eval 10.0's ``prefs_*`` measures (``-R prefs``, ``-R qrels_prefs``).

A preference file (trec_eval's ``prefs`` format) holds lines ``qid jg jsg docno rel_level``:
within a judgment sub-group (jsg) of a judgment group (jg), a document with a higher
``rel_level`` is preferred to one with a lower level; a jg with one jsg is a complete
ordering by levels (its "equivalence classes"), a jg with several jsgs a partial order
closed under transitivity (a > b in one jsg and b > c in another give a > c). Different
jgs (users, assessors) may contradict each other. Level 0 means nonrelevant. A qrels file
read as preferences (``qrels_prefs``: the jg is the second column, one jsg) gives the
preferences of graded judgments: every document preferred to every document of a lower grade.

For a ranking, a preference a > b is *fulfilled* when a is ranked above b; it is "retrieved"
when both are retrieved, "implied" when one is (fulfilled if that one is a), and "not
occurring" when neither is (never fulfilled). The measures (Carterette & Bennett, "Evaluation
measures for preference judgments", SIGIR 2008; Buckley's trec_eval implementation, whose
counting rules and quirks are followed here) are:

=========================  ====================================================================
``prefs_num_prefs_poss``   preferences of every jg (fulfilled or not), summed
``prefs_num_prefs_ful``    fulfilled preferences (retrieved and implied)
``prefs_num_prefs_ful_ret`` fulfilled preferences with both documents retrieved
``prefs_simp``             fulfilled / possible over every preference of the topic
``prefs_pair``             per document pair with a preference, the share of the jgs whose
                           preference the ranking fulfils, averaged over the pairs
``prefs_avgjg``            fulfilled / possible per jg, averaged over the jgs
``prefs_avgjg_Rnonrel``    as prefs_avgjg with the number of nonrelevant documents of each jg
                           set to its number of relevant ones R (like bpref)
``*_ret``, ``*_imp``       the same over retrieved pairs only / retrieved and implied pairs
=========================  ====================================================================

Everything is counted at once for every run, topic and jg: per-run document positions as a
(runs x documents) matrix, the preferences as an edge list, sums by ``np.add.reduceat``.
"""

from __future__ import annotations

import os
from typing import Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Nullable, contract
from pdeval.errors import PdevalError
from pdeval.frames.domains import Frame
from pdeval.integrations.trec_eval.preference_files import (PREFS_COLUMNS, PreferenceFrame, qrels_prefs, read_prefs,
                                                            read_qrels_prefs)

__all__ = ["PREFERENCE_MEASURES", "PREFS_COLUMNS", "PreferenceFrame", "Preferences", "evaluate_prepared", "evaluate_preferences", "qrels_prefs", "read_prefs",
           "read_qrels_prefs"]

PathLike = Union[str, "os.PathLike[str]"]

#: trec_eval's preference measures in its print order: name -> (summary, how ``all`` combines topics)
PREFERENCE_MEASURES = {
    "prefs_num_prefs_poss": ("number of preferences possible (every jg)", "sum"),
    "prefs_num_prefs_ful": ("number of preferences fulfilled (retrieved or implied)", "sum"),
    "prefs_num_prefs_ful_ret": ("number of preferences fulfilled with both documents retrieved", "sum"),
    "prefs_simp": ("fulfilled / possible preferences", "mean"),
    "prefs_pair": ("share of jgs fulfilled per preferred pair, averaged over pairs", "mean"),
    "prefs_avgjg": ("fulfilled / possible per jg, averaged over jgs", "mean"),
    "prefs_avgjg_Rnonrel": ("prefs_avgjg with as many nonrelevant documents per jg as relevant ones", "mean"),
    "prefs_simp_ret": ("prefs_simp over pairs with both documents retrieved", "mean"),
    "prefs_pair_ret": ("prefs_pair over pairs with both documents retrieved", "mean"),
    "prefs_avgjg_ret": ("prefs_avgjg over pairs with both documents retrieved", "mean"),
    "prefs_avgjg_Rnonrel_ret": ("prefs_avgjg_Rnonrel over retrieved documents", "mean"),
    "prefs_simp_imp": ("prefs_simp over retrieved and implied pairs", "mean"),
    "prefs_pair_imp": ("prefs_pair over retrieved and implied pairs", "mean"),
    "prefs_avgjg_imp": ("prefs_avgjg over retrieved and implied pairs", "mean"),
}

#: runs x preferences cells counted at once (memory: a few bytes each, in several arrays)
_CELLS = 4_000_000


# --------------------------------------------------------------------------- the preferences


class Preferences:
    """The preferences of every topic, independent of any run.

    docs: the judged documents, sorted by (topic, doc_id); members: (jg, doc) rows with the
    doc's level in the jg; edges: (a, b, jg) for every preference a > b (documents as indices).
    """

    def __init__(self, prefs: pd.DataFrame):
        prefs = prefs.astype({"query_id": str, "judgment_group": str, "judgment_subgroup": str, "doc_id": str})
        docs = prefs[["query_id", "doc_id"]].drop_duplicates().sort_values(["query_id", "doc_id"], kind="stable")
        self.docs = docs.reset_index(drop=True)
        self.topics, self.doc_topic = np.unique(self.docs["query_id"].to_numpy(dtype=object), return_inverse=True)
        self.topic_start = np.searchsorted(self.doc_topic, np.arange(len(self.topics)))
        # a document as (topic, doc_id) -> one sorted integer key, for the runs' lookups
        self.doc_names, name = np.unique(self.docs["doc_id"].to_numpy(dtype=object), return_inverse=True)
        self.doc_key = self.doc_topic.astype(np.int64) * len(self.doc_names) + name
        index = pd.MultiIndex.from_frame(self.docs)
        prefs = prefs.assign(_doc=index.get_indexer(pd.MultiIndex.from_frame(prefs[["query_id", "doc_id"]])))
        prefs = prefs.sort_values(["query_id", "judgment_group", "judgment_subgroup"], kind="stable")
        groups = prefs.groupby(["query_id", "judgment_group"], sort=False)
        self.jg_topic = np.searchsorted(self.topics, np.array([k[0] for k in groups.groups.keys()], dtype=object))
        self.n_jgs = len(groups)
        jg = groups.ngroup().to_numpy()
        single = (groups["judgment_subgroup"].nunique() == 1).to_numpy()[jg]
        parts = [_classes(prefs[single], jg[single])]  # every jg of one sub-group at once
        for g in np.unique(jg[~single]):  # partial orders, one closure each (rare, small)
            parts.append(_partial(prefs[jg == g], int(g)))
        self._build(parts)

    def _build(self, parts: list) -> None:
        members = pd.concat([member for member, _ in parts], ignore_index=True)
        offsets = np.cumsum([0] + [len(member) for member, _ in parts[:-1]])
        edge = np.concatenate([e + [0, 0, 0, o, o] for (_, e), o in zip(parts, offsets)]) if parts else np.zeros((0, 5))
        order = np.argsort(members["jg"].to_numpy(), kind="stable")  # members grouped by jg
        place = np.empty_like(order)
        place[order] = np.arange(len(order))
        members = members.iloc[order].reset_index(drop=True)
        edge = edge[np.argsort(edge[:, 2], kind="stable")].astype(np.int64)
        self.member_jg = members["jg"].to_numpy(np.int64)
        self.member_doc = members["doc"].to_numpy(np.int64)
        self.member_rel = members["rel"].to_numpy(np.float64)
        self.member_is_rel = members["is_rel"].to_numpy(bool)
        self.member_nonrel = members["nonrel"].to_numpy(bool)  # the "nonrelevant" documents of Rnonrel
        self.member_recalc_ec = members["ec"].to_numpy(bool)
        self.jg_is_ec = np.zeros(self.n_jgs, dtype=bool)
        self.jg_is_ec[self.member_jg[self.member_recalc_ec]] = True
        self.jg_start = np.searchsorted(self.member_jg, np.arange(self.n_jgs))
        self.jg_size = np.bincount(self.member_jg, minlength=self.n_jgs)
        self.num_rel = np.bincount(self.member_jg, weights=self.member_is_rel, minlength=self.n_jgs)
        self.num_nonrel = np.bincount(self.member_jg, weights=~self.member_is_rel & members["counted"].to_numpy(bool),
                                      minlength=self.n_jgs)
        self.edge_a, self.edge_b, self.edge_jg = edge[:, 0], edge[:, 1], edge[:, 2]
        self.edge_ma, self.edge_mb = place[edge[:, 3]], place[edge[:, 4]]  # member rows of a and b
        # EC jgs' Rnonrel recount: edges between classes above the lowest one
        self.edge_upper = ~self.member_nonrel[self.edge_mb] | ~self.jg_is_ec[self.edge_jg]
        self._pairs()

    def _pairs(self) -> None:
        """Unordered document pairs with a preference in some jg, and how many jgs prefer each way."""
        low, high = np.minimum(self.edge_a, self.edge_b), np.maximum(self.edge_a, self.edge_b)
        key = low * len(self.docs) + high
        unique, inverse = np.unique(key, return_inverse=True)
        forward = self.edge_a == low
        self.pair_low, self.pair_high = unique // max(len(self.docs), 1), unique % max(len(self.docs), 1)
        self.pair_low_first = np.bincount(inverse, weights=forward, minlength=len(unique))
        self.pair_high_first = np.bincount(inverse, weights=~forward, minlength=len(unique))
        self.pair_topic = self.doc_topic[self.pair_low] if len(unique) else np.zeros(0, dtype=np.int64)


def _classes(rows: pd.DataFrame, jg: np.ndarray) -> tuple:
    """The jgs of one sub-group (classes by level): every document preferred to every one of a
    lower level of its jg. Edges (a, b, jg, member of a, member of b) are made per member: the
    members of its jg below its level, a contiguous range once sorted by (jg, level descending)."""
    doc, rel = rows["_doc"].to_numpy(np.int64), rows["relevance"].to_numpy(np.float64)
    order = np.lexsort((-rel, jg))
    doc, rel, jg = doc[order], rel[order], jg[order]
    new_class = np.r_[True, (jg[1:] != jg[:-1]) | (rel[1:] != rel[:-1])] if len(jg) else np.zeros(0, dtype=bool)
    key = np.cumsum(new_class)  # one integer per (jg, level), increasing
    lower = np.searchsorted(key, key, side="right")  # the first member below the level
    end = np.searchsorted(jg, jg, side="right")
    lowest = rel == pd.Series(rel).groupby(jg).transform("min").to_numpy()
    member = pd.DataFrame({"jg": jg, "doc": doc, "rel": rel, "is_rel": rel > 0, "nonrel": lowest, "ec": True,
                           "counted": True})
    count = end - lower
    a = np.repeat(np.arange(len(doc)), count)
    b = np.repeat(lower - np.r_[0, np.cumsum(count)[:-1]], count) + np.arange(count.sum())
    return member, np.column_stack([doc[a], doc[b], jg[a], a, b]).astype(np.int64)


def _partial(rows: pd.DataFrame, g: int) -> tuple:
    """A jg of several sub-groups: the preferences of each, closed under transitivity."""
    docs, local = np.unique(rows["_doc"].to_numpy(np.int64), return_inverse=True)
    rel = rows["relevance"].to_numpy(np.float64)
    n = len(docs)
    prefer = np.zeros((n, n), dtype=bool)
    for _, sub in pd.Series(np.arange(len(rows))).groupby(rows["judgment_subgroup"].to_numpy(), sort=False):
        at = sub.to_numpy()
        higher = rel[at][:, None] > rel[at][None, :]
        prefer[np.ix_(local[at], local[at])] |= higher
    closure = prefer | np.eye(n, dtype=bool)
    while True:
        step = (closure.astype(np.int32) @ closure.astype(np.int32)) > 0
        if (step == closure).all():
            break
        closure = step
    np.fill_diagonal(closure, False)
    if (closure & closure.T).any():
        raise PdevalError(f"judgment group {rows['judgment_group'].iloc[0]!r} of topic {rows['query_id'].iloc[0]!r} "
                          "prefers two documents to each other (inconsistent sub-groups); trec_eval aborts on it")
    last = np.full(n, np.nan)  # a document's level: the one of its last line (trec_eval's rel_array)
    order = np.lexsort((-rel, rows["judgment_subgroup"].to_numpy()))
    last[local[order]] = rel[order]
    member = pd.DataFrame({"jg": np.full(n, g), "doc": docs, "rel": last, "is_rel": last > 0, "nonrel": last == 0,
                           "ec": False,
                           "counted": last == 0})
    a, b = np.nonzero(closure)
    return member, np.column_stack([docs[a], docs[b], np.full(len(a), g), a, b]).astype(np.int64)


# --------------------------------------------------------------------------- a run's positions


def _lookup(values: pd.Series, table: np.ndarray) -> np.ndarray:
    """The index of each of ``values`` in ``table`` (strings), -1 where absent (Arrow's index_in:
    no Python string per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(values) if not hasattr(values.array, "_pa_array") else values.array._pa_array
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = pa.array(values.astype(str))
    if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
        array = pc.cast(array, pa.string())
    found = pc.index_in(array, value_set=pa.array(table.astype(str), type=array.type))
    return pc.fill_null(found, -1).to_numpy().astype(np.int64)


def _positions(prefs: Preferences, run: pd.DataFrame, depth: Optional[int]):
    """Per run: which judged documents it retrieves and their place (trec_eval's docid rank:
    retrieved judged documents 0.. in rank order, then the others by doc_id); the runs; which
    topics each run has."""
    if "run" not in run.columns:
        run = run.assign(run="run")
    codes, names = pd.factorize(run["run"])
    n_runs, n_docs, n_topics = len(names), len(prefs.docs), len(prefs.topics)
    topic = _lookup(run["query_id"], prefs.topics)
    has = np.zeros((n_runs, n_topics), dtype=bool)
    inside = np.flatnonzero(topic >= 0)
    has[codes[inside], topic[inside]] = True
    if depth is not None:  # -M cuts the whole ranking (every document, judged or not) first
        rows = run.iloc[inside].assign(_r=codes[inside], _t=topic[inside])
        rows = rows.sort_values(["_r", "_t", "score", "doc_id"], ascending=[True, True, False, True], kind="stable")
        rows = rows[rows.groupby(["_r", "_t"], sort=False).cumcount().to_numpy() < depth]
        run_code, topic_code = rows["_r"].to_numpy(), rows["_t"].to_numpy()
        name, scores = _lookup(rows["doc_id"], prefs.doc_names), rows["score"].to_numpy(dtype=np.float64)
    else:  # no frame copy: the columns as arrays, the judged rows picked by index
        run_code, topic_code = codes[inside], topic[inside]
        name = _lookup(run["doc_id"], prefs.doc_names)[inside]
        scores = run["score"].to_numpy(dtype=np.float64)[inside]
    key = topic_code.astype(np.int64) * len(prefs.doc_names) + name
    doc = np.searchsorted(prefs.doc_key, key)
    found = (name >= 0) & (doc < n_docs)
    found[found] = prefs.doc_key[doc[found]] == key[found]
    r, d, score = run_code[found], doc[found], scores[found]
    # trec_eval's prefs order: score descending, then doc_id ascending (form_prefs_counts.c); the
    # judged documents' order among themselves is all that counts
    order = np.lexsort((d, -score, prefs.doc_topic[d], r))
    r, d = r[order], d[order]
    group = r * n_topics + prefs.doc_topic[d]
    first = np.r_[True, group[1:] != group[:-1]] if len(group) else np.zeros(0, dtype=bool)
    starts = np.flatnonzero(first)
    rank = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)]))
    ret = np.zeros((n_runs, n_docs), dtype=bool)
    ret[r, d] = True
    pos = np.zeros((n_runs, n_docs), dtype=np.int64)
    pos[r, d] = rank
    njr = np.zeros((n_runs, n_topics), dtype=np.int64)
    np.add.at(njr, (r, prefs.doc_topic[d]), 1)
    cumulative = np.cumsum(ret, axis=1)
    before = cumulative - ret  # retrieved documents before each (same topic or not)
    start = prefs.topic_start[prefs.doc_topic]
    base = np.where(start > 0, cumulative[:, np.maximum(start - 1, 0)], 0)
    unretrieved = njr[:, prefs.doc_topic] + (np.arange(n_docs) - start) - (before - base)
    return ret, np.where(ret, pos, unretrieved), list(names), has


def _sums(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Row-wise sums of ``values`` (runs x items) over items grouped by the sorted ``group``, in
    item order (as trec_eval adds); 0 for an empty group. Counts (booleans, integers) are added
    as integers, exact."""
    values = np.asarray(values)
    counts = values.dtype.kind in "bui"
    total = np.zeros((values.shape[0], n_groups), dtype=np.int64 if counts else np.float64)
    start = np.searchsorted(group, np.arange(n_groups))
    end = np.searchsorted(group, np.arange(n_groups), side="right")
    filled = end > start
    if filled.any() and values.shape[1]:
        total[:, filled] = np.add.reduceat(values, start[filled], axis=1, dtype=total.dtype)
    return total.astype(np.float64, copy=False)


def _padded(values: np.ndarray, group: np.ndarray, n_groups: int, fill=0.0) -> tuple:
    """``values`` (runs x items, items sorted by ``group``) laid out as (runs x groups x longest
    group), ``fill`` after each group's items; and each group's length."""
    length = np.bincount(group, minlength=n_groups)
    width = int(length.max()) if len(length) and length.max() > 0 else 1
    within = np.arange(len(group)) - np.searchsorted(group, group)
    out = np.full((values.shape[0], n_groups, width), fill, dtype=np.asarray(values).dtype)
    out[:, group, within] = values
    return out, length


def _sequential(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
    """Row-wise sums over sorted groups added one after the other, as C's loops add them
    (numpy's own sums add pairwise, which can round the last bit differently)."""
    if values.shape[1] == 0:
        return np.zeros((values.shape[0], n_groups))
    padded, _ = _padded(np.asarray(values, dtype=np.float64), group, n_groups)
    return np.cumsum(padded, axis=2)[:, :, -1]


def _ranks(keys: np.ndarray, group: np.ndarray) -> np.ndarray:
    """Per run, each item's rank by ``keys`` within its group (items sorted by group)."""
    order = np.argsort(keys, axis=1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.broadcast_to(np.arange(keys.shape[1]), keys.shape), axis=1)
    return rank - np.searchsorted(group, group)


class _Counts:
    """trec_eval's counts per (run, jg): fulfilled and possible preferences by kind, relevant
    and nonrelevant documents retrieved, and the Rnonrel recounts."""

    def __init__(self, prefs: Preferences, ret: np.ndarray, pos: np.ndarray):
        g, n = prefs.edge_jg, prefs.n_jgs
        ra, rb = ret[:, prefs.edge_a], ret[:, prefs.edge_b]
        before = pos[:, prefs.edge_a] < pos[:, prefs.edge_b]
        both = ra & rb
        self.ful_ret = _sums(both & before, g, n)
        self.poss_ret = _sums(both, g, n)
        self.ful_imp = _sums(ra & ~rb, g, n)
        self.poss_imp = _sums(ra ^ rb, g, n)
        self.not_occur = _sums(~ra & ~rb, g, n)
        mg = prefs.member_jg
        mret = ret[:, prefs.member_doc]
        mpos = pos[:, prefs.member_doc]
        self.num_rel_ret = _sums(mret & prefs.member_is_rel, mg, n)
        counted = ~prefs.member_is_rel & (prefs.member_recalc_ec | prefs.member_nonrel)
        self.num_nonrel_ret = _sums(mret & counted, mg, n)
        self.n_ret = _sums(mret, mg, n)
        scale = pos.shape[1] + 1
        all_rank = _ranks(mg * scale + mpos, mg)
        sub = np.flatnonzero(prefs.member_nonrel)
        nonrel_rank = np.full(mret.shape, np.iinfo(np.int64).max)
        if len(sub):
            nonrel_rank[:, sub] = _ranks(mg[sub] * scale + mpos[:, sub], mg[sub])
        self._recount(prefs, ra, rb, before, mret, all_rank, nonrel_rank)

    def _recount(self, prefs: Preferences, ra, rb, before, mret, all_rank, nonrel_rank) -> None:
        """The fulfilled and possible counts of prefs_avgjg_Rnonrel(_ret) where a jg has more
        nonrelevant documents than relevant ones: only the first R nonrelevant ones count."""
        g, n, mg = prefs.edge_jg, prefs.n_jgs, prefs.member_jg
        ec, upper = prefs.jg_is_ec, prefs.edge_upper
        num_rel = prefs.num_rel[mg]
        # every document: the first R nonrelevant ones (R = all relevant of the jg) are kept
        keep_all = ~prefs.member_nonrel | (nonrel_rank < num_rel)
        ka, kb = keep_all[:, prefs.edge_ma], keep_all[:, prefs.edge_mb]
        pa_ful, pa_poss = _sums(ka & kb & ra & before, g, n), _sums(ka & kb, g, n)
        first = prefs.member_nonrel & (nonrel_rank < num_rel)
        count_b = np.where(mret, all_rank, self.n_ret[:, mg])
        ec_ful = _sums(upper & ra & before, g, n) + _sums(np.where(first, count_b, 0), mg, n)
        ec_poss = _sums(np.broadcast_to(upper, ra.shape), g, n) + prefs.jg_size * prefs.num_rel
        self.recount = (np.where(ec, ec_ful, pa_ful), np.where(ec, ec_poss, pa_poss))
        # retrieved documents only: the first R nonrelevant retrieved (R = relevant retrieved) for
        # classes, the first R (all relevant) for partial orders, as trec_eval does
        both = ra & rb
        pa_ful, pa_poss = _sums(ka & kb & both & before, g, n), _sums(ka & kb & both, g, n)
        first = prefs.member_nonrel & mret & (nonrel_rank < self.num_rel_ret[:, mg])
        ec_ful = _sums(upper & both & before, g, n) + _sums(np.where(first, all_rank, 0), mg, n)
        ec_poss = _sums(upper & both, g, n) + self.n_ret * _sums(first, mg, n)
        self.recount_ret = (np.where(ec, ec_ful, pa_ful), np.where(ec, ec_poss, pa_poss))


def _ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return numerator / denominator


def _jg_mean(values: np.ndarray, prefs: Preferences) -> np.ndarray:
    """Σ over a topic's jgs / its number of jgs, 0 unless the sum is positive (NaN sums too)."""
    n_topics = len(prefs.topics)
    total = _sequential(values, prefs.jg_topic, n_topics)
    count = np.bincount(prefs.jg_topic, minlength=n_topics)
    with np.errstate(invalid="ignore"):
        return np.where(total > 0, total / np.maximum(count, 1), 0.0)


def _measures(prefs: Preferences, ret: np.ndarray, pos: np.ndarray) -> dict:
    """Every prefs_* measure as a (runs x topics) array."""
    c = _Counts(prefs, ret, pos)
    t, n_topics = prefs.jg_topic, len(prefs.topics)

    def per_topic(values):
        return _sums(values, t, n_topics)

    ful = c.ful_ret + c.ful_imp
    poss_imp = c.poss_ret + c.poss_imp
    poss = poss_imp + c.not_occur
    out = {
        "prefs_num_prefs_poss": per_topic(poss),
        "prefs_num_prefs_ful": per_topic(ful),
        "prefs_num_prefs_ful_ret": per_topic(c.ful_ret),
    }
    for suffix, f, p in (("", ful, poss), ("_ret", c.ful_ret, c.poss_ret), ("_imp", ful, poss_imp)):
        total_f, total_p = per_topic(f), per_topic(p)
        out["prefs_simp" + suffix] = np.where(total_p > 0, _ratio(total_f, total_p), 0.0)
        out["prefs_avgjg" + suffix] = _jg_mean(np.where(p > 0, _ratio(f, p), 0.0), prefs)
    r, nn = prefs.num_rel, prefs.num_nonrel
    extra_f, extra_p = c.num_rel_ret * (r - nn), r * (r - nn)
    value = np.where(r >= nn, _ratio(ful + extra_f, poss + extra_p), _ratio(*c.recount))
    out["prefs_avgjg_Rnonrel"] = _jg_mean(value, prefs)
    r_ret, n_ret = c.num_rel_ret, c.num_nonrel_ret
    value = np.where(r_ret >= n_ret, _ratio(c.ful_ret + r_ret * (r_ret - n_ret), c.poss_ret + r * (r_ret - n_ret)),
                     _ratio(*c.recount_ret))
    out["prefs_avgjg_Rnonrel_ret"] = _jg_mean(value, prefs)
    out.update(_pair_measures(prefs, ret, pos))
    return out


def _pair_measures(prefs: Preferences, ret: np.ndarray, pos: np.ndarray) -> dict:
    """prefs_pair(_ret, _imp): per document pair with a preference, the share of the jgs that
    prefer the document the run ranks first, summed over the retrieved pairs, then the pairs
    with one document retrieved, divided by the number of pairs."""
    low, high, topic, n_topics = prefs.pair_low, prefs.pair_high, prefs.pair_topic, len(prefs.topics)
    low_first = pos[:, low] < pos[:, high]
    total = prefs.pair_low_first + prefs.pair_high_first
    share = _ratio(np.where(low_first, prefs.pair_low_first, prefs.pair_high_first), total)
    rl, rh = ret[:, low], ret[:, high]
    both, one = rl & rh, rl ^ rh
    s_ret, s_imp = _sums(np.where(both, share, 0.0), topic, n_topics), _sums(np.where(one, share, 0.0), topic, n_topics)
    s_pair = s_ret + s_imp
    # shares whose denominator is no power of two are not exact in binary: add those topics'
    # shares in trec_eval's order (retrieved pairs by rank, then the others) to round as it does
    inexact = np.bincount(topic, weights=(total.astype(np.int64) & (total.astype(np.int64) - 1)) != 0,
                          minlength=n_topics) > 0
    if inexact.any():
        s_ret, s_pair = _ordered_pair_sums(prefs, pos, share, both, one, inexact, s_ret, s_pair)
    n_ret, n_imp = _sums(both, topic, n_topics), _sums(one, topic, n_topics)
    n_none = _sums(~rl & ~rh, topic, n_topics)

    def mean(values, count):
        return np.where(count > 0, _ratio(values, count), 0.0)

    return {"prefs_pair": mean(s_pair, n_ret + n_imp + n_none), "prefs_pair_ret": mean(s_ret, n_ret),
            "prefs_pair_imp": mean(s_pair, n_ret + n_imp)}


def _ordered_pair_sums(prefs: Preferences, pos, share, both, one, inexact, s_ret, s_pair):
    """The pair sums of the ``inexact`` topics, added in trec_eval's loop order."""
    chosen = np.flatnonzero(inexact[prefs.pair_topic])
    topic = np.searchsorted(np.flatnonzero(inexact), prefs.pair_topic[chosen])
    n = len(np.flatnonzero(inexact))
    first = np.minimum(pos[:, prefs.pair_low[chosen]], pos[:, prefs.pair_high[chosen]])
    second = np.maximum(pos[:, prefs.pair_low[chosen]], pos[:, prefs.pair_high[chosen]])
    kind = np.where(both[:, chosen], 0, np.where(one[:, chosen], 1, 2))
    scale = pos.shape[1] + 1
    key = (kind * scale + first) * scale + second
    keys, length = _padded(key, topic, n, fill=np.iinfo(np.int64).max)
    values, _ = _padded(np.where(kind < 2, share[:, chosen], 0.0), topic, n)
    order = np.argsort(keys, axis=2, kind="stable")
    running = np.cumsum(np.take_along_axis(values, order, axis=2), axis=2)
    n_both = _sums(both[:, chosen], topic, n).astype(np.int64)
    at_ret = np.take_along_axis(running, np.maximum(n_both - 1, 0)[:, :, None], axis=2)[:, :, 0]
    s_ret, s_pair = s_ret.copy(), s_pair.copy()
    s_ret[:, inexact] = np.where(n_both > 0, at_ret, 0.0)
    s_pair[:, inexact] = running[:, :, -1]
    return s_ret, s_pair


@contract(run=Frame("run"), prefs=PreferenceFrame(), measures=Nullable(ListOf(Choice(*PREFERENCE_MEASURES))),
          depth=Nullable(Integer(1)), complete=Boolean())
def evaluate_preferences(
    run: pd.DataFrame,
    prefs: pd.DataFrame,
    measures: Optional[Sequence[str]] = None,
    *,
    depth: Optional[int] = None,
    complete: bool = False,
) -> pd.DataFrame:
    """trec_eval 10.0's preference measures (``prefs_*``) of every run and topic.

    A preference a > b of a judgment group is fulfilled when the run ranks a above b (a
    retrieved and b not counts as fulfilled, "implied"; neither retrieved as possible but
    not fulfilled). ``prefs_simp`` = fulfilled / possible over a topic's preferences,
    ``prefs_avgjg`` the same per judgment group averaged over the groups, ``prefs_pair`` the
    share of groups whose preference on a pair the run follows averaged over the pairs,
    ``prefs_avgjg_Rnonrel`` counts at most R nonrelevant documents per group (as bpref); the
    ``_ret`` forms count only pairs with both documents retrieved, the ``_imp`` forms those
    with at least one (Carterette & Bennett, "Evaluation measures for preference judgments",
    SIGIR 2008; trec_eval's m_prefs_*.c, whose counting rules are followed, quirks included).

    Parameters
    ----------
    run : DataFrame
        A run frame (``run``, ``query_id``, ``doc_id``, ``score``); documents are ranked by
        score, ties by doc_id ascending, as trec_eval's preference measures rank them.
    prefs : DataFrame
        A preference frame (:func:`read_prefs`, :func:`qrels_prefs`).
    measures : list of str, optional
        Names from :data:`PREFERENCE_MEASURES` (default: all, trec_eval's ``-m all_prefs``).
    depth : int, optional
        trec_eval ``-M``: keep the first ``depth`` documents of each ranking.
    complete : bool, default False
        Every topic of the preferences, a run lacking it scoring as an empty ranking
        (trec_eval ``-c``); otherwise the topics the run and the preferences share.

    Returns
    -------
    DataFrame
        ``run``, ``query_id``, ``measure``, ``value``: one row per run, topic and measure.

    See Also
    --------
    read_prefs : read trec_eval's preference format.
    qrels_prefs : the preferences of graded qrels.

    Examples
    --------
    >>> run = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]})
    >>> result = pdeval.evaluate_preferences(run, pdeval.qrels_prefs(qrels), ["prefs_simp", "prefs_num_prefs_poss"])
    >>> result.round(4)
       run query_id               measure   value
    0  run        1            prefs_simp  0.6667
    1  run        1  prefs_num_prefs_poss  3.0000
    """
    names = list(measures) if measures is not None else list(PREFERENCE_MEASURES)
    return evaluate_prepared(Preferences(prefs), run, names, depth=depth, complete=complete)


def evaluate_prepared(structure: "Preferences", run: pd.DataFrame, names: Sequence[str], *, depth: Optional[int] = None,
                      complete: bool = False) -> pd.DataFrame:
    """:func:`evaluate_preferences` with the preferences prepared once (:class:`Preferences`),
    for runs evaluated a batch of files at a time."""
    ret, pos, runs, has = _positions(structure, run, depth)
    # runs x edges arrays: a few million cells at a time bound the memory
    chunk = max(1, _CELLS // max(len(structure.edge_a) + len(structure.pair_low), 1))
    parts = [_measures(structure, ret[i:i + chunk], pos[i:i + chunk]) for i in range(0, max(len(runs), 1), chunk)]
    values = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    if complete:
        has = np.ones_like(has)
    r, t = np.nonzero(has)
    parts = [pd.DataFrame({"run": np.asarray(runs, dtype=object)[r], "query_id": structure.topics[t], "measure": name,
                           "value": values[name][r, t].astype(np.float64)}) for name in names]
    frame = pd.concat(parts, ignore_index=True)
    order = np.lexsort((np.repeat(np.arange(len(names)), len(r)), np.tile(t, len(names)), np.tile(r, len(names))))
    return frame.iloc[order].reset_index(drop=True)
