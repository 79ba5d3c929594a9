"""Evaluate a run data set larger than memory with pdeval.dask, with bounded worker memory.

Run: ``.venv/bin/python bench/dask_large.py`` (defaults: 2000 topics x 100 runs x 1000 docs =
200 million run rows). It

1. checks the free disk space, then generates the data set with :mod:`workload` block of
   topics by block of topics (``--topics-per-file`` topics, all runs, per parquet file; one
   row group per file; categorical ids), in ``--gen-procs`` processes, so no process ever
   holds more than one block. Files go to ``bench/out/large/`` (git-ignored) and are reused
   on the next run when their parameters match;
2. starts a ``dask.distributed.LocalCluster`` of ``--workers`` single-threaded worker
   processes, each with ``--memory-limit``, reads the files with ``dask.dataframe.from_map``
   (one partition per file, so every partition holds whole topics: ``partitioned=True``,
   no shuffle) and evaluates AP, P@10, nDCG, Bpref and infAP with
   :func:`pdeval.dask.evaluate_dask` (per-topic results written to parquet, not gathered);
3. measures the wall time (reading included), rows/s, and memory: the peak of the summed
   RSS of the client process and every worker process (psutil, sampled every 0.2 s) and each
   worker's own peak RSS (``getrusage`` ``ru_maxrss`` in the worker);
4. checks exactness: one partition is evaluated in memory with ``pdeval.evaluate`` and must
   equal the dask result for its topics;
5. writes ``bench/out/dask_large.json`` and the Markdown section ``bench/out/dask_large.md``
   that ``bench/run.py`` includes in ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from workload import Workload, topic_block  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG", "Bpref", "infAP"]


def _write_block(args: tuple) -> tuple[int, int, pd.DataFrame]:
    """Generate and write one file of topics; return (index, bytes, its qrels)."""
    w, index, topics, path = args
    run, qrels = topic_block(w, topics, ids="category")
    run.to_parquet(path, index=False, row_group_size=len(run), compression="zstd")
    return index, os.path.getsize(path), qrels.astype({"query_id": "str", "doc_id": "str"})


def generate(w: Workload, directory: Path, topics_per_file: int, procs: int) -> dict:
    """Write the data set (reused when ``manifest.json`` matches the parameters)."""
    manifest = directory / "manifest.json"
    params = asdict(w) | {"topics_per_file": topics_per_file}
    if manifest.exists() and json.loads(manifest.read_text()).get("params") == params:
        print("reusing the generated data set", flush=True)
        return json.loads(manifest.read_text())
    if directory.exists():
        shutil.rmtree(directory)
    directory.mkdir(parents=True)
    blocks = [list(range(s, min(s + topics_per_file, w.topics))) for s in range(0, w.topics, topics_per_file)]
    jobs = [(w, i, b, directory / f"part-{i:05d}.parquet") for i, b in enumerate(blocks)]
    start = time.perf_counter()
    sizes, qrels_parts = {}, {}
    # check the disk with the first file before writing the rest
    index, size, qrels = _write_block(jobs[0])
    sizes[index], qrels_parts[index] = size, qrels
    estimate = size * len(jobs)
    free = shutil.disk_usage(directory).free
    print(f"first file {size / 2**20:.0f} MiB; estimated {estimate / 2**30:.1f} GiB for {len(jobs)} files; "
          f"{free / 2**30:.0f} GiB free", flush=True)
    if estimate > 0.5 * free:
        raise SystemExit(f"not enough free disk for {estimate / 2**30:.1f} GiB (keeping half of {free / 2**30:.0f} GiB free)")
    with ProcessPoolExecutor(max_workers=procs) as pool:
        for done, (index, size, qrels) in enumerate(pool.map(_write_block, jobs[1:]), start=2):
            sizes[index], qrels_parts[index] = size, qrels
            if done % 10 == 0 or done == len(jobs):
                elapsed = time.perf_counter() - start
                print(f"  {done}/{len(jobs)} files, {elapsed:.0f} s", flush=True)
    qrels = pd.concat([qrels_parts[i] for i in sorted(qrels_parts)], ignore_index=True)
    qrels.to_parquet(directory / "qrels.parquet", index=False)
    info = {
        "params": params,
        "files": len(jobs),
        "rows": w.rows,
        "bytes": int(sum(sizes.values())),
        "qrels_rows": len(qrels),
        "generation_seconds": time.perf_counter() - start,
    }
    manifest.write_text(json.dumps(info, indent=1))
    return info


class TreeMemory:
    """Peak of the summed RSS of this process and all its descendants (sampled)."""

    def __init__(self, interval: float = 0.2):
        import psutil

        self.process = psutil.Process()
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _total(self) -> int:
        import psutil

        total = 0
        for p in [self.process, *self.process.children(recursive=True)]:
            try:
                total += p.memory_info().rss
            except psutil.Error:
                pass
        return total

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, self._total())
            time.sleep(self.interval)

    def __enter__(self) -> "TreeMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


def _read_part(path: str) -> pd.DataFrame:
    return pd.read_parquet(path)


def _worker_peak() -> int:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def evaluate(directory: Path, info: dict, workers: int, memory_limit: str, out: Path) -> dict:
    """Evaluate the data set on a LocalCluster; return the measurements."""
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    from pdeval.dask import evaluate_dask

    files = sorted(str(p) for p in directory.glob("part-*.parquet"))
    qrels = pd.read_parquet(directory / "qrels.parquet")
    meta = pd.read_parquet(files[0]).iloc[:0]
    result_dir = out / "large_result"
    if result_dir.exists():
        shutil.rmtree(result_dir)
    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=memory_limit,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(lambda: __import__("pdeval.dask"))  # imports outside the timing
        with TreeMemory() as memory:
            start = time.perf_counter()
            ddf = dd.from_map(_read_part, files, meta=meta)
            result = evaluate_dask(ddf, qrels, MEASURES, partitioned=True)
            result.to_parquet(result_dir, write_index=False)
            seconds = time.perf_counter() - start
        worker_peaks = list(client.run(_worker_peak).values())
    # exactness: the first partition in memory
    import pdeval

    first = pd.read_parquet(files[0])
    expected = pdeval.evaluate(first, qrels[qrels["query_id"].isin(first["query_id"].astype(str).unique())], MEASURES)
    got = pd.read_parquet(result_dir)
    got = got[got["query_id"].isin(expected["query_id"].unique())]
    keys = ["run", "query_id", "measure"]
    merged = expected.merge(got, on=keys, how="outer", suffixes=("_memory", "_dask"), indicator=True)
    exact = bool((merged["_merge"] == "both").all()) and float(
        (merged["value_memory"] - merged["value_dask"]).abs().max()) <= 1e-12
    return {
        "rows": info["rows"],
        "files": info["files"],
        "bytes_on_disk": info["bytes"],
        "qrels_rows": info["qrels_rows"],
        "workers": workers,
        "memory_limit": memory_limit,
        "seconds": seconds,
        "rows_per_second": info["rows"] / seconds,
        "peak_tree_rss_bytes": memory.peak,
        "worker_peak_rss_bytes": worker_peaks,
        "result_rows": len(pd.read_parquet(result_dir, columns=["value"])),
        "exact_on_first_partition": exact,
        "generation_seconds": info.get("generation_seconds"),
    }


def markdown(r: dict, w: Workload) -> str:
    gib = 2**30
    return "\n".join([
        "## Dask: a data set larger than memory",
        "",
        f"`bench/dask_large.py`: {w.topics:,} topics x {w.runs} runs x {w.docs} docs = **{r['rows']:,} run rows** "
        f"({r['files']} parquet files of whole topics, {r['bytes_on_disk'] / gib:.1f} GiB on disk with categorical ids; "
        f"{r['qrels_rows']:,} qrels rows broadcast), AP, P@10, nDCG, Bpref, infAP, on a `LocalCluster` of "
        f"{r['workers']} single-threaded worker processes with `memory_limit={r['memory_limit']}` each, "
        "`dask.dataframe.from_map` (one partition per file, `partitioned=True`, no shuffle), per-topic results "
        "written to parquet.",
        "",
        "| rows | wall time (read + evaluate + write) | rows/s | peak RSS, all processes | peak RSS per worker | exact vs in-memory (1 partition) |",
        "|---|---|---|---|---|---|",
        f"| {r['rows']:,} | {r['seconds']:.0f} s | {r['rows_per_second'] / 1e6:.2f} M | {r['peak_tree_rss_bytes'] / gib:.2f} GiB | "
        + ", ".join(f"{p / gib:.2f} GiB" for p in r["worker_peak_rss_bytes"])
        + f" | {'yes' if r['exact_on_first_partition'] else 'NO'} |",
        "",
        f"Generating the data set took {r['generation_seconds'] / 60:.0f} min (not included)."
        if r.get("generation_seconds") else "",
    ])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--topics", type=int, default=2000)
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--docs", type=int, default=1000)
    parser.add_argument("--topics-per-file", type=int, default=20)
    parser.add_argument("--gen-procs", type=int, default=2)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="3GiB")
    parser.add_argument("--out", type=Path, default=HERE / "out")
    args = parser.parse_args(argv)

    w = Workload(runs=args.runs, topics=args.topics, docs=args.docs, seed=1)
    directory = args.out / "large"
    print(f"{w.rows:,} rows; disk: {shutil.disk_usage(args.out if args.out.exists() else HERE).free / 2**30:.0f} GiB free",
          flush=True)
    info = generate(w, directory, args.topics_per_file, args.gen_procs)
    print(f"data set: {info['files']} files, {info['bytes'] / 2**30:.2f} GiB", flush=True)
    result = evaluate(directory, info, args.workers, args.memory_limit, args.out)
    result["generation_seconds"] = info.get("generation_seconds")
    print(json.dumps(result, indent=1), flush=True)
    (args.out / "dask_large.json").write_text(json.dumps(result, indent=1))
    (args.out / "dask_large.md").write_text(markdown(result, w) + "\n")


if __name__ == "__main__":
    main()
