"""The one list of measures, and the parser of measure strings.

A measure string is ``Name['][(param=value, ...)][@cutoff]``, case-insensitive:
``AP``, ``P@10``, ``nDCG'@10``, ``infAP(c=1.5)``, ``npref(n=4, norm=N)``,
``nDCG(gains={1:1,2:3})``. The prime ``'`` evaluates the measure on the condensed list
(unjudged documents removed, MEASURES.md 0.4) and is the same as ``judged_only=True``.
trec_eval names (``map``, ``P_10``, ``P.10``, ``ndcg_cut_10``, ``recip_rank``, ``num_ret``,
``old_bpref`` ...) are accepted as aliases.

Every measure accepts ``depth=`` (trec_eval ``-M``); binary measures accept ``rel=`` (the
relevance threshold θ, trec_eval ``-l``); graded measures accept ``gains=`` (a mapping
level -> gain). :func:`parse` returns a :class:`Measure` whose ``str()`` is the canonical
string: the same name round-trips, and results hold it in their ``measure`` column.
"""

from __future__ import annotations

import difflib
import numbers
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.contract import Anything, Boolean, contract
from pdeval.errors import MeasureError
from pdeval.measures.enumeration import enumerated
from pdeval.measures.foreign import ir_measure_text, is_ir_measure
from pdeval.engine.segments import QrelsTable, Segments

Kernel = Callable[..., np.ndarray]


@dataclass(frozen=True)
class MeasureSpec:
    """What the registry knows of one measure family."""

    name: str
    kernel: Kernel
    params: Mapping[str, Any]
    cutoff: str  # "none", "optional" or "required"
    uses_rel: bool
    uses_gains: bool
    summary: str
    unjudged: str
    pooled: str
    unretrieved: str
    reference: str
    aliases: tuple = ()
    choices: Mapping[str, tuple] = field(default_factory=dict)
    trec_eval: Optional[str] = None  # trec_eval's names "plain|with_{k}", {k} = the cutoff
    required: tuple = ()  # parameters without a usable default
    sparse: bool = False  # the kernel needs only the rows some qrels judge (see Measure.sparse)
    no_prime: Optional[str] = None  # why the measure has no condensed-list version (primes refused)
    #: how trec_eval's summary line combines the topics: "mean", "sum" (counts), "gmean"
    #: (geometric mean of max(value, 1e-5), as gm_map), or "none" (per-topic only, as relstring)
    aggregate: str = "mean"
    #: whether judging an unjudged retrieved document relevant (rather than nonrelevant) never
    #: lowers the value (:func:`pdeval.bounds`): a bool, or a callable of the parsed Measure
    #: for families where it depends on the parameters (recall only without a cutoff)
    monotone: Union[bool, Callable[["Measure"], bool]] = False
    #: whether the value treats an unjudged document exactly as a judged nonrelevant one (it
    #: reads only relevant rows, ranks, R and the ideal list): then judging the unjudged
    #: documents nonrelevant leaves it unchanged (:func:`pdeval.bounds` reuses the value)
    as_nonrelevant: Union[bool, Callable[["Measure"], bool]] = False
    #: the expected value over tied orders (``ties="expected"``): a kernel reading the runs of tied
    #: scores and its form (``measures.ties.EXPECTED_FORMS``); None: enumeration of the orders
    expected: Optional[Kernel] = None
    expected_form: str = "enumeration"
    judgments: str = "relevance"  # what the measure reads: qrels, or "preferences" (a preference frame)

    def all_params(self) -> dict:
        params = dict(self.params)
        if self.uses_rel:
            params["rel"] = 1
        if self.uses_gains:
            params["gains"] = None
        params["depth"] = None
        return params


#: the ways a summary line combines per-topic values (MeasureSpec.aggregate)
AGGREGATES = ("mean", "sum", "gmean", "none")

REGISTRY: dict[str, MeasureSpec] = {}
_LOOKUP: dict[str, str] = {}


def register(
    name: str,
    *,
    summary: str,
    unjudged: str,
    pooled: str,
    unretrieved: str,
    reference: str,
    params: Optional[Mapping[str, Any]] = None,
    choices: Optional[Mapping[str, tuple]] = None,
    cutoff: str = "none",
    rel: bool = False,
    gains: bool = False,
    aliases: Sequence[str] = (),
    trec_eval: Optional[str] = None,
    required: Sequence[str] = (),
    sparse: bool = False,
    no_prime: Optional[str] = None,
    aggregate: str = "mean",
    monotone: Union[bool, Callable[["Measure"], bool]] = False,
    as_nonrelevant: Union[bool, Callable[["Measure"], bool]] = False,
    judgments: str = "relevance",
) -> Callable[[Kernel], Kernel]:
    """Register a kernel under ``name`` (decorator). The kernel returns one float per segment.

    Kernels check their own parameters and raise :class:`MeasureError`; :func:`parse` runs
    every kernel once on empty lists, so a bad value fails when the measure is named.
    ``sparse=True`` declares that the kernel reads ranks only through ``Segments.rank`` /
    ``rank_at`` and never counts rows the qrels do not hold (nor list lengths), so the
    engine may leave those rows out. ``no_prime`` (a reason) refuses the prime / ``judged_only``.
    ``aggregate`` says how a summary over topics combines the values (see :class:`MeasureSpec`).
    ``monotone`` declares that the value never falls when an unjudged retrieved document is
    judged relevant rather than nonrelevant, the documents joining the topic's qrels (True, or
    a callable of the parsed :class:`Measure`; :func:`pdeval.bounds` relies on it, a test
    enumerates every judging); ``as_nonrelevant``: unjudged documents count as judged nonrelevant.
    ``judgments="preferences"`` marks a measure of preference judgments (a preference frame).
    """
    if aggregate not in AGGREGATES:
        raise ValueError(f"aggregate must be one of {AGGREGATES}, got {aggregate!r}")

    def decorate(kernel: Kernel) -> Kernel:
        spec = MeasureSpec(
            name=name, kernel=kernel, params=dict(params or {}), cutoff=cutoff, uses_rel=rel, uses_gains=gains,
            summary=summary, unjudged=unjudged, pooled=pooled, unretrieved=unretrieved, reference=reference,
            aliases=tuple(aliases), choices=dict(choices or {}), trec_eval=trec_eval, required=tuple(required),
            sparse=sparse, no_prime=no_prime, aggregate=aggregate, monotone=monotone, as_nonrelevant=as_nonrelevant,
            judgments=judgments,
        )
        REGISTRY[name] = spec
        for key in (name, *aliases):
            _LOOKUP[key.lower()] = name
        return kernel

    return decorate


def _format_value(value: Any) -> str:
    if isinstance(value, Mapping):
        return "{" + ",".join(f"{int(k)}:{_format_value(v)}" for k, v in sorted(value.items())) + "}"
    if isinstance(value, float):
        return repr(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)
    return str(value)


@dataclass(frozen=True)
class Measure:
    """A measure with its parameters: computes one value per segment."""

    spec: MeasureSpec
    params: tuple  # sorted (name, value) pairs of every parameter, defaults included
    cutoff: Optional[int] = None
    judged_only: bool = False

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def sparse(self) -> bool:
        """Whether the value depends only on the rows some qrels judge (and their ranks): the
        kernel is declared so, or the measure is primed (condensed lists hold only those)."""
        return self.spec.sparse or self.judged_only

    @property
    def needs_ties(self) -> bool:
        """Whether the kernel weighs tied documents alike (``ties="mean"``) and so needs to
        know which rows share a score (:attr:`Segments.ties`)."""
        return dict(self.params).get("ties") == "mean"

    @property
    def monotone(self) -> bool:
        """Whether judging an unjudged retrieved document relevant rather than nonrelevant never
        lowers the value (:attr:`MeasureSpec.monotone`). A prime is monotone when its measure
        is: the condensed list of every judging holds the same documents, only their labels
        differ."""
        flag = self.spec.monotone
        return bool(flag(self) if callable(flag) else flag)

    @property
    def as_nonrelevant(self) -> bool:
        """Whether the value is the same when every unjudged document is judged nonrelevant
        (:attr:`MeasureSpec.as_nonrelevant`); never for a prime, whose condensed list grows."""
        flag = self.spec.as_nonrelevant
        return not self.judged_only and bool(flag(self) if callable(flag) else flag)

    def param(self, key: str) -> Any:
        return dict(self.params)[key]

    def __str__(self) -> str:
        defaults = self.spec.all_params()
        shown = [
            f"{key}={_format_value(value)}"
            for key, value in self.params
            if not _same(value, defaults.get(key))
        ]
        text = self.spec.name + ("'" if self.judged_only else "")
        if shown:
            text += "(" + ",".join(shown) + ")"
        if self.cutoff is not None:
            text += f"@{self.cutoff}"
        return text

    def __repr__(self) -> str:
        return f"Measure({str(self)!r})"

    def trec_eval_name(self) -> str:
        """trec_eval's name of this measure where it has one, else the canonical string."""
        defaults = self.spec.all_params()
        if self.spec.trec_eval is None or self.judged_only or any(
            not _same(v, defaults.get(k)) for k, v in self.params
        ):
            return str(self)
        for name in self.spec.trec_eval.split("|"):
            if ("{k}" in name) == (self.cutoff is not None):
                return name.format(k=self.cutoff)
        return str(self)

    def compute(self, segments: Segments) -> np.ndarray:
        """Values per segment (NaN where undefined), after depth cut and condensing; with
        ``segments.tie_mode == "expected"`` the expected value over tied orders."""
        params = dict(self.params)
        depth = params.pop("depth")
        view = segments.cut(depth)
        if self.judged_only:
            view = view.condensed()
        if self.spec.cutoff != "none":
            params["cutoff"] = self.cutoff
        kernel = self.spec.kernel
        if segments.tie_mode == "expected":  # the expected value over tied orders (measures/ties.py)
            kernel = self.spec.expected or enumerated(self.spec.kernel, str(self))
        return np.asarray(kernel(view, **params), dtype=np.float64)


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        return (a or None) == (b or None)
    return a == b


# ---- parsing ------------------------------------------------------------------------------
_MEASURE_RE = re.compile(
    r"^\s*(?P<name>[A-Za-z][A-Za-z0-9_]*)(?P<prime>')?\s*"
    r"(?:\((?P<params>.*)\))?\s*(?:@\s*(?P<cutoff>\d+))?\s*$"
)

_TREC_EVAL_ALIASES = [
    (re.compile(r"^P[_.](\d+)$", re.I), "P@{0}"),
    (re.compile(r"^recall[_.](\d+)$", re.I), "R@{0}"),
    (re.compile(r"^ndcg_cut[_.](\d+)$", re.I), "nDCG@{0}"),
    (re.compile(r"^map_cut[_.](\d+)$", re.I), "AP@{0}"),
    (re.compile(r"^old_bpref$", re.I), "Bpref(variant=legacy)"),
]


def _split_params(text: str) -> list[str]:
    parts, depth, current = [], 0, []
    for char in text:
        if char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if "".join(current).strip():
        parts.append("".join(current))
    return [p.strip() for p in parts if p.strip()]


def _expected(key: str, default: Any, spec: MeasureSpec) -> str:
    """What a parameter takes, in words (for error messages)."""
    if key == "gains":
        return "a mapping of relevance level to gain such as {1:1,2:3}"
    if key in spec.choices:
        return "one of " + ", ".join(repr(c) for c in spec.choices[key])
    if isinstance(default, bool):
        return "true or false"
    if key == "depth":
        return "a positive integer"
    if key == "rel":
        return "an integer >= 0 (the relevance threshold)"
    if isinstance(default, int):
        return "an integer"
    if isinstance(default, float):
        return "a finite number"
    return "a value"


def _convert(key: str, raw: Any, default: Any, spec: MeasureSpec, text: str) -> Any:
    """The value of parameter ``key`` given as ``raw`` (the string of a measure string, or a
    Python value passed as an override), type-checked; raises :class:`MeasureError` saying
    what the parameter takes."""

    def bad(detail: str = "") -> MeasureError:
        return MeasureError(f"{text!r}: {key} must be {_expected(key, default, spec)}, got {raw!r}{detail}")

    is_int = key in ("depth", "rel") or (isinstance(default, int) and not isinstance(default, bool))
    if isinstance(raw, str):
        raw = raw.strip()
        if not raw:
            raise bad(" (empty)")
        if key == "gains":
            body = raw.strip("{}").strip()
            value = {}
            for item in filter(None, (p.strip() for p in body.split(","))):
                level, _, gain = item.partition(":")
                try:
                    value[int(level)] = float(gain)
                except ValueError:
                    raise bad() from None
        elif isinstance(default, bool):
            if raw.lower() not in ("true", "false", "1", "0"):
                raise bad()
            value = raw.lower() in ("true", "1")
        elif key in spec.choices:
            value = raw
        elif is_int:
            try:
                value = int(raw)
            except ValueError:
                raise bad() from None
        elif isinstance(default, float):
            try:
                value = float(raw)
            except ValueError:
                raise bad() from None
        elif default is None:  # a number or a word the kernel knows (subAP's p=auto); it checks
            try:
                value = float(raw)
            except ValueError:
                value = raw
        else:
            value = raw
    else:
        value = raw
        if key == "gains":
            if not isinstance(value, Mapping):
                raise bad()
            try:
                value = {int(k): float(v) for k, v in value.items()}
            except (TypeError, ValueError):
                raise bad() from None
            if any(int(k) != k for k in raw) or not all(np.isfinite(list(value.values()))):
                raise bad()
        elif isinstance(default, bool):
            if not isinstance(value, (bool, np.bool_)):
                raise bad()
            value = bool(value)
        elif is_int:
            if not isinstance(value, numbers.Integral) or isinstance(value, (bool, np.bool_)):
                raise bad()
            value = int(value)
        elif isinstance(default, float):
            if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
                raise bad()
            value = float(value)
        elif key in spec.choices and not isinstance(value, str):
            numeric = [c for c in spec.choices[key] if not isinstance(c, str)]
            if not numeric or not isinstance(value, numbers.Real):
                raise bad()
    if isinstance(value, float) and not np.isfinite(value):
        raise bad()
    if key == "rel" and value < 0:
        raise bad()
    if key == "depth" and value < 1:
        raise bad()
    if key in spec.choices:
        allowed = spec.choices[key]
        matches = [c for c in allowed if isinstance(value, str) and c.lower() == value.lower()]
        numeric = [c for c in allowed if not isinstance(c, str)]
        if matches:
            value = matches[0]
        elif numeric and isinstance(value, (int, float)):
            pass
        elif numeric and isinstance(value, str):
            try:
                value = float(value)
            except ValueError:
                raise bad() from None
        else:
            raise bad()
    if isinstance(value, Mapping):
        value = tuple(sorted((int(k), float(v)) for k, v in value.items()))
        value = dict(value) or None
    return value


_NAME_AND_NUMBER = re.compile(r"^(?P<stem>.*?[A-Za-z])[_.]?(?P<k>\d+)$")


def _with_cutoff(name: str) -> list[str]:
    """Readings of a name that runs a cutoff into the measure (``P10``, ``ndcg_cut10``,
    ``map_cut20``): the pdeval string and, for trec_eval's families, trec_eval's name."""
    found = _NAME_AND_NUMBER.match(name)
    if not found:
        return []
    stem, k = found.group("stem"), found.group("k")
    for pattern, replacement in _TREC_EVAL_ALIASES:
        if pattern.match(f"{stem}.{k}"):  # trec_eval's spelling: the pattern's literal prefix
            prefix = pattern.pattern.lstrip("^").split("[_.]")[0]
            return [replacement.format(k), f"{prefix if prefix.isidentifier() else stem}.{k}"]
    spec = REGISTRY.get(_LOOKUP.get(stem.lower(), ""))
    if spec is not None and spec.cutoff != "none":
        return [f"{spec.name}@{k}"]
    return []


def _suggest(name: str) -> list[str]:
    """The measures a mistyped name most likely means: a cutoff run into the name first
    (``P10`` -> ``P@10``, ``P.10``), else the closest known names."""
    readings = _with_cutoff(name)
    if readings:
        return readings
    known = sorted(set(_LOOKUP))
    close = difflib.get_close_matches(name.lower(), known, n=3, cutoff=0.5)
    return list(dict.fromkeys(REGISTRY[_LOOKUP[c]].name for c in close))


@contract(measure=Anything(why="parse is the measure domain itself (**overrides too)"), judged_only=Boolean())
def parse(measure: Union[str, Measure], *, judged_only: bool = False, **overrides: Any) -> Measure:
    """Parse a measure string (or pass a :class:`Measure` through); ``overrides`` set parameters
    (``rel=2``, ``gains={1: 1, 2: 3}``, ``depth=100``) that the string does not set itself.

    Parameters
    ----------
    measure : str or Measure
        A measure string (``"AP"``, ``"nDCG'@10"``, ``"infAP(c=1.5)"``), a :class:`Measure`,
        or an ir_measures measure object.
    judged_only : bool, default False
        Prime the measure (evaluate it on the condensed list).
    **overrides
        Parameters the string does not set itself (checked by the measure, MeasureError).

    Returns
    -------
    Measure
        The parsed measure; ``str()`` of it is the canonical string.

    Raises
    ------
    MeasureError
        An unknown measure or parameter, with the closest known names.

    See Also
    --------
    available_measures : Every measure and its parameters.

    Examples
    --------
    >>> str(pdeval.parse_measure("nDCG@10", judged_only=True)), str(pdeval.parse_measure("AP", rel=2))
    ("nDCG'@10", 'AP(rel=2)')
    """
    if isinstance(measure, Measure):
        if judged_only and not measure.judged_only and measure.spec.no_prime:
            raise MeasureError(f"{str(measure)!r}: {measure.name} has no prime (judged_only): {measure.spec.no_prime}")
        if judged_only and not measure.judged_only:
            measure = Measure(measure.spec, measure.params, measure.cutoff, True)
        return measure
    if not isinstance(measure, str):
        if is_ir_measure(measure):  # ir_measures.AP@10, nDCG(judged_only=True)@10 ...
            return parse(ir_measure_text(measure), judged_only=judged_only, **overrides)
        raise MeasureError(f"a measure is a string such as 'AP' or 'nDCG@10', not {measure!r}")
    text = measure
    for pattern, replacement in _TREC_EVAL_ALIASES:
        found = pattern.match(text.strip())
        if found:
            text = replacement.format(*found.groups())
            break
    found = _MEASURE_RE.match(text)
    if not found:
        raise MeasureError(f"cannot read the measure string {measure!r}; expected e.g. 'AP', 'P@10', \"nDCG'@10\", 'infAP(c=1.5)'")
    key = found.group("name").lower()
    if key not in _LOOKUP:
        raise MeasureError(f"unknown measure {found.group('name')!r}.", _suggest(found.group("name")))
    spec = REGISTRY[_LOOKUP[key]]
    defaults = spec.all_params()
    values = dict(defaults)
    given = {}
    for item in _split_params(found.group("params") or ""):
        name, sep, raw = item.partition("=")
        name = name.strip()
        lookup = {k.lower(): k for k in defaults}
        if not sep or name.lower() not in lookup:
            raise MeasureError(
                f"{measure!r}: unknown parameter {name!r} of {spec.name}; it takes {sorted(defaults)}.",
                difflib.get_close_matches(name, list(defaults), n=2),
            )
        name = lookup[name.lower()]
        if name in given:
            raise MeasureError(f"{measure!r}: parameter {name!r} is given twice")
        given[name] = _convert(name, raw, defaults[name], spec, measure)
    for name, raw in overrides.items():
        if name in defaults and name not in given and raw is not None:
            given[name] = _convert(name, raw, defaults[name], spec, measure)
    values.update(given)
    cutoff = found.group("cutoff")
    cutoff = int(cutoff) if cutoff is not None else None
    if spec.cutoff == "none" and cutoff is not None:
        raise MeasureError(f"{measure!r}: {spec.name} takes no @cutoff (use depth= to cut the ranking)")
    if spec.cutoff == "required" and cutoff is None:
        raise MeasureError(f"{measure!r}: {spec.name} needs a cutoff, e.g. {spec.name}@10")
    if cutoff is not None and cutoff < 1:
        raise MeasureError(f"{measure!r}: the cutoff must be a positive integer")
    missing = [key for key in spec.required if values.get(key) is None]
    if missing:
        raise MeasureError(f"{measure!r}: {spec.name} needs {', '.join(missing)}, e.g. {spec.name}({missing[0]}=...)")
    prime = bool(found.group("prime")) or judged_only
    if prime and spec.no_prime:
        raise MeasureError(f"{measure!r}: {spec.name} has no prime (judged_only): {spec.no_prime}")
    parsed = Measure(spec, tuple(sorted(values.items())), cutoff, prime)
    parsed.compute(EMPTY_SEGMENTS)  # the kernel checks its parameters now, not at evaluation
    return parsed


#: lists with no row: every kernel runs on them once when its measure is parsed (checks its parameters)
_NONE, _START = np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
EMPTY_SEGMENTS = Segments(rel=np.zeros(0, dtype=np.int32), offsets=_START, topic=_NONE,
                          qrels=QrelsTable(levels=_NONE, offsets=_START, pooled=_NONE, variant=_NONE))


def parse_all(
    measures: Union[str, Measure, Iterable[Union[str, Measure]]],
    *,
    judged_only: bool = False,
    **overrides: Any,
) -> list[Measure]:
    """Parse one or many measures; duplicates (same canonical string) are kept once."""
    if isinstance(measures, (str, Measure)) or not isinstance(measures, Iterable):
        measures = [measures]  # one measure (an ir_measures object is not iterable)
    parsed = [parse(m, judged_only=judged_only, **overrides) for m in measures]
    if not parsed:
        raise MeasureError("no measure given")
    unique = {str(m): m for m in parsed}
    return list(unique.values())


@contract()
def available() -> pd.DataFrame:
    """Every registered measure with its parameters and how it treats documents.

    Returns
    -------
    DataFrame
        One row per registered measure: ``measure``, ``parameters`` (with their defaults),
        ``cutoff``, its treatment of unjudged, pooled and unretrieved documents, and its
        ``reference``.

    See Also
    --------
    parse_measure : Parse one measure string.

    Examples
    --------
    >>> "AP" in set(pdeval.available_measures()["measure"])
    True
    """
    rows = []
    for spec in REGISTRY.values():
        cutoff = {"none": "", "optional": "@k optional", "required": "@k required"}[spec.cutoff]
        rows.append(
            {
                "measure": spec.name,
                "parameters": ", ".join(
                    f"{k}=(required)" if k in spec.required else f"{k}={_format_value(v)}"
                    for k, v in spec.all_params().items()
                ),
                "cutoff": cutoff,
                "unjudged (absent)": spec.unjudged,
                "pooled (-1)": spec.pooled,
                "unretrieved relevant": spec.unretrieved,
                "summary": spec.summary,
                "reference": spec.reference,
                "aliases": ", ".join(spec.aliases),
            }
        )
    return pd.DataFrame(rows)
