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

import warnings
from dataclasses import dataclass
from typing import Iterable, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.rankings.alignment import MISSING_POLICIES, align_means
from pdeval.analysis.rankings.batched import parse_method, rows_coefficients
from pdeval.analysis.rankings.coefficients import METHOD
from pdeval.analysis.rankings.simex import coefficient_limits, debiased
from pdeval.analysis.rankings.correlation import compared_means, method_rows, n_runs_of
from pdeval.analysis.rankings.resampling import (bca_constants, bootstrap_weights, interval_levels, quantiles, replicates,
                                                 resampled_means, topic_cubes, topic_strata)
from pdeval.analysis.rankings.near_ties import bound_replicates, gap_errors, pair_bound_replicates
from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Nullable, Real, Text, contract
from pdeval.common.seeds import SEED, generator
from pdeval.errors import PdevalWarning
from pdeval.frames.domains import Frame

__all__ = ["INTERVALS", "bootstrap_table", "correlation_intervals"]

INTERVALS = ("auto", "percentile", "bca", "simex", "hull", "bounds")

#: coefficients that are smooth functions of the means: the hull under interval="auto" (every rank coefficient, on
#: all systems or a cutoff, takes the bounds over the reference's near ties)
SMOOTH = ("pearson", "rms")

_COMMON = dict(
    result=Frame("result"), reference=Nullable(Frame("result")),
    reference_measure=Nullable(Text("a measure of the result")), methods=ListOf(METHOD, unique=True),
    by=Nullable(ListOf(Text("a column name"), unique=True)), system=Text("a column name"),
    missing=Choice(*MISSING_POLICIES, renamed={"raise": "error", "default": "fill"}), fill_value=Real(),
    n_resamples=Integer(2), confidence=Real(0, 1, closed="neither"), interval=Choice(*INTERVALS), seed=SEED,
    pairs=Boolean(), remedies={"reference": "a result frame; a measure of the result goes to reference_measure="},
)


@dataclass
class Replicates:
    """The compared groups (``keys``, ``by``), the ``methods``, the (G, M) ``point`` values, the
    (G, B, M) bootstrap and (G, T, M) jackknife (None without BCa) replicates, ``use_bca`` per
    method, ``n_runs`` and ``n_topics``; the (G, M) SIMEX estimates ``debiased`` and the ``shift``
    of the percentile interval towards them (NaN for methods without SIMEX), each method's range
    ``limits`` (M, 2) and ``interval`` (M); for the methods of :attr:`bounded` the (G, B, M)
    ``lower`` and ``upper`` replicates over the reference's near ties (NaN elsewhere) and what a
    pair needs for its own (``sides``: the resampled leaderboards and the gaps' standard errors).
    """

    keys: pd.DataFrame
    by: list
    methods: list
    point: np.ndarray
    boot: np.ndarray
    jack: Optional[np.ndarray]
    use_bca: np.ndarray
    n_runs: np.ndarray
    n_topics: int
    debiased: np.ndarray
    shift: np.ndarray
    limits: np.ndarray
    interval: np.ndarray
    lower: Optional[np.ndarray] = None
    upper: Optional[np.ndarray] = None
    sides: Optional[dict] = None

    @property
    def hull(self) -> np.ndarray:
        """(M,) whether a method's interval holds the percentile and SIMEX ones (``"hull"``, ``"bounds"``)."""
        return np.isin(self.interval, ("hull", "bounds"))

    @property
    def bounded(self) -> np.ndarray:
        """(M,) whether a method's interval is widened to the bounds over near ties."""
        return self.interval == "bounds"


def bootstrap_table(result, reference, reference_measure, *, methods, by, system, missing, fill_value,
                    n_resamples, interval, seed, where) -> Replicates:
    """Point values, bootstrap and jackknife replicates of every (group, method)."""
    methods = [methods] if isinstance(methods, str) else list(methods)
    est, ref, by_list, shared = compared_means(result, reference, reference_measure, by=by, system=system)
    aligned = align_means(est, ref, system=system, by=by_list, shared=shared, missing=missing,
                          fill_value=fill_value, where=where)
    cubes = topic_cubes(result, result if reference is None else reference, aligned, aligned.ref_keys,
                        by=by_list, shared=shared, system=system)
    both = np.isfinite(aligned.est_raw) & np.isfinite(aligned.ref)
    point = rows_coefficients(aligned.est, aligned.ref, aligned.mask, methods, mask_k=both)
    rng, strata = generator(seed), topic_strata(cubes)
    weights = bootstrap_weights(cubes.topics.size, n_resamples, rng, strata)
    est, ref = resampled_means(cubes, aligned, weights, fill_value, missing == "fill")
    boot = rows_coefficients(est, ref, aligned.mask, methods, mask_k=both)
    chosen = np.array([auto_interval(m) if interval == "auto" else interval for m in methods])
    use_bca = (chosen == "bca") & (cubes.topics.size > 1)
    fixed, shift = debiased(cubes, aligned, boot, np.isin(chosen, ("simex", "hull", "bounds")), methods, fill_value,
                            missing == "fill", rng, strata)
    jack = None
    if use_bca.any():
        jack = replicates(cubes, aligned, 1.0 - np.eye(cubes.topics.size), methods, fill_value, missing == "fill")
    table = Replicates(aligned.keys, by_list, methods, point, boot, jack, use_bca, n_runs_of(aligned, methods),
                       cubes.topics.size, fixed, shift, coefficient_limits(methods), chosen)
    if table.bounded.any():
        picked = [m for m, keep in zip(methods, table.bounded) if keep]
        errors = gap_errors(cubes.ref)[aligned.ref_row]
        table.lower, table.upper = np.full(boot.shape, np.nan), np.full(boot.shape, np.nan)
        table.lower[..., table.bounded], table.upper[..., table.bounded], ties = bound_replicates(
            est, ref, errors, aligned.mask, both, picked)
        table.sides = dict(est=est, ref=ref, errors=errors, mask=aligned.mask, mask_k=both, methods=picked, ties=ties)
    return table


def auto_interval(method: str) -> str:
    """``interval="auto"``'s choice for a method: the hull of the percentile and SIMEX intervals for
    ``pearson`` and ``rms`` (on all systems or a cutoff), the bounds over the reference's near ties
    for every rank coefficient (``tau_b``, ``spearman``, ``tau_ap_b``, ``tau_gap``, ``tau_b@10``, ...)."""
    return "hull" if parse_method(method)[0] in SMOOTH else "bounds"


def _bounds(point, boot, jack, confidence, use_bca, ordered=False, constants=None, shift=None, hull=None, limits=None,
            sides=None):
    """(..., 2) interval bounds of the replicates ``boot`` (last axis) around ``point``
    (..., M): BCa for the methods of ``use_bca``, percentile for the others; where ``shift``
    (..., M) is finite the interval moves by it (SIMEX), and for the methods of ``hull`` the
    interval is the hull of the percentile and the moved ones; moved bounds stay within the
    coefficient's range ``limits`` (M, 2). ``sides``: the lower and upper replicates over the
    reference's near ties (..., M, B; NaN for methods without), whose low and high quantiles
    widen the interval (:mod:`pdeval.analysis.rankings.near_ties`)."""
    levels = interval_levels(point, boot, None, confidence)
    if use_bca.any():
        bca = interval_levels(point, boot, jack, confidence, constants)
        levels = np.where(use_bca[:, None], bca, levels)
    bounds = quantiles(boot, levels, ordered=ordered)
    if shift is None:
        return bounds
    moved = np.where(np.isfinite(shift)[..., None], np.clip(bounds + shift[..., None], limits[:, 0:1], limits[:, 1:]),
                     bounds)
    hulled = np.stack([np.minimum(bounds[..., 0], moved[..., 0]), np.maximum(bounds[..., 1], moved[..., 1])], axis=-1)
    out = np.where(hull[:, None], hulled, moved)
    if sides is None:
        return out
    base = interval_levels(point, boot, None, confidence)
    low, high = quantiles(sides[0], base, ordered=ordered)[..., 0], quantiles(sides[1], base, ordered=ordered)[..., 1]
    return np.stack([np.fmin(out[..., 0], low), np.fmax(out[..., 1], high)], axis=-1)


def _spread(picked: np.ndarray, bounded: np.ndarray) -> np.ndarray:
    """(..., M) array of the (..., M') values of the ``bounded`` methods, NaN for the others."""
    out = np.full((*picked.shape[:-1], bounded.size), np.nan)
    out[..., bounded] = picked
    return out


def _pairs(keys: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of the groups that share the measure and the reference."""
    table = keys[["measure", "reference"]].assign(_g=np.arange(len(keys)))
    both = table.merge(table, on=["measure", "reference"], suffixes=("", "_other"))
    both = both[both["_g"] < both["_g_other"]]
    return both["_g"].to_numpy(np.int64), both["_g_other"].to_numpy(np.int64)


def _p_values(point, boot, jack, use_bca, shift, hull, limits, sides=None) -> np.ndarray:
    """Two-sided p-value of a zero difference: the smallest ``1 - confidence`` at which the
    interval (the same construction: percentile, BCa, SIMEX, hull or bounds) excludes 0, found by bisection for
    every row at once (at least ``1 / n_resamples``; 1 when even the narrowest interval holds 0)."""
    ordered = np.sort(boot, axis=-1)
    sides = None if sides is None else tuple(np.sort(side, axis=-1) for side in sides)
    constants = bca_constants(point, boot, jack) if use_bca.any() else None
    low, high = np.zeros(point.shape), np.ones(point.shape)
    for _ in range(32):  # bisection steps, each over every (pair, method) at once
        alpha = (low + high) / 2.0
        bounds = _bounds(point, ordered, jack, 1.0 - alpha, use_bca, ordered=True, constants=constants, shift=shift,
                         hull=hull, limits=limits, sides=sides)
        excluded = (bounds[..., 0] > 0) | (bounds[..., 1] < 0)
        high, low = np.where(excluded, alpha, high), np.where(excluded, low, alpha)
    count = np.maximum(np.isfinite(boot).sum(axis=-1), 1)
    return np.where(np.isfinite(point), np.where(high >= 1.0, 1.0, np.maximum(high, 1.0 / count)), np.nan)


def _pair_rows(table: Replicates, confidence: float) -> pd.DataFrame:
    """One row per pair of groups (sharing measure and reference) and method: the difference
    of their coefficients, its interval and p-value from the same replicates."""
    keys, by_list, methods = table.keys, table.by, table.methods
    first, second = _pairs(keys)
    diff = table.point[first] - table.point[second]  # (P, M)
    boot_d = np.moveaxis(table.boot[first] - table.boot[second], 1, -1)  # (P, M, B)
    jack_d = None if table.jack is None else np.moveaxis(table.jack[first] - table.jack[second], 1, -1)
    shift_d = table.shift[first] - table.shift[second]
    limits = np.stack([table.limits[:, 0] - table.limits[:, 1], table.limits[:, 1] - table.limits[:, 0]], axis=-1)
    sides = None
    if table.sides is not None:
        picked = pair_bound_replicates(**table.sides, first=first, second=second)
        sides = tuple(np.moveaxis(_spread(side, table.bounded), 1, -1) for side in picked)
    bounds = _bounds(diff, boot_d, jack_d, confidence, table.use_bca, shift=shift_d, hull=table.hull, limits=limits,
                     sides=sides)
    n_methods = len(methods)
    out = keys.loc[np.repeat(first, n_methods), ["measure", *by_list]].reset_index(drop=True)
    other = keys.loc[np.repeat(second, n_methods), by_list].reset_index(drop=True)
    for column in by_list:
        out[f"{column}_other"] = other[column].to_numpy()
    out["reference"] = keys["reference"].to_numpy()[np.repeat(first, n_methods)]
    out["method"] = np.tile(np.array(methods, dtype=object), first.size)
    out["value"] = table.point[first].ravel()
    out["value_other"] = table.point[second].ravel()
    out["difference"] = diff.ravel()
    out["difference_debiased"] = (table.debiased[first] - table.debiased[second]).ravel()
    out["low"], out["high"] = bounds[..., 0].ravel(), bounds[..., 1].ravel()
    out["interval"] = np.tile(table.interval, first.size)
    out["p_value"] = _p_values(diff, boot_d, jack_d, table.use_bca, shift_d, table.hull, limits, sides).ravel()
    out["n_topics"] = np.int64(table.n_topics)
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
    interval: str = "auto",
    seed=0,
    pairs: bool = False,
) -> pd.DataFrame:
    """Leaderboard correlations of :func:`pdeval.rank_correlation` with topic-bootstrap intervals, or two compared.

    The coefficients are those of :func:`pdeval.rank_correlation`; their sampling error comes from ``n_resamples``
    resamples of the topics with replacement (each side's own topics where the leaderboards have different ones):
    on each, both leaderboards and the coefficient are recomputed (Efron & Tibshirani, *An Introduction to the
    Bootstrap*, 1993). Topic noise swaps near-tied systems, so the sample coefficient lies below the population
    one; ``interval``: ``"percentile"``, ``"bca"`` (Efron 1987), ``"simex"`` (moved by the attenuation that
    simulation-extrapolation estimates, Cook & Stefanski 1994: :mod:`pdeval.analysis.rankings.simex`), ``"hull"``
    (holding the percentile and SIMEX ones), ``"bounds"`` (the hull widened to the coefficient's bounds over the
    reference's near ties, whose order the topics do not tell: :mod:`pdeval.analysis.rankings.near_ties`) or
    ``"auto"``: the bounds for every rank coefficient (``"tau_b"``, ``"spearman"``, ``"tau_ap_b"``,
    ``"tau_gap"``, ``"tau_b@10"``, ...), the hull for ``pearson`` and ``rms``, the choice that reached the
    nominal coverage in every setting of the guide's simulation ("LLM judges"); the ``interval`` column names it.
    ``debiased`` is the SIMEX estimate beside the sample ``value``. ``pairs=True`` compares every two groups A, B
    sharing the measure and the reference: ``difference = c(A) - c(B)``, its paired-bootstrap interval (the same
    resamples serve A, B and the reference: Efron & Tibshirani 1993, section 16.4; the dependence of Steiger 1980,
    Zou 2007) and ``p_value``, the smallest ``1 - confidence`` at which that interval excludes 0 (correct for
    multiplicity: ``adjust_pvalues``).

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
    interval : {'auto', 'percentile', 'bca', 'simex', 'hull', 'bounds'}, default 'auto'
        The bootstrap interval (``"auto"``: the bounds or the hull, as above).
    seed : int, numpy.random.Generator or None, default 0
        Randomness of the resamples.
    pairs : bool, default False
        One row per pair of groups (paired comparison) instead of one per group.

    Returns
    -------
    pandas.DataFrame
        ``measure``, the ``by`` columns, ``reference``, ``method``, ``value``, ``debiased``, ``low``, ``high``,
        ``interval`` (the one taken), ``n_runs``, ``n_topics``; with ``pairs``: ``measure``, the ``by`` columns of A
        and of B (suffixed ``_other``), ``reference``, ``method``, ``value``, ``value_other``, ``difference``,
        ``difference_debiased``, ``low``, ``high``, ``interval``, ``p_value``, ``n_topics``.

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
    table = bootstrap_table(
        result, reference, reference_measure, methods=methods, by=by, system=system, missing=missing,
        fill_value=fill_value, n_resamples=n_resamples, interval=interval, seed=seed, where="correlation_intervals")
    return _pair_rows(table, confidence) if pairs else _warn_outside(_group_rows(table, confidence),
                                                                      "correlation_intervals")


def _group_rows(table: Replicates, confidence: float) -> pd.DataFrame:
    """One row per group and method: the value, its SIMEX estimate and its interval."""
    jack = None if table.jack is None else np.moveaxis(table.jack, 1, -1)
    sides = None if table.lower is None else (np.moveaxis(table.lower, 1, -1), np.moveaxis(table.upper, 1, -1))
    bounds = _bounds(table.point, np.moveaxis(table.boot, 1, -1), jack, confidence, table.use_bca, shift=table.shift,
                     hull=table.hull, limits=table.limits, sides=sides)
    out = method_rows(table.keys, table.point, table.n_runs, table.methods)
    out["debiased"] = table.debiased.ravel()
    out["low"], out["high"] = bounds[..., 0].ravel(), bounds[..., 1].ravel()
    out["interval"] = np.tile(table.interval, len(table.keys))
    out["n_topics"] = np.int64(table.n_topics)
    return out[["measure", *table.by, "reference", "method", "value", "debiased", "low", "high", "interval", "n_runs",
                "n_topics"]]


def _warn_outside(out: pd.DataFrame, where: str) -> pd.DataFrame:
    """``out``, with a counted warning where an interval does not hold its own value: the resampled
    leaderboards are noisier than the observed ones, so the replicates sit to one side."""
    value = np.where(out["debiased"].isna(), out["value"].to_numpy(), np.nan)  # SIMEX intervals move off it
    outside = np.isfinite(value) & ((value < out["low"].to_numpy()) | (value > out["high"].to_numpy()))
    if outside.any():
        warnings.warn(f"{where}(): {int(outside.sum())} of {int(np.isfinite(value).sum())} intervals do not contain "
                      "their own value: resampling the topics makes the leaderboards noisier, near-tied systems swap "
                      "and the coefficient's replicates lie to one side (a biased bootstrap distribution); read such "
                      "an interval as the coefficient's spread over topic samples, not as a 95 % interval (guide: "
                      "'LLM judges')", PdevalWarning, stacklevel=4)
    return out
