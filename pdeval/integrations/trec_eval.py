"""trec_eval's output as data: read it into result frames, write result frames as it.

``trec_eval -q`` prints one line per (measure, topic) and an ``all`` line per measure::

    map                   	301	0.0324
    ...
    runid                 	all	STANDARD
    num_q                 	all	3
    map                   	all	0.1785

``pdeval eval`` prints the same, with the run name as a first column when it evaluates
several runs. :func:`read_trec_eval` reads both into a result frame (``run``, ``query_id``,
``measure``, ``value``), so published per-topic outputs join new analyses (rank
correlations, significance tests); trec_eval's measure names become pdeval's canonical
strings where pdeval computes the same measure (``map`` -> ``AP``, ``P_10`` -> ``P@10``,
``ndcg_cut_10`` -> ``nDCG@10``), others keep trec_eval's name. :func:`write_trec_eval`
writes a result frame in trec_eval's layout (``%-22s\\t%s\\t%.4f``, counts as integers, an
``all`` line per measure: the sum for counts, else the mean), in trec_eval's names.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

import numpy as np
import pandas as pd

from pdeval.errors import MeasureError, ParseError, PdevalError
from pdeval.frames.canonical import as_result

PathLike = Union[str, "os.PathLike[str]"]


def _canonical(names: pd.Index) -> dict:
    from pdeval.measures import parse

    mapping = {}
    for name in names:
        try:
            mapping[name] = str(parse(name))
        except MeasureError:
            mapping[name] = name
    return mapping


def read_trec_eval(
    source: PathLike,
    *,
    summary: bool = False,
    run: Optional[str] = None,
    canonical: bool = True,
) -> pd.DataFrame:
    """Read trec_eval (or ``pdeval eval``) output into a result frame.

    Parameters
    ----------
    source
        A file of ``measure topic value`` lines (trec_eval) or ``run measure topic value``
        lines (``pdeval eval`` with several runs); ``.gz``/``.bz2``/``.xz`` are read too.
    summary
        ``False`` (default): the per-topic lines (``trec_eval -q``) as a result frame
        ``run, query_id, measure, value``. ``True``: the ``all`` lines as a frame ``run,
        measure, value`` (the shape of :func:`pdeval.summarize`).
    run
        The run name; by default the file's ``runid`` line, else the file's name
        (:func:`pdeval.sources.io.run_name`).
    canonical
        Rename trec_eval's measure names to pdeval's canonical strings where pdeval knows
        the measure (``map`` -> ``AP``); ``False`` keeps the names as printed.

    Lines whose value is not a number (``runid``, trec_eval's quoted ``relstring``) are not
    measures and are left out. A malformed line raises :class:`~pdeval.errors.ParseError`
    with its line number.
    """
    from pdeval.sources.blocks import read_bytes as _read_bytes
    from pdeval.sources.paths import run_name

    file = Path(source)
    text = _read_bytes(file).decode("utf-8")
    rows = []
    runids = {}
    width = None
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split()
        if not fields:
            continue
        if width is None:
            width = len(fields)
            if width not in (3, 4):
                raise ParseError(
                    f"expected 'measure topic value' (trec_eval) or 'run measure topic value' (pdeval), "
                    f"got {len(fields)} fields: {line!r}", str(file), number,
                )
        if len(fields) != width:
            raise ParseError(f"expected {width} fields like the first line, got {len(fields)}: {line!r}", str(file), number)
        name, measure, topic, value = ([None] + fields) if width == 3 else fields
        if measure == "runid":
            runids[name] = value
            continue
        try:
            number_value = float(value)
        except ValueError:
            continue  # relstring and other non-numeric outputs are not measures
        rows.append((name, measure, topic, number_value))
    if not rows:
        raise ParseError("holds no measure line", str(file))
    frame = pd.DataFrame(rows, columns=["run", "measure", "query_id", "value"])
    if width == 3:
        frame["run"] = run if run is not None else runids.get(None, run_name(file))
    elif run is not None:
        frame["run"] = run
    if canonical:
        frame["measure"] = frame["measure"].map(_canonical(pd.Index(frame["measure"].unique())))
    is_all = (frame["query_id"] == "all").to_numpy()
    if summary:
        return frame.loc[is_all, ["run", "measure", "value"]].reset_index(drop=True)
    topics = frame.loc[~is_all & (frame["measure"] != "num_q").to_numpy(), ["run", "query_id", "measure", "value"]]
    if topics.empty:
        raise PdevalError(
            f"{str(file)!r} holds only 'all' lines (trec_eval without -q); read them with summary=True"
        )
    return topics.reset_index(drop=True)


def _trec_eval_names(measures: pd.Index) -> dict:
    from pdeval.measures import parse

    names = {}
    for measure in measures:
        try:
            names[measure] = parse(measure).trec_eval_name()
        except MeasureError:
            names[measure] = measure
    return names


def _format(values: np.ndarray, counts: np.ndarray, digits: Optional[int]) -> list:
    out = []
    for value, count in zip(values.tolist(), counts.tolist()):
        if count:
            out.append(str(int(round(value))))
        elif digits is None:
            out.append(repr(float(value)))
        else:
            out.append(f"{value:.{digits}f}")
    return out


def write_trec_eval(
    result: pd.DataFrame,
    path: Optional[PathLike] = None,
    *,
    per_topic: bool = True,
    digits: Optional[int] = 4,
) -> str:
    """Write a result frame as trec_eval output; return the text (and write it to ``path``).

    Per-topic lines (``trec_eval -q``; ``per_topic=False`` leaves them out) come first, then
    for each run ``runid``, ``num_q`` and the ``all`` line of every measure. Measures are
    named as trec_eval names them (``AP`` -> ``map``), values printed with ``digits``
    decimals (trec_eval's 4; ``None`` prints the shortest text that reads back exactly).
    One run gives trec_eval's three columns, several runs a leading run column (as
    ``pdeval eval`` prints). Variant keys (``level``, ``sample``) must be selected first.
    """
    from pdeval.cli.commands import COUNTS, trec_eval_table
    from pdeval.frames.canonical import result_keys
    from pdeval.measures import parse_all

    result = as_result(result)
    extra = [k for k in result_keys(result) if k not in ("run", "query_id")]
    if extra:
        raise PdevalError(f"the result has key column(s) {extra} besides run and query_id; select one variant first")
    if "run" not in result.columns:
        result = result.assign(run="run")
    measures = parse_all(list(pd.unique(result["measure"])))
    order = {str(m): position for position, m in enumerate(measures)}  # the result's order
    table = trec_eval_table(result, measures, order, [], per_topic)
    names = _trec_eval_names(pd.Index(table["measure"].unique()))
    counts = table["measure"].isin({str(m) for m in measures if m.spec.name in COUNTS}).to_numpy()
    values = _format(table["value"].to_numpy(dtype=np.float64), counts, digits)
    measure = [f"{names[m]:<22}" for m in table["measure"].tolist()]
    topic = table["query_id"].astype(str).tolist()
    runs = table["run"].astype(str).tolist()
    single = len(set(runs)) == 1
    lines_by_run: dict = {}
    per_run_all: dict = {}
    for r, m, t, v in zip(runs, measure, topic, values):
        fields = [m, t, v] if single else [r, m, t, v]
        (per_run_all if t == "all" else lines_by_run).setdefault(r, []).append("\t".join(fields))
    lines = [line for r in lines_by_run for line in lines_by_run[r]]
    topics_per_run = result.groupby("run", sort=False)["query_id"].nunique()
    for r, all_lines in per_run_all.items():
        head = [[f"{'runid':<22}", "all", r], [f"{'num_q':<22}", "all", str(int(topics_per_run[r]))]]
        lines += ["\t".join(h if single else [r] + h) for h in head] + all_lines
    text = "\n".join(lines) + "\n"
    if path is not None:
        Path(path).write_text(text)
    return text


__all__ = ["read_trec_eval", "write_trec_eval"]
