"""Entry points that choose an implementation by what they are given.

:func:`evaluate` is the one place that knows both the in-memory engine
(:func:`pdeval.evaluation.core.evaluate`) and its adapters: a dask run frame goes to
:func:`pdeval.dask.evaluate_dask`, and ``output="polars"``/``"arrow"`` converts the result
(:func:`pdeval.integrations.arrow.from_pandas`). The engine itself knows neither.
"""

from __future__ import annotations

import sys
from typing import Any, Iterable, Literal, Union

import pandas as pd

from pdeval.common.contract import Choice, contract
from pdeval.engine.options import takes_engine_options
from pdeval.errors import PdevalError
from pdeval.evaluation.core import MeasureLike
from pdeval.evaluation.judgment_kinds import evaluate_by_kind
from pdeval.frames.domains import Frame
from pdeval.measures.domains import Measures

Output = Literal["pandas", "polars", "arrow"]


@contract(
    run=Frame("run", foreign=True),
    qrels=Frame("qrels", foreign=True),
    measures=Measures(),
    output=Choice("pandas", "polars", "arrow"),
)
@takes_engine_options
def evaluate(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    *,
    output: Output = "pandas",
    **options: Any,
) -> pd.DataFrame:
    """Evaluate every run of ``run`` against every qrels variant of ``qrels``.

    One sort of the run, one lookup of each ranked document's judgments in every qrels
    variant, and numpy kernels per measure (see the user guide's "Architecture").

    Parameters
    ----------
    run : DataFrame
        Long run frame: ``query_id``, ``doc_id``, ``score`` and optionally ``run`` (the system
        name) and the ``by`` columns. Aliases such as ``qid``/``docno`` are accepted (by the
        precedence of :data:`pdeval.frames.PRECEDENCE`). Polars and Arrow frames, ranx
        ``Run`` objects and iterables of ir_datasets records are converted at the boundary
        (:func:`pdeval.frames.foreign.to_frame`); a dask DataFrame is evaluated partition by
        partition (:func:`pdeval.dask.evaluate_dask`) and gives a lazy dask result.
    qrels : DataFrame
        Long qrels frame: ``query_id``, ``doc_id``, ``relevance``. The columns ``level``,
        ``sample``, ``depth``, ``label_set`` (made by :func:`pdeval.reduce`,
        :func:`pdeval.pool`, ...) and those named in ``variants`` name qrels variants: all
        are evaluated at once. ``iteration``, ``stratum``, ``inclusion_prob`` and ``source``
        are information; any other extra column is ignored with a
        :class:`~pdeval.errors.ColumnWarning`. A ``judgment_group`` column (judgment groups,
        :func:`pdeval.read_qrels_jg`) not named in ``variants`` gives each topic's mean over
        its groups; a preference frame (``judgment_group`` and ``judgment_subgroup``,
        :func:`pdeval.read_prefs`, :func:`pdeval.qrels_prefs`) is evaluated with the
        ``prefs_*`` measures.
    measures : str, Measure or list of them
        Measure strings (``"AP"``, ``"nDCG'@10"``, ``"infAP(c=1.5)"``; see
        :func:`pdeval.available_measures`), :class:`~pdeval.measures.Measure` objects or
        ir_measures measure objects.
    output : {'pandas', 'polars', 'arrow'}, default 'pandas'
        The type of the result: a pandas DataFrame, a Polars DataFrame or a pyarrow Table.
    {engine_options}

    Returns
    -------
    DataFrame
        Columns ``run``, the ``by`` columns, the qrels variant columns, ``query_id``,
        ``measure`` (the canonical string) and ``value``.

    Raises
    ------
    SchemaError
        Missing or ambiguous columns, empty frames, ids that cannot match.
    MeasureError
        An unknown measure or parameter (with the closest known name).
    OverlapError
        No topic in common between the run and the qrels. Topics on one side only, runs
        lacking some topics and runs without a judged document are reported by an
        :class:`~pdeval.errors.OverlapWarning` instead (the values stay trec_eval's).
    PdevalError
        An option outside its domain.

    See Also
    --------
    summarize : The mean of every measure per run.
    bounds : Each value's range over the judgings of the unjudged documents.
    estimate : Each value as it would be if the unjudged documents were judged.
    reduce : Qrels variants with fewer judgments, evaluated here in one call.

    Examples
    --------
    >>> run = pd.DataFrame({"run": "bm25", "query_id": "1", "doc_id": ["d1", "d2", "d3"],
    ...                     "score": [3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d3", "d4"], "relevance": [1, 0, 1]})
    >>> pdeval.evaluate(run, qrels, ["AP", "P@2", "Bpref"])
        run query_id measure  value
    0  bm25        1      AP    0.5
    1  bm25        1     P@2    0.5
    2  bm25        1   Bpref    0.5
    """
    if "dask.dataframe" in sys.modules:  # a dask frame can only exist once dask is imported
        from pdeval.dask import evaluate_dask, is_dask_frame

        if is_dask_frame(run):
            if output != "pandas":
                raise PdevalError("output= converts in-memory results; a dask result stays a dask frame")
            return evaluate_dask(run, qrels, measures, **options)
    result = evaluate_by_kind(run, qrels, measures, options)
    if output != "pandas":
        from pdeval.integrations.arrow import from_pandas

        return from_pandas(result, output)
    return result


__all__ = ["evaluate"]
