"""Sakai's paired bootstrap test and the discriminative power of measures (MEASURES.md E10).

* :func:`discriminative_power` -- Sakai's (SIGIR 2006, "Evaluating evaluation metrics based
  on the bootstrap") paired bootstrap test for every run pair and the share of pairs it
  finds significant, as used in Sakai (SIGIR 2007); :func:`paired_bootstrap` is the same
  computation on given bootstrap index vectors, :func:`bootstrap_replicates` its replicates
  (also the bootstrap test of :func:`pdeval.compare`).

Vectorised over run pairs and replicates (numpy), chunked so that memory stays bounded;
randomness from :func:`pdeval.common.seeds.generator`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Iterator, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.bundle import ResultBundle, ResultFrame
from pdeval.analysis.statistics.scores import CHUNK_ELEMENTS, RESULT_MEASURES, ZERO, pair_indices, score_matrices
from pdeval.common.contract import Integer, Real, Text, contract
from pdeval.common.options import check_share
from pdeval.common.progress import PROGRESS, one_bar, progress_bar
from pdeval.common.docs import shared_docs
from pdeval.common.seeds import SEED, Seed, generator
from pdeval.frames.domains import Frame
from pdeval.errors import PdevalError

__all__ = [
    "DiscriminativePower",
    "bootstrap_replicates",
    "chunk_size",
    "discriminative_power",
    "paired_bootstrap",
    "studentised",
]


def studentised(mean: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """mean / (sd / sqrt(n)); sd = 0 gives 0 if mean = 0 else +-inf (|x| < 1e-12 is 0)."""
    mean = np.where(np.abs(mean) < ZERO, 0.0, mean)
    zero_sd = sd < ZERO
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    if zero_sd.any():
        t = np.where(zero_sd, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)), t)
    return t


def chunk_size(rows: int, n: int) -> int:
    return max(1, CHUNK_ELEMENTS // max(1, rows * n))


def _check_indices(z: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    z = np.atleast_2d(np.asarray(z, dtype=np.float64))
    indices = np.atleast_2d(np.asarray(indices, dtype=np.int64))
    n = z.shape[1]
    if indices.shape[1] != n:
        raise PdevalError(f"bootstrap index vectors have length {indices.shape[1]}, expected n = {n} topics")
    if indices.size and (indices.min() < 0 or indices.max() >= n):
        raise PdevalError(f"bootstrap indices must lie in 0..{n - 1}")
    if n < 2:
        raise PdevalError("the bootstrap test needs at least two topics")
    return z, indices


def _bootstrap_chunks(z: np.ndarray, indices: np.ndarray, progress: bool) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
    """Yield ``(first_b, mean(w*b), t*b)`` for chunks of replicates; arrays are pairs x chunk.

    One chunk gathers ``w[:, idx]`` (pairs x chunk x n), sized to about
    :data:`CHUNK_ELEMENTS` float64 values, so memory stays bounded for any B.
    """
    p, n = z.shape
    w = z - z.mean(axis=1, keepdims=True)
    chunk = chunk_size(p, n)
    starts = range(0, indices.shape[0], chunk)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="bootstrap"):
        sample = w[:, indices[start : start + chunk]]  # pairs x chunk x n
        mean = sample.mean(axis=2)
        dev = sample - mean[:, :, None]
        sd = np.sqrt(np.einsum("pbn,pbn->pb", dev, dev) / (n - 1))
        yield start, mean, studentised(mean, sd, n)


def bootstrap_replicates(
    z: np.ndarray, indices: np.ndarray, *, progress: bool = False
) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap means and studentised statistics of the null-shifted differences.

    ``z``: (pairs, n) per-topic differences; ``indices``: (B, n) topic indices, shared by
    every pair. With ``w = z - mean(z)`` and ``w*b = w[idx_b]``, returns
    ``(mean(w*b), t*b)`` as (pairs, B) arrays, ``t*b = mean(w*b) / (sd(w*b, ddof=1)/sqrt(n))``
    (Sakai 2006); a zero sd gives t = 0 for a zero mean and +-inf otherwise (|x| < 1e-12
    counts as zero, for the mean and the sd). Chunked over replicates; no loop over pairs
    or single replicates. (The full arrays take 16 * pairs * B bytes; :func:`paired_bootstrap`
    streams instead.)
    """
    z, indices = _check_indices(z, indices)
    p = z.shape[0]
    means = np.empty((p, indices.shape[0]))
    tstar = np.empty((p, indices.shape[0]))
    for start, mean, t in _bootstrap_chunks(z, indices, progress):
        means[:, start : start + mean.shape[1]] = mean
        tstar[:, start : start + mean.shape[1]] = t
    return means, tstar


def paired_bootstrap(
    scores: np.ndarray,
    indices: np.ndarray,
    *,
    alpha: float = 0.05,
    runs: Optional[Sequence] = None,
    progress: bool = False,
) -> pd.DataFrame:
    """Sakai's (2006) paired bootstrap test for every run pair, on given bootstrap indices.

    ``scores``: runs x topics; ``indices``: (B, n) topic indices drawn with replacement,
    shared by all pairs (MEASURES.md E10). For each unordered pair (X, Y) in input order,
    ``z = x - y``, ``t(z) = mean(z) / (sd(z)/sqrt(n))``, ``w = z - mean(z)`` and for each b
    ``t*b`` as in :func:`bootstrap_replicates`. Then

    * ``ASL = #{b : |t*b| >= |t(z)|} / B``; significant iff ``ASL < alpha``;
    * ``delta``: with ``k = ceil(alpha B)``, the replicate holding the k-th largest |t*b|
      (the smallest b among equal values) gives ``delta = |mean(w*b)|`` (the MATTERS
      reading of Sakai 2006; the difference required is the maximum over pairs).

    Streams over chunks of replicates: ASL hits are counted and the k largest |t*b| of
    every pair (ordered by value, then b) are kept, so memory is O(pairs * (k + chunk)).
    ``alpha * B`` is computed in floating point, so ``ceil`` is taken of
    ``alpha * B - 1e-9`` (0.07 * 100 is 7.000000000000001 in float64).

    Returns one row per pair: ``run_a``, ``run_b``, ``mean_a``, ``mean_b``, ``diff``,
    ``t``, ``asl``, ``significant``, ``delta``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    if scores.ndim != 2 or scores.shape[0] < 2:
        raise PdevalError("paired_bootstrap needs a runs x topics matrix with at least two runs")
    check_share("alpha", alpha)
    m, n = scores.shape
    runs = list(range(m)) if runs is None else list(runs)
    ii, jj = pair_indices(m)
    z, indices = _check_indices(scores[ii] - scores[jj], indices)
    zbar = z.mean(axis=1)
    t_obs = np.abs(studentised(zbar, z.std(axis=1, ddof=1), n))
    big_b = indices.shape[0]
    if big_b < 1:
        raise PdevalError("at least one bootstrap replicate is needed")
    k = min(big_b, max(1, math.ceil(alpha * big_b - 1e-9)))
    p = len(ii)
    hits = np.zeros(p, dtype=np.int64)
    top_t = np.empty((p, 0))
    top_b = np.empty((p, 0), dtype=np.int64)
    top_mean = np.empty((p, 0))
    for start, mean, t in _bootstrap_chunks(z, indices, progress):
        abs_t = np.abs(t)
        hits += (abs_t >= t_obs[:, None]).sum(axis=1)
        b = np.broadcast_to(np.arange(start, start + abs_t.shape[1]), abs_t.shape)
        top_t = np.concatenate((top_t, abs_t), axis=1)
        top_b = np.concatenate((top_b, b), axis=1)
        top_mean = np.concatenate((top_mean, mean), axis=1)
        # order by |t*| descending, then b ascending; keep the first k
        order = np.lexsort((top_b, -top_t), axis=1)[:, :k]
        top_t = np.take_along_axis(top_t, order, axis=1)
        top_b = np.take_along_axis(top_b, order, axis=1)
        top_mean = np.take_along_axis(top_mean, order, axis=1)
    asl = hits / big_b
    kth = top_t[:, k - 1]
    first = np.argmax(top_t == kth[:, None], axis=1)  # smallest b among values equal to the k-th
    delta = np.abs(top_mean[np.arange(p), first])
    row_means = scores.mean(axis=1)
    return pd.DataFrame(
        {
            "run_a": [runs[i] for i in ii],
            "run_b": [runs[j] for j in jj],
            "mean_a": row_means[ii],
            "mean_b": row_means[jj],
            "diff": zbar,
            "t": studentised(zbar, z.std(axis=1, ddof=1), n),
            "asl": asl,
            "significant": asl < alpha,
            "delta": delta,
        }
    )


def _round_significant(x: float, digits: int = 2) -> float:
    if not np.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")


@dataclass(repr=False)
class DiscriminativePower(ResultBundle):
    """Result of :func:`discriminative_power`; ``to_frame()`` is the summary.

    ``pairs``: one row per (measure, variant, run pair) -- see :func:`paired_bootstrap`.
    ``summary``: one row per (measure, variant) with ``significant`` (pairs with
    ASL < alpha), ``pairs`` (m(m-1)/2), ``power`` (their ratio), ``label`` (Sakai's
    "174/435 = 40.0%"), ``diff_required`` (max over pairs of delta), ``diff_required_2sig``
    (rounded to 2 significant digits, as Sakai reports it), ``n_runs``, ``n_topics``,
    ``n_resamples`` (B), ``alpha``.
    """

    pairs: pd.DataFrame
    summary: pd.DataFrame


@contract(
    result=Frame("result"),
    measures=RESULT_MEASURES,
    alpha=Real(0, 1, closed="neither"),
    n_resamples=Integer(1),
    seed=SEED,
    progress=PROGRESS,
    system=Text("a column name"),
)
@shared_docs
@one_bar
def discriminative_power(
    result: pd.DataFrame,
    *,
    measures: Union[None, str, Sequence[str]] = None,
    alpha: float = 0.05,
    n_resamples: int = 1000,
    seed: Seed = 0,
    progress: Optional[bool] = None,
    system: str = "run",
) -> pd.DataFrame:
    """Discriminative power by Sakai's paired bootstrap test (Sakai 2006, 2007; MEASURES.md E10).

    For each (measure, variant) group: B = ``n_resamples`` bootstrap index vectors (n topic
    indices drawn with replacement by ``generator(seed).integers``) are shared by every run
    pair -- and, for groups with the same number of topics, by every measure, so measures
    are compared on the same replicates. Each pair gets its achieved significance level
    (:func:`paired_bootstrap`); the discriminative power is the share of pairs with
    ``ASL < alpha``, the difference required the largest ``delta`` over pairs (Sakai, SIGIR
    2006, "Evaluating evaluation metrics based on the bootstrap"; SIGIR 2007, "On the
    reliability of information retrieval metrics based on graded relevance").

    Vectorised over pairs and replicates (chunked over replicates); the same seed gives the
    same output.

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values, every run on every topic.
    measures : str or list of str, optional
        The measure(s) to analyse (default: all of ``result``).
    alpha : float, default 0.05
        The significance level of each paired test.
    n_resamples : int, default 1000
        B, the number of bootstrap replicates.
    {seed}
    {progress}
    {system}

    Returns
    -------
    DataFrame
        The summary, one row per (measure, variant): ``significant`` (pairs with ASL <
        alpha), ``pairs`` (m(m-1)/2), ``power`` (their ratio), ``label`` (Sakai's "174/435 =
        40.0%"), ``diff_required`` (max over pairs of delta), ``diff_required_2sig``,
        ``n_runs``, ``n_topics``, ``n_resamples``, ``alpha``. Its attribute ``.pairs`` is the
        frame of the run pairs (:func:`paired_bootstrap`; see :class:`DiscriminativePower`).

    Raises
    ------
    PdevalError
        An option outside its domain, or fewer than two runs.
    SchemaError
        A missing measure, or a run without a value on some topic.

    See Also
    --------
    swap_rates : Swap rates and the difference required (Voorhees & Buckley 2002).
    compare : Paired significance tests between runs.

    Examples
    --------
    >>> clef = pdeval.datasets.load("clef2018")
    >>> result = pdeval.evaluate(clef.runs, clef.qrels, ["AP", "P@10"])
    >>> power = pdeval.discriminative_power(result, n_resamples=200, progress=False)
    >>> power.sort_values("power", ascending=False)[["measure", "label", "diff_required"]].round(3)
      measure           label  diff_required
    0      AP  88/105 = 83.8%          0.027
    1    P@10  73/105 = 69.5%          0.128
    >>> len(power.pairs)  # one row per run pair and measure
    210
    """
    index_cache: dict[int, np.ndarray] = {}
    pair_frames, summary_rows = [], []
    variant_names: list[str] = []
    for group in score_matrices(result, measures, system=system):
        variant_names = list(group.variant)
        m, n = group.scores.shape
        if m < 2:
            raise PdevalError(f"measure {group.measure!r} {group.variant}: at least two runs are needed")
        if n not in index_cache:
            index_cache[n] = generator(seed).integers(0, n, size=(n_resamples, n))
        pairs = paired_bootstrap(group.scores, index_cache[n], alpha=alpha, runs=group.runs, progress=progress)
        keys = {"measure": group.measure, **group.variant}
        pair_frames.append(pairs.assign(**keys)[[*keys, *pairs.columns]])
        significant = int(pairs["significant"].sum())
        total = len(pairs)
        diff_required = float(pairs["delta"].max())
        summary_rows.append(
            (
                *keys.values(),
                significant,
                total,
                significant / total,
                f"{significant}/{total} = {100.0 * significant / total:.1f}%",
                diff_required,
                _round_significant(diff_required),
                m,
                n,
                n_resamples,
                alpha,
            )
        )
    keys = ["measure", *variant_names]
    summary = pd.DataFrame(
        summary_rows,
        columns=[*keys, "significant", "pairs", "power", "label", "diff_required", "diff_required_2sig", "n_runs", "n_topics", "n_resamples", "alpha"],
    )
    pairs = pd.concat(pair_frames, ignore_index=True) if pair_frames else pd.DataFrame()
    return ResultFrame.of(DiscriminativePower(pairs, summary))

