"""ir_measures' measure objects read as pdeval measure strings (wherever a measure is taken).

The other direction, pdeval measures as ir_measures measures, is
:mod:`pdeval.integrations.ir_measures`.
"""

from __future__ import annotations

from typing import Any

from pdeval.errors import MeasureError

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


def ir_measure_text(obj: Any) -> str:
    """The pdeval measure string (not yet parsed) of an ir_measures measure object.

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
    return text


__all__ = ["EQUIVALENTS", "ir_measure_text", "is_ir_measure"]
