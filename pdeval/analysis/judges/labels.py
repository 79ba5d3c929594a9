"""Automatic judgments, the labels' side: provenance, label sets, grade scales, merging, holes.

Campaigns now label part of their pools with LLM assessors (TREC RAG's UMBRELA, SynDL, the
LLMJudge challenge). This module holds what is done to the labels themselves:

* **provenance** -- a qrels frame may carry a ``source`` column (``"human"``, a model name,
  ``"judge"``). It is neither a variant key nor ignored: it travels with each label.
  :func:`merge_qrels` combines a human and an automatic label set under a documented policy
  and counts what it filled and overrode; :func:`judged_by_source` splits ``Judged@k`` by
  source (e.g. the share of a run's top 10 judged by people).
* **label sets** -- several label sets of the same pairs are one long frame with a
  ``label_set`` column (:func:`label_sets`), which the engine treats as a variant key.
  :func:`map_grades` maps grades between scales (0-4 to 0-3, ...).
* **holes** -- :func:`fill_holes` (:mod:`pdeval.analysis.judges.holes`) asks a judge for the
  unjudged pairs of the runs' top k.

Agreement statistics between label sets are in :mod:`pdeval.analysis.judges.agreement`, leaderboards
under each label set in :mod:`pdeval.analysis.judges.leaderboards`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Iterable, Literal, Optional, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import (
    Boolean, Choice, Integer, ListOf, MappingOf, Nullable, Text, contract,
)
from pdeval.engine.ranking import ScorePrecision, rank_run
from pdeval.judgments.reduction import DESIGN_COLUMNS
from pdeval.errors import PdevalError, SchemaError
from pdeval.frames.canonical import as_qrels, as_run, variant_keys
from pdeval.frames.domains import Frame

__all__ = [
    "LABEL_SET",
    "SOURCE",
    "GradeMap",
    "LabelSets",
    "judged_by_source",
    "label_sets",
    "map_grades",
    "merge_qrels",
    "pair_codes",
    "plain_labels",
]

#: the qrels column naming a label set (a variant key: one qrels variant per label set)
LABEL_SET = "label_set"
#: the qrels column naming where a label came from (provenance, never a variant key)
SOURCE = "source"

MergePolicy = Literal["fill", "replace", "prefer"]
GradeMap = Union[None, Mapping[int, int], Mapping[str, Mapping[int, int]]]
LabelSets = Union[pd.DataFrame, Mapping[str, pd.DataFrame]]

#: the domains the label functions share (:mod:`pdeval.common.contract`)
#: ``sets=``: one qrels frame (a ``label_set`` column names its sets) or a mapping name -> qrels frame
LABEL_SETS = Frame("qrels") | MappingOf(Text("a label set name"), Frame("qrels"), min_len=1)
#: ``grade_map=``: old grade -> new grade, for every set or per label set name
GRADES = MappingOf(Integer(), Integer(), min_len=1)
GRADE_MAP = Nullable(GRADES | MappingOf(Text("a label set name"), GRADES, min_len=1))
SCORE_PRECISION = Choice("float64", "float32")


# ---------------------------------------------------------------------------------------------
# label sets, grade mappings, provenance


def pair_codes(*frames: pd.DataFrame) -> list[np.ndarray]:
    """Dense codes of the (query_id, doc_id) pairs of several frames, shared between them."""
    query = pd.factorize(pd.concat([f["query_id"].astype(str) for f in frames], ignore_index=True))[0]
    doc, docs = pd.factorize(pd.concat([f["doc_id"].astype(str) for f in frames], ignore_index=True))
    codes = pd.factorize(query.astype(np.int64) * max(len(docs), 1) + doc)[0]
    bounds = np.cumsum([0, *[len(f) for f in frames]])
    return [codes[bounds[i] : bounds[i + 1]] for i in range(len(frames))]


def plain_labels(qrels: pd.DataFrame, what: str, source: Optional[str] = None, *, labels_only: bool = False
                 ) -> pd.DataFrame:
    """A canonical qrels frame without variant keys: query_id, doc_id, relevance[, source].
    A sampling design is refused (new qrels are built from these labels) unless
    ``labels_only`` (the caller compares labels and builds no qrels)."""
    q = as_qrels(qrels)
    keys = variant_keys(q)
    if keys:
        raise SchemaError(
            f"{what} must be one label set, but it has variant column(s) {keys}; select one variant "
            f"first, or drop the column(s) (e.g. qrels.drop(columns={keys!r}))"
        )
    sampled = [c for c in DESIGN_COLUMNS if c in q.columns]
    if sampled and not labels_only:  # merged or filled labels are no longer the sample these columns describe
        raise SchemaError(f"{what} carries a sampling design ({', '.join(sampled)}) that merged or filled labels "
                          f"would not follow; drop the column(s) to use the labels as plain judgments")
    columns = ["query_id", "doc_id", "relevance"]
    if SOURCE in q.columns:
        q = q.assign(source=q[SOURCE].astype(str))
        columns.append(SOURCE)
    elif source is not None:
        q = q.assign(source=source)
        columns.append(SOURCE)
    return q[columns].reset_index(drop=True)


@contract(sets=LABEL_SETS, name=Text("a label set name"), by=Nullable(Text("a column name")))
def label_sets(sets: LabelSets, *, name: str = "labels", by: Optional[str] = None) -> pd.DataFrame:
    """Several label sets as one long qrels frame with a ``label_set`` column.

    ``sets`` is a mapping ``name -> qrels frame`` (e.g. ``{"human": nist, "gpt4": syndl}``), a
    long frame that already has a ``label_set`` column (returned validated), or one qrels frame
    (named ``name``, or split into one label set per value of its column ``by``: with
    ``by="source"`` each source's labels become a label set, so measures can be asked per
    source). The ``label_set`` column is a variant key, so
    ``pdeval.evaluate(run, label_sets(...), measures)`` evaluates every run against every label
    set at once. A ``source`` column is kept.

    Parameters
    ----------
    sets : DataFrame or dict of str to DataFrame
        A mapping name -> qrels frame, a long frame with a ``label_set`` column, or one qrels
        frame.
    name : str, default 'labels'
        The label set name of one qrels frame given alone.
    by : str, optional
        A column of one qrels frame whose values become the label sets (e.g. ``"source"``).

    Returns
    -------
    pandas.DataFrame
        A canonical qrels frame with a ``label_set`` column (str).

    Raises
    ------
    SchemaError
        Another variant column, a missing ``by`` column, or a repeated
        (label_set, query_id, doc_id).

    See Also
    --------
    leaderboards : Evaluates every label set.
    agreement : Compares the label sets.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> llm = qrels.assign(relevance=[1, 0, 0, 1, 1])
    >>> pdeval.label_sets({"human": qrels, "llm": llm}).head(3)
      query_id doc_id  relevance label_set
    0        1     d1          1     human
    1        1     d2          1     human
    2        1     d3          0     human
    """
    if by is not None:
        if not isinstance(sets, pd.DataFrame) or by not in sets.columns:
            raise SchemaError(f"by={by!r} splits one qrels frame by its column {by!r}, which this input lacks")
        sets = sets.assign(**{LABEL_SET: sets[by].astype(str)})
    if isinstance(sets, Mapping):
        if not sets:
            raise PdevalError("label_sets needs at least one label set")
        parts = [plain_labels(frame, f"label set {key!r}").assign(label_set=str(key)) for key, frame in sets.items()]
        long = pd.concat(parts, ignore_index=True)
    elif isinstance(sets, pd.DataFrame):
        if LABEL_SET in sets.columns:
            long = sets
        else:
            long = plain_labels(sets, "the label set").assign(label_set=name)
    else:
        raise SchemaError(f"label sets must be a qrels frame or a mapping name -> qrels frame, not {type(sets).__name__}")
    long = as_qrels(long)
    others = [k for k in variant_keys(long) if k != LABEL_SET]
    if others:
        raise SchemaError(f"the label sets have variant column(s) {others} besides {LABEL_SET!r}; select one variant first")
    long[LABEL_SET] = long[LABEL_SET].astype(str)
    return long


@contract(qrels=Frame("qrels"), mapping=GRADE_MAP)
def map_grades(qrels: pd.DataFrame, mapping: GradeMap) -> pd.DataFrame:
    """Map the grades of a qrels frame (or of each label set) to another scale.

    ``mapping`` is ``{grade: new grade}`` applied to every row, e.g. ``{0: 0, 1: 1, 2: 2, 3: 3,
    4: 3}`` folds a 0-4 scale (TREC RAG, UMBRELA) onto 0-3 (TREC DL), or a mapping
    ``label set -> {grade: new grade}`` for a frame with a ``label_set`` column (sets not named
    keep their grades). Negative values (pooled, not judged) are kept unless mapped. A judged
    grade the mapping lacks raises :class:`~pdeval.errors.SchemaError` naming it: a scale
    mapping must say where every grade goes.

    Parameters
    ----------
    qrels : DataFrame
        A qrels frame (with a ``label_set`` column for a mapping per label set).
    mapping : dict
        ``{grade: new grade}``, ``{label set: {grade: new grade}}`` or None (unchanged).

    Returns
    -------
    pandas.DataFrame
        The qrels with the mapped ``relevance``.

    Raises
    ------
    SchemaError
        A judged grade the mapping lacks, or an unknown label set.

    See Also
    --------
    agreement : Takes ``grade_map=`` to compare scales.
    leaderboards : Takes ``grade_map=`` too.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3"], "relevance": [0, 2, 3]})
    >>> pdeval.map_grades(qrels, {0: 0, 2: 1, 3: 1})
      query_id doc_id  relevance
    0        1     d1          0
    1        1     d2          1
    2        1     d3          1
    """
    q = as_qrels(qrels)
    if mapping is None:
        return q
    if not isinstance(mapping, Mapping):
        raise SchemaError(f"a grade mapping must be a dict grade -> grade, not {type(mapping).__name__}")
    nested = bool(mapping) and all(isinstance(v, Mapping) for v in mapping.values())
    if nested and LABEL_SET not in q.columns:
        raise SchemaError(f"a grade mapping per label set needs a {LABEL_SET!r} column in the qrels")
    relevance = q["relevance"].to_numpy(dtype=np.int64).copy()
    if nested:
        names = q[LABEL_SET].astype(str).to_numpy()
        unknown = sorted(set(map(str, mapping)) - set(names))
        if unknown:
            raise SchemaError(f"the grade mapping names label set(s) {unknown} that the qrels lack")
        targets = [(names == str(key), inner) for key, inner in mapping.items()]
    else:
        targets = [(np.ones(len(q), dtype=bool), mapping)]
    for rows, inner in targets:
        old = np.array(sorted(int(k) for k in inner), dtype=np.int64)
        new = np.array([int(inner[k]) for k in sorted(inner, key=int)], dtype=np.int64)
        values = relevance[rows]
        at = np.clip(np.searchsorted(old, values), 0, max(len(old) - 1, 0))
        found = (old[at] == values) if len(old) else np.zeros(len(values), dtype=bool)
        missing = ~found & (values >= 0)
        if missing.any():
            raise SchemaError(
                f"the grade mapping {dict(inner)} has no entry for grade(s) {sorted(set(values[missing].tolist()))} "
                f"({int(missing.sum())} label(s)); map every grade of the scale"
            )
        relevance[rows] = np.where(found, new[at] if len(new) else values, values)
    return q.assign(relevance=relevance)


@contract(qrels=Frame("qrels", variants=False), automatic=Frame("qrels", variants=False),
          policy=Choice("fill", "replace", "prefer"), human_source=Text(), automatic_source=Text(),
          removed={"return_counts": "the counts are in merged.attrs['merge_counts']"})
def merge_qrels(
    qrels: pd.DataFrame,
    automatic: pd.DataFrame,
    policy: MergePolicy = "fill",
    *,
    human_source: str = "human",
    automatic_source: str = "automatic",
) -> pd.DataFrame:
    """Combine a human label set (``qrels``) and an automatic one, keeping each label's ``source``.

    A *label* is a row with relevance ``>= 0``; a negative value (pooled, not judged) is a hole.
    Each (query_id, doc_id) pair appears once in the output, with the label chosen by
    ``policy``:

    ``"fill"``
        every human label is kept; automatic labels only fill holes (pairs the human set lacks
        or has as unjudged). The common way to extend a pool with LLM labels (SynDL).
    ``"prefer"``
        the union, with the automatic label where both exist (human labels survive only where
        the automatic set has none).
    ``"replace"``
        on every topic the automatic set labels, the automatic labels replace the human ones
        outright (human labels of those topics are dropped, even for pairs the automatic set
        lacks); topics without automatic labels keep their human labels. A fully automatic
        leaderboard where automatic labels exist.

    Holes nobody labels stay as they were (one unjudged row, the human one first). The
    ``source`` of a row is its frame's ``source`` column if it has one, else ``human_source``
    or ``automatic_source``.

    Counts (``merged.attrs["merge_counts"]``):
    ``human`` (human labels kept), ``filled`` (automatic labels where no human label was),
    ``overridden`` (automatic labels that replaced a human label of the same pair) and
    ``changed`` (those of them with a different grade), ``ignored`` (automatic labels not used),
    ``dropped`` (human labels not used), ``unjudged`` (holes left), ``total`` (output rows).
    ``human + filled + overridden + unjudged == total`` and no label is lost or repeated except
    as ``ignored``/``dropped`` says.

    Parameters
    ----------
    qrels : DataFrame
        The human labels (one label set, no variant column).
    automatic : DataFrame
        The automatic labels.
    policy : {'fill', 'replace', 'prefer'}, default 'fill'
        ``"fill"``, ``"prefer"`` or ``"replace"`` (above).
    human_source : str, default 'human'
        The ``source`` of the rows of ``qrels`` when it has no ``source`` column.
    automatic_source : str, default 'automatic'
        The ``source`` of the rows of ``automatic`` when it has no ``source`` column.

    Returns
    -------
    pandas.DataFrame
        The merged qrels ``query_id, doc_id, relevance, source``; the counts in
        ``attrs["merge_counts"]``.

    Raises
    ------
    PdevalError
        An unknown policy.
    SchemaError
        A frame with variant columns (several label sets).

    See Also
    --------
    label_sets : Label sets side by side instead of merged.
    judged_by_source : Which source judged the top of each ranking.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> llm = pd.DataFrame({"query_id": "1", "doc_id": ["d2", "d6"], "relevance": [0, 1]})
    >>> pdeval.merge_qrels(qrels, llm)
      query_id doc_id  relevance     source
    0        1     d1          1      human
    1        1     d2          1      human
    2        1     d3          0      human
    3        1     d4          0      human
    4        1     d5          1      human
    5        1     d6          1  automatic
    """
    if policy not in ("fill", "replace", "prefer"):
        raise PdevalError(f"policy must be 'fill', 'replace' or 'prefer', not {policy!r}")
    h = plain_labels(qrels, "the human qrels", human_source)
    a = plain_labels(automatic, "the automatic qrels", automatic_source)
    h_pair, a_pair = pair_codes(h, a)
    both = pd.concat([h, a], ignore_index=True)
    pair = np.concatenate([h_pair, a_pair])
    is_auto = np.concatenate([np.zeros(len(h), dtype=bool), np.ones(len(a), dtype=bool)])
    labelled = both["relevance"].to_numpy(dtype=np.int64) >= 0
    n_pairs = int(pair.max()) + 1 if len(pair) else 0
    human_label = np.zeros(n_pairs, dtype=bool)
    human_label[pair[~is_auto & labelled]] = True
    # priority of each row within its pair; the highest wins, -1 never
    if policy == "prefer":
        priority = np.select([is_auto & labelled, labelled, ~is_auto], [3, 2, 1], 0)
    else:
        priority = np.select([~is_auto & labelled, labelled, ~is_auto], [3, 2, 1], 0)
    if policy == "replace":
        topic = pd.factorize(both["query_id"].astype(str))[0]
        auto_topics = np.zeros(topic.max() + 1 if len(topic) else 0, dtype=bool)
        auto_topics[topic[is_auto & labelled]] = True
        inside = auto_topics[topic]
        priority = np.where(inside & ~is_auto, -1, np.where(inside & is_auto, np.where(labelled, 3, 2), priority))
    order = np.lexsort((-priority, pair))
    first = np.concatenate(([True], pair[order][1:] != pair[order][:-1])) if len(order) else np.zeros(0, dtype=bool)
    chosen = order[first & (priority[order] >= 0)]
    chosen.sort()
    merged = both.iloc[chosen].reset_index(drop=True)
    c_auto, c_label, c_pair = is_auto[chosen], labelled[chosen], pair[chosen]
    from_auto = c_auto & c_label
    relevance = both["relevance"].to_numpy(dtype=np.int64)
    human_grade = np.full(n_pairs, -1, dtype=np.int64)
    human_grade[pair[~is_auto & labelled]] = relevance[~is_auto & labelled]
    overridden = from_auto & human_label[c_pair]
    counts = {
        "human": int((~c_auto & c_label).sum()),
        "filled": int((from_auto & ~human_label[c_pair]).sum()),
        "overridden": int(overridden.sum()),
        "changed": int((overridden & (relevance[chosen] != human_grade[c_pair])).sum()),
        "ignored": int((is_auto & labelled).sum() - from_auto.sum()),
        "dropped": int((~is_auto & labelled).sum() - (~c_auto & c_label).sum()),
        "unjudged": int((~c_label).sum()),
        "total": int(len(merged)),
    }
    merged.attrs["merge_counts"] = counts
    return merged


@contract(run=Frame("run"), qrels=Frame("qrels", variants=False), k=ListOf(Integer(1), unique=True),
          score_precision=SCORE_PRECISION)
def judged_by_source(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    k: Union[int, Iterable[int]] = (10,),
    *,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """``Judged@k`` split by the ``source`` of the labels: who judged a run's top k.

    ``judged_s@k = |{d at ranks 1..k : d labelled (relevance >= 0) by source s}| / min(k, n)``
    with n the number of documents the run retrieved for the topic, so the sources' shares add
    up to :func:`pdeval.judged` (ir_measures' ``Judged@k``). A qrels frame without a ``source``
    column counts as one source, ``"qrels"``. Topics of the run absent from the qrels are
    ignored, as ``judged`` does.

    Parameters
    ----------
    run : DataFrame
        A run frame.
    qrels : DataFrame
        A qrels frame, with a ``source`` column or without.
    k : int or list of int, default (10,)
        A cutoff or a list of them.
    score_precision : {'float64', 'float32'}, default 'float64'
        As :func:`pdeval.evaluate` orders scores.

    Returns
    -------
    pandas.DataFrame
        A tidy frame ``run, query_id, k, source, judged`` (every source on every row group, 0
        where it judged nothing).

    Raises
    ------
    PdevalError
        A cutoff that is not a positive integer.

    See Also
    --------
    merge_qrels : Makes qrels with a ``source`` column.
    fill_holes : Judges the holes.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> merged = pdeval.merge_qrels(qrels, pd.DataFrame({"query_id": "1", "doc_id": ["d6"], "relevance": [1]}))
    >>> pdeval.judged_by_source(run, merged, k=3)
      run query_id  k     source    judged
    0   a        1  3  automatic  0.000000
    1   a        1  3      human  1.000000
    2   b        1  3  automatic  0.000000
    3   b        1  3      human  1.000000
    4   c        1  3  automatic  0.333333
    5   c        1  3      human  0.666667
    """
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    if not ks or any(not isinstance(c, (int, np.integer)) or c < 1 for c in ks):
        raise PdevalError(f"k must be a positive integer or a list of them, not {k!r}")
    q = plain_labels(qrels, "judged_by_source's qrels", "qrels")
    r = as_run(run)
    r = r.loc[r["query_id"].isin(pd.unique(q["query_id"]))]
    ranked = rank_run(r, score_precision=score_precision, depth=max(ks))
    group, groups = pd.MultiIndex.from_arrays([ranked["run"], ranked["query_id"]]).factorize()
    n_groups = len(groups)
    source, sources = pd.factorize(q[SOURCE], sort=True)
    labelled = q["relevance"].to_numpy() >= 0
    index = pd.MultiIndex.from_arrays([q.loc[labelled, "query_id"], q.loc[labelled, "doc_id"]])
    position = index.get_indexer(pd.MultiIndex.from_arrays([ranked["query_id"], ranked["doc_id"]]))
    row_source = np.where(position >= 0, source[labelled][np.maximum(position, 0)], -1)
    rank = ranked["rank"].to_numpy()
    retrieved = np.bincount(group, minlength=n_groups)
    n_sources, kk = len(sources), np.asarray(ks, dtype=np.int64)
    counts = np.zeros((n_groups, len(ks), n_sources))
    judged_rows = row_source >= 0
    for i, cutoff in enumerate(ks):  # a handful of cutoffs, each a vectorised count
        rows = judged_rows & (rank <= cutoff)
        flat = group[rows] * n_sources + row_source[rows]
        counts[:, i, :] = np.bincount(flat, minlength=n_groups * n_sources).reshape(n_groups, n_sources)
    share = counts / np.minimum(kk[None, :], retrieved[:, None])[:, :, None]
    g, i, s = np.meshgrid(np.arange(n_groups), np.arange(len(ks)), np.arange(n_sources), indexing="ij")
    out = pd.DataFrame(
        {
            "run": groups.get_level_values(0).to_numpy()[g.ravel()],
            "query_id": groups.get_level_values(1).to_numpy()[g.ravel()],
            "k": kk[i.ravel()],
            "source": np.asarray(sources)[s.ravel()],
            "judged": share.ravel(),
        }
    )
    return out.sort_values(["run", "query_id", "k", "source"], kind="stable", ignore_index=True)
