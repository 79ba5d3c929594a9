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

from .errors import SchemaError
from .frames import QRELS_REQUIRED, RESULT_REQUIRED, RUN_REQUIRED, frame_kind

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
        from .evaluation import evaluate

        return evaluate(self._need("run", "evaluate"), qrels, measures, **options)

    def bounds(self, qrels: pd.DataFrame, measures: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.bounds(run, qrels, measures, **options)``: low, high and residual per topic."""
        from .bounds import bounds

        return bounds(self._need("run", "bounds"), qrels, measures, **options)

    def rank(self, **options: Any) -> pd.DataFrame:
        """``pdeval.rank_run(run, **options)``: trec_eval order with a fresh rank column."""
        from .frames import as_run
        from .ranking import rank_run

        return rank_run(as_run(self._need("run", "rank"), by=options.get("by", ())), **options)

    def pool(self, depth: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.pool(run, depth, **options)``: the depth-k pool of this run frame."""
        from .judgments import pool

        return pool(self._need("run", "pool"), depth, **options)

    def judged(self, qrels: pd.DataFrame, **options: Any) -> pd.DataFrame:
        """``pdeval.judged(run, qrels, **options)``: shares of judged documents at depths k."""
        from .judgments import judged

        return judged(self._need("run", "judged"), qrels, **options)

    def exclude_runs(self, qrels: pd.DataFrame, **options: Any):
        """``pdeval.exclude_runs(run, qrels, **options)``: kept runs and the excluded ones."""
        from .judgments import exclude_runs

        return exclude_runs(self._need("run", "exclude_runs"), qrels, **options)

    def leave_out_pooling(self, qrels: pd.DataFrame, depth: int, **options: Any) -> pd.DataFrame:
        """``pdeval.leave_out_pooling(run, qrels, depth, **options)``."""
        from .judgments import leave_out_pooling

        return leave_out_pooling(self._need("run", "leave_out_pooling"), qrels, depth, **options)

    # ---- qrels frames -------------------------------------------------------------------
    def reduce(self, levels: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.reduce(qrels, levels, **options)``: qrels variants with level, sample."""
        from .judgments import reduce

        return reduce(self._need("qrels", "reduce"), levels, **options)

    # ---- result frames ------------------------------------------------------------------
    @property
    def plot(self) -> "_Plots":
        """The figures of :mod:`pdeval.plotting` with this frame as their data:
        ``result.ir.plot.topic_distributions("AP")``, ``curve.ir.plot.robustness_curve()``."""
        return _Plots(self._frame)

    def system_means(self, **options: Any) -> pd.DataFrame:
        """``pdeval.system_means(result, **options)``: per-run means per measure and variant."""
        from .correlation import system_means

        return system_means(self._need("result", "system_means"), **options)

    def summarize(self, **options: Any) -> pd.DataFrame:
        """``pdeval.summarize(result, **options)``: per-run means."""
        from .evaluation import summarize

        return summarize(self._need("result", "summarize"), **options)

    def rank_correlation(self, reference: Any, **options: Any) -> pd.DataFrame:
        """``pdeval.rank_correlation(result, reference, **options)``."""
        from .correlation import rank_correlation

        return rank_correlation(self._need("result", "rank_correlation"), reference, **options)

    def correlation_table(self, **options: Any) -> pd.DataFrame:
        """``pdeval.correlation_table(result, **options)``."""
        from .correlation import correlation_table

        return correlation_table(self._need("result", "correlation_table"), **options)

    def swap_rates(self, measure: str, **options: Any):
        """``pdeval.swap_rates(result, measure, **options)``."""
        from .significance import swap_rates

        return swap_rates(self._need("result", "swap_rates"), measure, **options)

    def discriminative_power(self, **options: Any):
        """``pdeval.discriminative_power(result, **options)``."""
        from .significance import discriminative_power

        return discriminative_power(self._need("result", "discriminative_power"), **options)

    def compare(self, **options: Any) -> pd.DataFrame:
        """``pdeval.compare(result, **options)``: paired significance tests between runs."""
        from .significance import compare

        return compare(self._need("result", "compare"), **options)

    def training_sensitivity(self, **options: Any):
        """``pdeval.training_sensitivity(result, **options)``."""
        from .experiments import training_sensitivity

        return training_sensitivity(self._need("result", "training_sensitivity"), **options)


class _Plots:
    """``df.ir.plot.<figure>(...)`` calls ``pdeval.plotting.<figure>(df, ...)``."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame

    def __getattr__(self, name: str):
        from . import plotting

        if name not in plotting.__all__:
            raise AttributeError(f"no figure {name!r}; the figures are {plotting.__all__}")
        return functools.partial(getattr(plotting, name), self._frame)

    def __dir__(self) -> list:
        from . import plotting

        return list(plotting.__all__)
