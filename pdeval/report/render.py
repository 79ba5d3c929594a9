"""Rendering ``pdeval report``: the figures, ``report.md`` and a standalone ``report.html``.

:mod:`pdeval.report.study` computes the tables; this module draws the figures from them
(:mod:`pdeval.report.figures`), turns the long tables into compact ones for reading (the CSV
files keep every row) and writes both documents.
"""

from __future__ import annotations

import base64
import html
from pathlib import Path
from typing import Optional, Sequence

import matplotlib.pyplot as plt
import pandas as pd

from pdeval.report import figures as plotting

__all__ = ["OPTIONAL_TABLES", "TABLES", "caption_of", "compact_tables", "draw_figures", "markdown_table", "save_figure",
           "write_html", "write_markdown"]

#: CSV tables written, with the captions used in report.md / report.html
#: tables written only when asked for (``report(estimate=True)``)
OPTIONAL_TABLES = ("estimates",)

TABLES = {
    "summary": "One line per measure: ranking agreement with full judgments at the smallest level, "
    "on the smallest pool, on the partial qrels, and discriminative power",
    "full_means": "Per-run means on the full judgments (runs sorted by the first measure)",
    "robustness": "Agreement with the full-judgment ranking per level: mean, sd, min and max over the samples",
    "pools": "Agreement with the full-judgment ranking for depth-k pools of all runs",
    "partial": "Agreement with the full-judgment ranking for the partial qrels",
    "discriminative_power": "Discriminative power on full judgments (Sakai's paired bootstrap test)",
    "swap_rates": "Swap rates and difference required on full judgments (Voorhees & Buckley 2002)",
    "tukey_hsd": "Run pairs significantly different on full judgments by the randomised Tukey HSD test "
    "(family-wise error of all pairs at 0.05; Carterette 2012, Sakai 2018), and the ANOVA residual variance",
    "measure_correlation": "Kendall's tau_b between the full-judgment rankings of each pair of measures",
    "estimates": "Per-run means on the full judgments beside the bootstrap estimate of the mean if the unjudged "
    "documents were judged, with its 95 % interval (Fröbe et al. 2023; pdeval.estimate)",
}
#: captions of the tables the documents show in a compact form (the CSV keeps every row)
COMPACT_CAPTIONS = {
    "robustness": "Agreement with the full-judgment ranking per share of judgments kept: mean ± sd over the "
    "samples, one row per measure and statistic (min and max per sample in the CSV)",
    "pools": "Agreement with the full-judgment ranking for depth-k pools of all runs, one row per measure and "
    "statistic; '(by construction)': the pool judges every document the measure looks at",
    "partial": "Agreement with the full-judgment ranking for the partial qrels, one row per measure",
}
#: the statistics of the agreement tables, in the order and with the names shown
STATISTICS = {"tau_b": "τ_b", "tau_ap": "τ_AP", "rms": "RMS"}


def caption_of(name: str) -> str:
    """The caption of table ``name`` in the documents."""
    return COMPACT_CAPTIONS.get(name, TABLES[name])


def _measure_order(frame: pd.DataFrame, measures: Optional[Sequence[str]]) -> list[str]:
    """``measures`` that are in the frame, then the frame's others in order of appearance."""
    present = list(pd.unique(frame["measure"]))
    return [m for m in (measures or []) if m in present] + [m for m in present if m not in (measures or [])]


def _statistic_rows(frame: pd.DataFrame, column: str, cell, measures: Optional[Sequence[str]],
                    descending: bool = False) -> pd.DataFrame:
    """One row per (measure, statistic), one column per value of ``column`` (in ascending
    order, or descending); ``cell(row)`` writes each entry."""
    frame = frame[frame["method"].isin(STATISTICS)]
    wide = frame.assign(cell=frame.apply(cell, axis=1)).pivot(index=["measure", "method"], columns=column,
                                                              values="cell")
    wide = wide[sorted(wide.columns, reverse=descending)]
    statistics = [m for m in STATISTICS if m in set(frame["method"])]
    order = pd.MultiIndex.from_product([_measure_order(frame, measures), statistics])
    wide = wide.reindex(order).rename_axis(index=["measure", "statistic"], columns=None).reset_index()
    wide["statistic"] = wide["statistic"].map(STATISTICS)
    return wide


def compact_tables(tables: dict, pool_share: Optional[dict] = None, measures: Optional[Sequence[str]] = None) -> dict:
    """The tables as the documents show them: ``robustness`` and ``pools`` with one row per
    measure and statistic (levels from full judgments down, or depths, as columns), ``partial``
    with one row per measure, measures in the order of ``measures``; the others as they are."""
    shown = dict(tables)
    if "robustness" in tables:
        def spread(row) -> str:
            return f"{row['mean']:.3f}" if pd.isna(row["std"]) else f"{row['mean']:.3f} ± {row['std']:.3f}"

        wide = _statistic_rows(tables["robustness"], "level", spread, measures, descending=True)
        shown["robustness"] = wide.rename(columns={c: f"{c:g} %" for c in wide.columns[2:]})
    if "pools" in tables:
        def value(row) -> str:
            return f"{row['value']:.3f}" + (" (by construction)" if row.get("by_construction") is True else "")

        wide = _statistic_rows(tables["pools"], "depth", value, measures)
        share = pool_share or {}
        shown["pools"] = wide.rename(columns={
            d: f"depth {d}" + (f" ({share[d]:.0f} % judged)" if d in share else "") for d in wide.columns[2:]})
    if "partial" in tables:
        partial = tables["partial"]
        wide = partial.pivot(index="measure", columns="method", values="value")
        wide = wide.reindex(index=_measure_order(partial, measures), columns=[m for m in STATISTICS if m in wide])
        shown["partial"] = wide.rename(columns=STATISTICS).rename_axis(columns=None).reset_index()
    return shown


def markdown_table(frame: pd.DataFrame) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def write_markdown(path: Path, title: str, intro: list[str], lines: list[str], figures: dict, tables: dict) -> None:
    parts = [f"# {title}", "", *[f"{line}  " for line in intro], "", "## Findings", ""]
    parts += [f"* {line}" for line in lines]
    parts += ["", "## Figures", ""]
    for name, caption in figures.items():
        parts += [f"### {caption}", "", f"![{caption}]({name}.png)", ""]
    parts += ["## Tables", ""]
    for name, frame in tables.items():
        parts += [f"### {caption_of(name)}", "", f"`{name}.csv`", "", markdown_table(frame), ""]
    path.write_text("\n".join(parts), encoding="utf-8")


CSS = """
body { font-family: system-ui, sans-serif; max-width: 1100px; margin: 2em auto; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { border-bottom: 1px solid #ddd; padding-bottom: .2em; margin-top: 2em; }
li { margin: .4em 0; line-height: 1.4; }
figure { margin: 1.5em 0; } figure img { max-width: 100%; border: 1px solid #eee; }
figcaption { font-size: .95em; color: #444; margin-top: .3em; }
table { border-collapse: collapse; font-size: .85em; margin: .5em 0 1.5em; }
th, td { border: 1px solid #ccc; padding: .25em .5em; text-align: right; }
th { background: #f4f4f4; } td:first-child, th:first-child { text-align: left; }
.caption { font-weight: bold; margin-top: 1.2em; } .intro { color: #444; }
"""


def write_html(path: Path, out: Path, title: str, intro: list[str], lines: list[str], figures: dict, tables: dict) -> None:
    parts = [
        "<!DOCTYPE html>", "<html lang='en'><head><meta charset='utf-8'>",
        f"<title>{html.escape(title)}</title><style>{CSS}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
        *[f"<p class='intro'>{html.escape(line)}</p>" for line in intro],
        "<h2>Findings</h2><ul>", *[f"<li>{html.escape(line)}</li>" for line in lines], "</ul>",
        "<h2>Figures</h2>",
    ]
    for name, caption in figures.items():
        data = base64.b64encode((out / f"{name}.png").read_bytes()).decode("ascii")
        parts.append(
            f"<figure><img src='data:image/png;base64,{data}' alt='{html.escape(caption)}'>"
            f"<figcaption>{html.escape(caption)}</figcaption></figure>"
        )
    parts.append("<h2>Tables</h2>")
    for name, frame in tables.items():
        parts.append(f"<p class='caption'>{html.escape(caption_of(name))} (<code>{name}.csv</code>)</p>")
        parts.append(frame.to_html(index=False, float_format=lambda v: f"{v:.4f}", border=0, na_rep="–"))
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")


def save_figure(figure, path: Path, dpi: int) -> None:
    fig = getattr(figure, "figure", figure)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)


def draw_figures(
    out: Path,
    *,
    tables: dict,
    results: dict,
    swap_bins: pd.DataFrame,
    measures: Sequence[str],
    n_resamples: int,
    half: int,
    dpi: int,
) -> dict:
    """Draw every figure of the report into ``out`` (PNG); returns {file stem: caption}."""
    samples_table, reduced, full = tables["robustness_samples"], results["reduced"], results["full"]
    lowest = tables["robustness"]["level"].min()
    figures = {
        "robustness": "Rank correlation with the full-judgment ranking against the share of judgments kept "
        "(Sakai 2007, Fig. 2): mean over samples, band = range over samples",
        "mean_by_level": "Mean value over runs and topics against the share of judgments kept (Sakai 2007, Fig. 1)",
        "estimated_vs_actual": f"Per-run means at {lowest:g} % of the judgments (averaged over samples) against "
        "the means on full judgments (Yilmaz & Aslam 2008, Figs. 1-18); the panel statistics are of the averaged means",
        "pools": "Rank correlation with the full-judgment ranking for depth-k pools of all runs",
        "discriminative_power": "Discriminative power on full judgments (Sakai 2007)",
        "swap_rates": f"Swap rates on full judgments, {n_resamples} random splits into two sets of {half} topics "
        "(Voorhees & Buckley 2002)",
        "measure_correlation": "Kendall's τ_b between the system rankings of each pair of measures, full judgments",
        "topic_distributions": f"Per-topic {measures[0]} of each run on full judgments",
    }
    colours = plotting.measure_palette(measures)  # one colour per measure in every figure
    drawn = {
        "robustness": lambda: plotting.robustness_curve(samples_table, methods=["tau_b", "tau_ap"],
                                                        measures=measures, palette=colours),
        "mean_by_level": lambda: plotting.mean_by_level(reduced, measures=measures, palette=colours),
        "estimated_vs_actual": lambda: plotting.estimated_vs_actual(reduced[reduced["level"] == lowest], full,
                                                                    palette=colours),
        "pools": lambda: plotting.robustness_curve(tables["pools"], x="depth", methods=["tau_b", "tau_ap"],
                                                   measures=measures, palette=colours),
        "discriminative_power": lambda: plotting.discriminative_power_bars(tables["discriminative_power"],
                                                                           palette=colours),
        "swap_rates": lambda: plotting.swap_rate_curve(swap_bins, measures=measures, palette=colours),
        "measure_correlation": lambda: plotting.correlation_heatmap(
            tables["measure_correlation"].set_index("reference")),
        "topic_distributions": lambda: plotting.topic_distributions(full, measures=measures[0], palette=colours),
    }
    if "pools" not in tables:
        del figures["pools"]
    if "full_bounds" in results:
        figures["bounds"] = (f"Mean {measures[0]} of each run with its [low, high] interval: unjudged retrieved "
                             "documents as nonrelevant / as relevant at the top grade")
        drawn["bounds"] = lambda: plotting.bound_intervals(results["full_bounds"], measures=measures[0])
    if "estimates" in tables:
        first = tables["estimates"]["measure"].iloc[0]
        figures["estimates"] = (f"Mean {first} of each run if its unjudged documents were judged: bootstrap estimate "
                                "with its 95 % interval, beside today's value (unjudged as nonrelevant)")
        drawn["estimates"] = lambda: plotting.estimate_intervals(tables["estimates"], measures=first)
    for name in figures:
        save_figure(drawn[name](), out / f"{name}.png", dpi)
    return figures
