"""Seeded random orders, shared by judgment reduction, pooling and sampling designs.

A draw gives every document one uniform random integer key; ranking the keys within a group
(a topic, a stratum) is a random order of the group's documents. Nothing loops over groups:
group codes and keys are packed into one int64 and sorted once (:func:`ranks_by_key`).
"""

from __future__ import annotations

import numpy as np

from pdeval.engine.ranking import group_offsets, ranks_within

__all__ = ["key_bits", "random_keys", "ranks_by_key"]


def key_bits(n_groups: int) -> int:
    """Bits left for a random key once a group code below ``n_groups`` sits above it in an int64."""
    return 62 - max(1, int(n_groups).bit_length())


def random_keys(rng: np.random.Generator, n: int, bits: int) -> np.ndarray:
    """``n`` uniform random integers in ``[0, 2**bits)``, one per document (the random order)."""
    return rng.integers(0, 1 << bits, size=n, dtype=np.int64)


def ranks_by_key(group: np.ndarray, keys: np.ndarray, bits: int) -> np.ndarray:
    """0-based rank of every element by ``keys`` ascending within its ``group``.

    ``group`` and ``keys`` are packed into one int64 (``group << bits | key``) and sorted once
    with a stable sort, several times faster than a two-key ``lexsort``. Equal keys (probability
    about n^2 / 2^bits, bits >= 40 for up to half a million topics) keep the input order (sorted
    doc id), so the result is deterministic.
    """
    order = np.argsort((group << bits) | keys, kind="stable")
    n_groups = int(group.max()) + 1 if len(group) else 0
    sorted_rank = ranks_within(group_offsets(group, n_groups)) - 1
    rank = np.empty(len(group), dtype=np.int64)
    rank[order] = sorted_rank
    return rank
