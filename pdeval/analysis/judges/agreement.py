"""Agreement between label sets: Cohen's kappa, Krippendorff's alpha, confusion tables.

:func:`agreement` compares many label sets with a reference in one vectorised pass: Cohen's
kappa (unweighted, linear, quadratic), Krippendorff's alpha (nominal, ordinal, interval),
exact and binarised agreement, and confusion tables. The label sets themselves (merging,
grade scales, holes) are in :mod:`pdeval.analysis.judges.labels`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from pdeval.analysis.bundle import ResultBundle, ResultFrame
from pdeval.analysis.judges.labels import (
    GRADE_MAP, LABEL_SET, LABEL_SETS, GradeMap, LabelSets, label_sets, map_grades, pair_codes, plain_labels,
)
from pdeval.common.contract import Boolean, Choice, Integer, contract
from pdeval.frames.domains import Frame
from pdeval.errors import PdevalError, PdevalWarning, SchemaError

__all__ = ["ALL_SETS", "STATISTICS", "Agreement", "agreement"]

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

# ---------------------------------------------------------------------------------------------
# agreement


@dataclass(repr=False)
class Agreement(ResultBundle):
    """Result of :func:`agreement`; ``to_frame()`` is :meth:`wide` (a row per label set).

    ``statistics``: one row per (label_set[, query_id], statistic) with ``value`` and
    ``n_pairs`` (the pairs compared). ``confusion``: one row per (label_set[, query_id],
    reference grade, label grade) with ``count``. ``coverage``: one row per label set with
    ``n_reference`` (labels of the reference), ``n_labels`` (labels of the set), ``n_common``
    (pairs both label; the pairs compared), ``only_reference`` and ``only_labels``.
    """

    statistics: pd.DataFrame
    confusion: pd.DataFrame
    coverage: pd.DataFrame

    def to_frame(self) -> pd.DataFrame:
        """The statistics as a table: one row per label set (and topic), one column per statistic."""
        return self.wide()

    def wide(self) -> pd.DataFrame:
        """The statistics as a table: one row per label set (and topic), one column per statistic."""
        keys = [c for c in self.statistics.columns if c in (LABEL_SET, "query_id")]
        table = self.statistics.pivot_table(index=keys, columns="statistic", values="value", sort=False)
        table = table[[s for s in STATISTICS if s in table.columns]]
        table.columns.name = None
        return table.reset_index()


def weighted_kappa(confusion: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each confusion matrix (groups x G x G) with disagreement weights (G x G)."""
    n = confusion.sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        expected = confusion.sum(axis=2)[:, :, None] * confusion.sum(axis=1)[:, None, :] / n[:, None, None]
        return 1.0 - (confusion * weights).sum(axis=(1, 2)) / (expected * weights).sum(axis=(1, 2))


def coincidence_alpha(coincidence: np.ndarray, values: np.ndarray, level: str) -> np.ndarray:
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
        "kappa": weighted_kappa(confusion, 1.0 - np.eye(g)),
        "kappa_linear": weighted_kappa(confusion, distance),
        "kappa_quadratic": weighted_kappa(confusion, distance**2),
        "alpha_nominal": coincidence_alpha(coincidence, values, "nominal"),
        "alpha_ordinal": coincidence_alpha(coincidence, values, "ordinal"),
        "alpha_interval": coincidence_alpha(coincidence, values, "interval"),
        "exact": exact,
        "binary": binary_agreement,
        "binary_kappa": weighted_kappa(confusion2, 1.0 - np.eye(2)),
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


@contract(qrels=Frame("qrels", variants=False), others=LABEL_SETS, threshold=Integer(), per_topic=Boolean(),
          overall=Boolean(), grade_map=GRADE_MAP, missing=Choice("warn", "ignore", "error", renamed={"raise": "error"}))
def agreement(
    qrels: pd.DataFrame,
    others: LabelSets,
    *,
    threshold: int = 1,
    per_topic: bool = False,
    overall: bool = True,
    grade_map: GradeMap = None,
    missing: Literal["warn", "ignore", "error"] = "warn",
) -> ResultFrame:
    """Agreement of one or many label sets with a reference label set, in one vectorised pass.

    ``qrels`` is the reference label set (e.g. the human labels); ``others`` is a qrels frame, a
    mapping ``name -> qrels frame`` or a long frame with a ``label_set`` column
    (:func:`label_sets`). ``grade_map`` maps the other sets' grades first (:func:`map_grades`).
    Negative values (pooled, not judged) are not labels and are left out.

    **Pairs.** Only the (query_id, doc_id) pairs both the reference and a set label are
    compared. Pairs labelled by one side only are counted in :attr:`Agreement.coverage`; with
    ``missing="warn"`` (default) a :class:`~pdeval.errors.PdevalWarning` gives the counts,
    ``"error"`` raises :class:`~pdeval.errors.SchemaError`, ``"ignore"`` is silent. This is
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

    Undefined values (one grade only, no pairs) are NaN.

    Parameters
    ----------
    qrels : DataFrame
        The reference label set (one qrels frame, e.g. the human labels).
    others : DataFrame or dict of str to DataFrame
        The label sets to compare with it (as :func:`pdeval.label_sets` takes them).
    threshold : int, default 1
        The grade from which a label counts as relevant for ``binary`` and ``binary_kappa``.
    per_topic : bool, default False
        Also one row per (label set, topic).
    overall : bool, default True
        Add Krippendorff's alphas of all label sets together (``label_set="(all)"``).
    grade_map : dict, optional
        A grade mapping applied to ``others`` first (:func:`pdeval.map_grades`).
    missing : {'warn', 'ignore', 'error'}, default 'warn'
        ``"warn"``, ``"ignore"`` or ``"error"`` when the sets do not label the same pairs.

    Returns
    -------
    ResultFrame
        The wide table (a row per label set [and topic], a column per statistic); attributes
        ``statistics`` (long), ``confusion``, ``coverage``; ``.bundle`` is the :class:`Agreement`.

    Raises
    ------
    PdevalError
        A bad option value.
    SchemaError
        No label at all, a label set named ``"(all)"``, or uneven pairs with ``missing="error"``.

    See Also
    --------
    label_sets : The label sets compared.
    compare_leaderboards : Agreement of the rankings they give.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> llm = qrels.assign(relevance=[1, 0, 0, 1, 1])
    >>> pdeval.agreement(qrels, {"llm": llm})[["label_set", "kappa", "alpha_ordinal", "exact"]]
      label_set     kappa  alpha_ordinal  exact
    0       llm  0.166667           0.25    0.6
    """
    ref = plain_labels(qrels, "the reference qrels", labels_only=True)
    ref = ref.loc[ref["relevance"].to_numpy() >= 0].reset_index(drop=True)
    long = map_grades(label_sets(others), grade_map)
    long = long.loc[long["relevance"].to_numpy() >= 0].reset_index(drop=True)
    if (long[LABEL_SET] == ALL_SETS).any():
        raise SchemaError(f"a label set may not be named {ALL_SETS!r} (the name of the pooled rows)")
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)):
        raise PdevalError(f"threshold must be an integer grade (relevant iff grade >= threshold), not {threshold!r}")
    set_code, set_names = pd.factorize(long[LABEL_SET], sort=False)
    n_sets = len(set_names)
    ref_pair, long_pair = pair_codes(ref, long)
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

    coverage = _coverage(set_code, set_names, common, len(ref), missing)

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
        topic_names = pd.concat([ref["query_id"], long["query_id"]], ignore_index=True)
        stats_parts += _all_coders_statistics(unit, grade, topic_names, n_units, values, per_topic)
    statistics = pd.concat(stats_parts, ignore_index=True)
    confusion = pd.concat(confusion_parts, ignore_index=True)
    return ResultFrame.of(Agreement(statistics, confusion, coverage))


def _coverage(set_code: np.ndarray, set_names, common: np.ndarray, n_reference: int, missing: str) -> pd.DataFrame:
    """The pairs each label set shares with the reference; warns or raises under ``missing``
    when some set does not label the same pairs."""
    n_sets = len(set_names)
    n_common = np.bincount(set_code[common], minlength=n_sets)
    n_labels = np.bincount(set_code, minlength=n_sets)
    coverage = pd.DataFrame(
        {
            LABEL_SET: np.asarray(set_names, dtype=object),
            "n_reference": n_reference,
            "n_labels": n_labels,
            "n_common": n_common,
            "only_reference": n_reference - n_common,
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
        if missing == "error":
            raise SchemaError(message)
        warnings.warn(message, PdevalWarning, stacklevel=3)
    return coverage


def _all_coders_statistics(unit: np.ndarray, grade: np.ndarray, topic_names: pd.Series, n_units: int,
                           values: np.ndarray, per_topic: bool) -> list[pd.DataFrame]:
    """Krippendorff's alphas of every label set and the reference as coders of the same units
    (rows ``label_set="(all)"``), overall and per topic with ``per_topic``."""
    g = len(values)
    unit_topic = np.zeros(n_units, dtype=np.int64)
    all_topic_code, all_topics = pd.factorize(topic_names, sort=True)
    unit_topic[unit] = all_topic_code
    coders = [(np.zeros(n_units, dtype=np.int64), 1, None)]
    if per_topic:
        coders.append((unit_topic, len(all_topics), np.asarray(all_topics, dtype=object)))
    parts = []
    for unit_group, n_groups, names in coders:
        coincidence = _all_coders_coincidence(unit, grade, unit_group, n_units, n_groups, g)
        pairable = coincidence.sum(axis=(1, 2)) / 2.0
        stats = {lvl: coincidence_alpha(coincidence, values, lvl.split("_")[1]) for lvl in STATISTICS if lvl.startswith("alpha")}
        keys = {LABEL_SET: np.full(n_groups, ALL_SETS, dtype=object)}
        if per_topic:
            keys["query_id"] = names if names is not None else np.full(n_groups, "all", dtype=object)
        parts.append(_long_statistics(keys, stats, pairable))
    return parts


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


