"""pdeval measures in ir_measures, and ir_measures measure objects in pdeval.

**pdeval -> ir_measures.** :func:`measure` wraps any pdeval measure string as an
ir_measures measure through ir_measures' documented extension point for measures computed
outside its providers (``ir_measures.define``, served by its runtime provider). It works
wherever ir_measures measures do: ``ir_measures.calc_aggregate``, ``iter_calc``, and
PyTerrier's ``pt.Experiment(eval_metrics=[...])``::

    from pdeval.integrations import ir_measures as pm
    ir_measures.calc_aggregate([pm.measure("bpref_R"), ir_measures.AP], qrels, run)

The values are pdeval's: the whole run and qrels go to :func:`pdeval.evaluate` once, with
``complete=True`` because ir_measures averages over every qrels topic (a topic the run
lacks is an empty ranking). A measure is named by its canonical pdeval string; when
ir_measures has a measure of the same name (``AP``, ``P@10`` ...), by ``pdeval.`` and that
string, since ir_measures identifies measures by name and would otherwise merge the two.

**ir_measures -> pdeval.** :func:`measure_string` maps an ir_measures measure object
(``ir_measures.AP@10``, ``nDCG(judged_only=True)@10``, ``Bpref(rel=2)``) to the pdeval
measure computing the same thing; :func:`pdeval.measures.parse` calls it, so such objects
are accepted wherever a measure string is. ``judged_only=True`` is pdeval's prime (the
condensed list, trec_eval ``-J``), ``rel`` the relevance threshold, ``gains`` the gains;
``NumRet(rel=k)`` (ir_measures' ``NumRelRet``) is ``NumRelRet(rel=k)``. A measure pdeval
does not compute raises :class:`~pdeval.errors.MeasureError`.
"""

from __future__ import annotations

from typing import Any, Iterator, Union

from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.measures import Measure, parse
from pdeval.measures.foreign import EQUIVALENTS, ir_measure_text, is_ir_measure

def measure_string(obj: Any) -> str:
    """The canonical pdeval measure string of an ir_measures measure object
    (:func:`pdeval.measures.foreign.ir_measure_text`, then parsed)."""
    return str(parse(ir_measure_text(obj)))


def _ir_measures_knows(name: str) -> bool:
    import ir_measures

    try:
        ir_measures.parse_measure(name).validate_params()
    except Exception:  # ir_measures raises assorted errors (NameError, ValueError, SyntaxError) for unknown names
        return False
    return True


@takes_engine_options
def measure(spec: Union[str, Measure], *, name: str = None, complete: bool = True, **options: Any):
    """A pdeval measure as an ir_measures measure (``ir_measures.define``).

    Parameters
    ----------
    spec : str or Measure
        A pdeval measure string or :class:`~pdeval.measures.Measure` (``"bpref_R"``,
        ``"RankEff"``, ``"infAP(c=1.5)"``, ``"nDCG'@10"``); the cutoff belongs in the string.
    name : str, optional
        The name ir_measures and PyTerrier show (default: the canonical pdeval string, prefixed
        by ``pdeval.`` when ir_measures has a measure of that name).
    complete : bool, default True
        trec_eval ``-c``, on by default because ir_measures averages over every qrels topic (a
        topic the run lacks is an empty ranking).
    {engine_options}

    Returns
    -------
    ir_measures measure
        The measure; its values are those of :func:`pdeval.evaluate` with these options
        (``score_precision="float32"`` orders by 32-bit scores as pytrec_eval does).

    Raises
    ------
    MeasureError
        For a measure string pdeval does not know.
    PdevalError
        For an unknown or invalid option, when the measure is made.
    """
    import ir_measures

    from pdeval.evaluation.core import evaluate_frames

    parsed = parse(spec)
    canonical = str(parsed)
    if name is None:
        name = f"pdeval.{canonical}" if _ir_measures_knows(canonical) else canonical
    engine = EngineOptions.of({**options, "complete": complete}, where="measure")

    def values(qrels, run) -> Iterator[tuple[str, float]]:
        result = evaluate_frames(run, qrels, parsed, engine)
        return zip(result["query_id"].tolist(), result["value"].tolist())

    defined = ir_measures.define(
        values, name=name, support_cutoff=False, pretty_name=name, short_desc=parsed.spec.summary
    )
    type(defined).PDEVAL_MEASURE = canonical
    return defined


__all__ = ["EQUIVALENTS", "is_ir_measure", "measure", "measure_string"]
