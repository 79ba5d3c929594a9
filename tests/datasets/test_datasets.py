"""Tests of pdeval.datasets: the shipped clef2018 data set.

The checks against the original files skip when ../shared/data (relative to the repository
root) is absent; everything else reads only the package's own files.
"""

from __future__ import annotations

import warnings
from importlib import resources
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from pdeval import datasets
from pdeval.errors import DuplicateError, PdevalError
from pdeval.sources.io import read_qrels, read_run
from pdeval.engine.ranking import rank_run
from locations import REPO

SHARED = REPO.parent / "shared" / "data"
needs_shared = pytest.mark.skipif(
    not (SHARED / "clef2018-chs-task1").is_dir(),
    reason=f"the project's shared data is not at {SHARED} (../shared/data from the repository root)",
)

KEPT = [
    "IELAB__IELAB_01",
    "IELAB__IELAB_02",
    "IELAB__IELAB_03",
    "IELAB__IELAB_04",
    "IMS__baseline.exp",
    "SINAI__SINAI_Run1_google+cTakes",
    "baselines__Base_Bing_all",
    "baselines__elastic_BM25f_noqe",
    "baselines__elastic_BM25f_qe",
    "baselines__indri_dirichlet_noqe",
    "baselines__indri_dirichlet_qe",
    "baselines__indri_okapi_noqe",
    "baselines__indri_okapi_qe",
    "baselines__indri_tfidf_noqe",
    "baselines__indri_tfidf_qe",
]


@pytest.fixture(scope="module")
def clef():
    return datasets.load("clef2018")


def test_unknown_name_suggests():
    with pytest.raises(PdevalError, match="Did you mean: 'clef2018'"):
        datasets.load("clef218")
    with pytest.raises(PdevalError, match="unknown data set"):
        datasets.load("msmarco")


def test_files_are_package_data():
    package = resources.files("pdeval.datasets")
    for name in ("clef2018.runs.txt.gz", "clef2018.qrels.txt.gz", "clef2018.qrels_partial_20180911.txt.gz", "PROVENANCE.md"):
        assert package.joinpath(name).is_file(), name
    # the package-data patterns of pyproject.toml (*.gz, *.md, *.txt) cover every data file
    directory = Path(str(package))
    data_files = [p.name for p in directory.iterdir() if p.is_file() and p.suffix != ".py"]
    assert all(p.endswith((".gz", ".md", ".txt")) for p in data_files), data_files
    size = sum((directory / p).stat().st_size for p in data_files)
    assert size < 4_000_000, size


def test_dataset_fields(clef):
    assert isinstance(clef, datasets.Dataset)
    assert clef.name == "clef2018"
    assert "CLEF eHealth 2018" in clef.description


def test_runs(clef):
    runs = clef.runs
    assert runs.columns.tolist() == ["run", "query_id", "doc_id", "score", "rank"]
    assert runs.score.dtype == np.float64 and runs["rank"].dtype == np.int64
    assert sorted(runs.run.unique()) == KEPT
    assert len(runs) == 70_493
    assert runs.query_id.nunique() == 50
    assert (runs.groupby("run").query_id.nunique() == 50).all()
    per_topic = runs.groupby(["run", "query_id"]).size()
    assert per_topic.max() == 100
    assert (per_topic.drop("baselines__Base_Bing_all", level="run") == 100).all()
    assert per_topic.loc["baselines__Base_Bing_all"].sum() == 493
    assert not runs.duplicated(["run", "query_id", "doc_id"]).any()


def test_runs_are_in_trec_eval_order(clef):
    ranked = rank_run(clef.runs)
    pd.testing.assert_frame_equal(ranked, clef.runs)
    assert clef.runs.groupby(["run", "query_id"])["rank"].min().eq(1).all()


def test_qrels(clef):
    final, partial = clef.qrels, clef.partial_qrels
    assert final.columns.tolist() == ["query_id", "doc_id", "relevance"]
    assert len(final) == 26_025 and len(partial) == 18_764
    assert final.relevance.value_counts().to_dict() == {0: 13_316, 2: 6_934, 1: 5_775}
    assert partial.relevance.value_counts().to_dict() == {0: 9_711, 2: 5_010, 1: 4_043}
    assert final.query_id.nunique() == partial.query_id.nunique() == 50
    # the partial snapshot is a strict subset of the final judgments, grades unchanged
    joined = partial.merge(final, on=["query_id", "doc_id"], how="left", suffixes=("_partial", "_final"))
    assert joined.relevance_final.notna().all()
    assert (joined.relevance_partial == joined.relevance_final).all()
    assert set(clef.runs.query_id) == set(final.query_id)


def test_frames_are_fresh_copies():
    first = datasets.load("clef2018")
    first.runs.loc[0, "score"] = -1.0
    assert datasets.load("clef2018").runs.loc[0, "score"] != -1.0


@needs_shared
def test_rebuild_from_shared_data_matches(clef):
    source = SHARED / "clef2018-chs-task1"
    clean, left_out = [], []
    for path in sorted((source / "runs").iterdir()):
        try:
            clean.append(read_run(path))
        except DuplicateError:
            left_out.append(path.name)
    assert len(left_out) == 9 and len(clean) == 15
    expected = rank_run(pd.concat(clean, ignore_index=True), depth=100)
    pd.testing.assert_frame_equal(clef.runs, expected)
    pd.testing.assert_frame_equal(clef.qrels, read_qrels(source / "qrels.txt"))
    pd.testing.assert_frame_equal(clef.partial_qrels, read_qrels(source / "aux" / "qrels_partial_20180911.txt"))


@needs_shared
def test_top100_keeps_exact_scores(clef):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        original = read_run(SHARED / "clef2018-chs-task1" / "runs" / "IELAB__IELAB_01.txt.gz")
    merged = clef.runs[clef.runs.run == "IELAB__IELAB_01"].merge(original, on=["query_id", "doc_id"], suffixes=("", "_orig"))
    assert len(merged) == 5000
    assert (merged.score == merged.score_orig).all()
