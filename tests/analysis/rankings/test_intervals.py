"""Tests of the topic bootstrap of leaderboard correlations (pdeval.analysis.rankings.intervals and
.resampling): each replicate is the coefficient of leaderboards recomputed on resampled topics; the
intervals are the documented quantiles; the coverage of a known population coefficient in a seeded
simulation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import scipy.stats as st

import pdeval
from pdeval.analysis.rankings.batched import batched
from pdeval.analysis.rankings.intervals import auto_interval, bootstrap_table
from pdeval.analysis.rankings.resampling import bootstrap_weights, quantiles

TOL = 1e-12
METHODS = ["tau_b", "tau_ap_b", "tau_gap", "pearson", "tau_b@4"]


def boards(seed=0, runs=7, topics=9):
    rng = np.random.default_rng(seed)
    names, ids = [f"r{i}" for i in range(runs)], [f"q{t}" for t in range(topics)]
    human = pd.DataFrame({"run": np.repeat(names, topics), "query_id": np.tile(ids, runs), "measure": "AP",
                          "value": (rng.random((runs, topics)) + np.arange(runs)[:, None] / runs).ravel()})
    judges = pd.concat([human.assign(label_set=j, value=human["value"] + rng.normal(0, s, len(human)))
                        for j, s in [("a", 0.1), ("b", 0.4)]], ignore_index=True)
    return human, judges


def resampled(frame: pd.DataFrame, topics: np.ndarray, counts: np.ndarray) -> pd.DataFrame:
    """The frame with topic t repeated counts[t] times (copies renamed), as a resample is."""
    parts = [frame[frame.query_id == t].assign(query_id=f"{t}#{c}") for t, n in zip(topics, counts) for c in range(int(n))]
    return pd.concat(parts, ignore_index=True)


def test_each_replicate_is_the_coefficient_of_the_resampled_leaderboards():
    human, judges = boards()
    human = human[~((human.run == "r3") & (human.query_id == "q2"))]  # a system lacking a topic
    table = bootstrap_table(judges, human, None, methods=METHODS, by=None, system="run", missing="warn",
                            fill_value=0.0, n_resamples=6, interval="percentile", seed=5, where="test")
    point, boot, n_topics = table.point, table.boot, table.n_topics
    topics = np.array(sorted(set(human.query_id)), dtype=object)
    weights = bootstrap_weights(n_topics, 6, np.random.default_rng(5))
    plain = pdeval.rank_correlation(judges, human, methods=METHODS)
    assert np.allclose(point.ravel(), plain["value"], atol=TOL, rtol=0)
    for b in range(6):
        again = pdeval.rank_correlation(resampled(judges, topics, weights[b]), resampled(human, topics, weights[b]),
                                        methods=METHODS)
        assert np.allclose(boot[:, b, :].ravel(), again["value"], atol=TOL, rtol=0, equal_nan=True), b


def test_percentile_intervals_are_the_quantiles_and_repeat_with_the_seed():
    human, judges = boards(1)
    options = dict(methods=METHODS, n_resamples=300, seed=9, confidence=0.9, interval="percentile")
    out = pdeval.correlation_intervals(judges, human, **options)
    again = pdeval.correlation_intervals(judges, human, **options)
    pd.testing.assert_frame_equal(out, again)
    boot = bootstrap_table(judges, human, None, methods=METHODS, by=None, system="run", missing="warn",
                           fill_value=0.0, n_resamples=300, interval="percentile", seed=9, where="test").boot
    want = np.nanquantile(np.moveaxis(boot, 1, -1), [0.05, 0.95], axis=-1)
    assert np.allclose(out["low"], want[0].ravel(), atol=TOL) and np.allclose(out["high"], want[1].ravel(), atol=TOL)
    assert list(out.columns) == ["measure", "label_set", "reference", "method", "value", "debiased", "low", "high",
                                 "interval", "n_runs", "n_topics"]
    assert (out["interval"] == "percentile").all()
    assert out["debiased"].isna().all()  # no SIMEX under the percentile interval
    wide = pdeval.correlation_intervals(judges, human, methods="tau_b", n_resamples=300, seed=9, confidence=0.99,
                                        interval="percentile")
    auto = pdeval.correlation_intervals(judges, human, methods=METHODS, n_resamples=300, seed=9, confidence=0.9)
    simex = pdeval.correlation_intervals(judges, human, methods=METHODS, n_resamples=300, seed=9, confidence=0.9,
                                         interval="simex")
    # "auto": the hull for pearson (every rank coefficient takes the bounds: test_near_ties.py); each row names it
    smooth = (auto["interval"] == "hull").to_numpy()
    assert (auto["interval"] == auto.method.map(auto_interval)).all()
    assert smooth.sum() >= 2 and (auto.loc[smooth, "method"] == "pearson").all()
    assert np.allclose(auto.loc[smooth, "low"], np.minimum(out.loc[smooth, "low"], simex.loc[smooth, "low"]), atol=TOL)
    assert np.allclose(auto.loc[smooth, "high"], np.maximum(out.loc[smooth, "high"], simex.loc[smooth, "high"]),
                       atol=TOL)
    width, plain = (simex["high"] - simex["low"]).to_numpy(), (out["high"] - out["low"]).to_numpy()
    inside = ((simex["high"] < 1) & (simex["low"] > -1)).to_numpy()  # moved, not widened; cut at the range's ends
    assert np.allclose(width[inside], plain[inside], atol=TOL) and (width <= plain + TOL).all() and inside.any()
    narrow = out[out.method == "tau_b"]
    assert (wide["low"].to_numpy() <= narrow["low"].to_numpy() + TOL).all()


def test_quantiles_match_numpy_with_nan():
    rng = np.random.default_rng(2)
    values = rng.random((4, 50))
    values[1, :7] = np.nan
    levels = np.tile([0.025, 0.5, 0.975], (4, 1))
    assert np.allclose(quantiles(values, levels), np.nanquantile(values, [0.025, 0.5, 0.975], axis=1).T, atol=TOL)


def test_bca_and_identical_groups():
    human, judges = boards(3)
    both = pd.concat([judges[judges.label_set == "a"], judges[judges.label_set == "a"].assign(label_set="a2")])
    pairs = pdeval.correlation_intervals(both, human, methods=["tau_b", "pearson"], n_resamples=200, seed=1, pairs=True,
                                        interval="bca")
    assert (pairs["difference"] == 0).all() and (pairs["p_value"] == 1).all()
    assert (pairs["low"] == 0).all() and (pairs["high"] == 0).all()
    bca = pdeval.correlation_intervals(judges, human, methods="pearson", n_resamples=400, seed=1, interval="bca")
    assert (bca["low"] <= bca["high"]).all()


def test_a_measure_of_the_result_as_reference():
    human, judges = boards(4)
    result = pd.concat([human, human.assign(measure="P@10", value=2 * human["value"] + 0.1)], ignore_index=True)
    out = pdeval.correlation_intervals(result, reference_measure="AP", n_resamples=50, seed=0, interval="hull")
    assert out[["measure", "reference", "value"]].values.tolist() == [["P@10", "AP", 1.0]]
    assert out["low"].item() == 1.0  # a linear transform keeps every resampled ranking
    # the default bounds also hold the orders of the reference's near ties that the topics leave open
    auto = pdeval.correlation_intervals(result, reference_measure="AP", n_resamples=50, seed=0)
    assert auto["interval"].item() == "bounds" and auto["low"].item() < 1.0 == auto["high"].item()


def population_coverage(replications=40, resamples=300, systems=20, topics=40, seed=11, noise=0.05, spread=0.4,
                        intervals=("auto",), methods=("tau_b", "tau_ap_b", "spearman")):
    """Share of 95 % intervals (of each of ``intervals``) covering the population coefficient (the
    one between the expected leaderboards), per method, for a judge of known bias and noise."""
    rng = np.random.default_rng(seed)
    mu = np.sort(rng.uniform(0.2, 0.2 + spread, systems))
    nu = mu + rng.normal(0, 0.03, systems)
    methods = list(methods)
    truth = np.array([batched(m, nu[None], mu[None])[0] for m in methods])
    names = [f"s{i:02d}" for i in range(systems)]
    covered = {interval: [] for interval in intervals}
    for r in range(replications):
        topic = rng.normal(0, 0.15, (topics, 1))
        error = rng.normal(0, noise, (topics, systems))
        frame = lambda v: pd.DataFrame({"run": np.tile(names, topics), "query_id": np.repeat(np.arange(topics), systems),
                                        "measure": "m", "value": v.ravel()})
        human = frame(mu + topic + error)
        judge = frame(nu + topic + 0.6 * error + 0.8 * rng.normal(0, noise, (topics, systems)))
        for interval in intervals:
            out = pdeval.correlation_intervals(judge, human, methods=methods, n_resamples=resamples, seed=r,
                                               interval=interval)
            covered[interval].append(((out["low"] <= truth) & (truth <= out["high"])).to_numpy())
    shares = {interval: dict(zip(methods, np.mean(hits, axis=0))) for interval, hits in covered.items()}
    return shares if len(intervals) > 1 else shares[intervals[0]]


def test_intervals_cover_the_population_coefficient():
    coverage = population_coverage()
    assert all(share >= 0.85 for share in coverage.values()), coverage


def test_simex_covers_where_the_percentile_interval_misses():
    """Crowded leaderboards (topic noise of the means beside small gaps between systems): near-tied
    systems swap, every coefficient is biased low, and the percentile interval misses the
    population coefficient far more often than 5 %; SIMEX's interval, moved by the estimated
    attenuation, does not. The bound: at a true coverage of 95 %, fewer hits than ``floor`` in
    ``replications`` has a probability below 0.1 %."""
    replications = 30
    shares = population_coverage(replications, resamples=200, topics=30, noise=0.15, spread=0.3, seed=3,
                                 intervals=("percentile", "simex"), methods=("tau_b", "spearman", "pearson"))
    floor = st.binom.ppf(0.001, replications, 0.95) / replications
    assert all(share < floor for share in shares["percentile"].values()), shares
    assert all(share >= floor for share in shares["simex"].values()), shares


def test_policies_and_cutoffs_give_the_values_of_rank_correlation():
    human, judges = boards(5, runs=9)
    judges = judges[~judges.run.isin(["r2"])]  # the judges lack a system of the reference
    human = human[human.run != "r6"]  # and the reference one of the judges
    for missing in ["skip", "fill"]:
        out = pdeval.correlation_intervals(judges, human, methods=METHODS, missing=missing, n_resamples=50)
        plain = pdeval.rank_correlation(judges, human, methods=METHODS, missing=missing)
        assert np.allclose(out["value"], plain["value"], atol=TOL, equal_nan=True), missing
        assert (out["n_runs"].to_numpy() == plain["n_runs"].to_numpy()).all()
    assert set(plain.loc[plain.method == "tau_b", "n_runs"]) == {8}  # filled r2 counts, r6 is left out
    assert set(plain.loc[plain.method == "tau_b@4", "n_runs"]) == {4}


def test_per_topic_rows_are_keyed_by_query_id():
    human, judges = boards(6)
    out = pdeval.rank_correlation(judges, human, methods=["tau_b", "spearman"], per_topic=True)
    assert list(out.columns) == ["measure", "label_set", "query_id", "reference", "method", "value", "n_runs"]
    assert len(out) == 2 * 9 * 2 and (out["n_runs"] == 7).all()
    one = out[(out.label_set == "a") & (out.query_id == "q3") & (out.method == "tau_b")]["value"].item()
    pick = lambda f: f[f.query_id == "q3"].sort_values("run")["value"].to_numpy()
    assert one == pytest.approx(st.kendalltau(pick(judges[judges.label_set == "a"]), pick(human)).statistic, abs=TOL)


def test_leaderboards_of_different_topics_are_resampled_each_within_its_own_topics():
    """SynDL-like data: the judge scores other topics than the reference. Every resample keeps
    each side's number of topics (a stratified bootstrap); its replicates are the coefficients of
    the leaderboards recomputed on the drawn topics of each side."""
    human, judges = boards(2, topics=12)
    judges = judges[judges.query_id.isin([f"q{t}" for t in range(5)])]
    human = human[~human.query_id.isin([f"q{t}" for t in range(5)])]
    table = bootstrap_table(judges, human, None, methods=["tau_b"], by=None, system="run", missing="warn",
                            fill_value=0.0, n_resamples=40, interval="percentile", seed=3, where="test")
    topics = np.array(sorted(set(human.query_id) | set(judges.query_id)), dtype=object)
    strata = np.isin(topics, judges.query_id.unique()).astype(int)
    weights = bootstrap_weights(len(topics), 40, np.random.default_rng(3), strata)
    assert (weights[:, strata == 1].sum(axis=1) == 5).all() and (weights[:, strata == 0].sum(axis=1) == 7).all()
    for b in range(0, 40, 13):
        again = pdeval.rank_correlation(resampled(judges, topics, weights[b]), resampled(human, topics, weights[b]),
                                        methods="tau_b")
        assert np.allclose(table.boot[:, b, 0], again["value"], atol=TOL, rtol=0), b
