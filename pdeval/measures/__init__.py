"""Measures: the registry and the kernels of every measure family.

Importing this package registers every measure; :func:`parse` reads measure strings and
:func:`available` lists what is registered.
"""

from pdeval.measures.registry import REGISTRY, Measure, MeasureSpec, available, parse, parse_all, register
from pdeval.measures import classic  # noqa: F401  (registers the trec_eval measures)

__all__ = ["REGISTRY", "Measure", "MeasureSpec", "available", "parse", "parse_all", "register"]
from pdeval.measures import preference  # noqa: F401  (registers bpref10, bpref_R, bpref_N, RankEff, bpref_relative)
from pdeval.measures import estimators  # noqa: F401  (registers indAP, subAP)
from pdeval.measures import graded  # noqa: F401  (registers rpref_N, rpref_relative, rpref_relative2, npref, Q)
from pdeval.measures import stratified  # noqa: F401  (registers xinfAP, infNDCG, iP, inum_rel, inum_rel_ret, iprec_at_recall)
from pdeval.measures import statap  # noqa: F401  (registers statAP, statAP_var, statRprec, statP, statnDCG)
from pdeval.measures import user  # noqa: F401  (registers RBP, INST, INSQ)
from pdeval.measures import trec_sets  # noqa: F401  (registers trec_eval's set_*, utility, success, relative_P, unj, RelAt)
from pdeval.measures import trec_misc  # noqa: F401  (registers GMAP, GMBpref, IPrec, IPrecAvg, RprecMult, BinG, YAAP, RBPtrec, RBPresid)
from pdeval.measures import trec_gain  # noqa: F401  (registers DCG, IdealDCG, G, nDCGRel, RnDCG, nDCGp)
from pdeval.measures import preference_judgments  # noqa: F401  (registers trec_eval's prefs_* measures)
from pdeval.measures import ties  # noqa: F401  (records the expected values over tied orders)
