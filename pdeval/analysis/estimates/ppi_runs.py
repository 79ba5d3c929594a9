"""``estimate(..., method="ppi")``: prediction-powered inference of run means from the human
labels of a random sample of the topics and automatic labels of every topic (the estimators
are :mod:`pdeval.analysis.estimates.ppi`'s), and the automatic labels ``estimate`` reads.

With complete judgments (human labels for every topic that has automatic ones) the run mean is
known: the estimate is the human labels' mean with an interval of width zero (λ = 0, the
automatic labels play no part), with or without ``strata``."""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from pdeval.analysis.estimates.ppi import ppi_mean, stratified_ppi_mean
from pdeval.errors import DuplicateError, PdevalError, SchemaError
from pdeval.evaluation.core import evaluate
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.measures import Measure

__all__ = ["automatic_labels", "ppi_estimate"]


def automatic_labels(automatic: pd.DataFrame) -> pd.DataFrame:
    """``automatic=`` as a canonical qrels frame; a repeated (topic, document) label is
    blamed on ``automatic=``, with the remedy that applies to it."""
    try:
        return as_qrels(automatic)
    except DuplicateError as exc:
        raise DuplicateError(
            f"estimate(): automatic= repeats a label of a (query_id, doc_id) pair ({str(exc).split('. Pass')[0]}); keep "
            "one label per pair, e.g. automatic.drop_duplicates(['query_id', 'doc_id'])"
        ) from None


def ppi_estimate(run, qrels, parsed, automatic, baseline, confidence, tuned, strata, score_precision, depth) -> pd.DataFrame:
    if not isinstance(automatic, pd.DataFrame):
        raise PdevalError("estimate(): method='ppi' needs automatic= (a qrels frame of automatic labels for every "
                          "topic)")
    if len(qrels) == 0:
        raise SchemaError("estimate(): the human qrels (qrels=) have no rows: PPI needs the human labels of a "
                          "random sample of the topics")
    if len(run) == 0:
        raise SchemaError("estimate(): the run frame has no rows: nothing to estimate")
    human, auto = as_qrels(qrels), automatic_labels(automatic)
    labelled = pd.unique(human.loc[human["relevance"] >= 0, "query_id"].astype(str))
    every = pd.unique(auto.loc[auto["relevance"] >= 0, "query_id"].astype(str))
    missing = sorted(set(labelled) - set(every), key=str)
    if missing:
        raise SchemaError(f"{len(missing)} topic(s) have human labels but no automatic ones ({missing[:3]}): PPI "
                          "needs the automatic labels of every topic")
    unlabelled = np.array(sorted(set(every) - set(labelled), key=str), dtype=object)
    complete = len(unlabelled) == 0  # every topic judged by humans: the mean is known, nothing to infer
    stratum_of = None if strata is None or complete else _strata_of(strata, labelled, unlabelled)
    options: dict[str, Any] = {"complete": True, "score_precision": score_precision, "depth": depth}
    run = as_run(run)
    on_labelled = run.loc[run["query_id"].astype(str).isin(labelled)]  # the other topics have no human label
    gold = _matrix(evaluate(on_labelled, human, parsed, **options), labelled, parsed)
    predicted = _matrix(evaluate(run, auto, parsed, **options), np.r_[labelled, unlabelled], parsed)
    runs = gold.columns.get_level_values(0).unique()
    rows = []
    for measure in (str(m) for m in parsed):
        Y = gold.xs(measure, axis=1, level=1).reindex(columns=runs)
        Yhat_all = predicted.xs(measure, axis=1, level=1).reindex(columns=runs).fillna(0.0)
        Yhat, Yu = Yhat_all.loc[labelled], Yhat_all.loc[unlabelled]
        names = list(runs)
        if baseline is not None:
            if baseline not in names:
                raise PdevalError(f"estimate(): baseline={baseline!r} is not a run of the frame; runs: {names[:5]}")
            others = [n for n in names if n != baseline]
            Y, Yhat, Yu = (m[others].sub(m[baseline], axis=0) for m in (Y, Yhat, Yu))
            names = others
        extra: dict[str, Any] = {}
        if complete:
            est, lam = Y.mean().to_numpy(), np.zeros(len(names))
            low = high = est
        elif stratum_of is None:
            est, low, high, lam = ppi_mean(Y.to_numpy(), Yhat.to_numpy(), Yu.to_numpy(), confidence=confidence,
                                           tuned=tuned)
        else:
            got = stratified_ppi_mean(Y.to_numpy(), Yhat.to_numpy(), Yu.to_numpy(), stratum_of[0], stratum_of[1],
                                      confidence=confidence, tuned=tuned)
            est, low, high, lam = got.estimate, got.low, got.high, got.weights @ got.lam
            extra = {"strata": len(got.strata)}
        rows.append(pd.DataFrame({
            "run": names, "measure": measure, "value": Y.mean().to_numpy(),
            "automatic": pd.concat([Yhat, Yu]).mean().to_numpy(),
            "estimate": est, "low": low, "high": high, "labelled": len(labelled), "unlabelled": len(unlabelled),
            "lam": lam, **extra,
        }))
    frame = pd.concat(rows, ignore_index=True)
    if baseline is not None:
        frame.insert(1, "baseline", baseline)
    return frame


def _strata_of(strata, labelled: np.ndarray, unlabelled: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The stratum of each labelled and unlabelled topic from ``strata=``, checked: every topic
    has one, and every stratum has at least 2 labelled and 1 unlabelled topic."""
    topics = pd.Series(np.r_[labelled, unlabelled], dtype=object)
    if isinstance(strata, pd.Series):
        strata = strata.to_dict()
    if isinstance(strata, Mapping):
        labels = topics.map({str(key): value for key, value in strata.items()})
    elif callable(strata):
        labels = topics.map(strata)
    else:
        raise PdevalError(f"strata must be None, a mapping query_id -> stratum or a callable, not "
                          f"{type(strata).__name__}")
    missing = topics[labels.isna()].tolist()
    if missing:
        raise PdevalError(f"{len(missing)} topic(s) with automatic labels have no stratum in strata= ({missing[:5]}): "
                          "give every topic a stratum (stratified PPI weighs each stratum by its share of all topics)")
    labels = labels.astype(object)
    every = pd.unique(labels)
    n_k = labels[:len(labelled)].value_counts().reindex(every, fill_value=0).to_numpy()
    N_k = labels[len(labelled):].value_counts().reindex(every, fill_value=0).to_numpy()
    refused = np.flatnonzero((n_k < 2) | (N_k < 1))
    if len(refused):
        stratum, n_k, N_k = every[refused[0]], int(n_k[refused[0]]), int(N_k[refused[0]])
        raise PdevalError(f"stratum {stratum!r} has {n_k} human-labelled and {N_k} unlabelled topic(s): stratified "
                          "PPI needs at least 2 labelled and 1 unlabelled topic per stratum; label more of its "
                          "topics (or leave one unlabelled), or merge it with another stratum")
    return labels[:len(labelled)].to_numpy(), labels[len(labelled):].to_numpy()


def _matrix(result: pd.DataFrame, topics: np.ndarray, parsed: Sequence[Measure]) -> pd.DataFrame:
    """topics x (run, measure) values; a topic a run lacks counts 0 (evaluated complete)."""
    table = result.assign(query_id=result["query_id"].astype(str)).pivot_table(
        index="query_id", columns=["run", "measure"], values="value", aggfunc="first")
    return table.reindex(index=pd.Index(topics, dtype=object)).fillna(0.0)
