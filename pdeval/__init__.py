"""pdeval: IR evaluation with incomplete relevance judgments as a pandas workflow.

``import pdeval`` registers the ``df.ir`` accessor on pandas DataFrames. The functional core:

* reading and writing: :func:`read_run`, :func:`read_qrels`, :func:`write_run`, :func:`write_qrels`,
  :mod:`pdeval.datasets` (bundled real data);
* evaluating: :func:`evaluate`, :func:`summarize`, :func:`rank_run`, measure strings
  (:func:`parse_measure`, :func:`available_measures`);
* making judgments incomplete: :func:`reduce`, :func:`pool`, :func:`mixed_pool`,
  :func:`exclude_runs`, :func:`judged`, :func:`leave_out_pooling`; judging designs for the
  sampled estimators: :func:`sample_pool` (stratified), :func:`sample_inclusion` (statAP);
* judging measures: :func:`rank_correlation`, :func:`correlation_table`, :func:`swap_rates`,
  :func:`discriminative_power`, :func:`compare`, :func:`training_sensitivity`.
"""

import sys

from . import accessor, datasets, errors, frames
from .correlation import correlation_table, rank_correlation, system_means
from .evaluation import evaluate, summarize
from .experiments import training_sensitivity
from .io import read_qrels, read_run, write_qrels, write_run
from .judgments import LEVEL_GRIDS, exclude_runs, judged, leave_out_pooling, mixed_pool, pool, reduce
from .measures import available as available_measures
from .measures import parse as parse_measure
from .ranking import rank_run
from .sampled_io import prels_qrels
from .sampling import sample_inclusion, sample_pool
from .significance import compare, discriminative_power, swap_rates

if "dask.dataframe" in sys.modules:  # registers ddf.ir; otherwise ``import pdeval.dask`` does
    from . import dask

__version__ = "0.1.0"

__all__ = [
    "LEVEL_GRIDS",
    "available_measures",
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
    "prels_qrels",
    "pool",
    "rank_correlation",
    "rank_run",
    "sample_inclusion",
    "sample_pool",
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
