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

For every prior (``pool``, ``run``, ``both``, ``unique``) and spread σ of a grid
(``estimate(..., spread=σ)``, :mod:`pdeval.analysis.estimates.run_effects`) the 95 % intervals of
run means are computed. Leave one collection out: for each held-out collection the σ of each
prior is the smallest of the grid whose intervals cover the truth for >= ``--target`` of the
runs on every measure of every OTHER collection (the largest σ if none does); the held-out
collection is scored with that σ only. The table reports per held-out collection, measure and
prior: the runs, coverage, mean width, the estimate's mean absolute error and the condensed
value's. The σ chosen on all collections is the default (``run_effects.SPREADS``).

Writes ``<out>.csv`` (one row per run, measure, prior and σ) and ``<out>.md`` (the table).
Without ``../shared/data`` it says so and stops. ``--fast`` runs three teams of one
collection with 30 resamples (a smoke test).
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
PRIORS = ("pool", "run", "both", "unique")
SPREADS = (0.0, 0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0, 3.0)
DEPTH = 10
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
    else:
        folder = DATA / "trec-dl21"
        runs = pdeval.read_run(sorted((folder / "runs").glob("*.gz")))
        qrels = pdeval.read_qrels(folder / "qrels-pass.dl21.human.txt")
        team, pooled = _team21, list(runs["run"].unique())
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


def over_spreads(frame, fewer, options, n_resamples) -> list:
    """``estimate(frame, fewer, MEASURES, spread=σ, per="run", seed=1, **options)`` for every σ of
    SPREADS. The layout and the prior do not depend on σ, so they are built once with the
    library's own steps and only the draws are repeated (the first σ > 0 is checked against
    ``estimate`` itself); should those steps change, one ``estimate`` call per σ."""
    import pdeval
    from pdeval.analysis.estimates import core, run_effects
    from pdeval.common.seeds import generator
    from pdeval.frames.canonical import as_run
    from pdeval.measures import parse_all

    def public(sigma):
        return pdeval.estimate(frame, fewer, MEASURES, spread=sigma, n_resamples=n_resamples, seed=1, per="run",
                               progress=False, **options).assign(spread=sigma)

    try:
        parsed, run = parse_all(MEASURES), as_run(frame, duplicates=None)
        lists, keys, _ = core._lay_out(run, fewer, None, "float64", None)
        if options["prior"] == "unique":
            unique = {k: options[k] for k in ("pooled", "pool_depth", "group")}
            probabilities = core._unique_prior(run, fewer, lists, keys, unique)
        else:
            probabilities = core._priors(lists, fewer, None, None, "bootstrap", options["prior"], None, 1.0)
        _, run_of_row = core._unjudged_rows(lists, keys)
        out = []
        for sigma in SPREADS:
            spread = run_effects.with_spread(probabilities, run_of_row, sigma)
            cut, spread = core._cut(lists, spread, DEPTH)
            draws, value = core._draw_values(cut, spread, parsed, n_resamples, generator(1), False)
            out.append(core._tidy(keys, parsed, cut, value, draws, 0.95, "run").assign(spread=sigma))
        if options["prior"] not in CHECKED:  # once per prior and process
            check = public(SPREADS[1])
            pd.testing.assert_frame_equal(check.reset_index(drop=True), out[1].reset_index(drop=True),
                                          check_dtype=False, check_like=True)
            CHECKED.add(options["prior"])
        return out
    except (AttributeError, TypeError, ValueError, AssertionError) as exc:
        print(f"  (one estimate call per σ: {type(exc).__name__})", flush=True)
        return [public(sigma) for sigma in SPREADS]


def one_team(runs, qrels, fewer, team_of, team, pooled, n_resamples) -> pd.DataFrame:
    import pdeval

    mine = runs[runs["run"].map(team_of) == team]
    complete = pdeval.evaluate(mine, qrels, "Judged@10").query("value == 1")[["run", "query_id"]]
    mine = mine.merge(complete, on=["run", "query_id"])
    judged = pdeval.evaluate(mine, fewer, "Judged@10").groupby("run")["value"].mean()
    holes = judged.index[judged < 1]
    mine = mine[mine["run"].isin(holes)]
    if mine.empty:
        return pd.DataFrame()
    condensed = pdeval.evaluate(mine, fewer, [m.replace("@", "'@") for m in MEASURES])
    condensed = condensed.assign(measure=condensed["measure"].str.replace("'", "", regex=False))
    base = pd.DataFrame({"truth": truth_of(mine, fewer, qrels),
                         "condensed": condensed.groupby(["run", "measure"])["value"].mean()})
    others = [n for n in pooled if team_of(n) != team]
    with_pool = pd.concat([pdeval.rank_run(runs[runs["run"].isin(others)], depth=DEPTH)[
        ["run", "query_id", "doc_id", "score"]], mine])
    rows = []
    for prior in PRIORS:
        options = {"prior": prior}
        frame = mine
        if prior == "unique":
            options.update(pooled=others, pool_depth=DEPTH, group=team_of)
            frame = with_pool
        for got in over_spreads(frame, fewer, options, n_resamples):
            got = got[got["run"].isin(holes)].set_index(["run", "measure"])
            rows.append(got.join(base).reset_index().assign(prior=prior))
    return pd.concat(rows, ignore_index=True).assign(team=team, judged_at_10=lambda f: f["run"].map(judged))


def study(collections, n_resamples, teams_limit=None, out_path=None) -> pd.DataFrame:
    import pdeval

    out = []
    for name in collections:
        start = time.perf_counter()
        runs, qrels, team_of, pooled = load(name)
        top = pdeval.rank_run(runs[runs["run"].isin(pooled)], depth=DEPTH)
        top["team"] = top["run"].map(team_of)
        fewer_of = left_out_qrels(top, qrels)
        teams = sorted(fewer_of)[:teams_limit] if teams_limit else sorted(fewer_of)
        for team in teams:
            out.append(one_team(runs, qrels, fewer_of[team], team_of, team, pooled, n_resamples).assign(collection=name))
            print(f"  {name}, {team}: {time.perf_counter() - start:.0f} s", flush=True)
        print(f"{name}: {len(teams)} teams left out in {time.perf_counter() - start:.0f} s", flush=True)
        if out_path:  # what is done survives an interruption
            pd.concat(out, ignore_index=True).to_csv(f"{out_path}.csv", index=False)
    return pd.concat(out, ignore_index=True)


def coverage_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per collection, measure, prior and σ: runs, coverage, mean width, MAE and condensed MAE."""
    rows = rows.assign(covered=(rows["low"] <= rows["truth"] + 1e-12) & (rows["truth"] <= rows["high"] + 1e-12),
                       width=rows["high"] - rows["low"], error=(rows["estimate"] - rows["truth"]).abs(),
                       condensed_error=(rows["condensed"] - rows["truth"]).abs())
    return rows.groupby(["collection", "measure", "prior", "spread"], sort=False).agg(
        runs=("run", "size"), coverage=("covered", "mean"), width=("width", "mean"), mae=("error", "mean"),
        mae_condensed=("condensed_error", "mean")).reset_index()


def chosen_spread(table: pd.DataFrame, prior: str, target: float) -> float:
    """The smallest σ whose coverage reaches ``target`` on every collection and measure of ``table``."""
    part = table[table["prior"] == prior]
    worst = part.groupby("spread")["coverage"].min()
    reached = worst.index[worst >= target]
    return float(reached.min()) if len(reached) else float(worst.index.max())


def leave_one_collection_out(table: pd.DataFrame, target: float) -> pd.DataFrame:
    rows = []
    for held_out in table["collection"].unique():
        others = table[table["collection"] != held_out]
        for prior in PRIORS:
            sigma = chosen_spread(others, prior, target) if others["collection"].nunique() else 0.0
            scored = table[(table["collection"] == held_out) & (table["prior"] == prior)
                           & np.isclose(table["spread"], sigma)]
            rows.append(scored)
    return pd.concat(rows, ignore_index=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--resamples", type=int, default=400)
    parser.add_argument("--target", type=float, default=0.95)
    parser.add_argument("--collections", nargs="*", default=["CLEF 2016", "CLEF 2018", "TREC DL 2021", "CLEF 2015"])
    parser.add_argument("--out", default=str(HERE / "calibration"))
    parser.add_argument("--fast", action="store_true")
    args = parser.parse_args()
    if not DATA.is_dir():
        print(f"skipped: {DATA} is absent")
        return
    import pdeval

    warnings.simplefilter("ignore", pdeval.errors.PdevalWarning)
    collections = args.collections[:1] if args.fast else args.collections
    rows = study(collections, 30 if args.fast else args.resamples, 3 if args.fast else None, args.out)
    rows.to_csv(f"{args.out}.csv", index=False)
    table = coverage_table(rows)
    held = leave_one_collection_out(table, args.target)
    overall = {prior: chosen_spread(table, prior, args.target) for prior in PRIORS}
    with open(f"{args.out}.md", "w") as f:
        f.write(f"# Leave-one-collection-out calibration ({args.resamples} resamples, target {args.target})\n\n")
        f.write(f"σ chosen on all collections: {overall}\n\n")
        f.write(held.round(4).to_markdown(index=False) + "\n\n## Every σ\n\n")
        f.write(table.round(4).to_markdown(index=False) + "\n")
    print(held.round(3).to_string(index=False))
    print("σ chosen on all collections:", overall)


if __name__ == "__main__":
    main()
