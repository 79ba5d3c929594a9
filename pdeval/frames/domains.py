"""The frame domains of the boundary contract (:mod:`pdeval.common.contract`).

:class:`Frame` declares what a public function requires of a frame parameter: its kind (a run,
qrels or result frame, by the canonical columns after aliases) and whether it handles variant
keys (``level``, ``sample``, ``depth``, ``label_set``, ``strategy``, ``budget`` and, in a result
frame, any key column besides ``run`` and ``query_id``). A function that evaluates every
variant (as :func:`pdeval.evaluate` does) declares ``variants=True``; one that computes a
single answer declares ``variants=False`` and is given a frame of one variant, never silently
the first of several.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import pandas as pd

from pdeval.common.contract import ALIEN, Choice, Domain, FilePath, Refused
from pdeval.frames.foreign import is_foreign
from pdeval.frames.canonical import (
    INTERVAL_COLUMNS,
    PRODUCED_VARIANTS,
    QRELS_REQUIRED,
    RESULT_REQUIRED,
    RUN_REQUIRED,
    canonical_names,
    require_kind,
)
from pdeval.errors import SchemaError

__all__ = ["DUPLICATES", "Frame", "KINDS", "Source", "frame_variants"]

#: the policy for a repeated key (``duplicates=``)
DUPLICATES = Choice("error", "first", "max", renamed={"raise": "error"})

#: kind -> the canonical columns it requires
KINDS = {"run": RUN_REQUIRED, "qrels": QRELS_REQUIRED, "result": RESULT_REQUIRED}

#: result columns that are never variant keys (what varies inside one evaluation)
_RESULT_PLAIN = ("run", "query_id", "measure", "value", *INTERVAL_COLUMNS)


def _columns(frame: pd.DataFrame) -> list:
    rename, drop = canonical_names(frame.columns)
    return [rename.get(c, c) for c in frame.columns if c not in drop]


def frame_variants(frame: pd.DataFrame, kind: str, extra: Sequence[str] = ()) -> dict[str, int]:
    """The variant key columns of ``frame`` (of ``kind``) that hold more than one value, with
    their number of distinct values."""
    names = dict(zip(frame.columns, _columns(frame)))
    if kind == "result":
        keys = [c for c in frame.columns if names[c] not in _RESULT_PLAIN and names[c] not in extra]
    else:
        keys = [c for c in frame.columns if names[c] in PRODUCED_VARIANTS or names[c] in extra]
    found = {}
    for column in keys:
        count = frame[column].nunique(dropna=False)
        if count > 1:
            found[str(names[column])] = int(count)
    return found


@dataclass(frozen=True)
class Frame(Domain):
    """A frame of ``kinds`` (``'run'``, ``'qrels'``, ``'result'``; ``'any'`` for any frame).

    Parameters
    ----------
    kinds
        The kind or kinds accepted.
    variants
        Whether the function handles several variants (one result per variant). With
        ``False`` a frame whose variant keys hold several values is refused, naming them.
    foreign
        Whether Polars and Arrow frames, ranx objects and record iterables are accepted (they
        are converted by the function, :func:`pdeval.frames.foreign.to_frame`).
    allowed
        Columns of a result frame that are not variant keys for this function (``label_set``
        for a function that compares label sets).
    """

    kinds: tuple = ("run",)
    variants: bool = True
    foreign: bool = False
    allowed: tuple = ()

    def __init__(self, *kinds: str, variants: bool = True, foreign: bool = False, allowed: Sequence[str] = ()):
        object.__setattr__(self, "kinds", tuple(kinds) or ("run",))
        object.__setattr__(self, "variants", variants)
        object.__setattr__(self, "foreign", foreign)
        object.__setattr__(self, "allowed", tuple(allowed))

    @property
    def text(self) -> str:
        if self.kinds == ("any",):
            return "a DataFrame"
        kinds = " or ".join(f"a {k} frame (columns {list(KINDS[k])})" for k in self.kinds)
        return kinds + ("" if self.variants else " of one variant")

    def convert(self, value: Any) -> Any:
        if not isinstance(value, pd.DataFrame):
            if self.foreign and is_foreign(value):
                return value  # converted (or refused) by pdeval.frames.foreign.to_frame
            raise Refused(f"it is a {type(value).__name__}", SchemaError)
        if self.kinds == ("any",):
            return value
        columns = set(_columns(value))
        kind = next((k for k in self.kinds if set(KINDS[k]) <= columns), None)
        if kind is None and len(self.kinds) == 1:
            require_kind(value, self.kinds[0])  # the precise SchemaError: which columns, which mix-up
        if kind is None:
            raise Refused(f"it has columns {list(value.columns)[:12]}", SchemaError)
        if not self.variants:
            several = frame_variants(value, kind, self.allowed)
            if several:
                shown = ", ".join(f"{c} ({n} values)" for c, n in several.items())
                raise Refused(
                    error=SchemaError, reason=f"it holds several variants in {shown}; select one (e.g. frame[frame[{next(iter(several))!r}] == "
                    f"...]) or group by the variant columns and call once per group"
                )
        return value

    def example(self) -> pd.DataFrame:
        kind = "run" if self.kinds == ("any",) else self.kinds[0]
        return _EXAMPLES[kind]()

    def outside(self) -> list:
        bad: list = [ALIEN, None, "frame.tsv"]
        if self.kinds != ("any",):
            bad.append(pd.DataFrame({"x": [1]}))
        if not self.variants and self.kinds != ("any",):
            frame = self.example()
            bad.append(pd.concat([frame.assign(level=10), frame.assign(level=50)], ignore_index=True))
        return bad


@dataclass(frozen=True)
class Source(Domain):
    """What a reader reads: a path (a file, a folder or a glob pattern), a non-empty list of
    paths, or a frame (pandas, Polars, Arrow), a ranx object or records (converted by
    :func:`pdeval.frames.foreign.to_frame`)."""

    text = "a path (a file, a folder or a glob pattern), a non-empty list of paths, a frame, a ranx object or records"

    def convert(self, value: Any) -> Any:
        if FilePath().accepts(value) or isinstance(value, pd.DataFrame):
            return value
        if isinstance(value, (list, tuple)) and not value:
            raise Refused("the list is empty")
        if is_foreign(value):  # a list of paths, or of records
            return value
        raise Refused()

    def outside(self) -> list:
        return [ALIEN, None, "", 1, []]

    def example(self) -> str:
        return "run.txt"


def _run() -> pd.DataFrame:
    return pd.DataFrame({"run": ["a", "a", "b", "b"], "query_id": ["1", "1", "1", "1"],
                         "doc_id": ["d1", "d2", "d1", "d2"], "score": [2.0, 1.0, 1.0, 2.0]})


def _qrels() -> pd.DataFrame:
    return pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})


def _result() -> pd.DataFrame:
    return pd.DataFrame({"run": ["a", "a", "b", "b"], "query_id": ["1", "2", "1", "2"],
                         "measure": ["AP"] * 4, "value": [0.5, 0.25, 0.75, 0.5]})


_EXAMPLES = {"run": _run, "qrels": _qrels, "result": _result}

