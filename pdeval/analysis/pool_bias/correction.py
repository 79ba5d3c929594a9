"""Pool bias: corrected scores for runs outside the pool, and how well the corrections work.

A depth-k pool judges only what the pooled runs retrieved; a run that did not contribute meets
unjudged documents (counted as non-relevant) and is underscored. Two estimators correct its score:

* **Webber & Park (SIGIR 2009)**, score adjustment from the pooled runs' leave-one-out
  behaviour: every pooled run ``p`` is scored with the full qrels ``Q`` and with ``Q_{-p}``
  (``Q`` without the documents only ``p``'s unit — the run, or its group with ``group=`` —
  brought into the pool); the mean loss ``a(t) = mean_p [M_t(p, Q) - M_t(p, Q_{-p})]`` is
  added to the new run's score, per topic: ``M̂_t(u) = M_t(u, Q) + a(t)`` (the implementation
  of Lipani's PoolBiasEstimators, ``WebberOnRuns``). It applies to any measure; here to P@k and
  R@k (recall at k).
* **Lipani, Lupu & Hanbury (SIGIR 2015)**, precision and anti-precision: with ``s_u``, ``ā_u``
  the precision and anti-precision (share of judged non-relevant documents) at n of the new run
  ``u`` and ``k_u = 1 - s_u - ā_u`` its unjudged share, every pooled run ``p`` is re-ranked like
  ``u`` (``p∘u``: a document of ``p`` that ``u`` also retrieved takes ``u``'s rank, the others
  keep ``p``'s; among equal positions a document moved up comes first, then one that stays, then
  one moved down, then ``p``'s order) and ``δs_p``, ``δā_p`` are the changes of precision and
  anti-precision from ``p`` to ``p∘u``, ``δk_p = -δs_p - δā_p``. With the means ``Δs``, ``Δā``,
  ``Δk`` over the pooled runs, the correction is ``k_u · max(Δk, 0)`` when
  ``k_u (Δs · ā_u - Δā · s_u) > 0`` and 0 otherwise: ``P̂@n(u) = s_u + correction``. All
  quantities are means over the qrels topics (trec_eval ``-c``). Defined for P@n only; recall
  (and AP) are not covered by this estimator (rows are omitted).
* ``"pool"`` — no correction (the score on the pool as it is), the baseline.

Scores here are means over **all qrels topics** (a topic the run lacks counts 0, trec_eval ``-c``)
of P@k = relevant in the top k / k and R@k = relevant in the top k / R (topics with R = 0 count
0), computed from the runs ranked in trec_eval order; they equal :func:`pdeval.evaluate`'s P@k
and R@k per topic.

:func:`pool_bias_correction` corrects runs outside the pool; :func:`leave_out_bias` leaves
every pooled run (or group) out in turn, estimates its score with every estimator, and
:func:`bias_summary` reports the mean absolute error, the system rank error (SRE) and Kendall's
τ-b against the scores on the full pool (Lipani et al. 2015, Section 5).

**Not covered.** Lipani et al.'s later work (ECIR 2016, "The Curious Incidence of Bias
Corrections in the Pool"; TKDE 2019, "Fixed-Cost Pooling Strategies") applies the same two
estimators to other pooling strategies; the variants of the authors' Scala code
PoolBiasEstimators (``LipaniV2``, ``LipaniV2QB`` for recall) are not specified in a paper text we
could read (only the abstracts were available), so they are not implemented: recall and AP have
no Lipani estimate here, and no estimator covers graded measures (nDCG), AP or RBP. The papers'
option of analysing only the best 75 % of the pooled runs is left to the caller (filter the
``leave_out_bias`` rows before :func:`bias_summary`).

Every left-out unit, run, pooled run and pair is computed in the same array pass
(:mod:`pdeval.analysis.pool_bias.kernels`): a document is removed from the pool when all its
contributors are left out, which its contributor count and two smallest contributor codes decide
without copying the qrels; Lipani et al.'s re-ranked runs ``p∘u`` are built for every pair
``(p, u)`` at once from p's and u's top ranks, deepened only where the top n is not yet certain.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.pool_bias import kernels
from pdeval.analysis.rankings.correlation import kendall_tau
from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Text, contract
from pdeval.engine.ranking import rank_run
from pdeval.errors import PdevalError, PdevalWarning, SchemaError, warn
from pdeval.frames.domains import Frame
from pdeval.frames.canonical import as_qrels, as_run
from pdeval.judgments.adjudication import TIE_DECIMALS
from pdeval.judgments.domains import GROUP, POOL_DEPTH, POOLED
from pdeval.judgments.pooling import check_pooled, run_groups
from pdeval.measures import parse as parse_measure
from pdeval.measures.domains import Measures

__all__ = ["ESTIMATORS", "pool_bias_correction", "leave_out_bias", "bias_summary"]

#: the estimators: no correction, Webber & Park 2009, Lipani, Lupu & Hanbury 2015
ESTIMATORS = ("pool", "webber", "lipani")
GroupLike = Union[None, Mapping[str, str], Callable[[str], str]]
#: the domains both estimators' functions share (:mod:`pdeval.common.contract`)
_OPTIONS = {"pool_depth": POOL_DEPTH, "group": GROUP, "estimators": ListOf(Choice(*ESTIMATORS), unique=True),
            "depth": Integer(1), "clip": Boolean()}


def _measures(measures: Union[str, Sequence[str]]) -> list[tuple[str, str, int]]:
    names = [measures] if isinstance(measures, str) else list(measures)
    out = []
    for name in names:
        m = parse_measure(name)
        if m.name not in ("P", "R") or not m.cutoff:
            raise PdevalError(
                f"measures={name!r} is not supported by the pool-bias estimators; use P@k (both "
                "estimators) or R@k (Webber & Park only)"
            )
        out.append((str(name), m.name, int(m.cutoff)))
    return out


def in_unit_range(values: pd.Series, estimators: pd.Series, clip: bool, where: str) -> pd.Series:
    """The corrected values, clipped to [0, 1] with ``clip``; otherwise as they are, with a
    counted warning when some lie outside the range of P@k and R@k."""
    outside = ((values < 0) | (values > 1)).to_numpy()
    if clip:
        return values.clip(0.0, 1.0)
    if outside.any():
        by = pd.Series(estimators.to_numpy()[outside]).value_counts().sort_index()
        shown = ", ".join(f"{name}: {count}" for name, count in by.items())
        warn(f"{where}(): {int(outside.sum())} corrected value(s) lie outside [0, 1] ({shown}; largest "
             f"{values.max():.4f}), the range of P@k and R@k; they are the estimators' values as they are. "
             "Pass clip=True to clip them to [0, 1].", PdevalWarning)
    return values


def _codes_in(values: pd.Series, index: pd.Index) -> np.ndarray:
    """Position of every value in ``index`` (-1: absent), hashing each distinct value once."""
    codes, uniques = pd.factorize(values)
    return index.get_indexer(uniques).astype(np.int64)[codes]


@dataclass
class Entries:
    """Ranked run rows with integer codes: run, topic, document (per topic), rank, label, and
    per document its label and pool contributors (count and the two smallest unit codes)."""

    run: np.ndarray
    topic: np.ndarray
    doc: np.ndarray
    rank: np.ndarray
    label: np.ndarray
    label_of: np.ndarray  # per document: 1 relevant, 0 non-relevant, -1 unjudged
    n_contrib: np.ndarray
    g1: np.ndarray
    g2: np.ndarray
    run_names: np.ndarray
    n_topics: int
    n_docs: int
    relevant: np.ndarray  # per topic: number of relevant qrels entries


class Collection:
    """Runs, qrels and the depth-k pool of the pooled runs, as arrays.

    Besides the rows (:class:`Entries`): ``start``, ``length`` (runs x topics) locate each
    ranking's rows; ``run_unit`` is the pool unit of every run (-1: not pooled), ``pool_codes``
    the pooled runs; ``single`` (topics x units + 1) counts the relevant documents whose only
    contributor is a unit (column ``unit + 1``), ``pair_keys``/``pair_counts`` those with exactly
    two contributors (key ``(topic * U + lo) * U + hi``)."""

    def __init__(self, run, qrels, pooled, pool_depth, group, depth):
        r = as_run(run)
        q = as_qrels(qrels)
        q = q.loc[q["relevance"] >= 0]
        topics = np.sort(pd.unique(q["query_id"]))
        if len(topics) == 0:
            raise PdevalError("the qrels hold no judged topic: no pool to correct")
        names = sorted(pd.unique(r["run"]).tolist())
        self.pooled = check_pooled(names, pooled)
        self.groups = run_groups(names, group)
        self.units = sorted({self.groups[p] for p in self.pooled})
        unit_code = {u: i for i, u in enumerate(self.units)}
        topic_index = pd.Index(topics)
        r = r.loc[_codes_in(r["query_id"], topic_index) >= 0]
        ranked = rank_run(r[["run", "query_id", "doc_id", "score"]], depth=depth)
        topic = _codes_in(ranked["query_id"], topic_index)
        run_code, run_names = pd.factorize(ranked["run"], sort=True)
        q_topic = _codes_in(q["query_id"], topic_index)
        names_codes, doc_names = pd.factorize(pd.concat([ranked["doc_id"], q["doc_id"]], ignore_index=True))
        pair = np.concatenate([topic, q_topic]) * max(len(doc_names), 1) + names_codes
        doc, uniques = pd.factorize(pair)
        doc_e, doc_q = doc[: len(ranked)], doc[len(ranked):]
        n_docs = len(uniques)
        label_of = np.full(n_docs, -1, dtype=np.int64)
        label_of[doc_q] = (q["relevance"].to_numpy() >= 1).astype(np.int64)
        rank = ranked["rank"].to_numpy(dtype=np.int64)
        # contributors: units of the pooled runs that have the document in their top `pool_depth`
        pooled_set = set(self.pooled)
        run_unit = np.array([unit_code[self.groups[n]] if n in pooled_set else -1 for n in run_names],
                            dtype=np.int64)
        inpool = (run_unit[run_code] >= 0) & (rank <= pool_depth)
        pairs = np.unique(np.stack([doc_e[inpool], run_unit[run_code][inpool]], axis=1), axis=0)
        n_contrib = np.bincount(pairs[:, 0], minlength=n_docs)
        big = np.iinfo(np.int64).max
        g1 = np.full(n_docs, big)
        np.minimum.at(g1, pairs[:, 0], pairs[:, 1])
        rest = pairs[pairs[:, 1] != g1[pairs[:, 0]]]
        g2 = np.full(n_docs, big)
        np.minimum.at(g2, rest[:, 0], rest[:, 1])
        T, U = len(topics), max(len(self.units), 1)
        q_rel = label_of[doc_q] == 1
        self.topics = topics
        self.q_doc, self.q_topic, self.q_rel = doc_q, q_topic, q_rel
        self.unit_code = unit_code
        self.run_unit = run_unit
        self.pool_codes = np.flatnonzero(run_unit >= 0)
        self.e = Entries(run=run_code.astype(np.int64), topic=topic, doc=doc_e, rank=rank,
                         label=label_of[doc_e], label_of=label_of, n_contrib=n_contrib, g1=g1, g2=g2,
                         run_names=np.asarray(run_names), n_topics=T, n_docs=n_docs,
                         relevant=np.bincount(q_topic[q_rel], minlength=T))
        # every (run, topic) ranking is a block of rows in rank order (rank_run's output)
        block = run_code.astype(np.int64) * T + topic
        self.length = np.bincount(block, minlength=len(run_names) * T).reshape(-1, T)
        self.start = np.zeros(len(run_names) * T, dtype=np.int64)
        self.start[block[rank == 1]] = np.flatnonzero(rank == 1)
        self.start = self.start.reshape(-1, T)
        # relevant documents removed by leaving one unit (single) or two units (pairs) out
        rel_doc, rel_topic = doc_q[q_rel], q_topic[q_rel]
        n = n_contrib[rel_doc]
        self.single = np.zeros((T, U + 1), dtype=np.int64)
        np.add.at(self.single, (rel_topic[n == 1], g1[rel_doc[n == 1]] + 1), 1)
        two = n == 2
        keys = (rel_topic[two].astype(np.int64) * U + g1[rel_doc[two]]) * U + g2[rel_doc[two]]
        self.pair_keys, self.pair_counts = np.unique(keys, return_counts=True)
        self.all_names = names
        self._lookup = None

    @property
    def lookup(self) -> tuple[np.ndarray, np.ndarray]:
        """Sorted keys ``run * n_docs + doc`` of every row and their ranks (built on first use)."""
        if self._lookup is None:
            key = self.e.run * self.e.n_docs + self.e.doc
            order = np.argsort(key, kind="stable")
            self._lookup = (key[order], self.e.rank[order])
        return self._lookup


@dataclass
class Cuts:
    """The measures as arrays: name, P (True) or R, cut-off, and the index of the cut-off in
    ``cuts`` (the sorted distinct cut-offs)."""

    names: list
    is_p: np.ndarray
    k: np.ndarray
    cuts: np.ndarray
    cut: np.ndarray

    @classmethod
    def of(cls, parsed: list[tuple[str, str, int]]) -> "Cuts":
        k = np.array([m[2] for m in parsed], dtype=np.int64)
        cuts = np.unique(k)
        return cls([m[0] for m in parsed], np.array([m[1] == "P" for m in parsed]), k, cuts,
                   np.searchsorted(cuts, k))


def _estimate(c: Collection, runs: np.ndarray, left: np.ndarray, ms: Cuts, estimators) -> pd.DataFrame:
    """Rows (run, measure, estimator, value) for the cases (run codes ``runs``, left-out unit
    ``left`` of each, -1 for none), every measure and estimator in one pass each."""
    rel, non = kernels.case_counts(c, runs, left, ms.cuts)
    per_topic = kernels.scores(rel, kernels.relevant_left(c, left, np.full(len(left), -1)), ms.is_p, ms.k, ms.cut)
    values = {"pool": per_topic.mean(axis=1)}
    if "webber" in estimators:
        distinct, which = np.unique(left, return_inverse=True)
        adjustment = kernels.webber(c, distinct, ms.is_p, ms.k, ms.cut, ms.cuts)
        values["webber"] = (per_topic + adjustment[which]).mean(axis=1)
    if "lipani" in estimators:
        values["lipani"] = np.full((len(runs), len(ms.names)), np.nan)
        if ms.is_p.any():
            ns = np.unique(ms.k[ms.is_p])
            at = np.searchsorted(ms.cuts, ns)
            corrected = kernels.lipani(c, runs, left, rel[:, :, at].sum(axis=1), non[:, :, at].sum(axis=1), ns)
            values["lipani"][:, ms.is_p] = corrected[:, np.searchsorted(ns, ms.k[ms.is_p])]
    ests = [x for x in estimators if x in values]
    stacked = np.stack([values[x] for x in ests])  # estimators x cases x measures
    n_e, n_c, n_m = stacked.shape
    out = pd.DataFrame({
        "run": np.tile(c.e.run_names[runs], n_m * n_e),
        "measure": np.repeat(np.asarray(ms.names, dtype=object), n_e * n_c),
        "estimator": np.tile(np.repeat(np.asarray(ests, dtype=object), n_c), n_m),
        "value": stacked.transpose(2, 0, 1).ravel(),
        "case": np.tile(np.arange(n_c), n_m * n_e),
    })
    return out.loc[out["value"].notna()].reset_index(drop=True)


@contract(run=Frame("run"), qrels=Frame("qrels", variants=False), measures=Measures(),
          pooled=ListOf(Text("a run name"), unique=True), **_OPTIONS)
def pool_bias_correction(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[str, Sequence[str]] = ("P@10",),
    *,
    pooled: Iterable[str],
    pool_depth: int,
    group: GroupLike = None,
    estimators: Union[str, Sequence[str]] = ESTIMATORS,
    depth: int = 1000,
    clip: bool = False,
) -> pd.DataFrame:
    """Corrected scores of the runs outside the pool (Webber & Park 2009; Lipani et al. 2015).

    Parameters
    ----------
    run : DataFrame
        The pooled runs and the runs to correct (every run not in ``pooled``).
    qrels : DataFrame
        The judgments of the depth-``pool_depth`` pool of ``pooled``.
    measures : str or list of str
        ``P@k`` and ``R@k`` measures (see the module documentation for what each estimator covers).
    pooled : list of str
        The runs that formed the pool.
    pool_depth : int
        The pool depth (contributors of a document are the pooled runs with it in their top
        ``pool_depth``).
    group : mapping or callable, optional
        Unit of Webber & Park's leave-one-out: each pooled run alone (default) or its group.
    estimators : str or list of str
        Names in :data:`ESTIMATORS`.
    depth : int, default 1000
        trec_eval ``-M``: keep the first ``depth`` documents of each ranking. The default reads
        every run to 1000 documents, the length of a TREC run.
    clip : bool, default False
        P@k and R@k lie in [0, 1], but a corrected value need not: Webber & Park's adjustment
        adds the mean error of the left-out units to the run's score and can pass 1 (or fall
        below 0). ``False`` reports the estimator's value as it is, with a
        :class:`~pdeval.errors.PdevalWarning` counting the values outside [0, 1] (Webber & Park
        2009 report the adjusted scores as they are); ``True`` clips them to [0, 1].

    Returns
    -------
    DataFrame
        ``run, measure, estimator, value`` (means over the qrels topics).

    Raises
    ------
    PdevalError
        Unknown runs or estimators, measures other than P@k and R@k, no run outside the pool.

    See Also
    --------
    leave_out_bias : How well each estimator works, leaving pooled units out.
    pool : The pool these qrels judge.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> pdeval.pool_bias_correction(run, qrels, "P@2", pooled=["a", "b"], pool_depth=2).round(3)
      run measure estimator  value
    0   c     P@2      pool   0.50
    1   c     P@2    webber   0.75
    2   c     P@2    lipani   0.50
    """
    ms, ests = Cuts.of(_measures(measures)), list(estimators)
    c = Collection(run, qrels, pooled, pool_depth, group, depth)
    new = np.flatnonzero(c.run_unit < 0)
    if not len(new):
        raise PdevalError("pool_bias_correction(): every run of the frame is pooled: there is no run outside the "
                          "pool to correct")
    out = _estimate(c, new, np.full(len(new), -1), ms, ests)
    out["value"] = in_unit_range(out["value"], out["estimator"], clip, "pool_bias_correction")
    return out[["run", "measure", "estimator", "value"]]


@contract(run=Frame("run"), qrels=Frame("qrels", variants=False), measures=Measures(), pooled=POOLED, **_OPTIONS)
def leave_out_bias(
    run: pd.DataFrame,
    qrels: pd.DataFrame,
    measures: Union[str, Sequence[str]] = ("P@10",),
    *,
    pool_depth: int,
    pooled: Optional[Iterable[str]] = None,
    group: GroupLike = None,
    estimators: Union[str, Sequence[str]] = ESTIMATORS,
    clip: bool = False,
    depth: int = 1000,
) -> pd.DataFrame:
    """Leave-one-run-out (or, with ``group``, leave-one-group-out) estimates of every pooled run.

    For every unit G of the pooled runs (a run, or a group such as a team), ``Q_{-G}`` is ``Q``
    without the documents that only G brought into the depth-``pool_depth`` pool (Zobel 1998; as in
    :func:`pdeval.leave_out_pooling`); the runs of G are scored on ``Q_{-G}`` by every estimator,
    with the other pooled runs as the pool, and compared with their score on ``Q`` (``true``).

    Parameters
    ----------
    run : DataFrame
        The pooled runs (every run of ``pooled``).
    qrels : DataFrame
        The judgments of the depth-``pool_depth`` pool of ``pooled`` (one variant).
    measures : str or list of str
        ``P@k`` and ``R@k`` measures, as in :func:`pool_bias_correction`.
    pool_depth : int
        The pool depth, as in :func:`pool_bias_correction`.
    pooled : list of str, optional
        The runs that formed the pool (default: every run).
    group : mapping or callable, optional
        The unit left out: each pooled run alone (default) or its group (a team).
    estimators : str or list of str
        Names in :data:`ESTIMATORS`.
    clip : bool, default False
        Clip the estimates to [0, 1] (as in :func:`pool_bias_correction`; by default they are
        reported as they are, with a warning counting those outside).
    depth : int, default 1000
        trec_eval ``-M``: keep the first ``depth`` documents of each ranking. The default reads
        every run to 1000 documents, the length of a TREC run.

    Returns
    -------
    DataFrame
        ``run, group, measure, estimator, true, estimate, error`` (``error = estimate - true``),
        one row per pooled run, measure and estimator; :func:`bias_summary` aggregates it.

    Raises
    ------
    PdevalError
        As :func:`pool_bias_correction`; a pool of one unit (nothing left to estimate from).

    See Also
    --------
    pool_bias_correction : The corrections of the runs outside the pool.
    bias_summary : MAE, SRE and tau_b of these rows.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> pdeval.leave_out_bias(run, qrels, "P@2", pool_depth=2, estimators="webber").round(3)
      run group measure estimator  true  estimate  error
    0   a     a     P@2    webber   1.0      1.50   0.50
    1   b     b     P@2    webber   0.5      0.75   0.25
    2   c     c     P@2    webber   0.5      0.75   0.25
    """
    ms, ests = Cuts.of(_measures(measures)), list(estimators)
    c = Collection(run, qrels, pooled, pool_depth, group, depth)
    if len(c.units) < 2:
        raise PdevalError("leave_out_bias(): leave-out needs at least two pooled units (runs or groups)")
    runs = c.pool_codes
    true = _estimate(c, runs, np.full(len(runs), -1), ms, ["pool"]).rename(columns={"value": "true"})
    out = _estimate(c, runs, c.run_unit[runs], ms, ests).rename(columns={"value": "estimate"})
    out["estimate"] = in_unit_range(out["estimate"], out["estimator"], clip, "leave_out_bias")
    # one unit after the other (as the units are left out), measures, estimators, runs within
    out = out.iloc[np.argsort(c.run_unit[runs][out["case"].to_numpy()], kind="stable")]
    out = out.drop(columns="case").merge(true[["run", "measure", "true"]], on=["run", "measure"], how="left")
    out.insert(1, "group", out["run"].map(c.groups))
    out["error"] = out["estimate"] - out["true"]
    return out[["run", "group", "measure", "estimator", "true", "estimate", "error"]]


def _sre(true: np.ndarray, estimate: np.ndarray) -> int:
    """Σ_r |rank of r among the others' true scores with its estimate - its true rank| (ranks:
    the number of other runs with a higher true score; a run never outranks itself)."""
    ordered = np.sort(true)
    above_true = len(true) - np.searchsorted(ordered, true, side="right")
    above_estimate = len(true) - np.searchsorted(ordered, estimate, side="right") - (true > estimate)
    return int(np.abs(above_true - above_estimate).sum())


@contract(result=Frame("any"))
def bias_summary(result: pd.DataFrame) -> pd.DataFrame:
    """MAE, SRE and Kendall's τ-b of every estimator and measure of :func:`leave_out_bias`.

    ``MAE = mean_r |estimate_r - true_r|``; ``SRE = Σ_r |rank_r - rank'_r|`` with ``rank_r`` the
    rank of r's true score among the other runs' true scores and ``rank'_r`` that of its estimate
    among the same (Lipani, Lupu & Hanbury 2015); τ-b between the estimates and the true scores
    over the runs. Ranks and τ-b are computed on the scores rounded to :data:`TIE_DECIMALS`
    (12) decimals, so that two scores that are equal up to the order in which a sum was taken
    are a tie (the MAE uses the scores as they are).

    Parameters
    ----------
    result : DataFrame
        The result of :func:`leave_out_bias` (or any frame with ``measure, estimator, true,
        estimate``).

    Returns
    -------
    DataFrame
        ``measure, estimator, runs, mae, sre, tau_b``.

    Raises
    ------
    PdevalError
        A frame without those columns.

    See Also
    --------
    leave_out_bias : The frame summarised here.

    Examples
    --------
    >>> run = pd.DataFrame({"run": ["a"] * 3 + ["b"] * 3 + ["c"] * 3, "query_id": "1",
    ...                     "doc_id": ["d1", "d2", "d3", "d1", "d4", "d5", "d6", "d2", "d1"], "score": [3.0, 2.0, 1.0] * 3})
    >>> qrels = pd.DataFrame({"query_id": "1", "doc_id": ["d1", "d2", "d3", "d4", "d5"], "relevance": [1, 1, 0, 0, 1]})
    >>> pdeval.bias_summary(pdeval.leave_out_bias(run, qrels, "P@2", pool_depth=2)).round(3)
      measure estimator  runs    mae  sre  tau_b
    0     P@2    lipani     3  0.000    0    1.0
    1     P@2      pool     3  0.000    0    1.0
    2     P@2    webber     3  0.333    0    1.0
    """
    needed = ["measure", "estimator", "true", "estimate"]
    absent = [col for col in needed if col not in result.columns]
    if absent:
        raise SchemaError(f"bias_summary(): result= needs the columns {needed} of leave_out_bias; the frame lacks "
                          f"{absent}")
    rows = []
    for (measure, estimator), g in result.groupby(["measure", "estimator"], sort=True):
        t, e = g["true"].to_numpy(float), g["estimate"].to_numpy(float)
        # ranks and τ on scores rounded to TIE_DECIMALS: equal scores summed in another order
        # (float noise) are ties, never an order
        tr, er = np.round(t, TIE_DECIMALS), np.round(e, TIE_DECIMALS)
        tau = kendall_tau(er, tr) if len(g) > 1 else np.nan
        rows.append((measure, estimator, len(g), float(np.mean(np.abs(e - t))), _sre(tr, er), tau))
    return pd.DataFrame(rows, columns=["measure", "estimator", "runs", "mae", "sre", "tau_b"])
