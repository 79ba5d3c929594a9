"""trec_eval 10's gain measures beyond ndcg: dcg, ideal_dcg, G, ndcg_rel, Rndcg and ndcg_p.

Gains are trec_eval's: a judged level's gain is the level itself unless ``gains`` maps it
elsewhere (trec_eval ``G.1=3,2=9``); unjudged documents gain nothing. The ideal list holds
every judged document of positive gain, best first. Each kernel follows the C function of
trec_eval 10.0 of the same name (``m_G.c``, ``m_ndcg_rel.c``, ``m_Rndcg.c``, ``m_ndcg_p.c``,
``m_ndcg.c`` for dcg and ideal_dcg), vectorised with prefix sums over every list at once.
"""

from __future__ import annotations

from typing import Optional

import numpy as np

from pdeval.engine.segments import Segments
from pdeval.measures.kernels import Gains, level_gains
from pdeval.measures.registry import register

AS_NONREL = "as nonrelevant (gain 0)"
IN_IDEAL = "contributes 0 (in the ideal list)"
JK2002 = "Järvelin & Kekäläinen 2002 (ACM TOIS 20(4))"


#: the ideal list's order: exact, or trec_eval's (gains less than 1 apart compare equal; see
#: pdeval.engine.trec_gains), the two differ for fractional gains only
_SORT = {"params": {"gain_sort": "exact"}, "choices": {"gain_sort": ("exact", "trec_eval")}}


def _gain_register(name: str, trec_eval: str, summary: str, reference: str, **extra):
    return register(
        name, gains=True, summary=summary, unjudged=AS_NONREL, pooled=AS_NONREL, unretrieved=IN_IDEAL,
        reference=reference, trec_eval=trec_eval, **extra,
    )


def _prefix(cumulative: np.ndarray, offsets: np.ndarray, segment: np.ndarray, length: np.ndarray) -> np.ndarray:
    """The within-segment cumulative sum over the first ``length`` rows of each ``segment``
    (0 for length 0); ``cumulative`` is an inclusive within-segment cumulative sum."""
    index = offsets[segment] + length - 1
    safe = np.where(length > 0, index, 0)
    return np.where(length > 0, cumulative[safe] if len(cumulative) else 0.0, 0.0)


def _discounted(seg: Segments, gain: np.ndarray) -> np.ndarray:
    """gain / log2(rank + 1) at every row."""
    return gain / np.log2(seg.rank.astype(np.float64) + 1.0)


def _run_and_ideal(seg: Segments, gains: Gains, gain_sort: str = "exact"):
    level_gains(seg, gains)  # rejects negative gains
    gain = seg.gain(gains)
    ideal = seg.ideal(gains, order=gain_sort)
    return gain, ideal


@_gain_register("DCG", "dcg", "discounted cumulative gain Σ g(r) / log2(r + 1) (not normalised)",
                f"{JK2002}; trec_eval 10 m_ndcg.c (dcg)", aliases=("dcg",), cutoff="optional")
def dcg(seg: Segments, *, cutoff: Optional[int] = None, gains: Gains = None) -> np.ndarray:
    """DCG = Σ_r g(r) / log2(r + 1) over the whole list (trec_eval ``dcg``); DCG@k over the
    first k ranks (scikit-learn's ``dcg_score(k=...)``)."""
    gain, _ = _run_and_ideal(seg, gains)
    discounted = _discounted(seg, gain)
    if cutoff is not None:
        discounted = np.where(seg.rank <= cutoff, discounted, 0.0)
    return seg.sum(discounted)


@_gain_register("IdealDCG", "ideal_dcg", "DCG of the ideal list of the topic",
                f"{JK2002}; trec_eval 10 m_ndcg.c (ideal_dcg)", aliases=("ideal_dcg",), **_SORT)
def ideal_dcg(seg: Segments, *, gains: Gains = None, gain_sort: str = "exact") -> np.ndarray:
    """The DCG of the topic's ideal list (every judged document of positive gain, best first)."""
    _, ideal = _run_and_ideal(seg, gains, gain_sort)
    return ideal.sum(_discounted(ideal, ideal.rel))


@_gain_register(
    "G", "G", "normalised gain G: each gain over log2(2 + ideal cost so far − gain so far), over the ideal gain",
    "trec_eval 10 m_G.c (experimental, 2008)", **_SORT,
)
def g_measure(seg: Segments, *, gains: Gains = None, gain_sort: str = "exact") -> np.ndarray:
    """G = (1 / Σ ideal gains) Σ_{r: g(r) ≠ 0} g(r) / log2(2 + C(r) − S(r)), with S(r) the gain
    of the first r documents and C(r) = Σ_{j ≤ r} max(ideal gain at j, 1) the ideal cost
    (positions beyond the ideal list cost 1). 0 when the topic has no positive gain."""
    gain, ideal = _run_and_ideal(seg, gains, gain_sort)
    extra = ideal.cumsum(np.maximum(ideal.rel - 1.0, 0.0))
    rank = seg.rank.astype(np.int64)
    segment = seg.segment_of_row
    ideal_length = ideal.lengths[segment]
    cost = rank + _prefix(extra, ideal.offsets, segment, np.minimum(rank, ideal_length))
    total = seg.cumsum(gain)
    nonzero = gain != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(nonzero, gain / np.log2(2.0 + cost - total), 0.0)
    ideal_total = ideal.sum(ideal.rel)
    return np.where(ideal_total > 0, seg.sum(term) / np.where(ideal_total > 0, ideal_total, 1.0), 0.0)


@_gain_register(
    "nDCGRel", "ndcg_rel", "nDCG averaged over the relevant (positive gain) documents; an unretrieved one counts the final nDCG",
    f"{JK2002}; trec_eval 10 m_ndcg_rel.c (experimental)", **_SORT,
)
def ndcg_rel(seg: Segments, *, gains: Gains = None, gain_sort: str = "exact") -> np.ndarray:
    """ndcg_rel = (1/L) [Σ_{retrieved r: g(r) > 0} DCG(r) / IDCG(min(r, L)) + (L − found) · DCG(n) / IDCG(L)],
    L the length of the ideal list; 0 when the sum is 0."""
    gain, ideal = _run_and_ideal(seg, gains, gain_sort)
    run_dcg = seg.cumsum(_discounted(seg, gain))
    ideal_dcg_ = ideal.cumsum(_discounted(ideal, ideal.rel))
    segment = seg.segment_of_row
    length = ideal.lengths
    positive = gain > 0
    ideal_at = _prefix(ideal_dcg_, ideal.offsets, segment, np.minimum(seg.rank, length[segment]))
    with np.errstate(divide="ignore", invalid="ignore"):
        total = seg.sum(np.where(positive, run_dcg / np.where(positive, ideal_at, 1.0), 0.0))
        final = _prefix(run_dcg, seg.offsets, np.arange(seg.n_segments), seg.lengths)
        ideal_final = _prefix(ideal_dcg_, ideal.offsets, np.arange(seg.n_segments), length)
        total = total + (length - seg.count(positive)) * final / ideal_final
        return np.where(total > 0, total / np.where(length > 0, length, 1), 0.0)


@_gain_register(
    "RnDCG", "Rndcg", "nDCG averaged at the R levels: the ranks where the ideal list's gain changes",
    f"{JK2002}; trec_eval 10 m_Rndcg.c (experimental)", rel=True, **_SORT,
)
def r_ndcg(seg: Segments, *, gains: Gains = None, rel: int = 1, gain_sort: str = "exact") -> np.ndarray:
    """Rndcg = the mean of nDCG@i over the positions i = 1..L after which the ideal list's gain
    changes (i = L included), plus nDCG over the whole list when it is longer than L + 1;
    0 when R = 0."""
    gain, ideal = _run_and_ideal(seg, gains, gain_sort)
    run_dcg = seg.cumsum(_discounted(seg, gain))
    ideal_dcg_ = ideal.cumsum(_discounted(ideal, ideal.rel))
    ideal_segment = ideal.segment_of_row
    last = np.ones(len(ideal.rel), dtype=bool)
    if len(ideal.rel):
        last[:-1] = (ideal.rel[1:] != ideal.rel[:-1]) | (ideal_segment[1:] != ideal_segment[:-1])
    boundary = np.flatnonzero(last)
    segment = ideal_segment[boundary]
    position = ideal.rank[boundary]
    run_at = _prefix(run_dcg, seg.offsets, segment, np.minimum(position, seg.lengths[segment]))
    total = np.bincount(segment, weights=run_at / ideal_dcg_[boundary], minlength=seg.n_segments)
    count = np.bincount(segment, minlength=seg.n_segments).astype(np.float64)
    whole = np.arange(seg.n_segments)
    beyond = seg.lengths > ideal.lengths + 1
    with np.errstate(divide="ignore", invalid="ignore"):
        final = _prefix(run_dcg, seg.offsets, whole, seg.lengths) / _prefix(ideal_dcg_, ideal.offsets, whole, ideal.lengths)
        total = total + np.where(beyond & (ideal.lengths > 0), final, 0.0)
        count = count + (beyond & (ideal.lengths > 0))
        value = total / count
    return np.where(seg.num_rel(rel) > 0, value, 0.0)


@_gain_register(
    "nDCGp", "ndcg_p", "nDCG with discount 1 at rank 1 and 1/log2(r) after (trec_eval's ndcg_p)",
    f"{JK2002}; trec_eval 10 m_ndcg_p.c (defined there but left out of its measure table)", rel=True, **_SORT,
)
def ndcg_p(seg: Segments, *, gains: Gains = None, rel: int = 1, gain_sort: str = "exact") -> np.ndarray:
    """ndcg_p = Σ g(r) d(r) / Σ ideal g(q) d(q) with d(1) = 1, d(r) = 1/log2(r) for r > 1;
    0 when no relevant document (level >= rel) is retrieved."""
    gain, ideal = _run_and_ideal(seg, gains, gain_sort)

    def discounted(view: Segments, values: np.ndarray) -> np.ndarray:
        rank = view.rank.astype(np.float64)
        return values / np.where(rank > 1, np.log2(np.maximum(rank, 2.0)), 1.0)

    found = seg.count(seg.is_rel(rel)) > 0
    ideal_value = ideal.sum(discounted(ideal, ideal.rel))
    return np.where(found, seg.sum(discounted(seg, gain)) / np.where(found, ideal_value, 1.0), 0.0)


__all__ = ["dcg", "g_measure", "ideal_dcg", "ndcg_p", "ndcg_rel", "r_ndcg"]
