"""The preference counts of judgment groups ordered by levels, from ranks, equal the counts
from the preference edges (the general path) on random graded judgments and runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pdeval.measures import preference_structure
from pdeval.measures.preference_classes import class_counts
from pdeval.measures.preference_counts import evaluate_prepared
from pdeval.measures.preference_judgments import PREFERENCE_MEASURES
from pdeval.measures.preference_structure import Preferences

NAMES = list(PREFERENCE_MEASURES)


@st.composite
def graded_case(draw):
    """Graded judgments (1-3 judgment groups per topic, one sub-group each, a few levels with
    ties, negative levels too, documents judged by some groups only) and runs retrieving judged
    and unjudged documents, with tied scores and topics the judgments lack."""
    rows, run_rows = [], []
    n_docs = draw(st.integers(1, 9))
    docs = [f"d{j}" for j in range(n_docs)]
    levels = draw(st.lists(st.sampled_from([-1.0, 0.0, 1.0, 2.0, 3.0]), min_size=1, max_size=4, unique=True))
    for topic in range(1, draw(st.integers(1, 3)) + 1):
        for group in range(draw(st.integers(1, 3))):
            judged = draw(st.lists(st.sampled_from(docs), min_size=1, max_size=n_docs, unique=True))
            for doc in judged:
                rows.append((str(topic), f"g{group}", "s", doc, draw(st.sampled_from(levels))))
    for run in range(draw(st.integers(1, 3))):
        for topic in range(1, 5):
            pool = docs + ["u1", "u2"]
            retrieved = draw(st.lists(st.sampled_from(pool), max_size=len(pool), unique=True))
            for doc in retrieved:
                run_rows.append((f"r{run}", str(topic), doc, float(draw(st.integers(0, 3)))))
    prefs = pd.DataFrame(rows, columns=["query_id", "judgment_group", "judgment_subgroup", "doc_id", "relevance"])
    run = pd.DataFrame(run_rows or [("r0", "1", "d0", 1.0)], columns=["run", "query_id", "doc_id", "score"])
    return prefs, run, draw(st.sampled_from([None, 1, 2, 4]))


def _both_paths(prefs, run, depth, monkeypatch):
    by_level = Preferences(prefs)
    with monkeypatch.context() as patch:
        patch.setattr(preference_structure, "MAX_LEVELS", 0)  # every jg counted from its edges
        by_edge = Preferences(prefs)
    assert not by_edge.jg_by_level.any()
    return (evaluate_prepared(by_level, run, NAMES, depth=depth), evaluate_prepared(by_edge, run, NAMES, depth=depth),
            by_level)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=graded_case())
def test_counts_by_level_equal_the_counts_of_the_edges(case, monkeypatch):
    prefs, run, depth = case
    got, expected, structure = _both_paths(prefs, run, depth, monkeypatch)
    assert structure.jg_by_level.all()
    pd.testing.assert_frame_equal(got, expected, check_exact=True)


def test_jgs_of_several_subgroups_or_many_levels_keep_the_edge_path(monkeypatch):
    prefs = pd.DataFrame({"query_id": "1", "judgment_group": ["a", "a", "a", "b", "b", "c", "c"],
                          "judgment_subgroup": ["s", "s", "s", "s", "t", "s", "s"],
                          "doc_id": ["x", "y", "z", "x", "y", "x", "z"],
                          "relevance": [2.0, 1.0, 0.0, 1.0, 0.0, np.nan, 1.0]})
    run = pd.DataFrame({"run": "r", "query_id": "1", "doc_id": ["z", "x", "q", "y"], "score": [4.0, 3.0, 2.0, 1.0]})
    got, expected, structure = _both_paths(prefs, run, None, monkeypatch)
    assert structure.jg_by_level.tolist() == [True, False, False]  # b: two sub-groups; c: a NaN level
    assert not structure.topic_by_level.any()  # three jgs: the pair measures from the pairs
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
    with monkeypatch.context() as patch:
        patch.setattr(preference_structure, "MAX_LEVELS", 2)
        assert Preferences(prefs).jg_by_level.tolist() == [False, False, False]  # a has 3 levels


def test_class_counts_of_one_ranking():
    """One jg, levels 2 > 1 > 0 of members a, b, c, d (d: 0); the run retrieves c, a (in that
    order); b and d are not retrieved (placed after, by name)."""
    member_jg = np.zeros(4, dtype=np.int64)
    grade = np.array([2, 1, 0, 0])
    order = np.array([[2, 0, 1, 3]])  # c, a, b, d
    retrieved = np.array([[True, False, True, False]])
    counts = {name: value[0, 0] for name, value in class_counts(member_jg, grade, 3, order, retrieved, 1).items()}
    # preferences: a>b, a>c, a>d, b>c, b>d
    assert counts["ful_ret"] == 0  # a>c: both retrieved, c first
    assert counts["poss_ret"] == 1
    assert counts["ful_imp"] == 2  # a>b, a>d: a retrieved
    assert counts["poss_imp"] == 3  # and b>c (c retrieved)
    assert counts["not_occur"] == 1  # b>d
    assert counts["upper_ful"] == 1 and counts["upper_poss"] == 1  # a>b, the only one above the lowest level
    assert counts["upper_ful_ret"] == 0 and counts["upper_poss_ret"] == 0


@pytest.mark.parametrize("levels", [1, 16])
def test_one_level_and_the_most_levels_by_rank(levels, monkeypatch):
    docs = [f"d{j}" for j in range(20)]
    prefs = pd.DataFrame({"query_id": "1", "judgment_group": "g", "judgment_subgroup": "s", "doc_id": docs,
                          "relevance": [float(j % levels) for j in range(20)]})
    run = pd.DataFrame({"run": "r", "query_id": "1", "doc_id": docs[::-3] + ["u"], "score": np.arange(8.0)})
    got, expected, structure = _both_paths(prefs, run, None, monkeypatch)
    assert structure.jg_by_level.all() and structure.n_grades == levels
    pd.testing.assert_frame_equal(got, expected, check_exact=True)
