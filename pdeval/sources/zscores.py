"""trec_eval's z-score files (``trec_eval -Z Zmean_file``): read and write.

A z-score file holds, per topic and trec_eval measure name, the mean and the standard
deviation of a reference set of runs, one line each::

    qid  measure_name  mean  std_dev

(fields separated by whitespace, as trec_eval 10.0's ``get_zscores.c`` reads them; it reads
the two numbers with C's ``atof``). :func:`pdeval.standardize` applies such a file as
trec_eval's ``convert_zscores.c`` does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Union

import numpy as np
import pandas as pd

from pdeval.common.contract import FilePath, Nullable, contract
from pdeval.errors import ParseError, SchemaError
from pdeval.frames.domains import Frame

__all__ = ["read_zscores", "write_zscores"]

PathLike = Union[str, "os.PathLike[str]"]


@contract(source=FilePath())
def read_zscores(source: PathLike) -> pd.DataFrame:
    """Read a trec_eval z-score file.

    Parameters
    ----------
    source : str or path
        The file (``qid measure_name mean std_dev`` per line).

    Returns
    -------
    DataFrame
        ``query_id``, ``measure`` (trec_eval's name, as in the file: ``map``, ``P_10``),
        ``mean``, ``stddev`` (floats), in file order.

    Raises
    ------
    ParseError
        A line without exactly four fields (trec_eval: "Malformed line") or whose numbers
        do not read as numbers (where trec_eval's ``atof`` would silently read 0), with the
        file and the line number.

    See Also
    --------
    write_zscores : Write a z-score file.
    zscore_table : The z-score table of reference runs.
    standardize : Standardise results with it.

    Examples
    --------
    >>> _ = open("zscores.txt", "w").write("1 map 0.25 0.1\\n2 map 0.5 0.2\\n")
    >>> pdeval.read_zscores("zscores.txt")
      query_id measure  mean  stddev
    0        1     map  0.25     0.1
    1        2     map  0.50     0.2
    """
    text = Path(source).read_bytes().decode("utf-8")
    rows = []
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields and number == len(text.split("\n")):
            continue  # the end of the last line
        if len(fields) != 4:
            raise ParseError(f"a z-score line needs 4 fields (qid measure mean stddev), got {len(fields)}",
                             str(source), number)
        try:
            rows.append((fields[0], fields[1], float(fields[2]), float(fields[3])))
        except ValueError:
            raise ParseError(f"mean and stddev must be numbers, got {fields[2]!r} and {fields[3]!r}",
                             str(source), number) from None
    return pd.DataFrame(rows, columns=["query_id", "measure", "mean", "stddev"]).astype(
        {"mean": np.float64, "stddev": np.float64})


@contract(table=Frame("any"), path=Nullable(FilePath()))
def write_zscores(table: pd.DataFrame, path: PathLike = None) -> str:
    """Write a z-score table (``query_id``, ``measure``, ``mean``, ``stddev``) in trec_eval's
    format, numbers with 17 significant digits (read back exactly); return the text.

    The ``measure`` column must hold trec_eval's names (:func:`pdeval.zscore_table` writes
    them so).

    Parameters
    ----------
    table : DataFrame
        A z-score table of :func:`pdeval.zscore_table`.
    path : str or path, optional
        The file to write; None only returns the text.

    Returns
    -------
    str
        The text of the file.

    See Also
    --------
    read_zscores : Read a z-score file.
    zscore_table : The z-score table of reference runs.

    Examples
    --------
    >>> table = pd.DataFrame({"query_id": ["1", "2"], "measure": ["map", "map"],
    ...                       "mean": [0.25, 0.5], "stddev": [0.1, 0.2]})
    >>> print(pdeval.write_zscores(table, "zscores.txt"), end="")
    1	map	0.25	0.10000000000000001
    2	map	0.5	0.20000000000000001
    """
    missing = [c for c in ("query_id", "measure", "mean", "stddev") if c not in table.columns]
    if missing:
        raise SchemaError(f"a z-score table needs the columns query_id, measure, mean, stddev; it lacks {missing}")
    lines = [
        f"{q}\t{m}\t{mean:.17g}\t{sd:.17g}"
        for q, m, mean, sd in zip(table["query_id"].astype(str), table["measure"].astype(str),
                                  table["mean"].to_numpy(np.float64), table["stddev"].to_numpy(np.float64))
    ]
    text = "\n".join(lines) + "\n"
    if path is not None:
        Path(path).write_text(text)
    return text
