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
