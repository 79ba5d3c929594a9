"""Where pdeval.evaluate spends its time, stage by stage, on the 2.5M-row workload.

Run: ``.venv/bin/python bench/profile_engine.py [--runs 50] [--reps 3] [--variants]``.

Part 1 replays ``pdeval.evaluate`` step by step with the engine's own internals
(``pdeval.frames``, ``pdeval.evaluation``, ``pdeval.ranking``) and times each stage (median
of ``--reps``); it checks that the replay gives exactly ``pdeval.evaluate``'s values, so a
changed engine is noticed instead of silently mis-profiled. Part 2 is a cProfile of one
``pdeval.evaluate`` call (top functions by own time), valid whatever the engine becomes.
Part 3 times alternatives for the costly stages ("what if"), so that optimisations can be
judged before they are written: categorical ids, unsorted factorisation, skipping the sort
of rows already in rank order and re-sorting only runs of tied scores, an integer-key
duplicate check. ``--variants`` adds the 50-variant reduction workload (layout and kernels
dominate there).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import pstats
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workload import make_workload  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG", "Bpref", "infAP"]


class Stages:
    """Accumulates named stage timings over repetitions."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}
        self.order: list[str] = []

    @contextmanager
    def __call__(self, name: str):
        start = time.perf_counter()
        yield
        elapsed = time.perf_counter() - start
        if name not in self.times:
            self.times[name] = []
            self.order.append(name)
        self.times[name].append(elapsed)

    def report(self, title: str) -> str:
        medians = {k: statistics.median(v) for k, v in self.times.items()}
        total = sum(v for k, v in medians.items() if not k.startswith("  "))
        lines = [title, f"{'stage':58s} {'median s':>9s} {'share':>7s}"]
        for name in self.order:
            share = medians[name] / total if total else 0.0
            lines.append(f"{name:58s} {medians[name]:9.3f} {share:7.1%}")
        lines.append(f"{'total (top-level stages)':58s} {total:9.3f}")
        return "\n".join(lines)


def replay(run: pd.DataFrame, qrels: pd.DataFrame, measures: list[str], st: Stages) -> pd.DataFrame:
    """``pdeval.evaluate(run, qrels, measures)`` with default options, timed per stage.

    Top-level stage names have no indent; sub-stages (indented) are parts of the stage above
    and are not added to the total.
    """
    from pdeval import frames
    from pdeval.evaluation import JudgmentIndex, RankedRun, _codes, _layout, _result_frame
    from pdeval.measures import parse_all
    from pdeval.ranking import doc_order_codes, group_offsets, scores_for_ordering, trec_order

    with st("parse measures"):
        parsed = parse_all(measures, judged_only=False, rel=None, gains=None)
    with st("as_run (validation)"):
        checked = frames.as_run(run, by=[], duplicates="error")
    # the parts of as_run, on the same input
    with st("  as_run: canonicalize + id dtype checks + score dtype"):
        canon = frames.canonicalize(run)
        for column in ("run", "query_id", "doc_id"):
            frames._as_id(canon[column])
        canon["score"].isna().to_numpy().any()
    with st("  as_run: duplicate check (DataFrame.duplicated on run, query_id, doc_id)"):
        checked.duplicated(["run", "query_id", "doc_id"], keep="first").to_numpy().any()
    with st("as_qrels (validation)"):
        q = frames.as_qrels(qrels, duplicates="error")
    with st("JudgmentIndex.build (qrels side)"):
        judgments = JudgmentIndex.build(q)

    # RankedRun.build, step by step
    with st("ranking: system codes (groupby run ngroup)"):
        system, systems = _codes(checked, ["run"])
    with st("ranking: topic codes (topics.get_indexer(query_id))"):
        topic = judgments.topics.get_indexer(checked["query_id"])
        keep = topic >= 0
        r = checked
        if not keep.all():
            r, system, topic = checked.loc[keep], system[keep], topic[keep]
    with st("ranking: factorize doc ids, sorted (doc_order_codes)"):
        doc_code, doc_ids = doc_order_codes(r["doc_id"])
    with st("ranking: scores_for_ordering"):
        score = scores_for_ordering(r["score"].to_numpy(), "float64")
    n_topics = len(judgments.topics)
    with st("ranking: sort (lexsort group, -score, -doc code)"):
        group = system * n_topics + topic
        order = trec_order(group, score, doc_code)
    with st("ranking: pair codes (qrels docs.get_indexer + searchsorted)"):
        pair = judgments.pair_codes(topic[order], doc_ids, doc_code[order])
    with st("  pair codes: qrels docs.get_indexer(run's unique doc ids)"):
        judgments.docs.get_indexer(doc_ids)
    with st("ranking: group offsets"):
        offsets = group_offsets(group[order], len(systems) * n_topics)
    ranked = RankedRun(systems, pair, offsets, n_topics)

    n_variants = len(judgments.variants)
    per_variant_rows = max(int(ranked.offsets[-1]), 1)
    chunk = max(1, 8_000_000 // per_variant_rows)
    variant_parts, group_parts, value_parts = [], [], []
    for start in range(0, n_variants, chunk):
        variants = np.arange(start, min(start + chunk, n_variants))
        with st("layout: segments + judgment gather (_layout)"):
            variant, grp, segments = _layout(ranked, judgments, variants, False)
        variant_parts.append(variant)
        group_parts.append(grp)
        columns = []
        for m in parsed:
            with st(f"kernel {m}"):
                columns.append(m.compute(segments))
        value_parts.append(np.column_stack(columns))
    with st("result frame (nan_to_num + _result_frame)"):
        values = np.nan_to_num(np.concatenate(value_parts), nan=0.0)
        out = _result_frame(ranked, judgments, np.concatenate(variant_parts), np.concatenate(group_parts),
                            values, parsed, [])
    return out


def median_time(function: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def what_if(run: pd.DataFrame, qrels: pd.DataFrame, reps: int) -> str:
    """Time alternatives to the costly stages on the same data."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from pdeval import frames
    from pdeval.evaluation import JudgmentIndex, _codes

    lines = ["what if (median seconds):"]

    def row(label: str, seconds: float) -> None:
        lines.append(f"  {label:74s} {seconds:7.3f}")

    doc = run["doc_id"]
    row("factorize(doc_id, sort=True)  [current]", median_time(lambda: pd.factorize(doc, sort=True), reps))
    row("factorize(doc_id, sort=False)", median_time(lambda: pd.factorize(doc, sort=False), reps))
    arrow = pa.chunked_array([pa.array(doc.to_numpy(dtype=object), type=pa.string())])
    row("pyarrow.compute.dictionary_encode(doc_id) (unsorted)", median_time(lambda: pc.dictionary_encode(arrow), reps))
    row("factorize(doc_id.astype(object), sort=True) (pandas object strings)",
        median_time(lambda: pd.factorize(doc.astype(object), sort=True), 1))
    cat = doc.astype("category")
    row("categorical doc_id: codes + sorted categories check (already encoded)",
        median_time(lambda: (cat.cat.codes.to_numpy(), cat.cat.categories.is_monotonic_increasing), reps))
    row("one-off cost of doc_id.astype('category') (what a user would pay once)", median_time(lambda: doc.astype("category"), 1))
    judgments = JudgmentIndex.build(frames.as_qrels(qrels))
    row("qrels docs.get_indexer(doc_id) per row, no run factorisation (map once into qrels codes)",
        median_time(lambda: judgments.docs.get_indexer(doc), reps))
    # the sort
    system, _ = _codes(run, ["run"])
    topic = judgments.topics.get_indexer(run["query_id"])
    group = system * len(judgments.topics) + topic
    codes, _ = pd.factorize(doc, sort=True)
    score = run["score"].to_numpy()
    row("np.lexsort((-doc, -score, group))  [current]", median_time(lambda: np.lexsort((-codes, -score, group)), reps))

    def sorted_check_and_ties():
        # rows already in (group asc, score desc) order? then only runs of tied scores need
        # re-ordering by doc code descending
        same_group = group[1:] == group[:-1]
        ordered = bool(np.all((group[1:] >= group[:-1]) & (~same_group | (score[1:] <= score[:-1]))))
        tied_next = same_group & (score[1:] == score[:-1])
        starts = np.flatnonzero(np.diff(np.concatenate(([False], tied_next, [False])).astype(np.int8)) == 1)
        ends = np.flatnonzero(np.diff(np.concatenate(([False], tied_next, [False])).astype(np.int8)) == -1) + 1
        order = np.arange(len(group))
        if len(starts):
            # one segmented sort of all tied rows: key (tie run id, -doc code)
            lengths = ends - starts
            rows = np.repeat(starts - np.cumsum(np.concatenate(([0], lengths[:-1]))), lengths) + np.arange(lengths.sum())
            tie_run = np.repeat(np.arange(len(starts)), lengths)
            inner = np.lexsort((-codes[rows], tie_run))
            order[rows] = rows[inner]
        return ordered, order

    row("already-ordered check + re-sort only tied runs (input in rank order)", median_time(sorted_check_and_ties, reps))
    ok, order = sorted_check_and_ties()
    reference = np.lexsort((-codes, -score, group))
    lines.append(f"  (input already in rank order: {ok}; tie-only re-sort equals lexsort: {bool(np.array_equal(order, reference))})")
    key = group.astype(np.int64) * (codes.max() + 1) + codes

    def int_duplicates():
        s = np.sort(key)
        return bool((s[1:] == s[:-1]).any())

    row("duplicate check as np.sort of int64 (group, doc code) keys + adjacent compare", median_time(int_duplicates, reps))

    def dup_after_sort():
        # after the trec order, equal docs of one list are adjacent only if equal score; use
        # a bincount-free check: unique count of keys == len
        return len(np.unique(key)) != len(key)

    row("duplicate check as np.unique(int64 keys)", median_time(dup_after_sort, reps))
    row("DataFrame.duplicated(['run','query_id','doc_id'])  [current]",
        median_time(lambda: run.duplicated(["run", "query_id", "doc_id"]).to_numpy().any(), reps))
    return "\n".join(lines)


def cprofile(run: pd.DataFrame, qrels: pd.DataFrame, measures: list[str], top: int = 25) -> str:
    import pdeval

    profiler = cProfile.Profile()
    profiler.enable()
    pdeval.evaluate(run, qrels, measures)
    profiler.disable()
    stream = io.StringIO()
    pstats.Stats(profiler, stream=stream).sort_stats("tottime").print_stats(top)
    return stream.getvalue()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--variants", action="store_true", help="also profile the 50-variant reduction workload")
    parser.add_argument("--no-cprofile", action="store_true")
    args = parser.parse_args(argv)

    import pdeval

    run, qrels = make_workload(args.runs, 50, 1000, seed=1)
    print(f"workload: {len(run):,} rows, {len(qrels):,} judgments, id dtype {run['doc_id'].dtype}")
    workloads = [("2.5M rows, 1 qrels, " + ", ".join(MEASURES), run, qrels, MEASURES)]
    if args.variants:
        from pdeval.judgments import reduce

        variants = reduce(qrels, [10, 30, 50, 70, 90], method="stratified", samples=10, seed=1)
        workloads.append(("2.5M rows x 50 qrels variants, AP, Bpref", run, variants, ["AP", "Bpref"]))

    for title, r, q, measures in workloads:
        whole = []
        for _ in range(args.reps):
            start = time.perf_counter()
            expected = pdeval.evaluate(r, q, measures)
            whole.append(time.perf_counter() - start)
        st = Stages()
        for _ in range(args.reps):
            got = replay(r, q, measures, st)
        same = expected.reset_index(drop=True).equals(got.reset_index(drop=True))
        print()
        print(st.report(f"== {title}: stages (median of {args.reps}) =="))
        print(f"pdeval.evaluate itself: median {statistics.median(whole):.3f} s; replay equals it: {same}")
        if not same:
            print("WARNING: the engine changed; update replay() in bench/profile_engine.py")
    print()
    print(what_if(run, qrels, args.reps))
    if not args.no_cprofile:
        print()
        print("== cProfile of one pdeval.evaluate call (2.5M rows, 5 measures), by own time ==")
        print(cprofile(run, qrels, MEASURES))


if __name__ == "__main__":
    main()
