"""Paired significance tests, bootstrap discriminative power and swap rates.

* :func:`swap_rates` -- Voorhees & Buckley (2002) swap / error rates with the settings of
  Ahlgren & Groenqvist (2008) (MEASURES.md E9);
* :func:`discriminative_power` -- Sakai's (2006) paired bootstrap test and discriminative
  power, as used in Sakai (2007) (MEASURES.md E10); :func:`paired_bootstrap` is the same
  computation on given bootstrap index vectors;
* :func:`compare` -- paired tests between runs (t, Wilcoxon, sign, permutation, bootstrap)
  with multiple-comparison corrections (:func:`adjust_pvalues`).

All of them take a tidy result frame with per-topic values (key columns ``run``,
``query_id``, optional variant keys such as ``level``/``sample``; ``measure``, ``value``).
Each (measure, variant) group is analysed separately; inside a group every run must have a
value for every topic (a *score matrix* runs x topics, see :func:`score_matrices`).

Computations are vectorised over run pairs and over trials / replicates (numpy), chunked
so that memory stays bounded; randomness comes from ``np.random.default_rng(seed)``.
"""

from __future__ import annotations

import itertools
import math
import numbers
import warnings
from dataclasses import dataclass
from typing import Iterator, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.evaluation.results import ScoreMatrix, score_matrices, split_keys  # noqa: F401 (shared)
from pdeval.errors import PdevalError, SchemaError
from pdeval.frames.canonical import as_result
from pdeval.common.options import check_choice, check_int
from pdeval.common.progress import progress_bar

__all__ = [
    "ScoreMatrix",
    "score_matrices",
    "swap_rates",
    "swap_counts",
    "SwapRates",
    "discriminative_power",
    "paired_bootstrap",
    "bootstrap_replicates",
    "DiscriminativePower",
    "compare",
    "adjust_pvalues",
    "baseline_pairs",
]

#: |mean| and sd below this are treated as 0 in studentised statistics (MEASURES.md E10)
ZERO = 1e-12
#: target number of float64 elements of one chunk of a vectorised computation (~32 MB)
CHUNK_ELEMENTS = 4_000_000

Seed = Union[int, np.random.Generator, None]


def _rng(seed: Seed) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(_check_seed(seed))


def _check_seed(seed: Seed) -> Seed:
    """Refuse a seed numpy would reject (or misread) before any work is done."""
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if not isinstance(seed, numbers.Integral) or isinstance(seed, bool) or seed < 0:
        raise PdevalError(f"seed must be a non-negative integer, a numpy Generator or None, not {seed!r}")
    return seed


def _check_count(name: str, value: object) -> int:
    if not isinstance(value, numbers.Integral) or isinstance(value, bool) or value < 1:
        raise PdevalError(f"{name} must be a positive integer, not {value!r}")
    return int(value)


def _check_share(name: str, value: object) -> float:
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0 < value < 1:
        raise PdevalError(f"{name} must be a number in (0, 1), not {value!r}")
    return float(value)


def _pair_indices(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Unordered pairs (i < j) in input order: (0,1), (0,2), ..., (1,2), ..."""
    return np.triu_indices(m, k=1)


def baseline_pairs(runs: Sequence, baselines: Union[str, Sequence[str]], where: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(run, baseline) index pairs: each baseline in the given order against every run in input
    order, except itself and the baselines before it (a pair of baselines appears once).

    An unknown baseline raises :class:`~pdeval.errors.SchemaError` naming it and the runs.
    """
    wanted = [baselines] if isinstance(baselines, str) else list(baselines)
    if not wanted:
        raise PdevalError("baselines must name at least one run")
    if len(set(wanted)) != len(wanted):
        raise PdevalError(f"baselines repeat a run: {wanted}")
    index = {r: k for k, r in enumerate(runs)}
    missing = [b for b in wanted if b not in index]
    if missing:
        named = ", ".join(repr(b) for b in missing)
        raise SchemaError(f"baseline {named} is not a run of {where or 'the result'}; runs: {list(runs)[:10]}")
    positions = np.array([index[b] for b in wanted], dtype=np.int64)
    m = len(runs)
    # keep[k, i]: run i is compared with baseline k unless it is baseline k or an earlier one
    keep = np.ones((positions.size, m), dtype=bool)
    earlier = np.tril(np.ones((positions.size, positions.size), dtype=bool))
    keep[:, positions] = ~earlier  # earlier[k, l]: baseline l is k or comes before it
    kk, ii = np.nonzero(keep)
    return ii, positions[kk]


# ---------------------------------------------------------------------------------------
# swap rates (E9)
# ---------------------------------------------------------------------------------------


def _swap_bins(
    scores: np.ndarray, q1: np.ndarray, q2: np.ndarray, bin_width: float, bins: int
) -> tuple[np.ndarray, np.ndarray]:
    """(swaps, count) per bin for a chunk of trials; q1, q2: (trials, c) topic indices."""
    ii, jj = _pair_indices(scores.shape[0])
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
        raise PdevalError(f"trials='all' would enumerate {total} splits of {n} topics; draw random trials instead")
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
    trials: Union[int, Literal["all"]] = 1000,
    seed: Seed = 0,
    bin_width: float = 0.01,
    bins: int = 21,
    progress: bool = False,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Swap and trial counts per bin for a runs x topics matrix (MEASURES.md E9, steps 1-2).

    Each trial is a random permutation of the topics (``rng.random`` keys, argsorted):
    Q1 = its first c topics, Q2 = the next c. The same trials serve every unordered run pair
    (X, Y): ``d_k = mean_{Q_k} X - mean_{Q_k} Y``, ``bin = min(bins-1, floor(|d1|/w + 1e-9))``,
    a swap when ``d1 * d2 < 0``. ``trials="all"`` enumerates every ordered pair of disjoint
    c-subsets. Returns ``(swaps, count, number_of_trials)``.
    """
    scores = np.asarray(scores, dtype=np.float64)
    m, n = scores.shape
    _check_seed(seed)
    c = _check_count("c", c)
    bins = _check_count("bins", bins)
    if not trials == "all":
        _check_count("trials", trials)
    if not isinstance(bin_width, numbers.Real) or not bin_width > 0:
        raise PdevalError(f"bin_width must be a positive number, not {bin_width!r}")
    if c < 1 or 2 * c > n:
        raise PdevalError(f"topic set size c={c} needs 1 <= c and 2c <= number of topics ({n})")
    if m < 2:
        raise PdevalError("swap rates need at least two runs")
    n_pairs = m * (m - 1) // 2
    chunk = max(1, CHUNK_ELEMENTS // max(n_pairs, m * c))
    swaps = np.zeros(bins, dtype=np.int64)
    count = np.zeros(bins, dtype=np.int64)
    if isinstance(trials, str):
        if trials != "all":
            raise PdevalError(f"trials must be a positive integer or 'all', not {trials!r}")
        q1_all, q2_all = _all_splits(n, c)
        total = q1_all.shape[0]
        starts = range(0, total, chunk)
        for start in progress_bar(starts, enabled=progress, total=len(starts), desc="swap trials"):
            s, k = _swap_bins(scores, q1_all[start : start + chunk], q2_all[start : start + chunk], bin_width, bins)
            swaps += s
            count += k
        return swaps, count, total
    total = check_int("trials", trials, 1)  # 2.5 or "10" would be truncated or raise a bare ValueError
    rng = _rng(seed)
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


@dataclass
class SwapRates:
    """Result of :func:`swap_rates`.

    ``bins``: one row per (measure, variant, bin) with ``bin``, ``lower``, ``upper``
    (bin edges of |d1|; the last bin is open), ``swaps``, ``count``, ``rate`` (NaN for an
    empty bin). ``summary``: one row per (measure, variant) with ``swaps``, ``count``,
    ``rate`` (overall), ``diff_required`` (lower edge of the bin found by ``rule``, NaN
    if none), ``diff_required_pct`` (its percentage of the best run mean), ``best_mean``,
    ``sd_means`` (sd of the run means, ddof=1), ``n_runs``, ``n_pairs``, ``n_topics``,
    ``c``, ``trials``, ``rule``, ``threshold``.
    """

    bins: pd.DataFrame
    summary: pd.DataFrame

    def to_dict(self) -> dict:
        return {"bins": self.bins, "summary": self.summary}


def swap_rates(
    result: pd.DataFrame,
    measure: Union[None, str, Sequence[str]] = None,
    *,
    c: int = 25,
    trials: Union[int, Literal["all"]] = 1000,
    seed: Seed = 0,
    bin_width: float = 0.01,
    bins: int = 21,
    threshold: float = 0.05,
    rule: Literal["all", "first"] = "all",
    progress: bool = True,
    system: str = "run",
) -> SwapRates:
    """Swap rates and the difference required (Voorhees & Buckley 2002; MEASURES.md E9).

    For every unordered run pair and each of ``trials`` random splits of the topics into
    two disjoint sets Q1, Q2 of ``c`` topics (shared by all pairs), the mean differences
    ``d1``, ``d2`` on Q1 and Q2 are computed; the trial falls in bin
    ``min(bins-1, floor(|d1|/bin_width + 1e-9))`` and is a *swap* if ``d1 * d2 < 0``.
    ``rate[bin] = swaps / count``; the overall rate is ``sum swaps / sum count``.

    Difference required (the lower edge ``i* * bin_width`` of a bin):
    ``rule="all"`` -- the smallest non-empty bin such that it and every non-empty bin above
    it have a rate <= ``threshold``; ``rule="first"`` -- the smallest non-empty bin with a
    rate <= ``threshold``. Ahlgren & Groenqvist (2008) also report it as a percentage of the
    best run's mean and the standard deviation (ddof=1) of the run means; both are in the
    summary. Their settings: c = 25 for 50 topics, 1000 trials, every run pair.

    ``measure`` selects the measure(s) (default: all); each (measure, variant) group is a
    separate analysis with the same ``seed``. ``trials="all"`` enumerates every ordered pair
    of disjoint c-subsets (small examples). Returns a :class:`SwapRates`.
    """
    check_choice("rule", rule, ("all", "first"))
    if bin_width <= 0 or bins < 1:
        raise PdevalError("bin_width must be > 0 and bins >= 1")
    bin_rows, summary_rows = [], []
    variant_names: list[str] = []
    for group in score_matrices(result, measure, system=system):
        variant_names = list(group.variant)
        swaps, count, total = swap_counts(
            group.scores, c=c, trials=trials, seed=seed, bin_width=bin_width, bins=bins, progress=progress
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
            "trials",
            "rule",
            "threshold",
        ],
    )
    return SwapRates(bins_frame, summary)


# ---------------------------------------------------------------------------------------
# paired bootstrap (E10)
# ---------------------------------------------------------------------------------------


def _studentised(mean: np.ndarray, sd: np.ndarray, n: int) -> np.ndarray:
    """mean / (sd / sqrt(n)); sd = 0 gives 0 if mean = 0 else +-inf (|x| < 1e-12 is 0)."""
    mean = np.where(np.abs(mean) < ZERO, 0.0, mean)
    zero_sd = sd < ZERO
    with np.errstate(divide="ignore", invalid="ignore"):
        t = mean / (sd / math.sqrt(n))
    if zero_sd.any():
        t = np.where(zero_sd, np.where(mean == 0, 0.0, np.copysign(np.inf, mean)), t)
    return t


def _chunk_size(rows: int, n: int) -> int:
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
    chunk = _chunk_size(p, n)
    starts = range(0, indices.shape[0], chunk)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="bootstrap"):
        sample = w[:, indices[start : start + chunk]]  # pairs x chunk x n
        mean = sample.mean(axis=2)
        dev = sample - mean[:, :, None]
        sd = np.sqrt(np.einsum("pbn,pbn->pb", dev, dev) / (n - 1))
        yield start, mean, _studentised(mean, sd, n)


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
    _check_share("alpha", alpha)
    m, n = scores.shape
    runs = list(range(m)) if runs is None else list(runs)
    ii, jj = _pair_indices(m)
    z, indices = _check_indices(scores[ii] - scores[jj], indices)
    zbar = z.mean(axis=1)
    t_obs = np.abs(_studentised(zbar, z.std(axis=1, ddof=1), n))
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
            "t": _studentised(zbar, z.std(axis=1, ddof=1), n),
            "asl": asl,
            "significant": asl < alpha,
            "delta": delta,
        }
    )


def _round_significant(x: float, digits: int = 2) -> float:
    if not np.isfinite(x) or x == 0:
        return x
    return float(f"{x:.{digits}g}")


@dataclass
class DiscriminativePower:
    """Result of :func:`discriminative_power`.

    ``pairs``: one row per (measure, variant, run pair) -- see :func:`paired_bootstrap`.
    ``summary``: one row per (measure, variant) with ``significant`` (pairs with
    ASL < alpha), ``pairs`` (m(m-1)/2), ``power`` (their ratio), ``label`` (Sakai's
    "174/435 = 40.0%"), ``diff_required`` (max over pairs of delta), ``diff_required_2sig``
    (rounded to 2 significant digits, as Sakai reports it), ``n_runs``, ``n_topics``,
    ``B``, ``alpha``.
    """

    pairs: pd.DataFrame
    summary: pd.DataFrame

    def to_dict(self) -> dict:
        return {"pairs": self.pairs, "summary": self.summary}


def discriminative_power(
    result: pd.DataFrame,
    *,
    alpha: float = 0.05,
    B: int = 1000,
    seed: Seed = 0,
    measures: Union[None, str, Sequence[str]] = None,
    progress: bool = True,
    system: str = "run",
) -> DiscriminativePower:
    """Discriminative power by Sakai's paired bootstrap test (Sakai 2006, 2007; MEASURES.md E10).

    For each (measure, variant) group: B bootstrap index vectors (n topic indices drawn
    with replacement by ``np.random.default_rng(seed).integers``) are shared by every run
    pair -- and, for groups with the same number of topics, by every measure, so measures
    are compared on the same replicates. Each pair gets its achieved significance level
    (:func:`paired_bootstrap`); the discriminative power is the share of pairs with
    ``ASL < alpha``, the difference required the largest ``delta`` over pairs.

    Vectorised over pairs and replicates (chunked over replicates); the same seed gives the
    same output. Returns a :class:`DiscriminativePower`.
    """
    B = _check_count("B", B)
    _check_share("alpha", alpha)
    _check_seed(seed)
    index_cache: dict[int, np.ndarray] = {}
    pair_frames, summary_rows = [], []
    variant_names: list[str] = []
    for group in score_matrices(result, measures, system=system):
        variant_names = list(group.variant)
        m, n = group.scores.shape
        if m < 2:
            raise PdevalError(f"measure {group.measure!r} {group.variant}: at least two runs are needed")
        if n not in index_cache:
            index_cache[n] = _rng(seed).integers(0, n, size=(B, n))
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
                B,
                alpha,
            )
        )
    keys = ["measure", *variant_names]
    summary = pd.DataFrame(
        summary_rows,
        columns=[*keys, "significant", "pairs", "power", "label", "diff_required", "diff_required_2sig", "n_runs", "n_topics", "B", "alpha"],
    )
    pairs = pd.concat(pair_frames, ignore_index=True) if pair_frames else pd.DataFrame()
    return DiscriminativePower(pairs, summary)


# ---------------------------------------------------------------------------------------
# paired tests between runs
# ---------------------------------------------------------------------------------------


#: the paired tests of :func:`compare` and the corrections of :func:`adjust_pvalues`
TESTS = ("t", "wilcoxon", "sign", "permutation", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh")


def check_test(test, correction) -> None:
    """Refuse a test name (``None``: not checked) or a correction that pdeval does not know."""
    if test is not None and test not in TESTS:
        raise PdevalError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if correction is not None and correction not in CORRECTIONS:
        raise PdevalError(f"correction must be {', '.join(map(repr, CORRECTIONS))} or None, not {correction!r}")


def adjust_pvalues(p: Sequence[float], method: Optional[str] = "holm") -> np.ndarray:
    """Multiple-comparison adjusted p-values (NaN entries are left out of the family).

    * ``bonferroni``: ``min(1, m p_i)``;
    * ``holm`` (Holm 1979): sorted ascending, ``max_{j <= i} min(1, (m - j + 1) p_(j))``;
    * ``fdr_bh`` (Benjamini & Hochberg 1995): sorted ascending,
      ``min_{j >= i} min(1, m p_(j) / j)``;
    * ``None``: unchanged.
    """
    p = np.asarray(p, dtype=np.float64)
    if method is None:
        return p.copy()
    check_test(None, method)
    out = np.full(p.shape, np.nan)
    valid = ~np.isnan(p)
    q = p[valid]
    m = q.size
    if m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, q * m)
        return out
    order = np.argsort(q, kind="stable")
    ranks = np.arange(1, m + 1)
    sorted_p = q[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - ranks + 1) * sorted_p))
    else:
        adjusted = np.minimum.accumulate((m * sorted_p / ranks)[::-1])[::-1]
        adjusted = np.minimum(1.0, adjusted)
    back = np.empty(m)
    back[order] = adjusted
    out[valid] = back
    return out


def _sign_test_p(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Exact two-sided binomial (p = 1/2) p-value: min(1, 2 P(X <= min(k, n-k)))."""
    from scipy.stats import binom

    k = np.asarray(k)
    n = np.asarray(n)
    p = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(k, n - k), n, 0.5))
    return np.where(n > 0, p, 1.0)


def _t_interval(diff: np.ndarray, sd: np.ndarray, n: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    from scipy.stats import t as student

    half = student.ppf(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)
    return diff - half, diff + half


def _permutation_p(z: np.ndarray, permutations: int, rng: np.random.Generator, progress: bool) -> np.ndarray:
    """Two-sided sign-flip permutation p-values of the mean difference, per row of z.

    Exact over all 2^n sign vectors when 2^n <= permutations; otherwise ``permutations``
    random sign vectors shared by all pairs and ``p = (1 + #{|mean*| >= |mean|}) / (1 + P)``
    (Phipson & Smyth 2010).
    """
    p, n = z.shape
    observed = np.abs(z.mean(axis=1)) - 1e-12
    exact = n <= 30 and 2**n <= permutations
    total = 2**n if exact else permutations
    chunk = _chunk_size(p, 1) if p else 1
    chunk = max(1, min(chunk, CHUNK_ELEMENTS // max(1, n)))
    hits = np.zeros(p, dtype=np.int64)
    starts = range(0, total, chunk)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="permutations"):
        size = min(chunk, total - start)
        if exact:
            codes = np.arange(start, start + size, dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(n)) & 1)
        else:
            signs = 1.0 - 2.0 * (rng.random((size, n)) < 0.5)
        means = z @ signs.T / n  # pairs x size
        hits += (np.abs(means) >= observed[:, None]).sum(axis=1)
    return hits / total if exact else (hits + 1) / (total + 1)


TestName = Literal["t", "wilcoxon", "sign", "permutation", "bootstrap"]

#: number of topics from which :func:`compare` notes that Wilcoxon and sign tests are over-sensitive
LARGE_TOPICS = 1000


def _oversensitivity_note(test: str, n: int, large_topics: Optional[int]) -> str:
    """The ``note`` of a Wilcoxon / sign test on ``n >= large_topics`` topics, else ``""``."""
    if test not in ("wilcoxon", "sign") or large_topics is None or n < large_topics:
        return ""
    return (
        f"{n} topics: with this many topics the {test} test rejects true null hypotheses of equal "
        "means far more often than alpha (Ihemelandu & Ekstrand, SIGIR 2023); prefer test='t', "
        "'permutation' or 'bootstrap'"
    )


def compare(
    result: pd.DataFrame,
    *,
    baseline: Union[None, str, Sequence[str]] = None,
    test: TestName = "t",
    correction: Optional[Literal["holm", "bonferroni", "fdr_bh"]] = "holm",
    alpha: float = 0.05,
    seed: Seed = 0,
    measures: Union[None, str, Sequence[str]] = None,
    permutations: int = 10000,
    B: int = 1000,
    confidence: float = 0.95,
    progress: bool = False,
    system: str = "run",
    large_topics: Optional[int] = LARGE_TOPICS,
) -> pd.DataFrame:
    """Paired significance tests between runs, per measure and variant.

    Pairs: each run against ``baseline`` if given (columns ``run``, ``baseline``), else every
    unordered pair in input order (``run_a``, ``run_b``). ``baseline`` may name several runs:
    each is compared with every other run (a pair of baselines once, see
    :func:`baseline_pairs`), and the correction runs over all these comparisons of a
    (measure, variant). With per-topic differences
    ``z = a - b`` over the n topics:

    ``t``
        paired t-test (Student 1908; ``scipy.stats.ttest_rel``);
    ``wilcoxon``
        Wilcoxon signed-rank test (Wilcoxon 1945; ``scipy.stats.wilcoxon``, zero
        differences dropped; all-zero differences give p = 1);
    ``sign``
        exact two-sided binomial test on the signs of the nonzero differences;
    ``permutation``
        two-sided sign-flip randomisation test of the mean difference (exact over all 2^n
        flips when 2^n <= ``permutations``; else ``permutations`` random flips shared by
        all pairs, ``p = (1 + hits) / (1 + permutations)``);
    ``bootstrap``
        Sakai's (2006) studentised paired bootstrap (:func:`paired_bootstrap`, ``B``
        replicates shared by all pairs); p = ASL.

    Columns: ``measure``, variant keys, the pair columns, ``n_topics``, ``mean_a``,
    ``mean_b``, ``diff`` (mean of z), ``effect_size`` (paired Cohen's d = mean(z) / sd(z),
    ddof=1), ``ci_low``, ``ci_high`` (``confidence`` interval of the mean difference:
    percentile bootstrap for ``bootstrap``, Student t otherwise), ``statistic``
    (t, Wilcoxon's T, #positive signs, mean difference, t(z)), ``p_value``, ``p_adjusted``
    (``correction`` over the pairs of each (measure, variant) family), ``significant``
    (``p_adjusted < alpha``), ``test``, ``note``.

    ``note`` is empty except for the Wilcoxon and sign tests on ``large_topics`` topics or
    more: Ihemelandu & Ekstrand (SIGIR 2023, "Inference at scale") found that on large query
    samples these tests reject a true null hypothesis of equal means far more often than
    ``alpha`` (they test medians / symmetry, which rarely hold exactly), while t, permutation
    and bootstrap tests keep their error rate. The test is still run; the note says so. The
    default of 1000 topics is pdeval's choice (their experiments used thousands of queries),
    ``None`` turns the note off.
    """
    from scipy import stats

    check_test(test, correction)
    _check_share("confidence", confidence)
    _check_share("alpha", alpha)
    _check_count("permutations", permutations)
    _check_count("B", B)
    _check_seed(seed)
    frames = []
    for group in score_matrices(result, measures, system=system):
        scores, runs = group.scores, group.runs
        m, n = scores.shape
        if baseline is not None:
            ii, jj = baseline_pairs(runs, baseline, f"measure {group.measure!r} {group.variant}")
            pair_columns = {"run": [runs[i] for i in ii], "baseline": [runs[j] for j in jj]}
        else:
            ii, jj = _pair_indices(m)
            pair_columns = {"run_a": [runs[i] for i in ii], "run_b": [runs[j] for j in jj]}
        if ii.size == 0:
            continue
        a, b_ = scores[ii], scores[jj]
        z = a - b_
        diff = z.mean(axis=1)
        sd = z.std(axis=1, ddof=1) if n > 1 else np.full(ii.size, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = diff / sd
            ci_low, ci_high = _t_interval(diff, sd, n, confidence)
        rng = _rng(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            if test == "t":
                res = stats.ttest_rel(a, b_, axis=1)
                statistic, p_value = np.asarray(res.statistic, float), np.asarray(res.pvalue, float)
            elif test == "wilcoxon":
                res = stats.wilcoxon(z, axis=1, zero_method="wilcox")
                statistic, p_value = np.asarray(res.statistic, float), np.asarray(res.pvalue, float)
                p_value = np.where((z == 0).all(axis=1), 1.0, p_value)
            elif test == "sign":
                positive = (z > 0).sum(axis=1)
                nonzero = (z != 0).sum(axis=1)
                statistic, p_value = positive.astype(float), _sign_test_p(positive, nonzero)
            elif test == "permutation":
                statistic, p_value = diff, _permutation_p(z, int(permutations), rng, progress)
            else:
                indices = rng.integers(0, n, size=(int(B), n))
                t_obs = _studentised(diff, sd, n)
                _, tstar = bootstrap_replicates(z, indices, progress=progress)
                p_value = (np.abs(tstar) >= np.abs(t_obs)[:, None]).mean(axis=1)
                statistic = t_obs
                # percentile interval of the (not null-shifted) bootstrap mean difference
                replicate = np.repeat(np.arange(indices.shape[0], dtype=np.int64), n)
                counts = np.bincount(replicate * n + indices.ravel(), minlength=indices.size).reshape(-1, n)
                boot_means = z @ counts.T.astype(np.float64) / n
                lo = (1.0 - confidence) / 2.0
                ci_low, ci_high = np.quantile(boot_means, [lo, 1.0 - lo], axis=1)
        frame = pd.DataFrame(
            {
                "measure": group.measure,
                **{k: [v] * ii.size for k, v in group.variant.items()},
                **pair_columns,
                "n_topics": n,
                "mean_a": a.mean(axis=1),
                "mean_b": b_.mean(axis=1),
                "diff": diff,
                "effect_size": effect,
                "ci_low": ci_low,
                "ci_high": ci_high,
                "statistic": statistic,
                "p_value": p_value,
            }
        )
        frame["p_adjusted"] = adjust_pvalues(frame["p_value"].to_numpy(), correction)
        frame["significant"] = frame["p_adjusted"].to_numpy() < alpha
        frame["test"] = test
        frame["note"] = _oversensitivity_note(test, n, large_topics)
        frames.append(frame)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)
