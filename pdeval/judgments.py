"""Derived qrels: judgment reduction, depth-k pools, run exclusion, judged shares, pool bias.

Every function here takes plain frames and returns plain frames (MEASURES.md Part II):

* :func:`reduce` — stratified (Buckley & Voorhees 2004; Sakai 2007; He, Macdonald & Ounis
  2008), rounded (Ahlgren & Grönqvist 2008) and uniform (Yilmaz & Aslam 2008) reduction of a
  complete qrels, all levels and samples in one frame keyed by ``level`` and ``sample``
  (E0–E4).
* :func:`pool` and :func:`mixed_pool` — depth-k pools of a set of runs and the qrels derived
  from them, and depth-k plus random judgments (Yilmaz & Aslam 2008; E5, E6).
* :func:`exclude_runs` — the run exclusion rules of Buckley & Voorhees 2004 and Ahlgren &
  Grönqvist 2008 (E7).
* :func:`judged` — the share of judged documents in the top k (Ahlgren & Grönqvist 2008,
  Table 2; trec_eval's ``judged@k``).
* :func:`leave_out_pooling` — leave-one-group-out pool bias (Zobel 1998; Buckley, Dimmick,
  Soboroff & Voorhees 2007).

Randomness (E0): draw ``s`` uses ``np.random.default_rng([seed, s])`` and consumes its
numbers topic by topic in sorted topic-id order (documents in sorted doc-id order inside a
topic), so the same input and seed give the same frame on every call and platform. Nothing
loops over topics or documents: a random key is drawn per judged document, keys are ranked
within (topic, stratum) with one ``lexsort``, and a row is kept at level j when its rank is
below the topic's size for j (broadcast over all levels at once).
"""

from __future__ import annotations

import numbers
import warnings
from fractions import Fraction
from typing import Callable, Iterable, Literal, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from .errors import PdevalError, PdevalWarning, SchemaError
from .evaluation import evaluate, evaluate_frames
from .frames import as_qrels, as_run, variant_keys
from .progress import progress_bar
from .ranking import ScorePrecision, group_offsets, rank_run, ranks_within

__all__ = [
    "LEVEL_GRIDS",
    "DEPTH_GRIDS",
    "reduce",
    "reduction_sizes",
    "skipped_topics",
    "pool",
    "mixed_pool",
    "exclude_runs",
    "judged",
    "leave_out_pooling",
]

#: Named grids of reduction levels (percent of the judgments kept), by paper.
#:
#: * ``sakai2007`` — Sakai 2007, Section 5: j in {100, 90, 70, 50, 30, 10} (100 = full data).
#: * ``he2008`` — He, Macdonald & Ounis 2008, Section 5: the 16 degrees of completeness
#:   1, 2, 3, 4, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90 (with 10 samples each).
#: * ``yilmaz2008`` — Yilmaz & Aslam 2008, Section 3.1: "p ranging from 1 to 100%" (every
#:   integer p; their curves, e.g. Figs. 20-24, are drawn over this range, 10 samples per p).
#: * ``yilmaz2008_figures`` — the percentages of their scatter plots (Figs. 1, 3, 5, 7, ...):
#:   30, 10 and 5.
#:
#: Buckley & Voorhees 2004's own level list is not given in the seed texts (Sakai 2007 and
#: Ahlgren & Grönqvist 2008 only say they follow it), and Ahlgren & Grönqvist's grid V is only
#: known through single levels (95, 35, 25, 10, 9, 4; MEASURES.md Part III item 9), so neither
#: is listed.
LEVEL_GRIDS: dict[str, tuple[int, ...]] = {
    "sakai2007": (100, 90, 70, 50, 30, 10),
    "he2008": (1, 2, 3, 4, 5, 10, 15, 20, 25, 30, 40, 50, 60, 70, 80, 90),
    "yilmaz2008": tuple(range(1, 101)),
    "yilmaz2008_figures": (30, 10, 5),
}

#: Named grids of pool depths (Yilmaz & Aslam 2008): the depths of their mixed pools
#: (Section 4.5.3, Fig. 22) and of their shallow-pool scatter plots (depth 30, 8, 4 ≈ 30%,
#: 10% and 5% of the TREC 8 judgments).
DEPTH_GRIDS: dict[str, tuple[int, ...]] = {
    "yilmaz2008_mixed": (1, 2, 3, 4, 5, 10, 20, 30, 40, 50),
    "yilmaz2008_figures": (30, 8, 4),
}

Method = Literal["stratified", "rounded", "uniform"]
RemovedAs = Literal["pooled", "absent"]
SeedLike = Union[int, np.integer, np.random.Generator]

_REL, _NON, _NEG = 0, 1, 2  # judgment class of a qrels row (relevant, nonrelevant, negative)


# ---------------------------------------------------------------------------------------------
# validation helpers


def _is_int(value: object) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def _check_int(name: str, value: object, minimum: int) -> int:
    if not _is_int(value) or int(value) < minimum:
        raise PdevalError(f"{name} must be an integer >= {minimum}, not {value!r}")
    return int(value)


def _check_choice(name: str, value: object, choices: Sequence[str]) -> None:
    if value not in choices:
        raise PdevalError(f"{name} must be one of {', '.join(repr(c) for c in choices)}, not {value!r}")


def _base_seed(seed: SeedLike) -> int:
    """The integer seed; a ``Generator`` gives one integer drawn from it (so it advances)."""
    if isinstance(seed, np.random.Generator):
        return int(seed.integers(0, 2**63 - 1))
    if not _is_int(seed) or int(seed) < 0:
        raise PdevalError(f"seed must be a non-negative integer or a numpy Generator, not {seed!r}")
    return int(seed)


def _parse_levels(levels: Union[str, float, Iterable[float]]) -> list[Fraction]:
    """Levels as exact fractions of a percent, validated to lie in (0, 100] and be distinct."""
    if isinstance(levels, str):
        key = levels.lower()
        if key not in LEVEL_GRIDS:
            raise PdevalError(
                f"unknown level grid {levels!r}; known grids: {', '.join(sorted(LEVEL_GRIDS))}"
            )
        levels = LEVEL_GRIDS[key]
    elif isinstance(levels, numbers.Real):
        levels = [levels]
    parsed = []
    for value in levels:
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise PdevalError(f"levels must be numbers (percent) in (0, 100], got {value!r}")
        if _is_int(value):
            fraction = Fraction(int(value))
        else:
            if not np.isfinite(float(value)):
                raise PdevalError(f"levels must be numbers (percent) in (0, 100], got {value!r}")
            # the decimal the user wrote (0.1 -> 1/10), not the nearest binary float
            fraction = Fraction(repr(float(value)))
        if not 0 < fraction <= 100:
            raise PdevalError(f"levels are percents in (0, 100], got {value!r}")
        parsed.append(fraction)
    if not parsed:
        raise PdevalError("levels is empty; give at least one percent in (0, 100]")
    if len(set(parsed)) != len(parsed):
        raise PdevalError(f"levels repeat a value: {list(levels)}")
    return parsed


def _level_values(levels: Sequence[Fraction]) -> np.ndarray:
    """The ``level`` column values: int64 when every level is whole, else float64."""
    if all(level.denominator == 1 for level in levels):
        return np.array([int(level) for level in levels], dtype=np.int64)
    return np.array([float(level) for level in levels], dtype=np.float64)


def _parse_depths(depth: Union[int, str, Iterable[int]], name: str = "depth") -> tuple[list[int], bool]:
    """Depths as a list of distinct positive ints; the flag says whether a list was given."""
    if isinstance(depth, str):
        if depth.lower() not in DEPTH_GRIDS:
            raise PdevalError(f"unknown depth grid {depth!r}; known grids: {', '.join(sorted(DEPTH_GRIDS))}")
        depth = DEPTH_GRIDS[depth.lower()]
    if _is_int(depth):
        return [_check_int(name, depth, 1)], False
    try:
        values = [_check_int(name, d, 1) for d in depth]  # type: ignore[union-attr]
    except TypeError:
        raise PdevalError(f"{name} must be a positive integer or a list of them, not {depth!r}") from None
    if not values:
        raise PdevalError(f"{name} is empty; give at least one positive integer")
    if len(set(values)) != len(values):
        raise PdevalError(f"{name} repeats a value: {values}")
    return values, True


def _plain_qrels(qrels: pd.DataFrame, function: str) -> pd.DataFrame:
    """A canonical qrels frame without variant keys, sorted by (query_id, doc_id)."""
    q = as_qrels(qrels)
    keys = variant_keys(q)
    if keys:
        raise SchemaError(
            f"{function} takes one complete qrels, but this frame has variant column(s) {keys}; "
            f"select one variant first (e.g. qrels[qrels.level == 100].drop(columns={keys!r}))."
        )
    q = q[["query_id", "doc_id", "relevance"]]
    topic, _ = pd.factorize(q["query_id"], sort=True)
    doc, _ = pd.factorize(q["doc_id"], sort=True)
    order = np.lexsort((doc, topic))
    return q.iloc[order].reset_index(drop=True)


def _select_runs(run: pd.DataFrame, runs: Optional[Iterable[str]]) -> pd.DataFrame:
    if runs is None:
        return run
    if isinstance(runs, str):
        runs = [runs]
    wanted = list(runs)
    present = set(run["run"].unique())
    missing = [r for r in wanted if r not in present]
    if missing:
        raise PdevalError(
            f"runs {missing} are not in the run frame; it has {len(present)} run(s), "
            f"e.g. {sorted(present)[:5]}"
        )
    return run.loc[run["run"].isin(wanted)]


def _positions(
    keys: pd.DataFrame, query_id: pd.Series, doc_id: pd.Series
) -> np.ndarray:
    """Row position in ``keys`` of every (query_id, doc_id) pair, -1 when absent."""
    index = pd.MultiIndex.from_arrays([keys["query_id"].to_numpy(), keys["doc_id"].to_numpy()])
    wanted = pd.MultiIndex.from_arrays([query_id.to_numpy(), doc_id.to_numpy()])
    return index.get_indexer(wanted)


def _key_bits(n_groups: int) -> int:
    """Bits left for a random key once a group code below ``n_groups`` sits above it in an int64."""
    return 62 - max(1, int(n_groups).bit_length())


def _random_keys(rng: np.random.Generator, n: int, bits: int) -> np.ndarray:
    """``n`` uniform random integers in ``[0, 2**bits)``, one per document (the random order)."""
    return rng.integers(0, 1 << bits, size=n, dtype=np.int64)


def _ranks_within(group: np.ndarray, keys: np.ndarray, bits: int) -> np.ndarray:
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


# ---------------------------------------------------------------------------------------------
# sizes


def reduction_sizes(
    count: Union[int, np.ndarray],
    level: Union[float, Fraction],
    *,
    method: Literal["stratified", "rounded"] = "stratified",
    minimum: int = 1,
) -> np.ndarray:
    """How many of ``count`` judgments of one stratum a reduction to ``level`` percent keeps.

    * ``stratified`` (Buckley & Voorhees 2004; Sakai 2007, E1):
      ``min(count, max(minimum, floor(count * j / 100)))``, computed in integers as
      ``(count * j) // 100``.
    * ``rounded`` (Ahlgren & Grönqvist 2008, E2): ``min(count, max(minimum, floor(x + 0.5)))``
      with ``x = count * a / 100``, i.e. ``(2 * a * count + 100) // 200``.

    The minimums are 1 for the relevant and 10 for the nonrelevant stratum in the papers; the
    cap at ``count`` means a stratum never grows and an empty stratum stays empty. Levels that
    are not whole percents are handled exactly as fractions.

    >>> reduction_sizes(7, 50), reduction_sizes(7, 50, method="rounded")
    (array(3), array(4))
    """
    fraction = level if isinstance(level, Fraction) else _parse_levels([level])[0]
    num, den = fraction.numerator, fraction.denominator
    count = np.asarray(count, dtype=np.int64)
    if method == "stratified":
        raw = (count * num) // (100 * den)
    elif method == "rounded":
        raw = (2 * count * num + 100 * den) // (200 * den)
    else:
        raise PdevalError(f"method must be 'stratified' or 'rounded', not {method!r}")
    return np.minimum(count, np.maximum(minimum, raw))


def _uniform_sizes(judged_count: np.ndarray, level: Fraction) -> np.ndarray:
    """Yilmaz & Aslam 2008 sample size ``max(1, floor(p * |J| / 100 + 0.5))`` (E4, Part III 7)."""
    num, den = level.numerator, level.denominator
    raw = (2 * judged_count * num + 100 * den) // (200 * den)
    return np.minimum(judged_count, np.maximum(1, raw))


# ---------------------------------------------------------------------------------------------
# reduce


class _Prepared:
    """A qrels sorted by (topic, doc), with per-row classes and per-topic stratum sizes."""

    def __init__(self, q: pd.DataFrame, rel: int):
        self.q = q
        self.relevance = q["relevance"].to_numpy(dtype=np.int64)
        topic_codes, topics = pd.factorize(q["query_id"], sort=True)
        self.topic = topic_codes.astype(np.int64)
        self.topics = pd.Index(topics)
        self.n_topics = len(self.topics)
        cls = np.full(len(q), _NEG, dtype=np.int64)
        cls[self.relevance >= 0] = _NON
        cls[self.relevance >= rel] = _REL
        self.cls = cls
        self.judged_rows = np.flatnonzero(cls != _NEG)
        self.negative_rows = np.flatnonzero(cls == _NEG)
        self.R = np.bincount(self.topic[cls == _REL], minlength=self.n_topics)
        self.N = np.bincount(self.topic[cls == _NON], minlength=self.n_topics)
        # group codes are at most 2 * topics (topic, stratum); keys take the remaining bits
        self.key_bits = _key_bits(2 * self.n_topics + 2)


def _emit(
    prepared: _Prepared,
    keep_judged: np.ndarray,
    removed_as: RemovedAs,
    drop_topic: Optional[np.ndarray] = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Row indices and relevance values of one derived qrels.

    ``keep_judged`` flags the judged rows (``prepared.judged_rows``) whose judgment is kept.
    Negative input entries always stay; removed judgments become -1 or are dropped; topics
    flagged in ``drop_topic`` lose all their rows.
    """
    n = len(prepared.q)
    keep = np.ones(n, dtype=bool)
    relevance = prepared.relevance.copy()
    removed = prepared.judged_rows[~keep_judged]
    if removed_as == "pooled":
        relevance[removed] = -1
    else:
        keep[removed] = False
    if drop_topic is not None and drop_topic.any():
        keep &= ~drop_topic[prepared.topic]
    rows = np.flatnonzero(keep)
    return rows, relevance[rows]


def _assemble(
    q: pd.DataFrame,
    parts: list[tuple[object, int, np.ndarray, np.ndarray]],
    first: str,
    level_dtype: np.dtype,
) -> pd.DataFrame:
    """One frame ``first, sample, query_id, doc_id, relevance`` from per-variant parts."""
    if parts:
        rows = np.concatenate([p[2] for p in parts])
        relevance = np.concatenate([p[3] for p in parts])
        lengths = [len(p[2]) for p in parts]
        firsts = np.repeat(np.array([p[0] for p in parts], dtype=level_dtype), lengths)
        samples = np.repeat(np.array([p[1] for p in parts], dtype=np.int64), lengths)
    else:
        rows = np.zeros(0, dtype=np.int64)
        relevance = np.zeros(0, dtype=np.int64)
        firsts = np.zeros(0, dtype=level_dtype)
        samples = np.zeros(0, dtype=np.int64)
    return pd.DataFrame(
        {
            first: firsts,
            "sample": samples,
            "query_id": q["query_id"].take(rows).reset_index(drop=True),
            "doc_id": q["doc_id"].take(rows).reset_index(drop=True),
            "relevance": relevance.astype(np.int64),
        }
    )


def reduce(
    qrels: pd.DataFrame,
    levels: Union[str, float, Iterable[float]],
    *,
    method: Method = "stratified",
    samples: int = 1,
    seed: SeedLike = 0,
    nested: Optional[bool] = None,
    removed_as: RemovedAs = "pooled",
    min_rel: int = 1,
    min_nonrel: int = 10,
    rel: int = 1,
    on_fail: Literal["raise", "skip"] = "raise",
    max_tries: int = 10000,
    progress: bool = False,
) -> pd.DataFrame:
    """Reduced versions of a complete qrels: every level and sample in one frame.

    Returns a qrels frame with columns ``level, sample, query_id, doc_id, relevance`` (level and
    sample int64; level float64 only if a level is not a whole percent), ordered by level (in
    the order given), sample, query_id, doc_id. Pass it straight to ``evaluate``: ``level`` and
    ``sample`` are variant keys, so one call evaluates the whole experiment.

    Parameters
    ----------
    qrels
        The complete qrels ``Q*`` (no variant columns). ``Rel_t`` = documents with
        ``relevance >= rel``, ``Non_t`` = ``0 <= relevance < rel``; negative entries are
        neither, are never sampled and stay negative in every variant (E0).
    levels
        Percents in (0, 100], or the name of a grid in :data:`LEVEL_GRIDS`.
    method
        * ``"stratified"`` — Buckley & Voorhees 2004 as used by Sakai 2007 and He, Macdonald
          & Ounis 2008 (E1, E3): keep a random ``R_j``-subset of ``Rel_t`` and ``N_j``-subset of
          ``Non_t`` with ``R_j = min(R, max(min_rel, floor(R*j/100)))`` and
          ``N_j = min(N, max(min_nonrel, floor(N*j/100)))`` (truncation, ``(R*j)//100``).
        * ``"rounded"`` — Ahlgren & Grönqvist 2008 (E2): the same with round half up,
          ``floor(R*a/100 + 0.5) = (2*a*R + 100)//200``.
        * ``"uniform"`` — Yilmaz & Aslam 2008 (E4): a uniform random subset of the judged set
          ``J_t`` of size ``m = max(1, floor(p*|J_t|/100 + 0.5))``, redrawn while it holds no
          relevant document (at most ``max_tries`` draws). ``min_rel``/``min_nonrel`` and
          ``nested`` do not apply.
    samples, seed
        Draw ``s`` (0..samples-1) uses ``np.random.default_rng([seed, s])`` and consumes one
        uniform key per judged document, topic by topic in sorted topic-id order; a stratum's
        random permutation is the order of its keys. A ``numpy.random.Generator`` as ``seed``
        contributes one integer drawn from it.
    nested
        Stratified methods (default ``True``, Sakai 2007): one permutation of ``Rel_t`` and one
        of ``Non_t`` per (topic, sample), and level j keeps the first ``R_j`` / ``N_j`` of them,
        so lower levels are subsets of higher ones. With ``False`` every (level, sample) is an
        independent draw from ``np.random.default_rng([seed, s, a, b])`` where ``j = a/b`` in
        lowest terms (``[seed, s, j, 1]`` for whole percents), which makes a level's sample
        independent of the other levels requested. Uniform samples always use these
        per-level generators (they are not nested, E4); ``nested=True`` with ``"uniform"``
        raises.
    removed_as
        ``"pooled"`` (default): removed judgments become -1 (pooled but unjudged), which infAP,
        subAP and indAP need. ``"absent"``: their rows are dropped.
    min_rel, min_nonrel
        The minimums of the stratified methods (Buckley & Voorhees' 1 and 10).
    rel
        The relevance threshold θ that defines ``Rel_t`` (default 1).
    on_fail
        Uniform sampling only: what to do with a topic that has no relevant document after
        ``max_tries`` draws: ``"raise"`` a :class:`PdevalError`, or ``"skip"`` it in that
        (level, sample). Topics with ``R = 0`` cannot succeed and are always skipped up front.
    progress
        Show a tqdm progress bar over the draws.

    Skipped topics (uniform only) are dropped from the derived qrels of the variants where they
    were skipped, a :class:`PdevalWarning` lists them, and ``result.attrs["skipped_topics"]``
    holds one record (``level, sample, query_id, reason``) per skipped topic and variant
    (:func:`skipped_topics` turns it into a frame). For the stratified methods the list is
    empty: every topic is kept (a topic with ``R = 0`` keeps ``R_j = 0``).

    With ``method="stratified"`` level 100 reproduces ``Q*`` exactly.
    """
    _check_choice("method", method, ("stratified", "rounded", "uniform"))
    _check_choice("removed_as", removed_as, ("pooled", "absent"))
    _check_choice("on_fail", on_fail, ("raise", "skip"))
    samples = _check_int("samples", samples, 1)
    min_rel = _check_int("min_rel", min_rel, 0)
    min_nonrel = _check_int("min_nonrel", min_nonrel, 0)
    rel = _check_int("rel", rel, 1)
    max_tries = _check_int("max_tries", max_tries, 1)
    if nested is None:
        nested = method != "uniform"
    if method == "uniform" and nested:
        raise PdevalError(
            "uniform sampling is not nested across levels (Yilmaz & Aslam 2008; MEASURES.md E4); "
            "leave nested unset or pass nested=False"
        )
    parsed = _parse_levels(levels)
    level_values = _level_values(parsed)
    base = _base_seed(seed)
    prepared = _Prepared(_plain_qrels(qrels, "reduce"), rel)

    parts: list[tuple[object, int, np.ndarray, np.ndarray]] = []
    skipped: list[dict] = []
    if method == "uniform":
        _reduce_uniform(prepared, parsed, level_values, samples, base, removed_as, on_fail,
                        max_tries, progress, parts, skipped)
    else:
        _reduce_stratified(prepared, parsed, level_values, method, samples, base, nested,
                           removed_as, min_rel, min_nonrel, progress, parts)

    # order: level in the given order, then sample (rows inside a part are already sorted)
    position = {value: i for i, value in enumerate(level_values.tolist())}
    parts.sort(key=lambda p: (position[p[0]], p[1]))
    result = _assemble(prepared.q, parts, "level", level_values.dtype)
    result.attrs["skipped_topics"] = skipped
    if skipped:
        frame = pd.DataFrame(skipped)
        per_topic = frame.groupby("query_id", sort=True).size()
        shown = ", ".join(f"{t} ({n})" for t, n in per_topic.head(10).items())
        more = "" if len(per_topic) <= 10 else f", ... ({len(per_topic) - 10} more)"
        warnings.warn(
            f"reduce(method='uniform') skipped {len(per_topic)} topic(s) in {len(frame)} "
            f"(level, sample) variant(s); they are absent from those variants' qrels. Topic "
            f"(variants): {shown}{more}. Reasons: "
            + "; ".join(f"{r}: {n}" for r, n in frame["reason"].value_counts().items())
            + ". See result.attrs['skipped_topics'].",
            PdevalWarning,
            stacklevel=2,
        )
    return result


def _reduce_stratified(
    prepared: _Prepared,
    parsed: list[Fraction],
    level_values: np.ndarray,
    method: str,
    samples: int,
    base: int,
    nested: bool,
    removed_as: RemovedAs,
    min_rel: int,
    min_nonrel: int,
    progress: bool,
    parts: list,
) -> None:
    judged = prepared.judged_rows
    topic = prepared.topic[judged]
    cls = prepared.cls[judged]
    group = topic * 2 + cls  # (topic, stratum), in sorted topic order
    bits = prepared.key_bits
    # sizes[l, group]: how many of the stratum a level keeps (E1 / E2)
    sizes = np.empty((len(parsed), 2 * prepared.n_topics), dtype=np.int64)
    for i, level in enumerate(parsed):
        sizes[i, 0::2] = reduction_sizes(prepared.R, level, method=method, minimum=min_rel)
        sizes[i, 1::2] = reduction_sizes(prepared.N, level, method=method, minimum=min_nonrel)
    limit = sizes[:, group]  # (levels, judged rows)

    steps = progress_bar(range(samples), enabled=progress, total=samples, desc=f"reduce ({method})")
    for s in steps:
        if nested:
            keys = _random_keys(np.random.default_rng([base, s]), len(judged), bits)
            rank = _ranks_within(group, keys, bits)
            keep = rank[None, :] < limit
        else:
            keep = np.empty(limit.shape, dtype=bool)
            for i, level in enumerate(parsed):
                rng = np.random.default_rng([base, s, level.numerator, level.denominator])
                keep[i] = _ranks_within(group, _random_keys(rng, len(judged), bits), bits) < limit[i]
        for i, value in enumerate(level_values.tolist()):
            rows, relevance = _emit(prepared, keep[i], removed_as)
            parts.append((value, s, rows, relevance))


def _reduce_uniform(
    prepared: _Prepared,
    parsed: list[Fraction],
    level_values: np.ndarray,
    samples: int,
    base: int,
    removed_as: RemovedAs,
    on_fail: str,
    max_tries: int,
    progress: bool,
    parts: list,
    skipped: list,
) -> None:
    judged = prepared.judged_rows
    topic = prepared.topic[judged]
    is_rel = prepared.cls[judged] == _REL
    bits = prepared.key_bits
    hopeless = prepared.R == 0  # no draw can hold a relevant document: skip up front
    active_rows = np.flatnonzero(~hopeless[topic])  # positions within `judged`
    active_topic = topic[active_rows]
    active_rel = is_rel[active_rows]
    J = prepared.R + prepared.N
    hopeless_ids = prepared.topics[hopeless].tolist()

    combos = [(s, i) for s in range(samples) for i in range(len(parsed))]
    for s, i in progress_bar(combos, enabled=progress, total=len(combos), desc="reduce (uniform)"):
        level = parsed[i]
        value = level_values[i].item()
        m = _uniform_sizes(J, level)
        rng = np.random.default_rng([base, s, level.numerator, level.denominator])
        keys = _random_keys(rng, len(active_rows), bits)
        selected = _ranks_within(active_topic, keys, bits) < m[active_topic]
        has_rel = np.bincount(active_topic[selected & active_rel], minlength=prepared.n_topics) > 0
        failing = ~has_rel & ~hopeless
        # redraw only the failing topics; `sub` holds their rows (positions in active_*)
        sub = np.flatnonzero(failing[active_topic])
        tries = 1
        while len(sub) and tries < max_tries:
            sub_topic = active_topic[sub]
            chosen = _ranks_within(sub_topic, _random_keys(rng, len(sub), bits), bits) < m[sub_topic]
            selected[sub] = chosen
            success = np.bincount(sub_topic[chosen & active_rel[sub]], minlength=prepared.n_topics) > 0
            failing &= ~success
            sub = sub[failing[sub_topic]]
            tries += 1
        failed_ids = prepared.topics[failing].tolist()
        if failed_ids and on_fail == "raise":
            raise PdevalError(
                f"uniform sampling at level {value}, sample {s}: {len(failed_ids)} topic(s) had no "
                f"relevant document in any of {max_tries} draws: {failed_ids[:10]}. Pass "
                f"on_fail='skip' to drop them from that variant, or raise max_tries."
            )
        keep_judged = np.zeros(len(judged), dtype=bool)
        keep_judged[active_rows[selected]] = True
        drop = hopeless | failing
        rows, relevance = _emit(prepared, keep_judged, removed_as, drop_topic=drop)
        parts.append((value, s, rows, relevance))
        for t in hopeless_ids:
            skipped.append({"level": value, "sample": s, "query_id": t,
                            "reason": "no relevant judgment (R = 0)"})
        for t in failed_ids:
            skipped.append({"level": value, "sample": s, "query_id": t,
                            "reason": f"no relevant document in {max_tries} draws"})


def skipped_topics(result: pd.DataFrame) -> pd.DataFrame:
    """The topics a reduction skipped, as a frame ``level, sample, query_id, reason``.

    Reads ``result.attrs["skipped_topics"]`` as set by :func:`reduce` (empty when nothing was
    skipped). ``attrs`` do not survive every pandas operation, so call this on the frame
    :func:`reduce` returned.
    """
    records = result.attrs.get("skipped_topics")
    if records is None:
        raise PdevalError("this frame carries no 'skipped_topics' record; pass the frame reduce() returned")
    return pd.DataFrame(records, columns=["level", "sample", "query_id", "reason"])


# ---------------------------------------------------------------------------------------------
# pools


def _best_ranks(
    run: pd.DataFrame,
    max_depth: int,
    runs: Optional[Iterable[str]],
    score_precision: ScorePrecision,
) -> pd.DataFrame:
    """``query_id, doc_id, best_rank``: the best trec_eval rank of each document over the runs."""
    r = _select_runs(as_run(run), runs)
    ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], score_precision=score_precision,
                      depth=max_depth)
    best = (
        ranked.groupby(["query_id", "doc_id"], sort=True, observed=True)["rank"].min()
        .rename("best_rank").reset_index()
    )
    return best


def _report_unjudged_pool(best: pd.DataFrame, in_qrels: np.ndarray, depths: list[int],
                          function: str) -> dict[int, int]:
    """Count pooled documents absent from the qrels per depth; warn when there are any."""
    best_rank = best["best_rank"].to_numpy()
    counts = {k: int(((best_rank <= k) & ~in_qrels).sum()) for k in depths}
    if any(counts.values()):
        shown = ", ".join(f"depth {k}: {n}" for k, n in counts.items() if n)
        topics = best.loc[~in_qrels & (best_rank <= max(depths)), "query_id"].nunique()
        warnings.warn(
            f"{function}: pooled documents absent from the qrels ({shown}; {topics} topic(s)) stay "
            f"absent, since no judgment can be invented. See result.attrs['pooled_not_in_qrels'].",
            PdevalWarning,
            stacklevel=3,
        )
    return counts


def pool(
    run: pd.DataFrame,
    depth: Union[int, str, Iterable[int]],
    *,
    runs: Optional[Iterable[str]] = None,
    qrels: Optional[pd.DataFrame] = None,
    score_precision: ScorePrecision = "float64",
    removed_as: RemovedAs = "pooled",
) -> pd.DataFrame:
    """The depth-k pool of a set of runs, or the qrels derived from it (MEASURES.md E5).

    ``P_k(t) = ∪_{s ∈ S} {first k documents of s for t}``, with trec_eval's ranking (score
    descending, doc id descending; the run's ``rank`` column is ignored). ``S`` = the runs named
    in ``runs`` (default: every run of the frame). Yilmaz & Aslam 2008 use such shallow pools of
    a depth-100 pool (depth 30, 8 and 4 ≈ 30%, 10% and 5% of the TREC 8 judgments).

    Without ``qrels`` the result is the pool itself, ``query_id, doc_id`` (sorted). With
    ``qrels`` (the complete ``Q*``) it is the derived qrels over the same (query_id, doc_id)
    pairs as ``Q*``: an entry keeps its level if its document is in ``P_k(t)`` and becomes -1
    otherwise (``removed_as="absent"`` drops it instead); negative entries stay negative. Pooled
    documents absent from ``Q*`` stay absent — no judgment is invented — and are counted per
    depth in ``result.attrs["pooled_not_in_qrels"]`` (``{depth: count}``) with a
    :class:`PdevalWarning`.

    ``depth`` is a positive int, a list of them, or a name in :data:`DEPTH_GRIDS`; a list adds
    an int column ``depth`` as the first column, a variant key for ``evaluate``.
    """
    _check_choice("removed_as", removed_as, ("pooled", "absent"))
    depths, as_list = _parse_depths(depth)
    best = _best_ranks(run, max(depths), runs, score_precision)
    best_rank = best["best_rank"].to_numpy()
    if qrels is None:
        pieces = []
        for k in depths:
            rows = np.flatnonzero(best_rank <= k)
            piece = best.iloc[rows][["query_id", "doc_id"]]
            if as_list:
                piece.insert(0, "depth", np.int64(k))
            pieces.append(piece)
        return pd.concat(pieces, ignore_index=True)

    q = _plain_qrels(qrels, "pool")
    in_qrels = _positions(q, best["query_id"], best["doc_id"]) >= 0
    counts = _report_unjudged_pool(best, in_qrels, depths, "pool")
    position = _positions(best, q["query_id"], q["doc_id"])
    rank_of_entry = np.where(position >= 0, best_rank[np.maximum(position, 0)], np.iinfo(np.int64).max)
    relevance = q["relevance"].to_numpy(dtype=np.int64)
    negative = relevance < 0
    parts = []
    for k in depths:
        pooled = rank_of_entry <= k
        if removed_as == "pooled":
            rows = np.arange(len(q))
            values = np.where(pooled | negative, relevance, -1)
        else:
            rows = np.flatnonzero(pooled | negative)
            values = relevance[rows]
        parts.append((k, 0, rows, values))
    result = _assemble(q, parts, "depth", np.dtype(np.int64)).drop(columns="sample")
    if not as_list:
        result = result.drop(columns="depth")
    result.attrs["pooled_not_in_qrels"] = counts
    return result


def mixed_pool(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    depths: Union[int, str, Iterable[int]] = DEPTH_GRIDS["yilmaz2008_mixed"],
    *,
    samples: int = 1,
    seed: SeedLike = 0,
    runs: Optional[Iterable[str]] = None,
    score_precision: ScorePrecision = "float64",
    removed_as: RemovedAs = "pooled",
    progress: bool = False,
) -> pd.DataFrame:
    """Depth-k pool plus as many random judgments from outside it (Yilmaz & Aslam 2008, E6).

    For each depth k and topic t: ``P_k(t)`` as in :func:`pool`, ``m_t = |P_k(t) ∩ J_t|``
    (judged documents of ``Q*`` in the pool) and a uniform random sample of
    ``min(m_t, |J_t \\ P_k(t)|)`` documents of ``J_t \\ P_k(t)`` (judged documents of the
    complete pool outside the depth-k pool). The union keeps its judgments; every other judged
    document becomes -1 (or is dropped with ``removed_as="absent"``); negative entries stay.

    Returns ``depth, sample, query_id, doc_id, relevance``. Draw ``s`` uses
    ``np.random.default_rng([seed, s])``: one uniform key per judged document (topics in sorted
    order), and depth k takes the outside documents with the smallest keys, so a depth's sample
    does not depend on which other depths are requested. Pooled documents absent from ``Q*`` are
    reported as in :func:`pool`.
    """
    _check_choice("removed_as", removed_as, ("pooled", "absent"))
    depth_list, _ = _parse_depths(depths, "depths")
    samples = _check_int("samples", samples, 1)
    base = _base_seed(seed)
    best = _best_ranks(run, max(depth_list), runs, score_precision)
    prepared = _Prepared(_plain_qrels(qrels, "mixed_pool"), 1)
    q = prepared.q
    in_qrels = _positions(q, best["query_id"], best["doc_id"]) >= 0
    counts = _report_unjudged_pool(best, in_qrels, depth_list, "mixed_pool")
    position = _positions(best, q["query_id"], q["doc_id"])
    best_rank = best["best_rank"].to_numpy()
    rank_of_entry = np.where(position >= 0, best_rank[np.maximum(position, 0)], np.iinfo(np.int64).max)

    judged = prepared.judged_rows
    topic = prepared.topic[judged]
    judged_rank = rank_of_entry[judged]
    bits = prepared.key_bits
    parts = []
    for s in progress_bar(range(samples), enabled=progress, total=samples, desc="mixed_pool"):
        keys = _random_keys(np.random.default_rng([base, s]), len(judged), bits)
        for k in depth_list:
            inside = judged_rank <= k
            m = np.bincount(topic[inside], minlength=prepared.n_topics)
            # rank the outside documents by key within their topic; group inside ones apart
            group = topic * 2 + inside
            rank = _ranks_within(group, keys, bits)
            keep = inside | (rank < m[topic])
            rows, relevance = _emit(prepared, keep, removed_as)
            parts.append((k, s, rows, relevance))
    result = _assemble(q, parts, "depth", np.dtype(np.int64))
    result.attrs["pooled_not_in_qrels"] = counts
    return result


# ---------------------------------------------------------------------------------------------
# run exclusion and judged shares


def exclude_runs(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    max_docs: int = 1000,
    min_share: float = 0.95,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Apply the run exclusion rules of Buckley & Voorhees 2004 / Ahlgren & Grönqvist 2008 (E7).

    With ``T`` the qrels topics, ``M = max_docs`` and ``ret_s(t) = min(M, documents of s for
    t)``, a run is excluded if

    1. ``Σ_{t ∈ T} ret_s(t) < min_share · |T| · M`` (rule ``"too_few_documents"``; strict, so
       with 50 topics 47,500 documents are kept and 47,499 excluded), or
    2. ``ret_s(t) = 0`` for some ``t ∈ T`` (rule ``"empty_topic"``).

    Run rows for topics outside ``T`` are ignored by both rules (and kept in the output). The
    comparison is exact (``min_share`` is read as the decimal written).

    Returns ``(kept, excluded)``: the canonical run frame restricted to the kept runs, and a
    frame ``run, rule, detail`` with one row per rule an excluded run broke.
    """
    max_docs = _check_int("max_docs", max_docs, 1)
    if isinstance(min_share, bool) or not isinstance(min_share, numbers.Real) or not 0 <= min_share <= 1:
        raise PdevalError(f"min_share must be a number in [0, 1], not {min_share!r}")
    share = Fraction(repr(float(min_share))) if not _is_int(min_share) else Fraction(int(min_share))
    r = as_run(run)
    topics = pd.Index(pd.unique(as_qrels(qrels)["query_id"])).sort_values()
    if len(topics) == 0:
        raise PdevalError("the qrels hold no topic; the exclusion rules need the qrels topics")
    run_codes, run_names = pd.factorize(r["run"], sort=True)
    topic_codes = topics.get_indexer(r["query_id"])
    inside = topic_codes >= 0
    n_runs, n_topics = len(run_names), len(topics)
    counts = np.bincount(run_codes[inside] * n_topics + topic_codes[inside],
                         minlength=n_runs * n_topics).reshape(n_runs, n_topics)
    ret = np.minimum(counts, max_docs)
    total = ret.sum(axis=1)
    # total < share * |T| * M, in integers
    too_few = total * share.denominator < share.numerator * n_topics * max_docs
    empty = (ret == 0).any(axis=1)
    threshold = share * n_topics * max_docs
    threshold_text = str(threshold.numerator) if threshold.denominator == 1 else f"{float(threshold):g}"
    records = []
    for i in np.flatnonzero(too_few | empty):
        if too_few[i]:
            records.append((run_names[i], "too_few_documents",
                            f"{int(total[i])} documents over {n_topics} topics (at most {max_docs} "
                            f"counted per topic) < {min_share} x {n_topics} x {max_docs} = {threshold_text}"))
        if empty[i]:
            missing = topics[ret[i] == 0].tolist()
            shown = ", ".join(map(str, missing[:10])) + (", ..." if len(missing) > 10 else "")
            records.append((run_names[i], "empty_topic",
                            f"no documents for {len(missing)} of {n_topics} topics: {shown}"))
    excluded = pd.DataFrame(records, columns=["run", "rule", "detail"])
    excluded_names = set(excluded["run"])
    kept = r.loc[~r["run"].isin(excluded_names)].reset_index(drop=True)
    return kept, excluded


def judged(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    k: Union[int, Iterable[int]] = (1, 10, 100, 1000),
    *,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Share of judged documents in the top k, per run and topic (the measure ``Judged@k``).

    ``judged@k = |{d at ranks 1..k : d judged (relevance >= 0)}| / min(k, n)`` with n the
    number of documents the run retrieved for the topic (ir_measures' ``Judged@k``).
    Pooled-but-unjudged entries (-1) do not count as judged. Ahlgren & Grönqvist 2008
    (Table 2) report its complement, the share of unjudged documents down to a rank.

    Topics of the run absent from the qrels are ignored (MEASURES.md 0.5). Returns a tidy frame
    ``run, query_id, k, judged`` sorted by run, query_id, k.
    """
    ks, _ = _parse_depths(k, "k")
    names = {f"Judged@{cutoff}": cutoff for cutoff in ks}
    result = evaluate(run, _plain_qrels(qrels, "judged"), list(names), score_precision=score_precision)
    return (
        result.assign(k=result["measure"].map(names).astype(np.int64))
        .rename(columns={"value": "judged"})[["run", "query_id", "k", "judged"]]
        .sort_values(["run", "query_id", "k"], kind="stable", ignore_index=True)
    )


# ---------------------------------------------------------------------------------------------
# leave-one-group-out pooling


def _run_groups(
    names: Sequence[str], group: Union[None, Mapping[str, str], Callable[[str], str]]
) -> dict[str, str]:
    if group is None:
        return {name: name for name in names}
    if callable(group) and not isinstance(group, Mapping):
        mapping = {name: group(name) for name in names}
    elif isinstance(group, Mapping):
        missing = [name for name in names if name not in group]
        if missing:
            raise PdevalError(
                f"the group mapping lacks {len(missing)} run(s): {missing[:10]}; map every run to "
                f"a group (or pass a callable such as lambda run: run.split('__')[0])"
            )
        mapping = {name: group[name] for name in names}
    else:
        raise PdevalError(f"group must be None, a mapping run -> group or a callable, not {type(group).__name__}")
    bad = [name for name, g in mapping.items() if g is None or (isinstance(g, float) and np.isnan(g))]
    if bad:
        raise PdevalError(f"runs {bad[:10]} have no group (None or NaN)")
    return {name: str(g) for name, g in mapping.items()}


def _group_codes(run_names: pd.Series, groups: Mapping[str, str], group_index: Mapping[str, int]) -> np.ndarray:
    """The group code of every row, looked up once per distinct run name."""
    codes, uniques = pd.factorize(run_names)
    lookup = np.array([group_index[groups[name]] for name in uniques], dtype=np.int64)
    return lookup[codes]


def leave_out_pooling(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    depth: int = 100,
    *,
    group: Union[None, Mapping[str, str], Callable[[str], str]] = None,
    measures: Sequence[str] = ("AP", "Bpref", "infAP", "AP'"),
    removed_as: RemovedAs = "absent",
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """Leave-one-group-out pool bias (Zobel 1998; Buckley, Dimmick, Soboroff & Voorhees 2007).

    Zobel 1998 asked how a system that did not contribute to the pool would be scored: remove
    from the qrels the documents that only that system's runs brought into the pool, score the
    system again, and compare. Buckley et al. 2007 stress that the unit must be the *group*
    (all runs of one participant), because sibling runs share most of their unique documents:
    leaving out one run while keeping its siblings barely changes the pool and hides the bias.

    For each group G (``group``: a mapping run -> group, or a callable such as
    ``lambda run: run.split("__")[0]``; default: each run is its own group):

    * ``P(t)`` = the depth-``depth`` pool of **all** runs given, ``P_{-G}(t)`` the pool of the
      runs outside G (both with trec_eval's ranking);
    * ``U_G(t) = P(t) \\ P_{-G}(t)``: documents in the pool only thanks to G;
    * the left-out qrels ``Q_{-G}`` = ``Q*`` without the entries of ``U_G`` (relevant,
      nonrelevant and -1 alike). Entries of ``Q*`` outside ``P(t)`` (judged for other reasons,
      e.g. manual or unsubmitted runs) and in ``P_{-G}(t)`` are kept unchanged.

    **Why "absent" and not -1 by default.** Had G not been pooled, the documents of ``U_G``
    would never have entered the pool: they would be ABSENT (MEASURES.md 0.2), not "pooled but
    unjudged". The distinction does not matter for AP, AP', P@k or the bpref family (they treat
    -1 and absent alike), but it does for infAP, subAP and indAP: a -1 tells infAP that the
    document was in the pool and missed only by sampling, so it would estimate its relevance
    from the judged pool documents and credit G for documents that nobody else found —
    precisely the bias the experiment measures. ``removed_as="pooled"`` (-1) is available to
    study that reading.

    The runs of each group are evaluated with ``pdeval.evaluation.evaluate`` against ``Q*``
    and against their own ``Q_{-G}``, in two calls: the left-out qrels of all groups go into one
    frame whose topic ids are made distinct per group, so each run meets only its own group's
    qrels (per-topic measures do not look across topics, so this equals one evaluation per
    group).

    Returns a tidy frame ``run, group, query_id, measure, value_pooled, value_left_out,
    difference`` (``difference = value_left_out - value_pooled``, usually <= 0 for AP) plus
    ``removed_judged`` and ``removed_relevant``: how many judged and relevant (``>= 1``)
    entries of ``Q*`` the topic lost for that group (Zobel's "unique relevant documents").
    With ``removed_as="absent"``, a topic whose every ``Q*`` entry came from G alone vanishes
    from ``Q_{-G}``, so ``evaluate`` skips it and ``value_left_out`` is NaN there (rare; with
    ``removed_as="pooled"`` the topic stays, with R = 0).
    """

    _check_choice("removed_as", removed_as, ("pooled", "absent"))
    depth = _check_int("depth", depth, 1)
    r = as_run(run)
    q = _plain_qrels(qrels, "leave_out_pooling")
    names = sorted(pd.unique(r["run"]).tolist())
    groups = _run_groups(names, group)
    group_names = sorted(set(groups.values()))
    group_index = {g: i for i, g in enumerate(group_names)}

    ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], score_precision=score_precision, depth=depth)
    ranked_group = _group_codes(ranked["run"], groups, group_index)
    # contributors of each pooled document: distinct groups per (query_id, doc_id)
    contributions = (
        pd.DataFrame({"query_id": ranked["query_id"].to_numpy(), "doc_id": ranked["doc_id"].to_numpy(),
                      "g": ranked_group})
        .drop_duplicates()
    )
    n_groups_of = contributions.groupby(["query_id", "doc_id"], sort=False, observed=True)["g"].transform("size")
    unique = contributions.loc[n_groups_of.to_numpy() == 1]
    # owner group of each qrels entry that only one group pooled (-1: none)
    position = _positions(unique, q["query_id"], q["doc_id"])
    owner = np.where(position >= 0, unique["g"].to_numpy()[np.maximum(position, 0)], -1)
    relevance = q["relevance"].to_numpy(dtype=np.int64)

    # stack the left-out qrels of every group, topic ids made distinct per group
    n_groups = len(group_names)
    n = len(q)
    rows = np.tile(np.arange(n), n_groups)
    g_of_row = np.repeat(np.arange(n_groups), n)
    removed = owner[rows] == g_of_row
    values = relevance[rows].copy()
    if removed_as == "pooled":
        values[removed] = -1
    else:
        rows, g_of_row, values = rows[~removed], g_of_row[~removed], values[~removed]
    sep = "\x1f"
    qid = q["query_id"].to_numpy().astype(str)
    prefixes = np.array([f"{i}{sep}" for i in range(n_groups)], dtype=object)
    stacked_qrels = pd.DataFrame(
        {
            "query_id": prefixes[g_of_row] + qid[rows].astype(object),
            "doc_id": q["doc_id"].to_numpy()[rows],
            "relevance": values,
        }
    )
    run_group = _group_codes(r["run"], groups, group_index)
    stacked_run = r[["run", "query_id", "doc_id", "score"]].assign(
        query_id=prefixes[run_group] + r["query_id"].to_numpy().astype(str).astype(object)
    )

    full = evaluate(r[["run", "query_id", "doc_id", "score"]], q, list(measures), score_precision=score_precision)
    # each run meets only its own group's copy of the topics: no overlap to report
    left = evaluate_frames(stacked_run, stacked_qrels, list(measures), score_precision=score_precision, coverage=False)
    full = full[["run", "query_id", "measure", "value"]].rename(columns={"value": "value_pooled"})
    split = left["query_id"].astype(str).str.split(sep, n=1, regex=False)
    left = pd.DataFrame(
        {
            "run": left["run"].to_numpy(),
            "query_id": split.str[1].to_numpy(),
            "measure": left["measure"].to_numpy(),
            "value_left_out": left["value"].to_numpy(dtype=np.float64),
        }
    )
    out = full.merge(left, on=["run", "query_id", "measure"], how="outer", validate="one_to_one")
    out.insert(1, "group", out["run"].map(groups))
    out["difference"] = out["value_left_out"] - out["value_pooled"]

    # what each (group, topic) lost
    removed_rows = np.flatnonzero(owner >= 0)
    lost = pd.DataFrame(
        {
            "group": np.array(group_names, dtype=object)[owner[removed_rows]],
            "query_id": q["query_id"].to_numpy()[removed_rows],
            "removed_judged": (relevance[removed_rows] >= 0).astype(np.int64),
            "removed_relevant": (relevance[removed_rows] >= 1).astype(np.int64),
        }
    ).groupby(["group", "query_id"], as_index=False, sort=True).sum()
    out = out.merge(lost, on=["group", "query_id"], how="left")
    out[["removed_judged", "removed_relevant"]] = out[["removed_judged", "removed_relevant"]].fillna(0).astype(np.int64)
    return out.sort_values(["run", "query_id", "measure"], kind="stable", ignore_index=True)
