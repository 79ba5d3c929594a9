"""trec_eval 10's set and cut-off measures: set_P, set_recall, set_relative_P, set_map, set_F,
utility, num_nonrel_judged_ret, success, relative_P, unj and the relevance string.

Each kernel follows the C function of trec_eval 10.0 that bears the measure's name
(``m_set_P.c``, ``m_utility.c``, ``m_success.c``, ...): the same counts, the same value where
trec_eval leaves a topic at 0 (no document retrieved, no relevant document), and the same
padding of short lists (a list shorter than the cut-off counts as filled with nonrelevant,
judged documents). Each value is a count or a ratio of counts per ranked list, computed for
every list at once from segment counts (no loop over topics).
"""

from __future__ import annotations



import numpy as np

from pdeval.engine.segments import Segments
from pdeval.errors import MeasureError
from pdeval.measures.registry import register

AS_NONREL = "as nonrelevant"
NOT_COUNTED = "not counted"
SET_REFERENCE = "trec_eval 10 m_{}.c"

#: the value of :func:`relevance_at` for a rank beyond the end of the list
NO_DOCUMENT = -3.0


def _zero_where(condition: np.ndarray, numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, 0 where ``condition`` fails (trec_eval leaves the value at 0)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.where(condition, numerator / np.where(condition, denominator, 1.0), 0.0)


def _counts(seg: Segments, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """num_ret, num_rel (R) and num_rel_ret of every list."""
    return seg.lengths.astype(np.float64), seg.num_rel(rel).astype(np.float64), seg.count(seg.is_rel(rel))


def hits_within(seg: Segments, mask: np.ndarray, cutoff: int) -> np.ndarray:
    """Per list, the rows where ``mask`` holds among the first ``cutoff`` ranks."""
    return seg.count(mask & (seg.rank <= cutoff))


def _set_measure(name: str, summary: str, **extra):
    return register(
        name,
        rel=True,
        summary=summary,
        unjudged=AS_NONREL,
        pooled=AS_NONREL,
        unretrieved=extra.pop("unretrieved", NOT_COUNTED),
        reference=extra.pop("reference", SET_REFERENCE.format(extra["trec_eval"])),
        **extra,
    )


@_set_measure("SetP", "set precision: relevant retrieved over retrieved (no ranking)", trec_eval="set_P")
def set_precision(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """set_P = num_rel_ret / num_ret; 0 for an empty list (trec_eval ``set_P``)."""
    num_ret, _, num_rel_ret = _counts(seg, rel)
    return _zero_where(num_ret > 0, num_rel_ret, num_ret)


@_set_measure("SetRecall", "set recall: relevant retrieved over R", trec_eval="set_recall", unretrieved="lowers it")
def set_recall(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """set_recall = num_rel_ret / R; 0 when R = 0 (trec_eval ``set_recall``)."""
    _, num_rel, num_rel_ret = _counts(seg, rel)
    return _zero_where(num_rel > 0, num_rel_ret, num_rel)


@_set_measure(
    "SetRelP", "relative set precision: relevant retrieved over min(retrieved, R)",
    trec_eval="set_relative_P", reference=SET_REFERENCE.format("set_rel_P"), unretrieved="lowers it",
)
def set_relative_precision(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """set_relative_P = num_rel_ret / min(num_ret, R); 0 when either is 0."""
    num_ret, num_rel, num_rel_ret = _counts(seg, rel)
    return _zero_where((num_ret > 0) & (num_rel > 0), num_rel_ret, np.minimum(num_ret, num_rel))


@_set_measure("SetAP", "unranked set AP: num_rel_ret² / (num_ret · R)", trec_eval="set_map", unretrieved="lowers it")
def set_average_precision(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """set_map = num_rel_ret² / (num_ret · R) (set precision times set recall); 0 when either is 0."""
    num_ret, num_rel, num_rel_ret = _counts(seg, rel)
    return _zero_where((num_ret > 0) & (num_rel > 0), num_rel_ret * num_rel_ret, num_ret * num_rel)


@_set_measure(
    "SetF", "set F: (β+1)·P·R / (β·P + R) of set precision and set recall",
    trec_eval="set_F", params={"beta": 1.0}, unretrieved="lowers it",
    reference="van Rijsbergen 1979 (Information Retrieval, Butterworths); trec_eval 10 m_set_F.c",
)
def set_f(seg: Segments, *, beta: float = 1.0, rel: int = 1) -> np.ndarray:
    """set_F = (β + 1) P R / (β P + R) with P = set_P, R = set_recall; 0 when nothing relevant
    is retrieved. β weighs recall against precision (trec_eval ``set_F.β``, default 1)."""
    num_ret, num_rel, num_rel_ret = _counts(seg, rel)
    found = num_rel_ret > 0
    precision = _zero_where(found, num_rel_ret, num_ret)
    recall = _zero_where(found, num_rel_ret, num_rel)
    return _zero_where(found, (beta + 1.0) * precision * recall, beta * precision + recall)


@_set_measure(
    "Utility", "linear utility a·rel_ret + b·nonrel_ret + c·rel_not_ret + d·nonrel_not_ret",
    trec_eval="utility", params={"a": 1.0, "b": -1.0, "c": 0.0, "d": 0.0, "n_docs": 0},
    unretrieved="c per relevant document not retrieved",
)
def utility(seg: Segments, *, a: float = 1.0, b: float = -1.0, c: float = 0.0, d: float = 0.0,
            n_docs: int = 0, rel: int = 1) -> np.ndarray:
    """utility = a·num_rel_ret + b·(num_ret − num_rel_ret) + c·(R − num_rel_ret)
    + d·(n_docs + num_rel_ret − num_ret − R), with ``n_docs`` the collection size
    (trec_eval ``-N``, 0 by default as there). trec_eval ``utility.a,b,c,d``."""
    if n_docs < 0:
        raise MeasureError(f"Utility: n_docs must be >= 0, got {n_docs}")
    num_ret, num_rel, num_rel_ret = _counts(seg, rel)
    return (a * num_rel_ret + b * (num_ret - num_rel_ret) + c * (num_rel - num_rel_ret)
            + d * (n_docs + num_rel_ret - num_ret - num_rel))


@_set_measure(
    "NumNonrelJudgedRet", "number of judged nonrelevant documents retrieved",
    trec_eval="num_nonrel_judged_ret", aliases=("num_nonrel_judged_ret",), aggregate="sum",
)
def num_nonrel_judged_ret(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """Retrieved documents judged below the relevance threshold (level 0 .. rel − 1)."""
    return seg.count(seg.is_nonrel(rel))


@_set_measure(
    "Success", "1 if a relevant document is within the first k ranks, else 0",
    trec_eval="success_{k}", cutoff="required", reference="Tomlinson; trec_eval 10 m_success.c",
)
def success(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """Success@k = 1 if count(k) > 0 else 0 (trec_eval ``success.k``)."""
    return (hits_within(seg, seg.is_rel(rel), cutoff) > 0).astype(np.float64)


@_set_measure(
    "RelP", "relative precision: relevant within the first k over min(k, R)",
    trec_eval="relative_P_{k}", cutoff="required", reference=SET_REFERENCE.format("rel_P"),
    unretrieved="lowers it once k > R",
)
def relative_precision(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """relative_P@k = count(k) / min(k, R): precision up to R, recall after; 0 when R = 0."""
    num_rel = seg.num_rel(rel).astype(np.float64)
    return _zero_where(num_rel > 0, hits_within(seg, seg.is_rel(rel), cutoff), np.minimum(cutoff, num_rel))


@register(
    "Unj",
    cutoff="required",
    summary="share of the first k ranks holding unjudged documents (a short list is padded with judged ones)",
    unjudged="counted",
    pooled="counted",
    unretrieved=NOT_COUNTED,
    reference="trec_eval 10 m_unjudged.c (unj.k)",
    trec_eval="unj_{k}",
    aliases=("unj",),
)
def unjudged_at(seg: Segments, *, cutoff: int) -> np.ndarray:
    """unj@k = (pooled or absent documents within the first k ranks) / k. Unlike 1 − Judged@k
    the denominator is k even for a shorter list (trec_eval ``unj.k``)."""
    return hits_within(seg, ~seg.is_judged(), cutoff) / cutoff


@register(
    "RelAt",
    cutoff="required",
    summary="the judgment of the document at rank k: its level, -1 pooled, -2 absent, -3 no document",
    unjudged="-2",
    pooled="-1",
    unretrieved=NOT_COUNTED,
    reference="trec_eval 10 m_relstring.c (relstring.N prints RelAt@1..N as one string)",
    aggregate="none",
)
def relevance_at(seg: Segments, *, cutoff: int) -> np.ndarray:
    """The qrels level of the document at rank k (``-1`` pooled, ``-2`` absent from the qrels,
    ``-3`` when the list is shorter than k). trec_eval's ``relstring.N`` is the string of
    RelAt@1 .. RelAt@N (:func:`relstring`); the summary over topics is not defined."""
    value = np.full(seg.n_segments, NO_DOCUMENT)
    at = np.flatnonzero(seg.rank == cutoff)
    value[seg.segment_of(at)] = seg.rel[at]
    return value


def relstring(codes: np.ndarray) -> str:
    """trec_eval's relevance string of the codes RelAt@1, RelAt@2, ... of one list: the digit
    of levels 0–9, ``>`` above 9, ``-`` absent from the qrels, ``.`` pooled but unjudged,
    ``<`` another negative value; the string stops at the first rank without a document."""
    chars = []
    for code in np.asarray(codes, dtype=np.float64).tolist():
        if code == NO_DOCUMENT:
            break
        level = int(code)
        chars.append(">" if level > 9 else str(level) if level >= 0 else "-" if level == -2 else "." if level == -1 else "<")
    return "".join(chars)


__all__ = [
    "NO_DOCUMENT", "hits_within", "num_nonrel_judged_ret", "relative_precision", "relevance_at", "relstring",
    "set_average_precision", "set_f", "set_precision", "set_recall", "set_relative_precision", "success",
    "unjudged_at", "utility",
]
