"""Measures computed on many label draws at once: the kernels of the bootstrap estimator.

A :class:`DrawnLists` holds ranked lists (rows in trec_eval order, lists by group offsets)
whose unjudged rows carry drawn grades: a matrix ``levels`` of shape (draws x rows). Each
kernel returns a (draws x lists) matrix. The definitions are trec_eval's (and pdeval's engine),
with the drawn labels in place of "unjudged = nonrelevant", and R and the ideal list following
the drawn labels (Fröbe et al., ECIR 2023): a drawn relevant document of the ranking counts in R
and enters the ideal list. With every unjudged row drawn nonrelevant the kernels give exactly
the engine's values (checked in the tests against :func:`pdeval.evaluate`).

Supported (others raise :class:`~pdeval.errors.MeasureError`): ``P@k``, ``R@k``, ``AP`` and
``AP@k``, ``RR`` and ``RR@k``, ``nDCG`` and ``nDCG@k`` (trec_eval's linear gains or
``gains=``), ``RBP`` (``p``, ``rel``, ``gain_max``, ``@k``). Each measure reads the rows up to
its own cutoff only (a drawn document beyond the cutoff neither scores nor counts in R or the
ideal list), so its value does not depend on the other measures asked for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

from pdeval.engine.segments import gain_of
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

    @property
    def unjudged(self) -> np.ndarray:
        return self.codes < 0

    def segment_sum(self, values: np.ndarray) -> np.ndarray:
        """(draws x lists) sums of (draws x rows) ``values`` over each list's rows."""
        return np.add.reduceat(values, self.offsets[:-1], axis=1)

    def within(self, cutoff: Optional[int]) -> np.ndarray:
        return np.ones(len(self.position), bool) if cutoff is None else self.position < cutoff


def _gain_of_grades(grades: np.ndarray, gains: Optional[dict]) -> np.ndarray:
    return gain_of(grades, gains)


def _relevant_judged(lists: DrawnLists, rel: int) -> np.ndarray:
    """R from the judgments alone, per list."""
    return lists.topic_counts[:, lists.grades >= rel].sum(axis=1)[lists.topic_of_list]


def _num_rel(lists: DrawnLists, relevant: np.ndarray, cutoff: Optional[int], rel: int) -> np.ndarray:
    drawn = lists.segment_sum(relevant & (lists.unjudged & lists.within(cutoff))[None, :])
    return _relevant_judged(lists, rel)[None, :] + drawn


def _divide(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, 0 where den is 0 (trec_eval's value of an undefined measure)."""
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), 0.0)


def precision(lists: DrawnLists, codes: np.ndarray, measure: Measure) -> np.ndarray:
    relevant = lists.grades[codes] >= measure.param("rel")
    return lists.segment_sum(relevant & lists.within(measure.cutoff)[None, :]) / measure.cutoff


def recall(lists: DrawnLists, codes: np.ndarray, measure: Measure) -> np.ndarray:
    rel = measure.param("rel")
    relevant = lists.grades[codes] >= rel
    hits = lists.segment_sum(relevant & lists.within(measure.cutoff)[None, :])
    return _divide(hits, _num_rel(lists, relevant, measure.cutoff, rel))


def average_precision(lists: DrawnLists, codes: np.ndarray, measure: Measure) -> np.ndarray:
    rel = measure.param("rel")
    relevant = lists.grades[codes] >= rel
    within = lists.within(measure.cutoff)
    hits = np.cumsum(relevant, axis=1)
    start = lists.offsets[:-1]
    # relevant documents above each row in its own list: subtract the count before the list
    before = np.concatenate([np.zeros((len(hits), 1)), hits[:, :-1]], axis=1)[:, start]
    hits_in_list = hits - np.repeat(before, np.diff(lists.offsets), axis=1)
    contribution = np.where(relevant & within[None, :], hits_in_list / (lists.position + 1.0), 0.0)
    return _divide(lists.segment_sum(contribution), _num_rel(lists, relevant, measure.cutoff, rel))


def reciprocal_rank(lists: DrawnLists, codes: np.ndarray, measure: Measure) -> np.ndarray:
    relevant = (lists.grades[codes] >= measure.param("rel")) & lists.within(measure.cutoff)[None, :]
    weight = np.where(relevant, 1.0 / (lists.position + 1.0), 0.0)
    return np.maximum.reduceat(weight, lists.offsets[:-1], axis=1)


def _discounted_ideal(counts: np.ndarray, gain: np.ndarray, cutoff: Optional[int], longest: int) -> np.ndarray:
    """Σ gain / log2(r + 1) over the ideal list of ``counts[..., j]`` documents of gain
    ``gain[j]`` (sorted by gain, descending), cut at ``cutoff``."""
    size = int(counts.sum(axis=-1).max(initial=0)) if cutoff is None else cutoff
    discount = np.concatenate(([0.0], np.cumsum(1.0 / np.log2(np.arange(2, max(size, longest) + 2)))))
    order = np.argsort(-gain, kind="stable")
    ends = np.cumsum(counts[..., order], axis=-1)
    starts = ends - counts[..., order]
    limit = len(discount) - 1 if cutoff is None else cutoff
    upper = discount[np.minimum(ends, limit).astype(np.int64)]
    lower = discount[np.minimum(starts, limit).astype(np.int64)]
    return ((upper - lower) * gain[order]).sum(axis=-1)


def ndcg(lists: DrawnLists, codes: np.ndarray, measure: Measure) -> np.ndarray:
    if measure.param("dcg") != "trec":
        raise MeasureError(f"{measure}: estimate supports trec_eval's nDCG (dcg=trec) only")
    gains = measure.param("gains")
    gain = _gain_of_grades(lists.grades, dict(gains) if gains else None)
    within = lists.within(measure.cutoff)
    dcg = lists.segment_sum(np.where(within[None, :], gain[codes] / np.log2(lists.position + 2.0), 0.0))
    positive = gain > 0
    counts = lists.topic_counts[lists.topic_of_list][None, :, :] * positive
    drawn = np.stack([lists.segment_sum((codes == j) & (lists.unjudged & within)[None, :])
                      for j in range(len(lists.grades))], axis=-1) * positive
    longest = int(np.diff(lists.offsets).max(initial=0))
    ideal = _discounted_ideal(counts + drawn, gain, measure.cutoff, longest)
    return _divide(dcg, ideal)


def rbp(lists: DrawnLists, codes: np.ndarray, measure: Measure) -> np.ndarray:
    params = dict(measure.params)
    if params.get("residual") or params.get("ties") != "trec":
        raise MeasureError(f"{measure}: estimate supports RBP without residual and with ties=trec")
    p = float(params["p"])
    if params.get("rel") is not None:
        gain = (lists.grades >= int(params["rel"])).astype(np.float64)
    else:
        raw = _gain_of_grades(lists.grades, dict(params["gains"]) if params.get("gains") else None)
        top = float(params["gain_max"]) if params.get("gain_max") is not None else float(raw.max(initial=0.0))
        gain = raw / top if top > 0 else np.zeros_like(raw)
    weight = np.where(lists.within(measure.cutoff), (1.0 - p) * p ** lists.position.astype(np.float64), 0.0)
    return lists.segment_sum(gain[codes] * weight[None, :])


KERNELS: dict[str, Callable[[DrawnLists, np.ndarray, Measure], np.ndarray]] = {
    "P": precision,
    "R": recall,
    "AP": average_precision,
    "RR": reciprocal_rank,
    "nDCG": ndcg,
    "RBP": rbp,
}


def check_supported(measure: Measure) -> None:
    """Refuse a measure the estimator cannot draw for, naming the ones it can."""
    if measure.name not in KERNELS:
        raise MeasureError(
            f"estimate cannot draw labels for {measure}: it supports {', '.join(SUPPORTED)} (with their cutoffs "
            "and parameters), the measures whose value depends only on the labels of the retrieved "
            "documents, R and the ideal list"
        )
    if measure.judged_only:
        raise MeasureError(f"{measure}: a primed measure ignores unjudged documents; estimate the unprimed one")


__all__ = ["DrawnLists", "KERNELS", "SUPPORTED", "check_supported"]
