"""The ``pdeval`` command (also ``python -m pdeval``).

``pdeval eval QRELS RUN... -m MEASURE...`` evaluates TREC run files like trec_eval; for one
run its tsv output has trec_eval's three columns (measure, topic or ``all``, value), so
scripts that read trec_eval output can switch. ``pdeval measures`` lists the measures.
"""

from __future__ import annotations

import argparse
import sys
from typing import Optional, Sequence

import pandas as pd

from .errors import PdevalError

DEFAULT_MEASURES = ["AP", "P@10", "Rprec", "RR", "nDCG", "Bpref", "infAP", "NumRet", "NumRel", "NumRelRet"]
#: measures whose "all" line trec_eval reports as a sum over topics, not a mean
SUMMED = {"NumRet", "NumRel", "NumRelRet"}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="pdeval", description="IR evaluation with incomplete judgments.")
    commands = parser.add_subparsers(dest="command", required=True)

    ev = commands.add_parser("eval", help="evaluate TREC run files against a qrels file (like trec_eval)")
    ev.add_argument("qrels", help="qrels file (query_id iteration doc_id relevance)")
    ev.add_argument("runs", nargs="+", help="run files, directories or globs")
    ev.add_argument("-m", "--measure", dest="measures", action="extend", nargs="+",
                    help="measures, e.g. AP P@10 \"nDCG'@10\" infAP(c=1.5) (default: %(default)s)")
    ev.add_argument("-q", "--per-topic", action="store_true", help="print per-topic values too (trec_eval -q)")
    ev.add_argument("-c", "--complete", action="store_true", help="average over every qrels topic (trec_eval -c)")
    ev.add_argument("-J", "--judged-only", action="store_true", help="condensed lists: drop unjudged documents (trec_eval -J)")
    ev.add_argument("-M", "--depth", type=int, default=None, help="keep the first DEPTH documents (trec_eval -M)")
    ev.add_argument("-l", "--rel", type=int, default=None, help="relevance threshold for binary measures (trec_eval -l)")
    ev.add_argument("--float32", action="store_true", help="order by float32 scores (trec_eval <= 9.0.8, pytrec_eval)")
    ev.add_argument("--format", choices=("tsv", "csv", "json"), default="tsv", help="output format")
    ev.add_argument("--duplicates", choices=("error", "first", "max"), default="error",
                    help="what to do with repeated documents in a run (default: error)")

    ms = commands.add_parser("measures", help="list the measures and how each treats unjudged documents")
    ms.add_argument("--markdown", action="store_true", help="print the README's measure table")

    rep = commands.add_parser("report", help="run the whole robustness study and write a report")
    rep.add_argument("--qrels", help="qrels file (default: the bundled CLEF eHealth 2018 data)")
    rep.add_argument("--runs", nargs="+", help="run files or a directory")
    rep.add_argument("--partial-qrels", help="a real partial qrels snapshot to compare with")
    rep.add_argument("--levels", nargs="+", type=int, help="reduction levels in percent")
    rep.add_argument("--samples", type=int, default=10, help="samples per level")
    rep.add_argument("--depths", nargs="+", type=int, default=[10, 20, 50], help="pool depths to study")
    rep.add_argument("--bootstrap", type=int, default=1000, help="bootstrap replicates for discriminative power")
    rep.add_argument("--measures", nargs="+", help="measures to study")
    rep.add_argument("--out", required=True, help="output folder")
    rep.add_argument("--seed", type=int, default=1)
    rep.add_argument("--no-progress", action="store_true")
    return parser


def _trec_eval_table(result: pd.DataFrame, per_topic: bool) -> pd.DataFrame:
    """trec_eval's rows: per-topic values (with -q) then the ``all`` line of each measure."""
    summary = result.groupby(["run", "measure"], sort=False)["value"]
    means = summary.mean()
    sums = summary.sum()
    total = pd.Series(
        [sums[key] if key[1] in SUMMED else means[key] for key in means.index], index=means.index
    ).reset_index(name="value").assign(query_id="all")
    parts = [result[["run", "measure", "query_id", "value"]]] if per_topic else []
    return pd.concat(parts + [total[["run", "measure", "query_id", "value"]]], ignore_index=True)


def _format_value(measure: str, value: float) -> str:
    return str(int(round(value))) if measure in SUMMED else f"{value:.4f}"


def _eval(args: argparse.Namespace) -> int:
    from .io import read_qrels
    from .measures import parse_all
    from .runfiles import evaluate_run_files

    measures = parse_all(args.measures or DEFAULT_MEASURES, judged_only=args.judged_only, rel=args.rel)
    qrels = read_qrels(args.qrels)
    result = evaluate_run_files(  # one file at a time: memory follows the largest file
        args.runs, qrels, measures, complete=args.complete, depth=args.depth,
        score_precision="float32" if args.float32 else "float64", duplicates=args.duplicates,
    )
    names = {str(m): m.trec_eval_name() for m in measures}
    table = _trec_eval_table(result, args.per_topic)
    if args.format == "tsv":
        single = table["run"].nunique() == 1
        lines = []
        for row in table.itertuples(index=False):
            name = names.get(row.measure, row.measure)
            fields = [f"{name:<22}", str(row.query_id), _format_value(row.measure, row.value)]
            lines.append("\t".join(fields if single else [str(row.run)] + fields))
        sys.stdout.write("\n".join(lines) + "\n")
    elif args.format == "csv":
        table.to_csv(sys.stdout, index=False)
    else:
        sys.stdout.write(table.to_json(orient="records") + "\n")
    return 0


def measure_table_markdown() -> str:
    """The README's table of measures, generated from the registry."""
    from .measures import available

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


def _measures(args: argparse.Namespace) -> int:
    from .measures import available

    if args.markdown:
        print(measure_table_markdown())
        return 0
    table = available()[["measure", "parameters", "unjudged (absent)", "pooled (-1)", "summary"]]
    with pd.option_context("display.max_colwidth", 60, "display.width", 200):
        print(table.to_string(index=False))
    return 0


def _report(args: argparse.Namespace) -> int:
    from .report import report_from_args

    return report_from_args(args)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Entry point of the ``pdeval`` console script."""
    args = _parser().parse_args(argv)
    handler = {"eval": _eval, "measures": _measures, "report": _report}[args.command]
    try:
        return handler(args)
    except PdevalError as error:
        print(f"pdeval: error: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # e.g. piped into head
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
