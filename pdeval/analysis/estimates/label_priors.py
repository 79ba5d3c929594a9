"""Probabilities of relevance for unjudged documents: the priors the bootstrap draws from.

Every unjudged retrieved document (absent from the qrels or pooled but unjudged, ``-1``) gets
a probability for each judged grade of the collection. The priors follow Fröbe, Gienapp,
Potthast & Hagen, "Bootstrapped nDCG Estimation in the Presence of Unjudged Documents"
(ECIR 2023):

* ``"pool"`` -- the share of each grade among the topic's judged documents (the paper's
  run-independent count estimator);
* ``"run"`` -- the share of each grade among the judged documents of the same ranking
  (the paper's count estimator), here optionally restricted to the judged documents within
  ``window`` ranks of the unjudged one ("the judged documents near that rank"), with one
  pseudo-document distributed as the pool prior added to the counts (:func:`shrunk`: the mean of
  a Dirichlet posterior centred on the pool, so a ranking with no judged document in reach gets
  the pool prior and one whose judged documents are all relevant, or all not, does not make its
  unjudged documents so with certainty, which no run effect could then move);
* ``"both"`` -- the mean of the two;
* ``"condensed"`` -- the grade shares of the judged documents that the condensed list (Sakai,
  *Alternatives to Bpref*, SIGIR 2007) moves into the top ``depth`` (the measures' largest
  cutoff): for a ranking with ``u`` unjudged documents in its top ``depth``, the first ``u``
  judged documents below it, plus the same pseudo-document of the pool as ``"run"``. Without
  the pseudo-document P@depth's estimate is the condensed value's P'@depth; the prior says "the
  unjudged documents are as often relevant as those condensing would put in their place";
* :func:`calibrated_priors` -- probabilities from another label set (an LLM's labels):
  P(human grade g | automatic label a), estimated on the pairs both label sets judged with
  add-``smoothing`` (Laplace) counts, re-estimated in every resample on a resample of the
  calibration topics (:class:`CalibrationEffect`: the interval carries the uncertainty of the
  calibration); an unjudged document without an automatic label falls back to the pool prior.

All functions work on the rows of ranked lists laid out with group offsets; no loop over
topics or runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError, SchemaError

PRIORS = ("pool", "run", "both", "condensed")


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
    return shares(counts), counts.sum(axis=-1) > 0


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


def run_counts(
    codes: np.ndarray, offsets: np.ndarray, list_of_row: np.ndarray, window: Optional[int], n_grades: int
) -> np.ndarray:
    """The (rows x grades) counts of the judged grades within reach of every row (the run prior's
    evidence: :func:`shrunk` for ``"run"``, :func:`shares` for ``"both"``).

    ``codes`` are the grade codes of the ranked rows (-1 unjudged), ``offsets`` the lists'
    bounds. With ``window=None`` the whole list counts; else the rows whose rank differs by at
    most ``window`` (prefix sums of one-hot grade counts along each list). ``n_grades`` is the
    number of the qrels' grades, so a grade no ranking retrieves still has its column.
    """
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
    return prefix[high] - prefix[low]


def condensed_counts(codes: np.ndarray, offsets: np.ndarray, depth: int, n_grades: int) -> np.ndarray:
    """The (lists x grades) counts of the judged rows the condensed list moves into the top ``depth``.

    ``codes`` are the grade codes of the ranked rows (-1 unjudged), ``offsets`` the lists'
    bounds. A list with ``u`` unjudged rows among its first ``depth`` contributes its first ``u``
    judged rows below ``depth`` (fewer if it has fewer): the documents that make up the condensed
    list's top ``depth`` beside the judged ones already there.
    """
    n_lists = len(offsets) - 1
    list_of_row = np.repeat(np.arange(n_lists), np.diff(offsets))
    position = np.arange(len(codes)) - offsets[list_of_row]
    judged, top = codes >= 0, position < depth
    holes = np.bincount(list_of_row[top & ~judged], minlength=n_lists)
    below = judged & ~top
    before = np.r_[0, np.cumsum(below)]  # before[i]: judged rows below depth among rows < i
    order = before[:-1] - before[offsets[:-1]][list_of_row]  # 0 for a list's first judged row below depth
    moved = below & (order < holes[list_of_row])
    return grade_counts(codes[moved], list_of_row[moved], n_lists, n_grades)


#: pseudo-documents of the pool prior added to a ranking's own counts (``"run"`` prior)
PSEUDO_DOCUMENTS = 1.0


def shrunk(counts: np.ndarray, pool: np.ndarray, pseudo: float = PSEUDO_DOCUMENTS) -> np.ndarray:
    """(rows x grades) shares ``(counts + pseudo·pool) / (Σ counts + pseudo)``: the posterior mean
    of a row's grade shares under a Dirichlet prior with mean ``pool`` and ``pseudo`` documents'
    weight (the pool prior itself for a row without counts)."""
    return shares(counts + pseudo * pool)


def _calibration_counts(
    human: pd.DataFrame, automatic: pd.DataFrame, grades: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(topics x automatic levels x ``grades``) counts of the pairs both frames judge, per topic
    of those pairs, and the automatic levels (ascending)."""
    auto = automatic.loc[automatic["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    levels = np.unique(auto["relevance"].to_numpy(dtype=np.int64))
    judged = human.loc[human["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    both = judged.merge(auto, on=["query_id", "doc_id"], suffixes=("_h", "_a"))
    if both.empty:
        raise SchemaError(
            "the automatic labels share no judged (query_id, doc_id) pair with the qrels: nothing to "
            "calibrate them on. Check that both use the same topic and document ids."
        )
    topic, topics = pd.factorize(both["query_id"])
    level = np.searchsorted(levels, both["relevance_a"].to_numpy(dtype=np.int64))
    grade = np.searchsorted(grades, both["relevance_h"].to_numpy(dtype=np.int64))
    cells = len(topics) * len(levels)  # one group per (topic, automatic level)
    counts = grade_counts(grade, topic * len(levels) + level, cells, len(grades))
    return counts.reshape(len(topics), len(levels), len(grades)), levels


def calibrated_priors(
    human: pd.DataFrame,
    automatic: pd.DataFrame,
    grades: np.ndarray,
    row_labels: np.ndarray,
    pool: np.ndarray,
    *,
    smoothing: float = 1.0,
) -> "CalibrationEffect":
    """P(human grade | automatic label) from the pairs both frames judge, for the unjudged rows.

    ``row_labels`` are the rows' automatic labels (a value that is no automatic label of
    ``automatic``: none), ``pool`` (rows x grades) the prior of the rows without one. The table
    of all calibration pairs: each row of (counts + ``smoothing``) normalised, uniform for a
    label never seen beside a human grade. Refuses frames with no judged pair in common.
    """
    if not smoothing >= 0:
        raise PdevalError(f"smoothing must be >= 0, not {smoothing!r}")
    counts, levels = _calibration_counts(human, automatic, grades)
    table, known = _normalised(counts.sum(axis=0) + smoothing)
    table[~known] = 1.0 / len(grades)
    level_of_row = np.where(np.isin(row_labels, levels), np.searchsorted(levels, row_labels), -1)
    return CalibrationEffect(counts, table, smoothing, level_of_row, pool)


@dataclass
class CalibrationEffect:
    """The calibrated prior of the unjudged rows with the uncertainty of its calibration.

    The table P(human grade g | automatic label a) is estimated from the pairs both label sets
    judge, which come in topics: how well an automatic judge agrees with the assessors varies
    from topic to topic. Every resample therefore draws the topics of the calibration pairs
    with replacement (the cluster bootstrap; Davison & Hinkley, *Bootstrap Methods and their
    Application*, 1997, Sect. 3.8) and uses the table of the drawn topics for every row::

        T^b_{a,g} = (Σ_t w^b_t n_{t,a,g} + s) / Σ_g' (Σ_t w^b_t n_{t,a,g'} + s),
        (w^b_1, ..., w^b_T) ~ Multinomial(T, 1/T, ..., 1/T)

    with ``n_{t,a,g}`` the pairs of topic ``t`` with automatic label ``a`` and human grade ``g``
    and ``s`` the smoothing. A label whose row has no count in a resample keeps the table of
    all topics (``table``). Rows without an automatic label (``level_of_row`` -1) get ``pool``.
    """

    topic_counts: np.ndarray  # (calibration topics x levels x grades)
    table: np.ndarray  # (levels x grades): the table of all topics
    smoothing: float
    level_of_row: np.ndarray  # (rows,) index into the levels; -1: no automatic label
    pool: np.ndarray  # (rows x grades): the fallback prior

    def take(self, keep: np.ndarray) -> "CalibrationEffect":
        return CalibrationEffect(self.topic_counts, self.table, self.smoothing, self.level_of_row[keep], self.pool[keep])

    def rows(self, tables: np.ndarray) -> np.ndarray:
        """(... x rows x grades): the rows' probabilities under (... x levels x grades) tables."""
        found = self.level_of_row >= 0
        picked = np.take(tables, np.maximum(self.level_of_row, 0), axis=-2)
        return np.where(found[:, None], picked, self.pool)

    def tables(self, weights: np.ndarray) -> np.ndarray:
        """(resamples x levels x grades) tables of the calibration topics taken ``weights``
        (resamples x topics) times each."""
        counts = np.tensordot(np.asarray(weights, dtype=np.float64), self.topic_counts, axes=(1, 0))
        seen = counts.sum(axis=-1, keepdims=True) > 0
        return np.where(seen, shares(counts + self.smoothing), self.table)

    def draw(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size x rows x grades) probabilities: one resample of the calibration topics each."""
        n_topics = len(self.topic_counts)
        return self.rows(self.tables(rng.multinomial(n_topics, np.full(n_topics, 1.0 / n_topics), size=size)))


__all__ = ["PRIORS", "PSEUDO_DOCUMENTS", "CalibrationEffect", "both_priors", "calibrated_priors", "condensed_counts",
           "grade_counts", "pool_priors", "run_counts", "shares", "shrunk"]
