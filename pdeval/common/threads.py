"""Threads for the per-part work of large inputs (run files, parts of a run).

The work done in parallel is numpy, Arrow and zlib calls, which release the GIL, so threads
use every core without copying data between processes. Results are always put together in
the order of the inputs, so the output (and the first error raised) never depends on which
thread finishes first.
"""

from __future__ import annotations

import collections
import concurrent.futures
import itertools
import os
from typing import Callable, Iterable, Iterator, TypeVar

T = TypeVar("T")
R = TypeVar("R")

#: threads used at most (``pdeval.common.threads.THREADS = 1`` does everything in the calling thread)
THREADS = max(1, min(os.cpu_count() or 1, 4))


def ordered(function: Callable[[T], R], items: Iterable[T]) -> Iterator[R]:
    """``map(function, items)`` computed ahead in up to :data:`THREADS` threads, yielded in
    the order of ``items``; at most that many results wait at a time, so that memory stays
    bounded when the consumer is slower. The first exception (in item order) is raised when
    its item's turn comes."""
    items = iter(items)
    first = list(itertools.islice(items, 2))
    if THREADS <= 1 or len(first) < 2:  # (one item: nothing to overlap with)
        yield from map(function, itertools.chain(first, items))
        return
    items = itertools.chain(first, items)
    with concurrent.futures.ThreadPoolExecutor(THREADS) as executor:
        pending = collections.deque(executor.submit(function, item) for _, item in zip(range(THREADS), items))
        try:
            while pending:
                result = pending.popleft().result()
                for item in items:  # the next item, if any, starts before this result is used
                    pending.append(executor.submit(function, item))
                    break
                yield result
        finally:
            for future in pending:
                future.cancel()
