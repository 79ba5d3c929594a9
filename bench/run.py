"""pdeval against pytrec_eval, ir_measures and ranx on identical frames; writes bench/RESULTS.md.

Run with ``make bench`` or ``.venv/bin/python bench/run.py`` (``--help`` for options).

How it measures
---------------
* The parent process prepares every input once (deterministic synthetic workloads from
  :mod:`workload`, the shipped clef2018 top-100 runs, and, when ``../shared/data`` exists
  next to the repository, the full-depth clef2018 runs) and stores it as parquet under
  ``bench/out/`` (git-ignored).
* Every (experiment, tool) pair runs in a **fresh subprocess** (``--worker``), one after
  the other, so no tool inherits another's caches or heap. The worker reads the parquet
  files (pandas 3's Arrow-backed ``str`` ids), imports its tool, warms ranx's JIT on a tiny
  workload, then times calls with ``time.perf_counter``. The first call is a warm-up and is
  not counted unless it takes longer than ``--long`` seconds; then it counts and only
  ``--long-reps`` calls are made in total. Reported: the median.
* **Peak memory** = the highest resident set size (RSS) of the worker during the calls
  minus its RSS just before them (after the inputs were loaded and garbage collected): the
  extra memory the tool needs, conversions included. RSS is sampled every millisecond with
  psutil in a thread *and* read from ``getrusage(RUSAGE_SELF).ru_maxrss`` (the kernel's exact
  high-water mark, which catches spikes between samples whenever the calls set a new
  high-water mark). tracemalloc is not used: it misses memory numpy, Arrow and the C
  extensions allocate outside Python's allocator.
* Before the timing is trusted, every tool's per-topic values are compared with pdeval's
  (``score_precision="float32"`` for pytrec_eval and ir_measures, which keep 32-bit scores;
  float64 for ranx). ranx does not break ties by doc id, so its values are also compared on
  the (run, topic) lists without tied scores, where the order is the same.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Optional

import pandas as pd

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
OUT = HERE / "out"
sys.path.insert(0, str(HERE))

from tools import TOOLS, ranx_warm_up, tidy  # noqa: E402
from workload import describe, make_workload, run_names  # noqa: E402

FIVE = ["AP", "P@10", "nDCG", "Bpref", "infAP"]
REDUCTION_LEVELS = (10, 30, 50, 70, 90)
SHARED_CLEF = REPO.parent / "shared" / "data" / "clef2018-chs-task1"

#: experiment -> (run file, qrels file, measures, tools, description)
EXPERIMENTS: dict[str, dict[str, Any]] = {
    "a": dict(run="wl50", qrels="wl_qrels", measures=FIVE, tools=["pdeval", "pytrec_eval", "ir_measures", "ranx"],
              title="(a) 50 runs x 50 topics x 1000 docs = 2.5M rows, AP, P@10, nDCG, Bpref, infAP"),
    "b10": dict(run="wl10", qrels="wl_qrels", measures=FIVE, tools=["pdeval", "pytrec_eval", "ir_measures", "ranx"],
                title="(b) 10 runs (0.5M rows)"),
    "b25": dict(run="wl25", qrels="wl_qrels", measures=FIVE, tools=["pdeval", "pytrec_eval"],
                title="(b) 25 runs (1.25M rows)"),
    "b100": dict(run="wl100", qrels="wl_qrels", measures=FIVE, tools=["pdeval", "pytrec_eval"],
                 title="(b) 100 runs (5M rows)"),
    "c": dict(run="wl50", qrels="wl_variants", measures=["AP", "Bpref"],
              tools=["pdeval", "pytrec_eval", "ranx", "ir_measures"],
              title="(c) 50 runs x 50 qrels variants (5 levels x 10 samples, stratified), AP + Bpref"),
    "d": dict(run="clef_full", qrels="clef_variants", measures=["AP", "Bpref", "infAP"], tools=["pdeval", "pytrec_eval"],
              title="(d) clef2018 full depth x 160 variants (He et al. 2008: 16 levels x 10 samples), AP, Bpref, infAP"),
    "e100": dict(run="clef_top100", qrels="clef_qrels", measures=FIVE, tools=["pdeval", "pytrec_eval", "ir_measures", "ranx"],
                 title="(e) clef2018 shipped runs (top 100), 5 measures"),
    "efull": dict(run="clef_full", qrels="clef_qrels", measures=FIVE, tools=["pdeval", "pytrec_eval", "ir_measures", "ranx"],
                  title="(e) clef2018 full-depth runs, 5 measures"),
}
#: ir_measures on the reduction experiment takes minutes: it runs on one sample of each level
IR_MEASURES_SUBSET = {"c"}


# ---- inputs --------------------------------------------------------------------------------
def prepare(force: bool = False) -> dict:
    """Write every input frame to bench/out/*.parquet (once) and return their descriptions."""
    OUT.mkdir(parents=True, exist_ok=True)
    info_path = OUT / "inputs.json"
    if info_path.exists() and not force:
        return json.loads(info_path.read_text())
    import pdeval
    from pdeval.judgments.reduction import reduce

    info: dict[str, Any] = {}
    t0 = time.perf_counter()
    run100, qrels = make_workload(100, 50, 1000, seed=1)
    names = run_names(100)
    for n in (10, 25, 50, 100):
        # the first n runs of the 100-run workload: same rows, same qrels (pool of runs 0-19)
        keep = run100["run"].isin(names[:n]).to_numpy()
        frame = run100.loc[keep].reset_index(drop=True)
        frame.to_parquet(OUT / f"wl{n}.parquet")
        info[f"wl{n}"] = describe(frame, qrels)
    qrels.to_parquet(OUT / "wl_qrels.parquet")
    variants = reduce(qrels, list(REDUCTION_LEVELS), method="stratified", samples=10, seed=1)
    variants.to_parquet(OUT / "wl_variants.parquet")
    info["wl_variants"] = {"rows": len(variants), "variants": int(variants.groupby(["level", "sample"]).ngroups)}
    print(f"workloads written in {time.perf_counter() - t0:.1f} s", flush=True)

    from pdeval import datasets

    clef = datasets.load("clef2018")
    clef.runs.drop(columns=["rank"], errors="ignore").to_parquet(OUT / "clef_top100.parquet")
    clef.qrels.to_parquet(OUT / "clef_qrels.parquet")
    info["clef_top100"] = describe(clef.runs, clef.qrels)
    if SHARED_CLEF.is_dir():
        from pdeval.errors import DuplicateError

        frames, skipped = [], []
        for path in sorted((SHARED_CLEF / "runs").glob("*.gz")):
            try:
                frames.append(pdeval.read_run(path))
            except DuplicateError:
                skipped.append(path.name)
        full = pd.concat(frames, ignore_index=True).drop(columns=["rank"], errors="ignore")
        full.to_parquet(OUT / "clef_full.parquet")
        final = pdeval.read_qrels(SHARED_CLEF / "qrels.txt")
        final.to_parquet(OUT / "clef_qrels.parquet")  # identical to the shipped final qrels
        variants = reduce(final, "he2008", method="stratified", samples=10, seed=1)
        variants.to_parquet(OUT / "clef_variants.parquet")
        info["clef_full"] = describe(full, final) | {"files": len(frames), "skipped_duplicates": skipped}
        info["clef_variants"] = {"rows": len(variants), "variants": int(variants.groupby(["level", "sample"]).ngroups)}
    info_path.write_text(json.dumps(info, indent=1))
    return info


def load(name: str) -> Optional[pd.DataFrame]:
    path = OUT / f"{name}.parquet"
    return pd.read_parquet(path) if path.exists() else None


# ---- measuring -----------------------------------------------------------------------------
def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _maxrss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


class PeakMemory:
    """Peak RSS above the RSS at entry, from a 1 ms psutil sampler and ru_maxrss."""

    def __enter__(self) -> "PeakMemory":
        gc.collect()
        self.base = _rss()
        self.maxrss_before = _maxrss()
        self.peak = self.base
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        import psutil

        process = psutil.Process()
        while not self._stop.is_set():
            self.peak = max(self.peak, process.memory_info().rss)
            time.sleep(0.001)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()
        after = _maxrss()
        if after > self.maxrss_before:  # the calls set the process's high-water mark
            self.peak = max(self.peak, after)

    @property
    def extra(self) -> int:
        return self.peak - self.base


def worker(experiment: str, tool: str, reps: int, long_seconds: float, long_reps: int) -> dict:
    """Time one tool on one experiment in this (fresh) process; save its values; return stats."""
    spec = EXPERIMENTS[experiment]
    run, qrels = load(spec["run"]), load(spec["qrels"])
    measures = spec["measures"]
    total_variants = None
    if tool == "ir_measures" and experiment in IR_MEASURES_SUBSET:
        # one sample of every level: the whole loop would take minutes; the time is scaled up
        total_variants = int(qrels.groupby(["level", "sample"]).ngroups)
        qrels = qrels.loc[(qrels["sample"] == 0).to_numpy()].reset_index(drop=True)
    variant_columns = [c for c in ("level", "sample") if c in qrels.columns]
    function = TOOLS[tool]
    if tool == "ranx":
        ranx_warm_up(run, qrels, measures)
    else:
        __import__(tool)
    warnings.simplefilter("ignore")
    times = []
    with PeakMemory() as memory:
        start = time.perf_counter()
        output = function(run, qrels, measures)
        first = time.perf_counter() - start
        if first > long_seconds:
            times.append(first)
            calls = long_reps
        else:
            calls = reps
        while len(times) < calls:
            del output
            start = time.perf_counter()
            output = function(run, qrels, measures)
            times.append(time.perf_counter() - start)
    values = tidy(tool, output, measures, variant_columns)
    values.to_parquet(OUT / "values" / f"{experiment}_{tool}.parquet")
    if tool == "pdeval":
        reference = TOOLS["pdeval"](run, qrels, measures, score_precision="float32")
        tidy("pdeval", reference, measures, variant_columns).to_parquet(OUT / "values" / f"{experiment}_pdeval32.parquet")
    result = {
        "experiment": experiment,
        "tool": tool,
        "times": times,
        "median": statistics.median(times),
        "first_call": first,
        "rows": len(run),
        "qrels_rows": len(qrels),
        "variants": int(qrels.groupby(variant_columns).ngroups) if variant_columns else 1,
        "peak_extra_bytes": memory.extra,
        "peak_rss_bytes": memory.peak,
        "base_rss_bytes": memory.base,
    }
    if total_variants:
        result["extrapolated_from_variants"] = result["variants"]
        result["scale"] = total_variants / result["variants"]
    return result


# ---- agreement -----------------------------------------------------------------------------
def tie_free_lists(run: pd.DataFrame) -> pd.DataFrame:
    """(run, query_id) pairs whose scores are all distinct (every tool orders them the same)."""
    tied = run.duplicated(["run", "query_id", "score"], keep=False)
    has_tie = tied.groupby([run["run"], run["query_id"]], sort=False).any()
    return has_tie.loc[~has_tie].reset_index()[["run", "query_id"]]


def agreement(experiment: str, tool: str) -> Optional[dict]:
    """Max abs difference of a tool's values from pdeval's (float32 reference where due)."""
    values_dir = OUT / "values"
    path = values_dir / f"{experiment}_{tool}.parquet"
    reference_name = "pdeval" if tool in ("ranx", "pdeval") else "pdeval32"
    reference_path = values_dir / f"{experiment}_{reference_name}.parquet"
    if not path.exists() or not reference_path.exists():
        return None
    theirs, ours = pd.read_parquet(path), pd.read_parquet(reference_path)
    keys = [c for c in ("level", "sample") if c in ours.columns] + ["run", "query_id", "measure"]
    for frame in (theirs, ours):
        for key in keys:
            frame[key] = frame[key].astype(str)
    merged = ours.merge(theirs, on=keys, how="inner", suffixes=("_pdeval", "_tool"))
    diff = (merged["value_pdeval"] - merged["value_tool"]).abs()
    out = {
        "compared": len(merged),
        "tool_values": len(theirs),
        "pdeval_values_for_its_measures": int(ours["measure"].isin(theirs["measure"].unique()).sum()),
        "max_abs_diff": float(diff.max()) if len(diff) else float("nan"),
        "measures": sorted(theirs["measure"].unique()),
    }
    if tool == "ranx":
        run = load(EXPERIMENTS[experiment]["run"])
        free = tie_free_lists(run).astype(str)
        on_free = merged.merge(free, on=["run", "query_id"], how="inner")
        free_diff = (on_free["value_pdeval"] - on_free["value_tool"]).abs()
        out["tie_free_compared"] = len(on_free)
        out["tie_free_max_abs_diff"] = float(free_diff.max()) if len(free_diff) else float("nan")
        out["share_differing_1e-9"] = float((diff > 1e-9).mean()) if len(diff) else float("nan")
        out["max_abs_diff_by_measure"] = {m: float(d.max()) for m, d in diff.groupby(merged["measure"])}
    return out


# ---- report --------------------------------------------------------------------------------
def machine() -> dict:
    import importlib.metadata as md

    import psutil

    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = {}
    for package in ("pdeval", "pandas", "numpy", "pyarrow", "pytrec-eval-terrier", "ir_measures", "ranx", "numba",
                    "dask", "distributed"):
        try:
            versions[package] = md.version(package)
        except md.PackageNotFoundError:
            versions[package] = "not installed"
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "--", "pdeval"], cwd=REPO, capture_output=True,
                           text=True).stdout.strip()
    if dirty:
        commit += " + uncommitted changes in pdeval/"
    return {
        "cpu": model,
        "logical_cores": os.cpu_count(),
        "memory_gib": round(psutil.virtual_memory().total / 2**30, 1),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "versions": versions,
        "commit": commit,
        "date": time.strftime("%Y-%m-%d %H:%M %Z"),
    }


def _s(seconds: Optional[float]) -> str:
    return "–" if seconds is None else f"{seconds:.2f} s" if seconds < 100 else f"{seconds:.0f} s"


def _mib(n: Optional[int]) -> str:
    return "–" if n is None else f"{n / 2**20:,.0f} MiB"


def _time(result: dict) -> float:
    return result["median"] * result.get("scale", 1.0)


def render(results: dict, inputs: dict, info: dict, command: str) -> str:
    """bench/RESULTS.md from the collected results."""
    def get(experiment: str, tool: str) -> Optional[dict]:
        return results.get(f"{experiment}/{tool}")

    lines = ["# pdeval benchmark results", ""]
    lines += [
        f"Measured {info['date']} on {info['cpu']} ({info['logical_cores']} logical cores, "
        f"{info['memory_gib']} GiB RAM), Python {info['python']}, pdeval commit `{info['commit']}`.",
        "Versions: " + ", ".join(f"{k} {v}" for k, v in info["versions"].items()) + ".",
        "",
        f"Reproduce: `make bench` (or `{command}`) for the synthetic workloads, which are generated "
        "deterministically (`bench/workload.py`, seed 1) and cached in `bench/out/`; `python bench/real.py` "
        "for the real collections (then `python bench/run.py --render`).",
        "",
        "**Method.** Each tool runs in a fresh subprocess on the same parquet-loaded frames (pandas 3 "
        "Arrow-backed string ids). Times are medians of "
        f"{info['reps']} calls after one warm-up call; a call longer than {info['long']:.0f} s counts "
        f"as the first measurement and only {info['long_reps']} call(s) are made (loops over variants). "
        "Times include every DataFrame conversion a user has to do (run/qrels frames to dicts for "
        "pytrec_eval, string to object ids for ranx) but not the conversion of the peers' outputs back "
        "to a frame (pdeval returns a tidy frame). ranx runs warm (its numba JIT compiled first on a tiny "
        "workload) and uses all cores, and so does pdeval on runs of more than half a million rows (it ranks parts of "
        "a run in threads, pdeval.common.threads); pytrec_eval and ir_measures use one. Peak memory = highest "
        "RSS during the calls minus RSS before them (psutil sampling every 1 ms plus getrusage's "
        "ru_maxrss high-water mark; tracemalloc would miss numpy/Arrow/C allocations). The machine is shared "
        "and noisy: read ratios rather than absolute seconds.",
        "",
    ]

    def table(experiment: str, note: str = "") -> list[str]:
        spec = EXPERIMENTS[experiment]
        base = get(experiment, "pdeval")
        rows = [f"### {spec['title']}", ""]
        if note:
            rows += [note, ""]
        rows += ["| tool | median time | fastest call | time / pdeval | peak extra memory | values vs pdeval (max abs diff) |",
                 "|---|---|---|---|---|---|"]
        for tool in spec["tools"]:
            r = get(experiment, tool)
            if r is None:
                continue
            ratio = "1" if tool == "pdeval" else (f"{_time(r) / _time(base):.1f}x" if base else "–")
            label = tool
            if "scale" in r:
                label += f" (extrapolated x{r['scale']:.0f} from {r['extrapolated_from_variants']} variants)"
            fastest = min(r["times"]) * r.get("scale", 1.0)
            rows.append(f"| {label} | {_s(_time(r))} | {_s(fastest)} | {ratio} | {_mib(r['peak_extra_bytes'])} | {_agree(r)} |")
        return rows + [""]

    def _agree(r: dict) -> str:
        a = r.get("agreement")
        if not a or r["tool"] == "pdeval":
            return "reference"
        text = f"{a['max_abs_diff']:.1e} over {a['compared']:,} values"
        if r["tool"] == "ranx":
            text += (f"; tie-free lists: {a['tie_free_max_abs_diff']:.1e} over {a['tie_free_compared']:,}; "
                     f"{a['share_differing_1e-9']:.0%} of values differ (ties); no infAP")
        return text

    real_md = HERE / "out" / "real.md"
    if real_md.exists():  # the real collections first (bench/real.py)
        lines += [real_md.read_text().strip(), ""]
    w = inputs.get("wl50", {})
    lines += ["## Synthetic workload", "",
              f"`bench/workload.py`: {w.get('rows', 0):,} run rows ({w.get('runs')} runs x {w.get('topics')} topics x 1000 docs), "
              f"string ids (`d1234567`, topics `401`...), qrels = depth-100 pool of 20 runs, {w.get('judgments', 0):,} judgments, "
              f"{w.get('relevant_share', 0):.0%} relevant (grades 0/1/2); every third run's scores rounded to 2 decimals "
              f"({w.get('tied_rows_share', 0):.0%} of rows share their score with another row of their list). "
              f"Reduction variants: `pdeval.judgments.reduction.reduce(qrels, {list(REDUCTION_LEVELS)}, method='stratified', samples=10, seed=1)` "
              f"({inputs.get('wl_variants', {}).get('rows', 0):,} qrels rows, removed judgments kept as pooled -1 rows; ranx gets "
              "only the judged rows).", ""]
    if "clef_full" in inputs:
        c = inputs["clef_full"]
        lines += [f"clef2018 full depth: the {c['files']} run files of `shared/data/clef2018-chs-task1/runs` without duplicate "
                  f"documents ({c['rows']:,} rows; left out: {', '.join(c['skipped_duplicates'])}), final qrels "
                  f"({c['judgments']:,} judgments); He et al. variants: {inputs['clef_variants']['rows']:,} qrels rows.", ""]

    lines += ["## Results", ""]
    variants_note = ("pdeval: one call with the variants frame. Peers: one evaluator per variant, in a loop. "
                     "ir_measures ran on 5 of the 50 variants (sample 0 of each level) and its time is scaled x10.")

    def experiment_tables(experiments):
        for experiment in experiments:
            if get(experiment, "pdeval"):
                lines.extend(table(experiment, variants_note if experiment == "c" else ""))

    experiment_tables(("a",))
    # linearity
    series = [(n, get(f"b{n}" if n != 50 else "a", "pdeval")) for n in (10, 25, 50, 100)]
    if all(r for _, r in series):
        lines += ["### (b) Linearity in rows (5 measures)", "",
                  "| runs | rows | pdeval | pdeval rows/s | pytrec_eval | ir_measures | ranx |", "|---|---|---|---|---|---|---|"]
        for n, r in series:
            key = f"b{n}" if n != 50 else "a"
            peers = [get(key, t) for t in ("pytrec_eval", "ir_measures", "ranx")]
            lines.append(f"| {n} | {r['rows']:,} | {_s(r['median'])} | {r['rows'] / r['median'] / 1e6:.2f} M | "
                         + " | ".join(_s(p["median"]) if p else "–" for p in peers) + " |")
        t10, t100 = series[0][1]["median"], series[-1][1]["median"]
        lines += ["", f"pdeval time(100 runs) / time(10 runs) = {t100 / t10:.1f} (rows x10).", ""]
    experiment_tables(("c", "d", "e100", "efull"))
    lines += targets(results)
    dask_md = HERE / "out" / "dask_large.md"
    if dask_md.exists():
        lines += [dask_md.read_text().strip(), ""]
    return "\n".join(lines) + "\n"


def targets(results: dict) -> list[str]:
    """The targets of the benchmark brief, each with its measured ratio and met / not met."""
    def t(experiment: str, tool: str) -> Optional[float]:
        r = results.get(f"{experiment}/{tool}")
        return _time(r) if r else None

    rows = ["## Targets on the synthetic workload", "", "| target | measured | met |", "|---|---|---|"]

    def add(text: str, value: Optional[float], limit: float, fmt: str, below: bool = True) -> None:
        if value is None:
            rows.append(f"| {text} | not measured | – |")
            return
        met = value <= limit if below else value > limit
        rows.append(f"| {text} | {fmt.format(value)} | {'yes' if met else 'no'} |")

    pd_a, py_a, ir_a, rx_a = (t("a", x) for x in ("pdeval", "pytrec_eval", "ir_measures", "ranx"))
    add("2.5M rows, 5 measures: pdeval <= 1/4 of pytrec_eval (conversion included)",
        pd_a / py_a if pd_a and py_a else None, 1 / 4, "pdeval/pytrec_eval = {:.2f}")
    add("... pdeval faster than ranx by more than 3x", rx_a / pd_a if pd_a and rx_a else None, 3, "ranx/pdeval = {:.1f}x", below=False)
    add("... pdeval faster than ir_measures by more than 3x", ir_a / pd_a if pd_a and ir_a else None, 3,
        "ir_measures/pdeval = {:.1f}x", below=False)
    pd_c, py_c, rx_c = (t("c", x) for x in ("pdeval", "pytrec_eval", "ranx"))
    add("reduction (50 variants): pdeval <= 1/20 of the pytrec_eval loop", pd_c / py_c if pd_c and py_c else None, 1 / 20,
        "pdeval/pytrec_eval = {:.3f}")
    add("reduction: pdeval <= 1/5 of the ranx loop", pd_c / rx_c if pd_c and rx_c else None, 1 / 5, "pdeval/ranx = {:.3f}")
    ra, rp = results.get("a/pdeval"), results.get("a/pytrec_eval")
    add("peak memory (2.5M rows) no higher than pytrec_eval's",
        ra["peak_extra_bytes"] / rp["peak_extra_bytes"] if ra and rp else None, 1.0, "pdeval/pytrec_eval = {:.2f}")
    rc, rcp = results.get("c/pdeval"), results.get("c/pytrec_eval")
    add("peak memory (reduction) no higher than pytrec_eval's",
        rc["peak_extra_bytes"] / rcp["peak_extra_bytes"] if rc and rcp else None, 1.0, "pdeval/pytrec_eval = {:.2f}")
    rd = results.get("d/pdeval")
    add("clef2018 full depth x 160 variants: pdeval peak memory < 4 GiB",
        rd["peak_rss_bytes"] / 2**30 if rd else None, 4.0, "{:.2f} GiB (whole process)")
    b10, b100 = results.get("b10/pdeval"), results.get("b100/pdeval")
    if b10 and b100:
        per_row = [r["median"] / r["rows"] for r in (b10, b100)]
        add("time linear in rows: time per row at 5M rows within 1.25x of that at 0.5M", per_row[1] / per_row[0], 1.25,
            "ratio of time per row = {:.2f}")
    return rows + [""]


def main(argv: Optional[list[str]] = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", help="comma-separated experiments (a,b10,b25,b100,c,d,e100,efull)")
    parser.add_argument("--tools", help="comma-separated tools (default: every tool of each experiment)")
    parser.add_argument("--reps", type=int, default=5, help="timed calls per tool (median reported)")
    parser.add_argument("--long", type=float, default=20.0, help="seconds above which the first call counts")
    parser.add_argument("--long-reps", type=int, default=1, help="timed calls when a call is long")
    parser.add_argument("--prepare", action="store_true", help="regenerate the inputs")
    parser.add_argument("--render", action="store_true", help="only rewrite RESULTS.md from stored results")
    parser.add_argument("--worker", nargs=2, metavar=("EXPERIMENT", "TOOL"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.worker:
        result = worker(*args.worker, args.reps, args.long, args.long_reps)
        print("RESULT " + json.dumps(result), flush=True)
        return

    inputs = prepare(force=args.prepare)
    (OUT / "values").mkdir(parents=True, exist_ok=True)
    store = OUT / "results.json"
    results = json.loads(store.read_text()) if store.exists() else {}
    if not args.render:
        chosen = args.only.split(",") if args.only else list(EXPERIMENTS)
        tools = set(args.tools.split(",")) if args.tools else None
        for experiment in chosen:
            spec = EXPERIMENTS[experiment]
            if not (OUT / f"{spec['run']}.parquet").exists() or not (OUT / f"{spec['qrels']}.parquet").exists():
                print(f"skip {experiment}: input not available", flush=True)
                continue
            for tool in spec["tools"]:  # pdeval first: the others are checked against it
                if tools and tool not in tools:
                    continue
                command = [sys.executable, str(Path(__file__).resolve()), "--worker", experiment, tool,
                           "--reps", str(args.reps), "--long", str(args.long), "--long-reps", str(args.long_reps)]
                print(f"[{time.strftime('%H:%M:%S')}] {experiment} {tool} ...", end=" ", flush=True)
                done = subprocess.run(command, capture_output=True, text=True)
                line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")]
                if done.returncode or not line:
                    print(f"FAILED\n{done.stderr[-3000:]}", flush=True)
                    continue
                result = json.loads(line[-1][len("RESULT "):])
                result["agreement"] = agreement(experiment, tool)
                results[f"{experiment}/{tool}"] = result
                a = result["agreement"] or {}
                print(f"{_time(result):.2f} s, +{result['peak_extra_bytes'] / 2**20:.0f} MiB, "
                      f"max diff {a.get('max_abs_diff', float('nan')):.1e}", flush=True)
                store.write_text(json.dumps(results, indent=1))
    machine_store = OUT / "machine.json"
    if args.render and machine_store.exists():  # describe the machine and code as measured
        info = json.loads(machine_store.read_text())
    else:
        info = machine() | {"reps": args.reps, "long": args.long, "long_reps": args.long_reps}
        machine_store.write_text(json.dumps(info, indent=1))
    text = render(results, inputs, info, "python bench/run.py")
    (HERE / "RESULTS.md").write_text(text)
    print(f"wrote {HERE / 'RESULTS.md'}")


if __name__ == "__main__":
    main()
