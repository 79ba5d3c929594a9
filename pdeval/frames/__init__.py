"""The canonical frames: run, qrels and result columns, aliases, validation (:mod:`.canonical`),
and the other tools' frames and objects converted at the boundary (:mod:`.foreign`)."""

from pdeval.frames.canonical import *  # noqa: F401,F403
from pdeval.frames.canonical import __all__ as _canonical
from pdeval.frames.foreign import to_frame

__all__ = [*_canonical, "to_frame"]
