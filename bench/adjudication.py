"""Every adjudication strategy on the 68 CLEF eHealth 2015 runs at full budget [target: < 30 s].

Run: ``PYTHONPATH=. .venv/bin/python bench/adjudication.py [--reps 3]``. The runs and qrels are
loaded once (not timed); each timed call is one :func:`pdeval.judging_order` with all ten
strategies (the candidates are built once per call, as a user would call it). Two settings:

* ``depth10-all``: candidates down to rank 10 (the depth of the official pool), budget = every
  candidate (the whole depth-10 pool of all 68 runs);
* ``depth100-qrels``: candidates down to rank 100, budget = the largest number of judgments a
  topic has in the official qrels (what the organisers spent).

Prints the median time of each setting and the per-strategy time of one extra call each. Needs
``../shared/data/clef2015-chs-task2``; skipped when absent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pdeval  # noqa: E402
from pdeval.judgments.adjudication import STRATEGIES, judging_order  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "clef2015-chs-task2"


def load():
    paths = sorted((DATA / "runs").glob("*.gz"))
    run = pd.concat([pdeval.read_run(p).assign(run=p.name[:-3]) for p in paths], ignore_index=True)
    qrels = pdeval.read_qrels(DATA / "qrels" / "qrels.eng.clef2015.qtest.bin.txt")
    return run, qrels


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent")
        return
    run, qrels = load()
    full = int(qrels.groupby("query_id").size().max())
    print(f"{run['run'].nunique()} runs, {len(run):,} rows; qrels {len(qrels):,} judgments, at most {full} per topic")
    settings = {"depth10-all": dict(pool_depth=10, budget=None), "depth100-qrels": dict(pool_depth=100, budget=full)}
    for name, kw in settings.items():
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            order = judging_order(run, qrels, STRATEGIES, seed=0, **kw)
            times.append(time.perf_counter() - start)
        print(f"{name}: median {statistics.median(times):.1f} s over {args.reps} (all {len(STRATEGIES)} strategies, "
              f"{len(order):,} judgments ordered)")
        parts = []
        for strategy in STRATEGIES:
            start = time.perf_counter()
            judging_order(run, qrels, strategy, seed=0, **kw)
            parts.append(f"{strategy} {time.perf_counter() - start:.1f}")
        print("  one strategy per call (s, candidates included): " + ", ".join(parts))


if __name__ == "__main__":
    main()
