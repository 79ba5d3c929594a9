"""Measure-name suggestions point at the measure meant: a cutoff run into the name (``P10``,
``ndcg_cut10``) is read as a cutoff, in pdeval's and trec_eval's spellings."""

from __future__ import annotations

import pandas as pd
import pytest

import pdeval
from pdeval.errors import MeasureError


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("ndcg_cut10", ["nDCG@10", "ndcg_cut.10"]),
        ("P10", ["P@10", "P.10"]),
        ("p10", ["P@10", "P.10"]),
        ("recall100", ["R@100", "recall.100"]),
        ("map_cut20", ["AP@20", "map_cut.20"]),
        ("map10", ["AP@10"]),
        ("nDCG10", ["nDCG@10"]),
        ("recip_rank10", ["RR@10"]),
    ],
)
def test_a_cutoff_run_into_the_name(typed, expected):
    with pytest.raises(MeasureError) as caught:
        pdeval.parse_measure(typed)
    assert caught.value.suggestions == expected
    assert "bpref10" not in str(caught.value)
    for suggestion in expected:  # every suggestion is itself a measure, the same one
        assert str(pdeval.parse_measure(suggestion)) == str(pdeval.parse_measure(expected[0]))


def test_other_typos_still_get_the_closest_names():
    with pytest.raises(MeasureError) as caught:
        pdeval.parse_measure("bpre")
    assert caught.value.suggestions[0] == "Bpref"
    with pytest.raises(MeasureError) as caught:  # a measure without a cutoff: spelling, not a cutoff
        pdeval.parse_measure("infAP10")
    assert "infAP" in caught.value.suggestions
    assert str(pdeval.parse_measure("bpref10")) == "bpref10"  # a real measure is not a typo


def test_suggestions_reach_evaluate():
    run = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    with pytest.raises(MeasureError, match=r"Did you mean: 'P@10', 'P\.10'\?"):
        pdeval.evaluate(run, qrels, "P10")
