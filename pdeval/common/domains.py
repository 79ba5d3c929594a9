"""The domains of the boundary contract (:mod:`pdeval.common.contract`): what one parameter
may be, the values outside it and one value inside it, for the generated contract test."""

from __future__ import annotations

import math
import os
import numbers
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Optional

import numpy as np

from pdeval.errors import PdevalError

__all__ = [
    "ALIEN", "Anything", "Boolean", "Callable_", "Choice", "Domain", "FilePath", "Instance", "Integer", "ListOf",
    "MappingOf", "Nullable", "OneOf", "Real", "Refused", "Text", "same",
]


#: a value no domain accepts: stands for "an object of a type nobody expects"
class _Alien:
    def __repr__(self) -> str:
        return "<object>"


ALIEN = _Alien()


class Domain:
    """What one parameter may be. Subclasses define :meth:`accepts` (or :meth:`convert`),
    :attr:`text`, :meth:`outside` and :meth:`example`."""

    text = "a valid value"

    def convert(self, value: Any) -> Any:
        """``value`` normalised, or raise :class:`Refused` (with an optional reason)."""
        if not self.accepts(value):
            raise Refused()
        return value

    def accepts(self, value: Any) -> bool:  # pragma: no cover - every domain overrides one
        raise NotImplementedError

    def outside(self) -> list:
        """Values this domain refuses (for the generated test)."""
        return [ALIEN]

    def example(self) -> Any:
        """One value this domain accepts (for the generated test)."""
        raise NotImplementedError(type(self).__name__)

    def __or__(self, other: "Domain") -> "Domain":
        return OneOf(self, other)


class Refused(Exception):
    """A value outside a domain; ``reason`` (optional) says more than the domain's text, and
    ``error`` is the :class:`~pdeval.errors.PdevalError` subclass to raise (a frame's
    :class:`~pdeval.errors.SchemaError`, say)."""

    def __init__(self, reason: str = "", error: type = PdevalError):
        self.reason = reason
        self.error = error


def _is_bool(value: Any) -> bool:
    return isinstance(value, (bool, np.bool_))


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real) and not _is_bool(value)


def _bound_text(low: Optional[float], high: Optional[float], closed: str) -> str:
    parts = []
    if low is not None:
        parts.append((">= " if closed in ("both", "left") else "> ") + _num(low))
    if high is not None:
        parts.append(("<= " if closed in ("both", "right") else "< ") + _num(high))
    return " and ".join(parts)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Real(Domain):
    """A finite real number (numpy scalars included; never a bool or a string) in a range."""

    low: Optional[float] = None
    high: Optional[float] = None
    closed: str = "both"

    @property
    def text(self) -> str:
        bounds = _bound_text(self.low, self.high, self.closed)
        return "a finite number" + (f" {bounds}" if bounds else "")

    def _inside(self, x: float) -> bool:
        if self.low is not None and (x < self.low or (x == self.low and self.closed in ("neither", "right"))):
            return False
        if self.high is not None and (x > self.high or (x == self.high and self.closed in ("neither", "left"))):
            return False
        return True

    def convert(self, value: Any) -> float:
        if not _is_number(value) or not math.isfinite(float(value)) or not self._inside(float(value)):
            raise Refused()
        return float(value) if not isinstance(value, numbers.Integral) else int(value)

    def outside(self) -> list:
        bad = [float("nan"), float("inf"), "0.5", True, None]
        if self.low is not None:
            bad.append(self.low - 1 if self.closed in ("both", "left") else self.low)
        if self.high is not None:
            bad.append(self.high + 1 if self.closed in ("both", "right") else self.high)
        return bad

    def example(self) -> float:
        for x in (0.5, 1.0, 0.0, 2.0, 10.0, -1.0, 1000.0):
            if self._inside(x):
                return x
        return float(self.low)  # pragma: no cover - a degenerate range


@dataclass(frozen=True)
class Integer(Domain):
    """An integer (``int`` or a numpy integer; not a bool, not a float) in a range."""

    low: Optional[int] = None
    high: Optional[int] = None

    @property
    def text(self) -> str:
        bounds = _bound_text(self.low, self.high, "both")
        return "an integer" + (f" {bounds}" if bounds else "")

    def convert(self, value: Any) -> int:
        if not isinstance(value, numbers.Integral) or _is_bool(value):
            raise Refused()
        value = int(value)
        if (self.low is not None and value < self.low) or (self.high is not None and value > self.high):
            raise Refused()
        return value

    def outside(self) -> list:
        bad = [float("nan"), float("inf"), 2.5, "1", True, None]
        if self.low is not None:
            bad.append(self.low - 1)
        if self.high is not None:
            bad.append(self.high + 1)
        return bad

    def example(self) -> int:
        for x in (10, 1, 0, 2, 1000):
            if (self.low is None or x >= self.low) and (self.high is None or x <= self.high):
                return x
        return int(self.low)  # pragma: no cover


@dataclass(frozen=True)
class Boolean(Domain):
    """``True`` or ``False`` (numpy's bool included)."""

    text = "True or False"

    def convert(self, value: Any) -> bool:
        if not _is_bool(value):
            raise Refused()
        return bool(value)

    def outside(self) -> list:
        return ["yes", 2, None]

    def example(self) -> bool:
        return True


@dataclass(frozen=True)
class Choice(Domain):
    """One of a set of values (words, mostly). ``renamed`` maps old words to the new ones, so
    that an old call fails naming its replacement."""

    values: tuple
    renamed: Mapping[Any, Any] = field(default_factory=dict)

    def __init__(self, *values: Any, renamed: Optional[Mapping[Any, Any]] = None):
        object.__setattr__(self, "values", tuple(values))
        object.__setattr__(self, "renamed", dict(renamed or {}))

    @property
    def text(self) -> str:
        return "one of " + ", ".join(repr(v) for v in self.values)

    def convert(self, value: Any) -> Any:
        try:
            if value in self.values and not (_is_bool(value) and not any(_is_bool(v) for v in self.values)):
                return value
            hashable = True
            hash(value)
        except TypeError:
            hashable = False
        except ValueError:  # an array compared with a word
            hashable = False
        if hashable and value in self.renamed:
            raise Refused(f"{value!r} is now called {self.renamed[value]!r}")
        raise Refused()

    def outside(self) -> list:
        return ["no such choice", None, 1.5]

    def example(self) -> Any:
        return self.values[0]


@dataclass(frozen=True)
class Text(Domain):
    """A non-empty string (a name)."""

    what: str = "a non-empty string"

    @property
    def text(self) -> str:
        return self.what

    def accepts(self, value: Any) -> bool:
        return isinstance(value, str) and value != ""

    def outside(self) -> list:
        return ["", 1, None]

    def example(self) -> str:
        return "x"


@dataclass(frozen=True)
class FilePath(Text):
    """A path: a non-empty string or an :class:`os.PathLike` (whether it exists is the
    reader's question, answered with a :class:`~pdeval.errors.MissingFileError`)."""

    what: str = "a path (a non-empty string or a pathlib.Path)"

    def accepts(self, value: Any) -> bool:
        return super().accepts(value) or isinstance(value, os.PathLike)

    def outside(self) -> list:
        return ["", 1, None, ALIEN]

    def example(self) -> str:
        return "x.txt"


@dataclass(frozen=True)
class Instance(Domain):
    """An instance of one of ``types`` (described as ``what``)."""

    types: tuple
    what: str
    sample: Any = None

    @property
    def text(self) -> str:
        return self.what

    def accepts(self, value: Any) -> bool:
        return isinstance(value, self.types) and not (_is_bool(value) and bool not in self.types)

    def outside(self) -> list:
        return [ALIEN, None]

    def example(self) -> Any:
        return self.sample


@dataclass(frozen=True)
class Callable_(Domain):
    """A callable (a function of the caller's)."""

    what: str = "a callable"

    @property
    def text(self) -> str:
        return self.what

    def accepts(self, value: Any) -> bool:
        return callable(value) and not isinstance(value, type)

    def outside(self) -> list:
        return [1, "f", None]

    def example(self) -> Callable:
        return lambda *args: None


@dataclass(frozen=True)
class Anything(Domain):
    """Any value: declared on purpose, with ``why`` (say what checks the value instead)."""

    why: str = ""
    text = "anything"

    def accepts(self, value: Any) -> bool:
        return True

    def outside(self) -> list:
        return []

    def example(self) -> Any:
        return None


class Nullable(Domain):
    """``None`` or a value of ``domain`` (``None`` means the documented default behaviour)."""

    def __init__(self, domain: Domain):
        self.domain = domain

    @property
    def text(self) -> str:
        return f"None or {self.domain.text}"

    def convert(self, value: Any) -> Any:
        return None if value is None else self.domain.convert(value)

    def outside(self) -> list:
        return [v for v in self.domain.outside() if v is not None]

    def example(self) -> Any:
        return self.domain.example()


class OneOf(Domain):
    """A value of any of ``domains`` (the first that accepts it converts it)."""

    def __init__(self, *domains: Domain):
        self.domains = domains

    @property
    def text(self) -> str:
        return " or ".join(d.text for d in self.domains)

    def convert(self, value: Any) -> Any:
        reasons, error = [], PdevalError
        for domain in self.domains:
            try:
                return domain.convert(value)
            except Refused as refused:
                reasons.append(refused.reason)
                if refused.reason and refused.error is not PdevalError and error is PdevalError:
                    error = refused.error  # the kind of the first precise refusal (a frame's SchemaError)
            except PdevalError as exc:  # a domain's precise error (a frame's columns): one refusal among others
                reasons.append(str(exc))
                error = type(exc) if error is PdevalError else error
        raise Refused(next((r for r in reasons if r), ""), error)

    def outside(self) -> list:
        candidates = [v for d in self.domains for v in d.outside()]
        out = []
        for v in candidates:
            try:
                self.convert(v)
            except Refused:
                if not any(v is w or (type(v) is type(w) and same(v, w)) for w in out):
                    out.append(v)
        return out

    def example(self) -> Any:
        return self.domains[0].example()


def same(a: Any, b: Any) -> bool:
    try:
        return bool(a == b) or (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b))
    except Exception:  # noqa: BLE001 - arrays and frames compare element-wise
        return False


class ListOf(Domain):
    """A list (or tuple, array, set or other iterable that is not a string or a mapping) of
    values of ``item``; with ``lone=True`` a single item stands for a list of one. The value
    is handed on as a list."""

    def __init__(self, item: Domain, *, min_len: int = 1, lone: bool = True, unique: bool = False):
        self.item, self.min_len, self.lone, self.unique = item, min_len, lone, unique

    @property
    def text(self) -> str:
        what = f"a list of {self.item.text}"
        if self.min_len:
            what = f"a non-empty list of {self.item.text}" if self.min_len == 1 else f"{what} ({self.min_len} or more)"
        if self.lone:
            what = f"{self.item.text}, or {what}"
        return what

    def convert(self, value: Any) -> list:
        if self.lone and not _is_iterable(value):
            return [self.item.convert(value)]
        if self.lone and isinstance(value, str):
            return [self.item.convert(value)]
        if not _is_iterable(value):
            raise Refused()
        items = list(value)
        if len(items) < self.min_len:
            raise Refused(f"it has {len(items)} item(s)")
        out = []
        for position, item in enumerate(items):
            try:
                out.append(self.item.convert(item))
            except Refused as refused:
                reason = f"item {position} ({item!r}) is not {self.item.text}"
                raise Refused(reason + (f": {refused.reason}" if refused.reason else "")) from None
        if self.unique and len(set(map(_key, out))) < len(out):
            raise Refused("it repeats an item")
        return out

    def outside(self) -> list:
        bad = [[bad] for bad in self.item.outside() if bad is not None][:4]
        if self.min_len:
            bad.append([])
        if not self.lone:
            bad.append(self.item.example())
        bad.append({"a": 1})
        return bad

    def example(self) -> list:
        return [self.item.example()] * max(self.min_len, 1)


def _key(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _is_iterable(value: Any) -> bool:
    if isinstance(value, (str, bytes, Mapping)) or hasattr(value, "columns"):
        return False
    return isinstance(value, Iterable)


class MappingOf(Domain):
    """A mapping of ``keys`` to ``values``."""

    def __init__(self, keys: Domain, values: Domain, *, min_len: int = 0):
        self.keys, self.values, self.min_len = keys, values, min_len

    @property
    def text(self) -> str:
        return f"a mapping of {self.keys.text} to {self.values.text}"

    def convert(self, value: Any) -> dict:
        if not isinstance(value, Mapping):
            raise Refused()
        if len(value) < self.min_len:
            raise Refused("it is empty")
        out = {}
        for key, item in value.items():
            for what, domain, x in (("key", self.keys, key), ("value", self.values, item)):
                try:
                    converted = domain.convert(x)
                except Refused as refused:
                    reason = f"its {what} {x!r} is not {domain.text}"
                    raise Refused(reason + (f": {refused.reason}" if refused.reason else "")) from None
                if what == "key":
                    key = converted
                else:
                    item = converted
            out[key] = item
        return out

    def outside(self) -> list:
        bad = [[1, 2], "x"]
        for key in self.keys.outside()[:2]:
            try:
                bad.append({key: self.values.example()})
            except TypeError:
                continue
        for item in self.values.outside()[:3]:
            bad.append({self.keys.example(): item})
        return bad

    def example(self) -> dict:
        return {self.keys.example(): self.values.example()}
