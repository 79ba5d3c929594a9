"""The one shape every measure kernel works on: ranked, judged rows in segments.

A *segment* is one ranked list: one (qrels variant, run, topic). Its rows are the retrieved
documents in trec_eval order; each row holds the document's judgment for that segment's
qrels variant:

* a level ``>= 0`` (judged; relevant when ``>= rel``, the binary threshold θ),
* :data:`POOLED` (``-1``: in the qrels with a negative value, pooled but not judged),
* :data:`ABSENT` (``-2``: not in the qrels of the topic).

Each segment points (``topic``) to a row of a :class:`QrelsTable`, which holds what a
measure needs to know about the judgments of that (variant, topic) regardless of the run:
the judged levels (for R, N and ideal lists) and the number of pooled entries.

Kernels take a :class:`Segments` and return one float per segment, ``NaN`` where the
measure is undefined (the engine turns NaN into 0 unless ``undefined="nan"``). They use the
helpers here (segment sums, within-segment cumulative sums, ranks, condensed views) and
never loop over segments in Python.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Mapping, Optional

import numpy as np

from pdeval.frames.canonical import ABSENT, POOLED

__all__ = ["ABSENT", "POOLED", "Segments", "QrelsTable", "gain_of"]


def gain_of(levels: np.ndarray, gains: Optional[Mapping[int, float]] = None) -> np.ndarray:
    """Gain of each judgment level (MEASURES.md 0.2).

    A level ``>= 1`` has gain equal to itself unless ``gains`` maps it to another value;
    level 0, pooled and absent documents always have gain 0.
    """
    levels = np.asarray(levels)
    gain = np.where(levels > 0, levels, 0).astype(np.float64)
    if gains:
        for level, value in gains.items():
            if int(level) > 0:
                gain[levels == int(level)] = float(value)
    return gain


@dataclass
class QrelsTable:
    """Judgments per (variant, topic) entry, independent of any run.

    ``levels`` holds the judged levels (``>= 0``) of all entries, grouped by entry and sorted
    by level descending within each entry; entry ``e`` owns ``levels[offsets[e]:offsets[e+1]]``.
    ``pooled`` counts the negative (pooled but unjudged) qrels rows of each entry, and
    ``variant`` gives the variant index of each entry (for collection-wide maxima).
    """

    levels: np.ndarray
    offsets: np.ndarray
    pooled: np.ndarray
    variant: np.ndarray
    #: every qrels row (judged or not) as arrays ``entry``, ``level`` (POOLED for negative) and,
    #: when the qrels carry them, ``stratum`` (int codes) and ``inclusion_prob``: what the sampled
    #: estimators (:mod:`pdeval.measures.stratified`, :mod:`pdeval.measures.statap`) need to know
    #: of the judging design
    design: Optional[dict] = None
    _cache: dict = field(default_factory=dict, repr=False)

    @property
    def n_entries(self) -> int:
        return len(self.offsets) - 1

    @cached_property
    def entry_of_level(self) -> np.ndarray:
        return np.repeat(np.arange(self.n_entries), np.diff(self.offsets))

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per entry, how many judged levels satisfy ``mask`` (a boolean array over levels)."""
        return np.bincount(self.entry_of_level, weights=mask, minlength=self.n_entries)

    def num_rel(self, rel: int = 1) -> np.ndarray:
        """R per entry: judged documents with level ``>= rel``."""
        key = ("R", rel)
        if key not in self._cache:
            self._cache[key] = self.count(self.levels >= rel)
        return self._cache[key]

    def num_nonrel(self, rel: int = 1) -> np.ndarray:
        """N per entry: judged documents with ``0 <= level < rel``."""
        key = ("N", rel)
        if key not in self._cache:
            self._cache[key] = self.count(self.levels < rel)
        return self._cache[key]

    def ideal_gains(self, gains: Optional[Mapping[int, float]] = None,
                    order: str = "exact") -> tuple[np.ndarray, np.ndarray]:
        """The ideal list's gains per entry (gain descending, zero gains dropped), and offsets;
        ``order="trec_eval"``: in trec_eval's order (:mod:`pdeval.engine.trec_gains`)."""
        key = ("ideal", _freeze(gains), order)
        if key not in self._cache and order == "trec_eval":
            from pdeval.engine.trec_gains import ideal_walk

            self._cache[key] = ideal_walk(self.levels, self.offsets, gains)
        if key not in self._cache:
            gain = gain_of(self.levels, gains)
            entries = self.entry_of_level
            # levels are sorted descending within entries: so are their gains unless a gains
            # mapping reorders them, and only then is a sort needed
            if len(gain) > 1 and not ((gain[1:] <= gain[:-1]) | (entries[1:] != entries[:-1])).all():
                order = np.lexsort((-gain, entries))
                gain, entries = gain[order], entries[order]
            keep = gain > 0
            entries = entries[keep]
            counts = np.bincount(entries, minlength=self.n_entries)
            offsets = np.zeros(self.n_entries + 1, dtype=np.int64)
            np.cumsum(counts, out=offsets[1:])
            self._cache[key] = (gain[keep], offsets)
        return self._cache[key]

    def gain_max(self, gains: Optional[Mapping[int, float]] = None) -> np.ndarray:
        """Per entry, the largest gain over all topics of the entry's qrels variant."""
        key = ("gain_max", _freeze(gains))
        if key not in self._cache:
            gain = gain_of(self.levels, gains)
            n_variants = int(self.variant.max()) + 1 if len(self.variant) else 0
            best = np.zeros(n_variants)
            nonempty = np.flatnonzero(np.diff(self.offsets) > 0)
            if len(gain):  # the largest gain of each entry, then of each variant
                np.maximum.at(best, self.variant[nonempty], np.maximum.reduceat(gain, self.offsets[nonempty]))
            self._cache[key] = best[self.variant]
        return self._cache[key]


def _renumbered_runs(offsets: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Runs of tied scores of lists renumbered 1, 2, ... (a condensed list): per row, the first
    and last new rank of the rows that shared its run (``first``: the old first rank)."""
    n = len(first)
    starts = np.zeros(n, dtype=bool)
    starts[offsets[:-1][np.diff(offsets) > 0]] = True
    if n:
        starts[1:] |= first[1:] != first[:-1]
    bounds = np.flatnonzero(starts)
    ends = np.append(bounds[1:], n)
    block = np.cumsum(starts) - 1
    list_start = np.repeat(offsets[:-1], np.diff(offsets))
    return np.column_stack((bounds[block] - list_start + 1, ends[block] - list_start)).astype(np.int64)


def _freeze(gains: Optional[Mapping[int, float]]):
    return None if not gains else tuple(sorted((int(k), float(v)) for k, v in gains.items()))


@dataclass
class Segments:
    """Ranked lists laid out end to end, with the qrels facts of each list.

    ``rel`` holds one judgment per retrieved row (a level, POOLED or ABSENT); segment ``s``
    owns ``rel[offsets[s]:offsets[s+1]]`` in rank order; ``topic[s]`` is its entry in
    ``qrels``. Derived arrays (ranks, segment ids) and views (condensed, cut) are cached.
    """

    rel: np.ndarray
    offsets: np.ndarray
    topic: np.ndarray
    qrels: QrelsTable
    #: explicit 1-based ranks of the rows when only some rows of each list are laid out (the
    #: rows the qrels judge); None when the rows are the whole lists (rank = position)
    ranks: Optional[np.ndarray] = None
    #: per-row sampling information of sampled qrels (``stratum`` codes, ``-1`` outside the
    #: qrels; ``inclusion_prob``, NaN outside), aligned with ``rel``; None for plain qrels
    info: Optional[dict] = None
    #: per row, the first and last rank (columns 0 and 1) of the run of tied scores the row
    #: belongs to, when a measure asked for them (``ties="mean"``); else None
    ties: Optional[np.ndarray] = None
    #: the engine option ``ties``: ``"expected"`` asks the kernels for the expected value over
    #: the orders of each run of tied scores (:attr:`ties` then holds the runs); the other
    #: orders are laid out as rows, so a kernel reads them as any ranking
    tie_mode: str = "trec"
    _views: dict = field(default_factory=dict, repr=False)

    # ---- layout -------------------------------------------------------------------------
    @property
    def n_segments(self) -> int:
        return len(self.offsets) - 1

    @cached_property
    def lengths(self) -> np.ndarray:
        """Number of rows (retrieved documents) of each segment."""
        return np.diff(self.offsets)

    @cached_property
    def segment_of_row(self) -> np.ndarray:
        kind = np.int32 if self.n_segments < np.iinfo(np.int32).max else np.int64
        return np.repeat(np.arange(self.n_segments, dtype=kind), self.lengths)

    @cached_property
    def start_of_row(self) -> np.ndarray:
        """For each row, the index of the first row of its segment."""
        return np.repeat(self.offsets[:-1], self.lengths)

    @cached_property
    def rank(self) -> np.ndarray:
        """1-based rank of each row within its list."""
        if self.ranks is not None:
            return self.ranks
        return np.arange(1, len(self.rel) + 1, dtype=np.int64) - self.start_of_row

    # ---- per-segment reductions ---------------------------------------------------------
    def sum(self, values: np.ndarray) -> np.ndarray:
        """Per-segment sum of a per-row array (left to right, float64)."""
        values = np.asarray(values, dtype=np.float64)
        out = np.zeros(self.n_segments)
        nonempty = self.lengths > 0
        if nonempty.any():
            out[nonempty] = np.add.reduceat(values, self.offsets[:-1][nonempty])
        return out

    def count(self, mask: np.ndarray) -> np.ndarray:
        """Per-segment number of rows where ``mask`` holds."""
        marked = np.flatnonzero(mask)
        return np.diff(np.searchsorted(marked, self.offsets)).astype(np.float64)

    def cumsum(self, values: np.ndarray) -> np.ndarray:
        """Within-segment inclusive cumulative sum of a per-row array.

        Integer and boolean input is summed exactly in int64; float input in float64.
        """
        values = np.asarray(values)
        if values.dtype == bool or np.issubdtype(values.dtype, np.integer):
            total = np.cumsum(values, dtype=np.int64)
        else:
            total = np.cumsum(values, dtype=np.float64)
        if len(total) == 0:
            return total
        prefix = np.concatenate((np.zeros(1, dtype=total.dtype), total))
        return total - prefix[self.start_of_row]

    def per_row(self, per_segment: np.ndarray) -> np.ndarray:
        """Broadcast a per-segment array to the rows of each segment."""
        return np.repeat(np.asarray(per_segment), self.lengths)

    # ---- work at selected rows only -----------------------------------------------------
    # Most measures only add something up at the relevant rows (a few per cent of a ranking).
    # These helpers take sorted row indices ``at`` and never build a full-length array but
    # the masks they are given.
    def segment_of(self, at: np.ndarray) -> np.ndarray:
        """The segment of each row index in ``at``."""
        if len(at) == len(self.rel):  # sorted distinct indices of every row: all rows, in order
            return self.segment_of_row
        return self.segment_of_row[at]

    def rank_at(self, at: np.ndarray) -> np.ndarray:
        """1-based ranks of the rows ``at``."""
        if len(at) == len(self.rel):
            return self.rank
        if self.ranks is not None:
            return self.ranks[at]
        if "rank" in self.__dict__:  # the ranks of every row are at hand: one gather
            return self.rank[at]
        return at - self.offsets[self.segment_of(at)] + 1

    def count_above(self, rows: np.ndarray, at: np.ndarray) -> np.ndarray:
        """For each row in ``at``, how many of the (sorted) row indices ``rows`` lie above it
        in its list: e.g. ``count_above(seg.nonrel_rows(), seg.relevant_rows())`` is na(i)."""
        if rows is at and len(at) == len(self.rel) and self.ranks is None:  # all rows: the rank above
            return self.rank - 1
        if len(rows) == 0:
            return np.zeros(len(at), dtype=np.int64)
        segment = self.segment_of(at)
        if rows is at:  # each row's place among the rows of its list: no search needed
            first = np.flatnonzero(np.concatenate(([True], segment[1:] != segment[:-1])))
            return np.arange(len(at)) - np.repeat(first, np.diff(np.append(first, len(at))))
        if len(at) * 16 > len(self.rel):  # many rows asked: one pass over the rows beats two searches each
            before = np.zeros(len(self.rel) + 1, dtype=np.int32 if len(self.rel) < 2**31 else np.int64)
            before[np.asarray(rows) + 1] = 1
            np.cumsum(before, out=before)  # before[i]: how many of ``rows`` lie above row i
            if len(at) == len(self.rel):  # all rows, in order
                return (before[:-1] - before[self.start_of_row]).astype(np.int64)
            return (before[at] - before[self.offsets[segment]]).astype(np.int64)
        return np.searchsorted(rows, at) - np.searchsorted(rows, self.offsets[segment])

    def sum_at(self, at: np.ndarray, values: np.ndarray) -> np.ndarray:
        """Per-segment sum of ``values`` given at the rows ``at`` (in row order)."""
        return np.bincount(self.segment_of(at), weights=values, minlength=self.n_segments)

    # ---- judgments ----------------------------------------------------------------------
    def _cached(self, key, make):
        if key not in self._views:
            self._views[key] = make()
        return self._views[key]

    def is_rel(self, rel: int = 1) -> np.ndarray:
        """Rows that are judged relevant (level ``>= rel``); computed once per view."""
        return self._cached(("is_rel", rel), lambda: self.rel >= rel)

    def is_nonrel(self, rel: int = 1) -> np.ndarray:
        """Rows that are judged nonrelevant (``0 <= level < rel``); computed once per view."""
        if rel == 1:  # the usual threshold: level 0 exactly, one pass
            return self._cached(("is_nonrel", rel), lambda: self.rel == 0)
        return self._cached(("is_nonrel", rel), lambda: (self.rel >= 0) & (self.rel < rel))

    def relevant_rows(self, rel: int = 1) -> np.ndarray:
        """Sorted indices of the judged relevant rows (computed once per view)."""
        return self._cached(("relevant_rows", rel), lambda: np.flatnonzero(self.is_rel(rel)))

    def nonrel_rows(self, rel: int = 1) -> np.ndarray:
        """Sorted indices of the judged nonrelevant rows (computed once per view)."""
        return self._cached(("nonrel_rows", rel), lambda: np.flatnonzero(self.is_nonrel(rel)))

    def is_judged(self) -> np.ndarray:
        return self.rel >= 0

    def gain(self, gains: Optional[Mapping[int, float]] = None) -> np.ndarray:
        """Gain of each row (0 for level 0, pooled and absent)."""
        return gain_of(self.rel, gains)

    def num_rel(self, rel: int = 1) -> np.ndarray:
        """R of each segment's topic (retrieved or not)."""
        return self.qrels.num_rel(rel)[self.topic]

    def num_nonrel(self, rel: int = 1) -> np.ndarray:
        """N of each segment's topic (retrieved or not)."""
        return self.qrels.num_nonrel(rel)[self.topic]

    def ideal(self, gains: Optional[Mapping[int, float]] = None, depth: Optional[int] = None,
              order: str = "exact") -> "Segments":
        """The ideal lists (MEASURES.md 0.7) as segments of gains, one per segment here.

        The returned object's ``rel`` holds the *gains* (float) of the ideal list of each
        segment's topic, sorted descending, zero gains dropped; with ``depth``, only their
        first ``depth`` ranks (for a measure with a cutoff). ``order="trec_eval"``: the gains
        in trec_eval's order (:mod:`pdeval.engine.trec_gains`), which differs for fractional gains.
        """
        gain, offsets = self.qrels.ideal_gains(gains, order)
        starts, ends = offsets[self.topic], offsets[self.topic + 1]
        lengths = ends - starts if depth is None else np.minimum(ends - starts, int(depth))
        new_offsets = np.zeros(self.n_segments + 1, dtype=np.int64)
        np.cumsum(lengths, out=new_offsets[1:])
        index = np.repeat(starts - new_offsets[:-1], lengths) + np.arange(new_offsets[-1])
        return Segments(gain[index], new_offsets, self.topic, self.qrels)

    # ---- views --------------------------------------------------------------------------
    def select(self, keep: np.ndarray, *, keep_ranks: bool = False) -> "Segments":
        """The same segments with only the rows where ``keep`` holds (order preserved).

        The kept rows are renumbered 1, 2, ... (a new, shorter list) unless ``keep_ranks``.
        """
        counts = np.bincount(self.segment_of_row[keep], minlength=self.n_segments)
        offsets = np.zeros(self.n_segments + 1, dtype=np.int64)
        np.cumsum(counts, out=offsets[1:])
        ranks = self.rank[keep] if keep_ranks and self.ranks is not None else None
        info = None if self.info is None else {name: values[keep] for name, values in self.info.items()}
        ties = None
        if self.ties is not None and keep_ranks:
            ties = self.ties[keep]
        elif self.ties is not None and self.tie_mode == "expected":  # runs of the renumbered list
            ties = _renumbered_runs(offsets, self.ties[keep][:, 0])
        return Segments(self.rel[keep], offsets, self.topic, self.qrels, ranks=ranks, info=info, ties=ties,
                        tie_mode=self.tie_mode)

    def condensed(self) -> "Segments":
        """The condensed lists (MEASURES.md 0.4): unjudged rows (pooled, absent) removed."""
        if "condensed" not in self._views:
            judged = self.is_judged()
            whole = judged.all() and self.ranks is None  # nothing to remove, ranks are positions
            self._views["condensed"] = self if whole else self.select(judged)
        return self._views["condensed"]

    def without_pooled(self) -> "Segments":
        """The lists with pooled-but-unjudged rows removed (absent rows stay)."""
        if self.ranks is not None:
            raise RuntimeError("without_pooled needs whole lists; this measure must not be marked sparse")
        if "without_pooled" not in self._views:
            self._views["without_pooled"] = self.select(self.rel != POOLED)
        return self._views["without_pooled"]

    def cut(self, depth: Optional[int]) -> "Segments":
        """The lists cut to their first ``depth`` rows (trec_eval ``-M``)."""
        if depth is None:
            return self
        key = ("cut", int(depth))
        if key not in self._views:
            if self.tie_mode == "expected" and self.ties is not None:
                # every order of a run that starts above the cut may bring any of its rows above
                # it: whole runs are kept (the kernels weigh each row by its share above the cut)
                self._views[key] = self.select(self.ties[:, 0] <= depth, keep_ranks=True)
                return self._views[key]
            view = self.select(self.rank <= depth, keep_ranks=True)
            if view.ties is not None:  # a run of ties ends at the cut like the list does
                view.ties = np.column_stack((view.ties[:, 0], np.minimum(view.ties[:, 1], depth)))
            self._views[key] = view
        return self._views[key]
