"""Evaluating run files one at a time gives what evaluating all their rows at once gives."""

from __future__ import annotations

import warnings
from pathlib import Path

import pandas as pd
import pytest

import pdeval
from pdeval.errors import DuplicateError, PdevalWarning, SchemaError
from pdeval.evaluation.runfiles import evaluate_run_files
from locations import TESTS

DATA = TESTS / "data"
MEASURES = ["AP", "P@10", "nDCG", "Bpref", "infAP", "NumRet"]


def write_runs(directory: Path, runs: pd.DataFrame) -> None:
    directory.mkdir()
    pdeval.write_run(runs, directory, per_run=True, suffix=".txt.gz")


@pytest.mark.parametrize("batch_rows", [1, 3_000, 1 << 20])  # a file per batch, a few, all at once
def test_files_in_batches_equal_all_rows_at_once(tmp_path, monkeypatch, batch_rows):
    import pdeval.evaluation.runfiles

    monkeypatch.setattr(pdeval.evaluation.runfiles, "BATCH_ROWS", batch_rows)
    clef = pdeval.datasets.load("clef2018")
    runs = clef.runs.loc[clef.runs["run"].isin(clef.runs["run"].unique()[:6])]
    write_runs(tmp_path / "runs", runs)
    for options in ({}, {"complete": True, "depth": 20, "score_precision": "float32"}):
        expected = pdeval.evaluate(pdeval.read_run(tmp_path / "runs"), clef.qrels, MEASURES, **options)
        got = evaluate_run_files(tmp_path / "runs", clef.qrels, MEASURES, **options)
        pd.testing.assert_frame_equal(got, expected)


def test_duplicates_and_names_follow_read_run(tmp_path):
    qrels = pd.DataFrame({"query_id": ["1"], "doc_id": ["a"], "relevance": [1]})
    runs = tmp_path / "runs"
    runs.mkdir()
    (runs / "b.txt").write_text("1 Q0 a 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    (runs / "a.txt").write_text("1 Q0 x 1 2.0 t\n1 Q0 a 2 1.0 t\n")
    with pytest.raises(DuplicateError, match="b.txt"):
        evaluate_run_files(runs, qrels, ["AP"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        got = evaluate_run_files(runs, qrels, "AP", duplicates="first")
    assert got[["run", "value"]].values.tolist() == [["a", 0.5], ["b", 1.0]]
    (runs / "b.res").write_text("1 Q0 a 1 2.0 t\n")
    with pytest.raises(SchemaError, match="two files get the run name"):
        evaluate_run_files(runs, qrels, ["AP"])
