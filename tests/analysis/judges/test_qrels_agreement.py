"""Tests for pdeval.analysis.judges.qrels_agreement: the TREC Auto-Judge qrels agreement per topic.

Oracles: ``autojudge-evaluate`` 1.1.0's ``nugget_doc_eval`` (``set_overlap``, ``grade_agreement``;
loaded by ``tests/autojudge_agreement_oracle.py`` without the package's ``__init__``) on the
LLMJudge extract and, when ``../shared/data`` is there, on LLMJudge's label sets (every fourth of the 33;
all with ``PDEVAL_ALL_RUNS=1``, about 2 minutes), TREC DL
2021 NIST vs GPT-4 and TREC RAG 2025 human vs UMBRELA; ``sklearn.metrics`` (``cohen_kappa_score``,
``adjusted_rand_score``) and ``krippendorff`` on the pooled rows and on random label sets.
"""

from __future__ import annotations

import glob
import os
import warnings

import numpy as np
import pandas as pd
import pytest

import pdeval
from autojudge_agreement_oracle import nugget_doc_eval, qrel_evaluate, qrel_evaluate_command
from locations import REPO
from pdeval.errors import PdevalWarning, SchemaError

EXTRACT = REPO / "data" / "llmjudge-dl23" / "labels.tsv.gz"
SHARED = REPO.parent / "shared" / "data"
TOL = 1e-9
#: every LLMJudge label set against the oracle (about 2 minutes); by default every fourth of the 33
ALL_SETS = os.environ.get("PDEVAL_ALL_RUNS", "") not in ("", "0")
KEYS = ["query_id", "statistic", "reference_threshold", "label_threshold"]


def needs_autojudge():
    if nugget_doc_eval() is None:
        pytest.skip("autojudge-evaluate 1.1.0 (test extra) is the oracle and is not installed")


def worst_difference(ours: pd.DataFrame, theirs: pd.DataFrame, skipped: bool = False) -> float:
    """Largest |difference| over every row; NaN must meet NaN. Every row of the oracle is ours; a
    row of ours the oracle lacks (P/R/F1 of a topic without relevant documents) is NaN."""
    both = ours.merge(theirs, on=KEYS, how="outer", suffixes=("", "_oracle"), indicator=True)
    assert not (both["_merge"] == "right_only").any(), both[both["_merge"] == "right_only"].head()
    if skipped:  # set_overlap skips a topic one side finds nothing relevant on; empty_sets="zero" keeps it
        overlap = both["statistic"].isin(["precision", "recall", "f1"])  # so their means differ too
        both = both[~(overlap & (both["query_id"] == "mean"))]
        both = both[~(overlap & (both["_merge"] == "left_only")) | both["value"].isna()]
    a, b = both["value"].to_numpy(float), both["value_oracle"].to_numpy(float)
    assert (np.isnan(a) == np.isnan(b)).all(), both[np.isnan(a) != np.isnan(b)].head()
    return float(np.nanmax(np.abs(a - b), initial=0.0))


def check(reference: pd.DataFrame, sets: dict, *, max_grade: int, label_max_grade: int | None, threshold: int = 1,
          label_threshold: int | None = None, missing: str = "fill", fill_value: int = 0, unjudged: str = "drop",
          empty_sets: str = "zero") -> float:
    result = pdeval.qrels_agreement(reference, sets, threshold=threshold, label_threshold=label_threshold,
                                    max_grade=max_grade, label_max_grade=label_max_grade, missing=missing,
                                    fill_value=fill_value, unjudged=unjudged, empty_sets=empty_sets)
    label_threshold = threshold if label_threshold is None else label_threshold
    worst = 0.0
    for name, labels in sets.items():
        top = int(labels.relevance.max()) if label_max_grade is None else label_max_grade  # ours: each set's own
        theirs = qrel_evaluate(reference, labels, truth_max_grade=max_grade, predict_max_grade=top,
                               truth_relevance_threshold=threshold, predict_relevance_threshold=label_threshold,
                               on_missing={"fill": "default"}.get(missing, missing), default_grade=fill_value)
        ours = result[(result.label_set == name) & (result.query_id != "all")]
        skipped = missing != "fill" and empty_sets == "zero"
        worst = max(worst, worst_difference(ours[KEYS + ["value"]], theirs, skipped=skipped))
    return worst


def read_extract():
    wide = pd.read_csv(EXTRACT, sep="\t", dtype={"query_id": str, "doc_id": str})
    human = wide[["query_id", "doc_id", "human"]].rename(columns={"human": "relevance"})
    return human, {name: wide[["query_id", "doc_id", name]].rename(columns={name: "relevance"})
                   for name in wide.columns[3:]}


# ---------------------------------------------------------------------------------------------
# worked example and rules


def test_worked_example_by_hand():
    # topic 1: human 0 1 2 2, judge 0 2 2 1 at threshold 2: TP 1, FP 1, FN 1
    human = pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 4, "doc_id": list("abcdefgh"),
                          "relevance": [0, 1, 2, 2, 0, 0, 1, 2]})
    judge = human.assign(relevance=[0, 2, 2, 1, 0, 1, 1, 2])
    table = pdeval.qrels_agreement(human, {"judge": judge}, threshold=2)
    value = table.set_index(["query_id", "statistic", "reference_threshold", "label_threshold"])["value"]
    assert value["1", "precision", 2, 2] == 0.5 and value["1", "jaccard", 2, 2] == pytest.approx(1 / 3)
    assert value["mean", "f1", 2, 2] == 0.75 and value["all", "f1", 2, 2] == pytest.approx(2 / 3)
    assert set(table.query("statistic == 'kappa'").groupby(["reference_threshold", "label_threshold"]).groups) == {
        (1, 1), (1, 2), (2, 1), (2, 2)}
    assert (table.query("statistic == 'alpha_ordinal'").reference_threshold == -1).all()


def test_topics_and_documents_on_one_side():
    human = pd.DataFrame({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "relevance": [1, 0, 1]})
    judge = pd.DataFrame({"query_id": ["1", "3"], "doc_id": ["a", "d"], "relevance": [1, 1]})
    filled = pdeval.qrels_agreement(human, {"j": judge})
    assert set(filled.query_id) == {"1", "2", "3", "mean", "all"}
    assert filled.query("query_id == '1' and statistic == 'jaccard'").value.item() == 1.0
    assert filled.query("query_id == '2' and statistic == 'recall'").value.item() == 0.0
    common = pdeval.qrels_agreement(human, {"j": judge}, fill_value=None, missing="skip")
    assert set(common.query_id) == {"1", "mean", "all"} and (common.n_pairs == 1).all()
    with pytest.warns(PdevalWarning, match="one side only"):
        pdeval.qrels_agreement(human, {"j": judge}, missing="warn")
    with pytest.raises(SchemaError, match="one side only"):
        pdeval.qrels_agreement(human, {"j": judge}, missing="error")


# ---------------------------------------------------------------------------------------------
# against autojudge-evaluate


def random_sets(rng, n_topics: int, t_max: int, p_max: int, n_sets: int = 3):
    rows = []
    for q in range(n_topics):
        n = int(rng.integers(1, 12))
        rows.append(pd.DataFrame({"query_id": f"q{q}", "doc_id": [f"d{q}_{i}" for i in range(n)],
                                  "relevance": rng.integers(0, t_max + 1, n)}))
    reference = pd.concat(rows, ignore_index=True)
    sets = {}
    for s in range(n_sets):
        keep = rng.random(len(reference)) < 0.85
        labels = reference[keep].assign(relevance=rng.integers(0, p_max + 1, int(keep.sum())))
        extra = pd.DataFrame({"query_id": f"q{n_topics + s}", "doc_id": ["x", "y"], "relevance": [p_max, 0]})
        sets[f"s{s}"] = pd.concat([labels, extra], ignore_index=True)
    return reference, sets


@pytest.mark.parametrize("seed", range(6))
def test_random_label_sets_match_autojudge(seed):
    needs_autojudge()
    rng = np.random.default_rng(seed)
    t_max, p_max = [(1, 1), (3, 3), (2, 3), (3, 2), (4, 4), (3, 3)][seed]
    reference, sets = random_sets(rng, 8, t_max, p_max)
    threshold = int(rng.integers(1, t_max + 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # sklearn and numpy on constant topics
        assert check(reference, sets, max_grade=t_max, label_max_grade=p_max, threshold=threshold) <= TOL
        assert check(reference, sets, max_grade=t_max, label_max_grade=p_max, missing="skip") <= TOL
        assert check(reference, sets, max_grade=t_max, label_max_grade=p_max, missing="skip", empty_sets="skip") <= TOL


def test_unjudged_grades_as_zero_match_autojudge():
    """autojudge-evaluate clips a negative grade to 0; unjudged="zero" does the same, the default
    leaves such rows out (they are no label)."""
    needs_autojudge()
    rng = np.random.default_rng(11)
    reference, sets = random_sets(rng, 6, 3, 3, n_sets=2)
    reference.loc[rng.random(len(reference)) < 0.2, "relevance"] = -1
    sets["s0"].loc[rng.random(len(sets["s0"])) < 0.2, "relevance"] = -1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check(reference, sets, max_grade=3, label_max_grade=3, threshold=2, unjudged="zero") <= TOL
        try:  # the default differs: larger differences, or NaN against a value
            differs = check(reference, sets, max_grade=3, label_max_grade=3, threshold=2) > TOL
        except AssertionError:
            differs = True
        assert differs


def test_llmjudge_extract_matches_autojudge():
    needs_autojudge()
    human, sets = read_extract()
    some = {name: sets[name] for name in list(sets)[:4]}  # scales 0..2, 0..3, 0..5, 0..10
    assert check(human, some, max_grade=3, label_max_grade=None, threshold=2) <= TOL
    assert check(human, some, max_grade=3, label_max_grade=3, threshold=2, label_threshold=1) <= TOL


def shared_collections():
    llm = SHARED / "llmjudge-dl23"
    files = sorted(glob.glob(str(llm / "llm_labels" / "*.txt")))
    yield "llmjudge", lambda: (pdeval.read_qrels(str(llm / "llmjudge_test_qrel_idx.txt")),
                               {os.path.basename(p)[:-4]: pdeval.read_qrels(p)
                                for p in (files if ALL_SETS else files[::4])}), 2
    dl = SHARED / "trec-dl21"
    yield "dl21", lambda: (pdeval.read_qrels(str(dl / "qrels-pass.dl21.human.txt")),
                           {"gpt4": pdeval.read_qrels(str(dl / "gpt4_judgments" / "gpt4_judgments_dl2021_processed.txt"))}), 2
    rag = SHARED / "rag-umbrela"
    yield "rag25", lambda: (pdeval.read_qrels(str(rag / "qrels.rag25.test.txt")),
                            {"umbrela": pdeval.read_qrels(str(rag / "qrels.rag25.test-umbrela2.txt"))}), 2


@pytest.mark.skipif(not SHARED.is_dir(), reason="the shared collections (../shared/data) are absent")
@pytest.mark.parametrize("name, load, threshold", list(shared_collections()), ids=lambda v: v if isinstance(v, str) else "")
def test_shared_collections_match_autojudge(name, load, threshold):
    needs_autojudge()
    human, sets = load()
    top = int(human.relevance.max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert check(human, sets, max_grade=top, label_max_grade=None, threshold=threshold) <= TOL


# ---------------------------------------------------------------------------------------------
# against scikit-learn and krippendorff (the pooled rows)


def test_pooled_rows_match_sklearn_and_krippendorff():
    metrics = pytest.importorskip("sklearn.metrics", reason="scikit-learn (test extra) is the kappa and ARI oracle")
    krippendorff = pytest.importorskip("krippendorff", reason="the krippendorff package (test extra) is the alpha oracle")
    human, sets = read_extract()
    some = {name: frame for name, frame in sets.items() if frame.relevance.max() == 3}  # human's scale, 0..3
    some = dict(list(some.items())[:3])
    table = pdeval.qrels_agreement(human, some, threshold=2).query("query_id == 'all'")
    for name, labels in some.items():
        value = table[table.label_set == name].set_index(["statistic", "reference_threshold", "label_threshold"])["value"]
        t, p = human.relevance.to_numpy(), labels.relevance.to_numpy()
        assert value["kappa_linear", -1, -1] == pytest.approx(
            metrics.cohen_kappa_score(t, p, weights="linear", labels=[0, 1, 2, 3]), abs=TOL)
        assert value["ari", 2, 2] == pytest.approx(metrics.adjusted_rand_score(t >= 2, p >= 2), abs=TOL)
        assert value["kappa", 1, 3] == pytest.approx(metrics.cohen_kappa_score(t >= 1, p >= 3), abs=TOL)
        alpha = krippendorff.alpha(reliability_data=np.array([t, p], float), level_of_measurement="ordinal")
        assert value["alpha_ordinal", -1, -1] == pytest.approx(alpha, abs=TOL)


def test_topic_ids_that_clash_with_the_summary_rows_are_refused():
    human = pd.DataFrame({"query_id": ["mean", "1"], "doc_id": ["a", "b"], "relevance": [1, 0]})
    with pytest.raises(SchemaError, match="'mean'.*rename"):
        pdeval.qrels_agreement(human, {"j": human})
    assert set(pdeval.qrels_agreement(human.assign(query_id=["m", "1"]), {"j": human.assign(query_id=["m", "1"])})
               .query_id) == {"m", "1", "mean", "all"}


def test_the_printed_table_of_qrel_evaluate(tmp_path):
    """The command's own table (values rounded to 4 digits, MEAN the rounded mean of rounded
    values) equals ours to its printed rounding, column by column."""
    needs_autojudge()
    pytest.importorskip("click", reason="the command line of autojudge-evaluate needs click")
    human, sets = read_extract()
    names = [name for name in sets if sets[name].relevance.max() == 3][:2]
    pdeval.write_qrels(human, str(tmp_path / "truth.txt"))
    ours = pdeval.qrels_agreement(human, {name: sets[name] for name in names}, threshold=2, label_threshold=3)
    columns = {"Precision": ("precision", 2, 3), "Recall": ("recall", 2, 3), "F1": ("f1", 2, 3),
               "Jaccard": ("jaccard", 2, 3), "Kappa@1v2": ("kappa", 1, 2), "Kappa@3v3": ("kappa", 3, 3),
               "Kappa_w": ("kappa_linear", -1, -1), "Kripp_a": ("alpha_ordinal", -1, -1), "ARI": ("ari", 2, 3)}
    for name in names:
        pdeval.write_qrels(sets[name], str(tmp_path / "predicted.txt"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            printed = qrel_evaluate_command(tmp_path / "truth.txt", tmp_path / "predicted.txt", tmp_path / "out.jsonl",
                                            truth_max_grade=3, predict_max_grade=3, truth_relevance_threshold=2,
                                            predict_relevance_threshold=3)
        printed["Topic"] = printed["Topic"].replace({"MEAN": "mean"})
        mine = ours[ours.label_set == name].set_index(KEYS)["value"]
        for column, (statistic, tt, pt) in columns.items():
            theirs = printed.set_index("Topic")[column].astype(float)
            values = np.array([mine[topic, statistic, tt, pt] for topic in theirs.index])
            per_topic = theirs.index != "mean"
            assert np.allclose(np.round(values[per_topic], 4), theirs[per_topic], atol=1e-12, equal_nan=True), column
            assert abs(values[~per_topic][0] - theirs["mean"]) <= 1e-4, column  # a mean of rounded values
