"""pdeval against pytrec_eval (trec_eval inside) on random small cases, and on a frame shaped
exactly like PyTerrier's ``Retriever.transform`` output.

The random cases hold what tends to break evaluators: tied scores, scores tied only in float32
(pytrec_eval keeps 32-bit scores, so pdeval runs with ``score_precision="float32"``), ``-1``
(pooled, unjudged) entries, graded qrels with ``rel=2``, judged-only evaluation (``-J``),
topics on one side only, and several runs and qrels variants in one pdeval call, each variant
checked against its own pytrec_eval evaluator.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import OverlapError

pytrec_eval = pytest.importorskip("pytrec_eval", reason="pytrec-eval-terrier is not installed")

TREC_EVAL = Path(__file__).resolve().parent / "data" / "trec_eval"

#: pdeval measure -> trec_eval measure (all of them also under -J)
MEASURES = {
    "AP": "map", "AP@5": "map_cut_5", "P@5": "P_5", "Rprec": "Rprec", "R@5": "recall_5",
    "RR": "recip_rank", "nDCG": "ndcg", "nDCG@5": "ndcg_cut_5", "Bpref": "bpref", "infAP": "infAP",
    "NumRet": "num_ret", "NumRel": "num_rel", "NumRelRet": "num_rel_ret",
}
#: measures whose -J values pdeval's primes reproduce (the condensed list; MEASURES.md 0.4)
JUDGED_ONLY = {"AP": "map", "P@5": "P_5", "nDCG": "ndcg", "nDCG@5": "ndcg_cut_5", "RR": "recip_rank",
               "Rprec": "Rprec", "R@5": "recall_5", "AP@5": "map_cut_5"}


def pytrec_eval_values(run: pd.DataFrame, qrels: pd.DataFrame, names: dict, *, rel: int, judged_only: bool) -> dict:
    """{(run, query_id, pdeval measure): value} from pytrec_eval."""
    judgments: dict = {}
    for query, doc, level in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        judgments.setdefault(str(query), {})[str(doc)] = int(level)
    evaluator = pytrec_eval.RelevanceEvaluator(
        judgments, set(names.values()), relevance_level=rel, judged_docs_only_flag=judged_only
    )
    values = {}
    for name, frame in run.groupby("run", sort=False):
        ranking: dict = {}
        for query, doc, score in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
            ranking.setdefault(str(query), {})[str(doc)] = float(score)
        for query, measured in evaluator.evaluate(ranking).items():
            for ours, theirs in names.items():
                values[(name, query, ours)] = measured[theirs]
    return values


# ---- random small cases -------------------------------------------------------------------------
TOPICS = ["1", "2", "3", "10"]
DOCS = ["d1", "d2", "d3", "d4", "d5", "d6", "D1", "d10"]
#: 1.0 and 1.0 + 1e-9 differ in float64 and tie in float32
SCORES = [0.5, 1.0, 1.0 + 1e-9, 2.0, 3.0, -1.0]


@st.composite
def judgments(draw):
    topics = draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True))
    rows = []
    for topic in topics:
        docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=6, unique=True))
        levels = [draw(st.sampled_from([-1, 0, 0, 1, 2])) for _ in docs]
        if max(levels) < 0:  # pytrec_eval crashes (segfault) on a topic with only -1 entries
            levels[0] = 0
        rows += list(zip([topic] * len(docs), docs, levels))
    return rows


@st.composite
def runs(draw):
    rows = []
    for name in ["A", "B", "C"][: draw(st.integers(1, 3))]:
        for topic in draw(st.lists(st.sampled_from(TOPICS), min_size=1, max_size=3, unique=True)):
            docs = draw(st.lists(st.sampled_from(DOCS), min_size=1, max_size=7, unique=True))
            rows += [(name, topic, doc, draw(st.sampled_from(SCORES))) for doc in docs]
    return pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])


@pytest.mark.filterwarnings("ignore::pdeval.errors.OverlapWarning")
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(run=runs(), variants=st.lists(judgments(), min_size=1, max_size=3),
       rel=st.sampled_from([1, 2]), judged_only=st.booleans())
def test_random_cases_agree_with_pytrec_eval(run, variants, rel, judged_only):
    names = JUDGED_ONLY if judged_only else MEASURES
    qrels = pd.concat(
        [pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"]).assign(level=level)
         for level, rows in enumerate(variants)],
        ignore_index=True,
    )
    expected = {}
    for level in range(len(variants)):
        for key, value in pytrec_eval_values(run, qrels[qrels["level"] == level], names, rel=rel,
                                             judged_only=judged_only).items():
            expected[(level, *key)] = value
    if not expected:  # no topic in common with any variant: pdeval refuses, naming both sides
        with pytest.raises(OverlapError, match="share no topic"):
            pdeval.evaluate(run, qrels, list(names), rel=rel, judged_only=judged_only, score_precision="float32")
        return
    result = pdeval.evaluate(run, qrels, list(names), rel=rel, judged_only=judged_only, score_precision="float32")
    back = {str(pdeval.parse_measure(name, rel=rel, judged_only=judged_only)): name for name in names}
    ours = {
        (int(level), run_name, query, back[measure]): value
        for level, run_name, query, measure, value in result[["level", "run", "query_id", "measure", "value"]].itertuples(index=False)
    }
    assert ours.keys() == expected.keys()
    for key, value in expected.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key


# ---- PyTerrier's Retriever.transform frame ------------------------------------------------------
def test_pyterrier_transform_frame_gives_trec_evals_values():
    """PyTerrier's ``Retriever.transform`` returns ``qid, docid, docno, rank, score, query``
    (``docid`` is Terrier's internal integer, ``rank`` starts at 0) and its qrels are
    ``qid, docno, label``. The frame below is trec_eval's own test run in that shape; pdeval
    must evaluate it on ``docno`` and give what pytrec_eval gives on the same files."""
    run = pdeval.read_run(TREC_EVAL / "results.test")
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.test")
    docids = {doc: i for i, doc in enumerate(sorted(set(run["doc_id"]) | set(qrels["doc_id"])))}
    ranked = run.sort_values(["query_id", "score"], ascending=[True, False], kind="stable")
    terrier = pd.DataFrame({
        "qid": ranked["query_id"].to_numpy(),
        "docid": ranked["doc_id"].map(docids).to_numpy(dtype=np.int64),
        "docno": ranked["doc_id"].to_numpy(),
        "rank": ranked.groupby("query_id").cumcount().to_numpy(),
        "score": ranked["score"].to_numpy(),
        "query": "information retrieval evaluation",
    })
    terrier_qrels = pd.DataFrame({"qid": qrels["query_id"], "docno": qrels["doc_id"], "label": qrels["relevance"]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean frame: no warning either
        result = pdeval.evaluate(terrier, terrier_qrels, list(MEASURES), score_precision="float32")
    expected = pytrec_eval_values(run.assign(run="run"), qrels, MEASURES, rel=1, judged_only=False)
    assert len(expected) == 3 * len(MEASURES)  # the three topics of the test files
    ours = {("run", q, m): v for q, m, v in result[["query_id", "measure", "value"]].itertuples(index=False)}
    assert ours.keys() == expected.keys()
    for key, value in expected.items():
        assert ours[key] == pytest.approx(value, abs=1e-9), key
    # the integer docid taken as the document id would have matched nothing
    assert result.loc[result["measure"] == "AP", "value"].sum() > 0
