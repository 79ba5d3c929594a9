"""pdeval report on a small slice of the bundled data: files, numbers and the words of report.md."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import re  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import pdeval  # noqa: E402
from pdeval.errors import PdevalError, PdevalWarning  # noqa: E402
from pdeval.report.render import OPTIONAL_TABLES  # noqa: E402
from pdeval.report.study import TABLES, report  # noqa: E402

pytestmark = pytest.mark.filterwarnings("ignore:vert. bool was deprecated:DeprecationWarning")

MEASURES = ["AP", "Bpref", "infAP", "AP'", "P@10"]
FIGURES = ["robustness", "mean_by_level", "estimated_vs_actual", "pools", "discriminative_power",
           "swap_rates", "measure_correlation", "topic_distributions"]


@pytest.fixture(scope="module")
def data():
    clef = pdeval.datasets.load("clef2018")
    runs = sorted(clef.runs["run"].unique())[:5]
    topics = sorted(clef.qrels["query_id"].unique())[:10]
    return {
        "run": clef.runs[clef.runs["run"].isin(runs) & clef.runs["query_id"].isin(topics)],
        "qrels": clef.qrels[clef.qrels["query_id"].isin(topics)].reset_index(drop=True),
        "partial": clef.partial_qrels[clef.partial_qrels["query_id"].isin(topics)].reset_index(drop=True),
    }


@pytest.fixture(scope="module")
def written(data, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    tables = report(data["run"], data["qrels"], partial_qrels=data["partial"], levels=[50, 10], samples=2,
                    measures=MEASURES, pool_depths=(5, 10), seed=3, out=out, progress=False, n_resamples=200)
    return out, tables


def test_every_file_is_written(written):
    out, tables = written
    always = [t for t in TABLES if t not in OPTIONAL_TABLES]
    names = [f"{t}.csv" for t in always] + ["robustness_samples.csv", "report.md", "report.html"]
    names += [f"{f}.png" for f in FIGURES]
    for name in names:
        assert (out / name).stat().st_size > 0, name
    html = (out / "report.html").read_text()
    assert html.count("src='data:image/png;base64,") == len(FIGURES)
    assert html.count("<table") == len(always)
    assert not any((out / f"{t}.csv").exists() for t in OPTIONAL_TABLES)  # written only when asked for
    markdown = (out / "report.md").read_text()
    for figure in FIGURES:
        assert f"]({figure}.png)" in markdown


def test_tables_hold_what_the_functions_return(data, written):
    out, tables = written
    full = pdeval.evaluate(data["run"], data["qrels"], MEASURES, complete=True)
    means = pdeval.summarize(full).pivot(index="run", columns="measure", values="value")
    csv = pd.read_csv(out / "full_means.csv").set_index("run")
    assert list(csv.columns) == MEASURES
    np.testing.assert_allclose(csv.loc[means.index, MEASURES].to_numpy(), means[MEASURES].to_numpy(), rtol=1e-12)

    reduced = pdeval.evaluate(data["run"], pdeval.reduce(data["qrels"], [50, 10], samples=2, seed=3),
                              MEASURES, complete=True)
    tau = pdeval.rank_correlation(reduced, full, methods=("tau_b",))
    expected = tau[tau.level == 10].groupby("measure")["value"].agg(["mean", "min", "max"])
    robustness = pd.read_csv(out / "robustness.csv")
    got = robustness[(robustness.level == 10) & (robustness.method == "tau_b")].set_index("measure")
    np.testing.assert_allclose(got.loc[expected.index, ["mean", "min", "max"]].to_numpy(), expected.to_numpy())
    assert (got["samples"] == 2).all()

    partial = pdeval.rank_correlation(pdeval.evaluate(data["run"], data["partial"], MEASURES, complete=True),
                                      full, methods=("tau_b", "tau_ap", "rms"))
    pd.testing.assert_frame_equal(pd.read_csv(out / "partial.csv").drop(columns="reference"),
                                  partial.drop(columns="reference"), check_dtype=False)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)
        pooled = pdeval.evaluate(data["run"], pdeval.pool(data["run"], pool_depths=[5, 10], qrels=data["qrels"]), MEASURES,
                                 complete=True)
    pools = pdeval.rank_correlation(pooled, full, methods=("tau_b",))
    csv = pd.read_csv(out / "pools.csv")
    csv = csv[csv.method == "tau_b"].set_index(["measure", "depth"])["value"]
    np.testing.assert_allclose(csv.loc[pools.set_index(["measure", "depth"]).index], pools["value"])

    power = pdeval.discriminative_power(full, n_resamples=200, seed=3, progress=False).summary
    csv = pd.read_csv(out / "discriminative_power.csv")
    assert list(csv["label"]) == list(power["label"])
    np.testing.assert_allclose(csv["power"], power["power"])
    # the returned frames are the ones written
    pd.testing.assert_frame_equal(pd.read_csv(out / "summary.csv"), tables["summary"], check_dtype=False)


def paired_t(samples: pd.DataFrame, level, method: str, a: str, b: str) -> float:
    """Paired t statistic of a - b over the samples (scipy, independent of pdeval.report.study)."""
    from scipy.stats import ttest_rel

    at = samples[(samples.level == level) & (samples.method == method)].pivot(index="sample", columns="measure",
                                                                               values="value")
    diff = at[a] - at[b]
    if np.allclose(diff, diff.iloc[0]):  # no spread: separated exactly when the difference is not 0
        return np.inf if abs(diff.iloc[0]) > 1e-12 else 0.0
    return float(ttest_rel(at[a], at[b]).statistic)


def test_separation_is_a_paired_t_statistic_against_the_noise(written):
    from pdeval.report.study import NOISE_Z, separation

    samples = pd.read_csv(written[0] / "robustness_samples.csv")
    at = samples[(samples.level == 10) & (samples.method == "tau_b")]
    pairs = separation(at)
    assert len(pairs) == len(MEASURES) * (len(MEASURES) - 1)
    for row in pairs.itertuples(index=False):
        t = paired_t(samples, 10, "tau_b", row.measure, row.other)
        assert row.separated == (abs(t) > NOISE_Z), (row.measure, row.other, t)


def test_best_is_claimed_only_above_the_sampling_noise(written):
    from pdeval.report.study import NOISE_Z

    out, tables = written
    samples = tables["robustness_samples"]
    markdown = (out / "report.md").read_text()
    first = next(line for line in markdown.splitlines() if line.startswith("* At 10% of the judgments"))
    means = samples[(samples.level == 10) & (samples.method == "tau_b")].groupby("measure")["value"].mean()
    top = means.idxmax()
    if "kept the system ranking best" in first:
        named = re.match(r"\* At 10% of the judgments \(2 samples\), (.+?) kept the system ranking best", first).group(1)
        named = named.replace(" and ", ", ").split(", ")
        assert top in named
        for other in means.index:  # every measure left out of the best group is separated from the top
            if other not in named:
                assert abs(paired_t(samples, 10, "tau_b", top, other)) > NOISE_Z, other
        for member in named:  # every measure of the group is not
            assert abs(paired_t(samples, 10, "tau_b", top, member)) <= NOISE_Z, member
        assert f"{means.max():.3f} ± " in first  # the spread is shown
    else:
        assert "indistinguishable" in first
        for other in means.index:
            assert abs(paired_t(samples, 10, "tau_b", top, other)) <= NOISE_Z
    assert "exceeds 2 standard errors" in markdown  # the rule is stated
    # the summary's rank is the group: measures sharing rank 1 are those not separated from the top
    summary = tables["summary"].set_index("measure")
    assert summary.loc[top, "rank"] == 1
    html = (out / "report.html").read_text()
    assert first[2:40] in html


def synthetic_tables(values: dict, level: int = 10) -> dict:
    """Tables as report() makes them, from per-sample tau_b values {measure: [v_sample...]}."""
    rows = [{"measure": m, "level": level, "sample": i, "method": method, "value": v, "n_runs": 5}
            for m, vs in values.items() for i, v in enumerate(vs) for method in ("tau_b", "tau_ap", "rms")]
    samples = pd.DataFrame(rows)
    grouped = samples.groupby(["measure", "level", "method"])["value"]
    robustness = grouped.agg(["mean", "std", "min", "max", "count"]).reset_index().rename(columns={"count": "samples"})
    power = pd.DataFrame({"measure": list(values), "power": 0.5, "label": "1/2 = 50.0%", "n_resamples": 100, "alpha": 0.05})
    return {"robustness": robustness, "robustness_samples": samples, "discriminative_power": power}


def test_close_measures_are_called_indistinguishable_and_one_sample_ranks_nothing():
    from pdeval.report.study import findings

    noisy = synthetic_tables({"A": [0.80, 0.60, 0.90, 0.70], "B": [0.78, 0.62, 0.85, 0.72], "C": [0.20, 0.21, 0.19, 0.20]})
    lines = findings(noisy, {})
    assert lines[0].startswith("At 10% of the judgments (4 samples), A and B kept the system ranking best, indistinguishable")
    assert "C was lowest" in lines[0]
    assert f"A 0.750 ≈ B {np.mean([0.78, 0.62, 0.85, 0.72]):.3f} > C 0.200" in lines[1]
    single = synthetic_tables({"A": [0.9], "B": [0.5]})
    lines = findings(single, {})
    assert "no measure is ranked above another" in lines[0] and "best" not in " ".join(lines[:2])
    same = synthetic_tables({"A": [0.9, 0.8, 0.7], "B": [0.9, 0.8, 0.7]})
    assert "indistinguishable" in findings(same, {})[0]


def test_pool_results_true_by_construction_are_marked(written):
    out, tables = written
    pools = pd.read_csv(out / "pools.csv")
    p10 = pools[(pools.measure == "P@10") & (pools.method == "tau_b")].set_index("depth")
    assert bool(p10.loc[10, "by_construction"]) and p10.loc[10, "value"] == 1.0
    assert not bool(p10.loc[5, "by_construction"])  # depth 5 < cut-off 10
    assert not pools[pools.measure.isin(["AP", "Bpref", "infAP", "AP'"])]["by_construction"].any()
    markdown = (out / "report.md").read_text()
    assert "True by construction: P@10 at depth 10." in markdown
    assert "P@10 1.000 (by construction)" in markdown


def test_tau_ap_below_one_for_identical_rankings_is_explained():
    from pdeval.analysis.rankings.correlation import tau_ap
    from pdeval.report.study import findings

    tables = synthetic_tables({"A": [0.9, 0.8], "B": [0.5, 0.4]})
    ties = tau_ap([3, 2, 2, 1], [3, 2, 2, 1])  # the same ranking with a tie: below 1
    assert ties < 1
    tables["pools"] = pd.DataFrame({
        "measure": ["A", "A"], "depth": [10, 10], "reference": ["A", "A"], "method": ["tau_b", "tau_ap"],
        "value": [1.0, ties], "n_runs": [4, 4], "judged_pct": [50.0, 50.0], "identical": [True, True],
        "by_construction": [True, True]})
    text = " ".join(findings(tables, {"pool_share": {10: 50.0}}))
    assert f"A at depth 10 (τ_AP {ties:.3f})" in text and "tied mean scores as ordered at random" in text


def test_long_tables_are_shown_compact(written):
    out, tables = written
    markdown = (out / "report.md").read_text()
    section = markdown.split("`robustness.csv`")[1].split("###")[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert rows[0].startswith("| measure | statistic | 50 % | 10 % |")  # from more judgments to fewer
    assert len(rows) == 1 + 3 * len(MEASURES)  # one row per measure and statistic, not per level too
    at = tables["robustness"].set_index(["measure", "level", "method"]).loc[("AP", 10, "tau_b")]
    assert f"| AP | τ_b | " in section and f"{at['mean']:.3f} ± {at['std']:.3f}" in section
    pools = markdown.split("`pools.csv`")[1].split("###")[0]
    assert "1.000 (by construction)" in pools and "| measure | statistic | depth 5 (" in pools
    partial = markdown.split("`partial.csv`")[1].split("###")[0]
    assert partial.splitlines()[2] == "| measure | τ_b | τ_AP | RMS |"
    assert len(pd.read_csv(out / "robustness.csv")) == len(MEASURES) * 2 * 3  # the CSV keeps every row


def test_html_per_run_table_has_no_empty_measure_column(written):
    out, _ = written
    html = (out / "report.html").read_text()
    table = html.split("full_means.csv")[1].split("</table>")[0]
    head = table.split("<thead>")[1].split("</thead>")[0]
    assert head.count("<tr") == 1 and "<th></th>" not in head and "<th>measure</th>" not in head
    assert head.count("<th>") == 1 + len(MEASURES)


def test_cli_reads_files_and_skips_unknown_measures(data, tmp_path, capsys):
    from pdeval.cli.commands import main

    pdeval.write_run(data["run"], tmp_path / "runs", per_run=True)
    pdeval.write_qrels(data["qrels"], tmp_path / "qrels.txt")
    code = main(["report", "--qrels", str(tmp_path / "qrels.txt"), "--runs", str(tmp_path / "runs"),
                 "--levels", "30", "--samples", "1", "--measures", "AP", "Bpref", "nosuch",
                 "--out", str(tmp_path / "out"), "--no-progress"])
    assert code == 0
    warned = [line for line in capsys.readouterr().err.splitlines() if line.startswith("pdeval: warning:")]
    assert any("'nosuch' skipped" in line for line in warned)  # one line on stderr, as every warning
    summary = pd.read_csv(tmp_path / "out" / "summary.csv")
    assert sorted(summary["measure"]) == ["AP", "Bpref"]
    assert not (tmp_path / "out" / "partial.csv").exists()
    assert "partial qrels" not in (tmp_path / "out" / "report.md").read_text().split("## Figures")[0].split("## Findings")[1]


def test_runs_and_qrels_come_together(data, tmp_path):
    with pytest.raises(PdevalError, match="both"):
        report(data["run"], None, out=tmp_path)


def test_estimates_are_written_when_asked_for(data, tmp_path):
    """``report(estimate=True)``: the run means beside their bootstrap estimates (the table
    equals pdeval.estimate's) and the figure of them."""
    out = tmp_path / "with_estimates"
    tables = report(data["run"], data["qrels"], partial_qrels=data["partial"], measures=["AP", "Bpref", "P@10"],
                    samples=2, n_resamples=50, progress=False, out=out, pool_depths=[10], estimate=True)
    expected = pdeval.estimate(data["run"], data["qrels"], ["AP", "P@10"], n_resamples=50, seed=1, per="run")
    got = tables["estimates"].set_index(["run", "measure"]).sort_index()
    expected = expected.set_index(["run", "measure"]).sort_index()
    pd.testing.assert_frame_equal(got[["value", "estimate", "low", "high"]], expected[["value", "estimate", "low", "high"]])
    assert (out / "estimates.csv").stat().st_size > 0 and (out / "estimates.png").stat().st_size > 0
    assert "estimates.png" in (out / "report.md").read_text()


def test_report_refuses_pool_depths_outside_their_domain(tmp_path):
    """Issue: report(pool_depths=[2.5]) ran the study at depth 2; pool_depths=10 raised a raw error."""
    from pdeval.common.contract import contract_of
    from pdeval.errors import PdevalError
    from pdeval.report.study import report

    for bad in ([2.5], [0], ["10"], 2.5):
        with pytest.raises(PdevalError, match=r"report\(\): pool_depths=.* is not .*integer >= 1"):
            report(pool_depths=bad, out=tmp_path / "r")
    assert not (tmp_path / "r").exists()  # refused before any work
    assert contract_of(report).check({"pool_depths": 10})["pool_depths"] == [10]
