"""The progress bar of long computations (bootstrap, swap trials, many qrels samples)."""

from __future__ import annotations

from typing import Iterable, TypeVar

T = TypeVar("T")


def progress_bar(iterable: Iterable[T], *, enabled: bool, total: int, desc: str) -> Iterable[T]:
    """``iterable`` wrapped in a tqdm bar (which leaves no line behind), or as it is when
    ``enabled`` is false (every long function's ``progress=False``)."""
    if not enabled:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False)
