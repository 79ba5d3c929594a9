"""estimate(spread=): the run effect on the relevance rate of unjudged documents.

Oracles: the definition (one factor exp(σ·z) per run and resample, shared by all its rows),
Fröbe et al.'s bootstrap for spread=0, and the engine's value for complete judgments.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.analysis.estimates import run_effects
from pdeval.analysis.estimates.unique_priors import UnitEffect


def shallow(seed: int = 0, n_runs: int = 4, n_topics: int = 20, depth: int = 10, judged: int = 12, docs: int = 40):
    """Runs of ``depth`` documents over ``docs``, qrels judging ``judged`` of them per topic."""
    rng = np.random.default_rng(seed)
    rows = [(f"r{r}", f"t{t}", f"d{d}", float(depth - i)) for r in range(n_runs) for t in range(n_topics)
            for i, d in enumerate(rng.permutation(docs)[:depth])]
    qrels = [(f"t{t}", f"d{d}", int(rng.random() < 0.4)) for t in range(n_topics) for d in rng.permutation(docs)[:judged]]
    return (pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"]),
            pd.DataFrame(qrels, columns=["query_id", "doc_id", "relevance"]))


def test_one_factor_per_run_and_resample_shared_by_its_rows():
    base = np.array([[0.8, 0.1, 0.1], [0.6, 0.3, 0.1], [0.9, 0.05, 0.05], [0.5, 0.25, 0.25]])
    run_of_row = np.array([0, 0, 1, 1])
    effect = run_effects.with_spread(base, run_of_row, 0.5)
    drawn = effect.draw(500, np.random.default_rng(0))
    ratio = drawn[:, :, 1:] / base[None, :, 1:]
    unclipped = (drawn[:, :, 1:].sum(axis=2) < 1 - 1e-12).all(axis=1)
    # within a run and resample: one factor for every row and grade
    np.testing.assert_allclose(ratio[unclipped, 0], ratio[unclipped, 1][:, :1].repeat(2, axis=1), rtol=1e-12)
    np.testing.assert_allclose(ratio[:, 2, 0], ratio[:, 2, 1], rtol=1e-12)
    # the runs' factors differ, and log f is N(-σ²/2, σ²): f has mean 1
    assert not np.allclose(ratio[:, 0, 0], ratio[:, 2, 0])
    logs = np.log(ratio[:, 2, 0])
    assert abs(logs.std() - 0.5) < 0.05 and abs(logs.mean() + 0.125) < 0.05
    assert abs(ratio[:, 2, 0].mean() - 1.0) < 0.06
    np.testing.assert_allclose(drawn.sum(axis=2), 1.0, atol=1e-12)


def test_spread_zero_is_froebe_unchanged_and_widens_the_interval_of_run_means():
    run, qrels = shallow()
    widths = {}
    for sigma in (0.0, 1.0):
        got = pdeval.estimate(run, qrels, ["P@10", "nDCG@10"], spread=sigma, n_resamples=300, seed=2, per="run")
        widths[sigma] = (got["high"] - got["low"]).to_numpy()
        assert got.attrs["spread"] == sigma and got.attrs["prior"] == "both"
    assert (widths[1.0] > 1.5 * widths[0.0]).all()
    assert run_effects.with_spread(np.ones((2, 2)) / 2, np.zeros(2, int), 0.0).shape == (2, 2)


def test_the_run_effect_does_not_average_away_over_topics():
    """σ = 0: the width of a run mean shrinks like 1/√topics; with the run effect it stays."""
    ratios = {}
    for sigma in (0.0, 1.0):
        width = []
        for topics in (10, 80):
            run, qrels = shallow(seed=3, n_runs=2, n_topics=topics)
            got = pdeval.estimate(run, qrels, "P@10", spread=sigma, n_resamples=400, seed=1, per="run")
            width.append(float((got["high"] - got["low"]).mean()))
        ratios[sigma] = width[1] / width[0]
    assert ratios[0.0] < 0.5 and ratios[1.0] > 0.6


def test_the_unique_priors_smoothing_widens_by_the_spread():
    effect = UnitEffect(np.full((3, 2), 0.5), np.zeros(3, int), 1, np.ones((2, 2)), 0.3)
    wider = run_effects.with_spread(effect, effect.run_of_row, 0.4)
    assert wider.bandwidth == pytest.approx(0.5)
    np.testing.assert_allclose(wider.factors, np.exp(-0.4 ** 2 / 2))  # the added spread keeps the mean


def test_complete_judgments_keep_zero_width_at_any_spread():
    run, qrels = shallow(n_runs=2, n_topics=3)
    pairs = run[["query_id", "doc_id"]].drop_duplicates()
    full = pairs.merge(qrels, how="left").fillna({"relevance": 0}).astype({"relevance": int})
    got = pdeval.estimate(run, full, ["P@10", "AP"], spread=2.0, n_resamples=20, per="run")
    assert (got["low"] == got["high"]).all()
    np.testing.assert_allclose(got["estimate"], got["value"], atol=1e-12)


def test_each_setting_carries_its_documented_coverage():
    """The default (spread 0, Fröbe et al.'s bootstrap) claims no coverage; 'auto' carries what the
    study measured for its prior (nothing yet: coverage_reached stays False until it is run)."""
    run, qrels = shallow(n_runs=2, n_topics=3)
    default = pdeval.estimate(run, qrels, "P@10", n_resamples=20, per="run")
    assert default.attrs["spread"] == 0.0 and default.attrs["coverage"] == [] and default.attrs["coverage_reached"] is False
    auto = pdeval.estimate(run, qrels, "P@10", n_resamples=20, per="run", spread="auto")
    assert auto.attrs["spread"] == run_effects.SPREADS["both"]
    assert auto.attrs["coverage"] == [dict(zip(("collection", "measure", "coverage", "runs"), row))
                                      for row in run_effects.COVERAGE["both"]]
    rows = run_effects.COVERAGE["both"]
    assert auto.attrs["coverage_reached"] == (bool(rows) and all(row[2] >= 0.9 for row in rows))
    other = pdeval.estimate(run, qrels, "P@10", n_resamples=20, per="run", spread=0.1234)
    assert other.attrs["coverage"] == [] and other.attrs["coverage_reached"] is False


def test_spread_is_refused_outside_the_bootstrap():
    run, qrels = shallow(n_runs=2, n_topics=3)
    with pytest.raises(pdeval.errors.PdevalError, match="spread"):
        pdeval.estimate(run, qrels, "P@10", method="labels", automatic=qrels, spread=0.5)
    with pytest.raises(pdeval.errors.PdevalError, match="spread"):
        pdeval.estimate(run, qrels, "P@10", spread=-1.0)
