"""The public API, listed once: every public name, the module that defines it, and — for a
function that takes a frame first — the kinds of frame its ``df.ir`` method is bound to.

``pdeval.__all__``, the lazy imports of :mod:`pdeval` and the methods of ``df.ir``
(:mod:`pdeval.accessor`) are built from :data:`API`; the generated contract test walks it
and requires every function listed here to carry its boundary contract
(:func:`pdeval.common.contract.contract`). A new public function is one line here.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["API", "EAGER", "Entry", "SUBPACKAGES", "path"]


class Entry(NamedTuple):
    """Where a public name is defined (``module``, under ``attribute`` if it differs from the
    public name) and the frame kinds of its ``df.ir`` method (none: no method; ``("any",)``: a
    method on any frame)."""

    module: str
    kinds: tuple = ()
    attribute: str = ""


_RUN, _QRELS, _RESULT = ("run",), ("qrels",), ("result",)

#: public name -> its entry, grouped as the user guide is
API: dict[str, Entry] = {
    # reading and writing
    "read_run": Entry("pdeval.sources.io"),
    "read_qrels": Entry("pdeval.sources.io"),
    "write_run": Entry("pdeval.sources.io", _RUN),
    "write_qrels": Entry("pdeval.sources.io", _QRELS),
    "read_table": Entry("pdeval.sources.tables"),
    "write_table": Entry("pdeval.sources.tables", ("run", "qrels", "result")),
    "read_trec_eval": Entry("pdeval.integrations.trec_eval"),
    "write_trec_eval": Entry("pdeval.integrations.trec_eval", _RESULT),
    "read_zscores": Entry("pdeval.sources.zscores"),
    "read_qrels_jg": Entry("pdeval.integrations.trec_eval.judgment_groups"),
    "evaluate_judgment_groups": Entry("pdeval.integrations.trec_eval.judgment_groups", _RUN),
    "read_prefs": Entry("pdeval.integrations.trec_eval.preference_files"),
    "qrels_prefs": Entry("pdeval.integrations.trec_eval.preference_files", _QRELS),
    "evaluate_preferences": Entry("pdeval.integrations.trec_eval.preferences", _RUN),
    "write_zscores": Entry("pdeval.sources.zscores"),
    "prels_qrels": Entry("pdeval.sources.sampled"),
    # evaluating
    "evaluate": Entry("pdeval.api", _RUN),
    "summarize": Entry("pdeval.evaluation.results", _RESULT),
    "bounds": Entry("pdeval.evaluation.bounds", _RUN),
    "rank_run": Entry("pdeval.engine.ranking", _RUN),
    "parse_measure": Entry("pdeval.measures", (), "parse"),
    "available_measures": Entry("pdeval.measures", (), "available"),
    # making judgments incomplete
    "reduce": Entry("pdeval.judgments.reduction", _QRELS),
    "LEVEL_GRIDS": Entry("pdeval.judgments.reduction"),
    "pool": Entry("pdeval.judgments.pooling", _RUN),
    "mixed_pool": Entry("pdeval.judgments.pooling", _RUN),
    "exclude_runs": Entry("pdeval.judgments.exclusion", _RUN),
    "judged": Entry("pdeval.judgments.exclusion", _RUN),
    "leave_out_pooling": Entry("pdeval.analysis.pool_bias.leave_out", _RUN),
    "sample_pool": Entry("pdeval.judgments.sampling", _RUN),
    "sample_inclusion": Entry("pdeval.judgments.sampling", _RUN),
    "judging_order": Entry("pdeval.judgments.adjudication", _RUN),
    "budget_qrels": Entry("pdeval.judgments.adjudication"),
    "STRATEGIES": Entry("pdeval.judgments.adjudication"),
    # estimates and pool bias
    "estimate": Entry("pdeval.analysis.estimates.core", _RUN),
    "unique_factors": Entry("pdeval.analysis.estimates.unique_priors", _RUN),
    "pool_bias_correction": Entry("pdeval.analysis.pool_bias.correction", _RUN),
    "leave_out_bias": Entry("pdeval.analysis.pool_bias.correction", _RUN),
    "bias_summary": Entry("pdeval.analysis.pool_bias.correction", ("any",)),
    # automatic judgments
    "merge_qrels": Entry("pdeval.analysis.judges.labels", _QRELS),
    "judged_by_source": Entry("pdeval.analysis.judges.labels", _RUN),
    "label_sets": Entry("pdeval.analysis.judges.labels", _QRELS),
    "map_grades": Entry("pdeval.analysis.judges.labels", _QRELS),
    "fill_holes": Entry("pdeval.analysis.judges.holes", _RUN),
    "agreement": Entry("pdeval.analysis.judges.agreement", _QRELS),
    "qrels_agreement": Entry("pdeval.analysis.judges.qrels_agreement", _QRELS),
    "leaderboards": Entry("pdeval.analysis.judges.leaderboards", _RUN),
    "compare_leaderboards": Entry("pdeval.analysis.judges.leaderboards", _RESULT),
    "leaderboard_changes": Entry("pdeval.analysis.judges.leaderboards", _RESULT),
    "compare_judges": Entry("pdeval.analysis.judges.meta_evaluation", _RESULT),
    # judging measures and systems
    "rank_correlation": Entry("pdeval.analysis.rankings.correlation", _RESULT),
    "correlation_table": Entry("pdeval.analysis.rankings.correlation", _RESULT),
    "correlation_intervals": Entry("pdeval.analysis.rankings.intervals", _RESULT),
    "swap_rates": Entry("pdeval.analysis.statistics.swaps", _RESULT),
    "discriminative_power": Entry("pdeval.analysis.statistics.bootstrap", _RESULT),
    "compare": Entry("pdeval.analysis.statistics.significance", _RESULT),
    "training_sensitivity": Entry("pdeval.analysis.rankings.training", _RESULT),
    "tukey_hsd": Entry("pdeval.analysis.statistics", _RESULT),
    "anova": Entry("pdeval.analysis.statistics", _RESULT),
    "topic_set_size": Entry("pdeval.analysis.statistics", _RESULT),
    # reproducibility and standardisation
    "reproducibility": Entry("pdeval.analysis.reproducibility.core", _RUN),
    "standardize": Entry("pdeval.analysis.reproducibility.standardize", _RESULT),
    "zscore_table": Entry("pdeval.analysis.reproducibility.standardize", _RESULT),
    # the ecosystem
    "experiment": Entry("pdeval.integrations.pyterrier", ("run", "result")),
    "from_ranx": Entry("pdeval.integrations.ranx"),
    "to_ranx": Entry("pdeval.integrations.ranx", ("run", "qrels")),
}

#: modules imported with ``import pdeval`` (what every evaluation needs); the rest on first use
EAGER = ("pdeval.api", "pdeval.engine.ranking", "pdeval.evaluation.bounds", "pdeval.evaluation.results",
         "pdeval.integrations.trec_eval", "pdeval.measures", "pdeval.sources.io")

#: subpackages that are public names too
SUBPACKAGES = ("datasets", "errors")


def path(name: str) -> str:
    """The dotted path of a public name's definition (``pdeval.api.evaluate``)."""
    entry = API[name]
    return f"{entry.module}.{entry.attribute or name}"
