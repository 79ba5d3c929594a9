"""Parameter documentation shared by many functions, written once (as seaborn does).

A docstring line that holds only ``{seed}``, ``{progress}``, ``{system}``, ``{depth}`` or
``{score_precision}`` (indented as the
parameter entries around it) becomes that parameter's numpydoc entry when the function is
decorated with :func:`shared_docs`.
"""

from __future__ import annotations

import textwrap
from typing import Callable, TypeVar

F = TypeVar("F", bound=Callable)

#: what ``depth=`` means wherever it is a parameter: the engine's cut (the engine options say it too)
ENGINE_DEPTH = "trec_eval ``-M``: keep the first ``depth`` documents of each ranking."

#: the numpydoc entry of each shared parameter
PARAMETERS = {
    "seed": "seed : int, numpy.random.Generator or None, default 0\n    An integer, None (fresh entropy) or a ``numpy.random.Generator``; one seed, one result.",
    "progress": "progress : bool or None, default None\n    A progress bar: True, False, or None (only for long work on a terminal or notebook).",
    "system": "system : str, default 'run'\n    The column naming the systems.",
    "depth": f"depth : int, optional\n    {ENGINE_DEPTH}",
    "score_precision": "score_precision : {'float64', 'float32'}, default 'float64'\n    As for :func:`pdeval.evaluate`.",
}


def shared_docs(function: F) -> F:
    """Replace the ``{name}`` lines of ``function``'s docstring by the shared entries."""
    lines = []
    for line in (function.__doc__ or "").splitlines():
        token = line.strip()
        if token.startswith("{") and token.endswith("}") and token[1:-1] in PARAMETERS:
            indent = line[: len(line) - len(line.lstrip())]
            lines.append(textwrap.indent(PARAMETERS[token[1:-1]], indent))
        else:
            lines.append(line)
    function.__doc__ = "\n".join(lines)
    return function


__all__ = ["ENGINE_DEPTH", "PARAMETERS", "shared_docs"]
