"""SIMEX: the attenuation of a leaderboard correlation by topic noise, estimated and taken out.

Each system's mean over ``T`` topics carries noise of variance ``v = s^2 / T``; on crowded
leaderboards that noise swaps near-tied systems, so the sample coefficient lies below the one
between the population leaderboards (the truth), by up to a standard error. Simulation-extrapolation
(Cook & Stefanski, JASA 1994; Carroll, Ruppert, Stefanski & Crainiceanu, *Measurement Error in
Nonlinear Models*, 2006, ch. 5) measures the coefficient at *more* noise and extrapolates back
to none. The extra noise comes from the data themselves, as in the empirical SIMEX of
Devanarayan & Stefanski (Statistics & Probability Letters, 2002): a resample of ``m`` of the
``T`` topics, drawn with replacement, adds noise of ``lambda v`` to every mean of both
leaderboards with ``lambda = (T - 1) / m`` (and keeps the correlation of the two sides' noise,
as the topics are shared). The mean coefficient over resamples of ``m = 2T, T, T/2`` topics
gives the curve at ``lambda ~ 0.5, 1, 2``; a least-squares line in ``lambda`` through those three
means, evaluated at ``lambda = -1`` (no noise), is the debiased coefficient. Only means of
resamples enter the line (bagged coefficients, smooth in the data): the sample coefficient
itself, which jumps at every swap of two systems, would make the extrapolation twice as noisy.
``rms`` is extrapolated on its square (the mean squared difference of the means grows linearly
with the noise variance) and the root taken.

The three levels are computed as one batch of leaderboards ``W @ X / W @ P`` (the rows of ``W``
are resamples of all levels, :func:`pdeval.analysis.rankings.resampling.bootstrap_weights`), no
loop over resamples or levels. The SIMEX interval is the percentile interval shifted by
``debiased - mean(replicates)``; since the extrapolation is a model (a line in ``lambda``), the
"hull" interval is the smallest interval holding both the percentile and the SIMEX intervals. A pair of
near-tied systems that the sample's noise already flips at random lies beyond any line's reach (the
curve is flat from the sample's noise on): for cutoff coefficients, where each pair weighs much, the
interval "bounds" of :mod:`pdeval.analysis.rankings.near_ties` covers it.
"""

from __future__ import annotations

import math
import warnings
from typing import Optional

import numpy as np

from pdeval.analysis.rankings.batched import parse_method
from pdeval.analysis.rankings.resampling import Cubes, bootstrap_weights, replicates

__all__ = ["EXTRA_LEVELS", "EXTRA_SHARE", "coefficient_limits", "debiased", "extrapolate", "noise_level"]

#: the resample sizes besides the bootstrap's (as shares of the topics): lambda ~ 0.5 and 2
EXTRA_LEVELS = (2.0, 0.5)

#: resamples drawn at each extra level, as a share of ``n_resamples`` (only their mean is used)
EXTRA_SHARE = 0.25


def coefficient_limits(methods) -> np.ndarray:
    """(M, 2) range of each method: [0, inf) for ``rms``, [-1, 1] for the correlations."""
    return np.array([[0.0, np.inf] if parse_method(m)[0] == "rms" else [-1.0, 1.0] for m in methods])


def noise_level(n_topics: int, size: float) -> float:
    """``lambda = (T - 1) / m``: the noise a resample of ``m = round(size * T)`` topics adds to
    each mean, in units of the sample mean's own noise."""
    return (n_topics - 1) / max(1, int(round(size * n_topics)))


def extrapolate(means: np.ndarray, levels: np.ndarray) -> np.ndarray:
    """The least-squares line through ``(levels[k], means[..., k])`` evaluated at ``lambda = -1``
    (NaN where any mean is; exactly the common value where all are equal)."""
    levels = np.asarray(levels, dtype=np.float64)
    centred = levels - levels.mean()
    if not (centred ** 2).sum() > 0:  # one topic: every level alike, nothing to extrapolate
        return means.mean(axis=-1)
    slope = (means * centred).sum(axis=-1) / (centred ** 2).sum()
    line = means.mean(axis=-1) + slope * (-1.0 - levels.mean())
    return np.where(np.ptp(means, axis=-1) == 0, means[..., 0], line)


def debiased(cubes: Cubes, aligned, boot: np.ndarray, use: np.ndarray, methods: list[str], fill_value: float,
             fill: bool, rng: np.random.Generator, strata: Optional[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """(G, M) SIMEX estimates of the methods ``use`` selects and their distance from the mean
    bootstrap replicate (the shift of the interval; 0 where the three means agree, NaN for
    methods not selected), from the bootstrap replicates ``boot`` (G, B, M; ``lambda = (T - 1) / T``)
    and, drawn here from ``rng``, a quarter as many resamples of ``2T`` and of ``T/2`` topics."""
    out, shift = np.full(boot.shape[::2], np.nan), np.full(boot.shape[::2], np.nan)
    if not use.any():
        return out, shift
    n_topics, extra = cubes.topics.size, max(2, math.ceil(EXTRA_SHARE * boot.shape[1]))
    weights = np.vstack([bootstrap_weights(n_topics, extra, rng, strata, size=size) for size in EXTRA_LEVELS])
    picked = [m for m, keep in zip(methods, use) if keep]
    more = replicates(cubes, aligned, weights, picked, fill_value, fill)  # (G, 2 * extra, M')
    # rms is extrapolated on its square: the mean squared difference grows linearly with the noise
    power = np.array([2.0 if parse_method(m)[0] == "rms" else 1.0 for m in picked])
    with warnings.catch_warnings():  # a mean of only NaN (an undefined coefficient) stays NaN
        warnings.simplefilter("ignore", RuntimeWarning)
        means = np.stack([np.nanmean(part ** power, axis=1) for part in (more[:, :extra], boot[..., use],
                                                                          more[:, extra:])], axis=-1)
        centre = np.nanmean(boot[..., use], axis=1)
    levels = [noise_level(n_topics, size) for size in (EXTRA_LEVELS[0], 1.0, EXTRA_LEVELS[1])]
    line = extrapolate(means, np.array(levels))
    value = np.where(power == 2.0, np.sqrt(np.clip(line, 0.0, None)), np.clip(line, -1.0, 1.0))
    shift[:, use] = np.where(np.ptp(means, axis=-1) == 0, 0.0, value - centre)  # no noise: nothing moves
    out[:, use] = centre + shift[:, use]
    return out, shift
