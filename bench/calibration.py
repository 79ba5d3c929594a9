"""Calibration of ``estimate``'s intervals on collections it was not tuned on (leave one collection out).

Run: ``.venv/bin/python bench/calibration.py [--resamples 200] [--collections ...] [--out bench/calibration]``.

A new system meeting an old pool, mimicked on CLEF eHealth 2015 (the pooled runs 1-3 of each
team), 2016, 2018 and TREC DL 2021 (every run pooled), pool depth 10: each team in turn is left
out of the pool (its unique documents, those only its runs brought into the top-10 pool, are
removed from the qrels, as :func:`pdeval.leave_out_pooling`), and its runs are scored against
the pool of the others on the topics whose top 10 the full qrels judge. The truth of a run is its
mean value with the qrels of the others plus the labels of its own top 10 (the score it would
get had its unjudged documents been judged). Only runs meeting unjudged documents in their top
10 count.

For every prior (``pool``, ``run``, ``both``, ``condensed``, ``unique``) the run effect of
:mod:`pdeval.analysis.estimates.run_effects` (``estimate(..., shift=μ, spread=σ)``, a shift μ and a
mean-preserving spread σ on the log-odds of the unjudged documents' relevant share) is chosen for
each held-out collection on the OTHER collections only: first μ, the grid value with the smallest
worst ratio (over the collections and measures) of the estimate's MAE to the condensed value's at
σ = 0 (``--grid-resamples`` draws), then the smallest σ of the grid whose 95 % intervals of run means cover the truth for >= ``--target`` of
the runs on every measure of every other collection at that μ (the largest σ if none does). The
held-out collection is then scored at that (μ, σ) with ``--resamples`` draws. The layout and prior
of every left-out team are built once (checked against ``estimate`` itself) and only the draws repeat.

The table reports per held-out collection, measure and prior: runs, the mean share of unjudged
documents in their top 10, coverage, mean width, the estimate's MAE, the condensed value's, and the
paired difference of the absolute errors (estimate − condensed: mean and standard error over runs),
with ``no_worse``: "strictly" (difference <= 0), "within noise" (<= 1.96 SE) or "worse". The
(μ, σ) chosen on all collections are ``run_effects.SETTINGS`` (``spread="auto"``, the default) and
the held-out coverage ``run_effects.COVERAGE`` (printed as code). Out of the study, CLEF 2018's
partial qrels (72 % of the final pairs) are scored with ``estimate``'s defaults (truth: the final
qrels, or the snapshot plus the run's own top 10 judged), and every prior at its ``spread="auto"``
setting on a collection the study never saw (:func:`unseen_check`): SynDL's GPT-4 labels of the
depth-10 pool of all 63 TREC DL 2021 runs on the 424 queries NIST did not judge (other topics,
another assessor), each team left out of that pool in turn as in the study.

Writes ``<out>.csv`` (one row per run, measure and prior held out), ``<out>_grid.csv`` (the grid
table), ``<out>_choices.csv`` and ``<out>.md``. Without ``../shared/data`` it says so and stops.
``--fast`` runs two teams of two collections with 12/20 draws (a smoke test). ``--windows 10,20`` adds the run
prior over the judged documents within 10 or 20 ranks of the unjudged one (``estimate(window=)``) as priors
of the study.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
DATA = HERE.parent.parent / "shared" / "data"
MEASURES = ["P@10", "nDCG@10", "AP@10", "RBP@10"]
#: the priors of the study: name -> (``estimate``'s prior, its window); ``--windows 10,20`` adds "run:10"
#: and "run:20", the run prior over the judged documents within 10 or 20 ranks of the unjudged one
PRIORS = {"pool": ("pool", None), "run": ("run", None), "both": ("both", None), "condensed": ("condensed", None),
          "unique": ("unique", None)}
SHIFTS = (-2.0, -1.5, -1.0, -0.75, -0.5, -0.25, 0.0, 0.25, 0.5)
SPREADS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
DEPTH = 10
#: a collection the study never uses to choose anything: other topics, another assessor
UNSEEN = "SynDL DL 2021"
DL21_TEAMS = ("Fast_Forward", "NLE", "TUW", "WLU", "bcai", "ielab", "ihsm", "mono", "pash", "pass", "paug",
              "uogTr", "watp", "yorku", "top1000")


def _number(name: str) -> int:
    found = re.search(r"\.(\d+)", name)
    return int(found.group(1)) if found else 0


def _team21(name: str) -> str:
    name = name.replace("bl_bcai", "bcai")
    return next((p for p in DL21_TEAMS if name.startswith(p)), name.split("_")[0])


def load(name: str):
    """(runs, qrels, team of a run, pooled run names) of a collection."""
    import pdeval

    if name == "CLEF 2015":
        folder = DATA / "clef2015-chs-task2"
        runs = pdeval.read_run(sorted((folder / "runs").glob("*.gz")))
        qrels = pdeval.read_qrels(folder / "qrels" / "qrels.eng.clef2015.qtest.graded.txt")
        team = lambda run: re.split(r"_EN_|_run", run, flags=re.I)[0]  # noqa: E731
        pooled = [n for n in runs["run"].unique() if _number(n) in (1, 2, 3)]
    elif name in ("CLEF 2016", "CLEF 2018"):
        folder = DATA / ("clef2016-chs-task2" if name == "CLEF 2016" else "clef2018-chs-task1")
        runs = pdeval.read_run(sorted((folder / "runs").glob("*.gz")), duplicates="first")
        qrels = pdeval.read_qrels(folder / "qrels.txt")
        team = (lambda run: run.split("_EN_")[0]) if name == "CLEF 2016" else (lambda run: run.split("__")[0])
        pooled = list(runs["run"].unique())
    elif name in ("TREC DL 2021", UNSEEN):
        folder = DATA / "trec-dl21"
        runs = pdeval.read_run(sorted((folder / "runs").glob("*.gz")))
        qrels = pdeval.read_qrels(folder / "qrels-pass.dl21.human.txt")
        if name == UNSEEN:  # SynDL's GPT-4 labels of the depth-10 pool of every run, on the other 424 queries
            human = set(qrels["query_id"].astype(str))
            qrels = pdeval.read_qrels(folder / "gpt4_judgments" / "gpt4_judgments_dl2021_processed.txt")
            qrels = qrels[~qrels["query_id"].astype(str).isin(human)].reset_index(drop=True)  # disjoint: a guard
        team, pooled = _team21, list(runs["run"].unique())
    else:
        raise ValueError(f"unknown collection {name!r}")
    judged_topics = set(qrels.loc[qrels["relevance"] >= 0, "query_id"].astype(str))
    runs = runs[runs["query_id"].astype(str).isin(judged_topics)]
    return runs, qrels, team, sorted(pooled)


def left_out_qrels(top: pd.DataFrame, qrels: pd.DataFrame) -> dict:
    """team -> the qrels without the documents only that team brought into the pool ``top``."""
    owners = top.drop_duplicates(["query_id", "doc_id", "team"])
    counts = owners.groupby(["query_id", "doc_id"])["team"].transform("size")
    unique = owners.loc[counts == 1, ["query_id", "doc_id", "team"]]
    owner = qrels[["query_id", "doc_id"]].merge(unique, on=["query_id", "doc_id"], how="left")["team"].to_numpy()
    return {t: qrels.loc[owner != t].reset_index(drop=True) for t in sorted(top["team"].unique())}


def truth_of(mine: pd.DataFrame, fewer: pd.DataFrame, qrels: pd.DataFrame) -> pd.Series:
    """(run, measure) -> mean value with ``fewer`` plus the labels of the run's own top 10."""
    import pdeval

    parts = []
    for name, one in mine.groupby("run"):  # a few runs per team: each its own qrels
        own = qrels.merge(pdeval.rank_run(one, depth=DEPTH)[["query_id", "doc_id"]], on=["query_id", "doc_id"])
        labels = pd.concat([fewer, own]).drop_duplicates(["query_id", "doc_id"])
        parts.append(pdeval.evaluate(one, labels, MEASURES))
    return pd.concat(parts).groupby(["run", "measure"])["value"].mean()


CHECKED: set = set()  # the priors whose fast path was checked against estimate itself


def prepared(frame, fewer, options):
    """The layout cut at depth 10, the prior of its unjudged rows (before the run effect), their
    runs and the number of runs: what ``estimate(frame, fewer, MEASURES, per="run", **options)``
    builds before it draws, built once per left-out team and prior with the library's own steps."""
    from pdeval.analysis.estimates import core
    from pdeval.frames.canonical import as_run

    run = as_run(frame, duplicates=None)
    lists, keys, _ = core._lay_out(run, fewer, None, "float64", None)
    if options["prior"] == "unique":
        unique = {k: options[k] for k in ("pooled", "pool_depth", "group")}
        probabilities = core._unique_prior(run, fewer, lists, keys, unique)
    else:
        probabilities = core._priors(lists, fewer, None, None, "bootstrap", options["prior"], options.get("window"),
                                     1.0, DEPTH)
    _, run_of_row = core._unjudged_rows(lists, keys)
    n_runs = int(run_of_row.max(initial=-1)) + 1
    cut, probabilities = core._cut(lists, probabilities, DEPTH)
    keep = (lists.position < DEPTH)[lists.unjudged]
    return {"lists": cut, "keys": keys, "prior": probabilities, "run_of_row": run_of_row[keep], "n_runs": n_runs}


def drawn(cache, mu, sigma, n_resamples) -> pd.DataFrame:
    """The run means of one left-out team and prior at (μ, σ): ``estimate``'s draws on the cache."""
    from pdeval.analysis.estimates import core, run_effects
    from pdeval.common.seeds import generator
    from pdeval.measures import parse_all

    base, parsed = cache["prior"], parse_all(MEASURES)
    if (sigma <= 0 and mu == 0) or (sigma <= 0 and not isinstance(base, core.UnitEffect)):
        effect = run_effects.with_spread(base, cache["run_of_row"], sigma, mu)
    else:
        effect = run_effects.LogitEffect(base, cache["run_of_row"], cache["n_runs"], float(mu), float(sigma))
    draws, value = core._draw_values(cache["lists"], effect, parsed, n_resamples, generator(1), False)
    return core._tidy(cache["keys"], parsed, cache["lists"], value, draws, 0.95, "run").assign(shift=mu, spread=sigma)


def checked(cache, frame, fewer, options, n_resamples) -> None:
    """The fast path equals ``estimate`` itself (once per prior, window and process)."""
    import pdeval

    if (options["prior"], options.get("window")) in CHECKED:
        return
    mu, sigma = -0.5, 0.75
    want = pdeval.estimate(frame, fewer, MEASURES, spread=sigma, shift=mu, n_resamples=n_resamples, seed=1,
                           per="run", progress=False, **options)
    got = drawn(cache, mu, sigma, n_resamples)[want.columns]
    pd.testing.assert_frame_equal(want.reset_index(drop=True), got.reset_index(drop=True), check_dtype=False)
    CHECKED.add((options["prior"], options.get("window")))


def one_team(runs, qrels, fewer, team_of, team, pooled, n_resamples):
    """(truth and condensed value per run and measure, {prior: cache}) of one left-out team."""
    import pdeval

    mine = runs[runs["run"].isin([n for n in runs["run"].unique() if team_of(n) == team])]
    complete = pdeval.evaluate(mine, qrels, "Judged@10").query("value == 1")[["run", "query_id"]]
    mine = mine.merge(complete, on=["run", "query_id"])
    judged = pdeval.evaluate(mine, fewer, "Judged@10").groupby("run")["value"].mean()
    holes = judged.index[judged < 1]
    mine = mine[mine["run"].isin(holes)]
    if mine.empty:
        return pd.DataFrame(), {}
    condensed = pdeval.evaluate(mine, fewer, [m.replace("@", "'@") for m in MEASURES])
    condensed = condensed.assign(measure=condensed["measure"].str.replace("'", "", regex=False))
    base = pd.DataFrame({"truth": truth_of(mine, fewer, qrels),
                         "condensed": condensed.groupby(["run", "measure"])["value"].mean()})
    base = base.reset_index().assign(judged_at_10=lambda f: f["run"].map(judged))
    others = [n for n in pooled if team_of(n) != team]
    with_pool = pd.concat([pdeval.rank_run(runs[runs["run"].isin(others)], depth=DEPTH)[
        ["run", "query_id", "doc_id", "score"]], mine])
    caches = {}
    for name, (prior, window) in PRIORS.items():
        options, frame = {"prior": prior}, mine
        if window is not None:
            options["window"] = window
        if prior == "unique":
            options.update(pooled=others, pool_depth=DEPTH, group=team_of)
            frame = with_pool
        caches[name] = prepared(frame, fewer, options)
        checked(caches[name], frame, fewer, options, 50)
    return base[base["run"].isin(holes)], caches


def prepare(collections, teams_limit=None):
    """{(collection, team): (base, caches)} for every left-out team."""
    import pdeval

    out = {}
    for name in collections:
        start = time.perf_counter()
        runs, qrels, team_of, pooled = load(name)
        top = pdeval.rank_run(runs[runs["run"].isin(pooled)], depth=DEPTH)
        top["team"] = top["run"].map({n: team_of(n) for n in top["run"].unique()})
        fewer_of = left_out_qrels(top, qrels)
        teams = sorted(fewer_of)[:teams_limit] if teams_limit else sorted(fewer_of)
        for team in teams:
            base, caches = one_team(runs, qrels, fewer_of[team], team_of, team, pooled, 1)
            if len(base):
                out[(name, team)] = (base, caches)
        print(f"{name}: {len(teams)} teams laid out in {time.perf_counter() - start:.0f} s", flush=True)
    return out


def scored(prepared_teams, settings, n_resamples) -> pd.DataFrame:
    """One row per run, measure, prior and setting: the estimate, its interval, truth, condensed.
    ``settings``: {collection: {prior: [(μ, σ), ...]}}."""
    rows = []
    for (name, team), (base, caches) in prepared_teams.items():
        for prior, pairs in settings.get(name, {}).items():
            for mu, sigma in pairs:
                got = drawn(caches[prior], mu, sigma, n_resamples)
                rows.append(got.merge(base, on=["run", "measure"]).assign(prior=prior, team=team, collection=name))
    return pd.concat(rows, ignore_index=True)


def coverage_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per collection, measure, prior and (μ, σ): runs, coverage, mean width, MAE, condensed MAE and
    the paired difference of the absolute errors (estimate − condensed) with its standard error."""
    rows = rows.assign(covered=(rows["low"] <= rows["truth"] + 1e-12) & (rows["truth"] <= rows["high"] + 1e-12),
                       width=rows["high"] - rows["low"], error=(rows["estimate"] - rows["truth"]).abs(),
                       condensed_error=(rows["condensed"] - rows["truth"]).abs())
    rows["difference"] = rows["error"] - rows["condensed_error"]
    table = rows.groupby(["collection", "measure", "prior", "shift", "spread"], sort=False).agg(
        runs=("run", "size"), unjudged_at_10=("judged_at_10", lambda j: 1.0 - j.mean()), coverage=("covered", "mean"),
        width=("width", "mean"), mae=("error", "mean"),
        mae_condensed=("condensed_error", "mean"), difference=("difference", "mean"),
        sd=("difference", "std")).reset_index()
    table["difference_se"] = table.pop("sd").fillna(0.0) / np.sqrt(table["runs"])
    table["no_worse"] = np.where(table["difference"] <= 0, "strictly",
                                 np.where(table["difference"] <= 1.96 * table["difference_se"], "within noise",
                                          "worse"))
    return table


def chosen_shift(table: pd.DataFrame, prior: str) -> float:
    """The μ of the grid (at σ = 0) with the smallest worst MAE / condensed MAE over ``table``'s
    collections and measures: the target is an error no worse than the condensed value's on every
    collection and measure, not on average."""
    part = table[(table["prior"] == prior) & (table["spread"] == 0)]
    ratio = (part["mae"] / part["mae_condensed"]).groupby(part["shift"]).max()
    return float(ratio.idxmin())


def chosen_spread(table: pd.DataFrame, prior: str, mu: float, target: float) -> float:
    """The smallest σ whose coverage at ``mu`` reaches ``target`` on every collection and measure of
    ``table`` (the largest σ if none does)."""
    part = table[(table["prior"] == prior) & np.isclose(table["shift"], mu)]
    worst = part.groupby("spread")["coverage"].min()
    reached = worst.index[worst >= target]
    return float(reached.min()) if len(reached) else float(worst.index.max())


def study(collections, grid_resamples, final_resamples, target, teams_limit=None):
    """The leave-one-collection-out study: μ chosen at σ = 0 on the other collections, then σ at
    that μ on the other collections (``grid_resamples``), then the held-out collection scored at
    the chosen (μ, σ) with ``final_resamples``. Returns (held-out table, choices, grid table, held-out
    rows: one per run, measure and prior)."""
    teams = prepare(collections, teams_limit)
    names = list(dict.fromkeys(name for name, _ in teams))
    groups = [[n for n in names if n != held] or names for held in names] + [names]  # the others, then all
    start = time.perf_counter()
    first = coverage_table(scored(teams, {n: {p: [(mu, 0.0) for mu in SHIFTS] for p in PRIORS} for n in names},
                                  grid_resamples))
    print(f"shift grid: {time.perf_counter() - start:.0f} s", flush=True)
    mus = {(i, p): chosen_shift(first[first["collection"].isin(g)], p) for i, g in enumerate(groups) for p in PRIORS}
    second = scored(teams, {n: {p: sorted({(mus[(i, p)], s) for i in range(len(groups)) for s in SPREADS if s > 0})
                                for p in PRIORS} for n in names}, grid_resamples)
    grid = pd.concat([first, coverage_table(second)], ignore_index=True).drop_duplicates(
        ["collection", "measure", "prior", "shift", "spread"])
    print(f"spread grid: {time.perf_counter() - start:.0f} s", flush=True)
    choices = []
    for i, group in enumerate(groups):
        held = names[i] if i < len(names) else "(all)"
        for prior in PRIORS:
            sigma = chosen_spread(grid[grid["collection"].isin(group)], prior, mus[(i, prior)], target)
            choices.append({"held_out": held, "prior": prior, "shift": mus[(i, prior)], "spread": sigma})
    choices = pd.DataFrame(choices)
    final = {n: {p: [(c["shift"], c["spread"])] for p, c in choices[choices["held_out"] == n].set_index("prior").iterrows()}
             for n in names}
    rows = scored(teams, final, final_resamples)
    print(f"held-out scoring: {time.perf_counter() - start:.0f} s", flush=True)
    return coverage_table(rows), choices, grid, rows


def snapshot_check(n_resamples, truths=("final", "own"), **options) -> pd.DataFrame:
    """Out of the study: CLEF 2018's partial qrels (a snapshot three days before the final ones,
    72 % of their pairs) as the judgments, every run scored with ``estimate``'s default, on the
    topics whose top 10 the final qrels judge; only runs meeting unjudged documents of the snapshot
    in their top 10 count. One row per truth, run and measure: ``truth_is="final"``, the value with
    the final qrels; ``"own"``, the value with the snapshot plus the final labels of the run's own
    top 10 (what ``estimate`` estimates; the final qrels also raise R with relevant documents outside
    the run's top 10)."""
    import pdeval

    folder = DATA / "clef2018-chs-task1"
    runs = pdeval.read_run(sorted((folder / "runs").glob("*.gz")), duplicates="first")
    final = pdeval.read_qrels(folder / "qrels.txt")
    partial = pdeval.read_qrels(folder / "aux" / "qrels_partial_20180911.txt")
    complete = pdeval.evaluate(runs, final, "Judged@10").query("value == 1")[["run", "query_id"]]
    runs = runs.merge(complete, on=["run", "query_id"])
    judged = pdeval.evaluate(runs, partial, "Judged@10").groupby("run")["value"].mean()
    runs = runs[runs["run"].isin(judged.index[judged < 1])]
    got = pdeval.estimate(runs, partial, MEASURES, per="run", n_resamples=n_resamples, seed=1, progress=False,
                          **options)
    condensed = pdeval.evaluate(runs, partial, [m.replace("@", "'@") for m in MEASURES])
    condensed = condensed.assign(measure=condensed["measure"].str.replace("'", "", regex=False))
    attrs = dict(got.attrs)
    got = got.merge(condensed.groupby(["run", "measure"])["value"].mean().rename("condensed").reset_index(),
                    on=["run", "measure"])
    parts = []
    for truth_is in truths:
        if truth_is == "own":
            truth = truth_of(runs, partial, final)
        else:
            truth = pdeval.evaluate(runs, final, MEASURES).groupby(["run", "measure"])["value"].mean()
        parts.append(got.merge(truth.rename("truth").reset_index(), on=["run", "measure"]).assign(truth_is=truth_is))
    out = pd.concat(parts, ignore_index=True)
    return out.assign(collection="CLEF 2018 snapshot", prior=attrs["prior"], shift=attrs["shift"],
                      spread=attrs["spread"], judged_at_10=out["run"].map(judged))


def unseen_check(n_resamples, names=(UNSEEN,), chosen=None) -> pd.DataFrame:
    """Out of the study: every prior at the (μ, σ) ``spread="auto"`` gives it (``chosen``: {prior:
    (μ, σ)} chosen on the four study collections; ``run_effects.SETTINGS`` if None) on collections
    the study never saw, each team left out of their depth-10 pool in turn as in the study. One row
    per run, measure and prior."""
    from pdeval.analysis.estimates import run_effects

    teams = prepare(list(names))
    chosen = run_effects.SETTINGS if chosen is None else chosen
    settings = {p: [chosen[p]] for p in PRIORS if p in chosen}
    return scored(teams, {name: settings for name in names}, n_resamples)


def chosen_prior(grid, choices, held, priors=tuple(p for p in PRIORS if p != "unique")) -> str:
    """The prior (of those that need no pool information) with the smallest worst MAE / condensed MAE
    over the collections other than ``held`` and the measures, each at the (μ, σ) chosen for ``held``."""
    best = {}
    for prior in priors:
        c = choices[(choices["held_out"] == held) & (choices["prior"] == prior)].iloc[0]
        part = grid[(grid["collection"] != held) & (grid["prior"] == prior) & np.isclose(grid["shift"], c["shift"])
                    & np.isclose(grid["spread"], c["spread"])]
        best[prior] = float((part["mae"] / part["mae_condensed"]).max())
    return min(best, key=best.get)


def _coverage_code(name: str, table: pd.DataFrame) -> list[str]:
    """``name = {prior: [(collection, measure, coverage, runs), ...]}`` of a coverage table, as code."""
    lines = [f"{name} = {{"]
    for p in PRIORS:
        part = table[table["prior"] == p]
        cells = ", ".join(f"({r.collection!r}, {r.measure!r}, {round(r.coverage, 3)!r}, {int(r.runs)})"
                          for r in part.itertuples())
        lines.append(f"    {p!r}: [{cells}],")
    return lines + ["}"]


def settings_code(held, choices, prior, unseen=None) -> str:
    """The ``run_effects`` tables for the study's output (SETTINGS, COVERAGE and, with the table of
    :func:`unseen_check`, UNSEEN)."""
    overall = choices[choices["held_out"] == "(all)"].set_index("prior")
    lines = ["SETTINGS = {" + ", ".join(f"{p!r}: ({r['shift']!r}, {r['spread']!r})" for p, r in overall.iterrows()) + "}",
             f"DEFAULT_PRIOR = {prior!r}"] + _coverage_code("COVERAGE", held)
    if unseen is not None:
        lines += _coverage_code("UNSEEN", unseen)
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--resamples", type=int, default=400, help="draws of the held-out scoring")
    parser.add_argument("--grid-resamples", type=int, default=100, help="draws of the (μ, σ) grid search")
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--collections", nargs="*", default=["CLEF 2016", "CLEF 2018", "TREC DL 2021", "CLEF 2015"])
    parser.add_argument("--out", default=str(HERE / "calibration"))
    parser.add_argument("--fast", action="store_true")
    parser.add_argument("--windows", default="", help="comma-separated windows of rank-local run priors to add")
    args = parser.parse_args()
    for window in filter(None, args.windows.split(",")):
        PRIORS[f"run:{int(window)}"] = ("run", int(window))
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent")
        return
    import pdeval

    warnings.simplefilter("ignore", pdeval.errors.PdevalWarning)
    collections = args.collections[:2] if args.fast else args.collections
    held, choices, grid, rows = study(collections, 20 if args.fast else args.grid_resamples,
                                30 if args.fast else args.resamples, args.target, 3 if args.fast else None)
    rows.to_csv(f"{args.out}.csv", index=False)
    grid.to_csv(f"{args.out}_grid.csv", index=False)
    choices.to_csv(f"{args.out}_choices.csv", index=False)
    picked = {h: chosen_prior(grid, choices, h) for h in [*held["collection"].unique(), "(all)"]}
    on_all = {c["prior"]: (c["shift"], c["spread"]) for _, c in choices[choices["held_out"] == "(all)"].iterrows()}
    unseen = None if args.fast else coverage_table(unseen_check(args.resamples, chosen=on_all))
    code = settings_code(held, choices, picked["(all)"], unseen)
    columns = ["collection", "measure", "prior", "shift", "spread", "runs", "unjudged_at_10", "coverage", "width", "mae",
               "mae_condensed",
               "difference", "difference_se", "no_worse"]
    with open(f"{args.out}.md", "w") as f:
        f.write(f"# Leave-one-collection-out calibration ({args.resamples} resamples held out, "
                f"{args.grid_resamples} in the grid, target {args.target})\n\n")
        f.write("(μ, σ) chosen per held-out collection on the others, and on all (`(all)`):\n\n")
        f.write(choices.to_markdown(index=False) + "\n\n")
        f.write(f"Prior chosen on the others per held-out collection: {picked}\n\n")
        f.write("## Held out\n\n" + held[columns].round(4).to_markdown(index=False) + "\n\n")
        f.write("## The tables of `run_effects`\n\n```python\n" + code + "\n```\n\n")
        if not args.fast:  # out of the study: CLEF 2018's partial qrels, scored with estimate's defaults
            prior = picked["(all)"]
            snapshot = pd.concat([coverage_table(g).assign(truth_is=t)
                                  for t, g in snapshot_check(args.resamples, prior=prior, shift=on_all[prior][0],
                                                             spread=on_all[prior][1]).groupby("truth_is")],
                                 ignore_index=True)
            f.write("## Out of the study: CLEF 2018's partial qrels, estimate's defaults\n\n"
                    + snapshot[["truth_is"] + columns[1:]].round(4).to_markdown(index=False) + "\n\n")
            f.write(f"## Out of the study: {UNSEEN} (GPT-4 labels of other topics), each prior at its `spread='auto'`"
                    "\n\n" + unseen[columns].round(4).to_markdown(index=False) + "\n\n")
        f.write("## Grid\n\n" + grid[columns].round(4).to_markdown(index=False) + "\n")
    print(choices.to_string(index=False))
    print(held[columns].round(4).to_string(index=False))
    print(code)


if __name__ == "__main__":
    main()
