"""trec_eval's order of the ideal list's gains, for gains that are not integers.

trec_eval 10.0 (``gain_init.c``) lists a topic's gain levels (the ``level=gain`` parameters
first, then the levels 0..max judged level not given, gain = level) and sorts them with
``qsort`` and a comparison that returns the *integer-truncated* difference of two gains: gains
less than 1 apart compare equal, so ``-m ndcg.1=0.5`` leaves level 1 (gain 0.5) below level 0
(gain 0). Its ideal list then walks the levels from the top of that order, each level's
documents in turn, and stops at the first level with documents whose gain is not positive
(or at once when the top level's gain is not positive). With integer gains that is the
exact order; with fractional gains the ideal DCG can differ (``ndcg.1=0.5`` on NIST's
``qrels.rel_level``: 0.4576 where the exact order gives 0.3829).

glibc's ``qsort`` (2.36 here, and every glibc since 2.39) is a top-down merge sort that
keeps the left element on a tie; :func:`trec_order` reproduces it, so the order is the one
trec_eval's binary prints. Parameters are taken in level order (pdeval keeps the gains as a
mapping sorted by level), which is trec_eval's order unless ``-m`` gives them otherwise.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

__all__ = ["ideal_walk", "trec_order"]


def _truncated(a: float, b: float) -> int:
    """C's ``(int)(a - b)``: the difference truncated toward zero."""
    return int(a - b)


def _merge_sort(items: list) -> list:
    """glibc's ``msort``: split n into n/2 and the rest, merge taking the left on ``<= 0``."""
    if len(items) <= 1:
        return items
    half = len(items) // 2
    left, right = _merge_sort(items[:half]), _merge_sort(items[half:])
    merged, i, j = [], 0, 0
    while i < len(left) and j < len(right):
        if _truncated(left[i][1], right[j][1]) <= 0:
            merged.append(left[i])
            i += 1
        else:
            merged.append(right[j])
            j += 1
    return merged + left[i:] + right[j:]


def trec_order(top: int, gains: Optional[Mapping[int, float]]) -> list:
    """trec_eval's sorted (level, gain) list of a topic whose judged levels go up to ``top``."""
    given = [(int(level), float(gain)) for level, gain in sorted((gains or {}).items())]
    named = {level for level, _ in given}
    items = given + [(level, float(level)) for level in range(top + 1) if level not in named]
    return _merge_sort(items)


def ideal_walk(levels: np.ndarray, offsets: np.ndarray, gains: Optional[Mapping[int, float]]):
    """The ideal list's gains per entry in trec_eval's order, and their offsets.

    ``levels`` are the judged levels (>= 0) of every entry, sorted descending within each
    entry (:class:`pdeval.engine.segments.QrelsTable`). One sort per distinct top level (a
    handful), then one lexsort over every judged document.
    """
    n_entries = len(offsets) - 1
    counts = np.diff(offsets)
    entry = np.repeat(np.arange(n_entries), counts)
    top = np.where(counts > 0, levels[np.minimum(offsets[:-1], max(len(levels) - 1, 0))] if len(levels) else 0, 0)
    position = np.zeros(len(levels), dtype=np.int64)  # place of the level in the walk (0 = first)
    level_gain = np.zeros(len(levels), dtype=np.float64)
    stop = np.full(n_entries, np.iinfo(np.int64).max)  # the walk's place where it stops
    for value in np.unique(top[counts > 0]):
        order = trec_order(int(value), gains)[::-1]  # the walk: from the top of the sort down
        place, gain_at = np.zeros(int(value) + 1, dtype=np.int64), np.zeros(int(value) + 1)
        for i, (level, gain) in enumerate(order):
            if 0 <= level <= value:  # parameters of levels the topic lacks take no document
                place[level], gain_at[level] = i, gain
        mine = np.flatnonzero((top == value) & (counts > 0))
        rows = np.isin(entry, mine)
        position[rows] = place[levels[rows]]
        level_gain[rows] = gain_at[levels[rows]]
        if order[0][1] <= 0:  # the top of the sort has no positive gain: no ideal list
            stop[mine] = -1
        stopping = rows & (level_gain <= 0)  # levels with documents whose gain is not positive
        if stopping.any():
            np.minimum.at(stop, entry[stopping], position[stopping])
    keep = position < stop[entry]
    sort = np.lexsort((position, entry))
    sort = sort[keep[sort]]
    gain, kept_entry = level_gain[sort], entry[sort]
    new_offsets = np.zeros(n_entries + 1, dtype=np.int64)
    np.cumsum(np.bincount(kept_entry, minlength=n_entries), out=new_offsets[1:])
    return gain, new_offsets
