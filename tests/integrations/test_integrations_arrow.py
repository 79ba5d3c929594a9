"""Polars and Arrow inputs evaluate like pandas inputs; results go back as Polars / Arrow;
runs, qrels and results round-trip through Parquet and Arrow IPC files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import SchemaError
from pdeval.frames.foreign import to_pandas

pa = pytest.importorskip("pyarrow")
pl = pytest.importorskip("polars")

MEASURES = ["AP", "nDCG'@10", "Bpref", "infAP", "RankEff"]


@pytest.fixture(scope="module")
def clef():
    data = pdeval.datasets.load("clef2018")
    runs = data.runs[data.runs["run"].isin(data.runs["run"].unique()[:4])].reset_index(drop=True)
    return runs, data.qrels


def test_polars_and_arrow_inputs_equal_pandas_inputs(clef):
    runs, qrels = clef
    expected = pdeval.evaluate(runs, qrels, MEASURES)
    inputs = [
        (pl.from_pandas(runs), pl.from_pandas(qrels)),
        (pl.from_pandas(runs).lazy(), pa.Table.from_pandas(qrels)),
        (pa.Table.from_pandas(runs, preserve_index=False), pa.Table.from_pandas(qrels).to_batches()[0]),
    ]
    for run, judged in inputs:
        pd.testing.assert_frame_equal(pdeval.evaluate(run, judged, MEASURES), expected)
    # PyTerrier-like aliases survive the trip through Polars
    renamed = pl.from_pandas(runs.rename(columns={"query_id": "qid", "doc_id": "docno"}))
    pd.testing.assert_frame_equal(pdeval.evaluate(renamed, qrels, MEASURES), expected)


def test_results_on_request(clef):
    runs, qrels = clef
    expected = pdeval.evaluate(runs, qrels, MEASURES)
    as_polars = pdeval.evaluate(runs, qrels, MEASURES, output="polars")
    as_arrow = pdeval.evaluate(runs, qrels, MEASURES, output="arrow")
    assert isinstance(as_polars, pl.DataFrame) and isinstance(as_arrow, pa.Table)
    pd.testing.assert_frame_equal(as_polars.to_pandas(), expected, check_dtype=False)
    pd.testing.assert_frame_equal(as_arrow.to_pandas(), expected, check_dtype=False)
    with pytest.raises(pdeval.errors.PdevalError, match="output"):
        pdeval.evaluate(runs, qrels, "AP", output="numpy")


def test_arrow_buffers_are_not_copied():
    table = pa.table({"query_id": ["1", "1", "2"], "doc_id": ["a", "b", "c"], "score": [3.0, 2.0, 1.0]})
    frame = to_pandas(table)
    score_buffer = np.frombuffer(table.column("score").chunk(0).buffers()[1], dtype=np.float64)
    assert np.shares_memory(frame["score"].to_numpy(), score_buffer)
    ids = pa.array(frame["doc_id"])
    assert ids.buffers()[2].address == table.column("doc_id").chunk(0).buffers()[2].address


@pytest.mark.parametrize("suffix", [".parquet", ".arrow", ".feather"])
def test_files_round_trip(tmp_path, clef, suffix):
    runs, qrels = clef
    result = pdeval.evaluate(runs, qrels, MEASURES)
    reduced = pdeval.reduce(qrels, [50], samples=2, seed=1)  # variant keys kept
    for name, kind, frame in (("run", "run", runs), ("qrels", "qrels", qrels), ("result", "result", result), ("reduced", "qrels", reduced)):
        path = tmp_path / f"{name}{suffix}"
        pdeval.write_table(frame, path)
        back = pdeval.read_table(path)
        pd.testing.assert_frame_equal(back, frame, check_dtype=False)
        assert pdeval.frames.canonical.frame_kind(back) == kind
    read_run = pdeval.read_run(tmp_path / f"run{suffix}")
    pd.testing.assert_frame_equal(pdeval.evaluate(read_run, pdeval.read_qrels(tmp_path / f"qrels{suffix}"), MEASURES), result)
    first = runs[runs["run"] == runs["run"].iloc[0]]
    pdeval.write_table(first.drop(columns="run"), tmp_path / f"bm25{suffix}")
    two = pdeval.read_run([tmp_path / f"run{suffix}", tmp_path / f"bm25{suffix}"])  # what `pdeval eval` passes
    assert two["run"].tolist() == runs["run"].tolist() + ["bm25"] * len(first)
    assert set(pdeval.read_run(tmp_path / f"bm25{suffix}", name="b")["run"]) == {"b"}
    pdeval.write_table(pl.from_pandas(result), tmp_path / f"polars{suffix}")
    pd.testing.assert_frame_equal(pdeval.read_table(tmp_path / f"polars{suffix}", kind="result"), result, check_dtype=False)


def test_file_errors(tmp_path, clef):
    runs, _ = clef
    with pytest.raises(SchemaError, match="suffix"):
        pdeval.write_table(runs, tmp_path / "run.csv")
    with pytest.raises(pdeval.sources.io.MissingFileError):
        pdeval.read_table(tmp_path / "absent.parquet")
    pdeval.write_table(pd.DataFrame({"x": [1]}), tmp_path / "x.parquet")
    with pytest.raises(SchemaError, match="neither"):
        pdeval.read_table(tmp_path / "x.parquet")
