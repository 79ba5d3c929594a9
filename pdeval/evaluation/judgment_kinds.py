"""Qrels frames of other kinds of judgments: preference frames and judgment groups.

:func:`pdeval.evaluate` reads the kind off the columns (:func:`judgment_kind`): a frame with
``judgment_group`` and ``judgment_subgroup`` holds preference judgments (trec_eval's prefs
format, or :func:`pdeval.qrels_prefs` of graded qrels) and is evaluated with the ``prefs_*``
measures of the registry (:mod:`pdeval.measures.preference_judgments`); a frame with a
``judgment_group`` column alone holds several independent judgment sets of each topic
(trec_eval's ``qrels_jg``), and every measure is the mean over a topic's groups of its value
against each group (trec_eval's ``*_avgjg``: Voorhees, IP&M 36(5), 2000).
"""

from __future__ import annotations

from typing import Iterable

import pandas as pd

from pdeval.engine.options import EngineOptions
from pdeval.errors import MeasureError, PdevalError
from pdeval.frames.canonical import as_run, require_rows
from pdeval.frames.foreign import to_frame
from pdeval.measures import parse_all

__all__ = ["GROUP", "SUBGROUP", "average_groups", "evaluate_preference_frame", "judgment_kind"]

#: the column of a qrels frame naming the judgment group (an independent judgment set)
GROUP = "judgment_group"
#: the column of a preference frame naming the judgment sub-group
SUBGROUP = "judgment_subgroup"

#: engine options a preference evaluation reads; every other one must keep its default
_PREFERENCE_OPTIONS = ("depth", "complete", "duplicates", "undefined")


def judgment_kind(qrels: pd.DataFrame, variants: Iterable[str] = ()) -> str:
    """``"preferences"``, ``"groups"`` (a judgment-group column not named as a variant) or
    ``"relevance"``."""
    # an Arrow table names its columns in column_names (its .columns are the data); records
    # (ir_datasets) hold relevance
    columns = getattr(qrels, "column_names", None) or getattr(qrels, "columns", None)
    columns = {str(c) for c in columns} if columns is not None else set()
    if GROUP in columns and SUBGROUP in columns:
        return "preferences"
    if GROUP in columns and GROUP not in set(variants or ()):
        return "groups"
    return "relevance"


def evaluate_preference_frame(run: pd.DataFrame, prefs: pd.DataFrame, measures, options: EngineOptions) -> pd.DataFrame:
    """The ``prefs_*`` ``measures`` of every run and topic against the preference frame ``prefs``
    (``depth`` is trec_eval's ``-M``, ``complete`` its ``-c``): ``run``, ``query_id``,
    ``measure``, ``value``."""
    from pdeval.measures.preference_counts import evaluate_prepared
    from pdeval.measures.preference_structure import Preferences

    parsed = parse_all(measures)
    wrong = [str(m) for m in parsed if m.spec.judgments != "preferences"]
    if wrong:
        raise MeasureError(f"{wrong} read relevance judgments, but the qrels frame holds preferences (it has "
                           f"{GROUP!r} and {SUBGROUP!r} columns): evaluate them against a qrels frame, and a "
                           "preference frame with the prefs_* measures (pdeval.available_measures())")
    cut = [str(m) for m in parsed if m.param("depth") is not None]
    if cut:
        raise MeasureError(f"{cut}: a preference measure takes no depth of its own; pass depth= to evaluate")
    default = EngineOptions()
    changed = [name for name in type(options).__dataclass_fields__
               if name not in _PREFERENCE_OPTIONS and getattr(options, name) != getattr(default, name)]
    if changed:
        raise PdevalError(f"{changed} do not apply to preference judgments; prefs_* measures take depth= and "
                          "complete= only")
    run, prefs = as_run(to_frame(run), duplicates=options.duplicates), to_frame(prefs)
    require_rows(run, "run")
    names = list(dict.fromkeys(m.name for m in parsed))
    return evaluate_prepared(Preferences(prefs), run, names, depth=options.depth, complete=options.complete)


def average_groups(result: pd.DataFrame, group: str = GROUP) -> pd.DataFrame:
    """The mean over ``group`` of each (other keys, topic, measure) of ``result``, undefined
    values counting 0 (trec_eval's ``*_avgjg``)."""
    keys = [c for c in result.columns if c not in (group, "value")]
    filled = result.assign(value=result["value"].fillna(0.0))
    averaged = filled.groupby(keys, sort=False, observed=True)["value"].mean().reset_index()
    return averaged[[*keys, "value"]]


def evaluate_by_kind(run: pd.DataFrame, qrels: pd.DataFrame, measures, options: dict) -> pd.DataFrame:
    """:func:`pdeval.evaluate` of in-memory frames, by the kind of judgments ``qrels`` holds
    (:func:`judgment_kind`); ``options`` are the engine options passed."""
    from pdeval.evaluation.core import evaluate_frames

    variants = list(options.get("variants") or ())
    kind = judgment_kind(qrels, variants)
    if kind == "preferences":
        return evaluate_preference_frame(run, qrels, measures, EngineOptions.of(options))
    if kind == "groups":  # every group a variant, then the mean over a topic's groups
        grouped = EngineOptions.of({"undefined": "nan", **options, "variants": [*variants, GROUP]})
        return average_groups(evaluate_frames(run, qrels, measures, grouped), GROUP)
    return evaluate_frames(run, qrels, measures, EngineOptions.of(options))
