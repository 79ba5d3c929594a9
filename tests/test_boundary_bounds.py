"""Bounds that bound (issue 27), and one bad input per class of failure for ``bounds``.

* The proof: for every measure the registry declares monotone, ``[low, high]`` of
  :func:`pdeval.bounds` holds the value of *every* judging of the unjudged retrieved documents
  (each nonrelevant or relevant at the grade), and both ends are attained. Hypothesis draws
  small collections; every one of the 2^u judgings is evaluated by :func:`pdeval.evaluate`
  against qrels written out in full (one qrels variant per judging).
* Sampled qrels keep their design through ``bounds`` (class 2): a run whose every document
  was sampled has a zero residual; the judged qrels equal qrels written out by hand with the
  design carried.
* Bad parameters give PdevalErrors (classes 3 and 4).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.engine.options import EngineOptions
from pdeval.errors import PdevalError
from pdeval.evaluation.core import evaluate_frames
from pdeval.measures import parse
from pdeval.measures.registry import REGISTRY


def monotone_measures() -> list[str]:
    """Every registered measure declared monotone, with and without cutoffs and primes."""
    out = []
    for name, spec in REGISTRY.items():
        if not spec.monotone:
            continue
        forms = [name] if spec.cutoff == "none" else [f"{name}@2", f"{name}@4"]
        if spec.cutoff == "optional":
            forms.append(name)
        out += forms
        if spec.no_prime is None and name not in ("NumRet", "Judged"):
            out += [form.replace(name, name + "'", 1) for form in forms]
    out += ["RBP(p=0.5)", "RBP(residual=True)", "RBP(rel=2)", "RBP(p=0.95,residual=True)@3", "RBP(ties=mean)"]
    return [m for m in out if parse(m).monotone]


def test_the_registry_names_the_monotone_measures():
    flagged = {name for name, spec in REGISTRY.items() if spec.monotone}
    assert flagged == {"P", "RR", "Judged", "NumRet", "NumRel", "NumRelRet", "RBP"}
    assert parse("P'@5").monotone and not parse("AP").monotone and not parse("Bpref").monotone
    assert not parse("infAP").monotone and not parse("xinfAP").monotone and not parse("nDCG@10").monotone


@st.composite
def small_collections(draw):
    """One or two runs over one or two topics, at most 5 unjudged retrieved documents per
    (run, topic) list and at most 7 over a run."""
    topics = draw(st.integers(1, 2))
    qrows, rrows = [], []
    for t in range(topics):
        for i in range(draw(st.integers(1, 7))):
            status = draw(st.sampled_from([0, 1, 2, -1, None]))
            if status is not None:
                qrows.append((f"t{t}", f"d{i}", status))
            for r in range(2):
                if draw(st.booleans()):
                    rrows.append((f"r{r}", f"t{t}", f"d{i}", float(draw(st.integers(0, 3)))))
    if not qrows:
        qrows.append(("t0", "zz", 1))
    if not rrows or not {row[1] for row in rrows} & {row[0] for row in qrows}:
        rrows.append(("r0", qrows[0][0], "zz" if qrows[0][1] != "zz" else "d0", 1.0))
    return (pd.DataFrame(rrows, columns=["run", "query_id", "doc_id", "score"]),
            pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"]))


def every_judging(run: pd.DataFrame, qrels: pd.DataFrame, grade: int, unjudged: str) -> pd.DataFrame:
    """The qrels of every judging of one run's unjudged retrieved documents, one qrels variant
    (column ``sample``) per judging: 2^u variants."""
    joined = run[["query_id", "doc_id"]].merge(qrels, on=["query_id", "doc_id"], how="left")
    joined = joined[joined["query_id"].isin(set(qrels["query_id"]))]
    chosen = {"all": joined["relevance"].isna() | (joined["relevance"] < 0),
              "absent": joined["relevance"].isna(), "pooled": joined["relevance"] < 0}[unjudged]
    holes = joined.loc[chosen, ["query_id", "doc_id"]].reset_index(drop=True)
    kept = qrels.merge(holes, on=["query_id", "doc_id"], how="left", indicator=True)
    kept = kept[kept["_merge"] == "left_only"].drop(columns="_merge")
    parts = []
    for number, labels in enumerate(itertools.product([0, grade], repeat=len(holes))):
        parts.append(pd.concat([kept, holes.assign(relevance=list(labels))], ignore_index=True).assign(sample=number))
    return pd.concat(parts, ignore_index=True)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_collections(), st.sampled_from(["all", "absent", "pooled"]), st.sampled_from([None, 1]))
def test_low_and_high_bound_every_judging_of_the_monotone_measures(collection, unjudged, grade):
    run, qrels = collection
    measures = monotone_measures()
    if grade is not None and qrels["relevance"].max() < grade:  # would raise RBP's gain maximum: refused
        with pytest.raises(PdevalError, match="above the top grade"):
            pdeval.bounds(run, qrels, measures, unjudged=unjudged, grade=grade)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = pdeval.bounds(run, qrels, measures, unjudged=unjudged, grade=grade)
        top = max(int(qrels["relevance"].max()), 1) if grade is None else grade
        for name, one in run.groupby("run"):
            judgings = every_judging(one, qrels, top, unjudged)
            assert judgings["sample"].nunique() <= 2**7
            # one run alone may share no topic with the qrels: the engine without the overlap check
            values = evaluate_frames(one, judgings, measures, EngineOptions(), coverage=False)
            span = values.groupby(["query_id", "measure"])["value"].agg(["min", "max"])
            mine = got[got["run"] == name].set_index(["query_id", "measure"])
            assert mine["monotone"].all()
            span = span.loc[mine.index]
            # every judging lies in [low, high], and both ends are judgings' values
            np.testing.assert_allclose(mine["low"], span["min"], atol=1e-12, rtol=0)
            np.testing.assert_allclose(mine["high"], span["max"], atol=1e-12, rtol=0)


def test_a_measure_flagged_not_monotone_can_fall_when_a_document_is_judged_relevant():
    # AP: the relevant document at rank 1 and an unjudged one at rank 3; judging it relevant
    # adds it to R: AP goes from 1 to (1 + 2/3) / 2
    run = pd.DataFrame({"run": "A", "query_id": "q", "doc_id": list("abc"), "score": [3.0, 2, 1]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": list("ab"), "relevance": [1, 0]})
    row = pdeval.bounds(run, qrels, "AP").iloc[0]
    assert row["if_nonrelevant"] == 1.0 and row["if_relevant"] == pytest.approx(5 / 6, abs=1e-15)
    assert (row["low"], row["high"], row["monotone"]) == (pytest.approx(5 / 6, abs=1e-15), 1.0, False)
    # bpref ignores the unjudged document d2: today's value lies above both judgings
    run = pd.DataFrame({"run": "A", "query_id": "q", "doc_id": [f"d{i}" for i in range(5)],
                        "score": [5.0, 4, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": "q", "doc_id": ["d0", "d1", "d3", "d4", "u0"], "relevance": [1, 0, 1, 1, 0]})
    row = pdeval.bounds(run, qrels, "Bpref").iloc[0]
    # R = 3, N = 2: today (1 + 1/2 + 1/2) / 3 (na = 0, 1, 1 of min(N, R) = 2)
    assert row["value"] == pytest.approx(2 / 3, abs=1e-15)
    assert row["if_nonrelevant"] == pytest.approx(5 / 9, abs=1e-15)  # na = 0, 2, 2 of min(N, R) = 3
    assert row["if_relevant"] == pytest.approx(5 / 8, abs=1e-15)  # R = 4, N = 2: (1 + 1/2 + 1/2 + 1/2) / 4
    assert row["value"] > row["high"]


# ---- class 2: sampled qrels keep their design ----------------------------------------------------
STRATIFIED = ["xinfAP", "infNDCG", "iP@2", "inum_rel_ret", "inum_rel"]
INCLUSION = ["statAP", "statP@2", "statRprec"]


def sampled_qrels(with_probability: bool) -> pd.DataFrame:
    rows = [("q", "a", 1, "1", 1.0), ("q", "b", 0, "1", 1.0), ("q", "c", -1, "2", 0.5), ("q", "d", 1, "2", 0.5),
            ("q", "e", 0, "2", 0.5), ("q", "f", -1, "2", 0.5), ("r", "a", 2, "1", 1.0), ("r", "g", 0, "2", 0.25)]
    frame = pd.DataFrame(rows, columns=["query_id", "doc_id", "relevance", "stratum", "inclusion_prob"])
    if with_probability:  # statAP's prels: judged documents with their probability
        return frame[frame["relevance"] >= 0].drop(columns="stratum").reset_index(drop=True)
    return frame.drop(columns="inclusion_prob")


@pytest.mark.parametrize("with_probability, measures", [(False, STRATIFIED), (True, INCLUSION)])
def test_a_run_whose_every_document_was_sampled_has_a_zero_residual(with_probability, measures):
    qrels = sampled_qrels(with_probability)
    judged = qrels[qrels["relevance"] >= 0]
    run = judged.assign(run="A", score=np.arange(len(judged), 0, -1, dtype=float))[["run", "query_id", "doc_id", "score"]]
    got = pdeval.bounds(run, qrels, measures)
    expected = pdeval.evaluate(run, qrels, measures)
    np.testing.assert_allclose(got["value"], expected["value"], atol=0, rtol=0)
    np.testing.assert_allclose(got["if_relevant"], expected["value"], atol=1e-15, rtol=0)
    assert (got["residual"].abs() < 1e-15).all()


@pytest.mark.parametrize("with_probability, measures", [(False, STRATIFIED), (True, INCLUSION)])
@pytest.mark.parametrize("unjudged", ["all", "absent", "pooled"])
def test_judged_documents_keep_the_design(with_probability, measures, unjudged):
    """Written out by hand: a judged pooled document stays in its stratum, a judged absent one
    joins a stratum of its own (after the others) with inclusion probability 1."""
    qrels = sampled_qrels(with_probability)
    run = pd.DataFrame({"run": "A", "query_id": ["q"] * 6 + ["r"] * 2, "doc_id": list("acfxyz") + ["a", "w"],
                        "score": [6.0, 5, 4, 3, 2, 1, 2, 1]})
    got = pdeval.bounds(run, qrels, measures, unjudged=unjudged)
    joined = run.merge(qrels, on=["query_id", "doc_id"], how="left")
    chosen = {"all": joined["relevance"].isna() | (joined["relevance"] < 0), "absent": joined["relevance"].isna(),
              "pooled": joined["relevance"] < 0}[unjudged]
    for column, grade in (("if_nonrelevant", 0), ("if_relevant", 2)):
        written = qrels.copy()
        for _, row in joined[chosen].iterrows():
            at = (written["query_id"] == row["query_id"]) & (written["doc_id"] == row["doc_id"])
            if at.any():
                written.loc[at, "relevance"] = grade
            else:
                extra = {"query_id": row["query_id"], "doc_id": row["doc_id"], "relevance": grade}
                extra.update({"inclusion_prob": 1.0} if with_probability else {"stratum": "~ judged"})
                written = pd.concat([written, pd.DataFrame([extra])], ignore_index=True)
        expected = pdeval.evaluate(run, written, measures)
        np.testing.assert_allclose(got[column], expected["value"], atol=1e-12, rtol=0)


# ---- classes 3 and 4: bad parameters -------------------------------------------------------------
RUN = pd.DataFrame({"run": "A", "query_id": "q", "doc_id": list("ab"), "score": [2.0, 1.0]})
QRELS = pd.DataFrame({"query_id": "q", "doc_id": ["a"], "relevance": [1]})


@pytest.mark.parametrize("options, message", [
    (dict(grade=1.5), r"grade=1.5 is not None or an integer >= 0"),
    (dict(grade="2"), r"grade='2' is not None or an integer >= 0"),
    (dict(grade=True), r"grade=True is not None or an integer >= 0"),
    (dict(grade=-1), r"grade=-1 is not None or an integer >= 0"),
    (dict(unjudged="some"), r"unjudged='some' is not one of 'all', 'absent', 'pooled'"),
    (dict(depth=2.5), "depth"),
    (dict(undefined="maybe"), "undefined"),
])
def test_bad_parameters_are_refused_by_name(options, message):
    with pytest.raises(PdevalError, match=message):
        pdeval.bounds(RUN, QRELS, "AP", **options)


def test_an_empty_run_is_refused_as_evaluate_refuses_it():
    with pytest.raises(PdevalError, match="the run frame is empty"):
        pdeval.bounds(RUN.iloc[:0], QRELS, "AP")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(small_collections(), st.sampled_from(["all", "absent", "pooled"]), st.booleans())
def test_lists_judged_in_blocks_give_the_values_of_one_block(collection, unjudged, complete):
    """``bounds`` judges the lists in blocks of about BLOCK_ROWS rows; blocks of 3 rows (most
    lists alone, some blocks of several) give what one block gives."""
    from pdeval.evaluation import bounds as module

    run, qrels = collection
    measures = ["AP", "Bpref", "infAP", "xinfAP", "nDCG@3", "RBP", "rpref_N", "P'@2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        whole = pdeval.bounds(run, qrels, measures, unjudged=unjudged, complete=complete)
        saved, module.BLOCK_ROWS = module.BLOCK_ROWS, 3
        try:
            blocks = pdeval.bounds(run, qrels, measures, unjudged=unjudged, complete=complete)
        finally:
            module.BLOCK_ROWS = saved
    pd.testing.assert_frame_equal(blocks, whole)
