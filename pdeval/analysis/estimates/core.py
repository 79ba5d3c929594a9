"""Estimates with intervals of the scores runs would get if their unjudged documents were judged.

:func:`estimate` offers three methods:

* ``"bootstrap"`` (Fröbe, Gienapp, Potthast & Hagen, "Bootstrapped nDCG Estimation in the
  Presence of Unjudged Documents", ECIR 2023): every unjudged retrieved document gets a
  probability per grade from a prior (:mod:`pdeval.analysis.estimates.label_priors`: the topic's pool,
  the judged documents of the same ranking, both, or those the condensed list moves above the
  cutoff, the default; :mod:`pdeval.analysis.estimates.unique_priors`:
  both, scaled by the factors of a pooled unit's unique documents, one unit drawn per run and
  resample); labels are drawn ``n_resamples`` times,
  R and the ideal list follow the drawn labels, and the measure's distribution over the draws
  gives the estimate (its mean) and the percentile interval;
* ``"labels"``: the same draws, the probabilities taken from another label set (an LLM's
  labels) calibrated on the pairs both sets judged (:func:`~pdeval.analysis.estimates.label_priors.calibrated_priors`;
  every resample re-estimates the calibration on a resample of its topics, so the interval
  carries the calibration's uncertainty), or returned by a callable;
* ``"ppi"`` (prediction-powered inference, :mod:`pdeval.analysis.estimates.ppi`): automatic labels for
  every topic and human labels on a random sample of the topics give an unbiased estimate of a
  run's mean score (or of its difference from a baseline run) with a valid interval; with
  ``strata=`` the topics fall into strata, the human sample is drawn within each, and the
  strata's estimates are combined with their shares of the topics (stratified PPI,
  :func:`~pdeval.analysis.estimates.ppi.stratified_ppi_mean`).

The draws are vectorised over resamples, runs and topics (:mod:`pdeval.analysis.estimates.resampled`),
in chunks of resamples that bound the memory; one seed gives one result.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable, Literal, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.estimates import label_priors, run_effects
from pdeval.analysis.estimates import resampled as resampled_measures
from pdeval.analysis.estimates import unique_priors
from pdeval.analysis.estimates.unique_priors import GroupLike, UnitEffect
from pdeval.analysis.estimates.ppi_runs import automatic_labels, ppi_estimate
from pdeval.common.docs import shared_docs
from pdeval.common.contract import (
    Anything, Boolean, Callable_, Choice, Instance, Integer, MappingOf, Nullable, Real, Text, contract,
)
from pdeval.common.progress import PROGRESS, Progress, progress_bar
from pdeval.common.seeds import SEED, Seed, generator
from pdeval.engine.index import index_qrels
from pdeval.engine.options import OPTION_DOMAINS, EngineOptions, TieOrder
from pdeval.engine.ranked import RankedRun, layout
from pdeval.engine.ranking import rank_run
from pdeval.errors import OverlapError, OverlapWarning, PdevalError, SchemaError, warn
from pdeval.evaluation.core import check_ties
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import GROUP, POOL_DEPTH, POOLED
from pdeval.measures import parse_all
from pdeval.measures.domains import Measures

Method = Literal["bootstrap", "labels", "ppi"]
#: ``strata=``: a mapping query_id -> stratum (a dict or a Series) or a callable query_id -> stratum
StrataLike = Union[None, Mapping[str, Any], pd.Series, Callable[[str], Any]]
#: the bootstrap's priors: Fröbe et al.'s three and the unique documents' random effect
PRIORS = label_priors.PRIORS + ("unique",)
#: priors whose probabilities are drawn anew for every resample
DRAWN = (UnitEffect, label_priors.CalibrationEffect, run_effects.LogitEffect)
#: cells (resamples x rows) drawn at once: bounds the memory of the bootstrap
CHUNK_CELLS = 1 << 22


@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    measures=Measures(),
    method=Choice("bootstrap", "labels", "ppi"),
    prior=Choice(*PRIORS, "auto"),  # the default last
    window=Nullable(Integer(0)),
    pooled=POOLED,
    pool_depth=Nullable(POOL_DEPTH),
    group=GROUP,
    automatic=Nullable(Frame("qrels", variants=False) | Callable_("a function (query_ids, doc_ids) -> probabilities")),
    smoothing=Real(0),
    spread=Real(0) | Choice("auto"),
    shift=Nullable(Real()),
    n_resamples=Integer(1),
    confidence=Real(0, 1, closed="neither"),
    per=Choice("topic", "run"),
    baseline=Nullable(Text("a run name")),
    tuned=Boolean(),
    strata=Nullable(MappingOf(Text("a topic id"), Anything(why="a stratum label"))
                    | Instance((pd.Series,), "a Series query_id -> stratum", pd.Series({"1": "a"}))
                    | Callable_("a function query_id -> stratum")),
    seed=SEED,
    progress=PROGRESS,
    score_precision=Choice("float64", "float32"),
    depth=Nullable(Integer(1)),
    ties=Choice(*sorted(OPTION_DOMAINS["ties"].values, key=lambda v: v == "trec")),  # the default last
    modes={
        "prior": ("method", ("bootstrap",)),
        "window": [("method", ("bootstrap",)), ("prior", ("run", "both"))],
        "pooled": [("method", ("bootstrap",)), ("prior", ("unique",))],
        "pool_depth": [("method", ("bootstrap",)), ("prior", ("unique",))],
        "group": [("method", ("bootstrap",)), ("prior", ("unique",))],
        "automatic": ("method", ("labels", "ppi")),
        "smoothing": ("method", ("labels",)),
        "spread": ("method", ("bootstrap",)),
        "shift": ("method", ("bootstrap",)),
        "n_resamples": ("method", ("bootstrap", "labels")),
        "ties": ("method", ("bootstrap", "labels")),
        "baseline": ("method", ("ppi",)),
        "tuned": ("method", ("ppi",)),
        "strata": ("method", ("ppi",)),
    },
    renamed={"level": "per"},
)
@shared_docs
def estimate(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[str, Sequence[str]],
    *,
    method: Method = "bootstrap",
    prior: Literal["auto", "pool", "run", "both", "condensed", "unique"] = "auto",
    window: Optional[int] = None,
    pooled: Optional[Iterable[str]] = None,
    pool_depth: Optional[int] = None,
    group: GroupLike = None,
    automatic: Union[None, pd.DataFrame, Callable[[np.ndarray, np.ndarray], np.ndarray]] = None,
    smoothing: float = 1.0,
    spread: Union[Literal["auto"], float] = "auto",
    shift: Optional[float] = None,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    per: Literal["topic", "run"] = "topic",
    baseline: Optional[str] = None,
    tuned: bool = True,
    strata: StrataLike = None,
    seed: Seed = 0,
    progress: Progress = None,
    score_precision: Literal["float64", "float32"] = "float64",
    depth: Optional[int] = None,
    ties: TieOrder = "trec",
) -> pd.DataFrame:
    """Best estimates, with intervals, of the scores the runs would get if their unjudged
    documents were judged.

    Parameters
    ----------
    run : DataFrame
        Run frame (``run``, ``query_id``, ``doc_id``, ``score``).
    qrels : DataFrame
        The judgments (one qrels variant). For ``method="ppi"``: the human labels of a random
        sample of the topics (the labelled units).
    measures : str or list of str
        ``P@k``, ``R@k``, ``AP``, ``RR``, ``nDCG``, ``RBP`` with their cutoffs and parameters (the
        measures depending only on the labels of the retrieved documents, R and the ideal list:
        :data:`~pdeval.analysis.estimates.resampled.SUPPORTED`); ``"ppi"``: every measure.
    method : {'bootstrap', 'labels', 'ppi'}, default 'bootstrap'
        See the module docstring.
    prior : {'auto', 'pool', 'run', 'both', 'condensed', 'unique'}, default 'auto'
        The bootstrap's prior. Fröbe et al. 2023: the topic's judged grade shares (``"pool"``), the
        ranking's judged ones plus one pseudo-document of the pool (``"run"``), or their mean (``"both"``).
        ``"condensed"``: ``"run"`` over the judged documents the condensed list moves above the largest
        cutoff (every measure needs one). ``"auto"``: ``"condensed"`` (the study's pick,
        ``run_effects.DEFAULT_PRIOR``) if every measure has a cutoff, else ``"run"`` (``attrs["prior"]``).
        ``"unique"`` (runs outside a known pool; needs ``pool_depth``): ``"both"`` times the factors of
        one pooled unit per run and resample, ``f_{u,g}`` = the unit's judged unique documents of grade
        ``g`` over the number its prior expects (:mod:`pdeval.analysis.estimates.unique_priors`).
    window : int, optional
        ``prior="run"``/``"both"``: only judged documents within ``window`` ranks count (None: all).
    pooled : list of str, optional
        ``prior="unique"``: the runs of ``run`` that built the pool (default: every run).
    pool_depth : int, optional
        ``prior="unique"`` (required): the depth of the pool that built the qrels.
    group : mapping or callable, optional
        ``prior="unique"``: the unit of each pooled run, a mapping run -> group or a callable such as
        ``lambda run: run.split("_")[0]`` (default: each run its own unit), as in
        :func:`pdeval.leave_out_pooling`; sibling runs share their unique documents, so prefer teams.
    automatic : DataFrame or callable, optional
        ``method="labels"``: a qrels frame of automatic labels (an LLM's, e.g. from
        :func:`pdeval.label_sets`), calibrated on the pairs both frames judge (an unjudged
        document without an automatic label gets the pool prior), re-estimated in every resample
        on a resample of their topics (a cluster bootstrap); or a callable
        ``f(query_ids, doc_ids) -> array (n, n_grades)`` returning, for the ``n`` unjudged (topic,
        document) pairs given as two arrays, the probability of each judged grade of the qrels (columns:
        the distinct judged grades and 0, ascending), each row summing to 1; called once, with the
        distinct unjudged pairs within the measures' largest cutoff (every one without cutoff).
        ``method="ppi"``: the automatic labels of every topic.
    smoothing : float, default 1.0
        Add-``smoothing`` counts of the calibration table (``method="labels"``).
    spread : 'auto' or float, default 'auto'
        Bootstrap: σ of a run effect on the log-odds of each unjudged document's grade shares ``S_g = P(grade >= g)``
        (one ``z`` per run and resample, for every threshold): ``logit S'_g = logit S_g + c + spread·z``, ``c`` keeping
        ``E[S'_g] = S_g``, after ``shift`` (:mod:`~pdeval.analysis.estimates.run_effects`). 'auto': the (shift, σ)
        a leave-one-collection-out study chose for the prior; for ``"condensed"`` (-0.25, 3.0) its 95 % intervals of run
        means covered 94–100 % of the runs on every held-out collection and measure, 98 % on one never seen
        (``attrs["coverage"]``), its error below the condensed value's in 19 of those 20 cells. 0: Fröbe et al.
    shift : float, optional
        Bootstrap: μ, the mean log-odds shift of the unjudged documents' relevant share (< 0: less often
        relevant than the prior says). None: the study's μ with ``spread='auto'``, else 0.
    n_resamples : int, default 1000
        Draws of the bootstrap.
    confidence : float, default 0.95
        Level of the intervals: the bootstrap's percentile interval, PPI's normal interval.
    per : {'topic', 'run'}, default 'topic'
        One row per run and topic, or per run: the run's mean over topics, its interval
        computed jointly over the topics (the quantiles of the mean over the same draws), not
        by averaging per-topic intervals. ``method="ppi"`` estimates run means only.
    baseline : str, optional
        ``method="ppi"``: estimate each run's difference from this run (paired over topics).
    tuned : bool, default True
        ``method="ppi"``: choose PPI++'s power-tuning λ; ``False`` is classical PPI (λ = 1).
    strata : mapping or callable, optional
        ``method="ppi"``: stratified PPI (Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen,
        NeurIPS 2024). The stratum of every topic with automatic labels, a mapping query_id ->
        stratum (a dict or a Series) or a callable such as ``lambda query_id: ...``; the human
        sample must be drawn within each stratum, at least 2 labelled and 1 unlabelled topic
        per stratum. The estimate is θ̂ = Σ_k w_k θ̂_k, w_k the stratum's share of all topics
        and θ̂_k PPI(++) within the stratum (its own λ_k when tuned), with the interval
        θ̂ ± z √(Σ_k w_k² σ̂_k²) (:func:`~pdeval.analysis.estimates.ppi.stratified_ppi_mean`). None:
        unstratified PPI.
    seed : int, Generator or None, default 0
        Seeds the draws: one seed, one result (None: fresh entropy).
    progress : bool, optional
        A bar over the chunks of draws; None shows it only for long work on a terminal or in a
        notebook (:mod:`pdeval.common.progress`).
    {score_precision}
    {depth}
    ties : {'trec', 'expected', 'optimistic', 'pessimistic'}, default 'trec'
        The order of tied scores, as for :func:`pdeval.evaluate`, in every draw: ``'optimistic'`` / ``'pessimistic'``
        order each draw's tied documents by their grades, best / worst first; ``'expected'`` draws the expected values
        over the tied orders; ``@k`` then reads every run of ties starting above it.

    Returns
    -------
    DataFrame
        ``run``, ``query_id`` (``per="topic"``), ``measure``, ``value`` (today's value:
        unjudged documents nonrelevant, as :func:`pdeval.evaluate`), ``estimate``, ``low``,
        ``high``; per topic also ``unjudged`` (documents drawn for the measure), per run ``topics``.
        ``method="ppi"``: ``value`` is the mean over the labelled topics, ``automatic`` the mean with
        automatic labels over every topic, ``labelled``, ``unlabelled`` and ``lam`` (λ); with ``baseline``,
        a ``baseline`` column and differences in place of means; with ``strata``, a ``strata`` column (K)
        and ``lam`` the strata's λ_k averaged with the weights w_k. Bootstrap ``attrs``: ``prior``,
        ``shift``, ``spread``, ``coverage`` (the default's, per collection and measure, ``check`` "held
        out" or "never seen"), ``coverage_reached`` (every record >= 0.90).

    Raises
    ------
    MeasureError
        A measure the method cannot estimate.
    SchemaError
        Qrels with variant keys, topics without any judged document, no pair in common
        between the label sets.
    PdevalError
        An option outside its domain or its mode (``window`` without ``prior="run"``/``"both"``,
        ``pool_depth`` without ``"unique"``, ``strata`` without ``method="ppi"``); ``"condensed"``
        with a measure without cutoff; unknown pooled runs, fewer than two pooled units with judged
        unique documents; automatic probabilities of the wrong shape, negative, NaN or not summing
        to 1; a topic without a stratum, a stratum with fewer than 2 labelled or no unlabelled topic.

    See Also
    --------
    evaluate : Today's values (unjudged documents nonrelevant).
    bounds : The range a value can take over the judgings.
    unique_factors : The factors of the ``unique`` prior.

    Notes
    -----
    With complete judgments (no unjudged document retrieved) every method returns today's
    value with an interval of width zero (PPI: with human labels on every topic, ``lam`` = 0).

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d4"], "relevance": [1, 0, 1]})
    >>> (means := pdeval.estimate(run, qrels, "P@3", n_resamples=200, seed=1, per="run", progress=False)).round(3)
      run measure  value  estimate    low   high  topics
    0   a     P@3  0.333     0.538  0.333  0.667       1
    1   b     P@3  0.667     0.873  0.667  1.000       1
    2   c     P@3  0.333     0.530  0.333  0.667       1
    >>> means.attrs["prior"], means.attrs["shift"], means.attrs["spread"], means.attrs["coverage_reached"]
    ('condensed', -0.25, 3.0, True)
    """
    parsed = parse_all(measures)
    if method == "ppi":
        if per != "run":
            raise PdevalError("estimate(): method='ppi' estimates run means over topics: pass per='run'")
        return ppi_estimate(run, qrels, parsed, automatic, baseline, confidence, tuned, strata, score_precision, depth)
    for measure in parsed:
        resampled_measures.check_supported(measure)
    check_ties(parsed, EngineOptions(depth=depth, ties=ties))  # as evaluate: no depth cut under other orders
    prior, unique = _prior_of(prior, parsed), _unique_options(prior, pooled, pool_depth, group)  # "auto" is never "unique"
    if method == "labels" and automatic is None:
        raise PdevalError("estimate(): method='labels' needs automatic= (a qrels frame of automatic labels, or a "
                          "callable f(query_ids, doc_ids) returning probabilities per grade)")
    frame, qrels = as_run(run, duplicates=None), as_qrels(qrels)  # once: the steps below take canonical frames
    _check_overlap(frame, qrels)
    auto_frame = None
    if method == "labels" and isinstance(automatic, pd.DataFrame):
        automatic = auto_frame = automatic_labels(automatic)
    mu, sigma = run_effects.setting_of(spread, shift, prior, method)
    lists, keys, probabilities = _lists_and_priors(frame, qrels, automatic, auto_frame, parsed, method, prior, window,
                                                   smoothing, unique, score_precision, depth, ties, (mu, sigma))
    draws, value = _draw_values(lists, probabilities, parsed, n_resamples, generator(seed), progress)
    return run_effects.documented(_tidy(keys, parsed, lists, value, draws, confidence, per), method, prior, mu, sigma,
                                  confidence)


def _lists_and_priors(frame, qrels, automatic, auto_frame, parsed, method, prior, window, smoothing, unique,
                      score_precision, depth, ties, setting):
    """The ranked lists (cut at the largest cutoff), their keys and the priors of their unjudged rows."""
    cutoffs = [m.cutoff for m in parsed]
    if method == "bootstrap" and prior == "condensed" and None in cutoffs:
        raise PdevalError(f"estimate(): prior='condensed' draws from the judged documents the condensed list moves "
                          f"above the measures' cutoff; {', '.join(str(m) for m, c in zip(parsed, cutoffs) if c is None)} "
                          "has none. Give every measure a cutoff (nDCG@10), or take prior='run'.")
    lists, keys, auto_level = _lay_out(frame, qrels, auto_frame, score_precision, depth, ties)
    if method == "labels" and auto_frame is None:  # the callable is asked only about the rows drawn
        if None not in cutoffs:
            lists, _ = _cut(lists, np.zeros((int(lists.unjudged.sum()), 0)), max(cutoffs))
        return lists, keys, _called_priors(automatic, frame, lists, keys, score_precision, depth)
    if unique is not None:
        probabilities = _unique_prior(frame, qrels, lists, keys, unique)
    else:
        probabilities = _priors(lists, qrels, automatic, auto_level, method, prior, window, smoothing,
                                max(cutoffs) if None not in cutoffs else None)
    mu, sigma = setting
    probabilities = run_effects.with_spread(probabilities, _unjudged_rows(lists, keys)[1], sigma, mu)
    if None not in cutoffs:  # the priors read whole rankings; the draws only the rows a measure reads
        lists, probabilities = _cut(lists, probabilities, max(cutoffs))
    return lists, keys, probabilities


def _prior_of(prior: str, parsed) -> str:
    """``prior`` with ``"auto"`` resolved: the study's prior where every measure has a cutoff (the
    condensed prior needs one), else ``"run"``."""
    if prior != "auto":
        return prior
    return run_effects.DEFAULT_PRIOR if all(m.cutoff is not None for m in parsed) else "run"


def _unique_options(prior, pooled, pool_depth, group) -> Optional[dict]:
    """The options of the ``"unique"`` prior (the contract refuses them with the others); None for the
    other priors."""
    if prior != "unique":
        return None
    if pool_depth is None:
        raise PdevalError("estimate(): prior='unique' needs pool_depth= (the depth of the pool that built the qrels, "
                          "e.g. 10)")
    return {"pooled": pooled, "pool_depth": pool_depth, "group": group}


def _check_overlap(run: pd.DataFrame, qrels: pd.DataFrame) -> None:
    """Say what is wrong when nothing can be estimated: an empty run or qrels, or no topic in
    common (before the layout, whose message can only say that no topic has a judgment)."""
    if len(run) == 0:
        raise SchemaError("estimate(): the run frame has no rows: nothing to estimate")
    if len(qrels) == 0:
        raise SchemaError("estimate(): the qrels frame has no rows: nothing to estimate")
    topics = pd.unique(qrels["query_id"].astype(str))
    if not run["query_id"].astype(str).isin(topics).any():
        shown = ", ".join(repr(t) for t in pd.unique(run["query_id"].astype(str))[:3])
        raise OverlapError(f"estimate(): the run and the qrels share no topic (run topics {shown}, ...; qrels topics "
                           f"{', '.join(repr(t) for t in topics[:3])}, ...): are they of the same collection?")


# ---- layout --------------------------------------------------------------------------------
def _lay_out(run, qrels, automatic, score_precision, depth, ties="trec"):
    """The ranked lists with their judged grades (the engine's ranking and judgment index, as
    :func:`pdeval.evaluate` builds them), their keys (run, query_id) and, given automatic
    labels, each row's automatic label (ABSENT where there is none)."""
    q = qrels  # canonical, of one variant (the contract refused several): its key columns can go
    judged = q.loc[q["relevance"] >= 0, ["query_id", "doc_id", "relevance"]]
    unjudged_only = np.setdiff1d(pd.unique(q["query_id"].astype(str)), pd.unique(judged["query_id"].astype(str)))
    unjudged_only = unjudged_only[np.isin(unjudged_only, pd.unique(run["query_id"].astype(str)))]
    if len(unjudged_only):  # evaluate scores them (as trec_eval: R = 0); no prior exists for them
        warn(f"estimate(): {len(unjudged_only)} topic(s) of the run have qrels rows but no judged document (only "
             f"-1, pooled but not judged: {', '.join(map(repr, unjudged_only[:3]))}); they are left out, as no "
             "prior can be learnt from them (evaluate scores them with R = 0)", OverlapWarning)
    stacked = judged.assign(label_set="human")
    if automatic is not None:
        auto = automatic.loc[(automatic["relevance"] >= 0) & automatic["query_id"].isin(pd.unique(judged["query_id"]))]
        stacked = pd.concat([stacked, auto[["query_id", "doc_id", "relevance"]].assign(label_set="automatic")],
                            ignore_index=True)
    judgments = index_qrels(stacked, canonical=True)
    variant_of = {name: i for i, name in enumerate(judgments.variants["label_set"])}
    ranked = RankedRun.build(run, judgments, by=[], score_precision=score_precision,
                             depth=depth, ties=ties != "trec")
    _, group, seg = layout(ranked, judgments, np.array([variant_of["human"]]), False, False)
    if len(group) == 0:
        raise SchemaError("no topic of the run has a judged document in the qrels: nothing to estimate")
    grades = np.union1d([0], judged["relevance"].to_numpy(dtype=np.int64))
    level = seg.rel.astype(np.int64)
    code = np.where(level >= 0, np.searchsorted(grades, np.maximum(level, 0)), -1)
    offsets = np.asarray(seg.offsets, dtype=np.int64)
    list_of_row = np.repeat(np.arange(len(group)), np.diff(offsets))
    topic_of_list = group % ranked.n_topics
    judged_topic = judgments.topics.get_indexer(judged["query_id"])
    counts = label_priors.grade_counts(np.searchsorted(grades, judged["relevance"].to_numpy(dtype=np.int64)),
                                       judged_topic, ranked.n_topics, len(grades))
    lists = resampled_measures.DrawnLists(
        offsets=offsets, position=np.arange(len(code)) - offsets[list_of_row], topic_of_list=topic_of_list,
        codes=code, grades=grades, topic_counts=counts, tie_mode=ties, ties=None if ties == "trec" else seg.ties,
    )
    keys = pd.DataFrame({"run": ranked.systems["run"].to_numpy()[group // ranked.n_topics],
                         "query_id": np.asarray(judgments.topics)[topic_of_list]})
    auto_level = None
    if "automatic" in variant_of:
        _, other, seg_auto = layout(ranked, judgments, np.array([variant_of["automatic"]]), False, False)
        at = np.minimum(np.searchsorted(other, group), max(len(other) - 1, 0))
        matched = (other[at] == group) if len(other) else np.zeros(len(group), bool)
        row = np.asarray(seg_auto.offsets, dtype=np.int64)[at][list_of_row] + lists.position
        auto_level = np.where(matched[list_of_row], seg_auto.rel[np.minimum(row, max(len(seg_auto.rel) - 1, 0))], -2)
    return lists, keys, auto_level


def _cut(lists, probabilities, depth):
    """The lists cut at ``depth`` rows, with the probabilities of the unjudged rows kept."""
    # under ties other than trec's, whole runs of tied scores (an order may bring any row above the cut)
    keep = lists.position < depth if lists.ties is None else lists.ties[:, 0] <= depth
    lengths = np.add.reduceat(keep.astype(np.int64), lists.offsets[:-1])
    offsets = np.r_[0, np.cumsum(lengths)]
    kept_unjudged = keep[lists.unjudged]
    cut = resampled_measures.DrawnLists(
        offsets=offsets, position=lists.position[keep], topic_of_list=lists.topic_of_list,
        codes=lists.codes[keep], grades=lists.grades, topic_counts=lists.topic_counts, tie_mode=lists.tie_mode,
        ties=None if lists.ties is None else lists.ties[keep],
    )
    kept = probabilities.take(kept_unjudged) if isinstance(probabilities, DRAWN) else probabilities[kept_unjudged]
    return cut, kept


def _unjudged_rows(lists, keys) -> tuple[np.ndarray, np.ndarray]:
    """The list of every unjudged row and its run code (runs in sorted order)."""
    list_of_row = np.repeat(np.arange(len(lists.topic_of_list)), np.diff(lists.offsets))[lists.unjudged]
    run_of_list, _ = pd.factorize(keys["run"], sort=True)
    return list_of_row, run_of_list[list_of_row]


def _unique_prior(run, qrels, lists, keys, options) -> UnitEffect:
    """The ``"unique"`` prior of the unjudged rows: their pool shares and the usable units' factors."""
    factors = unique_priors.unit_factors(run, qrels, lists.grades, **options)
    list_of_row, run_of_row = _unjudged_rows(lists, keys)
    pool = label_priors.pool_priors(lists.topic_counts, lists.topic_of_list[list_of_row])
    every_list = np.repeat(np.arange(len(lists.topic_of_list)), np.diff(lists.offsets))
    seen = (lists.codes >= 0) & (lists.position < options["pool_depth"])
    run_counts = label_priors.grade_counts(lists.codes[seen], every_list[seen], len(lists.topic_of_list),
                                           len(lists.grades))
    counts = run_counts[list_of_row]
    base = label_priors.both_priors(pool, label_priors.shares(counts), counts.sum(axis=1) > 0)
    return unique_priors.unit_effect(base, run_of_row, keys["run"].nunique(), factors)


def _called_priors(automatic, run, lists, keys, score_precision, depth) -> np.ndarray:
    """(unjudged rows x grades) probabilities returned by the callable ``automatic``, called once
    with the distinct unjudged (query_id, doc_id) pairs and checked."""
    list_of_row, _ = _unjudged_rows(lists, keys)
    rows = pd.DataFrame({"run": keys["run"].to_numpy()[list_of_row], "query_id": keys["query_id"].to_numpy()[list_of_row],
                         "rank": lists.position[lists.unjudged] + 1})
    ranked = rank_run(run[["run", "query_id", "doc_id", "score"]], score_precision=score_precision, depth=depth)
    n_grades = len(lists.grades)
    if not len(rows):
        return np.zeros((0, n_grades))
    rows = rows.merge(ranked[["run", "query_id", "rank", "doc_id"]], on=["run", "query_id", "rank"], how="left")
    pairs, pair_of_row = np.unique(np.stack([rows["query_id"].to_numpy(dtype=str), rows["doc_id"].to_numpy(dtype=str)]),
                                   axis=1, return_inverse=True)
    got = np.asarray(automatic(pairs[0].astype(object), pairs[1].astype(object)), dtype=np.float64)
    grades = ", ".join(str(g) for g in lists.grades)
    if got.shape != (pairs.shape[1], n_grades):
        raise PdevalError(f"automatic= returned an array of shape {got.shape} for {pairs.shape[1]} unjudged pairs; "
                          f"it must return ({pairs.shape[1]}, {n_grades}): one row per pair, one column per grade "
                          f"({grades})")
    bad = ~np.isfinite(got).all(axis=1) | (got < 0).any(axis=1) | ~np.isclose(got.sum(axis=1), 1.0, atol=1e-6)
    if bad.any():
        first = int(np.flatnonzero(bad)[0])
        raise PdevalError(f"automatic= returned {int(bad.sum())} row(s) that are not probabilities (NaN, negative, "
                          f"or not summing to 1), first for query_id {pairs[0, first]!r}, doc_id {pairs[1, first]!r}: "
                          f"{got[first].tolist()}; return one probability per grade ({grades}), each row summing to 1")
    return got[np.ravel(pair_of_row)]


def _priors(lists, qrels, automatic, auto_level, method, prior, window, smoothing, cutoff=None):
    """(unjudged rows x grades) probabilities, or the calibrated prior drawn per resample
    (``cutoff``: the measures' largest, which the ``"condensed"`` prior condenses at)."""
    unjudged = lists.unjudged
    list_of_row = np.repeat(np.arange(len(lists.topic_of_list)), np.diff(lists.offsets))
    pool = label_priors.pool_priors(lists.topic_counts, lists.topic_of_list[list_of_row][unjudged])
    if method == "labels":
        return label_priors.calibrated_priors(qrels, automatic, lists.grades,
                                              auto_level[unjudged], pool, smoothing=smoothing)
    if prior == "pool":
        return pool
    if prior == "condensed":
        counts = label_priors.condensed_counts(lists.codes, lists.offsets, cutoff, len(lists.grades))
        return label_priors.shrunk(counts[list_of_row][unjudged], pool)
    counts = label_priors.run_counts(lists.codes, lists.offsets, list_of_row, window, len(lists.grades))[unjudged]
    if prior == "run":
        return label_priors.shrunk(counts, pool)
    return label_priors.both_priors(pool, label_priors.shares(counts), counts.sum(axis=1) > 0)


# ---- drawing ---------------------------------------------------------------------------------
def _draw_values(lists, probabilities, parsed, n_resamples, rng, progress):
    """Today's values (lists x measures) and the values over the draws (draws x lists x measures).

    ``probabilities``: (unjudged rows x grades), or a prior of :data:`DRAWN` whose probabilities
    are drawn anew for every resample (:class:`~pdeval.analysis.estimates.unique_priors.UnitEffect`: one
    unit per run; :class:`~pdeval.analysis.estimates.label_priors.CalibrationEffect`: one resample of the
    calibration topics)."""
    n_rows = len(lists.position)
    value = resampled_measures.drawn_values(lists, np.maximum(lists.codes, 0)[None, :], parsed)[0]
    effect = isinstance(probabilities, DRAWN)
    # the chunks (and so the random stream) are those of every row, whichever lists are recomputed
    chunk = max(1, CHUNK_CELLS // (max(n_rows, 1) * (len(lists.grades) if effect else 1)))
    cumulative = None if effect else np.cumsum(probabilities, axis=1)[None, :, :-1]
    starts = range(0, n_resamples, chunk)
    out = np.repeat(value[None, :, :], n_resamples, axis=0)  # a list without unjudged rows keeps today's value
    varying = lists.drawn()
    drawn_lists = lists.take(varying)  # its unjudged rows are those of ``lists``, in the same order
    base = np.maximum(drawn_lists.codes, 0)[None, :]  # unjudged rows as grade 0 (nonrelevant): today's value
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="estimate"):
        size = min(chunk, n_resamples - start)
        if effect:
            cumulative = np.cumsum(probabilities.draw(size, rng), axis=2)[:, :, :-1]
        drawn = (rng.random((size, int(lists.unjudged.sum())))[:, :, None] >= cumulative).sum(axis=2)
        codes = np.repeat(base, size, axis=0)
        codes[:, drawn_lists.unjudged] = drawn
        out[start:start + size, varying] = resampled_measures.drawn_values(drawn_lists, codes, parsed)
    return out, value


# ---- output ----------------------------------------------------------------------------------
def _tidy(keys, parsed, lists, value, draws, confidence, level) -> pd.DataFrame:
    low_q, high_q = (1.0 - confidence) / 2.0, (1.0 + confidence) / 2.0
    names = [str(m) for m in parsed]
    if level == "run":
        run_code, runs = pd.factorize(keys["run"], sort=True)
        n_runs = len(runs)
        topics = np.bincount(run_code, minlength=n_runs).astype(np.float64)

        def mean_by_run(matrix: np.ndarray) -> np.ndarray:  # (..., lists, measures) -> (..., runs, measures)
            moved = np.moveaxis(matrix, -2, 0)
            sums = np.zeros((n_runs,) + moved.shape[1:])
            np.add.at(sums, run_code, moved)
            return np.moveaxis(sums / topics.reshape((-1,) + (1,) * (sums.ndim - 1)), 0, -2)

        value, draws = mean_by_run(value), mean_by_run(draws)
        frame_keys = pd.DataFrame({"run": np.asarray(runs, dtype=object)})
        extra = {"topics": np.repeat(topics.astype(np.int64), len(names))}
    else:
        frame_keys = keys
        unjudged = [np.add.reduceat((lists.unjudged & lists.within(m.cutoff)).astype(np.int64),
                                    lists.offsets[:-1]) for m in parsed]
        extra = {"unjudged": np.stack(unjudged, axis=-1).reshape(-1)}
    n_keys = len(frame_keys)
    frame = frame_keys.loc[np.repeat(np.arange(n_keys), len(names))].reset_index(drop=True)
    frame["measure"] = np.tile(names, n_keys)
    frame["value"] = value.reshape(-1)
    low, high = np.quantile(draws, low_q, axis=0).reshape(-1), np.quantile(draws, high_q, axis=0).reshape(-1)
    # the mean of equal draws can differ from them in the last bit: it stays within the interval
    frame["estimate"] = np.clip(draws.mean(axis=0).reshape(-1), np.minimum(low, high), np.maximum(low, high))
    frame["low"], frame["high"] = low, high
    for name, column in extra.items():
        frame[name] = column
    return frame


__all__ = ["estimate"]
