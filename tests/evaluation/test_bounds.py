"""``pdeval.evaluation.bounds`` against brute force: each run evaluated on its own, with the qrels
explicitly extended by its unjudged retrieved documents at the grade.

The brute force below is written from the definition, one run at a time, with plain pandas
(no code of pdeval.evaluation.bounds): it is the oracle for every registered measure on random
collections (Hypothesis) and on real runs of CLEF eHealth 2015 (pooled and unpooled runs)
and TREC DL 2021 (skipped without the shared data beside the repository).
"""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pdeval
from pdeval.errors import PdevalError
from pdeval.engine.options import EngineOptions
from pdeval.evaluation.core import evaluate_frames
from pdeval.measures.registry import REGISTRY
from locations import REPO

DATA = REPO.parent / "shared" / "data"


def every_measure() -> list[str]:
    """One string per registered measure (with a cutoff or a required parameter where needed),
    plus primes and the residual forms."""
    out = []
    for name, spec in REGISTRY.items():
        if spec.judgments != "relevance":  # prefs_* read a preference frame
            continue
        text = name + ("(" + ",".join(f"{key}=0.5" for key in spec.required) + ")" if spec.required else "")
        out.append(text + ("@3" if spec.cutoff == "required" else ""))
    return out + ["AP'", "nDCG'@3", "nDCG@3", "Q'", "RBP(p=0.5,ties=mean)", "RBP(residual=True)",
                  "INST(T=2,n=20,residual=True)", "AP@2", "RR@2"]


def brute_force(run, qrels, measures, *, unjudged="all", grade=None, **options):
    """High values by definition: for each run, the qrels plus its unjudged retrieved
    documents (pooled ones replaced) at ``grade`` (default the largest level, at least 1),
    evaluated alone."""
    grade = max(int(qrels["relevance"].max()), 1) if grade is None else grade
    depth = options.get("depth")
    parts = []
    for name, rows in run.groupby("run", sort=True):
        rows = rows.copy()
        if depth is not None:
            rows = pdeval.rank_run(rows, score_precision=options.get("score_precision", "float64"), depth=depth)
        retrieved = rows[rows["query_id"].isin(set(qrels["query_id"]))][["query_id", "doc_id"]]
        joined = retrieved.merge(qrels, on=["query_id", "doc_id"], how="left")
        absent = joined["relevance"].isna()
        pooled = joined["relevance"] < 0
        chosen = {"all": absent | pooled, "absent": absent, "pooled": pooled}[unjudged]
        fills = joined.loc[chosen, ["query_id", "doc_id"]].assign(relevance=grade)
        kept = qrels.merge(fills[["query_id", "doc_id"]], on=["query_id", "doc_id"], how="left", indicator=True)
        kept = kept[kept["_merge"] == "left_only"].drop(columns="_merge")
        extended = pd.concat([kept, fills], ignore_index=True)
        # one run alone may share no topic with the qrels: the engine without the overlap check
        parts.append(evaluate_frames(rows, extended, measures, EngineOptions.of(options), coverage=False))
    return pd.concat(parts, ignore_index=True)


def check(run, qrels, measures, *, tol=1e-12, **options):
    got = pdeval.bounds(run, qrels, measures, **options)
    low = pdeval.evaluate(run, qrels, measures, **{k: v for k, v in options.items() if k not in ("unjudged", "grade")})
    high = brute_force(run, qrels, measures, **options)
    nonrelevant = brute_force(run, qrels, measures, **{**options, "grade": 0})
    keys = ["run", "query_id", "measure"]
    assert len(got) == len(low) == len(high)
    merged = (got.rename(columns={"value": "got_value"}).merge(low, on=keys)
              .merge(high.rename(columns={"value": "expected_high"}), on=keys)
              .merge(nonrelevant.rename(columns={"value": "expected_nonrelevant"}), on=keys))
    assert len(merged) == len(got)
    np.testing.assert_allclose(merged["got_value"], merged["value"], atol=tol, rtol=0, equal_nan=True)
    np.testing.assert_allclose(merged["if_relevant"], merged["expected_high"], atol=tol, rtol=0, equal_nan=True)
    np.testing.assert_allclose(merged["if_nonrelevant"], merged["expected_nonrelevant"], atol=tol, rtol=0,
                               equal_nan=True)
    np.testing.assert_array_equal(merged["low"], np.fmin(merged["if_nonrelevant"], merged["if_relevant"]))
    np.testing.assert_array_equal(merged["high"], np.fmax(merged["if_nonrelevant"], merged["if_relevant"]))
    np.testing.assert_allclose(merged["residual"], merged["high"] - merged["low"], atol=0, rtol=0, equal_nan=True)
    return got


def test_worked_example():
    run = pd.DataFrame({"run": ["A"] * 4, "query_id": ["q"] * 4, "doc_id": list("abcd"), "score": [4.0, 3, 2, 1]})
    qrels = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcx"), "relevance": [2, -1, 0, 1]})
    got = pdeval.bounds(run, qrels, ["AP", "P@2", "RBP(p=0.5)"]).set_index("measure")
    # filled: b (pooled) and d (absent) relevant, R = 4: AP = (1 + 1 + 3/4) / 4
    assert got.loc["AP", "low"] == got.loc["AP", "value"] == pytest.approx(0.5, abs=1e-15)
    assert got.loc["AP", "high"] == got.loc["AP", "if_relevant"] == pytest.approx(2.75 / 4, abs=1e-15)
    assert not got.loc["AP", "monotone"] and got.loc["P@2", "monotone"]
    assert got.loc["P@2", "residual"] == pytest.approx(0.5, abs=1e-15)
    assert got.loc["RBP(p=0.5)", "high"] == pytest.approx(0.5 + 0.25 + 0.0625, abs=1e-15)
    only_absent = pdeval.bounds(run, qrels, "AP", unjudged="absent").iloc[0]
    assert only_absent["high"] == pytest.approx((1 + 2 / 4) / 3, abs=1e-15)  # a, d relevant; R = 3
    only_pooled = pdeval.bounds(run, qrels, "AP", unjudged="pooled").iloc[0]
    assert only_pooled["high"] == pytest.approx((1 + 1) / 3, abs=1e-15)  # a, b relevant; R = 3


def test_summarize_shows_the_residual():
    run = pd.DataFrame({"run": ["A"] * 2 + ["B"] * 2, "query_id": ["q", "r"] * 2, "doc_id": ["a", "b", "a", "z"],
                        "score": [1.0] * 4})
    qrels = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    summary = pdeval.summarize(pdeval.bounds(run, qrels, "P@1")).set_index("run")
    assert summary.loc["A", "value"] == 1.0 and summary.loc["A", "residual"] == 0.0
    assert summary.loc["B", "value"] == 0.5 and summary.loc["B", "residual"] == 0.5
    assert summary.loc["B", "high"] == 1.0
    wide = pdeval.summarize(pdeval.bounds(run, qrels, "P@1"), wide=True).set_index("run")
    assert wide.loc["B", "P@1"] == 0.5 and wide.loc["B", "P@1 residual"] == 0.5


def test_summarize_refuses_per_topic_estimates_and_points_at_the_joint_interval():
    run = pd.DataFrame({"run": ["A"] * 4, "query_id": ["q", "q", "r", "r"], "doc_id": ["a", "x", "b", "y"],
                        "score": [2.0, 1.0] * 2})
    qrels = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    per_topic = pdeval.estimate(run, qrels, "P@2", n_resamples=20)
    with pytest.raises(pdeval.errors.SchemaError, match=r"per='run'"):
        pdeval.summarize(per_topic)
    per_run = pdeval.estimate(run, qrels, "P@2", n_resamples=20, per="run")
    mean = per_topic.groupby("run")["estimate"].mean()
    assert per_run.set_index("run")["estimate"].to_dict() == pytest.approx(mean.to_dict(), abs=1e-12)


def test_analyses_refuse_interval_columns_as_keys():
    run = pd.DataFrame({"run": ["A", "A", "B", "B"], "query_id": ["q", "r"] * 2, "doc_id": ["a", "b", "a", "z"],
                        "score": [1.0] * 4})
    qrels = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "b"], "relevance": [1, 1]})
    frame = pdeval.bounds(run, qrels, ["P@1", "RR"])
    with pytest.raises(pdeval.errors.SchemaError, match=r"\['if_nonrelevant', 'if_relevant', 'residual', 'low'"):
        pdeval.rank_correlation(frame, reference_measure="P@1")
    plain = frame.drop(columns=["if_nonrelevant", "if_relevant", "residual", "low", "high", "monotone"])
    tau = pdeval.rank_correlation(plain, reference_measure="P@1")
    assert tau["value"].tolist() == [1.0]  # A above B under both measures


def test_bad_options_raise():
    run = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "score": [1.0]})
    qrels = pd.DataFrame({"query_id": ["q"], "doc_id": ["b"], "relevance": [1]})
    with pytest.raises(PdevalError):
        pdeval.bounds(run, qrels, "AP", unjudged="some")
    with pytest.raises(PdevalError):
        pdeval.bounds(run, qrels, "rpref_N", grade=3)  # above the top grade: the collection maximum moves
    pdeval.bounds(run, qrels, "rpref_N(gain_max=3)", grade=3)


def test_the_collection_wide_gain_maximum_counts_topics_no_run_retrieved():
    # Graded RBP, INST, INSQ and rpref_N scale gains by the largest gain over every topic of
    # the qrels, here t1's grade 2, which no run retrieves: the filled qrels must keep it
    # (found by Hypothesis: high was 2x low for RBP although nothing was left to fill)
    run = pd.DataFrame({"run": ["r0"], "query_id": ["t0"], "doc_id": ["d0"], "score": [0.0]})
    qrels = pd.DataFrame({"query_id": ["t0", "t1"], "doc_id": ["d0", "d0"], "relevance": [1, 2]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = check(run, qrels, ["RBP", "INST", "INSQ", "rpref_N", "RBP(p=0.5,ties=mean)"])
    assert (got["residual"] == 0).all()
    assert got.set_index("measure").loc["RBP", "high"] == pytest.approx(0.2 * 1 / 2, abs=1e-15)


@st.composite
def collections(draw):
    runs, qrows, rrows = draw(st.integers(1, 3)), [], []
    for t in range(draw(st.integers(1, 3))):
        for i in range(draw(st.integers(1, 10))):
            status = draw(st.sampled_from([0, 1, 2, -1, None]))
            if status is not None:
                qrows.append((f"t{t}", f"d{i}", status))
            for r in range(runs):
                if draw(st.booleans()):
                    rrows.append((f"r{r}", f"t{t}", f"d{i}", float(draw(st.integers(0, 3)))))
    if not qrows:
        qrows.append(("t0", "zz", 1))
    if not rrows:
        rrows.append(("r0", "t0", "zz", 1.0))
    if not {r[1] for r in rrows} & {q[0] for q in qrows}:  # no shared topic is an error (tested elsewhere)
        qrows.append((rrows[0][1], "zz", 1))
    run = pd.DataFrame(rrows, columns=["run", "query_id", "doc_id", "score"])
    qrels = pd.DataFrame(qrows, columns=["query_id", "doc_id", "relevance"])
    return run, qrels


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections(), st.sampled_from(["all", "absent", "pooled"]), st.sampled_from([None, 1]),
       st.sampled_from([None, 2]), st.booleans())
def test_bounds_equal_brute_force_for_every_measure(collection, unjudged, grade, depth, complete):
    run, qrels = collection
    options = dict(unjudged=unjudged, grade=grade, depth=depth, complete=complete, undefined="nan")
    if grade is not None and qrels["relevance"].max() < grade:
        with pytest.raises(PdevalError):
            pdeval.bounds(run, qrels, every_measure(), **options)
        return
    check(run, qrels, every_measure(), tol=1e-12, **options)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(collections())
def test_bounds_keep_qrels_variants_apart(collection):
    """Two qrels variants (the qrels and a reduced copy) in one call equal each alone."""
    run, qrels = collection
    reduced = qrels.iloc[::2]
    both = pd.concat([qrels.assign(level=100), reduced.assign(level=50)], ignore_index=True)
    measures = ["AP", "nDCG@3", "Bpref", "RBP", "infAP", "Judged@2"]
    together = pdeval.bounds(run, both, measures, undefined="nan")
    for level, part in ((100, qrels), (50, reduced)):
        if not set(part["query_id"]) & set(run["query_id"]):  # alone, that variant is an error
            with pytest.raises(pdeval.errors.OverlapError):
                pdeval.bounds(run, part, measures, undefined="nan")
            continue
        alone = pdeval.bounds(run, part, measures, undefined="nan")  # default grade: each variant's own top
        mine = together[together["level"] == level].drop(columns="level").reset_index(drop=True)
        pd.testing.assert_frame_equal(mine, alone.reset_index(drop=True), check_dtype=False)


# ---- real runs ----------------------------------------------------------------------------------
REAL_MEASURES = ["AP", "P@10", "nDCG@10", "Rprec", "R@100", "Bpref", "infAP", "RBP", "RBP(p=0.95,residual=True)",
                 "Q", "rpref_N", "bpref10", "AP'", "INST(T=3)", "Judged@10"]


def real_runs(folder: str, qrels_file: str, names: list[str]):
    root = DATA / folder
    if not root.is_dir():
        pytest.skip(f"real data not found: {root} (the shared data folder sits next to the repository)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        run = pdeval.read_run([root / "runs" / n for n in names])
    return run, pdeval.read_qrels(root / qrels_file)


def test_bounds_on_clef2015_pooled_and_unpooled_runs():
    # runs 1-3 of a team were pooled (top 10), runs 4-10 were not (PROVENANCE.md)
    run, qrels = real_runs("clef2015-chs-task2", "qrels/qrels.eng.clef2015.qtest.graded.txt",
                           ["ECNU_EN_Run.1.dat.gz", "ECNU_EN_Run.7.dat.gz", "FDUSGInfo_EN_Run.9.dat.gz",
                            "LIMSI_EN_run.4.dat.gz", "KUCS_EN_Run.3.dat.gz"])
    got = check(run, qrels, REAL_MEASURES, tol=1e-12, score_precision="float32")
    p10 = pdeval.summarize(got[got["measure"] == "P@10"]).set_index("run")["residual"]
    assert p10["ECNU_EN_Run.1"] < 0.01 < p10["FDUSGInfo_EN_Run.9"]


def test_bounds_on_trec_dl21_runs_at_depth_10():
    run, qrels = real_runs("trec-dl21", "qrels-pass.dl21.human.txt",
                           ["Fast_ForwardP_2.gz", "Fast_Forward_3.gz"])
    check(run, qrels, REAL_MEASURES, tol=1e-12, depth=10, unjudged="absent")


def test_accessor_cli_and_figure(tmp_path, capsys):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from pdeval.report import figures as plotting
    from pdeval.cli.commands import main

    clef = pdeval.datasets.load("clef2018")
    run = clef.runs[clef.runs["run"].isin(sorted(clef.runs["run"].unique())[:4])]
    qrels = clef.partial_qrels
    frame = run.ir.bounds(qrels, ["P@10", "RBP"], duplicates="first")
    assert list(frame.columns) == ["run", "query_id", "measure", "value", "if_nonrelevant", "if_relevant", "low",
                                   "high", "residual", "monotone"]
    fig = plotting.bound_intervals(frame, measures="P@10")
    fig.savefig(tmp_path / "bounds.png")
    assert len(fig.axes[0].get_yticklabels()) == 4
    plt.close(fig)
    # the command line: trec_eval's columns plus high and residual
    pdeval.write_qrels(qrels, tmp_path / "qrels.txt")
    one = run[run["run"] == run["run"].iloc[0]].drop_duplicates(["query_id", "doc_id"])
    pdeval.write_run(one, tmp_path / "one.txt")
    assert main(["eval", str(tmp_path / "qrels.txt"), str(tmp_path / "one.txt"), "-m", "P@10", "--bounds"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1].split("\t")
    expected = pdeval.summarize(pdeval.bounds(one, qrels, "P@10")).iloc[0]
    assert line[1] == "all"
    assert [float(v) for v in line[2:]] == pytest.approx(
        [expected["value"], expected["high"], expected["residual"]], abs=6e-5)


def test_report_shows_residuals_beside_the_means(tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    from pdeval.report.study import report

    clef = pdeval.datasets.load("clef2018")
    runs = sorted(clef.runs["run"].unique())[:3]
    topics = sorted(clef.qrels["query_id"].unique())[:6]
    run = clef.runs[clef.runs["run"].isin(runs) & clef.runs["query_id"].isin(topics)]
    qrels = clef.partial_qrels[clef.partial_qrels["query_id"].isin(topics)].reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tables = report(run, qrels, levels=[50], samples=2, measures=["P@10", "AP"], pool_depths=None, out=tmp_path,
                        progress=False, n_resamples=20, bounds=True)
    means = tables["full_means"].set_index("run")
    assert list(means.columns) == ["P@10", "P@10 residual", "AP", "AP residual"]
    expected = pdeval.summarize(pdeval.bounds(run, qrels, ["P@10", "AP"], complete=True)).set_index(["run", "measure"])
    for name in runs:
        assert means.loc[name, "AP residual"] == pytest.approx(expected.loc[(name, "AP"), "residual"], abs=1e-12)
        assert means.loc[name, "P@10"] == pytest.approx(expected.loc[(name, "P@10"), "value"], abs=1e-12)
    assert (tmp_path / "bounds.png").exists()
    assert "bounds.png" in (tmp_path / "report.md").read_text()


def test_topics_outside_the_qrels_and_complete():
    run = pd.DataFrame({"run": ["A", "A", "B", "C"], "query_id": ["q", "x", "q", "x"], "doc_id": ["a", "b", "c", "d"],
                        "score": [1.0, 1.0, 1.0, 1.0]})
    qrels = pd.DataFrame({"query_id": ["q", "r"], "doc_id": ["a", "e"], "relevance": [1, 2]})
    got = check(run, qrels, ["AP", "P@1", "nDCG", "RBP"], complete=True, undefined="nan")
    assert set(got["run"]) == {"A", "B", "C"}  # C retrieved only a topic without judgments: empty lists
    assert got.loc[(got["run"] == "B") & (got["query_id"] == "q") & (got["measure"] == "P@1"), "high"].item() == 1.0
