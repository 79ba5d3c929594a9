"""pdeval: IR evaluation with incomplete relevance judgments as a pandas workflow.

``import pdeval`` registers the ``df.ir`` accessor on pandas DataFrames. The functional core:

* reading and writing: :func:`read_run`, :func:`read_qrels`, :func:`write_run`, :func:`write_qrels`,
  :mod:`pdeval.datasets` (bundled real data);
* evaluating: :func:`evaluate`, :func:`summarize`, :func:`bounds`, :func:`rank_run`, measure strings
  (:func:`parse_measure`, :func:`available_measures`);
* making judgments incomplete: :func:`reduce`, :func:`pool`, :func:`mixed_pool`,
  :func:`exclude_runs`, :func:`judged`, :func:`leave_out_pooling`; judging orders of the
  adjudication strategies (:func:`judging_order`, :func:`budget_qrels`); pool-bias correction
  (:func:`pool_bias_correction`, :func:`leave_out_bias`, :func:`bias_summary`); judging designs for the
  sampled estimators: :func:`sample_pool` (stratified), :func:`sample_inclusion` (statAP);
* judging measures: :func:`rank_correlation`, :func:`correlation_table`, :func:`swap_rates`,
  :func:`discriminative_power`, :func:`compare`, :func:`training_sensitivity`;
* many systems at once, topics paired: :func:`tukey_hsd`, :func:`anova` (with Sakai's
  ES_E2 effect sizes), :func:`topic_set_size`.
* reproducibility and standardisation: :func:`reproducibility` (Breuer et al.'s measures),
  :func:`standardize`, :func:`zscore_table`, :func:`read_zscores` / :func:`write_zscores`
  (trec_eval ``-Z`` files);
* automatic judgments: :func:`merge_qrels`, :func:`judged_by_source`, :func:`label_sets`,
  :func:`map_grades`, :func:`agreement`, :func:`leaderboards`, :func:`compare_leaderboards`,
  :func:`leaderboard_changes`, :func:`fill_holes`.
* the ecosystem (:mod:`pdeval.integrations`): :func:`experiment` (PyTerrier's table),
  :func:`from_ranx` / :func:`to_ranx`, :func:`read_trec_eval` / :func:`write_trec_eval`,
  :func:`read_table` / :func:`write_table` (Parquet, Arrow IPC); Polars and Arrow frames,
  ranx objects, ir_datasets records and ir_measures measure objects are accepted as inputs.
"""

import sys

from pdeval import accessor, datasets, errors, frames
from pdeval.analysis.agreement import agreement
from pdeval.analysis.labels import fill_holes, judged_by_source, label_sets, map_grades, merge_qrels
from pdeval.analysis.leaderboards import compare_leaderboards, leaderboard_changes, leaderboards
from pdeval.evaluation.bounds import bounds
from pdeval.analysis.correlation import correlation_table, rank_correlation
from pdeval.api import evaluate
from pdeval.evaluation.results import summarize
from pdeval.analysis.estimates import estimate
from pdeval.analysis.experiments import training_sensitivity
from pdeval.sources.tables import read_table, write_table
from pdeval.integrations.pyterrier import experiment
from pdeval.integrations.ranx import from_ranx, to_ranx
from pdeval.integrations.trec_eval import read_trec_eval, write_trec_eval
from pdeval.sources.io import read_qrels, read_run, write_qrels, write_run
from pdeval.judgments.reduction import LEVEL_GRIDS, reduce
from pdeval.judgments.adjudication import STRATEGIES, budget_qrels, judging_order
from pdeval.analysis.pool_bias import bias_summary, leave_out_bias, pool_bias_correction
from pdeval.judgments.pooling import exclude_runs, judged, leave_out_pooling, mixed_pool, pool
from pdeval.measures import available as available_measures
from pdeval.measures import parse as parse_measure
from pdeval.engine.ranking import rank_run
from pdeval.sources.sampled import prels_qrels
from pdeval.judgments.sampling import sample_inclusion, sample_pool
from pdeval.analysis.bootstrap import discriminative_power
from pdeval.analysis.significance import compare
from pdeval.analysis.swaps import swap_rates
from pdeval.analysis.statistics import anova, topic_set_size, tukey_hsd
from pdeval.analysis.reproducibility import reproducibility
from pdeval.analysis.standardize import standardize, zscore_table
from pdeval.sources.zscores import read_zscores, write_zscores

if "dask.dataframe" in sys.modules:  # registers ddf.ir; otherwise ``import pdeval.dask`` does
    from pdeval import dask

__version__ = "0.1.0"


def __getattr__(name: str):
    """``pdeval.plotting``: the seaborn figures (:mod:`pdeval.report.figures`), imported on first
    use so that ``import pdeval`` does not load matplotlib."""
    if name == "plotting":
        from pdeval.report import figures

        return figures
    raise AttributeError(f"module 'pdeval' has no attribute {name!r}")

__all__ = [
    "LEVEL_GRIDS",
    "STRATEGIES",
    "bias_summary",
    "budget_qrels",
    "judging_order",
    "leave_out_bias",
    "pool_bias_correction",
    "agreement",
    "anova",
    "available_measures",
    "bounds",
    "compare",
    "compare_leaderboards",
    "correlation_table",
    "datasets",
    "discriminative_power",
    "errors",
    "estimate",
    "evaluate",
    "exclude_runs",
    "fill_holes",
    "experiment",
    "from_ranx",
    "judged",
    "judged_by_source",
    "label_sets",
    "leaderboard_changes",
    "leaderboards",
    "leave_out_pooling",
    "map_grades",
    "merge_qrels",
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
    "read_table",
    "read_trec_eval",
    "read_zscores",
    "reduce",
    "reproducibility",
    "standardize",
    "summarize",
    "swap_rates",
    "topic_set_size",
    "to_ranx",
    "training_sensitivity",
    "tukey_hsd",
    "write_qrels",
    "write_run",
    "write_table",
    "write_trec_eval",
    "write_zscores",
    "zscore_table",
]
