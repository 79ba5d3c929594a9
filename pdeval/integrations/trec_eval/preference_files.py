"""trec_eval's preference files (``-R prefs``, ``-R qrels_prefs``) and the preference frame.

A preference frame has the columns ``query_id``, ``judgment_group``, ``judgment_subgroup``,
``doc_id`` and ``relevance`` (the level that orders the documents of a sub-group);
:func:`read_prefs` reads trec_eval's prefs format (``qid jg jsg docno rel_level``),
:func:`read_qrels_prefs` a qrels file as trec_eval's ``qrels_prefs`` reads it, and
:func:`qrels_prefs` derives the preferences of a qrels frame. The measures are in
:mod:`pdeval.integrations.trec_eval.preferences`.
"""

from __future__ import annotations

import os
from typing import Optional, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import ALIEN, Domain, FilePath, Nullable, Refused, Text, contract
from pdeval.errors import ParseError, SchemaError
from pdeval.frames.domains import Frame
from pdeval.integrations.trec_eval.judgment_groups import table_lines

__all__ = ["PREFS_COLUMNS", "PreferenceFrame", "qrels_prefs", "read_prefs", "read_qrels_prefs"]

PathLike = Union[str, "os.PathLike[str]"]

PREFS_COLUMNS = ["query_id", "judgment_group", "judgment_subgroup", "doc_id", "relevance"]


class PreferenceFrame(Domain):
    """The domain of a preference frame: a DataFrame with :data:`PREFS_COLUMNS`."""

    text = f"a preference frame (columns {PREFS_COLUMNS})"

    def convert(self, value):
        if not isinstance(value, pd.DataFrame):
            raise Refused(f"it is a {type(value).__name__}", SchemaError)
        missing = [c for c in PREFS_COLUMNS if c not in value.columns]
        if missing:
            raise Refused(f"it lacks column(s) {missing}; it has {list(value.columns)[:8]} (read it with "
                          "pdeval.read_prefs, or derive it from qrels with pdeval.qrels_prefs)", SchemaError)
        return value

    def outside(self) -> list:
        return [ALIEN, None, pd.DataFrame({"x": [1]}), "prefs.txt"]

    def example(self) -> pd.DataFrame:
        return pd.DataFrame({"query_id": "1", "judgment_group": "0", "judgment_subgroup": "0", "doc_id": ["a", "b"],
                             "relevance": [1.0, 0.0]})


# --------------------------------------------------------------------------- reading


def _levels(frame: pd.DataFrame, numbers: list, source: PathLike) -> pd.DataFrame:
    level = pd.to_numeric(frame["relevance"], errors="coerce")
    bad = np.flatnonzero(~np.isfinite(level.to_numpy(dtype=np.float64)))
    if len(bad):
        raise ParseError(f"the relevance level must be a number, got {frame['relevance'].iloc[bad[0]]!r}",
                         str(source), numbers[bad[0]])
    return frame.assign(relevance=level.astype(np.float64))


@contract(source=FilePath())
def read_prefs(source: PathLike) -> pd.DataFrame:
    """Read a trec_eval preference file (``qid jg jsg docno rel_level``, trec_eval ``-R prefs``).

    Parameters
    ----------
    source : str or path
        The file; lines whose first field starts with ``#`` and blank lines are skipped.

    Returns
    -------
    DataFrame
        ``query_id``, ``judgment_group``, ``judgment_subgroup``, ``doc_id`` (str) and
        ``relevance`` (float: the level that orders the documents of a sub-group), in file order.

    Raises
    ------
    ParseError
        A line without five fields or whose level is no number, naming the line.

    See Also
    --------
    evaluate_preferences : the prefs_* measures of a run.
    qrels_prefs : the preferences of graded qrels.

    Examples
    --------
    >>> import tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "prefs")
    >>> _ = open(path, "w").write("1 u s d1 2\\n1 u s d2 1\\n")
    >>> pdeval.read_prefs(path)
      query_id judgment_group judgment_subgroup doc_id  relevance
    0        1              u                 s     d1        2.0
    1        1              u                 s     d2        1.0
    """
    rows, numbers = table_lines(source, 5, "prefs (qid jg jsg docno rel_level)")
    return _levels(pd.DataFrame(rows, columns=PREFS_COLUMNS), numbers, source)


def read_qrels_prefs(source: PathLike) -> pd.DataFrame:
    """A qrels file read as preferences (trec_eval ``-R qrels_prefs``): the jg is the second
    column, one sub-group, the relevance as a number."""
    rows, numbers = table_lines(source, 4, "qrels (qid iter docno rel)")
    frame = pd.DataFrame(rows, columns=["query_id", "judgment_group", "doc_id", "relevance"])
    frame = _levels(frame, numbers, source).assign(judgment_subgroup="0")
    return frame[PREFS_COLUMNS]


@contract(qrels=Frame("qrels"), group=Nullable(Text("a column name")))
def qrels_prefs(qrels: pd.DataFrame, group: Optional[str] = None) -> pd.DataFrame:
    """The preferences of graded qrels: within a topic (and judgment group), every document is
    preferred to every document of a lower relevance (trec_eval ``-R qrels_prefs``).

    Parameters
    ----------
    qrels : DataFrame
        A qrels frame.
    group : str, optional
        A column naming judgment groups (each its own set of preferences); default: one group
        per topic.

    Returns
    -------
    DataFrame
        A preference frame (``query_id``, ``judgment_group``, ``judgment_subgroup``,
        ``doc_id``, ``relevance``) for :func:`evaluate_preferences`.

    See Also
    --------
    read_prefs : read trec_eval's preference format.
    evaluate_preferences : the prefs_* measures of a run.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["a", "b"], "relevance": [2, 0]})
    >>> pdeval.qrels_prefs(qrels)
      query_id judgment_group judgment_subgroup doc_id  relevance
    0        1              0                 0      a        2.0
    1        1              0                 0      b        0.0
    """
    groups = qrels[group].astype(str) if group is not None else "0"
    frame = pd.DataFrame({"query_id": qrels["query_id"].astype(str), "judgment_group": groups,
                          "judgment_subgroup": "0", "doc_id": qrels["doc_id"].astype(str),
                          "relevance": qrels["relevance"].astype(np.float64)})
    return frame.reset_index(drop=True)
