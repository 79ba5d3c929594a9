"""trec_eval's preference counts of judgment groups ordered by levels, from ranks, not edges.

Within a judgment group (jg) of one sub-group, a document is preferred to every document of a
lower level (equivalence classes: a total preorder with a few levels, as ``-R qrels_prefs``
makes of graded qrels). Every count of :mod:`pdeval.measures.preference_counts` then follows
from, for each document of the jg in the run's order (trec_eval's docid rank: the retrieved
ones by rank, then the others), how many documents of each lower level come after it and
how many the jg holds: cumulative counts per level within each (run, jg) segment of a runs x
members matrix, ``O(members x levels)`` per run instead of ``O(preferences)``. The counts are
integers, exact whatever the order of the additions, so they equal the edge counts of
:class:`~pdeval.measures.preference_structure.Preferences` bit for bit (tested against them).
"""

from __future__ import annotations

import numpy as np

__all__ = ["class_counts", "group_sums"]


def group_sums(values: np.ndarray, group: np.ndarray, n_groups: int) -> np.ndarray:
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


def _within(flags: np.ndarray, first: np.ndarray, last: np.ndarray) -> tuple:
    """For each column of ``flags`` (runs x members, each jg's members contiguous from column
    ``first`` to ``last`` of its jg): how many flagged columns of its jg are at or before it,
    and how many the jg holds."""
    running = np.cumsum(flags, axis=1, dtype=np.int64)
    base = np.where(first > 0, running[:, np.maximum(first - 1, 0)], 0)
    return running - base, running[:, last] - base


def class_counts(member_jg: np.ndarray, grade: np.ndarray, n_grades: int, order: np.ndarray,
                 retrieved: np.ndarray, n_jgs: int) -> dict:
    """The edge counts of every jg ordered by levels, per run (runs x jgs arrays).

    ``grade``: each member's level within its jg (0 the lowest, -1 for a jg counted by its
    edges); ``order``: per run, the members (columns, grouped by jg) of each jg in the run's
    order; ``retrieved``: runs x members. The counts are those of the preferences a > b:
    ``ful_ret`` (both retrieved, a first), ``poss_ret`` (both retrieved), ``ful_imp`` (a
    retrieved, b not), ``poss_imp`` (one retrieved), ``not_occur`` (neither), and the same
    over the preferences whose b is above the jg's lowest level (``upper_*``: fulfilled with a
    retrieved, possible, fulfilled and possible with both retrieved), as the Rnonrel measures
    recount them."""
    n_members = len(member_jg)
    first = np.searchsorted(member_jg, member_jg)
    last = np.searchsorted(member_jg, member_jg, side="right") - 1
    level = grade[order]  # runs x members, each jg's members in the run's order
    ret = np.take_along_axis(retrieved, order, axis=1)
    shape = level.shape
    # per member, the documents of lower levels after it and in its jg (all, and retrieved ones),
    # and those of the jg's lowest level alone
    after = {name: np.zeros(shape, np.int64) for name in ("all", "ret")}
    below = {name: np.zeros(shape, np.int64) for name in ("all", "ret")}
    lowest = {name: (after[name].copy(), below[name].copy()) for name in ("all", "ret")}
    for g in range(n_grades):  # a few levels: one pass each over the matrix
        above = level > g
        for name, flags in (("all", level == g), ("ret", (level == g) & ret)):
            upto, total = _within(flags, first, last)
            here = (np.where(above, total - upto, 0), np.where(above, total, 0))
            after[name] += here[0]
            below[name] += here[1]
            if g == 0:
                lowest[name] = here
    after_all, after_ret, below_all, below_ret = after["all"], after["ret"], below["all"], below["ret"]

    def sums(values, where=ret):
        return group_sums(np.where(where, values, 0), member_jg, n_jgs) if n_members else np.zeros((shape[0], n_jgs))

    ful = sums(after_all)
    ful_ret = sums(after_ret)
    below_unret = below_all - below_ret
    return {
        "ful_ret": ful_ret,
        "poss_ret": sums(below_ret),
        "ful_imp": ful - ful_ret,
        "poss_imp": sums(below_unret) + sums(below_ret, ~ret),
        "not_occur": sums(below_unret, ~ret),
        "upper_ful": ful - sums(lowest["all"][0]),
        "upper_poss": sums(below_all - lowest["all"][1], True),
        "upper_ful_ret": ful_ret - sums(lowest["ret"][0]),
        "upper_poss_ret": sums(below_ret - lowest["ret"][1]),
    }
