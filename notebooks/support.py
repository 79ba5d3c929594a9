"""Small helpers shared by the notebooks (not part of the pdeval package).

* ``FAST`` / :func:`pick`: the environment variable ``PDEVAL_FAST=1`` (set by
  ``tests/test_notebooks.py``) selects reduced sample counts so that every notebook runs in
  seconds; without it the notebooks use the full settings reported in their text.
* :func:`save`: writes a figure as PNG to ``notebooks/figures/`` (or to the folder named by
  ``PDEVAL_FIGURES``, which the test points at a temporary folder).
* :func:`load_cranfield`, :func:`complete_qrels`, :func:`bm25_runs`: the Cranfield collection
  shipped in ``data/cranfield/`` (see its PROVENANCE.md) and BM25 runs over it made with the
  ``bm25s`` library.
* :func:`split_topics`: a fixed, seeded split of a topic list into two halves.
* :func:`shared_data`, :func:`read_trec_qrels`, :func:`read_extract`: the real label sets of the
  shared data beside the repository (when present) and the small extracts in ``data/``.
* :func:`claims`, :func:`versus`, :func:`combine`: the "paper vs ours" table every notebook
  ends with, its verdicts computed from the results.
"""

from __future__ import annotations

import gzip
import json
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

FAST = os.environ.get("PDEVAL_FAST", "").strip().lower() not in ("", "0", "false", "no")


def pick(full, fast):
    """``full`` normally, ``fast`` under ``PDEVAL_FAST=1``."""
    return fast if FAST else full


def repo_root() -> Path:
    """The repository root: the first parent of this file holding ``pyproject.toml``."""
    here = Path(__file__).resolve().parent
    for folder in (here, *here.parents):
        if (folder / "pyproject.toml").exists():
            return folder
    raise FileNotFoundError("pyproject.toml not found above the notebooks folder")


ROOT = repo_root()
FIGURES = Path(os.environ.get("PDEVAL_FIGURES") or ROOT / "notebooks" / "figures")


def save(fig, name: str, dpi: int = 120) -> Path:
    """Save ``fig`` as ``<FIGURES>/<name>.png`` and return the path."""
    FIGURES.mkdir(parents=True, exist_ok=True)
    path = FIGURES / f"{name}.png"
    fig.savefig(path, dpi=dpi, bbox_inches="tight", metadata={"Software": None})
    return path


# --------------------------------------------------------------------------------------------
# Cranfield


@dataclass
class Cranfield:
    docs: pd.DataFrame  # doc_id, title, author, bib, text
    queries: pd.DataFrame  # query_id, original_id, text
    qrels: pd.DataFrame  # query_id, doc_id, relevance (1..4; relevant documents only)
    source_docs: pd.DataFrame  # query_id, doc_id: the document each question was written from


def load_cranfield(folder: Path | None = None) -> Cranfield:
    """Read ``data/cranfield/``: documents, queries, graded qrels and source documents."""
    folder = Path(folder) if folder is not None else ROOT / "data" / "cranfield"
    with gzip.open(folder / "docs.jsonl.gz", "rt", encoding="utf-8") as handle:
        docs = pd.DataFrame([json.loads(line) for line in handle])
    queries = pd.read_csv(folder / "queries.tsv", sep="\t", dtype=str, keep_default_na=False)
    qrels = pd.read_csv(
        folder / "qrels.txt", sep=" ", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str, "relevance": np.int64},
    ).drop(columns="iteration")
    source = pd.read_csv(folder / "source_docs.tsv", sep="\t", dtype=str)
    return Cranfield(docs, queries, qrels, source)


def complete_qrels(cran: Cranfield) -> pd.DataFrame:
    """The complete-judgment view: every document judged for every query (grade from the qrels,
    0 otherwise), except the query's source document, which is left out."""
    topics = cran.queries["query_id"].to_numpy()
    docs = cran.docs["doc_id"].to_numpy()
    full = pd.DataFrame({"query_id": np.repeat(topics, len(docs)), "doc_id": np.tile(docs, len(topics))})
    full = full.merge(cran.qrels, on=["query_id", "doc_id"], how="left")
    full["relevance"] = full["relevance"].fillna(0).astype(np.int64)
    source = cran.source_docs.assign(_source=True)
    full = full.merge(source, on=["query_id", "doc_id"], how="left")
    return full[full["_source"].isna()].drop(columns="_source").reset_index(drop=True)


def bm25_runs(cran: Cranfield, b_values: Sequence[float], *, k1: float = 1.2, depth: int = 1000) -> pd.DataFrame:
    """BM25 runs (the ``bm25s`` library, Lucene IDF) for every b in ``b_values``.

    Documents are indexed by their ``text`` field (which repeats the title), lower-cased and
    split by ``bm25s``'s tokeniser with its English stopword list, without stemming. Each query
    keeps its top ``depth`` documents with a positive score (a document sharing no term with the
    query is not retrieved). Returns a run frame ``run, b, query_id, doc_id, score``; ``run`` is
    ``"BM25"`` and ``b`` tells the systems apart (pass ``by="b"`` to :func:`pdeval.evaluate`).
    """
    with warnings.catch_warnings():  # bm25s imports tqdm.auto, which warns without ipywidgets
        warnings.simplefilter("ignore")
        import bm25s

    corpus = bm25s.tokenize(cran.docs["text"].tolist(), stopwords="en", show_progress=False)
    queries = bm25s.tokenize(cran.queries["text"].tolist(), stopwords="en", show_progress=False, return_ids=False)
    doc_ids = cran.docs["doc_id"].to_numpy()
    topic_ids = cran.queries["query_id"].to_numpy()
    k = min(depth, len(doc_ids))
    frames = []
    for b in b_values:
        model = bm25s.BM25(k1=k1, b=float(b))
        model.index(corpus, show_progress=False)
        found, scores = model.retrieve(queries, k=k, show_progress=False, n_threads=1)
        frame = pd.DataFrame(
            {
                "run": "BM25",
                "b": float(b),
                "query_id": np.repeat(topic_ids, k),
                "doc_id": doc_ids[found.ravel()],
                "score": scores.ravel().astype(np.float64),
            }
        )
        frames.append(frame[frame["score"] > 0])
    return pd.concat(frames, ignore_index=True)


def split_topics(topics: Sequence[str], seed: int) -> tuple[list[str], list[str]]:
    """Shuffle ``topics`` (sorted first) with ``seed`` and cut them into two halves A and B."""
    ordered = sorted(set(map(str, topics)), key=lambda t: (len(t), t))
    order = np.random.default_rng(seed).permutation(len(ordered))
    shuffled = [ordered[i] for i in order]
    half = (len(shuffled) + 1) // 2
    return sorted(shuffled[:half], key=lambda t: (len(t), t)), sorted(shuffled[half:], key=lambda t: (len(t), t))


# --------------------------------------------------------------------------------------------
# label sets: the shared data beside the repository, or the extracts in data/


def shared_data(name: str) -> Path | None:
    """``../shared/data/<name>`` next to the repository if it exists (full runs), else None."""
    folder = ROOT.parent / "shared" / "data" / name
    return folder if folder.is_dir() else None


def read_trec_qrels(path) -> pd.DataFrame:
    """A four-column TREC qrels file (``query_id iteration doc_id relevance``) as a qrels frame."""
    return pd.read_csv(
        path, sep=r"\s+", header=None, names=["query_id", "iteration", "doc_id", "relevance"],
        dtype={"query_id": str, "doc_id": str, "relevance": np.int64},
    ).drop(columns="iteration")


def read_extract(name: str, file: str = "labels.tsv.gz") -> pd.DataFrame:
    """A table of ``data/<name>/`` (see its PROVENANCE.md), ids as strings."""
    return pd.read_csv(ROOT / "data" / name / file, sep="\t", dtype={"query_id": str, "doc_id": str, "run": str})


# --------------------------------------------------------------------------------------------
# paper vs ours


def versus(a, b, *, tol: float = 0.0) -> str:
    """Is ``a`` larger than ``b``? ``"yes"``, ``"no"`` or ``"tie"`` (``|a - b| <= tol``).

    ``a`` and ``b`` may also be arrays of paired values (one per sample, e.g. the same reduced
    qrels scored by two measures): the mean paired difference is then compared with two
    standard errors (plus ``tol``), so a difference within the sampling noise is a tie.
    """
    a, b = np.atleast_1d(np.asarray(a, dtype=float)), np.atleast_1d(np.asarray(b, dtype=float))
    d = a - b
    margin = tol
    if d.size > 1:
        margin += 2 * d.std(ddof=1) / np.sqrt(d.size)
    mean = d.mean()
    return "yes" if mean > margin else ("no" if mean < -margin else "tie")


def combine(verdicts) -> str:
    """One verdict for a claim made of several comparisons (see :func:`versus`)."""
    found = set(verdicts)
    if found <= {"yes"}:
        return "yes"
    if found <= {"no"}:
        return "no"
    if found == {"tie"}:
        return "tie"
    if "yes" in found and "no" in found:
        return "mixed"
    return "yes, or a tie" if "yes" in found else "no, or a tie"


def claims(rows: Sequence[tuple[str, str, object]]) -> pd.DataFrame:
    """A table ``claim (paper) | ours | agrees`` from (claim, our numbers, verdict) triples.

    The verdict is a bool (shown as yes / no) or a string from :func:`versus` / :func:`combine`
    ("tie" = the difference is within the noise); it is computed
    from the results, so the table stays true when sample counts change. Sets pandas'
    ``display.max_colwidth`` to None so that the sentences are shown whole.
    """
    def verdict(v):
        if isinstance(v, (bool, np.bool_)):
            return "yes" if v else "no"
        return str(v)

    pd.set_option("display.max_colwidth", None)
    return pd.DataFrame([(c, o, verdict(v)) for c, o, v in rows], columns=["paper's finding", "ours", "agrees"])
