"""Measures computed on many label draws at once, by the measures' own kernels.

A :class:`DrawnLists` holds ranked lists (rows in trec_eval order, lists by group offsets)
whose unjudged rows carry drawn grades: a matrix of grade codes of shape (draws x rows).
:func:`drawn_values` lays the draws out as extra segments (one per draw and list) and runs the
registered kernel of each measure (:mod:`pdeval.measures`) on them once, so a measure has one
implementation: the engine's. What differs from :func:`pdeval.evaluate` is the judgments each
segment sees (:class:`DrawnQrels`): R and the ideal list follow the drawn labels (Fröbe et al.,
ECIR 2023), a drawn relevant document of the ranking counts in R and enters the ideal list. With
every unjudged row drawn nonrelevant the values are exactly the engine's (checked in the tests
against :func:`pdeval.evaluate`).

Supported (others raise :class:`~pdeval.errors.MeasureError`): ``P@k``, ``R@k``, ``AP`` and
``AP@k``, ``RR`` and ``RR@k``, ``nDCG`` and ``nDCG@k`` (trec_eval's linear gains or
``gains=``; the ideal list in the exact order of the gains), ``RBP`` (``p``, ``rel``,
``gain_max``, ``@k``). Each measure reads the rows up to its own cutoff only (a drawn document
beyond the cutoff neither scores nor counts in R or the ideal list), so its value does not
depend on the other measures asked for.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from functools import cached_property
from typing import Optional

import numpy as np

from pdeval.engine.ranking import tie_order
from pdeval.engine.segments import Segments, gain_of
from pdeval.errors import MeasureError
from pdeval.measures import Measure

#: measures the estimator can draw labels for: a value depends only on the labels of the
#: retrieved documents, R and the ideal list
SUPPORTED = ("P", "R", "AP", "RR", "nDCG", "RBP")


@dataclass
class DrawnLists:
    """Ranked lists with judged and drawn grades."""

    offsets: np.ndarray  # (n_lists + 1,) row bounds
    position: np.ndarray  # (n_rows,) 0-based rank within the list
    topic_of_list: np.ndarray  # (n_lists,) topic code
    codes: np.ndarray  # (n_rows,) index of each row's judged grade in ``grades``; -1: unjudged (drawn)
    grades: np.ndarray  # (n_grades,) the judged levels of the collection, ascending, >= 0
    topic_counts: np.ndarray  # (n_topics x n_grades) judged documents per grade
    #: the engine option ``ties`` and, unless ``"trec"``, per row the first and last rank of its run of
    #: tied scores (:attr:`pdeval.engine.segments.Segments.ties`)
    tie_mode: str = "trec"
    ties: Optional[np.ndarray] = None

    @property
    def unjudged(self) -> np.ndarray:
        return self.codes < 0

    def within(self, cutoff: Optional[int]) -> np.ndarray:
        """The rows a measure cut at ``cutoff`` reads: its first ``cutoff`` rows, and with
        ``ties="expected"`` every row of a run of tied scores that starts above the cut."""
        if cutoff is None:
            return np.ones(len(self.position), bool)
        if self.tie_mode == "expected":
            return self.ties[:, 0] <= cutoff
        return self.position < cutoff

    @cached_property
    def list_of_row(self) -> np.ndarray:
        return np.repeat(np.arange(len(self.topic_of_list)), np.diff(self.offsets))

    def tiled(self, n_draws: int) -> tuple[np.ndarray, np.ndarray]:
        """The rank and the segment of every row of ``n_draws`` copies of the lists (kept for the next chunk)."""
        if getattr(self, "_tiled", (None,))[0] != n_draws:
            self._tiled = (n_draws, np.tile(self.position + 1, n_draws),
                           np.repeat(np.arange(n_draws * len(self.topic_of_list), dtype=np.intp),
                                     np.tile(np.diff(self.offsets), n_draws)))
        return self._tiled[1], self._tiled[2]

    def drawn(self) -> np.ndarray:
        """The lists with an unjudged row: only their values vary over the draws."""
        return np.add.reduceat(self.unjudged, self.offsets[:-1]) > 0 if len(self.codes) else np.zeros(0, bool)

    def take(self, keep: np.ndarray) -> "DrawnLists":
        """The lists where ``keep`` holds (their unjudged rows in the same order)."""
        rows = keep[self.list_of_row]
        lengths = np.diff(self.offsets)[keep]
        return DrawnLists(offsets=np.r_[0, np.cumsum(lengths)], position=self.position[rows],
                          topic_of_list=self.topic_of_list[keep], codes=self.codes[rows], grades=self.grades,
                          topic_counts=self.topic_counts, tie_mode=self.tie_mode,
                          ties=None if self.ties is None else self.ties[rows])


class DrawnQrels:
    """The judgments each (draw, list) segment sees: the topic's judged documents per grade
    plus the drawn grades of the list's unjudged rows up to a cutoff (``counts``: entries x
    grades). It answers what the kernels ask of a :class:`~pdeval.engine.segments.QrelsTable`
    (R, the largest gain of the collection) from counts, never listing the judged documents."""

    def __init__(self, counts: np.ndarray, grades: np.ndarray):
        self.counts, self.levels = counts, grades

    def num_rel(self, rel: int = 1) -> np.ndarray:
        return self.counts[:, self.levels >= rel].sum(axis=1).astype(np.float64)

    def num_nonrel(self, rel: int = 1) -> np.ndarray:
        return self.counts[:, self.levels < rel].sum(axis=1).astype(np.float64)

    def gain_max(self, gains=None) -> np.ndarray:
        return np.full(len(self.counts), float(gain_of(self.levels, gains).max(initial=0.0)))


class DrawnSegments(Segments):
    """One segment per (draw, list); its qrels entry is its own row of a :class:`DrawnQrels`,
    and its ideal list is built from those counts, cut at the measure's depth. ``codes``: each
    row's index in the levels ``qrels.levels`` (its gain is read from a table of the levels)."""

    codes: Optional[np.ndarray] = None

    def gain(self, gains=None) -> np.ndarray:
        return gain_of(self.qrels.levels, gains)[self.codes]

    def ideal(self, gains=None, depth: Optional[int] = None, order: str = "exact") -> Segments:
        gain = gain_of(self.qrels.levels, gains)
        by_gain = np.argsort(-gain, kind="stable")
        by_gain = by_gain[gain[by_gain] > 0]
        counts = self.qrels.counts[:, by_gain]
        if depth is not None:  # the first ``depth`` ranks of the ideal list only
            ends = np.minimum(np.cumsum(counts, axis=1), int(depth))
            counts = np.diff(ends, axis=1, prepend=0)
        lengths = counts.sum(axis=1)
        offsets = np.zeros(len(counts) + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        rel = np.repeat(np.tile(gain[by_gain], len(counts)), counts.reshape(-1))
        return Segments(rel, offsets, self.topic, self.qrels)


def _drawn_counts(lists: DrawnLists, codes: np.ndarray, unjudged: np.ndarray, cutoff: Optional[int]) -> np.ndarray:
    """(draws * lists x grades): the judged counts of each list's topic plus its drawn grades
    (``unjudged``: draws x rows) up to ``cutoff``."""
    n_draws, n_lists, n_grades = len(codes), len(lists.topic_of_list), len(lists.grades)
    if unjudged.shape[0] == 1:  # the same rows drawn in every draw
        drawn = unjudged[0] & lists.within(cutoff)
        entry = (np.arange(n_draws)[:, None] * n_lists + lists.list_of_row[drawn][None, :]) * n_grades + codes[:, drawn]
    else:  # reordered within tied scores: each draw its own rows
        draw, row = np.nonzero(unjudged & lists.within(cutoff)[None, :])
        entry = (draw * n_lists + lists.list_of_row[row]) * n_grades + codes[draw, row]
    counts = np.bincount(entry.reshape(-1), minlength=n_draws * n_lists * n_grades).reshape(-1, n_grades)
    return counts + np.tile(lists.topic_counts[lists.topic_of_list].astype(np.int64), (n_draws, 1))


def drawn_values(lists: DrawnLists, codes: np.ndarray, measures: list[Measure]) -> np.ndarray:
    """(draws x lists x measures) values of the measures on the lists with the grade codes
    ``codes`` (draws x rows), 0 where a measure is undefined (as :func:`pdeval.evaluate`)."""
    n_draws, n_rows = codes.shape
    n_lists = len(lists.topic_of_list)
    offsets = np.append((lists.offsets[:-1][None, :] + n_rows * np.arange(n_draws)[:, None]).reshape(-1),
                        n_draws * n_rows)
    ties = None if lists.ties is None else np.tile(lists.ties, (n_draws, 1))
    unjudged = lists.unjudged[None, :]
    if lists.tie_mode in ("optimistic", "pessimistic"):  # each draw's tied rows in its best / worst order
        moved, _ = tie_order(offsets, ties, codes.reshape(-1), lists.tie_mode == "optimistic")
        codes = codes.reshape(-1)[moved].reshape(n_draws, n_rows)
        unjudged = np.tile(lists.unjudged, n_draws)[moved].reshape(n_draws, n_rows)
    base = DrawnSegments(lists.grades[codes].reshape(-1), offsets, np.arange(n_draws * n_lists), None, ties=ties,
                         tie_mode=lists.tie_mode)
    base.codes = codes.reshape(-1)
    base.rank, base.segment_of_row = lists.tiled(n_draws)  # the rows' derived arrays, shared by the measures' views
    out = np.empty((n_draws, n_lists, len(measures)))
    judged = {}  # the judgments the segments see, per cutoff
    for index, measure in enumerate(measures):  # the few measures asked; never the draws
        if measure.cutoff not in judged:
            judged[measure.cutoff] = DrawnQrels(_drawn_counts(lists, codes, unjudged, measure.cutoff), lists.grades)
        seg = copy.copy(base)  # R and the ideal list are the measure's
        seg.qrels = judged[measure.cutoff]
        values = measure.compute(seg).reshape(n_draws, n_lists)
        out[:, :, index] = np.where(np.isnan(values), 0.0, values)
    return out


def check_supported(measure: Measure) -> None:
    """Refuse a measure the estimator cannot draw for, naming the ones it can."""
    if measure.name not in SUPPORTED:
        raise MeasureError(
            f"estimate cannot draw labels for {measure}: it supports {', '.join(SUPPORTED)} (with their cutoffs "
            "and parameters), the measures whose value depends only on the labels of the retrieved "
            "documents, R and the ideal list"
        )
    if measure.judged_only:
        raise MeasureError(f"{measure}: a primed measure ignores unjudged documents; estimate the unprimed one")
    params = dict(measure.params)
    if measure.name == "nDCG" and params.get("dcg") != "trec":
        raise MeasureError(f"{measure}: estimate supports trec_eval's nDCG (dcg=trec) only")
    if measure.name == "RBP" and (params.get("residual") or params.get("ties") != "trec"):
        raise MeasureError(f"{measure}: estimate supports RBP without residual and with ties=trec")
    if params.get("depth") is not None:
        raise MeasureError(f"{measure}: estimate takes depth= as its own parameter, not the measure's")


__all__ = ["DrawnLists", "DrawnQrels", "DrawnSegments", "SUPPORTED", "check_supported", "drawn_values"]
