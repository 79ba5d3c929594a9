"""Tests for pdeval.judgments.pooling (MEASURES.md Part II, E5-E7, judged@k, pool bias)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from pdeval.errors import PdevalError, PdevalWarning
from pdeval.analysis.pool_bias.leave_out import leave_out_pooling
from pdeval.judgments.exclusion import exclude_runs, judged
from pdeval.judgments.pooling import DEPTH_GRIDS, mixed_pool, pool

# ---------------------------------------------------------------------------------------------
# E5 / E6 pools

QSTAR = pd.DataFrame({"query_id": "t", "doc_id": list("ABCDEF"), "relevance": [1, 0, 1, 0, 0, 1]})
RUNS = pd.DataFrame(
    {
        "run": ["s1"] * 4 + ["s2"] * 4,
        "query_id": "t",
        "doc_id": list("ABCD") + list("EAFC"),
        "score": [4.0, 3, 2, 1, 4, 3, 2, 1],
    }
)


def test_depth_grids():
    assert DEPTH_GRIDS["yilmaz2008_mixed"] == (1, 2, 3, 4, 5, 10, 20, 30, 40, 50)
    assert DEPTH_GRIDS["yilmaz2008_figures"] == (30, 8, 4)


def as_dict(frame: pd.DataFrame) -> dict[str, int]:
    return dict(zip(frame.doc_id, frame.relevance))


def test_pool_worked_example():
    d1 = pool(RUNS, pool_depth=1, qrels=QSTAR)
    assert list(d1.columns) == ["query_id", "doc_id", "relevance"]
    assert as_dict(d1) == {"A": 1, "B": -1, "C": -1, "D": -1, "E": 0, "F": -1}
    d2 = pool(RUNS, pool_depth=2, qrels=QSTAR)
    assert as_dict(d2) == {"A": 1, "B": 0, "C": -1, "D": -1, "E": 0, "F": -1}
    both = pool(RUNS, pool_depths=[1, 2], qrels=QSTAR)
    assert list(both.columns) == ["depth", "query_id", "doc_id", "relevance"]
    assert as_dict(both[both.depth == 2]) == as_dict(d2)
    assert both.attrs["pooled_not_in_qrels"] == {1: 0, 2: 0}
    absent = pool(RUNS, pool_depth=2, qrels=QSTAR, removed_as="absent")
    assert as_dict(absent) == {"A": 1, "B": 0, "E": 0}
    # the pool itself, and a chosen subset of runs
    assert set(pool(RUNS, pool_depth=2).doc_id) == {"A", "B", "E"}
    assert set(pool(RUNS, pool_depth=2, pooled=["s2"]).doc_id) == {"E", "A"}
    # the rank column is ignored: trec_eval order (score desc, doc id desc on ties)
    tied = RUNS.assign(score=1.0, rank=range(8))
    assert set(pool(tied, pool_depth=1).doc_id) == {"D", "F"}


def test_pool_reports_documents_missing_from_qrels():
    runs = pd.concat([RUNS, pd.DataFrame({"run": "s3", "query_id": "t", "doc_id": ["Z", "A"], "score": [2.0, 1]})])
    with pytest.warns(PdevalWarning, match="depth 1: 1"):
        out = pool(runs, pool_depths=[1, 2], qrels=QSTAR)
    assert out.attrs["pooled_not_in_qrels"] == {1: 1, 2: 1}
    assert "Z" not in set(out.doc_id)  # nothing invented
    with pytest.raises(PdevalError, match="not in the run frame"):
        pool(RUNS, pool_depth=1, pooled=["nope"])
    with pytest.raises(PdevalError, match=r"pool\(\): pool_depth=0 is not None or an integer >= 1"):
        pool(RUNS, pool_depth=0)


def test_mixed_pool_worked_example():
    seen = set()
    for seed in range(12):
        out = mixed_pool(RUNS, QSTAR, pool_depths=[1, 2], samples=2, seed=seed)
        assert list(out.columns) == ["depth", "sample", "query_id", "doc_id", "relevance"]
        for s in range(2):
            d1 = as_dict(out[(out.depth == 1) & (out["sample"] == s)])
            judged_docs = {d for d, r in d1.items() if r >= 0}
            assert {"A", "E"} <= judged_docs and len(judged_docs) == 4
            assert all(d1[d] == QSTAR.set_index("doc_id").relevance[d] for d in judged_docs)
            seen.add(frozenset(judged_docs - {"A", "E"}))
            # depth 2: pool {A, B, E}, m = 3 of the 3 outside (C, D, F) -> everything judged
            d2 = as_dict(out[(out.depth == 2) & (out["sample"] == s)])
            assert d2 == as_dict(QSTAR)
    assert len(seen) > 1  # the random part varies with the seed
    again = mixed_pool(RUNS, QSTAR, pool_depths=[1, 2], samples=2, seed=3)
    pd.testing.assert_frame_equal(again, mixed_pool(RUNS, QSTAR, pool_depths=[1, 2], samples=2, seed=3))


# ---------------------------------------------------------------------------------------------
# E7 run exclusion


def test_exclude_runs_rules():
    topics = [str(401 + i) for i in range(50)]
    qrels = pd.DataFrame({"query_id": topics, "doc_id": "x", "relevance": 1})

    def run_rows(name, per_topic):
        return pd.DataFrame(
            {
                "run": name,
                "query_id": np.repeat(topics, per_topic),
                "doc_id": np.concatenate([[f"d{j}" for j in range(n)] for n in per_topic]),
                "score": 1.0,
            }
        )

    exact = [950] * 50  # 47,500: kept
    short = [950] * 49 + [949]  # 47,499: excluded
    empty = [1000] * 49 + [0]  # 49,000 documents, but one empty topic
    capped = [1200] * 25 + [700] * 25  # 47,500 rows, only 42,500 counted (max 1000 per topic)
    run = pd.concat([run_rows("exact", exact), run_rows("short", short), run_rows("empty", empty),
                     run_rows("capped", capped)], ignore_index=True)
    kept = exclude_runs(run, qrels)
    excluded = pd.DataFrame(kept.attrs["excluded"])
    assert isinstance(kept, pd.DataFrame)
    assert set(kept.run) == {"exact"}
    assert len(kept) == 47_500
    assert list(excluded.columns) == ["run", "rule", "detail"]
    rules = set(zip(excluded.run, excluded.rule))
    assert rules == {("short", "too_few_documents"), ("empty", "empty_topic"),
                     ("capped", "too_few_documents")}
    assert "47499" in excluded.set_index("run").loc["short", "detail"]
    assert "450" in excluded.set_index("run").loc["empty", "detail"]
    # a run that misses topics entirely breaks both rules
    tiny = run_rows("tiny", [10] * 3 + [0] * 47)
    excluded = exclude_runs(tiny, qrels).attrs["excluded"]
    assert sorted(excluded["rule"]) == ["empty_topic", "too_few_documents"]


# ---------------------------------------------------------------------------------------------
# judged@k

EXAMPLE_A_QRELS = pd.DataFrame(
    {"query_id": "q1", "doc_id": [f"d{i}" for i in range(1, 11)],
     "relevance": [1, 0, 1, 0, 1, 0, -1, 0, 1, 0]}
)
EXAMPLE_A_RUN = pd.DataFrame(
    {"query_id": "q1", "doc_id": ["d2", "d1", "u1", "d7", "d3", "d4", "d5", "u2", "d6", "d8"],
     "score": [9.0, 8, 7, 6, 5, 5, 4, 3, 2, 1]}
)


def test_judged_share():
    run = pd.concat([
        EXAMPLE_A_RUN.assign(run="A"),
        EXAMPLE_A_RUN.iloc[[2, 3, 0]].assign(run="B"),  # u1, d7, d2
        EXAMPLE_A_RUN.assign(run="A", query_id="not_in_qrels"),
    ])
    out = judged(run, EXAMPLE_A_QRELS, k=(1, 2, 5, 10, 20))
    assert list(out.columns) == ["run", "query_id", "k", "judged"]
    assert set(out.query_id) == {"q1"}
    a = dict(zip(out[out.run == "A"].k, out[out.run == "A"].judged))
    # ranks: d2 d1 u1 d7(-1) d4 d3 d5 u2 d6 d8 -> judged 1 1 0 0 1 1 1 0 1 1
    # a list shorter than k is divided by its length (ir_measures' Judged@k)
    assert a == pytest.approx({1: 1.0, 2: 1.0, 5: 3 / 5, 10: 7 / 10, 20: 7 / 10})
    b = dict(zip(out[out.run == "B"].k, out[out.run == "B"].judged))
    # ranks: d2 u1 d7 -> 1 0 0, divided by min(k, 3)
    assert b == pytest.approx({1: 1.0, 2: 1 / 2, 5: 1 / 3, 10: 1 / 3, 20: 1 / 3})


# ---------------------------------------------------------------------------------------------
# leave-one-group-out pooling

LO_QRELS = pd.DataFrame({"query_id": "q1", "doc_id": list("ABCDEF"), "relevance": [1, 0, 1, 0, 1, 0]})
LO_RUN = pd.DataFrame(
    {
        "run": ["g1__a"] * 3 + ["g1__b"] * 3 + ["g2__x"] * 4,
        "query_id": "q1",
        "doc_id": list("ABC") + list("EAD") + list("ACFE"),
        "score": [3.0, 2, 1, 3, 2, 1, 4, 3, 2, 1],
    }
)


def test_leave_out_pooling_by_hand():
    # depth-2 pool: g1__a {A, B}, g1__b {E, A}, g2__x {A, C}. Only g1 pooled B and E, only g2
    # pooled C. Q*: R = 3 (A, C, E), N = 3 (B, D, F).
    out = leave_out_pooling(LO_RUN, LO_QRELS, pool_depth=2, group=lambda r: r.split("__")[0],
                            measures=("AP", "Bpref", "AP'", "infAP"))
    assert {"run", "group", "query_id", "measure", "value_pooled", "value_left_out",
            "difference"} <= set(out.columns)
    v = out.set_index(["run", "measure"])
    expected = {
        # g1 left out: Q_-g1 = {A 1, C 1, D 0, F 0}, R = 2, N = 2
        ("g1__a", "AP"): (5 / 9, (1 + 2 / 3) / 2),  # A . C -> rel at ranks 1 and 3
        ("g1__b", "AP"): ((1 + 1) / 3, (1 / 2) / 2),  # E A D -> full: 1, 2; left out: A at 2
        ("g1__a", "Bpref"): ((1 + (1 - 1 / 3)) / 3, 1.0),  # B no longer judged above C
        ("g1__a", "AP'"): (5 / 9, 1.0),  # condensed A, C
        # g2 left out: Q_-g2 = {A 1, B 0, D 0, E 1, F 0}, R = 2
        ("g2__x", "AP"): ((1 + 1 + 3 / 4) / 3, (1 + 2 / 4) / 2),  # A C F E
    }
    for key, (pooled, left) in expected.items():
        assert v.loc[key, "value_pooled"] == pytest.approx(pooled, abs=1e-12)
        assert v.loc[key, "value_left_out"] == pytest.approx(left, abs=1e-12)
        assert v.loc[key, "difference"] == pytest.approx(left - pooled, abs=1e-12)
    assert v.loc[("g1__a", "AP"), "group"] == "g1"
    assert tuple(v.loc[("g1__b", "AP"), ["removed_judged", "removed_relevant"]]) == (2, 1)
    assert tuple(v.loc[("g2__x", "AP"), ["removed_judged", "removed_relevant"]]) == (1, 1)


def test_leave_out_pooling_groups_and_removed_as():
    # each run its own group: g1__a alone pooled B, g1__b alone pooled E (A is shared)
    out = leave_out_pooling(LO_RUN, LO_QRELS, pool_depth=2, measures=("AP",)).set_index("run")
    assert out.loc["g1__b", "value_left_out"] == pytest.approx((1 / 2) / 2)
    assert out.loc["g1__a", "value_left_out"] == pytest.approx(5 / 9)  # B nonrelevant: AP unchanged
    # -1 instead of absent: AP is the same (it treats both as nonrelevant)
    pooled = leave_out_pooling(LO_RUN, LO_QRELS, pool_depth=2, measures=("AP",), removed_as="pooled").set_index("run")
    assert np.allclose(pooled.value_left_out, out.value_left_out)
    with pytest.raises(PdevalError, match="lacks"):
        leave_out_pooling(LO_RUN, LO_QRELS, pool_depth=2, group={"g1__a": "g1"})


# ---------------------------------------------------------------------------------------------
# the boundary contract and the vocabulary (issue classes 1, 7 and the vocabulary findings)


def test_pool_takes_one_depth_as_pool_depth_and_a_grid_as_pool_depths():
    grid = pool(RUNS, pool_depths=[1, 2], qrels=QSTAR)
    assert list(grid.columns[:1]) == ["depth"]
    single = pool(RUNS, pool_depth=2, qrels=QSTAR)
    assert "depth" not in single.columns
    with pytest.raises(PdevalError, match=r"pool\(\): pool_depth=\[1, 2\] is not .*give pool_depths="):
        pool(RUNS, pool_depth=[1, 2])
    with pytest.raises(PdevalError, match=r"pool\(\): neither of pool_depth= and pool_depths= given"):
        pool(RUNS)
    with pytest.raises(PdevalError, match=r"pool\(\): both of pool_depth= and pool_depths= given"):
        pool(RUNS, pool_depth=1, pool_depths=[1, 2])
    with pytest.raises(PdevalError, match=r"pool_depths=\[2.5\] is not"):
        pool(RUNS, pool_depths=[2.5])


def test_exclude_runs_calls_the_cut_depth():
    kept = exclude_runs(RUNS, QSTAR, depth=2, min_share=0.5)
    assert set(kept["run"]) == set(RUNS["run"])
    assert kept.attrs["excluded"] == {"run": [], "rule": [], "detail": []}
    assert len(pd.concat([kept, kept])) == 2 * len(kept)  # the attrs never stop pandas combining the result
    with pytest.raises(PdevalError, match=r"exclude_runs\(\): the parameter 'max_docs' is now called 'depth'"):
        exclude_runs(RUNS, QSTAR, max_docs=2)
    with pytest.raises(PdevalError, match=r"min_share=1.5 is not a finite number >= 0 and <= 1"):
        exclude_runs(RUNS, QSTAR, min_share=1.5)


def test_leave_out_pooling_reads_a_lone_measure_as_one_measure():
    """Issue class 7: measures="AP" was split into the measures 'A' and 'P'."""
    lone = leave_out_pooling(LO_RUN, LO_QRELS, pool_depth=2, measures="AP")
    assert set(lone["measure"]) == {"AP"}
    pd.testing.assert_frame_equal(lone, leave_out_pooling(LO_RUN, LO_QRELS, pool_depth=2, measures=["AP"]))


def test_leave_out_pooling_takes_the_pool_depth_by_keyword():
    """Vocabulary: leave_out_pooling(run, qrels, ["AP"]) read the measures as a pool depth."""
    with pytest.raises(PdevalError, match=r"leave_out_pooling\(\): too many positional arguments; pool_depth"):
        leave_out_pooling(LO_RUN, LO_QRELS, ["AP"])
    with pytest.raises(PdevalError, match=r"leave_out_pooling\(\): measures=\['AP', 3\] is not"):
        leave_out_pooling(LO_RUN, LO_QRELS, measures=["AP", 3])
