"""Speed at the small end: ``pdeval.read_qrels`` against ``pandas.read_csv`` on many small files.

The 34 small qrels files of ``../shared/data/llmjudge-dl23`` (33 LLM label sets under
``llm_labels/`` and the dev qrels, about 60-100 KB each) are read by both, alternating, in one
process; each round reads all 34 files, the figure is the median of the rounds. pandas reads
with ``sep=r"\\s+", header=None`` (what a user would type; it neither detects the format nor
checks anything), pdeval with its defaults (format detection, every line checked, duplicate
judgments refused).

    .venv/bin/python bench/small_files.py            # 15 rounds
    .venv/bin/python bench/small_files.py --rounds 31

Prints both medians and the ratio pdeval / pandas (the target of issue 27: at most 1).
Skips with a message when the data folder is absent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

import pdeval

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "llmjudge-dl23"


def small_files() -> list[Path]:
    return sorted((DATA / "llm_labels").glob("*.txt")) + [DATA / "llm4eval_dev_qrel_2024.txt"]


def timed(read, files) -> float:
    start = time.perf_counter()
    for path in files:
        read(path)
    return time.perf_counter() - start


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15, help="rounds of reading every file (default 15)")
    args = parser.parse_args(argv)
    files = small_files()
    if not (DATA / "llm_labels").is_dir() or not all(path.is_file() for path in files):
        print(f"skipped: the LLMJudge files are not at {DATA} (../shared/data from the repository root)")
        return 0
    readers = {
        "pdeval.read_qrels": pdeval.read_qrels,
        "pandas.read_csv": lambda path: pd.read_csv(path, sep=r"\s+", header=None),
    }
    for read in readers.values():  # warm up: imports, caches, the OS's file cache
        timed(read, files)
    times: dict[str, list[float]] = {name: [] for name in readers}
    for _ in range(args.rounds):
        for name, read in readers.items():  # alternating, so that both see the same load
            times[name].append(timed(read, files))
    medians = {name: statistics.median(values) for name, values in times.items()}
    size = sum(path.stat().st_size for path in files)
    print(f"{len(files)} files, {size / 1e6:.1f} MB, median of {args.rounds} rounds")
    for name, value in medians.items():
        print(f"  {name:<18} {value * 1e3:8.1f} ms   ({value / len(files) * 1e3:.2f} ms a file)")
    ratio = medians["pdeval.read_qrels"] / medians["pandas.read_csv"]
    print(f"  ratio pdeval / pandas: {ratio:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
