"""trec_eval's ranking rule, as arrays.

trec_eval orders the documents of one topic by score descending and breaks ties by
document id descending in byte order (``comp_sim_docno``: ``strcmp`` on the bytes); the
``rank`` column of a run file is ignored. For UTF-8 text, byte order is code point order,
which is the order Python and Arrow use to compare strings: doc ids can be replaced by their
positions in sorted order, or by their bytes packed into words (:mod:`pdeval.engine.ids`).

trec_eval up to 9.0.7 (and the git tag ``v9.0.8``, which holds 9.0.7's code) and the
``pytrec-eval-terrier`` wheel keep scores as 32-bit floats; ``score_precision="float32"``
rounds scores to float32 before ordering to reproduce them. The 2023 release 9.0.8 and
trec_eval 10 keep doubles, like the default ``"float64"``.
"""

from __future__ import annotations

from typing import Iterable, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.docs import shared_docs
from pdeval.common.contract import Choice, Integer, ListOf, Nullable, Text, contract
from pdeval.errors import PdevalError
from pdeval.frames.domains import Frame
from pdeval.engine.ids import byte_order_keys

ScorePrecision = Literal["float64", "float32"]
#: how documents with equal scores are ordered (the engine option ``ties``)
TieOrder = Literal["trec", "expected", "optimistic", "pessimistic"]


def scores_for_ordering(score: np.ndarray, score_precision: ScorePrecision = "float64") -> np.ndarray:
    """Scores as trec_eval compares them: float64, or rounded to float32 first."""
    if score_precision == "float64":
        return np.asarray(score, dtype=np.float64)
    if score_precision == "float32":
        return np.asarray(score, dtype=np.float64).astype(np.float32).astype(np.float64)
    raise PdevalError(f"score_precision must be 'float64' or 'float32', not {score_precision!r}")


#: cells of one matrix of segments: bounds the memory of the per-segment sorts
_MATRIX_CELLS = 1 << 20


def _width_classes(lengths: np.ndarray):
    """Segments of two or more rows grouped into matrices: ``(segments, width)``.

    With few distinct lengths (run files cut every list at the same depth) each length is
    its own matrix, without padding; otherwise segments are grouped by the power of two
    that holds them (at most 2x padding). Matrices hold about :data:`_MATRIX_CELLS` cells.
    """
    long = np.flatnonzero(lengths > 1)
    if not len(long):
        return
    counts = np.bincount(lengths[long])
    distinct = np.flatnonzero(counts)
    if len(distinct) <= 16:
        classes, widths = lengths[long], distinct
    else:
        classes = np.ceil(np.log2(lengths[long])).astype(np.int64)
        widths = np.flatnonzero(np.bincount(classes))
    for width in widths:
        segments = long[classes == width]
        width = int(width) if len(distinct) <= 16 else 1 << int(width)
        step = max(1, _MATRIX_CELLS // width)  # matrices of at most about a million cells
        for start in range(0, len(segments), step):
            yield segments[start : start + step], width


def _padded(starts: np.ndarray, lengths: np.ndarray, width: int) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Row positions of segments laid out as a ``(segments, width)`` matrix, and which are real
    (None: all are). Padding comes at the end of each row; its positions point at row 0."""
    columns = np.arange(width)
    if bool((lengths == width).all()):
        if len(starts) > 1 and bool((np.diff(starts) == width).all()):  # consecutive segments
            return (starts[0] + np.arange(len(starts) * width)).reshape(len(starts), width), None
        return starts[:, None] + columns, None
    valid = columns < lengths[:, None]
    return np.where(valid, starts[:, None] + columns, 0), valid


def _pad_value(values: np.ndarray):
    return np.inf if values.dtype.kind == "f" else np.iinfo(values.dtype).max


def _matrix(key: np.ndarray, positions: np.ndarray, valid: Optional[np.ndarray]) -> np.ndarray:
    """``key`` at ``positions``; padding holds the key's largest value (sorted last)."""
    if valid is None:
        first = int(positions[0, 0])
        if positions[-1, -1] - first == positions.size - 1:  # consecutive rows: a view
            return key[first : first + positions.size].reshape(positions.shape)
        return key[positions]
    return np.where(valid, key[positions], _pad_value(key))


def sort_within(offsets: np.ndarray, keys: Sequence[np.ndarray]) -> np.ndarray:
    """The permutation that sorts each segment ``offsets[i]:offsets[i+1]`` by ``keys``.

    ``keys`` follow :func:`numpy.lexsort`: the last key is the primary one; ties keep their
    order (stable). Segments are sorted as the rows of matrices (:func:`_width_classes`):
    sorting many short rows stays in cache and is several times faster than one sort of
    all rows, and rows never cross segments.
    """
    offsets = np.asarray(offsets, dtype=np.int64)
    permutation = np.arange(offsets[-1] if len(offsets) else 0, dtype=np.int64)
    lengths = np.diff(offsets)
    for segments, width in _width_classes(lengths):
        positions, valid = _padded(offsets[segments], lengths[segments], width)
        # a stable sort leaves the padding (each key's largest value) after the real rows
        matrices = [_matrix(key, positions, valid) for key in keys]
        if len(matrices) == 1:
            by_row = np.argsort(matrices[0], axis=1, kind="stable")
        else:
            by_row = np.lexsort(matrices, axis=1)
        moved = np.take_along_axis(positions, by_row, axis=1)
        if valid is None:
            permutation[positions.ravel()] = moved.ravel()
        else:
            permutation[positions[valid]] = moved[valid]
    return permutation


def segments_with_repeats(offsets: np.ndarray, key: np.ndarray) -> np.ndarray:
    """The segments ``offsets[i]:offsets[i+1]`` inside which some value of ``key`` occurs twice."""
    offsets = np.asarray(offsets, dtype=np.int64)
    lengths = np.diff(offsets)
    found = []
    for segments, width in _width_classes(lengths):
        positions, valid = _padded(offsets[segments], lengths[segments], width)
        values = np.sort(_matrix(key, positions, valid), axis=1)
        # the real values are the smallest ones, so they fill each row's first columns
        repeated = values[:, 1:] == values[:, :-1]
        if valid is not None:
            repeated &= valid[:, 1:]
        found.append(segments[repeated.any(axis=1)])
    return np.sort(np.concatenate(found)) if found else np.zeros(0, dtype=np.int64)


def groups_with_repeats(group: np.ndarray, key: np.ndarray) -> Optional[np.ndarray]:
    """Which rows belong to a group inside which some value of ``key`` occurs twice (a bool
    per row), or None when no group has a repeated value."""
    if len(group) < 2:
        return None
    order = group_major(group)
    sorted_group = group if order is None else group[order]
    n = len(group)
    offsets = np.concatenate(([0], np.flatnonzero(sorted_group[1:] != sorted_group[:-1]) + 1, [n]))
    repeated = segments_with_repeats(offsets, key if order is None else key[order])
    if not len(repeated):
        return None
    return np.isin(group, sorted_group[offsets[repeated]])


def group_major(group: np.ndarray) -> Optional[np.ndarray]:
    """The stable permutation that sorts rows by ``group``, or None when they already are.

    Run files list each (run, topic) in one block of lines, though not always in sorted
    order (``qtest.10`` follows ``qtest.9``): then whole blocks are moved, without a sort
    of the rows. Only groups split over several blocks take a stable sort of the rows.
    """
    n = len(group)
    if n < 2:
        return None
    starts = np.concatenate(([0], np.flatnonzero(group[1:] != group[:-1]) + 1))
    block_group = group[starts]
    if bool(np.all(block_group[1:] > block_group[:-1])):
        return None
    by_group = np.argsort(block_group, kind="stable")
    if bool(np.all(np.diff(block_group[by_group]) > 0)):  # every group is one block
        lengths = np.diff(np.append(starts, n))[by_group]
        new_starts = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        return np.repeat(starts[by_group] - new_starts, lengths) + np.arange(n, dtype=np.int64)
    narrow = group.astype(np.int16) if group.max() < np.iinfo(np.int16).max else group
    return np.argsort(narrow, kind="stable")


def row_blocks(key: np.ndarray, n_parts: int) -> list[tuple[int, int]]:
    """Row ranges ``(low, high)`` that split the rows into about ``n_parts`` equal parts, cut
    only between blocks of equal ``key`` (e.g. a (run, topic) list), so that each key lies in
    one part; the whole range when ``n_parts < 2`` or when some key occupies two blocks."""
    n = len(key)
    if n_parts < 2 or n < 2:
        return [(0, n)]
    starts = np.flatnonzero(key[1:] != key[:-1]) + 1
    if len(starts) + 1 != len(np.unique(key[np.concatenate(([0], starts))])):  # a key in two blocks
        return [(0, n)]
    wanted = np.searchsorted(starts, np.arange(1, n_parts) * (n / n_parts))
    cuts = np.unique(starts[wanted[wanted < len(starts)]])
    bounds = np.concatenate(([0], cuts, [n]))
    return list(zip(bounds[:-1].tolist(), bounds[1:].tolist()))


def _distinct(ascending: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array."""
    return ascending[np.concatenate(([True], ascending[1:] != ascending[:-1]))]


def _descending_keys(words: np.ndarray, rows: np.ndarray, varying_only: bool = False) -> list[np.ndarray]:
    """:func:`numpy.lexsort` keys that order ``rows`` by doc id descending (the word columns
    inverted, last word first). With ``varying_only``, words all these rows share (a common
    id prefix, which cannot order them) are left out."""
    keys = []
    for column in range(words.shape[1]):
        values = words[:, column][rows]
        if not varying_only or values.min() != values.max():
            keys.append(np.invert(values))
    return keys[::-1] or [np.invert(words[:, 0][rows])]


def _greater(words: np.ndarray, left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Whether the doc key of row ``left[i]`` is greater than that of ``right[i]``: words
    compared one column after the other, each only where the earlier ones are equal."""
    a, b = words[:, 0][left], words[:, 0][right]
    greater = a > b
    undecided = np.flatnonzero(a == b)
    for column in range(1, words.shape[1]):
        if not len(undecided):
            break
        a, b = words[:, column][left[undecided]], words[:, column][right[undecided]]
        greater[undecided] = a > b
        undecided = undecided[a == b]
    return greater


def _segments_of(block_starts: np.ndarray, block_ends: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The positions of the given blocks of rows (start and end positions), concatenated,
    and their offsets."""
    lengths = block_ends - block_starts
    offsets = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    rows = np.repeat(block_starts - offsets[:-1], lengths) + np.arange(offsets[-1], dtype=np.int64)
    return rows, offsets


def trec_order(
    group: np.ndarray, score: np.ndarray, doc_key: np.ndarray, matters: Optional[np.ndarray] = None
) -> np.ndarray:
    """The permutation that puts rows in trec_eval order within each group.

    Rows are sorted by ``group`` ascending, then ``score`` descending, then doc id
    descending in byte order. ``doc_key`` stands for the doc ids: integers (one per row) or
    rows of words (:func:`pdeval.engine.ids.packed_ids`) whose order is the ids' byte order.

    ``matters`` (a bool per row), when given, says which rows the caller can tell apart: a
    run of tied scores holding none of them is left in file order, since any order of rows
    that look alike is the same to the caller (an evaluation cannot tell two unjudged
    documents apart). Every row that matters gets its exact trec_eval position.

    Only what is out of order is sorted: groups are brought together by moving blocks
    (:func:`group_major`); a group whose scores rise somewhere is sorted whole, by score
    and doc id, on its own (:func:`sort_within`); elsewhere only runs of tied scores whose
    doc ids are not already descending are re-sorted, each on its own. A run file written
    in rank order therefore costs a few linear passes, whatever its ids.
    """
    group = np.asarray(group)
    n = len(group)
    if n == 0:
        return np.arange(0, dtype=np.int64)
    words = doc_key.reshape(n, -1)
    order = group_major(group)
    if order is None:
        order, sorted_group, sorted_score = np.arange(n, dtype=np.int64), group, score
    else:
        sorted_group, sorted_score = group[order], score[order]
    same_group = sorted_group[1:] == sorted_group[:-1]
    rising = same_group & (sorted_score[1:] > sorted_score[:-1])
    if rising.any():  # such groups are sorted whole, ties included
        bad = _distinct(sorted_group[1:][rising])
        rows, offsets = _segments_of(
            np.searchsorted(sorted_group, bad, "left"), np.searchsorted(sorted_group, bad, "right")
        )
        picked = order[rows]
        order[rows] = picked[sort_within(offsets, _descending_keys(words, picked) + [-score[picked]])]
        sorted_score = sorted_score.copy() if sorted_score is score else sorted_score
        sorted_score[rows] = score[order[rows]]
    tied_with_next = same_group & (sorted_score[1:] == sorted_score[:-1])
    pairs = np.flatnonzero(tied_with_next)
    if not len(pairs):
        return order
    # blocks of tied rows: a block starts at a tied pair that does not follow another
    starts_block = np.concatenate(([True], pairs[1:] != pairs[:-1] + 1))
    block_of_pair = np.cumsum(starts_block) - 1
    block_first = pairs[starts_block]
    block_last = pairs[np.append(starts_block[1:], True)] + 1
    if matters is not None:  # only blocks holding a row that matters are put in doc order
        seen = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(matters[order], out=seen[1:])
        wanted = np.flatnonzero((seen[block_last + 1] - seen[block_first])[block_of_pair])
        pairs, block_of_pair = pairs[wanted], block_of_pair[wanted]
    misordered = ~_greater(words, order[pairs], order[pairs + 1])
    if not misordered.any():
        return order
    bad = _distinct(block_of_pair[misordered])
    rows, offsets = _segments_of(block_first[bad], block_last[bad] + 1)
    picked = order[rows]
    order[rows] = picked[sort_within(offsets, _descending_keys(words, picked, varying_only=True))]
    return order


def tie_order(
    offsets: np.ndarray, spans: np.ndarray, key: np.ndarray, best_first: bool, ranks: Optional[np.ndarray] = None
) -> tuple[np.ndarray, Optional[np.ndarray]]:
    """Rows reordered inside each run of tied scores by ``key``: the permutation, and the new ranks.

    Rows are laid out in lists (``offsets``) in trec_eval order; ``spans`` holds, per row, the
    first and last rank of its run of tied scores (columns 0 and 1). Inside each run the rows
    are sorted by ``key`` descending (``best_first``: the optimistic order) or ascending (the
    pessimistic one); rows with equal keys keep trec_eval's order. ``ranks`` are the rows'
    ranks when only some rows of each list are laid out (the others, which ``key`` cannot tell
    apart, fill the rest of the run): the laid-out rows then take the run's first ranks
    (``best_first``) or its last ones; None when the rows are the whole lists.
    """
    n = len(key)
    permutation = np.arange(n, dtype=np.int64)
    if n == 0:
        return permutation, ranks
    first = spans[:, 0]
    starts = np.zeros(n, dtype=bool)
    starts[offsets[:-1][np.diff(offsets) > 0]] = True
    starts[1:] |= first[1:] != first[:-1]
    bounds = np.flatnonzero(starts)
    ends = np.append(bounds[1:], n)
    long = ends - bounds > 1
    if long.any():
        rows, block_offsets = _segments_of(bounds[long], ends[long])
        values = key[rows].astype(np.float64)
        permutation[rows] = rows[sort_within(block_offsets, [-values if best_first else values])]
    if ranks is not None:  # a run of one laid-out row moves too: to the run's first or last rank
        block = np.cumsum(starts) - 1
        index = np.arange(n, dtype=np.int64) - bounds[block]
        if best_first:
            ranks = (first + index).astype(ranks.dtype)
        else:
            ranks = (spans[:, 1] - ((ends - bounds)[block] - 1 - index)).astype(ranks.dtype)
    return permutation, ranks


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


@contract(run=Frame("run"), by=Nullable(ListOf(Text("a column name"), min_len=0)),
          score_precision=Choice("float64", "float32"), depth=Nullable(Integer(1)))
@shared_docs
def rank_run(
    run: pd.DataFrame,
    *,
    by: Union[None, str, Iterable[str]] = None,
    score_precision: ScorePrecision = "float64",
    depth: Optional[int] = None,
) -> pd.DataFrame:
    """Return the run in trec_eval order with a fresh 1-based ``rank`` column.

    Rows are grouped by ``run``, the ``by`` columns and ``query_id`` (groups in sorted key
    order), ordered within each group by trec_eval's rule, and cut at ``depth`` documents per
    group when given (trec_eval ``-M``). Any ``rank`` column of the input is ignored and
    replaced. The input must be a canonical run frame (:func:`pdeval.frames.canonical.as_run`).

    Parameters
    ----------
    run : DataFrame
        A canonical run frame.
    by : str or list of str, optional
        Extra key columns of a system beside ``run``.
    {score_precision}
    {depth}

    Returns
    -------
    DataFrame
        The run in trec_eval order with a 1-based ``rank`` column.

    See Also
    --------
    evaluate : Ranks the same way before computing measures.
    write_run : Writes the ranks computed here.

    Examples
    --------
    >>> run = pd.DataFrame({"run": "a", "query_id": "1", "doc_id": ["d1", "d2", "d3"],
    ...                     "score": [1.0, 3.0, 1.0]})
    >>> pdeval.rank_run(run, depth=2)
      run query_id doc_id  score  rank
    0   a        1     d2    3.0     1
    1   a        1     d3    1.0     2
    """
    keys = ["run", *(by or ()), "query_id"]
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
