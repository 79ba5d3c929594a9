"""Every figure renders to a PNG from small real data, with its labels, legend and panel texts."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import pdeval  # noqa: E402
from pdeval.report import figures as plotting  # noqa: E402
from pdeval.report.style import wrap_label  # noqa: E402
from pdeval.errors import SchemaError  # noqa: E402

MEASURES = ["AP", "Bpref", "infAP", "P@10"]
# seaborn 0.13 passes boxplot's old ``vert`` argument to matplotlib >= 3.11
pytestmark = pytest.mark.filterwarnings("ignore:vert. bool was deprecated:DeprecationWarning")


@pytest.fixture(scope="module")
def study():
    clef = pdeval.datasets.load("clef2018")
    runs = sorted(clef.runs["run"].unique())[:6]
    topics = sorted(clef.qrels["query_id"].unique())[:12]
    run = clef.runs[clef.runs["run"].isin(runs) & clef.runs["query_id"].isin(topics)]
    qrels = clef.qrels[clef.qrels["query_id"].isin(topics)]
    full = pdeval.evaluate(run, qrels, MEASURES, complete=True)
    reduced = pdeval.evaluate(run, pdeval.reduce(qrels, [50, 20], samples=3, seed=1), MEASURES, complete=True)
    tau = pdeval.rank_correlation(reduced, full, methods=("tau_b", "tau_ap", "rms"))
    return {"full": full, "reduced": reduced, "tau": tau}


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def render(figure, path) -> None:
    getattr(figure, "figure", figure).savefig(path, dpi=60, bbox_inches="tight")
    assert path.exists() and path.stat().st_size > 0


def legend_texts(grid) -> list[str]:
    return [t.get_text() for t in grid.legend.get_texts()]


def test_robustness_curve(study, tmp_path):
    grid = plotting.robustness_curve(study["tau"], methods=["tau_b", "tau_ap"])
    render(grid, tmp_path / "robustness.png")
    axes = list(grid.axes.flat)
    assert [ax.get_title() for ax in axes] == ["Kendall's τ_b", "AP correlation τ_AP"]
    assert axes[0].get_ylabel() == "Kendall's τ_b with full-judgment ranking"
    assert axes[0].get_xlabel() == "judgments kept (% of the full qrels)"
    assert axes[0].xaxis_inverted()  # full judgments on the left
    assert legend_texts(grid) == list(pd.unique(study["tau"]["measure"]))
    assert "range over 3 samples" in grid.figure._suptitle.get_text()
    # the line goes through the mean over samples
    line = axes[0].get_lines()[0]
    measure = legend_texts(grid)[0]
    sel = study["tau"][(study["tau"].measure == measure) & (study["tau"].method == "tau_b")]
    expected = sel.groupby("level")["value"].mean()
    assert dict(zip(line.get_xdata(), line.get_ydata())) == pytest.approx(expected.to_dict())


def test_robustness_curve_orders_measures_and_plots_pool_depths(study, tmp_path):
    grid = plotting.robustness_curve(study["tau"], methods=["rms"], measures=["P@10", "AP"])
    render(grid, tmp_path / "ordered.png")
    assert legend_texts(grid) == ["P@10", "AP"]
    depth = study["tau"].rename(columns={"level": "depth"}).query("sample == 0").drop(columns="sample")
    grid = plotting.robustness_curve(depth, x="depth", methods=["tau_b"])
    render(grid, tmp_path / "depth.png")
    assert grid.ax.get_xlabel() == "pool depth (documents per run and topic)"
    with pytest.raises(SchemaError, match="not in the frame"):
        plotting.robustness_curve(study["tau"], measures=["nDCG"])


def test_mean_by_level(study, tmp_path):
    grid = plotting.mean_by_level(study["reduced"], measures=["AP", "Bpref"])
    render(grid, tmp_path / "mean.png")
    assert grid.ax.get_ylabel() == "mean over runs and topics"
    assert grid.ax.get_xlabel() == "judgments kept (% of the full qrels)"
    assert legend_texts(grid) == ["AP", "Bpref"]
    line = grid.ax.get_lines()[0]
    red = study["reduced"]
    expected = red[red.measure == "AP"].groupby("level")["value"].mean()  # runs x topics balanced
    assert dict(zip(line.get_xdata(), line.get_ydata())) == pytest.approx(expected.to_dict())


def test_estimated_vs_actual_writes_rms_tau_rho(study, tmp_path):
    red, full = study["reduced"], study["full"]
    estimated = red[(red.level == 20) & red.measure.isin(["infAP", "Bpref"])]
    actual = full[full.measure == "AP"]
    grid = plotting.estimated_vs_actual(estimated, actual)
    render(grid, tmp_path / "eva.png")
    titles = [ax.get_title().replace("\n", " ") for ax in grid.axes.flat]
    infap = "infAP against full-judgment AP, 20 % of judgments"
    bpref = "Bpref against full-judgment AP, 20 % of judgments"
    assert titles == [infap, bpref] or titles == [bpref, infap]
    ax = grid.axes.flat[titles.index(infap)]
    assert ax.get_xlabel() == "actual mean (full judgments)" and ax.get_ylabel() == "estimated mean"
    text = ax.texts[0].get_text()
    est = pdeval.summarize(estimated[estimated.measure == "infAP"]).groupby("run")["value"].mean()
    act = pdeval.summarize(actual).set_index("run")["value"].loc[est.index]
    from pdeval.analysis.rankings.correlation import kendall_tau, pearson, rms_error

    assert f"RMS = {rms_error(est, act):.4f}" in text
    assert f"τ = {kendall_tau(est, act):.4f}" in text
    assert f"ρ = {pearson(est, act):.4f}" in text
    assert "averaged over 3 samples" in grid.figure._suptitle.get_text()


def test_estimated_vs_actual_takes_summarized_means_and_matches_by_name(study, tmp_path):
    red, full = study["reduced"], study["full"]
    estimated = pdeval.summarize(red[(red.level == 50) & (red["sample"] == 0)])
    grid = plotting.estimated_vs_actual(estimated, pdeval.summarize(full))
    render(grid, tmp_path / "means.png")
    assert sorted(ax.get_title().replace("\n", " ") for ax in grid.axes.flat) == sorted(
        f"{m} against full-judgment {m}, 50 % of judgments" for m in MEASURES)
    with pytest.raises(SchemaError, match="several variants"):
        plotting.estimated_vs_actual(red, red)


def test_correlation_heatmap_from_result_and_table(study, tmp_path):
    fig = plotting.correlation_heatmap(study["full"])
    render(fig, tmp_path / "heat.png")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "measure (estimate)" and ax.get_ylabel() == "reference measure"
    assert [t.get_text() for t in ax.get_xticklabels()] == MEASURES
    table = pdeval.correlation_table(study["full"], methods="tau_b", measures=MEASURES)
    annotations = [t.get_text() for t in ax.texts]
    assert annotations == [f"{v:.2f}" for v in table.to_numpy().ravel()]
    fig2 = plotting.correlation_heatmap(table, measures=["AP", "P@10"], title="two")
    render(fig2, tmp_path / "heat2.png")
    assert fig2.axes[0].get_title() == "two"
    assert fig2.axes[1].get_ylabel() == "Kendall's τ_b"  # colour bar


def test_discriminative_power_bars(study, tmp_path):
    summary = pdeval.discriminative_power(study["full"], n_resamples=100, progress=False).summary
    fig = plotting.discriminative_power_bars(summary)
    render(fig, tmp_path / "dp.png")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "discriminative power (% of run pairs significantly different)"
    shown = [t.get_text() for t in ax.get_yticklabels()]
    assert shown == list(summary.sort_values("power", ascending=False, kind="stable")["measure"])
    bar_labels = [t.get_text() for t in ax.texts]
    assert bar_labels == list(summary.set_index("measure").loc[shown, "label"])
    assert "B = 100" in ax.get_title()
    widths = [p.get_width() for p in ax.patches]
    assert widths == pytest.approx(list(100 * summary.set_index("measure").loc[shown, "power"]))


def test_swap_rate_curve(study, tmp_path):
    swaps = pdeval.swap_rates(study["full"], c=6, n_resamples=100, progress=False)
    grid = plotting.swap_rate_curve(swaps.bins)
    render(grid, tmp_path / "swap.png")
    assert grid.ax.get_ylabel() == "swap rate (% of trials)"
    assert grid.ax.get_xlabel().startswith("|difference of means| on topic set 1")
    assert legend_texts(grid) == MEASURES
    ap = swaps.bins[(swaps.bins.measure == "AP") & swaps.bins.rate.notna()]
    line = grid.ax.get_lines()[0]
    assert np.allclose(line.get_ydata(), 100 * ap["rate"].to_numpy())
    # on complete judgments infAP is AP: the note says which lines hide each other
    infap = swaps.bins[(swaps.bins.measure == "infAP") & swaps.bins.rate.notna()]
    assert np.array_equal(infap["rate"].to_numpy(), ap["rate"].to_numpy())
    assert "AP and infAP coincide: one line hides the other" in grid.figure._suptitle.get_text()
    assert len({tuple(line.get_dashes()) if hasattr(line, "get_dashes") else line.get_linestyle()
                for line in grid.ax.get_lines()[:len(MEASURES)]}) > 1  # dash patterns tell the lines apart


def test_swap_rate_curve_facets_variants(study, tmp_path):
    red = study["reduced"][study["reduced"]["sample"] == 0].drop(columns="sample")
    swaps = pdeval.swap_rates(red, measures="AP", c=6, n_resamples=50, progress=False)
    grid = plotting.swap_rate_curve(swaps.bins)
    render(grid, tmp_path / "swap2.png")
    assert sorted(ax.get_title() for ax in grid.axes.flat) == ["20 % of judgments", "50 % of judgments"]


def test_topic_distributions(study, tmp_path):
    fig = plotting.topic_distributions(study["full"], measures="AP")
    render(fig, tmp_path / "topics.png")
    ax = fig.axes[0]
    assert ax.get_xlabel() == "AP per topic"
    assert ax.get_title() == "Per-topic AP of each run (12 topics)"
    names = [t.get_text().replace("\n", "") for t in ax.get_yticklabels()]
    means = pdeval.summarize(study["full"][study["full"].measure == "AP"]).set_index("run")["value"]
    assert names == list(means.sort_values(ascending=False).index)
    assert max(len(line) for t in ax.get_yticklabels() for line in t.get_text().split("\n")) <= 32
    with pytest.raises(SchemaError, match="several variants"):
        plotting.topic_distributions(study["reduced"], measures="AP")
    fig = plotting.topic_distributions(study["reduced"][study["reduced"]["sample"] == 0], measures="AP", hue="level")
    render(fig, tmp_path / "topics_hue.png")
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == ["20", "50"]


def test_long_names_wrap_at_separators():
    assert wrap_label("short") == "short"
    wrapped = wrap_label("SINAI__SINAI_Run1_google+cTakes", 12)
    assert wrapped.replace("\n", "") == "SINAI__SINAI_Run1_google+cTakes"
    assert all(len(line) <= 12 for line in wrapped.split("\n"))


def test_each_measure_has_one_colour_in_every_figure(study):
    from matplotlib.colors import to_rgb

    palette = plotting.measure_palette(["P@10", "infAP", "Bpref", "AP"])  # not the frame's order
    want = {m: to_rgb(c) for m, c in palette.items()}

    def legend_colours(grid):
        return {t.get_text(): to_rgb(h.get_color()) for t, h in zip(grid.legend.get_texts(), grid.legend.legend_handles)}

    assert legend_colours(plotting.robustness_curve(study["tau"], palette=palette)) == want
    assert legend_colours(plotting.mean_by_level(study["reduced"], palette=palette)) == want
    swaps = pdeval.swap_rates(study["full"], c=6, n_resamples=50, progress=False)
    assert legend_colours(plotting.swap_rate_curve(swaps.bins, palette=palette)) == want
    summary = pdeval.discriminative_power(study["full"], n_resamples=50, progress=False).summary
    ax = plotting.discriminative_power_bars(summary, palette=palette).axes[0]
    shown = [t.get_text() for t in ax.get_yticklabels()]
    bars = sorted(ax.patches, key=lambda p: p.get_y())
    assert {m: to_rgb(b.get_facecolor()) for m, b in zip(shown, bars)} == want
    grid = plotting.estimated_vs_actual(study["reduced"][study["reduced"].level == 20], study["full"], palette=palette)
    for ax in grid.axes.flat:
        measure = ax.get_title().split(" against ")[0]
        assert tuple(ax.collections[0].get_facecolor()[0][:3]) == pytest.approx(want[measure])
    fig = plotting.topic_distributions(study["full"], measures="Bpref", palette=palette)
    box = next(p for p in fig.axes[0].patches)
    assert tuple(box.get_facecolor()[:3]) == pytest.approx(want["Bpref"])
    with pytest.raises(SchemaError, match="no colour"):
        plotting.robustness_curve(study["tau"], palette={"AP": "red"})


def test_percentage_axes_stay_within_0_and_100(study):
    grid = plotting.robustness_curve(study["tau"])
    for ax in grid.axes.flat:
        assert 0 <= min(ax.get_xlim()) and max(ax.get_xlim()) <= 100
    ax = plotting.mean_by_level(study["reduced"]).ax
    assert 0 <= min(ax.get_xlim()) and max(ax.get_xlim()) <= 100
    swaps = pdeval.swap_rates(study["full"], c=6, n_resamples=50, progress=False)
    ax = plotting.swap_rate_curve(swaps.bins).ax
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] <= 100
    summary = pdeval.discriminative_power(study["full"], n_resamples=50, progress=False).summary
    assert plotting.discriminative_power_bars(summary).axes[0].get_xlim() == (0, 100)


def test_the_plot_accessor_lists_the_figures_and_no_helper():
    """Issue: help(df.ir.plot) showed only __getattr__, and measure_palette was offered as a figure."""
    import pydoc

    from pdeval.accessor import FIGURES
    from pdeval.report import figures

    assert tuple(figures.__all__) == FIGURES and "measure_palette" not in FIGURES
    plot = pd.DataFrame({"run": ["a"], "query_id": ["1"], "measure": ["AP"], "value": [0.5]}).ir.plot
    text = pydoc.render_doc(plot, renderer=pydoc.plaintext)
    assert all(name in text for name in FIGURES) and "__getattr__" not in text
    assert not hasattr(plot, "measure_palette")
