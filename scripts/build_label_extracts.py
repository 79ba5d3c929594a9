"""Build the small label-set extracts in ``data/`` from the real collections beside the repository.

    python scripts/build_label_extracts.py [--shared ../shared/data]

Writes (gzip without name or time stamp, so a rebuild is byte-identical):

* ``data/llmjudge-dl23/labels.tsv.gz`` -- every one of the 4,423 LLMJudge test pairs with the
  human (NIST) grade and the grade of each of the 33 LLM label sets, one column per set;
* ``data/rag-umbrela/labels.tsv.gz`` -- TREC RAG 2025 human and UMBRELA v2 grades of the pairs
  of the first ``RAG_TOPICS`` topics (sorted as strings);
* ``data/trec-dl21/`` -- ``runs.tsv.gz`` (the top 10 of all 63 official runs on
  ``DL_TOPICS`` NIST-judged and ``DL_TOPICS`` GPT-4-judged topics, chosen with a fixed seed;
  the score is ``11 - rank`` in trec_eval order, which keeps that order),
  ``qrels.nist.tsv.gz`` and ``qrels.gpt4.tsv.gz`` (the judgments of those topics).

``data/*/PROVENANCE.md`` say where each source file comes from.
"""

from __future__ import annotations

import argparse
import glob
import gzip
import io
import os
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
RAG_TOPICS = 6
DL_TOPICS = 12
SEED = 2021


def _qrels(path: str) -> pd.DataFrame:
    frame = pd.read_csv(path, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
                        dtype={"query_id": str, "doc_id": str, "relevance": np.int64})
    return frame.drop(columns="iteration")


def _write(frame: pd.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    data = frame.to_csv(sep="\t", index=False, lineterminator="\n").encode("utf-8")
    buffer = io.BytesIO()
    with gzip.GzipFile(filename="", mode="wb", fileobj=buffer, compresslevel=9, mtime=0) as handle:
        handle.write(data)
    path.write_bytes(buffer.getvalue())
    print(f"{path.relative_to(ROOT)}: {len(frame)} rows, {path.stat().st_size} bytes")


def llmjudge(shared: Path) -> None:
    folder = shared / "llmjudge-dl23"
    wide = _qrels(str(folder / "llmjudge_test_qrel_idx.txt")).rename(columns={"relevance": "human"})
    for path in sorted(glob.glob(str(folder / "llm_labels" / "*.txt"))):
        name = os.path.basename(path)[: -len(".txt")]
        wide = wide.merge(_qrels(path).rename(columns={"relevance": name}), on=["query_id", "doc_id"], how="left",
                          validate="one_to_one")
    assert not wide.isna().any().any(), "every LLM label set labels every human pair"
    _write(wide, ROOT / "data" / "llmjudge-dl23" / "labels.tsv.gz")


def rag(shared: Path) -> None:
    folder = shared / "rag-umbrela"
    human = _qrels(str(folder / "qrels.rag25.test.txt"))
    umbrela = _qrels(str(folder / "qrels.rag25.test-umbrela2.txt"))
    wide = human.merge(umbrela, on=["query_id", "doc_id"], how="outer", suffixes=("_human", "_umbrela"),
                       validate="one_to_one").rename(columns={"relevance_human": "human", "relevance_umbrela": "umbrela"})
    topics = sorted(wide["query_id"].unique())[:RAG_TOPICS]
    _write(wide[wide["query_id"].isin(topics)].reset_index(drop=True), ROOT / "data" / "rag-umbrela" / "labels.tsv.gz")


def trec_dl21(shared: Path) -> None:
    folder = shared / "trec-dl21"
    nist = _qrels(str(folder / "qrels-pass.dl21.human.txt"))
    gpt4 = _qrels(str(folder / "gpt4_judgments" / "gpt4_judgments_dl2021_processed.txt"))
    rng = np.random.default_rng(SEED)
    nist_topics = sorted(rng.choice(sorted(nist["query_id"].unique()), DL_TOPICS, replace=False))
    gpt4_topics = sorted(rng.choice(sorted(gpt4["query_id"].unique()), DL_TOPICS, replace=False))
    import pdeval

    runs = pdeval.read_run(sorted(glob.glob(str(folder / "runs" / "*.gz"))))
    runs = runs[runs["query_id"].isin(nist_topics + gpt4_topics)]
    top = pdeval.rank_run(pdeval.frames.canonical.as_run(runs), depth=10)
    # the score becomes 11 - rank: the same trec_eval order as the original scores, in fewer bytes
    top = top.assign(score=11 - top["rank"])[["run", "query_id", "doc_id", "score"]]
    out = ROOT / "data" / "trec-dl21"
    _write(top, out / "runs.tsv.gz")
    _write(nist[nist["query_id"].isin(nist_topics)].reset_index(drop=True), out / "qrels.nist.tsv.gz")
    _write(gpt4[gpt4["query_id"].isin(gpt4_topics)].reset_index(drop=True), out / "qrels.gpt4.tsv.gz")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared" / "data")
    shared = parser.parse_args().shared
    llmjudge(shared)
    rag(shared)
    trec_dl21(shared)


if __name__ == "__main__":
    main()
