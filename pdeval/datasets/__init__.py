"""Small real evaluation data sets shipped inside pdeval.

>>> from pdeval import datasets
>>> datasets.names()
['clef2018']
>>> clef = datasets.load("clef2018")
>>> clef.runs.columns.tolist()
['run', 'query_id', 'doc_id', 'score', 'rank']

``clef2018`` is the CLEF eHealth 2018 Consumer Health Search ad-hoc task (IRTask1): the
runs that hold no duplicate document, each cut to its top 100 documents per topic in
trec_eval order, the final qrels, and a real partial snapshot of the qrels taken three days
before the final ones (a natural instance of incomplete judgments). Origin, licence
statement, the exact transformation and the counts are in ``PROVENANCE.md`` next to this
file; ``scripts/build_datasets.py`` rebuilds the files.
"""

from __future__ import annotations

import difflib
from importlib import resources
from typing import NamedTuple, Optional

import pandas as pd

from ..errors import PdevalError
from ..io import read_qrels, read_run

__all__ = ["Dataset", "load", "names"]


class Dataset(NamedTuple):
    """A shipped data set: runs, final qrels and (when there is one) a partial qrels snapshot."""

    name: str
    #: run frame: ``run, query_id, doc_id, score, rank`` (rank = trec_eval rank, 1-based)
    runs: pd.DataFrame
    #: the final qrels: ``query_id, doc_id, relevance``
    qrels: pd.DataFrame
    #: an earlier, incomplete snapshot of the same judgments, or ``None``
    partial_qrels: Optional[pd.DataFrame]
    #: one line saying what the data set is
    description: str


_DATASETS = {
    "clef2018": {
        "runs": "clef2018.runs.txt.gz",
        "qrels": "clef2018.qrels.txt.gz",
        "partial_qrels": "clef2018.qrels_partial_20180911.txt.gz",
        "description": (
            "CLEF eHealth 2018 Consumer Health Search IRTask1: 50 topics, the runs without "
            "duplicate documents cut to their top 100 per topic (trec_eval order), final qrels "
            "(grades 0/1/2) and the real partial qrels snapshot of 2018-09-11"
        ),
    },
}


def names() -> list[str]:
    """The names :func:`load` accepts."""
    return sorted(_DATASETS)


def _read(filename: str, reader, **kwargs) -> pd.DataFrame:
    resource = resources.files(__name__).joinpath(filename)
    with resources.as_file(resource) as path:
        return reader(path, **kwargs)


def load(name: str) -> Dataset:
    """Load a shipped data set by name (see :func:`names`); frames are fresh copies.

    Reads only files inside the package. Raises :class:`~pdeval.errors.PdevalError` for an
    unknown name, with the closest known names.
    """
    spec = _DATASETS.get(name) if isinstance(name, str) else None
    if spec is None:
        close = difflib.get_close_matches(str(name).lower(), names(), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
        raise PdevalError(f"unknown data set {name!r}; known: {names()}.{hint}")
    runs = _read(spec["runs"], read_run, run_from="tag")
    qrels = _read(spec["qrels"], read_qrels)
    partial = _read(spec["partial_qrels"], read_qrels) if spec.get("partial_qrels") else None
    return Dataset(name=name, runs=runs, qrels=qrels, partial_qrels=partial, description=spec["description"])
