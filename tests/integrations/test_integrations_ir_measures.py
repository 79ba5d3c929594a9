"""ir_measures both ways, against ir_measures itself (its pytrec_eval provider is the oracle)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import pdeval
from pdeval.errors import MeasureError
from locations import TESTS

ir_measures = pytest.importorskip("ir_measures")
from ir_measures import AP, P, R, RR, Bpref, Judged, NumRel, NumRet, Rprec, infAP, nDCG  # noqa: E402

from pdeval.integrations import ir_measures as pm  # noqa: E402

DATA = TESTS / "data" / "trec_eval"


@pytest.fixture(scope="module")
def run():
    return pdeval.read_run(DATA / "results.test")


@pytest.fixture(scope="module")
def graded():  # grades -1..4, -1 = pooled but not judged
    return pdeval.read_qrels(DATA / "qrels.rel_level")


def _per_topic(measures, qrels, run) -> pd.DataFrame:
    rows = [(str(m.measure), m.query_id, m.value) for m in ir_measures.iter_calc(measures, qrels, run)]
    return pd.DataFrame(rows, columns=["ir_measure", "query_id", "expected"])


MEASURES = [
    AP, AP@10, AP(rel=2), AP(judged_only=True), P@5, P(rel=2)@10, R@100, RR, RR(rel=3), Rprec,
    nDCG, nDCG@10, nDCG(judged_only=True)@10, Bpref, Bpref(rel=2), infAP,
    nDCG(gains={0: 0, 1: 1, 2: 5, 3: 10, 4: 20})@10, nDCG(gains={1: 1, 2: 3}), nDCG(gains={2: 5}, judged_only=True),
]


def test_ir_measures_objects_give_ir_measures_values(run, graded):
    trimmed = run.drop(columns=["run", "rank"])
    # one ir_measures call per measure: with several in one call, how it groups them for its
    # providers depends on set order (the process's hash seed), and one grouping gave another value
    expected = pd.concat([_per_topic([m], graded, trimmed) for m in MEASURES], ignore_index=True)
    result = pdeval.evaluate(run, graded, MEASURES, complete=True, score_precision="float32")
    names = {str(m): pm.measure_string(m) for m in MEASURES}
    expected["measure"] = expected["ir_measure"].map(names)
    merged = expected.merge(result, on=["query_id", "measure"], how="left")
    assert len(merged) == 3 * len(MEASURES) and merged["value"].notna().all()
    assert np.abs(merged["value"] - merged["expected"]).max() < 1e-12


def test_mapping_to_pdeval_strings():
    assert pm.measure_string(AP@10) == "AP@10"
    assert pm.measure_string(nDCG(judged_only=True)@10) == "nDCG'@10"
    assert pm.measure_string(Bpref(rel=2)) == "Bpref(rel=2)"
    assert pm.measure_string(NumRet(rel=1)) == "NumRelRet"
    assert pm.measure_string(nDCG(gains={0: 0, 1: 1, 2: 5})) == "nDCG(gains={0:0,1:1,2:5})"
    assert str(pdeval.parse_measure(Judged@10)) == "Judged@10"


def test_counts_and_judged_where_they_agree(run):
    binary = pdeval.read_qrels(DATA / "qrels.test")  # no pooled (-1) judgments
    for measure in (Judged@10, NumRet, NumRet(rel=1), NumRel):  # one call each: ir_measures sums counts
        expected = _per_topic([measure], binary, run.drop(columns=["run", "rank"]))
        got = pdeval.evaluate(run, binary, measure).set_index("query_id")["value"]
        assert np.array_equal(got[expected["query_id"]].to_numpy(), expected["expected"].to_numpy())


def test_one_object_and_unknown_objects(run, graded):
    single = pdeval.evaluate(run, graded, AP@10)
    assert set(single["measure"]) == {"AP@10"}
    for unknown in (ir_measures.ERR@10, nDCG(dcg="exp-log2")@10, ir_measures.SetF):
        with pytest.raises(MeasureError):
            pdeval.evaluate(run, graded, [unknown])


def test_same_values_through_either_entry_point(run, graded):
    trimmed = run.drop(columns=["run", "rank"])
    pairs = [(AP@10, "AP@10"), (nDCG(judged_only=True)@10, "nDCG'@10"), (Bpref(rel=2), "Bpref(rel=2)"), (infAP, "infAP")]
    native = ir_measures.calc_aggregate([m for m, _ in pairs], graded, trimmed)
    wrapped = {s: pm.measure(s) for _, s in pairs}  # 32-bit score order by default, as pytrec_eval
    through = ir_measures.calc_aggregate(list(wrapped.values()), graded, trimmed)
    for measure, string in pairs:
        assert through[wrapped[string]] == pytest.approx(native[measure], abs=1e-12)


def test_pdeval_only_measures_in_calc_aggregate_equal_evaluate(run, graded):
    strings = ["bpref_R", "RankEff", "rpref_N", "infAP(c=1.5)", "Q'"]
    # a run without topic 303: ir_measures averages over every qrels topic (complete=True)
    partial = run[run["query_id"] != "303"]
    wrapped = [pm.measure(s) for s in strings]
    assert all(isinstance(m, ir_measures.Measure) for m in wrapped)  # what pt.Experiment(eval_metrics=) takes
    aggregate = ir_measures.calc_aggregate(wrapped, graded, partial.drop(columns=["run", "rank"]))
    expected = pdeval.evaluate(partial, graded, strings, complete=True).groupby("measure")["value"].mean()
    for string, measure in zip(strings, wrapped):
        assert repr(measure) == string
        assert aggregate[measure] == pytest.approx(expected[string], abs=1e-15)
    per_topic = {(m.query_id, str(m.measure)): m.value for m in ir_measures.iter_calc(wrapped[:1], graded, partial)}
    assert set(per_topic) == {("301", "bpref_R"), ("302", "bpref_R"), ("303", "bpref_R")}


def test_names_never_merge_with_ir_measures_own():
    mine = pm.measure("AP@10")
    assert repr(mine) == "pdeval.AP@10" and mine != AP@10
    assert repr(pm.measure("bpref_R", name="bpref-R")) == "bpref-R"
    assert str(pdeval.parse_measure(mine)) == "AP@10"  # back to pdeval


def test_one_precision_beside_pytrec_eval():
    """Scores that tie only at 32 bits: in one calc_aggregate, pdeval's measure and ir_measures'
    (pytrec_eval) give the same number by default; score_precision="float64" is pdeval's own order."""
    docs = [f"d{i}" for i in range(8)]
    run = pd.DataFrame({"query_id": "1", "doc_id": docs, "score": [5.0 - i // 2 + 1e-9 * (i % 2 == 0) for i in range(8)]})
    qrels = pd.DataFrame({"query_id": "1", "doc_id": docs, "relevance": [2, 0, 0, 1, 1, 0, 0, 2]})
    ours, wide = pm.measure("nDCG@5"), pm.measure("nDCG@5", score_precision="float64")
    values = ir_measures.calc_aggregate([nDCG@5, ours, wide], qrels, run)
    assert values[ours] == values[nDCG@5]
    assert values[wide] == pytest.approx(pdeval.evaluate(run, qrels, "nDCG@5")["value"].iloc[0], abs=1e-15)
    assert values[wide] != pytest.approx(values[nDCG@5], abs=1e-6)
    assert repr(wide) == "pdeval.nDCG@5[score_precision=float64]"  # not merged with `ours` by name
