"""The preferences of a preference frame, prepared once for every run (trec_eval's prefs model).

A preference frame (``query_id``, ``judgment_group``, ``judgment_subgroup``, ``doc_id``,
``relevance``) states, within each judgment sub-group (jsg) of a judgment group (jg), that a
document of a higher level is preferred to one of a lower level. A jg of one jsg is a complete
ordering by levels (equivalence classes); a jg of several jsgs a partial order closed under
transitivity. :class:`Preferences` turns the frame into integer arrays: the judged documents,
each jg's members and the edges (a, b, jg) of every preference a > b. The measures that read
it are in :mod:`pdeval.measures.preference_counts`.
"""

from __future__ import annotations

import copy

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError

__all__ = ["MAX_LEVELS", "Preferences"]

#: jgs of one sub-group with at most this many levels are counted from ranks by level; those
#: with more (a full ranking given as levels) from their edges
MAX_LEVELS = 16


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
        self._levels()

    def _levels(self) -> None:
        """Which jgs are counted from ranks by level (:mod:`pdeval.measures.preference_classes`):
        those of one sub-group with at most :data:`MAX_LEVELS` levels, all finite; each member's
        level within its jg (0 the lowest; -1 in the other jgs; a jg naming a document twice is
        counted by its edges too); the topics of one such jg, whose
        pair measures follow from its counts; and :attr:`general`, these preferences with the
        edges and pairs of the other jgs and topics only, for the edge counts."""
        rel, jg = self.member_rel, self.member_jg
        order = np.lexsort((rel, jg))
        r, j = rel[order], jg[order]
        new = np.r_[True, (j[1:] != j[:-1]) | (r[1:] != r[:-1])] if len(j) else np.zeros(0, dtype=bool)
        key = np.cumsum(new) - 1
        grade = np.empty(len(j), dtype=np.int64)
        grade[order] = key - key[np.searchsorted(j, j)] if len(j) else key
        n_levels = np.bincount(j[new], minlength=self.n_jgs)
        finite = np.bincount(jg, weights=~np.isfinite(rel), minlength=self.n_jgs) == 0
        pairs = np.unique(jg * max(len(self.docs), 1) + self.member_doc)  # a document on two lines of a jg
        once = np.bincount(pairs // max(len(self.docs), 1), minlength=self.n_jgs) == self.jg_size
        self.jg_by_level = self.jg_is_ec & finite & once & (n_levels <= MAX_LEVELS)
        self.member_grade = np.where(self.jg_by_level[jg], grade, -1)
        self.n_grades = int(n_levels[self.jg_by_level].max()) if self.jg_by_level.any() else 0
        n_topics = len(self.topics)
        self.topic_by_level = ((np.bincount(self.jg_topic, minlength=n_topics) == 1)
                               & (np.bincount(self.jg_topic, weights=self.jg_by_level, minlength=n_topics) == 1))
        general = copy.copy(self)
        edges = ~self.jg_by_level[self.edge_jg]
        for name in ("edge_a", "edge_b", "edge_jg", "edge_ma", "edge_mb", "edge_upper"):
            setattr(general, name, getattr(self, name)[edges])
        pairs = ~self.topic_by_level[self.pair_topic]
        for name in ("pair_low", "pair_high", "pair_low_first", "pair_high_first", "pair_topic"):
            setattr(general, name, getattr(self, name)[pairs])
        self.general = general

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
