"""trec_eval's order as arrays: the partial sorts (blocks moved, only disordered lists and tie
runs sorted) give exactly the order of one full sort by (group, score desc, doc id desc)."""

from __future__ import annotations

import numpy as np
from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval.engine.ranking
from pdeval.engine.ranking import groups_with_repeats, segments_with_repeats, sort_within, trec_order


def full_sort(group, score, words):
    """The reference: one lexsort of every row by group, score descending, words descending."""
    keys = [np.invert(words[:, c]) for c in reversed(range(words.shape[1]))]
    return np.lexsort(keys + [-score, group])


def distinct_words(rng, n, width, alphabet):
    """``n`` distinct rows of ``width`` words drawn from a small alphabet (many shared prefixes)."""
    rows = set()
    while len(rows) < n:
        rows.add(tuple(int(x) for x in rng.choice(alphabet, width)))
    out = np.array(sorted(rows), dtype=np.uint64).reshape(n, width)
    return out[rng.permutation(n)]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 3), st.sampled_from(["rank order", "blocks shuffled", "rows shuffled",
                                                                     "one list upside down", "ties only"]))
def test_trec_order_equals_one_full_sort(seed, width, layout):
    rng = np.random.default_rng(seed)
    n_groups = int(rng.integers(1, 8))
    lengths = rng.integers(0, 40, n_groups)
    group = np.repeat(np.arange(n_groups), lengths)
    n = len(group)
    # word values at the edges of the unsigned range, and few of them: many shared prefixes
    alphabet = np.array([1, 2, 7, 2**63 - 1, 2**63, 2**64 - 2, 2**64 - 1, *range(100, 145)], dtype=np.uint64)
    # ids distinct within each group (the engine has removed duplicates before ordering)
    words = np.concatenate([distinct_words(rng, int(k), width, alphabet) for k in lengths] or [np.zeros((0, width))])
    words = words.astype(np.uint64).reshape(n, width)
    score = rng.integers(0, 4, n).astype(np.float64)  # many ties
    if layout == "ties only":
        score[:] = 1.0
    # files list documents by descending score; the layouts break that in the ways real data does
    order = np.lexsort((-score, group))
    group, score, words = group[order], score[order], words[order]
    if layout == "blocks shuffled":
        blocks = rng.permutation(n_groups)
        order = np.concatenate([np.flatnonzero(group == b) for b in blocks] or [np.zeros(0, int)])
    elif layout == "rows shuffled":
        order = rng.permutation(n)
    elif layout == "one list upside down" and n:
        order = np.arange(n)
        upside = np.flatnonzero(group == group[0])
        order[upside] = upside[::-1]
    else:
        order = np.arange(n)
    group, score, words = group[order], score[order], words[order]
    got = trec_order(group, score, words)
    expected = full_sort(group, score, words)
    assert (got == expected).all()
    if width == 1:  # a one-dimensional key (ids' positions in sorted order) gives the same order
        positions = np.unique(words[:, 0], return_inverse=True)[1].astype(np.int64).reshape(-1)
        assert (trec_order(group, score, positions) == expected).all()
    # rows that do not matter to the caller may trade places among themselves, and only there:
    # every row that matters keeps its exact place, the others fill the places left
    matters = rng.random(n) < 0.2
    partial = trec_order(group, score, words, matters=matters)
    assert sorted(partial.tolist()) == list(range(n))
    assert (np.where(matters[partial], partial, -1) == np.where(matters[expected], expected, -1)).all()
    assert (group[partial] == group[expected]).all() and (score[partial] == score[expected]).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(st.integers(-3, 3), max_size=40), max_size=30))  # > 16 lengths: padded matrices
def test_sort_within_sorts_each_segment_stably_and_finds_repeats(segments):
    values = np.array([v for s in segments for v in s], dtype=np.int64)
    offsets = np.concatenate(([0], np.cumsum([len(s) for s in segments]))).astype(np.int64)
    other = -np.arange(len(values))  # a second key: ties on the first keep their order
    permutation = sort_within(offsets, [other, values])
    for i, segment in enumerate(segments):
        rows = permutation[offsets[i] : offsets[i + 1]]
        assert sorted(rows.tolist()) == list(range(offsets[i], offsets[i + 1]))
        expected = sorted(range(offsets[i], offsets[i + 1]), key=lambda r: (values[r], other[r]))
        assert rows.tolist() == expected
    repeated = [i for i, s in enumerate(segments) if len(set(s)) < len(s)]
    assert segments_with_repeats(offsets, values).tolist() == repeated


def test_groups_with_repeats_marks_the_rows_of_those_groups_only():
    group = np.array([3, 3, 3, 1, 1, 2, 2])
    key = np.array([5, 6, 5, 5, 6, 9, 9], dtype=np.uint64)
    assert groups_with_repeats(group, key).tolist() == [True, True, True, False, False, True, True]
    assert groups_with_repeats(group, np.arange(7, dtype=np.uint64)) is None
    # the largest value of the dtype is also the padding: a real repeat of it still counts
    top = np.iinfo(np.uint64).max
    assert groups_with_repeats(np.array([0, 0, 0]), np.array([top, 1, top], dtype=np.uint64)).all()
    assert groups_with_repeats(np.array([0, 0, 0]), np.array([top, 1, 2], dtype=np.uint64)) is None


def test_an_empty_or_single_row_input_is_in_order():
    assert trec_order(np.zeros(0, np.int64), np.zeros(0), np.zeros((0, 1), np.uint64)).tolist() == []
    assert trec_order(np.zeros(1, np.int64), np.zeros(1), np.zeros((1, 2), np.uint64)).tolist() == [0]


def test_matrices_split_into_pieces_give_the_same_order():
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, 30, 40)
    group = np.repeat(np.arange(40), lengths)
    score = rng.integers(0, 3, len(group)).astype(np.float64)
    words = rng.permutation(len(group)).astype(np.uint64).reshape(-1, 1)
    expected = full_sort(group, score, words)
    with mock.patch.object(pdeval.engine.ranking, "_MATRIX_CELLS", 7):
        assert (trec_order(group[::-1], score[::-1], words[::-1]) == full_sort(group[::-1], score[::-1], words[::-1])).all()
        assert (trec_order(group, score, words) == expected).all()
        first = int(np.flatnonzero(group[1:] == group[:-1])[0])  # two rows of one list
        repeated = words[:, 0].copy()
        repeated[first] = repeated[first + 1]
        assert (groups_with_repeats(group, repeated) == (group == group[first])).all()
        assert groups_with_repeats(group, words[:, 0]) is None
