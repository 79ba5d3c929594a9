"""Leaderboard correlations with topic-bootstrap intervals, and paired comparisons of two of them.

:func:`correlation_intervals` gives every coefficient of :func:`pdeval.rank_correlation` a
confidence interval; with ``pairs=True`` it compares two compared groups (two judges, two
label sets) against the same reference by the difference of their coefficients, its interval
and a p-value. Both resample the topics (:mod:`pdeval.analysis.rankings.resampling`):
on each resample *both* leaderboards are recomputed from the resampled topics and the
coefficient from them, and a paired comparison uses the same resamples for both groups and
the reference (the paired bootstrap of Efron & Tibshirani 1993, section 16.4; it respects the
dependence of two correlations that share the reference, the problem of Steiger 1980 and
Zou 2007).
"""

from __future__ import annotations

from typing import Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from pdeval.analysis.rankings.alignment import MISSING_POLICIES, align_means
from pdeval.analysis.rankings.batched import rows_coefficients
from pdeval.analysis.rankings.coefficients import METHOD
from pdeval.analysis.rankings.correlation import compared_means, method_rows, n_runs_of
from pdeval.analysis.rankings.resampling import bca_constants, bootstrap_weights, interval_levels, quantiles, replicates, topic_cubes
from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Nullable, Real, Text, contract
from pdeval.common.seeds import SEED, generator
from pdeval.frames.domains import Frame

__all__ = ["INTERVALS", "bootstrap_table", "correlation_intervals"]

INTERVALS = ("percentile", "bca")

_COMMON = dict(
    result=Frame("result"), reference=Nullable(Frame("result")),
    reference_measure=Nullable(Text("a measure of the result")), methods=ListOf(METHOD, unique=True),
    by=Nullable(ListOf(Text("a column name"), unique=True)), system=Text("a column name"),
    missing=Choice(*MISSING_POLICIES, renamed={"raise": "error", "default": "fill"}), fill_value=Real(),
    n_resamples=Integer(2), confidence=Real(0, 1, closed="neither"), interval=Choice(*INTERVALS), seed=SEED,
    pairs=Boolean(), remedies={"reference": "a result frame; a measure of the result goes to reference_measure="},
)


def bootstrap_table(result, reference, reference_measure, *, methods, by, system, missing, fill_value,
                    n_resamples, interval, seed, where):
    """Point values, bootstrap and jackknife replicates of every (group, method): the keys, the
    (G, M) values, the (G, B, M) and (G, T, M) replicates (jackknife None for percentile), n_runs."""
    methods = [methods] if isinstance(methods, str) else list(methods)
    est, ref, by_list, shared = compared_means(result, reference, reference_measure, by=by, system=system)
    aligned = align_means(est, ref, system=system, by=by_list, shared=shared, missing=missing,
                          fill_value=fill_value, where=where)
    cubes = topic_cubes(result, result if reference is None else reference, aligned, aligned.ref_keys,
                        by=by_list, shared=shared, system=system)
    both = np.isfinite(aligned.est_raw) & np.isfinite(aligned.ref)
    point = rows_coefficients(aligned.est, aligned.ref, aligned.mask, methods, mask_k=both)
    weights = bootstrap_weights(cubes.topics.size, n_resamples, generator(seed))
    boot = replicates(cubes, aligned, weights, methods, fill_value, missing == "fill")
    jack = None
    if interval == "bca" and cubes.topics.size > 1:
        jack = replicates(cubes, aligned, 1.0 - np.eye(cubes.topics.size), methods, fill_value, missing == "fill")
    n_runs = n_runs_of(aligned, methods)
    return aligned.keys, by_list, methods, point, boot, jack, n_runs, cubes.topics.size


def _bounds(point, boot, jack, confidence):
    """(…, 2) interval bounds of the replicates ``boot`` (last axis) around ``point``."""
    levels = interval_levels(point, boot, jack, confidence)
    return quantiles(boot, levels)


def _pairs(keys: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of the groups that share the measure and the reference."""
    table = keys[["measure", "reference"]].assign(_g=np.arange(len(keys)))
    both = table.merge(table, on=["measure", "reference"], suffixes=("", "_other"))
    both = both[both["_g"] < both["_g_other"]]
    return both["_g"].to_numpy(np.int64), both["_g_other"].to_numpy(np.int64)


def _p_values(point: np.ndarray, boot: np.ndarray, jack: Optional[np.ndarray]) -> np.ndarray:
    """Two-sided p-value of a zero difference: the smallest 1 - confidence whose interval (the
    same percentile or BCa construction) excludes 0."""
    finite = np.isfinite(boot)
    count = np.maximum(finite.sum(axis=-1), 1)
    cdf0 = (((boot < 0) & finite).sum(axis=-1) + 0.5 * ((boot == 0) & finite).sum(axis=-1)) / count
    cdf0 = np.clip(cdf0, 0.5 / count, 1 - 0.5 / count)
    if jack is not None:
        z0, accel = bca_constants(point, boot, jack)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = ndtri(cdf0) - z0
            cdf0 = ndtr(w / (1.0 + accel * w) - z0)
    p = 2.0 * np.minimum(cdf0, 1.0 - cdf0)
    same = np.all((boot == 0) | ~finite, axis=-1) & (point == 0)
    return np.where(same, 1.0, np.where(np.isfinite(point), np.minimum(p, 1.0), np.nan))


def _pair_rows(keys, by_list, methods, point, boot, jack, confidence, n_topics) -> pd.DataFrame:
    """One row per pair of groups (sharing measure and reference) and method: the difference
    of their coefficients, its interval and p-value from the same replicates."""
    first, second = _pairs(keys)
    diff = point[first] - point[second]  # (P, M)
    boot_d = np.moveaxis(boot[first] - boot[second], 1, -1)  # (P, M, B)
    jack_d = None if jack is None else np.moveaxis(jack[first] - jack[second], 1, -1)
    bounds = _bounds(diff, boot_d, jack_d, confidence)
    n_methods = len(methods)
    out = keys.loc[np.repeat(first, n_methods), ["measure", *by_list]].reset_index(drop=True)
    other = keys.loc[np.repeat(second, n_methods), by_list].reset_index(drop=True)
    for column in by_list:
        out[f"{column}_other"] = other[column].to_numpy()
    out["reference"] = keys["reference"].to_numpy()[np.repeat(first, n_methods)]
    out["method"] = np.tile(np.array(methods, dtype=object), first.size)
    out["value"] = point[first].ravel()
    out["value_other"] = point[second].ravel()
    out["difference"] = diff.ravel()
    out["low"], out["high"] = bounds[..., 0].ravel(), bounds[..., 1].ravel()
    out["p_value"] = _p_values(diff, boot_d, jack_d).ravel()
    out["n_topics"] = np.int64(n_topics)
    return out


@contract(**_COMMON)
def correlation_intervals(
    result: pd.DataFrame,
    reference: Optional[pd.DataFrame] = None,
    *,
    reference_measure: Optional[str] = None,
    by: Union[None, str, Iterable[str]] = None,
    methods: Union[str, Sequence[str]] = ("tau_b",),
    system: str = "run",
    missing: str = "warn",
    fill_value: float = 0.0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    interval: str = "percentile",
    seed=0,
    pairs: bool = False,
) -> pd.DataFrame:
    """Leaderboard correlations of :func:`pdeval.rank_correlation` with topic-bootstrap intervals, or two compared.

    The coefficients are those of :func:`pdeval.rank_correlation`. Their sampling error
    comes from ``n_resamples`` resamples of the topics with replacement: on each, both
    leaderboards (the group's and the reference's means over the drawn topics) and the
    coefficient are recomputed (Efron & Tibshirani, *An Introduction to the Bootstrap*,
    1993). ``interval``: ``"percentile"`` or ``"bca"`` (Efron 1987; acceleration from the
    leave-one-topic-out jackknife). Simulated coverage (user guide, "LLM judges"):
    conservative for rank coefficients unless the systems are crowded; ``"bca"`` suits
    ``pearson``. ``pairs=True`` compares every two groups A, B sharing the measure and the
    reference: ``difference = c(A) - c(B)``, its paired-bootstrap interval (the same
    resamples serve A, B and the reference: Efron & Tibshirani 1993, section 16.4; the
    dependence of Steiger 1980, Zou 2007) and ``p_value``, the smallest ``1 - confidence``
    at which that interval excludes 0 (correct for multiplicity, e.g. Holm:
    ``pdeval.analysis.statistics.significance.adjust_pvalues``).

    Parameters
    ----------
    result : DataFrame
        A per-topic result frame of the systems to rank.
    reference : DataFrame, optional
        The reference ranking as a per-topic result frame (or give ``reference_measure``).
    reference_measure : str, optional
        The reference ranking as a measure of ``result``.
    by : str or list of str, optional
        Key columns to compare within (the compared groups, e.g. ``label_set``).
    methods : str or list of str, default ("tau_b",)
        Coefficients of :func:`pdeval.rank_correlation` (``"tau_b"``, ``"tau_ap_b"``,
        ``"tau_gap"``, ``"tau_b@10"``, ...).
    system : str, default 'run'
        The column naming the systems.
    missing : {'warn', 'error', 'skip', 'fill'}, default 'warn'
        Systems on one side only, as in :func:`pdeval.rank_correlation`.
    fill_value : float, default 0.0
        With ``missing="fill"``, the value of a reference system the result lacks.
    n_resamples : int, default 1000
        Topic resamples.
    confidence : float, default 0.95
        Coverage of the intervals.
    interval : {'percentile', 'bca'}, default 'percentile'
        The bootstrap interval.
    seed : int, numpy.random.Generator or None, default 0
        Randomness of the resamples.
    pairs : bool, default False
        One row per pair of groups (paired comparison) instead of one per group.

    Returns
    -------
    pandas.DataFrame
        ``measure``, the ``by`` columns, ``reference``, ``method``, ``value``, ``low``,
        ``high``, ``n_runs``, ``n_topics``; with ``pairs``: ``measure``, the ``by`` columns of
        A and of B (suffixed ``_other``), ``reference``, ``method``, ``value``,
        ``value_other``, ``difference``, ``low``, ``high``, ``p_value``, ``n_topics``.

    See Also
    --------
    rank_correlation : The coefficients without intervals.
    compare_judges : The same for label sets against a reference label set.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> human = pd.DataFrame({"run": np.repeat(list("abcde"), 8), "query_id": np.tile(list("12345678"), 5),
    ...                       "measure": "AP", "value": (rng.random((5, 8)) + np.arange(5)[:, None] / 5).ravel()})
    >>> judges = pd.concat([human.assign(label_set="good", value=human["value"] + rng.normal(0, 0.05, 40)),
    ...                     human.assign(label_set="poor", value=rng.random(40))])
    >>> pdeval.correlation_intervals(judges, human, n_resamples=200)[["label_set", "method", "value", "n_runs"]]
      label_set method  value  n_runs
    0      good  tau_b    1.0       5
    1      poor  tau_b    0.0       5
    >>> pdeval.correlation_intervals(judges, human, n_resamples=200, pairs=True)[["label_set", "label_set_other", "difference"]]
      label_set label_set_other  difference
    0      good            poor         1.0
    """
    keys, by_list, methods, point, boot, jack, n_runs, n_topics = bootstrap_table(
        result, reference, reference_measure, methods=methods, by=by, system=system, missing=missing,
        fill_value=fill_value, n_resamples=n_resamples, interval=interval, seed=seed, where="correlation_intervals")
    if pairs:
        return _pair_rows(keys, by_list, methods, point, boot, jack, confidence, n_topics)
    bounds = _bounds(point, np.moveaxis(boot, 1, -1), None if jack is None else np.moveaxis(jack, 1, -1), confidence)
    out = method_rows(keys, point, n_runs, methods)
    out["low"], out["high"] = bounds[..., 0].ravel(), bounds[..., 1].ravel()
    out["n_topics"] = np.int64(n_topics)
    return out[["measure", *by_list, "reference", "method", "value", "low", "high", "n_runs", "n_topics"]]
