"""Evaluate TREC run files a few at a time, so that memory follows the largest file.

``pdeval eval QRELS runs/`` and a user with a folder of run files need the result of all of
them, not a frame of all their rows: :func:`evaluate_run_files` reads the files (as
:func:`pdeval.io.read_run` does) and evaluates them in batches of about
:data:`BATCH_ROWS` rows (:func:`pdeval.evaluation.evaluate_frames`, the qrels indexed once),
while worker threads parse the next files (:func:`pdeval.threads.ordered`). The runs are
independent, so the result equals that of ``evaluate`` on the frame of every file, row for
row (files are taken in the byte order of their run names, the order ``evaluate`` gives).
"""

from __future__ import annotations

from typing import Iterable, Union

import pandas as pd

from .evaluation import MeasureLike, evaluate_frames, index_qrels
from .frames import DuplicatePolicy
from .io import RunSource, _read_run_files, _resolve_names, _resolve_sources, _stack
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
    :func:`~pdeval.io.read_run`) against ``qrels``, a batch of files at a time.

    ``duplicates`` applies when reading and evaluating; every other keyword is passed to
    :func:`~pdeval.evaluation.evaluate_frames`. The qrels are validated and indexed once.
    Returns the frame ``evaluate`` would return for all the files' rows at once.
    """
    files = _resolve_sources(source)
    names = _resolve_names(files, None)  # refuses two files with one run name
    measures = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    names, files = zip(*sorted(zip(names, files), key=lambda pair: pair[0].encode("utf-8")))
    judgments = index_qrels(qrels, duplicates=duplicates, variants=options.get("variants"))  # once for all files
    parts: list[pd.DataFrame] = []
    batch: list[dict] = []

    def evaluate_batch() -> None:
        parts.append(evaluate_frames(_stack(batch), qrels, measures, duplicates=duplicates, judgments=judgments,
                                     duplicates_checked=True, **options))  # the reader applied the policy
        batch.clear()

    # the next files are parsed in worker threads while a batch is evaluated; small files are
    # evaluated together, up to about BATCH_ROWS rows, which spares the fixed cost of a call
    for columns in _read_run_files(files, names, duplicates, run_from="file", engine="auto"):
        if batch and sum(len(each["score"]) for each in batch) + len(columns["score"]) > BATCH_ROWS:
            evaluate_batch()
        batch.append(columns)
        del columns
    evaluate_batch()
    return pd.concat(parts, ignore_index=True)


#: rows of run files evaluated in one call (a larger file is evaluated on its own)
BATCH_ROWS = 1 << 20
