"""Derived qrels by judgment reduction, and the machinery every derived qrels shares.

Every function here takes plain frames and returns plain frames (MEASURES.md Part II):

* :func:`reduce` — stratified (Buckley & Voorhees 2004; Sakai 2007; He, Macdonald & Ounis
  2008), rounded (Ahlgren & Grönqvist 2008) and uniform (Yilmaz & Aslam 2008) reduction of a
  complete qrels, all levels and samples in one frame keyed by ``level`` and ``sample``
  (E0–E4); :func:`reduction_sizes` and :func:`skipped_topics` say what it kept and skipped.
* :func:`plain_qrels`, :class:`PreparedQrels`, :func:`emit_rows` and
  :func:`assemble_variants` — one complete qrels sorted by (topic, doc), the rows one variant
  keeps, and the variants stacked into one frame; the pools of :mod:`pdeval.judgments.pooling` are built
  with them too.

Randomness (E0): draw ``s`` uses ``np.random.default_rng([seed, s])`` and consumes its
numbers topic by topic in sorted topic-id order (documents in sorted doc-id order inside a
topic), so the same input and seed give the same frame on every call and platform. Nothing
loops over topics or documents: a random key is drawn per judged document, keys are ranked
within (topic, stratum) with one sort (:mod:`pdeval.judgments.draws`), and a row is kept at level j
when its rank is below the topic's size for j (broadcast over all levels at once).
"""

from __future__ import annotations

import warnings
from fractions import Fraction
from typing import Iterable, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.common.seeds import Seed, base_seed
from pdeval.judgments.draws import key_bits, random_keys, ranks_by_key
from pdeval.errors import PdevalError, PdevalWarning, SchemaError
from pdeval.frames.canonical import as_qrels, variant_keys
from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Nullable, Real, contract
from pdeval.common.options import is_int
from pdeval.common.progress import progress_bar
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import PROGRESS, REMOVED_AS, SEED

__all__ = ["LEVEL_GRIDS", "reduce", "reduction_sizes", "skipped_topics"]

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

Method = Literal["stratified", "rounded", "uniform"]
RemovedAs = Literal["pooled", "absent"]

_REL, _NON, _NEG = 0, 1, 2  # judgment class of a qrels row (relevant, nonrelevant, negative)


# ---------------------------------------------------------------------------------------------
# levels and the plain qrels


def _fraction(value: float) -> Fraction:
    """A level as an exact fraction of a percent: the decimal the user wrote (0.1 -> 1/10),
    not the nearest binary float."""
    return Fraction(int(value)) if is_int(value) else Fraction(repr(float(value)))


def _parse_levels(levels: Iterable[float]) -> list[Fraction]:
    """Levels (percents the contract checked) as exact fractions; levels that all lie in
    (0, 1] with one not whole look like fractions (0.9 for 90 %) and are warned about, not
    refused, since 0.5 % and 1 % are levels of the papers too (issue class 6)."""
    parsed = [_fraction(value) for value in (LEVEL_GRIDS[levels] if isinstance(levels, str) else levels)]
    if max(parsed) <= 1 and any(level.denominator > 1 for level in parsed):
        shown = ", ".join(f"{float(level):g}" for level in parsed)
        percents = ", ".join(f"{float(level * 100):g}" for level in parsed)
        warnings.warn(
            f"reduce(): every level lies in (0, 1]: levels are percents, so levels=[{shown}] keep at most "
            f"1 % of the judgments; if you meant fractions, give percents: levels=[{percents}]",
            PdevalWarning,
            stacklevel=4,  # the caller of reduce (through the contract's wrapper)
        )
    return parsed


def _level_values(levels: Sequence[Fraction]) -> np.ndarray:
    """The ``level`` column values: int64 when every level is whole, else float64."""
    if all(level.denominator == 1 for level in levels):
        return np.array([int(level) for level in levels], dtype=np.int64)
    return np.array([float(level) for level in levels], dtype=np.float64)



#: the qrels columns of a sampling design (sample_eval's strata, statAP's inclusion probabilities)
DESIGN_COLUMNS = ("stratum", "inclusion_prob")


def plain_qrels(qrels: pd.DataFrame, function: str, design: str = "refuse") -> pd.DataFrame:
    """A canonical qrels frame without variant keys, sorted by (query_id, doc_id).

    ``design`` says what happens to the sampling columns (:data:`DESIGN_COLUMNS`) of sampled
    qrels: ``"keep"`` them (a function whose derived qrels keep each row's design),
    ``"drop"`` them (a function that reads only the labels), or ``"refuse"`` such qrels with
    a :class:`SchemaError` (a function whose derived qrels would no longer be the sample the
    columns describe: xinfAP, infNDCG and statAP on them would silently be other estimators).
    """
    q = as_qrels(qrels)
    keys = variant_keys(q)
    if keys:
        raise SchemaError(
            f"{function} takes one complete qrels, but this frame has variant column(s) {keys}; "
            f"select one variant first (e.g. qrels[qrels.level == 100].drop(columns={keys!r}))."
        )
    sampled = [c for c in DESIGN_COLUMNS if c in q.columns]
    if sampled and design == "refuse":
        raise SchemaError(
            f"{function} builds new judgments from the qrels, but these qrels carry a sampling design "
            f"({', '.join(sampled)}) that would not describe the judgments it builds (the sampled estimators "
            f"xinfAP, infNDCG, statAP ... on them would silently become other estimators); to use the labels as "
            f"plain judgments, drop the column(s): qrels.drop(columns={sampled!r})"
        )
    q = q[["query_id", "doc_id", "relevance", *(sampled if design == "keep" else [])]]
    topic, _ = pd.factorize(q["query_id"], sort=True)
    doc, _ = pd.factorize(q["doc_id"], sort=True)
    order = np.lexsort((doc, topic))
    return q.iloc[order].reset_index(drop=True)



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
    fraction = level if isinstance(level, Fraction) else _fraction(level)
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


class PreparedQrels:
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
        self.key_bits = key_bits(2 * self.n_topics + 2)


def emit_rows(
    prepared: PreparedQrels,
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


def assemble_variants(
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


@contract(
    qrels=Frame("qrels", variants=False),
    levels=Choice(*LEVEL_GRIDS) | ListOf(Real(0, 100, closed="right"), unique=True),
    method=Choice("stratified", "rounded", "uniform"),
    samples=Integer(1),
    seed=SEED,
    nested=Nullable(Boolean()),
    removed_as=REMOVED_AS,
    min_rel=Integer(0),
    min_nonrel=Integer(0),
    rel=Integer(1),
    on_fail=Choice("skip", "error", renamed={"raise": "error"}),
    max_tries=Integer(1),
    progress=PROGRESS,
    remedies={"levels": "percents of the judgments kept, e.g. [90, 50, 10], or a grid name such as 'sakai2007'"},
    modes={
        "nested": ("method", ("stratified", "rounded")),
        "on_fail": ("method", ("uniform",)),
        "max_tries": ("method", ("uniform",)),
    },
)
def reduce(
    qrels: pd.DataFrame,
    levels: Union[str, float, Iterable[float]],
    *,
    method: Method = "stratified",
    samples: int = 1,
    seed: Seed = 0,
    nested: Optional[bool] = None,
    removed_as: RemovedAs = "pooled",
    min_rel: int = 1,
    min_nonrel: int = 10,
    rel: int = 1,
    on_fail: Literal["error", "skip"] = "error",
    max_tries: int = 10000,
    progress: Optional[bool] = None,
) -> pd.DataFrame:
    """Reduced versions of a complete qrels: every level and sample in one frame.

    Pass the result straight to :func:`pdeval.evaluate`: ``level`` and ``sample`` are variant
    keys, so one call evaluates the whole experiment.

    Parameters
    ----------
    qrels : DataFrame
        The complete qrels ``Q*`` (no variant columns). ``Rel_t`` = documents with
        ``relevance >= rel``, ``Non_t`` = ``0 <= relevance < rel``; negative entries are
        neither, are never sampled and stay negative in every variant (E0).
    levels : str, float or list of float
        Percents of the judgments kept, in (0, 100], or the name of a grid in
        :data:`LEVEL_GRIDS`. Levels are percents, not fractions: when every level lies in
        (0, 1] and one is not whole (``[0.9, 0.5]``), a :class:`~pdeval.errors.PdevalWarning`
        says that they keep 0.9 % and 0.5 % of the judgments (give ``[90, 50]`` for 90 % and
        50 %).
    method : {'stratified', 'rounded', 'uniform'}, default 'stratified'
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
    samples : int, default 1
        The number of draws per level (the ``sample`` key, 0..samples-1).
    seed : int, numpy Generator or None, default 0
        Draw ``s`` uses ``np.random.default_rng([seed, s])`` and consumes one uniform key per
        judged document, topic by topic in sorted topic-id order; a stratum's random
        permutation is the order of its keys. A ``numpy.random.Generator`` contributes one
        integer drawn from it; ``None`` one from the operating system's entropy (a different
        draw on every call).
    nested : bool, optional
        Stratified methods only (default ``True``, Sakai 2007): one permutation of ``Rel_t``
        and one of ``Non_t`` per (topic, sample), and level j keeps the first ``R_j`` / ``N_j``
        of them, so lower levels are subsets of higher ones. With ``False`` every (level,
        sample) is an independent draw from ``np.random.default_rng([seed, s, a, b])`` where
        ``j = a/b`` in lowest terms (``[seed, s, j, 1]`` for whole percents), which makes a
        level's sample independent of the other levels requested. Uniform samples always use
        these per-level generators (they are not nested, E4), and refuse ``nested``.
    removed_as : {'pooled', 'absent'}, default 'pooled'
        ``"pooled"``: removed judgments become -1 (pooled but unjudged), which infAP, subAP
        and indAP need. ``"absent"``: their rows are dropped.
    min_rel : int, default 1
        The minimum ``R_j`` of the stratified methods (Buckley & Voorhees' 1).
    min_nonrel : int, default 10
        The minimum ``N_j`` of the stratified methods (Buckley & Voorhees' 10).
    rel : int, default 1
        The relevance threshold θ that defines ``Rel_t``.
    on_fail : {'error', 'skip'}, default 'error'
        Uniform sampling only: what to do with a topic that has no relevant document after
        ``max_tries`` draws: ``"error"`` raises a :class:`~pdeval.errors.PdevalError`,
        ``"skip"`` drops the topic from that (level, sample). Topics with ``R = 0`` cannot
        succeed and are always skipped up front. (The old word ``'raise'`` is refused, naming
        ``'error'``.)
    max_tries : int, default 10000
        Uniform sampling only: the draws tried per topic before ``on_fail`` applies.
    progress : bool, optional
        A progress bar over the draws: True, False, or None (only for long work on a terminal
        or in a notebook).

    Returns
    -------
    DataFrame
        A qrels frame ``level, sample, query_id, doc_id, relevance`` (level and sample int64;
        level float64 only if a level is not a whole percent), ordered by level (in the order
        given), sample, query_id, doc_id. With ``method="stratified"`` level 100 reproduces
        ``Q*`` exactly. Skipped topics (uniform only) are dropped from the derived qrels of the
        variants where they were skipped, a :class:`~pdeval.errors.PdevalWarning` lists them,
        and ``result.attrs["skipped_topics"]`` holds one record (``level, sample, query_id,
        reason``) per skipped topic and variant (:func:`skipped_topics` turns it into a frame).
        For the stratified methods the list is empty: every topic is kept (a topic with
        ``R = 0`` keeps ``R_j = 0``).

    Raises
    ------
    PdevalError
        A parameter outside its domain, qrels with variant columns or a sampling design, a
        uniform draw without a relevant document under ``on_fail='error'``.

    See Also
    --------
    pool : Qrels of a shallower pool.
    mixed_pool : A depth pool plus random judgments.
    sample_pool : A stratified sample of a pool, for the sampled estimators.
    evaluate : Evaluates every level and sample at once.

    Examples
    --------
    >>> qrels = pd.DataFrame({"query_id": ["q1"] * 12, "doc_id": [f"d{i}" for i in range(12)],
    ...                       "relevance": [1, 1, 1, 1] + [0] * 8})
    >>> reduced = pdeval.reduce(qrels, [100, 50], min_nonrel=2, removed_as="absent")
    >>> reduced.groupby("level", sort=False)["relevance"].agg(["size", "sum"])
           size  sum
    level
    100      12    4
    50        6    2
    """
    if nested is None:
        nested = method != "uniform"
    parsed = _parse_levels(levels)
    level_values = _level_values(parsed)
    base = base_seed(seed)
    prepared = PreparedQrels(plain_qrels(qrels, "reduce"), rel)

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
    result = assemble_variants(prepared.q, parts, "level", level_values.dtype)
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
            stacklevel=3,  # the caller of reduce (through the contract's wrapper)
        )
    return result


def _reduce_stratified(
    prepared: PreparedQrels,
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
            keys = random_keys(np.random.default_rng([base, s]), len(judged), bits)
            rank = ranks_by_key(group, keys, bits)
            keep = rank[None, :] < limit
        else:
            keep = np.empty(limit.shape, dtype=bool)
            for i, level in enumerate(parsed):
                rng = np.random.default_rng([base, s, level.numerator, level.denominator])
                keep[i] = ranks_by_key(group, random_keys(rng, len(judged), bits), bits) < limit[i]
        for i, value in enumerate(level_values.tolist()):
            rows, relevance = emit_rows(prepared, keep[i], removed_as)
            parts.append((value, s, rows, relevance))


def _reduce_uniform(
    prepared: PreparedQrels,
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
        keys = random_keys(rng, len(active_rows), bits)
        selected = ranks_by_key(active_topic, keys, bits) < m[active_topic]
        has_rel = np.bincount(active_topic[selected & active_rel], minlength=prepared.n_topics) > 0
        failing = ~has_rel & ~hopeless
        # redraw only the failing topics; `sub` holds their rows (positions in active_*)
        sub = np.flatnonzero(failing[active_topic])
        tries = 1
        while len(sub) and tries < max_tries:
            sub_topic = active_topic[sub]
            chosen = ranks_by_key(sub_topic, random_keys(rng, len(sub), bits), bits) < m[sub_topic]
            selected[sub] = chosen
            success = np.bincount(sub_topic[chosen & active_rel[sub]], minlength=prepared.n_topics) > 0
            failing &= ~success
            sub = sub[failing[sub_topic]]
            tries += 1
        failed_ids = prepared.topics[failing].tolist()
        if failed_ids and on_fail == "error":
            raise PdevalError(
                f"uniform sampling at level {value}, sample {s}: {len(failed_ids)} topic(s) had no "
                f"relevant document in any of {max_tries} draws: {failed_ids[:10]}. Pass "
                f"on_fail='skip' to drop them from that variant, or raise max_tries."
            )
        keep_judged = np.zeros(len(judged), dtype=bool)
        keep_judged[active_rows[selected]] = True
        drop = hopeless | failing
        rows, relevance = emit_rows(prepared, keep_judged, removed_as, drop_topic=drop)
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
