"""Judgment groups: several independent judgment sets of the same topics (trec_eval ``-R qrels_jg``).

A judgment-group qrels file is a TREC qrels file whose second column names the group that
judged the pair (``qid jg docno rel``): each group (an assessor, a user) is a complete
judgment set of its topics. trec_eval 10.0's ``map_avgjg``, ``P_avgjg`` and
``Rprec_mult_avgjg`` (``-m qrels_jg``) evaluate the run against each group of a topic and
average over the groups of that topic (Voorhees, "Variations in relevance judgments and the
measurement of retrieval effectiveness", IP&M 36(5), 2000, judged TREC topics by several
assessors this way). :func:`evaluate_judgment_groups` does so for any pdeval measure: one
evaluation with the group as a qrels variant, then the mean over the groups of each topic
(a value undefined for a group, e.g. AP without a relevant document, counts as 0 there, as
trec_eval adds nothing for it).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import FilePath, Text, contract
from pdeval.engine.options import takes_engine_options
from pdeval.errors import ParseError
from pdeval.evaluation.judgment_kinds import GROUP, average_groups
from pdeval.frames.domains import Frame
from pdeval.measures.domains import Measures

__all__ = ["GROUP", "evaluate_judgment_groups", "read_qrels_jg", "table_lines"]


#: a file named by a string or a path object


def table_lines(source, n_fields: int, layout: str) -> tuple[list, list]:
    """The whitespace-separated fields of each line of a trec_eval input file and the line
    numbers, skipping blank lines and lines whose first field starts with ``#`` (as trec_eval's
    readers do); a line with another number of fields is a :class:`ParseError` naming it."""
    text = Path(source).read_bytes().decode("utf-8")
    rows, numbers = [], []
    for number, line in enumerate(text.split("\n"), start=1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) != n_fields:
            raise ParseError(f"a {layout} line needs {n_fields} fields, got {len(fields)}", str(source), number)
        rows.append(fields)
        numbers.append(number)
    return rows, numbers


@contract(source=FilePath())
def read_qrels_jg(source: Union[str, "os.PathLike[str]"]) -> pd.DataFrame:
    """Read a trec_eval judgment-group qrels file (``qid jg docno rel``, trec_eval ``-R qrels_jg``).

    Lines whose first field starts with ``#`` and blank lines are skipped, as trec_eval
    does (a ``#`` inside a docno is kept).

    Parameters
    ----------
    source : str or path
        The file.

    Returns
    -------
    DataFrame
        ``query_id``, ``judgment_group``, ``doc_id`` (str) and ``relevance`` (int64), in file
        order: a qrels frame whose ``judgment_group`` is a variant key
        (``variants=["judgment_group"]``).

    Raises
    ------
    ParseError
        A line without four fields or whose relevance is no integer, naming the line.

    See Also
    --------
    evaluate_judgment_groups : evaluate a run against every judgment group and average.
    read_qrels : the ordinary qrels file (one judgment set).

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "qrels.jg")
    >>> _ = open(path, "w").write("1 a d1 1\\n# a comment\\n1 b d1 0\\n")
    >>> pdeval.read_qrels_jg(path)
      query_id judgment_group doc_id  relevance
    0        1              a     d1          1
    1        1              b     d1          0
    """
    rows, lines = table_lines(source, 4, "qrels_jg (qid jg docno rel)")
    frame = pd.DataFrame(rows, columns=["query_id", GROUP, "doc_id", "relevance"])
    relevance = pd.to_numeric(frame["relevance"], errors="coerce")
    bad = relevance.isna().to_numpy() | (relevance.to_numpy() % 1 != 0)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise ParseError(f"the relevance must be an integer, got {rows[first][3]!r}", str(source), lines[first])
    return frame.assign(relevance=relevance.astype(np.int64))


@contract(run=Frame("run"), qrels=Frame("qrels"), measures=Measures(), group=Text("a column name"))
@takes_engine_options
def evaluate_judgment_groups(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[str, Iterable[str]],
    *,
    group: str = GROUP,
    **options: Any,
) -> pd.DataFrame:
    """Evaluate a run against every judgment group of each topic, and average over the groups.

    For topic t judged by the groups G_t, ``value(t) = 1/|G_t| Σ_{g in G_t} m(run_t, qrels_g)``
    (trec_eval's ``*_avgjg`` measures: ``map_avgjg`` is AP, ``P_avgjg_k`` is P@k,
    ``Rprec_mult_avgjg_m`` is RprecMult(m=m), each averaged so). A value undefined for a group
    (no relevant document there) counts as 0, as trec_eval adds nothing for it.

    Parameters
    ----------
    run : DataFrame
        A run frame.
    qrels : DataFrame
        A qrels frame with a judgment-group column (:func:`read_qrels_jg`).
    measures : str or list of str
        pdeval measure strings.
    group : str, default 'judgment_group'
        The column naming the judgment group.
    {engine_options}

    Returns
    -------
    DataFrame
        ``run``, ``query_id``, ``measure``, ``value``: per topic, the mean over its groups.

    See Also
    --------
    read_qrels_jg : read trec_eval's judgment-group qrels format.
    evaluate : one judgment set (or every variant separately, with ``variants=``).

    Examples
    --------
    >>> run = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "score": [2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["1", "1", "1"], "judgment_group": ["a", "a", "b"],
    ...                       "doc_id": ["d1", "d2", "d2"], "relevance": [1, 0, 1]})
    >>> pdeval.evaluate_judgment_groups(run, qrels, ["AP", "P@2"])
       run query_id measure  value
    0  run        1      AP   0.75
    1  run        1     P@2   0.50
    """
    from pdeval.evaluation.core import evaluate

    if group not in qrels.columns:
        from pdeval.errors import SchemaError

        raise SchemaError(f"the qrels frame has no judgment-group column {group!r}; it has {list(qrels.columns)} "
                          "(pass group=<column>, or read the file with pdeval.read_qrels_jg)")
    variants = list(options.pop("variants", None) or ())
    result = evaluate(run, qrels, measures, variants=[*variants, group], **{"undefined": "nan", **options})
    return average_groups(result, group)
