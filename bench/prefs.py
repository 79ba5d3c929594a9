"""``pdeval eval -R qrels_prefs -m all_prefs -q`` against NIST's trec_eval 10.0 binary on the 68
CLEF 2015 runs (real data): wall-clock time of the whole command, and that the outputs agree.

Run: ``.venv/bin/python bench/prefs.py [--reps 3]``. The binary is built from
``../shared/tools/trec_eval-10.0`` into a temporary folder; it evaluates one run per call (its
input is one run), so its time is the sum over the 68 files, as a user scripts it; pdeval is one
command over the folder of runs (Python's start-up and the reading of the files included).
The runs are decompressed once, not timed. Prints the medians and the ratio pdeval / binary
(target: at most 1.5, the binary's time plus half). Needs the shared data folder beside the
repository (``../shared/data``), ``make`` and a C compiler; skips with a message without them.
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
OPTIONS = ["-R", "qrels_prefs", "-m", "all_prefs", "-q"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
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
        files = sorted(runs.iterdir())
        env = dict(os.environ, PYTHONPATH=str(ROOT))

        def theirs() -> tuple[float, str]:
            start, out = time.perf_counter(), []
            for run in files:
                out.append(subprocess.run([str(binary), *OPTIONS, str(qrels), str(run)], capture_output=True,
                                          text=True, check=True).stdout)
            return time.perf_counter() - start, "".join(out)

        def ours() -> tuple[float, str]:
            start = time.perf_counter()
            done = subprocess.run([sys.executable, "-m", "pdeval", "eval", *OPTIONS, str(qrels), str(runs)],
                                  capture_output=True, text=True, check=True, env=env)
            return time.perf_counter() - start, done.stdout

        binary_times, pdeval_times = [], []
        for _ in range(args.reps):  # alternating
            seconds, their_text = theirs()
            binary_times.append(seconds)
            seconds, our_text = ours()
            pdeval_times.append(seconds)
        same = [line.split("\t", 1)[1] for line in our_text.splitlines()] == their_text.splitlines()
        b, p = statistics.median(binary_times), statistics.median(pdeval_times)
        print(f"CLEF 2015, {len(files)} runs, all_prefs -q (qrels_prefs): trec_eval 10.0 {b:.2f} s (68 calls), "
              f"pdeval {p:.2f} s (one call), ratio {p / b:.2f} (target <= 1.5); outputs identical: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
