"""The ``pdeval`` command (also ``python -m pdeval``).

``pdeval eval [-m MEASURE]... QRELS RUN...`` evaluates TREC run files as trec_eval does and
prints what trec_eval prints: one ``-m`` per measure specification in trec_eval's syntax
(``-m map -m P.5,10 -m ndcg_cut.10``, ``-m official``, ``-m all_trec``) or pdeval's
(``-m "nDCG'@10"``), options before or after the files, lines in trec_eval's order and format,
``all`` lines that sum ``num_q``, ``num_ret``, ``num_rel``, ``num_rel_ret`` and average the
rest. ``pdeval measures`` lists the measures, ``pdeval report`` runs the robustness study.

Every error is one line on stderr (``pdeval eval: error: ...``) naming the file and line or
the option, with exit code 2; warnings are one line each (``pdeval: warning: ...``). Set the
environment variable ``PDEVAL_DEBUG=1`` to get Python's traceback of an unexpected error.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings
from pathlib import Path
from typing import Optional, Sequence

from pdeval.errors import DuplicateError, MeasureError, PdevalError
from pdeval.integrations.trec_eval import options as trec_options

_EVAL_EPILOG = """\
examples:
  pdeval eval -m map -m P.5,10 qrels.txt run.txt      as trec_eval -m map -m P.5,10
  pdeval eval -q -m official qrels.txt run.txt        per-topic lines too (trec_eval -q)
  pdeval eval qrels.txt runs/ -m AP -m "nDCG'@10" -m infAP(c=1.5) --format csv
  pdeval eval qrels.txt many_runs.txt --run-from tag  several runs in one file, named by tag
"""


class _UsageError(Exception):
    """An error in the command line itself (an unknown option, a missing file name...)."""


class _Parser(argparse.ArgumentParser):
    """argparse, but errors become one line (no usage block) and exit code 2."""

    def error(self, message: str):  # type: ignore[override]
        raise _UsageError(f"{message} (see {self.prog} --help)")


class _Formatter(argparse.RawDescriptionHelpFormatter):
    """Help text keeps the examples' layout and shows every default.

    A default is appended as ``(default: X)`` unless the help already states it; flags are
    off by default.
    """

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, argparse.SUPPRESS) or not action.option_strings:
            return text
        return text + " (default: %(default)s)"


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _subparser(commands, name: str, **kwargs) -> argparse.ArgumentParser:
    return commands.add_parser(name, formatter_class=_Formatter, **kwargs)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="pdeval", description="IR evaluation with incomplete judgments.",
                     formatter_class=_Formatter)
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    ev = _subparser(commands, "eval", help="evaluate TREC run files against a qrels file (like trec_eval)",
                    description="Evaluate TREC run files against a qrels file; the output is trec_eval's.",
                    epilog=_EVAL_EPILOG)
    ev.add_argument("qrels", help="qrels file (query_id iteration doc_id relevance)")
    ev.add_argument("runs", nargs="+", help="run files, directories or globs")
    ev.add_argument("-m", "--measure", dest="measures", action="append", metavar="MEASURE", default=None,
                    help="one measure specification per -m, repeatable: trec_eval's (map, P.5,10, "
                         "ndcg_cut.10, official, all_trec, num_q, runid) or pdeval's (AP, \"nDCG'@10\", "
                         "infAP(c=1.5)) (default: official)")
    ev.add_argument("-q", "--per-topic", action="store_true", help="print per-topic values too (trec_eval -q)")
    ev.add_argument("-c", "--complete", action="store_true", help="average over every qrels topic (trec_eval -c)")
    ev.add_argument("-J", "--judged-only", action="store_true",
                    help="condensed lists: drop unjudged documents (trec_eval -J)")
    ev.add_argument("-M", "--depth", type=_positive_int, default=None, help="keep the first DEPTH documents (trec_eval -M) (default: every document)")
    ev.add_argument("-N", "--num-docs", type=int, default=None, metavar="NUM_DOCS",
                    help="documents in the collection, for utility's d term (trec_eval -N) (default: 0)")
    ev.add_argument("-l", "--rel", type=int, default=None,
                    help="relevance threshold of binary measures (trec_eval -l) (default: 1)")
    ev.add_argument("--float32", action="store_true",
                    help="order by float32 scores (trec_eval <= 9.0.7, pytrec_eval)")
    ev.add_argument("--ties", choices=("trec", "expected", "optimistic", "pessimistic"), default="trec",
                    help="documents with equal scores: trec_eval's order (doc id descending), the expected value "
                         "over every order of each tied run (McSherry & Najork 2008), or relevant documents "
                         "first / last in it (the range over tie orders) (default: trec)")
    ev.add_argument("--format", choices=("tsv", "csv", "json"), default="tsv", help="output format")
    ev.add_argument("--names", choices=("auto", "trec_eval", "pdeval"), default="auto",
                    help="measure names in the output: trec_eval's (map, P_10) or pdeval's (AP, P@10); "
                         "auto: trec_eval's in tsv, pdeval's in csv and json")
    ev.add_argument("--duplicates", choices=("error", "first", "max"), default="error",
                    help="a document repeated in a topic of a run, or a judgment repeated in the qrels: "
                         "refuse, keep the first line, or keep the highest score / relevance")
    ev.add_argument("--run-from", choices=("file", "tag"), default="file",
                    help="name runs by file, or by the tag column (several runs in one file)")
    ev.add_argument("--bounds", action="store_true",
                    help="add the columns high and residual: the larger value of the unjudged retrieved documents "
                         "judged nonrelevant or relevant at the top grade, and its distance to the smaller "
                         "(pdeval.evaluation.bounds)")
    ev.add_argument("--estimate", choices=("bootstrap",), default=None,
                    help="add estimate, low and high columns: the value the run would get if its unjudged documents "
                         "were judged, with a 95%% interval (pdeval.estimate; P, R, AP, RR, nDCG and RBP measures)")
    ev.add_argument("--resamples", type=_positive_int, default=1000, help="with --estimate: label draws (default 1000)")
    ev.add_argument("--seed", type=int, default=0, help="with --estimate: the seed of the draws (default 0)")
    ev.add_argument("--bounds-unjudged", choices=("all", "absent", "pooled"), default="all",
                    help="with --bounds: which unjudged documents to fill in (absent from the qrels, pooled -1, or both)")
    trec_options.add_options(ev)

    ms = _subparser(commands, "measures", help="list the measures and how each treats unjudged documents",
                    description="List the measures, one a line; give names for the details of each.")
    ms.add_argument("names", nargs="*", metavar="MEASURE", help="measures to describe in full (default: list all)")
    ms.add_argument("--markdown", action="store_true", help="print the measure table of the docs (docs/guide/measures.md)")

    rep = _subparser(commands, "report", help="run the whole robustness study and write a report",
                     description="Run the robustness study (reduced judgments, pools, rank correlations, "
                                 "discriminative power, swap rates) and write tables, figures and report.html.")
    rep.add_argument("--qrels", help="qrels file (default: the bundled CLEF eHealth 2018 data)")
    rep.add_argument("--runs", nargs="+", help="run files or a directory, with --qrels (default: the bundled runs)")
    rep.add_argument("--partial-qrels", help="a real partial qrels snapshot to compare with (default: none; the bundled one with the bundled data)")
    rep.add_argument("--levels", nargs="+", type=int, help="reduction levels in percent (default: Sakai 2007's grid)")
    rep.add_argument("--samples", type=_positive_int, default=10, help="samples per level")
    rep.add_argument("--depths", nargs="+", type=_positive_int, default=[10, 20, 50], help="pool depths to study")
    rep.add_argument("--bootstrap", type=_positive_int, default=1000, help="bootstrap replicates for discriminative power")
    rep.add_argument("--measures", nargs="+", help="measures to study (default: AP Bpref infAP AP' Q' nDCG' nDCG@10 P@10)")
    rep.add_argument("--out", required=True, help="output folder")
    rep.add_argument("--seed", type=int, default=1, help="seed of every random step")
    rep.add_argument("--no-progress", action="store_true", help="no progress bars")
    rep.add_argument("--bounds", action="store_true", help="show each run mean's residual (pdeval.evaluation.bounds)")
    rep.add_argument("--estimate", action="store_true",
                     help="show each run mean beside its bootstrap estimate with a 95%% interval (pdeval.estimate)")
    return parser


def _parse_args(argv: Sequence[str]) -> argparse.Namespace:
    """Parse ``argv``; options and file names may come in any order (trec_eval style)."""
    parser = _parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    if argv and argv[0] in commands.choices:
        args = commands.choices[argv[0]].parse_intermixed_args(argv[1:])
        args.command = argv[0]
        return args
    return parser.parse_args(argv)  # --help, or an error naming the valid commands


# --------------------------------------------------------------------------- pdeval eval


def _looks_like_measure(text: str) -> bool:
    from pdeval.integrations.trec_eval import names

    try:
        names.select([text])
    except MeasureError:
        return False
    return True


def _check_file_names(args: argparse.Namespace) -> None:
    """A file name that does not exist but reads as a measure was meant for ``-m``."""
    from pdeval.sources.paths import has_glob_magic as _has_glob_magic

    for name in [args.qrels, *args.runs]:
        if not Path(name).exists() and not _has_glob_magic(name) and _looks_like_measure(name):
            raise _UsageError(
                f"{name!r} is not a file but reads as a measure: -m takes one measure, repeat it "
                f"(-m AP -m {name}); files come after the options or before them"
            )


def _selection(args: argparse.Namespace):
    """pdeval measures with their output names and trec_eval order, the command values, and
    relstring's measures (RelAt@1..N) when it is printed."""
    from pdeval.integrations.trec_eval import names as trec_names
    from pdeval.measures import parse

    selection = trec_names.select(args.measures or ["official"], gain_sort=args.gain_sort)
    items = list(selection.items)
    if selection.relstring is not None:
        length, shown = selection.relstring
        items += [trec_names.Item(f"RelAt@{k}", shown, "relstring", k) for k in range(1, length + 1)]
    measures, names, order, codes = [], {}, {}, []
    for position, item in enumerate(items):
        try:
            measure = parse(item.measure, judged_only=args.judged_only, rel=args.rel, n_docs=args.num_docs)
        except (MeasureError, TypeError, ValueError) as error:  # a parameter of the wrong type too
            raise MeasureError(f"-m {item.measure}: {error}") from None
        if item.family == "relstring":
            codes.append(str(measure))
            order[item.name] = trec_names.order_key(measure, item, position)
        if str(measure) in names:
            continue
        measures.append(measure)
        names[str(measure)] = item.name  # trec_eval keeps its names under -J and -l
        order[str(measure)] = trec_names.order_key(parse(item.measure), item, position)
    relstring = (selection.relstring[1], codes) if codes else None
    return measures, names, order, selection, relstring


def _runids(args: argparse.Namespace) -> dict:
    """trec_eval's ``runid`` of each run: the tag of the file's last run line."""
    from pdeval.sources.blocks import read_bytes as _read_bytes, tail_bytes as _tail_bytes
    from pdeval.sources.paths import resolve_sources as _resolve_sources, run_name
    from pdeval.sources.tables import is_table_file

    if args.run_from == "tag":
        return {}  # runs are named by their tags already
    ids = {}
    for path in _resolve_sources(args.runs):
        if is_table_file(path):  # a table's runs are named by its run column or its file
            continue
        data, whole = _tail_bytes(path)  # the file's end is enough unless no run line is there
        tag = _last_tag(data) if data is not None else None
        if tag is None and not whole:
            tag = _last_tag(_read_bytes(path))
        ids[run_name(path)] = tag if tag is not None else run_name(path)
    return ids


def _last_tag(data: bytes):
    """The tag of the last run line of ``data`` (None without one)."""
    end = len(data)
    while end > 0:  # from the last line backwards to the first run line
        start = data.rfind(b"\n", 0, end) + 1
        fields = data[start:end].split()
        if len(fields) >= 6 and not fields[0].startswith(b"#"):
            return fields[5].decode("utf-8", "replace")
        end = start - 1
    return None


def _some(ids: "pd.Series", n: int = 5) -> str:
    """A few of the distinct ``ids``, for messages."""
    import pandas as pd

    unique = sorted(pd.unique(ids.astype(str)))
    return ", ".join(map(repr, unique[:n])) + (", ..." if len(unique) > n else "")


def _complete_num_rel(args: argparse.Namespace, measures: list):
    """trec_eval -c prints as ``num_rel all`` the qrels rows with relevance > 0 whatever -l: the
    shown NumRel and the NumRel at threshold 1 that gives that line, when the two differ."""
    from pdeval.measures import parse

    shown = [str(m) for m in measures if m.name == "NumRel"]
    if not args.complete or not shown or shown[0] == "NumRel":
        return None
    return shown[0], parse("NumRel")


def _evaluate_files(args: argparse.Namespace, qrels, measures: list):
    """The result frame of the run files (and the bounds frame with --bounds, else None)."""
    from pdeval.evaluation.core import evaluate
    from pdeval.evaluation.runfiles import evaluate_run_files
    from pdeval.sources.io import read_run

    options = dict(complete=args.complete, depth=args.depth,
                   score_precision="float32" if args.float32 else "float64", duplicates=args.duplicates,
                   ties=args.ties)
    if trec_options.GROUP in qrels.columns:  # -R qrels_jg
        return trec_options.evaluate_groups(args, qrels, measures, options), None
    one_at_a_time = not args.bounds and args.run_from == "file"  # memory follows the largest file
    run = None if one_at_a_time else read_run(args.runs, duplicates=args.duplicates, run_from=args.run_from)
    try:
        if one_at_a_time:
            return evaluate_run_files(args.runs, qrels, measures, undefined="nan", **options), None
        if args.bounds:
            from pdeval.evaluation.bounds import bounds

            filled = bounds(run, qrels, measures, unjudged=args.bounds_unjudged, **options)
            return filled, filled
        return evaluate(run, qrels, measures, undefined="nan", **options), None
    except PdevalError as error:  # not about one line of a file: name the files
        raise PdevalError(f"evaluating {' '.join([args.qrels, *args.runs])}: {error}") from None


def _eval(args: argparse.Namespace) -> int:
    from pdeval.integrations.trec_eval import output
    from pdeval.sources.io import read_qrels

    _check_file_names(args)
    trec_options.check_formats(args)
    if args.rel_info_format in ("prefs", "qrels_prefs"):  # preference judgments
        table, counts, command = trec_options.prefs_table(args)
        return _print_table(args, table, {}, counts, command, None)
    measures, names, order, selection, relstring = _selection(args)
    trec_options.check_measures(args, selection)
    command = selection.command
    qrels = trec_options.only_topic(trec_options.read_rel_info(args, read_qrels), trec_options.debug_topic(args))
    num_rel = _complete_num_rel(args, measures)
    result, filled = _evaluate_files(args, qrels, measures + ([num_rel[1]] if num_rel else []))
    summary = None
    if num_rel:
        summary = output.complete_num_rel(result, num_rel[0], str(num_rel[1]))
        result = result[result["measure"] != str(num_rel[1])]
    result = output.trec_eval_values(result, measures, args.judged_only)
    if args.zscores:
        result = trec_options.zscore_values(result, args.zscores, names, set(relstring[1]) if relstring else set())
    if result.empty:  # (evaluate refuses no shared topic itself; kept for runs with no rows left)
        raise PdevalError(
            f"no topic of {' '.join(args.runs)} is in {args.qrels}: qrels topics {_some(qrels['query_id'])} "
            "(leading zeros? the wrong qrels file?)"
        )
    table = output.trec_eval_table(result, measures, order, command, args.per_topic, relstring, summary)
    if args.bounds:  # the same rows in the same order for the high and residual values
        for column in ("high", "residual"):
            other = filled.drop(columns="value").rename(columns={column: "value"})
            table[column] = output.trec_eval_table(other, measures, order, command, args.per_topic, relstring)["value"].to_numpy()
        if relstring:  # a string has no residual
            table.loc[table["measure"] == relstring[0], "residual"] = "''"
    if args.estimate:
        _add_estimates(table, args, qrels, measures)
    counts = {str(m) for m in measures if m.spec.name in output.COUNTS} | {"num_q"}
    return _print_table(args, table, names, counts, command, relstring)


def _print_table(args: argparse.Namespace, table, names: dict, counts: set, command: list, relstring) -> int:
    """Print trec_eval's rows (tsv) or the tidy table (csv, json)."""
    from pdeval.integrations.trec_eval import output

    use_trec_names = args.names == "trec_eval" or (args.names == "auto" and args.format == "tsv")
    if args.zscores:  # trec_eval prints every z-score with four decimals, named Z...
        counts, names = set(), trec_options.z_names(table, names, relstring)
    if args.nosummary:
        table = trec_options.nosummary(table)
    if args.format == "tsv":
        runids = _runids(args) if "runid" in command and not args.nosummary else None
        extra = (("high", "residual") if args.bounds else ()) + (("estimate", "low", "high") if args.estimate else ())
        if len(table):  # -n without -q prints nothing
            sys.stdout.write(output.tsv_text(table, names if use_trec_names else {}, counts, runids, extra))
    else:
        if use_trec_names:
            table["measure"] = table["measure"].map(lambda m: names.get(m, m))
        if args.format == "csv":
            table.to_csv(sys.stdout, index=False)
        else:
            sys.stdout.write(table.to_json(orient="records") + "\n")
    return 0


def _add_estimates(table, args: argparse.Namespace, qrels, measures: list) -> None:
    """``--estimate``: the ``estimate``, ``low`` and ``high`` of every row of ``table``, per
    topic and, on the ``all`` lines, per run (intervals computed jointly over the topics)."""
    import pandas as pd

    from pdeval.analysis.estimates.core import estimate
    from pdeval.sources.io import read_run

    if args.bounds or args.judged_only or args.complete:
        raise PdevalError("--estimate goes without --bounds, -J and -c (it estimates the values of complete judgments)")
    run = read_run(args.runs, duplicates=args.duplicates, run_from=args.run_from)
    options = dict(method=args.estimate, n_resamples=args.resamples, seed=args.seed, progress=False,
                   score_precision="float32" if args.float32 else "float64", depth=args.depth, ties=args.ties)
    topics = estimate(run, qrels, measures, **options)
    runs = estimate(run, qrels, measures, per="run", **options).assign(query_id="all")
    found = pd.concat([topics, runs], ignore_index=True).set_index(["run", "measure", "query_id"])
    keys = pd.MultiIndex.from_arrays([table["run"].astype(str), table["measure"], table["query_id"].astype(str)])
    for column in ("estimate", "low", "high"):
        table[column] = found[column].reindex(keys).to_numpy()


# --------------------------------------------------------------------------- pdeval measures


def measure_table_markdown() -> str:
    """The table of measures of the docs (docs/guide/measures.md), generated from the registry."""
    from pdeval.measures import available

    table = available()
    lines = [
        "| measure | parameters (defaults) | unjudged (absent) documents | pooled (-1) documents "
        "| unretrieved relevant documents | source |",
        "|---|---|---|---|---|---|",
    ]
    for row in table.itertuples(index=False):
        name = f"`{row.measure}`" + (f" ({row.cutoff})" if row.cutoff else "")
        cells = [name, f"`{row.parameters}`", row[3], row[4], row[5], row.reference]
        lines.append("| " + " | ".join(str(c).replace("|", "/") for c in cells) + " |")
    return "\n".join(lines)


def _measure_lines(width: int = 100) -> list[str]:
    """One line per measure: name (cut-off, prime), aliases and trec_eval names, summary."""
    from pdeval.measures import REGISTRY

    rows = []
    for spec in REGISTRY.values():
        name = spec.name + {"none": "", "optional": "[@k]", "required": "@k"}[spec.cutoff]
        prime = spec.name + "'"
        trec = [n.replace("{k}", "k") for n in (spec.trec_eval or "").split("|") if n]
        aliases = ", ".join(a for a in dict.fromkeys([*spec.aliases, *trec]) if a != spec.name)
        rows.append((name, prime, aliases, spec.summary))
    first = max(len(r[0]) for r in rows) + 2
    second = max(len(r[1]) for r in rows) + 2
    lines = [f"{'measure':<{first}}{'prime':<{second}}aliases and trec_eval names; summary",
             f"{'-------':<{first}}{'-----':<{second}}" + "-" * 40]
    for name, prime, aliases, summary in rows:
        text = f"{name:<{first}}{prime:<{second}}" + (f"[{aliases}] " if aliases else "") + summary
        if len(text) > width:
            text = text[: width - 3].rstrip() + "..."
        lines.append(text)
    lines.append("")
    lines.append("Parameters, treatment of unjudged documents and sources: pdeval measures NAME ...")
    return lines


def _describe(name: str) -> list[str]:
    from pdeval.measures import available, parse

    measure = parse(name)
    row = available().set_index("measure").loc[measure.spec.name]
    return [
        f"{measure.spec.name}: {row['summary']}",
        f"  parameters (defaults): {row['parameters']}" + (f"; {row['cutoff']}" if row["cutoff"] else ""),
        f"  aliases: {row['aliases'] or '-'}; trec_eval: {measure.spec.trec_eval or '-'}; "
        f"prime {measure.spec.name}' evaluates the condensed list",
        f"  unjudged (absent) documents: {row['unjudged (absent)']}",
        f"  pooled (-1) documents: {row['pooled (-1)']}",
        f"  unretrieved relevant documents: {row['unretrieved relevant']}",
        f"  source: {row['reference']}",
    ]


def _measures(args: argparse.Namespace) -> int:
    if args.markdown:
        print(measure_table_markdown())
        return 0
    if args.names:
        lines = []
        for name in args.names:
            try:
                lines += _describe(name)
            except MeasureError as error:
                raise MeasureError(f"pdeval measures {name}: {error}") from None
        print("\n".join(lines))
        return 0
    print("\n".join(_measure_lines()))
    return 0


def _report(args: argparse.Namespace) -> int:
    from pdeval.report.study import report_from_args

    return report_from_args(args)


# --------------------------------------------------------------------------- entry point


def _one_line(text: object) -> str:
    return " ".join(str(text).split())


class _Warnings:
    """Warnings of one command, held back: printed one a line when the command succeeds, and
    folded into the error line when it fails (one stderr line per failure)."""

    def __init__(self) -> None:
        self.messages: list[str] = []

    def show(self, message, category, filename, lineno, file=None, line=None) -> None:
        text = _one_line(message)
        if text not in self.messages:
            self.messages.append(text)

    def flush(self) -> None:
        for text in self.messages:
            print(f"pdeval: warning: {text}", file=sys.stderr)
        self.messages = []

    def suffix(self) -> str:
        """What an error line adds about the warnings before it."""
        if not self.messages:
            return ""
        more = f" and {len(self.messages) - 1} more" if len(self.messages) > 1 else ""
        return f" (after the warning: {self.messages[0]}{more})"


def _fail(prog: str, text: str, held: _Warnings) -> int:
    print(f"{prog}: {text}{held.suffix()}", file=sys.stderr)
    return 2


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``pdeval`` console script; returns the exit code.

    0 on success; 2 on any error, printed as one line on stderr (warnings that came before
    it are named in that line, not printed). An unexpected exception (a bug) is reported the
    same way unless ``PDEVAL_DEBUG`` is set, which re-raises it.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = "pdeval" + (f" {argv[0]}" if argv and argv[0] in ("eval", "measures", "report") else "")
    held = _Warnings()
    with warnings.catch_warnings():
        warnings.showwarning = held.show
        try:
            args = _parse_args(argv)
            handler = {"eval": _eval, "measures": _measures, "report": _report}[args.command]
            code = handler(args)
            held.flush()
            return code
        except (_UsageError, PdevalError) as error:
            advised = isinstance(error, DuplicateError) and "Pass duplicates=" in str(error)
            hint = " (on the command line: --duplicates first|max)" if advised else ""  # never for merged systems
            return _fail(prog, f"error: {_one_line(error)}{hint}", held)
        except BrokenPipeError:  # e.g. piped into head
            return 0
        except KeyboardInterrupt:
            _fail(prog, "interrupted", held)
            return 130
        except Exception as error:  # a bug: one line, unless debugging
            if os.environ.get("PDEVAL_DEBUG"):
                raise
            return _fail(prog, f"internal error: {type(error).__name__}: {_one_line(error)} "
                               "(a bug; PDEVAL_DEBUG=1 shows the traceback)", held)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
