"""The domains of the parameters the judgment functions share (:mod:`pdeval.common.contract`):
one declaration of ``seed``, ``progress``, ``pooled``, ``removed_as`` and the pool depths."""

from __future__ import annotations

import numpy as np

from pdeval.common.contract import Boolean, Choice, Instance, Integer, ListOf, Nullable, Text

__all__ = ["POOLED", "POOL_DEPTH", "POOL_DEPTHS", "PROGRESS", "REMOVED_AS", "SEED"]

#: ``seed=``: a non-negative integer, ``None`` (fresh entropy) or a ``numpy.random.Generator``
SEED = Nullable(Integer(0) | Instance((np.random.Generator,), "a numpy Generator", np.random.default_rng(0)))
#: ``progress=``: a bar for long work (``None``), always (``True``) or never (``False``)
PROGRESS = Nullable(Boolean())
#: ``pooled=``: the runs that built the pool (default every run)
POOLED = Nullable(ListOf(Text("a run name"), unique=True))
#: ``removed_as=``: how a judgment outside a derived qrels appears (-1, or absent)
REMOVED_AS = Choice("pooled", "absent")
#: ``pool_depth=``: one pool depth
POOL_DEPTH = Integer(1)
#: ``pool_depths=``: a grid of pool depths (one depth stands for a list of one)
POOL_DEPTHS = ListOf(Integer(1), unique=True)
