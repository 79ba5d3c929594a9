"""The ``"run"`` and ``"condensed"`` priors (label_priors): their counts and the pseudo-document.

Oracles: the Dirichlet posterior mean worked by hand; the consequence a user sees: a ranking
whose judged documents are all relevant still has an interval that opens over its unjudged ones;
slow walks down each list for the counts of the window and of the condensed list; and the
condensed value P'@k of ``evaluate``, which the ``"condensed"`` prior estimates where the pool
agrees with the documents condensing moves up.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.analysis.estimates import label_priors, run_effects
from pdeval.errors import PdevalError


def test_shrunk_is_the_dirichlet_posterior_mean_by_hand():
    counts = np.array([[0.0, 3.0, 1.0], [0.0, 0.0, 0.0], [5.0, 0.0, 0.0]])
    pool = np.array([[0.5, 0.3, 0.2], [0.6, 0.2, 0.2], [0.7, 0.2, 0.1]])
    got = label_priors.shrunk(counts, pool)
    np.testing.assert_allclose(got[0], [0.5 / 5, 3.3 / 5, 1.2 / 5])
    np.testing.assert_allclose(got[1], pool[1])  # no judged document in reach: the pool prior
    np.testing.assert_allclose(got[2], [5.7 / 6, 0.2 / 6, 0.1 / 6])
    np.testing.assert_allclose(got.sum(axis=1), 1.0)


def test_a_ranking_judged_all_relevant_does_not_make_its_unjudged_documents_certain():
    run = pd.DataFrame({"run": ["b"] * 3, "query_id": "1", "doc_id": ["d1", "d4", "d5"], "score": [3.0, 2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d4"], "relevance": [1, 0, 1]})
    got = pdeval.estimate(run, qrels, "P@3", prior="run", n_resamples=400, seed=1, per="run", progress=False).iloc[0]
    # the run's counts (2 relevant of 2) plus one pool document (2/3 relevant): 8/9 relevant, not 1
    assert got["estimate"] < 1.0 and got["low"] <= 2 / 3 < got["high"]
    fixed = pdeval.estimate(run, qrels, "P@3", prior="run", spread=0.0, shift=0.0, n_resamples=4000, seed=1,
                            per="run", progress=False).iloc[0]
    se = np.sqrt((8 / 9) * (1 / 9) / 4000) / 3
    assert abs(fixed["estimate"] - (2 + 8 / 9) / 3) < 4 * se


lists_of_codes = st.lists(st.lists(st.integers(-1, 2), min_size=0, max_size=12), min_size=1, max_size=5)


def _laid_out(lists):
    codes = np.array([c for one in lists for c in one], dtype=np.int64)
    offsets = np.r_[0, np.cumsum([len(one) for one in lists])].astype(np.int64)
    return codes, offsets


@given(lists_of_codes, st.integers(1, 8))
@settings(max_examples=200, deadline=None)
def test_condensed_counts_equal_a_walk_down_each_list(lists, depth):
    codes, offsets = _laid_out(lists)
    want = np.zeros((len(lists), 3))
    for i, one in enumerate(lists):  # the condensed list's top depth: the judged ones, then the next below
        holes = sum(code < 0 for code in one[:depth])
        for code in [c for c in one[depth:] if c >= 0][:holes]:
            want[i, code] += 1
    np.testing.assert_array_equal(label_priors.condensed_counts(codes, offsets, depth, 3), want)


@given(lists_of_codes, st.one_of(st.none(), st.integers(0, 6)))
@settings(max_examples=200, deadline=None)
def test_run_counts_equal_the_judged_rows_within_the_window(lists, window):
    codes, offsets = _laid_out(lists)
    list_of_row = np.repeat(np.arange(len(lists)), np.diff(offsets))
    want = np.zeros((len(codes), 3))
    row = 0
    for one in lists:
        for rank in range(len(one)):
            reach = one if window is None else one[max(rank - window, 0):rank + window + 1]
            for code in reach:
                if code >= 0:
                    want[row, code] += 1
            row += 1
    np.testing.assert_array_equal(label_priors.run_counts(codes, offsets, list_of_row, window, 3), want)


def test_the_condensed_prior_estimates_the_condensed_value_where_the_pool_agrees():
    # top 4: d1 (1), u1, d2 (0), u2; condensing at 4 moves d4 (1) and d5 (0) up: half relevant, as the pool
    run = pd.DataFrame({"run": "b", "query_id": "1", "doc_id": ["d1", "u1", "d2", "u2", "d4", "d5", "d6"],
                        "score": [7.0, 6, 5, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d4", "d5", "d6", "x"],
                          "relevance": [1, 0, 1, 0, 1, 0]})
    n = 4000
    got = pdeval.estimate(run, qrels, "P@4", prior="condensed", spread=0.0, shift=0.0, n_resamples=n, seed=1,
                          per="run", progress=False).iloc[0]
    condensed = pdeval.evaluate(run, qrels, "P'@4")["value"].iloc[0]
    assert condensed == 0.5
    se = np.sqrt(2 * 0.5 * 0.5 / n) / 4  # two unjudged documents drawn relevant with probability 1/2
    assert abs(got["estimate"] - condensed) < 4 * se
    assert got["low"] < condensed < got["high"]


def test_the_condensed_prior_needs_a_cutoff_on_every_measure():
    run = pd.DataFrame({"run": "b", "query_id": "1", "doc_id": ["d1", "u1"], "score": [2.0, 1.0]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1"], "relevance": [1]})
    with pytest.raises(PdevalError, match=r"prior='condensed'.*AP has none"):
        pdeval.estimate(run, qrels, ["P@2", "AP"], prior="condensed", progress=False)


def test_the_default_prior_is_the_studys_where_every_measure_has_a_cutoff_else_run():
    run = pd.DataFrame({"run": "b", "query_id": "1", "doc_id": ["d1", "u1", "d2", "d3"], "score": [4.0, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3"], "relevance": [1, 0, 1]})
    with_cutoffs = pdeval.estimate(run, qrels, ["P@2", "nDCG@3"], n_resamples=20, seed=1, progress=False)
    assert with_cutoffs.attrs["prior"] == run_effects.DEFAULT_PRIOR == "condensed"
    explicit = pdeval.estimate(run, qrels, ["P@2", "nDCG@3"], prior="condensed", n_resamples=20, seed=1, progress=False)
    pd.testing.assert_frame_equal(with_cutoffs, explicit)
    without = pdeval.estimate(run, qrels, ["P@2", "AP"], n_resamples=20, seed=1, progress=False)
    assert without.attrs["prior"] == "run"
    assert (without.attrs["shift"], without.attrs["spread"]) == run_effects.SETTINGS["run"]
