"""The bootstrap's ``"unique"`` prior and ``method="labels"`` with a callable.

Oracles: a slow loop over units, runs, topics and documents that follows the definitions of
:mod:`pdeval.analysis.estimates.unique_priors` (the factors and the expected precision they give), the
engine for a certain labelling, and the leave-one-out identity that a left-out team's own
grades cannot reach its estimate.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.analysis.estimates.unique_priors import unique_factors
from pdeval.errors import PdevalError


def pooled_collection(seed: int, n_runs: int = 6, n_topics: int = 4, depth: int = 10, docs: int = 40,
                      pool_depth: int = 4):
    """Runs t0a, t0b, t1a, ... (teams of two) with distinct scores; the qrels judge the depth-
    ``pool_depth`` pool of every run plus a few other documents."""
    rng = np.random.default_rng(seed)
    rows = []
    for run in range(n_runs):
        name = f"t{run // 2}{'ab'[run % 2]}"
        for topic in range(n_topics):
            ranked = rng.permutation(docs)[:depth]
            rows += [(name, f"q{topic}", f"d{d}", float(depth - i)) for i, d in enumerate(ranked)]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    pool = pdeval.rank_run(run, depth=pool_depth)[["query_id", "doc_id"]].drop_duplicates()
    extra = pd.DataFrame({"query_id": [f"q{t}" for t in range(n_topics)],
                          "doc_id": [f"d{docs + t}" for t in range(n_topics)]})
    judged = pd.concat([pool, extra], ignore_index=True)
    qrels = judged.assign(relevance=rng.choice([0, 0, 1, 2], size=len(judged)))
    return run, qrels


def reference_factors(run, qrels, pooled, pool_depth, team_of):
    """O, E and f per (unit, grade) by the definitions, one document at a time."""
    grades = sorted(set(qrels["relevance"]) | {0})
    grade = {(q, d): g for q, d, g in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False)}
    top = pdeval.rank_run(run[run["run"].isin(pooled)], depth=pool_depth)
    units_of = {}
    for r, q, d in top[["run", "query_id", "doc_id"]].itertuples(index=False):
        units_of.setdefault((q, d), set()).add(team_of(r))
    unique_to = {key: next(iter(us)) for key, us in units_of.items() if len(us) == 1}

    def shares(pairs):
        counts = np.array([sum(grade[p] == g for p in pairs) for g in grades], dtype=float)
        return counts / counts.sum() if counts.sum() else None

    out = {}
    for u in sorted({team_of(r) for r in pooled}):
        observed, expected = np.zeros(len(grades)), np.zeros(len(grades))
        for (r, q), ranking in top.groupby(["run", "query_id"]):
            if team_of(r) != u:
                continue
            mine = [(q, d) for d in ranking["doc_id"] if unique_to.get((q, d)) == u and (q, d) in grade]
            others = [(q, d) for d in ranking["doc_id"] if (q, d) in grade and unique_to.get((q, d)) != u]
            topic = shares([p for p in grade if p[0] == q and unique_to.get(p) != u])
            if topic is None:
                continue
            own = shares(others)
            base = topic if own is None else (topic + own) / 2
            for p in mine:
                observed[grades.index(grade[p])] += 1
                expected += base
        for j, g in enumerate(grades):
            if g > 0:
                f = observed[j] / expected[j] if expected[j] > 0 else 1.0
                out[(u, g)] = (observed[j], expected[j], f)
    return out


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_factors_follow_their_definition(seed):
    run, qrels = pooled_collection(seed)
    pooled = ["t0a", "t0b", "t1a", "t2a", "t2b"]
    got = unique_factors(run, qrels, pool_depth=4, pooled=pooled, group=lambda n: n[:2])
    expected = reference_factors(run, qrels, pooled, 4, lambda n: n[:2])
    assert len(got) == len(expected)
    for row in got.itertuples(index=False):
        o, e, f = expected[(row.unit, row.grade)]
        assert (row.observed, row.expected, row.factor) == pytest.approx((o, e, f), abs=1e-12)


def test_worked_case():
    """One topic, pool depth 1: team A's unique document is relevant (grade 1), team B's is not;
    the topic's other judged documents: one relevant of two."""
    run = pd.DataFrame({"run": ["A1", "A1", "B1", "B1"], "query_id": "q", "doc_id": ["a", "x", "b", "x"],
                        "score": [2.0, 1.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["a", "b", "x", "y"], "relevance": [1, 0, 1, 0]})
    table = unique_factors(run, qrels, pool_depth=1, group=lambda n: n[0]).set_index("unit")
    # A: without "a" the topic holds b, x, y (1 relevant of 3); A1's top 1 has no other judged row:
    # the base prior is the pool's, 1/3; observed 1 -> f = 3. B: without "b": a, x, y (2 of 3) -> f = 0.
    assert table.loc["A", "factor"] == pytest.approx(3.0)
    assert table.loc["B", "factor"] == pytest.approx(0.0)
    assert table["expected"].tolist() == pytest.approx([1 / 3, 2 / 3])


def test_expected_precision_is_the_reference_loops():
    """P@k is linear in the labels, so its estimate is the mean over units (and over the
    smoothing factor exp(h z), by Gauss-Hermite quadrature) of (judged relevant + Σ_unjudged
    q_rel) / k; checked within 5 standard errors of the draws."""
    run, qrels = pooled_collection(5, n_runs=8, n_topics=5)
    outside = run[run["run"].isin(["t3a", "t3b"])].assign(run=lambda f: "new" + f["run"])
    frame = pd.concat([run[~run["run"].isin(["t3a", "t3b"])], outside], ignore_index=True)
    pooled = sorted(set(frame["run"]) - {"newt3a", "newt3b"})
    team = lambda n: n[:2]
    qrels = qrels[qrels.set_index(["query_id", "doc_id"]).index.isin(
        pdeval.rank_run(frame[frame["run"].isin(pooled)], depth=4).set_index(["query_id", "doc_id"]).index)]
    n = 4000
    got = pdeval.estimate(frame, qrels, "P@6", prior="unique", pooled=pooled, pool_depth=4, group=team,
                          n_resamples=n, seed=3, spread=0).set_index(["run", "query_id"])
    table = unique_factors(frame, qrels, pool_depth=4, pooled=pooled, group=team)
    usable = table[table["usable"]].pivot(index="unit", columns="grade", values="factor")
    assert len(usable) >= 3 and got["unjudged"].sum() >= 20
    assert usable.to_numpy().std() > 0.1  # the units differ: a wrong pick of units would show
    sums = table[table["usable"]].groupby("unit")[["observed", "expected"]].sum()
    combined = (sums["observed"] / sums["expected"]).to_numpy()
    logs = np.log(combined[combined > 0])
    h = 1.06 * logs.std(ddof=1) * len(logs) ** -0.2
    nodes, weights = np.polynomial.hermite.hermgauss(40)  # E over z ~ N(0, 1) of the smoothing
    scale, weights = np.exp(h * np.sqrt(2) * nodes), weights / np.sqrt(np.pi)
    grades = [0, 1, 2]
    grade = {(q, d): g for q, d, g in qrels.itertuples(index=False)}
    ranked = pdeval.rank_run(frame)
    for (r, q), ranking in ranked.groupby(["run", "query_id"]):
        topic = np.array([sum(v == g for (t, _), v in grade.items() if t == q) for g in grades], float)
        topic /= topic.sum()
        top4 = [grade[(q, d)] for d in ranking["doc_id"][:4] if (q, d) in grade]
        own = np.array([top4.count(g) for g in grades], float)
        base = (topic + own / own.sum()) / 2 if own.sum() else topic
        hits = 0.0
        for d in ranking["doc_id"][:6]:
            if (q, d) in grade:
                hits += grade[(q, d)] >= 1
                continue
            rel = (base[1:] * usable.to_numpy()).sum(axis=1)  # per unit
            hits += (np.minimum(rel[:, None] * scale[None, :], 1.0) @ weights).mean()
        row = got.loc[(r, q)]
        se = max((row["high"] - row["low"]) / 4, 1 / 6) / np.sqrt(n)
        assert row["estimate"] == pytest.approx(hits / 6, abs=5 * se), (r, q)


def test_left_out_teams_own_grades_cannot_reach_its_estimate():
    """No leakage: team t2's unique documents are absent from the left-out qrels and t2 is not
    pooled, so changing their true grades leaves t2's estimate unchanged."""
    run, qrels = pooled_collection(7)
    team = lambda n: n[:2]
    pooled = sorted(n for n in run["run"].unique() if team(n) != "t2")
    left = pdeval.leave_out_pooling(run, qrels, pool_depth=4, group=team, measures=["P@10"])
    assert not left.empty
    top = pdeval.rank_run(run, depth=4).assign(team=lambda f: f["run"].map(team))
    owners = top.groupby(["query_id", "doc_id"])["team"].agg(lambda s: set(s))
    only_t2 = owners[owners.map(lambda s: s == {"t2"})].index
    mask = qrels.set_index(["query_id", "doc_id"]).index.isin(only_t2)
    assert mask.any()
    results = []
    for flip in (False, True):
        full = qrels.assign(relevance=np.where(mask & flip, 2 - qrels["relevance"], qrels["relevance"]))
        fewer = full[~mask]
        results.append(pdeval.estimate(run, fewer, "nDCG@10", prior="unique", pooled=pooled, pool_depth=4,
                                       group=team, n_resamples=50, seed=1, per="run"))
    pd.testing.assert_frame_equal(*results)


def test_unique_prior_is_seeded_and_shared_across_topics():
    run, qrels = pooled_collection(8, n_topics=6)
    pooled = sorted(set(run["run"]) - {"t2a", "t2b"})
    fewer = qrels.sample(frac=0.7, random_state=1)
    options = dict(prior="unique", pooled=pooled, pool_depth=4, group=lambda n: n[:2], per="run", spread=0)
    first = pdeval.estimate(run, fewer, ["P@5", "nDCG@10"], n_resamples=200, seed=4, **options)
    again = pdeval.estimate(run, fewer, ["P@5", "nDCG@10"], n_resamples=200, seed=np.random.default_rng(4), **options)
    other = pdeval.estimate(run, fewer, ["P@5", "nDCG@10"], n_resamples=200, seed=5, **options)
    pd.testing.assert_frame_equal(first, again)
    assert not np.allclose(first["estimate"], other["estimate"])
    # one unit per run and resample: the run mean's interval is wider than with a fixed prior
    fixed = pdeval.estimate(run, fewer, ["P@5", "nDCG@10"], n_resamples=200, seed=4, prior="pool", per="run",
                            spread=0)
    assert (first["high"] - first["low"]).mean() > (fixed["high"] - fixed["low"]).mean()


def test_unique_prior_refusals():
    run, qrels = pooled_collection(9)
    fewer = qrels.iloc[::2]
    with pytest.raises(PdevalError, match="needs pool_depth"):
        pdeval.estimate(run, fewer, "P@5", prior="unique")
    with pytest.raises(PdevalError, match="pool_depth"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=0)
    with pytest.raises(PdevalError, match="pool_depth"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=2.5)
    with pytest.raises(PdevalError, match="not in the run frame"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=4, pooled=["t0a", "nobody"])
    with pytest.raises(PdevalError, match=r"pooled=\[\] is not None or"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=4, pooled=[])
    with pytest.raises(PdevalError, match="group mapping lacks"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=4, group={"t0a": "t0"})
    with pytest.raises(PdevalError, match=r"group=3 is not None or a mapping"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=4, group=3)
    with pytest.raises(PdevalError, match="pool_depth= applies to prior='unique' only, not prior='both'"):
        pdeval.estimate(run, fewer, "P@5", prior="both", pool_depth=4)
    with pytest.raises(PdevalError, match="pooled= applies to prior='unique' only, not prior='auto'"):
        pdeval.estimate(run, fewer, "P@5", pooled=["t0a"])
    with pytest.raises(PdevalError, match="at least two pooled units"):
        pdeval.estimate(run, fewer, "P@5", prior="unique", pool_depth=4, group=lambda n: "all")


# ---- method="labels" with a callable ----------------------------------------------------------
def test_callable_certain_labels_give_the_engines_value():
    """A callable that is certain of each unjudged document's grade: every draw is that
    labelling, so the estimate is the engine's value on the qrels filled with it (cut at k)."""
    run, qrels = pooled_collection(10)
    fewer = qrels.iloc[::2].reset_index(drop=True)
    rng = np.random.default_rng(0)
    truth = {}
    calls = []

    def judge(query_ids, doc_ids):
        calls.append(len(query_ids))
        grades = np.array([truth.setdefault((q, d), int(rng.integers(0, 3))) for q, d in zip(query_ids, doc_ids)])
        return np.eye(3)[grades]

    got = pdeval.estimate(run, fewer, "P@5", method="labels", automatic=judge, n_resamples=5, seed=1)
    top5 = pdeval.rank_run(run, depth=5)[["query_id", "doc_id"]].drop_duplicates()
    unjudged = top5.merge(fewer, how="left")["relevance"].isna().sum()
    assert calls == [unjudged] and (got["low"] == got["high"]).all()  # asked once, about the drawn pairs only
    filled = pd.concat([fewer, pd.DataFrame([(q, d, g) for (q, d), g in truth.items()],
                                            columns=["query_id", "doc_id", "relevance"])], ignore_index=True)
    expected = pdeval.evaluate(run, filled, "P@5", depth=5)
    merged = got.merge(expected, on=["run", "query_id"], suffixes=("", "_engine"))
    assert len(merged) == len(got)
    np.testing.assert_allclose(merged["estimate"], merged["value_engine"], atol=1e-12)


def test_callable_probabilities_are_checked():
    run, qrels = pooled_collection(11)
    fewer = qrels.iloc[::2]
    uniform = lambda q, d: np.full((len(q), 3), 1 / 3)
    ok = pdeval.estimate(run, fewer, "P@5", method="labels", automatic=uniform, n_resamples=20, seed=1)
    assert (ok["estimate"] >= ok["value"] - 1e-12).all()
    with pytest.raises(PdevalError, match="shape"):
        pdeval.estimate(run, fewer, "P@5", method="labels", automatic=lambda q, d: np.full((len(q), 2), 0.5))
    with pytest.raises(PdevalError, match="summing to 1"):
        pdeval.estimate(run, fewer, "P@5", method="labels", automatic=lambda q, d: np.full((len(q), 3), 0.5))
    with pytest.raises(PdevalError, match="NaN"):
        pdeval.estimate(run, fewer, "P@5", method="labels", automatic=lambda q, d: np.full((len(q), 3), np.nan))
    with pytest.raises(PdevalError, match=r"automatic=\[1, 2, 3\] is not None or a qrels frame .* or a function"):
        pdeval.estimate(run, fewer, "P@5", method="labels", automatic=[1, 2, 3])
