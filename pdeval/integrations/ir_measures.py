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

from ..errors import MeasureError
from ..measures import Measure, parse

#: ir_measures measure name -> (pdeval name, ir_measures parameters pdeval maps)
EQUIVALENTS = {
    "AP": ("AP", {"cutoff", "rel", "judged_only"}),
    "P": ("P", {"cutoff", "rel", "judged_only"}),
    "R": ("R", {"cutoff", "rel", "judged_only"}),
    "RR": ("RR", {"cutoff", "rel", "judged_only"}),
    "Rprec": ("Rprec", {"rel", "judged_only"}),
    "nDCG": ("nDCG", {"cutoff", "dcg", "gains", "judged_only"}),
    "Bpref": ("Bpref", {"rel"}),
    "infAP": ("infAP", {"rel"}),
    "Judged": ("Judged", {"cutoff"}),
    "NumRet": ("NumRet", {"rel"}),
    "NumRel": ("NumRel", {"rel"}),
}


def is_ir_measure(obj: Any) -> bool:
    """Whether ``obj`` is an ir_measures measure object (without importing ir_measures)."""
    return type(obj).__module__.startswith("ir_measures") or hasattr(obj, "PDEVAL_MEASURE")


def measure_string(obj: Any) -> str:
    """The pdeval measure string of an ir_measures measure object.

    Raises :class:`~pdeval.errors.MeasureError` when pdeval has no equivalent (a measure
    ir_measures computes that pdeval does not, or a parameter pdeval cannot map, such as
    ``nDCG(dcg='exp-log2')``).
    """
    own = getattr(obj, "PDEVAL_MEASURE", None)
    if own is not None:
        return own
    name = getattr(obj, "NAME", None)
    params = dict(getattr(obj, "params", {}) or {})
    if name not in EQUIVALENTS:
        raise MeasureError(
            f"pdeval has no equivalent of the ir_measures measure {obj!r}; it maps "
            f"{sorted(EQUIVALENTS)} (and any pdeval measure string)"
        )
    target, mapped = EQUIVALENTS[name]
    unknown = sorted(set(params) - mapped)
    if unknown:
        raise MeasureError(f"{obj!r}: pdeval cannot map the parameter(s) {unknown} of ir_measures' {name}")
    if params.pop("dcg", "log2") != "log2":
        raise MeasureError(
            f"{obj!r}: pdeval's nDCG uses trec_eval's linear gains (ir_measures' dcg='log2'); "
            "give the gains explicitly with gains={level: gain}"
        )
    if name == "NumRet" and params.get("rel") is not None:
        target = "NumRelRet"
    prime = "'" if params.pop("judged_only", False) else ""
    cutoff = params.pop("cutoff", None)
    shown = []
    if params.get("rel") is not None:
        shown.append(f"rel={int(params['rel'])}")
    if params.get("gains") is not None:
        shown.append("gains={" + ",".join(f"{int(k)}:{float(v)!r}" for k, v in sorted(params["gains"].items())) + "}")
    text = target + prime + (f"({','.join(shown)})" if shown else "") + (f"@{int(cutoff)}" if cutoff is not None else "")
    return str(parse(text))


def _ir_measures_knows(name: str) -> bool:
    import ir_measures

    try:
        ir_measures.parse_measure(name).validate_params()
    except Exception:  # ir_measures raises assorted errors (NameError, ValueError, SyntaxError) for unknown names
        return False
    return True


def measure(spec: Union[str, Measure], *, name: str = None, **options: Any):
    """A pdeval measure as an ir_measures measure (``ir_measures.define``).

    ``spec`` is a pdeval measure string or :class:`~pdeval.measures.Measure`
    (``"bpref_R"``, ``"RankEff"``, ``"infAP(c=1.5)"``, ``"nDCG'@10"``); the cutoff belongs in
    the string. ``options`` go to :func:`pdeval.evaluate` (``score_precision="float32"`` to
    order by 32-bit scores as pytrec_eval does, ``depth=``, ``undefined=`` ...). ``name``
    overrides the name ir_measures and PyTerrier show.
    """
    import ir_measures

    from ..evaluation import evaluate

    parsed = parse(spec)
    canonical = str(parsed)
    if name is None:
        name = f"pdeval.{canonical}" if _ir_measures_knows(canonical) else canonical
    options.setdefault("complete", True)

    def values(qrels, run) -> Iterator[tuple[str, float]]:
        result = evaluate(run, qrels, parsed, **options)
        return zip(result["query_id"].tolist(), result["value"].tolist())

    defined = ir_measures.define(
        values, name=name, support_cutoff=False, pretty_name=name, short_desc=parsed.spec.summary
    )
    type(defined).PDEVAL_MEASURE = canonical
    return defined


__all__ = ["EQUIVALENTS", "is_ir_measure", "measure", "measure_string"]
