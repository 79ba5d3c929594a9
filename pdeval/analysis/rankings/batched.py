"""Every rank-correlation coefficient on many pairs of leaderboards at once.

The kernels take two ``(R, n)`` arrays -- row ``r`` holds the estimated and the reference
scores of the same ``n`` systems, in the same order -- and return the ``R`` coefficients, with
no loop over rows or systems (the pairwise comparisons are ``(R, n, n)`` arrays, computed in
chunks of rows). :func:`pdeval.rank_correlation` calls them once per set of systems, the topic
bootstrap of :mod:`pdeval.analysis.rankings.intervals` once for all resamples.

The column order matters only for ties in the estimate under ``tau_gap`` (they are broken by
position, that is by system name, as the callers sort the systems by name).

A method name is a coefficient of :data:`BASE_METHODS`, optionally followed by ``@k``
(``"tau_b@10"``): the coefficient on the ``k`` systems that the *reference* ranks highest
(ties at the k-th place broken by position), as the TREC Auto-Judge meta-evaluation's
``kendall@10``.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from pdeval.errors import PdevalError

__all__ = ["BASE_METHODS", "batched", "parse_method", "rows_coefficients", "top_k"]

#: the coefficients, in pdeval's words (tau_b is Kendall's tau-b, tau_ap_b Urbano & Marrero's tau_AP_b)
BASE_METHODS = ("tau_a", "tau_b", "tau_ap", "tau_ap_b", "tau_gap", "spearman", "pearson", "rms")

#: elements of one (rows, n, n) comparison block
_BLOCK = 1 << 21


def parse_method(method: str) -> tuple[str, int | None]:
    """``"tau_b@10"`` -> ``("tau_b", 10)``; ``"tau_b"`` -> ``("tau_b", None)``."""
    base, at, k = str(method).partition("@")
    if base not in BASE_METHODS or (at and not (k.isdigit() and int(k) > 0)):
        raise PdevalError(
            f"unknown comparison method {method!r}; choose from {list(BASE_METHODS)}, "
            "optionally with a positive cutoff as in 'tau_b@10'"
        )
    return base, (int(k) if at else None)


def _chunks(rows: int, n: int):
    step = max(1, _BLOCK // max(1, n * n))
    for start in range(0, rows, step):
        yield slice(start, min(rows, start + step))


def _group_starts(ordered: np.ndarray) -> np.ndarray:
    """For each position of rows sorted ascending, the first position of its tie group."""
    position = np.broadcast_to(np.arange(ordered.shape[1]), ordered.shape)
    starts = np.ones(ordered.shape, dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    return np.maximum.accumulate(np.where(starts, position, 0), axis=1)


def _tied_pairs(v: np.ndarray) -> np.ndarray:
    """Pairs tied in each row, sum over tie groups of t (t - 1) / 2: the k-th member of a group
    (from 0) is tied with the k members before it."""
    ordered = np.sort(v, axis=1)
    return (np.arange(v.shape[1]) - _group_starts(ordered)).sum(axis=1).astype(np.float64)


def _kendall(est: np.ndarray, ref: np.ndarray, variant: str) -> np.ndarray:
    n = est.shape[1]
    n0 = n * (n - 1) / 2.0
    out = np.empty(est.shape[0])
    for part in _chunks(est.shape[0], n):
        e, r = est[part], ref[part]
        above_e = e[:, :, None] > e[:, None, :]
        concordant = np.count_nonzero(above_e & (r[:, :, None] > r[:, None, :]), axis=(1, 2))
        discordant = np.count_nonzero(above_e & (r[:, :, None] < r[:, None, :]), axis=(1, 2))
        s = (concordant - discordant).astype(np.float64)
        if variant == "a":
            out[part] = s / n0
            continue
        den = np.sqrt((n0 - _tied_pairs(e)) * (n0 - _tied_pairs(r)))
        with np.errstate(divide="ignore", invalid="ignore"):
            out[part] = np.where(den > 0, s / np.where(den > 0, den, 1.0), np.nan)
    return out


def _pearson(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    dx = x - x.mean(axis=1, keepdims=True)
    dy = y - y.mean(axis=1, keepdims=True)
    den = np.sqrt((dx * dx).sum(axis=1) * (dy * dy).sum(axis=1))
    num = (dx * dy).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, np.clip(num / np.where(den > 0, den, 1.0), -1.0, 1.0), np.nan)


def _average_ranks(v: np.ndarray) -> np.ndarray:
    """Ranks 1..n per row, ties sharing the mean of their ranks (sorting, O(n log n) per row)."""
    n = v.shape[1]
    order = np.argsort(v, axis=1, kind="stable")
    ordered = np.take_along_axis(v, order, axis=1)
    first = _group_starts(ordered)
    # the last position of each group: the first of the mirrored rows, mirrored back
    last = n - 1 - _group_starts(-ordered[:, ::-1])[:, ::-1]
    ranks = np.empty(v.shape)
    np.put_along_axis(ranks, order, (first + last) / 2.0 + 1.0, axis=1)
    return ranks


def _spearman(est: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return _pearson(_average_ranks(est), _average_ranks(ref))


def _rms(est: np.ndarray, ref: np.ndarray) -> np.ndarray:
    return np.sqrt(((est - ref) ** 2).mean(axis=1))


def _tau_ap(est: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """pdeval's tau_AP (Yilmaz et al. 2008, ties by expectation; see coefficients.tau_ap)."""
    rows, n = est.shape
    h = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n + 1))))

    def harmonic(m):
        return h[np.clip(m, 0, None)]

    out = np.empty(rows)
    for part in _chunks(rows, n):
        e, r = est[part], ref[part]
        c = (r[:, :, None] > r[:, None, :]) + 0.5 * (r[:, :, None] == r[:, None, :])
        above = e[:, :, None] > e[:, None, :]  # [r, j, i]: j strictly above i
        a = (c * above).sum(axis=1)
        p = 1 + above.sum(axis=1)
        t = (e[:, :, None] == e[:, None, :]).sum(axis=1)
        total = (a * (harmonic(p + t - 2) - harmonic(p - 2)) / t).sum(axis=1)
        within = 0.5 * ((t - 1) - (p - 1) * (harmonic(p + t - 2) - harmonic(p - 1)))
        total += (within / t).sum(axis=1)  # each tie group's term once: t members, 1/t each
        out[part] = 2.0 / (n - 1) * total - 1.0
    return out


def _tau_ap_half(p: np.ndarray, c: np.ndarray) -> np.ndarray:
    """One half of tau_AP_b from ``p`` (per item, the items strictly above it in the ranking that
    orders) and ``c`` (those of them the other ranking also puts strictly above it): each item's
    count is divided by ``p``; items of the top tie group (``p = 0``) are left out."""
    used = p > 0
    n_used = used.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(used, c / np.where(used, p, 1), 0.0).sum(axis=1)
        return np.where(n_used > 0, 2.0 * share / np.maximum(n_used, 1) - 1.0, 0.0)


def _tau_ap_b(est: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """The mean of both halves; ``c`` (above in both rankings) is the same count for both."""
    out = np.empty(est.shape[0])
    for part in _chunks(est.shape[0], est.shape[1]):
        e, r = est[part], ref[part]
        above_e = e[:, :, None] > e[:, None, :]  # [r, j, i]: j strictly above i
        above_r = r[:, :, None] > r[:, None, :]
        c = (above_e & above_r).sum(axis=1)
        out[part] = 0.5 * (_tau_ap_half(above_e.sum(axis=1), c) + _tau_ap_half(above_r.sum(axis=1), c))
    return out


def _tau_gap(est: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """tau_GAP (Gao & Oard 2015): the estimate orders (ties by position), the reference gives the gaps.

    The reference scores are put in the estimate's order (descending, ties by position), so the
    systems above each one are those before it: one (rows, n, n) difference per chunk, summed
    under a fixed triangle."""
    rows, n = est.shape
    earlier = np.triu(np.ones((n, n)), k=1)  # [j, i]: j before i
    order = np.argsort(-est, axis=1, kind="stable")
    walked = np.take_along_axis(ref, order, axis=1)
    out = np.empty(rows)
    for part in _chunks(rows, n):
        r = walked[part]
        diff = r[:, :, None] - r[:, None, :]  # [r, j, i] = ref_j - ref_i
        gaps = np.einsum("rji,ji->ri", np.abs(diff), earlier)
        correct = np.einsum("rji,ji->ri", np.maximum(diff, 0.0, out=diff), earlier)
        used = gaps > 0
        n_used = used.sum(axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            share = np.where(used, correct / np.where(used, gaps, 1.0), 0.0).sum(axis=1)
            out[part] = np.where(n_used > 0, 2.0 * share / np.maximum(n_used, 1) - 1.0, np.nan)
    return out


_KERNELS: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "tau_a": lambda e, r: _kendall(e, r, "a"),
    "tau_b": lambda e, r: _kendall(e, r, "b"),
    "tau_ap": _tau_ap,
    "tau_ap_b": _tau_ap_b,
    "tau_gap": _tau_gap,
    "spearman": _spearman,
    "pearson": _pearson,
    "rms": _rms,
}


def top_k(est: np.ndarray, ref: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The columns of the ``k`` highest reference scores of each row (ties by position),
    kept in their column order."""
    if k >= ref.shape[1]:
        return est, ref
    keep = np.sort(np.argsort(-ref, axis=1, kind="stable")[:, :k], axis=1)
    return np.take_along_axis(est, keep, axis=1), np.take_along_axis(ref, keep, axis=1)


def batched(method: str, est: np.ndarray, ref: np.ndarray) -> np.ndarray:
    """One coefficient (``"tau_b"``, ``"tau_gap@10"``, ...) of every row of ``est`` against the
    same row of ``ref`` (``(R, n)`` float arrays); NaN for rows of fewer than 2 systems."""
    base, k = parse_method(method)
    est = np.asarray(est, dtype=np.float64)
    ref = np.asarray(ref, dtype=np.float64)
    if k is not None:
        est, ref = top_k(est, ref, k)
    if est.shape[1] < (1 if base == "rms" else 2):
        return np.full(est.shape[0], np.nan)
    return _KERNELS[base](est, ref)


def rows_coefficients(est: np.ndarray, ref: np.ndarray, mask: np.ndarray, methods, mask_k=None) -> np.ndarray:
    """Coefficients of rows whose compared systems differ: ``mask[r, s]`` says system ``s``
    takes part in row ``r`` (``mask_k``, if given, for the ``name@k`` methods). Rows sharing a
    mask are computed together (one call per distinct set of systems). Returns an
    ``(R, len(methods))`` array; ``est`` and ``ref`` may have a resample axis after the rows
    (``(R, B, S)``), which gives an ``(R, B, len(methods))`` array."""
    out = np.full((*est.shape[:-1], len(methods)), np.nan)
    for m, method in enumerate(methods):
        use = mask_k if (mask_k is not None and "@" in method) else mask
        if est.shape[0] == 0:
            continue
        patterns, which = np.unique(use, axis=0, return_inverse=True)
        which = which.ravel()
        for p, pattern in enumerate(patterns):  # one pass per distinct set of systems (usually one)
            rows = np.flatnonzero(which == p)
            e, r = est[rows][..., pattern], ref[rows][..., pattern]
            values = batched(method, e.reshape(-1, e.shape[-1]), r.reshape(-1, r.shape[-1]))
            out[rows, ..., m] = values.reshape(e.shape[:-1])
    return out
