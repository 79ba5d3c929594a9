"""``pdeval report``: the whole incomplete-judgments study in one call, written to a folder.

:func:`report` evaluates the runs on the full judgments, on stratified reductions of them
(Sakai 2007's levels, several samples each), on depth-k pools and on a real partial qrels
snapshot; compares every system ranking with the full-judgment one (Kendall's tau_b, tau_AP,
RMS); measures discriminative power and swap rates on the full judgments; and writes CSV
tables, PNG figures, ``report.md`` and a standalone ``report.html`` (figures embedded) that
says in words which measures held their ranking best. Every number in the text is read
from the computed tables, and the text claims only what they support:

* a measure is ranked above another only when the mean of their paired per-sample
  differences exceeds the sampling noise, :data:`NOISE_Z` standard errors (see
  :func:`separation`); otherwise the two are called indistinguishable, and the spread over
  the samples is shown;
* comparisons made on one qrels (depth-k pools, the partial qrels) have no sampling noise to
  measure and rank nothing: their values are reported;
* a pool result that is true by construction (the pool judges every document the measure
  looks at: a cut-off measure at depth k >= its cut-off, with values identical to the full
  judgments) is marked as such;
* where tau_AP < 1 for a ranking identical to the full-judgment one, the report says that
  tau_AP counts tied runs as randomly ordered.
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
import numpy as np
import pandas as pd

from pdeval.report import figures as plotting
from pdeval.analysis.correlation import correlation_table, rank_correlation
from pdeval.evaluation.results import summarize
from pdeval.errors import MeasureError, PdevalError, PdevalWarning
from pdeval.evaluation.core import evaluate
from pdeval.judgments.reduction import reduce
from pdeval.judgments.pooling import pool
from pdeval.measures import parse as parse_measure
from pdeval.analysis.significance import discriminative_power, swap_rates

__all__ = ["DEFAULT_MEASURES", "NOISE_Z", "findings", "report", "report_from_args", "separation"]

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
    "tukey_hsd": "Run pairs significantly different on full judgments by the randomised Tukey HSD test "
    "(family-wise error of all pairs at 0.05; Carterette 2012, Sakai 2018), and the ANOVA residual variance",
    "measure_correlation": "Kendall's tau_b between the full-judgment rankings of each pair of measures",
}
TAU = {"tau_b": "τ_b", "tau_ap": "τ_AP", "rms": "RMS"}
#: a measure is ranked above another only when their mean paired difference exceeds this many
#: standard errors of it (about a two-sided 95% interval for 10 or more samples)
NOISE_Z = 2.0
#: the rule, as the report states it
RULE = (
    "A measure is ranked above another only when the mean of their per-sample differences exceeds "
    f"{NOISE_Z:g} standard errors (sd of the differences / √samples; paired, since both measures are "
    "evaluated on the same reduced qrels of each sample); otherwise they are indistinguishable "
    "(≈). With one sample no measure is ranked."
)


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
    samples: pd.DataFrame,
    pools: Optional[pd.DataFrame],
    partial: Optional[pd.DataFrame],
    power: pd.DataFrame,
) -> pd.DataFrame:
    """One row per measure, sorted by mean tau_b at the smallest level (best first).

    ``rank`` is the measure's group under the report's rule (:data:`RULE`): measures that
    share a rank are indistinguishable at the sampling noise.
    """
    lowest = robustness["level"].min()
    at_low = robustness[robustness["level"] == lowest].pivot(index="measure", columns="method", values="mean")
    spread = robustness[(robustness["level"] == lowest) & (robustness["method"] == "tau_b")].set_index("measure")
    table = pd.DataFrame(index=pd.Index(measures, name="measure"))
    table[f"tau_b@{lowest}%"] = at_low["tau_b"]
    table[f"tau_b@{lowest}% sd"] = spread["std"]
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
    at = samples[(samples["level"] == lowest) & (samples["method"] == "tau_b")]
    groups = _groups(table[f"tau_b@{lowest}%"], separation(at))
    rank = {m: number for number, group in enumerate(groups, start=1) for m in group}
    table.insert(0, "rank", pd.Series(rank).reindex(table.index).astype(int))
    order = table.assign(_mean=-table[f"tau_b@{lowest}%"]).sort_values(["rank", "_mean"], kind="stable")
    return order.drop(columns="_mean").reset_index()


def separation(samples: pd.DataFrame, *, z: float = NOISE_Z) -> pd.DataFrame:
    """Which measures the per-sample values of one statistic tell apart.

    ``samples`` holds one value per (measure, sample) for one level and statistic (from
    :func:`pdeval.rank_correlation`). For each ordered pair (a, b) of measures it gives the
    mean paired difference ``diff`` = mean over samples of (value_a - value_b), its standard
    error ``se`` = sd / sqrt(n) (n samples, sd with n - 1 degrees of freedom), and
    ``separated`` = n >= 2 and |diff| > z * se (and > 1e-12). Samples missing for one of the
    two measures are left out of that pair.
    """
    wide = samples.pivot_table(index="sample", columns="measure", values="value", aggfunc="first")
    rows = []
    for a in wide.columns:
        for b in wide.columns:
            if a == b:
                continue
            d = (wide[a] - wide[b]).dropna().to_numpy(float)
            n = d.size
            diff = float(d.mean()) if n else float("nan")
            se = float(d.std(ddof=1) / np.sqrt(n)) if n >= 2 else float("nan")
            separated = bool(n >= 2 and abs(diff) > max(z * se, 1e-12))
            rows.append({"measure": a, "other": b, "diff": diff, "se": se, "samples": n, "separated": separated})
    return pd.DataFrame(rows, columns=["measure", "other", "diff", "se", "samples", "separated"])


def _groups(means: pd.Series, pairs: pd.DataFrame, higher_is_better: bool = True) -> list[list[str]]:
    """Measures from best to worst mean, cut into groups: a group starts at the first measure
    separated from the first measure of the group above (:func:`separation`)."""
    ordered = list(means.sort_values(ascending=not higher_is_better, kind="stable").index)
    apart = {(a, b) for a, b, sep in zip(pairs["measure"], pairs["other"], pairs["separated"]) if sep}
    groups: list[list[str]] = []
    for measure in ordered:
        if groups and (groups[-1][0], measure) not in apart:
            groups[-1].append(measure)
        else:
            groups.append([measure])
    return groups


def _and(names: Sequence[str]) -> str:
    names = list(names)
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _best_worst(frame: pd.DataFrame, column: str) -> tuple[pd.Series, pd.Series]:
    ordered = frame.sort_values(column, ascending=False, kind="stable")
    return ordered.iloc[0], ordered.iloc[-1]


def _names(frame: pd.DataFrame, column: str, value: float) -> str:
    """The measure(s) whose ``column`` rounds to ``value`` at 3 decimals, joined with 'and'."""
    tied = frame[frame[column].round(3) == round(value, 3)]["measure"].tolist()
    return " and ".join(tied)


def _ranked_statement(samples: pd.DataFrame, method: str, level: float, higher_is_better: bool = True) -> tuple:
    """(groups, means, sd, min, max, n) of one statistic at one level, under the rule."""
    at = samples[(samples["level"] == level) & (samples["method"] == method)]
    stats = at.groupby("measure", sort=False)["value"].agg(["mean", "std", "min", "max", "count"])
    groups = _groups(stats["mean"], separation(at), higher_is_better)
    return groups, stats


def _spread(stats: pd.DataFrame, measure: str, digits: int = 3) -> str:
    row = stats.loc[measure]
    if row["count"] < 2:
        return f"{row['mean']:.{digits}f}"
    return (f"{row['mean']:.{digits}f} ± {row['std']:.{digits}f} "
            f"(range {row['min']:.{digits}f}–{row['max']:.{digits}f})")


def _tukey_summary(full: pd.DataFrame, B: int, seed: int) -> pd.DataFrame:
    """Per measure: pairs significant by the randomised Tukey HSD, its threshold, and V_E."""
    from pdeval.analysis.statistics import anova, tukey_hsd

    pairs = tukey_hsd(full, B=B, seed=seed, progress=False)
    table = pairs.groupby("measure", sort=False).agg(
        pairs=("significant", "size"), significant=("significant", "sum"), hsd=("hsd", "first"))
    table["share"] = table["significant"] / table["pairs"]
    variance = anova(full).summary.set_index("measure")["residual_variance"]
    return table.join(variance).reset_index()


def findings(tables: dict, info: dict) -> list[str]:
    """The report's statements in plain words, every number read from ``tables``.

    Rankings of measures follow :data:`RULE` (paired per-sample differences against the
    sampling noise); single-qrels comparisons (pools, partial qrels) rank nothing.
    """
    robustness = tables["robustness"]
    samples_table = tables["robustness_samples"]
    lowest = robustness["level"].min()
    n = int(robustness["samples"].max())
    lines = []
    groups, stats = _ranked_statement(samples_table, "tau_b", lowest)
    top, bottom = groups[0], groups[-1]
    at = f"At {lowest:g}% of the judgments ({n} sample{'s' if n != 1 else ''})"
    if n < 2:
        lines.append(f"{at}, mean τ_b per measure: " + ", ".join(
            f"{m} {stats.loc[m, 'mean']:.3f}" for m in stats["mean"].sort_values(ascending=False).index)
            + "; with one sample there is no estimate of the sampling noise, so no measure is ranked above another.")
    elif len(groups) == 1:
        lines.append(f"{at}, no measure kept the system ranking better than another: all are indistinguishable "
                     f"at the sampling noise (mean τ_b ± sd: "
                     + ", ".join(f"{m} {_spread(stats, m)}" for m in top) + ").")
    else:
        if len(top) == 1:
            text = f"{at}, {top[0]} kept the system ranking best: mean τ_b = {_spread(stats, top[0])}"
        else:
            text = (f"{at}, {_and(top)} kept the system ranking best, indistinguishable from each other "
                    f"(mean τ_b ± sd: " + ", ".join(f"{m} {_spread(stats, m)}" for m in top) + ")")
        text += (f"; {_and(bottom)} {'was' if len(bottom) == 1 else 'were'} lowest: "
                 + ", ".join(f"{m} {_spread(stats, m)}" for m in bottom))
        lines.append(text + ".")
    if n >= 2:
        lines.append(
            f"Measures by mean τ_b at {lowest:g}% ('>' separates groups that differ by more than the "
            f"sampling noise, '≈' joins indistinguishable ones): "
            + " > ".join(" ≈ ".join(f"{m} {stats.loc[m, 'mean']:.3f}" for m in group) for group in groups)
            + ". " + RULE
        )
    ap_groups, ap_stats = _ranked_statement(samples_table, "tau_ap", lowest)
    rms_groups, rms_stats = _ranked_statement(samples_table, "rms", lowest, higher_is_better=False)
    if n >= 2:
        ap_text = (f"top-weighted agreement τ_AP at {lowest:g}% is highest for {_and(ap_groups[0])} "
                   f"({', '.join(f'{m} {_spread(ap_stats, m)}' for m in ap_groups[0])})"
                   if len(ap_groups) > 1 else
                   f"top-weighted agreement τ_AP at {lowest:g}% does not separate the measures "
                   f"({ap_stats['mean'].min():.3f}–{ap_stats['mean'].max():.3f})")
        rms_text = (f"the mean values moved least for {_and(rms_groups[0])} (RMS "
                    f"{', '.join(f'{m} {_spread(rms_stats, m, 4)}' for m in rms_groups[0])} from the "
                    f"full-judgment means)" if len(rms_groups) > 1 else
                    "the RMS distance of the means from the full-judgment ones does not separate the measures")
        lines.append(ap_text[0].upper() + ap_text[1:] + "; " + rms_text + ".")
    if "pools" in tables:
        pools = tables["pools"]
        parts = []
        for depth, part in pools[pools["method"] == "tau_b"].groupby("depth", sort=True):
            share = info["pool_share"][depth]
            shown = part.sort_values("value", ascending=False, kind="stable")
            parts.append(f"depth {depth} ({share:.0f}% of the judgments): "
                         + ", ".join(f"{m} {v:.3f}" + (" (by construction)" if c else " (identical values)" if i else "")
                                     for m, v, c, i in zip(shown["measure"], shown["value"], shown["by_construction"],
                                                           shown["identical"])))
        lines.append(
            "τ_b with depth-k pools of all the runs (every evaluated run contributed to the pool; one qrels per "
            "depth, so no sampling noise to rank the measures by; 'identical values': every per-topic value "
            "equals the full-judgment one on these data): " + "; ".join(parts) + "."
        )
        built = pools[pools["by_construction"] & (pools["method"] == "tau_b")]
        if not built.empty:
            cases = ", ".join(f"{m} at depth {', '.join(map(str, sorted(g['depth'])))}"
                              for m, g in built.groupby("measure", sort=False))
            lines.append(
                f"True by construction: {cases}. The pool judges every document in the top k of every run, "
                "and these measures look at no document below their cut-off, so their values equal the "
                "full-judgment ones and τ = 1 says nothing about robustness."
            )
    ties = _identical_but_tau_ap_below_one(tables)
    if ties:
        lines.append(
            "τ_AP is below 1 for rankings identical to the full-judgment one (τ_b = 1): "
            + ", ".join(ties)
            + ". τ_AP counts runs with tied mean scores as ordered at random (its expected value over "
            "tie-breaks; the paper defines no ties), so tied runs lower it even when both rankings tie them alike."
        )
    if "partial" in tables:
        part = tables["partial"][tables["partial"]["method"] == "tau_b"].sort_values("value", ascending=False,
                                                                                    kind="stable")
        lines.append(
            f"τ_b with the real partial qrels ({info['partial_judgments']} judgments, "
            f"{info['partial_share']:.0f}% of the {info['judgments']} final ones; one snapshot, so no sampling "
            "noise to rank the measures by): "
            + ", ".join(f"{m} {v:.3f}" for m, v in zip(part["measure"], part["value"])) + "."
        )
    power = tables["discriminative_power"]
    b, w = _best_worst(power, "power")
    lines.append(
        f"On the full judgments, {_names(power, 'power', b['power'])} had the highest discriminative power "
        f"({b['label']}) and {_names(power, 'power', w['power'])} the lowest ({w['label']}), "
        f"by a paired bootstrap test with B = {int(b['B'])} at α = {b['alpha']:g}."
    )
    if "tukey_hsd" in tables:
        tukey = tables["tukey_hsd"]
        lines.append(
            "Keeping the family-wise error of all run pairs at 0.05 (randomised Tukey HSD), "
            + ", ".join(f"{r.measure} separates {int(r.significant)}/{int(r.pairs)} pairs" for r in tukey.itertuples())
            + "."
        )
    return lines


# ---------------------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------------------


def _identical_but_tau_ap_below_one(tables: dict) -> list[str]:
    """Where tau_b = 1 (same ranking, same ties) but tau_AP < 1: "measure at <variant> (tau_AP)"."""
    found = []
    for name, key in (("pools", "depth"), ("partial", None), ("robustness_samples", "level")):
        if name not in tables:
            continue
        frame = tables[name]
        keys = ["measure"] + ([key] if key else []) + (["sample"] if "sample" in frame.columns else [])
        wide = frame.pivot_table(index=keys, columns="method", values="value", aggfunc="first").reset_index()
        if not {"tau_b", "tau_ap"} <= set(wide.columns):
            continue
        hits = wide[(wide["tau_b"] >= 1 - 1e-12) & (wide["tau_ap"] < 1 - 1e-12)]
        where = {"pools": "depth {}", "partial": "the partial qrels", "robustness_samples": "{}%"}[name]
        for row in hits.drop_duplicates(["measure"] + ([key] if key else [])).itertuples(index=False):
            place = where.format(getattr(row, key)) if key else where
            found.append(f"{row.measure} at {place} (τ_AP {row.tau_ap:.3f})")
    return found


#: measures whose value at cut-off k depends on the judgments of the top k documents alone (no
#: R, no ideal list): a depth-k' pool with k' >= k judges all they look at
TOP_K_ONLY = ("P", "RR", "Judged")


def _by_construction(pooled: pd.DataFrame, full: pd.DataFrame) -> pd.DataFrame:
    """Per (measure, depth): ``identical`` (values equal the full-judgment ones for every run and
    topic) and ``by_construction`` (identical, and the measure is one of :data:`TOP_K_ONLY`
    with a cut-off no larger than the depth, so the pool judges every document it looks at)."""
    keys = ["run", "query_id", "measure"]
    both = pooled.merge(full[keys + ["value"]], on=keys, suffixes=("", "_full"), how="left")
    same = both.assign(same=both["value"] == both["value_full"]).groupby(["measure", "depth"])["same"].all()
    out = same.rename("identical").reset_index()
    parsed = out["measure"].map(parse_measure)
    cutoff = parsed.map(lambda m: m.cutoff if m.spec.name in TOP_K_ONLY else None).astype(float)
    out["by_construction"] = out["identical"] & cutoff.notna() & (cutoff <= out["depth"])
    return out


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
    beside it (:func:`pdeval.evaluation.bounds` on the full judgments: unjudged retrieved documents
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
        from pdeval.datasets import load

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
    means = summarize(full)
    wide = means.pivot(index="run", columns="measure", values="value")[measures]
    if bounds:
        from pdeval.evaluation.bounds import bounds as bounds_of, summarize_bounds

        results["full_bounds"] = bounds_of(run, qrels, measures, complete=True)
        wide = summarize_bounds(results["full_bounds"], wide=True).set_index("run")
    # no columns name: it would show as a spurious empty "measure" column in the HTML table
    tables["full_means"] = wide.sort_values(measures[0], ascending=False).rename_axis(columns=None).reset_index()
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
        tables["pools"] = pools.merge(_by_construction(pooled, full), on=["measure", "depth"], how="left")
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
    tables["tukey_hsd"] = _tukey_summary(full, B, seed)
    bar.update()

    stage(stages[5])
    c = max(1, n_topics // 2)
    swaps = swap_rates(full, c=c, trials=swap_trials, seed=seed, progress=False)
    tables["swap_rates"] = swaps.summary
    bar.update()

    tables["summary"] = _summary(measures, tables["robustness"], samples_table, tables.get("pools"),
                                 tables.get("partial"), power)

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
    colours = plotting.measure_palette(measures)  # one colour per measure in every figure
    _save(plotting.robustness_curve(samples_table, methods=["tau_b", "tau_ap"], measures=measures, palette=colours),
          out / "robustness.png", dpi)
    _save(plotting.mean_by_level(reduced, measures=measures, palette=colours), out / "mean_by_level.png", dpi)
    _save(plotting.estimated_vs_actual(reduced[reduced["level"] == lowest], full, palette=colours),
          out / "estimated_vs_actual.png", dpi)
    if depths:
        _save(plotting.robustness_curve(tables["pools"], x="depth", methods=["tau_b", "tau_ap"], measures=measures,
                                        palette=colours), out / "pools.png", dpi)
    _save(plotting.discriminative_power_bars(power, palette=colours), out / "discriminative_power.png", dpi)
    _save(plotting.swap_rate_curve(swaps.bins, measures=measures, palette=colours), out / "swap_rates.png", dpi)
    _save(plotting.correlation_heatmap(tables["measure_correlation"].set_index("reference")),
          out / "measure_correlation.png", dpi)
    _save(plotting.topic_distributions(full, measures[0], palette=colours), out / "topic_distributions.png", dpi)
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
    from pdeval.sources.io import read_qrels, read_run

    if (args.qrels is None) != (args.runs is None):
        raise PdevalError("give both --qrels and --runs, or neither (the bundled clef2018 data)")
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
