"""Figures of runs compared with each other: which pairs differ significantly, and how far
unjudged documents could move each run's mean.

* :func:`significance_matrix` -- which run pairs differ significantly (e.g. Tukey's HSD),
  runs ordered by mean, with their compact letter display;
* :func:`bound_intervals` -- each run's mean with its [low, high] interval when unjudged
  documents are filled in (:func:`pdeval.evaluation.bounds`; Moffat & Zobel 2008's residuals).

Both return a :class:`matplotlib.figure.Figure`; :mod:`pdeval.report.figures` lists them with
the study figures (``df.ir.plot.<name>``).
"""

from __future__ import annotations

from typing import Optional

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from pdeval.common.contract import Boolean, Integer, Nullable, Text, contract
from pdeval.errors import SchemaError
from pdeval.frames.domains import Frame
from pdeval.report.style import STYLE, require_columns, variant_keys, wrap_label

#: the domains the figures share: one measure of the frame, a title, how many runs to draw
MEASURE = Text("a measure of the frame (a string such as 'AP')")
TITLE = Nullable(Text("a title"))
TOP = Nullable(Integer(1))

__all__ = ["MEASURE", "TITLE", "TOP", "significance_matrix", "bound_intervals", "estimate_intervals"]


@contract(pairs=Frame("any"), measures=Nullable(MEASURE), letters=Boolean(), title=TITLE)
def significance_matrix(
    pairs: pd.DataFrame,
    *,
    measures: Optional[str] = None,
    letters: bool = True,
    title: Optional[str] = None,
) -> Figure:
    """Pairwise significance of all run pairs as a matrix, runs ordered by mean (best first).

    ``pairs``: the output of :func:`pdeval.tukey_hsd` (or :func:`pdeval.compare` without a
    baseline) for one (measure, variant) group (``measures`` selects one measure). Cell [row, column]
    is green when the row run is significantly better than the column run, red when it is
    significantly worse, grey otherwise. With ``letters`` the run labels carry the compact
    letter display (:func:`pdeval.analysis.statistics.letters.compact_letter_display`) when the
    pattern allows one.
    """
    from matplotlib.colors import ListedColormap

    from pdeval.errors import PdevalError
    from pdeval.analysis.statistics.letters import letters_for, pair_groups

    groups = list(pair_groups(pairs, measures))
    if len(groups) != 1:
        raise SchemaError(
            f"significance_matrix draws one (measure, variant) group; the pairs hold {len(groups)}: "
            f"{[g[0] for g in groups][:5]}. Select one (measures=..., or filter the variant rows)."
        )
    keys, runs, means, significant = groups[0]
    m = len(runs)
    cells = np.where(significant, np.where(np.arange(m)[:, None] < np.arange(m)[None, :], 2, 0), 1)
    np.fill_diagonal(cells, 1)
    labels = [wrap_label(r, 28) for r in runs]
    if letters:
        try:
            labels = [f"{label} [{code}]" for label, code in zip(labels, letters_for(significant))]
        except PdevalError:
            pass
    size = min(24.0, max(5.0, 0.22 * m + 3.0))
    fig, ax = plt.subplots(figsize=(size + 1.5, size))
    cmap = ListedColormap(["#c0392b", "#e5e5e5", "#27ae60"])
    ax.imshow(cells, cmap=cmap, vmin=0, vmax=2, interpolation="nearest")
    fontsize = max(4.0, min(9.0, 400.0 / max(m, 1)))
    ax.set_xticks(range(m))
    ax.set_yticks(range(m))
    ax.set_xticklabels([str(i + 1) for i in range(m)], fontsize=fontsize)
    ax.set_yticklabels([f"{i + 1}. {label}" for i, label in enumerate(labels)], fontsize=fontsize)
    ax.set_xlabel("run (rank by mean)")
    from matplotlib.patches import Patch

    ax.legend(
        handles=[Patch(color="#27ae60", label="row significantly better"),
                 Patch(color="#c0392b", label="row significantly worse"),
                 Patch(color="#e5e5e5", label="not significant")],
        loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=8, frameon=False,
    )
    where = ", ".join(f"{k}={v}" for k, v in keys.items())
    share = significant[np.triu_indices(m, 1)].mean() if m > 1 else float("nan")
    ax.set_title(title or f"Significantly different run pairs ({where}): {share:.0%} of {m * (m - 1) // 2}")
    fig.tight_layout()
    return fig


@contract(bounds=Frame("any"), measures=MEASURE, top=TOP)
def bound_intervals(bounds: pd.DataFrame, *, measures: str, top: Optional[int] = None) -> Figure:
    """Each run's mean of one measure (``measures``) (today's value, ●) with the interval [mean low, mean high]
    it could move in if the unjudged documents it retrieved were judged; runs sorted by
    mean, best on top. A run whose interval reaches past the next run's mean could overtake
    it. ``bounds`` is a frame of :func:`pdeval.evaluation.bounds` (per topic or summarised); ``top``
    keeps the best ``top`` runs.
    """
    if "query_id" in bounds.columns:
        from pdeval.evaluation.bounds import summarize_bounds

        bounds = summarize_bounds(bounds)
    require_columns(bounds, ["run", "measure", "value", "low", "high"], "bound_intervals")
    measure = measures
    data = bounds[bounds["measure"] == measure]
    if data.empty:
        raise SchemaError(f"bound_intervals: measure {measure!r} is not in the frame; it has {sorted(pd.unique(bounds['measure']))}")
    others = [k for k in variant_keys(data, ["run", "low", "high", "residual", "if_nonrelevant", "if_relevant", "monotone"])
              if data[k].nunique() > 1]
    if others:
        raise SchemaError(f"bound_intervals: the frame has several variants in {others}; select one")
    return _interval_figure(data, "value", measure, "#1f78b4", "[low, high]: unjudged judged nonrelevant / relevant",
                            ("value", "o", "mean (unjudged as the measure treats them)"), top,
                            f"{measure}: how far unjudged documents could move each run")


@contract(estimates=Frame("any"), measures=MEASURE, top=TOP)
def estimate_intervals(estimates: pd.DataFrame, *, measures: str, top: Optional[int] = None) -> Figure:
    """Each run's estimated mean of one measure (``measures``) with its interval (:func:`pdeval.estimate` with
    ``per="run"``, or per topic: averaged first) beside today's value (unjudged documents
    nonrelevant); runs sorted by the estimate, best on top; ``top`` keeps the best ``top``."""
    require_columns(estimates, ["run", "measure", "value", "estimate", "low", "high"], "estimate_intervals")
    measure = measures
    if "query_id" in estimates.columns:
        raise SchemaError("estimate_intervals draws run means with intervals computed jointly over topics: "
                          "call pdeval.estimate(..., per='run')")
    data = estimates[estimates["measure"] == measure]
    if data.empty:
        raise SchemaError(f"estimate_intervals: measure {measure!r} is not in the frame; it has "
                          f"{sorted(pd.unique(estimates['measure']))}")
    return _interval_figure(data, "estimate", measure, "#1b9e77", "interval",
                            ("estimate", "o", "estimate"), top,
                            f"{measure}: estimated mean if the unjudged documents were judged",
                            today=("value", "|", "today (unjudged as nonrelevant)"))


def _interval_figure(data: pd.DataFrame, key: str, measure: str, colour: str, band: str, point: tuple,
                     top: Optional[int], title: str, today: Optional[tuple] = None) -> Figure:
    """Run means as points with their [low, high] band, sorted by ``key`` (best on top)."""
    data = data.sort_values(key, ascending=False)
    if top is not None:
        data = data.head(top)
    labels = [wrap_label(r) for r in data["run"]]
    lines = sum(label.count("\n") + 1 for label in labels)
    with sns.axes_style(STYLE):
        fig, ax = plt.subplots(figsize=(8.0, max(3.0, 0.22 * lines + 1.2)))
        y = np.arange(len(data))
        ax.hlines(y, data["low"].to_numpy(), data["high"].to_numpy(), color=colour, linewidth=2.5, alpha=0.6,
                  label=band)
        marks = [(point, colour if today else "black", 4)] + ([(today, "black", 9)] if today else [])
        for (column, marker, label), colour_of, size in marks:
            ax.plot(data[column].to_numpy(), y, marker, color=colour_of, markersize=size, label=label)
        ax.set_yticks(y)
        ax.set_yticklabels(labels)
        ax.invert_yaxis()
    ax.set_xlabel(f"mean {measure}")
    ax.set_ylabel(f"run (sorted by {'mean' if key == 'value' else key})")
    ax.grid(axis="x", alpha=0.4)
    ax.set_title(title)
    ax.legend(loc="lower right", fontsize="small")
    fig.tight_layout()
    return fig
