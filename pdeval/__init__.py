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
  :func:`map_grades`, :func:`agreement`, :func:`qrels_agreement`, :func:`leaderboards`,
  :func:`compare_leaderboards`, :func:`leaderboard_changes`, :func:`fill_holes`.
* the ecosystem (:mod:`pdeval.integrations`): :func:`experiment` (PyTerrier's table),
  :func:`from_ranx` / :func:`to_ranx`, :func:`read_trec_eval` / :func:`write_trec_eval`,
  :func:`read_table` / :func:`write_table` (Parquet, Arrow IPC); Polars and Arrow frames,
  ranx objects, ir_datasets records and ir_measures measure objects are accepted as inputs.
"""

import importlib
import importlib.util
import sys

# what every evaluation needs is imported now (public.EAGER); the rest (analysis, judgments,
# estimates, the figures, most integrations) on first use, so that the ``pdeval`` command starts fast
from pdeval import accessor, errors, frames  # noqa: F401  (accessor registers df.ir)
from pdeval.public import API, EAGER, SUBPACKAGES

#: public name -> module that defines it, imported on first use (PEP 562); built from public.API
_LAZY = {name: entry.module for name, entry in API.items()}

for _name, _entry in API.items():
    if _entry.module in EAGER:
        globals()[_name] = getattr(importlib.import_module(_entry.module), _entry.attribute or _name)
del _name, _entry

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
        value = getattr(importlib.import_module(_LAZY[name]), API[name].attribute or name)
        globals()[name] = value
        return value
    if not name.startswith("_") and importlib.util.find_spec(f"pdeval.{name}") is not None:
        return importlib.import_module(f"pdeval.{name}")
    raise AttributeError(f"module 'pdeval' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY) | {"plotting"})


__all__ = sorted([*API, *SUBPACKAGES])
