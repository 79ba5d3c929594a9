"""The ``df.ir`` accessor: the functions of the functional core with the frame bound.

Each method of ``df.ir`` *is* a function of :mod:`pdeval` (same name, same docstring, the same
signature without its first parameter), built from the function by :func:`bind`: calling
``runs.ir.evaluate(qrels, "AP")`` calls ``pdeval.evaluate(runs, qrels, "AP")``. The accessor
adds only a check that the frame is of the kind the function takes (a run, qrels or result
frame), with a message that says which kind it got. So ``help(runs.ir.evaluate)``,
``runs.ir.evaluate?`` and an IDE show every option with its default.

Every public function whose first argument is a run, qrels or result frame has its method
(:data:`METHODS`); the figures of :mod:`pdeval.report.figures` are under ``df.ir.plot``.
"""

from __future__ import annotations

import functools
import inspect
from typing import Callable, Optional, Sequence

import pandas as pd

from pdeval.analysis.agreement import agreement
from pdeval.analysis.correlation import correlation_table, rank_correlation
from pdeval.analysis.experiments import training_sensitivity
from pdeval.analysis.labels import fill_holes, judged_by_source, label_sets, map_grades, merge_qrels
from pdeval.analysis.estimates import estimate
from pdeval.analysis.reproducibility import reproducibility
from pdeval.analysis.standardize import standardize, zscore_table
from pdeval.analysis.pool_bias import leave_out_bias, pool_bias_correction
from pdeval.analysis.leaderboards import compare_leaderboards, leaderboard_changes, leaderboards
from pdeval.analysis.significance import compare
from pdeval.analysis.bootstrap import discriminative_power
from pdeval.analysis.statistics import anova, topic_set_size, tukey_hsd
from pdeval.analysis.swaps import swap_rates
from pdeval.api import evaluate
from pdeval.engine.ranking import rank_run
from pdeval.errors import SchemaError
from pdeval.evaluation.bounds import bounds
from pdeval.evaluation.results import summarize
from pdeval.frames.canonical import QRELS_REQUIRED, RESULT_REQUIRED, RUN_REQUIRED, as_run, frame_kind
from pdeval.integrations.pyterrier import experiment
from pdeval.integrations.ranx import to_ranx
from pdeval.integrations.trec_eval import write_trec_eval
from pdeval.judgments.pooling import exclude_runs, judged, leave_out_pooling, mixed_pool, pool
from pdeval.judgments.adjudication import judging_order
from pdeval.judgments.reduction import reduce
from pdeval.judgments.sampling import sample_inclusion, sample_pool
from pdeval.sources.io import write_qrels, write_run
from pdeval.sources.tables import write_table

__all__ = ["IRAccessor", "METHODS", "bind"]

_NEEDS = {"run": RUN_REQUIRED, "qrels": QRELS_REQUIRED, "result": RESULT_REQUIRED}

#: the functions that are ``df.ir`` methods, by the kind(s) of frame they take first
METHODS: dict[tuple[str, ...], tuple[Callable, ...]] = {
    ("run",): (
        evaluate, bounds, estimate, rank_run, pool, mixed_pool, judged, exclude_runs, leave_out_pooling,
        judged_by_source, leaderboards, fill_holes, sample_pool, sample_inclusion, write_run, reproducibility,
        judging_order, pool_bias_correction, leave_out_bias,
    ),
    ("qrels",): (reduce, merge_qrels, agreement, map_grades, label_sets, write_qrels),
    ("result",): (
        summarize, rank_correlation, correlation_table, compare_leaderboards,
        leaderboard_changes, swap_rates, discriminative_power, compare, tukey_hsd, anova,
        topic_set_size, training_sensitivity, experiment, write_trec_eval, standardize, zscore_table,
    ),
    ("run", "qrels"): (to_ranx,),
    ("run", "qrels", "result"): (write_table,),
}


def _rank_run_frame(frame: pd.DataFrame, options: dict) -> pd.DataFrame:
    """``rank_run`` takes a canonical run frame: the accessor canonicalises it first (aliases,
    types), keeping the ``by`` columns."""
    by = options.get("by")
    return as_run(frame, by=[by] if isinstance(by, str) else (by or ()))


#: per method, how the frame is prepared before the call (besides the kind check)
_PREPARE = {"rank_run": _rank_run_frame}


@pd.api.extensions.register_dataframe_accessor("ir")
class IRAccessor:
    """IR evaluation methods on run, qrels and result frames (``import pdeval`` registers it).

    ``df.ir.<function>(...)`` is ``pdeval.<function>(df, ...)`` for every function of
    :data:`METHODS`; ``df.ir.kind`` tells which kind of frame ``df`` is.
    """

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame

    @property
    def kind(self) -> Optional[str]:
        """``"run"``, ``"qrels"``, ``"result"`` or ``None``."""
        return frame_kind(self._frame)

    def _need(self, kinds: Sequence[str], method: str) -> pd.DataFrame:
        """The frame, if it is of one of ``kinds``; else a :class:`~pdeval.errors.SchemaError`
        naming the method, the columns it needs and the kind of frame it got."""
        got = self.kind
        if got not in kinds:
            described = f"a {got} frame" if got else f"a frame with columns {list(self._frame.columns)}"
            wanted = " or ".join(f"a {kind} frame (columns {list(_NEEDS[kind])})" for kind in kinds)
            raise SchemaError(f".ir.{method} needs {wanted}, but this is {described}.")
        return self._frame

    @property
    def plot(self) -> "_Plots":
        """The figures of :mod:`pdeval.report.figures` with this frame as their data:
        ``result.ir.plot.topic_distributions("AP")``, ``curve.ir.plot.robustness_curve()``."""
        return _Plots(self._frame)


def bind(function: Callable, kinds: Sequence[str]) -> Callable:
    """``function`` as a method of :class:`IRAccessor`: the frame is its first argument.

    The method carries the function's name, docstring and signature without the first
    parameter (``inspect.signature(df.ir.f)`` is the function's minus the frame), and checks
    that the frame is of one of ``kinds`` before calling.
    """
    name = function.__name__
    signature = inspect.signature(function)
    rest = list(signature.parameters.values())[1:]
    prepare = _PREPARE.get(name)

    def method(self: IRAccessor, *args, **kwargs):
        frame = self._need(kinds, name)
        if prepare is not None:
            frame = prepare(frame, kwargs)
        return function(frame, *args, **kwargs)

    functools.update_wrapper(method, function)
    method.__qualname__ = f"{IRAccessor.__name__}.{name}"
    self_parameter = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    method.__signature__ = signature.replace(parameters=[self_parameter, *rest])
    return method


for _kinds, _functions in METHODS.items():
    for _function in _functions:
        setattr(IRAccessor, _function.__name__, bind(_function, _kinds))
del _kinds, _functions, _function


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
