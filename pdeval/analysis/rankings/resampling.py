"""The topic bootstrap of leaderboard correlations, vectorised over resamples.

A resample draws the topics with replacement; ``W`` is the ``(B, T)`` matrix of how often each
topic is drawn. The resampled leaderboards of every compared group at once are
``(W @ X) / (W @ P)``, with ``X`` the ``(T, S)`` per-topic scores (0 where absent) and ``P``
the presence indicator, so a system missing a topic averages over the topics it has. Every
coefficient is then computed on the ``(B, S)`` resampled leaderboards in one batch
(:mod:`pdeval.analysis.rankings.batched`). The jackknife (leave one topic out) uses the same
engine with ``W = 1 - I``; it gives the acceleration of the BCa interval.

Intervals (Efron & Tibshirani, *An Introduction to the Bootstrap*, 1993, ch. 13-14; Efron,
JASA 1987 for BCa): the percentile interval takes the ``(1 - confidence)/2`` and
``(1 + confidence)/2`` quantiles of the B replicates; BCa shifts those levels by the bias
correction ``z0 = Phi^-1(#{theta* < theta} / B)`` (ties count half) and the acceleration
``a = sum d^3 / (6 (sum d^2)^1.5)`` over the jackknife deviations ``d``.
"""

from __future__ import annotations

from dataclasses import dataclass

from typing import Optional

import numpy as np
import pandas as pd
from scipy.special import ndtr, ndtri

from pdeval.analysis.rankings.alignment import Aligned, sorted_names
from pdeval.analysis.rankings.batched import rows_coefficients
from pdeval.frames.canonical import as_result

__all__ = ["Cubes", "bca_constants", "bootstrap_weights", "interval_levels", "quantiles", "replicates",
           "resampled_means", "topic_cubes", "topic_strata"]


@dataclass
class Cubes:
    """Per-topic scores of the compared groups (``est``: ``(G, T, S)``) and of the reference
    rows (``ref``: ``(R, T, S)``), NaN where a system lacks a topic."""

    topics: np.ndarray
    est: np.ndarray
    ref: np.ndarray


def _cube(frame: pd.DataFrame, keys: pd.DataFrame, columns: list[str], system: str, systems, topics) -> np.ndarray:
    """(len(keys), T, S) per-topic values of the groups ``keys`` (matched on ``columns``); key
    columns other than those, the system and the topic are averaged within each cell."""
    frame = as_result(frame)
    cells = frame.groupby([*columns, "query_id", system], sort=False, dropna=False, observed=True)["value"].mean()
    cells = cells.reset_index()
    row = cells.merge(keys[columns].assign(_g=np.arange(len(keys))), on=columns, how="left")["_g"]
    keep = row.notna().to_numpy().copy()
    cube = np.full((len(keys), topics.size, systems.size), np.nan)
    t = pd.Index(topics).get_indexer(cells["query_id"].astype(object))
    s = pd.Index(systems).get_indexer(cells[system].astype(object))
    keep &= (t >= 0) & (s >= 0)
    cube[row.to_numpy()[keep].astype(np.int64), t[keep], s[keep]] = cells["value"].to_numpy(np.float64)[keep]
    return cube


def topic_cubes(result: pd.DataFrame, reference: pd.DataFrame, aligned: Aligned, ref_keys: pd.DataFrame, *,
                by: list[str], shared: list[str], system: str) -> Cubes:
    """The cubes of the groups of ``aligned`` and of the reference rows ``ref_keys``
    (``reference`` is the reference result frame, or ``result`` itself for a reference measure)."""
    topics = sorted_names(pd.concat([as_result(result)["query_id"], as_result(reference)["query_id"]],
                                    ignore_index=True).unique())
    est = _cube(result, aligned.keys, ["measure", *by], system, aligned.systems, topics)
    ref = _cube(reference, ref_keys, ["measure", *shared], system, aligned.systems, topics)
    return Cubes(topics, est, ref)


def bootstrap_weights(n_topics: int, n_resamples: int, rng: np.random.Generator,
                      strata: Optional[np.ndarray] = None, size: float = 1.0) -> np.ndarray:
    """(B, T) counts of each topic in each resample of T topics drawn with replacement; with
    ``strata`` (a code per topic) each stratum's topics are drawn from that stratum alone, as
    many as it has (the stratified bootstrap, Efron & Tibshirani 1993, section 6.9). ``size``
    scales the number of draws (``round(size * T)``, each stratum in proportion): a resample of
    ``m`` topics adds noise of ``(T - 1) / m`` times the sample's variance to every mean, the
    noise levels of SIMEX (:mod:`pdeval.analysis.rankings.simex`)."""
    draws_per = max(1, int(round(size * n_topics)))
    if strata is None or len(np.unique(strata)) <= 1:
        draws = rng.integers(0, n_topics, size=(n_resamples, draws_per))
    else:
        order = np.argsort(strata, kind="stable")
        codes = np.asarray(strata)[order]
        start = np.searchsorted(codes, codes)  # where each topic's stratum begins (in ``order``)
        size_of = np.searchsorted(codes, codes, side="right") - start
        slot = np.arange(draws_per) * n_topics // draws_per  # the stratum of each draw, in proportion
        draws = order[start[slot] + rng.integers(0, size_of[slot], size=(n_resamples, draws_per))]
    flat = (np.arange(n_resamples)[:, None] * n_topics + draws).ravel()
    return np.bincount(flat, minlength=n_resamples * n_topics).reshape(n_resamples, n_topics).astype(np.float64)


def topic_strata(cubes: "Cubes") -> np.ndarray:
    """A code per topic: scored by the compared leaderboards only, the reference only, or both.
    Leaderboards of different topics (SynDL's automatic labels extend the human ones on other
    queries) are resampled each within its own topics."""
    est = np.isfinite(cubes.est).any(axis=(0, 2)) if cubes.est.size else np.zeros(cubes.topics.size, dtype=bool)
    ref = np.isfinite(cubes.ref).any(axis=(0, 2)) if cubes.ref.size else np.zeros(cubes.topics.size, dtype=bool)
    return est.astype(np.int64) * 2 + ref.astype(np.int64)


def _means(weights: np.ndarray, cube: np.ndarray) -> np.ndarray:
    """(rows, B, S) weighted means over topics of a (rows, T, S) cube with NaN for absent."""
    rows, topics, systems = cube.shape
    present = np.isfinite(cube)

    def weighted(values):  # one matrix product for every row: (B, T) @ (T, rows * S)
        flat = values.transpose(1, 0, 2).reshape(topics, rows * systems)
        return (weights @ flat).reshape(weights.shape[0], rows, systems).transpose(1, 0, 2)

    with np.errstate(divide="ignore", invalid="ignore"):
        return weighted(np.where(present, cube, 0.0)) / weighted(present.astype(np.float64))


def replicates(cubes: Cubes, aligned: Aligned, weights: np.ndarray, methods: list[str], fill_value: float,
               fill: bool) -> np.ndarray:
    """(G, B, M) coefficients of every group on every weighting of the topics."""
    est, ref = resampled_means(cubes, aligned, weights, fill_value, fill)
    both = np.isfinite(aligned.est_raw) & np.isfinite(aligned.ref)
    return rows_coefficients(est, ref, aligned.mask, methods, mask_k=both)


def resampled_means(cubes: Cubes, aligned: Aligned, weights: np.ndarray, fill_value: float,
                    fill: bool) -> tuple[np.ndarray, np.ndarray]:
    """(G, B, S) leaderboards of every group and of its reference on every weighting of the topics."""
    est = _means(weights, cubes.est)
    ref = _means(weights, cubes.ref)[aligned.ref_row]
    only_ref = aligned.mask & ~np.isfinite(aligned.est_raw) if fill else np.zeros_like(aligned.mask)
    est = np.where(only_ref[:, None, :], fill_value, est)
    # a system whose resample drew none of its topics keeps its full-data mean
    est = np.where(np.isnan(est), aligned.est[:, None, :], est)
    ref = np.where(np.isnan(ref), aligned.ref[:, None, :], ref)
    return est, ref


def quantiles(values: np.ndarray, levels: np.ndarray, ordered: bool = False) -> np.ndarray:
    """Quantiles of each row of ``values`` (NaN ignored) at per-row ``levels`` (rows, k), linear
    between order statistics as :func:`numpy.nanquantile`; ``ordered``: rows already sorted."""
    ordered = values if ordered else np.sort(values, axis=-1)  # NaN last
    count = np.isfinite(values).sum(axis=-1)
    position = levels * np.maximum(count - 1, 0)[..., None]
    low = np.floor(position).astype(np.int64)
    high = np.minimum(low + 1, np.maximum(count - 1, 0)[..., None])
    frac = position - low
    lo = np.take_along_axis(ordered, low, axis=-1)
    hi = np.take_along_axis(ordered, high, axis=-1)
    out = lo + frac * (hi - lo)
    return np.where((count > 0)[..., None], out, np.nan)


def bca_constants(point: np.ndarray, boot: np.ndarray, jack: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BCa's bias correction ``z0`` and acceleration ``a`` of replicates ``boot`` (last axis)
    around ``point``, the acceleration from the jackknife replicates ``jack``."""
    finite = np.isfinite(boot)
    count = np.maximum(finite.sum(axis=-1), 1)
    below = ((boot < point[..., None]) & finite).sum(axis=-1) + 0.5 * ((boot == point[..., None]) & finite).sum(axis=-1)
    z0 = ndtri(np.clip(below / count, 0.5 / count, 1 - 0.5 / count))
    dev = np.nanmean(jack, axis=-1, keepdims=True) - jack
    den = 6.0 * np.nansum(dev ** 2, axis=-1) ** 1.5
    with np.errstate(divide="ignore", invalid="ignore"):
        accel = np.where(den > 0, np.nansum(dev ** 3, axis=-1) / np.where(den > 0, den, 1.0), 0.0)
    return z0, accel


def interval_levels(point: np.ndarray, boot: np.ndarray, jack: np.ndarray | None, confidence,
                    constants: tuple | None = None) -> np.ndarray:
    """(rows, 2) quantile levels of the interval: percentile (``jack`` and ``constants`` None)
    or BCa (``constants``: :func:`bca_constants`, computed here from ``jack`` if not given);
    ``confidence`` a number or one per row."""
    tail = (1.0 - np.asarray(confidence, dtype=np.float64)) / 2.0
    base = np.broadcast_to(np.stack([tail, 1.0 - tail], axis=-1), (*point.shape, 2))
    if jack is None and constants is None:
        return base.copy()
    z0, accel = bca_constants(point, boot, jack) if constants is None else constants
    z = ndtri(base)
    denominator = 1.0 - accel[..., None] * (z0[..., None] + z)
    with np.errstate(divide="ignore", invalid="ignore"):
        shifted = z0[..., None] + (z0[..., None] + z) / denominator
    # BCa's correction is defined where both denominators are positive, and erratic where the
    # bias correction exceeds the interval's own half-width (the point outside the central
    # replicates: Efron & Tibshirani 1993, section 14.3): there the percentile levels stand
    usable = np.isfinite(z0) & (denominator > 0).all(axis=-1) & (np.abs(z0) < z[..., 1])
    return np.where(usable[..., None], ndtr(shifted), base)
