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
lacks is an empty ranking), and with ``score_precision="float32"``: ties are ordered at the
precision of ir_measures' default provider (pytrec_eval), so that a pdeval measure and the
ir_measures measure beside it give the same number for the same measure in one
``calc_aggregate`` or ``pt.Experiment`` table (``measure(..., score_precision="float64")``
orders by the scores as given, as :func:`pdeval.evaluate` does). A measure is named by its canonical pdeval string; when
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

from pdeval.engine.options import EngineOptions, ScorePrecision, takes_engine_options
from pdeval.measures import Measure, parse
from pdeval.measures.foreign import EQUIVALENTS, ir_measure_text, is_ir_measure

def measure_string(obj: Any) -> str:
    """The canonical pdeval measure string of an ir_measures measure object
    (:func:`pdeval.measures.foreign.ir_measure_text`, then parsed)."""
    return str(parse(ir_measure_text(obj)))


#: the options :func:`measure` sets for ir_measures, not shown in its names
_DEFAULTS = {"complete": True, "score_precision": "float32"}


def _ir_measures_knows(name: str) -> bool:
    import ir_measures

    try:
        ir_measures.parse_measure(name).validate_params()
    except Exception:  # ir_measures raises assorted errors (NameError, ValueError, SyntaxError) for unknown names
        return False
    return True


@takes_engine_options
def measure(
    spec: Union[str, Measure],
    *,
    name: str = None,
    score_precision: ScorePrecision = "float32",
    complete: bool = True,
    **options: Any,
):
    """A pdeval measure as an ir_measures measure (``ir_measures.define``).

    Parameters
    ----------
    spec : str or Measure
        A pdeval measure string or :class:`~pdeval.measures.Measure` (``"bpref_R"``,
        ``"RankEff"``, ``"infAP(c=1.5)"``, ``"nDCG'@10"``); the cutoff belongs in the string.
    name : str, optional
        The name ir_measures and PyTerrier show. Default: the canonical string, prefixed by
        ``pdeval.`` when ir_measures has a measure of that name, and followed by the options
        given here that change values (``pdeval.nDCG@10[score_precision=float64]``), since
        ir_measures treats measures of the same name as one.
    score_precision : {'float32', 'float64'}, default 'float32'
        The precision at which scores are compared when ordering each ranking. Inside
        ir_measures (and so in ``pt.Experiment``) the default is ``'float32'``, the precision
        of ir_measures' default provider, pytrec_eval (the pytrec-eval-terrier wheel rounds
        scores to 32-bit floats before sorting): the same measure then gives the same number
        whether ir_measures or pdeval computes it, in one table. ``'float64'`` orders by the
        scores as given, as :func:`pdeval.evaluate` does by default (and trec_eval 10).
    complete : bool, default True
        Every qrels topic is evaluated (a topic the run lacks is an empty ranking), as
        ir_measures averages over every qrels topic.
    {engine_options}

    Returns
    -------
    An ir_measures measure object.

    Raises
    ------
    MeasureError
        ``spec`` is not a measure pdeval knows.
    PdevalError
        An option outside its domain (checked here, not at evaluation time).
    """
    import ir_measures

    from pdeval.evaluation.core import evaluate_frames

    parsed = parse(spec)
    canonical = str(parsed)
    options = {**options, "complete": complete, "score_precision": score_precision}
    checked = EngineOptions.of(options, where="measure")  # refuse a bad option now, not inside ir_measures
    if name is None:
        name = f"pdeval.{canonical}" if _ir_measures_knows(canonical) else canonical
        # ir_measures tells measures apart by name: options that change values are part of it
        changed = {k: v for k, v in checked.given().items() if k not in _DEFAULTS}
        changed.update({k: options[k] for k, v in _DEFAULTS.items() if options[k] != v})
        if changed:
            name += "[" + ",".join(f"{k}={v}" for k, v in sorted(changed.items())) + "]"

    def values(qrels, run) -> Iterator[tuple[str, float]]:
        result = evaluate_frames(run, qrels, parsed, checked)
        return zip(result["query_id"].tolist(), result["value"].tolist())

    defined = ir_measures.define(
        values, name=name, support_cutoff=False, pretty_name=name, short_desc=parsed.spec.summary
    )
    type(defined).PDEVAL_MEASURE = canonical
    return defined


__all__ = ["EQUIVALENTS", "is_ir_measure", "measure", "measure_string"]
