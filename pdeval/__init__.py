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

import importlib
import importlib.util
import sys

# what every evaluation needs is imported now; the rest (analysis, judgments, estimates, the
# figures, most integrations) on first use, so that the ``pdeval`` command starts fast
from pdeval import accessor, errors, frames  # noqa: F401  (accessor registers df.ir)
from pdeval.api import evaluate
from pdeval.engine.ranking import rank_run
from pdeval.evaluation.bounds import bounds
from pdeval.evaluation.results import summarize
from pdeval.integrations.trec_eval import read_trec_eval, write_trec_eval
from pdeval.measures import available as available_measures
from pdeval.measures import parse as parse_measure
from pdeval.sources.io import read_qrels, read_run, write_qrels, write_run

#: public name -> module that defines it, imported on first use (PEP 562)
_LAZY = {
    **dict.fromkeys(("agreement",), "pdeval.analysis.agreement"),
    **dict.fromkeys(("fill_holes", "judged_by_source", "label_sets", "map_grades", "merge_qrels"),
                    "pdeval.analysis.labels"),
    **dict.fromkeys(("compare_leaderboards", "leaderboard_changes", "leaderboards"), "pdeval.analysis.leaderboards"),
    **dict.fromkeys(("correlation_table", "rank_correlation"), "pdeval.analysis.correlation"),
    "estimate": "pdeval.analysis.estimates",
    "unique_factors": "pdeval.analysis.unique_priors",
    "training_sensitivity": "pdeval.analysis.experiments",
    **dict.fromkeys(("read_table", "write_table"), "pdeval.sources.tables"),
    "experiment": "pdeval.integrations.pyterrier",
    **dict.fromkeys(("from_ranx", "to_ranx"), "pdeval.integrations.ranx"),
    **dict.fromkeys(("LEVEL_GRIDS", "reduce"), "pdeval.judgments.reduction"),
    **dict.fromkeys(("STRATEGIES", "budget_qrels", "judging_order"), "pdeval.judgments.adjudication"),
    **dict.fromkeys(("bias_summary", "leave_out_bias", "pool_bias_correction"), "pdeval.analysis.pool_bias"),
    **dict.fromkeys(("exclude_runs", "judged", "leave_out_pooling", "mixed_pool", "pool"), "pdeval.judgments.pooling"),
    "prels_qrels": "pdeval.sources.sampled",
    **dict.fromkeys(("sample_inclusion", "sample_pool"), "pdeval.judgments.sampling"),
    "discriminative_power": "pdeval.analysis.bootstrap",
    "compare": "pdeval.analysis.significance",
    "swap_rates": "pdeval.analysis.swaps",
    **dict.fromkeys(("anova", "topic_set_size", "tukey_hsd"), "pdeval.analysis.statistics"),
    "reproducibility": "pdeval.analysis.reproducibility",
    **dict.fromkeys(("standardize", "zscore_table"), "pdeval.analysis.standardize"),
    **dict.fromkeys(("read_zscores", "write_zscores"), "pdeval.sources.zscores"),
}

if "dask.dataframe" in sys.modules:  # registers ddf.ir; otherwise ``import pdeval.dask`` does
    importlib.import_module("pdeval.dask")

__version__ = "0.1.0"


def __getattr__(name: str):
    """The public functions of :data:`_LAZY`, ``pdeval.plotting`` (the seaborn figures,
    :mod:`pdeval.report.figures`) and the subpackages (``pdeval.datasets``, ``pdeval.analysis``
    ...), imported on first use so that ``import pdeval`` loads neither scipy.stats nor
    matplotlib."""
    if name == "plotting":
        return importlib.import_module("pdeval.report.figures")
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"pdeval.{name}") is not None:
        return importlib.import_module(f"pdeval.{name}")
    raise AttributeError(f"module 'pdeval' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"plotting"})


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
    "unique_factors",
    "write_qrels",
    "write_run",
    "write_table",
    "write_trec_eval",
    "write_zscores",
    "zscore_table",
]
