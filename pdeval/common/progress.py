"""The progress bar of long computations (bootstrap, swap trials, many qrels samples).

One rule for every ``progress`` option of pdeval (``bool | None``, default ``None``):

* ``True`` shows a bar, ``False`` never does;
* ``None`` shows one only when it helps: the output is a terminal or a Jupyter notebook, and
  the work lasts long enough (:data:`DELAY` seconds) for a bar to be worth drawing. Short
  work, scripts writing to files and test runs print nothing.
"""

from __future__ import annotations

import sys
from typing import Iterable, Optional, TypeVar

from pdeval.errors import PdevalError

T = TypeVar("T")

__all__ = ["DELAY", "Progress", "check_progress", "interactive", "progress_bar", "tqdm_options"]

#: ``progress=None`` draws a bar only once the work has lasted this many seconds
DELAY = 2.0

Progress = Optional[bool]


def check_progress(progress: object) -> Progress:
    """``progress`` if it is True, False or None; else a :class:`~pdeval.errors.PdevalError`."""
    if progress is not None and not isinstance(progress, bool):
        raise PdevalError(f"progress must be True, False or None (a bar for long work only), not {progress!r}")
    return progress


def interactive() -> bool:
    """True when a person is likely watching: stderr is a terminal, or a Jupyter kernel runs."""
    stream = sys.stderr
    if stream is not None and getattr(stream, "isatty", lambda: False)():
        return True
    shell = sys.modules.get("IPython")
    get = getattr(shell, "get_ipython", None)
    return get is not None and type(get()).__name__ == "ZMQInteractiveShell"


def tqdm_options(progress: Optional[bool]) -> dict:
    """The ``disable`` and ``delay`` arguments of a tqdm bar under the rule of this module."""
    progress = check_progress(progress)
    if progress is None:
        return {"disable": not interactive(), "delay": DELAY}
    return {"disable": not progress, "delay": 0.0}


def progress_bar(iterable: Iterable[T], *, enabled: Progress, total: int, desc: str) -> Iterable[T]:
    """``iterable`` wrapped in a tqdm bar (which leaves no line behind) under the rule of this
    module (``enabled`` is the function's ``progress`` option), or as it is."""
    options = tqdm_options(enabled)
    if options["disable"]:
        return iterable
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, leave=False, **options)
