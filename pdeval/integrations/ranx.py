"""ranx ``Run`` / ``Qrels`` objects and pdeval frames, exactly both ways.

:func:`from_ranx` keeps every id, score (float64), relevance and the run's name;
:func:`to_ranx` builds ``ranx.Run`` objects named after the frame's ``run`` column and a
``ranx.Qrels`` from a qrels frame. ``from_ranx(to_ranx(frame))`` is ``frame`` up to row order.
"""

from __future__ import annotations

from typing import Any, Union

import pandas as pd

from pdeval.common.contract import contract
from pdeval.errors import SchemaError
from pdeval.frames.domains import Frame
from pdeval.frames.foreign import from_ranx


def _nested(frame: pd.DataFrame, value: str) -> dict:
    nested: dict = {}
    for query, doc, v in zip(frame["query_id"].tolist(), frame["doc_id"].tolist(), frame[value].tolist()):
        nested.setdefault(query, {})[doc] = v
    return nested


@contract(frame=Frame("run", "qrels", foreign=True))
def to_ranx(frame: Any) -> Union["ranx.Run", "ranx.Qrels", dict]:  # noqa: F821
    """A run frame as a ranx ``Run`` named after its ``run`` column (a dict ``{name: Run}``
    when it holds several runs), or a qrels frame as a ranx ``Qrels``.

    The frame may be anything pdeval reads (pandas, Polars, Arrow, records). A qrels frame
    with variant keys (``level``, ``sample``) is refused: select one variant first, and so
    is an empty frame (:class:`~pdeval.errors.SchemaError`, as :func:`pdeval.evaluate` gives).

    Parameters
    ----------
    frame : DataFrame or any frame pdeval reads
        A run or qrels frame.

    Returns
    -------
    ranx.Run, dict of ranx.Run, or ranx.Qrels
        The run (one run), the runs by name (several) or the qrels.

    See Also
    --------
    from_ranx : The way back.
    evaluate : pdeval's own evaluation of the same frames.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": ["1", "1"], "doc_id": ["d1", "d2"], "relevance": [1, 0]})
    >>> dict(pdeval.to_ranx(qrels).to_dict())
    {'1': {'d1': 1, 'd2': 0}}
    """
    import ranx

    from pdeval.frames import canonical as frames
    from pdeval.frames.foreign import to_frame

    frame = frames.canonicalize(to_frame(frame))
    kind = frames.frame_kind(frame)
    if kind in ("run", "qrels"):  # an empty ranx object would evaluate to nothing, silently
        frames.require_rows(frame, kind)
    if kind == "run":
        frame = frames.as_run(frame)
        runs = {
            str(name): ranx.Run(_nested(part, "score"), name=str(name))
            for name, part in frame.groupby("run", sort=False, observed=True)
        }
        return next(iter(runs.values())) if len(runs) == 1 else runs
    if kind == "qrels":
        frame = frames.as_qrels(frame)
        keys = frames.variant_keys(frame)
        if keys:
            raise SchemaError(f"the qrels frame has variant key column(s) {keys}; ranx Qrels hold one variant, select one first")
        return ranx.Qrels(_nested(frame, "relevance"))
    raise SchemaError(f"to_ranx takes a run or qrels frame; this one has columns {list(frame.columns)}")


__all__ = ["from_ranx", "to_ranx"]
