"""Measures with trec_eval semantics: P@k, Rprec, AP, R@k, RR, nDCG, Bpref, infAP, counts.

Each kernel takes a :class:`~pdeval.engine.segments.Segments` (ranked lists in trec_eval order,
already cut at ``depth`` and condensed when primed) and returns one value per list, NaN
where the measure is undefined. Formulas and worked examples: MEASURES.md M1–M4, M16, M19.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from pdeval.errors import MeasureError
from pdeval.engine.segments import POOLED, Segments
from pdeval.measures.kernels import divide
from pdeval.measures.registry import register

AS_NONREL = "as nonrelevant"
IGNORED = "ignored (removed)"
COUNTS_ZERO = "contributes 0 (counted in R)"


def nonrel_above_relevant(seg: Segments, rel: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The retrieved relevant rows, their segments, and na(i): the judged nonrelevant rows
    ranked above each (the quantity of the whole bpref family, MEASURES.md M4–M8)."""
    at = seg.relevant_rows(rel)
    return at, seg.segment_of(at), seg.count_above(seg.nonrel_rows(rel), at).astype(np.float64)


def preference_sum(seg: Segments, rel: int, cap: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """The bpref family's shared form (MEASURES.md M4–M7), per-segment ``cap`` and ``denominator``:

        (1/R) Σ_{retrieved REL i} term(i),  term(i) = 1 if na(i) = 0, else 1 − min(na(i), cap) / denominator

    na(i) > 0 implies a positive denominator in every member, so no division by 0 is used.
    """
    at, segment, above = nonrel_above_relevant(seg, rel)
    with np.errstate(divide="ignore", invalid="ignore"):
        term = np.where(above > 0, 1.0 - np.minimum(above, cap[segment]) / denominator[segment], 1.0)
    return divide(seg.sum_at(at, term), seg.num_rel(rel))


def _hits_within(seg: Segments, rel: int, depth) -> np.ndarray:
    """Per list, relevant documents within the first ``depth`` ranks (an int or per segment)."""
    at = seg.relevant_rows(rel)
    depth = np.broadcast_to(np.asarray(depth), (seg.n_segments,))
    segment = seg.segment_of(at)
    inside = seg.rank_at(at) <= depth[segment]
    return np.bincount(segment[inside], minlength=seg.n_segments).astype(np.float64)


def _top(seg: Segments, cutoff: Optional[int]) -> np.ndarray:
    """Rows within the first ``cutoff`` ranks (all rows when no cutoff)."""
    return np.ones(len(seg.rel), dtype=bool) if cutoff is None else seg.rank <= cutoff


@register(
    "P",
    as_nonrelevant=True,
    monotone=True,
    sparse=True,
    cutoff="required",
    rel=True,
    summary="precision at rank k: relevant among the top k, over k",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="not counted",
    reference="trec_eval P.k",
    trec_eval="P_{k}",
)
def precision(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """P@k = count(min(k, n)) / k; a list shorter than k counts as padded with nonrelevant.

    Defined for every topic (R = 0 gives 0). MEASURES.md M1; trec_eval ``P``.
    """
    return _hits_within(seg, rel, cutoff) / cutoff


@register(
    "Rprec",
    as_nonrelevant=True,
    sparse=True,
    rel=True,
    aliases=("R-prec", "Rprecision"),
    summary="precision at rank R",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="lowers it (denominator R)",
    reference="trec_eval Rprec",
    trec_eval="Rprec",
)
def r_precision(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """Rprec = count(min(R, n)) / R; undefined when R = 0. MEASURES.md M2."""
    num_rel = seg.num_rel(rel)
    return divide(_hits_within(seg, rel, num_rel), num_rel)


@register(
    "AP",
    as_nonrelevant=True,
    sparse=True,
    cutoff="optional",
    rel=True,
    aliases=("MAP", "AveP"),
    summary="average precision; AP@k stops at rank k and still divides by R",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved=COUNTS_ZERO,
    reference="trec_eval map / map_cut.k",
    trec_eval="map|map_cut_{k}",
)
def average_precision(seg: Segments, *, cutoff: Optional[int] = None, rel: int = 1) -> np.ndarray:
    """AP = (1/R) Σ_{i: rel(i)=1} count(i)/i; undefined when R = 0. MEASURES.md M3.

    With a cutoff (trec_eval ``map_cut.k``) only ranks ≤ k contribute; the denominator stays R.
    """
    at = seg.relevant_rows(rel)
    rank = seg.rank_at(at)
    precision_at = (seg.count_above(at, at) + 1) / rank
    if cutoff is not None:
        at, precision_at = at[rank <= cutoff], precision_at[rank <= cutoff]
    return divide(seg.sum_at(at, precision_at), seg.num_rel(rel))


@register(
    "R",
    as_nonrelevant=True,
    sparse=True,
    cutoff="required",
    rel=True,
    aliases=("Recall",),
    summary="recall at rank k: relevant among the top k, over R",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved=COUNTS_ZERO,
    reference="trec_eval recall.k",
    trec_eval="recall_{k}",
)
def recall(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """R@k = count(min(k, n)) / R; undefined when R = 0. trec_eval ``recall.k``."""
    return divide(_hits_within(seg, rel, cutoff), seg.num_rel(rel))


@register(
    "RR",
    as_nonrelevant=True,
    monotone=True,
    sparse=True,
    cutoff="optional",
    rel=True,
    aliases=("MRR", "recip_rank"),
    summary="reciprocal rank of the first relevant document",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="0 when no relevant document is retrieved",
    reference="trec_eval recip_rank",
    trec_eval="recip_rank",
)
def reciprocal_rank(seg: Segments, *, cutoff: Optional[int] = None, rel: int = 1) -> np.ndarray:
    """RR = 1 / rank of the first relevant document (0 if none); undefined when R = 0."""
    at = seg.relevant_rows(rel)
    segment = seg.segment_of(at)
    leading = np.concatenate(([True], segment[1:] != segment[:-1])) if len(at) else np.zeros(0, bool)
    first_rank = seg.rank_at(at[leading])
    value = np.zeros(seg.n_segments)
    within = first_rank <= (cutoff if cutoff is not None else np.inf)
    value[segment[leading][within]] = 1.0 / first_rank[within]
    return np.where(seg.num_rel(rel) > 0, value, np.nan)


def _trec_dcg(seg: Segments, gain: np.ndarray, cutoff: Optional[int]) -> np.ndarray:
    """Σ gain(r) / log2(r + 1) over the rows with a nonzero gain, ranks up to the cutoff."""
    if seg.ranks is None and np.count_nonzero(gain) * 4 > len(gain):
        # most rows count: every row at once (a row of gain 0 adds +0.0, so the sums are the same numbers)
        rank = seg.rank
        top = int(rank.max(initial=0))
        log = np.log2(np.arange(1, top + 2, dtype=np.float64))  # log[r] = log2(r + 1), once per rank
        value = gain / log[rank]
        if cutoff is not None and top > cutoff:
            value = np.where(rank <= cutoff, value, 0.0)
        return np.bincount(seg.segment_of_row, weights=value, minlength=seg.n_segments)
    at = np.flatnonzero(gain)
    rank = seg.rank_at(at)
    if cutoff is not None and int(rank.max(initial=0)) > cutoff:
        at, rank = at[rank <= cutoff], rank[rank <= cutoff]
    log = np.log2(np.arange(2, int(rank.max(initial=0)) + 2, dtype=np.float64))  # log2(r + 1), once per rank
    return seg.sum_at(at, gain[at] / log[rank - 1])


def ndcg_trec(seg: Segments, *, cutoff: Optional[int], gains: Optional[Mapping[int, float]],
              gain_sort: str = "exact") -> np.ndarray:
    """trec_eval's nDCG: disc(r) = 1/log2(r+1); ideal over all gain>0 documents. M19."""
    dcg = _trec_dcg(seg, seg.gain(gains), cutoff)
    ideal = seg.ideal(gains, depth=cutoff, order=gain_sort)
    ideal_dcg = _trec_dcg(ideal, ideal.rel, cutoff)
    return divide(dcg, ideal_dcg)


@register(
    "nDCG",
    as_nonrelevant=True,
    sparse=True,
    cutoff="optional",
    gains=True,
    params={"dcg": "trec", "base": 2.0, "l": 1000, "gain_sort": "exact"},
    choices={"dcg": ("trec", "sakai"), "gain_sort": ("exact", "trec_eval")},
    aliases=("ndcg_trec",),
    summary="normalised DCG; dcg=trec: trec_eval's 1/log2(r+1); dcg=sakai: Sakai 2007's log-base discount with cutoff l",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="contributes 0 (in the ideal list)",
    reference="Järvelin & Kekäläinen 2002; trec_eval ndcg / ndcg_cut.k; Sakai 2007",
    trec_eval="ndcg|ndcg_cut_{k}",
)
def ndcg(
    seg: Segments,
    *,
    cutoff: Optional[int] = None,
    gains: Optional[Mapping[int, float]] = None,
    dcg: str = "trec",
    base: float = 2.0,
    l: int = 1000,
    gain_sort: str = "exact",
) -> np.ndarray:
    """nDCG: ``dcg="trec"`` (default) is trec_eval's ``ndcg`` / ``ndcg_cut.k`` (M19);
    ``dcg="sakai"`` is Sakai 2007's form with discount 1/log_base(r) beyond rank ``base``
    and cutoff ``l`` (M18). Undefined when no document of the topic has a positive gain.
    ``gain_sort="trec_eval"`` orders the ideal list's gains as trec_eval 10.0 does (gains less
    than 1 apart compare equal, :mod:`pdeval.engine.trec_gains`); the default is the exact
    order; the two differ only for fractional gains."""
    if gain_sort != "exact" and dcg == "sakai":
        raise MeasureError("nDCG: gain_sort='trec_eval' is trec_eval's order, for dcg=trec only")
    if dcg == "trec" and (float(base) != 2.0 or int(l) != 1000):
        given = ", ".join(f"{k}={v!r}" for k, v, d in (("base", base, 2.0), ("l", l, 1000)) if v != d)
        raise MeasureError(
            f"nDCG: {given} applies to dcg=sakai only; trec_eval's nDCG (dcg=trec) "
            "discounts by 1/log2(r+1) and is cut with @k. Write nDCG(dcg=sakai,base=...,l=...) or drop them."
        )
    if dcg == "sakai":
        from pdeval.measures.graded import ndcg_sakai

        return ndcg_sakai(seg, cutoff=cutoff, gains=gains, base=base, l=l)
    return ndcg_trec(seg, cutoff=cutoff, gains=gains, gain_sort=gain_sort)


@register(
    "Bpref",
    sparse=True,
    rel=True,
    params={"variant": "trec"},
    choices={"variant": ("trec", "legacy")},
    aliases=("bpref",),
    summary="binary preference: relevant documents not outranked by judged nonrelevant ones",
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=COUNTS_ZERO + "; unretrieved nonrelevant count in N",
    reference="Buckley & Voorhees 2004; trec_eval bpref (variant=legacy: old_bpref)",
    trec_eval="bpref",
)
def bpref(seg: Segments, *, rel: int = 1, variant: str = "trec") -> np.ndarray:
    """bpref = (1/R) Σ_{retrieved REL i} [1 − min(na(i), R) / min(N, R)] (term 1 if na(i) = 0).

    ``variant="legacy"`` (trec_eval ``old_bpref``, pre-2005) divides by min(N_ret, R) with
    N_ret the retrieved judged nonrelevant. Undefined when R = 0. MEASURES.md M4.
    """
    num_rel = seg.num_rel(rel)
    num_nonrel = seg.count(seg.is_nonrel(rel)) if variant == "legacy" else seg.num_nonrel(rel)
    return preference_sum(seg, rel, num_rel, np.minimum(num_nonrel, num_rel))


@register(
    "infAP",
    sparse=True,
    rel=True,
    params={"c": 2.0, "eps": 1e-5, "pool_aware": True},
    aliases=("inferredAP",),
    summary="inferred AP: precision above each relevant document estimated from the judged sample of the pool",
    unjudged="as nonrelevant (outside the pool)",
    pooled="in the pool; relevance estimated from the judged sample",
    unretrieved=COUNTS_ZERO,
    reference="Yilmaz & Aslam 2006/2008; trec_eval infAP",
    trec_eval="infAP",
)
def inferred_ap(
    seg: Segments, *, rel: int = 1, c: float = 2.0, eps: float = 1e-5, pool_aware: bool = True
) -> np.ndarray:
    """infAP = (1/R) Σ_{retrieved REL at position k} E[prec_k], with E[prec_1] = 1 and

    E[prec_k] = 1/k + ((k−1)/k) · (d/(k−1)) · (r + ε)/(r + n + c·ε)

    over the k−1 documents above: r relevant, n judged nonrelevant, d = r + n + pooled
    (``pool_aware=False``: d = k − 1, every unjudged document taken as pooled). c = 2 and
    ε = 1e-5 reproduce trec_eval. Undefined when R = 0. MEASURES.md M16.
    """
    if not (c > 0 and eps > 0):
        raise MeasureError(f"infAP: c and eps must be > 0, got c={c}, eps={eps}")
    at = seg.relevant_rows(rel)
    rel_above = seg.count_above(at, at).astype(np.float64)
    nonrel_above = seg.count_above(seg.nonrel_rows(rel), at).astype(np.float64)
    k = seg.rank_at(at).astype(np.float64)
    if pool_aware:
        pool_above = rel_above + nonrel_above + seg.count_above(np.flatnonzero(seg.rel == POOLED), at)
    else:
        pool_above = k - 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        estimate = 1.0 / k + (pool_above / k) * (rel_above + eps) / (rel_above + nonrel_above + c * eps)
    estimate = np.where(k == 1, 1.0, estimate)
    return divide(seg.sum_at(at, estimate), seg.num_rel(rel))


@register(
    "Judged",
    monotone=True,
    cutoff="optional",
    summary="share of the top k documents that are judged (level >= 0), over min(k, retrieved)",
    unjudged="counts as unjudged",
    pooled="counts as unjudged",
    unretrieved="not counted",
    reference="ir_measures Judged@k (MacAvaney et al.)",
)
def judged(seg: Segments, *, cutoff: Optional[int] = None) -> np.ndarray:
    """Judged@k = judged documents among the top k / min(k, n); undefined for an empty list.

    Pooled (-1) documents are not judged. Without a cutoff, the share over the whole list.
    """
    top = _top(seg, cutoff)
    denominator = seg.count(top)
    return divide(seg.count(top & seg.is_judged()), denominator)


@register(
    "NumRet",
    aggregate="sum",
    as_nonrelevant=True,
    monotone=True,
    summary="number of documents retrieved (after depth)",
    unjudged="counted",
    pooled="counted",
    unretrieved="not counted",
    reference="trec_eval num_ret",
    aliases=("num_ret",),
    trec_eval="num_ret",
)
def num_ret(seg: Segments) -> np.ndarray:
    """The number of retrieved documents of each list."""
    return seg.lengths.astype(np.float64)


@register(
    "NumRel",
    aggregate="sum",
    as_nonrelevant=True,
    monotone=True,
    sparse=True,
    rel=True,
    summary="number of relevant documents in the qrels (R)",
    unjudged="not counted",
    pooled="not counted",
    unretrieved="counted",
    reference="trec_eval num_rel",
    aliases=("num_rel",),
    trec_eval="num_rel",
)
def num_rel(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """R: judged relevant documents of the topic, retrieved or not."""
    return seg.num_rel(rel).astype(np.float64)


@register(
    "NumRelRet",
    aggregate="sum",
    as_nonrelevant=True,
    monotone=True,
    sparse=True,
    rel=True,
    summary="number of relevant documents retrieved",
    unjudged="not counted",
    pooled="not counted",
    unretrieved="not counted",
    reference="trec_eval num_rel_ret",
    aliases=("num_rel_ret",),
    trec_eval="num_rel_ret",
)
def num_rel_ret(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """Relevant documents among the retrieved."""
    return seg.count(seg.is_rel(rel))
