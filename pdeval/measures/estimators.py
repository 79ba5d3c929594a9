"""Yilmaz & Aslam 2008 estimators of AP under incomplete judgments: induced AP, subcollection AP.

Both use the three-way status of a document (MEASURES.md 0.2): judged (REL/NONREL, sampled
from the pool), POOLED (``-1``: in the complete pool, not sampled) and ABSENT (not in the
qrels: outside the complete pool, hence nonrelevant). Inferred AP (M16) is registered in
:mod:`pdeval.measures.classic` as ``infAP``.

Each kernel takes a :class:`~pdeval.engine.segments.Segments` and returns one value per list, NaN
where the measure is undefined. Formulas and worked examples: MEASURES.md M10b, M15.
"""

from __future__ import annotations

import math
from typing import Union

import numpy as np

from pdeval.errors import MeasureError
from pdeval.engine.segments import ABSENT, Segments
from pdeval.measures.classic import average_precision
from pdeval.measures.kernels import divide
from pdeval.measures.registry import register

__all__ = ["induced_ap", "subcollection_ap", "expected_inverse", "series_factor"]

COUNTS_ZERO = "contributes 0 (counted in R)"

#: relative truncation error allowed in the series of :func:`expected_inverse`
_SERIES_TOLERANCE = 1e-17
#: cells (rows x terms) per block of :func:`expected_inverse`
_BLOCK_CELLS = 1 << 21


@register(
    "indAP",
    rel=True,
    aliases=("indAP_pool", "inducedAP"),
    summary="induced AP with the pool distinction: AP after deleting pooled-but-unjudged documents (absent ones stay, as nonrelevant)",
    unjudged="as nonrelevant (outside the pool)",
    pooled="ignored (removed)",
    unretrieved=COUNTS_ZERO,
    reference="Yilmaz & Aslam 2008 (KAIS), Section 4.3",
)
def induced_ap(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """indAP = AP (M3) on L with every POOLED document deleted:

        indAP = (1/R) Σ_{REL at position k of L∖POOLED} count(k) / k

    ABSENT documents stay in place as nonrelevant (they lie outside the complete pool);
    unretrieved relevant documents contribute 0. Without negative qrels entries indAP = AP;
    its prime (every unjudged document removed) is AP' (the CIKM 2006 induced AP).
    Undefined when R = 0. MEASURES.md M10b (Yilmaz & Aslam 2008, Section 4.3.1).
    """
    return average_precision(seg.without_pooled(), rel=rel)


def expected_inverse(a: np.ndarray, nd: np.ndarray, p: np.ndarray) -> np.ndarray:
    """E[1 / (a + X)] for X ~ Binomial(nd, p), elementwise (a ≥ 1, nd ≥ 0 integers, 0 ≤ p ≤ 1).

    With q = 1 − p, I(m) = E[1/(a + X_m)] satisfies I(0) = 1/a and
    I(m) = (1 + m·q·I(m−1)) / (a + m) (integrate t^(a−1)(q + p t)^m over [0, 1] by parts:
    E[1/(a+X)] = ∫_0^1 t^(a−1) (q + p t)^nd dt). Unrolled from m = nd down, this is a sum of
    positive terms,

        I(nd) = Σ_{s=0}^{nd} T_s,   T_0 = 1/(a + nd),   T_s = T_{s−1} · q (nd − s + 1) / (a + nd − s),

    whose ratios are ≤ q, so there is no cancellation and the series is cut once the tail
    (≤ T_0 q^S / (1 − q)) is below 1e-17 of the sum, or at s = nd (exact). Rows are grouped by
    the number of terms they need (powers of two) and processed in bounded blocks: no loop
    over rows, documents or topics.
    """
    a = np.asarray(a, dtype=np.float64)
    nd = np.asarray(nd, dtype=np.int64)
    return series_factor(a, nd, p) / (a + nd)


def series_factor(a: np.ndarray, nd: np.ndarray, p: np.ndarray) -> np.ndarray:
    """(a + nd) · E[1/(a + X)], X ~ Binomial(nd, p): the series of :func:`expected_inverse`
    divided by its first term, 1 + Σ_{s≥1} T_s/T_0 (exactly 1 when p = 1 or nd = 0)."""
    a = np.asarray(a, dtype=np.float64)
    nd = np.asarray(nd, dtype=np.int64)
    q = np.broadcast_to(1.0 - np.asarray(p, dtype=np.float64), a.shape)
    out = np.ones(a.shape, dtype=np.float64)
    if a.size == 0:
        return out
    inner = (q > 0.0) & (q < 1.0)
    needed = np.where(q >= 1.0, nd, 0).astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        qi = q[inner]
        needed[inner] = np.ceil((math.log(_SERIES_TOLERANCE) + np.log1p(-qi)) / np.log(qi))
    terms = np.minimum(nd, np.maximum(needed, 0.0)).astype(np.int64)  # terms after T_0
    bucket = np.zeros(a.shape, dtype=np.int64)
    positive = terms > 0
    bucket[positive] = np.ceil(np.log2(terms[positive] + 1.0)).astype(np.int64)
    for level in np.unique(bucket[positive]):
        rows = np.flatnonzero(bucket == level)
        width = int(terms[rows].max())
        step = max(1, _BLOCK_CELLS // width)
        for start in range(0, len(rows), step):
            block = rows[start : start + step]
            out[block] = _series(a[block], nd[block], q[block], terms[block], width)
    return out


def _series(a: np.ndarray, nd: np.ndarray, q: np.ndarray, terms: np.ndarray, width: int) -> np.ndarray:
    """1 + Σ_{s=1}^{terms} T_s / T_0 for one block of rows (see :func:`expected_inverse`)."""
    s = np.arange(1, width + 1, dtype=np.float64)[None, :]
    nd_col, a_col = nd[:, None].astype(np.float64), a[:, None]
    active = s <= terms[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(active, q[:, None] * (nd_col - s + 1.0) / (a_col + nd_col - s), 0.0)
    return 1.0 + np.cumprod(ratio, axis=1).sum(axis=1)


def _sampling_rate(seg: Segments, p: Union[float, str, None]) -> np.ndarray:
    """p per segment: the given proportion, or judged / (judged + pooled) of the topic (auto)."""
    if p is None:
        raise MeasureError("subAP needs the sampling proportion p, e.g. subAP(p=0.3) or subAP(p=auto)")
    if isinstance(p, str):
        if p.strip().lower() != "auto":
            raise MeasureError(f"subAP: p must be a number in (0, 1] or 'auto', got {p!r}")
        judged = np.diff(seg.qrels.offsets).astype(np.float64)
        pool = judged + seg.qrels.pooled
        rate = np.where(pool > 0, judged / np.where(pool > 0, pool, 1.0), 1.0)
        return rate[seg.topic]
    try:
        value = float(p)
    except (TypeError, ValueError):
        raise MeasureError(f"subAP: p must be a number in (0, 1] or 'auto', got {p!r}") from None
    if not (0.0 < value <= 1.0):
        raise MeasureError(f"subAP: p must lie in (0, 1], got {p!r}")
    return np.full(seg.n_segments, value)


@register(
    "subAP",
    rel=True,
    params={"p": None},
    required=("p",),
    aliases=("subcollectionAP",),
    summary=(
        "subcollection AP: expected AP when documents outside the pool are kept with probability p "
        "(p required: a number in (0, 1], or auto = judged/(judged+pooled) per topic)"
    ),
    unjudged="kept with probability p (in expectation), as nonrelevant",
    pooled="ignored (removed)",
    unretrieved=COUNTS_ZERO,
    reference="Yilmaz & Aslam 2008 (KAIS), Section 4.4",
)
def subcollection_ap(seg: Segments, *, p: Union[float, str, None] = None, rel: int = 1) -> np.ndarray:
    """subAP = (1/R) Σ_{retrieved REL at position k} E[prec_k], after deleting POOLED documents:

        E[prec_k] = Σ_{i=0}^{nd} C(nd, i) p^i (1 − p)^(nd − i) · r / (r + n + i)

    with r, n, nd the REL, NONREL and ABSENT documents at or above k (k included). ABSENT
    documents (outside the complete pool) are kept with probability p, forming a random
    p-subcollection; POOLED documents (pool members not sampled) are removed; unretrieved
    relevant documents contribute 0. ``p`` is required: a number in (0, 1] (the judged share
    of the complete pool) or ``"auto"`` (per topic, judged / (judged + pooled); a toolkit
    extension). p = 1 gives indAP. The expectation is computed by :func:`expected_inverse`
    (stable for nd in the thousands). Undefined when R = 0. MEASURES.md M15.
    """
    rate = _sampling_rate(seg, p)
    view = seg.without_pooled()
    relevant = view.is_rel(rel)
    rel_count = view.cumsum(relevant)
    judged_count = view.cumsum(view.rel >= 0)
    absent_count = view.cumsum(view.rel == ABSENT)
    rows = np.flatnonzero(relevant)
    expected = np.zeros(len(view.rel), dtype=np.float64)
    if len(rows):
        a, nd = judged_count[rows], absent_count[rows]
        factor = series_factor(a, nd, view.per_row(rate)[rows])
        # r/(a + nd) is the precision at k when every absent document is kept (p = 1: indAP).
        expected[rows] = rel_count[rows] / (a + nd) * factor
    return divide(view.sum(expected), seg.num_rel(rel))
