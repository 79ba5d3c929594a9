"""trec_eval 10.0's preference measures (``prefs_*``) in the registry.

They read preference judgments (a preference frame: ``query_id``, ``judgment_group``,
``judgment_subgroup``, ``doc_id``, ``relevance``; trec_eval ``-R prefs`` or ``-R qrels_prefs``),
not relevance labels: a preference a > b of a judgment group (jg) is *fulfilled* when the run
ranks a above b; with both documents retrieved it is a retrieved pair, with one retrieved an
implied pair (fulfilled when the retrieved one is a), with neither it is possible but never
fulfilled. Carterette & Bennett ("Evaluation measures for preference judgments", SIGIR 2008)
define the precision of preferences; Buckley's trec_eval 10.0 (m_prefs_*.c, 2008) gives the
variants below, whose counting rules pdeval follows. Their values are computed for every run,
topic and jg at once by :func:`pdeval.measures.preference_counts.evaluate_prepared`; the kernel
registered here refuses relevance judgments (its value needs preferences).
"""

from __future__ import annotations

import numpy as np

from pdeval.engine.segments import Segments
from pdeval.errors import MeasureError
from pdeval.measures.registry import REGISTRY, register

__all__ = ["PREFERENCE_MEASURES", "is_preference_measure"]

NOT_JUDGED = "not in the preferences: never compared"
NO_PRIME = "preference measures read only documents the preferences name"
C_AND_B = "Carterette & Bennett 2008 (SIGIR)"

#: name -> (summary, definition, reference, how a summary over topics combines them), in
#: trec_eval's print order
_DEFINITIONS = {
    "prefs_num_prefs_poss": (
        "number of preferences possible (every jg)",
        "Σ over jgs of the preferences a > b of the jg (a pair preferred by two jgs counts twice)",
        "trec_eval 10.0 prefs_num_prefs_poss", "sum"),
    "prefs_num_prefs_ful": (
        "number of preferences fulfilled (retrieved or implied)",
        "preferences a > b with a ranked above b, or a retrieved and b not",
        "trec_eval 10.0 prefs_num_prefs_ful", "sum"),
    "prefs_num_prefs_ful_ret": (
        "number of preferences fulfilled with both documents retrieved",
        "preferences a > b with a and b retrieved and a ranked above b",
        "trec_eval 10.0 prefs_num_prefs_ful_ret", "sum"),
    "prefs_simp": (
        "fulfilled / possible preferences",
        "ful / poss over every preference of the topic (0 when poss = 0)",
        f"{C_AND_B}, precision of preferences; trec_eval 10.0 prefs_simp", "mean"),
    "prefs_pair": (
        "share of jgs fulfilled per preferred pair, averaged over pairs",
        "(1/P) Σ over pairs {a, b} with a preference of the share of their jgs' preferences the ranking fulfils",
        f"{C_AND_B}; trec_eval 10.0 prefs_pair", "mean"),
    "prefs_avgjg": (
        "fulfilled / possible per jg, averaged over jgs",
        "(1/|G|) Σ_g ful_g / poss_g",
        f"{C_AND_B}; trec_eval 10.0 prefs_avgjg", "mean"),
    "prefs_avgjg_Rnonrel": (
        "prefs_avgjg with as many nonrelevant documents per jg as relevant ones",
        "prefs_avgjg with the nonrelevant documents of each jg cut (or padded) to R, as bpref",
        f"{C_AND_B}; Buckley & Voorhees 2004 (bpref's R nonrelevant); trec_eval 10.0 prefs_avgjg_Rnonrel", "mean"),
    "prefs_simp_ret": (
        "prefs_simp over pairs with both documents retrieved",
        "ful_ret / poss_ret", f"{C_AND_B}; trec_eval 10.0 prefs_simp_ret", "mean"),
    "prefs_pair_ret": (
        "prefs_pair over pairs with both documents retrieved",
        "prefs_pair over the pairs with both documents retrieved", f"{C_AND_B}; trec_eval 10.0 prefs_pair_ret", "mean"),
    "prefs_avgjg_ret": (
        "prefs_avgjg over pairs with both documents retrieved",
        "(1/|G|) Σ_g ful_ret_g / poss_ret_g", f"{C_AND_B}; trec_eval 10.0 prefs_avgjg_ret", "mean"),
    "prefs_avgjg_Rnonrel_ret": (
        "prefs_avgjg_Rnonrel over retrieved documents",
        "prefs_avgjg_ret with the retrieved nonrelevant documents of each jg cut to the retrieved relevant count",
        f"{C_AND_B}; trec_eval 10.0 prefs_avgjg_Rnonrel_ret", "mean"),
    "prefs_simp_imp": (
        "prefs_simp over retrieved and implied pairs",
        "(ful_ret + ful_imp) / (poss_ret + poss_imp)", f"{C_AND_B}; trec_eval 10.0 prefs_simp_imp", "mean"),
    "prefs_pair_imp": (
        "prefs_pair over retrieved and implied pairs",
        "prefs_pair over the pairs with at least one document retrieved", f"{C_AND_B}; trec_eval 10.0 prefs_pair_imp",
        "mean"),
    "prefs_avgjg_imp": (
        "prefs_avgjg over retrieved and implied pairs",
        "(1/|G|) Σ_g (ful_ret_g + ful_imp_g) / (poss_ret_g + poss_imp_g)",
        f"{C_AND_B}; trec_eval 10.0 prefs_avgjg_imp", "mean"),
}


def _refuse_relevance(name: str):
    """The kernel of a preference measure: NaN for no list (the registry's check), else an
    error saying it needs a preference frame."""

    def kernel(seg: Segments) -> np.ndarray:
        if seg.n_segments == 0:
            return np.zeros(0)
        raise MeasureError(f"{name} is computed from preference judgments: pass a preference frame as qrels "
                           "(pdeval.qrels_prefs(qrels) or pdeval.read_prefs(path))")

    kernel.__doc__ = f"{name} = {_DEFINITIONS[name][1]}."
    return kernel


for _name, (_summary, _definition, _reference, _aggregate) in _DEFINITIONS.items():
    register(_name, summary=f"{_summary}: {_definition}", unjudged=NOT_JUDGED, pooled=NOT_JUDGED,
             unretrieved="possible, never fulfilled (implied when the other document is retrieved)",
             reference=_reference, no_prime=NO_PRIME, aggregate=_aggregate, judgments="preferences",
             trec_eval=_name)(_refuse_relevance(_name))

#: the preference measures in trec_eval's print order: name -> (summary, how a summary line
#: combines topics), read off the registry
PREFERENCE_MEASURES = {name: (REGISTRY[name].summary, REGISTRY[name].aggregate) for name in _DEFINITIONS}


def is_preference_measure(name: str) -> bool:
    """Whether the registered measure ``name`` reads preference judgments."""
    spec = REGISTRY.get(name)
    return spec is not None and spec.judgments == "preferences"
