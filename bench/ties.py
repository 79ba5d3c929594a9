"""``ties="expected"`` (and the optimistic / pessimistic orders) against a default ``pdeval.evaluate``
of the same measures on the 68 CLEF 2015 runs.

Run: ``.venv/bin/python bench/ties.py [--reps 3] [--measures AP P@10 ...]``. The runs and qrels
are read once (not timed); then the default evaluation and each ``ties=`` mode alternate ``reps``
times after a warm-up of each, and the medians and their ratios to the default are printed, in
wall-clock and in CPU time (the CPU time of all threads; steadier on a shared machine) (target:
expected <= 1.5 x default). Needs the shared data folder beside the repository
(``../shared/data``); skips with a message without it.
"""

from __future__ import annotations

import statistics
import sys
import time
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))

import pdeval  # noqa: E402
from bounds import clef2015  # noqa: E402  (the runs and the command line, as bench/bounds.py reads them)

#: every measure family with a closed-form expected value, at the cutoffs CLEF reports
MEASURES = ["AP", "P@10", "R@100", "Rprec", "RR", "nDCG", "nDCG@10", "DCG@10", "RBP", "NumRelRet"]
MODES = ("expected", "optimistic", "pessimistic")


def main() -> int:
    args, run, qrels = clef2015(__doc__, MEASURES)
    if run is None:
        return 0

    def timed(ties: str) -> tuple[float, float]:
        start, cpu = time.perf_counter(), time.process_time()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            pdeval.evaluate(run, qrels, args.measures, ties=ties)
        return time.perf_counter() - start, time.process_time() - cpu

    modes = ("trec", *MODES)
    for mode in modes:  # warm-up
        timed(mode)
    times = {mode: [] for mode in modes}
    for _ in range(args.reps):
        for mode in modes:
            times[mode].append(timed(mode))
    tied = run.duplicated(["run", "query_id", "score"], keep=False).mean()
    print(f"CLEF 2015, {run['run'].nunique()} runs, {len(run):,} rows ({tied:.0%} tied), "
          f"measures {' '.join(args.measures)}")
    for index, kind in enumerate(("wall-clock", "CPU")):
        base = statistics.median(t[index] for t in times["trec"])
        parts = [f"default {base:.2f} s"]
        for mode in MODES:
            value = statistics.median(t[index] for t in times[mode])
            parts.append(f"{mode} {value:.2f} s ({value / base:.2f}x)")
        print(f"{kind} (medians of {args.reps}): " + ", ".join(parts) + " (target: expected <= 1.5x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
