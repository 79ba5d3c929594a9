"""Speed of the judge meta-evaluation table: 33 label sets x 1,000 topic resamples, and its coverage.

Workload: the 63 official runs of TREC DL 2021 (``../shared/data/trec-dl21``, 53 judged topics)
evaluated under the NIST qrels and under 33 judges' label sets (each the NIST qrels with a share
of 3 % to 60 % of its grades redrawn at random, seeded: real runs and topics, synthetic judges),
``nDCG@10``. Timed separately:

* ``leaderboards`` -- evaluating the 63 runs under the 34 label sets;
* ``table`` -- ``compare_judges(..., n_resamples=1000)``: every label set's coefficients with
  their topic-bootstrap intervals (methods: the Auto-Judge set ``tau_b, pearson, spearman,
  tau_ap_b, tau_gap, tau_b@10``);
* ``pairs`` -- ``compare_judges(..., pairs=True)``: the 528 pairs of judges, paired differences
  with intervals and p-values, for the same methods.

The target: the table in under 10 s on this machine.

``--coverage`` runs instead the coverage simulation of the user guide ("LLM judges"): a
generative model of system x topic scores whose population leaderboards are known, many
replications, and the share of 95 % intervals that cover the population coefficient, per
setting (``--settings noise:spread,...``; the fourth, noise 0.2 on a spread of 0.4, is more
crowded than the guide's three) and interval (``--intervals``).

    .venv/bin/python bench/meta_evaluation.py
    .venv/bin/python bench/meta_evaluation.py --coverage --replications 200
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

import pdeval
from pdeval.analysis.rankings.batched import batched
from pdeval.errors import PdevalWarning

DL21 = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "trec-dl21"
METHODS = ["tau_b", "pearson", "spearman", "tau_ap_b", "tau_gap", "tau_b@10"]


def judges(qrels: pd.DataFrame, count: int, seed: int) -> dict:
    """``count`` label sets: the qrels with a growing share of grades redrawn uniformly."""
    rng = np.random.default_rng(seed)
    grades = np.sort(qrels["relevance"].unique())
    sets = {"human": qrels}
    for j, share in enumerate(np.linspace(0.03, 0.6, count)):
        redraw = rng.random(len(qrels)) < share
        relevance = np.where(redraw, rng.choice(grades, len(qrels)), qrels["relevance"].to_numpy())
        sets[f"judge{j:02d}"] = qrels.assign(relevance=relevance)
    return sets


def speed(args) -> int:
    if not DL21.is_dir():
        print(f"skipped: TREC DL 2021 is not at {DL21} (../shared/data from the repository root)")
        return 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = pdeval.read_run(sorted(str(p) for p in (DL21 / "runs").iterdir()))
        qrels = pdeval.read_qrels(DL21 / "qrels-pass.dl21.human.txt")
        start = time.perf_counter()
        boards = pdeval.leaderboards(run, judges(qrels, args.judges, 0), "nDCG@10")
    print(f"leaderboards: {time.perf_counter() - start:6.2f} s  ({boards.run.nunique()} runs, "
          f"{boards.label_set.nunique()} label sets, {boards.query_id.nunique()} topics)")
    for pairs in (False, True):
        start, cpu = time.perf_counter(), time.process_time()
        out = pdeval.compare_judges(boards, "human", methods=METHODS, n_resamples=args.resamples, seed=1, pairs=pairs)
        name = "pairs" if pairs else "table"
        print(f"{name}:        {time.perf_counter() - start:6.2f} s  (CPU {time.process_time() - cpu:.2f} s; "
              f"{len(out)} rows, {args.resamples} resamples)")
    return 0


def simulate(systems: int, topics: int, noise: float, spread: float, rng):
    """Population leaderboards (human ``mu``, judges A and B) and a sampler of per-topic frames."""
    mu = np.sort(rng.uniform(0.2, 0.2 + spread, systems))
    nu = {"A": mu + rng.normal(0, 0.03, systems), "B": mu + rng.normal(0, 0.08, systems)}
    names = np.array([f"s{i:02d}" for i in range(systems)])

    def frame(values, **keys):
        return pd.DataFrame({"run": np.tile(names, topics), "query_id": np.repeat(np.arange(topics).astype(str), systems),
                             **keys, "measure": "m", "value": values.ravel()})

    def sample():
        topic = rng.normal(0, 0.15, (topics, 1))
        error = rng.normal(0, noise, (topics, systems))
        human = frame(mu + topic + error)
        judged = [frame(v + topic + 0.6 * error + 0.8 * rng.normal(0, noise, (topics, systems)), label_set=j)
                  for j, v in nu.items()]
        return pd.concat([human.assign(label_set="human"), *judged], ignore_index=True)

    return mu, nu, sample


def coverage(replications: int, resamples: int, systems=30, topics=50, noise=0.05, spread=0.4, interval="percentile",
             methods=tuple(METHODS), seed=7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Shares of intervals covering the population coefficient (per judge) and difference (A - B)."""
    rng = np.random.default_rng(seed)
    mu, nu, sample = simulate(systems, topics, noise, spread, rng)
    truth = {(j, m): batched(m, v[None], mu[None])[0] for j, v in nu.items() for m in methods}
    hits, pair_hits = [], []
    warnings.simplefilter("ignore", PdevalWarning)  # the percentile and BCa intervals that miss their value
    for r in range(replications):
        boards = sample()
        table = pdeval.compare_judges(boards, "human", methods=list(methods), n_resamples=resamples, seed=r,
                                      interval=interval)
        want = np.array([truth[j, m] for j, m in zip(table.label_set, table.method)])
        hits.append(table.assign(covered=(table.low <= want) & (want <= table.high)))
        pairs = pdeval.compare_judges(boards, "human", methods=list(methods), n_resamples=resamples, seed=r,
                                      interval=interval, pairs=True)
        want = np.array([truth[a, m] - truth[b, m] for a, b, m in zip(pairs.label_set, pairs.label_set_other, pairs.method)])
        pair_hits.append(pairs.assign(covered=(pairs.low <= want) & (want <= pairs.high)))
    per_judge = pd.concat(hits).groupby(["label_set", "method"], sort=False)["covered"].mean().unstack(0)
    per_pair = pd.concat(pair_hits).groupby("method", sort=False)["covered"].mean().rename("A - B")
    return per_judge, per_pair


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--judges", type=int, default=33)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--coverage", action="store_true", help="run the coverage simulation instead")
    parser.add_argument("--replications", type=int, default=200)
    parser.add_argument("--intervals", default="auto,simex,percentile", help="interval= choices, comma-separated")
    parser.add_argument("--settings", default="0.05:0.4,0.1:0.4,0.1:1.0,0.2:0.4", help="noise:spread pairs")
    args = parser.parse_args(argv)
    if not args.coverage:
        return speed(args)
    for setting in args.settings.split(","):
        noise, spread = map(float, setting.split(":"))
        for interval in args.intervals.split(","):
            per_judge, per_pair = coverage(args.replications, min(args.resamples, 1000), noise=noise, spread=spread,
                                           interval=interval, methods=(*METHODS, "rms"))
            print(f"\nnoise {noise}, spread {spread}, {interval} (share of 95 % intervals covering the truth):")
            print(pd.concat([per_judge, per_pair], axis=1).round(3).to_string())
    return 0


if __name__ == "__main__":
    sys.exit(main())
