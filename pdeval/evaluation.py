"""Evaluate run frames against qrels frames: one sort, one join, numpy kernels.

The engine works in three steps (see the README, "Architecture"):

1. **Judgments** (:class:`JudgmentIndex`): the qrels' (topic, document) pairs get integer
   codes; a matrix ``variant x pair`` holds every qrels variant's judgment of each pair
   (``level``/``sample`` columns of a reduction experiment are variants), and a
   :class:`~pdeval.segments.QrelsTable` holds R, N, pooled counts and ideal lists per
   (variant, topic).
2. **Ranking** (:class:`RankedRun`): the run's doc ids become integer keys once — their bytes
   packed into 64-bit words when they are short (no hashing; :mod:`pdeval.ids`), else
   dictionary codes — which are checked for repeats, mapped onto the qrels' pair codes and
   give trec_eval's tie order; the rows are sorted once by (system, topic, score desc,
   doc id desc).
3. **Measuring**: for a chunk of variants, each ranked row looks its judgment up in the
   matrix (a gather, no merge), the lists are laid out as :class:`~pdeval.segments.Segments`
   and every measure kernel reduces them. Memory is bounded by ``chunk_rows``.
"""

from __future__ import annotations

import functools
import numbers
import sys
from dataclasses import dataclass, field
from functools import cached_property
from typing import Iterable, Literal, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from .coverage import check_coverage
from .errors import PdevalError, PdevalWarning, warn
from .frames import (
    ABSENT, POOLED, DuplicatePolicy, as_qrels, as_result, as_run, drop_duplicates, require_rows, result_keys,
    take_rows, variant_keys,
)
from .measures import Measure, parse_all
from .measures.sampled import sampling_columns
from .ids import byte_order, encode, fingerprint, has_repeats, packed_ids
from .ranking import (
    ScorePrecision, group_major, group_offsets, groups_with_repeats, ranks_within, row_blocks, scores_for_ordering,
    trec_order,
)
from .segments import QrelsTable, Segments
from . import threads

MeasureLike = Union[str, Measure]


def _codes(frame: pd.DataFrame, keys: Sequence[str]) -> tuple[np.ndarray, pd.DataFrame]:
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
        variant, variants = _codes(qrels, keys)
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
        pair_keys, pair = _dense_codes(pair_of_row, n_topics * n_docs)
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
        """The qrels doc ids packed into words (:func:`pdeval.ids.packed_ids`), or None."""
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
        fingerprints ``prints`` (:func:`pdeval.ids.fingerprint` of ``words``), confirmed on the
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


@dataclass
class RankedRun:
    """The run's rows sorted once in trec_eval order, grouped by (system, topic)."""

    systems: pd.DataFrame  # one row per system (run and ``by`` keys)
    pair: np.ndarray  # per sorted row: pair code or -1
    offsets: np.ndarray  # groups system * n_topics + topic
    n_topics: int
    run_topics: pd.Index  # the run's distinct topic ids
    run_topic_position: np.ndarray  # each one's position in the qrels topics, or -1
    #: per sorted row, whether its score differs from the row above (a new run of tied
    #: scores starts); kept only when a measure weighs tied documents alike (``ties="mean"``)
    tie_start: Optional[np.ndarray] = None

    @cached_property
    def tie_span(self) -> tuple[np.ndarray, np.ndarray]:
        """Per sorted row, the first and last rank of the run of tied scores it belongs to."""
        starts = np.flatnonzero(self.tie_start)
        tie = np.cumsum(self.tie_start) - 1
        first_row = starts[tie]
        end_row = np.append(starts[1:], len(self.tie_start))[tie]
        list_start = np.repeat(self.offsets[:-1], np.diff(self.offsets))
        return first_row - list_start + 1, end_row - list_start

    @cached_property
    def known_rows(self) -> np.ndarray:
        """Rows whose (topic, document) pair some qrels variant holds (judged or pooled)."""
        return np.flatnonzero(self.pair >= 0)

    @cached_property
    def known_groups(self) -> np.ndarray:
        """The group of each of :attr:`known_rows` (found without a group per row of the run)."""
        return np.searchsorted(self.offsets, self.known_rows, side="right") - 1

    @cached_property
    def known_offsets(self) -> np.ndarray:
        """Group offsets of :attr:`known_rows`."""
        return group_offsets(self.known_groups, len(self.offsets) - 1)

    @cached_property
    def known_ranks(self) -> np.ndarray:
        """Rank in the full list of each of :attr:`known_rows`."""
        return self.known_rows - self.offsets[self.known_groups] + 1

    @classmethod
    def build(
        cls,
        run: pd.DataFrame,
        judgments: JudgmentIndex,
        *,
        by: Sequence[str],
        score_precision: ScorePrecision,
        depth: Optional[int],
        duplicates: DuplicatePolicy = "error",
        ties: bool = False,
        duplicates_checked: bool = False,
    ) -> "RankedRun":
        """Encode, check and sort a canonical run frame (validated without its duplicate check,
        which runs here on integer codes and falls back to :func:`drop_duplicates`).

        A large run whose (system, topic) lists each occupy one block of rows (as
        :func:`pdeval.read_run` reads them) is ranked in parts of whole lists, on every core
        (:mod:`pdeval.threads`; the work is numpy and Arrow calls, which release the GIL) and
        a few parts at a time, so that the per-row arrays of ranking exist for those parts
        only. The parts are independent, since every list lies in one part, and their sorted
        rows are put together by moving whole lists; the duplicate policy is applied once,
        to the suspect rows of all parts.
        """
        # the codes are held to the end as int32 (half the bytes), each made so at once
        if by:
            system, systems = _codes(run, ["run", *by])
            system = system.astype(np.int32)
        else:
            system, names = encode(run["run"])
            position = byte_order(names)
            system = position.astype(np.int32)[system]
            systems = pd.DataFrame({"run": np.asarray(names, dtype=object)[np.argsort(position)]})
        topic_code, topic_names = encode(run["query_id"])
        topic_code = topic_code.astype(np.int32)
        topic_position = judgments.topics.get_indexer(topic_names)
        if judgments.doc_fingerprints is not None:  # cached before the threads share them
            judgments.doc_filter
        judgments.pair_table
        scores = run["score"].to_numpy()
        list_key = system.astype(np.int64 if len(systems) * len(topic_names) >= 2**31 else np.int32)
        list_key *= len(topic_names)
        list_key += topic_code
        parts = [
            _Part(run["doc_id"].iloc[low:high], system[low:high], topic_code[low:high], scores[low:high], low)
            for low, high in row_blocks(list_key, _part_count(len(run)))
        ]
        del list_key
        context = _PartContext(judgments, topic_position, len(topic_names), score_precision, ties, duplicates_checked)
        # each part is ranked as soon as it has been screened for repeated documents; a part
        # with suspect rows waits, and the duplicate policy is applied once, to all of them
        ranked = list(threads.ordered(functools.partial(_Part.screen_and_rank, context=context), parts))
        waiting = [part for part, done in zip(parts, ranked) if done is None]
        if waiting:
            # a value repeated inside one (system, topic) list: a duplicate document, or
            # (rarely) two ids with one key; the policy is applied exactly to those lists' rows
            rows = np.concatenate([part.suspect_rows for part in waiting])
            kept = drop_duplicates(
                take_rows(run, rows), ["run", *by, "query_id", "doc_id"], duplicates,
                kind="run", value="score",
            )
            dropped = np.setdiff1d(rows, rows[kept.index.to_numpy()], assume_unique=True)
            late = iter(threads.ordered(functools.partial(_Part.rank, context=context, dropped=dropped), waiting))
            ranked = [done if done is not None else next(late) for done in ranked]
        del parts, waiting, system, topic_code
        group = np.concatenate([each[0] for each in ranked])
        pair = np.concatenate([each[1] for each in ranked])
        tie_start = np.concatenate([each[2] for each in ranked]) if ties else None
        del ranked
        lists_together = group_major(group)  # parts hold whole lists: they move as blocks
        if lists_together is not None:
            group, pair = group[lists_together], pair[lists_together]
            tie_start = None if tie_start is None else tie_start[lists_together]
        del lists_together
        n_groups = len(systems) * len(judgments.topics)
        offsets = group_offsets(group, n_groups)
        del group
        if tie_start is not None:
            tie_start[offsets[:-1][np.diff(offsets) > 0]] = True
        if depth is not None:
            kept = ranks_within(offsets) <= depth
            pair = pair[kept]
            tie_start = None if tie_start is None else tie_start[kept]
            offsets = group_offsets(np.repeat(np.arange(n_groups), np.diff(offsets))[kept], n_groups)
        return cls(systems, pair, offsets, len(judgments.topics), pd.Index(topic_names), topic_position, tie_start)


#: rows of a part of a run ranked on its own: the per-row arrays of ranking (ids packed into
#: words, keys, the sort permutation) exist for a few parts at a time, one per thread, which
#: bounds the memory of large runs; a smaller run is ranked in one piece
_PART_ROWS = 1 << 19


def _part_count(n_rows: int) -> int:
    """Parts of at most about :data:`_PART_ROWS` rows, as many as a multiple of the threads
    (three parts on two threads would leave one thread idle for a third of the time)."""
    n_parts = -(-n_rows // _PART_ROWS)
    return n_parts if n_parts <= 1 else -(-n_parts // threads.THREADS) * threads.THREADS


@dataclass(frozen=True)
class _PartContext:
    """What every part of a run needs to be ranked (read only: the threads share it)."""

    judgments: JudgmentIndex
    topic_position: np.ndarray  # each run topic's position in the qrels topics, or -1
    n_run_topics: int
    score_precision: ScorePrecision
    ties: bool
    duplicates_checked: bool  # the lists are known to hold no repeated document: no screen


class _Part:
    """The rows ``low:`` of a run, whole (system, topic) lists, ranked on their own
    (:meth:`RankedRun.build`)."""

    def __init__(self, doc_ids: pd.Series, system: np.ndarray, topic_code: np.ndarray, scores: np.ndarray, low: int):
        self.doc_ids, self.system, self.topic_code, self.scores, self.low = doc_ids, system, topic_code, scores, low

    def screen_and_rank(self, context: _PartContext):
        """The part ranked (:meth:`rank`), or None when some list may repeat a document: its
        rows are then in :attr:`suspect_rows` and the part waits for the duplicate policy."""
        self._screen(context)
        return None if len(self.suspect_rows) else self.rank(context)

    def _screen(self, context: _PartContext) -> None:
        """Keys of the part's rows, and the rows (positions in the whole run) of the lists in
        which a doc id key repeats.

        Topics absent from the qrels are not evaluated (trec_eval): their rows are left out
        before any per-row work, their duplicate check included (they change no value). Doc
        ids are packed into words (no hashing) when they and the qrels' are short, else
        dictionary-encoded; 32 bits of the key suffice to find repeats (a collision only
        makes a list suspect) and sort several times faster than 64."""
        judgments = context.judgments
        system, topic_code = self.system.astype(np.int64), self.topic_code.astype(np.int64)
        topic = context.topic_position[topic_code]
        rows = None if bool((topic >= 0).all()) else np.flatnonzero(topic >= 0)
        score = scores_for_ordering(self.scores, context.score_precision)
        if rows is not None:
            system, topic_code, topic, score = system[rows], topic_code[rows], topic[rows], score[rows]
        self.words = packed_ids(self.doc_ids, rows) if judgments.doc_fingerprints is not None else None
        if self.words is not None:
            self.prints = fingerprint(self.words)
        else:
            doc_code, self.doc_names = encode(self.doc_ids)
            self.prints = doc_code if rows is None else doc_code[rows]
        suspect = None if context.duplicates_checked else groups_with_repeats(
            system * context.n_run_topics + topic_code, self.prints.astype(np.uint32)
        )
        self.group = system * len(judgments.topics) + topic
        self.topic, self.score, self.rows = topic, score, rows
        del self.doc_ids, self.system, self.topic_code, self.scores
        suspect = np.zeros(0, dtype=np.int64) if suspect is None else np.flatnonzero(suspect)
        self.suspect_rows = self.low + (suspect if rows is None else rows[suspect])

    def rank(
        self, context: _PartContext, dropped: Optional[np.ndarray] = None
    ) -> tuple[np.ndarray, np.ndarray, Optional[np.ndarray]]:
        """The part's rows in trec_eval order, leaving out the run rows ``dropped`` (ascending;
        by the duplicate policy): their groups, pair codes and (``ties``) where a run of tied
        scores starts. The part's arrays are freed."""
        judgments = context.judgments
        if dropped is not None and len(dropped):
            rows = self.low + (np.arange(len(self.group)) if self.rows is None else self.rows)
            keep = dropped[np.minimum(np.searchsorted(dropped, rows), len(dropped) - 1)] != rows
            self.group, self.score, self.topic, self.prints = (
                self.group[keep], self.score[keep], self.topic[keep], self.prints[keep]
            )
            self.words = None if self.words is None else self.words[keep]
        if self.words is None:
            doc_key = byte_order(self.doc_names)[self.prints]
            qrels_doc = judgments.docs.get_indexer(self.doc_names)[self.prints]
        else:
            doc_key, qrels_doc = self.words, judgments.qrels_docs_of(self.words, self.prints)
        group, score, topic = self.group, self.score, self.topic
        del self.prints, self.words, self.group, self.score, self.topic, self.rows
        # the judgments are looked up in input order; only rows some qrels variant holds can
        # be told apart by a measure, so only ties among them need the doc id order
        pair = judgments.pair_codes(topic, qrels_doc)
        del qrels_doc, topic
        order = trec_order(group, score, doc_key, matters=pair >= 0)
        del doc_key
        tie_start = None
        if context.ties:  # a run of tied scores starts where the sorted score changes
            sorted_score = score[order]
            tie_start = np.ones(len(order), dtype=bool)
            tie_start[1:] = sorted_score[1:] != sorted_score[:-1]
        narrow = np.int32 if len(judgments.pair_keys) < 2**31 and group.max(initial=0) < 2**31 else np.int64
        return group[order].astype(narrow), pair[order].astype(narrow), tie_start  # (half the bytes to merge)


def _dense_codes(keys: np.ndarray, n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(keys, return_inverse=True)``, by a presence table when the key space is small."""
    if n_keys > 64_000_000:
        return np.unique(keys, return_inverse=True)
    present = np.zeros(n_keys, dtype=bool)
    present[keys] = True
    unique = np.flatnonzero(present)
    code = np.cumsum(present, dtype=np.int64) - 1
    return unique, code[keys]


def _layout(
    ranked: RankedRun, judgments: JudgmentIndex, variants: np.ndarray, complete: bool, judged_rows_only: bool
) -> tuple[np.ndarray, np.ndarray, Segments]:
    """Segments of the given variants: which (variant, group) lists, and their rows' judgments.

    Segments are laid out variant by variant, groups in order; each row's judgment is a
    gather from the judgment matrix (no merge). With ``judged_rows_only`` only the rows
    whose document some variant's qrels hold are laid out, each with its rank in the full
    list (``Segments.ranks``): rows absent from every variant's qrels cannot change the
    measures that declare ``sparse`` (they only shift ranks), so they are left implicit.
    """
    lengths = np.diff(ranked.offsets)
    topic_of_group = np.arange(len(lengths)) % max(ranked.n_topics, 1)
    included = judgments.has_topic[variants][:, topic_of_group]
    if not complete:
        included &= lengths > 0
    variant_index, group = np.nonzero(included)
    variant = variants[variant_index]
    if judged_rows_only:
        pair, row_offsets, ranks = ranked.pair[ranked.known_rows], ranked.known_offsets, ranked.known_ranks
    else:
        pair, row_offsets, ranks = ranked.pair, ranked.offsets, None
    ties = None
    if ranked.tie_start is not None:
        ties = np.column_stack(ranked.tie_span)
        ties = ties[ranked.known_rows] if judged_rows_only else ties
    row_lengths = np.diff(row_offsets)
    offsets = np.zeros(len(group) + 1, dtype=np.int64)
    np.cumsum(row_lengths[group], out=offsets[1:])
    whole = included[:, row_lengths > 0].all()
    rows = None if whole else np.repeat(included, row_lengths, axis=1)

    def gather(matrix: np.ndarray) -> np.ndarray:
        # one gather per variant from its (small, cache-resident) row of the matrix; pair -1
        # (never judged) picks the matrix's last column (ABSENT in the judgment matrix)
        out = np.empty((len(variants), len(pair)), dtype=matrix.dtype)
        for row, variant_code in enumerate(variants):
            np.take(matrix[variant_code], pair, out=out[row])
        return out.ravel() if whole else out[rows]

    rel = gather(judgments.judgments)
    info = {name: gather(matrix) for name, matrix in judgments.info.items()} or None
    if ranks is not None:
        ranks = np.tile(ranks, len(variants)) if whole else np.broadcast_to(ranks, rows.shape)[rows]
    if ties is not None:  # per row: first and last rank of its run of tied scores
        ties = np.tile(ties, (len(variants), 1)) if whole else np.concatenate([ties[row] for row in rows])
    entry = variant * ranked.n_topics + topic_of_group[group]
    return variant, group, Segments(rel, offsets, entry, judgments.table, ranks=ranks, info=info, ties=ties)


def evaluate(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    *,
    by: Optional[Union[str, Sequence[str]]] = None,
    complete: bool = False,
    judged_only: bool = False,
    depth: Optional[int] = None,
    score_precision: ScorePrecision = "float64",
    rel: Optional[int] = None,
    gains: Optional[Mapping[int, float]] = None,
    undefined: Literal["zero", "nan"] = "zero",
    duplicates: DuplicatePolicy = "error",
    chunk_rows: int = 8_000_000,
    sparse: bool = True,
    variants: Optional[Sequence[str]] = None,
    output: Literal["pandas", "polars", "arrow"] = "pandas",
) -> pd.DataFrame:
    """Evaluate every run of ``run`` against every qrels variant of ``qrels``.

    Parameters
    ----------
    run, qrels
        Long frames (aliases such as ``qid``/``docno``/``rel`` are accepted, by the precedence
        of :data:`pdeval.frames.PRECEDENCE`). The qrels columns ``level``, ``sample`` and
        ``depth`` (made by :func:`pdeval.reduce`, :func:`pdeval.pool`, ...) and those named in
        ``variants`` name qrels variants: all are evaluated at once. ``iteration``,
        ``stratum``, ``inclusion_prob`` and ``source`` are information; any other extra qrels
        column is ignored with a :class:`~pdeval.errors.ColumnWarning`. Empty frames raise
        :class:`~pdeval.errors.SchemaError`. Polars and Arrow frames, ranx ``Run``/``Qrels``
        and iterables of ir_datasets records are converted at the boundary
        (:func:`pdeval.integrations.to_frame`).
    measures
        Measure strings or :class:`~pdeval.measures.Measure` objects (``"AP"``,
        ``"nDCG'@10"``, ``"infAP(c=1.5)"``; see :func:`pdeval.measures.available`).
    by
        Extra run columns that key a system beside ``run`` (a swept parameter such as ``b``).
    complete
        trec_eval ``-c``: evaluate every qrels topic; a topic a run lacks is an empty list.
        Default: only topics in both the run and the qrels (trec_eval 9).
    judged_only
        trec_eval ``-J``: every measure on the condensed list (same as priming each).
    depth
        trec_eval ``-M``: keep the first ``depth`` documents of each ranking.
    score_precision
        ``"float32"`` rounds scores to 32-bit floats before ordering, as trec_eval up to 9.0.7
        (the git tag ``v9.0.8`` holds 9.0.7's code) and the pytrec-eval-terrier wheel do; the
        2023 release 9.0.8 and trec_eval 10 store doubles, as the default ``"float64"``.
    rel, gains
        Defaults for the measures' relevance threshold and level -> gain mapping.
    undefined
        ``"zero"`` (trec_eval) or ``"nan"`` for undefined values (e.g. AP with R = 0).
    duplicates
        Policy for repeated documents or judgments: ``"error"``, ``"first"`` or ``"max"``.
        Run rows are checked in the lists that are evaluated: a topic absent from the qrels
        is left out (as trec_eval does) before its rows are looked at, so a document
        repeated there neither raises nor counts (:func:`pdeval.read_run` checks every list).
    chunk_rows, sparse
        Memory bound: qrels variants are evaluated in chunks of about ``chunk_rows`` rows.
        ``sparse=True`` lays out only the rows some qrels variant judges for the measures
        that need nothing else (most of them; see :attr:`Measure.sparse`); ``False`` keeps
        every retrieved row (the same values, slower; for checking).
    variants
        Extra qrels columns to treat as variant keys (e.g. ``["assessor"]``), beside the
        ones pdeval produces.

    Topics on one side only, runs lacking some topics and runs without a judged document are
    reported by an :class:`~pdeval.errors.OverlapWarning` (the values stay trec_eval's); no
    shared topic at all raises :class:`~pdeval.errors.OverlapError` (:mod:`pdeval.coverage`).
    output
        ``"polars"`` or ``"arrow"`` return the result as a Polars DataFrame or pyarrow Table.

    Returns
    -------
    DataFrame with columns ``run``, the ``by`` columns, the qrels variant columns,
    ``query_id``, ``measure`` (canonical string) and ``value``. Given a dask DataFrame as
    ``run``, a lazy dask DataFrame of the same columns (:func:`pdeval.dask.evaluate_dask`).
    """
    if output not in ("pandas", "polars", "arrow"):
        raise PdevalError(f"output must be 'pandas', 'polars' or 'arrow', not {output!r}")
    if "dask.dataframe" in sys.modules:  # a dask frame can only exist once dask is imported
        from .dask import evaluate_dask, is_dask_frame

        if is_dask_frame(run):
            if output != "pandas":
                raise PdevalError("output= converts in-memory results; a dask result stays a dask frame")
            return evaluate_dask(
                run, qrels, measures, by=by, complete=complete, judged_only=judged_only, depth=depth,
                score_precision=score_precision, rel=rel, gains=gains, undefined=undefined,
                duplicates=duplicates, chunk_rows=chunk_rows, variants=variants,
            )
    result = evaluate_frames(
        run, qrels, measures, by=by, complete=complete, judged_only=judged_only, depth=depth,
        score_precision=score_precision, rel=rel, gains=gains, undefined=undefined, duplicates=duplicates,
        chunk_rows=chunk_rows, sparse=sparse, variants=variants,
    )
    if output != "pandas":
        from .integrations.arrow import from_pandas

        return from_pandas(result, output)
    return result


def evaluate_frames(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    *,
    by: Optional[Union[str, Sequence[str]]] = None,
    complete: bool = False,
    judged_only: bool = False,
    depth: Optional[int] = None,
    score_precision: ScorePrecision = "float64",
    rel: Optional[int] = None,
    gains: Optional[Mapping[int, float]] = None,
    undefined: Literal["zero", "nan"] = "zero",
    duplicates: DuplicatePolicy = "error",
    chunk_rows: int = 8_000_000,
    sparse: bool = True,
    variants: Optional[Sequence[str]] = None,
    coverage: bool = True,
    judgments: Optional[JudgmentIndex] = None,
    duplicates_checked: bool = False,
) -> pd.DataFrame:
    """:func:`evaluate` on pandas frames. ``coverage=False`` skips the topic overlap checks
    (:mod:`pdeval.coverage`), for callers that evaluate a share of the topics (a dask
    partition) or frames they built themselves; every other check runs. ``judgments`` is
    the index of these qrels (:func:`index_qrels`) when the caller evaluates several runs
    against them and has built it once; ``duplicates_checked=True`` says that the run's lists
    hold no repeated document, because the caller read them with :func:`pdeval.read_run`'s
    check under the same policy (their screen is then not repeated)."""
    by = [by] if isinstance(by, str) else list(by or [])
    check_options(
        undefined=undefined, depth=depth, score_precision=score_precision, duplicates=duplicates,
        complete=complete, judged_only=judged_only, sparse=sparse, chunk_rows=chunk_rows,
    )
    parsed = parse_all(measures, judged_only=judged_only, rel=rel, gains=gains)
    run = as_run(run, by=by, duplicates=None)  # checked on integer codes by RankedRun.build
    require_rows(run, "run")
    judgments = judgments or index_qrels(qrels, duplicates=duplicates, variants=variants)
    ranked = RankedRun.build(
        run, judgments, by=by, score_precision=score_precision, depth=depth, duplicates=duplicates,
        ties=any(m.needs_ties for m in parsed), duplicates_checked=duplicates_checked,
    )
    if coverage:
        check_coverage(ranked, judgments, complete=complete, depth=depth)

    n_variants = len(judgments.variants)
    per_variant_rows = max(int(ranked.offsets[-1]), 1)
    chunk = max(1, chunk_rows // per_variant_rows)
    variant_parts, group_parts, value_parts = [], [], []
    layouts = sorted({sparse and m.sparse for m in parsed}, reverse=True)  # judged rows only first
    for start in range(0, n_variants, chunk):
        chunk_variants = np.arange(start, min(start + chunk, n_variants))
        values = {}
        for judged_rows_only in layouts:
            variant, group, segments = _layout(ranked, judgments, chunk_variants, complete, judged_rows_only)
            for index, measure in enumerate(parsed):
                if (sparse and measure.sparse) == judged_rows_only:
                    values[index] = measure.compute(segments)
            del segments
        variant_parts.append(variant)
        group_parts.append(group)
        value_parts.append(np.column_stack([values[index] for index in range(len(parsed))]))
    variant = np.concatenate(variant_parts)
    group = np.concatenate(group_parts)
    values = np.concatenate(value_parts) if value_parts else np.empty((0, len(parsed)))
    if undefined == "zero":
        values = np.nan_to_num(values, nan=0.0)
    return _result_frame(ranked, judgments, variant, group, values, parsed, by)


def index_qrels(
    qrels: pd.DataFrame, *, duplicates: DuplicatePolicy = "error", variants: Optional[Sequence[str]] = None
) -> JudgmentIndex:
    """The qrels validated (:func:`pdeval.frames.as_qrels`) and indexed for evaluation."""
    qrels = as_qrels(qrels, duplicates=None, variants=variants)  # duplicates: JudgmentIndex.build
    require_rows(qrels, "qrels")
    return JudgmentIndex.build(qrels, duplicates)


def check_options(
    *,
    undefined: str,
    depth: Optional[int],
    score_precision: str,
    duplicates: str,
    complete: bool,
    judged_only: bool,
    sparse: bool,
    chunk_rows: int,
) -> None:
    """Refuse an option of :func:`evaluate` outside its domain before any work is done."""
    if undefined not in ("zero", "nan"):
        raise PdevalError(f"undefined must be 'zero' or 'nan', not {undefined!r}")
    if depth is not None and (not isinstance(depth, numbers.Integral) or isinstance(depth, bool) or depth < 1):
        raise PdevalError(f"depth must be a positive integer (trec_eval -M), not {depth!r}")
    if score_precision not in ("float64", "float32"):
        raise PdevalError(f"score_precision must be 'float64' or 'float32', not {score_precision!r}")
    if duplicates not in ("error", "first", "max"):
        raise PdevalError(f"duplicates must be 'error', 'first' or 'max', not {duplicates!r}")
    for name, value in (("complete", complete), ("judged_only", judged_only), ("sparse", sparse)):
        if not isinstance(value, (bool, np.bool_)):
            raise PdevalError(f"{name} must be True or False, not {value!r}")
    if not isinstance(chunk_rows, numbers.Integral) or isinstance(chunk_rows, bool) or chunk_rows < 1:
        raise PdevalError(f"chunk_rows must be a positive integer, not {chunk_rows!r}")


def _result_frame(ranked, judgments, variant, group, values, parsed, by) -> pd.DataFrame:
    n_measures = len(parsed)
    system = np.repeat(group // ranked.n_topics, n_measures)
    topic = np.repeat(group % ranked.n_topics, n_measures)
    columns = {}
    for key in ["run", *by]:
        columns[key] = ranked.systems[key].to_numpy()[system]
    variant_rows = np.repeat(variant, n_measures)
    for key in judgments.keys:
        columns[key] = judgments.variants[key].to_numpy()[variant_rows]
    columns["query_id"] = np.asarray(judgments.topics)[topic]
    names = np.array([str(m) for m in parsed], dtype=object)
    columns["measure"] = np.tile(names, len(group))
    columns["value"] = values.reshape(-1)
    frame = pd.DataFrame(columns)
    for key in ["run", "query_id", "measure"]:
        frame[key] = frame[key].astype(str)
    return frame


def summarize(result: pd.DataFrame, *, wide: bool = False) -> pd.DataFrame:
    """Per-run means over topics of a result frame.

    Groups by every key column except ``query_id`` (so ``level``/``sample`` and ``by`` keys
    are kept). Columns: the keys, ``measure``, ``value`` (the mean, NaN values skipped),
    ``topics`` (how many topics were averaged) and ``undefined`` (how many NaN values were
    skipped; 0 unless evaluated with ``undefined="nan"``). With ``wide=True`` a table with one
    column per measure. A frame of :func:`pdeval.bounds` gets the mean ``high`` and
    ``residual`` beside the mean (:func:`pdeval.bounds.summarize_bounds`).
    """
    if "value" not in result.columns and {"low", "high"} <= set(result.columns):
        from .bounds import summarize_bounds

        return summarize_bounds(result, wide=wide)
    result = as_result(result)
    keys = [k for k in result_keys(result) if k != "query_id"]
    grouped = result.groupby(keys + ["measure"], sort=False, observed=True)["value"]
    summary = grouped.agg(value="mean", topics="count", size="size").reset_index()
    summary["undefined"] = summary.pop("size") - summary["topics"]
    if int(summary["undefined"].sum()):
        warn(f"{int(summary['undefined'].sum())} undefined (NaN) per-topic value(s) skipped in the means", PdevalWarning)
    if wide:
        table = summary.pivot_table(index=keys, columns="measure", values="value", sort=False)
        table.columns.name = None
        return table.reset_index()
    return summary
