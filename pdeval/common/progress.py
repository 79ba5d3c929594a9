"""The progress bar of long computations (bootstrap, swap trials, many qrels samples).

**When.** One rule for every ``progress`` option of pdeval (``bool | None``, default ``None``):

* ``True`` shows a bar, ``False`` never does;
* ``None`` shows one only when it helps: the output is a terminal or a Jupyter notebook, and
  the work lasts long enough (:data:`DELAY` seconds) for a bar to be worth drawing. Short
  work, scripts writing to files and test runs print nothing.

**Which bar.** In a Jupyter notebook (an IPython kernel) with ipywidgets installed, tqdm's
widget bar; everywhere else -- a terminal, or a notebook without ipywidgets -- tqdm's text
bar, which notebooks draw in place as well. ``tqdm.auto`` is not used: without ipywidgets it
warns ``TqdmWarning: IProgress not found`` on every first use.

**A finished bar shows 100 %.** tqdm redraws at most every ``mininterval`` seconds, so after
a sub-second task its last drawing may be "83% 5/6", and a notebook keeps that drawing (a
widget closed below its total even turns red). A bar whose loops finished is therefore set to
its total and drawn once more before it is closed (:func:`finish`); a bar interrupted by an
error is closed as it stands.

**One bar per task.** A public function that runs several long loops (one per measure, say)
is decorated with :func:`one_bar`: the loops inside one call then advance a single bar (its
total grows as loops start) instead of drawing one bar each.
"""

from __future__ import annotations

import contextvars
import functools
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Optional, TypeVar

from pdeval.common.domains import Boolean, Nullable
from pdeval.errors import PdevalError

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])

__all__ = ["DELAY", "PROGRESS", "Progress", "bar_class", "check_progress", "finish", "in_notebook", "interactive",
           "one_bar", "progress_bar", "tqdm_options"]

#: ``progress=None`` draws a bar only once the work has lasted this many seconds
DELAY = 2.0

Progress = Optional[bool]

#: the domain of every ``progress=`` option (:mod:`pdeval.common.contract`)
PROGRESS = Nullable(Boolean())


def check_progress(progress: object) -> Progress:
    """``progress`` if it is True, False or None; else a :class:`~pdeval.errors.PdevalError`."""
    if progress is not None and not isinstance(progress, bool):
        raise PdevalError(f"progress must be True, False or None (a bar for long work only), not {progress!r}")
    return progress


def in_notebook() -> bool:
    """True inside a Jupyter kernel (IPython's kernel app), as tqdm.autonotebook decides."""
    ipython = sys.modules.get("IPython")
    get = getattr(ipython, "get_ipython", None)
    shell = get() if get is not None else None
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def interactive() -> bool:
    """True when a person is likely watching: stderr is a terminal, or a Jupyter kernel runs."""
    stream = sys.stderr
    if stream is not None and getattr(stream, "isatty", lambda: False)():
        return True
    return in_notebook()


def tqdm_options(progress: Optional[bool]) -> dict:
    """The ``disable`` and ``delay`` arguments of a tqdm bar under the rule of this module."""
    progress = check_progress(progress)
    if progress is None:
        return {"disable": not interactive(), "delay": DELAY}
    return {"disable": not progress, "delay": 0.0}


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


class _Task:
    """The shared bar of one call of a :func:`one_bar` function (created by its first loop)."""

    def __init__(self) -> None:
        self.bar: Any = None

    def add(self, total: int, desc: str, options: dict) -> Any:
        if self.bar is None:
            self.bar = bar_class()(total=total, desc=desc, leave=False, **options)
        else:
            self.bar.total += total
            self.bar.refresh()
        return self.bar

    def close(self, finished: bool) -> None:
        if self.bar is not None:
            finish(self.bar) if finished else self.bar.close()


def finish(bar: Any) -> None:
    """Close ``bar`` at 100 %: its count set to its total and, if it has been drawn (its delay
    has passed), drawn once more, so that no stale "83% 5/6" stays on screen."""
    if bar.total is not None and bar.n < bar.total:
        bar.n = bar.total
    if not bar.disable and time.time() - bar.start_t >= bar.delay:
        bar.refresh()
    bar.close()


_TASK: contextvars.ContextVar[Optional[_Task]] = contextvars.ContextVar("pdeval_progress_task", default=None)


def _advance(iterable: Iterable[T], bar: Any) -> Iterator[T]:
    for item in iterable:
        yield item
        bar.update(1)


def _own(iterable: Iterable[T], bar: Any) -> Iterator[T]:
    """``iterable`` advancing its own ``bar``, finished at 100 % when the loop ends."""
    try:
        yield from _advance(iterable, bar)
    except BaseException:
        bar.close()
        raise
    finish(bar)


def progress_bar(iterable: Iterable[T], *, enabled: Progress, total: int, desc: str) -> Iterable[T]:
    """``iterable`` wrapped in a progress bar (which leaves no line behind) under the rule of
    this module (``enabled`` is the function's ``progress`` option), or as it is.

    Inside a call of a :func:`one_bar` function the loop advances that call's one bar;
    elsewhere it draws its own.
    """
    options = tqdm_options(enabled)
    if options["disable"]:
        return iterable
    task = _TASK.get()
    if task is not None:
        return _advance(iterable, task.add(total, desc, options))
    return _own(iterable, bar_class()(total=total, desc=desc, leave=False, **options))


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
        finished = False
        try:
            out = function(*args, **kwargs)
            finished = True
            return out
        finally:
            _TASK.reset(token)
            task.close(finished)

    return call  # type: ignore[return-value]
