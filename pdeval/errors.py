"""The error hierarchy of pdeval.

Every error pdeval raises on bad input is a :class:`PdevalError`, so a caller can catch
all of them at once; the subclasses say which kind of input was wrong.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Optional, Sequence, Type


class PdevalError(ValueError):
    """Base class of every error pdeval raises on bad input (a ``ValueError``)."""


class SchemaError(PdevalError):
    """A frame lacks a required column, has a wrong type, or holds invalid values."""


class ParseError(PdevalError):
    """A line of a run or qrels file could not be read.

    ``path`` and ``line`` (1-based) name where; both also appear in the message.
    """

    def __init__(self, message: str, path: Optional[str] = None, line: Optional[int] = None):
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}"
            if line is not None:
                where += f", line {line}"
            where += ": "
        super().__init__(where + message)


class DuplicateError(SchemaError):
    """A run repeats a (run, query_id, doc_id) or qrels repeat a (query_id, doc_id)."""


class MeasureError(PdevalError):
    """An unknown measure name or an invalid measure parameter.

    ``suggestions`` holds the closest known names ("did you mean").
    """

    def __init__(self, message: str, suggestions: Sequence[str] = ()):
        self.suggestions = list(suggestions)
        if self.suggestions:
            message += " Did you mean: " + ", ".join(repr(s) for s in self.suggestions) + "?"
        super().__init__(message)


class OverlapError(SchemaError):
    """The run and the qrels share no topic: nothing could be evaluated.

    The message shows a few topic ids of each side and the likely cause (leading zeros,
    number formatting, letter case, or qrels of another collection).
    """


class MissingFileError(PdevalError, FileNotFoundError):
    """A run or qrels file, directory or glob pattern names nothing that can be read.

    It is both a :class:`~pdeval.errors.PdevalError` and a :class:`FileNotFoundError`;
    ``path`` holds the path or pattern.
    """

    def __init__(self, message: str, path: "str | None" = None):
        self.path = path
        super().__init__(message)

    def __str__(self) -> str:  # OSError.__str__ would format errno/strerror
        return str(self.args[0]) if self.args else ""


class PdevalWarning(UserWarning):
    """Warns when a documented policy let pdeval go on (rows dropped, topics skipped).

    Every warning pdeval issues is a ``PdevalWarning`` (or one of the subclasses below), so
    ``warnings.simplefilter("ignore", pdeval.errors.PdevalWarning)`` silences them all and
    ``warnings.simplefilter("error", pdeval.errors.PdevalWarning)`` turns them into errors.
    """


class ColumnWarning(PdevalWarning):
    """A frame column pdeval does not use was ignored (it names the column)."""


class IdWarning(PdevalWarning):
    """Ids were normalised (whitespace around them stripped), with the count of rows."""


class OverlapWarning(PdevalWarning):
    """The run and the qrels cover different topics, or a run retrieves no judged document.

    Counts the run-only and qrels-only topics (or names the runs); the values are those of
    trec_eval 9 (only shared topics are evaluated; ``complete=True`` is trec_eval ``-c``).
    """


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep

#: (category, file, line) of the warnings already shown under the "default" action
_SHOWN: set = set()


def _action(category: Type[Warning], text: str, module: str, lineno: int) -> str:
    """The action the warnings filters give this warning (as :func:`warnings.warn` decides)."""
    for action, message, kind, module_re, line in warnings.filters:
        if (
            (message is None or message.match(text))
            and issubclass(category, kind)
            and (module_re is None or module_re.match(module))
            and (line == 0 or line == lineno)
        ):
            return action
    return warnings.defaultaction


def warn(message: str, category: Type[Warning] = PdevalWarning) -> None:
    """Issue a warning attributed to the first caller outside pdeval (the user's line), however
    deep inside the package it is raised.

    Under Python's ``"default"`` filter action a :class:`PdevalWarning` is shown once per
    category and line of the caller's code, whatever its counts say, so a loop that calls
    :func:`pdeval.evaluate` (or a pdeval function that does) shows it once. The standard
    filters change that: ``warnings.simplefilter("always", PdevalWarning)`` shows every one,
    ``"ignore"`` none, ``"error"`` raises them.
    """
    level, frame = 2, sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        level, frame = level + 1, frame.f_back
    if frame is not None:
        place = (category, frame.f_code.co_filename, frame.f_lineno)
        action = _action(category, message, frame.f_globals.get("__name__", ""), frame.f_lineno)
        if action == "default":
            if place in _SHOWN:
                return
            _SHOWN.add(place)
    warnings.warn(message, category, stacklevel=level)
