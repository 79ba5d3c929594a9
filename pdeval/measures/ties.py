"""Expected values over the orders of tied scores (engine option ``ties="expected"``).

trec_eval breaks a tie in score by document id, so the value of a run depends on how its
documents happen to be named. McSherry & Najork (ECIR 2008, "Computing information retrieval
performance measures efficiently in the presence of tied scores") give the expected value of
a measure over every order of each run of tied scores, each order equally likely, at the cost
of one evaluation. Each kernel here reads the runs of tied scores of the lists
(:attr:`Segments.ties`: per row, the first rank ``a`` and the last rank ``b`` of its run,
``n = b − a + 1`` ranks) and returns one value per list, as the measure's own kernel does:

* linear measures (P@k, R@k, Rprec, RelP@k, Judged, Unj@k, DCG, nDCG, RBP): a measure Σ_r g(r) w(r) has the
  expectation Σ_d g(d) w̄(d), where w̄(d) is the mean of w over the ranks of d's run (each
  document of a run is equally likely at each of its ranks); this is the paper's "average
  gain at each rank of the run" read per document;
* RR: the first relevant document lies in the first run holding one (m relevant documents
  among n); it is at the i-th rank of that run with the hypergeometric probability
  C(n − i, m − 1) / C(n, m), and E[RR] = Σ_i P(i) / (a − 1 + i);
* Success@k: 1 − the hypergeometric chance that the run the cut splits keeps its relevant
  documents below the cut (1 when a relevant document's whole run lies above it);
* AP: for a relevant document at the i-th rank of its run, with c relevant documents in the
  runs above, the expected number of the run's other m − 1 relevant documents above it is
  (i − 1)(m − 1)/(n − 1) (a uniform order), so its expected precision is
  (c + 1 + (i − 1)(m − 1)/(n − 1)) / (a − 1 + i); it is at each i with probability 1/n, so
  the run adds (m/n) [(c + 1) h + (m − 1)/(n − 1) (n' − a h)] with h = H(b') − H(a − 1) (H the
  harmonic numbers) over the ranks a..b' that lie within the cutoff (n' of them).

Measures whose value does not depend on the order (counts and set measures) are their own
expectation. Every other measure is averaged over the distinct orders of its tied runs by exact
enumeration (:mod:`pdeval.measures.enumeration`), refused beyond a few thousand orders per list.
``tests/engine/test_ties.py`` enumerates every order of every run on small random lists and checks each
kernel against the mean.
"""

from __future__ import annotations

import dataclasses
from typing import Callable, Optional

import numpy as np

from pdeval.engine.segments import Segments
from pdeval.errors import MeasureError
from pdeval.measures import user
from pdeval.measures.enumeration import enumerated
from pdeval.measures.kernels import divide
from pdeval.measures.registry import EMPTY_SEGMENTS, REGISTRY, Kernel


#: how a measure's expected value over tied orders is computed (MeasureSpec.expected_form)
EXPECTED_FORMS = {
    "order-free": "the value does not depend on the order of the list: every order gives it",
    "linear": "a sum of gain x rank weight: each tied document takes the mean weight of its run's ranks",
    "closed form": "McSherry & Najork 2008's closed form (harmonic numbers, hypergeometric first hit)",
    "enumeration": "every distinct order of each run of tied scores, averaged (measures/enumeration.py)",
}


def expected_value(name: str, form: str) -> Callable[[Kernel], Kernel]:
    """Record ``kernel`` as the expected value over tied orders of the registered measure
    ``name`` (decorator; ``form`` one of :data:`EXPECTED_FORMS`). The kernel takes the measure's
    parameters; it may raise :class:`MeasureError` for parameters it cannot handle."""
    if form not in EXPECTED_FORMS:
        raise ValueError(f"form must be one of {sorted(EXPECTED_FORMS)}, got {form!r}")

    def decorate(kernel: Kernel) -> Kernel:
        REGISTRY[name] = dataclasses.replace(REGISTRY[name], expected=kernel, expected_form=form)
        return kernel

    return decorate


def check_ties(measures: list, ties: str) -> None:
    """Raise :class:`MeasureError` naming the first measure that cannot be evaluated with the
    engine option ``ties``: only ``"expected"`` can refuse (the other orders are rankings like
    any), for a ``depth=`` parameter (a cut in trec_eval's order) or parameters its expected
    kernel does not handle; a list with too many orders to enumerate is refused on the data."""
    if ties != "expected":
        return
    empty = dataclasses.replace(EMPTY_SEGMENTS, ties=np.zeros((0, 2), dtype=np.int64), tie_mode="expected", _views={})
    for measure in measures:
        if measure.param("depth") is not None:
            raise MeasureError(
                f"{measure}: depth= cuts the list in trec_eval's order, which ties='expected' does not fix; "
                f"use a cutoff ({measure.spec.name}@k) where the measure takes one, or ties='trec'"
            )
        measure.compute(empty)  # the expected kernel checks its parameters


def _spans(seg: Segments, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """First and last rank (float) of the run of tied scores of the rows ``at``."""
    if seg.ties is None:  # no list had a row (the engine keeps the runs whenever it has rows)
        if len(at):
            raise MeasureError("ties='expected' needs the runs of tied scores of the lists")
        return np.zeros(0), np.zeros(0)
    spans = seg.ties[at]
    return spans[:, 0].astype(np.float64), spans[:, 1].astype(np.float64)


def _share_within(first: np.ndarray, last: np.ndarray, cutoff) -> np.ndarray:
    """The share of a run's ranks a..b that lie within the cutoff (1 without one)."""
    if cutoff is None:
        return np.ones(len(first))
    return np.clip(cutoff - first + 1.0, 0.0, last - first + 1.0) / (last - first + 1.0)


def mean_weight(seg: Segments, at: np.ndarray, prefix: np.ndarray, cutoff=None) -> np.ndarray:
    """The mean over the ranks of each row's run (those within ``cutoff``, counted as 0 beyond
    it) of a rank weight w, given as its prefix sums ``prefix[r] = Σ_{j ≤ r} w(j)``."""
    first, last = _spans(seg, at)
    first, last = first.astype(np.int64), last.astype(np.int64)
    end = last if cutoff is None else np.minimum(last, np.asarray(cutoff, dtype=np.int64))
    end = np.maximum(end, first - 1)
    return (prefix[end] - prefix[first - 1]) / (last - first + 1.0)


def _prefix_sums(weight_of_rank, seg: Segments) -> np.ndarray:
    """``prefix[r] = Σ_{j ≤ r} w(j)`` for r = 0 .. the largest rank of any run."""
    top = int(seg.ties[:, 1].max(initial=0)) if seg.ties is not None else 0
    prefix = np.zeros(top + 1)
    if top:
        np.cumsum(weight_of_rank(np.arange(1, top + 1, dtype=np.float64)), out=prefix[1:])
    return prefix


def _hits_within(seg: Segments, rel: int, cutoff) -> np.ndarray:
    """Expected relevant documents within the first ``cutoff`` ranks (an int or per list)."""
    return _expected_within(seg, seg.relevant_rows(rel), cutoff)


def _expected_within(seg: Segments, at: np.ndarray, cutoff) -> np.ndarray:
    """Expected number of the rows ``at`` within the first ``cutoff`` ranks (an int or per list)."""
    segment = seg.segment_of(at)
    first, last = _spans(seg, at)
    cutoff = np.broadcast_to(np.asarray(cutoff, dtype=np.float64), (seg.n_segments,))[segment]
    return np.bincount(segment, weights=_share_within(first, last, cutoff), minlength=seg.n_segments)


@expected_value("P", "linear")
def expected_precision(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """E[P@k]: each relevant document counts by the share of its run's ranks within k."""
    return _hits_within(seg, rel, cutoff) / cutoff


@expected_value("R", "linear")
def expected_recall(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """E[R@k] = E[relevant within k] / R."""
    return divide(_hits_within(seg, rel, cutoff), seg.num_rel(rel))


@expected_value("Rprec", "linear")
def expected_r_precision(seg: Segments, *, rel: int = 1) -> np.ndarray:
    """E[Rprec] = E[relevant within R] / R (R does not depend on the order)."""
    num_rel = seg.num_rel(rel)
    return divide(_hits_within(seg, rel, num_rel), num_rel)


@expected_value("RelP", "linear")
def expected_relative_precision(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """E[relative_P@k] = E[relevant within k] / min(k, R); 0 when R = 0."""
    num_rel = seg.num_rel(rel).astype(np.float64)
    return np.where(num_rel > 0, divide(_hits_within(seg, rel, cutoff), np.minimum(cutoff, num_rel)), 0.0)


@expected_value("Unj", "linear")
def expected_unjudged(seg: Segments, *, cutoff: int) -> np.ndarray:
    """E[unj@k] = E[unjudged within k] / k."""
    return _expected_within(seg, np.flatnonzero(~seg.is_judged()), cutoff) / cutoff


@expected_value("Judged", "linear")
def expected_judged(seg: Segments, *, cutoff: Optional[int] = None) -> np.ndarray:
    """E[Judged@k] = E[judged within k] / min(k, n) (the list length n does not depend on the order)."""
    within = seg.lengths if cutoff is None else np.minimum(seg.lengths, cutoff)
    top = np.inf if cutoff is None else cutoff
    return divide(_expected_within(seg, np.flatnonzero(seg.is_judged()), top), within)


@expected_value("Success", "closed form")
def expected_success(seg: Segments, *, cutoff: int, rel: int = 1) -> np.ndarray:
    """E[Success@k] = 1 − P(no relevant document within k): 0 when a relevant document's whole run
    lies within k (it is always there), else the run that the cut splits (m relevant among n,
    t of its ranks within k) holds none of them above the cut with probability C(n − m, t)/C(n, t)."""
    at = seg.relevant_rows(rel)
    segment = seg.segment_of(at)
    first, last = _spans(seg, at)
    always = np.bincount(segment[last <= cutoff], minlength=seg.n_segments) > 0
    split = (first <= cutoff) & (last > cutoff)
    m = np.bincount(segment[split], minlength=seg.n_segments).astype(np.float64)
    n, t = np.ones(seg.n_segments), np.zeros(seg.n_segments)
    n[segment[split]] = (last - first + 1.0)[split]
    t[segment[split]] = (cutoff - first + 1.0)[split]
    from scipy.special import gammaln  # here: importing scipy.special costs a third of a second

    with np.errstate(invalid="ignore"):
        none_above = np.where(n - m >= t, np.exp(gammaln(n - m + 1) - gammaln(n - m - t + 1)
                                                 - gammaln(n + 1) + gammaln(n - t + 1)), 0.0)
    return np.where(always, 1.0, 1.0 - none_above)


def _runs_of(seg: Segments, at: np.ndarray):
    """The relevant rows ``at`` grouped by their run of tied scores: per row its segment, the
    run's first and last rank, the index of the row's run, and per run its first row in ``at``."""
    segment = seg.segment_of(at)
    first, last = _spans(seg, at)
    new = np.ones(len(at), dtype=bool)
    if len(at):
        new[1:] = (segment[1:] != segment[:-1]) | (first[1:] != first[:-1])
    run = np.cumsum(new) - 1
    return segment, first, last, run, np.flatnonzero(new)


@expected_value("AP", "closed form")
def expected_average_precision(seg: Segments, *, cutoff: Optional[int] = None, rel: int = 1) -> np.ndarray:
    """E[AP] (and E[AP@k]): McSherry & Najork's closed form, module docstring."""
    at = seg.relevant_rows(rel)
    segment, first, last, run, run_start = _runs_of(seg, at)
    m = np.bincount(run, minlength=len(run_start)).astype(np.float64)[run]
    above = seg.count_above(at, at).astype(np.float64)  # relevant rows above, in the layout
    c = above[run_start][run]  # relevant documents in the runs above the row's run
    n = last - first + 1.0
    end = last if cutoff is None else np.minimum(last, float(cutoff))
    end = np.maximum(end, first - 1.0)
    harmonic = _prefix_sums(lambda r: 1.0 / r, seg)
    h = harmonic[end.astype(np.int64)] - harmonic[first.astype(np.int64) - 1]
    pairs = np.where(n > 1, (m - 1.0) / np.where(n > 1, n - 1.0, 1.0), 0.0)
    term = ((c + 1.0) * h + pairs * ((end - first + 1.0) - first * h)) / n
    return divide(seg.sum_at(at, term), seg.num_rel(rel))


@expected_value("RR", "closed form")
def expected_reciprocal_rank(seg: Segments, *, cutoff: Optional[int] = None, rel: int = 1) -> np.ndarray:
    """E[RR]: the first relevant document's rank in the first run holding one is
    hypergeometric (module docstring); its reciprocal is averaged exactly."""
    at = seg.relevant_rows(rel)
    segment, first, last, run, run_start = _runs_of(seg, at)
    value = np.zeros(seg.n_segments)
    if len(at):
        leading = run_start[np.concatenate(([True], segment[run_start][1:] != segment[run_start][:-1]))]
        m = np.bincount(run, minlength=len(run_start)).astype(np.int64)[run[leading]]
        s, n = first[leading].astype(np.int64), (last - first + 1.0)[leading].astype(np.int64)
        places = n - m + 1  # the first relevant document is at the i-th rank of the run, i ≤ n − m + 1
        if cutoff is not None:
            places = np.clip(np.minimum(places, cutoff - s + 1), 0, None)
        offsets = np.zeros(len(places) + 1, dtype=np.int64)
        np.cumsum(places, out=offsets[1:])
        owner = np.repeat(np.arange(len(places)), places)
        i = np.arange(offsets[-1], dtype=np.int64) - offsets[owner] + 1
        # log P(i) = log(m/n) + Σ_{j<i} log((n − j − m + 1)/(n − j)): P(i) = C(n − i, m − 1)/C(n, m)
        nn, mm = n[owner].astype(np.float64), m[owner].astype(np.float64)
        step = np.where(i > 1, np.log(np.maximum(nn - (i - 1) - mm + 1, 1e-300)) - np.log(nn - (i - 1)), 0.0)
        total = np.cumsum(step)
        before = np.concatenate(([0.0], total))[offsets[:-1]][owner]
        chance = np.exp(np.log(mm / nn) + total - before)
        value[segment[leading]] = np.bincount(owner, weights=chance / (s[owner] - 1 + i), minlength=len(places))
    return np.where(seg.num_rel(rel) > 0, value, np.nan)


def _discount(rank: np.ndarray) -> np.ndarray:
    return 1.0 / np.log2(rank + 1.0)


def _expected_dcg(seg: Segments, gain: np.ndarray, cutoff: Optional[int]) -> np.ndarray:
    """E[Σ g(r) / log2(r + 1)]: each gain times the mean discount of its run's ranks."""
    at = np.flatnonzero(gain)
    return seg.sum_at(at, gain[at] * mean_weight(seg, at, _prefix_sums(_discount, seg), cutoff))


@expected_value("nDCG", "linear")
def expected_ndcg(seg: Segments, *, cutoff: Optional[int] = None, gains=None, dcg: str = "trec", **sakai) -> np.ndarray:
    """E[nDCG] = E[DCG] / ideal DCG (the ideal list does not depend on the run's order);
    trec_eval's discount only (``dcg="trec"``)."""
    if dcg != "trec":  # Sakai's discount: no closed form here, enumerated
        return enumerated(REGISTRY["nDCG"].kernel, "nDCG(dcg=sakai)")(seg, cutoff=cutoff, gains=gains, dcg=dcg, **sakai)
    ideal = seg.ideal(gains, depth=cutoff)
    ideal_dcg = ideal.sum(ideal.rel * _discount(ideal.rank.astype(np.float64)))
    return divide(_expected_dcg(seg, seg.gain(gains), cutoff), ideal_dcg)


@expected_value("DCG", "linear")
def expected_dcg(seg: Segments, *, cutoff: Optional[int] = None, gains=None) -> np.ndarray:
    """E[DCG] (and E[DCG@k])."""
    return _expected_dcg(seg, seg.gain(gains), cutoff)


@expected_value("RBP", "linear")
def expected_rbp(seg: Segments, **params) -> np.ndarray:
    """E[RBP]: the kernel itself, whose weights are the mean over each run's ranks when the
    lists ask for the expected value (:func:`pdeval.measures.user.rbp_weights`)."""
    return user.rbp(seg, **params)


#: measures whose value does not depend on the order of the list (without a depth cut)
ORDER_FREE = (
    "NumRet", "NumRel", "NumRelRet", "SetP", "SetRecall", "SetRelP", "SetAP", "SetF", "Utility",
    "NumNonrelJudgedRet", "IdealDCG", "inum_rel",
)
for _name in ORDER_FREE:
    expected_value(_name, "order-free")(REGISTRY[_name].kernel)
