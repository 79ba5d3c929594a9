"""The progress bar of long computations (bootstrap, swap trials, many qrels samples).

**Which bar.** In a Jupyter notebook (an IPython kernel) with ipywidgets installed, tqdm's
widget bar; everywhere else -- a terminal, or a notebook without ipywidgets -- tqdm's text
bar, which notebooks draw in place as well. ``tqdm.auto`` is not used: without ipywidgets it
warns ``TqdmWarning: IProgress not found`` on every first use.

**One bar per task.** A public function that runs several long loops (one per measure, say)
is decorated with :func:`one_bar`: the loops inside one call then advance a single bar (its
total grows as loops start) instead of drawing one bar each.
"""

from __future__ import annotations

import contextvars
import functools
import sys
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class _Task:
    """The shared bar of one call of a :func:`one_bar` function (created by its first loop)."""

    def __init__(self) -> None:
        self.bar: Any = None

    def add(self, total: int, desc: str) -> Any:
        if self.bar is None:
            self.bar = bar_class()(total=total, desc=desc, leave=False)
        else:
            self.bar.total += total
            self.bar.refresh()
        return self.bar

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


_TASK: contextvars.ContextVar[Optional[_Task]] = contextvars.ContextVar("pdeval_progress_task", default=None)


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's kernel app), as tqdm.autonotebook decides."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def bar_class() -> type:
    """tqdm's widget bar in a notebook with ipywidgets, else its text bar: the class every
    pdeval bar is made of (``tqdm.auto`` warns ``IProgress not found`` without ipywidgets)."""
    if in_notebook():
        try:
            import ipywidgets  # noqa: F401  (tqdm.notebook needs it to draw)
        except ImportError:
            pass
        else:
            from tqdm.notebook import tqdm as notebook_tqdm

            return notebook_tqdm
    from tqdm.std import tqdm

    return tqdm


def _advance(iterable: Iterable[T], bar: Any) -> Iterator[T]:
    for item in iterable:
        yield item
        bar.update(1)


def progress_bar(iterable: Iterable[T], *, enabled: bool, total: int, desc: str) -> Iterable[T]:
    """``iterable`` wrapped in a progress bar (which leaves no line behind), or as it is when
    ``enabled`` is false (every long function's ``progress=False``).

    Inside a call of a :func:`one_bar` function the loop advances that call's one bar;
    elsewhere it draws its own.
    """
    if not enabled:
        return iterable
    task = _TASK.get()
    if task is not None:
        return _advance(iterable, task.add(total, desc))
    return bar_class()(iterable, total=total, desc=desc, leave=False)


def one_bar(function: F) -> F:
    """Decorate a function whose loops should share one progress bar per call.

    Nested calls of decorated functions share the outermost call's bar; the bar is closed
    (and cleared) when that call returns or raises.
    """

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        if _TASK.get() is not None:
            return function(*args, **kwargs)
        task = _Task()
        token = _TASK.set(task)
        try:
            return function(*args, **kwargs)
        finally:
            _TASK.reset(token)
            task.close()

    return call  # type: ignore[return-value]


__all__ = ["bar_class", "in_notebook", "one_bar", "progress_bar"]
