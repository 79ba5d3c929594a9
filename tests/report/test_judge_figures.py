"""The figures of automatic judges (pdeval.report.judge_figures) render from real leaderboards."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

import pdeval  # noqa: E402
from pdeval.errors import PdevalError, SchemaError  # noqa: E402
from pdeval.report import figures as plotting  # noqa: E402


@pytest.fixture(scope="module")
def boards():
    """Leaderboards of 8 CLEF 2018 runs under the human labels and two noisy stand-in judges."""
    clef = pdeval.datasets.load("clef2018")
    first = lambda frame, column, n: frame[column].isin(sorted(frame[column].unique())[:n])
    human = clef.qrels[first(clef.qrels, "query_id", 10)]
    run = clef.runs[first(clef.runs, "run", 8) & clef.runs["query_id"].isin(human["query_id"])]
    rng = np.random.default_rng(3)
    flip = lambda share: human.assign(relevance=np.where(rng.random(len(human)) < share, 1 - human.relevance.clip(0, 1),
                                                         human.relevance))
    return pdeval.leaderboards(run, {"human": human, "close": flip(0.05), "far": flip(0.4)}, ["P@10", "AP"])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_judge_scatter_from_leaderboards_and_from_changes(boards, tmp_path):
    grid = plotting.judge_scatter(boards, "human", measures="P@10", top=3)
    titles = [ax.get_title() for ax in grid.axes.flat]
    assert [t.split(":")[0] for t in titles] == ["close", "far"] and all("of the top 3 kept" in t for t in titles)
    changes = pdeval.leaderboard_changes(boards, "human")
    again = changes.ir.plot.judge_scatter(measures="P@10", top=3)
    assert [ax.get_title() for ax in again.axes.flat] == titles
    # the marked points are the reference's top 3 of each panel
    kept = changes.query("measure == 'P@10' and label_set == 'close'")
    n_marked = (kept.rank_reference <= 3).sum()
    assert n_marked == 3 and len(grid.axes.flat[0].collections[0].get_offsets()) == len(kept)
    assert "reference (human)" in grid.axes.flat[0].get_xlabel()
    grid.savefig(tmp_path / "scatter.png")
    assert (tmp_path / "scatter.png").stat().st_size > 1000


def test_judge_scatter_refuses_what_it_cannot_draw(boards):
    with pytest.raises(SchemaError, match="reference="):
        plotting.judge_scatter(boards)
    with pytest.raises(SchemaError, match="several measures"):
        plotting.judge_scatter(boards, "human")
    with pytest.raises(SchemaError, match="'nDCG'"):
        plotting.judge_scatter(boards, "human", measures="nDCG")
    with pytest.raises(PdevalError, match="top"):
        plotting.judge_scatter(boards, "human", measures="AP", top=0)


def intervals_of(boards) -> pd.DataFrame:
    """The correlation intervals of each judge (``pdeval.correlation_intervals``)."""
    judges, human = boards[boards.label_set != "human"], boards[boards.label_set == "human"].drop(columns="label_set")
    return pdeval.correlation_intervals(judges, human, by="label_set", methods=["tau_b", "tau_ap_b"], n_resamples=50)


def test_judge_intervals_one_panel_per_method(boards, tmp_path):
    frame = intervals_of(boards)
    fig = frame.ir.plot.judge_intervals(measures="AP", title="judges")
    methods = list(pd.unique(frame["method"]))
    assert [ax.get_title() for ax in fig.axes] == methods
    first = frame.query("measure == 'AP' and method == @methods[0]").sort_values("value", ascending=False)
    assert [t.get_text() for t in fig.axes[0].get_yticklabels()] == first.label_set.tolist()
    fig.savefig(tmp_path / "intervals.png")
    # the debiased value, around which SIMEX's interval lies, is drawn beside the sample value
    drawn = fig.axes[0].lines
    shown = frame.query("measure == 'AP' and method == @methods[0]")
    assert len(drawn) == 2 and sorted(drawn[1].get_xdata()) == sorted(shown["debiased"])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["sample value", "debiased (SIMEX)"]
    without = frame.drop(columns="debiased", errors="ignore").ir.plot.judge_intervals(measures="AP")
    assert len(without.axes[0].lines) == 1 and without.legends == []
    with pytest.raises(SchemaError, match="several measures"):
        plotting.judge_intervals(frame)
    with pytest.raises(SchemaError, match="label_set"):
        plotting.judge_intervals(frame.drop(columns="label_set"), measures="AP")
