"""Measures: the registry and the kernels of every measure family.

Importing this package registers every measure; :func:`parse` reads measure strings and
:func:`available` lists what is registered.
"""

from .registry import REGISTRY, Measure, MeasureSpec, available, parse, parse_all, register
from . import classic  # noqa: F401  (registers the trec_eval measures)

__all__ = ["REGISTRY", "Measure", "MeasureSpec", "available", "parse", "parse_all", "register"]
