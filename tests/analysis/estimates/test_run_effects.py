"""estimate(spread=, shift=): the run effect on the log-odds of the relevant share of unjudged documents.

Oracles: the definition (one z per run and resample, shared by all its rows; the logit-normal
mean checked by Monte Carlo with a tolerance of four standard errors), Fröbe et al.'s bootstrap for
spread=0 (pinned values of the implementation before the run effect existed), and the engine's
value for complete judgments.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.special import expit, logit

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


BASE = np.array([[0.8, 0.1, 0.1], [0.6, 0.3, 0.1], [0.9, 0.05, 0.05], [0.5, 0.25, 0.25]])


def test_one_z_per_run_and_resample_shared_by_its_rows():
    run_of_row = np.array([0, 0, 1, 1])
    effect = run_effects.with_spread(BASE, run_of_row, 0.5, -0.3)
    drawn = effect.draw(2000, np.random.default_rng(0))
    share = 1.0 - BASE[:, 0]
    centre = logit(share) - 0.3
    z = (logit(drawn[:, :, 1:].sum(axis=2)) - centre - run_effects.centring(centre, 0.5)) / 0.5
    np.testing.assert_allclose(z[:, 0], z[:, 1], atol=1e-8)  # one z per run and resample
    np.testing.assert_allclose(z[:, 2], z[:, 3], atol=1e-8)
    assert abs(np.corrcoef(z[:, 0], z[:, 2])[0, 1]) < 0.1  # the runs' draws are independent
    assert abs(z.std() - 1.0) < 0.05 and abs(z.mean()) < 0.05
    # the same z moves the other threshold, P(grade >= 2) of the μ-shifted prior (the relevant grades in
    # their proportions), on the log-odds scale; every row sums to 1
    top = logit(BASE[:, 2] * expit(logit(share) - 0.3) / share)
    z_top = (logit(drawn[:, :, 2]) - top - run_effects.centring(top, 0.5)) / 0.5
    np.testing.assert_allclose(z_top, z, atol=1e-8)
    np.testing.assert_allclose(drawn.sum(axis=2), 1.0, atol=1e-12)


def test_a_run_that_meets_fewer_relevant_documents_meets_lower_grades_too():
    """Every threshold moves by one z: for z < 0 the top grade's part of the relevant share falls
    (a proportional-odds shift), for z > 0 it rises; μ alone keeps the relevant grades' proportions;
    with one relevant grade the model is the binary one."""
    base = np.array([[0.4, 0.3, 0.3]])
    low = run_effects.shifted(base, 0.0, 0.0, np.array([-2.0]))
    high = run_effects.shifted(base, 0.0, 0.0, np.array([2.0]))
    top_part = lambda p: p[..., 2] / p[..., 1:].sum(axis=-1)  # noqa: E731
    assert top_part(low)[0] < 0.5 < top_part(high)[0]
    np.testing.assert_allclose(low[0, 1:].sum(), expit(logit(0.6) - 2.0))
    np.testing.assert_allclose(low[0, 2], expit(logit(0.3) - 2.0))
    moved = run_effects.shifted(base, -1.0, 0.0, 0.0)
    np.testing.assert_allclose(moved[0, 1:], base[0, 1:] * expit(logit(0.6) - 1.0) / 0.6)
    binary = run_effects.shifted(np.array([[0.4, 0.6]]), -0.5, 1.0, np.array([0.7]))
    want = expit(logit(0.6) - 0.5 + run_effects.centring(np.array([logit(0.6) - 0.5]), 1.0) + 0.7)
    np.testing.assert_allclose(binary[0], [1 - want[0], want[0]])


@pytest.mark.parametrize("sigma", [0.5, 2.0])
def test_every_cumulative_share_has_the_mean_it_claims(sigma):
    """E[P'(grade >= g)] = P_μ(grade >= g) at every threshold, P_μ the prior with its relevant share moved
    to expit(logit s + μ) in the grades' proportions: Monte Carlo within 4 SE."""
    effect = run_effects.with_spread(BASE, np.arange(len(BASE)), sigma, -0.5)
    drawn = effect.draw(40000, np.random.default_rng(3))
    tails = np.cumsum(drawn[:, :, :0:-1], axis=2)[:, :, ::-1]  # P'(>= 1), P'(>= 2)
    share = 1.0 - BASE[:, 0]
    prior = BASE[:, 1:] * (expit(logit(share) - 0.5) / share)[:, None]
    want = np.cumsum(prior[:, ::-1], axis=1)[:, ::-1]
    se = tails.std(axis=0) / np.sqrt(len(tails))
    assert (np.abs(tails.mean(axis=0) - want) < 4 * se).all(), (tails.mean(axis=0), want, se)


@pytest.mark.parametrize("sigma", [0.5, 1.0, 2.0])
@pytest.mark.parametrize("mu", [0.0, -1.0])
def test_the_drawn_share_has_the_mean_it_claims(mu, sigma):
    """E[s'] = expit(logit s + μ): the prior's share for μ = 0 (mean-preserving), Monte Carlo within 4 SE."""
    shares = np.array([1e-4, 0.02, 0.2, 0.5, 0.8, 0.97])
    base = np.stack([1.0 - shares, shares], axis=1)
    effect = run_effects.with_spread(base, np.arange(len(shares)), sigma, mu)
    drawn = effect.draw(40000, np.random.default_rng(1))[:, :, 1]
    want = expit(logit(shares) + mu)
    se = drawn.std(axis=0) / np.sqrt(len(drawn))
    assert (np.abs(drawn.mean(axis=0) - want) < 4 * se).all(), (drawn.mean(axis=0), want, se)


def test_no_probability_leaves_zero_one():
    base = np.array([[1.0, 0.0, 0.0], [0.0, 0.5, 0.5], [1 - 1e-12, 5e-13, 5e-13], [1e-12, 0.5 - 5e-13, 0.5],
                     [0.3, 0.3, 0.4]])
    for mu in (-3.0, 0.0, 3.0):
        for sigma in (0.0, 1.0, 4.0):
            effect = run_effects.with_spread(base, np.array([0, 0, 1, 1, 2]), sigma, mu)
            drawn = effect if isinstance(effect, np.ndarray) else effect.draw(500, np.random.default_rng(2))
            assert np.isfinite(drawn).all() and (drawn >= 0).all() and (drawn <= 1).all()
            np.testing.assert_allclose(drawn.sum(axis=-1), 1.0, atol=1e-12)
            np.testing.assert_array_equal(drawn[..., 0, :], np.broadcast_to(base[0], drawn[..., 0, :].shape))
            np.testing.assert_allclose(drawn[..., 1, 0], 0.0, atol=1e-15)  # s = 0 and s = 1 stay


def test_the_centring_is_odd_and_tends_to_the_lognormal_limits():
    a = np.array([-np.inf, -60.0, -3.0, 0.0, 3.0, 60.0, np.inf])
    c = run_effects.centring(a, 1.2)
    np.testing.assert_allclose(c, -c[::-1], atol=1e-12)
    np.testing.assert_allclose(c[[0, 1, -1]], [-0.72, -0.72, 0.72], atol=1e-6)
    assert c[3] == 0.0 and (run_effects.centring(a, 0.0) == 0).all()


def test_spread_zero_is_froebe_unchanged():
    """Pinned values of the bootstrap before the run effect existed (same seed and draws)."""
    run, qrels = shallow(seed=5, n_runs=3, n_topics=6)
    got = pdeval.estimate(run, qrels, ["P@10", "nDCG@10", "AP"], prior="both", spread=0.0, n_resamples=50, seed=3,
                          per="run", progress=False)
    want = [[0.274666666667, 0.20375, 0.35], [0.367855800382, 0.285159577984, 0.456708070211],
            [0.228319560782, 0.15620974663, 0.301651342829], [0.335, 0.25, 0.425833333333],
            [0.363917264035, 0.269321116977, 0.464118285775], [0.226233977351, 0.169826558826, 0.291930752394],
            [0.346, 0.224166666667, 0.429583333333], [0.427729574333, 0.329743558282, 0.52195156343],
            [0.26837874694, 0.190821747449, 0.335871405858]]
    np.testing.assert_allclose(got[["estimate", "low", "high"]].to_numpy(), want, atol=1e-11)
    topic = pdeval.estimate(run, qrels, ["P@10", "nDCG@10"], prior="both", spread=0.0, n_resamples=50, seed=3,
                            progress=False)
    np.testing.assert_allclose(topic[["estimate", "low", "high"]].to_numpy().sum(axis=0),
                               [12.6910158325, 6.0037504491, 20.1159649101], atol=1e-8)
    assert got.attrs["spread"] == 0.0 and got.attrs["shift"] == 0.0
    base = np.ones((2, 2)) / 2
    assert run_effects.with_spread(base, np.zeros(2, int), 0.0, 0.0) is base
    unit = UnitEffect(np.full((3, 2), 0.5), np.zeros(3, int), 1, np.ones((2, 2)), 0.3)
    assert run_effects.with_spread(unit, unit.run_of_row, 0.0, 0.0) is unit


def test_the_spread_widens_the_interval_and_the_shift_moves_the_estimate():
    run, qrels = shallow()
    got = {(mu, sigma): pdeval.estimate(run, qrels, "P@10", spread=sigma, shift=mu, n_resamples=300, seed=2,
                                        per="run", progress=False)
           for mu, sigma in ((0.0, 0.0), (0.0, 1.0), (-1.0, 0.0))}
    width = {k: (v["high"] - v["low"]).to_numpy() for k, v in got.items()}
    assert (width[(0.0, 1.0)] > 1.5 * width[(0.0, 0.0)]).all()
    # σ keeps the estimate (P@10 is linear in the labels): within the draws' noise
    np.testing.assert_allclose(got[(0.0, 1.0)]["estimate"], got[(0.0, 0.0)]["estimate"], atol=0.03)
    assert (got[(-1.0, 0.0)]["estimate"] < got[(0.0, 0.0)]["estimate"] - 0.02).all()
    assert (got[(-1.0, 0.0)]["estimate"] >= got[(-1.0, 0.0)]["value"]).all()


def test_the_run_effect_does_not_average_away_over_topics():
    """σ = 0: the width of a run mean shrinks like 1/√topics; with the run effect it stays."""
    ratios = {}
    for sigma in (0.0, 1.0):
        width = []
        for topics in (10, 80):
            run, qrels = shallow(seed=3, n_runs=2, n_topics=topics)
            got = pdeval.estimate(run, qrels, "P@10", spread=sigma, shift=0.0, n_resamples=400, seed=1, per="run",
                                  progress=False)
            width.append(float((got["high"] - got["low"]).mean()))
        ratios[sigma] = width[1] / width[0]
    assert ratios[0.0] < 0.5 and ratios[1.0] > 0.6


def test_identical_seed_identical_output():
    run, qrels = shallow(n_runs=3, n_topics=5)
    pooled = ["r0", "r1"]
    for options in ({}, {"spread": 0.7, "shift": -0.4}, {"prior": "unique", "pool_depth": 10, "pooled": pooled}):
        one = pdeval.estimate(run, qrels, ["P@10", "nDCG@10"], n_resamples=60, seed=7, progress=False, **options)
        two = pdeval.estimate(run, qrels, ["P@10", "nDCG@10"], n_resamples=60, seed=7, progress=False, **options)
        pd.testing.assert_frame_equal(one, two)
        assert one.attrs == two.attrs


def test_complete_judgments_keep_zero_width_at_any_setting():
    run, qrels = shallow(n_runs=2, n_topics=3)
    pairs = run[["query_id", "doc_id"]].drop_duplicates()
    full = pairs.merge(qrels, how="left").fillna({"relevance": 0}).astype({"relevance": int})
    got = pdeval.estimate(run, full, ["P@10", "AP"], spread=2.0, shift=-1.0, n_resamples=20, per="run")
    assert (got["low"] == got["high"]).all()
    np.testing.assert_allclose(got["estimate"], got["value"], atol=1e-12)


def test_each_setting_carries_its_documented_coverage():
    """The default ('auto') carries what the leave-one-collection-out study measured for its prior
    on every held-out collection and on the collections it never saw, and claims to reach the
    target only if every one of them does; any other setting claims nothing."""
    run, qrels = shallow(n_runs=2, n_topics=3)
    default = pdeval.estimate(run, qrels, "P@10", n_resamples=20, per="run")
    prior = default.attrs["prior"]
    mu, sigma = run_effects.SETTINGS[prior]
    assert (default.attrs["shift"], default.attrs["spread"]) == (mu, sigma)
    held, unseen = run_effects.COVERAGE[prior], run_effects.UNSEEN[prior]
    records = default.attrs["coverage"]
    assert held and unseen and len(records) == len(held) + len(unseen)
    for check, rows in (("held out", held), ("never seen", unseen)):
        assert [r for r in records if r["check"] == check] == [
            dict(zip(("collection", "measure", "coverage", "runs"), row), check=check) for row in rows]
    assert default.attrs["coverage_reached"] == all(row[2] >= 0.9 for row in held + unseen)
    assert {row[0] for row in held} == {"CLEF 2015", "CLEF 2016", "CLEF 2018", "TREC DL 2021"}
    assert not {row[0] for row in unseen} & {row[0] for row in held}  # never seen: no study collection
    for rows in (held, unseen):
        assert {row[1] for row in rows} == {"P@10", "nDCG@10", "AP@10", "RBP@10"}
    for other in ({"spread": 0.1234}, {"spread": "auto", "shift": mu + 0.5}, {"spread": 0.0, "shift": 0.0}):
        got = pdeval.estimate(run, qrels, "P@10", n_resamples=20, per="run", **other)
        assert got.attrs["coverage"] == [] and got.attrs["coverage_reached"] is False


def test_spread_and_shift_are_refused_outside_the_bootstrap():
    run, qrels = shallow(n_runs=2, n_topics=3)
    for option in ({"spread": 0.5}, {"shift": -0.5}):
        with pytest.raises(pdeval.errors.PdevalError, match=next(iter(option))):
            pdeval.estimate(run, qrels, "P@10", method="labels", automatic=qrels, **option)
    with pytest.raises(pdeval.errors.PdevalError, match="spread"):
        pdeval.estimate(run, qrels, "P@10", spread=-1.0)


def test_each_runs_z_is_a_latin_hypercube_sample_of_the_normal():
    """One draw per equiprobable stratum in every column (so the resamples' mean and quantiles of z
    hardly vary), each draw N(0, 1) across columns (a Kolmogorov–Smirnov test, seeded)."""
    from scipy import stats

    z = run_effects.stratified_normal(400, 300, np.random.default_rng(5))
    strata = np.floor(stats.norm.cdf(z) * 400).astype(int)
    for column in strata.T:
        np.testing.assert_array_equal(np.sort(column), np.arange(400))
    assert stats.kstest(z[7], "norm").pvalue > 0.01  # the 8th resample's draws over 300 runs
    assert np.abs(z.mean(axis=0)).max() < 0.01  # iid: sd of a mean of 400 normals is 0.05
    assert np.isfinite(z).all()
    assert not np.array_equal(strata[:, 0], strata[:, 1])  # the strata come in a random order per run
