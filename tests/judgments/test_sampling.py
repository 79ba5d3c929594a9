"""Judging designs: stratified samples of a depth pool (sample_pool) and inclusion-probability
samples (sample_inclusion), on the bundled CLEF eHealth 2018 runs and complete qrels.

Independent checks: the strata against pdeval.pool's depth pools, the sample sizes against the
rates, the estimators on a complete sample against the measures on the complete judgments
(trec_eval's AP, R), and unbiasedness of the estimated R over many samples (Horvitz–Thompson).
"""

from __future__ import annotations

import shutil
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import PdevalError, PdevalWarning
from pdeval.judgments.sampling import _inclusion_probabilities, ap_prior
from locations import REPO, TESTS

STRATA = (5, 10, 20)
SHARED = REPO.parent / "shared" / "data"
COPIES = SHARED / "cds2015-sampleval" / "sample_eval_versions"
STATAP = SHARED / "statap-mq-web09"
# the script runners of test_sampled / test_statap
sys.path[:0] = [str(TESTS / "sources"), str(TESTS / "measures")]


@pytest.fixture(scope="module")
def clef():
    data = pdeval.datasets.load("clef2018")
    runs = data.runs[data.runs["run"].isin(sorted(data.runs["run"].unique())[:6])]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        pool = pdeval.pool(runs, pool_depth=20).merge(data.qrels, on=["query_id", "doc_id"])  # judged depth-20 pool
    return runs, data.qrels, pool


def quiet(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        return function(*args, **kwargs)


def test_sample_pool_strata_and_sizes(clef):
    runs, qrels, pool = clef
    with pytest.warns(PdevalWarning, match="no judgment"):
        sample = pdeval.sample_pool(runs, qrels, strata=STRATA, rates=(1.0, 0.5, 0.2), seed=3)
    assert list(sample.columns) == ["query_id", "doc_id", "stratum", "relevance"]
    # the strata are the depth pools' differences
    for label, (low, high) in {"1": (0, 5), "2": (5, 10), "3": (10, 20)}.items():
        inner = quiet(pdeval.pool, runs, pool_depth=high)
        outer = quiet(pdeval.pool, runs, pool_depth=low) if low else inner.iloc[:0]
        expected = set(map(tuple, inner.merge(qrels)[["query_id", "doc_id"]].to_numpy())) - set(
            map(tuple, outer[["query_id", "doc_id"]].to_numpy())
        )
        got = set(map(tuple, sample.loc[sample["stratum"] == label, ["query_id", "doc_id"]].to_numpy()))
        assert got == expected
    # ceil(rate * n) judged documents per (topic, stratum), with their true levels
    counts = sample.assign(judged=sample["relevance"] >= 0).groupby(["query_id", "stratum"])["judged"].agg(["sum", "size"])
    rate = counts.index.get_level_values("stratum").map({"1": 1.0, "2": 0.5, "3": 0.2}).to_numpy()
    np.testing.assert_array_equal(counts["sum"].to_numpy(), np.ceil(rate * counts["size"].to_numpy() - 1e-12))
    truth = sample.merge(qrels, on=["query_id", "doc_id"], suffixes=("", "_true"))
    judged = truth["relevance"] >= 0
    assert (truth.loc[judged, "relevance"] == truth.loc[judged, "relevance_true"]).all()


def test_sample_pool_seeds_and_samples(clef):
    runs, qrels, _ = clef
    a = quiet(pdeval.sample_pool, runs, qrels, strata=STRATA, seed=1, samples=3)
    b = quiet(runs.ir.sample_pool, qrels, strata=STRATA, seed=1, samples=3)  # the accessor dispatches
    pd.testing.assert_frame_equal(a, b)
    assert list(a.columns) == ["sample", "query_id", "doc_id", "stratum", "relevance"]
    first, second = (a[a["sample"] == s]["relevance"].to_numpy() for s in (0, 1))
    assert (first != second).any()
    with pytest.raises(PdevalError, match="rates"):
        pdeval.sample_pool(runs, qrels, strata=(10, 20), rates=(1.0,))
    with pytest.raises(PdevalError, match="increasing"):
        pdeval.sample_pool(runs, qrels, strata=(20, 10), rates=(1.0, 1.0))


def test_complete_sample_gives_the_complete_measures(clef):
    """Every stratum judged completely: R̂ = R exactly, xinfAP = AP up to the script's smoothing."""
    runs, qrels, pool = clef
    sample = quiet(pdeval.sample_pool, runs, qrels, strata=STRATA, rates=(1, 1, 1))
    estimated = pdeval.evaluate(runs, sample, ["xinfAP", "inum_rel"]).pivot_table(
        index=["run", "query_id"], columns="measure", values="value"
    )
    exact = pdeval.evaluate(runs, pool, ["AP", "NumRel"]).pivot_table(index=["run", "query_id"], columns="measure", values="value")
    np.testing.assert_array_equal(estimated["inum_rel"].to_numpy(), exact["NumRel"].to_numpy())
    np.testing.assert_allclose(estimated["xinfAP"].to_numpy(), exact["AP"].to_numpy(), atol=1e-4)


def test_stratified_estimate_of_r_is_unbiased(clef):
    runs, qrels, pool = clef
    samples = quiet(pdeval.sample_pool, runs, qrels, strata=STRATA, rates=(0.5, 0.3, 0.1), samples=150, seed=11)
    r_hat = pdeval.evaluate(runs[runs["run"] == runs["run"].iloc[0]], samples, ["inum_rel"])
    per_topic = r_hat.groupby("query_id")["value"].agg(["mean", "std", "count"])
    truth = pool[pool["relevance"] > 0].groupby("query_id").size().reindex(per_topic.index, fill_value=0)
    z = (per_topic["mean"] - truth) / (per_topic["std"] / np.sqrt(per_topic["count"])).where(per_topic["std"] > 0, 1)
    assert (z.abs() < 4.5).all(), z.abs().max()


def test_ap_prior_and_inclusion_probabilities():
    prior = ap_prior(np.arange(1, 101), 100)
    assert prior.sum() == pytest.approx(1.0, abs=1e-12)
    assert (np.diff(prior) < 0).all()
    weight = np.array([0.5, 0.3, 0.1, 0.05, 0.05, 1.0, 1.0])
    topic = np.array([0, 0, 0, 0, 0, 1, 1])
    prob = _inclusion_probabilities(weight, topic, size=2)
    assert prob[:5].sum() == pytest.approx(2.0) and prob[5:].sum() == pytest.approx(2.0)
    assert prob[0] == 1.0 and (prob <= 1).all()
    np.testing.assert_allclose(prob[1:5] / weight[1:5], prob[1] / weight[1])  # proportional below the cap


def test_inclusion_census_gives_ap(clef):
    runs, qrels, pool = clef
    census = quiet(pdeval.sample_inclusion, runs, qrels, size=10**6, pool_depth=20)
    assert (census["inclusion_prob"] == 1.0).all() and len(census) == len(pool)
    stat = pdeval.evaluate(runs, census, ["statAP", "statP@10"]).pivot_table(index=["run", "query_id"], columns="measure", values="value")
    exact = pdeval.evaluate(runs, pool, ["AP", "P@10"]).pivot_table(index=["run", "query_id"], columns="measure", values="value")
    np.testing.assert_allclose(stat["statAP"].to_numpy(), exact["AP"].to_numpy(), atol=1e-12)
    np.testing.assert_allclose(stat["statP@10"].to_numpy(), exact["P@10"].to_numpy(), atol=1e-12)


def test_inclusion_estimate_of_r_is_unbiased(clef):
    runs, qrels, pool = clef
    samples = quiet(pdeval.sample_inclusion, runs, qrels, size=15, pool_depth=20, samples=400, seed=5)
    size = samples.groupby(["sample", "query_id"]).size().groupby("query_id").mean()
    assert size.between(12, 18).all()  # expected size 15 per topic
    weight = samples[samples["relevance"] > 0].assign(w=lambda f: 1.0 / f["inclusion_prob"])
    r_hat = weight.groupby(["sample", "query_id"])["w"].sum().unstack(fill_value=0.0).reindex(range(400), fill_value=0.0)
    truth = pool[pool["relevance"] > 0].groupby("query_id").size().reindex(r_hat.columns)
    z = (r_hat.mean() - truth) / (r_hat.std() / np.sqrt(len(r_hat))).where(r_hat.std() > 0, 1)
    assert (z.abs() < 4.5).all(), z.abs().max()


def test_samples_write_and_read_back(clef, tmp_path):
    runs, qrels, _ = clef
    stratified = quiet(pdeval.sample_pool, runs, qrels, strata=STRATA, rates=(1.0, 0.5, 0.2), seed=2)
    path = pdeval.write_qrels(stratified, tmp_path / "sampled.txt")
    pd.testing.assert_frame_equal(pdeval.read_qrels(path), stratified.astype({"query_id": str, "doc_id": str}), check_dtype=False)
    inclusion = quiet(pdeval.sample_inclusion, runs, qrels, size=20, pool_depth=20, seed=2)
    path = pdeval.write_qrels(inclusion, tmp_path / "sampled.prels")
    back = pdeval.read_qrels(path)
    assert back["inclusion_prob"].tolist() == inclusion["inclusion_prob"].tolist()
    assert back["doc_id"].tolist() == inclusion["doc_id"].tolist()


@pytest.mark.skipif(shutil.which("perl") is None, reason="perl is not installed")
@pytest.mark.skipif(not COPIES.is_dir() or not STATAP.is_dir(), reason="the shared data with NIST's scripts is absent")
def test_drawn_samples_give_what_the_scripts_give(clef, tmp_path):
    """The samples pdeval draws, written out, scored by sample_eval.pl and statAP_MQ_eval."""
    from test_sampled import pdeval_lines, names_for, run_script, script_copy
    from test_statap import V3_MEASURES
    from test_statap import run_script as run_statap
    from test_statap import script_copy as statap_copy

    runs, qrels, _ = clef
    one = runs[runs["run"] == runs["run"].iloc[0]]
    run_path = pdeval.write_run(one, tmp_path / "run.txt")[0]
    stratified = quiet(pdeval.sample_pool, runs, qrels, strata=STRATA, rates=(1.0, 0.5, 0.2), seed=4)
    qrels_path = pdeval.write_qrels(stratified, tmp_path / "sampled.txt")
    theirs = run_script(script_copy(tmp_path, "sample_eval.nist-clinical.max100.JULIELab.pl"), qrels_path, run_path)
    ours = pdeval_lines(one, stratified, names_for(100, (10, 50, 100)))
    merged = theirs.merge(ours, on=["measure", "query_id"])
    assert len(merged) > 300 and (merged["value_x"] - merged["value_y"]).abs().max() <= 1e-9
    inclusion = quiet(pdeval.sample_inclusion, runs, qrels, size=30, pool_depth=20, seed=4)
    prels_path = pdeval.write_qrels(inclusion, tmp_path / "sampled.prels")
    # statAP_MQ_eval orders tied scores in Perl's hash order: score by trec_eval's rank instead
    one = pdeval.rank_run(one).assign(score=lambda f: -f["rank"].astype(float)).drop(columns="rank")
    run_path = pdeval.write_run(one, tmp_path / "untied.txt")[0]
    columns = ["statAP", "RQ", "Rprec", "P30", "nDCG", "var"]
    theirs = run_statap(statap_copy("statAP_MQ_eval_v3.pl"), prels_path, run_path, columns)
    result = pdeval.evaluate(one, inclusion, list(V3_MEASURES.values()), undefined="nan")
    mine = result.pivot_table(index="query_id", columns="measure", values="value")
    for column, measure in V3_MEASURES.items():
        assert (mine[str(pdeval.parse_measure(measure))].reindex(theirs.index) - theirs[column]).abs().max() <= 1e-9
