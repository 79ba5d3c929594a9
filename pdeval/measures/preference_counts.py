"""trec_eval's counts of fulfilled preferences, for every run, topic and judgment group at once.

A run's judged documents get a place per run (a runs x documents matrix, trec_eval's docid
rank). The judgment groups ordered by a few levels (``-R qrels_prefs``, and prefs files of one
sub-group per group) are counted from ranks: per document, how many of each lower level come
after it (:mod:`pdeval.measures.preference_classes`, no preference enumerated); the others
(partial orders, many levels) from their edge list
(:class:`~pdeval.measures.preference_structure.Preferences`). Every count is a sum over sorted
groups (``np.add.reduceat``): no loop over runs, topics, jgs or pairs. The ``prefs_*``
measures registered in :mod:`pdeval.measures.preference_judgments` are read off these counts;
sums whose rounding depends on the order of the additions are added in trec_eval's order, so
the values are its values bit for bit.
"""

from __future__ import annotations

from typing import Optional, Sequence

import numpy as np
import pandas as pd

from pdeval.measures.preference_classes import class_counts, group_sums
from pdeval.measures.preference_structure import Preferences

__all__ = ["evaluate_prepared"]

#: runs x preferences cells counted at once (memory: a few bytes each, in several arrays)
_CELLS = 4_000_000


# --------------------------------------------------------------------------- a run's positions


def _lookup(values: pd.Series, table: np.ndarray) -> np.ndarray:
    """The index of each of ``values`` in ``table`` (strings), -1 where absent (Arrow's index_in:
    no Python string per row)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    array = _arrow(values)
    found = pc.index_in(array, value_set=pa.array(table.astype(str), type=array.type))
    return pc.fill_null(found, -1).to_numpy().astype(np.int64)


def _arrow(values: pd.Series):
    """``values`` as an Arrow string array (no copy when they are Arrow strings already)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        array = pa.array(values) if not hasattr(values.array, "_pa_array") else values.array._pa_array
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        array = pa.array(values.astype(str))
    if not pa.types.is_string(array.type) and not pa.types.is_large_string(array.type):
        array = pc.cast(array, pa.string())
    return array


def _changes(*columns: pd.Series) -> np.ndarray:
    """The rows where any of ``columns`` differs from the row before (row 0 included): every
    row holds the values of the last such row at or above it, whatever the order of the rows."""
    import pyarrow.compute as pc

    n = len(columns[0])
    change = np.zeros(n, dtype=bool)
    change[:1] = True
    for column in columns:
        array = _arrow(column)
        if n > 1:
            differs = pc.fill_null(pc.not_equal(array.slice(1), array.slice(0, n - 1)), True)
            change[1:] |= differs.to_numpy(zero_copy_only=False)
    return np.flatnonzero(change)


def _positions(prefs: Preferences, run: pd.DataFrame, depth: Optional[int]):
    """Per run: which judged documents it retrieves and their place (trec_eval's docid rank:
    retrieved judged documents 0.. in rank order, then the others by doc_id); the runs; which
    topics each run has."""
    if "run" not in run.columns:
        run = run.assign(run="run")
    # a run's rows come in stretches of one (run, topic): each is looked up once, at its start
    starts = _changes(run["run"], run["query_id"])
    stretch_run, names = pd.factorize(run["run"].iloc[starts])
    stretch_topic = _lookup(run["query_id"].iloc[starts], prefs.topics)
    n_runs, n_docs, n_topics = len(names), len(prefs.docs), len(prefs.topics)
    has = np.zeros((n_runs, n_topics), dtype=bool)
    known = stretch_topic >= 0
    has[stretch_run[known], stretch_topic[known]] = True
    if depth is not None:  # -M cuts the whole ranking (every document, judged or not) first
        lengths = np.diff(np.r_[starts, len(run)])
        codes, topic = np.repeat(stretch_run, lengths), np.repeat(stretch_topic, lengths)
        inside = np.flatnonzero(topic >= 0)
        rows = run.iloc[inside].assign(_r=codes[inside], _t=topic[inside])
        rows = rows.sort_values(["_r", "_t", "score", "doc_id"], ascending=[True, True, False, True], kind="stable")
        rows = rows[rows.groupby(["_r", "_t"], sort=False).cumcount().to_numpy() < depth]
        run_code, topic_code = rows["_r"].to_numpy(), rows["_t"].to_numpy()
        name, scores = _lookup(rows["doc_id"], prefs.doc_names), rows["score"].to_numpy(dtype=np.float64)
    else:  # no frame copy: the rows naming a judged document, picked by index
        name = _lookup(run["doc_id"], prefs.doc_names)
        rows = np.flatnonzero(name >= 0)
        stretch = np.searchsorted(starts, rows, side="right") - 1
        rows, stretch = rows[known[stretch]], stretch[known[stretch]]
        run_code, topic_code, name = stretch_run[stretch], stretch_topic[stretch], name[rows]
        scores = run["score"].to_numpy(dtype=np.float64)[rows]
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


class _Counts:
    """trec_eval's counts per (run, jg): fulfilled and possible preferences by kind, relevant
    and nonrelevant documents retrieved, and the Rnonrel recounts. The jgs ordered by a few
    levels are counted from ranks (:func:`class_counts`), the others from their edges."""

    def __init__(self, prefs: Preferences, ret: np.ndarray, pos: np.ndarray):
        n, mg = prefs.n_jgs, prefs.member_jg
        mret, mpos = ret[:, prefs.member_doc], pos[:, prefs.member_doc]
        self.num_rel_ret = group_sums(mret & prefs.member_is_rel, mg, n)
        counted = ~prefs.member_is_rel & (prefs.member_recalc_ec | prefs.member_nonrel)
        self.num_nonrel_ret = group_sums(mret & counted, mg, n)
        self.n_ret = group_sums(mret, mg, n)
        # per run, each jg's members in the run's order; a member's rank among them, and among
        # the jg's nonrelevant ones
        order = np.argsort(mg * (pos.shape[1] + 1) + mpos, axis=1, kind="stable")
        first = np.searchsorted(mg, mg)
        all_rank = np.empty_like(order)
        np.put_along_axis(all_rank, order, np.broadcast_to(np.arange(len(mg)) - first, order.shape), axis=1)
        nonrel = prefs.member_nonrel[order]
        running = np.cumsum(nonrel, axis=1)
        before = running - nonrel - np.where(first > 0, running[:, np.maximum(first - 1, 0)], 0)
        nonrel_rank = np.empty_like(order)
        np.put_along_axis(nonrel_rank, order, before, axis=1)
        nonrel_rank[:, ~prefs.member_nonrel] = np.iinfo(np.int64).max
        counts = _edge_counts(prefs.general, ret, pos, nonrel_rank)
        if prefs.jg_by_level.any():
            by_level = class_counts(mg, prefs.member_grade, prefs.n_grades, order, mret, n)
            counts = {name: np.where(prefs.jg_by_level, by_level[name], value) if name in by_level else value
                      for name, value in counts.items()}
        for name in ("ful_ret", "poss_ret", "ful_imp", "poss_imp", "not_occur"):
            setattr(self, name, counts[name])
        self._recount(prefs, counts, mret, all_rank, nonrel_rank)

    def _recount(self, prefs: Preferences, counts: dict, mret, all_rank, nonrel_rank) -> None:
        """The fulfilled and possible counts of prefs_avgjg_Rnonrel(_ret) where a jg has more
        nonrelevant documents than relevant ones: only the first R nonrelevant ones count."""
        n, mg, ec = prefs.n_jgs, prefs.member_jg, prefs.jg_is_ec
        # every document: the first R nonrelevant ones (R = all relevant of the jg) are kept
        first = prefs.member_nonrel & (nonrel_rank < prefs.num_rel[mg])
        count_b = np.where(mret, all_rank, self.n_ret[:, mg])
        ec_ful = counts["upper_ful"] + group_sums(np.where(first, count_b, 0), mg, n)
        ec_poss = counts["upper_poss"] + prefs.jg_size * prefs.num_rel
        self.recount = (np.where(ec, ec_ful, counts["pa_ful"]), np.where(ec, ec_poss, counts["pa_poss"]))
        # retrieved documents only: the first R nonrelevant retrieved (R = relevant retrieved) for
        # classes, the first R (all relevant) for partial orders, as trec_eval does
        first = prefs.member_nonrel & mret & (nonrel_rank < self.num_rel_ret[:, mg])
        ec_ful = counts["upper_ful_ret"] + group_sums(np.where(first, all_rank, 0), mg, n)
        ec_poss = counts["upper_poss_ret"] + self.n_ret * group_sums(first, mg, n)
        self.recount_ret = (np.where(ec, ec_ful, counts["pa_ful_ret"]), np.where(ec, ec_poss, counts["pa_poss_ret"]))


def _edge_counts(prefs: Preferences, ret: np.ndarray, pos: np.ndarray, nonrel_rank: np.ndarray) -> dict:
    """The counts of :func:`class_counts` (and those of the partial orders' Rnonrel recount,
    ``pa_*``) summed over the edges of ``prefs`` (runs x jgs arrays)."""
    g, n = prefs.edge_jg, prefs.n_jgs
    ra, rb = ret[:, prefs.edge_a], ret[:, prefs.edge_b]
    before = pos[:, prefs.edge_a] < pos[:, prefs.edge_b]
    both, upper = ra & rb, prefs.edge_upper
    # partial orders: the first R nonrelevant documents (R = all relevant of the jg) are kept
    keep = ~prefs.member_nonrel | (nonrel_rank < prefs.num_rel[prefs.member_jg])
    kept = keep[:, prefs.edge_ma] & keep[:, prefs.edge_mb]
    return {
        "ful_ret": group_sums(both & before, g, n), "poss_ret": group_sums(both, g, n),
        "ful_imp": group_sums(ra & ~rb, g, n),
        "poss_imp": group_sums(ra ^ rb, g, n), "not_occur": group_sums(~ra & ~rb, g, n),
        "upper_ful": group_sums(upper & ra & before, g, n),
        "upper_poss": group_sums(np.broadcast_to(upper, ra.shape), g, n),
        "upper_ful_ret": group_sums(upper & both & before, g, n), "upper_poss_ret": group_sums(upper & both, g, n),
        "pa_ful": group_sums(kept & ra & before, g, n), "pa_poss": group_sums(kept, g, n),
        "pa_ful_ret": group_sums(kept & both & before, g, n), "pa_poss_ret": group_sums(kept & both, g, n),
    }


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
        return group_sums(values, t, n_topics)

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
    pairs = _pair_measures(prefs.general, ret, pos)
    if prefs.topic_by_level.any():  # one jg ordered by levels: every pair one edge, its share 0 or 1
        s_ret, s_pair = per_topic(c.ful_ret), per_topic(ful)
        n_ret, n_imp = per_topic(c.poss_ret), per_topic(c.poss_imp)
        by_level = _pair_means(s_ret, s_pair, n_ret, n_imp, per_topic(c.not_occur))
        pairs = {name: np.where(prefs.topic_by_level, by_level[name], value) for name, value in pairs.items()}
    out.update(pairs)
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
    s_ret = group_sums(np.where(both, share, 0.0), topic, n_topics)
    s_imp = group_sums(np.where(one, share, 0.0), topic, n_topics)
    s_pair = s_ret + s_imp
    # shares whose denominator is no power of two are not exact in binary: add those topics'
    # shares in trec_eval's order (retrieved pairs by rank, then the others) to round as it does
    inexact = np.bincount(topic, weights=(total.astype(np.int64) & (total.astype(np.int64) - 1)) != 0,
                          minlength=n_topics) > 0
    if inexact.any():
        s_ret, s_pair = _ordered_pair_sums(prefs, pos, share, both, one, inexact, s_ret, s_pair)
    n_ret, n_imp = group_sums(both, topic, n_topics), group_sums(one, topic, n_topics)
    return _pair_means(s_ret, s_pair, n_ret, n_imp, group_sums(~rl & ~rh, topic, n_topics))


def _pair_means(s_ret, s_pair, n_ret, n_imp, n_none) -> dict:
    """prefs_pair(_ret, _imp) of the sums of the shares and the numbers of pairs by kind."""

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
    n_both = group_sums(both[:, chosen], topic, n).astype(np.int64)
    at_ret = np.take_along_axis(running, np.maximum(n_both - 1, 0)[:, :, None], axis=2)[:, :, 0]
    s_ret, s_pair = s_ret.copy(), s_pair.copy()
    s_ret[:, inexact] = np.where(n_both > 0, at_ret, 0.0)
    s_pair[:, inexact] = running[:, :, -1]
    return s_ret, s_pair


def evaluate_prepared(structure: "Preferences", run: pd.DataFrame, names: Sequence[str], *, depth: Optional[int] = None,
                      complete: bool = False) -> pd.DataFrame:
    """The ``names`` (``prefs_*`` measures) of every run of ``run`` and topic against prepared
    preferences (:class:`Preferences`): ``run``, ``query_id``, ``measure``, ``value``. ``depth``
    is trec_eval's ``-M``, ``complete`` its ``-c``."""
    ret, pos, runs, has = _positions(structure, run, depth)
    # runs x edges arrays: a few million cells at a time bound the memory
    general = structure.general
    per_run = len(general.edge_a) + len(general.pair_low) + len(structure.member_jg) * (4 * structure.n_grades + 12)
    chunk = max(1, _CELLS // max(per_run, 1))
    parts = [_measures(structure, ret[i:i + chunk], pos[i:i + chunk]) for i in range(0, max(len(runs), 1), chunk)]
    values = {name: np.concatenate([part[name] for part in parts]) for name in parts[0]}
    if complete:
        has = np.ones_like(has)
    r, t = np.nonzero(has)  # by run, then topic; each (run, topic) its measures in order
    n = len(names)
    value = np.column_stack([values[name][r, t] for name in names]) if n else np.zeros((len(r), 0))
    return pd.DataFrame({"run": np.repeat(np.asarray(runs, dtype=object)[r], n),
                         "query_id": np.repeat(structure.topics[t], n),
                         "measure": np.tile(np.asarray(names, dtype=object), len(r)),
                         "value": value.astype(np.float64).ravel()})
