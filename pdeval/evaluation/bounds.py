"""How much could the unjudged documents change each score: [low, high] of any measure.

Every measure treats a retrieved document nobody judged in one fixed way (as nonrelevant, or
removed). ``bounds`` answers the other half of the question a user asks of an incomplete
pool: if those documents had been judged, how far could the score move?

* ``low``: the value as evaluated today (unjudged documents as the measure treats them).
* ``high``: the value when every unjudged document the run retrieved is judged relevant at
  ``grade`` (default: the top grade of the qrels variant). The documents join the qrels of
  that run only, so wherever a measure's normaliser depends on the judgments (R for AP,
  R-prec, recall, bpref; the ideal list of nDCG and Q) it grows by the same documents.
* ``residual = high - low``.

*Unjudged* means pooled (``-1``) or absent from the qrels (``unjudged="all"``); ``"absent"``
or ``"pooled"`` fills only one kind. With ``depth=`` (trec_eval ``-M``) only the documents
within the depth are retrieved, hence filled.

The bound is exact by definition, for every registered measure: each run is re-evaluated
against its own filled qrels. All runs, topics and qrels variants go through the engine in
one pass: each (system, topic) becomes a topic of its own whose qrels are the topic's qrels
plus that system's filled documents. Not every measure grows when relevant documents are
added (bpref, for instance, can fall when a new relevant document sits below many judged
nonrelevant ones), so ``high`` is the filled value, which is not always the larger one.
For RBP, ``high`` fills only the retrieved documents; ``RBP(residual=True)`` also counts the
ranks beyond the list (Moffat & Zobel 2008).
"""

from __future__ import annotations

import warnings
from typing import Iterable, Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError, PdevalWarning
from pdeval.engine.index import key_codes
from pdeval.evaluation.core import MeasureLike, evaluate
from pdeval.frames.canonical import as_qrels, as_run, drop_duplicates, variant_keys
from pdeval.engine.ids import encode
from pdeval.measures import parse_all
from pdeval.engine.ranking import rank_run

__all__ = ["bounds", "summarize_bounds", "BOUND_COLUMNS"]

#: the value columns of a bounds frame
BOUND_COLUMNS = ("low", "high", "residual")

Unjudged = Literal["all", "absent", "pooled"]


def bounds(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[MeasureLike, Iterable[MeasureLike]],
    *,
    unjudged: Unjudged = "all",
    grade: Optional[int] = None,
    by: Optional[Union[str, Sequence[str]]] = None,
    **options,
) -> pd.DataFrame:
    """Per-topic ``low``, ``high`` and ``residual`` of every measure (module docstring).

    Parameters
    ----------
    run, qrels, measures, by, options
        As for :func:`pdeval.evaluate` (``depth``, ``complete``, ``judged_only``,
        ``score_precision``, ``rel``, ``gains``, ``undefined``, ``duplicates`` ...).
    unjudged
        Which retrieved documents are filled: ``"all"`` (pooled and absent, default),
        ``"absent"`` (not in the qrels) or ``"pooled"`` (``-1`` entries).
    grade
        The relevance level given to the filled documents; default the largest level of
        each qrels variant (at least 1). A grade above a variant's top grade would raise the collection-
        wide maximum that some normalisers use (``gain_max``), so it is refused for those
        measures unless they are given ``gain_max=``.

    Returns
    -------
    DataFrame with the key columns of :func:`pdeval.evaluate` (``run``, ``by`` columns,
    qrels variant columns, ``query_id``), ``measure``, ``low``, ``high`` and ``residual``.
    :func:`pdeval.summarize` averages it per run (mean ``value`` = mean low, with ``high``
    and ``residual``).
    """
    if unjudged not in ("all", "absent", "pooled"):
        raise PdevalError(f"unjudged must be 'all', 'absent' or 'pooled', not {unjudged!r}")
    by = [by] if isinstance(by, str) else list(by or [])
    duplicates = options.get("duplicates", "error")
    parsed = parse_all(measures, judged_only=options.get("judged_only", False), rel=options.get("rel"),
                       gains=options.get("gains"))
    run = as_run(run, by=by, duplicates=None)
    qrels = as_qrels(qrels, duplicates=None)
    low = evaluate(run, qrels, parsed, by=by, **options)  # raises on repeated keys unless a policy is chosen
    if duplicates != "error":  # the policy keeps one row per key, as the evaluation did
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PdevalWarning)  # the evaluation has warned already
            run = drop_duplicates(run, ["run", *by, "query_id", "doc_id"], duplicates, kind="run", value="score")
            qrels = drop_duplicates(qrels, [*variant_keys(qrels), "query_id", "doc_id"], duplicates, kind="qrels",
                                    value="relevance")
    if options.get("depth") is not None:
        run = rank_run(run, by=by, score_precision=options.get("score_precision", "float64"), depth=options["depth"])
    filled_run, filled_qrels, pairs = _filled(run, qrels, by, unjudged, grade, parsed, options.get("complete", False))
    with warnings.catch_warnings():  # the evaluation of the run as given has warned already; these
        warnings.simplefilter("ignore", PdevalWarning)  # topics are (system, topic) codes
        high = evaluate(filled_run, filled_qrels, parsed, **options)
    # back from (system, topic) codes to the run's keys and topic ids
    code = high["query_id"].astype(np.int64).to_numpy()
    back = pairs.iloc[code].reset_index(drop=True)
    high = pd.concat([back, high.drop(columns=["run", "query_id"]).reset_index(drop=True)], axis=1)
    keys = [c for c in low.columns if c not in ("measure", "value")]
    out = low.rename(columns={"value": "low"}).merge(
        high.rename(columns={"value": "high"}), on=[*keys, "measure"], how="left", validate="one_to_one"
    )
    out["residual"] = out["high"] - out["low"]
    return out


def _filled(run, qrels, by, unjudged, grade, parsed, complete):
    """The run with one topic per (system, topic) and the qrels of those topics, each the
    topic's qrels plus the system's unjudged retrieved documents at ``grade``; and the table
    of (system keys, query_id) of each new topic (its row number is the new topic id)."""
    keys = variant_keys(qrels)
    topics = pd.Index(np.sort(qrels["query_id"].unique()))
    topic = topics.get_indexer(run["query_id"])
    keep = topic >= 0  # topics absent from the qrels are not evaluated
    system, systems = key_codes(run, ["run", *by])
    n_systems = len(systems)
    run_doc, docs = encode(run["doc_id"])
    qrels_doc = docs.get_indexer(qrels["doc_id"])
    unseen = qrels_doc < 0  # qrels documents no run retrieved get codes after the run's
    extra, extra_docs = pd.factorize(qrels["doc_id"][unseen])
    qrels_doc[unseen] = len(docs) + extra
    docs = docs.append(pd.Index(extra_docs))
    n_docs = max(len(docs), 1)
    topic, system, run_doc = topic[keep], system[keep], run_doc[keep]
    score = run["score"].to_numpy()[keep]
    n_topics = len(topics)
    variant, variants = key_codes(qrels, keys)
    n_variants = len(variants)
    q_topic = topics.get_indexer(qrels["query_id"])
    level = qrels["relevance"].to_numpy(dtype=np.int64)
    top = np.full(n_variants, 0, dtype=np.int64)
    np.maximum.at(top, variant, level)
    fill_level = _fill_levels(top, grade, parsed)
    has_topic = np.zeros((n_variants, n_topics), dtype=bool)
    has_topic[variant, q_topic] = True

    # each run row's judgment in each variant: a sorted lookup of (variant, topic, doc) keys,
    # one variant at a time (memory stays that of the run)
    qrels_key = (variant * n_topics + q_topic) * n_docs + qrels_doc
    order = np.argsort(qrels_key, kind="stable")
    sorted_key = qrels_key[order]
    parts = [(np.zeros(0, dtype=np.int64),) * 2 + (np.zeros(0, dtype=bool),)]
    for v in range(n_variants if len(sorted_key) else 0):
        key = (v * n_topics + topic) * n_docs + run_doc
        at = np.minimum(np.searchsorted(sorted_key, key), len(sorted_key) - 1)
        found = sorted_key[at] == key
        pooled = found & (level[order[at]] < 0)
        fill = {"all": ~found | pooled, "absent": ~found, "pooled": pooled}[unjudged] & has_topic[v, topic]
        rows = np.flatnonzero(fill)
        parts.append((np.full(len(rows), v), rows, pooled[rows]))
    fill_variant, fill_row, replaced = (np.concatenate(p) for p in zip(*parts))
    fill_pair = system[fill_row] * n_topics + topic[fill_row]
    fill_doc = run_doc[fill_row]

    # the qrels of every (system, topic): the topic's rows repeated for each system that needs them
    if complete:
        pair = np.arange(n_systems * n_topics)
    else:
        pair = np.unique(system * n_topics + topic)
    by_topic = np.argsort(q_topic, kind="stable")
    starts = np.searchsorted(q_topic[by_topic], np.arange(n_topics + 1))
    counts = np.diff(starts)[pair % n_topics]
    source = by_topic[np.repeat(starts[:-1][pair % n_topics], counts) + _within(counts)]
    copy_pair = np.repeat(pair, counts)
    copy_key = ((variant[source] * (n_systems * n_topics) + copy_pair) * n_docs) + qrels_doc[source]
    gone = (fill_variant[replaced] * (n_systems * n_topics) + fill_pair[replaced]) * n_docs + fill_doc[replaced]
    keep = ~np.isin(copy_key, gone)
    source, copy_pair = source[keep], copy_pair[keep]

    # measures normalised by a variant's largest gain over all its topics (gain_max) must see
    # the topics no system retrieved too: each distinct level of a variant is kept as a topic
    # of its own that no system retrieves (never evaluated, whatever the gains)
    carrier = np.zeros(0, dtype=np.int64)
    if not complete:
        carrier = np.flatnonzero(~pd.DataFrame({"v": variant, "l": level}).duplicated().to_numpy() & (level >= 0))
    carrier_pair = n_systems * n_topics + np.arange(len(carrier))
    out_variant = np.concatenate([variant[source], fill_variant, variant[carrier]])
    out_pair = np.concatenate([copy_pair, fill_pair, carrier_pair])
    out_doc = np.concatenate([qrels_doc[source], fill_doc, qrels_doc[carrier]])
    out_level = np.concatenate([level[source], fill_level[fill_variant], level[carrier]])
    names = pd.Index(np.arange(n_systems * n_topics + len(carrier)).astype(str))
    filled_qrels = pd.DataFrame(
        {
            **{k: variants[k].to_numpy()[out_variant] for k in keys},
            "query_id": pd.Categorical.from_codes(out_pair, categories=names),
            "doc_id": pd.Categorical.from_codes(out_doc, categories=docs),
            "relevance": out_level,
        }
    )
    filled_run = pd.DataFrame(
        {
            "run": "bounds",
            "query_id": pd.Categorical.from_codes(system * n_topics + topic, categories=names),
            "doc_id": pd.Categorical.from_codes(run_doc, categories=docs),
            "score": score,
        }
    )
    pairs = systems.iloc[np.repeat(np.arange(n_systems), n_topics)].reset_index(drop=True)
    pairs["query_id"] = np.tile(np.asarray(topics, dtype=object), n_systems)
    return filled_run, filled_qrels, pairs


def _within(counts: np.ndarray) -> np.ndarray:
    """0, 1, ..., c-1 for each count c, concatenated."""
    total = int(counts.sum())
    starts = np.repeat(np.cumsum(counts) - counts, counts)
    return np.arange(total) - starts


def _fill_levels(top: np.ndarray, grade: Optional[int], parsed) -> np.ndarray:
    """The level each variant's filled documents get: ``grade`` or the variant's top grade."""
    if grade is None:  # relevant at the top grade, and at least at level 1
        return np.maximum(top, 1)
    grade = int(grade)
    if grade < 0:
        raise PdevalError(f"grade must be a relevance level >= 0, not {grade}")
    collection_wide = [str(m) for m in parsed if "gain_max" in dict(m.params) and m.param("gain_max") is None]
    if collection_wide and (grade > top).any():
        raise PdevalError(
            f"grade={grade} is above the top grade of a qrels variant ({int(top.min())}), which would raise the "
            f"collection-wide gain maximum of {collection_wide}; give those measures gain_max= or a lower grade"
        )
    return np.full(len(top), grade, dtype=np.int64)


def summarize_bounds(frame: pd.DataFrame, *, wide: bool = False) -> pd.DataFrame:
    """Per-run means of a bounds frame: the key columns, ``measure``, ``value`` (mean low),
    ``high``, ``residual`` (means over topics, NaN skipped), ``topics`` and ``undefined`` (as
    :func:`pdeval.summarize`). ``wide=True``: one column per measure with its mean and one
    ``"<measure> residual"`` beside it."""
    keys = [c for c in frame.columns if c not in ("query_id", "measure", *BOUND_COLUMNS)]
    grouped = frame.groupby(keys + ["measure"], sort=False, observed=True)
    summary = grouped.agg(
        value=("low", "mean"), high=("high", "mean"), residual=("residual", "mean"), topics=("low", "count"),
        size=("low", "size"),
    ).reset_index()
    summary["undefined"] = summary.pop("size") - summary["topics"]
    if not wide:
        return summary
    table = summary.pivot_table(index=keys, columns="measure", values=["value", "residual"], sort=False)
    columns = []
    for measure in dict.fromkeys(summary["measure"]):
        columns += [("value", measure), ("residual", measure)]
    table = table[columns]
    table.columns = [measure if kind == "value" else f"{measure} residual" for kind, measure in columns]
    return table.reset_index()
