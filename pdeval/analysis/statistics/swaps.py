"""Swap rates and the difference required (Voorhees & Buckley, SIGIR 2002; MEASURES.md E9).

:func:`swap_rates` splits the topics at random into two disjoint sets many times and counts
how often two sets disagree on which of two runs is better, binned by the size of the
difference on the first set; the settings of Ahlgren & Groenqvist (2008) are the defaults.
Vectorised over run pairs and trials (chunked); randomness from :func:`pdeval.common.seeds.generator`.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.bundle import ResultBundle, ResultFrame
from pdeval.analysis.statistics.scores import CHUNK_ELEMENTS, RESULT_MEASURES, pair_indices, score_matrices
from pdeval.common.contract import Choice, Integer, Real, Text, contract
from pdeval.common.progress import PROGRESS, one_bar, progress_bar
from pdeval.common.docs import shared_docs
from pdeval.common.seeds import SEED, Seed, generator
from pdeval.errors import PdevalError
from pdeval.frames.domains import Frame

__all__ = ["SwapRates", "swap_counts", "swap_rates"]


def _swap_bins(
    scores: np.ndarray, q1: np.ndarray, q2: np.ndarray, bin_width: float, bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """(swaps, count) per bin for a chunk of trials; q1, q2: (trials, c) topic indices."""
    ii, jj = pair_indices(scores.shape[0])
    mean1 = scores[:, q1].mean(axis=2)  # runs x trials
    mean2 = scores[:, q2].mean(axis=2)
    d1 = mean1[ii] - mean1[jj]  # pairs x trials
    d2 = mean2[ii] - mean2[jj]
    index = np.minimum(bins - 1, np.floor(np.abs(d1) / bin_width + 1e-9)).astype(np.int64).ravel()
    count = np.bincount(index, minlength=bins)
    swaps = np.bincount(index, weights=((d1 * d2) < 0).ravel(), minlength=bins)
    return np.rint(swaps).astype(np.int64), count.astype(np.int64)


def _all_splits(n: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    total = math.comb(n, c) * math.comb(n - c, c)
    if total > 2_000_000:
        raise PdevalError(f"n_resamples='all' would enumerate {total} splits of {n} topics; draw random trials instead (an integer n_resamples)")
    q1, q2 = [], []
    for first in itertools.combinations(range(n), c):
        rest = [t for t in range(n) if t not in first]
        for second in itertools.combinations(rest, c):
            q1.append(first)
            q2.append(second)
    return np.asarray(q1, dtype=np.int64).reshape(-1, c), np.asarray(q2, dtype=np.int64).reshape(-1, c)


def swap_counts(
    scores: np.ndarray,
    *,
    c: int,
    n_resamples: Union[int, Literal["all"]] = 1000,
    seed: Seed = 0,
    bin_width: float = 0.01,
    bins: int = 21,
    progress: Optional[bool] = None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Swap and trial counts per bin for a runs x topics matrix (MEASURES.md E9, steps 1-2).

    Each trial is a random permutation of the topics (``rng.random`` keys, argsorted):
    Q1 = its first c topics, Q2 = the next c. The same trials serve every unordered run pair
    (X, Y): ``d_k = mean_{Q_k} X - mean_{Q_k} Y``, ``bin = min(bins-1, floor(|d1|/w + 1e-9))``,
    a swap when ``d1 * d2 < 0``. ``n_resamples="all"`` enumerates every ordered pair of
    disjoint c-subsets. Returns ``(swaps, count, number_of_trials)``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    m, n = scores.shape
    # the options' domains are checked by swap_rates' contract; what depends on the data is checked here
    if 2 * c > n:
        raise PdevalError(f"swap_rates(): c={c} needs 2c <= the number of topics ({n}): two disjoint sets of c "
                          f"topics; pass c <= {n // 2}")
    if m < 2:
        raise PdevalError("swap rates need at least two runs")
    n_pairs = m * (m - 1) // 2
    chunk = max(1, CHUNK_ELEMENTS // max(n_pairs, m * c))
    swaps = np.zeros(bins, dtype=np.int64)
    count = np.zeros(bins, dtype=np.int64)
    if isinstance(n_resamples, str):
        q1_all, q2_all = _all_splits(n, c)
        total = q1_all.shape[0]
        starts = range(0, total, chunk)
        for start in progress_bar(starts, enabled=progress, total=len(starts), desc="swap trials"):
            s, k = _swap_bins(scores, q1_all[start : start + chunk], q2_all[start : start + chunk], bin_width, bins)
            swaps += s
            count += k
        return swaps, count, total
    total = int(n_resamples)
    rng = generator(seed)
    starts = range(0, total, chunk)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="swap trials"):
        size = min(chunk, total - start)
        perm = np.argsort(rng.random((size, n)), axis=1)
        s, k = _swap_bins(scores, perm[:, :c], perm[:, c : 2 * c], bin_width, bins)
        swaps += s
        count += k
    return swaps, count, total


def _difference_required(rate: np.ndarray, count: np.ndarray, threshold: float, rule: str) -> float:
    """Index of the bin giving the difference required (MEASURES.md E9 step 4), or -1."""
    nonempty = count > 0
    ok = nonempty & (rate <= threshold)
    if rule == "first":
        hits = np.flatnonzero(ok)
        return int(hits[0]) if hits.size else -1
    # smallest non-empty bin such that it and every non-empty bin above it are <= threshold
    bad = nonempty & ~ok
    above_bad = np.flatnonzero(bad)
    last_bad = int(above_bad[-1]) if above_bad.size else -1
    hits = np.flatnonzero(nonempty & (np.arange(rate.size) > last_bad))
    return int(hits[0]) if hits.size else -1


@dataclass(repr=False)
class SwapRates(ResultBundle):
    """Result of :func:`swap_rates`; ``to_frame()`` is the summary.

    ``bins``: one row per (measure, variant, bin) with ``bin``, ``lower``, ``upper``
    (bin edges of |d1|; the last bin is open), ``swaps``, ``count``, ``rate`` (NaN for an
    empty bin). ``summary``: one row per (measure, variant) with ``swaps``, ``count``,
    ``rate`` (overall), ``diff_required`` (lower edge of the bin found by ``rule``, NaN
    if none), ``diff_required_pct`` (its percentage of the best run mean), ``best_mean``,
    ``sd_means`` (sd of the run means, ddof=1), ``n_runs``, ``n_pairs``, ``n_topics``,
    ``c``, ``n_resamples`` (trials), ``rule``, ``threshold``.
    """

    bins: pd.DataFrame
    summary: pd.DataFrame


@contract(
    result=Frame("result"),
    c=Integer(1),
    measures=RESULT_MEASURES,
    n_resamples=Integer(1) | Choice("all"),
    seed=SEED,
    bin_width=Real(0, closed="neither"),
    bins=Integer(1),
    threshold=Real(0, 1),
    rule=Choice("all", "first"),
    progress=PROGRESS,
    system=Text("a column name"),
)
@shared_docs
@one_bar
def swap_rates(
    result: pd.DataFrame,
    *,
    c: int = 25,
    measures: Union[None, str, Sequence[str]] = None,
    n_resamples: Union[int, Literal["all"]] = 1000,
    seed: Seed = 0,
    bin_width: float = 0.01,
    bins: int = 21,
    threshold: float = 0.05,
    rule: Literal["all", "first"] = "all",
    progress: Optional[bool] = None,
    system: str = "run",
) -> pd.DataFrame:
    """Swap rates and the difference required (Voorhees & Buckley 2002; MEASURES.md E9).

    For every unordered run pair and each of ``n_resamples`` random splits (trials) of the
    topics into two disjoint sets Q1, Q2 of ``c`` topics (shared by all pairs), the mean
    differences ``d1``, ``d2`` on Q1 and Q2 are computed; the trial falls in bin
    ``min(bins-1, floor(|d1|/bin_width + 1e-9))`` and is a *swap* if ``d1 * d2 < 0``.
    ``rate[bin] = swaps / count``; the overall rate is ``sum swaps / sum count``
    (Voorhees & Buckley, SIGIR 2002, "The effect of topic set size on retrieval experiment
    error").

    Difference required (the lower edge ``i* * bin_width`` of a bin):
    ``rule="all"`` -- the smallest non-empty bin such that it and every non-empty bin above
    it have a rate <= ``threshold``; ``rule="first"`` -- the smallest non-empty bin with a
    rate <= ``threshold``. Ahlgren & Groenqvist (2008, Information Retrieval) also report it
    as a percentage of the best run's mean and the standard deviation (ddof=1) of the run
    means; both are in the summary. Their settings: c = 25 for 50 topics, 1000 trials, every
    run pair.

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values, every run on every topic.
    c : int, default 25
        The size of each of the two topic sets of a trial (``2c <= n`` topics).
    measures : str or list of str, optional
        The measure(s) to analyse (default: all). Each (measure, variant) group is a separate
        analysis with the same ``seed``.
    n_resamples : int or 'all', default 1000
        The number of random trials, or ``"all"`` to enumerate every ordered pair of disjoint
        c-subsets (small examples).
    {seed}
    bin_width : float, default 0.01
        The width of the bins of ``|d1|``.
    bins : int, default 21
        The number of bins (the last one is open).
    threshold : float, default 0.05
        The swap rate a bin may have.
    rule : {'all', 'first'}, default 'all'
        How the difference required is found (above).
    {progress}
    {system}

    Returns
    -------
    DataFrame
        The summary, one row per (measure, variant): ``swaps``, ``count``, ``rate``
        (overall), ``diff_required`` (NaN if no bin qualifies), ``diff_required_pct``,
        ``best_mean``, ``sd_means``, ``n_runs``, ``n_pairs``, ``n_topics``, ``c``,
        ``n_resamples`` (trials), ``rule``, ``threshold``. Its attribute ``.bins`` is the
        frame of the bins: ``bin``, ``lower``, ``upper``, ``swaps``, ``count``, ``rate``
        (see :class:`SwapRates`); ``.summary`` is the summary as a plain frame.

    Raises
    ------
    PdevalError
        An option outside its domain, ``2c`` more than the topics, fewer than two runs.
    SchemaError
        A missing measure, or a run without a value on some topic.

    See Also
    --------
    discriminative_power : The share of run pairs a bootstrap test tells apart.
    compare : Paired significance tests between runs.

    Examples
    --------
    >>> clef = pdeval.datasets.load("clef2018")
    >>> result = pdeval.evaluate(clef.runs, clef.qrels, ["AP", "P@10"])
    >>> swaps = pdeval.swap_rates(result, c=6, n_resamples=100, progress=False)
    >>> swaps.sort_values("rate")[["measure", "rate", "diff_required"]].round(3)
      measure   rate  diff_required
    0      AP  0.138           0.05
    1    P@10  0.214            NaN
    >>> list(swaps.bins.columns)
    ['measure', 'bin', 'lower', 'upper', 'swaps', 'count', 'rate']
    """
    bin_rows, summary_rows = [], []
    variant_names: list[str] = []
    for group in score_matrices(result, measures, system=system):
        variant_names = list(group.variant)
        swaps, count, total = swap_counts(
            group.scores, c=c, n_resamples=n_resamples, seed=seed, bin_width=bin_width, bins=bins, progress=progress
        )
        with np.errstate(divide="ignore", invalid="ignore"):
            rate = np.where(count > 0, swaps / np.maximum(count, 1), np.nan)
        index = _difference_required(rate, count, threshold, rule)
        means = group.scores.mean(axis=1)
        best = float(means.max())
        d_req = index * bin_width if index >= 0 else float("nan")
        keys = (group.measure, *group.variant.values())
        lower = np.arange(bins) * bin_width
        upper = np.append(lower[1:], np.inf)
        for b in range(bins):
            bin_rows.append((*keys, b, lower[b], upper[b], int(swaps[b]), int(count[b]), rate[b]))
        m = group.scores.shape[0]
        summary_rows.append(
            (
                *keys,
                int(swaps.sum()),
                int(count.sum()),
                swaps.sum() / count.sum(),
                d_req,
                d_req / best * 100.0 if best != 0 else float("nan"),
                best,
                float(np.std(means, ddof=1)) if m > 1 else float("nan"),
                m,
                m * (m - 1) // 2,
                group.scores.shape[1],
                c,
                total,
                rule,
                threshold,
            )
        )
    keys = ["measure", *variant_names]
    bins_frame = pd.DataFrame(bin_rows, columns=[*keys, "bin", "lower", "upper", "swaps", "count", "rate"])
    summary = pd.DataFrame(
        summary_rows,
        columns=[
            *keys,
            "swaps",
            "count",
            "rate",
            "diff_required",
            "diff_required_pct",
            "best_mean",
            "sd_means",
            "n_runs",
            "n_pairs",
            "n_topics",
            "c",
            "n_resamples",
            "rule",
            "threshold",
        ],
    )
    return ResultFrame.of(SwapRates(bins_frame, summary))

