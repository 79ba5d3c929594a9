"""The engine's options: one definition, validated once, documented once.

Every function that evaluates (:func:`pdeval.evaluate`, :func:`pdeval.bounds`,
:func:`pdeval.leaderboards`, the ir_measures and PyTerrier measures, the Dask entry point,
the command line) takes these options by keyword. They are declared here once, as the
fields of :class:`EngineOptions`, with their documentation in :data:`OPTION_DOCS`;
:func:`takes_engine_options` gives a function that accepts ``**options`` the full
signature (every option with its default, as ``help()`` and ``inspect.signature`` show it)
and the options' documentation in its docstring. Callers validate the keywords once
(:meth:`EngineOptions.of`) and pass the frozen object on.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import inspect
import textwrap
from dataclasses import dataclass
from typing import Any, Callable, Literal, Mapping, Optional, Sequence, Union

from pdeval.common.contract import (
    Boolean, Choice, Contract, Domain, Integer, ListOf, MappingOf, Nullable, Real, Text,
)
from pdeval.common.docs import ENGINE_DEPTH
from pdeval.engine.ranking import ScorePrecision, TieOrder
from pdeval.errors import PdevalError
from pdeval.frames.canonical import DuplicatePolicy

#: the documentation of each option, in numpydoc's parameter form (name, type, text)
OPTION_DOCS: dict[str, tuple[str, str]] = {
    "by": (
        "str or list of str, optional",
        "Extra run columns that key a system beside ``run`` (a swept parameter such as ``b``).",
    ),
    "complete": (
        "bool, default False",
        "trec_eval ``-c``: evaluate every qrels topic; a topic a run lacks is an empty list. "
        "Default: only topics in both the run and the qrels (trec_eval 9).",
    ),
    "judged_only": (
        "bool, default False",
        "trec_eval ``-J``: every measure on the condensed list (the same as priming each).",
    ),
    "depth": ("int, optional", ENGINE_DEPTH),
    "score_precision": (
        "{'float64', 'float32'}, default 'float64'",
        "``'float32'`` rounds scores to 32-bit floats before ordering, as trec_eval up to 9.0.7 and "
        "the pytrec-eval-terrier wheel do; trec_eval 9.0.8 and 10 order doubles, as the default.",
    ),
    "ties": (
        "{'trec', 'expected', 'optimistic', 'pessimistic'}, default 'trec'",
        "How documents with equal scores are ordered. ``'trec'``: trec_eval's order (doc id "
        "descending). ``'expected'``: the expected value over every order of each run of tied "
        "scores (McSherry & Najork 2008; the measures that support it: docs guide/ties.md). "
        "``'optimistic'`` / ``'pessimistic'``: relevant documents first / last within each run of "
        "tied scores (by grade), the range a score has over tie orders.",
    ),
    "rel": ("int, optional", "Default relevance threshold of the measures (a level >= ``rel`` is relevant)."),
    "gains": ("dict of int to float, optional", "Default level -> gain mapping of the graded measures."),
    "undefined": (
        "{'zero', 'nan'}, default 'zero'",
        "Value of an undefined measure (AP with R = 0, ...): 0 as trec_eval, or NaN.",
    ),
    "duplicates": (
        "{'error', 'first', 'max'}, default 'error'",
        "Policy for a document repeated in a ranking or a judgment repeated in the qrels. Run rows "
        "are checked in the lists that are evaluated: a topic absent from the qrels is left out "
        "(as trec_eval does) before its rows are looked at.",
    ),
    "chunk_rows": (
        "int, default 8000000",
        "Memory bound: qrels variants are evaluated in chunks of about ``chunk_rows`` rows.",
    ),
    "sparse": (
        "bool, default True",
        "Lay out only the rows some qrels variant judges for the measures that need nothing else "
        "(:attr:`pdeval.measures.Measure.sparse`); ``False`` keeps every retrieved row (the same "
        "values, slower; for checking).",
    ),
    "variants": (
        "list of str, optional",
        "Extra qrels columns to treat as variant keys (e.g. ``['assessor']``), beside the ones pdeval "
        "produces (``level``, ``sample``, ``depth``, ``label_set``).",
    ),
}


#: the domain of each option (:mod:`pdeval.common.contract`): checked once, by one mechanism,
#: when :class:`EngineOptions` is made and at the boundary of every function that takes them
OPTION_DOMAINS: dict[str, Domain] = {
    "by": Nullable(ListOf(Text("a column name"), min_len=0)),
    "complete": Boolean(),
    "judged_only": Boolean(),
    "depth": Nullable(Integer(1)),
    "score_precision": Choice("float64", "float32"),
    "ties": Choice("trec", "expected", "optimistic", "pessimistic"),
    "rel": Nullable(Integer(0)),
    "gains": Nullable(MappingOf(Integer(), Real())),
    "undefined": Choice("zero", "nan"),
    "duplicates": Choice("error", "first", "max", renamed={"raise": "error"}),
    "chunk_rows": Integer(1),
    "sparse": Boolean(),
    "variants": Nullable(ListOf(Text("a column name"), min_len=0)),
}


@dataclass(frozen=True)
class EngineOptions:
    """How the engine evaluates; see :data:`OPTION_DOCS` for each field. Validated on creation."""

    by: Optional[Union[str, Sequence[str]]] = None
    complete: bool = False
    judged_only: bool = False
    depth: Optional[int] = None
    score_precision: ScorePrecision = "float64"
    ties: TieOrder = "trec"
    rel: Optional[int] = None
    gains: Optional[Mapping[int, float]] = None
    undefined: Literal["zero", "nan"] = "zero"
    duplicates: DuplicatePolicy = "error"
    chunk_rows: int = 8_000_000
    sparse: bool = True
    variants: Optional[Sequence[str]] = None

    def __post_init__(self) -> None:
        checked = Contract("EngineOptions", OPTION_DOMAINS, {}, {}, inspect.signature(EngineOptions)).check(
            {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        )
        checked["by"] = tuple(checked["by"] or ())
        checked["variants"] = None if checked["variants"] is None else tuple(checked["variants"])
        for name, value in checked.items():
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, options: Mapping[str, Any], *, where: str = "evaluate") -> "EngineOptions":
        """The options given by keyword to ``where``; an unknown keyword raises
        :class:`~pdeval.errors.PdevalError` with the closest known name."""
        unknown = [name for name in options if name not in OPTION_DOCS]
        if unknown:
            name = unknown[0]
            close = difflib.get_close_matches(name, OPTION_DOCS, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the options are {sorted(OPTION_DOCS)}"
            raise PdevalError(f"{where}() got an unknown option {name!r}{hint}")
        return cls(**options)

    def replace(self, **changes: Any) -> "EngineOptions":
        """A copy with ``changes`` applied (validated again)."""
        return dataclasses.replace(self, **changes)

    def given(self) -> dict[str, Any]:
        """The options that differ from their defaults, as keywords (to pass on or show)."""
        default = EngineOptions()
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if getattr(self, f.name) != getattr(default, f.name)}


def option_docs(names: Optional[Sequence[str]] = None) -> str:
    """The numpydoc ``Parameters`` entries of the engine options (all, or ``names``)."""
    lines = []
    for name in names or OPTION_DOCS:
        kind, text = OPTION_DOCS[name]
        lines.append(f"{name} : {kind}")
        lines.extend("    " + line for line in textwrap.wrap(text, 88))
    return "\n".join(lines)


def _option_parameters(exclude: Sequence[str] = ()) -> list[inspect.Parameter]:
    hints = {"by": Optional[Union[str, Sequence[str]]], "variants": Optional[Sequence[str]]}
    return [
        inspect.Parameter(f.name, inspect.Parameter.KEYWORD_ONLY, default=f.default,
                          annotation=hints.get(f.name, f.type))
        for f in dataclasses.fields(EngineOptions) if f.name not in exclude
    ]


def takes_engine_options(function: Callable = None, *, exclude: Sequence[str] = ()) -> Callable:
    """Give ``function(..., **options)`` the engine options as its visible keyword parameters.

    The signature shows every option (except ``exclude``) with its default in place of
    ``**options``, and ``{engine_options}`` in the docstring becomes their documentation
    (indented as the line it stands on). The function itself still receives ``**options``
    and validates them with :meth:`EngineOptions.of`.
    """
    if function is None:
        return functools.partial(takes_engine_options, exclude=exclude)
    signature = inspect.signature(function)
    params = [p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD]
    own = {p.name for p in params}
    params += [p for p in _option_parameters(exclude) if p.name not in own]
    function.__signature__ = signature.replace(parameters=params)
    doc = function.__doc__ or ""
    for line in doc.splitlines():
        if line.strip() == "{engine_options}":
            indent = line[: len(line) - len(line.lstrip())]
            names = [n for n in OPTION_DOCS if n not in exclude and n not in own]
            rendered = textwrap.indent(option_docs(names), indent)
            doc = doc.replace(line, rendered)
            break
    function.__doc__ = doc
    function.__option_domains__ = {n: OPTION_DOMAINS[n] for n in OPTION_DOCS if n not in exclude and n not in own}
    return function


__all__ = ["DuplicatePolicy", "EngineOptions", "OPTION_DOCS", "OPTION_DOMAINS", "ScorePrecision", "TieOrder", "option_docs", "takes_engine_options"]
