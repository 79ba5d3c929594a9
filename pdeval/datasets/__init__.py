"""Real evaluation data sets: a small sample shipped inside pdeval, full collections on demand.

>>> from pdeval import datasets
>>> datasets.names()
['clef2015', 'clef2016', 'clef2018', 'clef2018-full', 'trec-dl21']
>>> clef = datasets.load("clef2018")
>>> clef.runs.columns.tolist()
['run', 'query_id', 'doc_id', 'score', 'rank']

``clef2018`` is the CLEF eHealth 2018 Consumer Health Search ad-hoc task (IRTask1): the
runs that hold no duplicate document, each cut to its top 100 documents per topic in
trec_eval order, the final qrels, and a real partial snapshot of the qrels taken three days
before the final ones (a natural instance of incomplete judgments). Origin, licence
statement, the exact transformation and the counts are in ``PROVENANCE.md`` next to this
file; ``scripts/build_datasets.py`` rebuilds the files.

The other names are full public collections that :mod:`pdeval.datasets.remote` downloads on
first use from their source repositories at pinned commits, verifies by checksum and caches
(``~/.cache/pdeval``): ``clef2015`` (CLEF eHealth 2015 task 2: 68 runs, 1000 deep, 38 of them
not pooled; a 262 MB download), ``clef2016`` (16 runs; 45 MB), ``clef2018-full`` (the 24 runs
of the sample, 1000 deep; 86 MB) and ``trec-dl21`` (TREC Deep Learning 2021 passages: 63 runs,
NIST qrels, and the SynDL GPT-4 judgments of the queries NIST did not judge as
``automatic_qrels``; 209 MB). The sizes are those of the files as their sources serve them
(:func:`pdeval.datasets.remote.download_size` gives the exact bytes); the cache keeps the runs
gzipped, so it holds less.
"""

from __future__ import annotations

import difflib
from importlib import resources
from typing import NamedTuple, Optional

import pandas as pd

from pdeval.errors import PdevalError
from pdeval.frames.canonical import DuplicatePolicy
from pdeval.common.contract import Boolean, FilePath, Nullable, Text, contract
from pdeval.frames.domains import DUPLICATES
from pdeval.sources.io import read_qrels, read_run
from pdeval.datasets import remote

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
    #: judgments made by a model rather than by people (``trec-dl21``: SynDL's GPT-4 labels), or ``None``
    automatic_qrels: Optional[pd.DataFrame] = None


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


#: how each downloadable collection is read: the duplicates policy its runs need, and what it is
_FULL = {
    "clef2015": ("error", "CLEF eHealth 2015 task 2 (English): 68 runs 1000 deep (38 not pooled), "
                          "66 judged topics, graded qrels 0/1/2"),
    "clef2016": ("error", "CLEF eHealth 2016 IR task 2: 16 runs (two 100 deep), 50 topics, qrels 0/1/2"),
    "clef2018-full": ("first", "CLEF eHealth 2018 IRTask1: 24 runs 1000 deep (9 repeat documents within "
                               "a topic: the first line is kept, with a warning), final and partial qrels"),
    "trec-dl21": ("error", "TREC Deep Learning 2021 passages: 63 runs (477 queries x 100), NIST qrels "
                           "(53 topics, 0-3) and SynDL GPT-4 judgments of the other queries"),
}


def names() -> list[str]:
    """The names :func:`load` accepts: the shipped sample and the downloadable collections."""
    return sorted(set(_DATASETS) | set(remote.names()))


def _read(filename: str, reader, **kwargs) -> pd.DataFrame:
    resource = resources.files(__name__).joinpath(filename)
    with resources.as_file(resource) as path:
        return reader(path, **kwargs)


@contract(name=Text("a data set name (see pdeval.datasets.names())"), cache_dir=Nullable(FilePath()),
          mirror=Nullable(Text("a URL or a folder")), progress=Nullable(Boolean()), duplicates=Nullable(DUPLICATES))
def load(
    name: str,
    *,
    cache_dir=None,
    mirror: Optional[str] = None,
    progress: Optional[bool] = None,
    duplicates: Optional[DuplicatePolicy] = None,
) -> Dataset:
    """Load a data set by name (see :func:`names`); frames are fresh copies.

    ``clef2018`` is read from files inside the package. The full collections are downloaded
    on first use by :func:`pdeval.datasets.remote.fetch` (``cache_dir``, ``mirror`` and
    ``progress`` are passed to it; see there for the mirror variable and the cache). Their
    runs are read with ``duplicates`` (default: the collection's own policy, ``"first"`` with a
    warning for ``clef2018-full``, whose trec_eval refuses 9 runs, ``"error"`` elsewhere).
    Raises :class:`~pdeval.errors.PdevalError` for an unknown name, with the closest known names.
    """
    if name in _FULL:
        return _load_full(name, cache_dir=cache_dir, mirror=mirror, progress=progress, duplicates=duplicates)
    spec = _DATASETS.get(name)
    if spec is None:
        close = difflib.get_close_matches(str(name).lower(), names(), n=3, cutoff=0.5)
        hint = f" Did you mean: {', '.join(repr(c) for c in close)}?" if close else ""
        raise PdevalError(f"unknown data set {name!r}; known: {names()}.{hint}")
    runs = _read(spec["runs"], read_run, run_from="tag")
    qrels = _read(spec["qrels"], read_qrels)
    partial = _read(spec["partial_qrels"], read_qrels) if spec.get("partial_qrels") else None
    return Dataset(name=name, runs=runs, qrels=qrels, partial_qrels=partial, description=spec["description"])


def _load_full(name: str, *, cache_dir, mirror, progress: Optional[bool], duplicates) -> Dataset:
    policy, description = _FULL[name]
    files = remote.fetch(name, cache_dir=cache_dir, mirror=mirror, progress=progress)
    runs = read_run(files["runs"], duplicates=duplicates or policy)
    qrels = read_qrels(files["qrels"][0])
    partial = read_qrels(files["partial_qrels"][0]) if "partial_qrels" in files else None
    automatic = read_qrels(files["extra"][0]) if "extra" in files else None
    return Dataset(name=name, runs=runs, qrels=qrels, partial_qrels=partial,
                   description=description, automatic_qrels=automatic)
