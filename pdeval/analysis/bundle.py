"""The objects that analyses return: several tidy frames with one summary table.

:func:`pdeval.agreement`, :func:`pdeval.anova`, :func:`pdeval.discriminative_power`,
:func:`pdeval.swap_rates` and :func:`pdeval.training_sensitivity` return dataclasses holding
several frames. Each shares this mixin: ``to_frame()`` is its summary table (one spelling on
every bundle), ``to_dict()`` every frame by name, and ``repr`` / a notebook cell show the
summary table with the names and sizes of the other frames.
"""

from __future__ import annotations

import dataclasses
import html

import pandas as pd

__all__ = ["ResultBundle"]

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
