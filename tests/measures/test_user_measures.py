"""RBP with its residual and the C/W/L measures INST and INSQ against their reference tools.

Oracles: ``rbp_eval`` (the Python port of Moffat & Zobel's rbp_eval, PyPI rbp-eval 1.0.0) and
``cwl_eval`` (PyPI cwl-eval, Azzopardi, Thomas & Moffat 2019), both called through their own
file readers on text written here; and worked examples computed by hand from the formulas.
Three groups: worked examples (always run), random collections compared with the tools
(Hypothesis; skipped without the tools), and every run of the real collections beside the
repository (CLEF eHealth 2015, 2016, 2018 and TREC DL 2021; skipped without ``../shared/data``).
"""

from __future__ import annotations

import gzip
import os
import io
import warnings
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import MeasureError
from pdeval.measures.user import fractional_levels, in_file_order, lowercase_ids
from locations import REPO

DATA = REPO.parent / "shared" / "data"
INF = float("inf")


def frames(run_rows, qrels_rows):
    if not {r[0] for r in run_rows} & {q[0] for q in qrels_rows}:  # no shared topic is an error (tested elsewhere)
        qrels_rows = [*qrels_rows, (run_rows[0][0], "zz", 1)]
    run = pd.DataFrame(run_rows, columns=["query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


def values(run, qrels, measures, **options) -> dict:
    """{(query_id, measure as given): value}."""
    result = pdeval.evaluate(run, qrels, measures, **options)
    given = {str(pdeval.parse_measure(m)): m for m in measures}
    return {(r.query_id, given[r.measure]): r.value for r in result.itertuples()}


# ---- worked examples ------------------------------------------------------------------------
def test_rbp_worked_example_graded_with_residual():
    # ranks: grade 2 (top grade: gain 1), grade 1 (gain 0.5), unjudged, judged 0; p = 0.5
    run, qrels = frames([("q", "a", 4.0), ("q", "b", 3.0), ("q", "c", 2.0), ("q", "d", 1.0)],
                        [("q", "a", 2), ("q", "b", 1), ("q", "d", 0)])
    got = values(run, qrels, ["RBP(p=0.5)", "RBP(p=0.5,residual=True)", "RBP(p=0.5,rel=2)", "RBP(p=0.5)@1"])
    assert got[("q", "RBP(p=0.5)")] == pytest.approx(0.5 * 1 + 0.25 * 0.5, abs=1e-15)
    # unjudged rank 3 weighs 0.125, the tail beyond rank 4 weighs 0.5^4
    assert got[("q", "RBP(p=0.5,residual=True)")] == pytest.approx(0.125 + 0.0625, abs=1e-15)
    assert got[("q", "RBP(p=0.5,rel=2)")] == pytest.approx(0.5, abs=1e-15)
    assert got[("q", "RBP(p=0.5)@1")] == pytest.approx(0.5, abs=1e-15)


def test_rbp_pooled_documents_are_unjudged():
    run, qrels = frames([("q", "a", 2.0), ("q", "b", 1.0)], [("q", "a", -1), ("q", "b", 1)])
    got = values(run, qrels, ["RBP(p=0.5)", "RBP(p=0.5,residual=True)"])
    assert got[("q", "RBP(p=0.5)")] == pytest.approx(0.25, abs=1e-15)
    assert got[("q", "RBP(p=0.5,residual=True)")] == pytest.approx(0.5 + 0.25, abs=1e-15)


def test_rbp_ties_trec_order_and_mean_weight():
    # b and c tie at ranks 2-3; trec order puts c (larger id) first
    run, qrels = frames([("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 2.0), ("q", "d", 1.0)],
                        [("q", "a", 1), ("q", "b", 1), ("q", "c", 0), ("q", "d", 0)])
    got = values(run, qrels, ["RBP(p=0.5)", "RBP(p=0.5,ties=mean)", "RBP(p=0.5,ties=mean)@2",
                              "RBP(p=0.5,ties=mean,residual=True)@2"])
    assert got[("q", "RBP(p=0.5)")] == pytest.approx(0.5 + 0.125, abs=1e-15)
    assert got[("q", "RBP(p=0.5,ties=mean)")] == pytest.approx(0.5 + (0.25 + 0.125) / 2, abs=1e-15)
    # the cutoff takes half of the tie: each tied document counts half its mean weight
    assert got[("q", "RBP(p=0.5,ties=mean)@2")] == pytest.approx(0.5 + (0.25 + 0.125) / 4, abs=1e-15)
    assert got[("q", "RBP(p=0.5,ties=mean,residual=True)@2")] == pytest.approx(0.25, abs=1e-15)


def test_rbp_ties_mean_with_depth_cut_inside_a_tie():
    # trec_eval -M 2 cuts the tie at rank 2: the remaining tie covers ranks 2..2 only
    run, qrels = frames([("q", "a", 3.0), ("q", "b", 2.0), ("q", "c", 2.0)], [("q", "b", 1), ("q", "c", 1)])
    got = values(run, qrels, ["RBP(p=0.5,ties=mean)"], depth=2)
    assert got[("q", "RBP(p=0.5,ties=mean)")] == pytest.approx(0.25, abs=1e-15)


def test_rbp_parameters_are_checked():
    with pytest.raises(MeasureError):
        pdeval.parse_measure("RBP(p=1.5)")
    with pytest.raises(MeasureError):
        pdeval.parse_measure("RBP(ties=random)")
    run, qrels = frames([("q", "a", 1.0)], [("q", "a", 1)])
    with pytest.raises(MeasureError):
        pdeval.evaluate(run, qrels, "RBP'(ties=mean)")


def test_cwl_worked_examples():
    # two ranks (n=2), gains 1 then 0
    run, qrels = frames([("q", "a", 2.0), ("q", "b", 1.0)], [("q", "a", 1), ("q", "b", 0)])
    got = values(run, qrels, ["INSQ(T=1,n=2)", "INST(T=1,n=2)", "INST(T=1,n=2,quantity=depth)",
                              "INST(T=1,n=2,quantity=total)", "INST(T=1,n=2,quantity=cost)"])
    # INSQ: C(1) = (2/3)^2 = 4/9, W = (1, 4/9) / (13/9)
    assert got[("q", "INSQ(T=1,n=2)")] == pytest.approx(9 / 13, abs=1e-15)
    # INST: T_1 = 0, C(1) = (1/2)^2, W(1) = 1 / (1 + 1/4)
    assert got[("q", "INST(T=1,n=2)")] == pytest.approx(0.8, abs=1e-15)
    assert got[("q", "INST(T=1,n=2,quantity=depth)")] == pytest.approx(1.25, abs=1e-15)
    # L(1) = 1 - 1/4 stops with CG 1; L(2) = 1/4 (1 - C(2)), C(2) = (2/3)^2 with T_2 = 0
    assert got[("q", "INST(T=1,n=2,quantity=total)")] == pytest.approx(0.75 + 0.25 * (5 / 9), abs=1e-15)
    assert got[("q", "INST(T=1,n=2,quantity=cost)")] == pytest.approx(1.0, abs=1e-15)


def test_cwl_gains_must_be_fractions():
    run, qrels = frames([("q", "a", 2.0)], [("q", "a", 2)])
    with pytest.raises(MeasureError):
        pdeval.evaluate(run, qrels, "INST(gains={2:3},gain_max=1)")


def test_fractional_levels_and_lowercase_ids():
    qrels = pd.DataFrame({"query_id": ["Q"] * 4, "doc_id": ["A", "b", "c", "d"], "relevance": [0.5, 0.25, 0.0, -1]})
    levels, gains = fractional_levels(qrels)
    assert levels["relevance"].tolist() == [2, 1, 0, -1]
    assert gains == {1: 0.25, 2: 0.5}
    low = lowercase_ids(levels)
    assert low["query_id"].tolist() == ["q"] * 4 and low["doc_id"].tolist() == ["a", "b", "c", "d"]


def test_in_file_order_keeps_row_order():
    run = pd.DataFrame({"query_id": ["q", "q", "r"], "doc_id": ["a", "b", "c"], "score": [1.0, 5.0, 1.0]})
    ordered = in_file_order(run)
    ranked = pdeval.rank_run(pdeval.frames.canonical.as_run(ordered))
    assert ranked["doc_id"].tolist() == ["a", "b", "c"]


# ---- the reference tools --------------------------------------------------------------------------
def rbp_eval_values(qrels_text: str, run_text: str, *, ordering: str, persist, depths, reltype=None) -> dict:
    """{(qid, p, depth): (rbp, residual)} from rbp_eval's own readers and evaluator."""
    rbp_eval = pytest.importorskip("rbp_eval")
    qrels = rbp_eval.load_qrels(io.StringIO(qrels_text))
    if reltype is not None:
        qrels.set_reltype(*reltype)
    run = rbp_eval.load_run(io.StringIO(run_text))
    order = {"score": rbp_eval.Ordering.SCORE, "occur": rbp_eval.Ordering.OCCUR}[ordering]
    depths = sorted(depths)  # the tool continues from one depth to the next, ascending
    result = rbp_eval.evaluate(qrels, run, order, list(persist), [float(d) for d in depths])
    out = {}
    for q in result.qid_res:
        if q.num_rel < 0:
            continue
        for d, depth in enumerate(depths):
            for i, p in enumerate(persist):
                res = q.depth_res[d].persist_res[i]
                out[(q.qid, p, depth)] = (res.sum, res.err)
    return out


def trec_sorted(run: pd.DataFrame) -> pd.DataFrame:
    """The run sorted as trec_eval sorts it (score descending, doc id descending in byte
    order), written independently of pdeval's ranking code."""
    rows = sorted(
        run.itertuples(index=False),
        key=lambda r: (r.query_id, -r.score, tuple(-b for b in r.doc_id.encode()) + (1,)),
    )
    return pd.DataFrame(rows, columns=run.columns)


def run_text(run: pd.DataFrame) -> str:
    return "".join(f"{r.query_id} Q0 {r.doc_id} {i} {r.score!r} tag\n" for i, r in enumerate(run.itertuples(index=False)))


def qrels_text(qrels: pd.DataFrame, value=lambda level: str(level)) -> str:
    """rbp_eval and cwl_eval know no pooled entries: ``-1`` rows are left out (unjudged)."""
    return "".join(
        f"{r.query_id} 0 {r.doc_id} {value(r.relevance)}\n" for r in qrels.itertuples(index=False) if r.relevance >= 0
    )


def pdeval_rbp(run, qrels, persist, depths, *, suffix: str, residual: bool, **options) -> dict:
    measures = {}
    for p in persist:
        for depth in depths:
            cut = "" if depth == INF else f"@{depth}"
            measures[(p, depth)] = f"RBP(p={p}{suffix}{',residual=True' if residual else ''}){cut}"
    result = pdeval.evaluate(run, qrels, list(measures.values()), **options)
    by_name = {(r.query_id, r.measure): r.value for r in result.itertuples()}
    canonical = {key: str(pdeval.parse_measure(m, gains=options.get("gains"))) for key, m in measures.items()}
    topics = result["query_id"].unique()
    return {(q, p, d): by_name[(q, canonical[(p, d)])] for q in topics for (p, d) in measures}


def compare_rbp(run, qrels, persist, depths, *, ties: str, graded: str, tol: float, qrels_for_tool=None,
                tool_run_text=None, **options):
    """pdeval's RBP and residual against rbp_eval on the same frames."""
    suffix = {"binary": ",rel=1", "top": "", "fraction": ",gain_max=1"}[graded] + (",ties=mean" if ties == "mean" else "")
    top = qrels["relevance"].max()
    reltype = None
    if graded == "top":
        rbp_eval = pytest.importorskip("rbp_eval")
        reltype = (rbp_eval.RelType.FRACT, 1.0 / top)
    elif graded == "binary":
        rbp_eval = pytest.importorskip("rbp_eval")
        reltype = (rbp_eval.RelType.BINARY, 1.0)
    if tool_run_text is None:
        tool_run_text = run_text(run if ties == "mean" else trec_sorted(run))
    expected = rbp_eval_values(
        qrels_for_tool if qrels_for_tool is not None else qrels_text(qrels),
        tool_run_text,
        ordering="score" if ties == "mean" else "occur",
        persist=persist,
        depths=depths,
        reltype=reltype,
    )
    got = pdeval_rbp(run, qrels, persist, depths, suffix=suffix, residual=False, **options)
    got_residual = pdeval_rbp(run, qrels, persist, depths, suffix=suffix, residual=True, **options)
    # rbp_eval skips topics without judgments; pdeval evaluates a topic whose qrels are all
    # pooled (-1), which the tool's qrels (no negative values) cannot hold
    judged_topics = set(qrels.loc[qrels["relevance"] >= 0, "query_id"])
    assert set(expected) == {key for key in got if key[0] in judged_topics}
    for key, (value, residual) in expected.items():
        assert abs(got[key] - value) <= tol, (key, got[key], value)
        assert abs(got_residual[key] - residual) <= tol, (key, got_residual[key], residual)


def test_rbp_equals_rbp_eval_on_mixed_case_ids_after_lowercasing():
    run, qrels = frames([("Q1", "DocA", 3.0), ("Q1", "docb", 3.0), ("Q1", "DOCC", 1.0), ("q2", "x", 1.0)],
                        [("q1", "doca", 1), ("Q1", "DOCB", 0), ("q1", "docc", 1), ("q2", "x", 1)])
    compare_rbp(lowercase_ids(run), lowercase_ids(qrels), [0.5, 0.8], [INF, 1, 2], ties="mean", graded="binary",
                tol=1e-12, tool_run_text=run_text(run), qrels_for_tool=qrels_text(qrels))


@st.composite
def collections(draw):
    n_topics = draw(st.integers(1, 3))
    run_rows, qrels_rows = [], []
    for t in range(n_topics):
        for i in range(draw(st.integers(1, 12))):
            status = draw(st.sampled_from([0, 1, 2, 3, -1, None]))
            if status is not None:
                qrels_rows.append((f"t{t}", f"d{i}", status))
            if status is None or draw(st.booleans()) or draw(st.booleans()):
                run_rows.append((f"t{t}", f"d{i}", float(draw(st.integers(0, 4)))))
    if not qrels_rows:
        qrels_rows.append(("t0", "zz", 1))
    if not run_rows:
        run_rows.append(("t0", "zz", 1.0))
    return frames(run_rows, qrels_rows)


SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(collections(), st.sampled_from(["trec", "mean"]), st.sampled_from(["binary", "top"]))
def test_rbp_equals_rbp_eval_on_random_collections(collection, ties, graded):
    run, qrels = collection
    if graded == "top" and qrels["relevance"].max() < 1:
        graded = "binary"
    compare_rbp(run, qrels, [0.0, 0.5, 0.8, 0.95], [1, 2, 3, 5, INF], ties=ties, graded=graded, tol=1e-12)


@SETTINGS
@given(collections(), st.sampled_from(["trec", "mean"]))
def test_rbp_equals_rbp_eval_with_fractional_relevance(collection, ties):
    run, qrels = collection
    fractions = {0: "0.0", 1: "0.25", 2: "0.5", 3: "1.0"}
    text = qrels_text(qrels, value=lambda level: fractions[level])
    fractional = qrels.assign(relevance=[float(fractions[r]) if r >= 0 else -1.0 for r in qrels["relevance"]])
    levels, gains = fractional_levels(fractional)
    compare_rbp(run, levels, [0.5, 0.8], [2, INF], ties=ties, graded="fraction", tol=1e-12, qrels_for_tool=text,
                gains=gains)


def cwl_values(qrels_text: str, run: pd.DataFrame, metrics, n: int = 1000) -> dict:
    """{(qid, metric index): (EU, ETU, EC, ETC, ED, ResEU, ..., ResED)} from cwl_eval's classes,
    the run taken in row order (cwl_eval's file order)."""
    pytest.importorskip("cwl")
    from cwl.ruler.ranking import RankingMaker
    from cwl.seeker.trec_qrel_handler import TrecQrelHandler

    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".qrels", delete=False) as handle:
        handle.write(qrels_text)
    gain_handler = TrecQrelHandler(handle.name)
    Path(handle.name).unlink()
    out = {}
    for qid, rows in run.groupby("query_id", sort=False):
        maker = RankingMaker(qid, gain_handler, None, max_gain=1.0, max_cost=1.0, min_cost=1.0, max_n=n)
        for doc in rows["doc_id"]:
            maker.add(doc, "Q0")
        ranking = maker.get_ranking()
        for index, metric in enumerate(metrics):
            metric.residuals = True
            metric.measure(ranking)
            out[(qid, index)] = (
                metric.expected_utility, metric.expected_total_utility, metric.expected_cost,
                metric.expected_total_cost, metric.expected_items, metric.residual_expected_utility,
                metric.residual_expected_total_utility, metric.residual_expected_cost,
                metric.residual_expected_total_cost, metric.residual_expected_items,
            )
    return out


CWL_QUANTITIES = ["rate", "total", "cost", "total_cost", "depth"]


def compare_cwl(run, qrels, specs, *, tol: float, n: int = 1000, file_order: bool = False):
    """INST/INSQ for ``specs`` [("INST", T), ...], every quantity and residual, against cwl_eval.

    cwl_eval reads the run in file order: given a trec-sorted run (default) that is pdeval's
    order; with ``file_order`` the rows are taken as they are and pdeval uses in_file_order."""
    pytest.importorskip("cwl")
    from cwl.ruler.measures.cwl_insq import INSQCWLMetric
    from cwl.ruler.measures.cwl_inst import INSTCWLMetric

    top = qrels["relevance"].max()
    text = qrels_text(qrels, value=lambda level: repr(float(level / top)))
    tool_run = run if file_order else trec_sorted(run)
    known = set(qrels["query_id"])
    tool_run = tool_run[tool_run["query_id"].isin(known)]
    metrics = [(INSTCWLMetric if name == "INST" else INSQCWLMetric)(T) for name, T in specs]
    expected = cwl_values(text, tool_run, metrics, n=n)
    measures = {}
    for index, (name, T) in enumerate(specs):
        for q, quantity in enumerate(CWL_QUANTITIES):
            for residual in (False, True):
                measures[(index, q + 5 * residual)] = f"{name}(T={T},n={n},quantity={quantity},residual={residual})"
    pdeval_run = in_file_order(run) if file_order else run
    result = pdeval.evaluate(pdeval_run, qrels, list(measures.values()))
    by_name = {(r.query_id, r.measure): r.value for r in result.itertuples()}
    checked = 0
    for (qid, index), tool in expected.items():
        for q in range(10):
            name = str(pdeval.parse_measure(measures[(index, q)]))
            assert abs(by_name[(qid, name)] - tool[q]) <= tol, (qid, name, by_name[(qid, name)], tool[q])
            checked += 1
    assert checked == 10 * len(specs) * result["query_id"].nunique()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from([1, 2, 5, 20]), st.booleans())
def test_cwl_equals_cwl_eval_on_random_collections(collection, n, file_order):
    run, qrels = collection
    if qrels["relevance"].max() < 1:
        qrels = pd.concat([qrels, pd.DataFrame([("t0", "zz", 1)], columns=qrels.columns)])
    compare_cwl(run, qrels, [("INST", 1.0), ("INST", 2.5), ("INSQ", 1.0), ("INSQ", 3.0)], tol=1e-9, n=n,
                file_order=file_order)


# ---- the real collections -----------------------------------------------------------------------
REAL = {
    "clef2015": ("clef2015-chs-task2", "qrels/qrels.eng.clef2015.qtest.graded.txt"),
    "clef2016": ("clef2016-chs-task2", "qrels.txt"),
    "clef2018": ("clef2018-chs-task1", "qrels.txt"),
    "dl21": ("trec-dl21", "qrels-pass.dl21.human.txt"),
}


#: ``make test`` compares a spread of the real runs (every 4th for rbp_eval, every 12th for
#: cwl_eval: each tool is pure Python and slow); ``PDEVAL_ALL_RUNS=1`` compares every run
ALL_RUNS = os.environ.get("PDEVAL_ALL_RUNS", "") not in ("", "0")


def real(name: str):
    folder, qrels_file = REAL[name]
    root = DATA / folder
    if not root.is_dir():
        pytest.skip(f"real data not found: {root} (the shared data folder sits next to the repository)")
    files = sorted((root / "runs").glob("*.gz"))
    qrels = pdeval.read_qrels(root / qrels_file)
    return root / qrels_file, files, qrels


def read_one(path: Path) -> tuple[pd.DataFrame, str]:
    """A run as pdeval reads it and the text the tools read (the file itself, or, where the file
    repeats a document, the rows pdeval keeps with duplicates="first")."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run = pdeval.read_run(path, duplicates="first")
    text = gzip.open(path, "rt").read()
    if any("duplicate" in str(w.message) for w in caught):
        text = run_text(run)
    return run, text


@pytest.mark.parametrize("name", list(REAL))
def test_rbp_equals_rbp_eval_on_real_runs(name):
    """Every fourth run (every run with PDEVAL_ALL_RUNS=1), mean-weight ties (rbp_eval's
    default ordering), binary and top-grade gains, p = 0.5, 0.8, 0.95, depths 10, 100 and the
    full list; every other one of them also in trec order."""
    qrels_path, files, qrels = real(name)
    tool_qrels = Path(qrels_path).read_text()
    qrels = lowercase_ids(qrels)
    for i, path in enumerate(files if ALL_RUNS else files[::4]):
        run, text = read_one(path)
        run = lowercase_ids(run)
        graded = "top" if i % 2 else "binary"
        compare_rbp(run, qrels, [0.5, 0.8, 0.95], [10, 100, INF], ties="mean", graded=graded, tol=1e-12,
                    qrels_for_tool=tool_qrels, tool_run_text=text)
        if i % 2 == 0:
            compare_rbp(run, qrels, [0.8], [10, INF], ties="trec", graded=graded, tol=1e-12, qrels_for_tool=tool_qrels)


@pytest.mark.parametrize("name", list(REAL))
def test_cwl_equals_cwl_eval_on_real_runs(name):
    """INST and INSQ (T = 1, 3), every quantity and residual: every 12th run (every third with
    PDEVAL_ALL_RUNS=1) in trec order, and the same runs in their file order."""
    _, files, qrels = real(name)
    for path in files[:: 3 if ALL_RUNS else 12]:
        run, _ = read_one(path)
        compare_cwl(run, qrels, [("INST", 1.0), ("INST", 3.0), ("INSQ", 1.0), ("INSQ", 3.0)], tol=1e-9)
        compare_cwl(run, qrels, [("INST", 1.0), ("INSQ", 3.0)], tol=1e-9, file_order=True)
