"""``pdeval report``: the whole incomplete-judgments study in one call, written to a folder.

:func:`report` evaluates the runs on the full judgments, on stratified reductions of them
(Sakai 2007's levels, several samples each), on depth-k pools and on a real partial qrels
snapshot; compares every system ranking with the full-judgment one (Kendall's tau_b, tau_AP,
RMS); measures discriminative power and swap rates on the full judgments; and writes CSV
tables, PNG figures, ``report.md`` and a standalone ``report.html`` (figures embedded) that
says in words which measures held their ranking best. Every number in the text is read
from the computed tables.
"""

from __future__ import annotations

import argparse
import base64
import html
import time
import warnings
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import matplotlib.pyplot as plt
import pandas as pd

from . import plotting
from .correlation import correlation_table, rank_correlation, system_means
from .errors import MeasureError, PdevalError, PdevalWarning
from .evaluation import evaluate
from .judgments import pool, reduce
from .measures import parse as parse_measure
from .significance import discriminative_power, swap_rates

__all__ = ["DEFAULT_MEASURES", "findings", "report", "report_from_args"]

#: the measures studied by default (unregistered ones are skipped with a warning)
DEFAULT_MEASURES = ("AP", "Bpref", "infAP", "AP'", "Q'", "nDCG'", "nDCG@10", "P@10")
#: the statistics comparing each ranking with the full-judgment ranking
METHODS = ("tau_b", "tau_ap", "rms")
#: CSV tables written, with the captions used in report.md / report.html
TABLES = {
    "summary": "One line per measure: ranking agreement with full judgments at the smallest level, "
    "on the smallest pool, on the partial qrels, and discriminative power",
    "full_means": "Per-run means on the full judgments (runs sorted by the first measure)",
    "robustness": "Agreement with the full-judgment ranking per level: mean, sd, min and max over the samples",
    "pools": "Agreement with the full-judgment ranking for depth-k pools of all runs",
    "partial": "Agreement with the full-judgment ranking for the partial qrels",
    "discriminative_power": "Discriminative power on full judgments (Sakai's paired bootstrap test)",
    "swap_rates": "Swap rates and difference required on full judgments (Voorhees & Buckley 2002)",
    "measure_correlation": "Kendall's tau_b between the full-judgment rankings of each pair of measures",
}
TAU = {"tau_b": "τ_b", "tau_ap": "τ_AP", "rms": "RMS"}


def _measures(measures: Iterable[str]) -> list[str]:
    """Canonical names of the registered measures; the others are skipped with a warning."""
    kept = []
    for name in measures:
        try:
            kept.append(str(parse_measure(name)))
        except MeasureError as error:
            warnings.warn(f"pdeval report: measure {name!r} skipped: {error}", PdevalWarning, stacklevel=3)
    if not kept:
        raise PdevalError("pdeval report: none of the measures is available")
    return list(dict.fromkeys(kept))


def _aggregate(correlations: pd.DataFrame, key: str) -> pd.DataFrame:
    """Mean, sd, min, max and number of samples of each statistic per (measure, key, method)."""
    grouped = correlations.groupby(["measure", key, "method"], sort=False, observed=True)
    table = grouped["value"].agg(["mean", "std", "min", "max", "count"]).reset_index()
    table = table.rename(columns={"count": "samples"})
    table["n_runs"] = grouped["n_runs"].min().to_numpy()
    return table


def _judged_share(qrels: pd.DataFrame, full: pd.DataFrame, key: str) -> pd.Series:
    """Judged (relevance >= 0) entries of each variant as a percentage of the full judgments."""
    judged = int((full["relevance"] >= 0).sum())
    return qrels[qrels["relevance"] >= 0].groupby(key).size() / judged * 100.0


def _summary(
    measures: list[str],
    robustness: pd.DataFrame,
    pools: Optional[pd.DataFrame],
    partial: Optional[pd.DataFrame],
    power: pd.DataFrame,
) -> pd.DataFrame:
    """One row per measure, sorted by mean tau_b at the smallest level (best first)."""
    lowest = robustness["level"].min()
    at_low = robustness[robustness["level"] == lowest].pivot(index="measure", columns="method", values="mean")
    spread = robustness[(robustness["level"] == lowest) & (robustness["method"] == "tau_b")].set_index("measure")
    table = pd.DataFrame(index=pd.Index(measures, name="measure"))
    table[f"tau_b@{lowest}%"] = at_low["tau_b"]
    table[f"tau_b@{lowest}% min"] = spread["min"]
    table[f"tau_b@{lowest}% max"] = spread["max"]
    table[f"tau_ap@{lowest}%"] = at_low["tau_ap"]
    table[f"rms@{lowest}%"] = at_low["rms"]
    if pools is not None:
        depth = pools["depth"].min()
        shallow = pools[pools["depth"] == depth].pivot(index="measure", columns="method", values="value")
        table[f"tau_b depth-{depth} pool"] = shallow["tau_b"]
    if partial is not None:
        table["tau_b partial qrels"] = partial.pivot(index="measure", columns="method", values="value")["tau_b"]
    table["discriminative power"] = power.set_index("measure")["power"]
    order = table[f"tau_b@{lowest}%"].round(9).rank(ascending=False, method="min")
    table.insert(0, "rank", order.astype(int))
    return table.sort_values(["rank"], kind="stable").reset_index()


def _best_worst(frame: pd.DataFrame, column: str) -> tuple[pd.Series, pd.Series]:
    ordered = frame.sort_values(column, ascending=False, kind="stable")
    return ordered.iloc[0], ordered.iloc[-1]


def _names(frame: pd.DataFrame, column: str, value: float) -> str:
    """The measure(s) whose ``column`` rounds to ``value`` at 3 decimals, joined with 'and'."""
    tied = frame[frame[column].round(3) == round(value, 3)]["measure"].tolist()
    return " and ".join(tied)


def _tiers(frame: pd.DataFrame, column: str) -> list[tuple[str, float]]:
    """(measure names, value) per distinct value at 3 decimals, best first; ties share a tier."""
    ordered = frame.sort_values(column, ascending=False, kind="stable")
    tiers: dict[float, list[str]] = {}
    for measure, value in zip(ordered["measure"], ordered[column]):
        tiers.setdefault(round(float(value), 3), []).append(measure)
    return [(" and ".join(names), value) for value, names in tiers.items()]


def findings(tables: dict, info: dict) -> list[str]:
    """The report's statements in plain words, every number read from ``tables``."""
    summary = tables["summary"]
    robustness = tables["robustness"]
    lowest = robustness["level"].min()
    column = f"tau_b@{lowest}%"
    samples = int(robustness["samples"].max())
    ranked = summary.sort_values(column, ascending=False, kind="stable")
    best, worst = ranked.iloc[0], ranked.iloc[-1]
    tiers = _tiers(summary, column)
    spread = "" if samples < 2 else " (range {:.3f}–{:.3f} over {} samples)"
    lines = []
    text = (
        f"At {lowest:g}% of the judgments, {tiers[0][0]} kept the system ranking best: "
        f"mean τ_b = {best[column]:.3f}"
        + spread.format(best[column + " min"], best[column + " max"], samples)
    )
    if len(tiers) > 2:
        following = tiers[1 : min(3, len(tiers) - 1)]
        text += ", followed by " + ", ".join(f"{names} ({value:.3f})" for names, value in following)
    if len(tiers) > 1:
        text += (
            f"; {tiers[-1][0]} fell to τ_b = {worst[column]:.3f}"
            + spread.format(worst[column + " min"], worst[column + " max"], samples)
        )
    lines.append(text + ".")
    lines.append(
        f"Measures ranked by mean τ_b at {lowest:g}%: "
        + ", ".join(f"{m} {v:.3f}" for m, v in zip(ranked["measure"], ranked[column]))
        + "."
    )
    ap_col = f"tau_ap@{lowest}%"
    best_ap, worst_ap = _best_worst(summary, ap_col)
    rms_col = f"rms@{lowest}%"
    low_rms = summary.sort_values(rms_col, kind="stable").iloc[0]
    high_rms = summary.sort_values(rms_col, kind="stable").iloc[-1]
    lines.append(
        f"Top-weighted agreement τ_AP at {lowest:g}% is highest for {_names(summary, ap_col, best_ap[ap_col])} "
        f"({best_ap[ap_col]:.3f}) and lowest for {_names(summary, ap_col, worst_ap[ap_col])} ({worst_ap[ap_col]:.3f}); "
        f"the mean values moved least for {low_rms['measure']} (RMS {low_rms[rms_col]:.4f} from the full-judgment means) "
        f"and most for {high_rms['measure']} (RMS {high_rms[rms_col]:.4f})."
    )
    if "pools" in tables:
        pools = tables["pools"]
        parts = []
        for depth, part in pools[pools["method"] == "tau_b"].groupby("depth", sort=True):
            b, w = _best_worst(part, "value")
            share = info["pool_share"][depth]
            parts.append(
                f"depth {depth} ({share:.0f}% of the judgments): best {_names(part, 'value', b['value'])} "
                f"τ_b = {b['value']:.3f}, worst {_names(part, 'value', w['value'])} {w['value']:.3f}"
            )
        lines.append(
            "Depth-k pools of all the runs (every evaluated run contributed to the pool): " + "; ".join(parts) + "."
        )
    if "partial" in tables:
        part = tables["partial"][tables["partial"]["method"] == "tau_b"]
        b, w = _best_worst(part, "value")
        lines.append(
            f"With the real partial qrels ({info['partial_judgments']} judgments, "
            f"{info['partial_share']:.0f}% of the {info['judgments']} final ones), "
            f"{_names(part, 'value', b['value'])} kept the highest τ_b = {b['value']:.3f} and "
            f"{_names(part, 'value', w['value'])} the lowest ({w['value']:.3f})."
        )
    power = tables["discriminative_power"]
    b, w = _best_worst(power, "power")
    lines.append(
        f"On the full judgments, {_names(power, 'power', b['power'])} had the highest discriminative power "
        f"({b['label']}) and {_names(power, 'power', w['power'])} the lowest ({w['label']}), "
        f"by a paired bootstrap test with B = {int(b['B'])} at α = {b['alpha']:g}."
    )
    return lines


# ---------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------


def _markdown_table(frame: pd.DataFrame) -> str:
    def cell(value: object) -> str:
        if isinstance(value, float):
            return f"{value:.4f}"
        return str(value).replace("|", "\\|")

    lines = ["| " + " | ".join(map(cell, frame.columns)) + " |", "|" + "---|" * len(frame.columns)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in frame.itertuples(index=False)]
    return "\n".join(lines)


def _write_markdown(path: Path, title: str, intro: list[str], lines: list[str], figures: dict, tables: dict) -> None:
    parts = [f"# {title}", "", *[f"{line}  " for line in intro], "", "## Findings", ""]
    parts += [f"* {line}" for line in lines]
    parts += ["", "## Figures", ""]
    for name, caption in figures.items():
        parts += [f"### {caption}", "", f"![{caption}]({name}.png)", ""]
    parts += ["## Tables", ""]
    for name, frame in tables.items():
        parts += [f"### {TABLES[name]}", "", f"`{name}.csv`", "", _markdown_table(frame), ""]
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


def _write_html(path: Path, out: Path, title: str, intro: list[str], lines: list[str], figures: dict, tables: dict) -> None:
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
        parts.append(f"<p class='caption'>{html.escape(TABLES[name])} (<code>{name}.csv</code>)</p>")
        parts.append(frame.to_html(index=False, float_format=lambda v: f"{v:.4f}", border=0, na_rep="–"))
    parts.append("</body></html>")
    path.write_text("\n".join(parts), encoding="utf-8")


def _save(figure, path: Path, dpi: int) -> None:
    fig = getattr(figure, "figure", figure)
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    plt.close(fig)


# ---------------------------------------------------------------------------------------
# the study
# ---------------------------------------------------------------------------------------


def report(
    run: Optional[pd.DataFrame] = None,
    qrels: Optional[pd.DataFrame] = None,
    *,
    partial_qrels: Optional[pd.DataFrame] = None,
    levels: Union[str, Sequence[float]] = "sakai2007",
    samples: int = 10,
    measures: Sequence[str] = DEFAULT_MEASURES,
    depths: Optional[Sequence[int]] = (10, 20, 50),
    seed: int = 1,
    out: Union[str, Path] = "report",
    progress: bool = True,
    B: int = 1000,
    swap_trials: int = 1000,
    dpi: int = 110,
    bounds: bool = False,
) -> dict[str, pd.DataFrame]:
    """Run the whole robustness study and write its report to the folder ``out``.

    Without ``run`` and ``qrels`` the bundled ``clef2018`` data are used (with its partial
    qrels). Steps: evaluate ``measures`` (complete=True) on the full judgments; reduce the
    judgments with :func:`pdeval.reduce` (stratified, ``levels`` x ``samples``, ``seed``) and
    evaluate every variant in one call; do the same for depth-k pools of all runs
    (``depths``, one call) and for ``partial_qrels``; compare each system ranking with the
    full-judgment one (tau_b, tau_AP, RMS; :func:`pdeval.rank_correlation`); measure
    discriminative power (``B`` bootstrap replicates) and swap rates (``swap_trials`` splits
    of the topics in two halves) on the full judgments.

    Writes the CSV tables of :data:`TABLES`, PNG figures, ``report.md`` and a standalone
    ``report.html``. With ``bounds`` the table of run means has each measure's residual
    beside it (:func:`pdeval.bounds` on the full judgments: unjudged retrieved documents
    relevant at the top grade) and a figure shows the [low, high] intervals. Returns the tables plus the per-topic results (``full``, ``reduced``,
    ``pooled``, ``partial_result``) as a dict of frames. ``progress`` shows a tqdm bar over
    the stages and prints where the report is.
    """
    from tqdm.auto import tqdm

    started = time.perf_counter()
    if (run is None) != (qrels is None):
        raise PdevalError("pdeval report: give both runs and qrels, or neither (bundled clef2018 data)")
    source = "your runs and qrels"
    if run is None:
        from .datasets import load

        data = load("clef2018")
        run, qrels = data.runs, data.qrels
        partial_qrels = data.partial_qrels if partial_qrels is None else partial_qrels
        source = f"the bundled clef2018 data ({data.description})"
    measures = _measures(measures)
    depths = sorted(set(int(d) for d in depths)) if depths else []
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    stages = ["full judgments", "reduced judgments", "pools", "partial qrels", "discriminative power",
              "swap rates", "figures", "writing"]
    bar = tqdm(total=len(stages), desc="pdeval report", disable=not progress, unit="stage")
    tables: dict[str, pd.DataFrame] = {}
    results: dict[str, pd.DataFrame] = {}

    def stage(name: str) -> None:
        bar.set_postfix_str(name)

    # full judgments
    stage(stages[0])
    full = evaluate(run, qrels, measures, complete=True)
    results["full"] = full
    means = system_means(full)
    wide = means.pivot(index="run", columns="measure", values="value")[measures]
    if bounds:
        from .bounds import bounds as bounds_of, summarize_bounds

        results["full_bounds"] = bounds_of(run, qrels, measures, complete=True)
        wide = summarize_bounds(results["full_bounds"], wide=True).set_index("run")
    tables["full_means"] = wide.sort_values(measures[0], ascending=False).reset_index()
    tables["measure_correlation"] = correlation_table(full, "tau_b", measures=measures).reset_index()
    n_topics = full["query_id"].nunique()
    info = {"judgments": int((qrels["relevance"] >= 0).sum())}
    bar.update()

    # stratified reductions: every (level, sample) variant in one evaluate call
    stage(stages[1])
    reduced_qrels = reduce(qrels, levels, method="stratified", samples=samples, seed=seed)
    reduced = evaluate(run, reduced_qrels, measures, complete=True)
    results["reduced"] = reduced
    samples_table = rank_correlation(reduced, full, methods=METHODS)
    tables["robustness_samples"] = samples_table
    tables["robustness"] = _aggregate(samples_table, "level")
    bar.update()

    # depth-k pools of all runs: one evaluate call
    stage(stages[2])
    if depths:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PdevalWarning)  # pooled but unjudged documents stay absent
            pooled_qrels = pool(run, depths, qrels=qrels)
        info["pool_share"] = _judged_share(pooled_qrels, qrels, "depth").to_dict()
        pooled = evaluate(run, pooled_qrels, measures, complete=True)
        results["pooled"] = pooled
        pools = rank_correlation(pooled, full, methods=METHODS)
        pools["judged_pct"] = pools["depth"].map(info["pool_share"])
        tables["pools"] = pools
    bar.update()

    # the real partial qrels
    stage(stages[3])
    if partial_qrels is not None:
        partial_result = evaluate(run, partial_qrels, measures, complete=True)
        results["partial_result"] = partial_result
        tables["partial"] = rank_correlation(partial_result, full, methods=METHODS)
        info["partial_judgments"] = int((partial_qrels["relevance"] >= 0).sum())
        info["partial_share"] = 100.0 * info["partial_judgments"] / info["judgments"]
    bar.update()

    stage(stages[4])
    power = discriminative_power(full, B=B, seed=seed, progress=False).summary
    tables["discriminative_power"] = power
    bar.update()

    stage(stages[5])
    c = max(1, n_topics // 2)
    swaps = swap_rates(full, c=c, trials=swap_trials, seed=seed, progress=False)
    tables["swap_rates"] = swaps.summary
    bar.update()

    tables["summary"] = _summary(measures, tables["robustness"], tables.get("pools"), tables.get("partial"), power)

    # figures
    stage(stages[6])
    lowest = tables["robustness"]["level"].min()
    figures = {
        "robustness": "Rank correlation with the full-judgment ranking vs the share of judgments kept "
        "(Sakai 2007, Fig. 2): mean over samples, band = range over samples",
        "mean_by_level": "Mean value over runs and topics vs the share of judgments kept (Sakai 2007, Fig. 1)",
        "estimated_vs_actual": f"Per-run means at {lowest:g}% of the judgments (averaged over samples) against "
        "the means on full judgments (Yilmaz & Aslam 2008, Figs. 1-18); the panel statistics are of the averaged means",
        "pools": "Rank correlation with the full-judgment ranking for depth-k pools of all runs",
        "discriminative_power": "Discriminative power on full judgments (Sakai 2007)",
        "swap_rates": f"Swap rates on full judgments, {swap_trials} random splits into two sets of {c} topics "
        "(Voorhees & Buckley 2002)",
        "measure_correlation": "Kendall's τ_b between the system rankings of each pair of measures, full judgments",
        "topic_distributions": f"Per-topic {measures[0]} of each run on full judgments",
    }
    if not depths:
        del figures["pools"]
    if bounds:
        figures["bounds"] = (f"Mean {measures[0]} of each run with its [low, high] interval: unjudged retrieved "
                             "documents as nonrelevant / as relevant at the top grade")
        _save(plotting.bound_intervals(results["full_bounds"], measures[0]), out / "bounds.png", dpi)
    _save(plotting.robustness_curve(samples_table, methods=["tau_b", "tau_ap"], measures=measures), out / "robustness.png", dpi)
    _save(plotting.mean_by_level(reduced, measures=measures), out / "mean_by_level.png", dpi)
    _save(plotting.estimated_vs_actual(reduced[reduced["level"] == lowest], full), out / "estimated_vs_actual.png", dpi)
    if depths:
        _save(plotting.robustness_curve(tables["pools"], x="depth", methods=["tau_b", "tau_ap"], measures=measures),
              out / "pools.png", dpi)
    _save(plotting.discriminative_power_bars(power), out / "discriminative_power.png", dpi)
    _save(plotting.swap_rate_curve(swaps.bins, measures=measures), out / "swap_rates.png", dpi)
    _save(plotting.correlation_heatmap(tables["measure_correlation"].set_index("reference")),
          out / "measure_correlation.png", dpi)
    _save(plotting.topic_distributions(full, measures[0]), out / "topic_distributions.png", dpi)
    bar.update()

    # tables and text
    stage(stages[7])
    for name, frame in tables.items():
        frame.to_csv(out / f"{name}.csv", index=False)
    lines = findings(tables, info)
    level_list = ", ".join(f"{v:g}%" for v in pd.unique(reduced_qrels["level"]))
    intro = [
        f"Data: {source}.",
        f"{run['run'].nunique()} runs, {n_topics} topics, {info['judgments']} judgments; "
        f"measures: {', '.join(measures)}.",
        f"Stratified reductions to {level_list} of the judgments, {samples} sample(s) per level (seed {seed})"
        + (f"; depth-{', '.join(map(str, depths))} pools of all runs" if depths else "")
        + ("; the partial qrels given" if partial_qrels is not None else "") + ".",
        "Every ranking is compared with the full-judgment ranking of the same measure (τ_b, τ_AP, RMS).",
    ]
    shown = {name: frame for name, frame in tables.items() if name in TABLES}
    shown = {name: shown[name] for name in TABLES if name in shown}
    title = "pdeval report: how measures hold up with incomplete judgments"
    _write_markdown(out / "report.md", title, intro, lines, figures, shown)
    _write_html(out / "report.html", out, title, intro, lines, figures, shown)
    bar.update()
    bar.close()
    elapsed = time.perf_counter() - started
    if progress:
        print(f"pdeval report: wrote {out / 'report.html'} (and report.md, {len(figures)} figures, "
              f"{len(tables)} CSV tables) in {elapsed:.1f} s")
    return {**tables, **results}


def report_from_args(args: argparse.Namespace) -> int:
    """``pdeval report``: read the files named on the command line and call :func:`report`."""
    from .io import read_qrels, read_run

    if (args.qrels is None) != (args.runs is None):
        raise PdevalError("pdeval report: give both --qrels and --runs, or neither (bundled clef2018 data)")
    run = read_run(args.runs) if args.runs else None
    qrels = read_qrels(args.qrels) if args.qrels else None
    partial = read_qrels(args.partial_qrels) if args.partial_qrels else None
    tables = report(
        run, qrels, partial_qrels=partial,
        levels=args.levels or "sakai2007", samples=args.samples,
        measures=args.measures or DEFAULT_MEASURES, seed=args.seed, out=args.out,
        progress=not args.no_progress, depths=args.depths, B=args.bootstrap, bounds=args.bounds,
    )
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("Per-run means on the full judgments:")
        print(tables["full_means"].round(4).to_string(index=False))
        print()
        print(tables["summary"].round(3).to_string(index=False))
    if args.no_progress:
        print(f"pdeval report: wrote {Path(args.out) / 'report.html'}")
    return 0
