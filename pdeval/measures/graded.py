"""Graded measures: rpref_N, rpref_relative, rpref_relative2, n-pref, Q-measure, Sakai's nDCG.

Gains follow MEASURES.md 0.2: level ``ℓ >= 1`` has gain ℓ unless ``gains={level: gain}``
says otherwise; level 0, pooled (``-1``) and absent documents have gain 0, and a document
is relevant iff its gain is > 0. The ideal list (0.7) holds every qrels document with gain
> 0, sorted by gain descending; it does not depend on the run.

The rpref family (De Beer & Moens 2006, in Sakai 2007's condensed-list form) works on
judged documents only: the kernels condense the lists themselves, so rpref and rpref' are
the same. Q and nDCG treat unjudged documents as gain 0; their primes (``Q'``,
``nDCG'(dcg=sakai)``) are evaluated by the registry on the condensed list.

Each kernel takes a :class:`~pdeval.engine.segments.Segments` and returns one value per list, NaN
where the measure is undefined. Formulas and worked examples: MEASURES.md M11–M14, M17, M18.
"""

from __future__ import annotations

import math
from typing import Optional

import numpy as np

from pdeval.errors import MeasureError
from pdeval.engine.ranking import ranks_within
from pdeval.engine.segments import Segments
from pdeval.measures.kernels import Gains, collection_max, divide, level_gains
from pdeval.measures.registry import register

__all__ = ["rpref_n", "rpref_relative", "rpref_relative2", "npref", "q_measure", "ndcg_sakai"]

IGNORED = "ignored (removed)"
AS_ZERO_GAIN = "as nonrelevant (gain 0)"
RPREF_UNRETRIEVED = "contributes 0 (counted in R')"


def misplacement_penalty(view: Segments, value: np.ndarray) -> np.ndarray:
    """penalty(r') = Σ_{i' < r', v(i') < v(r')} (v(r') − v(i')) / v(r') for every row with v > 0.

    Computed per distinct positive value v0 (there are few: one per relevance level) as
    C(r') − S(r')/v0, where C and S are the within-list count and value sum of the rows above
    with a value below v0. Rows with v = 0 get 0. The penalty is invariant to scaling v.
    """
    penalty = np.zeros(len(value), dtype=np.float64)
    for level in np.unique(value[value > 0]):
        lower = value < level
        at = value == level
        count = view.cumsum(lower)
        total = view.cumsum(np.where(lower, value, 0.0))
        penalty[at] = count[at] - total[at] / level
    return penalty


def _rpref(
    seg: Segments,
    row_value: np.ndarray,
    level_value: np.ndarray,
    scale: np.ndarray,
    norm: str,
) -> np.ndarray:
    """The rpref family on condensed lists ``seg`` (already condensed).

    ``row_value``/``level_value`` are the relevance values of the rows and of every judged
    qrels level in any common scale where ``scale`` (per segment) stands for φ = 1:
    φ = value / scale. With total = Σ_{judged d} value(d) (so R' = total / scale) and
    N' = (judged count) − R', each retrieved row with value > 0 contributes
    value · (1 − penalty / D), D = N' (``norm="N"``), r' − 1 (``"relative"``, rank 1 skipped)
    or r' (``"relative2"``); the sum is divided by total.
    """
    qrels = seg.qrels
    total = qrels.count(level_value)[seg.topic]
    judged = np.diff(qrels.offsets)[seg.topic].astype(np.float64)
    penalty = misplacement_penalty(seg, row_value)
    rank = seg.rank.astype(np.float64)
    relevant = row_value > 0
    if norm == "N":
        with np.errstate(divide="ignore", invalid="ignore"):
            n_prime = judged - divide(total, scale)
        n_row = seg.per_row(n_prime)
        safe = np.where(n_row > 0, n_row, 1.0)
        term = 1.0 - np.where(n_row > 0, penalty / safe, 0.0)
    elif norm == "relative":
        term = 1.0 - penalty / np.maximum(rank - 1.0, 1.0)
        relevant = relevant & (rank > 1)
    else:
        term = 1.0 - penalty / rank
    return divide(seg.sum(np.where(relevant, row_value * term, 0.0)), total)


def _rpref_measure(seg: Segments, gains: Gains, gain_max, norm: str) -> np.ndarray:
    level_gain = level_gains(seg, gains)
    scale = collection_max(seg, gains, gain_max)
    view = seg.condensed()
    return _rpref(view, view.gain(gains), level_gain, scale, norm)


_RPREF_DOC = """

    φ(d) = gain(d) / G with G = ``gain_max`` (default: the largest gain over every topic of
    the qrels, per Sakai 2007); R' = Σ_{judged d} φ(d), N' = Σ_{judged d} (1 − φ(d)), and on
    the condensed list L' (unjudged documents removed)

        penalty(r') = Σ_{i' < r', φ(i') < φ(r')} (φ(r') − φ(i')) / φ(r').

    Only retrieved relevant documents contribute (Sakai's condensed form; MEASURES.md Part III
    item 3); unretrieved relevant documents contribute 0 but count in R'. Undefined when R' = 0.
"""


@register(
    "rpref_N",
    sparse=True,
    gains=True,
    params={"gain_max": None},
    summary="graded bpref_N (rpref with absolute normalisation): Σ φ(1 − penalty/N') / R' over the condensed list",
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=RPREF_UNRETRIEVED + "; unretrieved nonrelevant count in N'",
    reference="De Beer & Moens 2006; Sakai 2007, eqs. 2–5 and 16",
)
def rpref_n(seg: Segments, *, gains: Gains = None, gain_max: Optional[float] = None) -> np.ndarray:
    """rpref_N = (1/R') Σ_{r': φ(r') > 0} φ(r') · (1 − penalty(r') / N'); N' = 0 makes the
    penalty term 0. With binary gains rpref_N = bpref_N. MEASURES.md M11."""
    return _rpref_measure(seg, gains, gain_max, "N")


@register(
    "rpref_relative",
    sparse=True,
    gains=True,
    params={"gain_max": None},
    summary=(
        "graded bpref_relative (rpref with relative normalisation): penalty over the judged documents above; "
        "condensed rank 1 skipped"
    ),
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=RPREF_UNRETRIEVED,
    reference="De Beer & Moens 2006; Sakai 2007, eqs. 7–8 and 17",
)
def rpref_relative(seg: Segments, *, gains: Gains = None, gain_max: Optional[float] = None) -> np.ndarray:
    """rpref_relative = (1/R') Σ_{r' ≠ 1, φ(r') > 0} φ(r') · (1 − penalty(r') / (r' − 1)).
    An ideal ranking scores (cg_I − g_I(1)) / cg_I. With binary gains it equals
    bpref_relative. MEASURES.md M12."""
    return _rpref_measure(seg, gains, gain_max, "relative")


@register(
    "rpref_relative2",
    sparse=True,
    gains=True,
    params={"gain_max": None},
    summary="rpref normalised by the condensed rank r' (rank 1 included); an ideal ranking scores 1; binary case = AP'",
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=RPREF_UNRETRIEVED,
    reference="Sakai 2007, eq. 19",
)
def rpref_relative2(seg: Segments, *, gains: Gains = None, gain_max: Optional[float] = None) -> np.ndarray:
    """rpref_relative2 = (1/R') Σ_{φ(r') > 0} φ(r') · (1 − penalty(r') / r'). With binary
    gains it equals AP' (Sakai's bpref_relative2). MEASURES.md M13."""
    return _rpref_measure(seg, gains, gain_max, "relative2")


for _kernel in (rpref_n, rpref_relative, rpref_relative2):
    _kernel.__doc__ = (_kernel.__doc__ or "") + _RPREF_DOC


def _partition(gain: np.ndarray, top: np.ndarray, n: int, exact: bool) -> np.ndarray:
    """Partition index j = min(floor(n·gain/G + 1e-9), n − 1) (exact integer form when ``exact``)."""
    if exact:
        j = (np.rint(gain).astype(np.int64) * n) // np.rint(top).astype(np.int64)
    else:
        with np.errstate(divide="ignore", invalid="ignore"):
            j = np.floor(n * gain / top + 1e-9)
    return np.minimum(np.where(gain > 0, j, 0), n - 1).astype(np.float64)


def _is_integral(values: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(values)) and np.all(values == np.rint(values)))


@register(
    "npref",
    sparse=True,
    gains=True,
    params={"n": 4, "norm": "relative", "gain_max": None},
    choices={"norm": ("relative", "N", "relative2")},
    aliases=("n_pref",),
    summary=(
        "n-pref: relevance φ cut into n equal partitions of [0,1] (value j/(n−1), boundaries go up), "
        "then rpref with norm=relative (default), N or relative2; n=2 gives binary bpref"
    ),
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=RPREF_UNRETRIEVED + " (N' with norm=N)",
    reference="De Beer & Moens 2006 (partition scheme)",
)
def npref(
    seg: Segments,
    *,
    n: int = 4,
    norm: str = "relative",
    gains: Gains = None,
    gain_max: Optional[float] = None,
) -> np.ndarray:
    """n-pref: replace φ(d) = gain(d)/G by φ_n(d) = j(d)/(n − 1), with

        j(d) = min(floor(n · φ(d) + 1e-9), n − 1)

    (exact integer arithmetic ``min((n·gain) // G, n − 1)`` when gains and G are integers;
    a φ exactly on a boundary goes up), then compute rpref (M11–M13) with φ_n:
    ``norm="relative"`` (default, as in De Beer & Moens' figure), ``"N"`` or ``"relative2"``.
    Documents with j = 0 count as nonrelevant. Unjudged documents are removed (condensed
    list); unretrieved relevant documents contribute 0. n ≥ 2 is required. Undefined when
    R' = Σ φ_n = 0. MEASURES.md M14 and Part III item 4.
    """
    try:
        parts = int(n)
    except (TypeError, ValueError):
        raise MeasureError(f"npref: n must be an integer >= 2, got {n!r}") from None
    if parts != n or parts < 2:
        raise MeasureError(f"npref: n must be an integer >= 2, got {n!r}")
    level_gain = level_gains(seg, gains)
    top = collection_max(seg, gains, gain_max)
    view = seg.condensed()
    row_gain = view.gain(gains)
    qrels = seg.qrels
    # G of each qrels level: its variant's maximum gain (or the override).
    entry_top = qrels.gain_max(gains) if gain_max is None else np.full(qrels.n_entries, float(gain_max))
    level_top = entry_top[qrels.entry_of_level]
    # Row gains are gains of qrels levels, so integral level gains make every gain integral.
    exact = _is_integral(level_gain) and _is_integral(entry_top)
    row_top = view.per_row(top)
    row_j = _partition(row_gain, np.where(row_top > 0, row_top, 1.0), parts, exact)
    level_j = _partition(level_gain, np.where(level_top > 0, level_top, 1.0), parts, exact)
    # φ_n = j/(n−1): use j as the value and n−1 as the scale standing for φ = 1.
    return _rpref(view, row_j, level_j, np.full(seg.n_segments, parts - 1.0), norm)


# ---- Q-measure ------------------------------------------------------------------------------
def _ideal_cumulative(seg: Segments, gains: Gains) -> tuple[np.ndarray, np.ndarray]:
    """Per qrels entry, the ideal list's cumulative gains (flat) and the entry offsets."""
    ideal_gain, offsets = seg.qrels.ideal_gains(gains)
    cumulative = np.cumsum(ideal_gain, dtype=np.float64)
    if len(cumulative):
        lengths = np.diff(offsets)
        before = np.concatenate(([0.0], cumulative))[offsets[:-1]]
        cumulative = cumulative - np.repeat(before, lengths)
    return cumulative, offsets


@register(
    "Q",
    as_nonrelevant=True,
    sparse=True,
    gains=True,
    params={"beta": 1.0},
    aliases=("Qmeasure", "Q_measure"),
    summary="Q-measure: AP with blended ratio (β·cg(r) + count(r)) / (β·cg_I(r) + r); β=0 gives AP",
    unjudged=AS_ZERO_GAIN,
    pooled=AS_ZERO_GAIN,
    unretrieved="contributes 0 (counted in R and the ideal list)",
    reference="Sakai 2004; Sakai 2007, eq. 21",
)
def q_measure(seg: Segments, *, beta: float = 1.0, gains: Gains = None) -> np.ndarray:
    """Q = (1/R) Σ_{r: g(r) > 0} BR(r), BR(r) = (β · cg(r) + count(r)) / (β · cg_I(r) + r).

    cg is the cumulative gain of the list, count(r) the number of gain>0 documents in its top
    r, cg_I the ideal cumulative gain with cg_I(r) = cg_I(R) for r > R, and R the number of
    qrels documents with gain > 0. Unjudged documents have gain 0 (Q' removes them: the
    condensed list, same ideal list); unretrieved relevant documents contribute 0. β ≥ 0;
    β = 0 gives AP. Undefined when R = 0. MEASURES.md M17.
    """
    try:
        beta = float(beta)
    except (TypeError, ValueError):
        raise MeasureError(f"Q: beta must be a number >= 0, got {beta!r}") from None
    if not beta >= 0 or not math.isfinite(beta):
        raise MeasureError(f"Q: beta must be a number >= 0, got {beta!r}")
    level_gains(seg, gains)
    gain = seg.gain(gains)
    relevant = gain > 0
    cg = seg.cumsum(gain)
    count = seg.cumsum(relevant).astype(np.float64)
    rank = seg.rank.astype(np.int64)
    cumulative, offsets = _ideal_cumulative(seg, gains)
    num_rel = np.diff(offsets)[seg.topic]
    rel_row = seg.per_row(num_rel)
    start_row = seg.per_row(offsets[:-1][seg.topic])
    has_ideal = rel_row > 0
    index = np.where(has_ideal, start_row + np.minimum(rank, rel_row) - 1, 0)
    cg_ideal = np.where(has_ideal, cumulative[index] if len(cumulative) else 0.0, 0.0)
    blended = (beta * cg + count) / (beta * cg_ideal + rank)
    return divide(seg.sum(np.where(relevant, blended, 0.0)), num_rel)


# ---- Sakai's nDCG ---------------------------------------------------------------------------
def _sakai_discount(rank: np.ndarray, base: float) -> np.ndarray:
    """disc(r) = 1 for r ≤ a, 1 / log_a(r) for r > a."""
    rank = rank.astype(np.float64)
    with np.errstate(divide="ignore"):
        return np.where(rank <= base, 1.0, math.log(base) / np.log(np.maximum(rank, 1.0)))


def ndcg_sakai(
    seg: Segments,
    *,
    cutoff: Optional[int] = None,
    gains: Gains = None,
    base: float = 2.0,
    l: int = 1000,
) -> np.ndarray:
    """Sakai 2007's nDCG (``nDCG(dcg=sakai)``; Järvelin & Kekäläinen 2002's discount):

        disc(r) = 1 if r ≤ a, 1 / log_a(r) if r > a
        nDCG_l  = Σ_{r ≤ min(l, n)} g(r) · disc(r)  /  Σ_{r ≤ l} g_I(r) · disc(r)

    a = ``base`` (> 1, default 2), l = document cutoff (default 1000; an ``@k`` cutoff lowers
    it to min(l, k)); the ideal list is cut at l too. Unjudged documents have gain 0; for
    nDCG' (the prime) the registry passes the condensed lists, so r and l count condensed
    ranks (MEASURES.md Part III item 13). Unretrieved relevant documents contribute 0 (they
    are in the ideal list). Undefined when no qrels document has gain > 0. MEASURES.md M18.
    """
    try:
        base = float(base)
        depth = int(l)
    except (TypeError, ValueError):
        raise MeasureError(f"nDCG(dcg=sakai): base must be a number > 1 and l a positive integer, got base={base!r}, l={l!r}") from None
    if not base > 1 or not math.isfinite(base):
        raise MeasureError(f"nDCG(dcg=sakai): base must be > 1, got {base!r}")
    if depth < 1 or depth != l:
        raise MeasureError(f"nDCG(dcg=sakai): l must be a positive integer, got {l!r}")
    if cutoff is not None:
        depth = min(depth, int(cutoff))
    level_gains(seg, gains)
    gain = seg.gain(gains)
    top = seg.rank <= depth
    dcg = seg.sum(np.where(top, gain * _sakai_discount(seg.rank, base), 0.0))
    ideal_gain, offsets = seg.qrels.ideal_gains(gains)
    ideal_rank = ranks_within(offsets)
    keep = ideal_rank <= depth
    entry = np.repeat(np.arange(len(offsets) - 1), np.diff(offsets))
    ideal_dcg = np.bincount(
        entry[keep], weights=(ideal_gain * _sakai_discount(ideal_rank, base))[keep], minlength=len(offsets) - 1
    )
    return divide(dcg, ideal_dcg[seg.topic])
