"""Checks of option values at the boundary: each raises a :class:`~pdeval.errors.PdevalError`
that names the option, the value given and what it takes."""

from __future__ import annotations

import numbers
from typing import Sequence

from pdeval.errors import PdevalError

__all__ = ["is_int", "check_int", "check_choice"]


def is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: object, minimum: int) -> int:
    if not is_int(value) or int(value) < minimum:
        raise PdevalError(f"{name} must be an integer >= {minimum}, not {value!r}")
    return int(value)


def check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise PdevalError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, not {value!r}")
