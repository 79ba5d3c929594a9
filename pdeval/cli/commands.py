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

import numpy as np
import pandas as pd

from pdeval.errors import DuplicateError, MeasureError, PdevalError

#: measures whose "all" line trec_eval reports as a sum over topics, not a mean
SUMMED = {"NumRet", "NumRel", "NumRelRet", "inum_rel", "inum_rel_ret"}

#: of those, the ones that count documents (printed as integers); sample_eval.pl's estimated
#: counts are sums of fractions, printed like every other value
COUNTS = {"NumRet", "NumRel", "NumRelRet"}

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
    ev.add_argument("-l", "--rel", type=int, default=None,
                    help="relevance threshold of binary measures (trec_eval -l) (default: 1)")
    ev.add_argument("--float32", action="store_true",
                    help="order by float32 scores (trec_eval <= 9.0.7, pytrec_eval)")
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
    ev.add_argument("--bounds-unjudged", choices=("all", "absent", "pooled"), default="all",
                    help="with --bounds: which unjudged documents to fill in (absent from the qrels, pooled -1, or both)")

    ms = _subparser(commands, "measures", help="list the measures and how each treats unjudged documents",
                    description="List the measures, one a line; give names for the details of each.")
    ms.add_argument("names", nargs="*", metavar="MEASURE", help="measures to describe in full (default: list all)")
    ms.add_argument("--markdown", action="store_true", help="print the README's measure table")

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
    from pdeval.integrations import treceval

    try:
        treceval.select([text])
    except MeasureError:
        return False
    return True


def _check_file_names(args: argparse.Namespace) -> None:
    """A file name that does not exist but reads as a measure was meant for ``-m``."""
    from pdeval.sources.io import _has_glob_magic

    for name in [args.qrels, *args.runs]:
        if not Path(name).exists() and not _has_glob_magic(name) and _looks_like_measure(name):
            raise _UsageError(
                f"{name!r} is not a file but reads as a measure: -m takes one measure, repeat it "
                f"(-m AP -m {name}); files come after the options or before them"
            )


def _selection(args: argparse.Namespace):
    """pdeval measures with their output names and trec_eval order, and the command values."""
    from pdeval.integrations import treceval
    from pdeval.measures import parse

    selection = treceval.select(args.measures or ["official"])
    measures, names, order = [], {}, {}
    for position, text in enumerate(selection.measures):
        try:
            measure = parse(text, judged_only=args.judged_only, rel=args.rel)
        except (MeasureError, TypeError, ValueError) as error:  # a parameter of the wrong type too
            raise MeasureError(f"-m {text}: {error}") from None
        plain = parse(text)  # trec_eval keeps its names under -J and -l
        if str(measure) in names:
            continue
        name, family = selection.display.get(text, (plain.trec_eval_name(), None))
        measures.append(measure)
        names[str(measure)] = name
        order[str(measure)] = treceval.order_key(plain, position, family)
    return measures, names, order, selection


def trec_eval_table(result: pd.DataFrame, measures, order: dict, command: list, per_topic: bool) -> pd.DataFrame:
    """trec_eval's rows for each run: per-topic values (with -q), then the ``all`` lines.

    ``all`` is the sum over topics for the counts (num_ret, num_rel, num_rel_ret) and the mean
    otherwise, as trec_eval prints them; ``num_q`` is the number of topics averaged over. Runs
    keep the order of the result; topics are in byte order, measures in trec_eval's order.
    """
    summed = {str(m) for m in measures if m.spec.name in SUMMED}
    rank = {name: i for i, name in enumerate(sorted(order, key=order.get))}
    group = result.groupby(["run", "measure"], sort=False)["value"]
    total = pd.concat([group.sum(), group.mean()], axis=1, keys=["sum", "mean"]).reset_index()
    total["value"] = total["sum"].where(total["measure"].isin(summed), total["mean"])
    parts = [total.assign(query_id="all", _section=2)[["run", "measure", "query_id", "value", "_section"]]]
    if "num_q" in command:
        counts = result.groupby("run", sort=False)["query_id"].nunique()
        parts.append(pd.DataFrame({"run": counts.index, "measure": "num_q", "query_id": "all",
                                   "value": counts.to_numpy(dtype=float), "_section": 1}))
    if per_topic:
        parts.append(result[["run", "measure", "query_id", "value"]].assign(_section=0))
    table = pd.concat(parts, ignore_index=True)
    table["query_id"] = table["query_id"].astype(str)
    runs = {run: i for i, run in enumerate(dict.fromkeys(result["run"]))}
    table = table.assign(_run=table["run"].map(runs), _order=table["measure"].map(rank).fillna(-1),
                         _topic=table["query_id"].where(table["_section"] == 0, ""))
    table = table.sort_values(["_run", "_section", "_topic", "_order"], kind="stable")
    return table[["run", "measure", "query_id", "value"]].reset_index(drop=True)


def _runids(args: argparse.Namespace) -> dict:
    """trec_eval's ``runid`` of each run: the tag of the file's last run line."""
    from pdeval.sources.io import _read_bytes, _resolve_sources, run_name

    if args.run_from == "tag":
        return {}  # runs are named by their tags already
    ids = {}
    for path in _resolve_sources(args.runs):
        data, tag = _read_bytes(path), None
        end = len(data)
        while tag is None and end > 0:  # from the last line backwards to the first run line
            start = data.rfind(b"\n", 0, end) + 1
            fields = data[start:end].split()
            if len(fields) >= 6 and not fields[0].startswith(b"#"):
                tag = fields[5].decode("utf-8", "replace")
            end = start - 1
        ids[run_name(path)] = tag if tag is not None else run_name(path)
    return ids


def _some(ids: pd.Series, n: int = 5) -> str:
    """A few of the distinct ``ids``, for messages."""
    unique = sorted(pd.unique(ids.astype(str)))
    return ", ".join(map(repr, unique[:n])) + (", ..." if len(unique) > n else "")


def _formatted_values(measure: pd.Series, value: pd.Series, counts: set) -> np.ndarray:
    """trec_eval's text of each value: counts as integers, the others with four decimals."""
    is_count = measure.isin(counts).to_numpy()
    value = value.to_numpy(dtype=float)
    text = np.empty(len(value), dtype=object)
    text[is_count] = [str(int(round(v))) for v in value[is_count].tolist()]
    text[~is_count] = [f"{v:.4f}" for v in value[~is_count].tolist()]
    return text


def _tsv_text(table: pd.DataFrame, names: dict, counts: set, runids: Optional[dict], bounds: bool) -> str:
    """trec_eval's output lines for the rows of :func:`trec_eval_table`: measure (renamed by
    ``names``, padded to 22 characters), topic and value, tab-separated, led by the run when
    there are several; with ``runids``, a ``runid`` line heads each run's ``all`` lines."""
    measure = table["measure"]
    shown = measure.map({m: f"{names.get(m, m):<22}" for m in measure.unique()})
    fields = [shown.tolist(), table["query_id"].astype(str).tolist(), _formatted_values(measure, table["value"], counts)]
    if bounds:
        fields += [_formatted_values(measure, table[column], counts) for column in ("high", "residual")]
    run = table["run"].astype(str)
    single = run.nunique() == 1
    if not single:
        fields.insert(0, run.tolist())
    lines = np.array(list(map("\t".join, zip(*fields))), dtype=object)
    if runids is not None:  # before each run's first "all" line
        all_rows = np.flatnonzero((table["query_id"] == "all").to_numpy())
        first_all = all_rows[~run.iloc[all_rows].duplicated().to_numpy()]
        heads = [[name, f"{'runid':<22}", "all", runids.get(name, name)] for name in run.to_numpy()[first_all]]
        lines = np.insert(lines, first_all, ["\t".join(head[1:] if single else head) for head in heads])
    return "\n".join(lines.tolist()) + "\n"


def _eval(args: argparse.Namespace) -> int:
    from pdeval.evaluation.core import evaluate
    from pdeval.sources.io import read_qrels, read_run
    from pdeval.evaluation.runfiles import evaluate_run_files

    _check_file_names(args)
    measures, names, order, selection = _selection(args)
    command = selection.command
    qrels = read_qrels(args.qrels, duplicates=args.duplicates)
    options = dict(complete=args.complete, depth=args.depth,
                   score_precision="float32" if args.float32 else "float64", duplicates=args.duplicates)
    one_at_a_time = not args.bounds and args.run_from == "file"  # memory follows the largest file
    run = None if one_at_a_time else read_run(args.runs, duplicates=args.duplicates, run_from=args.run_from)
    try:
        if one_at_a_time:
            result = evaluate_run_files(args.runs, qrels, measures, **options)
        elif args.bounds:
            from pdeval.evaluation.bounds import bounds

            filled = bounds(run, qrels, measures, unjudged=args.bounds_unjudged, **options)
            result = filled
        else:
            result = evaluate(run, qrels, measures, **options)
    except PdevalError as error:  # not about one line of a file: name the files
        raise PdevalError(f"evaluating {' '.join([args.qrels, *args.runs])}: {error}") from None
    if result.empty:  # (evaluate refuses no shared topic itself; kept for runs with no rows left)
        raise PdevalError(
            f"no topic of {' '.join(args.runs)} is in {args.qrels}: qrels topics {_some(qrels['query_id'])} "
            "(leading zeros? the wrong qrels file?)"
        )
    table = trec_eval_table(result, measures, order, command, args.per_topic)
    if args.bounds:  # the same rows in the same order for the high and residual values
        for column in ("high", "residual"):
            other = trec_eval_table(filled.drop(columns="value").rename(columns={column: "value"}), measures, order,
                                    command, args.per_topic)
            table[column] = other["value"].to_numpy()
    use_trec_names = args.names == "trec_eval" or (args.names == "auto" and args.format == "tsv")
    counts = {str(m) for m in measures if m.spec.name in COUNTS} | {"num_q"}
    if args.format == "tsv":
        runids = _runids(args) if "runid" in command else None
        sys.stdout.write(_tsv_text(table, names if use_trec_names else {}, counts, runids, args.bounds))
    else:
        if use_trec_names:
            table["measure"] = table["measure"].map(lambda m: names.get(m, m))
        if args.format == "csv":
            table.to_csv(sys.stdout, index=False)
        else:
            sys.stdout.write(table.to_json(orient="records") + "\n")
    if selection.lacking:  # after the output, so that an error stays the only line on stderr
        print(f"pdeval: note: pdeval lacks trec_eval's {', '.join(selection.lacking)} (not printed)",
              file=sys.stderr)
    return 0


# --------------------------------------------------------------------------- pdeval measures


def measure_table_markdown() -> str:
    """The README's table of measures, generated from the registry."""
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


def _show_warning(message, category, filename, lineno, file=None, line=None) -> None:
    print(f"pdeval: warning: {_one_line(message)}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``pdeval`` console script; returns the exit code.

    0 on success; 2 on any error, printed as one line on stderr. An unexpected exception
    (a bug) is reported the same way unless ``PDEVAL_DEBUG`` is set, which re-raises it.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    prog = "pdeval" + (f" {argv[0]}" if argv and argv[0] in ("eval", "measures", "report") else "")
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            args = _parse_args(argv)
            handler = {"eval": _eval, "measures": _measures, "report": _report}[args.command]
            return handler(args)
        except (_UsageError, PdevalError) as error:
            hint = " (on the command line: --duplicates first|max)" if isinstance(error, DuplicateError) else ""
            print(f"{prog}: error: {_one_line(error)}{hint}", file=sys.stderr)
            return 2
        except BrokenPipeError:  # e.g. piped into head
            return 0
        except KeyboardInterrupt:
            print(f"{prog}: interrupted", file=sys.stderr)
            return 130
        except Exception as error:  # a bug: one line, unless debugging
            if os.environ.get("PDEVAL_DEBUG"):
                raise
            print(f"{prog}: internal error: {type(error).__name__}: {_one_line(error)} "
                  f"(a bug; PDEVAL_DEBUG=1 shows the traceback)", file=sys.stderr)
            return 2


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
