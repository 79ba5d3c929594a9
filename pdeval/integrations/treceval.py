"""trec_eval's measure names on the command line: ``-m map -m P.5,10 -m official``.

trec_eval takes one measure specification per ``-m``: a measure name (``map``), a name with
parameters after a dot (``P.5,10,20``: precision at 5, 10 and 20; ``ndcg_cut.10``), or a
nickname for a set of measures (``official``, the default, and ``all_trec``). It prints the
measures in the fixed order of its measure table (``measures.c``), whatever the order on the
command line, and cut-offs in increasing order. This module translates such specifications
into pdeval measures and gives that print order; :mod:`pdeval.cli.commands` uses it.

What pdeval lacks of trec_eval's measures is listed in :data:`LACKING`; a nickname expands
to what pdeval has and reports the rest, a lacking measure asked for by name is an error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Optional

from pdeval.errors import MeasureError
from pdeval.measures import Measure, parse

__all__ = ["ORDER", "NICKNAMES", "LACKING", "COMMAND", "Selection", "select", "order_key"]

#: trec_eval's measures in its print order (``te_trec_measures`` of trec_eval 10.0's measures.c)
ORDER = (
    "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
    "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "infAP", "gm_bpref", "Rprec_mult",
    "utility", "11pt_avg", "binG", "G", "dcg", "ideal_dcg", "ndcg", "ndcg_rel", "Rndcg", "ndcg_cut",
    "map_cut", "relative_P", "success", "set_P", "set_relative_P", "set_recall", "set_map", "set_F",
    "num_nonrel_judged_ret", "unj", "rbp", "rbp_resid", "yaap",
)

#: trec_eval's nicknames for sets of measures (measures.c: ``off_names``, ``trec_names``)
NICKNAMES = {
    "official": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P",
    ),
    "all_trec": (
        "runid", "num_q", "num_ret", "num_rel", "num_rel_ret", "map", "gm_map", "Rprec", "bpref",
        "recip_rank", "iprec_at_recall", "P", "relstring", "recall", "unj", "rbp", "rbp_resid",
        "infAP", "gm_bpref", "utility", "11pt_avg", "ndcg", "relative_P", "Rprec_mult", "success",
        "map_cut", "ndcg_cut", "ndcg_rel", "Rndcg", "binG", "G", "set_P", "set_recall",
        "set_relative_P", "set_map", "set_F", "num_nonrel_judged_ret",
    ),
}

#: trec_eval's default cut-offs of P, recall, ndcg_cut and map_cut
DEFAULT_CUTOFFS = (5, 10, 15, 20, 30, 100, 200, 500, 1000)

#: trec_eval measure -> pdeval measure string ({k}: one cut-off of the comma-separated list)
PDEVAL = {
    "num_ret": "NumRet",
    "num_rel": "NumRel",
    "num_rel_ret": "NumRelRet",
    "map": "AP",
    "Rprec": "Rprec",
    "bpref": "Bpref",
    "recip_rank": "RR",
    "P": "P@{k}",
    "recall": "R@{k}",
    "infAP": "infAP",
    "ndcg": "nDCG",
    "ndcg_cut": "nDCG@{k}",
    "map_cut": "AP@{k}",
}

#: values the command computes itself: the run's name and the number of topics averaged over
COMMAND = ("runid", "num_q")

#: trec_eval measures pdeval does not compute
LACKING = tuple(name for name in ORDER if name not in PDEVAL and name not in COMMAND)

_SPEC_RE = re.compile(r"^(?P<name>[A-Za-z0-9_]+)(?:\.(?P<params>.*))?$")


@dataclass
class Selection:
    """The measures of a command line: pdeval measures, command values, what is lacking."""

    measures: list = field(default_factory=list)  # pdeval measure strings, in the order given
    command: list = field(default_factory=list)  # "runid", "num_q"
    lacking: list = field(default_factory=list)  # trec_eval names from nicknames pdeval lacks
    #: pdeval measure string -> (trec_eval's printed name, its family in ORDER), where the
    #: measure's own trec_eval name is not it (``ndcg.1=3,2=9`` prints as ``ndcg_1=3,2=9``)
    display: dict = field(default_factory=dict)


def _cutoffs(name: str, params: Optional[str], spec: str) -> tuple:
    if params is None or params == "":
        return DEFAULT_CUTOFFS
    try:
        values = sorted({int(part) for part in params.split(",")})
    except ValueError:
        raise MeasureError(
            f"-m {spec}: trec_eval's {name} takes a comma-separated list of integer cut-offs, "
            f"e.g. {name}.5,10,20"
        ) from None
    if not values or values[0] < 1:
        raise MeasureError(f"-m {spec}: the cut-offs of {name} must be positive integers")
    return tuple(values)


def _gains(params: str, spec: str) -> str:
    """trec_eval's ``ndcg`` parameters ``level=gain,...`` as pdeval's gains mapping ``{1:3,...}``.

    As in trec_eval, a level not listed keeps its own value as gain. pdeval gives level 0 and
    unjudged documents gain 0, so a gain for a level below 1 is refused rather than ignored.
    """
    pairs = {}
    for item in params.split(","):
        level, sep, gain = item.partition("=")
        try:
            pairs[int(level)] = float(gain)
        except ValueError:
            raise MeasureError(f"-m {spec}: trec_eval's ndcg takes level=gain pairs, e.g. ndcg.1=3,2=9") from None
        if not sep:
            raise MeasureError(f"-m {spec}: trec_eval's ndcg takes level=gain pairs, e.g. ndcg.1=3,2=9")
        if int(level) < 1 and float(gain) != 0:
            raise MeasureError(f"-m {spec}: pdeval gives relevance level {level} gain 0; only levels >= 1 take a gain")
    return "{" + ",".join(f"{level}:{gain:g}" for level, gain in pairs.items()) + "}"


def _add_trec_eval(name: str, params: Optional[str], spec: str, selection: Selection) -> None:
    if name in COMMAND:
        if params:
            raise MeasureError(f"-m {spec}: {name} takes no parameters")
        if name not in selection.command:
            selection.command.append(name)
        return
    template = PDEVAL[name]
    if "{k}" in template:
        selection.measures.extend(template.format(k=k) for k in _cutoffs(name, params, spec))
        return
    if name == "ndcg" and params:
        measure = f"nDCG(gains={_gains(params, spec)})"
        selection.measures.append(measure)
        selection.display[measure] = (f"ndcg_{params}", "ndcg")
        return
    if params:
        raise MeasureError(
            f"-m {spec}: pdeval reads no trec_eval parameters for {name}; use pdeval's syntax "
            f"instead, e.g. -m '{template}(...)' (pdeval measures {template} lists them)"
        )
    selection.measures.append(template)


def select(specs: list, *, selection: Optional[Selection] = None) -> Selection:
    """Translate ``-m`` values into a :class:`Selection`.

    Each value is a trec_eval nickname (``official``, ``all_trec``), a trec_eval measure with
    optional parameters (``map``, ``P.5,10``, ``ndcg_cut.10``), or a pdeval measure string
    (``AP``, ``nDCG'@10``, ``infAP(c=1.5)``). Raises :class:`~pdeval.errors.MeasureError`
    naming the value for a measure pdeval does not know or lacks.
    """
    selection = selection if selection is not None else Selection()
    for spec in specs:
        text = spec.strip()
        if text in NICKNAMES:
            for name in NICKNAMES[text]:
                if name in LACKING:
                    if name not in selection.lacking:
                        selection.lacking.append(name)
                else:
                    _add_trec_eval(name, None, text, selection)
            continue
        found = _SPEC_RE.match(text)
        if found and found.group("name") in LACKING:
            raise MeasureError(f"-m {spec}: pdeval does not compute trec_eval's {found.group('name')}")
        if found and (found.group("name") in PDEVAL or found.group("name") in COMMAND):
            _add_trec_eval(found.group("name"), found.group("params"), spec, selection)
            continue
        try:
            parse(text)
        except (MeasureError, TypeError, ValueError) as error:  # a parameter of the wrong type too
            raise MeasureError(f"-m {spec}: {error}") from None
        selection.measures.append(text)
    return selection


def order_key(measure: Measure, position: int, family: Optional[str] = None) -> tuple:
    """Sort key giving trec_eval's print order; measures trec_eval lacks follow in given order.

    ``family`` names the measure's entry of :data:`ORDER` where its trec_eval name does not.
    """
    name = measure.trec_eval_name()
    if family is not None:
        return (ORDER.index(family), measure.cutoff or 0, position)
    family = name
    if measure.cutoff is not None and name.endswith(f"_{measure.cutoff}"):
        family = name[: -len(f"_{measure.cutoff}")]
    if family not in ORDER:
        return (len(ORDER), position, 0)
    return (ORDER.index(family), measure.cutoff or 0, position)
