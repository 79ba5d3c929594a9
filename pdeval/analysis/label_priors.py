"""Probabilities of relevance for unjudged documents: the priors the bootstrap draws from.

Every unjudged retrieved document (absent from the qrels or pooled but unjudged, ``-1``) gets
a probability for each judged grade of the collection. The priors follow Fröbe, Gienapp,
Potthast & Hagen, "Bootstrapped nDCG Estimation in the Presence of Unjudged Documents"
(ECIR 2023):

* ``"pool"`` -- the share of each grade among the topic's judged documents (the paper's
  run-independent count estimator);
* ``"run"`` -- the share of each grade among the judged documents of the same ranking
  (the paper's count estimator), here optionally restricted to the judged documents within
  ``window`` ranks of the unjudged one ("the judged documents near that rank"); a ranking with
  no judged document in reach falls back to the pool prior;
* ``"both"`` -- the mean of the two;
* :func:`calibrated_priors` -- probabilities from another label set (an LLM's labels):
  P(human grade g | automatic label a), estimated on the pairs both label sets judged with
  add-``smoothing`` (Laplace) counts; an unjudged document without an automatic label falls
  back to the pool prior.

All functions work on the rows of ranked lists laid out with group offsets; no loop over
topics or runs.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError, SchemaError

PRIORS = ("pool", "run", "both")


def grade_counts(codes: np.ndarray, groups: np.ndarray, n_groups: int, n_grades: int) -> np.ndarray:
    """(n_groups x n_grades) counts of grade codes ``codes`` (-1 is skipped) per group."""
    keep = codes >= 0
    flat = groups[keep].astype(np.int64) * n_grades + codes[keep]
    return np.bincount(flat, minlength=n_groups * n_grades).reshape(n_groups, n_grades).astype(np.float64)


def shares(counts: np.ndarray) -> np.ndarray:
    """Each row of (... x grades) ``counts`` over its total (a row without counts stays 0)."""
    total = counts.sum(axis=-1, keepdims=True)
    return np.divide(counts, total, out=np.zeros_like(counts, dtype=np.float64), where=total > 0)


def _normalised(counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    return shares(counts), counts.sum(axis=1) > 0


def both_priors(pool: np.ndarray, run_shares: np.ndarray, known: np.ndarray) -> np.ndarray:
    """Fröbe et al.'s ``"both"``: the mean of the pool prior and the run prior of each row,
    the pool prior alone where the row's run prior does not exist (``known`` False)."""
    return np.where(known[..., None], (pool + run_shares) / 2.0, pool)


def pool_priors(topic_counts: np.ndarray, topic_of_row: np.ndarray) -> np.ndarray:
    """The pool prior of each row: its topic's grade shares (``topic_counts`` per topic)."""
    shares, known = _normalised(topic_counts)
    if not known[np.unique(topic_of_row)].all():
        raise SchemaError("a topic with unjudged retrieved documents has no judged document: no prior can be formed")
    return shares[topic_of_row]


def run_priors(
    codes: np.ndarray, offsets: np.ndarray, list_of_row: np.ndarray, window: Optional[int]
) -> tuple[np.ndarray, np.ndarray]:
    """The run prior of every row and whether it exists (some judged row within reach).

    ``codes`` are the grade codes of the ranked rows (-1 unjudged), ``offsets`` the lists'
    bounds. With ``window=None`` the whole list counts; else the rows whose rank differs by at
    most ``window`` (prefix sums of one-hot grade counts along each list).
    """
    n_grades = int(codes.max()) + 1 if (codes >= 0).any() else 1
    n_rows = len(codes)
    onehot = np.zeros((n_rows + 1, n_grades))
    judged = codes >= 0
    onehot[1:][judged, codes[judged]] = 1.0
    prefix = np.cumsum(onehot, axis=0)  # prefix[i]: counts over rows < i
    if window is None:
        low, high = offsets[list_of_row], offsets[list_of_row + 1]
    else:
        position = np.arange(n_rows)
        low = np.maximum(position - window, offsets[list_of_row])
        high = np.minimum(position + window + 1, offsets[list_of_row + 1])
    counts = prefix[high] - prefix[low]
    return _normalised(counts)


def calibrated_priors(
    human: pd.DataFrame,
    automatic: pd.DataFrame,
    grades: np.ndarray,
    *,
    smoothing: float = 1.0,
) -> tuple[np.ndarray, np.ndarray]:
    """P(human grade | automatic label) from the pairs both frames judge.

    Returns ``(table, levels)``: the (automatic levels x ``grades``) conditional probabilities,
    each row (counts + ``smoothing``) normalised, and the automatic levels in row order. Refuses
    frames with no judged pair in common.
    """
    if not smoothing >= 0:
        raise PdevalError(f"smoothing must be >= 0, not {smoothing!r}")
    auto = automatic.loc[automatic["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    levels = np.unique(auto["relevance"].to_numpy(dtype=np.int64))
    judged = human.loc[human["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    both = judged.merge(auto, on=["query_id", "doc_id"], suffixes=("_h", "_a"))
    if both.empty:
        raise SchemaError(
            "the automatic labels share no judged (query_id, doc_id) pair with the qrels: nothing to "
            "calibrate them on. Check that both use the same topic and document ids."
        )
    counts = np.zeros((len(levels), len(grades)))
    np.add.at(counts, (np.searchsorted(levels, both["relevance_a"].to_numpy(dtype=np.int64)),
                       np.searchsorted(grades, both["relevance_h"].to_numpy(dtype=np.int64))), 1.0)
    table, known = _normalised(counts + smoothing)
    table[~known] = 1.0 / len(grades)  # an automatic level never seen beside a human label: uniform
    return table, levels


__all__ = ["PRIORS", "both_priors", "calibrated_priors", "grade_counts", "pool_priors", "run_priors", "shares"]
