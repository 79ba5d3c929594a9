"""Tests of the bounds over the reference's near ties (pdeval.analysis.rankings.near_ties): the standard
errors, the resolved orders and the bound replicates against slow obvious loops; and a seeded
simulation with a known truth in which the paired difference of a cutoff coefficient is biased by
near ties, so the hull interval covers it significantly less than 95 % and the bounds interval
(interval="auto"'s choice for rank coefficients) does not."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import scipy.stats as st

import pdeval
from pdeval.analysis.rankings.batched import batched
from pdeval.analysis.rankings.intervals import auto_interval, bootstrap_table
from pdeval.analysis.rankings.near_ties import (NEAR, bound_replicates, bounded, gap_errors, near_ties,
                                          pair_bound_replicates, resolve)
from pdeval.errors import PdevalWarning

TOL = 1e-12


def test_gap_errors_are_the_standard_errors_of_the_differences():
    rng = np.random.default_rng(0)
    cube = rng.normal(size=(2, 9, 5))
    out = gap_errors(cube)
    for r in range(2):
        for i in range(5):
            for j in range(5):
                want = np.std(cube[r, :, i] - cube[r, :, j], ddof=1) / np.sqrt(9)
                assert abs(out[r, i, j] - want) < 1e-12


def slow_resolve(ref, score, errors, mask):
    """Walk the reference's order; start a run where a system lies more than NEAR standard errors
    below the run's first; hand each run's values out in the order of the score."""
    out = ref.copy()
    inside = [s for s in sorted(np.flatnonzero(mask), key=lambda s: -ref[s])]
    runs = [[inside[0]]]
    for below in inside[1:]:
        head = runs[-1][0]
        if ref[head] - ref[below] <= NEAR * errors[head, below]:
            runs[-1].append(below)
        else:
            runs.append([below])
    for run in runs:
        values = sorted((ref[s] for s in run), reverse=True)
        for s, v in zip(sorted(run, key=lambda s: (-score[s], s)), values):
            out[s] = v
    return out


def test_resolve_hands_each_run_of_near_ties_its_values_in_the_score_order():
    rng = np.random.default_rng(1)
    ref = np.round(rng.random((3, 4, 8)), 1)  # many ties and near ties
    score = rng.random((3, 4, 8))
    errors = np.abs(rng.normal(0.1, 0.05, (3, 8, 8)))
    errors = (errors + errors.transpose(0, 2, 1)) / 2
    mask = rng.random((3, 8)) < 0.8
    out = resolve(ref, near_ties(ref, errors, mask), score, mask)
    for g in range(3):
        for b in range(4):
            assert np.allclose(out[g, b], slow_resolve(ref[g, b], score[g, b], errors[g], mask[g]), atol=TOL)
    assert np.allclose(np.sort(out, axis=-1), np.sort(ref, axis=-1))  # the same values, handed out again


def boards(seed=2, runs=9, topics=12):
    rng = np.random.default_rng(seed)
    names, ids = [f"r{i}" for i in range(runs)], [f"q{t}" for t in range(topics)]
    human = pd.DataFrame({"run": np.repeat(names, topics), "query_id": np.tile(ids, runs), "measure": "AP",
                          "value": (rng.random((runs, topics)) + np.arange(runs)[:, None] / 2 / runs).ravel()})
    judges = pd.concat([human.assign(label_set=j, value=human["value"] + rng.normal(0, s, len(human)))
                        for j, s in [("a", 0.1), ("b", 0.3), ("c", 0.5)]], ignore_index=True)
    return human, judges


def test_bound_replicates_hold_the_replicates_and_match_a_loop_over_pairs():
    human, judges = boards()
    methods = ["tau_b@5", "tau_ap_b@5", "tau_b"]
    table = bootstrap_table(judges, human, None, methods=methods, by=None, system="run", missing="warn",
                            fill_value=0.0, n_resamples=50, interval="bounds", seed=3, where="test")
    assert table.bounded.all() and table.sides is not None
    tau = [2]  # resolving runs of near ties along (against) the judge maximises (minimises) tau-b on all systems
    assert (table.lower[..., tau] <= table.boot[..., tau] + TOL).all()
    assert (table.boot[..., tau] <= table.upper[..., tau] + TOL).all()
    sides = table.sides
    first, second = np.array([0, 0, 1]), np.array([1, 2, 2])
    low, high = pair_bound_replicates(**sides, first=first, second=second)
    for p, (a, b) in enumerate(zip(first, second)):
        for sign, got in ((-1.0, low), (1.0, high)):
            for r in range(0, 50, 7):
                ref = slow_resolve(sides["ref"][a, r], sign * (sides["est"][a, r] - sides["est"][b, r]),
                                   sides["errors"][a], sides["mask"][a] & sides["mask"][b])
                want = [batched(m, sides["est"][a, r][None], ref[None])[0]
                        - batched(m, sides["est"][b, r][None], ref[None])[0] for m in methods]
                assert np.allclose(got[p, r], want, atol=TOL)
    again = bound_replicates(sides["est"], sides["ref"], sides["errors"], sides["mask"], sides["mask_k"], methods)
    assert np.allclose(again[0], table.lower, atol=TOL) and np.allclose(again[1], table.upper, atol=TOL)
    # a cutoff sorts only the top of the resolved reference; the same as resolving it all
    whole = resolve(sides["ref"], sides["ties"], sides["est"], sides["mask"])
    want = np.stack([batched(m, sides["est"].reshape(-1, 9), whole.reshape(-1, 9)) for m in methods], axis=-1)
    fast, = bounded([sides["est"]], [(sides["mask"], sides["mask_k"])], sides["ref"], sides["ties"], sides["est"],
                    sides["mask"], methods)
    assert np.allclose(fast.reshape(-1, 3), want, atol=TOL) and np.allclose(fast, table.upper, atol=TOL)


def test_the_bounds_interval_is_the_hull_widened_to_the_bounds_quantiles_and_auto_takes_it_for_rank_coefficients():
    human, judges = boards()
    methods = ["tau_b@5", "tau_b", "pearson", "pearson@5"]
    options = dict(methods=methods, n_resamples=200, seed=4)
    hull = pdeval.correlation_intervals(judges, human, interval="hull", **options)
    bounds = pdeval.correlation_intervals(judges, human, interval="bounds", **options)
    table = bootstrap_table(judges, human, None, methods=methods, by=None, system="run", missing="warn",
                            fill_value=0.0, n_resamples=200, interval="bounds", seed=4, where="test")
    low = np.nanquantile(table.lower, 0.025, axis=1).ravel()
    high = np.nanquantile(table.upper, 0.975, axis=1).ravel()
    assert np.allclose(bounds["low"], np.minimum(hull["low"], low), atol=TOL)
    assert np.allclose(bounds["high"], np.maximum(hull["high"], high), atol=TOL)
    assert [auto_interval(m) for m in methods] == ["bounds", "bounds", "hull", "hull"]
    head = ["tau_ap_b", "tau_gap", "tau_ap", "tau_ap_b@10", "spearman", "tau_a", "rms@10", "rms"]
    assert [auto_interval(m) for m in head] == ["bounds"] * 6 + ["hull"] * 2
    auto = pdeval.correlation_intervals(judges, human, **options)
    rank = auto.method.str.startswith("tau_b").to_numpy()
    assert (auto.loc[rank, "interval"] == "bounds").all() and (auto.loc[~rank, "interval"] == "hull").all()
    assert np.allclose(auto.loc[rank, ["low", "high"]], bounds.loc[rank, ["low", "high"]], atol=TOL)
    assert np.allclose(auto.loc[~rank, ["low", "high"]], hull.loc[~rank, ["low", "high"]], atol=TOL)
    pairs = pdeval.correlation_intervals(judges, human, pairs=True, **options)
    inside = (pairs["p_value"] < 0.05) == ((pairs["low"] > 0) | (pairs["high"] < 0))
    assert inside.all()  # the p-value inverts the same interval
    assert (pairs["interval"] == pairs["method"].map(auto_interval)).all()


def near_tie_boards(rng, names, topics, noise, mu, means):
    error = rng.normal(0, noise, (topics, mu.size))
    frames = [pd.DataFrame({"run": np.tile(names, topics), "query_id": np.repeat(np.arange(topics), mu.size).astype(str),
                            "label_set": name, "measure": "m", "value": (v + e).ravel()})
              for name, v, e in (("human", mu, error),
                                 *((j, v, 0.5 * error + rng.normal(0, noise, error.shape)) for j, v in means.items()))]
    return pd.concat(frames, ignore_index=True)


def test_near_ties_bias_the_difference_of_a_cutoff_coefficient_and_the_bounds_cover_it():
    # four near-tied pairs in the human top 8 (gaps of 0.4 standard errors): judge A orders each as the
    # population does, judge B the other way; the sample and every resample flip them at random, so
    # the difference A - B is biased towards 0 by about two of its standard errors
    mu = np.array([1.00, 0.99, 0.90, 0.89, 0.80, 0.79, 0.70, 0.69, 0.50, 0.45, 0.40, 0.35])
    first = np.arange(0, 8, 2)
    means = {"A": mu + np.isin(np.arange(mu.size), first) * 0.05, "B": mu - np.isin(np.arange(mu.size), first) * 0.06}
    truth = batched("tau_b@8", means["A"][None], mu[None])[0] - batched("tau_b@8", means["B"][None], mu[None])[0]
    names = np.array([f"s{i:02d}" for i in range(mu.size)])
    replications, rng = 40, np.random.default_rng(3)
    hits = {"hull": 0, "auto": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        for r in range(replications):
            frame = near_tie_boards(rng, names, 30, 0.1, mu, means)
            for interval in hits:
                out = pdeval.compare_judges(frame, "human", methods="tau_b@8", n_resamples=200, seed=r,
                                            interval=interval, pairs=True)
                hits[interval] += int(out["low"].iloc[0] <= truth <= out["high"].iloc[0])
    floor = st.binom.ppf(0.001, replications, 0.95)  # fewer hits: below 95 % beyond binomial noise
    assert hits["hull"] < floor <= hits["auto"], hits
