"""pdeval.dask: a dask run frame evaluated partition by partition equals pdeval.evaluate.

Runs on a small in-process ``dask.distributed.LocalCluster`` (threads, one worker). The
workload is generated here (seeded): several runs, tied scores, graded judgments with
pooled-unjudged rows, and qrels variants.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

dd = pytest.importorskip("dask.dataframe", reason="dask[dataframe] is not installed (pip install 'pdeval[dask]')")
distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed (pip install 'pdeval[dask]')")

import pdeval  # noqa: E402
from pdeval.dask import evaluate_dask, is_dask_frame  # noqa: E402
from pdeval.errors import PdevalError, SchemaError  # noqa: E402

MEASURES = ["AP", "P@10", "nDCG@10", "Bpref", "infAP", "rpref_N", "npref"]


def _workload(runs: int = 5, topics: int = 14, docs: int = 40, seed: int = 7) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Runs with ties (scores rounded to 1 decimal in every other run) and graded qrels."""
    rng = np.random.default_rng(seed)
    rows, qrels = [], []
    for t in range(topics):
        query = f"{300 + t}"
        pool = np.array([f"d{n}" for n in rng.choice(10_000, size=3 * docs, replace=False)], dtype=object)
        for r in range(runs):
            picked = rng.choice(len(pool), size=docs - (t % 3), replace=False)
            score = rng.normal(5.0, 1.0, size=len(picked))
            if r % 2 == 0:
                score = np.round(score, 1)
            rows.append(pd.DataFrame({"run": f"r{r}", "query_id": query, "doc_id": pool[picked], "score": score}))
        judged = rng.choice(len(pool), size=docs, replace=False)
        level = rng.choice([-1, 0, 0, 0, 1, 2], size=docs)
        level[0] = 1 + (t % 2)  # every topic has a relevant document
        if t == 0:
            level[1] = 3  # the collection's top grade in one topic only: rpref/npref use it everywhere
        qrels.append(pd.DataFrame({"query_id": query, "doc_id": pool[judged], "relevance": level}))
    run = pd.concat(rows, ignore_index=True).sample(frac=1.0, random_state=seed).reset_index(drop=True)
    return run, pd.concat(qrels, ignore_index=True)


def _variants(qrels: pd.DataFrame, seed: int = 3) -> pd.DataFrame:
    """Two levels x two samples of random judgment subsets (removed ones become pooled)."""
    rng = np.random.default_rng(seed)
    parts = []
    for level in (30, 70):
        for sample in range(2):
            keep = rng.random(len(qrels)) < level / 100
            relevance = np.where(keep, qrels["relevance"].to_numpy(), -1)
            parts.append(qrels.assign(level=level, sample=sample, relevance=relevance))
    return pd.concat(parts, ignore_index=True)[["level", "sample", "query_id", "doc_id", "relevance"]]


def _same(got: pd.DataFrame, expected: pd.DataFrame) -> None:
    keys = [c for c in expected.columns if c != "value"]
    assert list(got.columns) == list(expected.columns)
    assert got.dtypes.to_dict() == expected.dtypes.to_dict()
    got = got.sort_values(keys).reset_index(drop=True)
    expected = expected.sort_values(keys).reset_index(drop=True)
    pd.testing.assert_frame_equal(got[keys], expected[keys])
    np.testing.assert_allclose(got["value"].to_numpy(), expected["value"].to_numpy(), rtol=0, atol=1e-12)


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(processes=False, n_workers=1, threads_per_worker=2, dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture(scope="module")
def data():
    return _workload()


def test_unpartitioned_frame_is_shuffled_and_equals_in_memory(client, data):
    run, qrels = data
    ddf = dd.from_pandas(run, npartitions=4)  # topics straddle partitions: must be shuffled
    result = evaluate_dask(ddf, qrels, MEASURES)
    assert is_dask_frame(result)
    _same(result.compute(), pdeval.evaluate(run, qrels, MEASURES))


def test_query_id_index_with_divisions_needs_no_shuffle(client, data):
    run, qrels = data
    ddf = dd.from_pandas(run.set_index("query_id").sort_index(), npartitions=3)
    assert ddf.known_divisions
    result = evaluate_dask(ddf, qrels, MEASURES)
    _same(result.compute(), pdeval.evaluate(run, qrels, MEASURES))


def test_variants_options_and_partitioned_true(client, data):
    run, qrels = data
    variants = _variants(qrels)
    topics = sorted(run["query_id"].unique())
    blocks = [topics[i::3] for i in range(3)]  # every partition holds whole topics
    ddf = dd.from_map(lambda chosen: run.loc[run["query_id"].isin(chosen)].reset_index(drop=True), blocks)
    options = dict(depth=30, score_precision="float32", undefined="nan")
    result = evaluate_dask(ddf, variants, MEASURES, partitioned=True, **options)
    expected = pdeval.evaluate(run, variants, MEASURES, **options)
    assert {"level", "sample"} <= set(expected.columns)
    _same(result.compute(), expected)


def test_accessor_and_aliases(client, data):
    run, qrels = data
    renamed = run.rename(columns={"query_id": "qid", "doc_id": "docno"})
    ddf = dd.from_pandas(renamed, npartitions=2)
    result = ddf.ir.evaluate(qrels, ["AP", "nDCG"])
    _same(result.compute(), pdeval.evaluate(run, qrels, ["AP", "nDCG"]))


def test_is_dask_frame():
    run, _ = _workload(runs=1, topics=2, docs=5)
    assert is_dask_frame(dd.from_pandas(run, npartitions=1))
    assert not is_dask_frame(run)
    assert not is_dask_frame(None)


def test_errors(data):
    run, qrels = data
    ddf = dd.from_pandas(run, npartitions=2)
    with pytest.raises(PdevalError, match="complete=True"):
        evaluate_dask(ddf, qrels, ["AP"], complete=True)
    with pytest.raises(SchemaError, match="dask DataFrame"):
        evaluate_dask(run, qrels, ["AP"])
    with pytest.raises(PdevalError):
        evaluate_dask(ddf, qrels, ["no-such-measure"])


def test_pdeval_evaluate_dispatches_dask_frames():
    dd = pytest.importorskip("dask.dataframe")
    import pdeval

    run = pdeval.datasets.load("clef2018").runs
    qrels = pdeval.datasets.load("clef2018").qrels
    lazy = pdeval.evaluate(dd.from_pandas(run, npartitions=3).shuffle(on="query_id"), qrels, ["AP", "Bpref"])
    assert hasattr(lazy, "compute")
    got = lazy.compute().sort_values(["run", "query_id", "measure"], ignore_index=True)
    expected = pdeval.evaluate(run, qrels, ["AP", "Bpref"]).sort_values(["run", "query_id", "measure"], ignore_index=True)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)


class _Records(list):
    """A logging handler that keeps the messages it receives."""

    level = 0

    def handle(self, record):
        self.append(record.getMessage())


def _evaluate_logged(client, ddf, qrels, **options):
    import logging

    records = _Records()
    logger = logging.getLogger("distributed.shuffle._scheduler_plugin")
    logger.addHandler(records)
    try:  # a bounded wait: the recommended path must not hang
        got = client.compute(evaluate_dask(ddf, qrels, ["AP", "nDCG@10"], **options)).result(timeout=20)
    finally:
        logger.removeHandler(records)
    return got, [m for m in records if m.startswith("Shuffle")]


def test_recommended_path_on_a_local_cluster_is_quiet_and_exact():
    """The module docstring's path on a two-worker LocalCluster: the run frame as read (no
    set_index), shuffled by tasks, equal to pdeval.evaluate, and no shuffle lines
    in the log (dask's p2p shuffle logs two per shuffle: the control)."""
    data = pdeval.datasets.load("clef2018")
    runs = data.runs[data.runs["run"].isin(data.runs["run"].unique()[:4])]
    expected = pdeval.evaluate(runs, data.qrels, ["AP", "nDCG@10"])
    with distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=":0") as cluster:
        with distributed.Client(cluster) as c:
            ddf = dd.from_pandas(runs, npartitions=4)  # topics straddle partitions
            got, lines = _evaluate_logged(c, ddf, data.qrels)
            _same(got, expected)
            assert lines == []
            topics = sorted(runs["query_id"].unique())  # whole topics per partition: no shuffle at all
            blocks = dd.from_map(lambda chosen: runs[runs["query_id"].isin(chosen)], [topics[i::3] for i in range(3)])
            got, lines = _evaluate_logged(c, blocks, data.qrels, partitioned=True)
            _same(got, expected)
            assert lines == []
            _, lines = _evaluate_logged(c, ddf, data.qrels, shuffle_method="p2p")
            assert len(lines) >= 1  # the control: the same log catches p2p's lines
    with pytest.raises(PdevalError, match="shuffle_method"):
        evaluate_dask(dd.from_pandas(runs, npartitions=2), data.qrels, ["AP"], shuffle_method="fast")
