"""Holes filled by a judge: :func:`fill_holes` finds the unjudged pairs in the runs' top
``pool_depth`` and asks a user-supplied judge (an LLM, a person behind a queue) for them, in
batches, with a cache that an interrupted run resumes from."""

from __future__ import annotations

import csv
from collections.abc import MutableMapping
from pathlib import Path
from typing import Callable, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.judges.labels import SCORE_PRECISION, pair_codes, plain_labels
from pdeval.common.contract import Callable_, Choice, FilePath, Instance, Integer, Nullable, Text, contract
from pdeval.common.docs import shared_docs
from pdeval.common.progress import PROGRESS, progress_bar
from pdeval.engine.ranking import ScorePrecision, rank_run
from pdeval.errors import ParseError, PdevalError, SchemaError
from pdeval.frames.canonical import as_run
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import POOL_DEPTH

__all__ = ["fill_holes"]


def _read_cache(path: Path) -> dict:
    if not path.exists():
        return {}
    try:
        frame = pd.read_csv(path, sep="\t", header=None, names=["query_id", "doc_id", "relevance"],
                            dtype=str, quoting=csv.QUOTE_NONE, keep_default_na=False)
    except (pd.errors.ParserError, UnicodeDecodeError) as error:
        raise ParseError(f"{path}: not a cache of fill_holes (query_id<TAB>doc_id<TAB>grade lines): {error}") from None
    grade = pd.to_numeric(frame["relevance"], errors="coerce").to_numpy(dtype=np.float64)
    bad = np.flatnonzero(~np.isfinite(grade) | (grade != np.round(grade)) | (frame["doc_id"] == "").to_numpy())
    if len(bad):  # a cut or hand-edited line: say which, never truncate a grade
        row = frame.iloc[bad[0]]
        raise ParseError(f"{path}: line {int(bad[0]) + 1}: a cache line is 'query_id<TAB>doc_id<TAB>integer grade', "
                         f"got {'<TAB>'.join(map(str, row.tolist()))!r} ({len(bad)} bad line(s)); fix or delete "
                         "those lines (their pairs are asked again)")
    return dict(zip(zip(frame["query_id"], frame["doc_id"]), grade.astype(np.int64)))


@contract(run=Frame("run"), qrels=Frame("qrels", variants=False), judge=Callable_("a function frame -> grades"),
          pool_depth=POOL_DEPTH, batch_size=Integer(1),
          cache=Nullable(FilePath() | Instance((MutableMapping,), "a mutable mapping (query_id, doc_id) -> grade", {})),
          topics=Choice("qrels", "all"), source=Text(), progress=PROGRESS, score_precision=SCORE_PRECISION)
@shared_docs
def fill_holes(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    judge: Callable[[pd.DataFrame], Sequence[int]],
    *,
    pool_depth: int = 10,
    batch_size: int = 100,
    cache: Union[None, str, Path, MutableMapping] = None,
    topics: Literal["qrels", "all"] = "all",
    source: str = "judge",
    progress: Optional[bool] = None,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Label the unjudged (query_id, doc_id) pairs of the runs' top ``pool_depth`` with a judge.

    A *hole* is a pair some run ranks in its top ``pool_depth`` (trec_eval order) that the qrels
    lack or hold as unjudged (negative). ``topics="all"`` fills the holes of every topic of the
    run; ``"qrels"`` only those of topics the qrels have. The holes are sorted by
    (query_id, doc_id) and passed to ``judge`` in frames of at most ``batch_size`` rows with
    columns ``query_id``, ``doc_id``; the judge returns one integer grade (>= 0) per row, in
    order (a list, array or Series). No model ships with pdeval: the judge is yours.

    ``cache`` avoids asking twice: a mutable mapping ``(query_id, doc_id) -> grade`` (updated
    in place) or the path of a tab-separated file ``query_id, doc_id, grade`` (read first,
    appended to after each batch, so an interrupted run resumes). Pairs in the cache are not
    sent to the judge.

    Parameters
    ----------
    run : DataFrame
        A run frame.
    qrels : DataFrame
        The labels so far (one label set).
    judge : callable
        A callable taking a frame ``query_id, doc_id`` and returning one grade per row.
    pool_depth : int, default 10
        The depth of the runs' top lists whose holes are filled (the pool the judge completes).
    batch_size : int, default 100
        The most rows passed to the judge at once.
    cache : str, Path or mutable mapping, optional
        A mutable mapping or the path of a tab-separated cache file (above), or None.
    topics : {'qrels', 'all'}, default 'all'
        ``"all"`` (every topic of the run) or ``"qrels"`` (the topics the qrels have).
    source : str, default 'judge'
        The ``source`` of the returned labels.
    {progress}
    score_precision : {'float64', 'float32'}, default 'float64'
        As :func:`pdeval.evaluate` orders scores.

    Returns
    -------
    pandas.DataFrame
        The judge's labels of every hole (from the cache or fresh) as a qrels frame with
        ``source`` set to ``source``; combine them with
        ``pdeval.merge_qrels(qrels, holes, policy="fill")``.

    Raises
    ------
    PdevalError
        A bad option value (``pool_depth``, ``batch_size``, ``topics``, a judge that is not callable).
    SchemaError
        A judge that returns a wrong number of grades or grades that are not integers >= 0.

    See Also
    --------
    judged_by_source : Which documents are holes.
    merge_qrels : Adds the filled labels to the qrels.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    >>> pdeval.fill_holes(run, qrels, lambda batch: [1] * len(batch), pool_depth=2)
      query_id doc_id  relevance source
    0        1     d4          1  judge
    1        1     d6          1  judge
    """
    q = plain_labels(qrels, "fill_holes' qrels")
    r = as_run(run)
    if topics == "qrels":
        r = r.loc[r["query_id"].isin(pd.unique(q["query_id"]))]
    top = rank_run(r, score_precision=score_precision, depth=pool_depth)[["query_id", "doc_id"]].drop_duplicates()
    labelled = q.loc[q["relevance"].to_numpy() >= 0]
    top_pair, labelled_pair = pair_codes(top, labelled)
    holes = top.loc[~np.isin(top_pair, labelled_pair)].sort_values(["query_id", "doc_id"], ignore_index=True)

    path = Path(cache) if isinstance(cache, (str, Path)) else None
    store: MutableMapping = _read_cache(path) if path is not None else (cache if cache is not None else {})
    keys = list(zip(holes["query_id"], holes["doc_id"]))
    known = np.fromiter((key in store for key in keys), dtype=bool, count=len(keys))
    if path is None and known.any():  # a mapping of the caller's: its grades are checked as a file's are
        cached = [store[key] for key, hit in zip(keys, known) if hit]
        numeric = pd.to_numeric(pd.Series(cached, dtype=object), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.flatnonzero(np.isnan(numeric) | (numeric != np.round(numeric)) | (numeric < 0)
                             | np.array([isinstance(v, (bool, np.bool_)) for v in cached]))
        if len(bad):
            pair = [key for key, hit in zip(keys, known) if hit][bad[0]]
            raise PdevalError(f"fill_holes(): cache= holds {len(bad)} grade(s) that are not integers >= 0, first "
                              f"{cached[bad[0]]!r} for {pair!r}; a grade is stored as it is, never rounded")
    todo = holes.loc[~known].reset_index(drop=True)
    starts = range(0, len(todo), batch_size)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="judging"):
        batch = todo.iloc[start : start + batch_size].reset_index(drop=True)
        grades = np.asarray(judge(batch.copy()))
        if grades.shape != (len(batch),):
            raise SchemaError(
                f"the judge returned {grades.shape} grade(s) for a batch of {len(batch)} pairs starting at "
                f"({batch['query_id'].iloc[0]!r}, {batch['doc_id'].iloc[0]!r}); return one grade per row, in order"
            )
        numeric = pd.to_numeric(pd.Series(grades), errors="coerce").to_numpy(dtype=np.float64)
        bad = np.isnan(numeric) | (numeric != np.round(numeric)) | (numeric < 0)
        if bad.any():
            i = int(np.flatnonzero(bad)[0])
            raise SchemaError(
                f"the judge returned {int(bad.sum())} grade(s) that are not integers >= 0, first {grades[i]!r} for "
                f"({batch['query_id'].iloc[i]!r}, {batch['doc_id'].iloc[i]!r})"
            )
        fresh = dict(zip(zip(batch["query_id"], batch["doc_id"]), numeric.astype(np.int64).tolist()))
        store.update(fresh)
        if path is not None:
            with path.open("a", encoding="utf-8") as handle:
                handle.writelines(f"{qid}\t{doc}\t{grade}\n" for (qid, doc), grade in fresh.items())
    relevance = np.fromiter((int(store[key]) for key in keys), dtype=np.int64, count=len(keys))
    return holes.assign(relevance=relevance, source=source)

