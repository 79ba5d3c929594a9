"""The expected value over tied orders by exact enumeration, for measures without a closed form.

Under ``ties="expected"`` a measure whose registry entry records no closed form is evaluated on
every distinct order of every run of tied scores of each list, and the values are averaged.
Documents of a run that a measure cannot tell apart (the same judgment, no sampling design)
are interchangeable, so only the distinct arrangements of the run's judgments are laid out:
each is equally likely under a uniform order of the documents (n! / Π c_j! arrangements for
c_j documents of judgment j; the rows a sparse layout leaves implicit are one more class).
A list's orders are the product of its runs' arrangements. Every arrangement becomes a list of
its own (one gather), the measure's kernel runs once on all of them, and a bincount averages
them back: no Python loop over lists, runs or topics (only over the few distinct run shapes).

Enumeration is exact but grows fast: a list with more than :data:`MAX_ORDERS` orders, or more
than :data:`MAX_ROWS` rows laid out in all, is refused with a :class:`MeasureError` naming the
measure (the optimistic and pessimistic orders give its range at any size).
"""

from __future__ import annotations

from functools import lru_cache
from typing import Callable

import numpy as np

from pdeval.engine.segments import Segments
from pdeval.errors import MeasureError

#: the most orders a list may have for its expected value to be enumerated
MAX_ORDERS = 5040
#: the most rows the enumerated lists may hold in all
MAX_ROWS = 20_000_000


@lru_cache(maxsize=4096)
def _arrangements(shape: tuple) -> tuple[np.ndarray, np.ndarray]:
    """Every distinct arrangement of a run whose laid-out rows have the classes ``shape[:-1]``
    (sorted) and ``shape[-1]`` implicit rows: per arrangement, the run's laid-out rows in their
    new order (indices into the sorted rows) and their positions in the run (0-based)."""
    classes, implicit = shape[:-1], shape[-1]
    counts = {}
    for label in classes:
        counts[label] = counts.get(label, 0) + 1
    if implicit:
        counts[None] = implicit
    labels = list(counts)
    first_row = {label: classes.index(label) for label in labels if label is not None}
    rows, positions = [], []

    def extend(prefix: list) -> None:
        if len(prefix) == len(classes) + implicit:
            taken = dict.fromkeys(first_row, 0)
            order, where = [], []
            for position, label in enumerate(prefix):
                if label is not None:
                    order.append(first_row[label] + taken[label])
                    taken[label] += 1
                    where.append(position)
            rows.append(order)
            positions.append(where)
            return
        for label in labels:
            if counts[label]:
                counts[label] -= 1
                extend(prefix + [label])
                counts[label] += 1

    extend([])
    width = len(classes)
    return np.array(rows, dtype=np.int64).reshape(-1, width), np.array(positions, dtype=np.int64).reshape(-1, width)


def enumerated(kernel: Callable[..., np.ndarray], name: str) -> Callable[..., np.ndarray]:
    """``kernel`` averaged over every distinct order of the runs of tied scores (module docstring)."""

    def expected(seg: Segments, **params) -> np.ndarray:
        if not len(seg.rel) or seg.ties is None:
            return kernel(seg, **params)
        lists, values = _enumerate(seg, name)
        out = kernel(lists, **params)
        return np.bincount(values, weights=out, minlength=seg.n_segments) / np.maximum(
            np.bincount(values, minlength=seg.n_segments), 1)

    return expected


def _count(number: float) -> str:
    """A count for a message: exact with thousands separators, or in scientific form when huge."""
    return f"{number:,.0f}" if number < 1e12 else f"{number:.2e}"


def _enumerate(seg: Segments, name: str) -> tuple[Segments, np.ndarray]:
    """The lists of every order of ``seg``'s runs of tied scores, and the list each came from."""
    n_rows = len(seg.rel)
    segment = seg.segment_of_row
    first, last = seg.ties[:, 0].astype(np.int64), seg.ties[:, 1].astype(np.int64)
    starts = np.ones(n_rows, dtype=bool)
    starts[1:] = (segment[1:] != segment[:-1]) | (first[1:] != first[:-1])
    run_start = np.flatnonzero(starts)
    run_of_row = np.cumsum(starts) - 1
    laid = np.diff(np.append(run_start, n_rows))
    size = last[run_start] - first[run_start] + 1
    within = np.arange(n_rows) - run_start[run_of_row]
    # rows told apart only by their judgment (under a sampling design every row is its own class)
    label = within if seg.info is not None else seg.rel.astype(np.int64) - int(seg.rel.min())
    order = np.lexsort((label, run_of_row))  # each run's rows by class
    sorted_label = label[order]
    pair = run_of_row * (int(label.max()) + 1) + label
    _, class_size = np.unique(pair, return_counts=True)
    class_run = np.unique(pair) // (int(label.max()) + 1)
    from scipy.special import gammaln  # here: scipy.special takes a third of a second to import

    log_orders = (gammaln(size + 1.0) - gammaln(size - laid + 1.0)
                  - np.bincount(class_run, weights=gammaln(class_size + 1.0), minlength=len(run_start)))
    run_segment = segment[run_start]
    list_log = np.bincount(run_segment, weights=log_orders, minlength=seg.n_segments)
    worst = float(np.exp(list_log.max(initial=0.0)))
    total_rows = float(np.dot(np.exp(np.minimum(list_log, 50.0)), seg.lengths))
    if worst > MAX_ORDERS + 0.5 or total_rows > MAX_ROWS:
        raise MeasureError(
            f"{name}: ties='expected' has no closed form for this measure and enumerates every order of "
            f"each run of tied scores; a list here has {_count(worst)} orders (at most {MAX_ORDERS:,}) and all "
            f"lists {_count(total_rows)} rows (at most {MAX_ROWS:,}). Evaluate its range with "
            "ties='optimistic' and ties='pessimistic' (docs: guide/ties.md)"
        )
    run_orders = np.rint(np.exp(log_orders)).astype(np.int64)
    list_orders = np.rint(np.exp(list_log)).astype(np.int64)
    # a list's copy o takes arrangement (o // stride) % orders of each run: mixed radix, strides
    # the product of the orders of the list's earlier runs
    before = np.cumsum(log_orders) - log_orders
    list_base = before[np.searchsorted(run_segment, run_segment)]
    stride = np.rint(np.exp(before - list_base)).astype(np.int64)
    copy_list = np.repeat(np.arange(seg.n_segments), list_orders)
    copy_start = np.zeros(seg.n_segments + 1, dtype=np.int64)
    np.cumsum(list_orders, out=copy_start[1:])
    offsets = np.zeros(len(copy_list) + 1, dtype=np.int64)
    np.cumsum(seg.lengths[copy_list], out=offsets[1:])
    # every copy starts as the list itself; the runs with several orders are then rearranged
    rows = np.repeat(seg.offsets[copy_list] - offsets[:-1], seg.lengths[copy_list]) + np.arange(offsets[-1])
    ranks = seg.rank[rows]
    several = np.flatnonzero(run_orders > 1)
    if len(several):
        width = int(laid[several].max())
        shape = np.full((len(several), width + 1), -1, dtype=np.int64)
        shape[:, 0] = size[several] - laid[several]
        picked = np.isin(run_of_row, several)  # sorted positions: run_of_row and within hold for them too
        shape[np.searchsorted(several, run_of_row[picked]), within[picked] + 1] = sorted_label[picked]
        shapes, shape_of = np.unique(shape, axis=0, return_inverse=True)
        for index, row in enumerate(shapes):  # a loop over the distinct run shapes only
            these = several[shape_of.reshape(-1) == index]
            new_rows, positions = _arrangements(tuple(row[1:][row[1:] >= 0].tolist()) + (int(row[0]),))
            copies = list_orders[run_segment[these]]
            run = np.repeat(these, copies)
            copy = np.arange(int(copies.sum())) - np.repeat(np.cumsum(copies) - copies, copies)
            digit = (copy // stride[run]) % run_orders[run]
            target = (offsets[copy_start[run_segment[run]] + copy] + run_start[run]
                      - seg.offsets[run_segment[run]])[:, None] + np.arange(new_rows.shape[1])
            rows[target] = order[run_start[run][:, None] + new_rows[digit]]
            ranks[target] = first[run_start[run]][:, None] + positions[digit]
    info = None if seg.info is None else {key: value[rows] for key, value in seg.info.items()}
    lists = Segments(seg.rel[rows], offsets, seg.topic[copy_list], seg.qrels,
                     ranks=ranks if seg.ranks is not None else None, info=info)
    return lists, copy_list
