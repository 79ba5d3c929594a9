#!/usr/bin/env python
"""Build the datasets shipped inside pdeval (``pdeval/datasets/``) from the shared data.

Run by hand from the repository root, never by the tests::

    .venv/bin/python scripts/build_datasets.py [--data ../shared/data]

For ``clef2018`` (CLEF eHealth 2018 Consumer Health Search, IRTask1) it

1. reads every run file of ``clef2018-chs-task1/runs`` with :func:`pdeval.sources.io.read_run`
   (run names from file names) and leaves out each run that holds a document twice within
   one topic (detected: :class:`pdeval.errors.DuplicateError`, not a hard-coded list);
2. orders every remaining run the trec_eval way (float64 scores, score descending, doc id
   descending) and keeps the top 100 documents per topic (:func:`pdeval.engine.ranking.rank_run`
   with ``depth=100``);
3. writes them into one TREC run file, gzipped as ``clef2018.runs.txt.gz`` (tag = run name, rank =
   trec_eval rank, scores written with the shortest text that reads back as the same
   float64), and gzips the final and the partial qrels unchanged;
4. reads the package files back and checks they give exactly the frames built in memory,
   then prints the counts that ``pdeval/datasets/PROVENANCE.md`` reports.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import re
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pandas as pd  # noqa: E402

from pdeval import datasets  # noqa: E402
from pdeval.errors import DuplicateError  # noqa: E402
from pdeval.sources.io import read_qrels, read_run, write_run  # noqa: E402
from pdeval.engine.ranking import rank_run  # noqa: E402

DEPTH = 100
OUT = REPO / "pdeval" / "datasets"


def gzip_copy(source: Path, target: Path) -> None:
    """gzip -9n: deterministic bytes (no file name, mtime 0)."""
    data = source.read_bytes()
    with open(target, "wb") as handle, gzip.GzipFile(filename="", mode="wb", fileobj=handle, mtime=0, compresslevel=9) as out:
        out.write(data)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def build_clef2018(data: Path) -> None:
    source = data / "clef2018-chs-task1"
    run_files = sorted(p for p in (source / "runs").iterdir() if p.is_file() and not p.name.startswith("."))
    clean, excluded = [], []
    for path in run_files:
        try:
            clean.append(read_run(path))
        except DuplicateError as exc:
            count = re.search(r"has (\d+) repeated row", str(exc))
            excluded.append((path.name, count.group(1) if count else "?"))
    runs = pd.concat(clean, ignore_index=True)
    top = rank_run(runs, depth=DEPTH)

    with tempfile.TemporaryDirectory() as tmp:
        plain = Path(tmp) / "clef2018.runs.txt"
        write_run(top, plain)
        gzip_copy(plain, OUT / "clef2018.runs.txt.gz")
    gzip_copy(source / "qrels.txt", OUT / "clef2018.qrels.txt.gz")
    gzip_copy(source / "aux" / "qrels_partial_20180911.txt", OUT / "clef2018.qrels_partial_20180911.txt.gz")

    # check: the package files give exactly what was built
    loaded = datasets.load("clef2018")
    pd.testing.assert_frame_equal(loaded.runs, top)
    pd.testing.assert_frame_equal(loaded.qrels, read_qrels(source / "qrels.txt"))
    pd.testing.assert_frame_equal(loaded.partial_qrels, read_qrels(source / "aux" / "qrels_partial_20180911.txt"))

    print(f"clef2018: {len(run_files)} run files, {len(clean)} kept, {len(excluded)} left out (duplicates):")
    for name, count in excluded:
        print(f"  - {name}: {count} repeated (topic, doc) rows")
    per_run = top.groupby("run", observed=True).agg(
        rows=("doc_id", "size"), topics=("query_id", "nunique")
    )
    per_topic = top.groupby(["run", "query_id"], observed=True).size().groupby("run", observed=True).agg(["min", "max"])
    table = per_run.join(per_topic)
    print(f"rows: {len(top)} ({len(runs)} before the depth-{DEPTH} cut); runs: {top.run.nunique()}; topics: {top.query_id.nunique()}")
    print("| run | rows | topics | docs/topic min | max |\n|---|---|---|---|---|")
    for name, row in table.iterrows():
        print(f"| {name} | {row.rows} | {row.topics} | {row['min']} | {row['max']} |")
    for file in sorted(OUT.glob("clef2018.*.gz")):
        raw = gzip.decompress(file.read_bytes())
        print(f"{file.name}: {file.stat().st_size} bytes, {len(raw)} uncompressed, sha256 (uncompressed) {sha256(raw)}")
    print(f"qrels: {len(loaded.qrels)} judgments; partial: {len(loaded.partial_qrels)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data", help="the shared data folder")
    args = parser.parse_args()
    if not (args.data / "clef2018-chs-task1").is_dir():
        sys.exit(f"no clef2018-chs-task1 under {args.data}; pass --data")
    build_clef2018(args.data)


if __name__ == "__main__":
    main()
