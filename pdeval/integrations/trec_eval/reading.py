"""trec_eval's output as data: read it into result frames.

``trec_eval -q`` prints one line per (measure, topic) and an ``all`` line per measure::

    map                   	301	0.0324
    ...
    runid                 	all	STANDARD
    num_q                 	all	3
    map                   	all	0.1785

``pdeval eval`` prints the same, with the run name as a first column when it evaluates
several runs. :func:`read_trec_eval` reads both into a result frame (``run``, ``query_id``,
``measure``, ``value``), so published per-topic outputs join new analyses (rank correlations,
significance tests); trec_eval's measure names become pdeval's canonical strings
(``map`` -> ``AP``, ``P_10`` -> ``P@10``, ``iprec_at_recall_0.10`` -> ``IPrec(recall=0.1)``),
names pdeval does not know are kept.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Optional, Union

import pandas as pd

from pdeval.common.contract import Boolean, Choice, Nullable, Text, contract
from pdeval.errors import ParseError, PdevalError
from pdeval.integrations.trec_eval.judgment_groups import FILE
from pdeval.integrations.trec_eval.names import pdeval_name

PathLike = Union[str, "os.PathLike[str]"]

#: the ``duplicates=`` policies of :func:`read_trec_eval`
DUPLICATES = ("error", "first", "last")

__all__ = ["DUPLICATES", "read_trec_eval"]


def _text(file: Path) -> str:
    from pdeval.sources.blocks import read_bytes

    data = read_bytes(file)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ParseError(f"is not UTF-8 text (byte {error.start}); is it a trec_eval output file?", str(file), line) from None


def _is_text_value(measure: str, value: str) -> bool:
    """Values that are not numbers by design: trec_eval's quoted relstring."""
    return measure.startswith("relstring") and value.startswith("'") and value.endswith("'")


def _rows(file: Path, text: str):
    """(run-or-None, measure, topic, value, line, block) of every measure line; runids per block."""
    rows, runids, width, block, seen_all = [], {}, None, 0, False
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
        if width == 3 and ((topic != "all" and seen_all) or (measure == "runid" and block in runids)):
            block, seen_all = block + 1, False  # a second output follows (files concatenated)
        seen_all = seen_all or topic == "all"
        if measure == "runid":
            if topic != "all":
                raise ParseError(f"a runid line has topic 'all', got {topic!r}: {line!r}", str(file), number)
            runids[block if width == 3 else name] = value
            continue
        try:
            rows.append((name, measure, topic, float(value), number, block))
        except ValueError:
            if _is_text_value(measure, value):
                continue
            raise ParseError(f"the value {value!r} of {measure} is not a number: {line!r}", str(file), number) from None
    return rows, runids, width


def _apply_duplicates(frame: pd.DataFrame, duplicates: str, file: Path) -> pd.DataFrame:
    key = ["run", "measure", "query_id"]
    repeated = frame.duplicated(key, keep=False)
    if not repeated.any():
        return frame
    if duplicates == "error":
        first = frame[repeated].iloc[0]
        lines = frame.loc[repeated & (frame[key] == first[key]).all(axis=1), "line"].tolist()
        raise ParseError(
            f"{int(frame.duplicated(key).sum())} repeated (run, topic, measure) line(s), e.g. {first['measure']} "
            f"of topic {first['query_id']} (run {first['run']}) on lines {', '.join(map(str, lines))}; two outputs "
            "of one run concatenated? Read with duplicates='first' or 'last' to keep one",
            str(file), int(lines[-1]),
        )
    return frame[~frame.duplicated(key, keep=duplicates)]


@contract(source=FILE, summary=Boolean(), run=Nullable(Text("a run name")), canonical=Boolean(),
          duplicates=Choice(*DUPLICATES))
def read_trec_eval(
    source: PathLike,
    *,
    summary: bool = False,
    run: Optional[str] = None,
    canonical: bool = True,
    duplicates: str = "error",
) -> pd.DataFrame:
    """Read trec_eval (or ``pdeval eval``) output into a result frame.

    Parameters
    ----------
    source : str or path
        A file of ``measure topic value`` lines (trec_eval) or ``run measure topic value``
        lines (``pdeval eval`` with several runs); ``.gz``/``.bz2``/``.xz`` are read too.
        Several trec_eval outputs concatenated are read as one run each (named by their
        ``runid`` lines).
    summary : bool, default False
        ``False``: the per-topic lines (``trec_eval -q``) as a result frame
        ``run, query_id, measure, value``. ``True``: the ``all`` lines as a frame ``run,
        measure, value`` (the shape of :func:`pdeval.summarize`).
    run : str, optional
        The run name; by default the output's ``runid`` line, else the file's name
        (:func:`pdeval.sources.io.run_name`).
    canonical : bool, default True
        Rename trec_eval's measure names to pdeval's canonical strings where pdeval knows
        the measure (``map`` -> ``AP``); ``False`` keeps the names as printed.
    duplicates : {'error', 'first', 'last'}, default 'error'
        A (run, topic, measure) given on several lines: ``"error"`` refuses the file,
        ``"first"`` / ``"last"`` keep one of the lines.

    Returns
    -------
    pandas.DataFrame
        The result frame (or the summary frame with ``summary=True``). ``runid`` lines and
        trec_eval's quoted ``relstring`` values are not measures and are left out.

    Raises
    ------
    ParseError
        With the file and line: a line of another shape, a value that is not a number, a
        repeated (run, topic, measure) under ``duplicates="error"``, text that is not UTF-8.
    PdevalError
        For a file without per-topic lines when ``summary=False``.

    See Also
    --------
    write_trec_eval : write a result frame as trec_eval output.
    evaluate : compute the values instead of reading them.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "run.trec_eval")
    >>> _ = open(path, "w").write("map\\t1\\t0.5000\\nmap\\t2\\t0.2500\\nrunid\\tall\\tbm25\\nmap\\tall\\t0.3750\\n")
    >>> pdeval.read_trec_eval(path)
        run query_id measure  value
    0  bm25        1      AP   0.50
    1  bm25        2      AP   0.25
    """
    from pdeval.sources.paths import run_name

    file = Path(source)
    rows, runids, width = _rows(file, _text(file))
    if not rows:
        raise ParseError("holds no measure line", str(file))
    frame = pd.DataFrame(rows, columns=["run", "measure", "query_id", "value", "line", "block"])
    if run is not None:
        frame["run"] = run
    elif width == 3:
        default = run_name(file)
        frame["run"] = [runids.get(block, default) for block in frame["block"].tolist()]
    if canonical:
        names = {name: pdeval_name(name) or name for name in frame["measure"].unique()}
        frame["measure"] = frame["measure"].map(names)
    frame = _apply_duplicates(frame, duplicates, file)
    is_all = (frame["query_id"] == "all").to_numpy()
    if summary:
        return frame.loc[is_all, ["run", "measure", "value"]].reset_index(drop=True)
    topics = frame.loc[~is_all & (frame["measure"] != "num_q").to_numpy(), ["run", "query_id", "measure", "value"]]
    if topics.empty:
        raise PdevalError(f"{str(file)!r} holds only 'all' lines (trec_eval without -q); read them with summary=True")
    return topics.reset_index(drop=True)
