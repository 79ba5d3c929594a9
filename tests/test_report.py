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
from pdeval.report import TABLES, report  # noqa: E402

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
                    measures=MEASURES, depths=(5, 10), seed=3, out=out, progress=False, B=200, swap_trials=100)
    return out, tables


def test_every_file_is_written(written):
    out, tables = written
    names = [f"{t}.csv" for t in TABLES] + ["robustness_samples.csv", "report.md", "report.html"]
    names += [f"{f}.png" for f in FIGURES]
    for name in names:
        assert (out / name).stat().st_size > 0, name
    html = (out / "report.html").read_text()
    assert html.count("src='data:image/png;base64,") == len(FIGURES)
    assert html.count("<table") == len(TABLES)
    markdown = (out / "report.md").read_text()
    for figure in FIGURES:
        assert f"]({figure}.png)" in markdown


def test_tables_hold_what_the_functions_return(data, written):
    out, tables = written
    full = pdeval.evaluate(data["run"], data["qrels"], MEASURES, complete=True)
    means = pdeval.system_means(full).pivot(index="run", columns="measure", values="value")
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
        pooled = pdeval.evaluate(data["run"], pdeval.pool(data["run"], [5, 10], qrels=data["qrels"]), MEASURES,
                                 complete=True)
    pools = pdeval.rank_correlation(pooled, full, methods=("tau_b",))
    csv = pd.read_csv(out / "pools.csv")
    csv = csv[csv.method == "tau_b"].set_index(["measure", "depth"])["value"]
    np.testing.assert_allclose(csv.loc[pools.set_index(["measure", "depth"]).index], pools["value"])

    power = pdeval.discriminative_power(full, B=200, seed=3, progress=False).summary
    csv = pd.read_csv(out / "discriminative_power.csv")
    assert list(csv["label"]) == list(power["label"])
    np.testing.assert_allclose(csv["power"], power["power"])
    # the returned frames are the ones written
    pd.testing.assert_frame_equal(pd.read_csv(out / "summary.csv"), tables["summary"], check_dtype=False)


def test_report_names_the_measure_with_the_best_tau(written):
    out, tables = written
    robustness = tables["robustness"]
    low = robustness[(robustness.level == 10) & (robustness.method == "tau_b")].set_index("measure")["mean"]
    best, worst = low.idxmax(), low.idxmin()
    markdown = (out / "report.md").read_text()
    first = next(line for line in markdown.splitlines() if line.startswith("* At 10% of the judgments"))
    names = re.match(r"\* At 10% of the judgments, (.+?) kept the system ranking best", first).group(1)
    assert best in names.split(" and ")
    assert f"mean τ_b = {low.max():.3f}" in first
    assert f"fell to τ_b = {low.min():.3f}" in first and worst in first
    html = (out / "report.html").read_text()
    assert f"mean τ_b = {low.max():.3f}" in html
    assert "With the real partial qrels" in markdown and "Depth-k pools" in markdown


def test_cli_reads_files_and_skips_unknown_measures(data, tmp_path, capsys):
    from pdeval.cli import main

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
