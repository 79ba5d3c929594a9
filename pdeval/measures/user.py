"""User-model measures with residuals: RBP (Moffat & Zobel 2008) and C/W/L's INST and INSQ.

A user-model measure weighs each rank by the probability that a user looks at it. Documents
nobody judged leave part of that weight undecided: the **residual** is how much the score
could still grow if every unjudged document (and, for RBP, every rank beyond the list) were
fully relevant. Unjudged means *pooled* (``-1``) or *absent* from the qrels; the residual
needs whole lists, so these kernels see every retrieved row.

Gains are fractions of the top grade (graded relevance in [0, 1], as RBP and C/W/L need):

    g(d) = gain(level(d)) / G

with ``gain`` the level itself or ``gains={level: gain}``, and G = ``gain_max`` or, by
default, the largest gain in the qrels variant (every topic): on a 0/1/2 scale, grade 1
counts 0.5 and grade 2 counts 1. ``rel=k`` makes the gain binary instead (1 when level >= k),
as ``ir_measures``' ``RBP(rel=k)``. Fractional relevance (qrels values such as 0.25) is read
by :func:`fractional_levels`, which turns it into integer levels and the ``gains`` that
restore the fractions.

Conventions of the reference tools, as options:

* ``ties``: pdeval orders each list the trec_eval way (score descending, doc id descending)
  and every rank has its own weight (``ties="trec"``, the default). ``rbp_eval`` instead
  gives every document of a run of tied scores the mean weight of the ranks the run covers
  (``ties="mean"``); when a cutoff ``@k`` falls inside such a run, every tied document
  counts with the mean weight times the share of the run above the cutoff.
* ``rbp_eval`` and ``cwl_eval`` can take the **file order** of a run instead of its scores
  (``rbp_eval -o``; ``cwl_eval`` always does): :func:`in_file_order` rewrites the scores so
  that pdeval's order is the order of the rows.
* ``rbp_eval`` lowercases query and document ids: :func:`lowercase_ids`.
* ``cwl_eval`` pads or cuts every list to ``n`` = 1000 ranks and normalises W over them
  (parameter ``n``), and needs gains in [0, 1] (checked here).
"""

from __future__ import annotations

from typing import Callable, Mapping, Optional

import numpy as np
import pandas as pd

from pdeval.errors import MeasureError, SchemaError
from pdeval.frames.canonical import canonicalize
from pdeval.engine.segments import Segments
from pdeval.measures.kernels import collection_max, level_gains, positive_number
from pdeval.measures.registry import register

__all__ = ["rbp", "inst", "insq", "fractional_levels", "in_file_order", "lowercase_ids"]

Gains = Optional[Mapping[int, float]]
UNJUDGED_RESIDUAL = "as nonrelevant; their weight goes to the residual"


# ---- gains ------------------------------------------------------------------------------------
def unit_gains(seg: Segments, rel: Optional[int], gains: Gains, gain_max) -> np.ndarray:
    """Gain in [0, 1] of every row: binary (level >= ``rel``) or gain / G (module docstring)."""
    if rel is not None:
        return (seg.rel >= int(rel)).astype(np.float64)
    if gains and any(float(v) < 0 for v in gains.values()):
        level_gains(seg, gains)  # raises: negative gains
    top = collection_max(seg, gains, gain_max)
    # gain / G, and 0 where G = 0 (gain / inf): the same numbers as a masked division, in one pass
    return seg.gain(gains) / seg.per_row(np.where(top > 0, top, np.inf))


# ---- RBP ----------------------------------------------------------------------------------------
def rbp_weights(seg: Segments, p: float, cutoff: Optional[int], ties: str) -> np.ndarray:
    """The weight of every row: (1 − p) p^(r−1) at rank r ≤ cutoff, or with ``ties="mean"``
    the mean over the run of tied ranks [a, b] it belongs to, (p^(a−1) − p^b) / (b − a + 1),
    times the share (min(b, k) − a + 1) / (b − a + 1) of the run above the cutoff k. When the
    lists ask for the expected value over tied orders (engine option ``ties="expected"``) the
    weight is the exact mean of w(r)·[r ≤ k] over the run, (p^(a−1) − p^min(b, k)) / (b − a + 1)."""
    if seg.tie_mode == "expected" and (seg.ties is not None or not len(seg.rel)):
        spans = seg.ties if seg.ties is not None else np.zeros((0, 2), dtype=np.int64)
        first, last = spans[:, 0], spans[:, 1]
        end = last if cutoff is None else np.maximum(np.minimum(last, cutoff), first - 1)
        power = p ** np.arange(int(last.max(initial=0)) + 1, dtype=np.float64)  # p^j, gathered
        return (power[first - 1] - power[end]) / (last - first + 1.0)
    if ties == "mean":
        if seg.ties is None:
            if len(seg.rel):
                raise MeasureError("RBP(ties=mean) needs whole ranked lists; it cannot be primed (RBP')")
            return np.zeros(0)
        first, last = seg.ties[:, 0].astype(np.float64), seg.ties[:, 1].astype(np.float64)
        size = last - first + 1.0
        weight = (p ** (first - 1.0) - p**last) / size
        if cutoff is not None:
            weight = weight * np.clip(cutoff - first + 1.0, 0.0, size) / size
        return weight
    rank = seg.rank
    # one weight per rank, gathered (the same numbers as the power of every row, 10x faster)
    weight = ((1.0 - p) * p ** np.arange(int(rank.max(initial=0)), dtype=np.float64))[rank - 1]
    return weight if cutoff is None else np.where(rank <= cutoff, weight, 0.0)


@register(
    "RBP",
    monotone=True,
    as_nonrelevant=lambda measure: not measure.param("residual"),
    cutoff="optional",
    gains=True,
    params={"p": 0.8, "rel": None, "residual": False, "ties": "trec", "gain_max": None},
    choices={"ties": ("trec", "mean")},
    summary=(
        "rank-biased precision Σ (1−p) p^(r−1) g(r), gains as fractions of the top grade (rel=k: binary); "
        "residual=True: the weight of unjudged ranks plus the tail p^n beyond the list; "
        "ties=mean: rbp_eval's mean weight over tied scores"
    ),
    unjudged=UNJUDGED_RESIDUAL,
    pooled=UNJUDGED_RESIDUAL,
    unretrieved="not counted (no normalisation by R)",
    reference="Moffat & Zobel 2008 (TOIS); rbp_eval",
)
def rbp(
    seg: Segments,
    *,
    cutoff: Optional[int] = None,
    p: float = 0.8,
    rel: Optional[int] = None,
    residual: bool = False,
    ties: str = "trec",
    gains: Gains = None,
    gain_max: Optional[float] = None,
) -> np.ndarray:
    """RBP = Σ_{r ≤ min(n, k)} w(r) g(r), w(r) = (1 − p) p^(r−1) (Moffat & Zobel 2008, eq. 5).

    g is the gain in [0, 1] (module docstring); unjudged documents (pooled or absent) count
    0. The residual (``residual=True``, the paper's Section 5) is the weight that unjudged
    documents and the ranks beyond the list could still add:

        residual = Σ_{unjudged r ≤ min(n, k)} w(r) + p^min(n, k)

    so RBP + residual is the score if every unjudged document had the top grade and the list
    went on with relevant documents. ``@k`` evaluates to depth k (rbp_eval ``-d k``); no
    cutoff evaluates the whole list. ``ties="mean"`` is rbp_eval's handling of tied scores
    (:func:`rbp_weights`). Defined for every list (an empty one scores 0, residual 1).
    """
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise MeasureError(f"RBP: p must be a number in [0, 1], got {p!r}") from None
    if not 0.0 <= p <= 1.0:
        raise MeasureError(f"RBP: p must lie in [0, 1], got {p!r}")
    weight = rbp_weights(seg, p, cutoff, ties)
    judged = seg.is_judged()
    if residual:
        depth = seg.lengths.astype(np.float64)
        if cutoff is not None:
            depth = np.minimum(depth, cutoff)
        return seg.sum(np.where(judged, 0.0, weight)) + p**depth
    return seg.sum(np.where(judged, weight * unit_gains(seg, rel, gains, gain_max), 0.0))


# ---- C/W/L: INST and INSQ -----------------------------------------------------------------------
_QUANTITIES = ("rate", "total", "cost", "total_cost", "depth")
_BLOCK_CELLS = 1 << 22


def _continuation_inst(T: float):
    def continuation(rank: np.ndarray, cumulative_gain: np.ndarray) -> np.ndarray:
        """C(i) = ((i + T + T_i − 1) / (i + T + T_i))², T_i = T − Σ_{j ≤ i} g(j) (Moffat et al. 2015)."""
        remaining = T - cumulative_gain
        return ((rank + T + remaining - 1.0) / (rank + T + remaining)) ** 2

    return continuation


def _continuation_insq(T: float):
    def continuation(rank: np.ndarray, cumulative_gain: np.ndarray) -> np.ndarray:
        """C(i) = ((i + 2T − 1) / (i + 2T))² (Moffat et al. 2012)."""
        return ((rank + 2.0 * T - 1.0) / (rank + 2.0 * T)) ** 2

    return continuation


def _cwl_quantity(gain: np.ndarray, continuation, quantity: str) -> np.ndarray:
    """One C/W/L quantity per row of a (lists x n) gain matrix (Azzopardi, Thomas & Moffat 2019).

    P(i) = Π_{j < i} C(j) is the chance of reaching rank i, W(i) = P(i) / Σ_{j ≤ n} P(j) the
    share of attention at rank i and L(i) = P(i) (1 − C(i)) the chance of stopping there.
    rate = Σ W g (expected rate of gain, the measure's value), total = Σ L CG (expected total
    gain), cost = Σ W c, total_cost = Σ L CC (unit costs: c = 1, CC(i) = i) and
    depth = 1 / W(1) = Σ P (expected depth).
    """
    n = gain.shape[1]
    rank = np.arange(1, n + 1, dtype=np.float64)[None, :]
    cumulative = np.cumsum(gain, axis=1)
    c = continuation(rank, cumulative)
    reach = np.ones_like(c)
    np.cumprod(c[:, :-1], axis=1, out=reach[:, 1:])
    total_reach = reach.sum(axis=1)
    if quantity == "depth":
        return total_reach
    if quantity in ("rate", "cost"):
        attention = reach / total_reach[:, None]
        return (attention * gain).sum(axis=1) if quantity == "rate" else attention.sum(axis=1)
    stop = reach * (1.0 - c)
    return (stop * (cumulative if quantity == "total" else rank)).sum(axis=1)


def cwl(
    seg: Segments,
    continuation,
    *,
    quantity: str,
    residual: bool,
    n: int,
    rel: Optional[int],
    gains: Gains,
    gain_max,
    name: str,
) -> np.ndarray:
    """A C/W/L quantity of every list, padded or cut to ``n`` ranks (cwl_eval's convention).

    The lower value counts unjudged documents and the padding as gain 0; the upper one (for
    ``residual=True``, which returns upper − lower) counts them as gain 1, cwl_eval's best
    case. Lists are processed in blocks of a bounded (lists x n) matrix.
    """
    try:
        n = int(n)
    except (TypeError, ValueError):
        raise MeasureError(f"{name}: n must be a positive integer, got {n!r}") from None
    if n < 1:
        raise MeasureError(f"{name}: n must be a positive integer, got {n!r}")
    gain = unit_gains(seg, rel, gains, gain_max)
    if len(gain) and (gain.min() < 0.0 or gain.max() > 1.0):
        raise MeasureError(f"{name}: gains must lie in [0, 1] (C/W/L); check gains= and gain_max=")
    rank = seg.rank
    inside = np.flatnonzero(rank <= n)
    segment = seg.segment_of(inside)
    column = rank[inside] - 1
    unjudged = ~seg.is_judged()[inside]
    out = np.zeros(seg.n_segments)
    step = max(1, _BLOCK_CELLS // n)
    edges = np.searchsorted(segment, np.arange(0, seg.n_segments + step, step))
    for block, start in enumerate(range(0, seg.n_segments, step)):
        stop = min(start + step, seg.n_segments)
        rows = slice(edges[block], edges[block + 1])
        low = np.zeros((stop - start, n))
        low[segment[rows] - start, column[rows]] = gain[inside[rows]]
        value = _cwl_quantity(low, continuation, quantity)
        if residual:
            high = np.ones((stop - start, n))
            high[segment[rows] - start, column[rows]] = np.where(unjudged[rows], 1.0, gain[inside[rows]])
            value = _cwl_quantity(high, continuation, quantity) - value
        out[start:stop] = value
    return out


_CWL_PARAMS = {"T": 1.0, "quantity": "rate", "residual": False, "n": 1000, "rel": None, "gain_max": None}
_CWL_CHOICES = {"quantity": _QUANTITIES}
_CWL_DOC = """

    ``quantity``: ``rate`` (expected rate of gain, default: the measure's value), ``total``
    (expected total gain), ``cost`` and ``total_cost`` (unit costs), ``depth`` (expected number
    of documents examined). ``residual=True`` gives the upper bound minus the value: unjudged
    documents and the padding up to ``n`` counted with gain 1 (cwl_eval ``-r``). Lists are
    padded with gain 0 or cut to ``n`` = 1000 ranks (cwl_eval's ``--max_depth``).
"""


def _check_t(T, name: str) -> float:
    return positive_number(T, f"{name}: T")


#: what the two C/W/L measures share in the registry
_CWL_REGISTRATION = dict(
    gains=True,
    params=_CWL_PARAMS,
    choices=_CWL_CHOICES,
    unjudged="gain 0 (lower bound); gain 1 in the residual",
    pooled="gain 0 (lower bound); gain 1 in the residual",
    unretrieved="not counted",
)


def _cwl_measure(name: str, continuation_of: Callable[[float], Callable], formula: str):
    """The kernel of a C/W/L measure whose continuation C(i) depends on the parameter T:
    ``continuation_of(T)`` gives it, :func:`cwl` does the rest."""

    def kernel(
        seg: Segments,
        *,
        T: float = 1.0,
        quantity: str = "rate",
        residual: bool = False,
        n: int = 1000,
        rel: Optional[int] = None,
        gains: Gains = None,
        gain_max: Optional[float] = None,
    ) -> np.ndarray:
        return cwl(seg, continuation_of(_check_t(T, name)), quantity=quantity, residual=residual, n=n, rel=rel,
                   gains=gains, gain_max=gain_max, name=name)

    kernel.__name__ = kernel.__qualname__ = name.lower()
    kernel.__doc__ = formula + _CWL_DOC
    return kernel


inst = register(
    "INST",
    summary="C/W/L INST: adaptive user who wants T units of gain; expected rate of gain (quantity=, residual=)",
    **_CWL_REGISTRATION,
    reference="Moffat, Bailey, Scholer & Thomas 2015 (ADCS); Azzopardi, Thomas & Moffat 2019 (SIGIR, cwl_eval)",
)(_cwl_measure("INST", _continuation_inst, """INST = Σ_i W(i) g(i), with continuation C(i) = ((i + T + T_i − 1)/(i + T + T_i))² and
    T_i = T − Σ_{j ≤ i} g(j): the user stops sooner once T units of gain are found."""))

insq = register(
    "INSQ",
    summary="C/W/L INSQ: INST without adaptation to the gain found, C(i) = ((i+2T−1)/(i+2T))²",
    **_CWL_REGISTRATION,
    reference="Moffat, Scholer & Thomas 2012 (ADCS); Azzopardi, Thomas & Moffat 2019 (SIGIR, cwl_eval)",
)(_cwl_measure("INSQ", _continuation_insq, "INSQ = Σ_i W(i) g(i), with continuation C(i) = ((i + 2T − 1)/(i + 2T))²."))


# ---- the reference tools' input conventions -----------------------------------------------------
def fractional_levels(qrels: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Qrels with fractional relevance (e.g. 0.25, 0.5, 1.0, as rbp_eval and cwl_eval read)
    as integer levels plus the ``gains`` that restore the fractions.

    Each distinct positive value becomes a level 1, 2, ... (in increasing order); 0 stays 0 and
    negative values stay -1 (pooled). Evaluate with ``gains=`` the returned mapping and, for
    the fractions to be used as they are, ``gain_max=1``::

        levels, gains = fractional_levels(qrels)
        pdeval.evaluate(run, levels, "RBP(gain_max=1)", gains=gains)
    """
    frame = canonicalize(qrels)
    if "relevance" not in frame.columns:
        raise SchemaError(f"the qrels frame lacks column 'relevance'; it has {list(frame.columns)}")
    value = pd.to_numeric(frame["relevance"], errors="coerce").to_numpy(dtype=np.float64)
    if np.isnan(value).any():
        raise SchemaError(f"the qrels have {int(np.isnan(value).sum())} missing or non-numeric relevance value(s)")
    positive = np.unique(value[value > 0])
    level = np.where(value > 0, np.searchsorted(positive, value) + 1, np.where(value < 0, -1, 0))
    gains = {int(i + 1): float(v) for i, v in enumerate(positive)}
    return frame.assign(relevance=level.astype(np.int64)), gains


def in_file_order(run: pd.DataFrame) -> pd.DataFrame:
    """The run with scores replaced so that pdeval's order is the order of its rows within
    each (run, topic): the file order that ``cwl_eval`` (always) and ``rbp_eval -o`` use."""
    frame = canonicalize(run)
    keys = [c for c in ("run", "query_id") if c in frame.columns]
    position = frame.groupby(keys, sort=False, observed=True).cumcount().to_numpy()
    return frame.assign(score=-position.astype(np.float64))


def lowercase_ids(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with ``query_id`` and ``doc_id`` lowercased, as ``rbp_eval`` reads ids."""
    frame = canonicalize(frame)
    return frame.assign(**{c: frame[c].astype(str).str.lower() for c in ("query_id", "doc_id") if c in frame})
