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
import importlib
import inspect
from typing import Callable, Optional, Sequence

import pandas as pd

from pdeval.errors import SchemaError
from pdeval.frames.canonical import QRELS_REQUIRED, RESULT_REQUIRED, RUN_REQUIRED, as_run, frame_kind
from pdeval.public import API
from pdeval.public import path as public_path

__all__ = ["IRAccessor", "METHODS", "bind", "methods"]

_NEEDS = {"run": RUN_REQUIRED, "qrels": QRELS_REQUIRED, "result": RESULT_REQUIRED}

#: the functions that are ``df.ir`` methods (dotted paths), by the kind(s) of frame they take
#: first, built from :data:`pdeval.public.API`; each is imported when its method is first used,
#: so ``import pdeval`` stays light
METHODS: dict[tuple[str, ...], tuple[str, ...]] = {}
for _name, _entry in API.items():
    if _entry.kinds:
        METHODS[_entry.kinds] = (*METHODS.get(_entry.kinds, ()), public_path(_name))
del _name, _entry


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
        if "any" not in kinds and got not in kinds:
            described = f"a {got} frame" if got else f"a frame with columns {list(self._frame.columns)}"
            wanted = " or ".join(f"a {kind} frame (columns {list(_NEEDS[kind])})" for kind in kinds)
            raise SchemaError(f".ir.{method} needs {wanted}, but this is {described}.")
        return self._frame

    @property
    def plot(self) -> "_Plots":
        """The figures of :mod:`pdeval.report.figures` with this frame as their data:
        ``result.ir.plot.topic_distributions(measures="AP")``, ``curve.ir.plot.robustness_curve()``."""
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


def _resolve(path: str) -> Callable:
    module, name = path.rsplit(".", 1)
    return getattr(importlib.import_module(module), name)


class _Method:
    """A ``df.ir`` method not bound yet: on first use it imports its function and puts the
    bound method (:func:`bind`) in its place on :class:`IRAccessor`."""

    def __init__(self, path: str, kinds: Sequence[str]):
        self.path, self.kinds = path, tuple(kinds)

    def __get__(self, accessor: Optional[IRAccessor], owner: type = IRAccessor):
        method = bind(_resolve(self.path), self.kinds)
        setattr(owner, method.__name__, method)
        return method if accessor is None else method.__get__(accessor, owner)


def methods() -> dict[str, tuple[Callable, tuple[str, ...]]]:
    """Every ``df.ir`` method's function and the frame kinds it takes, by name (imports them)."""
    return {path.rsplit(".", 1)[1]: (_resolve(path), kinds) for kinds, paths in METHODS.items() for path in paths}


for _kinds, _paths in METHODS.items():
    for _path in _paths:
        setattr(IRAccessor, _path.rsplit(".", 1)[1], _Method(_path, _kinds))
del _kinds, _paths, _path


#: the figures of :mod:`pdeval.report.figures` (its ``__all__``; a test keeps the two equal), listed
#: here so that ``df.ir.plot`` documents them without importing matplotlib
FIGURES = ("robustness_curve", "mean_by_level", "estimated_vs_actual", "correlation_heatmap",
           "discriminative_power_bars", "swap_rate_curve", "topic_distributions", "significance_matrix",
           "bound_intervals", "estimate_intervals", "judge_scatter", "judge_intervals")


class _Plots:
    """The figures of :mod:`pdeval.report.figures` with this frame as their first argument:
    ``df.ir.plot.<figure>(...)`` is ``pdeval.report.figures.<figure>(df, ...)``."""

    def __init__(self, frame: pd.DataFrame):
        self._frame = frame


def _figure(name: str) -> property:
    """The figure ``name`` bound to the frame (matplotlib is imported on first use)."""

    def bound(self: _Plots) -> Callable:
        from pdeval.report import figures as plotting

        return functools.partial(getattr(plotting, name), self._frame)

    return property(bound, doc=f"pdeval.report.figures.{name} with this frame as its first argument; "
                               f"help(pdeval.report.figures.{name}) for its parameters.")


for _figure_name in FIGURES:
    setattr(_Plots, _figure_name, _figure(_figure_name))
del _figure_name
