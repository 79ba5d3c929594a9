"""Designing a judging sample: stratified samples of a depth pool and inclusion-probability samples.

With complete judgments of a pool, these functions draw the samples that campaigns judge, so
that the sampled estimators (:mod:`pdeval.measures.stratified`, :mod:`pdeval.measures.statap`)
can be studied against the measures computed on the complete judgments:

* :func:`sample_pool` — the stratified design of Yilmaz, Kanoulas & Aslam (SIGIR 2008) used by
  TREC CDS, PM and TRECVID: the depth pool is split into depth strata (e.g. ranks 1–10, 11–30,
  31–100 of the best rank any run gives a document), each sampled uniformly at its own rate.
  The result is ``sample_eval.pl`` qrels: every pooled document with its ``stratum``, the
  judgment of the sampled ones and ``-1`` for the others; ``xinfAP``, ``infNDCG`` and ``iP@k``
  evaluate it.
* :func:`sample_inclusion` — a sample with known inclusion probabilities for ``statAP``
  (Aslam, Pavlu & Yilmaz, SIGIR 2006): each pooled document gets a weight from the AP prior of
  its ranks, and is included independently with probability π = min(1, c·weight), c chosen
  so that the expected sample size per topic is ``size`` (Poisson sampling; the 2006 paper
  samples with replacement, whose inclusion probabilities 1 − (1 − p)^n the same estimator
  takes). The result holds the sampled documents with their ``inclusion_prob``.

Both take ``samples=`` (a ``sample`` variant column when > 1) and ``seed``; every draw is
vectorised over topics and samples.
"""

from __future__ import annotations

import warnings
from typing import Optional, Sequence

import numpy as np
import pandas as pd

from pdeval.common.seeds import Seed, base_seed
from pdeval.judgments.draws import key_bits, random_keys, ranks_by_key
from pdeval.errors import PdevalError, PdevalWarning
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.common.contract import Integer, ListOf, Real, contract
from pdeval.engine.options import OPTION_DOMAINS
from pdeval.frames.domains import Frame
from pdeval.judgments.domains import POOL_DEPTH, POOLED, SEED
from pdeval.judgments.pooling import best_ranks, row_positions, select_runs
from pdeval.engine.ranking import ScorePrecision, rank_run

__all__ = ["sample_pool", "sample_inclusion", "ap_prior"]


def _judged_pool(qrels: pd.DataFrame, run: pd.DataFrame, pool_depth: int, pooled, score_precision) -> pd.DataFrame:
    """``query_id, doc_id, best_rank, relevance`` of the depth pool's documents that the qrels judge.

    Pooled documents without a judgment cannot be sampled: they are left out with a warning.
    """
    qrels = as_qrels(qrels)
    if len(qrels.columns) > 3:
        raise PdevalError(
            f"qrels: sampling takes one complete qrels (query_id, doc_id, relevance); these have extra columns "
            f"{[c for c in qrels.columns if c not in ('query_id', 'doc_id', 'relevance')]}: select one variant and drop the other columns first"
        )
    best = best_ranks(run, pool_depth, pooled, score_precision)
    position = row_positions(qrels, best["query_id"], best["doc_id"])
    level = np.where(position >= 0, qrels["relevance"].to_numpy()[np.maximum(position, 0)], -1)
    judged = level >= 0
    if not judged.all():
        warnings.warn(
            f"{int((~judged).sum())} pooled document(s) have no judgment in the qrels and cannot be sampled; "
            "they are left out of the sample (as documents outside the pool)",
            PdevalWarning,
            stacklevel=4,  # the caller of sample_pool / sample_inclusion (through the contract's wrapper)
        )
    return best.assign(relevance=level)[judged].reset_index(drop=True)


def _with_samples(frame: pd.DataFrame, samples: int) -> pd.DataFrame:
    return frame if samples == 1 else frame.assign(sample=np.repeat(np.arange(samples), len(frame) // samples))


@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    strata=ListOf(Integer(1), unique=True),
    rates=ListOf(Real(0, 1, closed="right")),
    samples=Integer(1),
    seed=SEED,
    pooled=POOLED,
    score_precision=OPTION_DOMAINS["score_precision"],
    remedies={"strata": "increasing depth bounds such as (10, 30, 100)", "rates": "one share in (0, 1] per stratum"},
)
def sample_pool(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    strata: Sequence[int] = (10, 30, 100),
    rates: Sequence[float] = (1.0, 0.5, 0.1),
    samples: int = 1,
    seed: Seed = 0,
    pooled: Optional[Sequence[str]] = None,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """A stratified sample of the depth pool of ``run``, as ``sample_eval.pl`` qrels.

    ``strata`` are the upper depth bounds of consecutive strata: ``(10, 30, 100)`` makes stratum
    ``"1"`` of the documents whose best rank over the runs is 1–10, ``"2"`` of 11–30 and ``"3"``
    of 31–100 (the pool's depth is the last bound). From stratum c of a topic, with n_c documents,
    ⌈rate_c · n_c⌉ are drawn uniformly without replacement (at least one of a nonempty stratum;
    ``rate = 1`` judges the stratum completely). ``qrels`` are the complete judgments: a sampled
    document keeps its level, the others get ``-1``; pooled documents the qrels do not judge are
    left out with a warning. The result is ready for ``xinfAP`` / ``infNDCG`` / ``iP@k``
    (Yilmaz, Kanoulas & Aslam, SIGIR 2008, "A simple and efficient sampling method for
    estimating AP and NDCG"). Every sample draws its own random order of each (topic, stratum)
    from ``seed``.

    Parameters
    ----------
    run : DataFrame
        The run frame whose pool is sampled.
    qrels : DataFrame
        The complete judgments (``query_id, doc_id, relevance``): a sampled document keeps its
        level.
    strata : list of int, default (10, 30, 100)
        Increasing upper depth bounds of the strata.
    rates : list of float, default (1.0, 0.5, 0.1)
        The share of each stratum that is judged, in (0, 1], one per stratum.
    samples : int, default 1
        The number of independent samples (a ``sample`` column when > 1).
    seed : int, numpy Generator or None, default 0
        An integer, None (fresh entropy) or a ``numpy.random.Generator``.
    pooled : list of str, optional
        The runs that make the pool (default: every run).
    score_precision : {'float64', 'float32'}, default 'float64'
        As :func:`pdeval.evaluate` orders scores.

    Returns
    -------
    DataFrame
        ``[sample,] query_id, doc_id, stratum, relevance`` (``sample`` first when
        ``samples > 1``).

    Raises
    ------
    PdevalError
        Strata that do not increase, not one rate per stratum, qrels with extra columns, a
        parameter outside its domain.

    See Also
    --------
    sample_inclusion : A sample with inclusion probabilities, for statAP.
    pool : The depth-k pool itself.
    evaluate : xinfAP, infNDCG and iP@k on the sample.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 4, "query_id": ["q1"] * 4, "doc_id": ["d1", "d2", "d3", "d4"],
    ...                     "score": [4.0, 3.0, 2.0, 1.0]})
    >>> qrels = pd.DataFrame({"query_id": ["q1"] * 4, "doc_id": ["d1", "d2", "d3", "d4"],
    ...                       "relevance": [1, 0, 1, 1]})
    >>> sample = pdeval.sample_pool(run, qrels, strata=[2, 4], rates=[1.0, 0.5])
    >>> sample.groupby("stratum")["relevance"].apply(lambda r: int((r >= 0).sum()))  # judged per stratum
    stratum
    1    2
    2    1
    Name: relevance, dtype: int64
    """
    bounds = strata
    if bounds != sorted(bounds):
        raise PdevalError(f"sample_pool(): strata={list(strata)} are not increasing depth bounds such as (10, 30, 100)")
    rate = np.asarray(rates, dtype=np.float64)
    if len(rate) != len(bounds):
        raise PdevalError(
            f"sample_pool(): rates={list(rates)} has {len(rate)} rate(s) for {len(bounds)} strata; give one rate in "
            "(0, 1] per stratum"
        )
    pool = _judged_pool(qrels, run, bounds[-1], pooled, score_precision)
    stratum = np.searchsorted(np.asarray(bounds), pool["best_rank"].to_numpy(), side="left")
    topic_code = pd.factorize(pool["query_id"])[0]
    group = topic_code.astype(np.int64) * len(bounds) + stratum
    n_groups = int(group.max()) + 1 if len(group) else 1
    size = np.bincount(group, minlength=n_groups)
    wanted = np.ceil(rate[np.arange(n_groups) % len(bounds)] * size - 1e-12).astype(np.int64)
    rng = np.random.default_rng(base_seed(seed))
    bits = key_bits(n_groups * samples)
    every = np.tile(group, samples) + np.repeat(np.arange(samples, dtype=np.int64) * n_groups, len(group))
    order = ranks_by_key(every, random_keys(rng, len(every), bits), bits)
    chosen = order < np.tile(wanted[group], samples)
    out = pd.DataFrame(
        {
            "query_id": np.tile(pool["query_id"].to_numpy(), samples),
            "doc_id": np.tile(pool["doc_id"].to_numpy(), samples),
            "stratum": np.tile((stratum + 1).astype(str), samples),
            "relevance": np.where(chosen, np.tile(pool["relevance"].to_numpy(), samples), -1),
        }
    )
    out = _with_samples(out, samples)
    return out[["sample", "query_id", "doc_id", "stratum", "relevance"]] if samples > 1 else out


def ap_prior(rank: np.ndarray, depth: int) -> np.ndarray:
    """The AP prior of Aslam, Pavlu & Savell (2003) for a list of length ``depth``:

        w(r) = (1 / 2N) · (1 + Σ_{i=r}^{N} 1/i),   N = depth,

    a distribution over the ranks 1..N (it sums to 1) that weights a rank by its share in AP."""
    harmonic = np.concatenate((np.cumsum(1.0 / np.arange(depth, 0, -1))[::-1], [0.0]))  # Σ_{i=r}^{N} 1/i
    return (1.0 + harmonic[np.asarray(rank) - 1]) / (2.0 * depth)


def _inclusion_probabilities(weight: np.ndarray, topic: np.ndarray, size: float) -> np.ndarray:
    """π = min(1, c_t · weight) per topic t with Σ_t π = min(size, documents of t): the
    documents whose π reaches 1 are fixed and c_t recomputed for the others until none is added
    (a loop over capping rounds, not over topics)."""
    n_topics = int(topic.max()) + 1 if len(topic) else 0
    count = np.bincount(topic, minlength=n_topics).astype(np.float64)
    target = np.minimum(float(size), count)
    capped = np.zeros(len(weight), dtype=bool)
    while True:
        free_weight = np.bincount(topic, weights=np.where(capped, 0.0, weight), minlength=n_topics)
        fixed = np.bincount(topic, weights=capped, minlength=n_topics)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(free_weight > 0, (target - fixed) / free_weight, 0.0)
        prob = np.where(capped, 1.0, np.minimum(1.0, scale[topic] * weight))
        newly = ~capped & (prob >= 1.0)
        if not newly.any():
            return prob
        capped |= newly


@contract(
    run=Frame("run"),
    qrels=Frame("qrels", variants=False),
    size=Real(0, closed="right"),
    pool_depth=POOL_DEPTH,
    samples=Integer(1),
    seed=SEED,
    pooled=POOLED,
    score_precision=OPTION_DOMAINS["score_precision"],
    remedies={"size": "the expected number of sampled documents per topic"},
)
def sample_inclusion(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    *,
    size: float,
    pool_depth: int = 100,
    samples: int = 1,
    seed: Seed = 0,
    pooled: Optional[Sequence[str]] = None,
    score_precision: ScorePrecision = "float64",
) -> pd.DataFrame:
    """A sample of the depth pool with known inclusion probabilities, as statAP prels.

    Each document of the depth-``pool_depth`` pool of ``run`` gets the weight Σ_runs w(rank) /
    #runs (:func:`ap_prior` with N = ``pool_depth``; a run that does not retrieve it within
    ``pool_depth`` adds 0), its inclusion probability π = min(1, c·weight) with c such that the
    expected number of sampled documents per topic is ``size`` (all of them when the pool is
    smaller), and is sampled independently with probability π. Evaluate the result with
    ``statAP``, ``statP@k``, ...: R̂ = Σ 1/π over the sampled relevant documents is unbiased for
    R (Aslam, Pavlu & Yilmaz, SIGIR 2006, "A statistical method for system evaluation using
    incomplete judgments").

    Parameters
    ----------
    run : DataFrame
        The run frame whose depth pool is sampled.
    qrels : DataFrame
        The complete judgments (``query_id, doc_id, relevance``): a sampled document keeps its
        level.
    size : float
        The expected number of sampled documents per topic (> 0).
    pool_depth : int, default 100
        The depth of the pool.
    samples : int, default 1
        The number of independent samples (a ``sample`` column when > 1).
    seed : int, numpy Generator or None, default 0
        An integer, None (fresh entropy) or a ``numpy.random.Generator``.
    pooled : list of str, optional
        The runs whose depth pool is sampled (default: every run).
    score_precision : {'float64', 'float32'}, default 'float64'
        As :func:`pdeval.evaluate` orders scores.

    Returns
    -------
    DataFrame
        ``[sample,] query_id, doc_id, relevance, inclusion_prob`` of the sampled documents, the
        judgments from ``qrels`` (``sample`` first when ``samples > 1``).

    Raises
    ------
    PdevalError
        An unknown pooled run, qrels with extra columns, a parameter outside its domain.

    See Also
    --------
    sample_pool : A stratified sample, for xinfAP and infNDCG.
    prels_qrels : statAP prels read from files.
    evaluate : statAP and statP@k on the sample.

    Examples
    --------
    >>> docs = [f"d{i}" for i in range(1, 7)]
    >>> run = pd.DataFrame({"run": "a", "query_id": "q1", "doc_id": docs, "score": [6.0, 5, 4, 3, 2, 1]})
    >>> qrels = pd.DataFrame({"query_id": "q1", "doc_id": docs, "relevance": [1, 0, 1, 1, 0, 0]})
    >>> sample = pdeval.sample_inclusion(run, qrels, size=3, pool_depth=6, samples=100)
    >>> sample.groupby("doc_id")["inclusion_prob"].first().round(2)  # rank 1 most likely
    doc_id
    d1    0.86
    d2    0.61
    d3    0.49
    d4    0.40
    d5    0.34
    d6    0.29
    Name: inclusion_prob, dtype: float64
    """
    pool = _judged_pool(qrels, run, pool_depth, pooled, score_precision)
    chosen_runs = select_runs(as_run(run), pooled)
    ranked = rank_run(chosen_runs[["run", "query_id", "doc_id", "score"]], score_precision=score_precision,
                      depth=pool_depth)
    n_runs = ranked["run"].nunique()
    prior = pd.Series(ap_prior(ranked["rank"].to_numpy(), pool_depth) / max(n_runs, 1))
    weights = prior.groupby([ranked["query_id"].to_numpy(), ranked["doc_id"].to_numpy()]).sum()
    key = pd.MultiIndex.from_arrays([pool["query_id"].to_numpy(), pool["doc_id"].to_numpy()])
    weight = weights.reindex(key).to_numpy(dtype=np.float64)
    topic = pd.factorize(pool["query_id"])[0]
    prob = _inclusion_probabilities(weight, topic, size)
    rng = np.random.default_rng(base_seed(seed))
    draw = rng.random((samples, len(pool))) < prob[None, :]
    sample, row = np.nonzero(draw)
    out = pd.DataFrame(
        {
            "query_id": pool["query_id"].to_numpy()[row],
            "doc_id": pool["doc_id"].to_numpy()[row],
            "relevance": pool["relevance"].to_numpy()[row],
            "inclusion_prob": prob[row],
        }
    )
    if samples > 1:
        out.insert(0, "sample", sample)
    return out
