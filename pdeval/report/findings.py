"""The words of ``pdeval report``: its findings, every number read from the computed tables.

The text claims only what the tables support:

* a measure is ranked above another only when the mean of their paired per-sample
  differences exceeds the sampling noise, :data:`NOISE_Z` standard errors (see
  :func:`separation`); otherwise the two are called indistinguishable, and the spread over
  the samples is shown;
* comparisons made on one qrels (depth-k pools, the partial qrels) have no sampling noise to
  measure and rank nothing: their values are reported;
* a pool result that is true by construction is marked as such;
* where tau_AP < 1 for a ranking identical to the full-judgment one, the text says that
  tau_AP counts tied runs as randomly ordered.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd

__all__ = ["NOISE_Z", "RULE", "findings", "ranked_groups", "separation"]

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


def ranked_groups(means: pd.Series, pairs: pd.DataFrame, higher_is_better: bool = True) -> list[list[str]]:
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
    groups = ranked_groups(stats["mean"], separation(at), higher_is_better)
    return groups, stats


def _spread(stats: pd.DataFrame, measure: str, digits: int = 3) -> str:
    row = stats.loc[measure]
    if row["count"] < 2:
        return f"{row['mean']:.{digits}f}"
    return (f"{row['mean']:.{digits}f} ± {row['std']:.{digits}f} "
            f"(range {row['min']:.{digits}f}–{row['max']:.{digits}f})")


def findings(tables: dict, info: dict) -> list[str]:
    """The report's statements in plain words, every number read from ``tables``.

    Rankings of measures follow :data:`RULE` (paired per-sample differences against the
    sampling noise); single-qrels comparisons (pools, partial qrels) rank nothing.

    Parameters
    ----------
    tables : dict of DataFrame
        The tables of :func:`pdeval.report.study.report` (``robustness``,
        ``robustness_samples`` and ``discriminative_power`` at least; ``pools``, ``partial``
        and ``tukey_hsd`` when present).
    info : dict
        Counts the text quotes: ``judgments``, ``pool_share`` (depth -> % judged),
        ``partial_judgments`` and ``partial_share``.

    Returns
    -------
    list of str
        One statement per line.
    """
    lines = _robustness_lines(tables)
    if "pools" in tables:
        lines += _pool_lines(tables["pools"], info)
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
    return lines + _significance_lines(tables)


def _robustness_lines(tables: dict) -> list[str]:
    """The statements on the stratified reductions at the smallest level: which measures kept
    the ranking best (tau_b), their groups under the rule, and tau_AP and RMS."""
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
        return lines
    if len(groups) == 1:
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
    lines.append(
        f"Measures by mean τ_b at {lowest:g}% ('>' separates groups that differ by more than the "
        f"sampling noise, '≈' joins indistinguishable ones): "
        + " > ".join(" ≈ ".join(f"{m} {stats.loc[m, 'mean']:.3f}" for m in group) for group in groups)
        + ". " + RULE
    )
    return lines + [_tau_ap_and_rms_line(samples_table, lowest)]


def _tau_ap_and_rms_line(samples_table: pd.DataFrame, lowest: float) -> str:
    """Which measures tau_AP puts first and whose means moved least (RMS), under the rule."""
    ap_groups, ap_stats = _ranked_statement(samples_table, "tau_ap", lowest)
    rms_groups, rms_stats = _ranked_statement(samples_table, "rms", lowest, higher_is_better=False)
    ap_text = (f"top-weighted agreement τ_AP at {lowest:g}% is highest for {_and(ap_groups[0])} "
               f"({', '.join(f'{m} {_spread(ap_stats, m)}' for m in ap_groups[0])})"
               if len(ap_groups) > 1 else
               f"top-weighted agreement τ_AP at {lowest:g}% does not separate the measures "
               f"({ap_stats['mean'].min():.3f}–{ap_stats['mean'].max():.3f})")
    rms_text = (f"the mean values moved least for {_and(rms_groups[0])} (RMS "
                f"{', '.join(f'{m} {_spread(rms_stats, m, 4)}' for m in rms_groups[0])} from the "
                f"full-judgment means)" if len(rms_groups) > 1 else
                "the RMS distance of the means from the full-judgment ones does not separate the measures")
    return ap_text[0].upper() + ap_text[1:] + "; " + rms_text + "."


def _pool_lines(pools: pd.DataFrame, info: dict) -> list[str]:
    """tau_b per depth-k pool (values only: one qrels per depth) and the results true by construction."""
    parts = []
    for depth, part in pools[pools["method"] == "tau_b"].groupby("depth", sort=True):
        share = info["pool_share"][depth]
        shown = part.sort_values("value", ascending=False, kind="stable")
        parts.append(f"depth {depth} ({share:.0f}% of the judgments): "
                     + ", ".join(f"{m} {v:.3f}" + (" (by construction)" if c else " (identical values)" if i else "")
                                 for m, v, c, i in zip(shown["measure"], shown["value"], shown["by_construction"],
                                                       shown["identical"])))
    lines = [
        "τ_b with depth-k pools of all the runs (every evaluated run contributed to the pool; one qrels per "
        "depth, so no sampling noise to rank the measures by; 'identical values': every per-topic value "
        "equals the full-judgment one on these data): " + "; ".join(parts) + "."
    ]
    built = pools[pools["by_construction"] & (pools["method"] == "tau_b")]
    if not built.empty:
        cases = ", ".join(f"{m} at depth {', '.join(map(str, sorted(g['depth'])))}"
                          for m, g in built.groupby("measure", sort=False))
        lines.append(
            f"True by construction: {cases}. The pool judges every document in the top k of every run, "
            "and these measures look at no document below their cut-off, so their values equal the "
            "full-judgment ones and τ = 1 says nothing about robustness."
        )
    return lines


def _significance_lines(tables: dict) -> list[str]:
    """Discriminative power (best and worst) and the pairs the randomised Tukey HSD separates."""
    power = tables["discriminative_power"]
    b, w = _best_worst(power, "power")
    lines = [
        f"On the full judgments, {_names(power, 'power', b['power'])} had the highest discriminative power "
        f"({b['label']}) and {_names(power, 'power', w['power'])} the lowest ({w['label']}), "
        f"by a paired bootstrap test with B = {int(b['n_resamples'])} at α = {b['alpha']:g}."
    ]
    if "tukey_hsd" in tables:
        tukey = tables["tukey_hsd"]
        lines.append(
            "Keeping the family-wise error of all run pairs at 0.05 (randomised Tukey HSD), "
            + ", ".join(f"{r.measure} separates {int(r.significant)}/{int(r.pairs)} pairs" for r in tukey.itertuples())
            + "."
        )
    return lines


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
