"""Score matrices: the per-topic values of a result frame as runs x topics arrays.

Every paired analysis (:mod:`pdeval.analysis.statistics.significance`, :mod:`pdeval.analysis.statistics.bootstrap`,
:mod:`pdeval.analysis.statistics.swaps`, :mod:`pdeval.analysis.statistics`) takes a tidy result frame with
per-topic values (key columns ``run``, ``query_id``, optional variant keys such as
``level``/``sample``; ``measure``, ``value``). Each (measure, variant) group is analysed
separately; inside a group every run must have a value for every topic (a *score matrix*
runs x topics, see :func:`score_matrices`). Run pairs are chosen here too
(:func:`pair_indices`, :func:`baseline_pairs`).
"""

from __future__ import annotations

from typing import Sequence, Union

import numpy as np

from pdeval.common.contract import ListOf, Nullable, Text
from pdeval.evaluation.results import ScoreMatrix, score_matrices  # noqa: F401  (the toolkit's; re-exported)
from pdeval.errors import SchemaError

__all__ = ["BASELINE", "CHUNK_ELEMENTS", "RESULT_MEASURES", "ZERO", "ScoreMatrix", "baseline_pairs", "pair_indices",
           "score_matrices"]

#: the domain of ``measures=`` of the analyses of a result frame: names of its ``measure`` column
RESULT_MEASURES = Nullable(ListOf(Text("a measure name of the result frame"), unique=True))
#: the domain of ``baseline=``: a run name or a list of them
BASELINE = Nullable(ListOf(Text("a run name"), unique=True))

#: |mean| and sd below this are treated as 0 in studentised statistics (MEASURES.md E10)
ZERO = 1e-12
#: target number of float64 elements of one chunk of a vectorised computation (~32 MB)
CHUNK_ELEMENTS = 4_000_000


def pair_indices(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Unordered pairs (i < j) in input order: (0,1), (0,2), ..., (1,2), ..."""
    return np.triu_indices(m, k=1)


def baseline_pairs(runs: Sequence, baselines: Union[str, Sequence[str]], where: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(run, baseline) index pairs: each baseline in the given order against every run in input
    order, except itself and the baselines before it (a pair of baselines appears once).

    An unknown baseline raises :class:`~pdeval.errors.SchemaError` naming it and the runs.
    """
    wanted = [baselines] if isinstance(baselines, str) else list(baselines)  # non-empty, no repeats (contract)
    index = {r: k for k, r in enumerate(runs)}
    missing = [b for b in wanted if b not in index]
    if missing:
        named = ", ".join(repr(b) for b in missing)
        raise SchemaError(f"baseline {named} is not a run of {where or 'the result'}; runs: {list(runs)[:10]}")
    positions = np.array([index[b] for b in wanted], dtype=np.int64)
    m = len(runs)
    # keep[k, i]: run i is compared with baseline k unless it is baseline k or an earlier one
    keep = np.ones((positions.size, m), dtype=bool)
    earlier = np.tril(np.ones((positions.size, positions.size), dtype=bool))
    keep[:, positions] = ~earlier  # earlier[k, l]: baseline l is k or comes before it
    kk, ii = np.nonzero(keep)
    return ii, positions[kk]

