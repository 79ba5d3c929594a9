"""The measure domain of the boundary contract (:mod:`pdeval.common.contract`).

``measures=`` takes a measure string, a :class:`~pdeval.measures.Measure`, an ir_measures
measure object or a list of them. :class:`Measures` parses every item at the boundary (an
unknown name fails there, with the closest known names) and hands the function a list, so a
lone string is never read letter by letter.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Iterable
from typing import Any

from pdeval.common.contract import Domain, Refused
from pdeval.measures.registry import Measure, parse

__all__ = ["Measures"]


@dataclass(frozen=True)
class Measures(Domain):
    """A measure or a non-empty list of measures (strings, :class:`Measure` or ir_measures
    objects); ``lone=False`` for a parameter that takes exactly one measure."""

    lone_only: bool = False

    @property
    def text(self) -> str:
        if self.lone_only:
            return "one measure (a string such as 'AP' or a Measure)"
        return "a measure or a non-empty list of measures (strings such as 'AP', 'nDCG@10', or Measure objects)"

    def _item(self, value: Any) -> Any:
        if value is None or isinstance(value, (bool, int, float, bytes)) or hasattr(value, "columns"):
            raise Refused()
        parse(value)  # an unknown name raises its MeasureError, with the closest known names
        return value

    def convert(self, value: Any) -> Any:
        if isinstance(value, (str, Measure)) or not _iterable(value):
            item = self._item(value)
            return item if self.lone_only else [item]
        if self.lone_only:
            raise Refused("give one measure, not a list")
        items = list(value)
        if not items:
            raise Refused("the list is empty")
        return [self._item(item) for item in items]

    def outside(self) -> list:
        bad = ["no-such-measure", None, 1.5, ["AP", 3]]
        return bad + ([["AP"]] if self.lone_only else [[]])

    def example(self) -> Any:
        return "AP" if self.lone_only else ["AP"]


def _iterable(value: Any) -> bool:
    """A list-like of measures: ``__iter__`` of its own (an ir_measures measure has only
    ``__getitem__``, which would make ``iter()`` read it as a sequence)."""
    return isinstance(value, Iterable) and not isinstance(value, (str, bytes, dict))
