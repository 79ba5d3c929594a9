"""Figures of a reproducibility study (Breuer et al., SIGIR 2020): tidy frames in, a
matplotlib figure out.

* :func:`reproduced_scores` -- per-topic scores of each original run (x) against its
  reproduction (y), one panel per pair, with the diagonal of a perfect reproduction and the
  RMSE on each panel;
* :func:`effect_plane` -- each advanced pair as a point of the ER / DeltaRI plane (the
  paper's Figs. 3-4): DeltaRI on x, ER on y; (0, 1) is a perfect reproduction of the effect.

Like :mod:`pdeval.report.figures`, no function changes global matplotlib or seaborn state.
"""

from __future__ import annotations

from typing import Mapping, Optional, Union

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from pdeval.analysis.reproducibility.core import pair_table
from pdeval.errors import SchemaError

__all__ = ["reproduced_scores", "effect_plane"]


def reproduced_scores(
    original: pd.DataFrame,
    reproduced: pd.DataFrame,
    measure: str,
    *,
    pairs: Union[None, Mapping, list] = None,
    col_wrap: int = 3,
) -> Figure:
    """Per-topic scores of the original runs (x) against their reproductions (y).

    Parameters
    ----------
    original, reproduced : DataFrame
        Result frames (``run``, ``query_id``, ``measure``, ``value``) of the original and the
        reproduced runs, e.g. ``pdeval.evaluate(original_runs, qrels, measures)``.
    measure : str
        The measure shown.
    pairs : optional
        Which reproduced run reproduces which original, as in :func:`pdeval.reproducibility`.
    col_wrap : int, default 3
        Panels per row.

    Returns
    -------
    Figure
        One panel per pair: a point per topic, the diagonal y = x (a perfect reproduction)
        and the RMSE of the panel.

    Raises
    ------
    SchemaError
        The measure is in neither frame, or a pair shares no topic.
    """
    table = pair_table(original, reproduced, pairs)
    left = original[original["measure"] == measure]
    right = reproduced[reproduced["measure"] == measure]
    if left.empty or right.empty:
        raise SchemaError(f"no {measure!r} values in the {'original' if left.empty else 'reproduced'} result")
    data = table.merge(left, left_on="original", right_on="run").drop(columns="run")
    data = data.merge(right[["run", "query_id", "value"]], left_on=["reproduced", "query_id"],
                      right_on=["run", "query_id"], suffixes=("_original", "_reproduced"))
    if data.empty:
        raise SchemaError("the pairs share no topic: nothing to draw")
    data["pair"] = data["original"].astype(str) + " → " + data["reproduced"].astype(str)
    panels = list(pd.unique(data["pair"]))
    columns = min(col_wrap, len(panels))
    rows = -(-len(panels) // columns)
    with sns.axes_style("whitegrid"):
        fig, axes = plt.subplots(rows, columns, figsize=(3.6 * columns, 3.4 * rows), squeeze=False,
                                 sharex=True, sharey=True)
        for ax, panel in zip(axes.ravel(), panels):
            part = data[data["pair"] == panel]
            x, y = part["value_original"].to_numpy(), part["value_reproduced"].to_numpy()
            low, high = min(x.min(), y.min(), 0.0), max(x.max(), y.max(), 1.0)
            ax.plot([low, high], [low, high], color="0.6", lw=1, ls="--", zorder=0)
            ax.scatter(x, y, s=14, alpha=0.7)
            rmse = float(np.sqrt(np.mean((x - y) ** 2)))
            ax.set_title(panel, fontsize=9)
            ax.text(0.03, 0.95, f"RMSE {rmse:.3f}\n{len(part)} topics", transform=ax.transAxes, va="top", fontsize=8)
            ax.set_xlabel(f"{measure}, original")
            ax.set_ylabel(f"{measure}, reproduced")
        for ax in axes.ravel()[len(panels):]:
            ax.set_visible(False)
        fig.tight_layout()
    return fig


def effect_plane(result: pd.DataFrame, *, hue: str = "measure", label: Optional[str] = "reproduced") -> Figure:
    """The ER / DeltaRI plane of Breuer et al. (SIGIR 2020): one point per advanced pair and
    measure, DeltaRI on x and ER on y.

    ER = 1 and DeltaRI = 0 (the marked point) reproduce the effect exactly. Above ER = 1 the
    reproduced improvement is larger in absolute terms, below smaller (ER < 0: reversed);
    left of DeltaRI = 0 it is larger relative to the baseline, right of it smaller.

    Parameters
    ----------
    result : DataFrame
        The output of :func:`pdeval.reproducibility` with a ``baseline`` (its ``ER`` and
        ``DeltaRI`` rows).
    hue : str, default "measure"
        The column that colours the points.
    label : str or None, default "reproduced"
        The column whose value labels each point (None: no labels); points on the star
        (a perfect reproduction) are not labelled.

    Returns
    -------
    Figure

    Raises
    ------
    SchemaError
        The frame has no ER and DeltaRI rows (reproducibility was called without baseline).
    """
    effects = result[result["statistic"].isin(["ER", "DeltaRI"])]
    if effects.empty:
        raise SchemaError("no ER/DeltaRI rows: call pdeval.reproducibility with baseline=...")
    keys = [c for c in ("reproduction", "original", "reproduced", "measure") if c in effects.columns]
    plane = effects.pivot_table(index=keys, columns="statistic", values="value", sort=False).reset_index()
    with sns.axes_style("whitegrid"):
        fig, ax = plt.subplots(figsize=(6, 4.6))
        ax.axhline(1, color="0.6", lw=1, ls="--", zorder=0)
        ax.axvline(0, color="0.6", lw=1, ls="--", zorder=0)
        sns.scatterplot(data=plane, x="DeltaRI", y="ER", hue=hue, style=hue, s=60, ax=ax)
        ax.scatter([0], [1], marker="*", s=420, facecolors="none", edgecolors="black", linewidths=1.2, zorder=1,
                   label="perfect reproduction")  # hollow and below: points on it stay visible
        if label is not None:
            away = ~(np.isclose(plane["DeltaRI"], 0) & np.isclose(plane["ER"], 1))  # the star needs no label
            for _, row in plane[away].iterrows():
                ax.annotate(str(row[label]), (row["DeltaRI"], row["ER"]), fontsize=7, alpha=0.8,
                            xytext=(4, 3), textcoords="offset points")
        ax.set_xlabel("ΔRI (relative improvement, original − reproduced)")
        ax.set_ylabel("ER (reproduced / original mean improvement)")
        ax.legend(fontsize=8, loc="best")
        fig.tight_layout()
    return fig
