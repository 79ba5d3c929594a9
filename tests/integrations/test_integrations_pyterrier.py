"""PyTerrier: its frames, pt.Experiment with pdeval's measures and tests, and pdeval.experiment
against PyTerrier's table (pyterrier >= 1.0 runs pt.Experiment on result frames without a JVM)
and against scipy / statsmodels directly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import pdeval
from pdeval.analysis.statistics.significance import adjust_pvalues

ir_measures = pytest.importorskip("ir_measures")
from pdeval.integrations import ir_measures as pm  # noqa: E402
from pdeval.integrations.pyterrier import from_perquery, paired_test  # noqa: E402


@pytest.fixture(scope="module")
def clef():
    data = pdeval.datasets.load("clef2018")
    names = list(data.runs["run"].unique()[:4])
    runs = data.runs[data.runs["run"].isin(names)].reset_index(drop=True)
    return runs, data.qrels, names


def _pyterrier_frames(runs, qrels, names):
    """Runs and qrels in PyTerrier's column contract: qid, docid (Terrier's internal number),
    docno (the name), rank, score, query; qrels qid, docno, label."""
    frames = []
    for name in names:
        one = runs[runs["run"] == name]
        frames.append(
            pd.DataFrame(
                {
                    "qid": one["query_id"].to_numpy(),
                    "docid": np.arange(len(one)),
                    "docno": one["doc_id"].to_numpy(),
                    "rank": one.groupby("query_id").cumcount().to_numpy(),
                    "score": one["score"].to_numpy(),
                    "query": "a query text",
                }
            )
        )
    topics = pd.DataFrame({"qid": sorted(qrels["query_id"].unique()), "query": "a query text"})
    judged = qrels.rename(columns={"query_id": "qid", "doc_id": "docno", "relevance": "label"})
    return frames, topics, judged


def test_pyterrier_frames_evaluate_like_canonical_frames(clef):
    runs, qrels, names = clef
    frames, _, judged = _pyterrier_frames(runs, qrels, names)
    got = pdeval.evaluate(frames[0], judged, ["AP", "Bpref"])
    expected = pdeval.evaluate(runs[runs["run"] == names[0]].drop(columns="run"), qrels, ["AP", "Bpref"])
    pd.testing.assert_frame_equal(got, expected)


def test_paired_test_callables_follow_scipy():
    rng = np.random.default_rng(3)
    a, b = rng.random(30), rng.random(30)
    assert paired_test("t")(a, b) == pytest.approx(tuple(stats.ttest_rel(a, b)), rel=1e-12)
    assert paired_test("wilcoxon")(a, b)[1] == pytest.approx(stats.wilcoxon(a, b).pvalue, rel=1e-12)
    exact = paired_test("permutation", n_resamples=2**20)(a[:12], b[:12])[1]
    flips = 1 - 2 * ((np.arange(2**12)[:, None] >> np.arange(12)) & 1)  # every sign vector
    z = a[:12] - b[:12]
    assert exact == pytest.approx(np.mean(np.abs(flips @ z) >= np.abs(z.sum()) - 1e-12))


def test_corrections_are_statsmodels_corrections():
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    p = np.array([0.001, 0.04, 0.03, 0.2, 0.012, 0.5])
    for method in ("holm", "bonferroni", "fdr_bh"):
        expected = multitest.multipletests(p, alpha=0.05, method=method)[1]
        assert np.allclose(adjust_pvalues(p, method), expected, rtol=1e-12, atol=0)


def test_experiment_against_scipy_and_statsmodels(clef):
    multitest = pytest.importorskip("statsmodels.stats.multitest")
    runs, qrels, names = clef
    table = pdeval.experiment(runs, qrels, ["AP@10", "P@5"], baseline=names[1], correction="holm", score_precision="float32")
    assert list(table["name"]) == names
    trimmed = {n: runs[runs["run"] == n][["query_id", "doc_id", "score"]] for n in names}
    for measure, ir in (("AP@10", ir_measures.AP@10), ("P@5", ir_measures.P@5)):
        per_topic = {  # ir_measures (pytrec_eval) per-topic values, every qrels topic
            n: pd.Series({m.query_id: m.value for m in ir_measures.iter_calc([ir], qrels, trimmed[n])}).sort_index()
            for n in names
        }
        base = per_topic[names[1]].to_numpy()
        others = [n for n in names if n != names[1]]
        p = np.array([stats.ttest_rel(per_topic[n].to_numpy(), base).pvalue for n in others])
        reject, corrected, _, _ = multitest.multipletests(p, alpha=0.05, method="holm")
        rows = table.set_index("name")
        assert np.allclose(rows[measure].to_numpy(), [per_topic[n].mean() for n in names], rtol=0, atol=1e-12)
        assert np.allclose(rows.loc[others, f"{measure} p-value"], p, rtol=1e-10)
        assert np.allclose(rows.loc[others, f"{measure} p-value corrected"], corrected, rtol=1e-10)
        assert rows.loc[others, f"{measure} reject"].tolist() == reject.tolist()
        assert rows.loc[others, f"{measure} +"].tolist() == [int((per_topic[n].to_numpy() > base).sum()) for n in others]
        assert rows.loc[others, f"{measure} -"].tolist() == [int((per_topic[n].to_numpy() < base).sum()) for n in others]
        assert np.isnan(rows.loc[names[1], f"{measure} p-value"])


def test_experiment_from_results_and_tidy(clef):
    runs, qrels, names = clef
    result = pdeval.evaluate(runs, qrels, ["AP", "bpref_R"], complete=True)
    from_runs = pdeval.experiment(runs, qrels, ["AP", "bpref_R"], baseline=0, test="sign")
    pd.testing.assert_frame_equal(pdeval.experiment(result, baseline=0, test="sign"), from_runs)
    perquery = result.rename(columns={"run": "name", "query_id": "qid"})  # pt.Experiment(perquery=True)
    pd.testing.assert_frame_equal(pdeval.experiment(perquery, baseline=0, test="sign"), from_runs)
    pd.testing.assert_frame_equal(result.ir.experiment(baseline=0, test="sign"), from_runs)  # accessor wiring
    tidy = pdeval.experiment(result, baseline=names[0], wide=False)
    assert list(tidy.columns) == ["run", "measure", "value", "improved", "degraded", "p_value", "p_adjusted", "significant"]
    assert len(tidy) == 2 * len(names)
    with pytest.raises(pdeval.errors.SchemaError, match="baseline"):
        pdeval.experiment(result, correction="holm")


def test_pt_experiment_takes_pdeval_measures_and_tests(clef):
    pt = pytest.importorskip("pyterrier")
    runs, qrels, names = clef
    frames, topics, judged = _pyterrier_frames(runs, qrels, names)
    frames = [f.drop(columns="docid") for f in frames]  # keep to what pdeval's aliases resolve today
    test = paired_test("permutation", n_resamples=999, seed=5)
    metrics = [ir_measures.AP@10, pm.measure("bpref_R"), pm.measure("RankEff")]
    table = pt.Experiment(frames, topics, judged, eval_metrics=metrics, names=names, baseline=0, test=test, correction="holm")
    ours = pdeval.experiment(
        runs, qrels, ["AP@10", "bpref_R", "RankEff"], baseline=0, test=test, correction="holm", score_precision="float32"
    )
    for column in ours.columns:
        assert column in table.columns
        if column == "name":
            assert table[column].tolist() == ours[column].tolist()
        else:
            assert np.allclose(table[column].astype(float), ours[column].astype(float), rtol=1e-12, atol=0, equal_nan=True), column
    # the default t-test and PyTerrier's per-query frame
    default = pt.Experiment(frames, topics, judged, eval_metrics=metrics[1:], names=names, baseline=0, correction="holm")
    ours_t = pdeval.experiment(runs, qrels, ["bpref_R", "RankEff"], baseline=0, correction="holm")
    assert np.allclose(default["bpref_R p-value corrected"].astype(float), ours_t["bpref_R p-value corrected"].astype(float), equal_nan=True)
    perquery = pt.Experiment(frames, topics, judged, eval_metrics=metrics[1:2], names=names, perquery=True)
    expected = pdeval.evaluate(runs, qrels, "bpref_R", complete=True)
    merged = from_perquery(perquery).merge(expected, on=["run", "query_id"], suffixes=("_pt", ""))
    assert len(merged) == len(expected) and np.allclose(merged["value_pt"], merged["value"], rtol=0, atol=0)


def test_unknown_test_or_correction_is_refused_even_without_a_baseline():
    result = pd.DataFrame({"run": ["a", "b"], "query_id": ["1", "1"], "measure": "AP", "value": [0.1, 0.2]})
    with pytest.raises(pdeval.errors.PdevalError, match=r"experiment\(\): test='bogus' is not one of 't'"):
        pdeval.experiment(result, None, ["AP"], test="bogus")
    with pytest.raises(pdeval.errors.PdevalError, match=r"experiment\(\): correction='sidak' is not None or one of"):
        pdeval.experiment(result, None, ["AP"], baseline="a", correction="sidak")


def test_the_method_of_a_run_frame_is_the_function():
    """Issue: run.ir.experiment(qrels, ...) must give pdeval.experiment(run, qrels, ...)."""
    run = pd.DataFrame({"run": ["a"] * 4 + ["b"] * 4, "query_id": ["1", "1", "2", "2"] * 2,
                        "doc_id": ["d1", "d2"] * 4, "score": [2.0, 1.0, 2.0, 1.0, 1.0, 2.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["1", "2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
    expected = pdeval.experiment(run, qrels, ["AP"], baseline="a")
    pd.testing.assert_frame_equal(run.ir.experiment(qrels, ["AP"], baseline="a"), expected)
    result = pdeval.evaluate(run, qrels, "AP")
    pd.testing.assert_frame_equal(result.ir.experiment(measures="AP", baseline="a"), expected)


def test_baseline_is_the_first_run_given_in_the_order_given(clef):
    """pdeval.experiment(baseline=0) against pt.Experiment on runs given in a non-alphabetical
    order: the same rows in the same order, compared with the same (first given) baseline."""
    pt = pytest.importorskip("pyterrier")
    runs, qrels, names = clef
    order = [names[2], names[0], names[3], names[1]]
    assert order != sorted(order)
    frames, topics, judged = _pyterrier_frames(runs, qrels, order)
    frames = [f.drop(columns="docid") for f in frames]
    metrics = [ir_measures.AP@10, ir_measures.P@5]
    table = pt.Experiment(frames, topics, judged, eval_metrics=metrics, names=order, baseline=0, correction="holm")
    own = [runs[runs["run"] == name] for name in order]
    listed = pdeval.experiment(own, qrels, ["AP@10", "P@5"], baseline=0, correction="holm", score_precision="float32")
    assert listed["name"].tolist() == order == table["name"].tolist()
    assert np.isnan(listed.loc[0, "AP@10 p-value"])  # the first given is the baseline
    for column in listed.columns[1:]:
        assert np.allclose(table[column].astype(float), listed[column].astype(float), rtol=1e-12, atol=0, equal_nan=True), column
    # names= renames in the order given; a dict is named by its keys, in its order
    aliases = ["zeta", "alpha", "mu", "beta"]
    renamed = pdeval.experiment(own, qrels, ["AP@10", "P@5"], baseline=0, correction="holm", names=aliases, score_precision="float32")
    assert renamed["name"].tolist() == aliases
    pd.testing.assert_frame_equal(renamed.drop(columns="name"), listed.drop(columns="name"))
    by_dict = pdeval.experiment(dict(zip(aliases, own)), qrels, ["AP@10", "P@5"], baseline="zeta", correction="holm", score_precision="float32")
    pd.testing.assert_frame_equal(by_dict, renamed)
    # one frame holding the runs: the order in which they first appear, not sorted
    mixed = pd.concat(own, ignore_index=True)
    one_frame = pdeval.experiment(mixed, qrels, ["AP@10", "P@5"], baseline=0, correction="holm", score_precision="float32")
    pd.testing.assert_frame_equal(one_frame, listed)
    tidy = pdeval.experiment(mixed, qrels, ["AP@10"], baseline=1, wide=False)
    assert tidy["run"].tolist() == order and np.isnan(tidy.loc[1, "p_value"])


def _tied_at_float32():
    """Two fully judged top 10s whose scores differ only below float32 precision, so that
    64-bit and 32-bit orderings differ (trec_eval breaks ties by docno, descending)."""
    rows, qrels = [], []
    for topic, labels in (("1", [0, 2, 1, 0, 0, 1, 2, 0, 0, 1, 0, 0]), ("2", [1, 0, 0, 2, 0, 0, 0, 1, 0, 0, 2, 1])):
        for rank, label in enumerate(labels):
            doc = f"d{rank:02d}"  # ascending names: a float32 tie puts the later name first
            rows.append((topic, doc, 10.0 - rank // 2 + 1e-9 * (rank % 2 == 0)))
            qrels.append((topic, doc, label))
    run = pd.DataFrame(rows, columns=["qid", "docno", "score"])
    return run, pd.DataFrame(qrels, columns=["qid", "docno", "label"])


def test_pt_experiment_gives_one_number_per_measure_across_providers():
    """pdeval measures beside ir_measures' (pytrec_eval) in one pt.Experiment table: the same
    measure gives the same number, because inside ir_measures pdeval orders scores at
    pytrec_eval's 32-bit precision by default."""
    pt = pytest.importorskip("pyterrier")
    run, judged = _tied_at_float32()
    exact = pdeval.evaluate(run, judged, "nDCG@10", score_precision="float64")["value"].mean()
    rounded = pdeval.evaluate(run, judged, "nDCG@10", score_precision="float32")["value"].mean()
    assert exact != pytest.approx(rounded, abs=1e-6)  # the case separates the two precisions
    topics = pd.DataFrame({"qid": ["1", "2"], "query": "a query text"})
    metrics = [ir_measures.nDCG@10, pm.measure("nDCG@10"), pm.measure("nDCG'@10"), ir_measures.P@5, pm.measure("P@5")]
    table = pt.Experiment([run], topics, judged, eval_metrics=metrics, names=["r"])
    row = table.iloc[0]
    assert row["nDCG@10"] == pytest.approx(rounded, abs=1e-12)
    assert row["pdeval.nDCG@10"] == row["nDCG@10"] and row["nDCG'@10"] == row["nDCG@10"]  # fully judged top 10
    assert row["pdeval.P@5"] == row["P@5"]
    # the option to change it: pdeval's own (and trec_eval 10's) 64-bit order
    wide = pt.Experiment([run], topics, judged, eval_metrics=[pm.measure("nDCG@10", score_precision="float64")], names=["r"])
    assert wide.iloc[0]["pdeval.nDCG@10[score_precision=float64]"] == pytest.approx(exact, abs=1e-12)
    with pytest.raises(pdeval.errors.PdevalError, match="score_precision"):
        pm.measure("AP", score_precision="float16")
