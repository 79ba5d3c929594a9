"""Score matrices: the per-topic values of a result frame as runs x topics arrays.

Every paired analysis (:mod:`pdeval.analysis.significance`, :mod:`pdeval.analysis.bootstrap`,
:mod:`pdeval.analysis.swaps`, :mod:`pdeval.analysis.statistics`) takes a tidy result frame with
per-topic values (key columns ``run``, ``query_id``, optional variant keys such as
``level``/``sample``; ``measure``, ``value``). Each (measure, variant) group is analysed
separately; inside a group every run must have a value for every topic (a *score matrix*
runs x topics, see :func:`score_matrices`). Run pairs are chosen here too
(:func:`pair_indices`, :func:`baseline_pairs`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterator, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.correlation import split_keys
from pdeval.errors import PdevalError, SchemaError
from pdeval.frames.canonical import as_result

__all__ = ["CHUNK_ELEMENTS", "ZERO", "ScoreMatrix", "baseline_pairs", "pair_indices", "score_matrices"]

#: |mean| and sd below this are treated as 0 in studentised statistics (MEASURES.md E10)
ZERO = 1e-12
#: target number of float64 elements of one chunk of a vectorised computation (~32 MB)
CHUNK_ELEMENTS = 4_000_000


@dataclass
class ScoreMatrix:
    """Per-topic values of one (measure, variant) group: ``scores[i, j]`` = run i on topic j."""

    measure: str
    variant: dict
    runs: list
    topics: list
    scores: np.ndarray


def score_matrices(
    result: pd.DataFrame,
    measures: Union[None, str, Sequence[str]] = None,
    *,
    system: str = "run",
) -> Iterator[ScoreMatrix]:
    """Yield the runs x topics score matrix of every (measure, variant) group of ``result``.

    Variant keys are every key column other than ``system`` and ``query_id``. Runs keep
    their order of first appearance (the "input order" of MEASURES.md E9/E10), topics are
    sorted. A duplicated (run, topic) or a missing / NaN cell raises
    :class:`~pdeval.errors.SchemaError` naming the first offending cells: paired methods
    need every run evaluated on every topic (evaluate with ``complete=True``).
    """
    result = as_result(result)
    if "query_id" not in result.columns:
        raise SchemaError("this analysis needs per-topic values: the result frame has no 'query_id' column")
    by_list, _ = split_keys(result, system=system)
    if measures is not None:
        wanted = [measures] if isinstance(measures, str) else list(measures)
        present = set(pd.unique(result["measure"]))
        missing = [m for m in wanted if m not in present]
        if missing:
            raise SchemaError(f"measure(s) {missing} are not in the result; it has {sorted(present, key=str)}")
        result = result[result["measure"].isin(wanted)]
        order = {m: i for i, m in enumerate(wanted)}
    else:
        order = {m: i for i, m in enumerate(pd.unique(result["measure"]))}
    items = list(result.groupby(["measure", *by_list], dropna=False, sort=True, observed=True))
    items.sort(key=lambda kv: order[kv[0][0] if isinstance(kv[0], tuple) else kv[0]])
    for key, part in items:
        key = key if isinstance(key, tuple) else (key,)
        measure, variant = key[0], dict(zip(by_list, key[1:]))
        run_codes, runs = pd.factorize(part[system], sort=False)
        topic_codes, topics = pd.factorize(part["query_id"], sort=True)
        m, n = len(runs), len(topics)
        cell = run_codes.astype(np.int64) * n + topic_codes
        counts = np.bincount(cell, minlength=m * n)
        where = f"measure {measure!r}" + (f", {variant}" if variant else "")
        if (counts > 1).any():
            bad = np.flatnonzero(counts > 1)[:3]
            raise SchemaError(
                f"{where}: {int((counts > 1).sum())} (run, topic) cell(s) have several values, first: "
                + ", ".join(f"({runs[c // n]!r}, {topics[c % n]!r})" for c in bad)
                + ". Is a variant key column missing?"
            )
        scores = np.full(m * n, np.nan)
        scores[cell] = pd.to_numeric(part["value"], errors="coerce").to_numpy(np.float64)
        if np.isnan(scores).any():
            bad = np.flatnonzero(np.isnan(scores))
            raise SchemaError(
                f"{where}: {bad.size} (run, topic) cell(s) are missing or NaN, first: "
                + ", ".join(f"({runs[c // n]!r}, {topics[c % n]!r})" for c in bad[:3])
                + ". Paired analyses need every run on every topic (evaluate with complete=True, "
                "undefined='zero', or drop those runs/topics)."
            )
        yield ScoreMatrix(measure, variant, list(runs), list(topics), scores.reshape(m, n))


def pair_indices(m: int) -> tuple[np.ndarray, np.ndarray]:
    """Unordered pairs (i < j) in input order: (0,1), (0,2), ..., (1,2), ..."""
    return np.triu_indices(m, k=1)


def baseline_pairs(runs: Sequence, baselines: Union[str, Sequence[str]], where: str = "") -> tuple[np.ndarray, np.ndarray]:
    """(run, baseline) index pairs: each baseline in the given order against every run in input
    order, except itself and the baselines before it (a pair of baselines appears once).

    An unknown baseline raises :class:`~pdeval.errors.SchemaError` naming it and the runs.
    """
    wanted = [baselines] if isinstance(baselines, str) else list(baselines)
    if not wanted:
        raise PdevalError("baselines must name at least one run")
    if len(set(wanted)) != len(wanted):
        raise PdevalError(f"baselines repeat a run: {wanted}")
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

