"""ranx Run / Qrels <-> pdeval frames, exactly both ways (ranx's own objects are the reference)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import SchemaError

ranx = pytest.importorskip("ranx")


def _sorted(frame: pd.DataFrame) -> pd.DataFrame:
    keys = [c for c in ("run", "query_id", "doc_id") if c in frame.columns]
    return frame.sort_values(keys).reset_index(drop=True)


def test_from_ranx_keeps_ids_scores_and_name():
    scores = {"q 1": {"d#1": 0.1 + 0.2, "D2": -1e-300, "é3": 1e300}, "2": {"x": 5.0}}
    frame = pdeval.from_ranx(ranx.Run(scores, name="bm25 (k1=0.9)"))
    assert list(frame.columns) == ["run", "query_id", "doc_id", "score"]
    assert set(frame["run"]) == {"bm25 (k1=0.9)"}
    got = {(q, d): s for q, d, s in zip(frame["query_id"], frame["doc_id"], frame["score"])}
    assert got == {(q, d): s for q, docs in scores.items() for d, s in docs.items()}  # exact floats
    qrels = pdeval.from_ranx(ranx.Qrels({"q 1": {"d#1": 2, "D2": 0}}))
    assert list(qrels.columns) == ["query_id", "doc_id", "relevance"]
    assert qrels["relevance"].tolist() == [2, 0] and qrels["relevance"].dtype == np.int64


def test_round_trips():
    clef = pdeval.datasets.load("clef2018")
    names = clef.runs["run"].unique()[:3]
    runs = clef.runs[clef.runs["run"].isin(names)][["run", "query_id", "doc_id", "score"]]
    converted = pdeval.to_ranx(runs)
    assert isinstance(converted, dict) and sorted(converted) == sorted(names)
    assert all(isinstance(r, ranx.Run) and r.name == n for n, r in converted.items())
    back = pd.concat([pdeval.from_ranx(r) for r in converted.values()])
    pd.testing.assert_frame_equal(_sorted(back), _sorted(runs), check_dtype=False)
    one = runs[runs["run"] == names[0]]
    assert pdeval.to_ranx(one).name == names[0] and one.ir.to_ranx().to_dict() == pdeval.to_ranx(one).to_dict()
    qrels = clef.qrels[["query_id", "doc_id", "relevance"]]
    pd.testing.assert_frame_equal(_sorted(pdeval.from_ranx(pdeval.to_ranx(qrels))), _sorted(qrels), check_dtype=False)
    # and ranx -> pdeval -> ranx
    original = ranx.Run({"1": {"a": 0.5, "b": 0.25}, "2": {"c": 1.0}}, name="r")
    again = pdeval.to_ranx(pdeval.from_ranx(original))
    assert again.name == "r" and again.to_dict() == original.to_dict()


def test_ranx_objects_evaluate_like_frames():
    clef = pdeval.datasets.load("clef2018")
    one = clef.runs[clef.runs["run"] == clef.runs["run"].iloc[0]]
    expected = pdeval.evaluate(one, clef.qrels, ["AP", "Bpref"])
    got = pdeval.evaluate(pdeval.to_ranx(one), pdeval.to_ranx(clef.qrels), ["AP", "Bpref"])
    pd.testing.assert_frame_equal(got, expected)


def test_refusals():
    with pytest.raises(SchemaError, match="variant"):
        pdeval.to_ranx(pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1], "level": [50]}))
    with pytest.raises(SchemaError):
        pdeval.from_ranx({"1": {"a": 1.0}})


def test_a_dict_of_three_ranx_runs_both_ways():
    """What a multi-run ranx workflow holds, {name: Run}, from pandas 3 frames (``str`` ids,
    which ranx's own ``Run.from_df`` refuses) and back; ranx's recall@1000 (independent of the
    order of ties) is the oracle of the evaluation."""
    clef = pdeval.datasets.load("clef2018")
    names = list(clef.runs["run"].unique()[:3])
    runs = clef.runs[clef.runs["run"].isin(names)][["run", "query_id", "doc_id", "score"]]
    assert runs["query_id"].dtype == "str" and clef.qrels["doc_id"].dtype == "str"  # pandas 3 strings
    with pytest.raises(AssertionError):  # ranx 0.3's from_df takes object columns only
        ranx.Run.from_df(runs, q_id_col="query_id", doc_id_col="doc_id", score_col="score")
    many = pdeval.to_ranx(runs)
    keys = [f"system {c}" for c in "cab"]  # keys rename, in the dict's (not alphabetical) order
    renamed = {key: many[name] for key, name in zip(keys, [names[2], names[0], names[1]])}
    qrels = pdeval.to_ranx(clef.qrels)
    frame = pdeval.from_ranx(renamed)
    assert pd.unique(frame["run"]).tolist() == keys and frame["query_id"].dtype == "str"
    expected = runs.assign(run=runs["run"].map(dict(zip([names[2], names[0], names[1]], keys))))
    pd.testing.assert_frame_equal(_sorted(frame), _sorted(expected), check_dtype=False)
    got = pdeval.evaluate(renamed, qrels, ["R@1000", "AP"])
    pd.testing.assert_frame_equal(got, pdeval.evaluate(expected, clef.qrels, ["R@1000", "AP"]))
    recall = got[got["measure"] == "R@1000"].groupby("run")["value"].mean()
    for key, run in renamed.items():
        assert recall[key] == pytest.approx(ranx.evaluate(qrels, run, "recall@1000"), abs=1e-12)
    table = pdeval.experiment(renamed, qrels, ["AP"], baseline=0)  # baseline = the first key
    assert table["name"].tolist() == keys and np.isnan(table.loc[0, "AP p-value"])
    # a list of runs is named by Run.name; names that repeat are refused
    assert pd.unique(pdeval.from_ranx(list(many.values()))["run"]).tolist() == names
    with pytest.raises(SchemaError, match="repeat"):
        pdeval.from_ranx([many[names[0]], many[names[0]]])


def test_ranx_objects_from_arrow_and_categorical_ids():
    frame = pd.DataFrame({"run": ["a", "a", "b"], "query_id": ["1", "2", "1"], "doc_id": ["x", "y", "x"], "score": [1.0, 0.5, 2.0]})
    for ids in ("string[pyarrow]", "category", object):
        typed = frame.astype({"run": ids, "query_id": ids, "doc_id": ids})
        converted = pdeval.to_ranx(typed)
        assert sorted(converted) == ["a", "b"] and converted["a"].to_dict() == {"1": {"x": 1.0}, "2": {"y": 0.5}}
        pd.testing.assert_frame_equal(_sorted(pdeval.from_ranx(converted)), _sorted(frame), check_dtype=False)
