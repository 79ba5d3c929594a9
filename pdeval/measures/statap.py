"""The statAP family: estimators for samples with known inclusion probabilities (the prels of
``statAP_MQ_eval``): statAP, statAP_var, statRprec, statP@k, statnDCG@k.

Inclusion-probability samples (Aslam, Pavlu & Yilmaz, SIGIR 2006, "A Statistical Method for
System Evaluation Using Incomplete Judgments"): each judged document carries the probability π
with which it entered the sample. The estimators compute exactly what the reference scripts
compute (tested against them with ``perl``); the stratified estimators (xinfAP, infNDCG, iP)
are in :mod:`pdeval.measures.stratified`.

The engine hands these kernels the per-row ``inclusion_prob`` of sampled qrels
(``Segments.info``) and every qrels row of each (variant, topic) in ``QrelsTable.design``.
Qrels without an ``inclusion_prob`` column are a census (π = 1 for every judged document).
"""

from __future__ import annotations

import numpy as np

from pdeval.errors import MeasureError
from pdeval.engine.segments import QrelsTable, Segments
from pdeval.measures.kernels import NO_PRIME, divide, sampling_design
from pdeval.measures.registry import register

__all__ = [
    "stat_ap",
    "stat_ap_variance",
    "stat_rprec",
    "stat_precision",
    "stat_ndcg",
]

STATAP = "Aslam, Pavlu & Yilmaz 2006 (SIGIR); statAP_MQ_eval_v3.pl (TREC Million Query 2007-2009, Web 2009)"
STAT_VERSIONS = ("v3", "v4")
STAT_UNJUDGED = "as nonrelevant (not in the sample)"
STAT_POOLED = "as not sampled (nonrelevant)"


class _Sample:
    """Per (variant, topic) entry: what statAP_MQ_eval knows of the sample before reading a run."""

    def __init__(self, table: QrelsTable, rel: int):
        design, entry, level = sampling_design(table, "the statAP measures")
        prob = design.get("inclusion_prob")
        if prob is None:  # plain qrels: a census, every judged document included with probability 1
            prob = np.ones(len(entry))
        n = table.n_entries
        relevant = level >= rel
        self.sampled = np.bincount(entry, weights=level >= 0, minlength=n)
        at, p = entry[relevant], prob[relevant]
        # RQ: Σ 1/π over the sampled relevant documents; the sums the variance needs for the
        # relevant documents a list misses are these totals minus the retrieved ones
        self.num_rel = np.bincount(at, weights=1.0 / p, minlength=n)
        self.inverse_square = np.bincount(at, weights=1.0 / (p * p), minlength=n)
        self.weight = np.bincount(at, weights=(1.0 - p) / p / p, minlength=n)
        self.relevant = np.bincount(entry, weights=level >= 1, minlength=n)  # the script's rel > 0 (nDCG)
        self.very = np.bincount(entry, weights=level >= 2, minlength=n)  # the script's rel > 1


def _sample(table: QrelsTable, rel: int) -> _Sample:
    key = ("statap", rel)
    if key not in table._cache:
        table._cache[key] = _Sample(table, rel)
    return table._cache[key]


def _check_version(version: str) -> None:
    if version not in STAT_VERSIONS:
        raise MeasureError(f"version must be one of {list(STAT_VERSIONS)}, not {version!r}")


class _StatList:
    """The relevant sampled rows of each list: π, 1/π, the running Σ 1/π above, precisions."""

    def __init__(self, seg: Segments, rel: int):
        self.sample = _sample(seg.qrels, rel)
        if seg.info is not None and "inclusion_prob" in seg.info:
            prob = seg.info["inclusion_prob"]
        else:  # plain qrels: a census (see _Sample)
            prob = np.ones(len(seg.rel))
        self.at = seg.relevant_rows(rel)
        self.segment = seg.segment_of(self.at)
        self.rank = seg.rank_at(self.at).astype(np.float64)
        self.prob = prob[self.at]
        inverse = 1.0 / self.prob
        inclusive = _segment_cumsum(inverse, self.segment, seg.n_segments)
        self.inverse = inverse
        self.above = inclusive - inverse  # Σ 1/π of the relevant documents above (sum_prec)
        self.prec = (1.0 + self.above) / self.rank
        self.num_rel = self.sample.num_rel[seg.topic]
        up = np.bincount(self.segment, weights=self.prec / self.prob, minlength=seg.n_segments)
        self.statap = divide(up, self.num_rel)


def _segment_cumsum(values: np.ndarray, segment: np.ndarray, n_segments: int) -> np.ndarray:
    """Inclusive cumulative sums of ``values`` within runs of equal (sorted) ``segment``.

    One running sum over all segments minus its value where each segment starts; the running
    sum is kept in extended precision so that the difference keeps float64 accuracy however
    many lists precede a segment."""
    total = np.cumsum(values, dtype=np.longdouble)
    if len(values) == 0:
        return total.astype(np.float64)
    starts = np.searchsorted(segment, np.arange(n_segments))
    before = np.concatenate((np.zeros(1, dtype=np.longdouble), total))[starts]
    return (total - before[segment]).astype(np.float64)


def _stat_list(seg: Segments, rel: int) -> _StatList:
    key = ("statlist", rel)
    if key not in seg._views:
        seg._views[key] = _StatList(seg, rel)
    return seg._views[key]


def _statap(name: str, **spec):
    """Register a measure of ``statAP_MQ_eval``: its reference, its treatment of unjudged and
    pooled documents (unless ``spec`` says otherwise) and no prime."""
    spec.setdefault("unjudged", STAT_UNJUDGED)
    spec.setdefault("pooled", STAT_POOLED)
    return register(name, reference=STATAP, no_prime=NO_PRIME, **spec)


@_statap(
    "statAP",
    rel=True,
    summary="statistical AP: AP estimated from a sample with known inclusion probabilities",
    unretrieved="estimated in R (Σ 1/π over the sampled relevant documents)",
    sparse=True,
)
def stat_ap(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """statAP (Aslam, Pavlu & Yilmaz 2006) as ``statAP_MQ_eval_v3.pl`` computes it.

    Each sampled document d has inclusion probability π_d. With R̂ = Σ_{sampled relevant d} 1/π_d
    and, at a sampled relevant document at rank k,

        preĉ@k = (1 + Σ_{sampled relevant d above k} 1/π_d) / k,

        statAP = (1/R̂) Σ_{sampled relevant d retrieved} preĉ@k_d / π_d

    (Horvitz–Thompson estimates of R and of the sum of precisions; the ratio can exceed 1).
    Documents outside the sample are nonrelevant. Qrels without an ``inclusion_prob`` column
    are a census (π = 1 for every judged document), where statAP is AP and statP@k is P@k.

    Undefined (NaN) when R̂ = 0: the script leaves such a topic out of its means ("valid
    topics"); reading prels drops those topics and the topics judged by UMass's method only
    (:func:`pdeval.sources.sampled.prels_qrels`), so the means over the result are the script's.
    The script orders tied scores in Perl's hash order; pdeval breaks ties by doc id
    descending (trec_eval's rule).
    """
    if seg.n_segments == 0:
        return np.zeros(0)
    return _stat_list(seg, rel).statap


@_statap(
    "statAP_var",
    rel=True,
    params={"version": "v3"},
    choices={"version": STAT_VERSIONS},
    aliases=("var_statAP",),
    summary="the per-topic variance estimate of statAP (statAP_MQ_eval's varAP)",
    unretrieved="enter the variance with y = -statAP/π",
    sparse=True,
)
def stat_ap_variance(seg: Segments, *, version: str = "v3", rel: int = 1) -> np.ndarray:
    """The variance estimate of statAP printed by ``statAP_MQ_eval`` (``varAP``).

    For every sampled relevant document, y = (preĉ@k − statAP)/π if retrieved at rank k and
    y = −statAP/π if not; n is the number of sampled documents of the topic. Then

        S1 = Σ (1 − π) y²,     S2 = Σ_{i≠j} y_i y_j = (Σ y)² − Σ y²

    ``version="v3"``: S3 = Σ_{retrieved i, rank order} (Σ_{retrieved j ≤ i} (1 − π_j)/π_j²) / k_i²,

        var = (S1 − S2/(n − 1) + S3) / R̂²

    ``version="v4"`` (the v4 copy): S3 = Σ_{retrieved i} (Σ_{retrieved j below i} 1/(k_j π_j))² (1 − π_i)/π_i²,

        var = min(1, (S1 − S2/(n − 1) + S3) / R̂² · n / (m + 0.1))

    with m the sampled documents in the list. The variance of the mean over T topics that
    the script prints (VAR_MAP) is Σ var / T². Undefined when R̂ = 0 or n = 1.
    """
    _check_version(version)
    if seg.n_segments == 0:
        return np.zeros(0)
    stat = _stat_list(seg, rel)
    sample = stat.sample
    n_seg, segment, prob = seg.n_segments, stat.segment, stat.prob
    statap = np.nan_to_num(stat.statap)
    y = (stat.prec - statap[segment]) / prob
    one_minus = (1.0 - prob) / prob / prob
    topic = seg.topic
    # the relevant documents the list misses: y = -statAP/π, summed from totals
    missing_inverse = sample.num_rel[topic] - np.bincount(segment, weights=stat.inverse, minlength=n_seg)
    missing_square = sample.inverse_square[topic] - np.bincount(segment, weights=1.0 / (prob * prob), minlength=n_seg)
    missing_weight = sample.weight[topic] - np.bincount(segment, weights=one_minus, minlength=n_seg)
    s1 = np.bincount(segment, weights=(1.0 - prob) * y * y, minlength=n_seg) + statap**2 * missing_weight
    total = np.bincount(segment, weights=y, minlength=n_seg) - statap * missing_inverse
    squares = np.bincount(segment, weights=y * y, minlength=n_seg) + statap**2 * missing_square
    s2 = total * total - squares
    if version == "v3":
        running = _segment_cumsum(one_minus, segment, n_seg)
        s3 = np.bincount(segment, weights=running / stat.rank / stat.rank, minlength=n_seg)
    else:
        inverse_rank = 1.0 / stat.rank / prob
        below = np.bincount(segment, weights=inverse_rank, minlength=n_seg)[segment] - _segment_cumsum(
            inverse_rank, segment, n_seg
        )
        s3 = np.bincount(segment, weights=below * below * one_minus, minlength=n_seg)
    sampled = sample.sampled[topic]
    with np.errstate(divide="ignore", invalid="ignore"):
        var = (s1 - s2 / (sampled - 1.0) + s3) / stat.num_rel / stat.num_rel
        if version == "v4":
            in_list = seg.count(seg.rel >= 0)
            var = np.minimum(var / (in_list + 0.1) * sampled, 1.0)
    return np.where((stat.num_rel > 0) & (sampled > 1), var, np.nan)


@_statap(
    "statRprec",
    rel=True,
    summary="statistical R-precision: Σ 1/π of the sampled relevant documents in the first round(R̂) ranks / round(R̂)",
    unretrieved="estimated in R",
)
def stat_rprec(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """statRprec = (Σ_{sampled relevant d at rank ≤ ρ} 1/π_d) / ρ with ρ = round(R̂) = int(R̂ + 0.5);
    when the list is shorter than ρ, (Σ_{sampled relevant d retrieved} 1/π_d) / R̂ (the script's
    fallback divides by the unrounded R̂). Undefined when R̂ = 0."""
    if seg.n_segments == 0:
        return np.zeros(0)
    stat = _stat_list(seg, rel)
    rho = np.floor(stat.num_rel + 0.5)
    within = stat.rank <= rho[stat.segment]
    top = np.bincount(stat.segment[within], weights=stat.inverse[within], minlength=seg.n_segments)
    everything = np.bincount(stat.segment, weights=stat.inverse, minlength=seg.n_segments)
    reached = (seg.lengths >= rho) & (rho >= 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = np.where(reached, top / rho, everything / stat.num_rel)
    return np.where(stat.num_rel > 0, value, np.nan)


@_statap(
    "statP",
    rel=True,
    cutoff="required",
    params={"version": "v3"},
    choices={"version": STAT_VERSIONS},
    summary="statistical precision at k: Σ 1/π of the sampled relevant documents in the first k ranks / k",
    unretrieved="not counted",
)
def stat_precision(seg: Segments, *, cutoff: int, version: str = "v3", rel: int = 1) -> np.ndarray:
    """statP@k = (Σ_{sampled relevant d at rank ≤ k} 1/π_d) / k (v3 reports k = 30). The v4
    copy reports k = 10, 20, 50, 100 (printing P@100 under the label ``Prec_at_50``) and 0 for
    a list shorter than k (``version="v4"``). Undefined when R̂ = 0 (the script does not count
    such a topic)."""
    _check_version(version)
    if seg.n_segments == 0:
        return np.zeros(0)
    stat = _stat_list(seg, rel)
    within = stat.rank <= cutoff
    value = np.bincount(stat.segment[within], weights=stat.inverse[within], minlength=seg.n_segments) / cutoff
    if version == "v4":
        value = np.where(seg.lengths >= cutoff, value, 0.0)
    return np.where(stat.num_rel > 0, value, np.nan)


def _discount_prefix(length: int) -> np.ndarray:
    """D[r] = Σ_{i ≤ r} 1/log2(i + 1), D[0] = 0 (log2 as the script computes it)."""
    ranks = np.arange(1, length + 1, dtype=np.float64)
    return np.concatenate(([0.0], np.cumsum(1.0 / (np.log(ranks + 1.0) / np.log(2.0)))))


@_statap(
    "statnDCG",
    cutoff="required",
    params={"version": "v3"},
    choices={"version": STAT_VERSIONS},
    summary="nDCG@k over the sampled documents as statAP_MQ_eval reports it (v3: @30, with its ideal list)",
    unjudged="gain 0",
    pooled="gain 0",
    unretrieved="in the ideal list (sampled documents only)",
    sparse=True,
)
def stat_ndcg(seg: Segments, *, cutoff: int, version: str = "v3") -> np.ndarray:
    """statnDCG@k = Σ_{r ≤ k} (2^level_r − 1)/log2(r + 1) / IDCG, levels of the sampled
    documents (0 outside the sample), no weighting by 1/π. The ideal list is built from the
    sampled counts, R_1 = sampled documents of level ≥ 1, R_2 = of level ≥ 2:

    * ``version="v3"`` (statAP_MQ_eval_v3, which reports k = 30): gain 3 at ranks 1..R_2, then
      gain 1 at ranks R_2 + 1 .. R_1 − R_2 (the script's loop bound: only R_1 − 2·R_2 documents
      of level 1 are placed), both cut at k;
    * ``version="v4"``: the sampled relevant documents by level descending, gain 2^level − 1, cut at k
      — on levels 0–2 this is the v3 ideal list without its loop-bound slip (use it as the
      corrected v3 nDCG).

    Undefined when R̂ = 0 (the statAP topic rule; topics without a sampled relevant document)."""
    _check_version(version)
    if seg.n_segments == 0:
        return np.zeros(0)
    stat = _stat_list(seg, 1)
    view = seg.cut(cutoff)
    judged = np.flatnonzero(view.rel > 0)
    rating = np.power(2.0, view.rel[judged].astype(np.float64)) - 1.0
    discount = np.log(view.rank_at(judged) + 1.0) / np.log(2.0)
    dcg = np.bincount(view.segment_of(judged), weights=rating / discount, minlength=seg.n_segments)
    table = seg.qrels
    if version == "v3":
        prefix = _discount_prefix(cutoff)
        very = np.minimum(stat.sample.very, cutoff).astype(np.int64)
        last = np.clip(stat.sample.relevant - stat.sample.very, 0, cutoff).astype(np.int64)
        ideal_entry = 3.0 * prefix[very] + np.where(last > very, prefix[last] - prefix[np.minimum(very, last)], 0.0)
        ideal = ideal_entry[seg.topic]
    else:
        top = int(np.max(table.levels)) if len(table.levels) else 0
        gains = {level: 2.0**level - 1.0 for level in range(1, top + 1)}
        ideal = seg.ideal(gains).cut(cutoff)
        ideal = ideal.sum(ideal.rel / (np.log(ideal.rank + 1.0) / np.log(2.0)))
    value = divide(dcg, ideal)
    return np.where(stat.num_rel > 0, value, np.nan)
