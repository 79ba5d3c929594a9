"""Which runs and judgments an experiment may use: the run exclusion rules and the share of
judged documents in the top k.

* :func:`exclude_runs` — the run exclusion rules of Buckley & Voorhees 2004 and Ahlgren &
  Grönqvist 2008 (E7).
* :func:`judged` — the share of judged documents in the top k (Ahlgren & Grönqvist 2008,
  Table 2; trec_eval's ``judged@k``).
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import Integer, ListOf, Real, contract
from pdeval.common.options import is_int
from pdeval.engine.options import OPTION_DOMAINS, EngineOptions
from pdeval.engine.ranking import ScorePrecision
from pdeval.errors import PdevalError
from pdeval.evaluation.core import evaluate_frames
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.frames.domains import Frame
from pdeval.judgments.reduction import plain_qrels

__all__ = ["exclude_runs", "judged"]


@contract(
    run=Frame("run"),
    qrels=Frame("qrels"),
    depth=Integer(1),
    min_share=Real(0, 1),
    renamed={"max_docs": "depth"},
)
def exclude_runs(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    depth: int = 1000,
    min_share: float = 0.95,
) -> pd.DataFrame:
    """Apply the run exclusion rules of Buckley & Voorhees 2004 / Ahlgren & Grönqvist 2008 (E7).

    With ``T`` the qrels topics, ``M = depth`` and ``ret_s(t) = min(M, documents of s for
    t)``, a run is excluded if

    1. ``Σ_{t ∈ T} ret_s(t) < min_share · |T| · M`` (rule ``"too_few_documents"``; strict, so
       with 50 topics 47,500 documents are kept and 47,499 excluded), or
    2. ``ret_s(t) = 0`` for some ``t ∈ T`` (rule ``"empty_topic"``).

    Run rows for topics outside ``T`` are ignored by both rules (and kept in the output). The
    comparison is exact (``min_share`` is read as the decimal written).

    Parameters
    ----------
    run : DataFrame
        Run frame of one or more runs.
    qrels : DataFrame
        The qrels the runs are judged against (only their topics are read).
    depth : int, default 1000
        trec_eval ``-M``: keep the first ``depth`` documents of each ranking. ``M`` of rule 1:
        the documents of a run per topic that count. (Formerly ``max_docs=``.)
    min_share : float, default 0.95
        The share of ``|T| · M`` a run must retrieve in all (rule 1), in [0, 1].

    Returns
    -------
    DataFrame
        The canonical run frame restricted to the kept runs. ``result.attrs["excluded"]`` says
        why the others went: columns ``run, rule, detail`` (a mapping column -> list, one entry
        per rule an excluded run broke; ``pd.DataFrame(result.attrs["excluded"])`` is the frame).

    Raises
    ------
    PdevalError
        Qrels without a topic, a parameter outside its domain.

    See Also
    --------
    judged : The share of judged documents in the top k.
    pool : The depth-k pool of the kept runs.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["full"] * 4 + ["short"],
    ...                     "query_id": ["q1", "q1", "q2", "q2", "q1"],
    ...                     "doc_id": ["d1", "d2", "d1", "d2", "d1"], "score": [2.0, 1.0, 2.0, 1.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q2"], "doc_id": ["d1", "d1"], "relevance": [1, 1]})
    >>> kept = pdeval.exclude_runs(run, qrels, depth=2)
    >>> kept["run"].unique().tolist()
    ['full']
    >>> pd.DataFrame(kept.attrs["excluded"])[["run", "rule"]]
        run               rule
    0  short  too_few_documents
    1  short        empty_topic
    """
    share = Fraction(repr(float(min_share))) if not is_int(min_share) else Fraction(int(min_share))
    r = as_run(run)
    topics = pd.Index(pd.unique(as_qrels(qrels)["query_id"])).sort_values()
    if len(topics) == 0:
        raise PdevalError("the qrels hold no topic; the exclusion rules need the qrels topics")
    run_codes, run_names = pd.factorize(r["run"], sort=True)
    topic_codes = topics.get_indexer(r["query_id"])
    inside = topic_codes >= 0
    n_runs, n_topics = len(run_names), len(topics)
    counts = np.bincount(run_codes[inside] * n_topics + topic_codes[inside],
                         minlength=n_runs * n_topics).reshape(n_runs, n_topics)
    ret = np.minimum(counts, depth)
    total = ret.sum(axis=1)
    # total < share * |T| * M, in integers
    too_few = total * share.denominator < share.numerator * n_topics * depth
    empty = (ret == 0).any(axis=1)
    threshold = share * n_topics * depth
    threshold_text = str(threshold.numerator) if threshold.denominator == 1 else f"{float(threshold):g}"
    records = []
    for i in np.flatnonzero(too_few | empty):
        if too_few[i]:
            records.append((run_names[i], "too_few_documents",
                            f"{int(total[i])} documents over {n_topics} topics (at most {depth} "
                            f"counted per topic) < {min_share} x {n_topics} x {depth} = {threshold_text}"))
        if empty[i]:
            missing = topics[ret[i] == 0].tolist()
            shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
            records.append((run_names[i], "empty_topic",
                            f"no documents for {len(missing)} of {n_topics} topics: {shown}"))
    excluded = pd.DataFrame(records, columns=["run", "rule", "detail"])
    excluded_names = set(excluded["run"])
    kept = r.loc[~r["run"].isin(excluded_names)].reset_index(drop=True)
    # the reasons as plain lists: a frame in attrs would break pandas' concat and merge of the result
    kept.attrs["excluded"] = {column: excluded[column].tolist() for column in excluded.columns}
    return kept


@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    k=ListOf(Integer(1), unique=True),
    score_precision=OPTION_DOMAINS["score_precision"],
)
def judged(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    k: Union[int, Iterable[int]] = (1, 10, 100, 1000),
    *,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Share of judged documents in the top k, per run and topic (the measure ``Judged@k``).

    ``judged@k = |{d at ranks 1..k : d judged (relevance >= 0)}| / min(k, n)`` with n the
    number of documents the run retrieved for the topic (ir_measures' ``Judged@k``).
    Pooled-but-unjudged entries (-1) do not count as judged. Ahlgren & Grönqvist 2008
    (Table 2) report its complement, the share of unjudged documents down to a rank.
    Topics of the run absent from the qrels are ignored (MEASURES.md 0.5).

    Parameters
    ----------
    run : DataFrame
        Run frame of one or more runs.
    qrels : DataFrame
        The qrels (of one variant; a sampling design's columns are ignored).
    k : int or list of int, default (1, 10, 100, 1000)
        The cutoffs of ``Judged@k`` (distinct positive integers).
    score_precision : {'float64', 'float32'}, default 'float64'
        As for :func:`pdeval.evaluate`.

    Returns
    -------
    DataFrame
        ``run, query_id, k, judged``, sorted by run, query_id, k.

    Raises
    ------
    PdevalError
        Qrels with variant columns, a parameter outside its domain.

    See Also
    --------
    exclude_runs : The run exclusion rules.
    evaluate : ``Judged@k`` among other measures.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3, "query_id": ["q1"] * 3, "doc_id": ["d1", "d2", "d3"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1", "q1"], "doc_id": ["d1", "d3"], "relevance": [1, 0]})
    >>> pdeval.judged(run, qrels, k=[1, 2, 3])
      run query_id  k    judged
    0   a       q1  1  1.000000
    1   a       q1  2  0.500000
    2   a       q1  3  0.666667
    """
    names = {f"Judged@{cutoff}": cutoff for cutoff in k}
    options = EngineOptions(score_precision=score_precision)
    result = evaluate_frames(run, plain_qrels(qrels, "judged", design="drop"), list(names), options)
    return (
        result.assign(k=result["measure"].map(names).astype(np.int64))
        .rename(columns={"value": "judged"})[["run", "query_id", "k", "judged"]]
        .sort_values(["run", "query_id", "k"], kind="stable", ignore_index=True)
    )
