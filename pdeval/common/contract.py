"""The boundary contract: every public function declares its parameters once, beside its signature.

A public function is decorated with :func:`contract`, which names the *domain* of every
parameter — a number in a range, an integer, one of a set of words, a list of these, a frame
of a kind — and, for a function that switches on a mode (``method=``), which options belong
to which mode. One mechanism checks every call before any work is done and raises a
:class:`~pdeval.errors.PdevalError` in one format::

    judging_order(): rrf_k=nan is not a finite number > 0 (RRF's constant, e.g. 60).

— the function, the parameter, the value given, the domain and the remedy. Values that pass
are handed on normalised (a numpy integer as ``int``, a lone item of a list as a list), so
the code behind the boundary sees one type per parameter.

Each domain also knows values *outside* itself (:meth:`Domain.outside`) and one value inside
(:meth:`Domain.example`): the generated contract test walks every declaration of every public
function with them, and a public function without a complete declaration fails that test.
The design follows scikit-learn's ``validate_params`` (declared constraints, one checker, one
message format).
"""

from __future__ import annotations

import difflib
import functools
import inspect
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from pdeval.common.domains import (  # noqa: F401  (the domains are declared through this module)
    ALIEN, Anything, Boolean, Callable_, Choice, Domain, FilePath, Instance, Integer, ListOf, MappingOf, Nullable, OneOf, Real,
    Refused, Text, same,
)
from pdeval.errors import PdevalError

__all__ = [
    "ALIEN", "Anything", "Boolean", "Callable_", "Choice", "Contract", "Domain", "FilePath", "Instance", "Integer", "ListOf",
    "MappingOf", "Nullable", "OneOf", "Real", "Refused", "Text", "contract", "contract_of", "fail",
]

#: a condition of an option: (the mode parameter, the values of it the option applies to)
Mode = tuple[str, Sequence[Any]]

def fail(where: str, name: str, value: Any, domain: str, remedy: str = "") -> PdevalError:
    """The one message of the boundary: function, parameter, value given, domain, remedy."""
    shown = _show(value)
    text = f"{where}(): {name}={shown} is not {domain}"
    return PdevalError(text + (f" ({remedy})." if remedy else "."))


def _show(value: Any) -> str:
    if hasattr(value, "shape") and hasattr(value, "columns"):
        return f"<{type(value).__name__} with columns {list(value.columns)[:8]}>"
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


@dataclass
class Contract:
    """The declaration of one public function: the domain of each parameter, the remedies,
    the options that apply to one mode only, and the parameters checked elsewhere."""

    function: str
    domains: dict
    remedies: dict
    modes: dict  # option -> the (mode parameter, modes it applies to) conditions, all of which must hold
    signature: inspect.Signature

    def check(self, arguments: dict) -> dict:
        """``arguments`` (the bound, given ones) checked and normalised; a
        :class:`~pdeval.errors.PdevalError` for the first value outside its domain."""
        out = dict(arguments)
        for name, value in arguments.items():
            domain = self.domains.get(name)
            if domain is None:
                continue
            try:
                out[name] = domain.convert(value)
            except Refused as refused:
                what = domain.text + (f": {refused.reason}" if refused.reason else "")
                error = fail(self.function, name, value, what, self.remedies.get(name, ""))
                raise refused.error(str(error)) from None
            except PdevalError as exc:  # a domain that knows a more precise error (a frame's columns)
                exc.args = (f"{self.function}(): {name}: {exc.args[0] if exc.args else ''}", *exc.args[1:])
                raise
        for name, conditions in self.modes.items():
            if name not in arguments:
                continue
            default = self.signature.parameters[name].default
            if arguments[name] is default or same(arguments[name], default):
                continue
            for mode, allowed in conditions:
                current = out.get(mode, self.signature.parameters[mode].default)
                if current not in allowed:
                    shown = " or ".join(f"{mode}={a!r}" for a in allowed)
                    raise PdevalError(
                        f"{self.function}(): {name}= applies to {shown} only, not {mode}={current!r} "
                        f"(leave {name} out, or choose {shown})."
                    )
        return out


def contract(
    domains: Optional[Mapping[str, Domain]] = None,
    *,
    remedies: Optional[Mapping[str, str]] = None,
    modes: Optional[Mapping[str, Union[Mode, Sequence[Mode]]]] = None,
    renamed: Optional[Mapping[str, str]] = None,
    removed: Optional[Mapping[str, str]] = None,
    **more: Domain,
) -> Callable:
    """Declare the domain of every parameter of a public function and check each call.

    Parameters
    ----------
    domains, **more
        Parameter name -> :class:`Domain` (``more`` for names that are valid keywords).
    remedies
        Parameter name -> what to do instead, shown after the domain in the error.
    modes
        Option -> (the mode parameter, the modes it applies to), or a list of such conditions
        that must all hold: an option given with a value other than its default under another
        mode is refused (``estimate``'s ``strata=`` is for ``method='ppi'`` only, its
        ``window=`` for ``method='bootstrap'`` with ``prior='run'`` or ``'both'``).
    renamed
        Old keyword -> its new name: a call with the old keyword fails naming the new one
        (with the new parameter's remedy), however far apart the two names are spelt.
    removed
        Old keyword -> what to do instead: a call with a keyword that is gone fails saying so.

    The decorated function keeps its name, docstring and signature (that of the function it
    wraps, engine options included); ``contract_of(f)`` returns its :class:`Contract`.
    Engine options declared by :func:`pdeval.engine.options.takes_engine_options` are part of
    the contract through :data:`ENGINE_DOMAINS` registered there.
    """
    declared = dict(domains or {}, **more)

    def decorate(function: Callable) -> Callable:
        signature = inspect.signature(function)
        names = set(signature.parameters)
        all_domains = dict(getattr(function, "__option_domains__", {}))
        all_domains.update(declared)
        unknown = sorted(set(all_domains) - names)
        if unknown:
            raise TypeError(f"contract of {function.__name__} declares unknown parameters {unknown}")
        conditions = {name: ((given,) if isinstance(given[0], str) else tuple(given))
                      for name, given in (modes or {}).items()}
        for name, (mode, _) in ((n, c) for n, cs in conditions.items() for c in cs):
            if name not in names or mode not in names:
                raise TypeError(f"contract of {function.__name__}: mode {mode}/{name} is not a parameter")
        spec = Contract(function.__name__, all_domains, dict(remedies or {}), conditions, signature)

        @functools.wraps(function)
        def checked(*args, **kwargs):
            old = next((name for name in kwargs if name in (renamed or {}) and name not in names), None)
            if old is not None:
                new = renamed[old]
                note = (remedies or {}).get(new, "")
                raise PdevalError(f"{function.__name__}(): the parameter {old!r} is now called {new!r}"
                                  + (f" ({note})." if note else "."))
            gone = next((name for name in kwargs if name in (removed or {}) and name not in names), None)
            if gone is not None:
                raise PdevalError(f"{function.__name__}(): the parameter {gone!r} is gone: {removed[gone]}.")
            try:
                bound = signature.bind(*args, **kwargs)
            except TypeError as exc:
                raise PdevalError(f"{function.__name__}(): {_unbound(exc, signature, kwargs)}") from None
            arguments = spec.check(bound.arguments)
            bound.arguments.update(arguments)
            return function(*bound.args, **bound.kwargs)

        checked.__contract__ = spec
        checked.__signature__ = signature
        return checked

    return decorate


def _unbound(exc: TypeError, signature: inspect.Signature, kwargs: Mapping[str, Any]) -> str:
    """Python's binding error, with the closest parameter named for an unknown keyword."""
    unknown = [name for name in kwargs if name not in signature.parameters]
    if not unknown:
        keyword = [p.name for p in signature.parameters.values() if p.kind is inspect.Parameter.KEYWORD_ONLY]
        if "positional" in str(exc) and keyword:
            return f"{exc}; {', '.join(keyword[:4])}{', ...' if len(keyword) > 4 else ''} are given by keyword ({keyword[0]}=...)"
        return str(exc)
    close = difflib.get_close_matches(unknown[0], list(signature.parameters), n=1)
    hint = f"did you mean {close[0]!r}?" if close else f"the parameters are {list(signature.parameters)}"
    return f"unknown parameter {unknown[0]!r}; {hint}"


def contract_of(function: Callable) -> Optional[Contract]:
    """The :class:`Contract` of a public function (or its ``df.ir`` method), or ``None``."""
    return getattr(function, "__contract__", None)
