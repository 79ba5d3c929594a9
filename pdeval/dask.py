"""Evaluate dask DataFrames: runs too large for memory, partitioned by topic.

>>> import dask.dataframe as dd
>>> import pdeval.dask  # registers the ``ddf.ir`` accessor on dask DataFrames
>>> ddf = dd.read_parquet("runs/")  # no set_index: see "Partitioning"  # doctest: +SKIP
>>> result = pdeval.dask.evaluate_dask(ddf, qrels, ["AP", "nDCG@10"])  # doctest: +SKIP
>>> result = ddf.ir.evaluate(qrels, ["AP", "nDCG@10"])                 # the same  # doctest: +SKIP
>>> result.compute()                                                   # doctest: +SKIP

Every measure of a (run, topic) list depends only on that list and on the qrels, so a run
frame split into partitions that each hold **whole topics** can be evaluated partition by
partition with :func:`pdeval.evaluate` and the results concatenated. That is what
:func:`evaluate_dask` does with ``map_partitions``; the qrels (a pandas frame, small next to
the runs) are validated once and broadcast to the workers as one graph key: scattered to
every worker when a ``distributed`` client is active (compute the result on that client),
otherwise embedded once in the graph.

Partitioning. A topic split over two partitions would be evaluated as two truncated lists,
so the run must be partitioned by ``query_id``. The recommended paths:

* **Pass the run frame as it is** (``dd.read_parquet("runs/")``): :func:`evaluate_dask`
  shuffles it on ``query_id`` by dask's task-based shuffle (``shuffle_method="tasks"``), which
  needs no scheduler plugin, logs nothing and runs the same on the local schedulers and on a
  ``distributed`` cluster.
* **Files that already hold whole topics** (parquet files written topic block by topic
  block, one ``dd.from_map`` call per block of topics): ``partitioned=True`` skips the
  shuffle and its data exchange altogether.

Avoid ``ddf.set_index("query_id")`` and ``ddf.shuffle(on="query_id")`` before the call on a
``distributed`` cluster: with the installed Dask they run dask's peer-to-peer (``p2p``)
shuffle, which has been reported to hang on ``distributed`` clusters (dask/distributed#8463)
and logs two WARNING lines per shuffle (``Shuffle ... initialized by task ...``, ``...
deactivated due to stimulus``). A frame already indexed by ``query_id`` with known
divisions is trusted as is (``partitioned=None``, the default); ``partitioned=False``
always shuffles.

Collection-wide facts. A few measures use a fact of the whole qrels variant, not of one
topic: the largest gain over all topics (``rpref_*``, ``npref``). Each partition therefore
gets the qrels rows of its own topics plus, for every variant, one row of each relevance
level present in the variant ("witness" rows from other topics, which are not evaluated
because the partition's run has no rows for them). Results equal the in-memory
:func:`pdeval.evaluate` exactly.

Not supported: ``complete=True`` (trec_eval ``-c``: a qrels topic that a run lacks, as an
empty list) needs the set of all runs and all topics at once; it raises
:class:`~pdeval.errors.PdevalError`. Evaluate without it, or in memory.
"""

from __future__ import annotations

import functools
import sys
from typing import Any, Iterable, Optional

import numpy as np
import pandas as pd

from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.errors import PdevalError, SchemaError
from pdeval.evaluation.core import evaluate_frames
from pdeval.frames.canonical import ALIASES, as_qrels, canonical_names, variant_keys

__all__ = ["evaluate_dask", "is_dask_frame", "DaskIRAccessor"]


def is_dask_frame(obj: Any) -> bool:
    """True when ``obj`` is a ``dask.dataframe.DataFrame``.

    Never imports dask: if ``dask.dataframe`` has not been imported, no dask frame can
    exist, so this is cheap to call from :func:`pdeval.evaluate` for dispatching.
    """
    module = sys.modules.get("dask.dataframe")
    if module is None:
        return False
    frame_type = getattr(module, "DataFrame", None)
    return frame_type is not None and isinstance(obj, frame_type)


class _QrelsByTopic:
    """Validated qrels sorted by topic, cut into per-partition subsets (shipped to workers)."""

    def __init__(self, qrels: pd.DataFrame, duplicates: str, variants: Any = None):
        qrels = as_qrels(qrels, duplicates=duplicates, variants=variants)
        keys = variant_keys(qrels)
        codes, topics = pd.factorize(qrels["query_id"], sort=True)
        order = np.argsort(codes, kind="stable")
        self.qrels = qrels.take(order).reset_index(drop=True)
        self.topics = pd.Index(topics)
        self.offsets = np.zeros(len(topics) + 1, dtype=np.int64)
        np.cumsum(np.bincount(codes, minlength=len(topics)), out=self.offsets[1:])
        # one row of every (variant, level): keeps each variant's collection-wide maxima
        self.witness = self.qrels.drop_duplicates([*keys, "relevance"])

    def for_topics(self, topics: Iterable[Any]) -> pd.DataFrame:
        """The qrels rows of ``topics``, plus the witness rows of other topics."""
        position = self.topics.get_indexer(pd.Index(pd.unique(np.asarray(list(topics), dtype=object))))
        position = np.sort(position[position >= 0])
        starts, ends = self.offsets[position], self.offsets[position + 1]
        lengths = ends - starts
        rows = np.repeat(starts - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths) + np.arange(lengths.sum())
        own = self.qrels.take(rows)
        others = self.witness.loc[~self.witness["query_id"].isin(self.topics[position]).to_numpy()]
        return pd.concat([own, others], ignore_index=True)


def _canonical_dask(ddf: Any) -> tuple[Any, bool]:
    """Rename alias columns (``qid``, ``docno``, ...) and an alias index name.

    Returns the frame and whether it is indexed by ``query_id`` with known divisions (then
    every topic lies in one partition).
    """
    mapping, shadowed = canonical_names(ddf.columns)
    if shadowed:
        ddf = ddf.drop(columns=shadowed)
    if mapping:
        ddf = ddf.rename(columns=mapping)
    name = ddf.index.name
    if isinstance(name, str) and "query_id" not in ddf.columns and ALIASES.get(name, name) == "query_id":
        if name != "query_id":
            ddf = ddf.rename_axis("query_id")
        return ddf, bool(ddf.known_divisions)
    return ddf, False


def _evaluate_partition(
    part: pd.DataFrame,
    qrels: _QrelsByTopic,
    *,
    measures: Any,
    options: EngineOptions,
    result_meta: pd.DataFrame,
) -> pd.DataFrame:
    """``pdeval.evaluate`` on one partition (whole topics) against its topics' qrels."""
    if part.index.name == "query_id" and "query_id" not in part.columns:
        part = part.reset_index()
    if len(part) == 0:
        return result_meta
    # topic overlap is not checked per partition: each holds a share of the topics, and its
    # qrels carry a witness row of every other topic (see evaluate_dask)
    qrels_part = qrels.for_topics(part["query_id"].unique())
    result = evaluate_frames(part, qrels_part, measures, options, coverage=False)
    return result.astype(result_meta.dtypes.to_dict())


def _meta(ddf: Any, qrels: _QrelsByTopic, measures: Any, options: EngineOptions) -> pd.DataFrame:
    """The empty result frame the engine produces for this run schema and these options.

    Evaluates a one-row run (the schema's fake row, with a real judged topic and document)
    so that the dtypes are exactly the engine's; also validates measures and options early.
    """
    if len(qrels.qrels) == 0:
        raise SchemaError("the qrels frame is empty")
    sample = ddf._meta_nonempty.head(1)
    if sample.index.name == "query_id" and "query_id" not in sample.columns:
        sample = sample.reset_index()
    first = qrels.qrels.iloc[0]
    sample = sample.assign(query_id=[str(first["query_id"])], doc_id=[str(first["doc_id"])], score=[1.0])
    result = evaluate_frames(sample, qrels.for_topics([first["query_id"]]), measures, options, coverage=False)
    return result.iloc[:0]


@takes_engine_options
def evaluate_dask(
    run: Any,
    qrels: pd.DataFrame,
    measures: Any,
    *,
    partitioned: Optional[bool] = None,
    shuffle_method: str = "tasks",
    **options: Any,
) -> Any:
    """Evaluate a dask run frame partition by partition; returns a lazy dask DataFrame.

    Parameters
    ----------
    run
        A ``dask.dataframe.DataFrame`` with the run columns (``query_id``, ``doc_id``,
        ``score``, optionally ``run`` and ``by`` columns; aliases accepted), or indexed by
        ``query_id``.
    qrels
        A pandas qrels frame (variant columns ``level``/``sample`` allowed): validated once
        and broadcast to every partition.
    measures
        As for :func:`pdeval.evaluate`. The qrels are validated at once (extra columns, ids,
        values); topic overlap between the run and the qrels is not checked (that would read
        the whole run): partitions of topics absent from the qrels give no rows, without an
        :class:`~pdeval.errors.OverlapWarning`.
    partitioned
        ``None``: no shuffle when ``run`` is indexed by ``query_id`` with known divisions,
        else shuffle on ``query_id``. ``True``: every topic is known to lie within one
        partition (no shuffle, not checked). ``False``: always shuffle. ``complete=True`` is
        not supported on dask frames (it needs every topic at once).
    shuffle_method : {'tasks', 'p2p', 'disk'}, default 'tasks'
        How the run is shuffled on ``query_id`` when it must be (dask's ``shuffle_method``).
        ``'tasks'`` works on every scheduler without logging; ``'p2p'`` (dask's default on a
        ``distributed`` cluster) moves less data through the scheduler for very many
        partitions, but logs two WARNING lines per shuffle and has been reported to hang.
    {engine_options}

    Returns
    -------
    A dask DataFrame with the columns and dtypes of :func:`pdeval.evaluate`'s result, one
    partition per run partition (row order within a partition as the engine gives it).
    """
    import dask

    if not is_dask_frame(run):
        raise SchemaError(f"evaluate_dask needs a dask DataFrame, got {type(run).__name__}; "
                          "use pdeval.evaluate for pandas frames")
    if not isinstance(qrels, pd.DataFrame):
        raise SchemaError(f"evaluate_dask takes the qrels as a pandas DataFrame, got {type(qrels).__name__}")
    options = EngineOptions.of(options, where="evaluate_dask")
    if options.complete:
        raise PdevalError(
            "complete=True is not supported on dask frames: it needs every run and every qrels "
            "topic at once. Evaluate without it, or in memory with pdeval.evaluate."
        )
    if partitioned not in (None, True, False):
        raise PdevalError(f"partitioned must be None, True or False, not {partitioned!r}")
    if shuffle_method not in ("tasks", "p2p", "disk"):
        raise PdevalError(f"shuffle_method must be 'tasks', 'p2p' or 'disk', not {shuffle_method!r}")
    holder = _QrelsByTopic(qrels, options.duplicates, options.variants)
    run, indexed_with_divisions = _canonical_dask(run)
    if "query_id" not in run.columns and run.index.name != "query_id":
        raise SchemaError(f"the run frame lacks a query_id column; it has {list(run.columns)}")
    if partitioned is False or (partitioned is None and not indexed_with_divisions):
        if run.index.name == "query_id" and "query_id" not in run.columns:
            run = run.reset_index()
        run = run.shuffle(on="query_id", shuffle_method=shuffle_method)
    meta = _meta(run, holder, measures, options)
    shared = dask.delayed(_broadcast(holder), traverse=False)
    function = functools.partial(_evaluate_partition, measures=measures, options=options, result_meta=meta)
    return run.map_partitions(function, shared, meta=meta, enforce_metadata=False, align_dataframes=False)


def _broadcast(holder: _QrelsByTopic) -> Any:
    """The qrels as one graph key: scattered to every worker when a distributed client is
    active (no large graph to ship through the scheduler), else embedded once in the graph."""
    try:
        from distributed import default_client
    except ImportError:  # pragma: no cover - dask without distributed
        return holder
    try:
        client = default_client()
    except ValueError:  # no distributed client: local schedulers
        return holder
    return client.scatter(holder, broadcast=True, hash=False)


try:  # the ``ddf.ir`` accessor, when dask is installed
    from dask.dataframe.extensions import register_dataframe_accessor as _register
except ImportError:  # pragma: no cover - exercised only without dask
    _register = None


class DaskIRAccessor:
    """``ddf.ir.evaluate(qrels, measures, **options)`` on dask run frames (``import pdeval.dask``)."""

    def __init__(self, frame: Any):
        self._frame = frame

    def evaluate(self, qrels: pd.DataFrame, measures: Any, **options: Any) -> Any:
        """:func:`evaluate_dask` on this frame; returns a lazy dask DataFrame."""
        return evaluate_dask(self._frame, qrels, measures, **options)


if _register is not None:
    _register("ir")(DaskIRAccessor)
