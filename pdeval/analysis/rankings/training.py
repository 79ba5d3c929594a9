"""Experiment protocols built on result frames.

Training sensitivity under incomplete judgments (He, Macdonald & Ounis 2008; MEASURES.md
E11): :func:`training_sensitivity`, with the helpers :func:`sign_test`,
:func:`inverse_sd` and :func:`full_judgment_wilcoxon`; :func:`combine_sensitivities` joins the
results of several models (the paper trains BM25's b and PL2's c).

Input: one result frame of a parameter sweep. Each value of the swept parameter
(``param``, e.g. BM25's ``b``) is one system; its runs are evaluated

* on the training topics with reduced qrels: rows keyed by ``level`` and ``sample``
  (MEASURES.md E3: 16 levels x 10 samples, made by the judgments module);
* on the test topics (and, for the Wilcoxon test, the training topics) with the complete
  qrels: the *reference* rows (see :func:`training_sensitivity` for how they are found).
"""

from __future__ import annotations

from typing import Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.bundle import ResultFrame
from pdeval.analysis.rankings.sensitivity import (
    TrainingSensitivity, combine_sensitivities, inverse_of, inverse_sd, sample_sd, sign_test,
)
from pdeval.common.contract import Anything, Instance, Integer, ListOf, MappingOf, Nullable, Real, Text, contract
from pdeval.errors import PdevalError, SchemaError
from pdeval.frames.domains import Frame
from pdeval.frames.canonical import as_result, result_keys

__all__ = [
    "TrainingSensitivity",
    "training_sensitivity",
    "combine_sensitivities",
    "full_judgment_wilcoxon",
    "sign_test",
    "inverse_sd",
]

TopicSet = Sequence[str]
#: the domain of ``train_topics=`` and ``test_topics=``: topic ids
TOPICS = Nullable(ListOf(Text("a topic id") | Integer(), lone=False))
#: one task of ``tasks=``: (train topics, test topics); _normalise_tasks checks the two topic sets
PAIR = Instance((tuple, list), "a (train topics, test topics) pair", (["1"], ["2"]))
Tasks = Union[Mapping[str, tuple[TopicSet, TopicSet]], Sequence[tuple[TopicSet, TopicSet]]]


def _check_columns(frame: pd.DataFrame, columns: Sequence[str], what: str) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise SchemaError(f"the {what} lacks column(s) {missing}; it has {list(frame.columns)}")


def _single_valued(frame: pd.DataFrame, allowed: Sequence[str], what: str) -> None:
    for column in result_keys(frame):
        if column in allowed:
            continue
        if frame[column].nunique(dropna=False) > 1:
            raise SchemaError(
                f"the {what} has key column {column!r} with several values; training_sensitivity "
                f"knows only the parameter, level, sample, run and query_id keys. Filter it first."
            )


def _topic_means(frame: pd.DataFrame, groups: list[str], topics: TopicSet, what: str) -> pd.DataFrame:
    """Mean value over ``topics`` per group; every group must have every topic."""
    topics = list(dict.fromkeys(str(t) for t in topics))
    part = frame[frame["query_id"].astype(str).isin(topics)]
    if part.empty:
        raise SchemaError(f"the {what} has no rows for the given topics (first: {topics[:3]})")
    dup = part.duplicated([*groups, "query_id"])
    if dup.any():
        first = part.loc[dup, [*groups, "query_id"]].iloc[0].to_dict()
        raise SchemaError(
            f"the {what} has {int(dup.sum())} repeated value(s) for the same {groups + ['query_id']}, "
            f"first: {first}. Is there more than one run per parameter value?"
        )
    out = part.groupby(groups, dropna=False, sort=False, observed=True)["value"].agg(["mean", "count"]).reset_index()
    present = part["query_id"].nunique()
    short = out[out["count"] < present]
    if len(short):
        first = short.iloc[0][groups].to_dict()
        raise SchemaError(
            f"the {what} lacks topics for {len(short)} group(s), first {first} has "
            f"{int(short.iloc[0]['count'])} of {present} topics"
        )
    if present < len(topics):
        raise SchemaError(
            f"the {what} has values for only {present} of the {len(topics)} given topics "
            f"(missing e.g. {sorted(set(topics) - set(part['query_id'].astype(str)))[:3]})"
        )
    return out.rename(columns={"mean": "value"}).drop(columns="count")


def _argmax_theta(means: pd.DataFrame, param: str, groups: list[str], grid: list) -> pd.DataFrame:
    """Per group, the first grid value with the largest mean (ties -> first in grid order)."""
    wide = means.set_index([*groups, param])["value"].unstack(param)
    missing = [g for g in grid if g not in wide.columns]
    if missing:
        raise SchemaError(f"parameter value(s) {missing[:5]} of the grid have no training values")
    values = wide[grid].to_numpy(np.float64)
    if np.isnan(values).any():
        row, col = np.argwhere(np.isnan(values))[0]
        where = dict(zip(groups, wide.index[row] if isinstance(wide.index[row], tuple) else (wide.index[row],)))
        raise SchemaError(f"no training value for {param}={grid[col]} at {where}")
    best = values.argmax(axis=1)
    out = wide.index.to_frame(index=False)
    out["theta"] = np.asarray(grid, dtype=object)[best]
    out["train_value"] = values[np.arange(len(best)), best]
    try:
        out["theta"] = pd.to_numeric(out["theta"])
    except (TypeError, ValueError):
        pass
    return out


def _normalise_tasks(tasks, train_topics, test_topics) -> list[tuple[str, list, list]]:
    if tasks is None:
        if train_topics is None or test_topics is None:
            raise PdevalError("give train_topics and test_topics, or tasks=")
        return [("0", list(train_topics), list(test_topics))]
    if train_topics is not None or test_topics is not None:
        raise PdevalError("give either tasks= or train_topics/test_topics, not both")
    items = tasks.items() if isinstance(tasks, Mapping) else ((str(i), t) for i, t in enumerate(tasks))
    out = []
    for name, pair in items:
        if len(pair) != 2:
            raise PdevalError(f"task {name!r} must be a (train_topics, test_topics) pair")
        train, test = pair
        overlap = set(map(str, train)) & set(map(str, test))
        if overlap:
            raise PdevalError(f"task {name!r}: training and test topics overlap ({sorted(overlap)[:3]}...)")
        out.append((str(name), list(train), list(test)))
    if not out:
        raise PdevalError("tasks= is empty")
    return out


def _split_reference(result: pd.DataFrame, reference, full_level) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(training rows with level/sample, complete-judgment rows)."""
    if reference is not None:
        reference = as_result(reference)
        for column in ("level", "sample"):
            if column in reference.columns:
                if reference[column].nunique(dropna=False) > 1:
                    raise SchemaError(f"the reference (complete judgments) has several values of {column!r}")
                reference = reference.drop(columns=column)
        training = result[result["level"].notna()]
        return training, reference
    if full_level is None:
        full = result["level"].isna()
        if not full.any():
            raise SchemaError(
                "no complete-judgment rows: pass reference= (the result on the complete qrels), "
                "or full_level= (the level that holds complete judgments), or add rows with level NaN"
            )
        return result[~full], result[full].drop(columns=["level", "sample"])
    at_full = result["level"] == full_level
    if not at_full.any():
        raise SchemaError(f"full_level={full_level!r} does not occur in the level column")
    first_sample = result.loc[at_full, "sample"].min()
    reference = result[at_full & (result["sample"] == first_sample)].drop(columns=["level", "sample"])
    return result[result["level"].notna()], reference


def full_judgment_wilcoxon(
    reference: pd.DataFrame,
    *,
    param: str,
    train_topics: TopicSet,
    test_topics: TopicSet,
    measures: Sequence[str],
    baseline: str = "AP",
    evaluate: Optional[str] = None,
    grid: Optional[Sequence] = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """Wilcoxon test at complete judgments (He, Macdonald & Ounis 2008, E11 step 6).

    On the complete-judgment result ``reference``: theta*_M and theta*_B maximise the mean of
    M and of the baseline B over ``train_topics`` (first in grid order on ties); the
    per-topic values of ``evaluate`` (default: the baseline, i.e. AP -- "MAP(M) vs
    MAP(MAP)") of the two settings on ``test_topics`` are compared by a two-sided
    Wilcoxon matched-pairs signed-rank test (``scipy.stats.wilcoxon``, zero differences
    dropped). Identical settings give p = 1 and a NaN statistic.

    Returns one row per measure: ``measure, theta_measure, theta_baseline, evaluated,
    value_measure, value_baseline`` (means over test topics), ``n_topics, statistic,
    p_value, significant``.
    """
    from scipy.stats import wilcoxon

    reference = as_result(reference)
    _check_columns(reference, [param, "query_id", "measure", "value"], "reference")
    evaluate = baseline if evaluate is None else evaluate
    measures = [m for m in measures if m != baseline]
    grid = _grid(reference, param, grid)
    wanted = list(dict.fromkeys([baseline, *measures]))
    train = _topic_means(reference[reference["measure"].isin(wanted)], ["measure", param], train_topics, "reference")
    optimal = _argmax_theta(train, param, ["measure"], grid).set_index("measure")["theta"]
    test = reference[(reference["measure"] == evaluate) & reference["query_id"].astype(str).isin([str(t) for t in test_topics])]
    if test.empty:
        raise SchemaError(f"the reference has no {evaluate!r} values on the test topics")
    per_topic = test.pivot_table(index="query_id", columns=param, values="value", aggfunc="first", observed=True)
    rows = []
    for measure in measures:
        if measure not in optimal.index:
            raise SchemaError(f"measure {measure!r} is not in the reference")
        tm, tb = optimal[measure], optimal[baseline]
        a = per_topic[tm].to_numpy(np.float64)
        b = per_topic[tb].to_numpy(np.float64)
        if np.isnan(a).any() or np.isnan(b).any():
            raise SchemaError(f"the reference lacks {evaluate!r} values on some test topics for {param}={tm!r} or {tb!r}")
        if np.all(a == b):
            statistic, p_value = float("nan"), 1.0
        else:
            res = wilcoxon(a, b, zero_method="wilcox", alternative="two-sided")
            statistic, p_value = float(res.statistic), float(res.pvalue)
        rows.append((measure, tm, tb, evaluate, a.mean(), b.mean(), a.size, statistic, p_value, p_value < alpha))
    return pd.DataFrame(
        rows,
        columns=["measure", "theta_measure", "theta_baseline", "evaluated", "value_measure", "value_baseline", "n_topics", "statistic", "p_value", "significant"],
    )


def _grid(frame: pd.DataFrame, param: str, grid: Optional[Sequence]) -> list:
    present = list(pd.unique(frame[param]))
    if grid is None:
        try:
            return sorted(present)
        except TypeError:
            return present
    grid = list(grid)
    if len(set(grid)) != len(grid):
        raise PdevalError("the parameter grid repeats values")
    return grid


def _tested_frames(name: str, theta: pd.DataFrame, lookup: pd.Series, measures: list, baseline: str,
                   param: str) -> tuple[list[pd.DataFrame], list[pd.DataFrame]]:
    """Steps 2 and 4 of :func:`training_sensitivity` for one task: X(Y) on the test topics at
    theta*_Y for X, Y in {baseline, M}, and the differences ``|X(theta*_X) - X(theta*_other)|``."""
    effect_frames, diff_frames = [], []
    for measure in measures:
        values = {}
        base = theta.index.to_frame(index=False)
        base.insert(0, "measure", measure)
        base.insert(0, "task", name)
        for evaluated in (baseline, measure):
            for trained in (baseline, measure):
                keys = pd.MultiIndex.from_arrays([[evaluated] * len(theta), theta[trained].to_numpy()])
                missing = ~keys.isin(lookup.index)
                if missing.any():
                    raise SchemaError(
                        f"the reference has no {evaluated!r} value for {param}={theta[trained].to_numpy()[missing][0]!r} on the test topics"
                    )
                values[evaluated, trained] = lookup.loc[keys].to_numpy(np.float64)
                effect_frames.append(base.assign(evaluated=evaluated, trained=trained, theta=theta[trained].to_numpy(),
                                                 value=values[evaluated, trained]))
        for evaluated, other in ((baseline, measure), (measure, baseline)):
            diff = np.abs(values[evaluated, evaluated] - values[evaluated, other])
            diff_frames.append(base.assign(evaluated=evaluated, diff=diff))
    return effect_frames, diff_frames


@contract(result=Frame("result"), param=Text("a column name"), measures=ListOf(Text("a measure name"), unique=True),
          train_topics=TOPICS, test_topics=TOPICS, reference_measure=Text("a measure name"),
          tasks=Nullable(MappingOf(Text("a task name"), PAIR, min_len=1) | ListOf(PAIR, lone=False)),
          reference=Nullable(Frame("result")), full_level=Nullable(Real()),
          grid=Nullable(ListOf(Anything(why="values of the param column, of any type"), lone=False)),
          alpha=Real(0, 1, closed="neither"), renamed={"baseline": "reference_measure"})
def training_sensitivity(
    result: pd.DataFrame,
    *,
    param: str,
    measures: Sequence[str],
    train_topics: Optional[TopicSet] = None,
    test_topics: Optional[TopicSet] = None,
    tasks: Optional[Tasks] = None,
    reference_measure: str = "AP",
    reference: Optional[pd.DataFrame] = None,
    full_level: Optional[float] = None,
    grid: Optional[Sequence] = None,
    alpha: float = 0.05,
) -> pd.DataFrame:
    """He, Macdonald & Ounis's (2008) training-sensitivity protocol (MEASURES.md E11).

    For each task (train on one topic set, test on the other), each measure M of
    ``measures`` and the reference measure B (``reference_measure``, MAP by default: ``"AP"``):

    1. **Training**: for each level x and sample s of the reduced training qrels,
       ``theta*_X(x, s) = argmax_theta mean_{t in train} X(run_theta, t)``, ties broken by
       the first value of ``grid`` (default: the sorted parameter values).
    2. **Testing**: with complete judgments on the test topics, X(Y) = mean of X at
       theta*_Y for X, Y in {B, M}.
    3. **Parameter stability**: ``1/sigma_opt(X) = 1 / sd_s theta*_X(x, s)`` (ddof = 1;
       sigma = 0 gives +inf).
    4. **Effectiveness stability**: ``diff_B(s) = |B(theta*_B) - B(theta*_M)|``,
       ``diff_M(s) = |M(theta*_M) - M(theta*_B)|`` and 1/sd_s of each.
    5. **Sign tests** over (task, level) cases: :meth:`TrainingSensitivity.sign_tests`.
    6. **Wilcoxon at complete judgments**: :func:`full_judgment_wilcoxon`, when the
       reference covers the training topics.

    Input: ``result`` keyed by ``param`` (one system per value), ``query_id``, ``level``
    and ``sample`` (the reduced training qrels; ``sample`` may be absent for a single
    sample). The complete-judgment values (the *reference*) are, in this order:

    * ``reference=``, a result frame keyed by ``param`` and ``query_id`` (a single-valued
      ``level``/``sample`` is ignored);
    * else, with ``full_level=`` (e.g. 100), the rows of ``result`` at that level (the
      smallest sample); they also stay a training level;
    * else the rows of ``result`` whose ``level`` is NaN (e.g. a full evaluation
      concatenated to the reduced ones).

    Tasks: pass ``train_topics`` and ``test_topics`` for one task (named ``"0"``), or
    ``tasks=`` as a mapping name -> (train, test) or a list of (train, test) pairs (named
    ``"0"``, ``"1"``...). All tasks land in the same frames (``task`` column) and the sign
    tests count cases over all of them (4 tasks x 16 levels = 64 cases in the paper).

    Parameters
    ----------
    result : DataFrame
        The sweep on the reduced training qrels (above).
    param : str
        The column of ``result`` holding the parameter value of each system.
    measures : list of str
        The measures compared with the reference measure.
    train_topics, test_topics : list of str, optional
        The training and test topics of one task.
    tasks : mapping or list of pairs, optional
        Several tasks: name -> (train, test), or a list of (train, test) pairs.
    reference_measure : str, default 'AP'
        The measure B the others are compared with (``"AP"``: MAP); the old ``baseline=``
        names it.
    reference : DataFrame, optional
        The complete-judgment values, keyed by ``param`` and ``query_id`` (above).
    full_level : float, optional
        The level of ``result`` that holds the complete judgments (above).
    grid : list, optional
        The parameter values in tie-breaking order (default: sorted).
    alpha : float, default 0.05
        The tests' level.

    Returns
    -------
    DataFrame
        The sign tests (:meth:`TrainingSensitivity.sign_tests`: ``kind``, ``measure``, ``a``,
        ``b``, ``label``, ``p_value``, ``significant``, ...), carrying the other frames as
        attributes: ``.optimal``, ``.stability``, ``.effectiveness``, ``.differences``,
        ``.diff_stability``, ``.wilcoxon`` and ``.sign_tests(levels=...)``.

    Raises
    ------
    PdevalError, SchemaError
        The reference measure among ``measures``; missing columns or measures; several
        values where one is needed.

    See Also
    --------
    discriminative_power : How many run pairs a measure tells apart.
    swap_rates : How often a measure's verdict on a run pair flips between topic sets.

    Examples
    --------
    >>> rows = [{"b": b, "query_id": q, "level": level, "sample": s, "measure": m,
    ...          "value": 0.1 * (q == "1") + b * (m == "AP") + 0.01 * s * (b == 0.5) + (level == 100) * 0.1}
    ...         for b in (0.25, 0.5, 0.75) for q in ("1", "2", "3", "4") for level in (50, 100)
    ...         for s in (0, 1) for m in ("AP", "bpref")]
    >>> out = pdeval.training_sensitivity(pd.DataFrame(rows), param="b", measures=["bpref"],
    ...                                   train_topics=["1", "2"], test_topics=["3", "4"], full_level=100)
    >>> out[["kind", "measure", "label", "p_value"]]
       kind measure label  p_value
    0   opt   bpref   0/2      0.5
    1  diff   bpref   2/2      0.5
    """
    result = as_result(result)
    if "sample" not in result.columns and "level" in result.columns:
        result = result.assign(sample=0)
    _check_columns(result, [param, "query_id", "level", "sample", "measure", "value"], "result")
    measures = list(dict.fromkeys(measures))
    if reference_measure in measures:
        raise PdevalError(f"training_sensitivity(): reference_measure={reference_measure!r} must not be one of "
                          f"measures={measures}; leave it out of measures")
    all_measures = [reference_measure, *measures]
    _single_valued(result, [param, "query_id", "level", "sample", "run"], "result")
    training, ref = _split_reference(result, reference, full_level)
    _check_columns(ref, [param, "query_id", "measure", "value"], "reference")
    _single_valued(ref, [param, "query_id", "run"], "reference")
    for what, frame in (("result", training), ("reference", ref)):
        absent = [m for m in all_measures if m not in set(frame["measure"])]
        if absent:
            raise SchemaError(f"measure(s) {absent} are not in the {what}; it has {sorted(set(frame['measure']))}")
    training = training[training["measure"].isin(all_measures)]
    ref = ref[ref["measure"].isin(all_measures)]
    grid = _grid(training, param, grid)
    task_list = _normalise_tasks(tasks, train_topics, test_topics)

    optimal_frames, effect_frames, diff_frames, wilcoxon_frames = [], [], [], []
    wilcoxon_ok = True
    for name, train, test in task_list:
        means = _topic_means(training, ["measure", "level", "sample", param], train, "result (training topics)")
        optimal = _argmax_theta(means, param, ["measure", "level", "sample"], grid)
        optimal.insert(0, "task", name)
        optimal_frames.append(optimal)
        test_means = _topic_means(ref, ["measure", param], test, "reference (test topics)")
        lookup = test_means.set_index(["measure", param])["value"]
        theta = optimal.set_index(["level", "sample", "measure"])["theta"].unstack("measure")
        effects, diffs = _tested_frames(name, theta, lookup, measures, reference_measure, param)
        effect_frames += effects
        diff_frames += diffs
        train_set = {str(t) for t in train}
        if wilcoxon_ok and train_set <= set(ref["query_id"].astype(str)):
            w = full_judgment_wilcoxon(
                ref, param=param, train_topics=train, test_topics=test, measures=measures, baseline=reference_measure,
                grid=grid, alpha=alpha)
            w.insert(0, "task", name)
            wilcoxon_frames.append(w)
        else:
            wilcoxon_ok = False

    optimal = pd.concat(optimal_frames, ignore_index=True)
    stability = (
        optimal.groupby(["task", "measure", "level"], sort=False, observed=True)["theta"]
        .agg(n_samples="count", sigma=lambda s: sample_sd(s.astype(float)))
        .reset_index()
    )
    stability["inv_sigma"] = inverse_of(stability["sigma"])
    differences = pd.concat(diff_frames, ignore_index=True)
    diff_stability = (
        differences.groupby(["task", "measure", "level", "evaluated"], sort=False, observed=True)["diff"]
        .agg(n_samples="count", sigma=lambda s: sample_sd(s))
        .reset_index()
    )
    diff_stability["inv_sigma"] = inverse_of(diff_stability["sigma"])
    return ResultFrame.of(TrainingSensitivity(
        param=param, reference_measure=reference_measure, measures=measures, optimal=optimal, stability=stability,
        effectiveness=pd.concat(effect_frames, ignore_index=True), differences=differences,
        diff_stability=diff_stability, wilcoxon=pd.concat(wilcoxon_frames, ignore_index=True) if wilcoxon_ok else None,
    ))
