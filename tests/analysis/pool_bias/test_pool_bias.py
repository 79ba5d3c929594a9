"""Pool-bias estimators: a worked example by hand, a slow reference loop, identities.

Neither paper prints a worked example that can be recomputed from the text (Webber & Park 2009
and Lipani, Lupu & Hanbury 2015 report only aggregate errors on TREC collections), so the
example below is computed by hand from the definitions in :mod:`pdeval.analysis.pool_bias.correction`;
random cases are checked against a reference written with Python dicts and lists, and the
"pool" scores against :func:`pdeval.evaluate` and :func:`pdeval.leave_out_pooling`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.analysis.pool_bias.correction import bias_summary, leave_out_bias, pool_bias_correction
from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from locations import REPO


def frame(lists: dict) -> pd.DataFrame:
    rows = [(name, t, d, float(100 - i)) for (name, t), docs in lists.items() for i, d in enumerate(docs)]
    return pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])


def worked():
    run = frame({("A", "1"): ["a1", "a2", "a3"], ("B", "1"): ["b1", "b2", "b3"], ("U", "1"): ["a2", "a1", "b1"]})
    qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a1", "b1"], "relevance": [1, 0]})
    return run, qrels


def test_worked_example_by_hand():
    # depth-1 pool of A and B judges a1 (relevant) and b1 (not); U's top 2 is a2 (unjudged), a1.
    # Webber & Park, P@2: A loses 0.5 without its unique a1, B loses 0 -> U: 0.5 + 0.25.
    # R@2: A loses 1 (R drops to 0), B 0 -> U: 1 + 0.5.
    # Lipani, P@2: s_u = 0.5, a_u = 0, k_u = 0.5. A∘U = [a2, a1, a3]: top 2 unchanged.
    # B∘U = [b2, b3, b1]: precision 0 -> 0, anti-precision 0.5 -> 0: δā = -0.5, δk = +0.5.
    # Δs = 0, Δā = -0.25, Δk = 0.25; λ = 0.5 (0 - (-0.25)(0.5)) > 0 -> 0.5 + 0.5 * 0.25.
    run, qrels = worked()
    got = pool_bias_correction(run, qrels, ["P@2", "R@2"], pool_depth=1, pooled=["A", "B"])
    value = got.set_index(["measure", "estimator"])["value"]
    assert value[("P@2", "pool")] == pytest.approx(0.5)
    assert value[("P@2", "webber")] == pytest.approx(0.75)
    assert value[("P@2", "lipani")] == pytest.approx(0.625)
    assert value[("R@2", "pool")] == pytest.approx(1.0)
    assert value[("R@2", "webber")] == pytest.approx(1.5)
    assert ("R@2", "lipani") not in value.index  # Lipani et al. define P@n only


# ---------------------------------------------------------------------------------------------
# the reference


def ranked(run: pd.DataFrame) -> dict:
    out: dict = {}
    for (name, t), rows in run.groupby(["run", "query_id"]):
        items = sorted(zip(rows["score"], rows["doc_id"]), key=lambda x: x[1], reverse=True)
        out[(name, t)] = [d for _, d in sorted(items, key=lambda x: -x[0])]
    return out


def ref_estimates(run, qrels, pooled, kind, k, depth, left_out=()):
    lists = ranked(run)
    topics = sorted(qrels.loc[qrels["relevance"] >= 0, "query_id"].unique())
    label = {(t, d): int(r >= 1) for t, d, r in qrels[["query_id", "doc_id", "relevance"]].itertuples(index=False)
             if r >= 0}

    def contributors(t, d):
        return {p for p in pooled if d in lists.get((p, t), [])[:depth]}

    def lab(t, d, out):
        if (t, d) not in label:
            return -1
        c = contributors(t, d)
        return -1 if c and c <= set(out) else label[(t, d)]

    def score(name, out):
        total = 0.0
        for t in topics:
            top = lists.get((name, t), [])[:k]
            rel = sum(lab(t, d, out) == 1 for d in top)
            if kind == "P":
                total += rel / k
            else:
                R = sum(1 for (tt, d), v in label.items() if tt == t and v == 1 and lab(t, d, out) == 1)
                total += rel / R if R else 0.0
        return total / len(topics)

    def pa(docs_by_topic, out):
        s = a = 0.0
        for t, docs in docs_by_topic.items():
            s += sum(lab(t, d, out) == 1 for d in docs[:k])
            a += sum(lab(t, d, out) == 0 for d in docs[:k])
        return s / (k * len(topics)), a / (k * len(topics))

    others = [p for p in pooled if p not in left_out]
    news = [n for n in sorted(run["run"].unique()) if n not in pooled] if not left_out else list(left_out)
    adj = sum(score(p, left_out) - score(p, (*left_out, p)) for p in others) / len(others)
    out = {}
    for u in news:
        base = score(u, left_out)
        out[(u, "pool")] = base
        out[(u, "webber")] = base + adj
        if kind != "P":
            continue
        s_u, a_u = pa({t: lists.get((u, t), []) for t in topics}, left_out)
        k_u = 1 - s_u - a_u
        ds = da = 0.0
        for p in others:
            moved = {}
            for t in topics:
                lp, lu = lists.get((p, t), []), lists.get((u, t), [])
                keyed = []
                for i, d in enumerate(lp):
                    key = lu.index(d) + 1 if d in lu else i + 1
                    tie = 0 if key < i + 1 else (1 if key == i + 1 else 2)
                    keyed.append((key, tie, i + 1, d))
                moved[t] = [d for *_, d in sorted(keyed)]
            s1, a1 = pa(moved, left_out)
            s0, a0 = pa({t: lists.get((p, t), []) for t in topics}, left_out)
            ds += (s1 - s0) / len(others)
            da += (a1 - a0) / len(others)
        dk = -ds - da
        out[(u, "lipani")] = s_u + (k_u * max(dk, 0.0) if k_u > 0 and k_u * (ds * a_u - da * s_u) > 0 else 0.0)
    return out


@st.composite
def cases(draw):
    n_topics = draw(st.integers(1, 3))
    n_runs = draw(st.integers(3, 5))
    rows, qrows = [], []
    for t in range(n_topics):
        pool = [f"d{i}" for i in range(draw(st.integers(2, 8)))]
        for s in range(n_runs):
            docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
            rows += [(f"r{s}", f"q{t}", d, float(len(docs) - i)) for i, d in enumerate(docs)]
        for d in pool:
            if draw(st.booleans()):
                qrows.append((f"q{t}", d, draw(st.integers(0, 1))))
        qrows.append((f"q{t}", "never-retrieved", 1))
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    n_pooled = draw(st.integers(2, n_runs - 1))
    return run, qrels, [f"r{s}" for s in range(n_pooled)], draw(st.integers(1, 3)), draw(st.integers(1, 4))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_correction_equals_reference(case):
    run, qrels, pooled, depth, k = case
    got = pool_bias_correction(run, qrels, [f"P@{k}", f"R@{k}"], pool_depth=depth, pooled=pooled)
    for kind in ("P", "R"):
        expected = ref_estimates(run, qrels, pooled, kind, k, depth)
        mine = got.loc[got["measure"] == f"{kind}@{k}"]
        assert {(r, e): v for r, e, v in mine[["run", "estimator", "value"]].itertuples(index=False)} == \
            pytest.approx(expected, abs=1e-12)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases())
def test_leave_one_run_out_equals_reference(case):
    run, qrels, pooled, depth, k = case
    got = leave_out_bias(run, qrels, [f"P@{k}"], pool_depth=depth, pooled=pooled)
    expected = {}
    for p in pooled:
        expected.update(ref_estimates(run, qrels, pooled, "P", k, depth, left_out=(p,)))
    assert {(r, e): v for r, e, v in got[["run", "estimator", "estimate"]].itertuples(index=False)} == \
        pytest.approx(expected, abs=1e-12)


def test_pool_scores_equal_evaluate_and_leave_out_pooling():
    rng = np.random.default_rng(1)
    rows = [(f"g{g}_r{s}", f"q{t}", f"d{d}", float(rng.random()))
            for g in range(3) for s in range(2) for t in range(4) for d in rng.choice(30, 12, replace=False)]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pdeval.pool(run, pool_depth=5).assign(relevance=lambda f: rng.integers(0, 2, len(f)))
    group = lambda name: name.split("_")[0]  # noqa: E731
    got = leave_out_bias(run, qrels, ["P@5", "R@5"], pool_depth=5, group=group, estimators="pool")
    full = pdeval.evaluate(run, qrels, ["P@5", "R@5"]).groupby(["run", "measure"])["value"].mean()
    lop = pdeval.leave_out_pooling(run, qrels, pool_depth=5, group=group, measures=["P@5", "R@5"])
    left = lop.groupby(["run", "measure"])["value_left_out"].mean()
    for r, _, m, _, true, estimate, _ in got.itertuples(index=False):
        assert true == pytest.approx(full[(r, m)])
        assert estimate == pytest.approx(left[(r, m)])


def test_bias_summary():
    result = pd.DataFrame({
        "measure": ["P@10"] * 3, "estimator": ["pool"] * 3,
        "true": [0.3, 0.2, 0.1], "estimate": [0.1, 0.2, 0.05],
    })
    s = bias_summary(result)
    assert s.loc[0, "mae"] == pytest.approx((0.2 + 0 + 0.05) / 3)
    # run 1: among others' true (0.2, 0.1) 0.3 ranks 0th, its estimate 0.1 ranks 1st -> 1;
    # run 2: 0.2 among (0.3, 0.1) 1st, estimate 0.2 1st -> 0; run 3: 2nd both -> 0
    assert s.loc[0, "sre"] == 1
    assert s.loc[0, "tau_b"] == pytest.approx(1 / 3)


def test_bias_summary_float_noise_is_a_tie():
    # 0.1 + 0.2 and 0.3 are the same score summed in another order: a tie, not an order
    tied = pd.DataFrame({"measure": ["P@10"] * 3, "estimator": ["pool"] * 3,
                         "true": [0.3, 0.1 + 0.2, 0.1], "estimate": [0.1 + 0.2, 0.3, 0.1]})
    s = bias_summary(tied)
    assert s.loc[0, "sre"] == 0
    assert s.loc[0, "tau_b"] == pytest.approx(1.0)


def test_sre_equals_loop():
    rng = np.random.default_rng(5)
    for _ in range(20):
        true, estimate = rng.integers(0, 6, 15) / 10, rng.integers(0, 6, 15) / 10
        expected = sum(abs(int(np.sum(np.delete(true, i) > true[i])) - int(np.sum(np.delete(true, i) > estimate[i])))
                       for i in range(len(true)))
        frame = pd.DataFrame({"measure": "P@10", "estimator": "pool", "true": true, "estimate": estimate})
        assert bias_summary(frame).loc[0, "sre"] == expected


def test_bad_input():
    run, qrels = worked()
    with pytest.raises(PdevalError, match="not supported"):
        pool_bias_correction(run, qrels, ["AP"], pool_depth=1, pooled=["A", "B"])
    with pytest.raises(PdevalError, match="not in the run frame"):
        pool_bias_correction(run, qrels, pool_depth=1, pooled=["A", "Z"])
    with pytest.raises(PdevalError, match="no run outside the pool"):
        pool_bias_correction(run, qrels, pool_depth=1, pooled=["A", "B", "U"])
    with pytest.raises(PdevalError, match="estimators"):
        pool_bias_correction(run, qrels, estimators=["magic"], pool_depth=1, pooled=["A", "B"])
    # the pool depth has no default: a call written for the old names (depth= was the pool depth)
    # fails loudly instead of cutting every run at the pool depth
    with pytest.raises(PdevalError, match="missing a required argument: 'pool_depth'"):
        pool_bias_correction(run, qrels, depth=1, pooled=["A", "B"])
    with pytest.raises(PdevalError, match="missing a required argument: 'pool_depth'"):
        leave_out_bias(run, qrels, "P@2", depth=1)
    # pooled is a keyword: the old positional call fails instead of reading the runs as measures
    with pytest.raises(PdevalError, match="pooled"):
        pool_bias_correction(run, qrels, ["A", "B"], pool_depth=1)
    # qrels of several variants: refused naming the column, never one variant's numbers
    two = pd.concat([qrels.assign(level=50), qrels.assign(level=100)], ignore_index=True)
    for call in (lambda: pool_bias_correction(run, two, "P@2", pooled=["A", "B"], pool_depth=1),
                 lambda: leave_out_bias(run, two, "P@2", pool_depth=1)):
        with pytest.raises(SchemaError, match=r"qrels=.*several variants in level \(2 values\)"):
            call()


def test_values_outside_the_range_are_counted_or_clipped():
    """Webber & Park's adjustment can pass 1: the value is reported as it is, with a counted
    warning, or clipped with clip=True."""
    run, qrels = worked()
    plain = leave_out_bias(run, qrels, "P@2", pool_depth=1, estimators="webber")
    shifted = plain.assign(estimate=plain["estimate"] + 1.0)  # what an adjustment past 1 gives
    from pdeval.analysis.pool_bias.correction import in_unit_range

    above = int((shifted["estimate"] > 1).sum())
    assert above > 0
    with pytest.warns(PdevalWarning, match=rf"{above} corrected value\(s\) lie outside \[0, 1\] \(webber: {above};"):
        kept = in_unit_range(shifted["estimate"], shifted["estimator"], False, "leave_out_bias")
    assert (kept == shifted["estimate"]).all()
    clipped = in_unit_range(shifted["estimate"], shifted["estimator"], True, "leave_out_bias")
    assert clipped.max() == 1.0 and clipped.min() >= 0.0


# ---------------------------------------------------------------------------------------------
# the array kernels against the first, loop-based implementation (tests/analysis/pool_bias/pool_bias_loops.py)


def as_dict(frame: pd.DataFrame, value: str) -> dict:
    return {(r, m, e): v for r, m, e, v in frame[["run", "measure", "estimator", value]].itertuples(index=False)}


@st.composite
def grouped_cases(draw):
    n_topics = draw(st.integers(1, 3))
    n_runs = draw(st.integers(3, 6))
    rows, qrows = [], []
    for t in range(n_topics):
        pool = [f"d{i}" for i in range(draw(st.integers(2, 14)))]
        for s in range(n_runs):
            if draw(st.integers(0, 5)) == 0:
                continue  # a run without this topic
            docs = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=len(pool), unique=True))
            rows += [(f"r{s}", f"q{t}", d, float(len(docs) - i)) for i, d in enumerate(docs)]
        qrows += [(f"q{t}", d, draw(st.integers(0, 1))) for d in pool if draw(st.booleans())]
        qrows.append((f"q{t}", "never-retrieved", 1))
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    names = sorted(run["run"].unique())
    n_pooled = draw(st.integers(2, max(len(names) - 1, 2)))
    teams = {n: f"g{draw(st.integers(0, 2))}" for n in names}
    ks = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3, unique=True))
    return run, qrels, names[:n_pooled], teams, ks, draw(st.integers(1, 3)), draw(st.sampled_from([4, 1000]))


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=grouped_cases(), by_team=st.booleans())
def test_kernels_equal_loops(case, by_team):
    run, qrels, pooled, teams, ks, pool_depth, depth = case
    from pool_bias_loops import correction_loops, leave_out_loops

    group = teams.get if by_team else None
    measures = [f"{kind}@{k}" for k in ks for kind in ("P", "R")]
    kw = dict(pool_depth=pool_depth, group=group, depth=depth)
    if len(pooled) < len(run["run"].unique()):
        got = pool_bias_correction(run, qrels, measures, pooled=pooled, **kw)
        assert as_dict(got, "value") == pytest.approx(as_dict(correction_loops(run, qrels, pooled, measures, **kw),
                                                              "value"), abs=1e-12)
    units = {group(p) if group else p for p in pooled}
    if len(units) >= 2:
        got = leave_out_bias(run, qrels, measures, pooled=pooled, **kw)
        expected = leave_out_loops(run, qrels, measures, pooled=pooled, **kw)
        assert as_dict(got, "estimate") == pytest.approx(as_dict(expected, "estimate"), abs=1e-12)
        assert list(zip(got["run"], got["measure"], got["estimator"])) == \
            list(zip(expected["run"], expected["measure"], expected["estimator"]))


def test_kernels_in_small_blocks_equal_loops(monkeypatch):
    # blocks of a few rows and several doubling rounds: runs of 40 documents, P@1
    from pool_bias_loops import correction_loops, leave_out_loops

    from pdeval.analysis.pool_bias import kernels as pool_bias_kernels

    monkeypatch.setattr(pool_bias_kernels, "BLOCK_ROWS", 7)
    rng = np.random.default_rng(3)
    rows = [(f"r{s}", f"q{t}", f"d{d}", float(40 - i)) for s in range(6) for t in range(3)
            for i, d in enumerate(rng.choice(60, 40, replace=False))]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pdeval.pool(run[run["run"] < "r3"], pool_depth=3).assign(relevance=lambda f: rng.integers(0, 2, len(f)))
    measures = ["P@1", "P@3", "R@3"]
    got = pool_bias_correction(run, qrels, measures, pool_depth=3, pooled=["r0", "r1", "r2"])
    expected = correction_loops(run, qrels, ["r0", "r1", "r2"], measures, pool_depth=3)
    assert as_dict(got, "value") == pytest.approx(as_dict(expected, "value"), abs=1e-12)
    got = leave_out_bias(run, qrels, measures, pool_depth=3, pooled=["r0", "r1", "r2"])
    expected = leave_out_loops(run, qrels, measures, pool_depth=3, pooled=["r0", "r1", "r2"])
    assert as_dict(got, "estimate") == pytest.approx(as_dict(expected, "estimate"), abs=1e-12)


CLEF2015 = REPO.parent / "shared" / "data" / "clef2015-chs-task2"


@pytest.mark.skipif(not CLEF2015.is_dir(), reason="../shared/data/clef2015-chs-task2 is absent (shared data)")
def test_kernels_equal_loops_on_clef2015():
    from pool_bias_loops import correction_loops, leave_out_loops

    data = pdeval.datasets.load("clef2015", mirror=str(CLEF2015.parent), progress=False)
    pooled = sorted(r for r in data.runs["run"].unique() if r.rsplit(".", 1)[-1] in ("1", "2", "3"))
    pool_runs = data.runs[data.runs["run"].isin(pooled)]
    team = lambda name: name.split("_")[0]  # noqa: E731
    measures = ["P@5", "P@10", "R@10"]
    got = leave_out_bias(pool_runs, data.qrels, measures, pool_depth=10, group=team)
    expected = leave_out_loops(pool_runs, data.qrels, measures, pool_depth=10, group=team)
    assert len(got) == len(expected) == 30 * 8
    assert as_dict(got, "estimate") == pytest.approx(as_dict(expected, "estimate"), abs=1e-12)
    summary = bias_summary(got)
    with_truth = expected.merge(got[["run", "measure", "estimator", "true"]], on=["run", "measure", "estimator"])
    assert summary[["sre", "tau_b"]].equals(bias_summary(with_truth)[["sre", "tau_b"]])
    unpooled = sorted(set(data.runs["run"]) - set(pooled))[::6]  # 7 of the 38 (the loops take a while)
    some = data.runs[data.runs["run"].isin(pooled + unpooled)]
    got = pool_bias_correction(some, data.qrels, measures, pool_depth=10, group=team, pooled=pooled)
    expected = correction_loops(some, data.qrels, pooled, measures, pool_depth=10, group=team)
    assert len(got) == len(expected) == len(unpooled) * 8
    assert as_dict(got, "value") == pytest.approx(as_dict(expected, "value"), abs=1e-12)
