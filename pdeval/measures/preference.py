"""Preference measures on judged documents: bpref-10, bpref_R, bpref_N, RankEff, bpref_relative.

Every measure here looks only at *judged* documents: unjudged documents (pooled ``-1`` or
absent from the qrels) are skipped, so each measure has the same value on the full list and
on the condensed list (MEASURES.md 0.4). For a retrieved relevant document at position i,
``na(i)`` is the number of judged nonrelevant documents ranked above it; ``R`` and ``N`` are
the numbers of judged relevant and nonrelevant documents of the topic (retrieved or not).

Each kernel takes a :class:`~pdeval.engine.segments.Segments` (ranked lists in trec_eval order, cut
at ``depth`` and condensed when primed) and returns one value per list, NaN where the measure
is undefined. Formulas and worked examples: MEASURES.md M5–M9. ``Bpref`` itself (M4, with
``variant=legacy``) lives in :mod:`pdeval.measures.classic`.
"""

from __future__ import annotations

import numpy as np

from pdeval.engine.segments import Segments
from pdeval.measures.classic import nonrel_above_relevant, preference_sum
from pdeval.measures.kernels import divide
from pdeval.measures.registry import register

__all__ = ["bpref10", "bpref_r", "bpref_n", "rank_eff", "bpref_relative"]

IGNORED = "ignored (removed)"
UNRETRIEVED_BPREF = "contributes 0 (counted in R); unretrieved nonrelevant count in N, below every retrieved document"


@register(
    "bpref10",
    sparse=True,
    rel=True,
    params={"denominator": "min"},
    choices={"denominator": ("min", "fixed", "legacy")},
    aliases=("bpref-10", "bpref_10", "bpref_top10pRnonrel"),
    summary=(
        "bpref-10: relevant documents not outranked by the first R+10 judged nonrelevant; "
        "denominator=min: min(N, R+10) (trec_eval), fixed: R+10 (the papers), legacy: min(N_ret, R+10)"
    ),
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=UNRETRIEVED_BPREF,
    reference="Buckley & Voorhees 2004; Ahlgren & Grönqvist 2008 (adjusted); trec_eval 8 bpref_top10pRnonrel",
)
def bpref10(seg: Segments, *, rel: int = 1, denominator: str = "min") -> np.ndarray:
    """bpref-10 = (1/R) Σ_{retrieved REL i} term(i), with K = R + 10 and

    term(i) = 1 if na(i) = 0, else 1 − min(na(i), K) / D,

    D = min(N, K) (``denominator="min"``, trec_eval's corrected form, default), K
    (``"fixed"``, the literal formula of Buckley & Voorhees 2004, which assumes N ≥ R + 10) or
    min(N_ret, K) (``"legacy"``, trec_eval ``old_bpref_top10pRnonrel``; N_ret = retrieved
    judged nonrelevant). Unjudged documents (pooled or absent) are skipped; unretrieved
    relevant documents contribute 0 (Ahlgren & Grönqvist's adjustment: divide by all R);
    unretrieved nonrelevant documents count in N. Undefined when R = 0. MEASURES.md M5.
    """
    cap = seg.num_rel(rel) + 10.0
    if denominator == "fixed":
        den = cap
    elif denominator == "legacy":
        den = np.minimum(seg.count(seg.is_nonrel(rel)), cap)
    else:
        den = np.minimum(seg.num_nonrel(rel), cap)
    return preference_sum(seg, rel, cap, den)


@register(
    "bpref_R",
    sparse=True,
    rel=True,
    summary="bpref with the penalty na(i) capped at and divided by R (equals Bpref when R <= N)",
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=UNRETRIEVED_BPREF,
    reference="Sakai 2007, eq. 10",
)
def bpref_r(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """bpref_R = (1/R) Σ_{retrieved REL i} [1 − min(R, na(i)) / R].

    Unjudged documents are skipped; unretrieved relevant documents contribute 0. Equals
    ``Bpref`` whenever R ≤ N. Undefined when R = 0. MEASURES.md M6 (Sakai 2007, eq. 10).
    """
    num_rel = seg.num_rel(rel)
    return preference_sum(seg, rel, num_rel, num_rel)


@register(
    "bpref_N",
    sparse=True,
    rel=True,
    aliases=("bpref_allnonrel",),
    summary="bpref with the penalty na(i) divided by N, all judged nonrelevant (equals Bpref when R >= N)",
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved=UNRETRIEVED_BPREF,
    reference="Sakai 2007, eq. 11; trec_eval 8 bpref_allnonrel",
)
def bpref_n(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """bpref_N = (1/R) Σ_{retrieved REL i} term(i), term(i) = 1 if na(i) = 0 else 1 − na(i)/N.

    Unjudged documents are skipped; unretrieved relevant documents contribute 0 and
    unretrieved nonrelevant ones count in N. N = 0 makes every term 1. Undefined when R = 0.
    MEASURES.md M7 (Sakai 2007, eq. 11; trec_eval 8 ``bpref_allnonrel``).
    """
    num_nonrel = seg.num_nonrel(rel)
    return preference_sum(seg, rel, num_nonrel, num_nonrel)  # na(i) <= N: the cap never binds


@register(
    "RankEff",
    sparse=True,
    rel=True,
    params={"unretrieved": "below"},
    choices={"unretrieved": ("below", "ignore")},
    aliases=("rank_eff", "rankeff"),
    summary=(
        "rank effectiveness: share of the N judged nonrelevant ranked below each relevant document; "
        "unretrieved=below: unretrieved nonrelevant count as ranked below (the paper's adjustment, = bpref_N), "
        "ignore: only retrieved nonrelevant count"
    ),
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved="contributes 0 (counted in R); unretrieved nonrelevant ranked below (unretrieved=below)",
    reference="Ahlgren & Grönqvist 2008 (Sections 4.2–4.3)",
)
def rank_eff(seg: Segments, *, rel: int = 1, unretrieved: str = "below") -> np.ndarray:
    """RankEff = (1/R) Σ_{retrieved REL d} I(d) / N.

    I(d) is the number of judged nonrelevant documents ranked below d. With the practical
    adjustments of Ahlgren & Grönqvist 2008 (``unretrieved="below"``, default) an unretrieved
    nonrelevant document counts as ranked below every retrieved document, so I(d) = N − na(d)
    and RankEff = bpref_N; only retrieved relevant documents contribute, but the normaliser is
    all R. ``unretrieved="ignore"`` (the unadjusted definition) counts only retrieved
    nonrelevant documents below d: I(d) = N_ret − na(d), still divided by N. Unjudged
    documents are skipped. Undefined when R = 0 or N = 0 (the paper excludes both).
    MEASURES.md M8.
    """
    at, segment, above = nonrel_above_relevant(seg, rel)
    num_nonrel = seg.num_nonrel(rel)
    below_total = seg.count(seg.is_nonrel(rel)) if unretrieved == "ignore" else num_nonrel
    term = (below_total[segment] - above) / np.maximum(num_nonrel[segment], 1.0)
    value = divide(seg.sum_at(at, term), seg.num_rel(rel))
    return np.where(num_nonrel > 0, value, np.nan)


@register(
    "bpref_relative",
    sparse=True,
    rel=True,
    summary=(
        "bpref with relative normalisation on the condensed list: 1 − (judged nonrelevant above)/(judged above); "
        "condensed rank 1 skipped, so an ideal ranking scores (R−1)/R"
    ),
    unjudged=IGNORED,
    pooled=IGNORED,
    unretrieved="contributes 0 (counted in R)",
    reference="Sakai 2007, eq. 18; De Beer & Moens 2006",
)
def bpref_relative(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """bpref_relative = (1/R) Σ_{r' ≠ 1, rel(r') = 1} [1 − (r' − count(r')) / (r' − 1)] on L'.

    r' is the rank in the condensed list (unjudged documents removed), count(r') the relevant
    documents in its top r'; a relevant document at r' = 1 contributes 0. Unretrieved relevant
    documents contribute 0. Undefined when R = 0. MEASURES.md M9 (Sakai 2007, eq. 18).
    """
    view = seg.condensed()
    at = view.relevant_rows(rel)
    rank = view.rank_at(at).astype(np.float64)
    count = view.count_above(at, at) + 1.0
    at, rank, count = at[rank > 1], rank[rank > 1], count[rank > 1]
    return divide(view.sum_at(at, 1.0 - (rank - count) / (rank - 1.0)), seg.num_rel(rel))
