"""The objects that analyses return: several tidy frames with one summary table.

:func:`pdeval.agreement`, :func:`pdeval.anova`, :func:`pdeval.discriminative_power`,
:func:`pdeval.swap_rates` and :func:`pdeval.training_sensitivity` return dataclasses holding
several frames. Each shares this mixin: ``to_frame()`` is its summary table (one spelling on
every bundle), ``to_dict()`` every frame by name, and ``repr`` / a notebook cell show the
summary table with the names and sizes of the other frames.

The public functions return the summary table itself, a :class:`ResultFrame`: a DataFrame in
every respect (``sort_values``, ``frame["power"]``, ``pd.concat`` give plain frames) whose
other frames and methods stay reachable as attributes (``power.pairs``,
``sensitivity.sign_tests(levels=...)``) and whose whole result object is ``.bundle``.
"""

from __future__ import annotations

import dataclasses
import html

import pandas as pd

__all__ = ["ResultBundle", "ResultFrame"]

#: rows and columns of the summary table shown by ``repr`` and in a notebook
SHOWN_ROWS = 12
SHOWN_COLUMNS = 12


class ResultBundle:
    """Mixin of the result dataclasses (declare them with ``@dataclass(repr=False)``).

    A subclass names the field of its summary table in ``_summary`` or overrides
    :meth:`to_frame`.
    """

    _summary = "summary"

    def to_frame(self) -> pd.DataFrame:
        """The summary table of the result (what a notebook cell shows)."""
        return getattr(self, self._summary)

    def to_dict(self) -> dict:
        """Every frame of the result by name (fields that are not frames are left out)."""
        return {
            field.name: getattr(self, field.name)
            for field in dataclasses.fields(self)
            if isinstance(getattr(self, field.name), pd.DataFrame)
        }

    def _own_table(self) -> bool:
        """True when the summary table is one of the fields (not computed by ``to_frame``)."""
        return type(self).to_frame is ResultBundle.to_frame

    def _title(self) -> str:
        own = self._own_table()
        label = self._summary if own else "summary table"
        others = [f"{name} ({len(frame)} rows)" for name, frame in self.to_dict().items()
                  if not (own and name == self._summary)]
        return (
            f"{type(self).__name__}: {label} ({len(self.to_frame())} rows, .to_frame())"
            + (f"; also {', '.join(others)}" if others else "")
        )

    def __repr__(self) -> str:
        table = self.to_frame().to_string(max_rows=SHOWN_ROWS, max_cols=SHOWN_COLUMNS)
        return f"{self._title()}\n{table}"

    def _repr_html_(self) -> str:
        table = self.to_frame().to_html(max_rows=SHOWN_ROWS, max_cols=SHOWN_COLUMNS)
        return f"<p><b>{html.escape(type(self).__name__)}</b>{html.escape(self._title()[len(type(self).__name__):])}</p>{table}"


class ResultFrame(pd.DataFrame):
    """The summary table of a :class:`ResultBundle` as a DataFrame, with the bundle's other
    frames and methods as attributes (``.pairs``, ``.bins``, ``.sign_tests()``) and the bundle
    itself as ``.bundle``. Every frame derived from it (sorted, indexed, concatenated) is a
    plain :class:`pandas.DataFrame`."""

    _metadata = ["bundle"]

    @property
    def _constructor(self):
        return pd.DataFrame

    @classmethod
    def of(cls, bundle: ResultBundle) -> "ResultFrame":
        """The summary table of ``bundle``, carrying ``bundle``."""
        frame = cls(bundle.to_frame())
        frame.bundle = bundle
        return frame

    def __getattr__(self, name: str):
        bundle = self.__dict__.get("bundle")
        if not name.startswith("_") and bundle is not None and hasattr(bundle, name):
            return getattr(bundle, name)
        return super().__getattr__(name)

    def to_frame(self) -> pd.DataFrame:
        """The summary table as a plain DataFrame."""
        return pd.DataFrame(self)

    def views(self) -> dict:
        """Every frame of the result by name (the bundle's ``to_dict()``)."""
        return self.bundle.to_dict()
