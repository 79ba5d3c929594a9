"""Was a result reproduced? The measures of Breuer, Ferro, Fuhr, Maistro, Sakai, Schaer &
Soboroff, "How to Measure the Reproducibility of System-oriented IR Experiments" (SIGIR 2020),
for one or many (original, reproduced) pairs of runs, at three levels:

==============  ===============  ==============================================================
level           statistic        what it compares
==============  ===============  ==============================================================
ranked_list     KTU, RBO         the documents and their order, per topic (reproducibility only)
topic_scores    RMSE, nRMSE      the per-topic scores of a measure (reproducibility only)
topic_scores    p_value          the score distributions: paired t-test (reproducibility),
                                 unpaired (replicability)
topic_scores    ARP_original,    the mean scores (average retrieval performance)
                ARP_reproduced
overall_effect  ER, DeltaRI      the improvement of an advanced run over a baseline
==============  ===============  ==============================================================

*Reproducibility* reruns a system on the same collection (one ``qrels``); *replicability*
runs it on another collection (``reproduced_qrels``), where topics and documents differ and
only the distributions and the effects can be compared. The values equal those of the
authors' package ``repro-eval`` 0.5.0 (see the user guide's "Reproducibility" page for the
conventions where they differ and the options that follow the package).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd
from scipy import stats

from pdeval.analysis.rankings.ranked_lists import RBO_VARIANTS, doc_codes, kendall_tau_union, rank_biased_overlap
from pdeval.common.contract import Boolean, Choice, Instance, ListOf, MappingOf, Nullable, Real, Text, contract
from pdeval.engine.options import EngineOptions, takes_engine_options
from pdeval.engine.ranking import rank_run
from pdeval.errors import PdevalError, PdevalWarning, SchemaError, warn
from pdeval.evaluation.core import evaluate_frames
from pdeval.frames.canonical import as_run, canonicalize
from pdeval.frames.domains import Frame
from pdeval.measures.domains import Measures

__all__ = ["reproducibility", "pair_table", "LEVELS"]

LEVELS = ("ranked_list", "topic_scores", "overall_effect")
Pairs = Union[None, Mapping[str, Any], Sequence[tuple]]
#: the domain of ``pairs=`` (:func:`pair_table` checks the names against the runs)
_RUN_NAME = Text("a run name")
PAIRS = (MappingOf(_RUN_NAME, _RUN_NAME | MappingOf(_RUN_NAME, _RUN_NAME, min_len=1), min_len=1)
         | ListOf(Instance((tuple,), "an (original, reproduced) tuple", ("a", "b")), lone=False))


def pair_table(original: pd.DataFrame, reproduced: pd.DataFrame, pairs: Pairs = None) -> pd.DataFrame:
    """The (reproduction, original, reproduced) run pairs of ``pairs``, checked against the runs.

    ``pairs`` is ``None`` (runs of the same name in both frames, or the only run of each),
    a mapping ``{original: reproduced}``, a list of ``(original, reproduced)`` tuples, or a
    mapping ``{label: {original: reproduced, ...}}`` of several reproductions (each with its
    own baseline; the label becomes the ``reproduction`` column).
    """
    names_o = list(pd.unique(original["run"]))
    names_r = list(pd.unique(reproduced["run"]))
    if pairs is None:
        common = [name for name in names_o if name in set(names_r)]
        if common:
            rows = [("", name, name) for name in common]
        elif len(names_o) == 1 and len(names_r) == 1:
            rows = [("", names_o[0], names_r[0])]
        else:
            raise PdevalError(
                f"pairs=None pairs runs of the same name, but the original runs {names_o[:5]} and the "
                f"reproduced runs {names_r[:5]} share none; pass pairs={{original: reproduced}}"
            )
    elif isinstance(pairs, Mapping) and pairs and all(isinstance(v, Mapping) for v in pairs.values()):
        rows = [(str(label), o, r) for label, mapping in pairs.items() for o, r in mapping.items()]
    elif isinstance(pairs, Mapping):
        rows = [("", o, r) for o, r in pairs.items()]
    else:
        rows = []
        for item in pairs:
            if not (isinstance(item, tuple) and len(item) == 2):
                raise PdevalError(f"reproducibility(): pairs must hold (original, reproduced) tuples, not {item!r} "
                                  "(give each pair as a tuple of two run names)")
            rows.append(("", item[0], item[1]))
    table = pd.DataFrame(rows, columns=["reproduction", "original", "reproduced"]).astype(str)
    for column, names, frame in (("original", names_o, "original"), ("reproduced", names_r, "reproduced")):
        missing = sorted(set(table[column]) - set(map(str, names)))
        if missing:
            raise PdevalError(f"pairs name {column} run(s) {missing} that the {frame} frame lacks; it has {names[:10]}")
    if table.duplicated().any():
        raise PdevalError(f"pairs repeats {table[table.duplicated()].values.tolist()}")
    return table.assign(pair=np.arange(len(table)))


def _unpaired(frame: pd.DataFrame, left: str, right: str, what: str, policy: str, hint: str = "") -> pd.DataFrame:
    """Rows of an outer merge that lack one side: an error naming them, or dropped."""
    lacking = frame[left].isna() | frame[right].isna()
    if not lacking.any():
        return frame
    shown = frame.loc[lacking].drop_duplicates(["original", "reproduced", "query_id"]).head(8)
    where = "; ".join(
        f"{o} / {r}: topic {q!r} only in the {'reproduced' if pd.isna(lo) else 'original'} run"
        for o, r, q, lo in zip(shown["original"], shown["reproduced"], shown["query_id"], shown[left])
    )
    if policy == "error":
        raise SchemaError(
            f"{int(lacking.sum())} {what} value(s) have no counterpart in the other run of their pair ({where}"
            f"{', ...' if lacking.sum() > len(shown) else ''}). Reproducibility compares the same topics; "
            f"pass unpaired='drop' to keep the topics both runs have{hint}."
        )
    warn(f"unpaired='drop': {int(lacking.sum())} {what} value(s) without a counterpart left out ({where})", PdevalWarning)
    return frame.loc[~lacking]


def _group_stats(key: np.ndarray, values: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(count, mean, sum of squared deviations from the mean) per group (two passes)."""
    n = np.bincount(key, minlength=n_groups).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = np.bincount(key, weights=values, minlength=n_groups) / n
    squares = np.bincount(key, weights=(values - mean[key]) ** 2, minlength=n_groups)
    return n, mean, squares


def _t_pvalue(t: np.ndarray, df: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        return np.where(df > 0, 2.0 * stats.t.sf(np.abs(t), np.maximum(df, 1)), np.nan)


def _paired_scores(scores_o, scores_r, pairs, unpaired, identical_p) -> pd.DataFrame:
    """RMSE, nRMSE, the paired t-test p-value and both ARPs per (pair, measure)."""
    left = pairs.merge(scores_o, left_on="original", right_on="run").drop(columns="run")
    right = pairs.merge(scores_r, left_on="reproduced", right_on="run").drop(columns="run")
    keys = ["reproduction", "original", "reproduced", "pair", "measure", "query_id"]
    both = left.merge(right, on=keys, how="outer", suffixes=("_o", "_r"))
    both = _unpaired(both, "value_o", "value_r", "per-topic score", unpaired,
                     " (or complete=True to score a topic a run lacks 0, as trec_eval -c)")
    group_keys = ["reproduction", "original", "reproduced", "pair", "measure"]
    key = both.groupby(group_keys, sort=False).ngroup().to_numpy()
    groups = both.drop_duplicates(group_keys)[group_keys].reset_index(drop=True)
    n_groups = len(groups)
    o, r = both["value_o"].to_numpy(np.float64), both["value_r"].to_numpy(np.float64)
    n, mean_d, squares_d = _group_stats(key, o - r, n_groups)
    _, mean_o, _ = _group_stats(key, o, n_groups)
    _, mean_r, _ = _group_stats(key, r, n_groups)
    rmse = np.sqrt(np.bincount(key, weights=(o - r) ** 2, minlength=n_groups) / n)
    worst = np.sqrt(np.bincount(key, weights=np.maximum(o, 1 - o) ** 2, minlength=n_groups) / n)
    with np.errstate(invalid="ignore", divide="ignore"):
        t = mean_d / np.sqrt(squares_d / (n - 1) / n)
        nrmse = rmse / worst
    p = _t_pvalue(t, n - 1)
    identical = np.bincount(key, weights=(o != r), minlength=n_groups) == 0
    p = np.where(identical, identical_p, p)
    columns = {"RMSE": rmse, "nRMSE": nrmse, "p_value": p, "ARP_original": mean_o, "ARP_reproduced": mean_r}
    return _long(groups, columns, "topic_scores")


def _unpaired_scores(scores_o, scores_r, pairs, identical_p) -> pd.DataFrame:
    """Student's unpaired t-test p-value (pooled variance) and both ARPs per (pair, measure)."""
    group_keys = ["reproduction", "original", "reproduced", "pair", "measure"]
    left = pairs.merge(scores_o, left_on="original", right_on="run")
    right = pairs.merge(scores_r, left_on="reproduced", right_on="run")
    groups = left[group_keys].drop_duplicates().merge(right[group_keys].drop_duplicates())
    groups = groups.reset_index(drop=True)
    index = groups.assign(group=np.arange(len(groups)))
    left, right = left.merge(index, on=group_keys), right.merge(index, on=group_keys)
    n_groups = len(groups)
    n1, m1, s1 = _group_stats(left["group"].to_numpy(), left["value"].to_numpy(np.float64), n_groups)
    n2, m2, s2 = _group_stats(right["group"].to_numpy(), right["value"].to_numpy(np.float64), n_groups)
    df = n1 + n2 - 2
    with np.errstate(invalid="ignore", divide="ignore"):
        t = (m1 - m2) / np.sqrt((s1 + s2) / df * (1 / n1 + 1 / n2))
    p = _t_pvalue(t, df)
    p = np.where((s1 + s2 == 0) & (m1 == m2), identical_p, p)
    return _long(groups, {"p_value": p, "ARP_original": m1, "ARP_reproduced": m2}, "topic_scores")


def _long(groups: pd.DataFrame, columns: dict, level: str, query_id: Any = "all") -> pd.DataFrame:
    parts = [groups.assign(level=level, statistic=name, value=values) for name, values in columns.items()]
    out = pd.concat(parts, ignore_index=True)
    if "query_id" not in out.columns:
        out["query_id"] = query_id
    return out


def ranking_measure(depth: Optional[int]) -> str:
    """The ``measure`` of the KTU and RBO rows: what they compare, the rankings (to ``depth``)."""
    return "ranking" if depth is None else f"ranking@{depth}"


def _effects(scores_o, scores_r, pairs, baseline, unpaired) -> pd.DataFrame:
    """ER and DeltaRI of every advanced pair against its reproduction's baseline pair."""
    base = pairs[pairs["original"] == baseline]
    lacking = sorted(set(pairs["reproduction"]) - set(base["reproduction"]))
    if lacking or base["reproduction"].duplicated().any():
        raise PdevalError(
            f"baseline={baseline!r} must be the original run of exactly one pair of each reproduction; "
            f"reproduction(s) {lacking or sorted(base.loc[base['reproduction'].duplicated(), 'reproduction'])} "
            "have none or several"
        )
    advanced = pairs[pairs["original"] != baseline].merge(
        base[["reproduction", "original", "reproduced"]], on="reproduction", suffixes=("", "_base"))
    if advanced.empty:
        raise PdevalError(f"baseline={baseline!r}: no other pair to compare with the baseline")
    sides = {}
    for side, scores, run, run_base in (("o", scores_o, "original", "original_base"),
                                        ("r", scores_r, "reproduced", "reproduced_base")):
        topic = ["pair", "measure", "query_id", "value"]
        a = advanced[["pair", run]].merge(scores, left_on=run, right_on="run")[topic]
        b = advanced[["pair", run_base]].merge(scores, left_on=run_base, right_on="run")[topic]
        both = a.merge(b, on=topic[:3], how="outer", suffixes=("_a", "_b"))
        both = both.merge(advanced[["pair", "reproduction", "original", "reproduced"]], on="pair")
        both = _unpaired(both, "value_a", "value_b", "advanced-baseline", unpaired)
        keys = ["reproduction", "original", "reproduced", "pair", "measure"]
        both = both.assign(delta=both["value_a"] - both["value_b"])
        sides[side] = both.groupby(keys, sort=False).agg(
            delta=("delta", "mean"), mean_a=("value_a", "mean"), mean_b=("value_b", "mean"))
    o, r = sides["o"], sides["r"].reindex(sides["o"].index)
    with np.errstate(invalid="ignore", divide="ignore"):
        er = (r["delta"] / o["delta"]).to_numpy()
        dri = ((o["mean_a"] - o["mean_b"]) / o["mean_b"] - (r["mean_a"] - r["mean_b"]) / r["mean_b"]).to_numpy()
    zero = o["delta"].to_numpy() == 0
    if zero.any():
        warn(f"ER is undefined where the original improvement is 0: {list(o.index[zero])[:5]}", PdevalWarning)
    return _long(o.index.to_frame(index=False), {"ER": er, "DeltaRI": dri}, "overall_effect")


def _ranked(run: pd.DataFrame, names: Iterable[str], depth: Optional[int], score_precision: str,
            list_order: str) -> pd.DataFrame:
    run = run[run["run"].isin(set(names))][["run", "query_id", "doc_id", "score"]]
    if list_order == "trec_eval":
        ranked = rank_run(run, score_precision=score_precision, depth=depth)
        return ranked[["run", "query_id", "doc_id", "rank"]]
    # repro-eval's order: the rows as given, a stretch of equal scores in a row reversed by doc id
    group = run.groupby(["run", "query_id"], sort=False, observed=True).ngroup().to_numpy()
    rows = np.argsort(group, kind="stable")
    group, score = group[rows], run["score"].to_numpy(np.float64)[rows]
    (doc,) = doc_codes(run["doc_id"])
    stretch = np.cumsum(np.r_[True, (group[1:] != group[:-1]) | (score[1:] != score[:-1])])
    rows = rows[np.lexsort((-doc[rows], stretch))]
    ranked = run.iloc[rows].reset_index(drop=True)
    starts = np.flatnonzero(np.r_[True, group[1:] != group[:-1]])
    rank = np.arange(len(group)) - np.repeat(starts, np.diff(np.r_[starts, len(group)])) + 1
    kept = rank <= depth if depth is not None else np.ones(len(rank), dtype=bool)
    return ranked.assign(rank=rank).loc[kept, ["run", "query_id", "doc_id", "rank"]]


def _ranked_lists(original, reproduced, pairs, *, depth, persistence, rbo, per_topic, unpaired, score_precision,
                  list_order):
    """KTU and RBO per (pair, topic), and their means over topics per pair. Ids become integer
    codes before any merge (documents by byte order, topics and runs by first appearance)."""
    ranked_o = _ranked(original, pairs["original"], depth, score_precision, list_order)
    ranked_r = _ranked(reproduced, pairs["reproduced"], depth, score_precision, list_order)
    doc_o, doc_r = doc_codes(ranked_o["doc_id"], ranked_r["doc_id"])
    topic, topic_names = pd.factorize(pd.concat([ranked_o["query_id"], ranked_r["query_id"]], ignore_index=True))
    run_names = pd.Index(pd.unique(pd.concat([pairs["original"], pairs["reproduced"]])))
    side = {}
    for name, ranked, doc, codes, column in (("o", ranked_o, doc_o, topic[: len(ranked_o)], "original"),
                                              ("r", ranked_r, doc_r, topic[len(ranked_o):], "reproduced")):
        rows = pd.DataFrame({"run": run_names.get_indexer(ranked["run"]), "topic": codes,
                             "rank": ranked["rank"].to_numpy(np.int64), "doc": doc})
        pair_runs = pd.DataFrame({"pair": pairs["pair"].to_numpy(), "run": run_names.get_indexer(pairs[column])})
        side[name] = pair_runs.merge(rows, on="run").drop(columns="run")
    keys = ["pair", "topic"]
    topics = side["o"][keys].drop_duplicates().merge(side["r"][keys].drop_duplicates(), how="outer", indicator=True)
    topics = topics.merge(pairs, on="pair").assign(query_id=lambda f: np.asarray(topic_names)[f["topic"]])
    topics["value_o"] = np.where(topics["_merge"] == "right_only", np.nan, 1.0)
    topics["value_r"] = np.where(topics["_merge"] == "left_only", np.nan, 1.0)
    topics = _unpaired(topics, "value_o", "value_r", "ranked list", unpaired).reset_index(drop=True)
    topics["group"] = np.arange(len(topics))
    a = side["o"].merge(topics[keys + ["group"]], on=keys)[["group", "rank", "doc"]]
    b = side["r"].merge(topics[keys + ["group"]], on=keys)[["group", "rank", "doc"]]
    tau, _ = kendall_tau_union(a, b, len(topics))
    overlap = rank_biased_overlap(a, b, len(topics), persistence=persistence, depth=depth, variant=rbo)
    columns = ["reproduction", "original", "reproduced", "pair", "query_id"]
    per = _long(topics[columns], {"KTU": tau, "RBO": overlap}, "ranked_list").assign(measure=ranking_measure(depth))
    pair_keys = ["reproduction", "original", "reproduced", "pair", "statistic"]
    mean = per.groupby(pair_keys, sort=False)["value"].mean().reset_index()
    mean = mean.assign(level="ranked_list", query_id="all", measure=ranking_measure(depth))
    return pd.concat([mean, per], ignore_index=True) if per_topic else mean


@contract(
    run=Frame("run"),
    reproduced=Frame("run"),
    qrels=Frame("qrels", variants=False),
    measures=Measures(),
    baseline=Nullable(Text("a run name")),
    pairs=Nullable(PAIRS),
    reproduced_qrels=Nullable(Frame("qrels", variants=False)),
    persistence=Real(0, 1, closed="neither"),
    rbo=Choice(*RBO_VARIANTS),
    list_order=Choice("trec_eval", "rows"),
    per_topic=Boolean(),
    unpaired=Choice("error", "drop", renamed={"raise": "error"}),
    identical_p=Nullable(Real(0, 1)),
    renamed={"cutoff": "depth", "k": "depth"},
    remedies={"identical_p": "a p-value in [0, 1], or None for NaN as repro-eval gives when only some measures agree"},
)
@takes_engine_options(exclude=("by",))
def reproducibility(
    run: pd.DataFrame,
    reproduced: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[str, Sequence[str]] = ("AP", "P@10", "nDCG@10"),
    *,
    baseline: Optional[str] = None,
    pairs: Pairs = None,
    reproduced_qrels: Optional[pd.DataFrame] = None,
    persistence: float = 0.95,
    rbo: str = "normalized",
    list_order: str = "trec_eval",
    per_topic: bool = False,
    unpaired: str = "error",
    identical_p: Optional[float] = 1.0,
    **options: Any,
) -> pd.DataFrame:
    """Measure how far reproduced runs reproduce (or replicate) their original runs.

    Breuer, Ferro, Fuhr, Maistro, Sakai, Schaer & Soboroff (SIGIR 2020). For a pair of an
    original run and its reproduction, over the topics j = 1..n:

    * ranked lists (reproducibility only), per topic and averaged over topics: Kendall's tau
      union (KTU, :func:`pdeval.analysis.rankings.ranked_lists.kendall_tau_union`) and rank-biased
      overlap (RBO, Webber, Moffat & Zobel, TOIS 2010;
      :func:`pdeval.analysis.rankings.ranked_lists.rank_biased_overlap`) of the rankings, cut at
      ``depth`` documents if given;
    * per-topic scores of each measure, with o_j and r_j the original and reproduced scores:
      ``RMSE = sqrt(1/n sum_j (o_j - r_j)^2)``; ``nRMSE = RMSE / sqrt(1/n sum_j max(o_j, 1 - o_j)^2)``
      (the RMSE divided by the largest one a reproduction in [0, 1] could have, as repro-eval
      normalises it; meaningful for measures in [0, 1]); the two-sided p-value of Student's
      paired t-test (reproducibility) or unpaired t-test with pooled variance (replicability,
      where the topics differ); ``ARP_original`` and ``ARP_reproduced``, the mean scores;
    * overall effect, with ``baseline`` naming the original baseline run b and a each other
      original (advanced) run, primes marking the reproductions: the Effect Ratio
      ``ER = mean_j(a'_j - b'_j) / mean_j(a_j - b_j)`` (1: the improvement is reproduced
      exactly; < 1 smaller, > 1 larger, < 0 reversed) and the Delta Relative Improvement
      ``DeltaRI = RI - RI'`` with ``RI = (mean(a) - mean(b)) / mean(b)`` (0 is ideal).

    Parameters
    ----------
    run, reproduced : DataFrame
        Run frames (``run``, ``query_id``, ``doc_id``, ``score``) of the original runs and
        of their reproductions.
    qrels : DataFrame
        Qrels of the original collection (one set of judgments: no variant columns).
    measures : str or list of str, default ("AP", "P@10", "nDCG@10")
        The measures whose scores are compared (:func:`pdeval.available_measures`).
    baseline : str, optional
        The original baseline run: every other pair gets ER and DeltaRI against the baseline
        pair of its reproduction. None: no overall-effect rows.
    pairs : mapping, list of tuples or mapping of mappings, optional
        Which reproduced run reproduces which original (:func:`pair_table`): ``None`` pairs
        runs of the same name (or the only run of each frame); ``{label: {original:
        reproduced}}`` gives several reproductions, each with its own baseline pair.
    reproduced_qrels : DataFrame, optional
        Qrels of another collection: the reproduced runs are *replications* on it. Then only
        the unpaired t-test, the ARPs, ER and DeltaRI are computed (topics and documents
        differ, so the ranked lists and RMSE do not apply).
    persistence : float, default 0.95
        RBO's p in (0, 1): the probability of reading on to the next rank; the weight of the
        first d ranks is 1 - p^d (repro-eval's default 0.95; the paper's evaluation used 0.8).
    rbo : {'normalized', 'ext'}, default 'normalized'
        ``'normalized'``: the RBO sum over the first ``depth`` ranks (without ``depth``, to the
        longer list of the topic, so an identical copy has RBO 1) divided by its weights
        (Clarke, Vtyurina & Smucker, TOIS 2021), as repro-eval 0.5.0; ``'ext'``: Webber et
        al.'s extrapolated RBO_ext (eq. 32), which the paper's evaluation used.
    list_order : {'trec_eval', 'rows'}, default 'trec_eval'
        The order of the ranked lists that KTU and RBO compare: trec_eval's (score, then
        document id, both descending, under ``score_precision``), or ``'rows'``: the frame's
        row order with each stretch of equal scores in a row reversed by document id, as
        repro-eval 0.5.0 orders a run file (its ``break_ties``). Both agree on a file sorted
        by decreasing score; the evaluation always uses trec_eval's order.
    per_topic : bool, default False
        Also return KTU and RBO per topic (rows with the topic's ``query_id``).
    unpaired : {'error', 'drop'}, default 'error'
        A topic one run of a pair has and the other lacks (reproducibility), or an advanced
        run and its baseline disagree on topics: an error naming them, or left out with a
        :class:`~pdeval.errors.PdevalWarning`.
    identical_p : float or None, default 1.0
        The p-value in [0, 1] where both samples are identical (the t statistic is 0/0).
        repro-eval gives 1.0 only when every measure of the pair is identical, else NaN:
        pass None to get NaN.
    {engine_options}
        ``depth`` cuts the rankings for the measures and for KTU and RBO alike. repro-eval
        reads 1000 documents per topic and weighs RBO to depth 1000 even on shorter lists:
        ``depth=1000`` gives its values (without it an identical copy of a 100-deep run has
        RBO 1, not 0.99912). ``by`` does not apply: runs are compared by name.

    Returns
    -------
    DataFrame
        One row per pair, level and statistic (and measure, and topic with ``per_topic``):
        ``reproduction`` (the label of ``pairs``' reproduction, ``""`` for one),
        ``original``, ``reproduced``, ``level`` (``ranked_list``, ``topic_scores``,
        ``overall_effect``), ``statistic``, ``measure`` (``"ranking"``, or
        ``"ranking@<depth>"``, for KTU and RBO, which compare the rankings, not scores),
        ``query_id`` (``"all"`` for values over topics) and ``value``. ER and DeltaRI rows
        name the advanced pair.

    Raises
    ------
    SchemaError
        Unpaired topics under ``unpaired='error'``; qrels with variant columns; bad frames.
    PdevalError
        Pairs naming absent runs, a baseline that is not the original of exactly one pair
        per reproduction, an option outside its domain (the old ``cutoff=`` names ``depth``).

    See Also
    --------
    evaluate : The measures whose per-topic scores are compared.
    compare : Paired significance tests between runs of one result frame.

    Examples
    --------
    >>> clef = pdeval.datasets.load("clef2018")
    >>> run = clef.runs[clef.runs["run"] == clef.runs["run"].iloc[0]]
    >>> copy = run.assign(score=run["score"] + 0.0)
    >>> out = pdeval.reproducibility(run, copy, clef.qrels, "AP")
    >>> out.pivot_table(index=["level", "statistic"], columns="measure", values="value").round(4)
    measure                          AP  ranking
    level        statistic
    ranked_list  KTU                NaN      1.0
                 RBO                NaN      1.0
    topic_scores ARP_original    0.1593      NaN
                 ARP_reproduced  0.1593      NaN
                 RMSE            0.0000      NaN
                 nRMSE           0.0000      NaN
                 p_value         1.0000      NaN
    """
    engine = EngineOptions.of(options, where="reproducibility")
    identical_p = np.nan if identical_p is None else identical_p
    same = reproduced is run
    names_o, names_r = _run_names(run), _run_names(reproduced)
    pairs = pair_table(pd.DataFrame({"run": names_o}), pd.DataFrame({"run": names_r}), pairs)
    if same:  # one frame holds both sides: validated once
        run = reproduced = _validated(run, pd.concat([pairs["original"], pairs["reproduced"]]), engine)
    else:
        run = _validated(run, pairs["original"], engine)
        reproduced = _validated(reproduced, pairs["reproduced"], engine)
    scores_o = _scores(run, pairs["original"], qrels, measures, engine)
    scores_r = _scores(reproduced, pairs["reproduced"], qrels if reproduced_qrels is None else reproduced_qrels,
                       measures, engine)
    parts = []
    if reproduced_qrels is None:
        parts.append(_ranked_lists(run, reproduced, pairs, depth=engine.depth, persistence=persistence, rbo=rbo,
                                   per_topic=per_topic, unpaired=unpaired, score_precision=engine.score_precision,
                                   list_order=list_order))
        parts.append(_paired_scores(scores_o, scores_r, pairs, unpaired, identical_p))
    else:
        parts.append(_unpaired_scores(scores_o, scores_r, pairs, identical_p))
    if baseline is not None:
        parts.append(_effects(scores_o, scores_r, pairs, str(baseline), unpaired))
    return _tidy(pd.concat(parts, ignore_index=True), pairs)


def _run_names(frame: pd.DataFrame) -> list:
    frame = canonicalize(frame)
    return list(pd.unique(frame["run"].astype(str))) if "run" in frame.columns else ["run"]


def _validated(frame: pd.DataFrame, names: pd.Series, engine: EngineOptions) -> pd.DataFrame:
    """The rows of the paired runs only, validated (so 68 runs read for 4 cost 4)."""
    frame = canonicalize(frame)
    if "run" in frame.columns:
        frame = frame[frame["run"].astype(str).isin(set(names))]
    return as_run(frame, duplicates=engine.duplicates)


def _scores(run: pd.DataFrame, names: pd.Series, qrels: pd.DataFrame, measures, engine: EngineOptions) -> pd.DataFrame:
    result = evaluate_frames(run[run["run"].isin(set(names))], qrels, measures, engine)
    extra = [c for c in result.columns if c not in ("run", "query_id", "measure", "value")]
    if extra:
        raise SchemaError(f"reproducibility takes one set of judgments, but the qrels have variant column(s) {extra}; "
                          "select one variant first")
    return result[["run", "query_id", "measure", "value"]]


def _tidy(out: pd.DataFrame, pairs: pd.DataFrame) -> pd.DataFrame:
    level = pd.Categorical(out["level"], categories=list(LEVELS), ordered=True)
    out = out.assign(_level=level.codes).sort_values(["pair", "_level"], kind="stable")
    columns = ["reproduction", "original", "reproduced", "level", "statistic", "measure", "query_id", "value"]
    out = out[columns].reset_index(drop=True)
    if (pairs["reproduction"] == "").all():
        out = out.drop(columns="reproduction")
    return out
