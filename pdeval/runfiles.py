"""Evaluate TREC run files one at a time, so that memory follows the largest file.

``pdeval eval QRELS runs/`` and a user with a folder of run files need the result of all of
them, not a frame of all their rows: :func:`evaluate_run_files` reads each file
(:func:`pdeval.io.read_run`) and evaluates it (:func:`pdeval.evaluation.evaluate`) before
reading the next. The runs are independent, so the result equals that of ``evaluate`` on
the frame of every file, row for row (files are taken in the byte order of their run names,
the order ``evaluate`` gives).
"""

from __future__ import annotations

from typing import Iterable, Union

import pandas as pd

from .evaluation import MeasureLike, evaluate
from .frames import DuplicatePolicy
from .io import RunSource, _resolve_names, _resolve_sources, read_run
from .measures import Measure


def evaluate_run_files(
    source: RunSource,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    *,
    duplicates: DuplicatePolicy = "error",
    **options,
) -> pd.DataFrame:
    """Evaluate the run files of ``source`` (paths, directories or globs, as for
    :func:`~pdeval.io.read_run`) against ``qrels``, one file at a time.

    ``duplicates`` applies when reading and evaluating; every other keyword is passed to
    :func:`~pdeval.evaluation.evaluate`. Returns the frame ``evaluate`` would return for all
    the files' rows at once.
    """
    files = _resolve_sources(source)
    names = _resolve_names(files, None)  # refuses two files with one run name
    measures = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    parts: list[pd.DataFrame] = []
    for name, path in sorted(zip(names, files), key=lambda pair: pair[0].encode("utf-8")):
        run = read_run(path, name=name, duplicates=duplicates)
        parts.append(evaluate(run, qrels, measures, duplicates=duplicates, **options))
        del run
    return pd.concat(parts, ignore_index=True)
