"""trec_eval 10's remaining ranked measures: gm_map, gm_bpref, iprec_at_recall, 11pt_avg,
Rprec_mult, binG, yaap, and trec_eval's own rbp and rbp_resid.

Each kernel follows the C function of trec_eval 10.0 of the same name (``m_gm_map.c``,
``m_iprec_at_recall.c``, ...), vectorised over every ranked list at once. gm_map and gm_bpref
are AP and bpref per topic; their summary is the geometric mean
``exp(mean(log(max(value, 1e-5))))`` (``aggregate="gmean"``), which trec_eval prints alone
(no per-topic line).
"""

from __future__ import annotations



import numpy as np
import pandas as pd

from pdeval.engine.segments import Segments, gain_of
from pdeval.errors import MeasureError
from pdeval.measures.classic import average_precision, bpref
from pdeval.measures.kernels import Gains, level_gains
from pdeval.measures.registry import register

AS_NONREL = "as nonrelevant"
IGNORED = "ignored (removed)"
COUNTS_ZERO = "contributes 0 (counted in R)"

#: trec_eval's default recall levels of iprec_at_recall and 11pt_avg
RECALL_LEVELS = tuple(i / 10 for i in range(11))


# ---- geometric means --------------------------------------------------------------------------
@register(
    "GMAP",
    sparse=True,
    rel=True,
    aggregate="gmean",
    aliases=("gm_map", "gm_ap"),
    summary="AP per topic; the summary is the geometric mean over topics (values floored at 1e-5)",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved=COUNTS_ZERO,
    reference="Robertson 2006 (On GMAP, CIKM); trec_eval 10 m_gm_map.c",
    trec_eval="gm_map",
)
def gm_map(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """AP of each list (0 when R = 0); summaries take exp(mean(log(max(AP, 1e-5))))."""
    return np.nan_to_num(average_precision(seg, rel=rel), nan=0.0)


@register(
    "GMBpref",
    sparse=True,
    rel=True,
    aggregate="gmean",
    aliases=("gm_bpref",),
    summary="bpref per topic; the summary is the geometric mean over topics (values floored at 1e-5)",
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=COUNTS_ZERO,
    reference="Buckley & Voorhees 2004 (SIGIR); trec_eval 10 m_gm_bpref.c",
    trec_eval="gm_bpref",
)
def gm_bpref(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """bpref of each list (0 when R = 0); summaries take the geometric mean as for GMAP."""
    return np.nan_to_num(bpref(seg, rel=rel), nan=0.0)


# ---- interpolated precision ---------------------------------------------------------------------
def _relevant_precisions(seg: Segments, rel: int):
    """At the retrieved relevant rows: segment, ordinal m (1-based), rank, m / rank, and the
    interpolated precision max_{m' >= m} m'/rank_{m'} (a suffix maximum within each list)."""
    at = seg.relevant_rows(rel)
    segment = seg.segment_of(at)
    ordinal = seg.count_above(at, at) + 1
    rank = seg.rank_at(at).astype(np.float64)
    precision = ordinal / rank
    reverse = pd.Series(precision[::-1])
    interpolated = reverse.groupby(segment[::-1]).cummax().to_numpy()[::-1]
    return segment, ordinal, rank, interpolated


def _lround(values: np.ndarray) -> np.ndarray:
    """C's lround for values >= 0: halves away from zero."""
    return np.floor(np.asarray(values, dtype=np.float64) + 0.5).astype(np.int64)


def _iprec(seg: Segments, levels, rel: int) -> np.ndarray:
    """Interpolated precision at each recall level: one column per level (m_iprec_at_recall.c).

    The cut for level x is c = lround(x R) relevant documents; the value is the largest
    precision at or after the c-th relevant retrieved document (after the first when c = 0),
    0 when fewer than c relevant documents are retrieved. An empty list has no precision at
    c = 0: NaN there (trec_eval divides 0 by 0; the engine reports 0 unless ``undefined="nan"``)."""
    segment, _, _, interpolated = _relevant_precisions(seg, rel)
    num_rel = seg.num_rel(rel).astype(np.float64)
    num_rel_ret = np.bincount(segment, minlength=seg.n_segments)
    first = np.searchsorted(segment, np.arange(seg.n_segments))
    out = np.zeros((seg.n_segments, len(levels)))
    for column, level in enumerate(levels):
        cut = np.maximum(_lround(float(level) * num_rel), 1)
        reached = cut <= num_rel_ret
        index = np.where(reached, first + cut - 1, 0)
        out[:, column] = np.where(reached, interpolated[index] if len(interpolated) else 0.0, 0.0)
        out[(seg.lengths == 0) & (_lround(float(level) * num_rel) == 0), column] = np.nan
    return out


def _recall_level(value, name: str) -> float:
    try:
        level = float(value)
    except (TypeError, ValueError):
        raise MeasureError(f"{name}: the recall level must be a number in [0, 1], got {value!r}") from None
    if not 0.0 <= level <= 1.0:
        raise MeasureError(f"{name}: the recall level must be a number in [0, 1], got {value!r}")
    return level


@register(
    "IPrec",
    rel=True,
    params={"recall": None},
    required=("recall",),
    summary="interpolated precision at a recall level: the best precision at or after recall x (the recall-precision graph)",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="lowers it (recall is a fraction of R)",
    reference="trec_eval 10 m_iprec_at_recall.c (iprec_at_recall.x)",
    trec_eval="iprec_at_recall",
)
def interpolated_precision(seg: Segments, *, recall=None, rel: int = 1) -> np.ndarray:
    """IPrec(recall=x) = max_{m >= c} m / rank_m over the retrieved relevant documents m,
    c = max(1, lround(x R)); 0 when fewer than c relevant documents are retrieved."""
    return _iprec(seg, [_recall_level(recall, "IPrec")], rel)[:, 0]


def _levels(levels, name: str) -> list:
    if levels is None:
        return list(RECALL_LEVELS)
    text = str(levels).strip().strip("{}[]()")
    parts = [part for part in text.replace(";", ",").replace(" ", ",").split(",") if part]
    if not parts:
        raise MeasureError(f"{name}: levels must list recall levels, e.g. levels={{0.2,0.5,0.8}}")
    return [_recall_level(part, name) for part in parts]


@register(
    "IPrecAvg",
    rel=True,
    params={"levels": None},
    summary="interpolated precision averaged over recall levels (default the 11 points 0, 0.1, ..., 1)",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="lowers it (recall is a fraction of R)",
    reference="trec_eval 10 m_11pt_avg.c (11pt_avg)",
    trec_eval="11pt_avg",
    aliases=("11pt_avg",),
)
def interpolated_precision_average(seg: Segments, *, levels=None, rel: int = 1) -> np.ndarray:
    """The mean of IPrec over ``levels`` (``levels={0.2,0.5,0.8}`` is trec_eval 8's 3-pt average)."""
    return _iprec(seg, _levels(levels, "IPrecAvg"), rel).mean(axis=1) if seg.n_segments else np.zeros(0)


@register(
    "RprecMult",
    rel=True,
    params={"m": None},
    required=("m",),
    summary="precision at rank (int)(m·R + 0.9): R-precision at a multiple of R",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="lowers it (the rank grows with R)",
    reference="trec_eval 10 m_Rprec_mult.c (Rprec_mult.m)",
    trec_eval="Rprec_mult",
)
def r_precision_multiple(seg: Segments, *, m=None, rel: int = 1) -> np.ndarray:
    """Rprec_mult(m) = count(c) / c with c = (int)(m R + 0.9); 0 when c = 0. A list shorter
    than c counts as padded with nonrelevant documents."""
    try:
        factor = float(m)
    except (TypeError, ValueError):
        raise MeasureError(f"RprecMult: m must be a number >= 0, got {m!r}") from None
    if not factor >= 0:
        raise MeasureError(f"RprecMult: m must be a number >= 0, got {m!r}")
    cut = np.floor(factor * seg.num_rel(rel).astype(np.float64) + 0.9)
    at = seg.relevant_rows(rel)
    inside = seg.rank_at(at) <= cut[seg.segment_of(at)]
    hits = np.bincount(seg.segment_of(at)[inside], minlength=seg.n_segments)
    return np.where(cut > 0, hits / np.where(cut > 0, cut, 1.0), 0.0)


# ---- binG and yaap ------------------------------------------------------------------------------
@register(
    "BinG",
    sparse=True,
    rel=True,
    summary="binary G: mean over the R relevant documents of 1/log2(2 + nonrelevant ranked above it)",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved=COUNTS_ZERO,
    reference="trec_eval 10 m_binG.c (experimental, 2008)",
    trec_eval="binG",
    aliases=("binG",),
)
def binary_g(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """binG = (1/R) Σ_{retrieved relevant i} 1 / log2(2 + rank_i − m_i), m_i its ordinal among
    the relevant documents; 0 when R = 0."""
    at = seg.relevant_rows(rel)
    nonrel_above = seg.rank_at(at) - (seg.count_above(at, at) + 1)
    total = seg.sum_at(at, 1.0 / np.log2(2.0 + nonrel_above))
    num_rel = seg.num_rel(rel).astype(np.float64)
    return np.where(num_rel > 0, total / np.where(num_rel > 0, num_rel, 1.0), 0.0)


@register(
    "YAAP",
    sparse=True,
    rel=True,
    summary="yet another AP: log((1 + S) / (1 + R − S)), S = Σ precision at the relevant documents (= AP·R)",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="counts in R",
    reference="Robertson 2012 (On Smoothing Average Precision, ECIR); trec_eval 10 m_yaap.c",
    trec_eval="yaap",
    aliases=("yaap",),
)
def yaap(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """yaap = log((1 + S) / (1 + R − S)) with S = Σ_{retrieved relevant} m / rank_m."""
    at = seg.relevant_rows(rel)
    total = seg.sum_at(at, (seg.count_above(at, at) + 1) / seg.rank_at(at).astype(np.float64))
    return np.log((1.0 + total) / (1.0 + seg.num_rel(rel) - total))


# ---- trec_eval's RBP ----------------------------------------------------------------------------
def _check_p(p: float, name: str) -> float:
    if not 0.0 < float(p) < 1.0:
        raise MeasureError(f"{name}: the persistence p must lie in (0, 1), got {p!r}")
    return float(p)


def _topic_gains(seg: Segments, gains: Gains) -> np.ndarray:
    """Row gains scaled as trec_eval's rbp does: when a gain of the topic's levels 0 .. top
    level (or of ``gains``) exceeds 1, every gain is divided by the largest of them."""
    level_gains(seg, gains)  # rejects negative gains
    qrels = seg.qrels
    top_level = np.zeros(qrels.n_entries, dtype=np.int64)  # levels are sorted descending per entry
    has_levels = np.diff(qrels.offsets) > 0
    top_level[has_levels] = np.maximum(qrels.levels[qrels.offsets[:-1][has_levels]], 0)
    highest = int(top_level.max()) if len(top_level) else 0
    best_up_to = np.maximum.accumulate(gain_of(np.arange(highest + 1), gains))
    extra = max((float(v) for v in (gains or {}).values()), default=0.0)
    largest = np.maximum(best_up_to[top_level], extra)
    largest = seg.per_row(np.maximum(largest, 0.0)[seg.topic])
    gain = seg.gain(gains)
    return np.where(largest > 1.0, gain / np.where(largest > 1.0, largest, 1.0), gain)


@register(
    "RBPtrec",
    gains=True,
    params={"p": 0.9},
    summary="trec_eval's rank-biased precision (1−p) Σ p^(r−1) g(r), gains scaled per topic to [0, 1]",
    unjudged=AS_NONREL,
    pooled=AS_NONREL,
    unretrieved="not counted",
    reference="Moffat & Zobel 2008 (ACM TOIS 27(1)); trec_eval 10 m_rbp.c",
    trec_eval="rbp",
)
def rbp_trec(seg: Segments, *, p: float = 0.9, gains: Gains = None) -> np.ndarray:
    """RBP as trec_eval computes it: g(r) is the level's gain, divided by the largest gain of
    the topic's levels when that exceeds 1 (pdeval's ``RBP`` divides by the collection's
    largest gain and defaults to p = 0.8)."""
    p = _check_p(p, "RBPtrec")
    weight = np.power(p, seg.rank.astype(np.float64) - 1.0)
    return (1.0 - p) * seg.sum(_topic_gains(seg, gains) * weight)


@register(
    "RBPresid",
    params={"p": 0.9},
    summary="trec_eval's RBP residual: p^n + (1−p) Σ_{unjudged r} p^(r−1) if the list holds an unjudged document, else 0",
    unjudged="its weight is counted",
    pooled="its weight is counted",
    unretrieved="not counted",
    reference="Moffat & Zobel 2008 (ACM TOIS 27(1)); trec_eval 10 m_rbp_resid.c",
    trec_eval="rbp_resid",
)
def rbp_residual(seg: Segments, *, p: float = 0.9) -> np.ndarray:
    """The weight RBP could still gain: the unjudged ranks' weights plus the tail p^n beyond a
    list of n documents, as trec_eval's ``rbp_resid``, which is 0 for a list without unjudged
    documents (the tail is then not counted)."""
    p = _check_p(p, "RBPresid")
    unjudged = ~seg.is_judged()
    weight = np.power(p, seg.rank.astype(np.float64) - 1.0)
    residual = np.power(p, seg.lengths.astype(np.float64)) + (1.0 - p) * seg.sum(np.where(unjudged, weight, 0.0))
    return np.where(seg.count(unjudged) > 0, residual, 0.0)


__all__ = [
    "RECALL_LEVELS", "binary_g", "gm_bpref", "gm_map", "interpolated_precision", "interpolated_precision_average",
    "r_precision_multiple", "rbp_residual", "rbp_trec", "yaap",
]
