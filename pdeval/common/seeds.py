"""The one ``seed`` option of pdeval: an integer, ``None`` or a ``numpy.random.Generator``.

* an integer ``>= 0`` gives the same output on every call and platform;
* ``None`` draws fresh entropy from the operating system (a different output on each call);
* a ``Generator`` is used (and advanced) as it is, so that a caller can chain several draws.

Every random step of pdeval takes its randomness from :func:`generator` or :func:`base_seed`.
"""

from __future__ import annotations

from typing import Union

import numpy as np

from pdeval.common.domains import Instance, Integer, Nullable
from pdeval.common.options import is_int
from pdeval.errors import PdevalError

__all__ = ["SEED", "Seed", "base_seed", "check_seed", "generator"]

Seed = Union[None, int, np.integer, np.random.Generator]

#: the domain of every ``seed=`` option (:mod:`pdeval.common.contract`)
SEED = Nullable(Integer(0) | Instance((np.random.Generator,), "a numpy.random.Generator", np.random.default_rng(0)))


def check_seed(seed: object) -> Seed:
    """``seed`` if numpy would read it as intended; else a :class:`~pdeval.errors.PdevalError`
    before any work is done (a float, a bool, a negative integer)."""
    if seed is None or isinstance(seed, np.random.Generator):
        return seed
    if not is_int(seed) or int(seed) < 0:
        raise PdevalError(f"seed must be a non-negative integer, a numpy Generator or None, not {seed!r}")
    return int(seed)


def generator(seed: Seed) -> np.random.Generator:
    """The random generator of ``seed`` (``np.random.default_rng(seed)``, or the Generator itself)."""
    seed = check_seed(seed)
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def base_seed(seed: Seed) -> int:
    """An integer seed for draws that derive their own generators (``default_rng([seed, s])``):
    the integer itself, one integer drawn from a ``Generator`` (which advances it), or a fresh
    one from the operating system's entropy for ``None``."""
    seed = check_seed(seed)
    if seed is None or isinstance(seed, np.random.Generator):
        return int(generator(seed).integers(0, 2**63 - 1))
    return seed
