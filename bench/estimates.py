"""Speed and memory of ``pdeval.estimate`` on real runs.

Run: ``.venv/bin/python bench/estimates.py [--reps 3]``. Workload (target in brackets):
``estimate(method="bootstrap", n_resamples=1000)`` of nDCG@10 on the 63 TREC DL 2021 runs
against the NIST qrels [< 10 s on a 2-core machine], with the default prior and with
``prior="unique"`` against the qrels of the depth-5 pool of all runs (``pdeval.pool``: ranks 6-10
are drawn where unjudged; each run its own unit); the peak memory the call
adds (tracemalloc) shows the chunking of the draws. The data comes from the shared folder beside the repository
(``../shared/data/trec-dl21``); without it the workload is skipped and says so.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import tracemalloc
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
DL21 = HERE.parent.parent / "shared" / "data" / "trec-dl21"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    if not DL21.is_dir():
        print(f"skipped: {DL21} is absent")
        return
    import pdeval

    run = pdeval.read_run(sorted((DL21 / "runs").glob("*.gz")))
    qrels = pdeval.read_qrels(DL21 / "qrels-pass.dl21.human.txt")
    print(f"DL 2021: {run['run'].nunique()} runs, {len(run):,} rows; {len(qrels):,} judgments")
    with warnings.catch_warnings():  # the runs' topics without judgments have no pool either
        warnings.simplefilter("ignore", pdeval.errors.PdevalWarning)
        shallow = pdeval.pool(run, pool_depth=5, qrels=qrels, removed_as="absent")
    for label, judged, options in (("prior='both'", qrels, {}),
                                   ("prior='unique', depth-5 pool", shallow, {"prior": "unique", "pool_depth": 5})):
        times = []
        for _ in range(args.reps):
            start = time.perf_counter()
            result = pdeval.estimate(run, judged, "nDCG@10", n_resamples=1000, seed=1, progress=False, **options)
            times.append(time.perf_counter() - start)
        tracemalloc.start()
        pdeval.estimate(run, judged, "nDCG@10", n_resamples=1000, seed=1, progress=False, **options)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(f"estimate(bootstrap, {label}, n_resamples=1000), nDCG@10: median {statistics.median(times):.2f} s "
              f"over {args.reps} (all: {', '.join(f'{t:.2f}' for t in times)}); peak traced memory "
              f"{peak / 2**20:.0f} MiB; {len(result):,} (run, topic) rows, {result['unjudged'].sum():,} drawn "
              "[target < 10 s]")

if __name__ == "__main__":
    main()
