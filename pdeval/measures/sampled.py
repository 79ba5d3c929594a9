"""Estimators for sampled judgments: xinfAP, infNDCG, iP@k (stratified samples) and the statAP family.

Since 2008 large campaigns judge a *sample* of the pool and report estimates:

* **Stratified samples** (Yilmaz, Kanoulas & Aslam, SIGIR 2008, "A Simple and Efficient
  Sampling Method for Estimating AP and NDCG"): the pool of a topic is split into strata
  (e.g. depth 1–10, 11–30, 31–100), each sampled at its own rate. The qrels of NIST's
  ``sample_eval.pl`` give each pooled document its stratum; ``-1`` marks a pooled document
  that was not sampled. Measures: ``xinfAP``, ``infNDCG``, ``iP@k``, ``inum_rel``,
  ``inum_rel_ret``, ``iprec_at_recall``.
* **Inclusion-probability samples** (Aslam, Pavlu & Yilmaz, SIGIR 2006, "A Statistical
  Method for System Evaluation Using Incomplete Judgments"): each judged document carries
  the probability π with which it entered the sample (the prels of ``statAP_MQ_eval``).
  Measures: ``statAP``, ``statAP_var``, ``statRprec``, ``statP@k``, ``statnDCG@k``.

Both families compute exactly what the reference scripts compute (tested against them with
``perl``): the scripts' conventions are parameters or documented rules, not "fixes".

The engine hands these kernels the per-row ``stratum`` / ``inclusion_prob`` of sampled
qrels (``Segments.info``) and every qrels row of each (variant, topic) — judged or not —
in ``QrelsTable.design``, so that per-stratum counts include unretrieved documents.
Qrels without a ``stratum`` column are one stratum per topic.
"""

from __future__ import annotations

from typing import Mapping, Optional

import numpy as np

from pdeval.errors import MeasureError
from pdeval.engine.segments import ABSENT, QrelsTable, Segments, gain_of
from pdeval.measures.kernels import divide
from pdeval.measures.registry import register

__all__ = [
    "xinf_ap",
    "inf_ndcg",
    "inferred_precision",
    "inferred_num_rel",
    "inferred_num_rel_ret",
    "inferred_interpolated_precision",
    "stat_ap",
    "stat_ap_variance",
    "stat_rprec",
    "stat_precision",
    "stat_ndcg",
]

#: the smoothing constants of sample_eval.pl's precision estimate (r + 1e-5) / (s + 3e-5)
SMOOTH_REL = 0.00001
SMOOTH_SAMPLED = 0.00003

SAMPLE_EVAL = "Yilmaz, Kanoulas & Aslam 2008 (SIGIR); NIST sample_eval.pl"
VARIANTS = ("clinical", "trecvid")
NO_PRIME = "the estimator needs the unsampled (-1) documents and the ranks of the full list"

STRATIFIED_UNJUDGED = "as nonrelevant (outside the pool; not counted in any stratum)"
STRATIFIED_POOLED = "in its stratum; relevance estimated from the stratum's judged sample"


def _row_strata(seg: Segments) -> np.ndarray:
    """The stratum code of each row; -1 for a document outside the topic's qrels."""
    if seg.info is not None and "stratum" in seg.info:
        return seg.info["stratum"]
    return np.where(seg.rel == ABSENT, -1, 0).astype(np.int32)


def _design(table: QrelsTable, who: str) -> tuple[dict, np.ndarray, np.ndarray]:
    """The sampling design of the qrels (every qrels row's entry and level, and its sampling
    columns), its entries and its levels."""
    design = table.design
    if design is None:
        raise MeasureError(f"{who} need qrels evaluated by pdeval.evaluate (no sampling design)")
    return design, design["entry"], design["level"]


class _Strata:
    """Per (variant, topic) entry and stratum: documents, judged (sampled) and relevant ones."""

    def __init__(self, table: QrelsTable, rel: int):
        design, entry, level = _design(table, "sampled measures")
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
    ``"clinical"`` rounds each R̂_g to the nearest integer (int(R̂_g + 0.5), NIST 2011);
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


# ---- statAP family (inclusion probabilities) --------------------------------------------------
STATAP = "Aslam, Pavlu & Yilmaz 2006 (SIGIR); statAP_MQ_eval_v3.pl (TREC Million Query 2007-2009, Web 2009)"
STAT_VERSIONS = ("v3", "v4")
STAT_UNJUDGED = "as nonrelevant (not in the sample)"
STAT_POOLED = "as not sampled (nonrelevant)"


class _Sample:
    """Per (variant, topic) entry: what statAP_MQ_eval knows of the sample before reading a run."""

    def __init__(self, table: QrelsTable, rel: int):
        design, entry, level = _design(table, "the statAP measures")
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
