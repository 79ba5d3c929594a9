"""Qrels agreement per topic: set overlap, kappa at every pair of thresholds, weighted kappa,
Krippendorff's alpha and the adjusted Rand index of a reference label set and many others.

:func:`qrels_agreement` is the per-topic table of the TREC Auto-Judge track's evaluation
(``autojudge-evaluate``'s ``qrel-evaluate``: the same documents, the same rules for documents
and topics one side lacks, the same undefined values), for any number of label sets at once,
with two summaries: the ``"mean"`` over topics (the track's MEAN row) and the pooled ``"all"``
(every document of every topic in one table). One pass of ``np.bincount`` builds the confusion
matrix of every (label set, topic); every statistic is read off those matrices.

**Documents and topics.** On each topic the documents either side labels are compared; a
document one side lacks takes ``fill_value`` on that side (``None``: only the documents both
label are compared, as :func:`pdeval.agreement` does). Grades are clipped to ``0..max_grade``
(reference) and ``0..label_max_grade`` (label sets); by default the highest grade the
reference uses and each label set's own highest grade. ``missing`` rules topics one side
lacks: ``"fill"`` compares them with the other side all ``fill_value``; ``"skip"`` leaves them
out, ``"warn"`` too with a warning; ``"error"`` raises. Negative grades (pooled, not judged)
are not labels with ``unjudged="drop"`` (default); ``"zero"`` makes them grade 0, as the track
clips them. A topic where one side finds nothing relevant keeps its precision, recall
and F1 (one of them 0) with ``empty_sets="zero"`` (default); ``"skip"`` leaves it out of
them, as the track's ``set_overlap`` does under ``on_missing="skip"`` or ``"warn"``.

**Statistics** (``statistic``), with relevant meaning grade >= ``threshold`` (reference) and
>= ``label_threshold`` (label sets), TP, FP, FN counted over the compared documents:

``precision``, ``recall``, ``f1``
    of the label set's relevant documents against the reference's; 0 when a denominator is
    0, NaN on a topic neither side finds anything relevant (that topic has no relevant set).
``jaccard``
    ``TP / (TP + FP + FN)``; NaN when that is 0/0.
``kappa``
    Cohen's (1960) kappa of the binarised labels at every pair of thresholds
    ``reference_threshold`` in ``1..max_grade`` x ``label_threshold`` in ``1..label_max_grade``;
    NaN when both sides are constant.
``kappa_linear``
    Cohen's (1968) weighted kappa with weights ``|i - j|`` on the grades ``0..max_grade``;
    NaN when the scales differ or both sides are constant.
``alpha_ordinal``
    Krippendorff's (2011) ordinal alpha of the two sides; NaN when the scales differ or one
    grade is used.
``ari``
    the adjusted Rand index (Hubert & Arabie 1985) of the binarised labels; 1 when no pair
    of documents is grouped differently.

Each label set has a row per topic, ``query_id="mean"``: the mean over its compared topics
of the per-topic values, undefined ones left out (the track's MEAN row), and
``query_id="all"``: the statistic of every compared document of every topic pooled.
"""

from __future__ import annotations

import warnings
from typing import Literal, Optional

import numpy as np
import pandas as pd

from pdeval.analysis.judges.agreement import coincidence_alpha, weighted_kappa
from pdeval.analysis.judges.labels import (
    GRADE_MAP, LABEL_SET, LABEL_SETS, GradeMap, LabelSets, label_sets, map_grades, pair_codes, plain_labels,
)
from pdeval.common.contract import Choice, Integer, Nullable, contract
from pdeval.errors import PdevalWarning, SchemaError
from pdeval.frames.domains import Frame

__all__ = ["QRELS_STATISTICS", "qrels_agreement"]

#: the statistics of :func:`qrels_agreement`, in the order they are reported
QRELS_STATISTICS = ("precision", "recall", "f1", "jaccard", "kappa", "kappa_linear", "alpha_ordinal", "ari")
#: the ``query_id`` of the mean over topics and of the pooled rows
MEAN, ALL = "mean", "all"


def _topics(ref_topic, set_code, set_topic, n_sets: int, n_topics: int, missing: str, names) -> np.ndarray:
    """Which topics each label set is compared on (n_sets x n_topics), under ``missing``."""
    in_ref = np.zeros(n_topics, dtype=bool)
    in_ref[ref_topic] = True
    in_set = np.zeros((n_sets, n_topics), dtype=bool)
    in_set[set_code, set_topic] = True
    one_side = in_ref[None, :] ^ in_set
    if one_side.any() and missing in ("warn", "error"):
        s, t = np.nonzero(one_side)
        message = (f"qrels_agreement: {len(s)} (label set, topic) pair(s) have labels on one side only (first: "
                   f"{names[s[0]]!r}, topic {t[0]}); only the topics both sides label are compared")
        if missing == "error":
            raise SchemaError(message.replace("; only the topics both sides label are compared", ""))
        warnings.warn(message, PdevalWarning, stacklevel=4)
    return (in_ref[None, :] | in_set) if missing == "fill" else (in_ref[None, :] & in_set)


def _aligned(ref: pd.DataFrame, long: pd.DataFrame, missing: str, fill_value: Optional[int]):
    """The aligned grades of every compared document: (set, topic, reference grade, label grade),
    the set names and the topic names."""
    set_code, set_names = pd.factorize(long[LABEL_SET], sort=False)
    topic_code, topics = pd.factorize(pd.concat([ref["query_id"], long["query_id"]], ignore_index=True).astype(str),
                                      sort=True)
    clash = sorted(set(topics) & {MEAN, ALL})
    if clash:
        raise SchemaError(f"qrels_agreement: topic id(s) {clash} would be indistinguishable from the summary rows "
                          f"(query_id {MEAN!r} and {ALL!r}); rename those topics first")
    ref_topic, set_topic = topic_code[: len(ref)], topic_code[len(ref):]
    n_sets, n_topics = len(set_names), len(topics)
    ref_pair, long_pair = pair_codes(ref, long)
    n_units = int(max(ref_pair.max(initial=-1), long_pair.max(initial=-1))) + 1
    unit_topic = np.zeros(n_units, dtype=np.int64)
    unit_topic[ref_pair], unit_topic[long_pair] = ref_topic, set_topic
    ref_grade = np.full(n_units, -1, dtype=np.int64)
    ref_grade[ref_pair] = ref["relevance"].to_numpy(np.int64)
    set_grade = np.full((n_sets, n_units), -1, dtype=np.int64)
    set_grade[set_code, long_pair] = long["relevance"].to_numpy(np.int64)
    keep = _topics(ref_topic, set_code, set_topic, n_sets, n_topics, missing, set_names)
    has_ref, has_set = (ref_grade >= 0)[None, :], set_grade >= 0
    present = (has_ref | has_set) if fill_value is not None else (has_ref & has_set)
    s, u = np.nonzero(present & keep[:, unit_topic])
    fill = -1 if fill_value is None else fill_value
    t = np.where(ref_grade[u] >= 0, ref_grade[u], fill)
    p = np.where(set_grade[s, u] >= 0, set_grade[s, u], fill)
    return s, unit_topic[u], t, p, keep, np.asarray(set_names, dtype=object), np.asarray(topics, dtype=object)


def _confusion(group: np.ndarray, t: np.ndarray, p: np.ndarray, n_groups: int, t_max: int, p_max: int) -> np.ndarray:
    """The confusion matrix (reference grade x label grade) of every group, grades clipped to the scales."""
    a, b = np.clip(t, 0, t_max), np.clip(p, 0, p_max)
    size = (t_max + 1) * (p_max + 1)
    flat = np.bincount(group * size + a * (p_max + 1) + b, minlength=n_groups * size)
    return flat.reshape(n_groups, t_max + 1, p_max + 1).astype(np.float64)


def _binary_counts(confusion: np.ndarray, i, j):
    """n, true positives, reference-relevant and label-relevant counts of every group at grade
    thresholds ``i`` (reference) and ``j`` (label), from the suffix sums of the confusion matrices."""
    g, rows, cols = confusion.shape
    suffix = np.zeros((g, rows + 1, cols + 1))
    suffix[:, :rows, :cols] = confusion[:, ::-1, ::-1].cumsum(axis=1).cumsum(axis=2)[:, ::-1, ::-1]
    i, j = np.minimum(i, rows), np.minimum(j, cols)
    return suffix[:, 0, 0], suffix[:, i, j], suffix[:, i, 0], suffix[:, 0, j]


def _binary_kappa(n, tp, rr, lr) -> np.ndarray:
    """Cohen's kappa of binary labels; NaN when both sides are constant (autojudge-evaluate's rule)."""
    n = np.broadcast_to(n, tp.shape)
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = (rr * (n - lr) + (n - rr) * lr) / n
        kappa = 1.0 - (rr + lr - 2 * tp) / expected
    constant = ((rr == 0) | (rr == n)) & ((lr == 0) | (lr == n))
    return np.where(constant, np.nan, kappa)


def _ari(n, tp, rr, lr) -> np.ndarray:
    """The adjusted Rand index of two binary partitions from their 2 x 2 contingency table,
    through the pair-counting form (Hubert & Arabie 1985): 1 when no pair is split differently."""
    fp, fn = lr - tp, rr - tp
    tn = n - tp - fp - fn
    squares = tp**2 + fp**2 + fn**2 + tn**2
    cols, rows = (tn + fn, fp + tp), (tn + fp, fn + tp)
    split_pred = tn * cols[0] + fp * cols[1] + fn * cols[0] + tp * cols[1] - squares
    split_true = tn * rows[0] + fp * rows[0] + fn * rows[1] + tp * rows[1] - squares
    same = squares - n
    apart = n**2 - split_pred - split_true - squares
    with np.errstate(divide="ignore", invalid="ignore"):
        ari = 2.0 * (same * apart - split_true * split_pred) / (
            (same + split_true) * (split_true + apart) + (same + split_pred) * (split_pred + apart))
    return np.where(n > 0, np.where((split_true == 0) & (split_pred == 0), 1.0, ari), np.nan)


def _statistics(confusion: np.ndarray, threshold: int, label_threshold: int, label_top: np.ndarray,
                empty_sets: str = "zero") -> dict:
    """Every statistic of every group: name -> (values (groups x k), reference thresholds, label
    thresholds, which of the k exist per group). ``label_top``: the label scale's top per group."""
    g, rows, cols = confusion.shape
    n, tp, rr, lr = _binary_counts(confusion, threshold, label_threshold)
    fp, fn = lr - tp, rr - tp
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(tp + fp > 0, tp / (tp + fp), 0.0)
        recall = np.where(tp + fn > 0, tp / (tp + fn), 0.0)
        f1 = np.where(precision + recall > 0, 2 * precision * recall / (precision + recall), 0.0)
        jaccard = np.where(tp + fp + fn > 0, tp / (tp + fp + fn), np.nan)
    # a topic neither side (with empty_sets="skip": one side) finds relevant has no set overlap
    none_relevant = ((rr == 0) | (lr == 0)) if empty_sets == "skip" else ((rr == 0) & (lr == 0))
    every = np.ones((g, 1), dtype=bool)
    pair = (np.array([threshold]), np.array([label_threshold]), every)
    out = {name: (np.where(none_relevant, np.nan, value)[:, None], *pair)
           for name, value in (("precision", precision), ("recall", recall), ("f1", f1))}
    out["jaccard"] = (jaccard[:, None], *pair)
    ti, pj = np.meshgrid(np.arange(1, rows), np.arange(1, cols), indexing="ij")
    ti, pj = ti.ravel(), pj.ravel()
    n_all, tp_all, rr_all, lr_all = _binary_counts(confusion, ti, pj)
    out["kappa"] = (_binary_kappa(n_all[:, None], tp_all, rr_all, lr_all), ti, pj, pj[None, :] <= label_top[:, None])
    square = np.zeros((g, rows, rows))
    square[:, :, : min(rows, cols)] = confusion[:, :, : min(rows, cols)]
    grades = np.arange(rows)
    ref_used = (square.sum(axis=2) > 0).sum(axis=1)
    set_used = (square.sum(axis=1) > 0).sum(axis=1)
    weighted = weighted_kappa(square, np.abs(grades[:, None] - grades[None, :]).astype(np.float64))
    weighted = np.where((ref_used < 2) & (set_used < 2), np.nan, weighted)
    alpha = coincidence_alpha(square + square.transpose(0, 2, 1), grades, "ordinal")
    other_scale = label_top != rows - 1  # neither is defined between different scales (autojudge-evaluate's rule)
    none = (np.array([-1]), np.array([-1]), every)
    out["kappa_linear"] = (np.where(other_scale, np.nan, weighted)[:, None], *none)
    out["alpha_ordinal"] = (np.where(other_scale, np.nan, alpha)[:, None], *none)
    out["ari"] = (_ari(n, tp, rr, lr)[:, None], *pair)
    return out


def _long(stats: dict, names: np.ndarray, topics: np.ndarray, n_pairs: np.ndarray) -> pd.DataFrame:
    """The statistics of groups (label set x topic) as a long frame."""
    parts = []
    for statistic in QRELS_STATISTICS:
        values, ti, pj, exists = stats[statistic]
        k = values.shape[1]
        exists = np.broadcast_to(exists, values.shape).ravel()
        parts.append(pd.DataFrame({
            LABEL_SET: np.repeat(names, k), "query_id": np.repeat(topics, k), "statistic": statistic,
            "reference_threshold": np.tile(ti, len(names)), "label_threshold": np.tile(pj, len(names)),
            "value": values.ravel(), "n_pairs": np.repeat(n_pairs, k),
        })[exists])
    return pd.concat(parts, ignore_index=True)


def _mean_over_topics(stats: dict, keep: np.ndarray, n_sets: int, n_topics: int) -> dict:
    """The mean over the compared topics of every statistic (undefined values left out)."""
    out = {}
    for name, (values, ti, pj, exists) in stats.items():
        grid = values.reshape(n_sets, n_topics, -1)
        grid = np.where(keep[:, :, None], grid, np.nan)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            out[name] = (np.nanmean(grid, axis=1), ti, pj, np.broadcast_to(exists, values.shape)[::n_topics])
    return out


def _table(s, topic, t, p, keep, names, topics, t_max: int, set_top: np.ndarray, thresholds: tuple,
           empty_sets: str) -> pd.DataFrame:
    """The long frame of every statistic per (label set, topic), their means and the pooled values."""
    n_sets, n_topics = len(names), len(topics)
    p_max = int(set_top.max())
    per_topic = _confusion(s * n_topics + topic, t, p, n_sets * n_topics, t_max, p_max)
    pooled = _confusion(s, t, p, n_sets, t_max, p_max)
    topic_stats = _statistics(per_topic, *thresholds, np.repeat(set_top, n_topics), empty_sets)
    kept = keep.ravel()
    topic_stats_kept = {k: (v[kept], ti, pj, np.broadcast_to(e, v.shape)[kept])
                        for k, (v, ti, pj, e) in topic_stats.items()}
    n_topic, n_pooled = per_topic.sum(axis=(1, 2)), pooled.sum(axis=(1, 2))
    frames = [
        _long(topic_stats_kept, np.repeat(names, n_topics)[kept], np.tile(topics, n_sets)[kept], n_topic[kept]),
        _long(_mean_over_topics(topic_stats, keep, n_sets, n_topics), names, np.full(n_sets, MEAN, dtype=object),
              n_pooled),
        _long(_statistics(pooled, *thresholds, set_top, empty_sets), names, np.full(n_sets, ALL, dtype=object), n_pooled),
    ]
    out = pd.concat(frames, ignore_index=True)
    order = pd.Categorical(out["statistic"], categories=list(QRELS_STATISTICS), ordered=True)
    out = out.assign(_s=pd.Categorical(out[LABEL_SET], categories=list(names), ordered=True), _k=order)
    out = out.sort_values(["_s", "_k"], kind="stable").drop(columns=["_s", "_k"]).reset_index(drop=True)
    out["n_pairs"] = out["n_pairs"].round().astype(np.int64)
    return out


@contract(qrels=Frame("qrels", variants=False), others=LABEL_SETS, threshold=Integer(0),
          label_threshold=Nullable(Integer(0)), max_grade=Nullable(Integer(1)), label_max_grade=Nullable(Integer(1)),
          fill_value=Nullable(Integer(0)), missing=Choice("fill", "skip", "warn", "error", renamed={"raise": "error"}),
          grade_map=GRADE_MAP, unjudged=Choice("drop", "zero"), empty_sets=Choice("zero", "skip"))
def qrels_agreement(
    qrels: pd.DataFrame,
    others: LabelSets,
    *,
    threshold: int = 1,
    label_threshold: Optional[int] = None,
    max_grade: Optional[int] = None,
    label_max_grade: Optional[int] = None,
    fill_value: Optional[int] = 0,
    missing: Literal["fill", "skip", "warn", "error"] = "fill",
    grade_map: GradeMap = None,
    unjudged: Literal["drop", "zero"] = "drop",
    empty_sets: Literal["zero", "skip"] = "zero",
) -> pd.DataFrame:
    """Per-topic agreement of label sets with a reference: the TREC Auto-Judge qrels measures.

    ``qrels`` is the reference (e.g. the human labels); ``others`` any number of label sets (a
    qrels frame, a mapping ``name -> qrels`` or a long frame with ``label_set``, as
    :func:`pdeval.label_sets` takes them).

    The documents, topics and scales compared and the statistics are defined in
    :mod:`pdeval.analysis.judges.qrels_agreement`. ``autojudge-evaluate``'s ``default_grade``, max
    grades and ``on_missing`` are ``fill_value``, ``max_grade``/``label_max_grade``, ``missing``.

    Parameters
    ----------
    qrels : DataFrame
        The reference label set (one qrels frame).
    others : DataFrame or dict of str to DataFrame
        The label sets compared with it.
    threshold : int, default 1
        The reference's relevance threshold (grade >= threshold is relevant).
    label_threshold : int, optional
        The label sets' threshold; default ``threshold``.
    max_grade : int, optional
        The top of the reference's scale (grades above count as it); default its highest grade.
    label_max_grade : int, optional
        The top of the label sets' scale; default each set's highest grade.
    fill_value : int or None, default 0
        The grade of a document one side lacks; ``None`` compares common documents only.
    missing : {'fill', 'skip', 'warn', 'error'}, default 'fill'
        What to do with a topic one side lacks.
    grade_map : dict, optional
        A grade mapping applied to ``others`` first (:func:`pdeval.map_grades`).
    unjudged : {'drop', 'zero'}, default 'drop'
        Negative grades (pooled, not judged) are no label, or grade 0 (``autojudge-evaluate``).
    empty_sets : {'zero', 'skip'}, default 'zero'
        A side with no relevant document on a topic: P or R is 0, or the topic has no P, R, F1.

    Returns
    -------
    DataFrame
        One row per (label_set, query_id, statistic, reference_threshold, label_threshold) with
        ``value`` and ``n_pairs`` (documents compared); thresholds are -1 for the statistics
        without one (``kappa_linear``, ``alpha_ordinal``).

    Raises
    ------
    SchemaError
        No label at all, a topic on one side only with ``missing="error"``, or a topic "mean"/"all".

    See Also
    --------
    agreement : Kappa and alpha of the common pairs, with confusion tables.
    label_sets : The label sets compared.

    Examples
    --------
    >>> human = pd.DataFrame({"query_id": ["1"] * 4 + ["2"] * 4, "doc_id": list("abcdefgh"),
    ...                       "relevance": [0, 1, 2, 2, 0, 0, 1, 2]})
    >>> judge = human.assign(relevance=[0, 2, 2, 1, 0, 1, 1, 2])
    >>> table = pdeval.qrels_agreement(human, {"judge": judge}, threshold=2)
    >>> table.query("statistic in ['f1', 'kappa_linear']").round(3)[["query_id", "statistic", "value"]]
       query_id     statistic  value
    8         1            f1  0.500
    9         2            f1  1.000
    10     mean            f1  0.750
    11      all            f1  0.667
    32        1  kappa_linear  0.429
    33        2  kappa_linear  0.714
    34     mean  kappa_linear  0.571
    35      all  kappa_linear  0.586
    """
    ref = plain_labels(qrels, "the reference qrels", labels_only=True)
    long = map_grades(label_sets(others), grade_map)
    ref, long = (f.loc[f["relevance"].to_numpy() >= 0] if unjudged == "drop" else f.assign(relevance=f["relevance"].clip(
        lower=0)) for f in (ref, long))
    ref, long = ref.reset_index(drop=True), long.reset_index(drop=True)
    if not len(ref) and not len(long):
        raise SchemaError("qrels_agreement: neither the reference nor the label sets hold a label (relevance >= 0)")
    s, topic, t, p, keep, names, topics = _aligned(ref, long, missing, fill_value)
    n_sets, n_topics = len(names), len(topics)
    t_max = max_grade if max_grade is not None else int(ref["relevance"].max()) if len(ref) else 1
    if label_max_grade is None:  # each set's own highest grade
        set_top = long.groupby(LABEL_SET, sort=False)["relevance"].max().reindex(names).fillna(1).to_numpy(np.int64)
    else:
        set_top = np.full(n_sets, label_max_grade, dtype=np.int64)
    p = np.minimum(p, set_top[s])
    label_threshold = threshold if label_threshold is None else label_threshold
    return _table(s, topic, t, p, keep, names, topics, t_max, set_top, (threshold, label_threshold), empty_sets)
