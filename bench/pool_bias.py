"""Pool-bias estimators on the CLEF eHealth 2015 runs: leave-out and correction times.

Run: ``PYTHONPATH=. .venv/bin/python bench/pool_bias.py [--reps 3]``. The runs and qrels are
loaded once (not timed). The pool is the official one (the top 10 of each team's runs 1-3: 30
pooled runs of 11 teams); the measures are those of the notebook (P@5, P@10, R@10), with every
estimator. Timed calls:

* ``leave_out_bias`` with each team left out (11 units) and with each pooled run left out (30);
* ``pool_bias_correction`` of the 38 unpooled runs (all 68 runs read, groups by team).

Prints the median of each over ``--reps`` calls. Needs ``../shared/data/clef2015-chs-task2``;
skipped when absent.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import pdeval  # noqa: E402

DATA = REPO.parent / "shared" / "data" / "clef2015-chs-task2"
MEASURES = ["P@5", "P@10", "R@10"]


def team(name: str) -> str:
    return name.split("_")[0]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent")
        return
    data = pdeval.datasets.load("clef2015", mirror=str(DATA.parent), progress=False)
    run, qrels = data.runs, data.qrels
    pooled = sorted(r for r in run["run"].unique() if r.rsplit(".", 1)[-1] in ("1", "2", "3"))
    pool_runs = run[run["run"].isin(pooled)]
    print(f"{run['run'].nunique()} runs ({len(pooled)} pooled, {len({team(p) for p in pooled})} teams), "
          f"{len(run):,} rows; measures {', '.join(MEASURES)}")
    calls = {
        "leave_out_bias, team left out":
            lambda: pdeval.leave_out_bias(pool_runs, qrels, MEASURES, pool_depth=10, group=team),
        "leave_out_bias, run left out":
            lambda: pdeval.leave_out_bias(pool_runs, qrels, MEASURES, pool_depth=10),
        "pool_bias_correction, 38 runs":
            lambda: pdeval.pool_bias_correction(run, qrels, MEASURES, pooled=pooled, pool_depth=10, group=team),
    }
    for name, call in calls.items():
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            call()
            times.append(time.perf_counter() - start)
        print(f"{name}: median {statistics.median(times):.2f} s over {args.reps}")


if __name__ == "__main__":
    main()
