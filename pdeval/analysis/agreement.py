"""Automatic judgments: label provenance, merging, agreement, leaderboards, filling holes.

Campaigns now label part of their pools with LLM assessors (TREC RAG's UMBRELA, SynDL, the
LLMJudge challenge). This module holds the labels' side of that:

* **provenance** -- a qrels frame may carry a ``source`` column (``"human"``, a model name,
  ``"judge"``). It is neither a variant key nor ignored: it travels with each label.
  :func:`merge_qrels` combines a human and an automatic label set under a documented policy
  and counts what it filled and overrode; :func:`judged_by_source` splits ``Judged@k`` by
  source (e.g. the share of a run's top 10 judged by people).
* **label sets** -- several label sets of the same pairs are one long frame with a
  ``label_set`` column (:func:`label_sets`), which the engine treats as a variant key, so
  :func:`leaderboards` evaluates runs against every label set in one call.
  :func:`map_grades` maps grades between scales (0-4 to 0-3, ...).
* **agreement** -- :func:`agreement` compares many label sets with a reference in one
  vectorised pass: Cohen's kappa (unweighted, linear, quadratic), Krippendorff's alpha
  (nominal, ordinal, interval), exact and binarised agreement, and confusion tables.
* **leaderboards** -- :func:`compare_leaderboards` compares the system rankings under each
  label set with the reference ranking (Kendall's tau_b and tau_AP through
  :func:`pdeval.rank_correlation`, plus top-k overlap); :func:`leaderboard_changes` lists how
  far each run moves.
* **holes** -- :func:`fill_holes` finds the unjudged pairs in the runs' top k and asks a
  user-supplied judge for them, in batches, with a cache.
"""

from __future__ import annotations

import csv
import warnings
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.errors import ParseError, PdevalError, PdevalWarning, SchemaError
from pdeval.frames.canonical import as_qrels, as_result, as_run, variant_keys
from pdeval.judgments.reduction import DESIGN_COLUMNS
from pdeval.common.progress import progress_bar
from pdeval.engine.ranking import ScorePrecision, rank_run

__all__ = [
    "LABEL_SET",
    "SOURCE",
    "STATISTICS",
    "Agreement",
    "agreement",
    "compare_leaderboards",
    "fill_holes",
    "judged_by_source",
    "label_sets",
    "leaderboard_changes",
    "leaderboards",
    "map_grades",
    "merge_qrels",
]

#: the qrels column naming a label set (a variant key: one qrels variant per label set)
LABEL_SET = "label_set"
#: the qrels column naming where a label came from (provenance, never a variant key)
SOURCE = "source"
#: the label set name of the rows that pool every label set (Krippendorff's alpha of all coders)
ALL_SETS = "(all)"
#: the statistics of :func:`agreement`, in the order they are reported
STATISTICS = (
    "kappa",
    "kappa_linear",
    "kappa_quadratic",
    "alpha_nominal",
    "alpha_ordinal",
    "alpha_interval",
    "exact",
    "binary",
    "binary_kappa",
)

MergePolicy = Literal["fill", "replace", "prefer"]
GradeMap = Union[None, Mapping[int, int], Mapping[str, Mapping[int, int]]]
LabelSets = Union[pd.DataFrame, Mapping[str, pd.DataFrame]]


# ---------------------------------------------------------------------------------------------
# label sets, grade mappings, provenance


def _pair_codes(*frames: pd.DataFrame) -> list[np.ndarray]:
    """Dense codes of the (query_id, doc_id) pairs of several frames, shared between them."""
    query = pd.factorize(pd.concat([f["query_id"].astype(str) for f in frames], ignore_index=True))[0]
    doc, docs = pd.factorize(pd.concat([f["doc_id"].astype(str) for f in frames], ignore_index=True))
    codes = pd.factorize(query.astype(np.int64) * max(len(docs), 1) + doc)[0]
    bounds = np.cumsum([0, *[len(f) for f in frames]])
    return [codes[bounds[i] : bounds[i + 1]] for i in range(len(frames))]


def _plain_labels(qrels: pd.DataFrame, what: str, source: Optional[str] = None, *, labels_only: bool = False
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


def label_sets(sets: LabelSets, *, name: str = "labels", by: Optional[str] = None) -> pd.DataFrame:
    """Several label sets as one long qrels frame with a ``label_set`` column.

    ``sets`` is a mapping ``name -> qrels frame`` (e.g. ``{"human": nist, "gpt4": syndl}``), a
    long frame that already has a ``label_set`` column (returned validated), or one qrels frame
    (named ``name``, or split into one label set per value of its column ``by``: with
    ``by="source"`` each source's labels become a label set, so measures can be asked per
    source). The ``label_set`` column is a variant key, so
    ``pdeval.evaluate(run, label_sets(...), measures)`` evaluates every run against every label
    set at once. A ``source`` column is kept. Duplicate (label_set, query_id, doc_id) raise.
    """
    if by is not None:
        if not isinstance(sets, pd.DataFrame) or by not in sets.columns:
            raise SchemaError(f"by={by!r} splits one qrels frame by its column {by!r}, which this input lacks")
        sets = sets.assign(**{LABEL_SET: sets[by].astype(str)})
    if isinstance(sets, Mapping):
        if not sets:
            raise PdevalError("label_sets needs at least one label set")
        parts = [_plain_labels(frame, f"label set {key!r}").assign(label_set=str(key)) for key, frame in sets.items()]
        long = pd.concat(parts, ignore_index=True)
    elif isinstance(sets, pd.DataFrame):
        if LABEL_SET in sets.columns:
            long = sets
        else:
            long = _plain_labels(sets, "the label set").assign(label_set=name)
    else:
        raise SchemaError(f"label sets must be a qrels frame or a mapping name -> qrels frame, not {type(sets).__name__}")
    long = as_qrels(long)
    others = [k for k in variant_keys(long) if k != LABEL_SET]
    if others:
        raise SchemaError(f"the label sets have variant column(s) {others} besides {LABEL_SET!r}; select one variant first")
    long[LABEL_SET] = long[LABEL_SET].astype(str)
    return long


def map_grades(qrels: pd.DataFrame, mapping: GradeMap) -> pd.DataFrame:
    """Map the grades of a qrels frame (or of each label set) to another scale.

    ``mapping`` is ``{grade: new grade}`` applied to every row, e.g. ``{0: 0, 1: 1, 2: 2, 3: 3,
    4: 3}`` folds a 0-4 scale (TREC RAG, UMBRELA) onto 0-3 (TREC DL), or a mapping
    ``label set -> {grade: new grade}`` for a frame with a ``label_set`` column (sets not named
    keep their grades). Negative values (pooled, not judged) are kept unless mapped. A judged
    grade the mapping lacks raises :class:`~pdeval.errors.SchemaError` naming it: a scale
    mapping must say where every grade goes.
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


def merge_qrels(
    human: pd.DataFrame,
    automatic: pd.DataFrame,
    policy: MergePolicy = "fill",
    *,
    human_source: str = "human",
    automatic_source: str = "automatic",
    return_counts: bool = False,
):
    """Combine a human and an automatic label set, keeping each label's ``source``.

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

    Counts (``merged.attrs["merge_counts"]``, or the second element with ``return_counts``):
    ``human`` (human labels kept), ``filled`` (automatic labels where no human label was),
    ``overridden`` (automatic labels that replaced a human label of the same pair) and
    ``changed`` (those of them with a different grade), ``ignored`` (automatic labels not used),
    ``dropped`` (human labels not used), ``unjudged`` (holes left), ``total`` (output rows).
    ``human + filled + overridden + unjudged == total`` and no label is lost or repeated except
    as ``ignored``/``dropped`` says.
    """
    if policy not in ("fill", "replace", "prefer"):
        raise PdevalError(f"policy must be 'fill', 'replace' or 'prefer', not {policy!r}")
    h = _plain_labels(human, "the human qrels", human_source)
    a = _plain_labels(automatic, "the automatic qrels", automatic_source)
    h_pair, a_pair = _pair_codes(h, a)
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
    return (merged, counts) if return_counts else merged


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

    Returns a tidy frame ``run, query_id, k, source, judged`` (every source on every row group,
    0 where it judged nothing).
    """
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    if not ks or any(not isinstance(c, (int, np.integer)) or c < 1 for c in ks):
        raise PdevalError(f"k must be a positive integer or a list of them, not {k!r}")
    q = _plain_labels(qrels, "judged_by_source's qrels", "qrels")
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


# ---------------------------------------------------------------------------------------------
# agreement


@dataclass
class Agreement:
    """Result of :func:`agreement`.

    ``statistics``: one row per (label_set[, query_id], statistic) with ``value`` and
    ``n_pairs`` (the pairs compared). ``confusion``: one row per (label_set[, query_id],
    reference grade, label grade) with ``count``. ``coverage``: one row per label set with
    ``n_reference`` (labels of the reference), ``n_labels`` (labels of the set), ``n_common``
    (pairs both label; the pairs compared), ``only_reference`` and ``only_labels``.
    """

    statistics: pd.DataFrame
    confusion: pd.DataFrame
    coverage: pd.DataFrame

    def wide(self) -> pd.DataFrame:
        """The statistics as a table: one row per label set (and topic), one column per statistic."""
        keys = [c for c in self.statistics.columns if c in (LABEL_SET, "query_id")]
        table = self.statistics.pivot_table(index=keys, columns="statistic", values="value", sort=False)
        table = table[[s for s in STATISTICS if s in table.columns]]
        table.columns.name = None
        return table.reset_index()


def _kappa(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each confusion matrix (groups x G x G) with disagreement weights (G x G)."""
    n = confusion.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = confusion.sum(axis=2)[:, :, None] * confusion.sum(axis=1)[:, None, :] / n[:, None, None]
        return 1.0 - (confusion * weights).sum(axis=(1, 2)) / (expected * weights).sum(axis=(1, 2))


def _alpha(coincidence: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
    """Krippendorff's alpha of each coincidence matrix (groups x G x G) for one metric."""
    n_v = coincidence.sum(axis=1)
    n = n_v.sum(axis=1)
    g = len(values)
    if level == "nominal":
        delta = np.broadcast_to(1.0 - np.eye(g), coincidence.shape)
    elif level == "interval":
        delta = np.broadcast_to((values[:, None] - values[None, :]).astype(np.float64) ** 2, coincidence.shape)
    else:  # ordinal: (sum_{g=i..j} n_g - (n_i + n_j)/2)^2, from the marginals of each group
        cum = np.cumsum(n_v, axis=1)
        lo, hi = np.minimum.outer(np.arange(g), np.arange(g)), np.maximum.outer(np.arange(g), np.arange(g))
        between = cum[:, hi] - cum[:, lo] + n_v[:, lo]
        delta = (between - (n_v[:, :, None] + n_v[:, None, :]) / 2.0) ** 2
    expected = (n_v[:, :, None] * n_v[:, None, :] - n_v[:, :, None] * np.eye(g)[None]) / (n - 1)[:, None, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        return 1.0 - (coincidence * delta).sum(axis=(1, 2)) / (expected * delta).sum(axis=(1, 2))


def _statistics(confusion: np.ndarray, coincidence: np.ndarray, values: np.ndarray, threshold: int) -> dict:
    g = len(values)
    distance = np.abs(values[:, None] - values[None, :]).astype(np.float64)
    n = confusion.sum(axis=(1, 2))
    binary = (values >= threshold).astype(np.int64)
    collapse = np.eye(2)[binary]  # G x 2
    confusion2 = np.einsum("gi,sij,jk->sgk", collapse.T, confusion, collapse)
    with np.errstate(divide="ignore", invalid="ignore"):
        exact = np.trace(confusion, axis1=1, axis2=2) / n
        same = binary[:, None] == binary[None, :]
        binary_agreement = (confusion * same).sum(axis=(1, 2)) / n
    return {
        "kappa": _kappa(confusion, 1.0 - np.eye(g)),
        "kappa_linear": _kappa(confusion, distance),
        "kappa_quadratic": _kappa(confusion, distance**2),
        "alpha_nominal": _alpha(coincidence, values, "nominal"),
        "alpha_ordinal": _alpha(coincidence, values, "ordinal"),
        "alpha_interval": _alpha(coincidence, values, "interval"),
        "exact": exact,
        "binary": binary_agreement,
        "binary_kappa": _kappa(confusion2, 1.0 - np.eye(2)),
    }


def _all_coders_coincidence(
    unit: np.ndarray, grade: np.ndarray, unit_group: np.ndarray, n_units: int, n_groups: int, g: int
) -> np.ndarray:
    """Krippendorff's coincidence matrices o_ck = sum_u (n_uc n_uk - [c=k] n_uc) / (m_u - 1),
    summed over the units of each group (every coder of every unit)."""
    counts = np.bincount(unit * g + grade, minlength=n_units * g).reshape(n_units, g).astype(np.float64)
    m = counts.sum(axis=1)
    weight = np.where(m >= 2, 1.0 / np.maximum(m - 1, 1), 0.0)
    per_unit = (counts[:, :, None] * counts[:, None, :] - counts[:, :, None] * np.eye(g)[None]) * weight[:, None, None]
    out = np.zeros((n_groups, g, g))
    np.add.at(out, unit_group, per_unit)
    return out


def agreement(
    reference: pd.DataFrame,
    others: LabelSets,
    *,
    threshold: int = 1,
    per_topic: bool = False,
    overall: bool = True,
    grade_map: GradeMap = None,
    missing: Literal["warn", "ignore", "raise"] = "warn",
) -> Agreement:
    """Agreement of one or many label sets with a reference label set, in one vectorised pass.

    ``reference`` is a qrels frame (e.g. the human labels); ``others`` is a qrels frame, a
    mapping ``name -> qrels frame`` or a long frame with a ``label_set`` column
    (:func:`label_sets`). ``grade_map`` maps the other sets' grades first (:func:`map_grades`).
    Negative values (pooled, not judged) are not labels and are left out.

    **Pairs.** Only the (query_id, doc_id) pairs both the reference and a set label are
    compared. Pairs labelled by one side only are counted in :attr:`Agreement.coverage`; with
    ``missing="warn"`` (default) a :class:`~pdeval.errors.PdevalWarning` gives the counts,
    ``"raise"`` raises :class:`~pdeval.errors.SchemaError`, ``"ignore"`` is silent. This is
    Krippendorff's own rule: a unit with a single value is not pairable.

    For each label set (and each topic with ``per_topic=True``, plus ``query_id="all"``), with
    the confusion matrix O (reference grade x set grade) over the n compared pairs, E its
    expectation under independence ``E_ij = (sum_k O_ik)(sum_k O_kj) / n``, grades v_i:

    ``kappa``, ``kappa_linear``, ``kappa_quadratic``
        Cohen's kappa ``1 - sum w_ij O_ij / sum w_ij E_ij`` with ``w_ij = [i != j]``,
        ``|v_i - v_j|`` or ``(v_i - v_j)^2`` (Cohen 1960, 1968). Weights are distances between
        grade *values*: this is ``sklearn.metrics.cohen_kappa_score`` with
        ``labels=range(min grade, max grade + 1)`` (sklearn measures distances between the
        positions of the labels, which are the values on a consecutive scale).
    ``alpha_nominal``, ``alpha_ordinal``, ``alpha_interval``
        Krippendorff's alpha ``1 - (n_.. - 1) sum o_ck d_ck / sum n_c n_k d_ck`` from the
        coincidence matrix ``o = O + O^T`` with marginals n_c (Krippendorff 2011, "Computing
        Krippendorff's Alpha-Reliability"), ``d`` nominal ``[c != k]``, interval
        ``(v_c - v_k)^2``, ordinal ``(sum_{g=c..k} n_g - (n_c + n_k)/2)^2``.
    ``exact``
        the share of pairs with the same grade.
    ``binary``, ``binary_kappa``
        agreement and Cohen's kappa after binarising both sides at ``threshold``
        (relevant iff grade >= threshold; TREC DL passages use 2).

    ``overall=True`` adds rows with ``label_set="(all)"`` when there are two label sets or more:
    Krippendorff's alpha of every label set and the reference together as coders of the same
    units (every labelled pair; units with one value are not pairable).

    Undefined values (one grade only, no pairs) are NaN. Returns an :class:`Agreement`.
    """
    ref = _plain_labels(reference, "the reference qrels", labels_only=True)
    ref = ref.loc[ref["relevance"].to_numpy() >= 0].reset_index(drop=True)
    long = map_grades(label_sets(others), grade_map)
    long = long.loc[long["relevance"].to_numpy() >= 0].reset_index(drop=True)
    if (long[LABEL_SET] == ALL_SETS).any():
        raise SchemaError(f"a label set may not be named {ALL_SETS!r} (the name of the pooled rows)")
    if missing not in ("warn", "ignore", "raise"):
        raise PdevalError(f"missing must be 'warn', 'ignore' or 'raise', not {missing!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)):
        raise PdevalError(f"threshold must be an integer grade (relevant iff grade >= threshold), not {threshold!r}")
    set_code, set_names = pd.factorize(long[LABEL_SET], sort=False)
    n_sets = len(set_names)
    ref_pair, long_pair = _pair_codes(ref, long)
    n_units = int(max(ref_pair.max(initial=-1), long_pair.max(initial=-1))) + 1
    # the reference label of every other row (-1: the reference lacks the pair)
    ref_index = np.full(n_units, -1, dtype=np.int64)
    ref_index[ref_pair] = np.arange(len(ref))
    position = ref_index[long_pair]
    common = position >= 0

    values = np.unique(np.concatenate([ref["relevance"].to_numpy(np.int64), long["relevance"].to_numpy(np.int64)]))
    if len(values) == 0:
        raise SchemaError("agreement: neither the reference nor the label sets hold a label (relevance >= 0)")
    g = len(values)
    ref_grade = np.searchsorted(values, ref["relevance"].to_numpy(np.int64))
    set_grade = np.searchsorted(values, long["relevance"].to_numpy(np.int64))

    # coverage, per set
    n_common = np.bincount(set_code[common], minlength=n_sets)
    n_labels = np.bincount(set_code, minlength=n_sets)
    coverage = pd.DataFrame(
        {
            LABEL_SET: np.asarray(set_names, dtype=object),
            "n_reference": len(ref),
            "n_labels": n_labels,
            "n_common": n_common,
            "only_reference": len(ref) - n_common,
            "only_labels": n_labels - n_common,
        }
    )
    uneven = coverage[(coverage["only_reference"] > 0) | (coverage["only_labels"] > 0)]
    if len(uneven) and missing != "ignore":
        message = (
            f"agreement: {len(uneven)} label set(s) do not label the same pairs as the reference "
            f"(first: {uneven[LABEL_SET].iloc[0]!r}: {int(uneven['only_reference'].iloc[0])} pair(s) only in the "
            f"reference, {int(uneven['only_labels'].iloc[0])} only in the set); only the pairs both label are "
            f"compared (see Agreement.coverage)"
        )
        if missing == "raise":
            raise SchemaError(message)
        warnings.warn(message, PdevalWarning, stacklevel=2)

    # groups: one per set, and per (set, topic) with per_topic
    topic_code, topics = pd.factorize(ref["query_id"], sort=True)
    row_topic = topic_code[position[common]]
    a, b, s = ref_grade[position[common]], set_grade[common], set_code[common]
    group_sets = [(s, np.asarray(set_names, dtype=object), None)]
    if per_topic:
        n_topics = len(topics)
        group_sets.append((s * n_topics + row_topic, np.repeat(np.asarray(set_names, dtype=object), n_topics),
                           np.tile(np.asarray(topics, dtype=object), n_sets)))
    stats_parts, confusion_parts = [], []
    for group, names, topic_names in group_sets:
        n_groups = len(names)
        confusion = np.bincount((group * g + a) * g + b, minlength=n_groups * g * g).reshape(n_groups, g, g)
        confusion = confusion.astype(np.float64)
        coincidence = confusion + confusion.transpose(0, 2, 1)
        stats = _statistics(confusion, coincidence, values, threshold)
        keys = {LABEL_SET: names}
        if per_topic:
            keys["query_id"] = topic_names if topic_names is not None else np.full(n_groups, "all", dtype=object)
        stats_parts.append(_long_statistics(keys, stats, confusion.sum(axis=(1, 2))))
        confusion_parts.append(_long_confusion(keys, confusion, values))

    if overall and n_sets >= 2:
        unit = np.concatenate([ref_pair, long_pair])
        grade = np.concatenate([ref_grade, set_grade])
        unit_topic = np.zeros(n_units, dtype=np.int64)
        unit_topic_names = pd.concat([ref["query_id"], long["query_id"]], ignore_index=True)
        all_topic_code, all_topics = pd.factorize(unit_topic_names, sort=True)
        unit_topic[unit] = all_topic_code
        coders = [(np.zeros(n_units, dtype=np.int64), 1, None)]
        if per_topic:
            coders.append((unit_topic, len(all_topics), np.asarray(all_topics, dtype=object)))
        for unit_group, n_groups, topic_names in coders:
            coincidence = _all_coders_coincidence(unit, grade, unit_group, n_units, n_groups, g)
            pairable = coincidence.sum(axis=(1, 2)) / 2.0
            stats = {lvl: _alpha(coincidence, values, lvl.split("_")[1]) for lvl in STATISTICS if lvl.startswith("alpha")}
            keys = {LABEL_SET: np.full(n_groups, ALL_SETS, dtype=object)}
            if per_topic:
                keys["query_id"] = topic_names if topic_names is not None else np.full(n_groups, "all", dtype=object)
            stats_parts.append(_long_statistics(keys, stats, pairable))
    statistics = pd.concat(stats_parts, ignore_index=True)
    confusion = pd.concat(confusion_parts, ignore_index=True)
    return Agreement(statistics, confusion, coverage)


def _long_statistics(keys: dict, stats: dict, n_pairs: np.ndarray) -> pd.DataFrame:
    names = [name for name in STATISTICS if name in stats]
    n_groups, n_stats = len(n_pairs), len(names)
    frame = {key: np.repeat(np.asarray(column, dtype=object), n_stats) for key, column in keys.items()}
    frame["statistic"] = np.tile(np.array(names, dtype=object), n_groups)
    frame["value"] = np.column_stack([stats[name] for name in names]).ravel()
    frame["n_pairs"] = np.repeat(n_pairs, n_stats)
    out = pd.DataFrame(frame)
    out["n_pairs"] = out["n_pairs"].round().astype(np.int64)
    return out


def _long_confusion(keys: dict, confusion: np.ndarray, values: np.ndarray) -> pd.DataFrame:
    n_groups, g = confusion.shape[0], len(values)
    frame = {key: np.repeat(np.asarray(column, dtype=object), g * g) for key, column in keys.items()}
    frame["reference"] = np.tile(np.repeat(values, g), n_groups)
    frame["label"] = np.tile(np.tile(values, g), n_groups)
    frame["count"] = confusion.reshape(-1).astype(np.int64)
    return pd.DataFrame(frame)


# ---------------------------------------------------------------------------------------------
# leaderboards under different label sets


def leaderboards(
    run: pd.DataFrame,
    sets: LabelSets,
    measures,
    *,
    grade_map: GradeMap = None,
    **options,
) -> pd.DataFrame:
    """Evaluate every run against every label set at once (the label sets as qrels variants).

    ``sets`` as in :func:`label_sets`; ``grade_map`` as in :func:`map_grades` (e.g. fold a 0-4
    set onto 0-3 before comparing it with a 0-3 set: a gain or threshold means the same grade
    only on the same scale). Every other option goes to :func:`pdeval.evaluate`. Each label
    set is evaluated on the topics it labels. Returns the result frame, keyed by ``run``,
    ``label_set``, ``query_id``.
    """
    from pdeval.evaluation.core import evaluate

    return evaluate(run, map_grades(label_sets(sets), grade_map), measures, **options)


def _ranked_means(result: pd.DataFrame, system: str, by: list[str]) -> pd.DataFrame:
    """Per-system means with a rank per (measure, by) group: descending mean, ties by name."""
    from pdeval.evaluation.results import summarize

    means = summarize(result, system=system, by=by)
    means = means.loc[means["value"].notna()]
    means = means.sort_values(["measure", *by, "value", system], ascending=[True] * (1 + len(by)) + [False, True],
                              kind="stable")
    means["rank"] = means.groupby(["measure", *by], sort=False, observed=True).cumcount() + 1
    return means.reset_index(drop=True)


def _split_reference(result: pd.DataFrame, reference: str, system: str):
    result = as_result(result)
    if LABEL_SET not in result.columns:
        raise SchemaError(f"the result has no {LABEL_SET!r} column; evaluate with pdeval.leaderboards first")
    names = result[LABEL_SET].astype(str)
    if reference not in set(names):
        raise SchemaError(f"reference label set {reference!r} is not in the result; it has {sorted(set(names))}")
    ref = result.loc[names == reference].drop(columns=LABEL_SET)
    est = result.loc[names != reference]
    if est.empty:
        raise SchemaError(f"the result holds only the reference label set {reference!r}: nothing to compare")
    by = [c for c in as_result(est).columns if c not in ("measure", "value", system, "query_id")]
    return est, ref, by


def compare_leaderboards(
    result: pd.DataFrame,
    reference: str,
    *,
    methods: Sequence[str] = ("tau_b", "tau_ap"),
    k: Union[int, Sequence[int]] = (5, 10),
    system: str = "run",
    missing: Literal["warn", "raise"] = "warn",
) -> pd.DataFrame:
    """Compare the system ranking under every label set with the ranking under ``reference``.

    ``result`` is a result frame with a ``label_set`` column (:func:`leaderboards`). For each
    measure and label set the per-system means (:func:`pdeval.summarize`) are compared with
    the reference label set's by :func:`pdeval.rank_correlation` (``methods``: ``tau_b``,
    ``tau_ap`` with the reference as the true ranking, ...) and by top-k overlap:

    ``top@k = |top_k(set) & top_k(reference)| / k``

    where ``top_k`` holds the k systems with the highest means, ties at the k-th place broken by
    the system name (ascending), so the value is deterministic. Systems must be present under
    both (see ``rank_correlation``'s ``missing``).

    Returns a tidy frame ``measure, label_set, method, value, n_runs`` (methods ``tau_b``,
    ``tau_ap``, ..., ``top@5``, ``top@10``).
    """
    from pdeval.analysis.correlation import rank_correlation

    est, ref, by = _split_reference(result, reference, system)
    ks = [k] if isinstance(k, (int, np.integer)) else list(k)
    if any(not isinstance(c, (int, np.integer)) or c < 1 for c in ks):
        raise PdevalError(f"k must be a positive integer or a list of them, not {k!r}")
    correlations = rank_correlation(est, ref, methods=tuple(methods), by=by, system=system, missing=missing)
    correlations = correlations.drop(columns="reference")
    est_ranks = _ranked_means(est, system, by)
    ref_ranks = _ranked_means(ref, system, [b for b in by if b != LABEL_SET])
    common = est_ranks.merge(ref_ranks[[system, "measure", "rank"]], on=[system, "measure"], suffixes=("", "_reference"))
    parts = []
    for cutoff in ks:  # a few cutoffs, each a vectorised group count
        # ranks are recomputed on the common systems so that both top-k sets are drawn from them
        both = common.assign(
            rank=common.groupby(["measure", *by], observed=True)["rank"].rank(method="first"),
            rank_reference=common.groupby(["measure", *by], observed=True)["rank_reference"].rank(method="first"),
        )
        hit = (both["rank"] <= cutoff) & (both["rank_reference"] <= cutoff)
        top = both.assign(_hit=hit).groupby(["measure", *by], sort=True, observed=True).agg(
            value=("_hit", "sum"), n_runs=(system, "size")
        ).reset_index()
        top["value"] = top["value"] / np.minimum(cutoff, top["n_runs"])
        parts.append(top.assign(method=f"top@{cutoff}"))
    columns = ["measure", *by, "method", "value", "n_runs"]
    out = pd.concat([correlations[columns], *[p[columns] for p in parts]], ignore_index=True)
    out["n_runs"] = out["n_runs"].astype(np.int64)
    return out


def leaderboard_changes(result: pd.DataFrame, reference: str, *, system: str = "run") -> pd.DataFrame:
    """How far each system moves between the reference leaderboard and each other label set's.

    Ranks are 1 for the highest mean, ties broken by system name (as in
    :func:`compare_leaderboards`), over the systems present under both. Returns a tidy frame
    ``measure, label_set, run, value, value_reference, rank, rank_reference, change``
    (``change = rank_reference - rank``: positive when the system climbs), sorted by the
    largest absolute change first within each (measure, label set).
    """
    est, ref, by = _split_reference(result, reference, system)
    est_ranks = _ranked_means(est, system, by)
    ref_ranks = _ranked_means(ref, system, [b for b in by if b != LABEL_SET])
    both = est_ranks.merge(
        ref_ranks[[system, "measure", "value", "rank"]], on=[system, "measure"], suffixes=("", "_reference")
    )
    group = both.groupby(["measure", *by], observed=True)
    both["rank"] = group["rank"].rank(method="first").astype(np.int64)
    both["rank_reference"] = group["rank_reference"].rank(method="first").astype(np.int64)
    both["change"] = both["rank_reference"] - both["rank"]
    both = both.assign(_size=-both["change"].abs()).sort_values(["measure", *by, "_size", system], kind="stable")
    return both[["measure", *by, system, "value", "value_reference", "rank", "rank_reference", "change"]].reset_index(drop=True)


# ---------------------------------------------------------------------------------------------
# filling holes with a judge


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


def fill_holes(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    judge: Callable[[pd.DataFrame], Sequence[int]],
    *,
    depth: int = 10,
    batch_size: int = 100,
    cache: Union[None, str, Path, MutableMapping] = None,
    topics: Literal["qrels", "all"] = "all",
    source: str = "judge",
    progress: bool = True,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Label the unjudged (query_id, doc_id) pairs of the runs' top ``depth`` with a judge.

    A *hole* is a pair some run ranks in its top ``depth`` (trec_eval order) that the qrels
    lack or hold as unjudged (negative). ``topics="all"`` fills the holes of every topic of the
    run; ``"qrels"`` only those of topics the qrels have. The holes are sorted by
    (query_id, doc_id) and passed to ``judge`` in frames of at most ``batch_size`` rows with
    columns ``query_id``, ``doc_id``; the judge returns one integer grade (>= 0) per row, in
    order (a list, array or Series). No model ships with pdeval: the judge is yours.

    ``cache`` avoids asking twice: a mutable mapping ``(query_id, doc_id) -> grade`` (updated
    in place) or the path of a tab-separated file ``query_id, doc_id, grade`` (read first,
    appended to after each batch, so an interrupted run resumes). Pairs in the cache are not
    sent to the judge.

    Returns the judge's labels of every hole (from the cache or fresh) as a qrels frame with
    ``source`` set to ``source``; combine them with
    ``pdeval.merge_qrels(qrels, holes, policy="fill")``.
    """
    if not isinstance(depth, (int, np.integer)) or depth < 1:
        raise PdevalError(f"depth must be a positive integer, not {depth!r}")
    if not isinstance(batch_size, (int, np.integer)) or batch_size < 1:
        raise PdevalError(f"batch_size must be a positive integer, not {batch_size!r}")
    if topics not in ("qrels", "all"):
        raise PdevalError(f"topics must be 'qrels' or 'all', not {topics!r}")
    if not callable(judge):
        raise PdevalError(f"judge must be a callable taking a frame of (query_id, doc_id) pairs, not {type(judge).__name__}")
    q = _plain_labels(qrels, "fill_holes' qrels")
    r = as_run(run)
    if topics == "qrels":
        r = r.loc[r["query_id"].isin(pd.unique(q["query_id"]))]
    top = rank_run(r, score_precision=score_precision, depth=depth)[["query_id", "doc_id"]].drop_duplicates()
    labelled = q.loc[q["relevance"].to_numpy() >= 0]
    top_pair, labelled_pair = _pair_codes(top, labelled)
    holes = top.loc[~np.isin(top_pair, labelled_pair)].sort_values(["query_id", "doc_id"], ignore_index=True)

    path = Path(cache) if isinstance(cache, (str, Path)) else None
    store: MutableMapping = _read_cache(path) if path is not None else (cache if cache is not None else {})
    keys = list(zip(holes["query_id"], holes["doc_id"]))
    known = np.fromiter((key in store for key in keys), dtype=bool, count=len(keys))
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
