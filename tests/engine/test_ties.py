"""Ties, honestly (engine option ``ties``): the expected value over tied orders, and its range.

* The proof: Hypothesis draws small runs with many tied scores; every order of every run of
  tied scores is written out as a run of its own (distinct scores) and evaluated in trec_eval's
  order. For every measure whose registry entry records an expected value, ``ties="expected"``
  is the mean over the orders; ``ties="optimistic"`` / ``"pessimistic"`` is one of the orders'
  values for every measure, and their maximum / minimum for the measures that cannot fall when a
  better document moves up.
* The oracle: DCG@k with expected ties equals scikit-learn's ``dcg_score(..., ignore_ties=False)``
  (McSherry & Najork's averaging) on every (run, topic) ranking of the real collections, and
  nDCG@k too where the ideal ranking is the same (every relevant document retrieved).
* The boundary: ``ties`` is one engine option (the contract refuses other values), refused with
  ``depth``, and a measure without an expected value is refused naming it.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import MeasureError, PdevalError
from pdeval.measures.registry import REGISTRY
from locations import REPO

#: forms of every measure with an expected value (the test below checks none is left out)
EXPECTED = [
    "P@1", "P@3", "R@3", "Rprec", "AP", "AP@3", "RR", "RR@2", "nDCG", "nDCG@3", "DCG", "DCG@2",
    "RBP", "RBP@3", "RBP(rel=2)", "RBP(residual=True)", "RBP(residual=True)@2",
    "NumRet", "NumRel", "NumRelRet", "SetP", "SetRecall", "SetRelP", "SetAP", "SetF", "Utility",
    "NumNonrelJudgedRet", "IdealDCG", "inum_rel",
    "AP'", "P'@2", "nDCG'@3", "RR'", "R(rel=2)@2", "AP(rel=2)",
    "RelP@2", "RelP@4", "Unj@2", "Judged", "Judged@3", "Success@1", "Success@3", "Success(rel=2)@2",
    "nDCG(gains={1:3,2:7})@3", "DCG(gains={1:0.5,2:4})", "Rprec(rel=2)", "RBP(p=0.5,gain_max=3)@2",
]

#: measures that never fall when a better-graded document moves above a worse one: the
#: optimistic order gives their maximum over the orders, the pessimistic one their minimum
RANK_MONOTONE = ["P@1", "P@3", "R@3", "Rprec", "AP", "AP@3", "RR", "RR@2", "nDCG", "nDCG@3", "DCG", "DCG@2",
                 "RBP", "RBP@3", "AP'", "P'@2", "nDCG'@3", "Success@2"]


def plain_measures() -> list[str]:
    """Every registered measure that plain qrels can evaluate, in a default form."""
    out = []
    for name, spec in REGISTRY.items():
        if spec.required:
            continue
        form = f"{name}@2" if spec.cutoff == "required" else name
        try:
            pdeval.evaluate(_RUN, _QRELS, [form])
        except (MeasureError, PdevalError):
            continue
        out.append(form)
    return out


_RUN = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "score": [1.0, 1.0]})
_QRELS = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "c"], "relevance": [1, 0]})


@st.composite
def tied_runs(draw):
    """A run of one or two topics, up to six documents each, scores drawn from three values
    (many ties), and qrels judging some retrieved and some unretrieved documents 0..2."""
    run_rows, qrels_rows = [], []
    for topic in range(draw(st.integers(1, 2))):
        n = draw(st.integers(1, 6))
        scores = draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
        grades = draw(st.lists(st.sampled_from([None, 0, 1, 2]), min_size=n + 2, max_size=n + 2))
        for i in range(n):
            run_rows.append((str(topic), f"d{topic}{i}", float(scores[i])))
        for i, grade in enumerate(grades):
            if grade is not None:
                qrels_rows.append((str(topic), f"d{topic}{i}", grade))
        if not any(row[0] == str(topic) for row in qrels_rows):
            qrels_rows.append((str(topic), f"d{topic}0", 1))
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"]).assign(run="r")
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def every_order(run: pd.DataFrame) -> tuple[pd.DataFrame, dict]:
    """Every order of every run of tied scores, each as a run ``o<j>`` with distinct scores;
    topic t's orders are the runs ``o0 .. o<count_t - 1>`` (later runs repeat them)."""
    orders = {}
    for topic, rows in run.groupby("query_id"):
        blocks = [list(group.doc_id) for _, group in rows.sort_values("score", ascending=False)
                  .groupby("score", sort=False)]
        orders[topic] = [sum(choice, []) for choice in itertools.product(
            *[[list(p) for p in itertools.permutations(block)] for block in blocks])]
    most = max(len(o) for o in orders.values())
    frames = []
    for j in range(most):
        for topic, topic_orders in orders.items():
            docs = topic_orders[j % len(topic_orders)]
            frames.append(pd.DataFrame({"run": f"o{j:05d}", "query_id": topic, "doc_id": docs,
                                        "score": np.arange(len(docs), 0, -1, dtype=float)}))
    return pd.concat(frames, ignore_index=True), {t: len(o) for t, o in orders.items()}


def values_over_orders(run, qrels, measures):
    """Per (topic, measure), the values of every order (a list)."""
    ordered, counts = every_order(run)
    result = pdeval.evaluate(ordered, qrels, measures)
    result["j"] = result["run"].str[1:].astype(int)
    result = result[result["j"] < result["query_id"].map(counts)]
    return result.groupby(["query_id", "measure"])["value"].apply(list)


def test_every_closed_form_is_checked():
    claimed = {name for name, spec in REGISTRY.items() if spec.expected is not None}
    checked = {pdeval.measures.parse(form).name for form in EXPECTED}
    assert claimed == checked


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_runs())
def test_expected_is_the_mean_over_orders(case):
    run, qrels = case
    measures = sorted(set(EXPECTED) | set(PLAIN) | {"nDCG(dcg=sakai)@3", "Q'", "Bpref(variant=legacy)"})
    over = values_over_orders(run, qrels, measures)
    got = pdeval.evaluate(run, qrels, measures, ties="expected").set_index(["query_id", "measure"])["value"]
    for key, values in over.items():
        assert got[key] == pytest.approx(np.mean(values), abs=1e-12), key


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_runs())
def test_optimistic_and_pessimistic_are_orders_and_extremes(case):
    run, qrels = case
    measures = sorted(set(PLAIN) | set(RANK_MONOTONE))
    over = values_over_orders(run, qrels, measures)
    for ties, pick in (("optimistic", max), ("pessimistic", min)):
        got = pdeval.evaluate(run, qrels, measures, ties=ties).set_index(["query_id", "measure"])["value"]
        for key, values in over.items():
            assert min(abs(got[key] - v) for v in values) < 1e-12, (ties, key, got[key], values)
            if key[1] in RANK_MONOTONE:
                assert got[key] == pytest.approx(pick(values), abs=1e-12), (ties, key)


PLAIN = plain_measures()


def test_trec_is_the_default_order():
    run = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("abcd"), "score": [2.0, 1, 1, 1]})
    qrels = pd.DataFrame({"query_id": ["1"] * 2, "doc_id": ["b", "d"], "relevance": [1, 1]})
    default = pdeval.evaluate(run, qrels, ["AP", "P@2"])
    assert default.equals(pdeval.evaluate(run, qrels, ["AP", "P@2"], ties="trec"))
    # trec_eval puts d (the largest id) first among the tied b, c, d
    assert default.set_index("measure").loc["P@2", "value"] == 0.5
    values = pdeval.evaluate(run, qrels, ["P@2"], ties="expected")["value"]
    assert values.iloc[0] == pytest.approx(1 / 3)


def test_refusals_name_the_measure_and_the_option():
    run, qrels = _RUN, _QRELS
    # a measure without a closed form is enumerated, up to 5040 orders per list
    wide = pd.DataFrame({"query_id": "1", "doc_id": [f"d{i:02d}" for i in range(16)], "score": 1.0})
    half = pd.DataFrame({"query_id": "1", "doc_id": [f"d{i:02d}" for i in range(16)], "relevance": [0, 1] * 8})
    assert pdeval.evaluate(wide, half, ["AP", "P@5"], ties="expected")["value"].notna().all()  # closed forms
    with pytest.raises(MeasureError, match=r"Bpref.*ties='expected'.*12,870 orders \(at most 5,040\)"):
        pdeval.evaluate(wide, half, ["AP", "Bpref"], ties="expected")
    with pytest.raises(MeasureError, match=r"AP\(depth=3\): depth= cuts"):
        pdeval.evaluate(run, qrels, ["AP(depth=3)"], ties="expected")
    with pytest.raises(PdevalError, match=r"depth=5.*ties='optimistic'"):
        pdeval.evaluate(run, qrels, ["AP"], ties="optimistic", depth=5)
    with pytest.raises(PdevalError, match=r"ties"):
        pdeval.evaluate(run, qrels, ["AP"], ties="mean")
    # the optimistic and pessimistic orders are rankings like any: every measure takes them
    pdeval.evaluate(run, qrels, ["Bpref", "infAP"], ties="pessimistic")


def test_ties_compose_with_variants_and_bounds():
    run = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("abcd"), "score": [2.0, 1, 1, 1]})
    qrels = pd.DataFrame({"query_id": ["1"] * 4, "doc_id": list("bdbc"), "relevance": [1, 1, 1, 0],
                          "level": [1, 1, 2, 2]})
    result = pdeval.evaluate(run, qrels, ["P@2"], ties="expected").set_index("level")["value"]
    assert result.loc[1] == pytest.approx(1 / 3) and result.loc[2] == pytest.approx(1 / 6)
    best = pdeval.evaluate(run, qrels, ["P@2"], ties="optimistic").set_index("level")["value"]
    assert best.loc[1] == 0.5 and best.loc[2] == 0.5
    low = pdeval.bounds(run, qrels[qrels.level == 2].drop(columns="level"), ["P@2"], ties="pessimistic")
    assert low["value"].iloc[0] == 0.0


DATA = REPO / ".." / "shared" / "data"

#: the real collections: qrels file and run folder under ../shared/data
COLLECTIONS = [
    ("clef2015-chs-task2/qrels/qrels.eng.clef2015.qtest.graded.txt", "clef2015-chs-task2/runs"),
    ("clef2016-chs-task2/qrels.txt", "clef2016-chs-task2/runs"),
    ("clef2018-chs-task1/qrels.txt", "clef2018-chs-task1/runs"),
    ("trec-dl21/qrels-pass.dl21.human.txt", "trec-dl21/runs"),
]


@pytest.mark.skipif(not DATA.is_dir(), reason="the real collections are not at ../shared/data")
@pytest.mark.parametrize("qrels_file, run_folder", COLLECTIONS, ids=[c[0].split("/")[0] for c in COLLECTIONS])
def test_dcg_matches_scikit_learn_on_real_runs(qrels_file, run_folder):
    """DCG@10 with ties="expected" is scikit-learn's tie-averaged DCG on every (run, topic)
    ranking; nDCG@10 too where every relevant document is retrieved (the same ideal list)."""
    from sklearn.metrics import dcg_score, ndcg_score

    if not (DATA / qrels_file).is_file() or not (DATA / run_folder).is_dir():
        pytest.skip(f"{qrels_file} or {run_folder} is not under ../shared/data")
    k = 10
    qrels = pdeval.read_qrels(DATA / qrels_file)
    run = pdeval.read_run(sorted(str(p) for p in (DATA / run_folder).iterdir() if p.is_file()), duplicates="first")
    run = run[run["query_id"].isin(set(qrels["query_id"]))]
    got = pdeval.evaluate(run, qrels, [f"DCG@{k}", f"nDCG@{k}"], ties="expected")
    got = got.pivot_table(index=["run", "query_id"], columns="measure", values="value")
    grade = qrels.groupby(["query_id", "doc_id"])["relevance"].max().clip(lower=0).rename("gain")
    merged = run.merge(grade.reset_index(), on=["query_id", "doc_id"], how="left")
    merged["gain"] = merged["gain"].fillna(0.0)
    relevant = qrels[qrels.relevance > 0].groupby("query_id")["doc_id"].nunique()
    dcg_checked = ndcg_checked = 0
    for (name, topic), rows in merged.groupby(["run", "query_id"], sort=False):
        y_true, y_score = rows["gain"].to_numpy()[None, :], rows["score"].to_numpy(dtype=float)[None, :]
        if y_true.shape[1] < 2:
            continue
        want = dcg_score(y_true, y_score, k=k, ignore_ties=False)
        assert got.loc[(name, topic), f"DCG@{k}"] == pytest.approx(want, rel=1e-9, abs=1e-12), (name, topic)
        dcg_checked += 1
        if relevant.get(topic, 0) and (y_true > 0).sum() == relevant[topic]:
            want = ndcg_score(y_true, y_score, k=k, ignore_ties=False)
            assert got.loc[(name, topic), f"nDCG@{k}"] == pytest.approx(want, rel=1e-9, abs=1e-12), (name, topic)
            ndcg_checked += 1
    assert dcg_checked > 100
    print(f"{qrels_file}: DCG@{k} on {dcg_checked} rankings, nDCG@{k} on {ndcg_checked}")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_runs())
def test_bounds_take_the_tie_order_after_judging(case):
    """bounds(ties=...) is the range over the judgings of the unjudged retrieved documents of
    the value under that tie treatment: each judging written out as qrels and evaluated."""
    run, qrels = case
    measures = ["P@2", "AP", "RR", "nDCG@3", "DCG", "RBP(gain_max=2)"]
    retrieved = run[["query_id", "doc_id"]]
    unjudged = retrieved.merge(qrels, how="left", on=["query_id", "doc_id"])
    unjudged = unjudged[unjudged["relevance"].isna()][["query_id", "doc_id"]]
    for ties in ("expected", "optimistic", "pessimistic"):
        got = pdeval.bounds(run, qrels, measures, grade=2, ties=ties).set_index(["query_id", "measure"])
        for grade, column in ((0, "if_nonrelevant"), (2, "if_relevant")):
            filled = pd.concat([qrels, unjudged.assign(relevance=grade)], ignore_index=True)
            want = pdeval.evaluate(run, filled, measures, ties=ties).set_index(["query_id", "measure"])["value"]
            for key, value in want.items():
                assert got.loc[key, column] == pytest.approx(value, abs=1e-12), (ties, column, key)


def test_cli_takes_ties(tmp_path, capsys):
    from pdeval.cli.commands import main

    (tmp_path / "qrels").write_text("1 0 b 1\n1 0 d 1\n")
    (tmp_path / "run").write_text("1 Q0 a 1 2.0 r\n1 Q0 b 2 1.0 r\n1 Q0 c 3 1.0 r\n1 Q0 d 4 1.0 r\n")
    values = {}
    for ties in ("trec", "expected", "optimistic", "pessimistic"):
        assert main(["eval", "-m", "P.2", "--ties", ties, "--format", "json",
                     str(tmp_path / "qrels"), str(tmp_path / "run")]) == 0
        rows = json.loads(capsys.readouterr().out)
        values[ties] = [row["value"] for row in rows if row["query_id"] == "all"][0]
    assert values == {"trec": 0.5, "expected": pytest.approx(1 / 3), "optimistic": 0.5, "pessimistic": 0.0}
    # --estimate draws under the same order; with every document judged it is the value
    (tmp_path / "complete").write_text("1 0 a 0\n1 0 b 1\n1 0 c 0\n1 0 d 1\n")
    for ties, value in values.items():
        assert main(["eval", "-m", "P.2", "--ties", ties, "--estimate", "bootstrap", "--resamples", "5",
                     "--format", "json", str(tmp_path / "complete"), str(tmp_path / "run")]) == 0
        rows = json.loads(capsys.readouterr().out)
        assert [row["estimate"] for row in rows if row["query_id"] == "all"][0] == value, ties


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(tied_runs(), st.sampled_from(["inclusion_prob", "stratum"]))
def test_expected_under_a_sampling_design_is_the_mean_over_orders(case, design):
    """With sampled qrels every document carries its own design information: the enumeration
    tells every row apart, and the sampled estimators' expected value is still the mean."""
    run, qrels = case
    if design == "inclusion_prob":
        qrels = qrels.assign(inclusion_prob=np.where(np.arange(len(qrels)) % 2, 0.5, 1.0))
        measures = ["statAP", "statP@2", "AP", "P@2"]
    else:
        qrels = qrels.assign(stratum=np.where(np.arange(len(qrels)) % 2, "A", "B"))
        measures = ["xinfAP", "infNDCG", "AP", "P@2"]
    over = values_over_orders(run, qrels, measures)
    got = pdeval.evaluate(run, qrels, measures, ties="expected").set_index(["query_id", "measure"])["value"]
    for key, values in over.items():
        assert got[key] == pytest.approx(np.mean(values), abs=1e-12), key
