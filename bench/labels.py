"""Speed of the label-set functions on the bundled data: the 33 LLMJudge label sets against the
human labels of the same 4,423 pairs, and loading the bundled CLEF 2018 collection.

    .venv/bin/python bench/labels.py             # 5 rounds each
    .venv/bin/python bench/labels.py --rounds 11

Each call is made once to warm up, then timed ``--rounds`` times; the figure is the best round
(the least disturbed by other work on the machine). Targets: ``agreement`` under 0.5 s,
``qrels_agreement`` (every statistic, per topic) under 1 s, ``datasets.load("clef2018")`` under
1 s. Needs only the repository (the extract is bundled under ``data/llmjudge-dl23``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

import pdeval  # noqa: E402

EXTRACT = HERE.parent / "data" / "llmjudge-dl23" / "labels.tsv.gz"


def read_extract() -> tuple[pd.DataFrame, pd.DataFrame]:
    """The human labels and the 33 label sets (long, with ``label_set``) of the bundled extract."""
    wide = pd.read_csv(EXTRACT, sep="\t", dtype={"query_id": str, "doc_id": str})
    human = wide[["query_id", "doc_id", "human"]].rename(columns={"human": "relevance"})
    sets = {name: wide[["query_id", "doc_id", name]].rename(columns={name: "relevance"}) for name in wide.columns[3:]}
    return human, pdeval.label_sets(sets)


def best_of(call, rounds: int) -> float:
    call()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    human, long = read_extract()
    cases = [
        ("agreement, 33 label sets x 4,423 pairs", lambda: pdeval.agreement(human, long), 0.5),
        ("qrels_agreement, 33 label sets x 4,423 pairs, per topic", lambda: pdeval.qrels_agreement(human, long,
                                                                                                   threshold=2), 1.0),
        ('datasets.load("clef2018")', lambda: pdeval.datasets.load("clef2018"), 1.0),
    ]
    for name, call, target in cases:
        seconds = best_of(call, args.rounds)
        print(f"{name}: {seconds:.3f} s (target < {target} s){'' if seconds < target else '  MISSED'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
