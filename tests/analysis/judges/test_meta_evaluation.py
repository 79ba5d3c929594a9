"""Tests of the meta-evaluation of judges: the coefficients, missing-run policies, top-k and per-topic
correlations equal the TREC Auto-Judge meta-evaluation (autojudge-evaluate 1.1.0, test extra) to
1e-9, on synthetic leaderboards and on TREC DL 2021 (NIST vs GPT-4 labels); compare_judges."""

from __future__ import annotations

import glob
import warnings

import numpy as np
import pandas as pd
import pytest

import pdeval
from autojudge_oracle import autojudge, leaderboard_correlations
from locations import REPO
from pdeval.errors import PdevalError, SchemaError

TOL = 1e-9
DL21 = REPO.parent / "shared" / "data" / "trec-dl21"

#: pdeval's method names and Auto-Judge's
NAMES = {"tau_b": "kendall", "pearson": "pearson", "spearman": "spearman", "tau_ap_b": "tauap_b",
         "tau_gap": "tau_gap", "tau_b@5": "kendall@5", "tau_ap_b@5": "tauap_b@5", "tau_gap@5": "tau_gap@5",
         "spearman@5": "spearman@5"}
#: pdeval's missing-run policies and Auto-Judge's
POLICIES = {"warn": "warn", "skip": "skip", "fill": "default"}

needs_oracle = pytest.mark.skipif(autojudge() is None, reason="autojudge-evaluate (test extra) is the oracle")


def per_topic(runs, topics, rng, ties=False, measure="m"):
    """A per-topic result frame of ``runs`` x ``topics`` (values on a grid of 1/4 with ``ties``)."""
    base = rng.random(len(runs))
    values = base[:, None] + 0.3 * rng.random((len(runs), len(topics)))
    if ties:
        values = np.round(values * 4) / 4
    return pd.DataFrame({"run": np.repeat(runs, len(topics)), "query_id": np.tile(topics, len(runs)),
                         "measure": measure, "value": values.ravel()})


def ours(judge, truth, method, missing, **options):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pdeval.rank_correlation(judge, truth, methods=method, missing=missing, **options)
    return out


def theirs(truth, judge, method, policy, per_topic=False):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return leaderboard_correlations(truth, judge, [NAMES[method]], POLICIES[policy], per_topic=per_topic)


def close(a, b):
    return (np.isnan(a) and np.isnan(b)) or abs(a - b) <= TOL


@needs_oracle
@pytest.mark.parametrize("policy", sorted(POLICIES))
@pytest.mark.parametrize("ties", [False, True])
def test_every_coefficient_and_policy_equals_autojudge(policy, ties):
    rng = np.random.default_rng(17 + ties)
    topics = [f"t{i}" for i in range(6)]
    for trial in range(4):
        runs = np.array([f"r{i:02d}" for i in range(12)])
        truth = per_topic(runs, topics, rng, ties)
        judge = per_topic(runs, topics, rng, ties)
        # runs on one side only: two judged runs the truth lacks, two truth runs the judge lacks
        truth = truth[~truth.run.isin(runs[[1, 7]])]
        judge = pd.concat([judge[~judge.run.isin(runs[[3, 10]])], per_topic(np.array(["x1", "x2"]), topics, rng, ties)])
        for method in NAMES:
            got = ours(judge, truth, method, policy)["value"].item()
            want = theirs(truth, judge, method, policy)[NAMES[method]]
            assert close(got, want), (trial, method, policy, got, want)


@needs_oracle
def test_the_error_policy_raises_on_both_sides():
    rng = np.random.default_rng(3)
    topics = ["a", "b", "c"]
    truth = per_topic(np.array(["r1", "r2", "r3", "r4"]), topics, rng)
    judge = truth[truth.run != "r4"]
    with pytest.raises(SchemaError, match="lack a result value"):
        ours(judge, truth, "tau_b", "error")
    with pytest.raises(ValueError, match="Run ID mismatch"):
        leaderboard_correlations(truth, judge, ["kendall"], "error")
    # the same runs on both sides: no error, equal values
    assert close(ours(truth, truth, "tau_gap", "error")["value"].item(),
                 leaderboard_correlations(truth, truth, ["tau_gap"], "error")["tau_gap"])


@needs_oracle
@pytest.mark.parametrize("method", ["tau_b", "tau_ap_b", "tau_gap", "spearman"])
def test_per_topic_correlations_equal_autojudge(method):
    rng = np.random.default_rng(5)
    runs, topics = np.array([f"r{i}" for i in range(8)]), [f"t{i}" for i in range(5)]
    truth, judge = per_topic(runs, topics, rng, ties=True), per_topic(runs, topics, rng, ties=True)
    got = ours(judge, truth, method, "skip", per_topic=True).set_index("query_id")["value"]
    want = theirs(truth, judge, method, "skip", per_topic=True)
    assert sorted(got.index) == sorted(want)
    for topic, values in want.items():
        assert close(got[topic], values[NAMES[method]]), (topic, got[topic], values)


@pytest.fixture(scope="module")
def dl21_boards():
    if not DL21.is_dir():
        pytest.skip(f"TREC DL 2021 data not found: {DL21} (the shared data folder sits next to the repository)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = pdeval.read_run(sorted(glob.glob(str(DL21 / "runs" / "*"))))
        sets = {"human": pdeval.read_qrels(DL21 / "qrels-pass.dl21.human.txt"),
                "gpt4": pdeval.read_qrels(DL21 / "gpt4_judgments" / "gpt4_judgments_dl2021_processed.txt")}
        return pdeval.leaderboards(run, sets, ["nDCG@10", "AP"])


@needs_oracle
@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_dl21_nist_vs_gpt4_equals_autojudge(dl21_boards, policy):
    runs = sorted(dl21_boards.run.unique())
    assert len(runs) == 63
    names = {**NAMES, "tau_b@10": "kendall@10", "tau_gap@10": "tau_gap@10"}
    for measure in ["nDCG@10", "AP"]:
        part = dl21_boards[dl21_boards.measure == measure].assign(measure="m")
        truth = part[(part.label_set == "human") & ~part.run.isin(runs[5:8])].drop(columns="label_set")
        judge = part[(part.label_set == "gpt4") & ~part.run.isin(runs[20:22])].drop(columns="label_set")
        # one call for the plain coefficients, one for the cutoffs (which restrict Auto-Judge to shared runs)
        for methods in ([m for m in names if "@" not in m], [m for m in names if "@" in m]):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                want = leaderboard_correlations(truth, judge, [names[m] for m in methods], POLICIES[policy])
            got = ours(judge, truth, methods, policy).set_index("method")["value"]
            for method in methods:
                assert close(got[method], want[names[method]]), (measure, method, policy, got[method], want)


def test_compare_judges_values_are_those_of_compare_leaderboards(dl21_boards):
    methods = ["tau_b", "tau_ap_b", "tau_gap", "tau_b@10"]
    table = pdeval.compare_judges(dl21_boards, "human", methods=methods, n_resamples=200, seed=1)
    plain = pdeval.compare_leaderboards(dl21_boards, "human", methods=methods, k=[10])
    merged = table.merge(plain, on=["measure", "label_set", "method"], suffixes=("", "_plain"))
    assert len(merged) == 2 * len(methods)
    assert np.allclose(merged["value"], merged["value_plain"], atol=1e-12, rtol=0)
    assert ((merged["low"] <= merged["value"] + 1e-12) | (merged["method"] == "tau_b@10")).all()
    assert (merged["low"] <= merged["high"]).all() and (merged["n_topics"] == 53 + 424).all()


def test_compare_judges_pairs_p_value_agrees_with_the_interval():
    rng = np.random.default_rng(4)
    runs, topics = np.array([f"r{i:02d}" for i in range(15)]), [f"t{i}" for i in range(30)]
    human = per_topic(runs, topics, rng)
    sets = [human.assign(label_set="human")]
    for name, noise, bias in [("a", 0.02, 0.0), ("b", 0.05, 0.0), ("c", 0.3, 0.3), ("d", 0.3, 0.3)]:
        # c and d are poor also over all topics: a bias per run (topic noise alone would average out)
        offset = np.repeat(rng.normal(0, bias, len(runs)), len(topics))
        sets.append(human.assign(label_set=name, value=human["value"] + offset + rng.normal(0, noise, len(human))))
    boards = pd.concat(sets, ignore_index=True)
    pairs = pdeval.compare_judges(boards, "human", methods=["tau_b", "pearson"], n_resamples=400, seed=2, pairs=True)
    assert len(pairs) == 6 * 2
    assert np.allclose(pairs["difference"], pairs["value"] - pairs["value_other"])
    excluded = (pairs["low"] > 0) | (pairs["high"] < 0)
    assert ((pairs["p_value"] < 0.05) == excluded).all()
    near = pairs[(pairs.label_set == "a") & (pairs.label_set_other == "c")]
    assert (near["p_value"] < 0.05).all()  # a good judge against a poor one


def test_meta_evaluation_refuses_old_words():
    boards = pd.DataFrame({"run": ["a", "b", "a", "b"], "query_id": "1", "label_set": ["h", "h", "j", "j"],
                           "measure": "AP", "value": [0.1, 0.2, 0.3, 0.4]})
    with pytest.raises(PdevalError, match="'kendall'.*'tau_b'"):
        pdeval.compare_judges(boards, "h", methods="kendall")
    with pytest.raises(PdevalError, match="'default' is now called 'fill'"):
        pdeval.compare_leaderboards(boards, "h", missing="default")


def test_compare_judges_within_named_groups_is_the_coefficient_of_each_group_alone():
    """group=: the coefficient within each named group of runs (e.g. runs re-ranked by the judging
    model against the others) equals rank_correlation on that group's runs alone; a run without a
    group is refused by name."""
    rng = np.random.default_rng(4)
    runs = [f"r{i}" for i in range(10)]
    human = pd.DataFrame({"run": np.repeat(runs, 6), "query_id": np.tile([f"q{t}" for t in range(6)], 10),
                          "measure": "AP", "value": rng.random(60)})
    boards = pd.concat([human.assign(label_set="human"),
                        human.assign(label_set="llm", value=human["value"] + rng.normal(0, 0.2, 60))])
    group = {r: "reranked" if i % 2 else "other" for i, r in enumerate(runs)}
    got = pdeval.compare_judges(boards, "human", methods=["tau_b", "pearson"], n_resamples=50, group=group)
    assert list(got.columns[:3]) == ["measure", "label_set", "group"] and set(got["group"]) == {"reranked", "other"}
    for name in ("reranked", "other"):
        members = [r for r in runs if group[r] == name]
        part = boards[boards.run.isin(members)]
        alone = pdeval.rank_correlation(part[part.label_set == "llm"], part[part.label_set == "human"].drop(columns="label_set"),
                                        methods=["tau_b", "pearson"])
        mine = got[got.group == name].set_index("method")["value"]
        assert np.allclose(mine.loc[alone["method"]].to_numpy(), alone["value"].to_numpy(), atol=1e-12)
    with pytest.raises(pdeval.errors.SchemaError, match=r"1 system\(s\) have no group in group= \(\['r9'\]\)"):
        pdeval.compare_judges(boards, "human", n_resamples=20, group={r: "a" for r in runs[:-1]})
