"""trec_eval's measure names on the command line: ``-m map -m P.5,10 -m official``.

trec_eval takes one measure specification per ``-m``: a measure name (``map``), a name with
parameters after a dot (``P.5,10,20``: precision at 5, 10 and 20; ``iprec_at_recall..1,.5``;
``utility.2,-1,0,0``; ``ndcg.1=3,2=9``; ``rbp.p=0.95``), or a nickname for a set of measures
(``official``, the default; ``all_trec``; ``set``). It prints the measures in the fixed order
of its measure table (``measures.c``), whatever the order on the command line, and cut-offs in
increasing order. This module translates such specifications into pdeval measures, the names
trec_eval prints for them and that print order.

Every measure of trec_eval 10.0's table is computed, except those that need judgment groups
(``*_avgjg``, input ``-R qrels_jg``) or preference judgments (``prefs_*``, ``-R prefs``),
whose input formats pdeval does not read: they are refused with that reason
(:data:`REFUSED`).
"""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Optional

from pdeval.errors import MeasureError
from pdeval.measures import Measure, parse

__all__ = [
    "COMMAND", "DEFAULT_CUTOFFS", "FAMILIES", "JUDGMENT_GROUP_FAMILIES", "NICKNAMES", "ORDER", "REFUSED", "Family", "Item", "Selection",
    "order_key", "pdeval_name", "select",
]

_PREFS = "needs preference judgments (trec_eval -R prefs or qrels_prefs), an input format pdeval does not read"
_PREF_NAMES = (
    "prefs_num_prefs_poss", "prefs_num_prefs_ful", "prefs_num_prefs_ful_ret", "prefs_simp", "prefs_pair",
    "prefs_avgjg", "prefs_avgjg_Rnonrel", "prefs_simp_ret", "prefs_pair_ret", "prefs_avgjg_ret",
    "prefs_avgjg_Rnonrel_ret", "prefs_simp_imp", "prefs_pair_imp", "prefs_avgjg_imp",
)

#: trec_eval measures pdeval refuses, with the reason
REFUSED = {name: _PREFS for name in _PREF_NAMES}

#: trec_eval's judgment-group measures (-R qrels_jg): the measure averaged over the groups of a topic
JUDGMENT_GROUP_FAMILIES = ("map_avgjg", "P_avgjg", "Rprec_mult_avgjg")


@dataclass(frozen=True)
class Family:
    """One entry of trec_eval's measure table and its pdeval measure.

    ``kind``: ``plain`` (no parameters), ``cut`` (integer cut-offs, one value each), ``cut_double``
    (real cut-offs, one value each), ``params`` (real parameters, one value), ``pairs``
    (``name=value`` parameters, one value), ``relstring``, ``command`` (runid, num_q).
    ``template`` is the pdeval measure string (``{k}`` a cut-off, ``{params}`` the parameters).
    """

    name: str
    kind: str
    template: str = ""
    defaults: tuple = ()


DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)
_RECALL = tuple(i / 10 for i in range(11))

#: trec_eval's measure table in its print order (``te_trec_measures`` of trec_eval 10.0's measures.c)
FAMILIES = {f.name: f for f in (
    Family("runid", "command"),
    Family("num_q", "command"),
    Family("num_ret", "plain", "NumRet"),
    Family("num_rel", "plain", "NumRel"),
    Family("num_rel_ret", "plain", "NumRelRet"),
    Family("map", "plain", "AP"),
    Family("gm_map", "plain", "GMAP"),
    Family("Rprec", "plain", "Rprec"),
    Family("bpref", "plain", "Bpref"),
    Family("recip_rank", "plain", "RR"),
    Family("iprec_at_recall", "cut_double", "IPrec(recall={k!r})", _RECALL),
    Family("P", "cut", "P@{k}", DEFAULT_CUTOFFS),
    Family("relstring", "relstring", "RelAt@{k}", (10,)),
    Family("recall", "cut", "R@{k}", DEFAULT_CUTOFFS),
    Family("infAP", "plain", "infAP"),
    Family("gm_bpref", "plain", "GMBpref"),
    Family("Rprec_mult", "cut_double", "RprecMult(m={k!r})", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    Family("utility", "params", "Utility(a={0!r},b={1!r},c={2!r},d={3!r})", (1.0, -1.0, 0.0, 0.0)),
    Family("11pt_avg", "params", "IPrecAvg(levels={{{params}}})", _RECALL),
    Family("binG", "plain", "BinG"),
    Family("G", "pairs", "G"),
    Family("dcg", "pairs", "DCG"),
    Family("ideal_dcg", "pairs", "IdealDCG"),
    Family("ndcg", "pairs", "nDCG"),
    Family("ndcg_rel", "pairs", "nDCGRel"),
    Family("Rndcg", "pairs", "RnDCG"),
    Family("ndcg_cut", "cut", "nDCG@{k}", DEFAULT_CUTOFFS),
    Family("map_cut", "cut", "AP@{k}", DEFAULT_CUTOFFS),
    Family("relative_P", "cut", "RelP@{k}", DEFAULT_CUTOFFS),
    Family("success", "cut", "Success@{k}", (1, 5, 10)),
    Family("set_P", "plain", "SetP"),
    Family("set_relative_P", "plain", "SetRelP"),
    Family("set_recall", "plain", "SetRecall"),
    Family("set_map", "plain", "SetAP"),
    Family("set_F", "params", "SetF(beta={0!r})", (1.0,)),
    Family("num_nonrel_judged_ret", "plain", "NumNonrelJudgedRet"),
    *(Family(name, "prefs") for name in _PREF_NAMES),
    Family("map_avgjg", "plain", "AP"),
    Family("P_avgjg", "cut", "P@{k}", DEFAULT_CUTOFFS),
    Family("Rprec_mult_avgjg", "cut_double", "RprecMult(m={k!r})", (0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0)),
    Family("yaap", "plain", "YAAP"),
    Family("rbp", "pairs", "RBPtrec"),
    Family("rbp_resid", "pairs", "RBPresid"),
    Family("unj", "cut", "Unj@{k}", (5, 10, 20)),
)}

#: trec_eval's print order
ORDER = tuple(FAMILIES)

#: trec_eval's nicknames for sets of measures (measures.c: ``off_names``, ``trec_names`` ...)
NICKNAMES = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P",
    ),
    "set": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "utility", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
        "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
        "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
    "all_prefs": ("runid", "num_q", *_PREF_NAMES),
    "prefs": ("runid", "num_q", *_PREF_NAMES[:6]),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}

#: values the command computes itself: the run's name and the number of topics averaged over
COMMAND = ("runid", "num_q")

_SPEC_RE = re.compile(r"^(?P<name>[A-Za-z0-9_]+)(?:\.(?P<params>.*))?$")
_LEADING_INT = re.compile(r"^\s*[+-]?\d+")


@dataclass(frozen=True)
class Item:
    """One measure of the output: pdeval's measure string, trec_eval's printed name, and its
    place in trec_eval's order (``family`` an entry of :data:`ORDER`, ``sub`` the order within)."""

    measure: str
    name: str
    family: Optional[str] = None
    sub: float = 0.0


@dataclass
class Selection:
    """The measures of a command line."""

    items: list = field(default_factory=list)  # Item, in the order given
    command: list = field(default_factory=list)  # "runid", "num_q"
    #: relstring: (length N, printed name) when asked for
    relstring: Optional[tuple] = None
    _explicit: dict = field(default_factory=dict, repr=False)  # family -> parameters given
    #: the ideal list's gain order of the gain measures: trec_eval's (the default) or "exact"
    gain_sort: str = "trec_eval"

    @property
    def measures(self) -> list:
        """pdeval measure strings, in the order given."""
        return [item.measure for item in self.items]


# ---- parameters ---------------------------------------------------------------------------------
def _cut_longs(name: str, params: str, spec: str) -> tuple:
    values = set()
    for part in params.split(","):
        found = _LEADING_INT.match(part)  # trec_eval reads each with atol: 23.4 is 23
        if not found or not re.fullmatch(r"(\.\d*)?\s*", part[found.end():]):
            raise MeasureError(
                f"-m {spec}: trec_eval's {name} takes a comma-separated list of integer cut-offs, e.g. {name}.5,10,20"
            )
        values.add(int(found.group(0)))
        if part.strip() != found.group(0).strip():
            warnings.warn(f"-m {spec}: the cut-off {part.strip()} is read as {int(found.group(0))}, as trec_eval reads it",
                          stacklevel=2)
    if min(values) < 1:
        raise MeasureError(f"-m {spec}: the cut-offs of {name} must be positive integers")
    return tuple(sorted(values))


def _doubles(name: str, params: str, spec: str, example: str) -> tuple:
    try:
        return tuple(float(part) for part in params.split(","))
    except ValueError:
        raise MeasureError(f"-m {spec}: trec_eval's {name} takes comma-separated numbers, e.g. {name}.{example}") from None


def _pairs(name: str, params: str, spec: str) -> dict:
    """``level=gain`` (and rbp's ``p=value``) pairs."""
    pairs = {}
    for item in params.split(","):
        key, sep, value = item.partition("=")
        try:
            pairs[key.strip()] = float(value)
        except ValueError:
            sep = ""
        if not sep:
            example = "p=0.95" if name.startswith("rbp") else "1=3,2=9"
            raise MeasureError(f"-m {spec}: trec_eval's {name} takes level=gain (or name=value) pairs, e.g. {name}.{example}")
    return pairs


#: trec_eval's families whose ideal list follows its gain order (gain_sort="trec_eval")
_GAIN_SORTED = {"ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "G"}


def _pairs_measure(family: Family, params: str, spec: str, gain_sort: str = "trec_eval") -> str:
    pairs = _pairs(family.name, params, spec)
    gains, other = {}, []
    for key, value in pairs.items():
        if key.lstrip("+-").isdigit():
            level = int(key)
            if level < 1 and value != 0:
                raise MeasureError(f"-m {spec}: pdeval gives relevance level {level} gain 0; only levels >= 1 take a gain")
            if level >= 1:
                gains[level] = value
        elif key == "p" and family.name in ("rbp", "rbp_resid"):
            other.append(f"p={value!r}")
        else:
            raise MeasureError(f"-m {spec}: trec_eval's {family.name} takes no parameter {key!r}")
    if gains and family.name == "rbp_resid":  # trec_eval's rbp_resid reads p= only and ignores the gains
        warnings.warn(f"-m {spec}: rbp_resid does not use gains (as in trec_eval, they are ignored)", stacklevel=2)
        gains = {}
    if gains:
        other.append("gains={" + ",".join(f"{level}:{gain:g}" for level, gain in gains.items()) + "}")
        if gain_sort != "exact" and family.name in _GAIN_SORTED and any(g != int(g) for g in gains.values()):
            other.append(f"gain_sort={gain_sort}")  # the orders differ for fractional gains only
    return family.template + (f"({','.join(other)})" if other else "")


def _expand(family: Family, params: Optional[str], spec: str, gain_sort: str = "trec_eval") -> list:
    """The (pdeval measure, printed name, sub-order) triples of one family and its parameters."""
    given = params is not None and params != ""
    if family.kind == "plain":
        if given:
            raise MeasureError(f"-m {spec}: trec_eval's {family.name} takes no parameters")
        return [(family.template, family.name, 0)]
    if family.kind == "cut":
        cutoffs = _cut_longs(family.name, params, spec) if given else family.defaults
        return [(family.template.format(k=k), f"{family.name}_{k}", k) for k in cutoffs]
    if family.kind == "cut_double":
        cutoffs = sorted(set(_doubles(family.name, params, spec, ".2,.5"))) if given else family.defaults
        if family.name == "iprec_at_recall" and any(not 0 <= k <= 1 for k in cutoffs):
            raise MeasureError(f"-m {spec}: recall levels must lie in [0, 1]")
        if any(k < 0 for k in cutoffs):
            raise MeasureError(f"-m {spec}: {family.name} takes numbers >= 0")
        return [(family.template.format(k=float(k)), f"{family.name}_{k:3.2f}", k) for k in cutoffs]
    name = f"{family.name}_{params}" if given else family.name
    if family.kind == "params":
        values = _doubles(family.name, params, spec, ",".join(map(str, family.defaults[:2]))) if given else family.defaults
        if family.name == "11pt_avg":
            return [(family.template.format(params=",".join(repr(v) for v in values)), name, 0)] if given else [
                ("IPrecAvg", name, 0)]
        if len(values) != len(family.defaults):
            raise MeasureError(f"-m {spec}: trec_eval's {family.name} takes {len(family.defaults)} number(s)")
        return [(family.template.format(*values) if given else family.template.split("(")[0], name, 0)]
    return [(_pairs_measure(family, params, spec, gain_sort) if given else family.template, name, 0)]


def _add_family(family: Family, params: Optional[str], spec: str, selection: Selection, from_nickname: bool) -> None:
    if family.kind == "refused":
        raise MeasureError(f"-m {spec}: pdeval does not compute trec_eval's {family.name}: {REFUSED[family.name]}")
    if family.kind == "prefs":  # computed from preference judgments (-R prefs), not by a pdeval measure
        if params:
            raise MeasureError(f"-m {spec}: {family.name} takes no parameters")
        if family.name not in {item.name for item in selection.items}:
            selection.items.append(Item(family.name, family.name, family.name))
        return
    if family.kind == "command":
        if params:
            raise MeasureError(f"-m {spec}: {family.name} takes no parameters")
        if family.name not in selection.command:
            selection.command.append(family.name)
        return
    given = params is not None and params != ""
    explicit = selection._explicit
    if from_nickname and family.name in explicit:
        return  # trec_eval: the parameters given with -m replace the nickname's defaults
    if given and family.name not in explicit:  # the first parameters replace the defaults
        selection.items = [item for item in selection.items if item.family != family.name]
        if family.kind == "relstring":
            selection.relstring = None
    if family.kind == "relstring":  # one string per topic: the last length asked for
        if selection.relstring is None or given:
            length = _cut_longs(family.name, params, spec)[-1] if given else family.defaults[0]
            selection.relstring = (length, f"relstring_{params}" if given else "relstring")
    else:
        known = {item.measure for item in selection.items}
        for measure, name, sub in _expand(family, params, spec, selection.gain_sort):
            if measure not in known:
                selection.items.append(Item(measure, name, family.name, sub))
    if given:
        explicit.setdefault(family.name, params)


def select(specs: list, *, selection: Optional[Selection] = None, gain_sort: str = "trec_eval") -> Selection:
    """Translate ``-m`` values into a :class:`Selection`.

    Each value is a trec_eval nickname (``official``, ``all_trec``, ``set``), a trec_eval
    measure with optional parameters (``map``, ``P.5,10``, ``ndcg_cut.10``,
    ``iprec_at_recall..1,.5``, ``relstring.20``), or a pdeval measure string (``AP``,
    ``nDCG'@10``, ``infAP(c=1.5)``). Parameters given with ``-m`` replace a nickname's
    defaults (``-m all_trec -m relstring.20``); a family given twice with parameters prints
    every cut-off asked for.

    Parameters
    ----------
    specs
        The ``-m`` values, in the order given.
    selection
        A selection to add to (default: a new one).
    gain_sort
        The ideal list's gain order of ``ndcg``, ``G``, ``ndcg_rel``, ``Rndcg`` and
        ``ideal_dcg`` with fractional ``level=gain`` parameters: ``"trec_eval"`` (trec_eval
        10.0's, gains less than 1 apart compare equal) or ``"exact"``.

    Returns
    -------
    Selection
        The pdeval measures with trec_eval's printed names and order, the command values
        (runid, num_q) and relstring's length.

    Raises
    ------
    MeasureError
        Naming the ``-m`` value: a measure pdeval does not know, a parameter trec_eval's
        measure does not take, or a refused measure with the reason.
    """
    selection = selection if selection is not None else Selection(gain_sort=gain_sort)
    for spec in specs:
        text = spec.strip()
        if text in NICKNAMES:
            for name in NICKNAMES[text]:
                _add_family(FAMILIES[name], None, text, selection, True)
            continue
        found = _SPEC_RE.match(text)
        if found and found.group("name") in FAMILIES:
            _add_family(FAMILIES[found.group("name")], found.group("params"), spec, selection, False)
            continue
        try:
            measure = parse(text)
        except (MeasureError, TypeError, ValueError) as error:  # a parameter of the wrong type too
            raise MeasureError(f"-m {spec}: {error}") from None
        selection.items.append(Item(text, measure.trec_eval_name()))
    return selection


def order_key(measure: Measure, item: Item, position: int) -> tuple:
    """Sort key giving trec_eval's print order; measures trec_eval lacks follow in given order."""
    if item.family is not None:
        return (ORDER.index(item.family), item.sub, position)
    name = measure.trec_eval_name()
    family = name
    if measure.cutoff is not None and name.endswith(f"_{measure.cutoff}"):
        family = name[: -len(f"_{measure.cutoff}")]
    if family not in FAMILIES:
        return (len(ORDER), position, 0)
    return (ORDER.index(family), measure.cutoff or 0, position)


def pdeval_name(name: str) -> Optional[str]:
    """pdeval's canonical measure string of a name trec_eval prints.

    Parameters
    ----------
    name
        A measure name as trec_eval prints it (``map``, ``P_10``, ``iprec_at_recall_0.10``,
        ``ndcg_1=3,2=9``) or a pdeval measure string.

    Returns
    -------
    str or None
        ``AP``, ``P@10``, ``IPrec(recall=0.1)``, ``nDCG(gains={1:3,2:9})``...; None for a name
        pdeval does not know.
    """
    candidates = []
    if name in FAMILIES:
        candidates.append((name, None))
    for family in FAMILIES.values():
        prefix = family.name + "_"
        if name.startswith(prefix) and family.kind not in ("plain", "command", "refused", "relstring"):
            candidates.append((family.name, name[len(prefix):]))
    for family_name, params in candidates:
        family = FAMILIES[family_name]
        if family.kind in ("command", "refused", "relstring"):
            continue
        try:
            expanded = _expand(family, params, name)
        except MeasureError:
            continue
        if len(expanded) == 1 or (family.kind in ("cut", "cut_double") and params is not None):
            return str(parse(expanded[0][0]))
    try:
        return str(parse(name))
    except (MeasureError, TypeError, ValueError):
        return None
