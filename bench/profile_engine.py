"""Where pdeval.evaluate spends its time, stage by stage, on the 2.5M-row workload.

Run: ``.venv/bin/python bench/profile_engine.py [--runs 50] [--reps 3] [--variants] [--shuffled]``,
or ``--collection clef2015`` (``trec-dl21``, ``clef2018-full``) for the real run files.

Part 1 (stage tree). The engine's stage functions (validation, qrels index, run encoding,
duplicate check, sort, pair lookup, layout, each measure kernel, result frame) and the
primitives they call (``pandas.factorize``, ``Index.get_indexer``, ``Index.has_duplicates``,
``numpy.argsort``/``lexsort``/``unique``, groupby ``ngroup``) are wrapped with timers for
the duration of the profile (nothing in the package is edited). Every call is recorded
under its call path, so the report is a tree of *inclusive* times (median over ``--reps``
calls of ``pdeval.evaluate``) with an ``(own code)`` line for the time a stage spends
outside the wrapped calls. Names that the engine no longer has are listed and skipped, so
the script keeps working while the engine changes; code it does not know shows up as
``(own code)``.

Part 2 ("what if", ``--what-if``): alternatives to the costly steps timed on the same data,
to judge an optimisation before writing it.

Part 3 (``--cprofile``): cProfile of one call, top functions by own time (pandas-heavy code
is inflated by the profiler's per-call overhead; use it to find names, part 1 for times).
"""

from __future__ import annotations

import argparse
import cProfile
import functools
import io
import pstats
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workload import make_workload  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG", "Bpref", "infAP"]

#: (object path, attribute, label). Module-level names are patched in the module that
#: *calls* them (``from x import f`` binds f there), so engine helpers are listed per module.
TARGETS: list[tuple[str, str, str]] = [
    ("pdeval.evaluation.core", "evaluate", "evaluate"),
    ("pdeval.evaluation.core", "parse_all", "parse measures"),
    ("pdeval.evaluation.core", "as_run", "as_run (validate run frame)"),
    ("pdeval.evaluation.core", "as_qrels", "as_qrels (validate qrels frame)"),
    ("pdeval.evaluation.core.JudgmentIndex", "build", "JudgmentIndex.build (qrels side)"),
    ("pdeval.evaluation.core.JudgmentIndex", "pair_codes", "pair codes (judgment lookup keys)"),
    ("pdeval.evaluation.core.RankedRun", "build", "RankedRun.build (encode, check, sort, join)"),
    ("pdeval.evaluation.core", "_codes", "_codes (groupby ngroup)"),
    ("pdeval.evaluation.core", "encode", "encode (ids -> codes)"),
    ("pdeval.evaluation.core", "packed_ids", "packed_ids (ids -> words)"),
    ("pdeval.evaluation.core", "fingerprint", "fingerprint (words -> hash)"),
    ("pdeval.evaluation.core", "has_repeats", "has_repeats (duplicate check)"),
    ("pdeval.evaluation.core", "groups_with_repeats", "groups_with_repeats (duplicate check per list)"),
    ("pdeval.engine.ranking", "segments_with_repeats", "segments_with_repeats (per-list sorts)"),
    ("pdeval.engine.ranking", "group_major", "group_major (lists together)"),
    ("pdeval.engine.ranking", "sort_within", "sort_within (per-list / per-tie-run sorts)"),
    ("pdeval.engine.ranking", "_greater", "_greater (are ties in doc order?)"),
    ("pdeval.evaluation.core.JudgmentIndex", "qrels_docs_of", "qrels_docs_of (doc lookup)"),
    ("pdeval.evaluation.core", "byte_order", "byte_order (sort unique ids)"),
    ("pdeval.evaluation.core", "trec_order", "trec_order (sort)"),
    ("pdeval.evaluation.core", "scores_for_ordering", "scores_for_ordering"),
    ("pdeval.evaluation.core", "group_offsets", "group_offsets"),
    ("pdeval.evaluation.core", "drop_duplicates", "drop_duplicates (frame fallback)"),
    ("pdeval.evaluation.core", "_layout", "_layout (segments + judgment gather)"),
    ("pdeval.evaluation.core", "_result_frame", "_result_frame (tidy output)"),
    ("pdeval.measures.registry.Measure", "compute", "kernel"),
    ("pdeval.frames.canonical", "canonicalize", "canonicalize"),
    ("pdeval.frames.canonical", "_as_id", "_as_id (id dtype check/convert)"),
    ("pdeval.frames.canonical", "_numeric", "_numeric (to_numeric)"),
    ("pdeval.frames.canonical", "drop_duplicates", "drop_duplicates"),
    # primitives
    ("pandas", "factorize", "pd.factorize"),
    ("pandas.Index", "get_indexer", "Index.get_indexer"),
    ("numpy", "argsort", "np.argsort"),
    ("numpy", "lexsort", "np.lexsort"),
    ("numpy", "unique", "np.unique"),
    ("numpy", "nan_to_num", "np.nan_to_num"),
    ("pandas.core.groupby.groupby.GroupBy", "ngroup", "GroupBy.ngroup"),
    ("pandas.DataFrame", "duplicated", "DataFrame.duplicated"),
]
PROPERTIES = [("pandas.Index", "has_duplicates", "Index.has_duplicates")]


def _resolve(path: str) -> Any:
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = __import__(".".join(parts[:i]), fromlist=["_"])
        except ImportError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ImportError(path)


class Tree:
    """Inclusive time per call path of the wrapped functions."""

    def __init__(self) -> None:
        self.stack: list[str] = []
        self.times: dict[tuple, float] = defaultdict(float)
        self.calls: dict[tuple, int] = defaultdict(int)
        self.patches: list[tuple[Any, str, Any]] = []
        self.missing: list[str] = []

    def wrap(self, function: Callable, label: str) -> Callable:
        tree = self

        @functools.wraps(function)
        def timed(*args, **kwargs):
            name = label
            if label == "kernel" and args:
                name = f"kernel {args[0]}"
            elif label.startswith("encode") and args and getattr(args[0], "name", None):
                name = f"encode({args[0].name})"
            tree.stack.append(name)
            path = tuple(tree.stack)
            start = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                tree.times[path] += time.perf_counter() - start
                tree.calls[path] += 1
                tree.stack.pop()

        return timed

    def install(self) -> None:
        for path, attr, label in TARGETS:
            try:
                owner = _resolve(path)
                original = owner.__dict__[attr] if isinstance(owner, type) else getattr(owner, attr)
            except (ImportError, AttributeError, KeyError):
                self.missing.append(f"{path}.{attr}")
                continue
            if isinstance(original, classmethod):
                wrapped: Any = classmethod(self.wrap(original.__func__, label))
            elif isinstance(original, staticmethod):
                wrapped = staticmethod(self.wrap(original.__func__, label))
            else:
                wrapped = self.wrap(original, label)
            setattr(owner, attr, wrapped)
            self.patches.append((owner, attr, original))
        for path, attr, label in PROPERTIES:
            try:
                owner = _resolve(path)
                original = owner.__dict__[attr]
            except (ImportError, AttributeError, KeyError):
                self.missing.append(f"{path}.{attr}")
                continue
            setattr(owner, attr, property(self.wrap(original.fget, label)))
            self.patches.append((owner, attr, original))

    def uninstall(self) -> None:
        for owner, attr, original in reversed(self.patches):
            setattr(owner, attr, original)
        self.patches.clear()


def profile_tree(run: pd.DataFrame, qrels: pd.DataFrame, measures: list[str], reps: int, **options) -> str:
    """The stage tree of ``pdeval.evaluate(run, qrels, measures)``, median of ``reps`` calls."""
    import pdeval

    pdeval.evaluate(run, qrels, measures, **options)  # warm-up (imports, caches)
    plain = []
    for _ in range(reps):
        start = time.perf_counter()
        pdeval.evaluate(run, qrels, measures, **options)
        plain.append(time.perf_counter() - start)
    samples: list[Tree] = []
    for _ in range(reps):
        tree = Tree()
        tree.install()
        try:
            pdeval.evaluation.core.evaluate(run, qrels, measures, **options)
        finally:
            tree.uninstall()
        samples.append(tree)
    paths = sorted({p for t in samples for p in t.times}, key=lambda p: _first_seen(samples[0], p))
    median = {p: statistics.median(t.times.get(p, 0.0) for t in samples) for p in paths}
    calls = {p: samples[0].calls.get(p, 0) for p in paths}
    root = ("evaluate",)
    total = median.get(root, float("nan"))
    lines = [f"{'stage (inclusive time; indented = inside the stage above)':74s} {'s':>7s} {'share':>6s} {'calls':>6s}"]

    def children(path: tuple) -> list[tuple]:
        return [p for p in paths if len(p) == len(path) + 1 and p[: len(path)] == path]

    def emit(path: tuple) -> None:
        indent = "  " * (len(path) - 1)
        lines.append(f"{indent + path[-1]:74s} {median[path]:7.3f} {median[path] / total:6.1%} {calls[path]:6d}")
        kids = children(path)
        for kid in kids:
            emit(kid)
        if kids:
            own = median[path] - sum(median[k] for k in kids)
            lines.append(f"{'  ' * len(path) + '(own code)':74s} {own:7.3f} {own / total:6.1%}")

    if root in median:
        emit(root)
    lines.append(f"pdeval.evaluate without instrumentation: median {statistics.median(plain):.3f} s "
                 f"(instrumented {total:.3f} s)")
    if samples[0].missing:
        lines.append("not found in this engine (skipped): " + ", ".join(samples[0].missing))
    return "\n".join(lines)


def _first_seen(tree: Tree, path: tuple) -> int:
    keys = list(tree.times)
    return keys.index(path) if path in keys else len(keys)


def median_time(function: Callable[[], object], reps: int) -> float:
    times = []
    for _ in range(reps):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def what_if(run: pd.DataFrame, qrels: pd.DataFrame, reps: int) -> str:
    """Alternatives to the costly steps, timed on the same data (engine-independent)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    import pdeval

    lines = ["what if (median seconds over the same 2.5M-row frame):"]

    def row(label: str, seconds: float) -> None:
        lines.append(f"  {label:86s} {seconds:7.3f}")

    doc = run["doc_id"]
    row("pd.factorize(doc_id) (Arrow-backed str)", median_time(lambda: pd.factorize(doc), reps))
    row("pd.factorize(doc_id, sort=True)", median_time(lambda: pd.factorize(doc, sort=True), reps))
    arrow = pa.Table.from_pandas(run[["doc_id"]], preserve_index=False).column("doc_id")  # the column's own chunks

    def arrow_codes():
        # one shared dictionary across chunks: the chunks' indices concatenate directly
        encoded = pc.dictionary_encode(arrow)
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks])
        return codes.astype(np.int64), encoded.chunks[0].dictionary if encoded.num_chunks else None

    row(f"pyarrow.compute.dictionary_encode(doc_id) + concatenated int64 codes ({arrow.num_chunks} chunks)",
        median_time(arrow_codes, reps))
    from pdeval.engine.ids import fingerprint, packed_ids

    row("pdeval.engine.ids.packed_ids(doc_id): bytes packed into words, no hashing (the engine's path)",
        median_time(lambda: packed_ids(doc), reps))
    words = packed_ids(doc)
    row("  + fingerprint and np.sort (its duplicate check)", median_time(lambda: np.sort(fingerprint(words)), reps))
    as_object = doc.astype(object)
    row("pd.factorize(doc_id as object strings)", median_time(lambda: pd.factorize(as_object), reps))
    cat = doc.astype("category")
    row("categorical doc_id: codes (already encoded, what encode() does)", median_time(lambda: cat.cat.codes.to_numpy(), reps))
    row("one-off doc_id.astype('category') (paid once by a user who keeps categoricals)",
        median_time(lambda: doc.astype("category"), 1))
    categorical_run = run.astype({"run": "category", "query_id": "category", "doc_id": "category"})
    row("pdeval.evaluate, 5 measures, Arrow-backed str ids", median_time(lambda: pdeval.evaluate(run, qrels, MEASURES), reps))
    row("pdeval.evaluate, 5 measures, categorical ids", median_time(lambda: pdeval.evaluate(categorical_run, qrels, MEASURES), reps))
    shuffled = run.sample(frac=1.0, random_state=1).reset_index(drop=True)
    row("pdeval.evaluate, 5 measures, rows shuffled (not in rank order: full sort)",
        median_time(lambda: pdeval.evaluate(shuffled, qrels, MEASURES), reps))
    codes, uniques = pd.factorize(doc)
    row("Index(unique doc ids).argsort() (byte order of the uniques)", median_time(lambda: pd.Index(uniques).argsort(), reps))
    key = pd.Index(np.repeat(np.arange(len(run) // 1000), 1000) * (len(uniques) + 1) + codes)
    row("pd.Index(int64 keys).has_duplicates (duplicate check)", median_time(lambda: pd.Index(key.to_numpy()).has_duplicates, reps))

    def sorted_check() -> bool:
        k = np.sort(key.to_numpy())
        return bool((k[1:] == k[:-1]).any())

    row("np.sort(int64 keys) + adjacent compare (duplicate check alternative)", median_time(sorted_check, reps))

    def bitmap_check() -> bool:
        # keys are < groups * docs: a presence bitmap when it is small
        return bool((np.bincount(key.to_numpy()) > 1).any())

    size = int(key.to_numpy().max()) + 1
    if size <= 200_000_000:
        row(f"np.bincount(int64 keys) > 1 (dense check, {size / 1e6:.0f}M counters)", median_time(bitmap_check, reps))
    else:
        lines.append(f"  dense duplicate check skipped: key space {size:,} too large")
    row("DataFrame.duplicated(['run','query_id','doc_id']) (frame-level check)",
        median_time(lambda: run.duplicated(["run", "query_id", "doc_id"]).to_numpy().any(), 1))
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
    parser.add_argument("--variants", action="store_true", help="also the 50-variant reduction workload (AP, Bpref)")
    parser.add_argument("--categorical", action="store_true", help="also with categorical id columns")
    parser.add_argument("--shuffled", action="store_true", help="also with rows not in rank order")
    parser.add_argument("--long-ids", action="store_true",
                        help="also with doc ids of 15, 25 and 43 bytes (TREC-style prefixes before the d-numbers)")
    parser.add_argument("--what-if", action="store_true", help="time alternatives to the costly steps")
    parser.add_argument("--cprofile", action="store_true")
    parser.add_argument("--collection", choices=["clef2015", "trec-dl21", "clef2018-full"],
                        help="profile on a real collection of the shared data instead (float32 scores)")
    args = parser.parse_args(argv)

    if args.collection:
        import warnings

        import pdeval
        from real import COLLECTIONS, DATA

        runs, qrels_file, options = COLLECTIONS[args.collection]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            run = pdeval.read_run(DATA / runs, duplicates=options.get("duplicates", "error"))
        qrels = pdeval.read_qrels(DATA / qrels_file)
        print(f"{args.collection}: {len(run):,} rows x {run['run'].nunique()} runs, {len(qrels):,} judgments")
        print(profile_tree(run, qrels, MEASURES, args.reps, score_precision="float32", **options))
        return

    run, qrels = make_workload(args.runs, 50, 1000, seed=1)
    print(f"workload: {len(run):,} rows x {run['run'].nunique()} runs, {len(qrels):,} judgments, "
          f"id dtype {run['doc_id'].dtype}, rows in rank order per list (ties in arbitrary order)")
    cases = [(f"{len(run) / 1e6:.1f}M rows, 1 qrels, {', '.join(MEASURES)}", run, qrels, MEASURES)]
    if args.categorical:
        categorical = run.astype({"run": "category", "query_id": "category", "doc_id": "category"})
        cases.append(("the same with categorical ids", categorical, qrels, MEASURES))
    if args.shuffled:
        cases.append(("the same with rows shuffled", run.sample(frac=1.0, random_state=1).reset_index(drop=True),
                      qrels, MEASURES))
    if args.long_ids:
        for prefix in ["LA0101-", "clueweb09-en0000-", "clueweb09-en0000-00-00000-abcdefgh-"]:
            longer = {"doc_id": lambda frame: prefix + frame["doc_id"]}
            cases.append((f"the same with doc ids '{prefix}d...' (up to {len(prefix) + 8} bytes)",
                          run.assign(**longer), qrels.assign(**longer), MEASURES))
    if args.variants:
        from pdeval.judgments.reduction import reduce

        variants = reduce(qrels, [10, 30, 50, 70, 90], method="stratified", samples=10, seed=1)
        cases.append((f"{len(run) / 1e6:.1f}M rows x 50 qrels variants ({len(variants):,} qrels rows), AP, Bpref",
                      run, variants, ["AP", "Bpref"]))
    for title, r, q, measures in cases:
        print(f"\n== {title} ==")
        print(profile_tree(r, q, measures, args.reps))
    if args.what_if:
        print()
        print(what_if(run, qrels, args.reps))
    if args.cprofile:
        print("\n== cProfile of one pdeval.evaluate call, by own time ==")
        print(cprofile(run, qrels, MEASURES))


if __name__ == "__main__":
    main()
