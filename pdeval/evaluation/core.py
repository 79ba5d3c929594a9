"""Evaluate run frames against qrels frames: one sort, one join, numpy kernels.

The engine works in three steps (see the docs, guide/architecture.md):

1. **Judgments** (:class:`JudgmentIndex`): the qrels' (topic, document) pairs get integer
   codes; a matrix ``variant x pair`` holds every qrels variant's judgment of each pair
   (``level``/``sample`` columns of a reduction experiment are variants), and a
   :class:`~pdeval.engine.segments.QrelsTable` holds R, N, pooled counts and ideal lists per
   (variant, topic).
2. **Ranking** (:class:`RankedRun`): the run's doc ids become integer keys once — their bytes
   packed into 64-bit words when they are short (no hashing; :mod:`pdeval.engine.ids`), else
   dictionary codes — which are checked for repeats, mapped onto the qrels' pair codes and
   give trec_eval's tie order; the rows are sorted once by (system, topic, score desc,
   doc id desc).
3. **Measuring**: for a chunk of variants, each ranked row looks its judgment up in the
   matrix (a gather, no merge), the lists are laid out as :class:`~pdeval.engine.segments.Segments`
   and every measure kernel reduces them. Memory is bounded by ``chunk_rows``.
"""

from __future__ import annotations

from typing import Any, Iterable, Optional, Union

import numpy as np
import pandas as pd

from pdeval.engine.coverage import check_coverage
from pdeval.frames.canonical import as_run, require_rows
from pdeval.measures import Measure, parse_all
from pdeval.measures.ties import check_ties as check_expected
from pdeval.engine.index import JudgmentIndex, index_qrels
from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.engine.ranked import RankedRun, layout
from pdeval.engine.segments import Segments
from pdeval.errors import PdevalError

MeasureLike = Union[str, Measure]


@takes_engine_options
def evaluate(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    **options: Any,
) -> pd.DataFrame:
    """Evaluate every run of ``run`` against every qrels variant of ``qrels``, in memory.

    :func:`pdeval.evaluate` is this function, and also takes dask frames and converts the
    result to Polars or Arrow; see it for the parameters.
    """
    return evaluate_frames(run, qrels, measures, EngineOptions.of(options))


def evaluate_frames(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    options: EngineOptions,
    *,
    coverage: bool = True,
    judgments: Optional[JudgmentIndex] = None,
    duplicates_checked: bool = False,
) -> pd.DataFrame:
    """:func:`evaluate` on pandas frames. ``coverage=False`` skips the topic overlap checks
    (:mod:`pdeval.engine.coverage`), for callers that evaluate a share of the topics (a dask
    partition) or frames they built themselves; every other check runs. ``judgments`` is
    the index of these qrels (:func:`index_qrels`) when the caller evaluates several runs
    against them and has built it once; ``duplicates_checked=True`` says that the run's lists
    hold no repeated document, because the caller read them with :func:`pdeval.read_run`'s
    check under the same policy (their screen is then not repeated)."""
    parsed, judgments, ranked = prepare(run, qrels, measures, options, coverage=coverage, judgments=judgments,
                                        duplicates_checked=duplicates_checked)
    variant_parts, group_parts, value_parts = [], [], []
    for chunk_variants in variant_chunks(ranked, judgments, options):
        variant, group, values, _ = measure_chunk(ranked, judgments, chunk_variants, parsed, options)
        variant_parts.append(variant)
        group_parts.append(group)
        value_parts.append(values)
    variant = np.concatenate(variant_parts)
    group = np.concatenate(group_parts)
    values = np.concatenate(value_parts) if value_parts else np.empty((0, len(parsed)))
    if options.undefined == "zero":
        values = np.nan_to_num(values, nan=0.0)
    return result_frame(ranked, judgments, variant, group, values, parsed, list(options.by))


def prepare(run: pd.DataFrame, qrels: pd.DataFrame, measures: Union[MeasureLike, Iterable[MeasureLike]],
            options: EngineOptions, *, coverage: bool = True, judgments: Optional[JudgmentIndex] = None,
            duplicates_checked: bool = False) -> tuple[list, JudgmentIndex, RankedRun]:
    """The checked measures, the qrels' judgment index and the ranked run (the checks and
    warnings of :func:`evaluate_frames`, which see for the keywords)."""
    by, depth, duplicates = list(options.by), options.depth, options.duplicates
    parsed = parse_all(measures, judged_only=options.judged_only, rel=options.rel, gains=options.gains)
    run = as_run(run, by=by, duplicates=None)  # checked on integer codes by RankedRun.build
    require_rows(run, "run")
    judgments = judgments or index_qrels(qrels, duplicates=duplicates, variants=options.variants)
    check_ties(parsed, options)
    ranked = RankedRun.build(
        run, judgments, by=by, score_precision=options.score_precision, depth=depth, duplicates=duplicates,
        ties=options.ties != "trec" or any(m.needs_ties for m in parsed), duplicates_checked=duplicates_checked,
    )
    if coverage:
        check_coverage(ranked, judgments, complete=options.complete, depth=depth)
    return parsed, judgments, ranked


def check_ties(parsed: list, options: EngineOptions) -> None:
    """Refuse, before any work, what the engine option ``ties`` cannot do: a ``depth`` cut
    (taken in trec_eval's order, it would fix which tied documents are kept) and, for
    ``ties="expected"``, a measure's own ``depth=`` or parameters its expected kernel refuses
    (:func:`pdeval.measures.ties.check_ties`; too many orders to enumerate show only on the data)."""
    if options.ties == "trec":
        return
    if options.depth is not None:
        raise PdevalError(
            f"depth={options.depth} cuts the lists in trec_eval's order, so it cannot be combined with "
            f"ties={options.ties!r} (which tied documents are kept would depend on their ids); use a "
            "cutoff (P@k, nDCG@k, ...) or ties='trec'"
        )
    check_expected(parsed, options.ties)


def variant_chunks(ranked: RankedRun, judgments: JudgmentIndex, options: EngineOptions) -> list[np.ndarray]:
    """The qrels variants in chunks whose laid-out rows stay within ``options.chunk_rows``."""
    n_variants = len(judgments.variants)
    per_variant_rows = max(int(ranked.offsets[-1]), 1)
    chunk = max(1, options.chunk_rows // per_variant_rows)
    return [np.arange(start, min(start + chunk, n_variants)) for start in range(0, n_variants, chunk)]


def measure_chunk(
    ranked: RankedRun, judgments: JudgmentIndex, variants: np.ndarray, parsed: list, options: EngineOptions
) -> tuple[np.ndarray, np.ndarray, np.ndarray, Optional[Segments]]:
    """Every measure on the lists of a chunk of qrels variants: the (variant, group) of each
    segment, the values (segments x measures, NaN where undefined) and the segments of the
    whole lists when they were laid out (None when every measure read the judged rows only)."""
    values, whole = {}, None
    layouts = sorted({options.sparse and m.sparse for m in parsed}, reverse=True)  # judged rows only first
    for judged_rows_only in layouts:
        variant, group, segments = layout(ranked, judgments, variants, options.complete, judged_rows_only,
                                          options.ties)
        for index, measure in enumerate(parsed):
            if (options.sparse and measure.sparse) == judged_rows_only:
                values[index] = measure.compute(segments)
        whole = None if judged_rows_only else segments
        del segments
    return variant, group, np.column_stack([values[index] for index in range(len(parsed))]), whole


def result_frame(ranked, judgments, variant, group, values, parsed, by) -> pd.DataFrame:
    """The tidy result frame of the (variant, group) segments and their values (segments x
    measures): the run and ``by`` keys, the qrels variant keys, ``query_id``, ``measure``, ``value``."""
    n_measures = len(parsed)
    system = np.repeat(group // ranked.n_topics, n_measures)
    topic = np.repeat(group % ranked.n_topics, n_measures)
    columns = {}
    for key in ["run", *by]:
        columns[key] = ranked.systems[key].to_numpy()[system]
    variant_rows = np.repeat(variant, n_measures)
    for key in judgments.keys:
        columns[key] = judgments.variants[key].to_numpy()[variant_rows]
    columns["query_id"] = np.asarray(judgments.topics)[topic]
    names = np.array([str(m) for m in parsed], dtype=object)
    columns["measure"] = np.tile(names, len(group))
    columns["value"] = values.reshape(-1)
    frame = pd.DataFrame(columns)
    for key in ["run", "query_id", "measure"]:
        frame[key] = frame[key].astype(str)
    return frame
