"""trec_eval 10.0's command-line options beyond the measures, for ``pdeval eval``.

trec_eval's getopt string is ``hvqm:cl:nD:JN:M:R:T:oZ:`` with long names
(``--query_eval_wanted``, ``--nosummary``, ...). ``pdeval eval`` takes every one of them
(:func:`add_options` adds those the command does not define itself), with trec_eval's output:

* ``-n`` / ``--nosummary``: no ``runid``, ``num_q`` and ``all`` lines;
* ``-Z FILE`` / ``--Zscore FILE``: per-topic values become z-scores against the means and
  standard deviations of the file (:func:`pdeval.read_zscores`, :func:`pdeval.standardize`
  with trec_eval's rule); names are printed with a leading ``Z``, every value (counts too) as
  ``%6.4f``, ``-1000000`` where the file lacks the (topic, measure) or where its deviation is
  0 and the value differs from its mean; ``relstring`` and ``runid`` are left as they are;
* ``-R FORMAT``: ``qrels`` (the default), ``qrels_jg`` (judgment groups,
  :mod:`.judgment_groups`), ``prefs`` and ``qrels_prefs`` (preference judgments,
  :mod:`.preferences`); without ``-m`` the last three print their own measure sets;
* ``-T FORMAT``: ``trec_results``, the only results format trec_eval 10.0 has;
* ``-D LEVEL[.QID]``: the debug level is accepted and prints nothing (pdeval has no debug
  trace); ``.QID`` evaluates that topic only, as trec_eval does;
* ``-o``: obsolete in trec_eval (ignored there); accepted and ignored;
* ``-v`` / ``--version``: the version on stderr, exit 0.
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError

from pdeval.integrations.trec_eval.judgment_groups import GROUP

__all__ = ["GROUP", "MISSING_ZSCORE", "REL_INFO_FORMATS", "add_options", "check_formats", "debug_topic", "nosummary",
           "zscore_values"]

_KEY = "trec_eval name: "

#: trec_eval's value where no z-score is found (MISSING_ZSCORE_VALUE)
MISSING_ZSCORE = -1000000.0

#: trec_eval 10.0's rel_info formats (formats.c) and what pdeval does with each
REL_INFO_FORMATS = ("qrels", "qrels_jg", "prefs", "qrels_prefs")

#: the long names trec_eval gives the options pdeval eval defines under other names
_ALIASES = {
    "--query_eval_wanted": "per_topic", "--complete_rel_info_wanted": "complete",
    "--Judged_docs_only": "judged_only",
}
_VALUE_ALIASES = {
    "--level_for_rel": ("rel", int), "--Number_docs_in_coll": ("num_docs", int),
}


class _Version(argparse.Action):
    """``-v``: print the version on stderr and exit 0, as trec_eval does."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("pdeval")
        except PackageNotFoundError:  # run from a source tree
            number = "(source tree)"
        print(f"pdeval eval version {number} (trec_eval 10.0's output)", file=sys.stderr)
        parser.exit(0)


def add_options(parser: argparse.ArgumentParser) -> None:
    """Add trec_eval's options that ``pdeval eval`` does not define itself to ``parser``."""
    parser.add_argument("-n", "--nosummary", action="store_true",
                        help="no summary: leave out the runid, num_q and 'all' lines (trec_eval -n)")
    parser.add_argument("-Z", "--Zscore", dest="zscores", default=None, metavar="ZSCORE_FILE",
                        help="print z-scores against the 'qid measure mean stddev' lines of ZSCORE_FILE (trec_eval -Z)")
    parser.add_argument("-R", "--Rel_info_format", dest="rel_info_format", choices=REL_INFO_FORMATS,
                        default="qrels", help="the qrels file's format: qrels; qrels_jg (judgment groups in the "
                                              "second column, -m qrels_jg); prefs (preference judgments: qid jg jsg "
                                              "docno level) or qrels_prefs (qrels read as preferences), -m all_prefs "
                                              "(trec_eval -R)")
    parser.add_argument("-T", "--Results_format", dest="results_format", choices=("trec_results",),
                        default="trec_results", help="the run files' format; trec_results only (trec_eval -T)")
    parser.add_argument("-D", "--Debug_level", dest="debug", default=None, metavar="LEVEL[.QID]",
                        help="trec_eval's debug level: accepted, no trace is printed; LEVEL.QID evaluates topic "
                             "QID only (trec_eval -D)")
    parser.add_argument("-o", "--Output_old_results_format", dest="old_format", action="store_true",
                        help="obsolete in trec_eval, which ignores it; ignored (trec_eval -o)")
    parser.add_argument("--gain-sort", choices=("trec_eval", "exact"), default="trec_eval",
                        help="the ideal list's order with fractional gains (-m ndcg.1=0.5): trec_eval's, where gains "
                             "less than 1 apart compare equal, or the exact order")
    parser.add_argument("-v", "--version", action=_Version, help="print the version on stderr and exit (trec_eval -v)")
    for name, dest in _ALIASES.items():
        parser.add_argument(name, dest=dest, action="store_true", help=argparse.SUPPRESS)
    for name, (dest, kind) in _VALUE_ALIASES.items():
        parser.add_argument(name, dest=dest, type=kind, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--Max_retrieved_per_topic", dest="depth", type=int, default=None, help=argparse.SUPPRESS)


def check_formats(args: argparse.Namespace) -> None:
    """The preference measures go with ``-R prefs`` or ``-R qrels_prefs`` and only they."""
    from pdeval.integrations.trec_eval.names import select
    from pdeval.integrations.trec_eval.preferences import PREFERENCE_MEASURES

    prefs = args.rel_info_format in ("prefs", "qrels_prefs")
    if not args.measures and args.rel_info_format != "qrels":  # trec_eval's default (official) cannot be computed
        args.measures = ["all_prefs" if prefs else "qrels_jg"]
    for item in select(args.measures or ["official"]).items:
        if (item.name in PREFERENCE_MEASURES) != prefs:
            need = "-R prefs or -R qrels_prefs (preference judgments)" if not prefs else f"-R qrels (not -R {args.rel_info_format})"
            raise PdevalError(f"-m {item.name}: trec_eval computes it from {need}")
    if prefs and (args.bounds or args.estimate):
        raise PdevalError(f"-R {args.rel_info_format} goes without --bounds and --estimate")


def prefs_table(args: argparse.Namespace):
    """``-R prefs`` / ``-R qrels_prefs``: trec_eval's rows of the prefs_* measures, the measures
    printed as integers, and the command values (runid, num_q)."""
    from pdeval.integrations.trec_eval import output
    from pdeval.integrations.trec_eval.names import select
    from pdeval.integrations.trec_eval.preferences import PREFERENCE_MEASURES, read_prefs, read_qrels_prefs

    selection = select(args.measures)
    names = [item.name for item in selection.items]
    prefs = (read_prefs if args.rel_info_format == "prefs" else read_qrels_prefs)(args.qrels)
    prefs = only_topic(prefs, debug_topic(args))
    result = _prefs_result(args, prefs, names)
    if result.empty:
        raise PdevalError(f"no topic of {' '.join(args.runs)} is in {args.qrels}")
    if args.zscores:
        result = zscore_values(result, args.zscores, {}, set())
    order = {name: i for i, name in enumerate(PREFERENCE_MEASURES)}
    kinds = [_Named(name, PREFERENCE_MEASURES[name][1]) for name in dict.fromkeys(names)]
    table = output.trec_eval_table(result, kinds, order, selection.command, args.per_topic)
    counts = {name for name in names if PREFERENCE_MEASURES[name][1] == "sum"} | {"num_q"}
    return table, counts, selection.command


def _prefs_result(args: argparse.Namespace, prefs: pd.DataFrame, names: list) -> pd.DataFrame:
    """The prefs_* values of the run files: the preferences prepared once, the files read and
    evaluated a batch at a time (memory follows the batch, not all the files)."""
    from pdeval.integrations.trec_eval.preferences import Preferences, evaluate_prepared
    from pdeval.sources.io import read_run
    from pdeval.sources.paths import resolve_sources

    prepared = Preferences(prefs)
    options = dict(depth=args.depth, complete=args.complete)
    if args.run_from != "file":  # runs named by tag may span files: all at once
        return evaluate_prepared(prepared, read_run(args.runs, duplicates=args.duplicates, run_from=args.run_from),
                                 names, **options)
    from pdeval.common.threads import ordered

    files = [str(f) for f in resolve_sources(args.runs)]
    batches = [files[start:start + _FILES_PER_BATCH] for start in range(0, len(files), _FILES_PER_BATCH)]
    # the next batches are read (in worker threads) while one is evaluated
    runs = ordered(lambda batch: read_run(batch, duplicates=args.duplicates), batches)
    return pd.concat([evaluate_prepared(prepared, run, names, **options) for run in runs], ignore_index=True)


#: run files read and evaluated together under -R prefs / qrels_prefs
_FILES_PER_BATCH = 8


class _Named:
    """A preference measure as :func:`output.trec_eval_table` reads a measure: its string and
    how its ``all`` line combines the topics."""

    def __init__(self, name: str, aggregate: str):
        self.name = name
        self.spec = argparse.Namespace(aggregate=aggregate)

    def __str__(self) -> str:
        return self.name


def debug_topic(args: argparse.Namespace):
    """The topic ``-D LEVEL.QID`` restricts the evaluation to (None without one)."""
    if args.debug is None:
        return None
    level, dot, topic = str(args.debug).partition(".")
    return topic if dot else None


def only_topic(frame: pd.DataFrame, topic) -> pd.DataFrame:
    """The rows of ``frame`` on ``topic`` (all rows when ``topic`` is None)."""
    if topic is None:
        return frame
    return frame[frame["query_id"].astype(str) == topic].reset_index(drop=True)


def nosummary(table: pd.DataFrame) -> pd.DataFrame:
    """``-n``: the per-topic rows only."""
    return table[table["query_id"].astype(str) != "all"].reset_index(drop=True)


def zscore_values(result: pd.DataFrame, path: str, names: dict, skip: set) -> pd.DataFrame:
    """``-Z``: the per-topic values of ``result`` as trec_eval's z-scores.

    ``names`` maps each measure string of ``result`` to trec_eval's name (the one the z-score
    file uses); measures in ``skip`` (relstring's ranks) keep their values.
    """
    from pdeval.analysis.reproducibility.standardize import standardize
    from pdeval.sources.zscores import read_zscores

    # the file's names are trec_eval's, as the command prints them: keys no measure parser reads
    # keep standardize from mapping them again (rbp is trec_eval's RBPtrec, not pdeval's RBP)
    table = read_zscores(path)
    table = table.assign(measure=_KEY + table["measure"].astype(str))
    convert = ~result["measure"].isin(skip).to_numpy()
    part = result[convert]
    shown = part.assign(measure=part["measure"].map(lambda m: _KEY + names.get(m, m)))
    with warnings.catch_warnings():  # trec_eval prints the missing value silently
        warnings.simplefilter("ignore")
        z = standardize(shown[["run", "query_id", "measure", "value"]], zscores=table, fill_value=MISSING_ZSCORE,
                        zero_variance="trec_eval")
    value = result["value"].to_numpy(dtype=np.float64).copy()
    value[convert] = z["value"].to_numpy(dtype=np.float64)
    return result.assign(value=value)


def z_names(table: pd.DataFrame, names: dict, relstring) -> dict:
    """trec_eval's names under ``-Z``: ``Z`` before every measure but relstring (and runid)."""
    keep = relstring[0] if relstring else None
    return {m: names.get(m, m) if m == keep else f"Z{names.get(m, m):<22}" for m in table["measure"].unique()}


def read_rel_info(args: argparse.Namespace, read_qrels):
    """The qrels of ``-R``: a qrels frame, or with ``qrels_jg`` one with a ``judgment_group`` column."""
    if args.rel_info_format == "qrels_jg":
        from pdeval.integrations.trec_eval.judgment_groups import read_qrels_jg

        return read_qrels_jg(args.qrels)
    return read_qrels(args.qrels, duplicates=args.duplicates)


def check_measures(args: argparse.Namespace, selection) -> None:
    """The judgment-group measures go with ``-R qrels_jg`` and only they, as in trec_eval."""
    from pdeval.integrations.trec_eval.names import JUDGMENT_GROUP_FAMILIES

    groups = args.rel_info_format == "qrels_jg"
    for item in selection.items:
        if (item.family in JUDGMENT_GROUP_FAMILIES) != groups:
            need = "-R qrels_jg (judgment groups)" if not groups else "-R qrels (one judgment set)"
            other = "" if not groups else "; with -R qrels_jg: -m qrels_jg, map_avgjg, P_avgjg, Rprec_mult_avgjg"
            raise PdevalError(f"-m {item.name}: trec_eval computes it from {need}{other}")
    if groups and (args.bounds or args.estimate):
        raise PdevalError("-R qrels_jg goes without --bounds and --estimate")


def evaluate_groups(args: argparse.Namespace, qrels: pd.DataFrame, measures: list, options: dict) -> pd.DataFrame:
    """``-R qrels_jg``: each run file against every judgment group, averaged per topic."""
    from pdeval.evaluation.runfiles import evaluate_run_files
    from pdeval.evaluation.judgment_kinds import average_groups

    result = evaluate_run_files(args.runs, qrels, measures, undefined="nan", variants=[GROUP], **options)
    return average_groups(result, GROUP)
