"""A run's rows ranked once in trec_eval order, and laid out as segments per qrels variant.

The run's doc ids become integer keys once (their bytes packed into 64-bit words when they
are short, :mod:`pdeval.engine.ids`; else dictionary codes), which are checked for repeats,
mapped onto the qrels' pair codes and give trec_eval's tie order; the rows are sorted once
by (system, topic, score desc, doc id desc), in parts on several threads for large runs.
:func:`layout` then looks every ranked row's judgment up for a chunk of qrels variants (a
gather, no merge) and gives the :class:`~pdeval.engine.segments.Segments` the kernels read.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from functools import cached_property
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from pdeval.common import threads
from pdeval.engine.ids import byte_order, encode, fingerprint, packed_ids
from pdeval.engine.index import JudgmentIndex, key_codes
from pdeval.engine.ranking import (
    ScorePrecision, TieOrder, group_major, group_offsets, groups_with_repeats, ranks_within, row_blocks,
    scores_for_ordering, tie_order, trec_order,
)
from pdeval.engine.segments import Segments
from pdeval.frames.canonical import DuplicatePolicy, drop_duplicates, take_rows


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
    def _tie_runs(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The first row of every run of tied scores, and the run's first and last rank."""
        starts = np.flatnonzero(self.tie_start)
        lengths = np.diff(np.append(starts, len(self.tie_start)))
        # every list starts a run: a run's list starts at the last run start that starts a list
        list_start = np.zeros(len(self.tie_start), dtype=bool)
        list_start[self.offsets[:-1][np.diff(self.offsets) > 0]] = True
        opens = list_start[starts]
        first = starts - starts[opens][np.cumsum(opens) - 1] + 1
        kind = np.int32 if len(self.tie_start) < 2**31 else np.int64
        return starts, first.astype(kind), (first + lengths - 1).astype(kind)

    def tie_spans(self, rows: Optional[np.ndarray] = None) -> np.ndarray:
        """Per sorted row (all, or the ascending ``rows``), the first and last rank of the run of
        tied scores it belongs to (columns 0 and 1)."""
        starts, first, last = self._tie_runs
        if rows is None:
            run = np.cumsum(self.tie_start, dtype=np.int64) - 1
        else:
            run = np.searchsorted(starts, rows, side="right") - 1
        return np.column_stack((first[run], last[run]))

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
        (:mod:`pdeval.common.threads`; the work is numpy and Arrow calls, which release the GIL) and
        a few parts at a time, so that the per-row arrays of ranking exist for those parts
        only. The parts are independent, since every list lies in one part, and their sorted
        rows are put together by moving whole lists; the duplicate policy is applied once,
        to the suspect rows of all parts.
        """
        # the codes are held to the end as int32 (half the bytes), each made so at once
        if by:
            system, systems = key_codes(run, ["run", *by])
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


def layout(
    ranked: RankedRun, judgments: JudgmentIndex, variants: np.ndarray, complete: bool, judged_rows_only: bool,
    tie_mode: TieOrder = "trec",
) -> tuple[np.ndarray, np.ndarray, Segments]:
    """Segments of the given variants: which (variant, group) lists, and their rows' judgments.

    Segments are laid out variant by variant, groups in order; each row's judgment is a
    gather from the judgment matrix (no merge). With ``judged_rows_only`` only the rows
    whose document some variant's qrels hold are laid out, each with its rank in the full
    list (``Segments.ranks``): rows absent from every variant's qrels cannot change the
    measures that declare ``sparse`` (they only shift ranks), so they are left implicit.

    ``tie_mode`` is the engine option ``ties``: ``"optimistic"`` / ``"pessimistic"`` reorder
    the rows inside each run of tied scores by their judgment in each variant (best first /
    last, :func:`~pdeval.engine.ranking.tie_order`); ``"expected"`` keeps trec_eval's order and
    marks the segments, whose kernels then average over the orders of each run.
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
        ties = ranked.tie_spans(ranked.known_rows if judged_rows_only else None)
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
    if tie_mode in ("optimistic", "pessimistic") and ties is not None:
        moved, ranks = tie_order(offsets, ties, rel, tie_mode == "optimistic", ranks)
        rel = rel[moved]
        info = None if info is None else {name: values[moved] for name, values in info.items()}
    entry = variant * ranked.n_topics + topic_of_group[group]
    return variant, group, Segments(rel, offsets, entry, judgments.table, ranks=ranks, info=info, ties=ties,
                                    tie_mode=tie_mode)


