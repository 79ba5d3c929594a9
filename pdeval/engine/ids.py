"""Integer keys for string id columns (run names, topic ids, doc ids).

Two kinds of keys, both computed without Python loops over rows:

* :func:`encode` gives dense integer codes and the distinct values (a hash table; Arrow's
  dictionary encoding for Arrow-backed strings, free for categoricals). Runs of equal
  adjacent values, as in a run file's ``run`` and ``query_id`` columns, are hashed once.
* :func:`packed_ids` needs no hash table at all: ids of at most :data:`MAX_PACKED_BYTES`
  bytes are copied, byte for byte and zero-padded, into big-endian 64-bit words. Two ids
  are equal exactly when their words are, and the words compare in byte order (the order
  of ``strcmp``, which trec_eval uses to break score ties), provided no id contains a NUL
  byte (the function declines such columns). Most collections' doc ids are short (PubMed
  ids, MS MARCO numbers, ``LA010189-0001``), and hashing millions of them costs more than
  all the measure kernels of an evaluation together.

:func:`fingerprint` mixes words (and an optional integer code such as the topic) into one
64-bit value for sorting and hash lookups; equal inputs give equal fingerprints, and
callers confirm a match on the words themselves, so a collision never changes a result.
"""

from __future__ import annotations

from typing import Optional

import numpy as np
import pandas as pd

from pdeval.common.arrow import arrow_chunks, is_string_chunk, string_buffers, take_sorted

#: Longest id (in bytes) that :func:`packed_ids` packs; longer ids are hashed by :func:`encode`.
MAX_PACKED_BYTES = 48

# Odd multipliers (multiplying by one is a bijection mod 2**64): the salt's and one per word,
# then splitmix64's finaliser constants.
_MULTIPLIERS = [np.uint64(k) for k in (
    0x9E3779B97F4A7C15, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0xD6E8FEB86659FD93, 0xFF51AFD7ED558CCD,
    0x9FB21C651E98DF25, 0xC13FA9A902A6328F,
)]
_FINALISER = (np.uint64(0xBF58476D1CE4E5B9), np.uint64(0x94D049BB133111EB))

#: ``_KEEP_FIRST[k]`` keeps the first ``k`` bytes of a word read little-endian (its lowest).
_KEEP_FIRST = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


def encode(values: pd.Series) -> tuple[np.ndarray, pd.Index]:
    """Integer codes of a column and its distinct values (in first-seen order).

    Categorical columns are free. Arrow-backed strings (pandas' default with pyarrow) are
    dictionary-encoded by Arrow, which hashes them faster than ``pd.factorize``; when the
    column is made of long runs of one value (a run file's ``run`` and ``query_id``), only
    the first value of each run is hashed.
    """
    if isinstance(values.dtype, pd.CategoricalDtype):
        return values.cat.codes.to_numpy(dtype=np.int64), pd.Index(values.cat.categories)
    chunks = arrow_chunks(values) if len(values) else None
    if chunks is not None:
        import pyarrow as pa
        import pyarrow.compute as pc

        column = pa.chunked_array(chunks)
        if len(values) > 1024:
            changes = np.flatnonzero(~pc.equal(column[1:], column[:-1]).to_numpy(zero_copy_only=False)) + 1
            if len(changes) < len(values) // 16:
                starts = np.concatenate(([0], changes))
                codes, uniques = encode(pd.Series(pd.arrays.ArrowStringArray(take_sorted(chunks, starts))))
                return np.repeat(codes, np.diff(np.append(starts, len(values)))), uniques
        encoded = column.dictionary_encode()
        dictionary = encoded.chunks[0].dictionary
        if all(chunk.dictionary.equals(dictionary) for chunk in encoded.chunks):  # one shared dictionary
            codes = np.concatenate([chunk.indices.to_numpy(zero_copy_only=False) for chunk in encoded.chunks])
            return codes.astype(np.int64), pd.Index(pd.arrays.ArrowStringArray(dictionary))
    codes, uniques = pd.factorize(values)
    return codes.astype(np.int64, copy=False), pd.Index(uniques)


def byte_order(uniques: pd.Index) -> np.ndarray:
    """For distinct strings, each one's position in byte (code point) order."""
    order = uniques.argsort()
    position = np.empty(len(uniques), dtype=np.int64)
    position[order] = np.arange(len(uniques))
    return position


def packed_ids(values: pd.Series, rows: Optional[np.ndarray] = None) -> Optional[np.ndarray]:
    """Each id's UTF-8 bytes as big-endian 64-bit words, zero-padded: shape ``(n, w)``.

    ``w`` is the number of words the longest id needs (at least one). Rows
    compare in byte order when compared word by word, and are equal exactly when the ids
    are. With ``rows`` (ascending positions), only those ids are packed, in that order: the
    other ids are never copied (an evaluation packs only the rows of judged topics).
    Returns None when the column is not Arrow-backed strings, has missing values,
    has an id longer than :data:`MAX_PACKED_BYTES` bytes or one containing a NUL byte (NUL
    padding would make ``"a"`` and ``"a\\0"`` equal): callers then use :func:`encode`.
    """
    chunks = arrow_chunks(values)
    if chunks is None:
        return None
    pieces = []
    chunk_start = 0
    for chunk in chunks:
        if chunk.null_count or not is_string_chunk(chunk):
            return None
        offsets, data = string_buffers(chunk)
        data = data[offsets[0] : offsets[-1]]
        starts = offsets[:-1].astype(np.int64) - offsets[0]
        lengths = np.diff(offsets).astype(np.int64)
        if (len(lengths) and lengths.max() > MAX_PACKED_BYTES) or not data.all():
            return None
        picked = None
        if rows is not None:  # the wanted rows that fall in this chunk, as positions in it
            low, high = np.searchsorted(rows, [chunk_start, chunk_start + len(chunk)])
            picked = rows[low:high] - chunk_start
        uniform = bool(len(lengths)) and int(lengths.min()) == int(lengths.max())
        if picked is not None:
            starts, lengths = starts[picked], lengths[picked]
        chunk_start += len(chunk)
        pieces.append((data, starts, lengths, picked, uniform))
    longest = max((int(lengths.max()) for _, _, lengths, _, _ in pieces if len(lengths)), default=0)
    n_words = max(-(-longest // 8), 1)
    n_rows = len(values) if rows is None else len(rows)
    words = np.empty((n_rows, n_words), dtype="<u8", order="F")  # a word's column is contiguous
    row = 0
    scratch = None
    for data, starts, lengths, picked, uniform in pieces:
        block = words[row : row + len(lengths)]
        row += len(lengths)
        if not len(lengths):
            continue
        width = int(lengths[0])
        # each word is first read as little-endian (the 8 bytes at its offset, the first in
        # the lowest byte), the bytes past the id's end are cleared, and all words are turned
        # big-endian at the end
        if uniform and width >= 8:
            # ids of one width lie at a stride of that width: every word is a strided view
            # of the data (no index array); the last, partial word is read ending at the id's
            # end, and the bytes of the word before it are shifted out
            for word in range(n_words):
                if 8 * word >= width:  # (a longer id elsewhere needs more words)
                    block[:, word] = 0
                    continue
                at = min(8 * word, width - 8)
                column = np.ndarray((len(data) // width,), dtype="<u8", buffer=data, offset=at, strides=(width,))
                block[:, word] = column if picked is None else column[picked]
                if at < 8 * word:
                    block[:, word] >>= np.uint64(8 * (8 * word - at))
            continue
        # otherwise the 8 bytes at every offset of the data (copied into a zero-extended
        # scratch buffer, one for all chunks), read as one word each from an overlapping
        # strided view, and masked to the id's bytes where an id ends inside the word
        if scratch is None:  # large enough for every chunk
            scratch = np.empty(max(len(d) for d, *_ in pieces) + 8 * n_words, dtype=np.uint8)
        scratch[: len(data)] = data
        scratch[len(data) : len(data) + 8 * n_words] = 0
        at_offset = np.ndarray((len(scratch) - 7,), dtype="<u8", buffer=scratch, strides=(1,))
        shortest = int(lengths.min())
        for word in range(n_words):
            block[:, word] = at_offset[starts + 8 * word]
            if shortest < 8 * (word + 1):
                block[:, word] &= _KEEP_FIRST[np.clip(lengths - 8 * word, 0, 8)]
    words.byteswap(inplace=True)
    return words.astype(np.uint64, copy=False)


def byte_order_keys(values: pd.Series) -> np.ndarray:
    """Keys whose row order is the ids' byte order: packed words when the ids allow it,
    else each id's position among the sorted distinct ids."""
    words = packed_ids(values)
    if words is not None:
        return words
    codes, uniques = encode(values)
    return byte_order(uniques)[codes]


def fingerprint(words: np.ndarray, salt: Optional[np.ndarray] = None) -> np.ndarray:
    """A 64-bit hash of each row's packed words (and its ``salt`` code, e.g. a group).

    ``mix(salt * K0 + sum_c words[:, c] * K(c+1))`` modulo 2**64, with odd constants ``K``
    and splitmix64's finaliser ``mix`` (a bijection). Zero padding words add nothing, so
    an id has the same fingerprint at any width. Two ids that differ in one word never
    collide, nor do two one-word ids without a salt (every step is then a bijection);
    other collisions are rare, and callers confirm matches on the words.
    """
    with np.errstate(over="ignore"):
        mixed = np.zeros(len(words), dtype=np.uint64) if salt is None else salt.astype(np.uint64) * _MULTIPLIERS[0]
        for column in range(words.shape[1]):
            mixed += words[:, column] * _MULTIPLIERS[column + 1]
        mixed ^= mixed >> np.uint64(30)
        mixed *= _FINALISER[0]
        mixed ^= mixed >> np.uint64(27)
        mixed *= _FINALISER[1]
        mixed ^= mixed >> np.uint64(31)
    return mixed


def short_keys(values: pd.Series, slice_rows: int = 1 << 20) -> np.ndarray:
    """A 32-bit key per id: equal ids get equal keys, different ids rarely share one.

    The low 32 bits of the fingerprint of the packed words (:func:`packed_ids`,
    :func:`fingerprint`), computed slice by slice so that the words of one slice of
    ``slice_rows`` rows exist at a time; or, for ids that cannot be packed, their dictionary
    codes (:func:`encode`). For screening lists for repeated ids: a shared key only makes a
    list suspect, and 32-bit keys sort several times faster than 64-bit ones.
    """
    keys = np.empty(len(values), dtype=np.uint32)
    for low in range(0, len(values), slice_rows):
        words = packed_ids(values.iloc[low : low + slice_rows])
        if words is None:
            return encode(values)[0].astype(np.uint32)
        keys[low : low + len(words)] = fingerprint(words)
    return keys


def has_repeats(keys: np.ndarray) -> bool:
    """Whether some value occurs twice (sorting the values, not an argsort)."""
    keys = np.sort(keys)
    return bool(len(keys) > 1 and (keys[1:] == keys[:-1]).any())
