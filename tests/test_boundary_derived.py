"""Derived qrels, second-wave parameters and degenerate inputs (issue 27, classes 2, 4 and 6).

* Class 2: a function that builds new qrels from given ones carries the sampling design
  (``stratum``, ``inclusion_prob``) through or refuses with a reason; ``leave_out_pooling``
  carries it, so that its pooled values equal ``evaluate``'s on the same qrels.
* Class 4: an unknown data set name, a damaged cache line: PdevalErrors that say what is wrong.
* Class 6: an empty frame to ``to_ranx``, one system or one topic to the statistics and
  correlation functions: a precise error, as ``evaluate`` gives.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.datasets import remote
from pdeval.errors import ParseError, PdevalError, SchemaError

# ---- class 2: derived qrels ---------------------------------------------------------------------
STRATIFIED = ["xinfAP", "infNDCG", "iP@2", "AP", "infAP"]


def sampled():
    """Two teams' runs over two topics, and stratified sampled qrels of their pool."""
    rows = []
    for run, docs in {"A.1": "abcdef", "A.2": "abcgeh", "B.1": "gaxbyc"}.items():
        for topic in ("q1", "q2"):
            rows += [(run, topic, d, float(10 - i)) for i, d in enumerate(docs)]
    run = pd.DataFrame(rows, columns=["run", "query_id", "doc_id", "score"])
    qrows = []
    for topic in ("q1", "q2"):
        for i, d in enumerate("abcdefghxy"):
            qrows.append((topic, d, [1, 0, -1, 1, 0, -1, 1, 0, 2, -1][(i + (topic == "q2")) % 10], "1" if i < 4 else "2"))
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance", "stratum"])
    return run, qrels


@pytest.mark.parametrize("removed_as", ["absent", "pooled"])
def test_leave_out_pooling_keeps_the_design(removed_as):
    run, qrels = sampled()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = pdeval.leave_out_pooling(run, qrels, pool_depth=3, group=lambda name: name.split(".")[0],
                                       measures=STRATIFIED, removed_as=removed_as)
        full = pdeval.evaluate(run, qrels, STRATIFIED)
    merged = out.merge(full, on=["run", "query_id", "measure"])
    assert len(merged) == len(full)
    np.testing.assert_allclose(merged["value_pooled"], merged["value"], atol=0, rtol=0)
    # the left-out values are those of evaluate on the left-out qrels written out, design kept
    for group, names in (("A", ["A.1", "A.2"]), ("B", ["B.1"])):
        lost = out[(out["group"] == group)]
        pooled_by_others = set(map(tuple, pdeval.rank_run(run[~run["run"].isin(names)], depth=3)[["query_id", "doc_id"]]
                                   .to_numpy()))
        pooled_by_all = set(map(tuple, pdeval.rank_run(run, depth=3)[["query_id", "doc_id"]].to_numpy()))
        only_group = pooled_by_all - pooled_by_others
        mine = qrels[[pair in only_group for pair in zip(qrels["query_id"], qrels["doc_id"])]]
        left = qrels.drop(index=mine.index) if removed_as == "absent" else qrels.assign(
            relevance=np.where(qrels.index.isin(mine.index), -1, qrels["relevance"]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            expected = pdeval.evaluate(run[run["run"].isin(names)], left, STRATIFIED)
        got = lost.merge(expected, on=["run", "query_id", "measure"])
        assert len(got) == len(expected)
        np.testing.assert_allclose(got["value_left_out"], got["value"], atol=1e-12, rtol=0)


@pytest.mark.parametrize("build", [
    lambda run, qrels: pdeval.pool(run, pool_depth=3, qrels=qrels),
    lambda run, qrels: pdeval.mixed_pool(run, qrels, pool_depths=[3]),
    lambda run, qrels: pdeval.reduce(qrels, [50], min_nonrel=1),
    lambda run, qrels: pdeval.merge_qrels(qrels, qrels.drop(columns="stratum", errors="ignore")),
    lambda run, qrels: pdeval.label_sets({"nist": qrels}),
])
def test_derived_qrels_that_cannot_keep_the_design_refuse_it(build):
    run, qrels = sampled()
    with pytest.raises(SchemaError, match="sampling design"):
        build(run, qrels)
    # the remedy the message gives works
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        build(run, qrels.drop(columns="stratum"))


def test_judged_reads_only_the_labels_of_sampled_qrels():
    run, qrels = sampled()
    plain = pdeval.judged(run, qrels.drop(columns="stratum"), k=[2, 4])
    pd.testing.assert_frame_equal(pdeval.judged(run, qrels, k=[2, 4]), plain)


# ---- class 4: data set names and cache lines ------------------------------------------------------
@pytest.mark.parametrize("call", [remote.manifest, remote.fetch, remote.remove])
def test_an_unknown_data_set_name_lists_the_known_ones(call, tmp_path):
    with pytest.raises(PdevalError, match=r"unknown downloadable data set 'clef2051'; known: \[.*'clef2015'"):
        call("clef2051") if call is remote.manifest else call("clef2051", cache_dir=tmp_path)


@pytest.mark.parametrize("line", ["q1\tb\tx", "q1\tb", "q1\tb\t1.5", "q1\tb\t1\textra"])
def test_a_damaged_cache_line_names_the_file(tmp_path, line):
    run, qrels = sampled()
    cache = tmp_path / "labels.tsv"
    cache.write_text(f"q1\ta\t1\n{line}\n")
    with pytest.raises(ParseError, match="labels.tsv"):
        pdeval.fill_holes(run, qrels.drop(columns="stratum"), lambda pairs: [0] * len(pairs), cache=cache)


# ---- class 6: empty and degenerate inputs ---------------------------------------------------------
def test_to_ranx_refuses_an_empty_frame():
    pytest.importorskip("ranx")
    from pdeval.integrations.ranx import to_ranx

    run, qrels = sampled()
    with pytest.raises(SchemaError, match="the run frame is empty"):
        to_ranx(run.iloc[:0])
    with pytest.raises(SchemaError, match="the qrels frame is empty"):
        to_ranx(qrels.drop(columns="stratum").iloc[:0])


def result(n_runs: int, n_topics: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    rows = [(f"r{i}", f"t{j}", "AP", float(rng.random())) for i in range(n_runs) for j in range(n_topics)]
    return pd.DataFrame(rows, columns=["run", "query_id", "measure", "value"])


ANALYSES = {
    "anova": lambda r: pdeval.anova(r, measures="AP"),
    "tukey_hsd": lambda r: pdeval.tukey_hsd(r, measures="AP"),
    "topic_set_size": lambda r: pdeval.topic_set_size(r, measures="AP"),
    "swap_rates": lambda r: pdeval.swap_rates(r, measures="AP"),
    "compare": lambda r: pdeval.compare(r),
    "discriminative_power": lambda r: pdeval.discriminative_power(r),
}


@pytest.mark.parametrize("name", sorted(ANALYSES))
@pytest.mark.parametrize("shape", [(1, 5), (5, 1)])
def test_statistics_need_two_systems_and_two_topics(name, shape):
    with pytest.raises(SchemaError, match=rf"{shape[0]} system\(s\) x {shape[1]} topic\(s\)"):
        ANALYSES[name](result(*shape))


@pytest.mark.parametrize("call", [lambda r: pdeval.rank_correlation(r, r), lambda r: pdeval.correlation_table(r)])
def test_a_ranking_of_one_system_has_no_correlation(call):
    with pytest.raises(SchemaError, match="holds 1 system"):
        call(result(1, 5))


@pytest.mark.parametrize("call, name", [
    (lambda r: pdeval.swap_rates(r, measures="AP", n_resamples=2.5), "n_resamples"),
    (lambda r: pdeval.swap_rates(r, measures="AP", n_resamples="10"), "n_resamples"),
    (lambda r: pdeval.tukey_hsd(r, measures="AP", n_resamples="100"), "n_resamples"),
    (lambda r: pdeval.tukey_hsd(r, measures="AP", n_resamples=2.5), "n_resamples"),
])
def test_a_resample_count_that_is_not_an_integer_is_refused_by_name(call, name):
    with pytest.raises(PdevalError, match=rf"\(\): {name}=\S+ is not an integer >= 1"):
        call(result(4, 6))
