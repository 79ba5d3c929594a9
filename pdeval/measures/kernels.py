"""Pieces the measure kernels share: division that marks undefined values, and gains."""

from __future__ import annotations

import math
from typing import Mapping, Optional, Union

import numpy as np

from pdeval.engine.segments import QrelsTable, Segments, gain_of
from pdeval.errors import MeasureError

Gains = Optional[Mapping[int, float]]


def divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """numerator / denominator, NaN where the denominator is 0 (the measure is undefined)."""
    numerator = np.asarray(numerator, dtype=np.float64)
    denominator = np.asarray(denominator, dtype=np.float64)
    return np.where(denominator > 0, numerator / np.where(denominator > 0, denominator, 1.0), np.nan)


def level_gains(seg: Segments, gains: Gains) -> np.ndarray:
    """Gain of every judged qrels level (all entries); raises on a negative gain."""
    level_gain = gain_of(seg.qrels.levels, gains)
    if gains and any(float(v) < 0 for v in gains.values()):
        raise MeasureError(f"gains must be >= 0, got {dict(gains)}")
    return level_gain


def positive_number(value: object, what: str) -> float:
    """``value`` as a positive, finite float; :class:`~pdeval.errors.MeasureError` naming
    ``what`` (a parameter) otherwise."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        number = math.nan
    if not number > 0 or not math.isfinite(number):
        raise MeasureError(f"{what} must be a positive number, got {value!r}")
    return number


def collection_max(seg: Segments, gains: Gains, gain_max: Optional[Union[float, str]]) -> np.ndarray:
    """G per segment: the largest gain over every topic of the segment's qrels variant,
    or the ``gain_max`` override (which must be > 0 and not below any gain in the qrels)."""
    observed = seg.qrels.gain_max(gains)[seg.topic]
    if gain_max is None:
        return observed
    value = positive_number(gain_max, "gain_max")
    if len(observed) and value < float(observed.max()):
        raise MeasureError(
            f"gain_max={value:g} is below the largest gain in the qrels ({float(observed.max()):g}); "
            "relevance values phi = gain/gain_max must lie in [0, 1]"
        )
    return np.full(seg.n_segments, value)


__all__ = ["Gains", "NO_PRIME", "collection_max", "divide", "level_gains", "positive_number", "sampling_design"]


#: why the sampled estimators (stratified and statAP) have no prime variant
NO_PRIME = "the estimator needs the unsampled (-1) documents and the ranks of the full list"


def sampling_design(table: QrelsTable, who: str) -> tuple[dict, np.ndarray, np.ndarray]:
    """The sampling design of the qrels (every qrels row's entry and level, and its sampling
    columns), its entries and its levels; ``who`` names the measures in the error."""
    design = table.design
    if design is None:
        raise MeasureError(f"{who} need qrels evaluated by pdeval.evaluate (no sampling design)")
    return design, design["entry"], design["level"]
