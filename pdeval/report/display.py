"""Figures in notebooks: shown once, without a ``<seaborn.axisgrid.FacetGrid ...>`` line.

A figure function returns its :class:`seaborn.FacetGrid` or :class:`matplotlib.figure.Figure`
(to save, or to change further). Left as the last expression of a notebook cell, Jupyter
would print a FacetGrid's text repr under the figure, and draw a returned Figure twice (once
as the cell's value, once when the inline backend flushes the open figures).
:func:`notebook_figure` gives the returned object an ``_ipython_display_`` that draws its
figure once and closes it in pyplot, so the backend does not draw it again. Outside IPython
nothing changes: the object is returned as it is, its type unchanged.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


def _display_once(shown: Any) -> None:
    """IPython's display hook of a returned figure object: draw the figure, once."""
    import matplotlib.pyplot as plt
    from IPython.display import display

    figure = shown.figure if hasattr(shown, "axes_dict") else shown  # a FacetGrid, or a Figure
    hook = figure.__dict__.pop("_ipython_display_", None)  # a Figure: drawn by IPython's own formatters
    try:
        display(figure)
    finally:
        if hook is not None:  # shown again later (the name in another cell): once again
            figure._ipython_display_ = hook
    plt.close(figure)  # drawn: the inline backend must not draw it again at the end of the cell


def notebook_figure(function: F) -> F:
    """Wrap a figure function so that notebooks show only the figure it returns."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        shown = function(*args, **kwargs)
        if hasattr(shown, "savefig"):  # a Figure or a FacetGrid
            shown._ipython_display_ = functools.partial(_display_once, shown)
        return shown

    return call  # type: ignore[return-value]


__all__ = ["notebook_figure"]
