"""Tests for pdeval.judgments (MEASURES.md Part II, E0-E7)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from pdeval.judgments import (
    DEPTH_GRIDS,
    LEVEL_GRIDS,
    exclude_runs,
    judged,
    leave_out_pooling,
    mixed_pool,
    pool,
    reduce,
    reduction_sizes,
    skipped_topics,
)

# ---------------------------------------------------------------------------------------------
# helpers


def make_qrels(spec: dict[str, tuple[int, int]], negatives: int = 0) -> pd.DataFrame:
    """A qrels frame with R relevant (alternating grades 1/2) and N nonrelevant docs per topic."""
    rows = []
    for topic, (R, N) in spec.items():
        rows += [(topic, f"r{i:03d}", 1 + i % 2) for i in range(R)]
        rows += [(topic, f"n{i:03d}", 0) for i in range(N)]
        rows += [(topic, f"p{i:03d}", -1) for i in range(negatives)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


def kept_counts(reduced: pd.DataFrame) -> pd.DataFrame:
    """Relevant and nonrelevant judgments kept per (level, sample, query_id)."""
    return reduced.assign(
        rel=reduced["relevance"] >= 1, non=reduced["relevance"] == 0
    ).groupby(["level", "sample", "query_id"])[["rel", "non"]].sum()


def kept_docs(reduced: pd.DataFrame, level, sample, topic) -> set[str]:
    part = reduced[(reduced.level == level) & (reduced["sample"] == sample) & (reduced.query_id == topic)]
    return set(part.loc[part.relevance >= 0, "doc_id"])


# ---------------------------------------------------------------------------------------------
# E1 / E2 sizes


WORKED = [  # (R, N, level, E1 trunc, E2 round half up) -- MEASURES.md E2 table
    (40, 200, 95, (38, 190), (38, 190)),
    (7, 55, 50, (3, 27), (4, 28)),
    (7, 55, 10, (1, 10), (1, 10)),
    (3, 8, 50, (1, 8), (2, 8)),
]


@pytest.mark.parametrize("R,N,level,trunc,rounded", WORKED)
def test_worked_sizes(R, N, level, trunc, rounded):
    assert (int(reduction_sizes(R, level)), int(reduction_sizes(N, level, minimum=10))) == trunc
    got = (int(reduction_sizes(R, level, method="rounded")),
           int(reduction_sizes(N, level, method="rounded", minimum=10)))
    assert got == rounded


@pytest.mark.parametrize("method,column", [("stratified", 3), ("rounded", 4)])
def test_worked_sizes_in_reduce(method, column):
    spec = {f"t{i}": (R, N) for i, (R, N, *_rest) in enumerate(WORKED)}
    q = make_qrels(spec, negatives=2)
    levels = sorted({row[2] for row in WORKED})
    out = reduce(q, levels, method=method, samples=2, seed=3)
    counts = kept_counts(out)
    for i, row in enumerate(WORKED):
        for s in range(2):
            assert tuple(counts.loc[(row[2], s, f"t{i}")]) == row[column]


def test_minimums_and_caps():
    q = make_qrels({"a": (0, 30), "b": (2, 5), "c": (50, 400)})
    out = reduce(q, [10, 1], samples=1)
    counts = kept_counts(out)
    assert tuple(counts.loc[(10, 0, "a")]) == (0, 10)  # R = 0 stays 0, nonrel minimum 10
    assert tuple(counts.loc[(10, 0, "b")]) == (1, 5)  # minimum 1; minimum 10 capped at N = 5
    assert tuple(counts.loc[(1, 0, "c")]) == (1, 10)  # 50*1//100 = 0 -> 1; 4 -> 10
    assert tuple(counts.loc[(10, 0, "c")]) == (5, 40)
    # custom minimums
    counts = kept_counts(reduce(q, [10], min_rel=0, min_nonrel=0))
    assert tuple(counts.loc[(10, 0, "b")]) == (0, 0)


def test_fractional_levels_are_exact():
    assert int(reduction_sizes(1000, 0.1)) == 1
    assert int(reduction_sizes(1000, 12.5)) == 125
    out = reduce(make_qrels({"t": (20, 40)}), [12.5, 50])
    assert out["level"].dtype == np.float64
    assert set(out["level"]) == {12.5, 50.0}


# ---------------------------------------------------------------------------------------------
# E0 rules: output shape, randomness, nesting


def test_output_columns_and_pairs():
    q = make_qrels({"401": (10, 50), "402": (3, 20)}, negatives=3)
    out = reduce(q, "sakai2007", samples=2)
    assert list(out.columns) == ["level", "sample", "query_id", "doc_id", "relevance"]
    assert out["level"].dtype == np.int64 and out["sample"].dtype == np.int64
    assert out["relevance"].dtype == np.int64
    assert list(pd.unique(out["level"])) == list(LEVEL_GRIDS["sakai2007"])
    for _, part in out.groupby(["level", "sample"]):
        assert len(part) == len(q)  # same (topic, doc) pairs as Q*
        merged = part.merge(q, on=["query_id", "doc_id"], suffixes=("", "_orig"), validate="one_to_one")
        kept = merged.relevance >= 0
        assert (merged.loc[kept, "relevance"] == merged.loc[kept, "relevance_orig"]).all()
        assert (merged.loc[merged.relevance_orig < 0, "relevance"] == -1).all()
        assert ((merged.relevance == -1) | kept).all()


def test_level_100_is_the_original():
    q = make_qrels({"b": (7, 55), "a": (3, 8), "c": (0, 4)}, negatives=1).sample(frac=1, random_state=1)
    out = reduce(q, [100, 50], samples=3)
    for s in range(3):
        part = out[(out.level == 100) & (out["sample"] == s)].drop(columns=["level", "sample"])
        expected = q.sort_values(["query_id", "doc_id"], ignore_index=True)
        pd.testing.assert_frame_equal(part.reset_index(drop=True), expected, check_dtype=False)


def test_nested_within_a_sample():
    q = make_qrels({"t1": (30, 200), "t2": (12, 90)})
    levels = [100, 90, 70, 50, 30, 10, 5]
    out = reduce(q, levels, samples=3, seed=7)
    for s in range(3):
        for t in ("t1", "t2"):
            sets = [kept_docs(out, level, s, t) for level in levels]
            for higher, lower in zip(sets, sets[1:]):
                assert lower <= higher


def test_not_nested_option_draws_levels_independently():
    q = make_qrels({"t1": (60, 300)})
    out = reduce(q, [50, 40], samples=1, nested=False, seed=2)
    assert not kept_docs(out, 40, 0, "t1") <= kept_docs(out, 50, 0, "t1")
    counts = kept_counts(out)
    assert tuple(counts.loc[(40, 0, "t1")]) == (24, 120)
    # a level's draw does not depend on the other levels requested
    alone = reduce(q, [40], nested=False, seed=2)
    assert kept_docs(alone, 40, 0, "t1") == kept_docs(out, 40, 0, "t1")


def test_samples_differ_and_seed_is_deterministic():
    q = make_qrels({"t1": (30, 200), "t2": (12, 90)})
    first = reduce(q, [50, 10], samples=3, seed=11)
    again = reduce(q, [50, 10], samples=3, seed=11)
    pd.testing.assert_frame_equal(first, again)
    assert kept_docs(first, 50, 0, "t1") != kept_docs(first, 50, 1, "t1")
    assert kept_docs(first, 50, 1, "t1") != kept_docs(first, 50, 2, "t1")
    other = reduce(q, [50, 10], samples=3, seed=12)
    assert not first.equals(other)
    # sample s is the same draw whatever the number of samples, and row order does not matter
    shuffled = q.sample(frac=1, random_state=5)
    two = reduce(shuffled, [50, 10], samples=2, seed=11)
    pd.testing.assert_frame_equal(two, first[first["sample"] < 2].reset_index(drop=True))
    # a Generator seed works and advances
    rng = np.random.default_rng(0)
    assert not reduce(q, [50], seed=rng).equals(reduce(q, [50], seed=rng))


def test_removed_as_absent_and_negatives():
    q = make_qrels({"t1": (8, 40)}, negatives=4)
    q.loc[q.doc_id == "p000", "relevance"] = -2  # any negative value stays as it is
    pooled = reduce(q, [30], seed=1)
    absent = reduce(q, [30], seed=1, removed_as="absent")
    assert (absent.relevance >= -2).all()
    assert len(absent) == 2 + 12 + 4  # kept rel + kept nonrel + negatives
    assert set(absent.loc[absent.relevance < 0, "doc_id"]) == {"p000", "p001", "p002", "p003"}
    assert absent.loc[absent.doc_id == "p000", "relevance"].item() == -2
    assert pooled.loc[pooled.doc_id == "p000", "relevance"].item() == -2
    kept_pooled = pooled[pooled.relevance >= 0].reset_index(drop=True)
    kept_absent = absent[absent.relevance >= 0].reset_index(drop=True)
    pd.testing.assert_frame_equal(kept_pooled, kept_absent)


def test_rel_threshold_defines_the_strata():
    q = make_qrels({"t1": (10, 20)})  # grades alternate 1, 2: five of each
    counts = reduce(q, [40], rel=2, min_nonrel=0).assign(
        high=lambda f: f.relevance >= 2, low=lambda f: f.relevance.isin([0, 1])
    ).groupby("query_id")[["high", "low"]].sum()
    assert tuple(counts.loc["t1"]) == (2, 10)  # 5*40//100 = 2 of Rel; 25*40//100 = 10 of Non


@pytest.mark.parametrize(
    "kwargs,message",
    [
        ({"levels": [0]}, "(0, 100]"),
        ({"levels": [101]}, "(0, 100]"),
        ({"levels": [50, 50]}, "repeat"),
        ({"levels": []}, "empty"),
        ({"levels": "nosuchgrid"}, "known grids"),
        ({"levels": [50], "samples": 0}, "samples"),
        ({"levels": [50], "method": "random"}, "method"),
        ({"levels": [50], "removed_as": "gone"}, "removed_as"),
        ({"levels": [50], "method": "uniform", "nested": True}, "not nested"),
        ({"levels": [50], "seed": -1}, "seed"),
        ({"levels": [True]}, "numbers"),
    ],
)
def test_reduce_validation(kwargs, message):
    with pytest.raises(PdevalError, match=message.replace("(", r"\(").replace("]", r"\]")):
        reduce(make_qrels({"t": (3, 10)}), **kwargs)


def test_reduce_rejects_variant_qrels():
    reduced = reduce(make_qrels({"t": (3, 10)}), [50])
    with pytest.raises(SchemaError, match="variant"):
        reduce(reduced, [50])


def test_level_grids():
    assert LEVEL_GRIDS["sakai2007"] == (100, 90, 70, 50, 30, 10)
    assert len(LEVEL_GRIDS["he2008"]) == 16 and max(LEVEL_GRIDS["he2008"]) == 90
    assert LEVEL_GRIDS["yilmaz2008"] == tuple(range(1, 101))
    assert DEPTH_GRIDS["yilmaz2008_mixed"] == (1, 2, 3, 4, 5, 10, 20, 30, 40, 50)
    out = reduce(make_qrels({"t": (5, 30)}), "He2008", samples=2)
    assert out.groupby(["level", "sample"]).ngroups == 32


# ---------------------------------------------------------------------------------------------
# E4 uniform sampling


def test_uniform_sizes_and_relevant_in_every_sample():
    q = make_qrels({"t1": (2, 198), "t2": (1, 60), "t3": (40, 10)}, negatives=2)
    levels = [1, 5, 30]
    out = reduce(q, levels, method="uniform", samples=10, seed=4)
    assert out.attrs["skipped_topics"] == []
    judged_sizes = {"t1": 200, "t2": 61, "t3": 50}
    for (level, sample, topic), part in out.groupby(["level", "sample", "query_id"]):
        assert (part.relevance >= 1).any()
        J = judged_sizes[topic]
        assert (part.relevance >= 0).sum() == max(1, int(np.floor(level * J / 100 + 0.5)))
        assert len(part) == J + 2  # removed judgments become -1, negatives stay
    # samples at different levels are not nested (each level is its own draw)
    nested_everywhere = all(
        kept_docs(out, 5, s, "t1") >= kept_docs(out, 1, s, "t1") for s in range(10)
    )
    assert not nested_everywhere


def test_uniform_round_half_up():
    q = make_qrels({"t": (5, 25)})  # |J| = 30; 5% -> 1.5 -> 2; 15% -> 4.5 -> 5
    out = reduce(q, [5, 15], method="uniform")
    sizes = out[out.relevance >= 0].groupby("level").size()
    assert sizes[5] == 2 and sizes[15] == 5


def test_uniform_skips_topics_without_relevant_documents():
    q = make_qrels({"t1": (5, 50), "t0": (0, 40)})
    with pytest.warns(PdevalWarning, match=r"skipped 1 topic\(s\).*t0"):
        out = reduce(q, [10, 50], method="uniform", samples=2)
    assert set(out.query_id) == {"t1"}
    skipped = skipped_topics(out)
    assert len(skipped) == 4 and set(skipped.query_id) == {"t0"}
    assert skipped.reason.str.contains("R = 0").all()


def test_uniform_failure_raises_or_skips():
    # R = 1 of |J| = 1000 at 0.1% -> one document; a single try almost surely misses it
    q = make_qrels({"hard": (1, 999), "easy": (500, 500)})
    with pytest.raises(PdevalError, match="hard"):
        reduce(q, [0.1], method="uniform", max_tries=1, seed=0)
    with pytest.warns(PdevalWarning, match="hard"):
        out = reduce(q, [0.1], method="uniform", max_tries=1, on_fail="skip", seed=0)
    assert set(out.query_id) == {"easy"}
    assert skipped_topics(out).reason.str.contains("1 draws").all()
    # with the default 10,000 tries the topic succeeds, holding its only relevant document
    out = reduce(q, [0.1], method="uniform", samples=3)
    for _, part in out.groupby(["sample", "query_id"]):
        assert (part.relevance >= 1).sum() == 1


# ---------------------------------------------------------------------------------------------
# Hypothesis: reduce invariants


@st.composite
def qrels_frames(draw):
    rows = []
    for t in range(draw(st.integers(1, 3))):
        grades = draw(st.lists(st.sampled_from([-1, 0, 0, 1, 2]), min_size=0, max_size=40))
        rows += [(f"q{t}", f"d{i}", g) for i, g in enumerate(grades)]
    return pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance"])


@settings(max_examples=40, deadline=None)
@given(
    q=qrels_frames(),
    levels=st.lists(st.integers(1, 100), min_size=1, max_size=4, unique=True),
    method=st.sampled_from(["stratified", "rounded"]),
    samples=st.integers(1, 2),
    seed=st.integers(0, 2**32),
)
def test_reduce_invariants(q, levels, method, samples, seed):
    out = reduce(q, levels, method=method, samples=samples, seed=seed)
    assert list(pd.unique(out.level)) == levels if len(q) else out.empty
    original = q.set_index(["query_id", "doc_id"])["relevance"]
    R = (original >= 1).groupby(level=0).sum()
    N = (original == 0).groupby(level=0).sum()
    for s in range(samples):
        previous = None
        for level in sorted(levels, reverse=True):
            part = out[(out.level == level) & (out["sample"] == s)].set_index(["query_id", "doc_id"])["relevance"]
            assert part.index.sort_values().equals(original.index.sort_values())
            aligned = original.loc[part.index]
            kept = part >= 0
            assert (part[kept] == aligned[kept]).all()  # kept judgments keep their level
            assert (part[aligned < 0] == aligned[aligned < 0]).all()  # negatives stay
            for topic in R.index:
                rel = int((part.loc[topic] >= 1).sum())
                non = int((part.loc[topic] == 0).sum())
                assert rel == reduction_sizes(int(R[topic]), level, method=method)
                assert non == reduction_sizes(int(N[topic]), level, method=method, minimum=10)
            docs = set(part.index[kept])
            if previous is not None:
                assert docs <= previous  # nested
            previous = docs


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


def as_dict(frame: pd.DataFrame) -> dict[str, int]:
    return dict(zip(frame.doc_id, frame.relevance))


def test_pool_worked_example():
    d1 = pool(RUNS, 1, qrels=QSTAR)
    assert list(d1.columns) == ["query_id", "doc_id", "relevance"]
    assert as_dict(d1) == {"A": 1, "B": -1, "C": -1, "D": -1, "E": 0, "F": -1}
    d2 = pool(RUNS, 2, qrels=QSTAR)
    assert as_dict(d2) == {"A": 1, "B": 0, "C": -1, "D": -1, "E": 0, "F": -1}
    both = pool(RUNS, [1, 2], qrels=QSTAR)
    assert list(both.columns) == ["depth", "query_id", "doc_id", "relevance"]
    assert as_dict(both[both.depth == 2]) == as_dict(d2)
    assert both.attrs["pooled_not_in_qrels"] == {1: 0, 2: 0}
    absent = pool(RUNS, 2, qrels=QSTAR, removed_as="absent")
    assert as_dict(absent) == {"A": 1, "B": 0, "E": 0}
    # the pool itself, and a chosen subset of runs
    assert set(pool(RUNS, 2).doc_id) == {"A", "B", "E"}
    assert set(pool(RUNS, 2, runs=["s2"]).doc_id) == {"E", "A"}
    # the rank column is ignored: trec_eval order (score desc, doc id desc on ties)
    tied = RUNS.assign(score=1.0, rank=range(8))
    assert set(pool(tied, 1).doc_id) == {"D", "F"}


def test_pool_reports_documents_missing_from_qrels():
    runs = pd.concat([RUNS, pd.DataFrame({"run": "s3", "query_id": "t", "doc_id": ["Z", "A"], "score": [2.0, 1]})])
    with pytest.warns(PdevalWarning, match="depth 1: 1"):
        out = pool(runs, [1, 2], qrels=QSTAR)
    assert out.attrs["pooled_not_in_qrels"] == {1: 1, 2: 1}
    assert "Z" not in set(out.doc_id)  # nothing invented
    with pytest.raises(PdevalError, match="not in the run frame"):
        pool(RUNS, 1, runs=["nope"])
    with pytest.raises(PdevalError, match="depth"):
        pool(RUNS, 0)


def test_mixed_pool_worked_example():
    seen = set()
    for seed in range(12):
        out = mixed_pool(RUNS, QSTAR, [1, 2], samples=2, seed=seed)
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
    again = mixed_pool(RUNS, QSTAR, [1, 2], samples=2, seed=3)
    pd.testing.assert_frame_equal(again, mixed_pool(RUNS, QSTAR, [1, 2], samples=2, seed=3))


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
    kept, excluded = exclude_runs(run, qrels)
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
    _, excluded = exclude_runs(tiny, qrels)
    assert sorted(excluded.rule) == ["empty_topic", "too_few_documents"]


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
    out = leave_out_pooling(LO_RUN, LO_QRELS, 2, group=lambda r: r.split("__")[0],
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
    out = leave_out_pooling(LO_RUN, LO_QRELS, 2, measures=("AP",)).set_index("run")
    assert out.loc["g1__b", "value_left_out"] == pytest.approx((1 / 2) / 2)
    assert out.loc["g1__a", "value_left_out"] == pytest.approx(5 / 9)  # B nonrelevant: AP unchanged
    # -1 instead of absent: AP is the same (it treats both as nonrelevant)
    pooled = leave_out_pooling(LO_RUN, LO_QRELS, 2, measures=("AP",), removed_as="pooled").set_index("run")
    assert np.allclose(pooled.value_left_out, out.value_left_out)
    with pytest.raises(PdevalError, match="lacks"):
        leave_out_pooling(LO_RUN, LO_QRELS, 2, group={"g1__a": "g1"})
