"""Iterables of ir_datasets records evaluate like the frames they hold (records built with the
installed ir_datasets classes; nothing is downloaded)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import pdeval
from pdeval.errors import SchemaError
from locations import TESTS

formats = pytest.importorskip("ir_datasets.formats")

DATA = TESTS / "data" / "trec_eval"


@pytest.fixture(scope="module")
def frames():
    return pdeval.read_run(DATA / "results.test"), pdeval.read_qrels(DATA / "qrels.rel_level")


def test_trec_qrels_records_read_as_their_frame(frames):
    _, qrels = frames
    records = [formats.TrecQrel(q, d, r, "0") for q, d, r in qrels.itertuples(index=False)]
    read = pdeval.read_qrels(iter(records))
    pd.testing.assert_frame_equal(read[["query_id", "doc_id", "relevance"]], qrels, check_dtype=False)


def test_scored_doc_and_qrel_records_evaluate_like_frames(frames):
    run, qrels = frames
    measures = ["AP", "nDCG@10", "Bpref", "infAP", "bpref_R"]
    expected = pdeval.evaluate(run, qrels, measures).drop(columns="run")
    docs = (formats.GenericScoredDoc(q, d, s) for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False))
    judged = (formats.TrecQrel(q, d, r, "0") for q, d, r in qrels.itertuples(index=False))
    got = pdeval.evaluate(docs, judged, measures)
    assert set(got["run"]) == {"run"}
    read = pdeval.read_run([formats.GenericScoredDoc(q, d, s) for q, d, s in run[["query_id", "doc_id", "score"]].itertuples(index=False)])
    pd.testing.assert_frame_equal(read[["query_id", "doc_id", "score"]], run[["query_id", "doc_id", "score"]], check_dtype=False)
    pd.testing.assert_frame_equal(got.drop(columns="run"), expected)


def test_trec_prels_keep_inclusion_probabilities(frames):
    run, qrels = frames
    prels = [formats.TrecPrel(q, d, r, 1, 0.5 + (i % 5) / 10) for i, (q, d, r) in enumerate(qrels.itertuples(index=False))]
    read = pdeval.read_qrels(prels)
    assert list(read.columns) == ["query_id", "doc_id", "relevance", "inclusion_prob"]
    assert read["inclusion_prob"].tolist() == [p.iprob for p in prels]
    # sampling information is not a qrels variant: one evaluation, the same values
    got = pdeval.evaluate(run, prels, ["AP", "infAP"])
    pd.testing.assert_frame_equal(got, pdeval.evaluate(run, qrels, ["AP", "infAP"]))


def test_not_records():
    with pytest.raises(SchemaError, match="empty"):
        pdeval.read_qrels(iter([]))
    with pytest.raises(SchemaError, match="named fields"):
        pdeval.read_qrels([("1", "a", 1)])
    with pytest.raises(SchemaError):
        pdeval.evaluate({"1": {"a": 1.0}}, [formats.TrecQrel("1", "a", 1, "0")], "AP")
