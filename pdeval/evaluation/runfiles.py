"""Evaluate TREC run files a few at a time, so that memory follows the largest file.

``pdeval eval QRELS runs/`` and a user with a folder of run files need the result of all of
them, not a frame of all their rows: :func:`evaluate_run_files` reads the files (as
:func:`pdeval.sources.runs.read_run` does) and evaluates them in batches of about
:data:`BATCH_ROWS` rows (:func:`pdeval.evaluation.core.evaluate_frames`, the qrels indexed once),
while worker threads parse the next files (:func:`pdeval.common.threads.ordered`). The runs are
independent, so the result equals that of ``evaluate`` on the frame of every file, row for
row (files are taken in the byte order of their run names, the order ``evaluate`` gives).
"""

from __future__ import annotations

from typing import Iterable, Union

import pandas as pd

from pdeval.engine.index import index_qrels
from pdeval.engine.options import EngineOptions
from pdeval.evaluation.core import MeasureLike, evaluate_frames
from pdeval.sources.paths import RunSource, resolve_names, resolve_sources
from pdeval.sources.runs import read_run_files, stack
from pdeval.measures import Measure


def evaluate_run_files(
    source: RunSource,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    **options,
) -> pd.DataFrame:
    """Evaluate the run files of ``source`` (paths, directories or globs, as for
    :func:`~pdeval.sources.runs.read_run`) against ``qrels``, a batch of files at a time.

    ``options`` are the engine options (:class:`~pdeval.engine.options.EngineOptions`);
    ``duplicates`` applies when reading and evaluating. The qrels are validated and indexed once.
    Returns the frame ``evaluate`` would return for all the files' rows at once.
    """
    options = EngineOptions.of(options, where="evaluate_run_files")
    duplicates = options.duplicates
    files = resolve_sources(source)
    names = resolve_names(files, None)  # refuses two files with one run name
    measures = [measures] if isinstance(measures, (str, Measure)) else list(measures)
    names, files = zip(*sorted(zip(names, files), key=lambda pair: pair[0].encode("utf-8")))
    judgments = index_qrels(qrels, duplicates=duplicates, variants=options.variants)  # once for all files
    parts: list[pd.DataFrame] = []
    batch: list[dict] = []

    def evaluate_batch() -> None:
        parts.append(evaluate_frames(stack(batch), qrels, measures, options, judgments=judgments,
                                     duplicates_checked=True))  # the reader applied the policy
        batch.clear()

    # the next files are parsed in worker threads while a batch is evaluated; small files are
    # evaluated together, up to about BATCH_ROWS rows, which spares the fixed cost of a call
    for columns in read_run_files(files, names, duplicates, run_from="file", engine="auto"):
        if batch and sum(len(each["score"]) for each in batch) + len(columns["score"]) > BATCH_ROWS:
            evaluate_batch()
        batch.append(columns)
        del columns
    evaluate_batch()
    return pd.concat(parts, ignore_index=True)


#: rows of run files evaluated in one call (a larger file is evaluated on its own)
BATCH_ROWS = 1 << 20
