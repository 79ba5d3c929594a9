"""Deterministic synthetic workloads for the benchmarks: R runs x T topics x D documents.

The model is small and vectorised, so that 2.5 million rows take a second or two and a
200-million-row data set can be written topic block by topic block:

* every topic ``t`` has ``candidates * D`` candidate documents with a latent quality
  ``q ~ N(0, 1)``; their ids are distinct within the topic, drawn from a collection of
  ``collection`` documents and written ``d<number>`` (``d12345``);
* run ``r`` has a skill ``s_r`` (between 0.3 and 1.5) and scores each candidate with
  ``s_r * q + N(0, 1)`` noise, shifted to be positive; it retrieves its top ``D`` candidates.
  Rows are in rank order (score descending) as in a TREC run file, with tied rows in an
  arbitrary (not doc id) order;
* every third run (``r % 3 == 0``) has its scores rounded to 2 decimals, which makes many
  ties, the case where trec_eval's tie rule (doc id descending) matters;
* the qrels are the depth-``pool_depth`` pool of the first ``pool_runs`` runs; in each topic
  the pooled documents with the top ``relevant`` share of ``q + N(0, 0.5)`` are relevant
  (a third of them grade 2, the rest grade 1), the others grade 0.

Everything derives from ``numpy.random.default_rng([seed, topic])``, so a topic's rows do
not depend on how many topics are generated or in which order: :func:`topic_block` can
build any slice of topics (a parquet partition) and get the same rows as :func:`make_workload`.
Topic ids are ``str(first_topic + t)`` (``"401"``, ``"402"``, ...), run names ``"sys00"``...
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Optional

import numpy as np
import pandas as pd
import pyarrow as pa

__all__ = ["Workload", "make_workload", "topic_block", "run_names", "to_string_frames"]


@dataclass(frozen=True)
class Workload:
    """The parameters of a synthetic workload (the defaults are the 2.5M-row benchmark)."""

    runs: int = 50
    topics: int = 50
    docs: int = 1000
    seed: int = 1
    pool_runs: int = 20
    pool_depth: int = 100
    relevant: float = 0.10
    candidates: int = 3
    collection: int = 5_000_000
    first_topic: int = 401

    @property
    def rows(self) -> int:
        """Number of run rows (every run retrieves ``docs`` documents for every topic)."""
        return self.runs * self.topics * self.docs


def run_names(n: int) -> list[str]:
    """The run names of a workload with ``n`` runs: ``sys00``, ``sys01``, ..."""
    width = max(2, len(str(n - 1)))
    return [f"sys{r:0{width}d}" for r in range(n)]


def _topic_arrays(w: Workload, t: int, runs: Optional[Iterable[int]] = None) -> dict:
    """Arrays of one topic: doc numbers, per-run ranked candidate indices, scores, qrels.

    Returns ``doc`` (candidate doc numbers), ``pick`` (runs x docs candidate indices in rank
    order), ``score`` (runs x docs), ``qrels_doc`` and ``qrels_rel`` (the judged candidates).
    The pool and the judgments use the first ``pool_runs`` runs whatever ``runs`` selects.
    """
    rng = np.random.default_rng([w.seed, t])
    n_cand = w.candidates * w.docs
    doc = rng.choice(w.collection, size=n_cand, replace=False)
    quality = rng.standard_normal(n_cand)
    skill = np.random.default_rng([w.seed, 10**9]).uniform(0.3, 1.5, size=max(w.runs, w.pool_runs))
    n_all = max(w.runs, w.pool_runs)
    noise = rng.standard_normal((n_all, n_cand))
    judge_noise = rng.normal(0.0, 0.5, n_cand)
    raw = skill[:, None] * quality[None, :] + noise
    # top `docs` candidates of every run, in rank order (stable sort: ties keep candidate order)
    top = np.argpartition(-raw, w.docs - 1, axis=1)[:, : w.docs]
    score = np.take_along_axis(raw, top, axis=1) + 10.0
    rounded = (np.arange(n_all) % 3 == 0)[:, None]
    score = np.where(rounded, np.round(score, 2), score)
    order = np.argsort(-score, axis=1, kind="stable")
    pick = np.take_along_axis(top, order, axis=1)
    score = np.take_along_axis(score, order, axis=1)
    # qrels: the depth-k pool of the first pool_runs runs, graded by noisy quality
    pooled = np.unique(pick[: w.pool_runs, : w.pool_depth])
    judged_quality = quality[pooled] + judge_noise[pooled]
    n_rel = int(round(w.relevant * len(pooled)))
    by_quality = np.argsort(-judged_quality, kind="stable")
    grade = np.zeros(len(pooled), dtype=np.int64)
    grade[by_quality[:n_rel]] = 1
    grade[by_quality[: n_rel // 3]] = 2
    selected = np.arange(w.runs) if runs is None else np.asarray(list(runs), dtype=np.int64)
    return {
        "doc": doc,
        "pick": pick[selected],
        "score": score[selected],
        "runs": selected,
        "qrels_doc": doc[pooled],
        "qrels_rel": grade,
    }


def topic_block(
    w: Workload,
    topics: Iterable[int],
    *,
    runs: Optional[Iterable[int]] = None,
    ids: str = "string",
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The run rows and qrels of the given topic indices (0-based), in topic order.

    ``ids``: ``"string"`` gives pandas' default string dtype for every id column (what a
    user gets from reading a file); ``"category"`` gives categorical id columns (compact, for
    parquet). Run rows are grouped by topic, then run, in rank order.
    """
    names = np.array(run_names(w.runs), dtype=object)
    run_parts, qrels_parts = [], []
    for t in topics:
        a = _topic_arrays(w, int(t), runs)
        n_runs, depth = a["pick"].shape
        run_parts.append(
            (
                np.full(n_runs * depth, t, dtype=np.int64),
                np.repeat(a["runs"], depth),
                a["doc"][a["pick"]].reshape(-1),
                a["score"].reshape(-1),
            )
        )
        qrels_parts.append((np.full(len(a["qrels_doc"]), t, dtype=np.int64), a["qrels_doc"], a["qrels_rel"]))
    topic = np.concatenate([p[0] for p in run_parts])
    run = np.concatenate([p[1] for p in run_parts])
    doc = np.concatenate([p[2] for p in run_parts])
    score = np.concatenate([p[3] for p in run_parts])
    q_topic = np.concatenate([p[0] for p in qrels_parts])
    q_doc = np.concatenate([p[1] for p in qrels_parts])
    q_rel = np.concatenate([p[2] for p in qrels_parts])
    run_frame = pd.DataFrame(
        {
            "run": _ids(names, run, ids),
            "query_id": _topic_ids(w, topic, ids),
            "doc_id": _doc_ids(doc, ids),
            "score": score,
        }
    )
    qrels_frame = pd.DataFrame(
        {"query_id": _topic_ids(w, q_topic, ids), "doc_id": _doc_ids(q_doc, ids), "relevance": q_rel}
    )
    return run_frame, qrels_frame


def _ids(labels: np.ndarray, codes: np.ndarray, ids: str) -> pd.Series:
    """Labels ``labels[codes]`` as a string or categorical column."""
    if ids == "category":
        used, inverse = np.unique(codes, return_inverse=True)
        return pd.Series(pd.Categorical.from_codes(inverse, categories=pd.Index(labels[used], dtype="str")))
    if ids != "string":
        raise ValueError(f"ids must be 'string' or 'category', not {ids!r}")
    return pd.Series(pa.array(labels, type=pa.string()).take(pa.array(codes)).to_pandas(), dtype="str")


def _topic_ids(w: Workload, topic: np.ndarray, ids: str) -> pd.Series:
    used = np.unique(topic)
    labels = np.array([str(w.first_topic + t) for t in used], dtype=object)
    return _ids(labels, np.searchsorted(used, topic), ids)


def _doc_ids(doc: np.ndarray, ids: str) -> pd.Series:
    used, inverse = np.unique(doc, return_inverse=True)
    labels = np.char.add("d", used.astype("U")).astype(object)
    return _ids(labels, inverse, ids)


def make_workload(
    runs: int = 50,
    topics: int = 50,
    docs: int = 1000,
    *,
    seed: int = 1,
    ids: str = "string",
    **params,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A run frame (``run, query_id, doc_id, score``) and its qrels (``query_id, doc_id, relevance``).

    ``runs x topics x docs`` rows. Taking fewer runs keeps the same qrels and the same rows
    for the runs kept (``make_workload(10)`` is the first 10 runs of ``make_workload(50)``)
    as long as ``pool_runs`` (default 20) stays the same. Extra keyword arguments set the
    other :class:`Workload` fields.
    """
    w = Workload(runs=runs, topics=topics, docs=docs, seed=seed, **params)
    run, qrels = topic_block(w, range(topics), ids=ids)
    # group rows by run, then topic, like a concatenation of run files
    n_blocks = len(run) // docs  # blocks of topic_block are (topic, run), topic major
    topic, r = np.divmod(np.arange(n_blocks), runs)
    block_order = np.argsort(r * topics + topic, kind="stable")
    rows = (block_order[:, None] * docs + np.arange(docs)[None, :]).reshape(-1)
    return run.take(rows).reset_index(drop=True), qrels


def to_string_frames(run: pd.DataFrame, qrels: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The same frames with every categorical id column turned into pandas' default strings."""
    def convert(frame: pd.DataFrame) -> pd.DataFrame:
        out = frame.copy()
        for column in out.columns:
            if isinstance(out[column].dtype, pd.CategoricalDtype):
                out[column] = out[column].astype("str")
        return out

    return convert(run), convert(qrels)


def describe(run: pd.DataFrame, qrels: pd.DataFrame) -> dict:
    """Counts that characterise a workload (rows, judgments, relevant share, tied rows)."""
    rel = qrels["relevance"].to_numpy()
    keys = ["run", "query_id", "score"]
    tied = run.duplicated(keys, keep=False).to_numpy()
    return {
        "rows": len(run),
        "runs": run["run"].nunique(),
        "topics": run["query_id"].nunique(),
        "judgments": len(qrels),
        "relevant_share": float((rel > 0).mean()),
        "tied_rows_share": float(tied.mean()),
    }


if __name__ == "__main__":  # pragma: no cover - a quick look at the default workload
    import time

    start = time.perf_counter()
    run_frame, qrels_frame = make_workload()
    print(f"generated in {time.perf_counter() - start:.2f} s")
    print(run_frame.dtypes.to_dict())
    print(run_frame.head())
    print(describe(run_frame, qrels_frame))
