"""The tools under comparison, each called the way a pandas user has to call it.

Every adapter takes the same canonical frames (``run, query_id, doc_id, score`` and
``query_id, doc_id, relevance`` plus optional ``level, sample`` variant columns) and does,
inside the timed call, every conversion its tool needs from a DataFrame:

* **pdeval**: nothing; ``pdeval.evaluate`` takes the frames and returns a tidy frame.
* **pytrec_eval**: run and qrels frames -> nested dicts ``{query: {doc: value}}`` (one run
  dict per system, one qrels dict per variant), then one ``RelevanceEvaluator`` per qrels
  variant, called on each system.
* **ir_measures**: ``ir_measures.evaluator(measures, qrels)`` once per qrels variant, and its
  ``iter_calc`` on each system's sub-frame (ir_measures scores one run at a time).
* **ranx**: ids converted from pandas 3's string dtype to ``object`` (ranx's ``from_df``
  asserts ``object``), unjudged-pooled qrels rows (relevance < 0, which ranx has no notion of)
  dropped, one ``Qrels`` per variant, one ``Run`` per system, ``ranx.evaluate`` per pair.
  ranx has no infAP; it is evaluated on the other measures. ranx breaks score ties in its own
  order, not by doc id as trec_eval does, so its values differ on tied lists.

The output conversion to a tidy frame (for the agreement checks) is *not* timed for the
peers: :func:`tidy` does it afterwards. Timing therefore favours the peers slightly.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np
import pandas as pd

__all__ = ["TOOLS", "MEASURES", "tidy", "variant_groups"]

#: pdeval's canonical names of the benchmark measures and each peer's own name for them
MEASURES: dict[str, dict[str, str]] = {
    "AP": {"pytrec_eval": "map", "ranx": "map", "ir_measures": "AP"},
    "P@10": {"pytrec_eval": "P_10", "ranx": "precision@10", "ir_measures": "P@10"},
    "nDCG": {"pytrec_eval": "ndcg", "ranx": "ndcg", "ir_measures": "nDCG"},
    "Bpref": {"pytrec_eval": "bpref", "ranx": "bpref", "ir_measures": "Bpref"},
    "infAP": {"pytrec_eval": "infAP", "ranx": None, "ir_measures": "infAP"},
}
PYTREC_REQUEST = {"map": "map", "P_10": "P.10", "ndcg": "ndcg", "bpref": "bpref", "infAP": "infAP"}


def variant_groups(qrels: pd.DataFrame) -> list[tuple[tuple, pd.DataFrame]]:
    """``[(variant key, plain qrels frame)]``: one entry per ``level, sample`` variant (or one)."""
    keys = [c for c in ("level", "sample") if c in qrels.columns]
    if not keys:
        return [((), qrels)]
    return [
        (key if isinstance(key, tuple) else (key,), frame.drop(columns=keys))
        for key, frame in qrels.groupby(keys, sort=True)
    ]


# ---- pdeval --------------------------------------------------------------------------------
def run_pdeval(run: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str], **options: Any) -> pd.DataFrame:
    import pdeval

    return pdeval.evaluate(run, qrels, list(measures), **options)


# ---- pytrec_eval ---------------------------------------------------------------------------
def run_to_dicts(run: pd.DataFrame) -> dict[str, dict[str, dict[str, float]]]:
    """``{run: {query_id: {doc_id: score}}}`` from a run frame (what pytrec_eval takes)."""
    docs = run["doc_id"].tolist()
    scores = run["score"].tolist()
    out: dict[str, dict[str, dict[str, float]]] = {}
    for (name, query), rows in run.groupby(["run", "query_id"], sort=False).indices.items():
        out.setdefault(name, {})[query] = {docs[i]: scores[i] for i in rows}
    return out


def qrels_to_dict(qrels: pd.DataFrame) -> dict[str, dict[str, int]]:
    """``{query_id: {doc_id: relevance}}`` from a plain qrels frame."""
    docs = qrels["doc_id"].tolist()
    levels = qrels["relevance"].tolist()
    return {
        query: {docs[i]: levels[i] for i in rows}
        for query, rows in qrels.groupby("query_id", sort=False).indices.items()
    }


def run_pytrec_eval(run: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str]) -> dict:
    """``{(variant key, run): {query: {measure: value}}}``."""
    import pytrec_eval

    names = {PYTREC_REQUEST[MEASURES[m]["pytrec_eval"]] for m in measures}
    runs = run_to_dicts(run)
    out = {}
    for key, frame in variant_groups(qrels):
        evaluator = pytrec_eval.RelevanceEvaluator(qrels_to_dict(frame), names)
        for name, ranking in runs.items():
            out[key, name] = evaluator.evaluate(ranking)
    return out


# ---- ir_measures ---------------------------------------------------------------------------
def run_ir_measures(run: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str]) -> dict:
    """``{(variant key, run): [Metric, ...]}``."""
    import ir_measures

    parsed = [ir_measures.parse_measure(MEASURES[m]["ir_measures"]) for m in measures]
    systems = list(run.groupby("run", sort=False))
    out = {}
    for key, frame in variant_groups(qrels):
        evaluator = ir_measures.evaluator(parsed, frame)
        for name, ranking in systems:
            out[key, name] = list(evaluator.iter_calc(ranking))
    return out


# ---- ranx ----------------------------------------------------------------------------------
def _object_ids(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.astype({"query_id": object, "doc_id": object})


def run_ranx(run: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str]) -> dict:
    """``{(variant key, run): {metric: {query: value}}}`` (measures ranx lacks are skipped)."""
    import ranx

    metrics = [MEASURES[m]["ranx"] for m in measures if MEASURES[m]["ranx"]]
    runs = {
        name: ranx.Run.from_df(_object_ids(frame), q_id_col="query_id", doc_id_col="doc_id", score_col="score")
        for name, frame in run.groupby("run", sort=False)
    }
    out = {}
    for key, frame in variant_groups(qrels):
        judged = _object_ids(frame.loc[frame["relevance"].to_numpy() >= 0])
        q = ranx.Qrels.from_df(judged, q_id_col="query_id", doc_id_col="doc_id", score_col="relevance")
        topics = set(q.keys())
        for name, ranking in runs.items():
            if set(ranking.keys()) != topics:  # ranx requires the same query ids
                ranking = ranking.make_comparable(q)
            ranx.evaluate(q, ranking, metrics, return_mean=False)
            out[key, name] = {m: dict(ranking.scores[m]) for m in metrics}
    return out


def ranx_warm_up(run: pd.DataFrame, qrels: pd.DataFrame, measures: Sequence[str]) -> None:
    """Compile ranx's numba kernels before timing (a cold first call costs 10-40 s).

    Evaluates the first 2,000 rows of ``run`` against the first qrels variant, twice, so that
    every kernel the timed calls use is compiled for the same argument types.
    """
    import warnings

    first = variant_groups(qrels)[0][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for _ in range(2):
            run_ranx(run.head(2000), first, measures)


# ---- tidy output (untimed) -----------------------------------------------------------------
def tidy(tool: str, output: Any, measures: Sequence[str], variant_columns: Sequence[str]) -> pd.DataFrame:
    """A tool's output as ``[level, sample,] run, query_id, measure, value``."""
    if tool == "pdeval":
        return output[[*variant_columns, "run", "query_id", "measure", "value"]]
    back = {MEASURES[m][tool]: m for m in measures if MEASURES[m].get(tool)}
    records = []
    for (key, name), values in output.items():
        if tool == "pytrec_eval":
            for query, by_measure in values.items():
                for measure, value in by_measure.items():
                    if measure in back:
                        records.append((*key, name, query, back[measure], value))
        elif tool == "ir_measures":
            for metric in values:
                records.append((*key, name, metric.query_id, back[str(metric.measure)], metric.value))
        elif tool == "ranx":
            for measure, by_query in values.items():
                for query, value in by_query.items():
                    records.append((*key, name, query, back[measure], float(value)))
    columns = [*variant_columns, "run", "query_id", "measure", "value"]
    frame = pd.DataFrame.from_records(records, columns=columns)
    return frame.astype({"run": "str", "query_id": "str", "measure": "str", "value": np.float64})


TOOLS: dict[str, Callable] = {
    "pdeval": run_pdeval,
    "pytrec_eval": run_pytrec_eval,
    "ir_measures": run_ir_measures,
    "ranx": run_ranx,
}
