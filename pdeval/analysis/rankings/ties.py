"""Near ties of the reference: the bounds of a coefficient over the orders the topics leave open.

The population coefficient counts, for every two systems, whether the judge orders them as the
*population* reference does. When two reference means differ by less than the noise of their
difference, the topics do not tell that order: the sample's order, and every resample's, is close
to a coin flip, so the sample coefficient and its bootstrap replicates are centred between the two
possible values while the truth is one of them. Neither the bootstrap (whose replicates flip the
pair again around the sample) nor SIMEX (whose curve is already flat at the sample's noise, the pair
being flipped at every level) sees that bias. It is the bias of a non-differentiable functional,
which no locally unbiased estimator removes (Hirano & Porter, Econometrica 2012); intervals that
cover such a parameter uniformly hold every value the data cannot exclude, as for a partially
identified parameter (Imbens & Manski, Econometrica 2004) and for confidence sets of ranks
(Mogstad, Romano, Shaikh & Wilhelm, Review of Economic Studies 2024, which project over all
orders consistent with the pairwise comparisons).

On a cutoff coefficient (``tau_b@10``: 45 pairs of 10 systems, each 1/45 of tau) two or three such
pairs move the coefficient by more than its standard error, and the paired difference of two judges
gains twice that where the judges disagree on the pair. Here a reference's *near ties* are the runs
of systems within :data:`NEAR` standard errors of the difference of their per-topic scores
(:func:`gap_errors`) from the run's highest system (walking down the reference's order; runs do not
chain, so a crowded leaderboard splits into short runs). On every resample the reference is
*resolved* both ways (:func:`resolve`): within each run its values are handed out in the judge's
order (the highest coefficient those orders allow) or in the reverse order (the lowest); for the
difference of judges A and B, in the order of ``A - B`` and of ``B - A``. The interval
``"bounds"`` is the hull of the ``"hull"`` interval (percentile and SIMEX) with the low quantile of
the lower and the high quantile of the upper replicates (the bootstrap of the bounds, as Imbens &
Manski's interval takes each bound's own quantile). Orders are resolved by sorting, one batch for
all resamples (and pairs, in blocks); systems outside a comparison keep their place.
"""

from __future__ import annotations

import numpy as np

from pdeval.analysis.rankings.batched import rows_coefficients

__all__ = ["NEAR", "bound_replicates", "gap_errors", "near_runs", "pair_bound_replicates", "resolve"]

#: two adjacent reference systems are near-tied when their gap is within this many standard errors
NEAR = 1.0

#: elements of one block of resampled leaderboards of pairs
_BLOCK = 1 << 21


def gap_errors(ref_cube: np.ndarray) -> np.ndarray:
    """(R, S, S) standard errors of the difference of two systems' mean scores, per reference row
    of a (R, T, S) cube (NaN for absent): from the covariance of the per-topic scores over the
    topics the row has (a system's missing topics add nothing)."""
    present = np.isfinite(ref_cube)
    count = present.sum(axis=1)  # (R, S)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.where(count > 0, np.where(present, ref_cube, 0.0).sum(axis=1) / np.maximum(count, 1), 0.0)
    dev = np.where(present, ref_cube - mean[:, None, :], 0.0)
    topics = np.maximum(present.any(axis=2).sum(axis=1), 2).astype(np.float64)  # (R,)
    cov = np.einsum("rts,rtu->rsu", dev, dev) / (topics - 1)[:, None, None]
    var = np.diagonal(cov, axis1=1, axis2=2)
    return np.sqrt(np.clip(var[:, :, None] + var[:, None, :] - 2.0 * cov, 0.0, None) / topics[:, None, None])


def near_runs(ordered: np.ndarray, order: np.ndarray, errors: np.ndarray) -> np.ndarray:
    """Run number (0, 1, ...) of each position of the rows ``ordered`` (G, B, S; descending, NaN
    last, ``order`` their systems): a run starts at the highest system not yet in one and holds the
    systems below it within ``NEAR`` standard errors (``errors`` (G, S, S)) of their difference to it.
    The walk down the positions advances every row in lockstep."""
    rows = np.arange(ordered.shape[0])[:, None]
    start = np.zeros(ordered.shape[:-1], dtype=np.int64)
    runs = np.zeros(ordered.shape, dtype=np.int64)
    for position in range(1, ordered.shape[-1]):  # positions, every row at once
        top = np.take_along_axis(ordered, start[..., None], axis=-1)[..., 0]
        head = np.take_along_axis(order, start[..., None], axis=-1)[..., 0]
        near = top - ordered[..., position] <= NEAR * errors[rows, head, order[..., position]]
        start = np.where(near, start, position)
        runs[..., position] = runs[..., position - 1] + ~near
    return runs


def resolve(ref: np.ndarray, score: np.ndarray, errors: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``ref`` (G, B, S) with each run of near-tied systems (:func:`near_runs`; ``errors`` (G, S, S))
    given its values in the order of ``score`` (G, B, S; highest score, highest value); systems
    outside ``mask`` (G, S) keep theirs."""
    n_systems = ref.shape[-1]
    inside = np.where(mask[:, None, :], ref, np.nan)
    order = np.argsort(-inside, axis=-1, kind="stable")  # NaN (outside) last
    ordered = np.take_along_axis(inside, order, axis=-1)
    run_of = np.empty(ref.shape, dtype=np.int64)
    np.put_along_axis(run_of, order, near_runs(ordered, order, errors), axis=-1)
    by_score = np.argsort(np.argsort(-np.where(mask[:, None, :], score, np.nan), axis=-1, kind="stable"), axis=-1)
    placed = np.argsort(run_of * n_systems + by_score, axis=-1, kind="stable")
    out = np.empty_like(ref)
    np.put_along_axis(out, placed, ordered, axis=-1)
    return np.where(mask[:, None, :], out, ref)


def bound_replicates(est: np.ndarray, ref: np.ndarray, errors: np.ndarray, mask: np.ndarray, mask_k: np.ndarray,
                     methods: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """(G, B, M) lower and upper replicates of each group: the coefficients on its resampled
    leaderboards ``est`` against the reference ``ref`` (G, B, S) resolved against and along the
    group's own order."""
    low = rows_coefficients(est, resolve(ref, -est, errors, mask), mask, methods, mask_k=mask_k)
    high = rows_coefficients(est, resolve(ref, est, errors, mask), mask, methods, mask_k=mask_k)
    return low, high


def pair_bound_replicates(est: np.ndarray, ref: np.ndarray, errors: np.ndarray, mask: np.ndarray,
                          mask_k: np.ndarray, methods: list[str], first: np.ndarray,
                          second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P, B, M) lower and upper replicates of the differences ``c(first) - c(second)`` of the
    pairs of groups (sharing a reference): the reference resolved in the order of ``B - A`` and
    of ``A - B``, the same order for both coefficients; in blocks of pairs."""
    shape = (first.size, est.shape[1], len(methods))
    low, high = np.full(shape, np.nan), np.full(shape, np.nan)
    step = max(1, _BLOCK // max(1, est.shape[1] * est.shape[2]))
    for start in range(0, first.size, step):  # blocks of pairs, each one batch
        a, b = first[start:start + step], second[start:start + step]
        both, both_k = mask[a] & mask[b], mask_k[a] & mask_k[b]
        for out, sign in ((low, -1.0), (high, 1.0)):
            resolved = resolve(ref[a], sign * (est[a] - est[b]), errors[a], both)
            out[start:start + step] = (rows_coefficients(est[a], resolved, mask[a], methods, mask_k=mask_k[a])
                                       - rows_coefficients(est[b], resolved, mask[b], methods, mask_k=mask_k[b]))
    return low, high
