"""Tests for pdeval.judgments.reduction: judgment reduction (MEASURES.md Part II, E0-E4)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from pdeval.judgments.reduction import LEVEL_GRIDS, reduce, reduction_sizes, skipped_topics

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
        ({"levels": [0]}, r"reduce\(\): levels=\[0\] is not .*> 0 and <= 100"),
        ({"levels": [101]}, r"levels=\[101\] is not .*> 0 and <= 100"),
        ({"levels": [50, 50]}, r"levels=\[50, 50\] is not .*it repeats an item"),
        ({"levels": []}, r"levels=\[\] is not .*it has 0 item"),
        ({"levels": "nosuchgrid"}, r"levels='nosuchgrid' is not one of 'sakai2007'"),
        ({"levels": [50], "samples": 0}, r"samples=0 is not an integer >= 1"),
        ({"levels": [50], "method": "random"}, r"method='random' is not one of 'stratified'"),
        ({"levels": [50], "removed_as": "gone"}, r"removed_as='gone' is not one of 'pooled', 'absent'"),
        ({"levels": [50], "method": "uniform", "nested": True}, r"nested= applies to method='stratified' or method='rounded' only"),
        ({"levels": [50], "method": "uniform", "nested": False}, r"nested= applies to method='stratified'"),
        ({"levels": [50], "on_fail": "skip"}, r"on_fail= applies to method='uniform' only"),
        ({"levels": [50], "seed": -1}, r"seed=-1 is not None or an integer >= 0"),
        ({"levels": [True]}, r"levels=\[True\] is not .*item 0 \(True\)"),
        ({"levels": [float("nan")]}, r"levels=\[nan\] is not"),
        ({"levels": [50], "method": "uniform", "on_fail": "raise"}, r"on_fail='raise' is not .*'raise' is now called 'error'"),
    ],
)
def test_reduce_validation(kwargs, message):
    with pytest.raises(PdevalError, match=message):
        reduce(make_qrels({"t": (3, 10)}), **kwargs)


@pytest.mark.parametrize("levels", [[0.9, 0.5], 0.5, [0.25, 1]])
def test_reduce_warns_when_the_levels_look_like_fractions(levels):
    """Issue class 6: levels all in (0, 1] with one not whole are fractions given as percents."""
    with pytest.warns(PdevalWarning, match=r"levels are percents.*levels=\[90, 50\]|levels are percents"):
        reduce(make_qrels({"t": (3, 10)}), levels)


@pytest.mark.parametrize("levels", [[1], [90, 0.5], [1, 2]])
def test_reduce_does_not_warn_on_percents(levels):
    with warnings.catch_warnings():
        warnings.simplefilter("error", PdevalWarning)
        reduce(make_qrels({"t": (3, 10)}), levels)


def test_reduce_rejects_variant_qrels():
    reduced = reduce(make_qrels({"t": (3, 10)}), [50])
    with pytest.raises(SchemaError, match="variant"):
        reduce(reduced, [50])


def test_level_grids():
    assert LEVEL_GRIDS["sakai2007"] == (100, 90, 70, 50, 30, 10)
    assert len(LEVEL_GRIDS["he2008"]) == 16 and max(LEVEL_GRIDS["he2008"]) == 90
    assert LEVEL_GRIDS["yilmaz2008"] == tuple(range(1, 101))
    out = reduce(make_qrels({"t": (5, 30)}), "he2008", samples=2)
    assert out.groupby(["level", "sample"]).ngroups == 32
    with pytest.raises(PdevalError, match=r"levels='He2008' is not one of 'sakai2007', 'he2008'"):
        reduce(make_qrels({"t": (5, 30)}), "He2008")


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


@pytest.mark.filterwarnings("ignore:.*every level lies in:pdeval.errors.PdevalWarning")
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
