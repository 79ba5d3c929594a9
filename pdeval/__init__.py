"""pdeval: IR evaluation with incomplete relevance judgments as a pandas workflow.

``import pdeval`` registers the ``df.ir`` accessor on pandas DataFrames. The functional core:

* reading and writing: :func:`read_run`, :func:`read_qrels`, :func:`write_run`, :func:`write_qrels`,
  :mod:`pdeval.datasets` (bundled real data);
* evaluating: :func:`evaluate`, :func:`summarize`, :func:`bounds`, :func:`rank_run`, measure strings
  (:func:`parse_measure`, :func:`available_measures`);
* making judgments incomplete: :func:`reduce`, :func:`pool`, :func:`mixed_pool`,
  :func:`exclude_runs`, :func:`judged`, :func:`leave_out_pooling`;
* judging measures: :func:`rank_correlation`, :func:`correlation_table`, :func:`swap_rates`,
  :func:`discriminative_power`, :func:`compare`, :func:`training_sensitivity`.
"""

import sys

from . import accessor, datasets, errors, frames
from .bounds import bounds
from .correlation import correlation_table, rank_correlation, system_means
from .evaluation import evaluate, summarize
from .experiments import training_sensitivity
from .io import read_qrels, read_run, write_qrels, write_run
from .judgments import LEVEL_GRIDS, exclude_runs, judged, leave_out_pooling, mixed_pool, pool, reduce
from .measures import available as available_measures
from .measures import parse as parse_measure
from .ranking import rank_run
from .significance import compare, discriminative_power, swap_rates

if "dask.dataframe" in sys.modules:  # registers ddf.ir; otherwise ``import pdeval.dask`` does
    from . import dask

__version__ = "0.1.0"

__all__ = [
    "LEVEL_GRIDS",
    "available_measures",
    "bounds",
    "compare",
    "correlation_table",
    "datasets",
    "discriminative_power",
    "errors",
    "evaluate",
    "exclude_runs",
    "judged",
    "leave_out_pooling",
    "mixed_pool",
    "parse_measure",
    "pool",
    "rank_correlation",
    "rank_run",
    "read_qrels",
    "read_run",
    "reduce",
    "summarize",
    "swap_rates",
    "system_means",
    "training_sensitivity",
    "write_qrels",
    "write_run",
]
