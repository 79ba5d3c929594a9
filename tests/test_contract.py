"""The boundary contract, generated from the declarations: every public function (and so
every ``df.ir`` method) declares every parameter, and every value outside a declared domain
is refused before any work with a :class:`~pdeval.errors.PdevalError` that names the
parameter.

The cases are not written by hand: :data:`FUNCTIONS` comes from :data:`pdeval.public.API`,
the bad values from each domain's :meth:`~pdeval.common.contract.Domain.outside` (NaN, ±inf,
text where a number goes, a float where an integer goes, values past a bound, empty or wrong
containers, a frame of the wrong kind or with several variants where one is handled), the
good values for the other required parameters from :meth:`~pdeval.common.contract.Domain.example`.
Removing a declaration fails :func:`test_every_parameter_is_declared`.
"""

from __future__ import annotations

import inspect
import math

import pandas as pd
import pytest

import pdeval
from pdeval.common.contract import Anything, Choice, Integer, contract, contract_of
from pdeval.errors import PdevalError
from pdeval.public import API

FUNCTIONS = {name: getattr(pdeval, name) for name in API if inspect.isfunction(getattr(pdeval, name))}
#: the figures (``df.ir.plot.<figure>``) carry their contracts too
FUNCTIONS.update({f"plot.{name}": getattr(pdeval.plotting, name) for name in pdeval.plotting.__all__})
SKIPPED_KINDS = (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD)


def declared_parameters(function) -> list[str]:
    return [p.name for p in inspect.signature(function).parameters.values() if p.kind not in SKIPPED_KINDS]


def undeclared(function) -> list[str]:
    """The parameters of ``function`` that its contract does not declare (all, without one)."""
    spec = contract_of(function)
    names = declared_parameters(function)
    return names if spec is None else [n for n in names if n not in spec.domains]


def required_examples(function) -> dict:
    spec = contract_of(function)
    return {
        p.name: spec.domains[p.name].example()
        for p in inspect.signature(function).parameters.values()
        if p.kind not in SKIPPED_KINDS and p.default is inspect.Parameter.empty
    }


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_parameter_is_declared(name):
    function = FUNCTIONS[name]
    assert contract_of(function) is not None, f"{name} has no contract: decorate it with pdeval.common.contract"
    assert undeclared(function) == [], f"{name} does not declare the domain of {undeclared(function)}"


def test_a_removed_declaration_is_found():
    """The completeness check can fail: a function whose contract leaves one parameter out."""

    @contract(n=Integer(1))
    def f(n: int, k: int = 1):
        return n

    assert undeclared(f) == ["k"]
    assert undeclared(lambda n: n) == ["n"]


CASES = [
    (name, parameter)
    for name, function in sorted(FUNCTIONS.items())
    if contract_of(function) is not None
    for parameter, domain in contract_of(function).domains.items()
    if not isinstance(domain, Anything)
]


def same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    try:
        return bool(a == b) if not isinstance(a, pd.DataFrame) else False
    except (TypeError, ValueError):
        return False


@pytest.mark.parametrize("name, parameter", CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_a_value_outside_the_domain_is_refused_naming_the_parameter(name, parameter):
    function = FUNCTIONS[name]
    domain = contract_of(function).domains[parameter]
    default = inspect.signature(function).parameters[parameter].default
    bad_values = [v for v in domain.outside() if not same(v, default)]
    assert bad_values, f"{name}({parameter}=...): the domain names no value outside it"
    for bad in bad_values:
        arguments = {**required_examples(function), parameter: bad}
        with pytest.raises(PdevalError) as raised:
            function(**arguments)
        message = str(raised.value)
        assert f"{parameter}=" in message or f"{parameter}:" in message or f"'{parameter}'" in message, (
            f"{name}({parameter}={bad!r}) raised {raised.value!r}, which does not name {parameter}"
        )


MODE_CASES = [
    (name, option, mode)
    for name, function in sorted(FUNCTIONS.items())
    if contract_of(function) is not None
    for option, conditions in contract_of(function).modes.items()
    for mode, _ in conditions
]


@pytest.mark.parametrize("name, option, mode", MODE_CASES, ids=[f"{n}-{o}-{m}" for n, o, m in MODE_CASES])
def test_an_option_of_another_mode_is_refused(name, option, mode):
    function = FUNCTIONS[name]
    spec = contract_of(function)
    allowed = dict(spec.modes[option])[mode]
    choices = spec.domains[mode]
    assert isinstance(choices, Choice), f"{name}: the mode {mode} is declared by a Choice"
    others = [v for v in choices.values if v not in allowed]
    default = inspect.signature(function).parameters[option].default
    value = spec.domains[option].example()
    if isinstance(default, bool):
        value = not default  # a flag's other value
    assert not same(value, default)
    for other in others:
        with pytest.raises(PdevalError, match=rf"{option}= applies to {mode}="):
            function(**{**required_examples(function), mode: other, option: value})


@pytest.mark.parametrize("name", sorted(n for n, e in API.items() if e.kinds and n in FUNCTIONS))
def test_the_method_carries_the_contract(name):
    method = getattr(pd.DataFrame().ir, name)
    assert contract_of(method) is contract_of(FUNCTIONS[name])
