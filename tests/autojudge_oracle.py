"""The TREC Auto-Judge meta-evaluation (``autojudge-evaluate`` 1.1.0, test extra) as an oracle.

``import autojudge_evaluate`` runs its command line, whose imports fetch nltk data from the
network and fail offline. The modules that compute -- ``pyircore`` (tau_AP_b), ``tau_gap``,
and ``evaluation`` (``LeaderboardEvaluator``: alignment, missing-run policies, top-k, per
topic) -- are loaded here without running the package's ``__init__``: the packages are
registered as bare namespaces for the time of the import (``autojudge_base`` is needed only
for a type alias). :func:`autojudge` returns ``None`` when the package is not installed.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from pathlib import Path
from typing import Optional

_LOADED: dict = {}


def _bare(name: str, **attributes) -> types.ModuleType:
    spec = importlib.util.find_spec(name)
    module = types.ModuleType(name)
    module.__path__ = list(spec.submodule_search_locations)
    module.__dict__.update(attributes)
    return module


def autojudge() -> Optional[types.SimpleNamespace]:
    """The oracle's modules (``pyircore``, ``tau_gap``, ``evaluation``, ``eval_results``), or None."""
    if "modules" in _LOADED:
        return _LOADED["modules"]
    if importlib.util.find_spec("autojudge_evaluate") is None or importlib.util.find_spec("autojudge_base") is None:
        _LOADED["modules"] = None
        return None
    saved = {n: sys.modules.get(n) for n in ("autojudge_evaluate", "autojudge_base")}
    sys.modules["autojudge_evaluate"] = _bare("autojudge_evaluate")
    sys.modules["autojudge_base"] = _bare("autojudge_base", LeaderboardFormat=str)
    try:
        modules = types.SimpleNamespace(**{
            name: importlib.import_module(f"autojudge_evaluate.{name}")
            for name in ("pyircore", "tau_gap", "eval_results", "evaluation")
        })
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
    _LOADED["modules"] = modules
    return modules


def _eval_result(oracle, frame) -> object:
    """An ``EvalResult`` of a per-topic frame ``run, query_id, value`` (one measure ``m``),
    entries added in run-name order, aggregates computed as the package computes them."""
    builder = oracle.eval_results.EvalResultBuilder(oracle.eval_results.MeasureSpecs.from_single({"m": "float"}))
    for run, topic, value in frame.sort_values(["run", "query_id"])[["run", "query_id", "value"]].itertuples(index=False):
        builder.add(str(run), str(topic), "m", float(value))
    return builder.build(compute_aggregates=True, verify=False, on_missing="ignore")


def leaderboard_correlations(truth, judge, methods, on_missing="error", per_topic=False) -> dict:
    """``LeaderboardEvaluator.evaluate`` (or ``evaluate_per_topic``) of the per-topic frames
    ``judge`` against ``truth``: ``{method: value}`` (per topic: ``{topic: {method: value}}``)."""
    oracle = autojudge()
    truth_result, judge_result = _eval_result(oracle, truth), _eval_result(oracle, judge)

    class Evaluator(oracle.evaluation.LeaderboardEvaluator):
        def _load_eval_result(self, path, format, has_header=False, on_missing="error"):
            return judge_result

    evaluator = Evaluator(truth_leaderboard=Path("truth"), on_missing=on_missing, correlation_methods=list(methods))
    evaluator._truth_result = truth_result
    if per_topic:
        return evaluator.evaluate_per_topic(Path("judge"))[("m", "m")]
    return evaluator.evaluate(Path("judge"))[("m", "m")]
