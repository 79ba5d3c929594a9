"""The checks of a frame read from one file, with the file (and lines) named in their errors
and warnings: :func:`validate_with_path` runs :func:`pdeval.frames.canonical.as_run` /
``as_qrels`` and says which lines repeat a key; :func:`log_skipped` logs the comment and blank
lines a parse skipped (``pdeval.sources`` logger, INFO)."""

from __future__ import annotations

import logging
import warnings
from typing import Sequence

import numpy as np
import pandas as pd

from pdeval.errors import DuplicateError, PdevalWarning
from pdeval.frames.canonical import DuplicatePolicy, as_qrels, as_run

__all__ = ["duplicate_details", "log_skipped", "logger", "validate_with_path"]

logger = logging.getLogger("pdeval.sources")


def log_skipped(path: str, columns) -> None:
    """An INFO message naming the comment and blank lines skipped in the file (if any)."""
    if columns.comments or columns.blanks:
        logger.info(
            "%s: skipped %d comment line(s) and %d blank line(s)", path, columns.comments, columns.blanks
        )


def duplicate_details(frame: pd.DataFrame, keys: Sequence[str], line: np.ndarray) -> str:
    """Where the first repeated key of ``frame`` occurs, as file line numbers."""
    repeated = frame.duplicated(list(keys), keep="first").to_numpy()
    position = int(np.flatnonzero(repeated)[0])
    row = frame.iloc[position]
    same = np.ones(len(frame), dtype=bool)
    for key in keys:
        same &= (frame[key] == row[key]).to_numpy()
    first = int(np.flatnonzero(same)[0])
    shown = ", ".join(f"{key}={row[key]!r}" for key in keys)
    return f"line {line[position]} repeats ({shown}) of line {line[first]}"


def validate_with_path(
    frame: pd.DataFrame, keys: Sequence[str], line: np.ndarray, duplicates: DuplicatePolicy, path: str, kind: str,
    stacklevel: int = 3,
) -> pd.DataFrame:
    """Run ``as_run``/``as_qrels`` on one file's frame; name the file in errors and warnings
    (which point ``stacklevel`` frames up: the caller of the public reader)."""
    validate = as_run if kind == "run" else as_qrels
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", PdevalWarning)
            out = validate(frame, duplicates=duplicates)
    except DuplicateError as exc:
        raise DuplicateError(f"{path}: {duplicate_details(frame, keys, line)}; {exc}") from None
    for item in caught:
        if issubclass(item.category, PdevalWarning):
            warnings.warn(f"{path}: {item.message}", item.category, stacklevel=stacklevel)  # keeps the class
        else:  # pragma: no cover - other warnings pass through unchanged
            warnings.warn_explicit(item.message, item.category, item.filename, item.lineno)
    return out
