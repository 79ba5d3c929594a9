"""``pdeval.bounds`` against one ``pdeval.evaluate`` of the same measures on the 68 CLEF 2015 runs.

Run: ``.venv/bin/python bench/bounds.py [--reps 3] [--measures AP P@10 ...]``. The runs and
qrels are read once (not timed); then ``evaluate`` and ``bounds`` alternate ``reps`` times after
a warm-up of each, and the medians and their ratio are printed, in wall-clock and in CPU time
(the CPU time of all threads; steadier on a shared machine) (target: bounds <= 2.5 x evaluate). Needs the shared data folder beside the repository (``../shared/data``); skips
with a message without it.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pdeval  # noqa: E402

DATA = HERE.parent.parent / "shared" / "data" / "clef2015-chs-task2"
MEASURES = ["AP", "P@10", "nDCG@10", "Bpref", "infAP", "RBP", "R@100", "Judged@10"]


def clef2015(doc: str, measures: list) -> tuple:
    """The command line (``--reps``, ``--measures``) and the 68 CLEF 2015 runs and their qrels,
    read once; None for the frames when the shared data folder is absent (a message is printed)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--measures", nargs="+", default=measures)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"skipped: {DATA} not found (the shared data folder sits beside the repository)")
        return args, None, None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = pdeval.read_run(sorted((DATA / "runs").iterdir()))
    return args, run, pdeval.read_qrels(DATA / "qrels" / "qrels.eng.clef2015.qtest.graded.txt")


def main() -> int:
    args, run, qrels = clef2015(__doc__, MEASURES)
    if run is None:
        return 0
    options = dict(score_precision="float32")

    def timed(function) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            function(run, qrels, args.measures, **options)
        return time.perf_counter() - start, time.process_time() - cpu

    timed(pdeval.evaluate), timed(pdeval.bounds)  # warm-up
    evaluate_times, bounds_times = [], []
    for _ in range(args.reps):
        evaluate_times.append(timed(pdeval.evaluate))
        bounds_times.append(timed(pdeval.bounds))
    print(f"CLEF 2015, {run['run'].nunique()} runs, {len(run):,} rows, measures {' '.join(args.measures)}")
    for index, kind in enumerate(("wall-clock", "CPU")):
        e = statistics.median(t[index] for t in evaluate_times)
        b = statistics.median(t[index] for t in bounds_times)
        print(f"{kind}: evaluate {e:.2f} s, bounds {b:.2f} s (medians of {args.reps}): ratio {b / e:.2f} (target <= 2.5)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
