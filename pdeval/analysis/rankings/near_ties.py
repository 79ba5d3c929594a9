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

On all systems each pair weighs little, but many pairs are near-tied where the reference is crowded,
and the sample coefficient then falls further below the population one than SIMEX's line restores
(in the guide's simulation, on leaderboards of 20-50 systems, the hull covered tau-b of the better judge
at 0.63-0.94 in eleven of eighteen settings and Spearman's rho at 0.90-0.93 in two; the bounds covered
0.96 or more in every setting tried). So ``interval="auto"``
takes the bounds for every rank coefficient and keeps the hull for ``pearson`` and ``rms``.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from pdeval.analysis.rankings.batched import batched, parse_method, rows_coefficients

__all__ = ["NEAR", "bound_replicates", "bounded", "gap_errors", "near_runs", "near_ties", "pair_bound_replicates",
           "resolve"]

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


def near_ties(ref: np.ndarray, errors: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The systems of the rows ``ref`` (G, B, S) in descending order (those outside ``mask`` (G, S)
    last), their values (NaN outside) and their runs (:func:`near_runs`; ``errors`` (G, S, S))."""
    inside = np.where(mask[:, None, :], ref, np.nan)
    order = np.argsort(-inside, axis=-1, kind="stable")  # NaN (outside) last
    ordered = np.take_along_axis(inside, order, axis=-1)
    return order, ordered, near_runs(ordered, order, errors).astype(np.float64)


def _resolved(ties: tuple, score: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """The systems and values of the first ``width`` places of the reference resolved along
    ``score`` (G, B, S): one sort of the positions by their run plus a share in [0, 1/2] that falls
    with the score (equal scores keep their order); systems outside the comparison stay last."""
    order, ordered, runs = (part[..., :width] for part in ties)
    score = np.take_along_axis(score, order, axis=-1)
    inside = np.isfinite(ordered) & np.isfinite(score)
    high = np.max(np.where(inside, score, -np.inf), axis=-1, keepdims=True)
    span = high - np.min(np.where(inside, score, np.inf), axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        share = np.where(span > 0, (high - score) / np.where(span > 0, span, 1.0), 0.0) / 2.0
    placed = np.argsort(np.where(inside, runs + share, np.inf), axis=-1, kind="stable")
    return np.take_along_axis(order, placed, axis=-1), ordered


def resolve(ref: np.ndarray, ties: tuple, score: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """``ref`` (G, B, S) with each run of near-tied systems (``ties``: :func:`near_ties`) given its
    values in the order of ``score`` (G, B, S; highest score, highest value; equal scores by
    position); systems outside ``mask`` (G, S) keep theirs."""
    systems, values = _resolved(ties, score, ref.shape[-1])
    out = np.empty_like(ref)
    np.put_along_axis(out, systems, values, axis=-1)
    return np.where(mask[:, None, :], out, ref)


def _cutoff(ties: tuple, score: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The k systems (ascending, as the columns) and their values at the top of the resolved
    reference: only the places down to the end of the run holding place k count, so only those are
    sorted."""
    runs = ties[2]
    width = int((runs <= runs[..., k - 1:k]).sum(axis=-1).max())
    systems, values = _resolved(ties, score, width)
    columns = np.argsort(systems[..., :k], axis=-1)
    return np.take_along_axis(systems[..., :k], columns, axis=-1), np.take_along_axis(values[..., :k], columns, axis=-1)


def bounded(ests: list, masks: list, ref: np.ndarray, ties: tuple, score: np.ndarray, mask: np.ndarray,
            methods: list[str]) -> list[np.ndarray]:
    """(G, B, M) coefficients of each of ``ests`` (G, B, S; its ``masks``: (mask, mask_k)) against
    ``ref`` resolved along ``score`` within ``mask``. A cutoff coefficient whose comparisons all use
    ``mask`` sorts only the top of the resolved reference (:func:`_cutoff`); the others resolve it
    all (:func:`resolve`) for :func:`pdeval.analysis.rankings.batched.rows_coefficients`."""
    outs = [np.full((*est.shape[:-1], len(methods)), np.nan) for est in ests]
    whole = None
    same = all((own == mask).all() and (own_k == mask).all() for own, own_k in masks)
    for m, method in enumerate(methods):
        base, k = parse_method(method)
        if k is not None and same and k < mask.sum(axis=-1).min():
            systems, values = _cutoff(ties, score, k)
            for out, est in zip(outs, ests):
                chosen = np.take_along_axis(est, systems, axis=-1)
                out[..., m] = batched(base, chosen.reshape(-1, k), values.reshape(-1, k)).reshape(chosen.shape[:-1])
            continue
        whole = resolve(ref, ties, score, mask) if whole is None else whole
        for out, est, (own, own_k) in zip(outs, ests, masks):
            out[..., m] = rows_coefficients(est, whole, own, [method], mask_k=own_k)[..., 0]
    return outs


def bound_replicates(est: np.ndarray, ref: np.ndarray, errors: np.ndarray, mask: np.ndarray, mask_k: np.ndarray,
                     methods: list[str]) -> tuple[np.ndarray, np.ndarray, tuple]:
    """(G, B, M) lower and upper replicates of each group: the coefficients on its resampled
    leaderboards ``est`` against the reference ``ref`` (G, B, S) resolved against and along the
    group's own order; and the near ties (:func:`near_ties`) for the pairs."""
    ties = near_ties(ref, errors, mask)
    low, high = _sides(lambda sign: bounded([est], [(mask, mask_k)], ref, ties, sign * est, mask, methods)[0])
    return low, high, ties


def _sides(side):
    """``side(-1.0)`` and ``side(1.0)``, the lower and the upper replicates, in two threads (numpy's
    comparisons, sums and sorts release the interpreter's lock, so the two halves run side by side)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return tuple(pool.map(side, (-1.0, 1.0)))


def pair_bound_replicates(est: np.ndarray, ref: np.ndarray, errors: np.ndarray, mask: np.ndarray,
                          mask_k: np.ndarray, methods: list[str], ties: tuple, first: np.ndarray,
                          second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(P, B, M) lower and upper replicates of the differences ``c(first) - c(second)`` of the
    pairs of groups (sharing a reference): the reference resolved in the order of ``B - A`` and
    of ``A - B``, the same order for both coefficients; in blocks of pairs. The near ties of the
    first group's (``ties``) serve where the second compares the same systems."""
    shape = (first.size, est.shape[1], len(methods))
    low, high = np.full(shape, np.nan), np.full(shape, np.nan)
    step = max(1, _BLOCK // max(1, est.shape[1] * est.shape[2]))
    for start in range(0, first.size, step):  # blocks of pairs, each one batch
        a, b = first[start:start + step], second[start:start + step]
        both = mask[a] & mask[b]
        near = tuple(part[a] for part in ties) if (both == mask[a]).all() else near_ties(ref[a], errors[a], both)
        masks = [(mask[a], mask_k[a]), (mask[b], mask_k[b])]
        low[start:start + step], high[start:start + step] = _sides(lambda sign: np.subtract(
            *bounded([est[a], est[b]], masks, ref[a], near, sign * (est[a] - est[b]), both, methods)))
    return low, high
