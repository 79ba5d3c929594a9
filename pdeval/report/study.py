"""``pdeval report``: the whole incomplete-judgments study in one call, written to a folder.

:func:`report` evaluates the runs on the full judgments, on stratified reductions of them
(Sakai 2007's levels, several samples each), on depth-k pools and on a real partial qrels
snapshot; compares every system ranking with the full-judgment one (Kendall's tau_b, tau_AP,
RMS); measures discriminative power and swap rates on the full judgments; and writes CSV
tables, PNG figures, ``report.md`` and a standalone ``report.html`` (figures embedded) that
says in words which measures held their ranking best. This module computes the tables;
:mod:`pdeval.report.findings` words them (a measure is ranked above another only beyond the
sampling noise, :data:`NOISE_Z` standard errors) and :mod:`pdeval.report.render` draws the
figures and writes the documents.
"""

from __future__ import annotations

import argparse
import time
import warnings
from pathlib import Path
from typing import Iterable, Optional, Sequence, Union

import pandas as pd

from pdeval.analysis.rankings.correlation import correlation_table, rank_correlation
from pdeval.evaluation.results import summarize
from pdeval.analysis.statistics.bootstrap import discriminative_power
from pdeval.analysis.statistics.swaps import swap_rates
from pdeval.common.contract import (
    Boolean, Choice, FilePath, Instance, Integer, ListOf, Nullable, OneOf, Real, Text, contract,
)
from pdeval.errors import MeasureError, PdevalError, PdevalWarning
from pdeval.frames.domains import Frame
from pdeval.evaluation.core import evaluate
from pdeval.judgments.pooling import pool
from pdeval.judgments.reduction import LEVEL_GRIDS, reduce
from pdeval.measures import Measure, parse as parse_measure
from pdeval.report.findings import NOISE_Z, RULE, findings, ranked_groups, separation
from pdeval.report.render import TABLES, compact_tables, draw_figures, write_html, write_markdown

__all__ = ["DEFAULT_MEASURES", "NOISE_Z", "RULE", "TABLES", "findings", "report", "report_from_args", "separation"]

#: the measures studied by default (unregistered ones are skipped with a warning)
DEFAULT_MEASURES = ("AP", "Bpref", "infAP", "AP'", "Q'", "nDCG'", "nDCG@10", "P@10")
#: the statistics comparing each ranking with the full-judgment ranking
METHODS = ("tau_b", "tau_ap", "rms")
#: the stages the progress bar names
STAGES = ("full judgments", "reduced judgments", "pools", "partial qrels", "discriminative power",
          "swap rates", "figures", "writing")


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
    groups = ranked_groups(table[f"tau_b@{lowest}%"], separation(at))
    rank = {m: number for number, group in enumerate(groups, start=1) for m in group}
    table.insert(0, "rank", pd.Series(rank).reindex(table.index).astype(int))
    order = table.assign(_mean=-table[f"tau_b@{lowest}%"]).sort_values(["rank", "_mean"], kind="stable")
    return order.drop(columns="_mean").reset_index()


def _tukey_summary(full: pd.DataFrame, n_resamples: int, seed: int) -> pd.DataFrame:
    """Per measure: pairs significant by the randomised Tukey HSD, its threshold, and V_E."""
    from pdeval.analysis.statistics import anova, tukey_hsd

    pairs = tukey_hsd(full, n_resamples=n_resamples, seed=seed, progress=False)
    table = pairs.groupby("measure", sort=False).agg(
        pairs=("significant", "size"), significant=("significant", "sum"), hsd=("hsd", "first"))
    table["share"] = table["significant"] / table["pairs"]
    variance = anova(full).summary.set_index("measure")["residual_variance"]
    return table.join(variance).reset_index()


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


# ---------------------------------------------------------------------------------------
# the study
# ---------------------------------------------------------------------------------------


@contract(
    run=Nullable(Frame("run")),
    qrels=Nullable(Frame("qrels")),
    partial_qrels=Nullable(Frame("qrels")),
    levels=OneOf(Choice(*LEVEL_GRIDS), ListOf(Real(0, 100, closed="right"), lone=False)),
    samples=Integer(1),
    measures=ListOf(OneOf(Text("a measure string"), Instance((Measure,), "a Measure"))),  # unknown ones are skipped
    pool_depths=Nullable(ListOf(Integer(1), min_len=0, unique=True)),
    seed=Integer(0),
    out=FilePath(),
    progress=Nullable(Boolean()),
    n_resamples=Integer(1),
    dpi=Integer(1),
    bounds=Boolean(),
    estimate=Boolean(),
    remedies={"pool_depths": "pool depths are whole numbers of documents, e.g. [10, 20, 50]"},
)
def report(
    run: Optional[pd.DataFrame] = None,
    qrels: Optional[pd.DataFrame] = None,
    *,
    partial_qrels: Optional[pd.DataFrame] = None,
    levels: Union[str, Sequence[float]] = "sakai2007",
    samples: int = 10,
    measures: Sequence[str] = DEFAULT_MEASURES,
    pool_depths: Optional[Sequence[int]] = (10, 20, 50),
    seed: int = 1,
    out: Union[str, Path] = "report",
    progress: Optional[bool] = None,
    n_resamples: int = 1000,
    dpi: int = 110,
    bounds: bool = False,
    estimate: bool = False,
) -> dict[str, pd.DataFrame]:
    """Run the whole robustness study and write its report to the folder ``out``.

    Without ``run`` and ``qrels`` the bundled ``clef2018`` data are used (with its partial
    qrels). Steps: evaluate ``measures`` (complete=True) on the full judgments; reduce the
    judgments with :func:`pdeval.reduce` (stratified, ``levels`` x ``samples``, ``seed``) and
    evaluate every variant in one call; do the same for depth-k pools of all runs
    (``pool_depths``, one call) and for ``partial_qrels``; compare each system ranking with the
    full-judgment one (tau_b, tau_AP, RMS; :func:`pdeval.rank_correlation`); measure
    discriminative power (``n_resamples`` bootstrap replicates) and swap rates (``n_resamples``
    splits of the topics in two halves) on the full judgments; the randomised Tukey HSD test
    draws ``n_resamples`` permutations.

    Writes the CSV tables of :data:`TABLES`, PNG figures, ``report.md`` and a standalone
    ``report.html``. With ``bounds`` the table of run means has each measure's residual
    beside it (:func:`pdeval.evaluation.bounds` on the full judgments: unjudged retrieved documents
    relevant at the top grade) and a figure shows the [low, high] intervals. With ``estimate``
    a table gives each run's mean beside its bootstrap estimate with a 95 % interval
    (:func:`pdeval.estimate`, ``n_resamples`` draws, for the measures it supports) and a figure
    shows them sorted. Returns the tables plus the per-topic results (``full``, ``reduced``,
    ``pooled``, ``partial_result``) as a dict of frames. ``progress`` shows a tqdm bar over
    the stages and prints where the report is (None, the default: on a terminal or in a
    notebook only; True or False force it).
    """
    from pdeval.common.progress import bar_class, tqdm_options

    tqdm = bar_class()
    options = tqdm_options(progress)

    started = time.perf_counter()
    run, qrels, partial_qrels, source = _data(run, qrels, partial_qrels)
    measures = _measures(measures)
    depths = sorted(pool_depths or [])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    bar = tqdm(total=len(STAGES), desc="pdeval report", disable=options["disable"], unit="stage")
    tables: dict[str, pd.DataFrame] = {}
    results: dict[str, pd.DataFrame] = {}
    info = {"judgments": int((qrels["relevance"] >= 0).sum())}
    steps = [
        lambda: _full_judgments(run, qrels, measures, bounds, tables, results),
        lambda: _reductions(run, qrels, measures, levels, samples, seed, tables, results),
        lambda: _pools(run, qrels, measures, depths, tables, results, info),
        lambda: _partial(run, partial_qrels, measures, tables, results, info),
        lambda: _discriminative_power(results["full"], n_resamples, seed, tables),
    ]
    for name, step in zip(STAGES, steps):
        bar.set_postfix_str(name)
        step()
        bar.update()
    bar.set_postfix_str(STAGES[5])
    n_topics = results["full"]["query_id"].nunique()
    half = max(1, n_topics // 2)
    swaps = swap_rates(results["full"], c=half, n_resamples=n_resamples, seed=seed, progress=False)
    tables["swap_rates"] = swaps.summary
    bar.update()
    tables["summary"] = _summary(measures, tables["robustness"], tables["robustness_samples"], tables.get("pools"),
                                 tables.get("partial"), tables["discriminative_power"])

    if estimate:
        _estimates(run, qrels, measures, n_resamples, seed, tables)
    bar.set_postfix_str(STAGES[6])
    figures = draw_figures(out, tables=tables, results=results, swap_bins=swaps.bins, measures=measures,
                           n_resamples=n_resamples, half=half, dpi=dpi)
    bar.update()

    bar.set_postfix_str(STAGES[7])
    for name, frame in tables.items():
        frame.to_csv(out / f"{name}.csv", index=False)
    intro = _intro(source, run, n_topics, info, measures, results["reduced_qrels"], samples, seed, depths,
                   partial_qrels is not None)
    _write(out, intro, findings(tables, info), figures, tables, info, measures)
    bar.update()
    bar.close()
    if not options["disable"]:
        print(f"pdeval report: wrote {out / 'report.html'} (and report.md, {len(figures)} figures, "
              f"{len(tables)} CSV tables) in {time.perf_counter() - started:.1f} s")
    del results["reduced_qrels"]
    return {**tables, **results}


def _data(run, qrels, partial_qrels) -> tuple:
    """(run, qrels, partial qrels, words for the source): the bundled clef2018 data when
    neither ``run`` nor ``qrels`` is given."""
    if (run is None) != (qrels is None):
        raise PdevalError("pdeval report: give both runs and qrels, or neither (bundled clef2018 data)")
    if run is not None:
        return run, qrels, partial_qrels, "your runs and qrels"
    from pdeval.datasets import load

    data = load("clef2018")
    partial_qrels = data.partial_qrels if partial_qrels is None else partial_qrels
    return data.runs, data.qrels, partial_qrels, f"the bundled clef2018 data ({data.description})"


def _full_judgments(run, qrels, measures: list[str], bounds: bool, tables: dict, results: dict) -> None:
    """The full-judgment results, the run means (with residuals when ``bounds``) and the
    correlation of the measures' rankings."""
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
    tables["measure_correlation"] = correlation_table(full, methods="tau_b", measures=measures).reset_index()


def _estimates(run, qrels, measures: list[str], n_resamples: int, seed: int, tables: dict) -> None:
    """Each run's mean of the measures :func:`pdeval.estimate` supports, beside its bootstrap
    estimate and 95 % interval on the full judgments."""
    from pdeval.analysis.estimates.core import estimate
    from pdeval.analysis.estimates.resampled import SUPPORTED
    from pdeval.measures import parse

    chosen = [m for m in measures if parse(m).name in SUPPORTED and not parse(m).judged_only]
    if not chosen:
        warnings.warn(f"--estimate: none of {measures} can be estimated (supported: {', '.join(SUPPORTED)})",
                      PdevalWarning)
        return
    frame = estimate(run, qrels, chosen, n_resamples=n_resamples, seed=seed, per="run", progress=False)
    tables["estimates"] = frame.sort_values(["measure", "estimate"], ascending=[True, False]).reset_index(drop=True)


def _reductions(run, qrels, measures, levels, samples: int, seed: int, tables: dict, results: dict) -> None:
    """Stratified reductions: every (level, sample) variant evaluated in one call and compared
    with the full-judgment rankings."""
    reduced_qrels = reduce(qrels, levels, method="stratified", samples=samples, seed=seed)
    results["reduced_qrels"] = reduced_qrels
    results["reduced"] = evaluate(run, reduced_qrels, measures, complete=True)
    samples_table = rank_correlation(results["reduced"], results["full"], methods=METHODS)
    tables["robustness_samples"] = samples_table
    tables["robustness"] = _aggregate(samples_table, "level")


def _pools(run, qrels, measures, depths: list[int], tables: dict, results: dict, info: dict) -> None:
    """Depth-k pools of all runs, evaluated in one call; results true by construction marked."""
    if not depths:
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PdevalWarning)  # pooled but unjudged documents stay absent
        pooled_qrels = pool(run, pool_depths=depths, qrels=qrels)
    info["pool_share"] = _judged_share(pooled_qrels, qrels, "depth").to_dict()
    pooled = evaluate(run, pooled_qrels, measures, complete=True)
    results["pooled"] = pooled
    pools = rank_correlation(pooled, results["full"], methods=METHODS)
    pools["judged_pct"] = pools["depth"].map(info["pool_share"])
    tables["pools"] = pools.merge(_by_construction(pooled, results["full"]), on=["measure", "depth"], how="left")


def _partial(run, partial_qrels, measures, tables: dict, results: dict, info: dict) -> None:
    """The real partial qrels, compared with the full-judgment rankings."""
    if partial_qrels is None:
        return
    partial_result = evaluate(run, partial_qrels, measures, complete=True)
    results["partial_result"] = partial_result
    tables["partial"] = rank_correlation(partial_result, results["full"], methods=METHODS)
    info["partial_judgments"] = int((partial_qrels["relevance"] >= 0).sum())
    info["partial_share"] = 100.0 * info["partial_judgments"] / info["judgments"]


def _discriminative_power(full: pd.DataFrame, n_resamples: int, seed: int, tables: dict) -> None:
    tables["discriminative_power"] = discriminative_power(full, n_resamples=n_resamples, seed=seed, progress=False).summary
    tables["tukey_hsd"] = _tukey_summary(full, n_resamples, seed)


def _intro(source: str, run, n_topics: int, info: dict, measures, reduced_qrels, samples: int, seed: int,
           depths: list[int], partial: bool) -> list[str]:
    """The lines under the title: the data, the measures and the judgment sets compared."""
    level_list = ", ".join(f"{v:g}%" for v in pd.unique(reduced_qrels["level"]))
    return [
        f"Data: {source}.",
        f"{run['run'].nunique()} runs, {n_topics} topics, {info['judgments']} judgments; "
        f"measures: {', '.join(measures)}.",
        f"Stratified reductions to {level_list} of the judgments, {samples} sample(s) per level (seed {seed})"
        + (f"; depth-{', '.join(map(str, depths))} pools of all runs" if depths else "")
        + ("; the partial qrels given" if partial else "") + ".",
        "Every ranking is compared with the full-judgment ranking of the same measure (τ_b, τ_AP, RMS).",
    ]


def _write(out: Path, intro: list[str], lines: list[str], figures: dict, tables: dict, info: dict,
           measures: list[str]) -> None:
    """report.md and report.html, with the tables of :data:`TABLES` in compact form."""
    shown = compact_tables({name: tables[name] for name in TABLES if name in tables}, info.get("pool_share"), measures)
    title = "pdeval report: how measures hold up with incomplete judgments"
    write_markdown(out / "report.md", title, intro, lines, figures, shown)
    write_html(out / "report.html", out, title, intro, lines, figures, shown)


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
        progress=not args.no_progress, pool_depths=args.depths, n_resamples=args.bootstrap, bounds=args.bounds,
        estimate=args.estimate,
    )
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print("Per-run means on the full judgments:")
        print(tables["full_means"].round(4).to_string(index=False))
        print()
        print(tables["summary"].round(3).to_string(index=False))
    if args.no_progress:
        print(f"pdeval report: wrote {Path(args.out) / 'report.html'}")
    return 0
