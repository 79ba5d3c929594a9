"""pdeval: IR evaluation with incomplete relevance judgments as a pandas workflow.

``import pdeval`` registers the ``df.ir`` accessor on pandas DataFrames. The functional core:

* reading and writing: :func:`read_run`, :func:`read_qrels`, :func:`write_run`, :func:`write_qrels`,
  :mod:`pdeval.datasets` (bundled real data);
* evaluating: :func:`evaluate`, :func:`summarize`, :func:`bounds`, :func:`rank_run`, measure strings
  (:func:`parse_measure`, :func:`available_measures`);
* making judgments incomplete: :func:`reduce`, :func:`pool`, :func:`mixed_pool`,
  :func:`exclude_runs`, :func:`judged`, :func:`leave_out_pooling`; judging designs for the
  sampled estimators: :func:`sample_pool` (stratified), :func:`sample_inclusion` (statAP);
* judging measures: :func:`rank_correlation`, :func:`correlation_table`, :func:`swap_rates`,
  :func:`discriminative_power`, :func:`compare`, :func:`training_sensitivity`;
* many systems at once, topics paired: :func:`tukey_hsd`, :func:`anova` (with Sakai's
  ES_E2 effect sizes), :func:`topic_set_size`.
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

# what ``pdeval eval`` needs anyway is imported now (so ``pdeval.engine.ranking`` and the like
# are there as before); the rest (analysis, judgments, datasets, most integrations) on first use
from pdeval import accessor, errors, frames  # noqa: F401  (accessor registers df.ir)
from pdeval.common import arrow as _arrow, options as _options, progress as _progress, threads as _threads  # noqa: F401
from pdeval.engine import coverage as _coverage, ranked as _ranked  # noqa: F401
from pdeval.api import evaluate
from pdeval.evaluation.bounds import bounds
from pdeval.evaluation.results import summarize
from pdeval.evaluation import runfiles as _runfiles  # noqa: F401
from pdeval.integrations.trec_eval import read_trec_eval, write_trec_eval
from pdeval.sources.io import read_qrels, read_run, write_qrels, write_run
from pdeval.measures import available as available_measures
from pdeval.measures import parse as parse_measure
from pdeval.engine.ranking import rank_run

#: public name -> (module, attribute): imported on first use, so that ``import pdeval`` (and
#: the ``pdeval`` command, which imports the package first) loads only what is used
_LAZY = {
    **{name: ("pdeval.analysis.agreement", name) for name in (
        "agreement", "compare_leaderboards", "fill_holes", "judged_by_source", "label_sets",
        "leaderboard_changes", "leaderboards", "map_grades", "merge_qrels")},
    **{name: ("pdeval.analysis.correlation", name) for name in ("correlation_table", "rank_correlation", "system_means")},
    "training_sensitivity": ("pdeval.analysis.experiments", "training_sensitivity"),
    "read_table": ("pdeval.sources.tables", "read_table"),
    "write_table": ("pdeval.sources.tables", "write_table"),
    "experiment": ("pdeval.integrations.pyterrier", "experiment"),
    "from_ranx": ("pdeval.integrations.ranx", "from_ranx"),
    "to_ranx": ("pdeval.integrations.ranx", "to_ranx"),
    "LEVEL_GRIDS": ("pdeval.judgments.reduction", "LEVEL_GRIDS"),
    "reduce": ("pdeval.judgments.reduction", "reduce"),
    **{name: ("pdeval.judgments.pooling", name) for name in ("exclude_runs", "judged", "leave_out_pooling", "mixed_pool", "pool")},
    "prels_qrels": ("pdeval.sources.sampled", "prels_qrels"),
    "sample_inclusion": ("pdeval.judgments.sampling", "sample_inclusion"),
    "sample_pool": ("pdeval.judgments.sampling", "sample_pool"),
    **{name: ("pdeval.analysis.significance", name) for name in ("compare", "discriminative_power", "swap_rates")},
    **{name: ("pdeval.analysis.statistics", name) for name in ("anova", "topic_set_size", "tukey_hsd")},
    "datasets": ("pdeval.datasets", None),
}


def _import_tree(name: str):
    """A subpackage with its modules, so that ``pdeval.engine.ranking`` works as it did when
    ``import pdeval`` imported everything."""
    import pkgutil

    package = importlib.import_module(name)
    for info in pkgutil.walk_packages(getattr(package, "__path__", []), prefix=f"{name}."):
        if not info.name.startswith(("pdeval.report", "pdeval.dask")):  # matplotlib, dask: on demand
            importlib.import_module(info.name)
    return package


def __getattr__(name: str):
    """The public functions (and the subpackages, ``pdeval.measures`` ...), imported on first
    use (PEP 562)."""
    if name not in _LAZY:
        if not name.startswith("_") and importlib.util.find_spec(f"pdeval.{name}") is not None:
            return _import_tree(f"pdeval.{name}")
        raise AttributeError(f"module 'pdeval' has no attribute {name!r}")
    module, attribute = _LAZY[name]
    value = importlib.import_module(module)
    if attribute is not None:
        value = getattr(value, attribute)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))


if "dask.dataframe" in sys.modules:  # registers ddf.ir; otherwise ``import pdeval.dask`` does
    importlib.import_module("pdeval.dask")

__version__ = "0.1.0"

__all__ = [
    "LEVEL_GRIDS",
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
    "reduce",
    "summarize",
    "swap_rates",
    "system_means",
    "topic_set_size",
    "to_ranx",
    "training_sensitivity",
    "tukey_hsd",
    "write_qrels",
    "write_run",
    "write_table",
    "write_trec_eval",
]
