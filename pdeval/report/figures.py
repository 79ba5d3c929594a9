"""Figures of an incomplete-judgments study: tidy frames in, a matplotlib figure out.

One function per figure of the literature the package reproduces:

* :func:`robustness_curve` -- rank correlation with the full-judgment ranking vs level
  (Sakai 2007, Fig. 2; Ahlgren & Groenqvist 2008, Figs. 6-8);
* :func:`mean_by_level` -- mean measure value vs level (Sakai 2007, Fig. 1; Ahlgren &
  Groenqvist 2008, Fig. 5);
* :func:`estimated_vs_actual` -- per-system estimated vs actual means, with RMS, tau and rho
  on each panel (Yilmaz & Aslam 2008, Figs. 1-18);
* :func:`correlation_heatmap` -- measure-by-measure ranking correlations (Sakai 2007, Table 2);
* :func:`discriminative_power_bars` -- share of significantly different run pairs (Sakai 2007);
* :func:`swap_rate_curve` -- swap rate vs difference bin (Voorhees & Buckley 2002; Ahlgren &
  Groenqvist 2008);
* :func:`topic_distributions` -- per-topic values of one measure, per run;
* :func:`significance_matrix` and :func:`bound_intervals` -- runs compared with each other
  (defined in :mod:`pdeval.report.run_figures`, listed here with the others);
* :func:`judge_scatter` and :func:`judge_intervals` -- automatic judges against the reference
  labels: run means under both with the reference's top k marked, and each judge's
  leaderboard correlation with its interval (defined in :mod:`pdeval.report.judge_figures`).

Functions that facet return a :class:`seaborn.FacetGrid` (its ``.figure`` is the matplotlib
figure), the others a :class:`matplotlib.figure.Figure`; both have ``savefig``. Every figure
that shows measures takes ``palette`` (measure -> colour, see :func:`measure_palette`): pass
the same one to every figure of a study and each measure keeps one colour throughout (the
default gives colours in the order the measures appear). Axes in percent stay within 0-100.
Measures whose lines coincide (AP, infAP and AP' on complete judgments) are named in a note
under the title, since one line hides the others. No function changes global matplotlib or seaborn state (styles are applied in a context), and none
selects a backend. Close figures you do not keep (``matplotlib.pyplot.close(fig)``). Left as
the last expression of a notebook cell, the returned object shows as its figure, once
(:mod:`pdeval.report.display`).
"""

from __future__ import annotations

from typing import Optional, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import seaborn as sns
from matplotlib.figure import Figure

from pdeval.analysis.rankings.correlation import correlation_table, kendall_tau, pearson, rms_error
from pdeval.evaluation.results import summarize
from pdeval.errors import SchemaError
from pdeval.report.display import notebook_figure
from pdeval.analysis.rankings.coefficients import METHODS as COEFFICIENTS
from pdeval.common.contract import Anything, Boolean, Choice, Integer, ListOf, MappingOf, Nullable, Real, Text, contract
from pdeval.frames.domains import Frame
from pdeval.report.judge_figures import judge_intervals, judge_scatter
from pdeval.report.run_figures import MEASURE, TITLE, bound_intervals, estimate_intervals, significance_matrix
from pdeval.report.style import (
    BAND_ALPHA,
    KEY_LABELS,
    METHOD_LABELS,
    STYLE,
    Palette,
    Spread,
    coinciding,
    coinciding_note,
    level_axis,
    means_of,
    measure_order,
    measure_palette,
    palette_for,
    percent_axis,
    require_columns,
    spread_label,
    variant_keys,
    variant_text,
    wrap_label,
)

#: the figures (``df.ir.plot.<figure>``); the helper :func:`measure_palette` is importable from
#: here but is not a figure
#: the domains the figures share (:mod:`pdeval.common.contract`)
MEASURES = Nullable(ListOf(Text("a measure of the frame")))
METHODS = Nullable(ListOf(Choice(*COEFFICIENTS)))
PALETTE = Nullable(MappingOf(Text("a measure"), Anything(why="a matplotlib colour, checked by matplotlib")))
SIZE = Real(0, closed="neither")
SPREAD = Anything(why="seaborn's errorbar argument (a name, a (name, level) pair or a callable), checked by seaborn")
X = Text("a column of the frame")

__all__ = [
    "robustness_curve",
    "mean_by_level",
    "estimated_vs_actual",
    "correlation_heatmap",
    "discriminative_power_bars",
    "swap_rate_curve",
    "topic_distributions",
    "significance_matrix",
    "bound_intervals",
    "estimate_intervals",
    "judge_scatter",
    "judge_intervals",
]


@contract(correlations=Frame("any"), x=X, methods=METHODS, measures=MEASURES, spread=SPREAD, height=SIZE,
          aspect=SIZE, palette=PALETTE)
def robustness_curve(
    correlations: pd.DataFrame,
    *,
    x: str = "level",
    methods: Optional[Sequence[str]] = None,
    measures: Optional[Sequence[str]] = None,
    spread: Spread = ("pi", 100),
    height: float = 4.5,
    aspect: float = 1.1,
    palette: Palette = None,
) -> sns.FacetGrid:
    """Rank correlation with the full-judgment ranking vs the share of judgments kept.

    Reproduces Sakai (2007), Fig. 2 and Ahlgren & Groenqvist (2008), Figs. 6-8: one line per
    measure through the mean over samples of each level, with a band for the spread over the
    samples (``spread`` is seaborn's ``errorbar``: ``("pi", 100)`` = min to max, ``"sd"``,
    ``None``). ``correlations`` is the non-aggregated output of
    :func:`pdeval.rank_correlation` (``measure, level, [sample,] reference, method, value``);
    one panel per method (``methods`` selects them), one line per measure (``measures``
    selects and orders them). ``x="depth"`` plots the results of depth-k pools instead. For
    ``level`` the axis runs from full judgments (left) to the smallest level (right).
    """
    require_columns(correlations, ["measure", x, "method", "value"], "robustness_curve")
    data = correlations if methods is None else correlations[correlations["method"].isin(methods)]
    order = measure_order(data, measures)
    data = data[data["measure"].isin(order)]
    if data.empty:
        raise SchemaError(f"robustness_curve: no rows for methods {methods}")
    data = data.assign(statistic=data["method"].map(lambda m: METHOD_LABELS.get(m, m)))
    samples = int(data.groupby(["measure", x, "method"])["value"].size().max())
    with sns.axes_style(STYLE):
        grid = sns.relplot(
            data=data, x=x, y="value", hue="measure", style="measure", col="statistic",
            hue_order=order, style_order=order, palette=palette_for(palette, order), kind="line",
            markers=True, dashes=False,
            errorbar=spread if samples > 1 else None, err_kws={"alpha": BAND_ALPHA},
            height=height, aspect=aspect, facet_kws={"sharey": False},
        )
    grid.set_titles("{col_name}")
    for ax in grid.axes.flat:
        ax.set_ylabel(f"{ax.get_title()} with full-judgment ranking")
        ax.set_xlabel(KEY_LABELS.get(x, x))
        level_axis(ax, data[x], x)
    grid.legend.set_title("measure")
    note = spread_label(spread, samples)
    runs = int(data["n_runs"].max()) if "n_runs" in data.columns else None
    title = "System-ranking robustness to incomplete judgments"
    same = coinciding_note(coinciding(data, x, "value", order, by=["method"] + (["sample"] if "sample" in data else [])))
    details = ", ".join(s for s in [f"{runs} runs" if runs else "", note, same] if s)
    grid.figure.suptitle(title + (f"\n({details})" if details else ""), y=1.0)
    grid.tight_layout()
    return grid


@contract(result=Frame("result"), x=X, measures=MEASURES, spread=SPREAD, height=SIZE, aspect=SIZE, palette=PALETTE)
def mean_by_level(
    result: pd.DataFrame,
    *,
    x: str = "level",
    measures: Optional[Sequence[str]] = None,
    spread: Spread = ("pi", 100),
    height: float = 4.0,
    aspect: float = 1.4,
    palette: Palette = None,
) -> sns.FacetGrid:
    """Mean value over runs and topics of each measure vs the share of judgments kept.

    Reproduces Sakai (2007), Fig. 1 and Ahlgren & Groenqvist (2008), Fig. 5: measures that
    treat unjudged documents as non-relevant (AP, nDCG) fall as judgments are removed,
    condensed-list measures (AP', Q', nDCG') and bpref rise or stay. ``result`` is a per-topic
    result frame with ``level`` (and ``sample``) columns, e.g. the evaluation of a
    :func:`pdeval.reduce` output (``measures`` selects and orders the lines); the band is the spread over samples of the per-sample mean.
    """
    require_columns(result, ["run", "measure", "value", x], "mean_by_level")
    order = measure_order(result, measures)
    data = result[result["measure"].isin(order)]
    keys = [x] + (["sample"] if "sample" in data.columns else [])
    means = summarize(data, by=keys)
    per_sample = means.groupby(["measure", *keys], observed=True, sort=False)["value"].mean().reset_index()
    samples = int(per_sample.groupby(["measure", x])["value"].size().max())
    with sns.axes_style(STYLE):
        grid = sns.relplot(
            data=per_sample, x=x, y="value", hue="measure", style="measure", kind="line",
            hue_order=order, style_order=order, palette=palette_for(palette, order), markers=True, dashes=False,
            errorbar=spread if samples > 1 else None, err_kws={"alpha": BAND_ALPHA},
            height=height, aspect=aspect,
        )
    ax = grid.ax
    ax.set_xlabel(KEY_LABELS.get(x, x))
    ax.set_ylabel("mean over runs and topics")
    level_axis(ax, per_sample[x], x)
    grid.legend.set_title("measure")
    note = spread_label(spread, samples)
    runs = means["run"].nunique()
    same = coinciding_note(coinciding(per_sample, x, "value", order, by=keys[1:]))
    grid.figure.suptitle(
        "Mean measure value as judgments are removed\n(" + ", ".join(s for s in [f"{runs} runs", note, same] if s) + ")",
        y=1.0,
    )
    grid.tight_layout()
    return grid


def _pair_panel(data: pd.DataFrame, color=None, palette: Palette = None, **_: object) -> None:
    """One panel of :func:`estimated_vs_actual`: points, the diagonal and the statistics."""
    ax = plt.gca()
    if palette is not None:
        color = palette[data["measure"].iloc[0]]
    ax.scatter(data["actual"], data["estimated"], s=22, color=color, edgecolor="white", linewidth=0.5, zorder=3)
    low = float(min(data["actual"].min(), data["estimated"].min()))
    high = float(max(data["actual"].max(), data["estimated"].max()))
    pad = 0.05 * (high - low or 1.0)
    ax.plot([low - pad, high + pad], [low - pad, high + pad], color="grey", linewidth=0.8, linestyle="--", zorder=1)
    est, act = data["estimated"].to_numpy(float), data["actual"].to_numpy(float)
    text = (
        f"RMS = {rms_error(est, act):.4f}\n"
        f"τ = {kendall_tau(est, act, 'b'):.4f}\n"
        f"ρ = {pearson(est, act):.4f}"
    )
    ax.text(0.04, 0.96, text, transform=ax.transAxes, va="top", ha="left", fontsize=9,
            bbox={"boxstyle": "round", "facecolor": "white", "alpha": 0.85, "edgecolor": "0.8"})


@contract(estimated=Frame("any"), actual=Frame("any"), col_wrap=Nullable(Integer(1)), height=SIZE,
          palette=PALETTE)
def estimated_vs_actual(
    estimated: pd.DataFrame,
    actual: pd.DataFrame,
    *,
    col_wrap: Optional[int] = 4,
    height: float = 3.2,
    palette: Palette = None,
) -> sns.FacetGrid:
    """Per-system estimated vs actual means, with RMS, Kendall's τ_b and Pearson's ρ on each panel.

    Reproduces Yilmaz & Aslam (2008), Figs. 1-18 (e.g. infAP on 10% of the judgments against
    AP on all of them; their ρ is the linear correlation coefficient). Both inputs are
    per-topic result frames or per-system means (:func:`pdeval.summarize`). If ``actual`` holds one measure every estimated measure is
    plotted against it; otherwise measures are matched by name. ``estimated`` may have
    variant keys (``level``, ``depth``...): one panel per (measure, variant); its ``sample``
    column, if any, is averaged over (the mean estimate of each system). ``actual`` must have
    one value per (run, measure).
    """
    est = means_of(estimated)
    act = means_of(actual)
    act_keys = variant_keys(act, ["run"])
    if act_keys and len(act[act_keys].drop_duplicates()) > 1:
        raise SchemaError(f"estimated_vs_actual: the actual frame has several variants in {act_keys}; select one")
    keys = variant_keys(est, ["run", "sample"])
    samples = int(est["sample"].nunique()) if "sample" in est.columns else 1
    est = est.groupby(["run", "measure", *keys], observed=True, sort=False)["value"].mean().reset_index()
    act_measures = list(pd.unique(act["measure"]))
    act = act[["run", "measure", "value"]].rename(columns={"measure": "actual_measure", "value": "actual"})
    if len(act_measures) == 1:
        est = est.assign(actual_measure=act_measures[0])
    else:
        missing = sorted(set(est["measure"]) - set(act_measures))
        if missing:
            raise SchemaError(f"estimated_vs_actual: no actual values for measure(s) {missing}")
        est = est.assign(actual_measure=est["measure"])
    data = est.rename(columns={"value": "estimated"}).merge(act, on=["run", "actual_measure"], how="inner")
    if data.empty:
        raise SchemaError("estimated_vs_actual: the two frames share no (run, measure)")
    data["panel"] = data["measure"] + " against full-judgment " + data["actual_measure"]
    if keys:
        data["panel"] += ", " + data[keys].apply(lambda row: variant_text(keys, row.tolist()), axis=1)
    panels = list(pd.unique(data["panel"]))
    wrap = min(col_wrap, len(panels)) if col_wrap else None
    with sns.axes_style(STYLE):
        grid = sns.FacetGrid(data, col="panel", col_order=panels, col_wrap=wrap, height=height,
                             sharex=False, sharey=False)
        grid.map_dataframe(_pair_panel, palette=palette_for(palette, list(pd.unique(data["measure"]))))
    grid.set_titles("{col_name}", size=10)
    for ax in grid.axes.flat:
        ax.set_title(ax.get_title().replace(", ", ",\n", 1), size=10)  # the variant on a line of its own
        ax.set_xlabel("actual mean (full judgments)")
        ax.set_ylabel("estimated mean")
    note = f", estimates averaged over {samples} samples" if samples > 1 else ""
    grid.figure.suptitle(
        f"Estimated vs actual per-system means ({data['run'].nunique()} runs{note})\n"
        "RMS error, Kendall's τ_b and linear correlation ρ against the actual values", y=1.0,
    )
    grid.tight_layout()
    return grid


@contract(data=Frame("any"), methods=Choice(*COEFFICIENTS), measures=MEASURES, title=TITLE)
def correlation_heatmap(
    data: pd.DataFrame,
    *,
    methods: str = "tau_b",
    measures: Optional[Sequence[str]] = None,
    title: Optional[str] = None,
) -> Figure:
    """Measure-by-measure correlations of the system rankings, as an annotated heatmap.

    The table of Sakai (2007), Table 2, drawn as a heatmap. ``data`` is the square output of
    :func:`pdeval.correlation_table` or a result frame with one ranking per measure (the
    table is then computed with ``methods``, measures in order of appearance). Cell [row, column] compares the ranking by the
    column measure with the ranking by the row (reference) measure.
    """
    if "measure" in data.columns and "value" in data.columns:
        table = correlation_table(data, methods=methods, measures=measure_order(data, measures))
    else:
        table = data if measures is None else data.loc[list(measures), list(measures)]
    n = len(table)
    size = max(4.5, 0.75 * n + 2.5)
    fig, ax = plt.subplots(figsize=(size + 1.0, size))
    vmin = 0.0 if float(np.nanmin(table.to_numpy(float))) >= 0 else -1.0
    sns.heatmap(table.astype(float), annot=True, fmt=".2f", cmap="viridis", vmin=vmin,
                vmax=1.0 if methods != "rms" else None, square=True, linewidths=0.5, ax=ax,
                cbar_kws={"label": METHOD_LABELS.get(methods, methods), "shrink": 0.8})
    ax.set_xlabel("measure (estimate)")
    ax.set_ylabel("reference measure")
    ax.tick_params(axis="x", labelrotation=45)
    for label in ax.get_xticklabels():
        label.set_horizontalalignment("right")
    ax.tick_params(axis="y", labelrotation=0)
    ax.set_title(title or f"{METHOD_LABELS.get(methods, methods)} between system rankings by each measure")
    fig.tight_layout()
    return fig


@contract(summary=Frame("any"), hue=Nullable(Text("a column of the frame")), palette=PALETTE)
def discriminative_power_bars(summary: pd.DataFrame, *, hue: Optional[str] = None, palette: Palette = None) -> Figure:
    """Discriminative power of each measure: share of run pairs with ASL < alpha.

    Sakai (2007) reports these as "significant pairs / pairs = %" (his Table 3 and figures of
    ASL curves); each bar carries that label. ``summary`` is
    :meth:`pdeval.discriminative_power`'s ``.summary``; bars are sorted by power. With a
    variant column (e.g. ``level``) pass it as ``hue``; otherwise each bar has its measure's
    colour (``palette``). The axis runs from 0 to 100%.
    """
    require_columns(summary, ["measure", "power"], "discriminative_power_bars")
    data = summary.assign(percent=100.0 * summary["power"])
    order = list(data.groupby("measure", sort=False)["percent"].mean().sort_values(ascending=False).index)
    n_bars = len(order) * (data[hue].nunique() if hue else 1)
    with sns.axes_style(STYLE):
        fig, ax = plt.subplots(figsize=(8.0, max(3.0, 0.45 * n_bars + 1.5)))
        if hue:
            sns.barplot(data=data, y="measure", x="percent", hue=hue, order=order, orient="h", ax=ax)
        else:
            sns.barplot(data=data, y="measure", x="percent", hue="measure", hue_order=order, order=order,
                        orient="h", ax=ax, palette=palette_for(palette, order), legend=False, saturation=1.0)
    if not hue and "label" in data.columns:
        labels = data.set_index("measure").loc[order, "label"]
        bars = sorted((p for c in ax.containers for p in c), key=lambda p: p.get_y())
        for bar, label in zip(bars, labels):  # inside the bar when it is long, so the axis ends at 100
            inside = bar.get_width() > 70
            ax.text(bar.get_width() + (-1.5 if inside else 1.5), bar.get_y() + bar.get_height() / 2, label,
                    ha="right" if inside else "left", va="center", fontsize=9,
                    color="white" if inside else "black")
    ax.set_xlim(0, 100)
    ax.set_xticks(range(0, 101, 20))
    ax.set_xlabel("discriminative power (% of run pairs significantly different)")
    ax.set_ylabel("measure")
    ax.grid(axis="x", alpha=0.4)
    details = []
    for column, fmt in (("alpha", "α = {:g}"), ("n_resamples", "B = {:d}"), ("n_runs", "{:d} runs"), ("n_topics", "{:d} topics")):
        if column in data.columns:
            details.append(fmt.format(data[column].iloc[0]))
    ax.set_title("Discriminative power (paired bootstrap test, Sakai 2006)"
                 + (f"\n{', '.join(details)}" if details else ""))
    if hue:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), title=hue)
    fig.tight_layout()
    return fig


@contract(bins=Frame("any"), threshold=Nullable(Real(0, 1)), measures=MEASURES, height=SIZE, aspect=SIZE,
          palette=PALETTE)
def swap_rate_curve(
    bins: pd.DataFrame,
    *,
    threshold: Optional[float] = 0.05,
    measures: Optional[Sequence[str]] = None,
    height: float = 4.0,
    aspect: float = 1.5,
    palette: Palette = None,
) -> sns.FacetGrid:
    """Swap rate vs the absolute difference of the means on the first topic set.

    Voorhees & Buckley (2002), as used by Ahlgren & Groenqvist (2008) for incomplete
    judgments: the share of trials where two topic sets disagree on which of two runs is
    better, per bin of the difference. ``bins`` is :meth:`pdeval.swap_rates`'s ``.bins``
    (``measure, [variants,] bin, lower, upper, swaps, count, rate``); empty bins are left out,
    variant keys become column facets, ``measures`` selects and orders the lines. ``threshold`` draws the 5% line that defines the
    difference required. The lines near 0 crowd, so each measure has its own dash pattern and
    marker, and measures with identical rates (AP and infAP on complete judgments) are named
    under the title.
    """
    require_columns(bins, ["measure", "lower", "rate"], "swap_rate_curve")
    order = measure_order(bins, measures)
    data = bins[bins["rate"].notna() & bins["measure"].isin(order)].copy()
    keys = variant_keys(data, ["bin", "lower", "upper", "swaps", "count", "rate"])
    col = None
    if keys:
        data["variant"] = data[keys].apply(lambda row: variant_text(keys, row.tolist()), axis=1)
        col = "variant"
    data["percent"] = 100.0 * data["rate"]
    with sns.axes_style(STYLE):
        grid = sns.relplot(data=data, x="lower", y="percent", hue="measure", style="measure", kind="line",
                           hue_order=order, style_order=order, palette=palette_for(palette, order),
                           markers=True, dashes=True, col=col, col_wrap=min(3, data[col].nunique()) if col else None,
                           height=height, aspect=aspect)
    if col:
        grid.set_titles("{col_name}")
    width = float((bins["upper"] - bins["lower"]).replace(np.inf, np.nan).dropna().iloc[0]) if "upper" in bins.columns else None
    for ax in grid.axes.flat:
        if threshold is not None:
            ax.axhline(100.0 * threshold, color="grey", linewidth=0.8, linestyle="--")
            ax.annotate(f"{100 * threshold:g}%", xy=(1.0, 100.0 * threshold), xycoords=("axes fraction", "data"),
                        xytext=(-4, 3), textcoords="offset points", ha="right", va="bottom", fontsize=8, color="grey")
        ax.set_xlabel("|difference of means| on topic set 1 (lower edge of bin"
                      + (f", width {width:g})" if width else ")"))
        ax.set_ylabel("swap rate (% of trials)")
        percent_axis(ax, "y")
    grid.legend.set_title("measure")
    note = coinciding_note(coinciding(data, "lower", "percent", order, by=[col] if col else []))
    grid.figure.suptitle("Swap rates between two disjoint topic sets (Voorhees & Buckley 2002)"
                         + (f"\n({note})" if note else ""), y=1.0)
    grid.tight_layout()
    return grid


@contract(result=Frame("result"), measures=MEASURE, hue=Nullable(Text("a column of the frame")), points=Boolean(),
          palette=PALETTE)
def topic_distributions(
    result: pd.DataFrame,
    *,
    measures: str,
    hue: Optional[str] = None,
    points: bool = True,
    palette: Palette = None,
) -> Figure:
    """Per-topic values of one measure for every run: box plots with the topics as points.

    ``result`` is a per-topic result frame; runs are sorted by their mean (best on top) and
    drawn horizontally so long run names stay readable. If the frame has variant columns
    (``level``...), select one variant or pass the column as ``hue``.
    """
    require_columns(result, ["run", "query_id", "measure", "value"], "topic_distributions")
    measure = measures
    data = result[result["measure"] == measure]
    if data.empty:
        raise SchemaError(f"topic_distributions: measure {measure!r} is not in the result; it has {sorted(pd.unique(result['measure']))}")
    others = [k for k in variant_keys(data, ["run", "query_id"]) if k != hue and data[k].nunique() > 1]
    if others:
        raise SchemaError(f"topic_distributions: the result has several variants in {others}; select one or pass hue=")
    data = data.assign(label=data["run"].map(wrap_label))
    order = list(data.groupby("label", observed=True)["value"].mean().sort_values(ascending=False).index)
    lines = sum(label.count("\n") + 1 for label in order)
    n_hue = data[hue].nunique() if hue else 1
    with sns.axes_style(STYLE):
        fig, ax = plt.subplots(figsize=(9.0, max(3.5, 0.2 * lines + 0.3 * len(order) * n_hue + 1.2)))
        sns.boxplot(data=data, y="label", x="value", hue=hue, order=order, orient="h", ax=ax,
                    showfliers=not points, color=None if hue else palette_for(palette, [measure])[measure],
                    linewidth=0.9, saturation=1.0, boxprops={"alpha": 0.6},
                    showmeans=True, meanprops={"marker": "D", "markerfacecolor": "black",
                                               "markeredgecolor": "black", "markersize": 4})
        if points:
            sns.stripplot(data=data, y="label", x="value", hue=hue, order=order, orient="h", ax=ax,
                          dodge=bool(hue), size=2.5, color=None if hue else "0.3", alpha=0.6, legend=False)
    ax.set_xlabel(f"{measure} per topic")
    ax.set_ylabel("run (sorted by mean; ◆ = mean)")
    ax.grid(axis="x", alpha=0.4)
    topics = data["query_id"].nunique()
    ax.set_title(f"Per-topic {measure} of each run ({topics} topics)")
    if hue:
        sns.move_legend(ax, "upper left", bbox_to_anchor=(1.01, 1.0), title=hue)
    fig.tight_layout()
    return fig


# notebooks show the returned grid or figure once, as a figure (no FacetGrid text line)
for _name in __all__:
    globals()[_name] = notebook_figure(globals()[_name])
