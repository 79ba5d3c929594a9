"""Tests of SIMEX for leaderboard correlations (pdeval.analysis.rankings.simex): the extrapolation
is the least-squares line at lambda = -1; the debiased value and the moved interval equal a slow
loop over resampled frames; without topic noise nothing moves; the same seed gives the same frame."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.analysis.rankings.resampling import bootstrap_weights
from pdeval.analysis.rankings.simex import EXTRA_LEVELS, EXTRA_SHARE, extrapolate, noise_level

TOL = 1e-12
METHODS = ["tau_b", "spearman", "pearson", "tau_ap_b", "tau_gap", "tau_b@3", "rms"]
POWER = np.array([2.0 if m == "rms" else 1.0 for m in METHODS])  # rms: extrapolated on its square


def frames(seed=0, runs=6, topics=7, noise=0.3):
    rng = np.random.default_rng(seed)
    names, ids = [f"r{i}" for i in range(runs)], [f"q{t}" for t in range(topics)]
    mean = np.linspace(0.2, 0.5, runs)
    human = pd.DataFrame({"run": np.repeat(names, topics), "query_id": np.tile(ids, runs), "measure": "AP",
                          "value": (mean[:, None] + noise * rng.random((runs, topics))).ravel()})
    judge = human.assign(label_set="j", value=human["value"] + rng.normal(0, noise, len(human)))
    return human, judge


def resampled(frame: pd.DataFrame, topics, counts) -> pd.DataFrame:
    """The frame with topic t repeated counts[t] times (copies renamed), as a resample is."""
    parts = [frame[frame.query_id == t].assign(query_id=f"{t}#{c}") for t, n in zip(topics, counts) for c in range(int(n))]
    return pd.concat(parts, ignore_index=True)


def test_extrapolate_is_the_least_squares_line_at_minus_one():
    rng = np.random.default_rng(1)
    levels, means = np.array([0.49, 0.98, 2.0]), rng.random((4, 3))
    want = [np.polyval(np.polyfit(levels, row, 1), -1.0) for row in means]
    assert np.allclose(extrapolate(means, levels), want, atol=TOL)
    flat = np.full((2, 3), 0.7)
    assert (extrapolate(flat, levels) == 0.7).all()  # equal means: exactly that value, no rounding
    assert noise_level(50, 1.0) == 49 / 50 and noise_level(50, 2.0) == 49 / 100 and noise_level(50, 0.5) == 49 / 25


def test_bootstrap_weights_of_other_sizes_draw_in_proportion_to_each_stratum():
    rng = np.random.default_rng(0)
    assert (bootstrap_weights(10, 5, rng, size=2.0).sum(axis=1) == 20).all()
    assert (bootstrap_weights(10, 5, rng, size=0.5).sum(axis=1) == 5).all()
    strata = np.array([0, 0, 0, 0, 1, 1, 1, 1, 1, 1])
    half = bootstrap_weights(10, 50, rng, strata, size=0.5)
    assert (half[:, :4].sum(axis=1) == 2).all() and (half[:, 4:].sum(axis=1) == 3).all()
    same = bootstrap_weights(10, 5, np.random.default_rng(3), strata, size=1.0)
    assert np.array_equal(same, bootstrap_weights(10, 5, np.random.default_rng(3), strata))


def test_debiased_value_and_interval_equal_a_slow_loop_over_resampled_frames():
    human, judge = frames()
    n_resamples, seed = 8, 4
    out = pdeval.correlation_intervals(judge, human, by="label_set", methods=METHODS, n_resamples=n_resamples,
                                       seed=seed, interval="simex", confidence=0.8)
    topics = np.array(sorted(set(human.query_id)), dtype=object)
    rng = np.random.default_rng(seed)
    main = bootstrap_weights(topics.size, n_resamples, rng)  # the bootstrap, then each extra level, in order
    extra = max(2, math.ceil(EXTRA_SHARE * n_resamples))
    levels = {noise_level(topics.size, 1.0): main}
    for size in EXTRA_LEVELS:
        levels[noise_level(topics.size, size)] = bootstrap_weights(topics.size, extra, rng, size=size)
    means, boot = {}, None
    for level, weights in levels.items():
        values = np.array([pdeval.rank_correlation(resampled(judge, topics, w), resampled(human, topics, w),
                                                   methods=METHODS)["value"].to_numpy() for w in weights])
        means[level] = (values ** POWER).mean(axis=0)
        boot = values if weights is main else boot
    x = np.array(sorted(means))
    for m, method in enumerate(METHODS):
        y = np.array([means[level][m] for level in x])
        want = np.polyval(np.polyfit(x, y, 1), -1.0)
        want = np.sqrt(max(want, 0.0)) if method == "rms" else np.clip(want, -1.0, 1.0)
        limits = (0.0, np.inf) if method == "rms" else (-1.0, 1.0)  # a moved bound stays within the range
        row = out[out.method == method]
        assert row["debiased"].item() == pytest.approx(want, abs=1e-9), method
        low, high = np.clip(np.quantile(boot[:, m], [0.1, 0.9]) + (want - boot[:, m].mean()), *limits)
        assert row["low"].item() == pytest.approx(low, abs=1e-9) and row["high"].item() == pytest.approx(high, abs=1e-9)
    plain = pdeval.rank_correlation(judge, human, methods=METHODS)
    assert np.allclose(out["value"], plain["value"], atol=TOL)  # the point value stays the sample coefficient


def test_without_topic_noise_nothing_moves():
    """Identical topics (and topics differing by a constant for every system) give the same
    leaderboards on every resample: SIMEX has nothing to extrapolate, its interval is the plain one."""
    human, judge = frames(2)
    for frame in (human, judge):
        frame["value"] = frame.groupby("run")["value"].transform("mean")
    options = dict(methods=METHODS, n_resamples=60, seed=3)
    plain = pdeval.correlation_intervals(judge, human, interval="percentile", **options)
    for interval in ("simex", "auto"):
        moved = pdeval.correlation_intervals(judge, human, interval=interval, **options)
        pd.testing.assert_frame_equal(moved.drop(columns=["debiased", "interval"]),
                                      plain.drop(columns=["debiased", "interval"]))
        assert np.allclose(moved["debiased"], moved["value"], atol=TOL, rtol=0)
    effect = {q: 0.1 * i for i, q in enumerate(sorted(set(human.query_id)))}
    shifted = [f.assign(value=f["value"] + f["query_id"].map(effect)) for f in (human, judge)]
    moved = pdeval.correlation_intervals(shifted[1], shifted[0], interval="simex", **options)
    assert np.allclose(moved[["value", "debiased", "low", "high"]], plain[["value", "value", "low", "high"]], atol=1e-9)


def test_the_same_seed_gives_the_same_frame():
    human, judge = frames(5)
    judges = pd.concat([judge, judge.assign(label_set="k", value=judge["value"][::-1].to_numpy())])
    for pairs in (False, True):
        runs = [pdeval.correlation_intervals(judges, human, methods=METHODS, n_resamples=40, seed=7, pairs=pairs)
                for _ in range(2)]
        pd.testing.assert_frame_equal(*runs)
    pairs = runs[0]
    one = pdeval.correlation_intervals(judges, human, methods=METHODS, n_resamples=40, seed=7)
    a, b = (one[one.label_set == j].set_index("method")["debiased"] for j in ("j", "k"))
    assert np.allclose(pairs.set_index("method")["difference_debiased"], (a - b)[pairs["method"]], atol=TOL)


def test_one_topic_leaves_nothing_to_extrapolate():
    human, judge = frames(6, topics=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = pdeval.correlation_intervals(judge, human, methods=METHODS, n_resamples=20, interval="simex")
    assert np.allclose(out["debiased"], out["value"], atol=TOL) and (out["low"] == out["high"]).all()
