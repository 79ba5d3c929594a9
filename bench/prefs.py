"""``pdeval eval -R qrels_prefs -m all_prefs -q`` against NIST's trec_eval 10.0 binary on the 68
CLEF 2015 runs (real data): wall-clock time of the whole command, and that the outputs agree.

Run: ``.venv/bin/python bench/prefs.py [--reps 3] [--format qrels_prefs|prefs|both]``. The binary
is built from ``../shared/tools/trec_eval-10.0`` into a temporary folder; it evaluates one run per
call (its input is one run), so its time is the sum over the 68 files, as a user scripts it;
pdeval is one command over the folder of runs (Python's start-up and the reading of the files
included). The runs are decompressed once, not timed; the two sides alternate, so that other load
on the machine weighs on both. Prints the medians and the ratio pdeval / binary (target: at most
0.5, half the binary's time). ``--format prefs`` times ``-R prefs`` instead, on a preference file
written from the same qrels (:func:`pdeval.integrations.trec_eval.preferences.read_qrels_prefs`'s
frame in trec_eval's prefs format: one judgment group per topic and qrels group, one sub-group);
``both`` times each. Needs the shared data folder beside the repository (``../shared/data``),
``make`` and a C compiler; skips with a message without them.
"""

from __future__ import annotations

import argparse
import gzip
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA = ROOT.parent / "shared" / "data" / "clef2015-chs-task2"
TOOLS = ROOT.parent / "shared" / "tools" / "trec_eval-10.0"
OPTIONS = ["-m", "all_prefs", "-q"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--format", choices=["qrels_prefs", "prefs", "both"], default="qrels_prefs")
    args = parser.parse_args()
    if not DATA.is_dir() or not TOOLS.is_dir() or shutil.which("make") is None:
        print(f"skipped: needs {DATA}, {TOOLS} and make")
        return 0
    with tempfile.TemporaryDirectory() as folder:
        folder = Path(folder)
        shutil.copytree(TOOLS, folder / "src")
        subprocess.run(["make", "trec_eval"], cwd=folder / "src", capture_output=True, check=True)
        binary = folder / "src" / "trec_eval"
        runs = folder / "runs"
        runs.mkdir()
        for path in sorted((DATA / "runs").glob("*.gz")):
            (runs / path.name[:-3]).write_bytes(gzip.decompress(path.read_bytes()))
        qrels = DATA / "qrels" / "qrels.eng.clef2015.qtest.graded.txt"
        formats = ["qrels_prefs", "prefs"] if args.format == "both" else [args.format]
        for rel_format in formats:
            judgments = qrels if rel_format == "qrels_prefs" else _prefs_file(qrels, folder / "prefs.txt")
            _compare(binary, ["-R", rel_format, *OPTIONS, str(judgments)], runs, args.reps,
                     f"all_prefs -q (-R {rel_format})")
    return 0


def _prefs_file(qrels: Path, path: Path) -> Path:
    """The qrels as a trec_eval prefs file (``qid jg jsg docno level``), written from pdeval's
    preference frame of them."""
    sys.path.insert(0, str(ROOT))
    from pdeval.integrations.trec_eval.preferences import read_qrels_prefs

    frame = read_qrels_prefs(qrels)
    columns = ["query_id", "judgment_group", "judgment_subgroup", "doc_id", "relevance"]
    path.write_text("".join(f"{q} {g} {s} {d} {r:g}\n" for q, g, s, d, r in frame[columns].itertuples(index=False)))
    return path


def _compare(binary: Path, options: list, runs: Path, reps: int, label: str) -> None:
    """Time the binary (one call per run file) and pdeval (one call), alternating, and print
    the medians, their ratio and whether the outputs agree."""
    files = sorted(runs.iterdir())
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def theirs() -> tuple[float, str]:
        start, out = time.perf_counter(), []
        for run in files:
            out.append(subprocess.run([str(binary), *options, str(run)], capture_output=True, text=True,
                                      check=True).stdout)
        return time.perf_counter() - start, "".join(out)

    def ours() -> tuple[float, str]:
        start = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "pdeval", "eval", *options, str(runs)], capture_output=True,
                              text=True, check=True, env=env)
        return time.perf_counter() - start, done.stdout

    binary_times, pdeval_times = [], []
    for _ in range(reps):  # alternating
        seconds, their_text = theirs()
        binary_times.append(seconds)
        seconds, our_text = ours()
        pdeval_times.append(seconds)
    same = [line.split("\t", 1)[1] for line in our_text.splitlines()] == their_text.splitlines()
    b, p = statistics.median(binary_times), statistics.median(pdeval_times)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"CLEF 2015, {len(files)} runs, {label}: trec_eval 10.0 {b:.2f} s ({len(files)} calls), "
          f"pdeval {p:.2f} s (one call), ratio {p / b:.2f} (target <= 0.5); outputs identical: {same}; "
          f"load average {load:.2f}")


if __name__ == "__main__":
    sys.exit(main())
