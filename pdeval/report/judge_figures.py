"""Figures of automatic judges against a reference label set: where the judge's leaderboard
departs from the reference's, and how sure each judge's correlation is.

* :func:`judge_scatter` -- each run's mean under the reference labels (e.g. human) against its
  mean under each judge, one panel per judge, the reference's top k marked (Clarke & Dietz
  2024 show the agreement weakening among the top systems);
* :func:`judge_intervals` -- each judge's correlation with the reference leaderboard and its
  topic-bootstrap interval, one panel per coefficient.

:mod:`pdeval.report.figures` lists them with the other figures (``df.ir.plot.<name>``).
"""

from __future__ import annotations

from typing import Optional

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from pdeval.common.contract import Integer, Nullable, Real, Text, contract
from pdeval.errors import SchemaError
from pdeval.frames.domains import Frame
from pdeval.report.style import STYLE, require_columns, wrap_label

__all__ = ["judge_scatter", "judge_intervals"]

CHANGES = ["measure", "label_set", "run", "value", "value_reference", "rank_reference"]


def _one_measure(frame: pd.DataFrame, measures: Optional[str], what: str) -> pd.DataFrame:
    """The rows of one measure (``measures``, needed when the frame has several)."""
    if "measure" not in frame.columns:
        return frame
    present = list(pd.unique(frame["measure"]))
    if measures is None and len(present) > 1:
        raise SchemaError(f"{what}: the frame has several measures {present}; choose one with measures=")
    chosen = present[0] if measures is None else measures
    if chosen not in present:
        raise SchemaError(f"{what}: measure {chosen!r} is not in the frame; it has {present}")
    return frame[frame["measure"] == chosen]


@contract(changes=Frame("any"), reference=Nullable(Text("a label set name")),
          measures=Nullable(Text("a measure of the frame")), top=Integer(1), col_wrap=Integer(1),
          height=Real(0, closed="neither"))
def judge_scatter(
    changes: pd.DataFrame,
    reference: Optional[str] = None,
    *,
    measures: Optional[str] = None,
    top: int = 10,
    col_wrap: int = 4,
    height: float = 3.0,
) -> sns.FacetGrid:
    """Each run's mean under the reference labels (x) against its mean under each judge (y).

    One panel per judge (``label_set``); the ``top`` runs of the reference leaderboard are
    marked, and each panel's title says how many of them stay in the judge's top ``top``.
    ``changes`` is the frame of :func:`pdeval.leaderboard_changes`, or a result frame of
    :func:`pdeval.leaderboards` with the ``reference`` label set named (its changes are
    computed here). ``measures`` picks one measure when there are several.

    Parameters
    ----------
    changes : DataFrame
        :func:`pdeval.leaderboard_changes` output, or a :func:`pdeval.leaderboards` result.
    reference : str, optional
        The reference label set; needed with a leaderboards result.
    measures : str, optional
        The measure shown (needed when the frame has several).
    top : int, default 10
        How many of the reference's best runs are marked.
    col_wrap : int, default 4
        Panels per row.
    height : float, default 3.0
        Height of a panel in inches.

    Returns
    -------
    seaborn.FacetGrid
        The panels (``.figure`` is the matplotlib figure).

    Raises
    ------
    SchemaError
        Missing columns, an unknown measure or a leaderboards result without ``reference``.

    See Also
    --------
    leaderboard_changes : The rank changes drawn here.
    pdeval.report.figures.judge_intervals : The correlations with their intervals.

    Examples
    --------
    >>> runs = [f"r{i}" for i in range(6)]
    >>> boards = pd.DataFrame({"run": runs * 2, "label_set": ["human"] * 6 + ["llm"] * 6, "measure": "P@10",
    ...                        "query_id": "1", "value": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.2, 0.1, 0.4, 0.6, 0.5, 0.3]})
    >>> grid = boards.ir.plot.judge_scatter("human", top=3)
    >>> grid.axes.flat[0].get_title()
    'llm: 2 of the top 3 kept'
    """
    if "value_reference" not in changes.columns:
        if reference is None:
            raise SchemaError("judge_scatter: a leaderboards result needs reference= (the label set to compare "
                              "with), or pass the frame of pdeval.leaderboard_changes")
        from pdeval.analysis.judges.leaderboards import leaderboard_changes

        changes = leaderboard_changes(changes, reference)
    require_columns(changes, CHANGES, "judge_scatter")
    data = _one_measure(changes, measures, "judge_scatter").copy()
    measure = data["measure"].iloc[0] if len(data) else measures
    data["rank"] = data.groupby("label_set")["value"].rank(ascending=False, method="first")
    marked = f"reference top {top}"
    data["runs"] = np.where(data["rank_reference"] <= top, marked, "other runs")
    kept = (data["rank_reference"] <= top) & (data["rank"] <= top)
    n_kept = kept.groupby(data["label_set"]).sum()
    judges = list(pd.unique(data["label_set"]))
    with sns.axes_style(STYLE):
        grid = sns.relplot(data=data, x="value_reference", y="value", col="label_set", col_order=judges,
                           col_wrap=min(col_wrap, max(len(judges), 1)), hue="runs", style="runs",
                           hue_order=[marked, "other runs"], style_order=[marked, "other runs"],
                           palette={marked: "#d95f02", "other runs": "#7570b3"}, height=height,
                           facet_kws={"sharey": False})
    for judge, ax in zip(judges, grid.axes.flat):
        ax.set_title(f"{judge}: {int(n_kept.get(judge, 0))} of the top {top} kept")
    label = "" if reference is None else f" ({reference})"
    grid.set_axis_labels(f"mean {measure}, reference{label}", f"mean {measure}, judge")
    return grid


@contract(intervals=Frame("any"), measures=Nullable(Text("a measure of the frame")), title=Nullable(Text("a title")))
def judge_intervals(intervals: pd.DataFrame, *, measures: Optional[str] = None, title: Optional[str] = None) -> Figure:
    """Each judge's correlation with the reference leaderboard and its interval, one panel per coefficient.

    ``intervals`` has columns ``label_set, method, value, low, high`` (and ``measure``): the
    frame of :func:`pdeval.correlation_intervals` with ``by="label_set"``. Judges are sorted
    by the value of the first coefficient, best on top; ``measures`` picks one measure when
    there are several. A ``debiased`` column (SIMEX's value) is drawn as an open marker beside
    the sample value, as the SIMEX and hull intervals are built around it.

    Parameters
    ----------
    intervals : DataFrame
        Correlations with their intervals, one row per (label set, method).
    measures : str, optional
        The measure shown (needed when the frame has several).
    title : str, optional
        The figure's title.

    Returns
    -------
    matplotlib.figure.Figure
        One panel per method.

    Raises
    ------
    SchemaError
        Missing columns, an unknown measure, or several rows of one (label set, method).

    See Also
    --------
    pdeval.report.figures.judge_scatter : The run means behind the correlations.

    Examples
    --------
    >>> frame = pd.DataFrame({"label_set": ["a", "b", "a", "b"], "method": ["tau_b", "tau_b", "tau_ap", "tau_ap"],
    ...                       "value": [0.8, 0.6, 0.7, 0.4], "low": [0.7, 0.4, 0.5, 0.2], "high": [0.9, 0.7, 0.8, 0.6]})
    >>> fig = frame.ir.plot.judge_intervals()
    >>> [ax.get_title() for ax in fig.axes]
    ['tau_b', 'tau_ap']
    """
    require_columns(intervals, ["label_set", "method", "value", "low", "high"], "judge_intervals")
    data = _one_measure(intervals, measures, "judge_intervals")
    if data.duplicated(["label_set", "method"]).any():
        raise SchemaError("judge_intervals: several rows for one (label_set, method); select one reference "
                          "and one variant first")
    methods = list(pd.unique(data["method"]))
    order = data[data["method"] == methods[0]].sort_values("value", ascending=False)["label_set"].tolist()
    order += [s for s in pd.unique(data["label_set"]) if s not in order]
    position = {name: i for i, name in enumerate(order)}
    with sns.axes_style(STYLE):
        fig, axes = plt.subplots(1, len(methods), sharey=True, squeeze=False,
                                 figsize=(3.2 * len(methods) + 1.5, max(2.5, 0.3 * len(order) + 1.2)))
        for method, ax in zip(methods, axes[0]):
            part = data[data["method"] == method]
            y = part["label_set"].map(position).to_numpy()
            ax.hlines(y, part["low"].to_numpy(), part["high"].to_numpy(), color="#1f78b4", linewidth=2.5, alpha=0.6)
            ax.plot(part["value"].to_numpy(), y, "o", color="black", markersize=4, label="sample value")
            if "debiased" in part.columns:  # SIMEX's value, which the interval is built around
                ax.plot(part["debiased"].to_numpy(), y, "o", markerfacecolor="none", markeredgecolor="#e31a1c",
                        markersize=6, label="debiased (SIMEX)")
            ax.set_title(str(method))
            ax.set_xlabel("correlation with the reference")
            ax.grid(axis="x", alpha=0.4)
        axes[0][0].set_yticks(np.arange(len(order)))
        axes[0][0].set_yticklabels([wrap_label(name) for name in order])
        axes[0][0].set_ylim(len(order) - 0.5, -0.5)
        axes[0][0].set_ylabel("judge (label set)")
        if "debiased" in data.columns:  # above the panels, clear of every interval
            fig.legend(*axes[0][0].get_legend_handles_labels(), loc="upper right", ncol=2, fontsize="small",
                       frameon=False)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
