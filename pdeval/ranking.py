"""trec_eval's ranking rule, as arrays.

trec_eval orders the documents of one topic by score descending and breaks ties by
document id descending in byte order (``comp_sim_docno``: ``strcmp`` on the bytes); the
``rank`` column of a run file is ignored. For UTF-8 text, byte order is code point order,
which is the order Python and Arrow use to compare strings: doc ids can be replaced by their
positions in sorted order, or by their bytes packed into words (:mod:`pdeval.ids`).

trec_eval up to 9.0.7 (and the git tag ``v9.0.8``, which holds 9.0.7's code) and the
``pytrec-eval-terrier`` wheel keep scores as 32-bit floats; ``score_precision="float32"``
rounds scores to float32 before ordering to reproduce them. The 2023 release 9.0.8 and
trec_eval 10 keep doubles, like the default ``"float64"``.
"""

from __future__ import annotations

from typing import Iterable, Literal, Optional

import numpy as np
import pandas as pd

from .errors import PdevalError
from .ids import byte_order_keys

ScorePrecision = Literal["float64", "float32"]


def scores_for_ordering(score: np.ndarray, score_precision: ScorePrecision = "float64") -> np.ndarray:
    """Scores as trec_eval compares them: float64, or rounded to float32 first."""
    if score_precision == "float64":
        return np.asarray(score, dtype=np.float64)
    if score_precision == "float32":
        return np.asarray(score, dtype=np.float64).astype(np.float32).astype(np.float64)
    raise PdevalError(f"score_precision must be 'float64' or 'float32', not {score_precision!r}")


def trec_order(group: np.ndarray, score: np.ndarray, doc_key: np.ndarray) -> np.ndarray:
    """The permutation that puts rows in trec_eval order within each group.

    Rows are sorted by ``group`` ascending, then ``score`` descending, then doc id
    descending in byte order. ``doc_key`` stands for the doc ids: integers (one per row) or
    rows of words (:func:`pdeval.ids.packed_ids`) whose order is the ids' byte order. Rows
    already in order (a run read from a file in rank order) skip the score sort; otherwise
    scores are sorted once and groups by a stable radix-friendly pass. Only runs of tied
    scores are then re-sorted by doc id.
    """
    group = np.asarray(group)
    n = len(group)
    if n == 0:
        return np.arange(0, dtype=np.int64)
    same_group = group[1:] == group[:-1]
    in_order = bool(np.all(group[1:] >= group[:-1]) and np.all((score[1:] <= score[:-1]) | ~same_group))
    if in_order:
        order = np.arange(n, dtype=np.int64)
        sorted_group, sorted_score = group, score
    else:
        by_score = np.argsort(-score)
        narrow = group.astype(np.int16) if group.max() < np.iinfo(np.int16).max else group
        order = by_score[np.argsort(narrow[by_score], kind="stable")]
        sorted_group, sorted_score = group[order], score[order]
    tied_with_next = (sorted_group[1:] == sorted_group[:-1]) & (sorted_score[1:] == sorted_score[:-1])
    if tied_with_next.any():
        tied = np.zeros(n, dtype=bool)
        tied[:-1] |= tied_with_next
        tied[1:] |= tied_with_next
        positions = np.flatnonzero(tied)
        block = np.cumsum(np.concatenate(([True], ~tied_with_next[positions[:-1]])))
        n_tied = len(positions)
        tied_keys = doc_key[order[positions]].reshape(n_tied, -1)
        # words that all tied rows share (a common id prefix) cannot order them
        varying = [column for column in range(tied_keys.shape[1]) if (tied_keys[:, column] != tied_keys[0, column]).any()]
        tied_keys = tied_keys[:, varying or [0]]
        # each tied row's rank in byte order among all tied rows, then one sort by
        # (block, rank descending); a lexsort over (block, words) is several times slower
        by_doc = np.argsort(tied_keys[:, 0]) if tied_keys.shape[1] == 1 else np.lexsort(tied_keys.T[::-1])
        doc_rank = np.empty(n_tied, dtype=np.int64)
        doc_rank[by_doc] = np.arange(n_tied)
        order[positions] = order[positions[np.argsort(block * n_tied + (n_tied - 1 - doc_rank))]]
    return order


def group_offsets(group: np.ndarray, n_groups: int) -> np.ndarray:
    """Offsets ``o`` (length ``n_groups + 1``) such that, once the rows are sorted by group,
    group ``g`` is ``rows[o[g]:o[g+1]]`` (only the group sizes matter, not the row order)."""
    counts = np.bincount(group, minlength=n_groups)
    offsets = np.zeros(n_groups + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def ranks_within(offsets: np.ndarray) -> np.ndarray:
    """1-based rank of every row inside its group, for rows laid out by ``offsets``."""
    lengths = np.diff(offsets)
    starts = np.repeat(offsets[:-1], lengths)
    return np.arange(offsets[-1], dtype=np.int64) - starts + 1


def rank_run(
    run: pd.DataFrame,
    *,
    by: Iterable[str] = (),
    score_precision: ScorePrecision = "float64",
    depth: Optional[int] = None,
) -> pd.DataFrame:
    """Return the run in trec_eval order with a fresh 1-based ``rank`` column.

    Rows are grouped by ``run``, the ``by`` columns and ``query_id`` (groups in sorted key
    order), ordered within each group by trec_eval's rule, and cut at ``depth`` documents per
    group when given (trec_eval ``-M``). Any ``rank`` column of the input is ignored and
    replaced. The input must be a canonical run frame (:func:`pdeval.frames.as_run`).
    """
    keys = ["run", *by, "query_id"]
    if depth is not None and depth < 1:
        raise PdevalError(f"depth must be a positive integer, not {depth!r}")
    group = run.groupby(keys, sort=True, observed=True).ngroup().to_numpy(dtype=np.int64)
    score = scores_for_ordering(run["score"].to_numpy(), score_precision)
    order = trec_order(group, score, byte_order_keys(run["doc_id"]))
    n_groups = int(group.max()) + 1 if len(group) else 0
    offsets = group_offsets(group, n_groups)
    rank = ranks_within(offsets)
    ranked = run.iloc[order].reset_index(drop=True).assign(rank=rank)
    if depth is not None:
        ranked = ranked.loc[rank <= depth].reset_index(drop=True)
    return ranked
