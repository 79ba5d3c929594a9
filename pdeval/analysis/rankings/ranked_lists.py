"""Agreement of two ranked lists, for many lists at once: Kendall's tau union and RBO.

Both functions take two *stacked* sets of ranked lists that share group ids (one group per
(pair, topic)): ``group`` (int, 0..n_groups-1), ``rank`` (1-based position in its list) and
``doc`` (an integer code per document; for Kendall's tau union the codes must follow the
byte order of the document ids, as :func:`doc_codes` gives them). Every computation runs on
all groups at once (sorts and ``bincount`` over group offsets), never a loop over topics.

* :func:`kendall_tau_union` -- Breuer et al. (SIGIR 2020), as the authors' MATLAB code and
  repro-eval compute it: each list's documents are replaced by their positions in the sorted
  union of both lists, and Kendall's tau is computed between the two position sequences,
  paired by rank.
* :func:`rank_biased_overlap` -- Webber, Moffat & Zobel (TOIS 2010), two variants: the
  prefix normalised by its weights (Clarke et al., TOIS 2021, as repro-eval 0.5.0) and the
  extrapolated RBO_ext (Webber et al.'s eq. 32, used in the paper's own evaluation).
"""

from __future__ import annotations

from typing import Literal, Optional

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError

__all__ = ["doc_codes", "kendall_tau_union", "rank_biased_overlap", "RBO_VARIANTS"]

RBO_VARIANTS = ("normalized", "ext")


def doc_codes(*columns: pd.Series) -> list[np.ndarray]:
    """Integer codes of the document ids of several columns, increasing with the ids' byte
    order (Python's string order, which is the order of repro-eval's ``sorted`` and of
    MATLAB's ``unique``), so the codes can stand for the ids wherever only order matters.
    The ids are hashed once (``pandas.factorize``); only the distinct ids are sorted (by
    Arrow, in UTF-8 byte order, which is code point order)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pd.concat([c.astype(str) for c in columns], ignore_index=True)
    codes, uniques = pd.factorize(values)
    distinct = pa.array(np.asarray(uniques, dtype=object), type=pa.large_string())
    rank = np.empty(len(distinct), dtype=np.int64)
    rank[np.asarray(pc.sort_indices(distinct))] = np.arange(len(distinct))
    codes = rank[codes]
    out, start = [], 0
    for column in columns:
        out.append(codes[start : start + len(column)])
        start += len(column)
    return out


def _inversions(group: np.ndarray, position: np.ndarray, y: np.ndarray, n_groups: int) -> np.ndarray:
    """Per group, the pairs i < j (by ``position``, 0-based and dense in each group) with
    y_i > y_j; the ``y`` of one group must be distinct. A bottom-up merge count: at level l
    the blocks of 2^(l+1) positions are split in halves, and each element of a right half
    counts the elements of its left half with a larger y (one sort per level)."""
    counts = np.zeros(n_groups, dtype=np.int64)
    if len(y) == 0:
        return counts
    longest = int(position.max()) + 1
    y_rank = np.unique(y, return_inverse=True)[1].astype(np.int64)
    span = int(y_rank.max()) + 1
    level = 0
    while (1 << level) < longest:
        block = group * ((longest >> (level + 1)) + 1) + (position >> (level + 1))
        left = ((position >> level) & 1) == 0
        order = np.argsort(block * span + y_rank)  # keys are distinct
        sorted_block, sorted_left = block[order], left[order]
        starts = np.flatnonzero(np.r_[True, sorted_block[1:] != sorted_block[:-1]])
        block_index = np.cumsum(np.r_[False, sorted_block[1:] != sorted_block[:-1]])
        lefts_before = np.cumsum(sorted_left) - sorted_left  # left elements before, anywhere
        lefts_in_block_before = lefts_before - lefts_before[starts][block_index]
        left_total = np.add.reduceat(sorted_left.astype(np.int64), starts)[block_index]
        right = ~sorted_left
        larger = (left_total - lefts_in_block_before)[right]
        counts += np.bincount(group[order][right], weights=larger, minlength=n_groups).astype(np.int64)
        level += 1
    return counts


def kendall_tau_union(a: pd.DataFrame, b: pd.DataFrame, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Kendall's tau union of each group's two lists (frames ``group``, ``rank``, ``doc``; one
    row per ranked document), and the number of ranks compared.

    With ``a_1..a_n`` and ``b_1..b_n`` the documents at ranks 1..n of the two lists and
    ``u(d)`` the position of document d in the sorted union of both lists,
    ``KTU = (C - D) / (n (n - 1) / 2)``, where C and D count the rank pairs i < j on which
    ``u(a_i) - u(a_j)`` and ``u(b_i) - u(b_j)`` agree and disagree in sign (tau-b; the
    positions hold no ties, the documents of one list being distinct). n is the length of
    the shorter list (repro-eval 0.5.0, through ``scipy.stats.kendalltau``, only accepts
    lists of equal length). A group with n < 2 gets NaN. Only the order of the codes
    matters, so the union is never built: codes from :func:`doc_codes` stand for ``u``.
    """
    length_a = np.bincount(a["group"].to_numpy(), minlength=n_groups)
    length_b = np.bincount(b["group"].to_numpy(), minlength=n_groups)
    n = np.minimum(length_a, length_b)
    keep_a = a[a["rank"].to_numpy() <= n[a["group"].to_numpy()]]
    keep_b = b[b["rank"].to_numpy() <= n[b["group"].to_numpy()]]
    keep_a = keep_a.sort_values(["group", "rank"], kind="stable")
    keep_b = keep_b.sort_values(["group", "rank"], kind="stable")
    group = keep_a["group"].to_numpy(dtype=np.int64)
    x = keep_a["doc"].to_numpy(dtype=np.int64)
    y = keep_b["doc"].to_numpy(dtype=np.int64)
    # order each group by x, then count the inversions of y: the discordant pairs
    order = np.lexsort((x, group))
    group, y = group[order], y[order]
    starts = np.r_[0, np.cumsum(n)[:-1]]
    position = np.arange(len(group)) - starts[group]
    discordant = _inversions(group, position, y, n_groups).astype(np.float64)
    pairs = n * (n - 1) / 2.0
    with np.errstate(invalid="ignore", divide="ignore"):
        tau = np.where(n >= 2, (pairs - 2.0 * discordant) / pairs, np.nan)
    return tau, n


def rank_biased_overlap(
    a: pd.DataFrame, b: pd.DataFrame, n_groups: int, *, persistence: float = 0.95, depth: Optional[int] = 1000,
    variant: Literal["normalized", "ext"] = "normalized",
) -> np.ndarray:
    """Rank-biased overlap of each group's two lists (frames ``group``, ``rank``, ``doc``).

    With X_d the number of documents the two lists share in their first d ranks, A_d = X_d/d
    and p the persistence:

    * ``"normalized"`` (Clarke, Vtyurina & Smucker, TOIS 2021; repro-eval 0.5.0): the RBO sum
      over the first D ranks divided by its weights,
      ``sum_{d=1..D} p^(d-1) A_d / sum_{d=1..D} p^(d-1)``, with D = ``depth`` or, for
      ``depth=None``, the length of the group's longer list (so two identical lists have
      RBO 1 exactly); a list shorter than D keeps its documents (the overlap stops growing,
      A_d falls).
    * ``"ext"``: Webber, Moffat & Zobel's extrapolated RBO (TOIS 2010, eq. 32), on the lists
      cut at ``depth`` (None: whole): with s <= l the lengths of the shorter and the longer list,
      ``RBO_ext = (1-p)/p * (sum_{d=1..l} A_d p^d + sum_{d=s+1..l} X_s (d-s)/(s d) p^d)
      + ((X_l - X_s)/l + X_s/s) p^l``, where for d > s, X_d counts the documents of the whole
      shorter list among the first d of the longer one. Equal lengths give their eq. 30.

    Each shared document contributes to every depth from max(rank_a, rank_b) on, so the
    sums are tail sums of a per-depth weight, looked up at that depth: no loop over depths.
    The weights of the normalised RBO are the same tail sums, added in the same order, so an
    identical pair of lists gives 1.0 exactly. A group where a list is empty gets 0
    (``"normalized"``) or NaN (``"ext"`` with s = 0).
    """
    if not 0 < persistence < 1:
        raise PdevalError(f"persistence must lie strictly between 0 and 1, not {persistence!r}")
    if variant not in RBO_VARIANTS:
        raise PdevalError(f"rbo must be one of {RBO_VARIANTS}, not {variant!r}")
    if depth is not None:
        a = a[a["rank"].to_numpy() <= depth]
        b = b[b["rank"].to_numpy() <= depth]
    shared = a.merge(b, on=["group", "doc"], suffixes=("_a", "_b"))
    length_a = np.bincount(a["group"].to_numpy(), minlength=n_groups)
    length_b = np.bincount(b["group"].to_numpy(), minlength=n_groups)
    p = float(persistence)
    if variant == "normalized":
        reach = np.maximum(length_a, length_b) if depth is None else np.full(n_groups, int(depth))
        return _rbo_normalized(shared, reach.astype(np.int64), n_groups, p)
    return _rbo_ext(shared, shared["group"].to_numpy(dtype=np.int64), length_a, length_b, n_groups, p)


def _rbo_normalized(shared: pd.DataFrame, reach: np.ndarray, n_groups: int, p: float) -> np.ndarray:
    """The normalised RBO of each group to its depth ``reach`` (see :func:`rank_biased_overlap`)."""
    longest = int(reach.max()) if n_groups else 0
    d = np.arange(1, longest + 1, dtype=np.float64)
    tail = np.r_[np.cumsum((p ** (d - 1) / d)[::-1])[::-1], 0.0]  # tail[k] = sum_{d=k+1..longest}
    both = np.maximum(shared["rank_a"].to_numpy(), shared["rank_b"].to_numpy()).astype(np.int64)
    group = shared["group"].to_numpy(dtype=np.int64)
    order = np.lexsort((both, group))  # summed by increasing depth, as the weights below
    group, both = group[order], both[order]
    total = np.bincount(group, weights=tail[both - 1] - tail[reach[group]], minlength=n_groups)
    weights = np.zeros(n_groups)
    for depth in np.unique(reach[reach > 0]):  # the weights of every depth that occurs, in the same order
        weights[reach == depth] = np.cumsum(tail[:depth] - tail[depth])[-1]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(weights > 0, total / np.where(weights > 0, weights, 1.0), 0.0)


def _rbo_ext(shared, group, length_a, length_b, n_groups, p) -> np.ndarray:
    short = np.minimum(length_a, length_b)
    long = np.maximum(length_a, length_b)
    longest = int(long.max()) if len(long) else 0
    d = np.arange(1, longest + 1, dtype=np.float64)
    # a shared document counts from depth m: max of its ranks while both lists go on, else
    # its rank in the longer list (the shorter list is whole from depth s on)
    # (the rank in the shorter list is at most s, so both are the larger of the two ranks)
    m = np.maximum(shared["rank_a"].to_numpy(), shared["rank_b"].to_numpy()).astype(np.int64)
    # sum_{d=m..l} p^d / d, for each shared document, from the tail sums of one array
    weight = np.r_[np.cumsum((p**d / d)[::-1])[::-1], 0.0]  # weight[k] = sum_{d=k+1..longest}
    upto_l = weight[m - 1] - weight[long[group]]
    first = np.bincount(group, weights=upto_l, minlength=n_groups)
    # X_s (the overlap at depth s) and X_l
    x_s = np.bincount(group, weights=(m <= short[group]), minlength=n_groups)
    x_l = np.bincount(group, minlength=n_groups).astype(np.float64)
    # sum_{d=s+1..l} (d - s)/(s d) p^d = sum p^d / s - sum p^d / d over d in (s, l]
    power = np.r_[np.cumsum((p**d)[::-1])[::-1], 0.0]
    over_d = weight
    with np.errstate(invalid="ignore", divide="ignore"):
        second = x_s * ((power[short] - power[long]) / short - (over_d[short] - over_d[long]))
        value = (1 - p) / p * (first + second) + ((x_l - x_s) / long + x_s / short) * p**long
    return np.where(short > 0, value, np.nan)
