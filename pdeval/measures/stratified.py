"""Estimators for stratified samples of the pool: xinfAP, infNDCG, iP@k, inum_rel, inum_rel_ret,
iprec_at_recall (NIST's ``sample_eval.pl``).

Since 2008 large campaigns judge a *sample* of the pool and report estimates. Stratified
samples (Yilmaz, Kanoulas & Aslam, SIGIR 2008, "A Simple and Efficient Sampling Method for
Estimating AP and NDCG"): the pool of a topic is split into strata (e.g. depth 1–10, 11–30,
31–100), each sampled at its own rate. The qrels of NIST's ``sample_eval.pl`` give each pooled
document its stratum; ``-1`` marks a pooled document that was not sampled.

The estimators compute exactly what the reference script computes (tested against it with
``perl``): the script's conventions are parameters or documented rules, not "fixes". The
inclusion-probability estimators (statAP and its family) are in :mod:`pdeval.measures.statap`.

The engine hands these kernels the per-row ``stratum`` of sampled qrels (``Segments.info``)
and every qrels row of each (variant, topic) — judged or not — in ``QrelsTable.design``, so
that per-stratum counts include unretrieved documents. Qrels without a ``stratum`` column are
one stratum per topic.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from pdeval.errors import MeasureError
from pdeval.engine.segments import ABSENT, QrelsTable, Segments, gain_of
from pdeval.measures.kernels import NO_PRIME, divide, sampling_design
from pdeval.measures.registry import register

__all__ = [
    "xinf_ap",
    "inf_ndcg",
    "inferred_precision",
    "inferred_num_rel",
    "inferred_num_rel_ret",
    "inferred_interpolated_precision",
]

#: the smoothing constants of sample_eval.pl's precision estimate (r + 1e-5) / (s + 3e-5)
SMOOTH_REL = 0.00001
SMOOTH_SAMPLED = 0.00003

SAMPLE_EVAL = "Yilmaz, Kanoulas & Aslam 2008 (SIGIR); NIST sample_eval.pl"
VARIANTS = ("clinical", "trecvid")

STRATIFIED_UNJUDGED = "as nonrelevant (outside the pool; not counted in any stratum)"
STRATIFIED_POOLED = "in its stratum; relevance estimated from the stratum's judged sample"


def _row_strata(seg: Segments) -> np.ndarray:
    """The stratum code of each row; -1 for a document outside the topic's qrels."""
    if seg.info is not None and "stratum" in seg.info:
        return seg.info["stratum"]
    return np.where(seg.rel == ABSENT, -1, 0).astype(np.int32)


class _Strata:
    """Per (variant, topic) entry and stratum: documents, judged (sampled) and relevant ones."""

    def __init__(self, table: QrelsTable, rel: int):
        design, entry, level = sampling_design(table, "sampled measures")
        stratum = design.get("stratum")
        if stratum is None:
            stratum = np.zeros(len(entry), dtype=np.int32)
        self.n = int(stratum.max()) + 1 if len(stratum) else 1
        self.n_entries = table.n_entries
        key = entry.astype(np.int64) * self.n + stratum
        size = self.n_entries * self.n
        shape = (self.n_entries, self.n)
        self.docs = np.bincount(key, minlength=size).reshape(shape).astype(np.float64)
        self.sampled = np.bincount(key, weights=level >= 0, minlength=size).reshape(shape)
        self.relevant = np.bincount(key, weights=level >= rel, minlength=size).reshape(shape)
        self.design_key, self.level = key, level
        # R estimated stratum by stratum, summed in stratum order (sample_eval.pl's num_rels)
        self.rel_estimate = np.zeros(shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            sampled = self.sampled > 0
            self.rel_estimate[sampled] = self.relevant[sampled] * self.docs[sampled] / self.sampled[sampled]
        self.num_rel = np.zeros(self.n_entries)
        for stratum_code in range(self.n):
            self.num_rel = self.num_rel + self.rel_estimate[:, stratum_code]


def _strata(table: QrelsTable, rel: int) -> _Strata:
    key = ("strata", rel)
    if key not in table._cache:
        table._cache[key] = _Strata(table, rel)
    return table._cache[key]


def _check(variant: str, max_results) -> int:
    if variant not in VARIANTS:
        raise MeasureError(f"variant must be one of {list(VARIANTS)}, not {variant!r}")
    try:
        value = int(max_results)
    except (TypeError, ValueError):
        raise MeasureError(f"max_results must be a positive integer, not {max_results!r}") from None
    if value < 1 or value != max_results:
        raise MeasureError(f"max_results must be a positive integer, not {max_results!r}")
    return value


def _counts(seg: Segments, stratum: np.ndarray, mask: np.ndarray, n_strata: int) -> np.ndarray:
    """(segments x strata) counts of the rows where ``mask`` holds."""
    rows = np.flatnonzero(mask & (stratum >= 0))
    key = seg.segment_of(rows).astype(np.int64) * n_strata + stratum[rows]
    return np.bincount(key, minlength=seg.n_segments * n_strata).reshape(seg.n_segments, n_strata).astype(np.float64)


def _estimated_relevant(docs: np.ndarray, relevant: np.ndarray, sampled: np.ndarray) -> np.ndarray:
    """Σ_c n_c (r_c + 1e-5) / (s_c + 3e-5) over the strata (columns), in stratum order."""
    total = np.zeros(docs.shape[0])
    for c in range(docs.shape[1]):
        total = total + docs[:, c] * (relevant[:, c] + SMOOTH_REL) / (sampled[:, c] + SMOOTH_SAMPLED)
    return total


# ---- xinfAP -------------------------------------------------------------------------------
_MAX_RESULTS_DOC = (
    "``max_results`` is the script's ``$maxResultSize`` (1000 in the original TREC code and the "
    "1000-deep copy; 100 in NIST's clinical copy used for TREC CDS 2014–2016 and PM 2017–2019; "
    "1000 or 2000 in TRECVID's): only the first ``max_results`` documents of a ranking are read"
)


def _sample_eval(name: str, **spec):
    """Register a measure of ``sample_eval.pl``: its reference, its treatment of unjudged and
    pooled documents (unless ``spec`` says otherwise) and no prime."""
    spec.setdefault("unjudged", STRATIFIED_UNJUDGED)
    return register(name, pooled=STRATIFIED_POOLED, reference=SAMPLE_EVAL, no_prime=NO_PRIME, **spec)


@_sample_eval(
    "xinfAP",
    rel=True,
    params={"variant": "clinical", "max_results": 1000},
    choices={"variant": VARIANTS},
    aliases=("extended_infAP",),
    summary="extended inferred AP over a stratified sample of the pool (sample_eval.pl's infAP)",
    unretrieved="estimated in R (per stratum: judged relevant x documents / judged)",
    sparse=True,
)
def xinf_ap(seg: Segments, *, variant: str = "clinical", max_results: int = 1000, rel: int = 1) -> np.ndarray:
    """xinfAP, the extended inferred AP of Yilmaz, Kanoulas & Aslam (SIGIR 2008), as NIST's
    ``sample_eval.pl`` computes it (its ``infAP`` line).

    The pool of a topic is partitioned into strata c with |c| documents of which s_c were
    judged (sampled) and r_c found relevant (level ≥ ``rel``; the script's ``rel > 0``).
    The number of relevant documents is estimated stratum by stratum,

        R̂ = Σ_c r_c · |c| / s_c      (strata with s_c > 0)

    Only the first ``max_results`` documents of the ranking are read. At a judged relevant
    document at rank k, with n_c, s_c(k), r_c(k) the pooled, judged and relevant documents of
    stratum c *above* k (N = Σ_c n_c),

        E[prec@k] = 1/k + (N/k) · Σ_{c: n_c>0} (n_c/N) · (r_c(k) + 1e-5) / (s_c(k) + 3e-5)

    (the 1e-5 / 3e-5 smoothing is the script's: a stratum with nothing judged above k counts
    with precision 1/3). Each stratum's precisions are averaged over its judged relevant
    documents and weighted by the stratum's share of R̂:

        xinfAP = Σ_{c: s_c>0} (r_c |c| / s_c) / R̂ · (Σ_{relevant retrieved d in c} E[prec@k_d]) / r_c

    Documents outside the qrels count as nonrelevant and are in no stratum (they only push
    ranks down). Undefined (NaN; the script prints 0) when R̂ = 0.

    ``variant``: ``"clinical"`` (NIST's 2011 copy: CDS, PM) uses the formula above;
    ``"trecvid"`` (TRECVID's 2012 copies) multiplies xinfAP by R̂ / max_results when
    R̂ > max_results. {max_results}. Ties are broken by doc id descending (the script's and
    trec_eval's rule).
    """
    max_results = _check(variant, max_results)
    if seg.n_segments == 0:
        return np.zeros(0)
    view = seg.cut(max_results)
    strata = _strata(seg.qrels, rel)
    stratum = _row_strata(view)
    relevant = view.is_rel(rel)
    at = np.flatnonzero(relevant)
    segment = view.segment_of(at)
    k = view.rank_at(at).astype(np.float64)
    pooled_above = np.zeros((len(at), strata.n))
    ratio = np.zeros((len(at), strata.n))
    for c in range(strata.n):
        in_c = stratum == c
        n_c = view.count_above(np.flatnonzero(in_c), at).astype(np.float64)
        s_c = view.count_above(np.flatnonzero(in_c & (view.rel >= 0)), at)
        r_c = view.count_above(np.flatnonzero(in_c & relevant), at)
        pooled_above[:, c] = n_c
        ratio[:, c] = (r_c + SMOOTH_REL) / (s_c + SMOOTH_SAMPLED)
    depth = pooled_above.sum(axis=1)  # num_depth100: pooled documents above k
    above = np.zeros(len(at))
    with np.errstate(divide="ignore", invalid="ignore"):
        for c in range(strata.n):
            share = pooled_above[:, c] / depth
            above = above + np.where(pooled_above[:, c] > 0, share * ratio[:, c], 0.0)
    prec = 1.0 / k + (depth / k) * above
    key = segment.astype(np.int64) * strata.n + stratum[at]
    sap = np.bincount(key, weights=prec, minlength=seg.n_segments * strata.n).reshape(seg.n_segments, strata.n)
    entry = seg.topic
    num_rel = strata.num_rel[entry]
    value = np.zeros(seg.n_segments)
    with np.errstate(divide="ignore", invalid="ignore"):
        for c in range(strata.n):
            sampled, relevant_c = strata.sampled[entry, c], strata.relevant[entry, c]
            estimate = relevant_c * strata.docs[entry, c] / sampled
            probability = estimate / num_rel
            mean = np.where(relevant_c != 0, sap[:, c] / relevant_c, 0.0)
            value = value + np.where((sampled != 0) & (num_rel != 0), probability * mean, 0.0)
    if variant == "trecvid":
        value = np.where(num_rel > max_results, value * num_rel / max_results, value)
    return np.where(num_rel != 0, value, np.nan)


xinf_ap.__doc__ = xinf_ap.__doc__.replace("{max_results}", _MAX_RESULTS_DOC)


# ---- infNDCG ------------------------------------------------------------------------------
def _ideal_dcg(table: QrelsTable, variant: str, max_results: int, gains: Optional[Mapping[int, float]]) -> np.ndarray:
    """sample_eval.pl's optimal DCG per entry, with its cap conventions (see :func:`inf_ndcg`)."""
    frozen = None if not gains else tuple(sorted((int(a), float(b)) for a, b in gains.items()))
    key = ("sampled_ideal", variant, max_results, frozen)
    if key in table._cache:
        return table._cache[key]
    strata = _strata(table, 1)
    gain = gain_of(strata.level, gains)
    positive = gain > 0
    values = np.unique(gain[positive])[::-1]  # grades, best first
    n_entries, n_strata = strata.n_entries, strata.n
    ideal = np.zeros(n_entries)
    if len(values):
        grade = np.searchsorted(-values, -gain[positive])
        key_rows = strata.design_key[positive] * len(values) + grade
        per = np.bincount(key_rows, minlength=n_entries * n_strata * len(values)).reshape(
            n_entries, n_strata, len(values)
        )
        # estimated number of documents of each grade, stratum by stratum in stratum order
        count = np.zeros((n_entries, len(values)))
        with np.errstate(divide="ignore", invalid="ignore"):
            for c in range(n_strata):
                add = per[:, c, :] * strata.docs[:, c, None] / strata.sampled[:, c, None]
                count = count + np.where(per[:, c, :] > 0, add, 0.0)
        present = np.zeros((n_entries, len(values)), dtype=bool)
        present |= per.sum(axis=1) > 0
        if variant == "clinical":
            count = np.floor(count + 0.5)  # int($n + 0.5): NIST's 2011 rounding
        start = np.cumsum(count, axis=1) - count
        bound = start + count
        g = np.broadcast_to(values, count.shape)
        r = start + 1.0
        active = present & (r <= bound)
        partial = np.zeros(count.shape)
        log2 = np.log(2.0)
        while active.any():
            partial[active] += g[active] / (np.log(r[active] + 1.0) / log2)
            active &= ~(r >= max_results)  # "last" once the rank reaches $maxResultSize
            r = r + 1.0
            active &= r <= bound
        for column in range(len(values)):
            ideal = ideal + partial[:, column]
    table._cache[key] = ideal
    return ideal


@_sample_eval(
    "infNDCG",
    gains=True,
    params={"variant": "clinical", "max_results": 1000},
    choices={"variant": VARIANTS},
    summary="inferred nDCG over a stratified sample of the pool (sample_eval.pl's infNDCG)",
    unretrieved="estimated in the ideal DCG (per grade and stratum)",
    sparse=True,
)
def inf_ndcg(
    seg: Segments,
    *,
    variant: str = "clinical",
    max_results: int = 1000,
    gains: Optional[Mapping[int, float]] = None,
) -> np.ndarray:
    """infNDCG (Yilmaz, Kanoulas & Aslam, SIGIR 2008) as ``sample_eval.pl`` computes it.

    Over the first ``max_results`` documents, with n_c and s_c the pooled and judged documents
    of stratum c in the list (N = Σ_c n_c) and G_c = Σ_{judged d in c, gain > 0} g_d / log2(1 + k_d):

        DCĜ = N · Σ_{c: s_c>0} (n_c / N) · G_c / s_c,     infNDCG = DCĜ / IDCĜ

    The gain g of a level is the level itself, or ``gains[level]`` (the script's ``-G`` option
    maps levels to gains the same way). The ideal DCG is built from the estimated number of
    documents of each gain, R̂_g = Σ_c (judged documents of gain g in c) · |c| / s_c, placed
    best gain first at ranks 1, 2, ... with discount 1/log2(1 + r); the script stops a gain's
    run once r reaches ``max_results`` but **every lower gain still adds one term past the cap**
    (in NIST's clinical copy, 12 of the 30 CDS 2015 topics are affected). ``variant``:
    ``"clinical"`` rounds each R̂_g to the nearest integer (int(R̂_g + 0.5), NIST 2011; R̂_g is
    summed over the strata in the order of their names, as the script does, so an R̂_g that is
    exactly x.5 may round down in one naming of the strata and up in another, in both);
    ``"trecvid"`` does not, so ranks after the first gain are fractional. Gains are ordered
    numerically (the script sorts the grade strings, which is the same for one-digit grades).
    Undefined (NaN; the script prints 0) when the ideal DCG is 0. {max_results}.
    """
    max_results = _check(variant, max_results)
    if seg.n_segments == 0:
        return np.zeros(0)
    view = seg.cut(max_results)
    stratum = _row_strata(view)
    n_strata = _strata(seg.qrels, 1).n
    everything = np.ones(len(view.rel), dtype=bool)
    docs = _counts(view, stratum, everything, n_strata)
    sampled = _counts(view, stratum, view.rel >= 0, n_strata)
    gain = view.gain(gains)
    at = np.flatnonzero((gain > 0) & (stratum >= 0))
    discounted = gain[at] / (np.log(view.rank_at(at) + 1.0) / np.log(2.0))
    key = view.segment_of(at).astype(np.int64) * n_strata + stratum[at]
    gained = np.bincount(key, weights=discounted, minlength=seg.n_segments * n_strata).reshape(seg.n_segments, n_strata)
    depth = docs.sum(axis=1)
    dcg = np.zeros(seg.n_segments)
    with np.errstate(divide="ignore", invalid="ignore"):
        for c in range(n_strata):
            share = docs[:, c] / depth
            dcg = dcg + np.where((depth != 0) & (sampled[:, c] != 0), share * gained[:, c] / sampled[:, c], 0.0)
    ideal = _ideal_dcg(seg.qrels, variant, max_results, gains)[seg.topic]
    return divide(depth * dcg, ideal)


inf_ndcg.__doc__ = inf_ndcg.__doc__.replace("{max_results}", _MAX_RESULTS_DOC)


# ---- iP@k, inum_rel_ret, inum_rel -----------------------------------------------------------
def _estimated_relevant_retrieved(seg: Segments, rel: int, cutoff: Optional[int]) -> np.ndarray:
    """Σ_c n_c (r_c + 1e-5) / (s_c + 3e-5) over the rows ranked ≤ cutoff (all rows if None)."""
    view = seg.cut(cutoff)
    stratum = _row_strata(view)
    n_strata = _strata(seg.qrels, rel).n
    everything = np.ones(len(view.rel), dtype=bool)
    docs = _counts(view, stratum, everything, n_strata)
    sampled = _counts(view, stratum, view.rel >= 0, n_strata)
    relevant = _counts(view, stratum, view.is_rel(rel), n_strata)
    return _estimated_relevant(docs, relevant, sampled)


@_sample_eval(
    "iP",
    rel=True,
    cutoff="required",
    params={"max_results": 1000},
    summary="inferred precision at k over a stratified sample (sample_eval.pl's iP<k>)",
    unretrieved="not counted",
    sparse=True,
)
def inferred_precision(seg: Segments, *, cutoff: int, max_results: int = 1000, rel: int = 1) -> np.ndarray:
    """iP@k: the estimated number of relevant documents in the first k ranks, divided by k.

        iP@k = (1/k) Σ_c n_c(k) · (r_c(k) + 1e-5) / (s_c(k) + 3e-5)

    with n_c(k), s_c(k), r_c(k) the pooled, judged and judged relevant documents of stratum c
    within the first min(k, ``max_results``) ranks (the script's smoothing, so a list without
    any relevant document gets a small positive value). A list shorter than k is divided by k.
    """
    max_results = _check("clinical", max_results)
    if seg.n_segments == 0:
        return np.zeros(0)
    return _estimated_relevant_retrieved(seg.cut(max_results), rel, cutoff) / float(cutoff)


@_sample_eval(
    "inum_rel_ret",
    aggregate="sum",
    rel=True,
    params={"max_results": 1000},
    summary="estimated number of relevant documents retrieved (sample_eval.pl's inum_rel_ret; its 'all' line is the sum)",
    unretrieved="not counted",
    sparse=True,
)
def inferred_num_rel_ret(seg: Segments, *, max_results: int = 1000, rel: int = 1) -> np.ndarray:
    """inum_rel_ret = Σ_c n_c · (r_c + 1e-5) / (s_c + 3e-5) over the first ``max_results``
    documents (iP@k · k at k = the list's length). The script's ``all`` line is the sum over
    topics, not the mean."""
    max_results = _check("clinical", max_results)
    if seg.n_segments == 0:
        return np.zeros(0)
    return _estimated_relevant_retrieved(seg.cut(max_results), rel, None)


@_sample_eval(
    "inum_rel",
    aggregate="sum",
    rel=True,
    summary="estimated number of relevant documents R̂ (sample_eval.pl's inum_rel; its 'all' line sums every qrels topic)",
    unjudged="not counted",
    unretrieved="counted (estimated)",
    sparse=True,
)
def inferred_num_rel(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """R̂ = Σ_{c: s_c>0} r_c · |c| / s_c: each stratum's judged relevant documents scaled by
    its sampling rate. The script's ``all`` line sums R̂ over *every* qrels topic, also those
    the run did not retrieve for."""
    if seg.n_segments == 0:
        return np.zeros(0)
    return _strata(seg.qrels, rel).num_rel[seg.topic]


RECALL_POINTS = tuple(i / 10 for i in range(11))


@_sample_eval(
    "iprec_at_recall",
    rel=True,
    params={"recall": None, "max_results": 1000},
    required=("recall",),
    summary="inferred interpolated precision at a recall level 0, 0.1, ..., 1 (sample_eval.pl's iprec@rec lines)",
    unretrieved="estimated in R (the recall levels are fractions of R̂)",
)
def inferred_interpolated_precision(seg: Segments, *, recall=None, max_results: int = 1000, rel: int = 1) -> np.ndarray:
    """Interpolated precision at recall ``recall`` ∈ {0, 0.1, ..., 1}, estimated as
    ``sample_eval.pl`` does (it prints only the mean over topics, ``iprec@rec0.10 all``).

    With n̂(k) = Σ_c n_c(k) (r_c(k) + 1e-5)/(s_c(k) + 3e-5) the estimated relevant documents in the
    first k ranks (see ``iP``) and the cut points t_j = (j/10) · R̂, the script walks the ranks
    from the last (k = n, at most ``max_results``) to the first, keeping the running maximum
    p = max_{k' ≥ k} n̂(k')/k'. It starts at the largest j with t_j ≤ n̂(n); at each rank where
    t_j > n̂(k) it assigns the current p to level j and moves to j − 1 (**one level per rank**,
    the script's loop); the levels left at the top get the maximum over the whole list.
    """
    max_results = _check("clinical", max_results)
    try:
        level = int(round(float(recall) * 10))
    except (TypeError, ValueError):
        raise MeasureError(f"recall must be one of {list(RECALL_POINTS)}, not {recall!r}") from None
    if abs(float(recall) * 10 - level) > 1e-9 or not 0 <= level <= 10:
        raise MeasureError(f"recall must be one of {list(RECALL_POINTS)}, not {recall!r}")
    if seg.n_segments == 0:
        return np.zeros(0)
    view = seg.cut(max_results)
    strata = _strata(seg.qrels, rel)
    stratum = _row_strata(view)
    # n̂(k) at every rank: per-stratum running counts within each list
    estimate = np.zeros(len(view.rel))
    for c in range(strata.n):
        in_c = stratum == c
        docs = view.cumsum(in_c)
        sampled = view.cumsum(in_c & (view.rel >= 0))
        relevant = view.cumsum(in_c & view.is_rel(rel))
        estimate = estimate + docs * (relevant + SMOOTH_REL) / (sampled + SMOOTH_SAMPLED)
    lengths = view.lengths
    ends = view.offsets[1:] - 1
    cuts = strata.num_rel[seg.topic][:, None] * np.asarray(RECALL_POINTS)[None, :]
    # the estimate at each list's last rank (0 for an empty list; no rows at all: every list empty)
    last = np.where(lengths > 0, estimate[np.maximum(ends, 0)], 0.0) if len(estimate) else np.zeros(len(lengths))
    current = (cuts <= last[:, None]).sum(axis=1) - 1  # the script's first while loop
    best = np.zeros(seg.n_segments)
    value = np.zeros((seg.n_segments, len(RECALL_POINTS)))
    for back in range(int(lengths.max()) if len(lengths) else 0):
        alive = np.flatnonzero(lengths > back)
        row = ends[alive] - back
        rank = lengths[alive] - back
        best[alive] = np.maximum(best[alive], estimate[row] / rank)
        cur = current[alive]
        hit = (cur >= 0) & (cuts[alive, np.maximum(cur, 0)] > estimate[row])
        value[alive[hit], cur[hit]] += best[alive[hit]]
        current[alive[hit]] -= 1
    remaining = np.arange(len(RECALL_POINTS))[None, :] <= current[:, None]
    value = np.where(remaining, best[:, None], value)
    return value[:, level]
