"""Checks of option values at the boundary: each raises a :class:`~pdeval.errors.PdevalError`
that names the option, the value given and what it takes."""

from __future__ import annotations

import numbers
from typing import Sequence

from pdeval.errors import PdevalError

__all__ = ["is_int", "check_int", "check_choice", "check_share"]


def is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def check_int(name: str, value: object, minimum: int) -> int:
    if not is_int(value) or int(value) < minimum:
        raise PdevalError(f"{name} must be an integer >= {minimum}, not {value!r}")
    return int(value)


def check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise PdevalError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, not {value!r}")


def check_share(name: str, value: object) -> float:
    """``value`` as a float if it is a number strictly between 0 and 1 (a level, a confidence)."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool) or not 0 < value < 1:
        raise PdevalError(f"{name} must be a number in (0, 1), not {value!r}")
    return float(value)
