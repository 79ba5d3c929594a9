"""Adjudication strategies: every judging order equals a slow, obviously correct loop.

The reference loops below judge one topic at a time with Python lists and dicts, straight from
the rules in the module documentation of :mod:`pdeval.judgments.adjudication`; only Thompson
sampling shares the lockstep schedule of random draws (one Beta draw per topic and run per step,
over all topics) so that both consume the same random numbers.
"""

from __future__ import annotations

import glob
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import PdevalError
from pdeval.judgments.adjudication import STRATEGIES, budget_qrels, judging_order
from locations import REPO

CLEF = REPO.parent / "shared" / "data" / "clef2015-chs-task2"


# ---------------------------------------------------------------------------------------------
# the reference


def ranked_lists(run: pd.DataFrame, depth: int) -> dict:
    """{topic: {run: [docs in trec_eval order]}}: score descending, doc id descending."""
    lists: dict = {}
    for (name, topic), rows in run.groupby(["run", "query_id"]):
        items = sorted(zip(rows["score"], rows["doc_id"]), key=lambda x: x[1], reverse=True)
        items = sorted(items, key=lambda x: -x[0])  # stable: doc id descending among equal scores
        lists.setdefault(topic, {})[name] = [d for _, d in items][:depth]
    return lists


def harmonic(n: int) -> float:
    total = 0.0
    for i in range(1, n + 1):
        total += 1.0 / i
    return total


def static_reference(lists: dict, strategy: str, rrf_k=60.0, rbp_p=0.8, scores=None) -> list:
    names = sorted(lists)
    docs = sorted({d for name in names for d in lists[name]})
    if strategy == "depth":
        out = []
        for i in range(max(len(v) for v in lists.values())):
            for name in names:
                if i < len(lists[name]) and lists[name][i] not in out:
                    out.append(lists[name][i])
        return out
    if strategy == "take":
        def key(d):
            ranks = [lists[n].index(d) + 1 for n in names if d in lists[n]]
            return (min(ranks), -len(ranks), d)
        return sorted(docs, key=key)
    total = {d: 0.0 for d in docs}
    for name in names:
        ranked = lists[name]
        if strategy == "combsum":
            s = scores[name]
            low, high = min(s), max(s)
        for i, d in enumerate(ranked):
            r = i + 1
            if strategy == "borda":
                total[d] += float(len(ranked) - r + 1)
            elif strategy == "rrf":
                total[d] += 1.0 / (rrf_k + r)
            elif strategy == "rbp":
                total[d] += (1 - rbp_p) * rbp_p ** (r - 1.0)
            else:
                total[d] += (s[i] - low) / (high - low) if high > low else 1.0
    return sorted(docs, key=lambda d: (-round(total[d], 12), d))  # equal to 12 decimals: a tie


def mtf_reference(lists: dict, labels: dict, limit: int) -> list:
    names = sorted(lists)
    priority = {n: 0 for n in names}
    judged: list = []
    while len(judged) < limit:
        open_runs = [n for n in names if any(d not in judged for d in lists[n])]
        if not open_runs:
            break
        best = max(priority[n] for n in open_runs)
        name = [n for n in open_runs if priority[n] == best][0]
        doc = [d for d in lists[name] if d not in judged][0]
        judged.append(doc)
        if labels.get(doc) != 1:
            priority[name] -= 1
    return judged


def prefix_stats(ranked: list, judged: list, labels: dict) -> tuple[int, int]:
    """(relevant, judged) over the longest prefix of the list whose documents are all judged."""
    seen = rel = 0
    for d in ranked:
        if d not in judged:
            break
        seen += 1
        rel += labels.get(d) == 1
    return rel, seen


def bandit_reference(lists: dict, labels: dict, limits: dict, strategy: str, seed: int) -> dict:
    """MaxMean and Thompson over all topics, one step at a time (topics looped in Python)."""
    rng = np.random.default_rng(seed)
    topics = sorted(lists)
    names = sorted({n for t in topics for n in lists[t]})
    judged = {t: [] for t in topics}
    while True:
        rel = np.zeros((len(topics), len(names)))
        seen = np.zeros((len(topics), len(names)))
        for i, t in enumerate(topics):
            for j, n in enumerate(names):
                rel[i, j], seen[i, j] = prefix_stats(lists[t].get(n, []), judged[t], labels.get(t, {}))
        if strategy == "thompson":
            priority = rng.beta(rel + 1.0, seen - rel + 1.0)
        else:
            priority = (rel + 1.0) / (seen + 2.0)
        moved = False
        for i, t in enumerate(topics):
            open_runs = [j for j, n in enumerate(names) if any(d not in judged[t] for d in lists[t].get(n, []))]
            if len(judged[t]) >= limits[t] or not open_runs:
                continue
            best = max(priority[i, j] for j in open_runs)
            j = [j for j in open_runs if priority[i, j] == best][0]
            judged[t].append([d for d in lists[t][names[j]] if d not in judged[t]][0])
            moved = True
        if not moved:
            return judged


def hedge_reference(lists: dict, labels: dict, limit: int, names: list, beta=0.1) -> list:
    docs = sorted({d for n in lists for d in lists[n]})
    weight = np.full(len(names), 1.0 / len(names))

    def value(name, d):
        ranked = lists.get(name, [])
        if d not in ranked:
            return 0.0
        n = len(ranked)
        return (harmonic(n) - harmonic(ranked.index(d))) / harmonic(n)

    judged: list = []
    while len(judged) < min(limit, len(docs)):
        best, pick = None, None
        for d in docs:
            if d in judged:
                continue
            score = 0.0
            for j, name in enumerate(names):
                if d in lists.get(name, []):
                    score += weight[j] * value(name, d)
            score = round(score, 12)  # equal to 12 decimals: a tie, the first doc id wins
            if best is None or score > best:
                best, pick = score, d
        judged.append(pick)
        relevant = labels.get(pick) == 1
        loss = np.array([1.0 - value(n, pick) if relevant else value(n, pick) for n in names])
        weight = weight * beta**loss
        weight = weight / weight.sum()
    return judged


def test_fused_ties_are_not_float_noise():
    # d01 and d02 have ranks (4, 1, 3) and (3, 4, 1) in the three runs: the same RBP weight, which the
    # array sums had made differ in the last bit (d02 first); a tie, broken by doc id
    lists = {"r0": ["d00", "d03", "d02", "d01"], "r1": ["d01", "d04", "d03", "d02"],
             "r2": ["d02", "d04", "d01", "d03"]}
    rows = [(name, "q0", d, float(10 - i)) for name, docs in lists.items() for i, d in enumerate(docs)]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame({"query_id": ["q0"], "doc_id": ["d00"], "relevance": [0]})
    order = judging_order(run, qrels, "rbp", pool_depth=4)
    docs = order.sort_values("order")["doc_id"].tolist()
    assert docs.index("d01") < docs.index("d02")


def reference(run: pd.DataFrame, qrels: pd.DataFrame, strategy: str, budget, depth: int, seed: int) -> dict:
    lists = ranked_lists(run.loc[run["query_id"].isin(set(qrels["query_id"]))], depth)
    labels: dict = {}
    for t, d, rel in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False):
        if rel >= 0:
            labels.setdefault(t, {})[d] = int(rel >= 1)
    names = sorted(run["run"].unique())
    limits = {t: budget if budget is not None else 10**9 for t in lists}
    if strategy in ("maxmean", "thompson"):
        return bandit_reference(lists, labels, limits, strategy, seed)
    out = {}
    for t, by_run in lists.items():
        if strategy == "mtf":
            out[t] = mtf_reference(by_run, labels.get(t, {}), limits[t])
        elif strategy == "hedge":
            present = [n for n in sorted({n for tt in lists for n in lists[tt]})]
            out[t] = hedge_reference(by_run, labels.get(t, {}), limits[t], present)
        else:
            scores = None
            if strategy == "combsum":
                scores = {}
                for name in by_run:
                    rows = run[(run["run"] == name) & (run["query_id"] == t)]
                    s = sorted(rows["score"], reverse=True)
                    scores[name] = s[:depth]
            out[t] = static_reference(by_run, strategy, scores=scores)[: limits[t]]
    return out


def as_lists(order: pd.DataFrame) -> dict:
    return {t: g.sort_values("order")["doc_id"].tolist() for t, g in order.groupby("query_id")}


# ---------------------------------------------------------------------------------------------
# random cases


@st.composite
def cases(draw):
    n_topics = draw(st.integers(1, 3))
    n_runs = draw(st.integers(1, 4))
    rows, qrows = [], []
    for t in range(n_topics):
        pool = [f"d{i:02d}" for i in range(draw(st.integers(1, 9)))]
        for s in range(n_runs):
            docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
            scores = draw(st.lists(st.integers(0, 6), min_size=len(docs), max_size=len(docs)))
            rows += [(f"r{s}", f"q{t}", d, float(x)) for d, x in zip(docs, scores)]
        for d in pool:
            rel = draw(st.sampled_from([None, -1, 0, 1, 2]))
            if rel is not None:
                qrows.append((f"q{t}", d, rel))
        if not any(q[0] == f"q{t}" for q in qrows):
            qrows.append((f"q{t}", pool[0], 0))
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    budget = draw(st.one_of(st.none(), st.integers(1, 10)))
    depth = draw(st.integers(1, 9))
    return run, qrels, budget, depth


@pytest.mark.parametrize("strategy", STRATEGIES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), seed=st.integers(0, 3))
def test_strategy_equals_reference_loop(strategy, case, seed):
    run, qrels, budget, depth = case
    order = judging_order(run, qrels, strategy, budget=budget, pool_depth=depth, seed=seed)
    assert (order["strategy"] == strategy).all()
    assert as_lists(order) == reference(run, qrels, strategy, budget, depth, seed)


# ---------------------------------------------------------------------------------------------
# a real collection


@pytest.fixture(scope="module")
def clef():
    if not CLEF.is_dir():
        pytest.skip("CLEF eHealth 2015 (../shared/data/clef2015-chs-task2) is absent")
    paths = sorted(glob.glob(str(CLEF / "runs" / "*.gz")))[::7]
    run = pd.concat([pdeval.read_run(p).assign(run=Path(p).name[:-3]) for p in paths], ignore_index=True)
    qrels = pdeval.read_qrels(CLEF / "qrels" / "qrels.eng.clef2015.qtest.bin.txt")
    topics = sorted(qrels["query_id"].unique())[:6]
    run = run.loc[run["query_id"].isin(topics)]
    return run, qrels.loc[qrels["query_id"].isin(topics)].reset_index(drop=True)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategy_equals_reference_loop_on_clef2015(clef, strategy):
    run, qrels = clef
    order = judging_order(run, qrels, strategy, budget=40, pool_depth=15, seed=7)
    assert as_lists(order) == reference(run, qrels, strategy, 40, 15, 7)


# ---------------------------------------------------------------------------------------------
# budgets as qrels variants, and bad input


def small():
    run = pd.DataFrame({
        "run": ["a"] * 3 + ["b"] * 3,
        "query_id": ["1"] * 6,
        "doc_id": ["x", "y", "z", "z", "w", "x"],
        "score": [3.0, 2.0, 1.0, 3.0, 2.0, 1.0],
    })
    qrels = pd.DataFrame({"query_id": ["1"] * 3, "doc_id": ["x", "y", "w"], "relevance": [1, 0, 2]})
    return run, qrels


def test_depth_order_is_round_robin_and_budget_qrels_evaluate_in_one_pass():
    run, qrels = small()
    order = judging_order(run, qrels, ["depth", "take"])
    assert order.loc[order["strategy"] == "depth", "doc_id"].tolist() == ["x", "z", "y", "w"]
    variants = budget_qrels(order, qrels, [1, 2, 4])
    got = variants.loc[(variants["strategy"] == "depth") & (variants["budget"] == 2)]
    assert got["doc_id"].tolist() == ["x"]  # z (2nd) is not in the qrels: stays absent
    result = pdeval.evaluate(run, variants, "P@2")
    assert set(result["budget"]) == {1, 2, 4} and set(result["strategy"]) == {"depth", "take"}


def test_total_budget_is_split_over_topics():
    run, qrels = small()
    run2 = pd.concat([run, run.assign(query_id="2")])
    qrels2 = pd.concat([qrels, qrels.assign(query_id="2")])
    order = judging_order(run2, qrels2, "depth", budget=3, budget_per="total")
    assert order.groupby("query_id").size().to_dict() == {"1": 2, "2": 1}


@pytest.mark.parametrize("budget", [0, -3, 2.5, True])
def test_bad_budget(budget):
    run, qrels = small()
    with pytest.raises(PdevalError, match=rf"judging_order\(\): budget={budget!r} is not None or an integer >= 1"):
        judging_order(run, qrels, "depth", budget=budget)
    with pytest.raises(PdevalError, match=rf"budget_qrels\(\): budgets=\[5, {budget!r}\] is not .*item 1"):
        budget_qrels(judging_order(run, qrels, "depth"), qrels, [5, budget])


def test_a_lone_float_budget_is_refused_by_name():
    """Issue class 1: budget_qrels(..., 2.5) raised a raw TypeError."""
    run, qrels = small()
    with pytest.raises(PdevalError, match=r"budget_qrels\(\): budgets=2.5 is not an integer >= 1"):
        budget_qrels(judging_order(run, qrels, "depth"), qrels, 2.5)
    with pytest.raises(PdevalError, match=r"budget_qrels\(\): order=.* lacks the column\(s\) \['strategy', 'order'\]"):
        budget_qrels(qrels, qrels, [5])


@pytest.mark.parametrize("value", [float("nan"), float("inf"), "60", -1, None, True])
def test_rrf_k_outside_its_domain_is_refused(value):
    """Issue class 1: rrf_k=nan returned doc-id order instead of RRF's; rrf_k="60" a raw TypeError."""
    run, qrels = small()
    with pytest.raises(PdevalError, match=rf"judging_order\(\): rrf_k={value!r} is not a finite number >= 0 \(RRF's constant"):
        judging_order(run, qrels, "rrf", rrf_k=value)


def test_an_option_of_a_strategy_not_chosen_is_refused():
    run, qrels = small()
    with pytest.raises(PdevalError, match=r"rrf_k= applies to the strategy 'rrf' only"):
        judging_order(run, qrels, ["depth", "mtf"], rrf_k=10)
    with pytest.raises(PdevalError, match=r"hedge_beta= applies to the strategy 'hedge' only"):
        judging_order(run, qrels, "depth", hedge_beta=0.5)
    judging_order(run, qrels, ["rrf"], rrf_k=10)  # its own strategy takes it


def test_qrels_of_several_variants_are_refused_naming_the_columns():
    """Issue class 2: qrels in two level variants failed with a raw pandas error."""
    run, qrels = small()
    two = pd.concat([qrels.assign(level=10), qrels.assign(level=50)], ignore_index=True)
    with pytest.raises(PdevalError, match=r"judging_order\(\): qrels=.* of one variant: it holds several variants in level \(2 values\)"):
        judging_order(run, two, "mtf")
    with pytest.raises(PdevalError, match=r"budget_qrels\(\): qrels=.*several variants in level"):
        budget_qrels(judging_order(run, qrels, "depth"), two, [1])


def test_unknown_strategy():
    run, qrels = small()
    with pytest.raises(PdevalError, match=r"strategies=\['depth', 'bogus'\] is not .*item 1 \('bogus'\)"):
        judging_order(run, qrels, ["depth", "bogus"])


def test_runs_without_qrels_topics():
    run, qrels = small()
    with pytest.raises(PdevalError, match=r"no document for 1 of the 2 qrels topic\(s\).*'9'"):
        judging_order(run, pd.concat([qrels, qrels.assign(query_id="9")]), "mtf")


def test_thompson_is_deterministic_per_seed():
    run, qrels = small()
    a = judging_order(run, qrels, "thompson", seed=3)
    b = judging_order(run, qrels, "thompson", seed=3)
    pd.testing.assert_frame_equal(a, b)


def test_accessor_methods():
    run, qrels = small()
    pd.testing.assert_frame_equal(run.ir.judging_order(qrels, "mtf"), judging_order(run, qrels, "mtf"))
    got = run.ir.pool_bias_correction(qrels, measures="P@2", pooled=["a"], pool_depth=1)
    assert set(got["run"]) == {"b"} and set(got["estimator"]) == {"pool", "webber", "lipani"}
