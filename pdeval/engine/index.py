"""The judgment index: every qrels variant's judgment of each (topic, document) pair.

The qrels' (topic, document) pairs get integer codes; a matrix ``variant x pair`` holds every
qrels variant's judgment of each pair (``level``/``sample`` columns of a reduction experiment
are variants), and a :class:`~pdeval.engine.segments.QrelsTable` holds R, N, pooled counts and
ideal lists per (variant, topic). The sampling columns (``stratum``, ``inclusion_prob``) are
laid out the same way for the sampled estimators.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from pdeval.engine.ranking import group_offsets
from pdeval.engine.ids import byte_order, encode, fingerprint, has_repeats, packed_ids
from pdeval.engine.segments import QrelsTable
from pdeval.errors import SchemaError
from pdeval.frames.canonical import ABSENT, POOLED, DuplicatePolicy, as_qrels, drop_duplicates, require_rows, variant_keys


def key_codes(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
    """Dense codes of the key tuples of ``frame`` (sorted order) and the table of keys."""
    if not keys:
        return np.zeros(len(frame), dtype=np.int64), pd.DataFrame(index=[0])
    grouped = frame.groupby(list(keys), sort=True, observed=True, dropna=False)
    codes = grouped.ngroup().to_numpy(dtype=np.int64)
    table = grouped.size().reset_index()[list(keys)]
    return codes, table


@dataclass
class JudgmentIndex:
    """Every qrels variant's judgment of every judged (topic, document) pair."""

    topics: pd.Index  # sorted topic ids of the qrels (all variants)
    docs: pd.Index  # doc ids of the qrels
    pair_keys: np.ndarray  # sorted topic_code * n_docs + doc_code of every pair
    judgments: np.ndarray  # (variants, pairs + 1): level, POOLED or ABSENT; last column ABSENT
    judged_pair: np.ndarray  # (pairs,): some variant judges the pair (level >= 0)
    has_topic: np.ndarray  # (variants, topics): the variant has qrels rows for the topic
    table: QrelsTable  # entries variant * n_topics + topic
    variants: pd.DataFrame  # one row per variant with its key values
    keys: list
    #: sampling columns of sampled qrels as (variants, pairs + 1) matrices like ``judgments``
    #: (``stratum`` codes, ``inclusion_prob``); empty for plain qrels
    info: dict = field(default_factory=dict)

    @classmethod
    def build(cls, qrels: pd.DataFrame, duplicates: DuplicatePolicy = "error") -> "JudgmentIndex":
        """Index a canonical qrels frame validated without its duplicate check, which runs
        here on integer codes and falls back to :func:`drop_duplicates` when a key repeats."""
        keys = variant_keys(qrels)
        variant, variants = key_codes(qrels, keys)
        n_variants = len(variants)
        topic, topics = encode(qrels["query_id"])
        position = byte_order(topics)  # topics in sorted order, as results list them
        topic, topics = position[topic], topics[np.argsort(position)]
        doc, docs = encode(qrels["doc_id"])
        n_topics, n_docs = len(topics), max(len(docs), 1)
        pair_of_row = topic * n_docs + doc
        if has_repeats(variant * (n_topics * n_docs) + pair_of_row):
            qrels = drop_duplicates(qrels, [*keys, "query_id", "doc_id"], duplicates, kind="qrels", value="relevance")
            return cls.build(qrels, duplicates)
        pair_keys, pair = dense_codes(pair_of_row, n_topics * n_docs)
        level = qrels["relevance"].to_numpy(dtype=np.int64)
        level = np.where(level < 0, POOLED, level)
        # the smallest integer type that holds every level keeps the per-row gathers cheap
        top = level.max() if len(level) else 0
        small = next(t for t in (np.int8, np.int16, np.int32, np.int64) if top <= np.iinfo(t).max)
        judgments = np.full((n_variants, len(pair_keys) + 1), ABSENT, dtype=small)
        judgments[variant, pair] = level
        judged_pair = np.zeros(len(pair_keys), dtype=bool)
        judged_pair[pair[level >= 0]] = True
        has_topic = np.zeros((n_variants, n_topics), dtype=bool)
        has_topic[variant, topic] = True
        entry = variant * n_topics + topic
        n_entries = n_variants * n_topics
        judged = level >= 0
        order = np.lexsort((-level[judged], entry[judged]))
        info, design = sampling_columns(qrels, variant, pair, len(pair_keys) + 1, n_variants, entry, level)
        table = QrelsTable(
            levels=level[judged][order],
            offsets=group_offsets(entry[judged], n_entries),
            pooled=np.bincount(entry[~judged], minlength=n_entries),
            variant=np.repeat(np.arange(n_variants), n_topics),
            design=design,
        )
        return cls(pd.Index(topics), pd.Index(docs), pair_keys, judgments, judged_pair, has_topic, table, variants, keys, info)

    @cached_property
    def doc_words(self) -> Optional[np.ndarray]:
        """The qrels doc ids packed into words (:func:`pdeval.engine.ids.packed_ids`), or None."""
        return packed_ids(pd.Series(self.docs)) if len(self.docs) else None

    @cached_property
    def doc_fingerprints(self) -> Optional[pd.Index]:
        """Fingerprints of :attr:`doc_words` as an index, or None (not packed, or two collide)."""
        if self.doc_words is None:
            return None
        index = pd.Index(fingerprint(self.doc_words))
        return index if index.is_unique else None

    @cached_property
    def doc_filter(self) -> np.ndarray:
        """Which values of a fingerprint's low bits some judged doc id has (a bitmap of
        about 64 entries per judged doc, at most 16 MiB): most run documents are not
        judged, and this rules them out before the hash lookup."""
        size = 1 << int(np.clip(np.ceil(np.log2(64 * max(len(self.docs), 1))), 16, 24))
        present = np.zeros(size, dtype=bool)
        present[self.doc_fingerprints.to_numpy() & np.uint64(size - 1)] = True
        return present

    def qrels_docs_of(self, words: np.ndarray, prints: np.ndarray) -> np.ndarray:
        """Each packed run doc id's position in :attr:`docs`, or -1: a hash lookup of the
        fingerprints ``prints`` (:func:`pdeval.engine.ids.fingerprint` of ``words``), confirmed on the
        words unless both sides are one word wide (one-word fingerprints are exact)."""
        # most run documents are not judged: a bitmap of the judged fingerprints' low bits
        # rules them out before the hash lookup
        candidate = np.flatnonzero(self.doc_filter[prints & np.uint64(len(self.doc_filter) - 1)])
        position = np.full(len(prints), -1, dtype=np.int64)
        position[candidate] = self.doc_fingerprints.get_indexer(prints[candidate])
        judged_words = self.doc_words
        if words.shape[1] == 1 and judged_words.shape[1] == 1:
            return position
        found = np.flatnonzero(position >= 0)
        same = np.ones(len(found), dtype=bool)
        for column in range(max(words.shape[1], judged_words.shape[1])):  # a missing column is zero padding
            run_word = words[found, column] if column < words.shape[1] else 0
            judged_word = judged_words[position[found], column] if column < judged_words.shape[1] else 0
            same &= run_word == judged_word
        position[found[~same]] = -1
        return position

    @cached_property
    def pair_table(self) -> Optional[np.ndarray]:
        """The pair code of every (topic, qrels doc), -1 where not judged, and a last -1 (for
        rows of no qrels doc): a dense table when it has at most 64M entries, else None."""
        size = len(self.topics) * max(len(self.docs), 1)
        if size > 64_000_000:
            return None
        table = np.full(size + 1, -1, dtype=np.int64 if len(self.pair_keys) >= 2**31 else np.int32)
        table[self.pair_keys] = np.arange(len(self.pair_keys))
        return table

    def pair_codes(self, topic_code: np.ndarray, qrels_doc: np.ndarray) -> np.ndarray:
        """The pair code of each (topic, qrels doc) row; ``-1`` (the ABSENT column) when the
        pair is not judged. A dense topic x doc table when it is small, else a binary search."""
        n_docs = max(len(self.docs), 1)
        if len(self.pair_keys) == 0:
            return np.full(len(topic_code), -1, dtype=np.int64)
        if self.pair_table is not None:
            key = np.where(qrels_doc >= 0, topic_code.astype(np.int64) * n_docs + qrels_doc, -1)
            return self.pair_table[key]
        key = topic_code.astype(np.int64) * n_docs + qrels_doc
        position = np.minimum(np.searchsorted(self.pair_keys, key), len(self.pair_keys) - 1)
        return np.where((qrels_doc >= 0) & (self.pair_keys[position] == key), position, -1)


def dense_codes(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)``, by a presence table when the key space is small."""
    if n_keys > 64_000_000:
        return np.unique(keys, return_inverse=True)
    present = np.zeros(n_keys, dtype=bool)
    present[keys] = True
    unique = np.flatnonzero(present)
    code = np.cumsum(present, dtype=np.int64) - 1
    return unique, code[keys]


def sampling_columns(
    qrels: pd.DataFrame,
    variant: np.ndarray,
    pair: np.ndarray,
    width: int,
    n_variants: int,
    entry: np.ndarray,
    level: np.ndarray,
) -> tuple[dict, dict]:
    """The sampling columns of a qrels frame for the engine (:class:`~pdeval.evaluation.core.JudgmentIndex`).

    Returns ``(info, design)``: ``info`` maps ``stratum`` / ``inclusion_prob`` to
    (variants x ``width``) matrices indexed like the judgment matrix (``-1`` / NaN where a
    variant does not hold the pair); ``design`` holds every qrels row's ``entry`` and
    ``level`` and, when present, its stratum code and inclusion probability. Stratum labels
    are coded in string order (the order ``sample_eval.pl`` visits them).
    """
    info: dict = {}
    design: dict = {"entry": entry, "level": level, "pair": pair}
    if "stratum" in qrels.columns:
        labels = qrels["stratum"]
        if labels.isna().any():
            raise SchemaError(f"the qrels have {int(labels.isna().sum())} missing stratum value(s)")
        _, codes = np.unique(labels.astype(str).to_numpy(dtype=object).astype(str), return_inverse=True)
        codes = codes.astype(np.int32).reshape(-1)
        matrix = np.full((n_variants, width), -1, dtype=np.int32)
        matrix[variant, pair] = codes
        info["stratum"] = matrix
        design["stratum"] = codes
    if "inclusion_prob" in qrels.columns:
        prob = pd.to_numeric(qrels["inclusion_prob"], errors="coerce").to_numpy(dtype=np.float64)
        bad = ~((prob > 0) & (prob <= 1))
        if bad.any():
            first = qrels.loc[bad, ["query_id", "doc_id", "inclusion_prob"]].head(3).to_dict("records")
            raise SchemaError(
                f"the qrels have {int(bad.sum())} inclusion probabilities outside (0, 1] or missing, first: "
                f"{first}; drop those rows (statAP_MQ_eval ignores them; read_qrels(format='prels') does)"
            )
        matrix = np.full((n_variants, width), np.nan)
        matrix[variant, pair] = prob
        info["inclusion_prob"] = matrix
        design["inclusion_prob"] = prob
    return info, design


def index_qrels(
    qrels: pd.DataFrame, *, duplicates: DuplicatePolicy = "error", variants: Optional[Sequence[str]] = None,
    canonical: bool = False,
) -> JudgmentIndex:
    """The qrels validated (:func:`pdeval.frames.canonical.as_qrels`) and indexed for evaluation;
    ``canonical=True``: the caller has validated them already (an entry point canonicalises each
    frame once and passes the canonical frame down)."""
    if not canonical:
        qrels = as_qrels(qrels, duplicates=None, variants=variants)  # duplicates: JudgmentIndex.build
    require_rows(qrels, "qrels")
    return JudgmentIndex.build(qrels, duplicates)
