"""How far could the unjudged documents move each score: bounds over their possible labels.

Every measure treats a retrieved document nobody judged in one fixed way (as nonrelevant, or
removed). ``bounds`` answers the other half of the question a user asks of an incomplete
pool: if those documents were judged, what could the score be? Per run, topic and measure:

* ``value``: the score as evaluated today (unjudged documents as the measure treats them);
* ``if_nonrelevant``: every unjudged retrieved document judged nonrelevant (level 0);
* ``if_relevant``: every one judged relevant at ``grade`` (default: the top grade of the qrels
  variant, at least 1);
* ``low`` / ``high``: the smaller and the larger of those two (NaN, an undefined value with
  ``undefined="nan"``, is skipped); ``residual = high - low``;
* ``monotone``: whether the measure is monotone in the judging (below).

The judged documents join the qrels of that run's topic only, so wherever a measure's
normaliser depends on the judgments (R for AP, R-prec, recall, bpref; the ideal list of nDCG
and Q) it follows them. *Unjudged* means pooled (``-1``) or absent from the qrels
(``unjudged="all"``); ``"absent"`` or ``"pooled"`` judges only one kind. With ``depth=``
(trec_eval ``-M``) only the documents within the depth are retrieved, hence judged.

**Monotone measures.** The registry records (:attr:`pdeval.measures.registry.MeasureSpec.monotone`)
whether judging an unjudged document relevant rather than nonrelevant can never lower a
measure: P@k, RR, RBP (and its residual form), Judged, NumRet, NumRel, NumRelRet, and their
primes. For these, ``[low, high]`` holds the value of *every* possible judging of the
unjudged documents (nonrelevant or relevant at ``grade``), exactly: a test enumerates all
2^u judgings of small cases. Every other measure is **not monotone**, and ``monotone`` is
False in its rows: ``[low, high]`` then only spans the two extreme judgings. AP, R-prec,
recall@k, nDCG and Q can fall when a relevant document joins the qrels below the run's own
relevant ones (R or the ideal list grows faster than the gain); the bpref family (bpref,
bpref10, bpref_R, bpref_N, RankEff, bpref_relative, rpref, npref) can fall when a relevant
document sits below judged nonrelevant ones; infAP, indAP, subAP, xinfAP, infNDCG, the iP
family and the statAP family are estimators whose sample changes with the judging; INST
and INSQ adapt the user's patience to the gain seen. For the measures that ignore unjudged
documents (the bpref family, the primes, infAP and the other estimators) ``value`` itself is
often outside ``[low, high]``: it is not a value the measure can take once the documents
are judged.

**Sampled qrels** (a ``stratum`` and/or ``inclusion_prob`` column) keep their design: a
pooled document that is judged stays in its stratum, now sampled; a document absent from the
qrels joins a stratum of its own judged in full (inclusion probability 1, after the qrels'
strata in ``sample_eval.pl``'s order). A run whose every document was sampled has nothing
to judge, hence a zero residual.

**RBP.** ``RBP``'s ``residual`` here is Moffat & Zobel's (2008) residual over the retrieved
documents (the weight of the unjudged ranks); ``RBP(residual=True)`` also counts the ranks
beyond the list.

All runs, topics and qrels variants are ranked once; each (run, topic) list is measured as
given and under the two judgings, with qrels tables built by array operations from the
topic's judgments and the list's unjudged rows, in blocks of lists (:data:`BLOCK_ROWS`).
"""

from __future__ import annotations

import functools
from typing import Any, Iterable, Literal, Mapping, Optional, Union

import numpy as np
import pandas as pd

from pdeval.common import threads
from pdeval.common.contract import Choice, Integer, Nullable, contract
from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.engine.ranked import layout
from pdeval.engine.ranking import tie_order
from pdeval.engine.segments import ABSENT, POOLED, QrelsTable, Segments
from pdeval.errors import PdevalError
from pdeval.evaluation.core import MeasureLike, measure_chunk, prepare, result_frame, variant_chunks
from pdeval.frames.domains import Frame
from pdeval.measures.domains import Measures

__all__ = ["bounds", "summarize_bounds", "BOUND_COLUMNS", "UNJUDGED_CHOICES"]

#: the value columns of a bounds frame
BOUND_COLUMNS = ("value", "if_nonrelevant", "if_relevant", "low", "high", "residual")

#: which unjudged documents ``bounds`` judges
UNJUDGED_CHOICES = ("all", "absent", "pooled")

Unjudged = Literal["all", "absent", "pooled"]


@contract(run=Frame("run", foreign=True), qrels=Frame("qrels", foreign=True), measures=Measures(),
          unjudged=Choice(*UNJUDGED_CHOICES), grade=Nullable(Integer(0)))
@takes_engine_options
def bounds(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    *,
    unjudged: Unjudged = "all",
    grade: Optional[int] = None,
    **options: Any,
) -> pd.DataFrame:
    """Per-topic value of every measure, and its range over the judgings of the unjudged
    retrieved documents (module docstring).

    Parameters
    ----------
    run : DataFrame
        Run frame, as for :func:`pdeval.evaluate`.
    qrels : DataFrame
        Qrels frame (every variant is evaluated), as for :func:`pdeval.evaluate`.
    measures : str or list of str
        Measure strings, as for :func:`pdeval.evaluate`.
    unjudged : {'all', 'absent', 'pooled'}, default 'all'
        Which retrieved documents are judged: pooled (``-1``) and absent ones, only those
        absent from the qrels, or only the pooled ones.
    grade : int, optional
        The relevance level of a document judged relevant; default the largest level of each
        qrels variant (at least 1). A grade above a variant's top grade would raise the
        collection-wide maximum that some normalisers use (``gain_max``), so it is refused for
        those measures unless they are given ``gain_max=``.
    {engine_options}

    Returns
    -------
    pandas.DataFrame
        The key columns of :func:`pdeval.evaluate` (``run``, ``by`` columns, qrels variant
        columns, ``query_id``), ``measure``, ``value``, ``if_nonrelevant``, ``if_relevant``,
        ``low`` (= min of the two judgings), ``high`` (= max), ``residual`` (= high - low) and
        ``monotone`` (bool: ``[low, high]`` bounds every judging). :func:`pdeval.summarize`
        averages it per run.

    Raises
    ------
    PdevalError
        A bad ``unjudged`` or ``grade``, and whatever :func:`pdeval.evaluate` raises.

    See Also
    --------
    evaluate : The values with unjudged documents as nonrelevant.
    estimate : A best estimate inside the range, with an interval.

    Notes
    -----
    Moffat & Zobel (2008), "Rank-biased precision for measurement of retrieval
    effectiveness", ACM TOIS 27(1): the residual of RBP; Buckley & Voorhees (2004, SIGIR) and
    Sakai (2007, SIGIR) for the measures that ignore unjudged documents.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d4"], "relevance": [1, 0, 1]})
    >>> pdeval.bounds(run, qrels, ["P@3", "AP"])[["run", "measure", "value", "low", "high"]].round(3)
      run measure  value    low   high
    0   a     P@3  0.333  0.333  0.667
    1   a      AP  0.500  0.500  0.556
    2   b     P@3  0.667  0.667  1.000
    3   b      AP  1.000  1.000  1.000
    4   c     P@3  0.333  0.333  0.667
    5   c      AP  0.167  0.167  0.556
    """
    engine = EngineOptions.of(options)
    parsed, judgments, ranked = prepare(run, qrels, measures, engine)
    fill_level = _fill_levels(judgments.table, len(judgments.variants), grade, parsed)
    census = judgments.table.design.get("stratum")
    census = int(census.max()) + 1 if census is not None and len(census) else 0
    parts = []
    for chunk_variants in variant_chunks(ranked, judgments, engine):
        variant, group, value, whole = measure_chunk(ranked, judgments, chunk_variants, parsed, engine)
        if whole is None or engine.ties in ("optimistic", "pessimistic"):
            # the whole lists, in the ranked order (the optimistic and pessimistic orders are
            # taken again once the unjudged documents are judged)
            whole = layout(ranked, judgments, chunk_variants, engine.complete, False,
                           "expected" if engine.ties == "expected" else "trec")[2]
        system = group // max(ranked.n_topics, 1)
        judged = [[], []]
        for lo, hi in _blocks(whole.offsets, BLOCK_ROWS):  # blocks of lists: small temporaries, reused
            part = _lists(whole, lo, hi)
            judging = _Judging(part, variant[lo:hi], system[lo:hi], len(ranked.systems),
                               functools.partial(_row_pairs, ranked, group[lo:hi], part), unjudged, census)
            for kind, values in enumerate(_measured(judging, parsed, value[lo:hi], fill_level, engine.ties)):
                judged[kind].append(values)
        del whole
        parts.append((variant, group, value, *(np.concatenate(k) if k else value[:0] for k in judged)))
    variant, group, value, nonrelevant, relevant = (np.concatenate(p) for p in zip(*parts))
    if engine.undefined == "zero":
        value, nonrelevant, relevant = (np.nan_to_num(v, nan=0.0) for v in (value, nonrelevant, relevant))
    frame = result_frame(ranked, judgments, variant, group, value, parsed, list(engine.by))
    frame["if_nonrelevant"] = nonrelevant.reshape(-1)
    frame["if_relevant"] = relevant.reshape(-1)
    frame["low"] = np.fmin(frame["if_nonrelevant"], frame["if_relevant"])
    frame["high"] = np.fmax(frame["if_nonrelevant"], frame["if_relevant"])
    frame["residual"] = frame["high"] - frame["low"]
    frame["monotone"] = np.tile([m.monotone for m in parsed], len(group))
    return frame


#: rows of the lists judged at a time: the kernels' temporaries stay small enough for the
#: allocator to reuse (freshly mapped pages for every 36 MB temporary doubled the time)
BLOCK_ROWS = 1 << 20


def _blocks(offsets: np.ndarray, rows: int) -> list[tuple[int, int]]:
    """Consecutive ranges of segments of about ``rows`` rows each (whole segments)."""
    n = len(offsets) - 1
    cuts = np.searchsorted(offsets, np.arange(rows, int(offsets[-1]), rows), side="right") - 1
    bounds = np.unique(np.concatenate(([0], np.clip(cuts, 0, n), [n])))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def _lists(seg: Segments, lo: int, hi: int) -> Segments:
    """Segments ``lo`` to ``hi`` of whole lists, as segments of their own (same qrels table)."""
    a, b = int(seg.offsets[lo]), int(seg.offsets[hi])
    info = None if seg.info is None else {name: values[a:b] for name, values in seg.info.items()}
    ties = None if seg.ties is None else seg.ties[a:b]
    return Segments(seg.rel[a:b], seg.offsets[lo : hi + 1] - a, seg.topic[lo:hi], seg.qrels, info=info, ties=ties,
                    tie_mode=seg.tie_mode)


def _row_pairs(ranked, group: np.ndarray, whole: Segments) -> np.ndarray:
    """The judgment-index pair code of every row of the whole lists (-1: no qrels hold it)."""
    start = np.repeat(ranked.offsets[group], whole.lengths)
    return ranked.pair[start + np.arange(len(whole.rel)) - whole.start_of_row]


def _within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., c-1 for each count c, concatenated."""
    return np.arange(int(counts.sum())) - np.repeat(np.cumsum(counts) - counts, counts)


class _Judging:
    """The lists of a chunk's segments with their unjudged rows judged, each list with a qrels
    entry of its own: its topic's judgments plus its judged rows. What does not depend on
    the level given to the judged rows is computed once, for both judgings."""

    def __init__(self, seg: Segments, variant, system, n_systems, row_pairs, unjudged: str, census: int):
        self.seg, self.variant, self.census = seg, variant, census
        self.layout = {name: getattr(seg, name) for name in ("lengths", "segment_of_row", "start_of_row", "rank")}
        self.fill = {"all": seg.rel < 0, "absent": seg.rel == ABSENT, "pooled": seg.rel == POOLED}[unjudged]
        self.fill_rows = np.flatnonzero(self.fill)
        self.fill_seg = seg.segment_of_row[self.fill_rows]
        self.row_pairs = row_pairs  # (a callable: only a sampled estimator needs the pair codes)
        n_seg = seg.n_segments
        self.n_fill = np.bincount(self.fill_seg, minlength=n_seg)
        self.was_pooled = seg.rel[self.fill_rows] == POOLED
        table = seg.qrels
        self.n_copy = np.diff(table.offsets)[seg.topic]
        self.copy_seg = np.repeat(np.arange(n_seg), self.n_copy)
        self.copy_within = _within(self.n_copy)
        self.copy_level = table.levels[np.repeat(table.offsets[seg.topic], self.n_copy) + self.copy_within]
        self.start = np.zeros(n_seg + 1, dtype=np.int64)
        np.cumsum(self.n_copy + self.n_fill, out=self.start[1:])
        self.fill_base = self.start[self.fill_seg] + _within(self.n_fill)  # + the levels above the judged
        # collection-wide maxima (gain_max) per (variant, run): the variant's distinct levels
        # carried by one entry per (variant, run), which no list points to
        carrier_variant, carrier_level = _distinct_levels(table)
        n_variants = int(table.variant.max(initial=-1)) + 1
        self.carrier_key = np.arange(n_variants * n_systems)
        self.carrier_count = np.bincount(carrier_variant, minlength=n_variants)[self.carrier_key // n_systems]
        first = np.searchsorted(carrier_variant, self.carrier_key // n_systems)
        self.carrier_levels = carrier_level[np.repeat(first, self.carrier_count) + _within(self.carrier_count)]
        self.offsets = np.zeros(n_seg + len(self.carrier_key) + 1, dtype=np.int64)
        np.cumsum(np.concatenate([self.n_copy + self.n_fill, self.carrier_count]), out=self.offsets[1:])
        self.pooled = np.concatenate([
            table.pooled[seg.topic] - np.bincount(self.fill_seg[self.was_pooled], minlength=n_seg),
            np.zeros(len(self.carrier_key), dtype=np.int64),
        ])
        self.entry_variant = np.concatenate([table.variant[seg.topic] * n_systems + system, self.carrier_key])
        self.info = None
        if seg.info is not None:
            self.info = {name: values.copy() for name, values in seg.info.items()}
            absent_rows = self.fill_rows[~self.was_pooled]
            if "stratum" in self.info:
                self.info["stratum"][absent_rows] = census
            if "inclusion_prob" in self.info:
                self.info["inclusion_prob"][absent_rows] = 1.0

    def fill_pair(self) -> np.ndarray:
        """The judgment-index pair code of every judged row."""
        if not hasattr(self, "_fill_pair"):
            self._fill_pair = self.row_pairs()[self.fill_rows]
        return self._fill_pair

    def segments(self, levels: np.ndarray) -> Segments:
        """The lists with their unjudged rows judged at ``levels[variant]`` (per qrels variant)."""
        seg, fill_seg = self.seg, self.fill_seg
        level_of_seg = levels[self.variant]
        single = len(np.unique(levels)) == 1  # (one qrels variant, or all at one level): no gathers
        fill_level = levels[0] if single else level_of_seg[fill_seg]
        kind = np.result_type(seg.rel.dtype, np.min_scalar_type(int(levels.max(initial=0))))
        if single:
            rel = np.where(self.fill, fill_level, seg.rel).astype(kind, copy=False)
        else:
            rel = seg.rel.astype(kind)
            rel[self.fill_rows] = fill_level
        # each list's entry: its topic's levels (sorted descending) with the judged rows inserted
        below = self.copy_level < level_of_seg[self.copy_seg]
        at_or_above = np.bincount(self.copy_seg, weights=~below, minlength=seg.n_segments).astype(np.int64)
        copy_at = self.start[self.copy_seg] + self.copy_within + np.where(below, self.n_fill[self.copy_seg], 0)
        list_levels = np.empty(int(self.start[-1]), dtype=np.int64)
        list_levels[copy_at] = self.copy_level
        list_levels[self.fill_base + at_or_above[fill_seg]] = fill_level
        design = seg.qrels.design
        table = QrelsTable(
            levels=np.concatenate([list_levels, self.carrier_levels]),
            offsets=self.offsets,
            pooled=self.pooled,
            variant=self.entry_variant,
            design=_LazyDesign(lambda: _judged_design(design, seg.topic, fill_seg, self.fill_pair(), self.was_pooled,
                                                      level_of_seg, self.census)),
        )
        out = Segments(rel, seg.offsets, np.arange(seg.n_segments), table, info=self.info, ties=seg.ties,
                       tie_mode=seg.tie_mode)
        out.__dict__.update(self.layout)  # the same lists: their cached layout arrays are shared
        return out


class _LazyDesign(Mapping):
    """A sampling design built when a sampled estimator first reads it."""

    def __init__(self, make):
        self._make, self._design = make, None

    def _built(self) -> dict:
        if self._design is None:
            self._design = self._make()
        return self._design

    def __getitem__(self, key):
        return self._built()[key]

    def __iter__(self):
        return iter(self._built())

    def __len__(self) -> int:
        return len(self._built())


def _in_tie_order(seg: Segments, ties: str) -> Segments:
    """The judged lists in the optimistic or pessimistic order of the engine option ``ties``
    (taken on the judging, so a document judged relevant moves up its run of tied scores)."""
    if ties not in ("optimistic", "pessimistic") or seg.ties is None:
        return seg
    moved, _ = tie_order(seg.offsets, seg.ties, seg.rel, ties == "optimistic")
    info = None if seg.info is None else {name: values[moved] for name, values in seg.info.items()}
    out = Segments(seg.rel[moved], seg.offsets, seg.topic, seg.qrels, info=info, ties=seg.ties, tie_mode=ties)
    out.__dict__.update({k: v for k, v in seg.__dict__.items() if k in ("lengths", "segment_of_row", "start_of_row")})
    return out


def _measured(judging: _Judging, parsed: list, value: np.ndarray, fill_level: np.ndarray,
              ties: str = "trec") -> list[np.ndarray]:
    """Every measure (segments x measures) under the nonrelevant and the relevant judging,
    the measures computed on threads (numpy releases the GIL). A measure that counts unjudged
    documents as nonrelevant keeps its ``value`` under the nonrelevant judging. A measure with
    a cutoff reads the lists to the cutoff only (their qrels entries hold the rest), which
    spares the long tails; not a prime, whose condensed list reaches further."""
    tasks = [(1, i) for i in range(len(parsed))]
    tasks = [(0, i) for i, m in enumerate(parsed) if not m.as_nonrelevant] + tasks
    segments = {0: _in_tie_order(judging.segments(np.zeros_like(fill_level)), ties) if tasks[0][0] == 0 else None,
                1: _in_tie_order(judging.segments(fill_level), ties)}

    def compute(task: tuple) -> np.ndarray:
        filled, m = segments[task[0]], parsed[task[1]]
        return m.compute(filled if m.cutoff is None or m.judged_only else filled.cut(m.cutoff))

    out = [value.copy(), value.copy()]
    for (kind, i), values in zip(tasks, threads.ordered(compute, tasks)):
        out[kind][:, i] = values
    return out


def _distinct_levels(table: QrelsTable) -> tuple[np.ndarray, np.ndarray]:
    """The distinct judged levels of each qrels variant, as (variant, level) arrays."""
    variant = table.variant[table.entry_of_level]
    key = pd.DataFrame({"v": variant, "l": table.levels}).drop_duplicates()
    key = key.sort_values(["v", "l"], ascending=[True, False])
    return key["v"].to_numpy(), key["l"].to_numpy()


def _judged_design(design: dict, entry, fill_seg, fill_pair, was_pooled, level_of_seg, census) -> dict:
    """The sampling design of each list's entry: its topic's qrels rows, the judged pooled
    rows at their new level (in their stratum), and the judged absent rows in a stratum of
    their own with inclusion probability 1."""
    by_entry = np.argsort(design["entry"], kind="stable")
    n_entries = int(max(entry.max(initial=-1), design["entry"].max(initial=-1))) + 1
    first = np.searchsorted(design["entry"][by_entry], np.arange(n_entries + 1))
    n_copy = np.diff(first)[entry]
    rows = by_entry[np.repeat(first[entry], n_copy) + _within(n_copy)]
    copy_seg = np.repeat(np.arange(len(entry)), n_copy)
    level = design["level"][rows].copy()
    width = int(max(design["pair"].max(initial=0), fill_pair.max(initial=0))) + 2
    if was_pooled.any():
        judged = np.isin(copy_seg * width + design["pair"][rows], fill_seg[was_pooled] * width + fill_pair[was_pooled])
        level[judged] = level_of_seg[copy_seg[judged]]
    absent = fill_seg[~was_pooled]
    out = {
        "entry": np.concatenate([copy_seg, absent]),
        "level": np.concatenate([level, level_of_seg[absent]]),
        "pair": np.concatenate([design["pair"][rows], fill_pair[~was_pooled]]),
    }
    if "stratum" in design:
        out["stratum"] = np.concatenate([design["stratum"][rows], np.full(len(absent), census, dtype=np.int32)])
    if "inclusion_prob" in design:
        out["inclusion_prob"] = np.concatenate([design["inclusion_prob"][rows], np.ones(len(absent))])
    return out


def _fill_levels(table: QrelsTable, n_variants: int, grade: Optional[int], parsed) -> np.ndarray:
    """The level each variant's judged-relevant documents get: ``grade`` or the variant's top grade."""
    top = np.zeros(n_variants, dtype=np.int64)
    np.maximum.at(top, table.variant[table.entry_of_level], table.levels.astype(np.int64))
    if grade is None:  # relevant at the top grade, and at least at level 1
        return np.maximum(top, 1)
    collection_wide = [str(m) for m in parsed if "gain_max" in dict(m.params) and m.param("gain_max") is None]
    if collection_wide and (grade > top).any():
        raise PdevalError(
            f"bounds(): grade={grade} is above the top grade of a qrels variant ({int(top.min())}), which would raise the "
            f"collection-wide gain maximum of {collection_wide}; give those measures gain_max= or a lower grade"
        )
    return np.full(n_variants, int(grade), dtype=np.int64)


def summarize_bounds(frame: pd.DataFrame, *, wide: bool = False) -> pd.DataFrame:
    """Per-run means of a :func:`bounds` frame (NaN skipped): the key columns, ``measure``,
    the means of :data:`BOUND_COLUMNS` (the mean ``low``/``high`` bound the mean over topics
    where ``monotone``), ``monotone``, ``topics`` and ``undefined`` (as :func:`pdeval.summarize`).
    ``wide=True``: one column per measure with its mean ``value`` and a ``"<measure> residual"``
    column beside it."""
    keys = [c for c in frame.columns if c not in ("query_id", "measure", "monotone", *BOUND_COLUMNS)]
    grouped = frame.groupby(keys + ["measure"], sort=False, observed=True)
    columns = {name: (name, "mean") for name in BOUND_COLUMNS}
    summary = grouped.agg(**columns, monotone=("monotone", "all"), topics=("value", "count"),
                          size=("value", "size")).reset_index()
    summary["undefined"] = summary.pop("size") - summary["topics"]
    if not wide:
        return summary
    table = summary.pivot_table(index=keys, columns="measure", values=["value", "residual"], sort=False)
    columns = []
    for measure in dict.fromkeys(summary["measure"]):
        columns += [("value", measure), ("residual", measure)]
    table = table[columns]
    table.columns = [measure if kind == "value" else f"{measure} residual" for kind, measure in columns]
    return table.reset_index()
