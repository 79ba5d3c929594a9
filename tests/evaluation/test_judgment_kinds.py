"""pdeval.evaluate on qrels frames of other judgment kinds: preference frames (the registry's
prefs_* measures) and judgment-group frames (each topic's mean over its groups)."""

from __future__ import annotations

import pandas as pd
import pytest

import pdeval
from pdeval.errors import MeasureError, PdevalError
from pdeval.measures import REGISTRY, available
from pdeval.measures.preference_judgments import PREFERENCE_MEASURES

RUN = pd.DataFrame({"run": ["r1"] * 3 + ["r2"] * 3, "query_id": "1", "doc_id": ["a", "b", "c"] * 2,
                    "score": [3.0, 2.0, 1.0, 1.0, 2.0, 3.0]})
QRELS = pd.DataFrame({"query_id": "1", "doc_id": ["a", "b", "c"], "relevance": [1, 2, 0]})


def test_the_registry_lists_every_preference_measure_with_its_paper():
    names = [name for name, spec in REGISTRY.items() if spec.judgments == "preferences"]
    assert names == list(PREFERENCE_MEASURES) and len(names) == 14
    table = available().set_index("measure")
    assert all("trec_eval 10.0" in table.loc[name, "reference"] for name in names)
    assert "Carterette & Bennett 2008" in table.loc["prefs_simp", "reference"]
    assert {REGISTRY[name].aggregate for name in names if "num_prefs" in name} == {"sum"}


def test_evaluate_of_a_preference_frame_equals_evaluate_preferences():
    prefs = pdeval.qrels_prefs(QRELS)
    result = pdeval.evaluate(RUN, prefs, list(PREFERENCE_MEASURES))
    expected = pdeval.evaluate_preferences(RUN, prefs)
    pd.testing.assert_frame_equal(result, expected)
    simp = result[result["measure"] == "prefs_simp"].set_index("run")["value"]
    assert simp["r1"] == pytest.approx(2 / 3) and simp["r2"] == pytest.approx(1 / 3)  # b>a, b>c, a>c
    cut = pdeval.evaluate(RUN, prefs, ["prefs_num_prefs_ful", "prefs_num_prefs_ful_ret"], depth=2)
    assert list(cut["value"]) == [2.0, 0.0, 1.0, 0.0]  # the third document is cut: pairs with it are implied


def test_measures_and_judgments_of_different_kinds_are_refused_with_the_remedy():
    with pytest.raises(MeasureError, match="pass a preference frame"):
        pdeval.evaluate(RUN, QRELS, ["prefs_simp"])
    with pytest.raises(MeasureError, match="read relevance judgments"):
        pdeval.evaluate(RUN, pdeval.qrels_prefs(QRELS), ["AP"])
    with pytest.raises(PdevalError, match="do not apply to preference judgments"):
        pdeval.evaluate(RUN, pdeval.qrels_prefs(QRELS), ["prefs_simp"], rel=2)
    with pytest.raises(MeasureError, match="no depth of its own"):
        pdeval.evaluate(RUN, pdeval.qrels_prefs(QRELS), ["prefs_simp(depth=2)"])


def test_evaluate_of_a_judgment_group_frame_averages_each_topic_over_its_groups():
    run = RUN[RUN["run"] == "r1"]
    qrels = pd.DataFrame({"query_id": "1", "judgment_group": ["u", "u", "v"], "doc_id": ["a", "b", "b"],
                          "relevance": [1, 0, 1]})
    result = pdeval.evaluate(run, qrels, ["AP", "P@2"])
    pd.testing.assert_frame_equal(result, pdeval.evaluate_judgment_groups(run, qrels, ["AP", "P@2"]))
    assert list(result["value"]) == [pytest.approx(0.75), 0.5]  # AP: (1 + 1/2) / 2
    each = pdeval.evaluate(run, qrels, ["AP"], variants=["judgment_group"])  # one value per group
    assert list(each["value"]) == [1.0, 0.5]
