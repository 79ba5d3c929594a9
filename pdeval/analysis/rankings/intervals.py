"""Leaderboard correlations with topic-bootstrap intervals, and paired comparisons of two of them.

:func:`correlation_intervals` gives every coefficient of :func:`pdeval.rank_correlation` a
confidence interval; :func:`compare_correlations` compares two compared groups (two judges,
two label sets) against the same reference with the difference of their coefficients, its
interval and a p-value. Both resample the topics (:mod:`pdeval.analysis.rankings.resampling`):
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
from pdeval.analysis.rankings.correlation import _method_rows, _n_runs, compared_means
from pdeval.analysis.rankings.resampling import bca_constants, bootstrap_weights, interval_levels, quantiles, replicates, topic_cubes
from pdeval.common.contract import Choice, Integer, ListOf, Nullable, Real, Text, contract
from pdeval.common.seeds import SEED, generator
from pdeval.frames.domains import Frame

__all__ = ["compare_correlations", "correlation_intervals"]

INTERVALS = ("percentile", "bca")

_COMMON = dict(
    result=Frame("result"), reference=Nullable(Frame("result")),
    reference_measure=Nullable(Text("a measure of the result")), methods=ListOf(METHOD, unique=True),
    by=Nullable(ListOf(Text("a column name"), unique=True)), system=Text("a column name"),
    missing=Choice(*MISSING_POLICIES, renamed={"raise": "error", "default": "fill"}), fill_value=Real(),
    n_resamples=Integer(2), confidence=Real(0, 1, closed="neither"), interval=Choice(*INTERVALS), seed=SEED,
    remedies={"reference": "a result frame; a measure of the result goes to reference_measure="},
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
    n_runs = _n_runs(aligned, methods)
    return aligned.keys, by_list, methods, point, boot, jack, n_runs, cubes.topics.size


def _bounds(point, boot, jack, confidence):
    """(…, 2) interval bounds of the replicates ``boot`` (last axis) around ``point``."""
    levels = interval_levels(point, boot, jack, confidence)
    return quantiles(boot, levels)


@contract(**_COMMON)
def correlation_intervals(
    result: pd.DataFrame,
    reference: Optional[pd.DataFrame] = None,
    *,
    reference_measure: Optional[str] = None,
    methods: Union[str, Sequence[str]] = ("tau_b",),
    by: Union[None, str, Iterable[str]] = None,
    system: str = "run",
    missing: str = "warn",
    fill_value: float = 0.0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    interval: str = "percentile",
    seed=None,
) -> pd.DataFrame:
    """Every leaderboard correlation of :func:`pdeval.rank_correlation` with a topic-bootstrap interval.

    The coefficient is computed as :func:`pdeval.rank_correlation` computes it (same
    ``reference`` / ``reference_measure``, ``methods`` with ``@k`` cutoffs, ``by``, ``missing``
    policies); its sampling error over topics comes from ``n_resamples`` resamples of the
    topics with replacement, on each of which both leaderboards (the group's and the
    reference's means) are recomputed and the coefficient from them (Efron & Tibshirani,
    *An Introduction to the Bootstrap*, 1993). The topics resampled are every topic of the
    result and the reference; a system averages over the drawn topics it has. ``interval``
    is ``"percentile"`` (default) or ``"bca"`` (bias-corrected and accelerated, Efron 1987,
    the acceleration from the leave-one-topic-out jackknife). A top-k method recomputes its k
    best reference systems on each resample. The coverage of both was measured by simulation
    against known population leaderboards (user guide, "LLM judges"): the percentile interval
    is conservative for the rank coefficients, while Pearson's r, whose attenuation by topic
    noise is smooth, is better served by ``"bca"``.

    Parameters
    ----------
    result : DataFrame
        A per-topic result frame of the systems to rank.
    reference : DataFrame, optional
        The reference ranking as a per-topic result frame (or give ``reference_measure``).
    reference_measure : str, optional
        The reference ranking as a measure of ``result``.
    methods : str or list of str, default ("tau_b",)
        Coefficients of :func:`pdeval.rank_correlation` (``"tau_b"``, ``"tau_ap_b"``,
        ``"tau_gap"``, ``"tau_b@10"``, ...).
    by : str or list of str, optional
        Key columns to compare within.
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
    seed : int, numpy.random.Generator or None
        Randomness of the resamples.

    Returns
    -------
    pandas.DataFrame
        One row per (measure, by..., method): ``measure``, the ``by`` columns, ``reference``,
        ``method``, ``value``, ``low``, ``high``, ``n_runs``, ``n_topics``.

    See Also
    --------
    rank_correlation : The coefficients without intervals.
    compare_correlations : Paired differences of two groups' coefficients.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> scores = rng.random((4, 6)) + np.arange(4)[:, None] / 4
    >>> result = pd.DataFrame({"run": np.repeat(list("abcd"), 6), "query_id": np.tile(list("123456"), 4),
    ...                        "measure": "AP", "value": scores.ravel()})
    >>> judge = result.assign(value=result["value"] + rng.normal(0, 0.1, len(result)))
    >>> out = pdeval.correlation_intervals(judge, result, n_resamples=200, seed=0)
    >>> out[["method", "value", "n_runs", "n_topics"]]
      method  value  n_runs  n_topics
    0  tau_b    1.0       4         6
    >>> bool(out["low"].iloc[0] <= 1.0 <= out["high"].iloc[0] + 1e-12)
    True
    """
    keys, by_list, methods, point, boot, jack, n_runs, n_topics = bootstrap_table(
        result, reference, reference_measure, methods=methods, by=by, system=system, missing=missing,
        fill_value=fill_value, n_resamples=n_resamples, interval=interval, seed=seed, where="correlation_intervals")
    bounds = _bounds(point, np.moveaxis(boot, 1, -1), None if jack is None else np.moveaxis(jack, 1, -1), confidence)
    out = _method_rows(keys, point, n_runs, methods)
    out["low"] = bounds[..., 0].ravel()
    out["high"] = bounds[..., 1].ravel()
    out["n_topics"] = np.int64(n_topics)
    return out[["measure", *by_list, "reference", "method", "value", "low", "high", "n_runs", "n_topics"]]


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


@contract(**_COMMON)
def compare_correlations(
    result: pd.DataFrame,
    reference: Optional[pd.DataFrame] = None,
    *,
    reference_measure: Optional[str] = None,
    methods: Union[str, Sequence[str]] = ("tau_b",),
    by: Union[None, str, Iterable[str]] = None,
    system: str = "run",
    missing: str = "warn",
    fill_value: float = 0.0,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    interval: str = "percentile",
    seed=None,
) -> pd.DataFrame:
    """Paired comparison of the leaderboard correlations of every two groups against the same reference.

    For two compared groups A and B of ``result`` (two judges' label sets, two reduced qrels)
    that share the measure and the reference, the statistic is the difference of their
    coefficients, ``d = c(A, reference) - c(B, reference)``. Its interval and p-value come
    from the paired topic bootstrap (Efron & Tibshirani 1993, section 16.4): the *same*
    ``n_resamples`` topic resamples recompute the leaderboards of A, B and the reference and
    both coefficients, so the dependence between the two correlations through the shared
    reference and the shared topics (Steiger 1980; Zou 2007) is kept. The interval is the
    percentile (default) or BCa interval of the replicates of d; the two-sided p-value is the
    smallest ``1 - confidence`` at which that interval excludes 0, so ``p_value < 1 -
    confidence`` exactly when the interval excludes 0. Apply a multiple-comparison correction
    across the many pairs of a table (Holm's, say:
    ``pdeval.analysis.statistics.significance.adjust_pvalues``) before calling a difference real.

    Parameters
    ----------
    result : DataFrame
        A per-topic result frame of the systems under every group (a ``label_set`` column, say).
    reference : DataFrame, optional
        The reference ranking as a per-topic result frame (or give ``reference_measure``).
    reference_measure : str, optional
        The reference ranking as a measure of ``result``.
    methods : str or list of str, default ("tau_b",)
        Coefficients of :func:`pdeval.rank_correlation`.
    by : str or list of str, optional
        The key columns of the compared groups (default: every variant key).
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
    seed : int, numpy.random.Generator or None
        Randomness of the resamples.

    Returns
    -------
    pandas.DataFrame
        One row per pair and method: ``measure``, the ``by`` columns of A, the same columns
        suffixed ``_other`` for B, ``reference``, ``method``, ``value`` (A's coefficient),
        ``value_other`` (B's), ``difference``, ``low``, ``high``, ``p_value``, ``n_topics``.

    See Also
    --------
    correlation_intervals : One interval per group.
    compare_judges : The same for label sets against a reference label set.

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> scores = rng.random((5, 8)) + np.arange(5)[:, None] / 5
    >>> human = pd.DataFrame({"run": np.repeat(list("abcde"), 8), "query_id": np.tile(list("12345678"), 5),
    ...                       "measure": "AP", "value": scores.ravel()})
    >>> judges = pd.concat([human.assign(label_set="good", value=human["value"] + rng.normal(0, 0.05, 40)),
    ...                     human.assign(label_set="poor", value=rng.random(40))])
    >>> out = pdeval.compare_correlations(judges, human, n_resamples=200, seed=0)
    >>> out[["label_set", "label_set_other", "method", "value", "value_other", "difference"]]
      label_set label_set_other method  value  value_other  difference
    0      good            poor  tau_b    1.0          0.0         1.0
    """
    keys, by_list, methods, point, boot, jack, _, n_topics = bootstrap_table(
        result, reference, reference_measure, methods=methods, by=by, system=system, missing=missing,
        fill_value=fill_value, n_resamples=n_resamples, interval=interval, seed=seed, where="compare_correlations")
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
    out["low"] = bounds[..., 0].ravel()
    out["high"] = bounds[..., 1].ravel()
    out["p_value"] = _p_values(diff, boot_d, jack_d).ravel()
    out["n_topics"] = np.int64(n_topics)
    return out
