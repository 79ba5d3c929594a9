"""The ``df.ir`` accessor: tells which kind of frame it is on and calls the functions.

Every method is a thin call of a function of the functional core (``pdeval.evaluate``,
``pdeval.reduce``, ...) with the frame as its first argument; the accessor adds nothing but
a check that the frame is of the kind the method needs, with a message that says which
kind it got.
"""

from __future__ import annotations

import functools
from typing import Any

import pandas as pd

from pdeval.errors import SchemaError
from pdeval.frames.canonical import QRELS_REQUIRED, RESULT_REQUIRED, RUN_REQUIRED, frame_kind

_NEEDS = {"run": RUN_REQUIRED, "qrels": QRELS_REQUIRED, "result": RESULT_REQUIRED}


@pd.api.extensions.register_dataframe_accessor("ir")
class IRAccessor:
    """IR evaluation methods on run, qrels and result frames (``import pdeval`` registers it)."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame

    @property
    def kind(self) -> str | None:
        """``"run"``, ``"qrels"``, ``"result"`` or ``None``."""
        return frame_kind(self._frame)

    def _need(self, kind: str, method: str) -> pd.DataFrame:
        got = self.kind
        if got != kind:
            described = f"a {got} frame" if got else f"a frame with columns {list(self._frame.columns)}"
            raise SchemaError(
                f".ir.{method} needs a {kind} frame (columns {list(_NEEDS[kind])}), but this is {described}."
            )
        return self._frame

    # ---- run frames ---------------------------------------------------------------------
    def evaluate(self, qrels: pd.DataFrame, measures: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.evaluate(run, qrels, measures, **options)`` on this run frame."""
        from pdeval.api import evaluate

        return evaluate(self._need("run", "evaluate"), qrels, measures, **options)

    def bounds(self, qrels: pd.DataFrame, measures: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.bounds(run, qrels, measures, **options)``: value, the two judgings, low, high, residual."""
        from pdeval.evaluation.bounds import bounds

        return bounds(self._need("run", "bounds"), qrels, measures, **options)

    def rank(self, **options: Any) -> pd.DataFrame:
        """``pdeval.rank_run(run, **options)``: trec_eval order with a fresh rank column."""
        from pdeval.frames.canonical import as_run
        from pdeval.engine.ranking import rank_run

        return rank_run(as_run(self._need("run", "rank"), by=options.get("by", ())), **options)

    def pool(self, depth: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.pool(run, depth, **options)``: the depth-k pool of this run frame."""
        from pdeval.judgments.pooling import pool

        return pool(self._need("run", "pool"), depth, **options)

    def judged(self, qrels: pd.DataFrame, **options: Any) -> pd.DataFrame:
        """``pdeval.judged(run, qrels, **options)``: shares of judged documents at depths k."""
        from pdeval.judgments.pooling import judged

        return judged(self._need("run", "judged"), qrels, **options)

    def exclude_runs(self, qrels: pd.DataFrame, **options: Any):
        """``pdeval.exclude_runs(run, qrels, **options)``: kept runs and the excluded ones."""
        from pdeval.judgments.pooling import exclude_runs

        return exclude_runs(self._need("run", "exclude_runs"), qrels, **options)

    def leave_out_pooling(self, qrels: pd.DataFrame, depth: int, **options: Any) -> pd.DataFrame:
        """``pdeval.leave_out_pooling(run, qrels, depth, **options)``."""
        from pdeval.judgments.pooling import leave_out_pooling

        return leave_out_pooling(self._need("run", "leave_out_pooling"), qrels, depth, **options)

    def judged_by_source(self, qrels: pd.DataFrame, **options: Any) -> pd.DataFrame:
        """``pdeval.judged_by_source(run, qrels, **options)``: Judged@k split by label source."""
        from pdeval.analysis.agreement import judged_by_source

        return judged_by_source(self._need("run", "judged_by_source"), qrels, **options)

    def leaderboards(self, sets: Any, measures: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.leaderboards(run, sets, measures, **options)``: every label set as a variant."""
        from pdeval.analysis.agreement import leaderboards

        return leaderboards(self._need("run", "leaderboards"), sets, measures, **options)

    def fill_holes(self, qrels: pd.DataFrame, judge: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.fill_holes(run, qrels, judge, **options)``: a judge's labels of the unjudged top k."""
        from pdeval.analysis.agreement import fill_holes

        return fill_holes(self._need("run", "fill_holes"), qrels, judge, **options)

    def to_ranx(self):
        """``pdeval.to_ranx(frame)``: this run frame as ranx ``Run`` objects, or this qrels
        frame as a ranx ``Qrels``."""
        from pdeval.integrations.ranx import to_ranx

        if self.kind not in ("run", "qrels"):
            self._need("run", "to_ranx")
        return to_ranx(self._frame)

    # ---- qrels frames -------------------------------------------------------------------
    def reduce(self, levels: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.reduce(qrels, levels, **options)``: qrels variants with level, sample."""
        from pdeval.judgments.reduction import reduce

        return reduce(self._need("qrels", "reduce"), levels, **options)

    def merge(self, automatic: pd.DataFrame, policy: str = "fill", **options: Any):
        """``pdeval.merge_qrels(qrels, automatic, policy, **options)``: human and automatic labels."""
        from pdeval.analysis.agreement import merge_qrels

        return merge_qrels(self._need("qrels", "merge"), automatic, policy, **options)

    def agreement(self, others: Any, **options: Any):
        """``pdeval.agreement(qrels, others, **options)``: kappa, alpha, confusion against this reference."""
        from pdeval.analysis.agreement import agreement

        return agreement(self._need("qrels", "agreement"), others, **options)

    def map_grades(self, mapping: Any) -> pd.DataFrame:
        """``pdeval.map_grades(qrels, mapping)``: grades moved to another scale."""
        from pdeval.analysis.agreement import map_grades

        return map_grades(self._need("qrels", "map_grades"), mapping)

    def sample_pool(self, run: pd.DataFrame, **options: Any) -> pd.DataFrame:
        """``pdeval.sample_pool(qrels, run, **options)``: a stratified sample (sample_eval qrels)."""
        from pdeval.judgments.sampling import sample_pool

        return sample_pool(self._need("qrels", "sample_pool"), run, **options)

    def sample_inclusion(self, run: pd.DataFrame, **options: Any) -> pd.DataFrame:
        """``pdeval.sample_inclusion(qrels, run, **options)``: a statAP sample (prels)."""
        from pdeval.judgments.sampling import sample_inclusion

        return sample_inclusion(self._need("qrels", "sample_inclusion"), run, **options)

    # ---- result frames ------------------------------------------------------------------
    @property
    def plot(self) -> "_Plots":
        """The figures of :mod:`pdeval.report.figures` with this frame as their data:
        ``result.ir.plot.topic_distributions("AP")``, ``curve.ir.plot.robustness_curve()``."""
        return _Plots(self._frame)

    def summarize(self, **options: Any) -> pd.DataFrame:
        """``pdeval.summarize(result, **options)``: per-run means."""
        from pdeval.evaluation.results import summarize

        return summarize(self._need("result", "summarize"), **options)

    def rank_correlation(self, reference: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.rank_correlation(result, reference, **options)``."""
        from pdeval.analysis.correlation import rank_correlation

        return rank_correlation(self._need("result", "rank_correlation"), reference, **options)

    def compare_leaderboards(self, reference: str, **options: Any) -> pd.DataFrame:
        """``pdeval.compare_leaderboards(result, reference, **options)``: tau, tau_AP, top-k per label set."""
        from pdeval.analysis.agreement import compare_leaderboards

        return compare_leaderboards(self._need("result", "compare_leaderboards"), reference, **options)

    def leaderboard_changes(self, reference: str, **options: Any) -> pd.DataFrame:
        """``pdeval.leaderboard_changes(result, reference, **options)``: how far each run moves."""
        from pdeval.analysis.agreement import leaderboard_changes

        return leaderboard_changes(self._need("result", "leaderboard_changes"), reference, **options)

    def correlation_table(self, **options: Any) -> pd.DataFrame:
        """``pdeval.correlation_table(result, **options)``."""
        from pdeval.analysis.correlation import correlation_table

        return correlation_table(self._need("result", "correlation_table"), **options)

    def swap_rates(self, measure: str, **options: Any):
        """``pdeval.swap_rates(result, measure, **options)``."""
        from pdeval.analysis.significance import swap_rates

        return swap_rates(self._need("result", "swap_rates"), measure, **options)

    def discriminative_power(self, **options: Any):
        """``pdeval.discriminative_power(result, **options)``."""
        from pdeval.analysis.significance import discriminative_power

        return discriminative_power(self._need("result", "discriminative_power"), **options)

    def compare(self, **options: Any) -> pd.DataFrame:
        """``pdeval.compare(result, **options)``: paired significance tests between runs."""
        from pdeval.analysis.significance import compare

        return compare(self._need("result", "compare"), **options)

    def tukey_hsd(self, measure: Any = None, **options: Any) -> pd.DataFrame:
        """``pdeval.tukey_hsd(result, measure, **options)``: Tukey's HSD, topics paired."""
        from pdeval.analysis.statistics import tukey_hsd

        return tukey_hsd(self._need("result", "tukey_hsd"), measure, **options)

    def anova(self, measure: Any = None, **options: Any):
        """``pdeval.anova(result, measure, **options)``: ANOVA table, V_E and ES_E2."""
        from pdeval.analysis.statistics import anova

        return anova(self._need("result", "anova"), measure, **options)

    def topic_set_size(self, measure: Any = None, **options: Any) -> pd.DataFrame:
        """``pdeval.topic_set_size(result, measure, **options)``: topics needed (Sakai 2016)."""
        from pdeval.analysis.statistics import topic_set_size

        return topic_set_size(self._need("result", "topic_set_size"), measure, **options)

    def experiment(self, **options: Any) -> pd.DataFrame:
        """``pdeval.experiment(result, **options)``: PyTerrier's experiment table."""
        from pdeval.integrations.pyterrier import experiment

        return experiment(self._need("result", "experiment"), **options)

    def write_trec_eval(self, path: Any = None, **options: Any) -> str:
        """``pdeval.write_trec_eval(result, path, **options)``: trec_eval's output layout."""
        from pdeval.integrations.trec_eval import write_trec_eval

        return write_trec_eval(self._need("result", "write_trec_eval"), path, **options)

    def training_sensitivity(self, **options: Any):
        """``pdeval.training_sensitivity(result, **options)``."""
        from pdeval.analysis.experiments import training_sensitivity

        return training_sensitivity(self._need("result", "training_sensitivity"), **options)


class _Plots:
    """``df.ir.plot.<figure>(...)`` calls ``pdeval.report.figures.<figure>(df, ...)``."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame

    def __getattr__(self, name: str):
        from pdeval.report import figures as plotting

        if name not in plotting.__all__:
            raise AttributeError(f"no figure {name!r}; the figures are {plotting.__all__}")
        return functools.partial(getattr(plotting, name), self._frame)

    def __dir__(self) -> list:
        from pdeval.report import figures as plotting

        return list(plotting.__all__)
