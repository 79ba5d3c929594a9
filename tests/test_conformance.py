"""Conformance with trec_eval: every measure trec_eval also computes must agree per topic.

Two independent references:

* ``pytrec_eval`` (the ``pytrec-eval-terrier`` wheel, built from trec_eval's git tag ``v9.0.8``,
  which holds 9.0.7's code), which orders by
  float32 scores, so pdeval runs with ``score_precision="float32"`` against it; agreement to
  1e-9 per topic on trec_eval's own test files, on the bundled data, and on the real CLEF runs
  beside the repository (skipped where that data is absent);
* trec_eval's own expected outputs (``tests/data/trec_eval/out.test.*``, printed to 4
  decimals by NIST's trec_eval), reproduced with the same options (``-c``, ``-M100``,
  ``-l2`` on qrels with ``-1`` entries).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval

pytrec_eval = pytest.importorskip("pytrec_eval")

HERE = Path(__file__).resolve().parent
TREC_EVAL = HERE / "data" / "trec_eval"
SHARED = HERE.parents[1] / "shared" / "data"

#: pdeval measure -> trec_eval measure
MEASURES = {
    "P@5": "P_5",
    "P@10": "P_10",
    "P@100": "P_100",
    "P@1000": "P_1000",
    "Rprec": "Rprec",
    "AP": "map",
    "AP@10": "map_cut_10",
    "AP@100": "map_cut_100",
    "R@10": "recall_10",
    "R@1000": "recall_1000",
    "RR": "recip_rank",
    "nDCG": "ndcg",
    "nDCG@10": "ndcg_cut_10",
    "nDCG@100": "ndcg_cut_100",
    "Bpref": "bpref",
    "infAP": "infAP",
    "NumRet": "num_ret",
    "NumRel": "num_rel",
    "NumRelRet": "num_rel_ret",
}
#: measures that trec_eval evaluates on the condensed list with -J
JUDGED_ONLY = {"AP'": "map", "P'@10": "P_10", "nDCG'": "ndcg", "nDCG'@10": "ndcg_cut_10"}


def pytrec_eval_table(
    run: pd.DataFrame, qrels: pd.DataFrame, names: dict, *, judged_only: bool = False, rel: int = 1
) -> pd.DataFrame:
    """pytrec_eval's per-topic values, as a frame (run, query_id, measure, expected)."""
    judgments: dict = {}
    for query, doc, level in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        judgments.setdefault(query, {})[doc] = int(level)
    evaluator = pytrec_eval.RelevanceEvaluator(
        judgments, set(names.values()), relevance_level=rel, judged_docs_only_flag=judged_only
    )
    rows = []
    for name, frame in run.groupby("run", sort=False):
        ranking: dict = {}
        for query, doc, score in frame[["query_id", "doc_id", "score"]].itertuples(index=False):
            ranking.setdefault(query, {})[doc] = float(score)
        for query, values in evaluator.evaluate(ranking).items():
            for ours, theirs in names.items():
                rows.append((name, query, ours, values[theirs]))
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "expected"])


def canonical_names(result: pd.DataFrame, names: dict, rel) -> pd.DataFrame:
    """Results name a measure with its non-default parameters (AP(rel=2)); map back to the keys."""
    back = {str(pdeval.parse_measure(name, rel=rel)): name for name in names}
    return result.assign(measure=result["measure"].map(back))


def assert_agrees(run, qrels, names=MEASURES, *, judged_only=False, rel=1, tol=1e-9):
    expected = pytrec_eval_table(run, qrels, names, judged_only=judged_only, rel=rel)
    ours = canonical_names(pdeval.evaluate(run, qrels, list(names), score_precision="float32", rel=rel), names, rel)
    merged = expected.merge(ours, on=["run", "query_id", "measure"], how="left", validate="one_to_one")
    assert merged["value"].notna().all(), "pdeval lacks values that pytrec_eval has"
    assert len(ours) == len(expected), "pdeval evaluated topics pytrec_eval did not"
    difference = (merged["value"] - merged["expected"]).abs()
    worst = merged.loc[difference.idxmax()] if len(merged) else None
    assert difference.max() <= tol, f"largest difference {difference.max():.3g} at\n{worst}"
    return len(merged)


# ---- trec_eval's own test files -------------------------------------------------------------
@pytest.fixture(scope="module")
def trec_test_run():
    return pdeval.read_run(TREC_EVAL / "results.test")


@pytest.fixture(scope="module")
def trec_test_qrels():
    return pdeval.read_qrels(TREC_EVAL / "qrels.test")


def test_pytrec_eval_on_trec_eval_test_files(trec_test_run, trec_test_qrels):
    assert assert_agrees(trec_test_run, trec_test_qrels) == 3 * len(MEASURES)


def test_pytrec_eval_judged_only_on_trec_eval_test_files(trec_test_run):
    # qrels.rel_level has -1 entries and graded levels: the condensed list drops them
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.rel_level")
    assert_agrees(trec_test_run, qrels, JUDGED_ONLY, judged_only=True)


def test_pytrec_eval_relevance_level_two_with_pooled_entries(trec_test_run):
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.rel_level")
    assert_agrees(trec_test_run, qrels, rel=2)


def read_trec_eval_output(path: Path) -> pd.DataFrame:
    """trec_eval's ``-q`` output: measure, topic (or all), value."""
    rows = [line.split() for line in path.read_text().splitlines() if line.strip()]
    return pd.DataFrame(rows, columns=["measure", "query_id", "expected"])


def expected_values(path: Path, names: dict) -> pd.DataFrame:
    table = read_trec_eval_output(path)
    table = table[table["measure"].isin(set(names.values())) & (table["query_id"] != "all")]
    back = {theirs: ours for ours, theirs in names.items()}
    return table.assign(measure=table["measure"].map(back), expected=table["expected"].astype(float))


@pytest.mark.parametrize(
    "output, run_file, qrels_file, options",
    [
        ("out.test.aq", "results.test", "qrels.test", {}),
        ("out.test.aqc", "results.trunc", "qrels.test", {"complete": True}),
        ("out.test.aqcM", "results.trunc", "qrels.test", {"complete": True, "depth": 100}),
        ("out.test.aql", "results.test", "qrels.rel_level", {"rel": 2}),
    ],
)
def test_trec_eval_expected_outputs(output, run_file, qrels_file, options):
    expected = expected_values(TREC_EVAL / output, MEASURES)
    run = pdeval.read_run(TREC_EVAL / run_file)
    qrels = pdeval.read_qrels(TREC_EVAL / qrels_file)
    ours = canonical_names(pdeval.evaluate(run, qrels, list(MEASURES), **options), MEASURES, options.get("rel"))
    merged = expected.merge(ours, on=["query_id", "measure"], how="left")
    assert merged["value"].notna().all()
    assert len(merged) == len(ours)
    # trec_eval prints 4 decimals (counts as integers)
    assert np.allclose(merged["value"], merged["expected"], rtol=0, atol=5.01e-5)


def test_complete_evaluates_topics_missing_from_the_run():
    run = pdeval.read_run(TREC_EVAL / "results.trunc")
    qrels = pdeval.read_qrels(TREC_EVAL / "qrels.test")
    plain = pdeval.evaluate(run, qrels, "AP")
    complete = pdeval.evaluate(run, qrels, "AP", complete=True)
    missing = set(complete["query_id"]) - set(plain["query_id"])
    assert missing and (complete.loc[complete["query_id"].isin(missing), "value"] == 0).all()


# ---- the bundled data (always present) --------------------------------------------------------
def test_pytrec_eval_on_bundled_clef2018():
    data = pdeval.datasets.load("clef2018")
    assert assert_agrees(data.runs, data.qrels) > 0
    assert_agrees(data.runs, data.partial_qrels, JUDGED_ONLY, judged_only=True)


# ---- the real CLEF data beside the repository ------------------------------------------------
def clean_runs(folder: str) -> pd.DataFrame:
    """Every run of a shared data folder that has no duplicate documents (trec_eval rejects those)."""
    root = SHARED / folder
    if not root.exists():
        pytest.skip(f"the shared evaluation data ({root}) is not available on this machine")
    frames = []
    for path in sorted((root / "runs").iterdir()):
        try:
            frames.append(pdeval.read_run(path))
        except pdeval.errors.DuplicateError:
            continue
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("folder", ["clef2018-chs-task1", "clef2016-chs-task2"])
def test_pytrec_eval_on_real_clef_runs(folder):
    run = clean_runs(folder)
    qrels_file = next(p for p in (SHARED / folder).glob("qrels*") if p.is_file())
    qrels = pdeval.read_qrels(qrels_file)
    assert run["run"].nunique() >= 10
    assert_agrees(run, qrels)
    assert_agrees(run, qrels, JUDGED_ONLY, judged_only=True)
