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

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.bundle import ResultBundle
from pdeval.errors import PdevalError, SchemaError
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
Tasks = Union[Mapping[str, tuple[TopicSet, TopicSet]], Sequence[tuple[TopicSet, TopicSet]]]


def sign_test(a: int, b: int) -> float:
    """Exact two-sided sign test: ``a`` successes among ``b`` untied cases, p = 1/2.

    ``p = min(1, 2 * P(X <= min(a, b - a)))`` with ``X ~ Binomial(b, 1/2)`` (the binomial
    distribution with p = 1/2 is symmetric, so this equals ``scipy.stats.binomtest``). Used
    by He, Macdonald & Ounis (2008) to compare stabilities across cases; a = 10, b = 12
    gives 158/4096 = 0.0385742188. ``b = 0`` gives 1.
    """
    from scipy.stats import binom

    a, b = int(a), int(b)
    if b < 0 or a < 0 or a > b:
        raise PdevalError(f"sign_test needs 0 <= a <= b, got a={a}, b={b}")
    if b == 0:
        return 1.0
    return float(min(1.0, 2.0 * binom.cdf(min(a, b - a), b, 0.5)))


def inverse_sd(values: Sequence[float], ddof: int = 1) -> float:
    """Stability ``1 / sd(values)`` (He, Macdonald & Ounis 2008), ddof = 1; sd = 0 (all values
    equal) gives +inf.

    NaN when fewer than ``ddof + 1`` values are given.
    """
    values = np.asarray(values, dtype=np.float64)
    if values.size <= ddof:
        return float("nan")
    sd = _sd(values, ddof)
    return math.inf if sd == 0 else 1.0 / sd


def _sd(values, ddof: int = 1) -> float:
    """Sample standard deviation; exactly 0 when every value is equal (``np.std`` of ten copies
    of 0.6 is 1.2e-16 through the rounding of the mean, which would make 1/sd finite)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size <= ddof:
        return float("nan")
    if values.min() == values.max():
        return 0.0
    return float(np.std(values, ddof=ddof))


def _inverse(sd: pd.Series) -> pd.Series:
    out = 1.0 / sd.where(sd != 0)
    return out.where(sd != 0, np.inf).where(sd.notna())


@dataclass(repr=False)
class TrainingSensitivity(ResultBundle):
    """Result of :func:`training_sensitivity` (all frames tidy, with a ``task`` column);
    ``to_frame()`` is :meth:`sign_tests` (the paper's Tables 4 and 5).

    ``optimal``
        ``task, measure, level, sample, theta, train_value``: theta*_X(level, sample), the
        grid value maximising the mean of X over the training topics (first in grid order
        on ties), for X = the baseline and every measure.
    ``stability``
        ``task, measure, level, n_samples, sigma, inv_sigma``: sigma_opt = sd of theta*
        over samples (ddof=1) and 1/sigma_opt (+inf for sigma = 0).
    ``effectiveness``
        ``task, measure, level, sample, evaluated, trained, theta, value``: X(Y) on the test
        topics with complete judgments -- evaluated by X, trained by Y -- for X, Y in
        {baseline, measure}.
    ``differences``
        ``task, measure, level, sample, evaluated, diff``: ``|B(theta*_B) - B(theta*_M)|``
        (evaluated = baseline B) and ``|M(theta*_M) - M(theta*_B)|`` (evaluated = M).
    ``diff_stability``
        ``task, measure, level, evaluated, n_samples, sigma, inv_sigma``: 1/sigma_diff.
    ``wilcoxon``
        per task and measure, the Wilcoxon test at complete judgments
        (:func:`full_judgment_wilcoxon`), or ``None`` when the reference does not cover the
        training topics.

    :func:`combine_sensitivities` joins several results (e.g. one per retrieval model) into one
    whose frames start with a column naming the part (``model``); ``param`` is then a mapping
    part -> parameter name.
    """

    param: Union[str, Mapping[str, str]]
    baseline: str
    measures: list
    optimal: pd.DataFrame
    stability: pd.DataFrame
    effectiveness: pd.DataFrame
    differences: pd.DataFrame
    diff_stability: pd.DataFrame
    wilcoxon: Optional[pd.DataFrame]

    def to_frame(self) -> pd.DataFrame:
        """The summary table: :meth:`sign_tests` over every case."""
        return self.sign_tests()

    def sign_tests(
        self, levels: Union[None, Sequence, Mapping[str, Sequence]] = None, alpha: float = 0.05, rtol: float = 0.0
    ) -> pd.DataFrame:
        """Sign tests of the stabilities of each measure M against the baseline (E11 step 5).

        Cases are (task, level) pairs -- (model, task, level) for a result of
        :func:`combine_sensitivities` -- optionally restricted to ``levels``: a list of levels,
        or a mapping from the values of the first case column (the model of a combined result,
        else the task) to the levels that count there (e.g. the levels whose sampled relevant
        documents differ, which depend on the collection). For
        ``kind="opt"`` the case compares 1/sigma_opt(M) with 1/sigma_opt(baseline) (the
        paper's Table 4); for ``kind="diff"`` 1/sigma_diff evaluated by M with
        1/sigma_diff evaluated by the baseline (Table 5). ``a`` = cases where M is more
        stable, ``b`` = cases that are not tied (equal values, +inf vs +inf included, are
        dropped; so are cases with NaN, e.g. a single sample). ``rtol`` > 0 also counts values
        within that relative distance of each other as tied (e.g. infAP and AP, which differ
        by its smoothing only when the test judgments are complete). Returns ``kind, measure, a,
        b, label ("a/b"), p_value (exact two-sided, :func:`sign_test`), significant,
        n_cases, n_tied, n_nan``.
        """
        rows = []
        opt = self.stability
        dif = self.diff_stability
        if levels is not None:
            opt, dif = _keep_levels(opt, levels), _keep_levels(dif, levels)
        cases = [c for c in opt.columns if c not in ("measure", "n_samples", "sigma", "inv_sigma")]
        base_opt = opt[opt["measure"] == self.baseline].set_index(cases)["inv_sigma"]
        for measure in self.measures:
            mine = opt[opt["measure"] == measure].set_index(cases)["inv_sigma"]
            rows.append(("opt", measure, *_sign_counts(mine, base_opt, rtol), alpha))
            part = dif[dif["measure"] == measure]
            mine = part[part["evaluated"] == measure].set_index(cases)["inv_sigma"]
            base = part[part["evaluated"] == self.baseline].set_index(cases)["inv_sigma"]
            rows.append(("diff", measure, *_sign_counts(mine, base, rtol), alpha))
        out = pd.DataFrame(rows, columns=["kind", "measure", "a", "b", "n_cases", "n_tied", "n_nan", "alpha"])
        out["label"] = out["a"].astype(str) + "/" + out["b"].astype(str)
        out["p_value"] = [sign_test(a, b) for a, b in zip(out["a"], out["b"])]
        out["significant"] = out["p_value"] < alpha
        return out[["kind", "measure", "a", "b", "label", "p_value", "significant", "n_cases", "n_tied", "n_nan"]]


def combine_sensitivities(parts: Mapping[str, TrainingSensitivity], *, key: str = "model") -> TrainingSensitivity:
    """One :class:`TrainingSensitivity` from several, e.g. one per retrieval model or collection.

    Every frame gets a first column ``key`` holding the part's name, so the tables can be laid
    out by model and :meth:`TrainingSensitivity.sign_tests` counts (model, task, level) cases:
    He, Macdonald & Ounis (2008) pool their sign tests over BM25 and PL2 and over four tasks.
    ``param`` becomes the mapping name -> parameter (``{"BM25": "b", "PL2": "c"}``); ``wilcoxon``
    is ``None`` if any part has none. All parts must share the baseline and the measures.
    """
    parts = dict(parts)
    if not parts:
        raise PdevalError("combine_sensitivities needs at least one part")
    first = next(iter(parts.values()))
    for name, part in parts.items():
        if not isinstance(part, TrainingSensitivity):
            raise PdevalError(f"part {name!r} is a {type(part).__name__}, not a TrainingSensitivity")
        if part.baseline != first.baseline or list(part.measures) != list(first.measures):
            raise PdevalError(
                f"part {name!r} has baseline {part.baseline!r} and measures {part.measures}; the first part has "
                f"{first.baseline!r} and {first.measures}: combine only results of the same comparison"
            )
        if key in part.optimal.columns:
            raise PdevalError(f"part {name!r} already has a {key!r} column; pick another key=")

    def joined(attribute: str) -> pd.DataFrame:
        return pd.concat([getattr(part, attribute).assign(**{key: name}) for name, part in parts.items()],
                         ignore_index=True).pipe(lambda f: f[[key, *f.columns.drop(key)]])

    wilcoxon = None if any(part.wilcoxon is None for part in parts.values()) else joined("wilcoxon")
    return TrainingSensitivity(
        param={name: part.param for name, part in parts.items()},
        baseline=first.baseline,
        measures=list(first.measures),
        optimal=joined("optimal"),
        stability=joined("stability"),
        effectiveness=joined("effectiveness"),
        differences=joined("differences"),
        diff_stability=joined("diff_stability"),
        wilcoxon=wilcoxon,
    )


def _keep_levels(frame: pd.DataFrame, levels) -> pd.DataFrame:
    if not isinstance(levels, Mapping):
        return frame[frame["level"].isin(list(levels))]
    key = frame.columns[0]
    unknown = set(map(str, levels)) - set(frame[key].astype(str))
    if unknown:
        raise PdevalError(f"levels= names {sorted(unknown)}, which are not values of {key!r} ({sorted(set(frame[key]))})")
    allowed = pd.DataFrame([(k, lvl) for k, lv in levels.items() for lvl in lv], columns=[key, "level"])
    allowed = allowed.astype({"level": frame["level"].dtype}, errors="ignore")
    return frame.merge(allowed.drop_duplicates(), on=[key, "level"], how="inner")


def _sign_counts(mine: pd.Series, base: pd.Series, rtol: float = 0.0) -> tuple[int, int, int, int, int]:
    x, y = mine.align(base, join="outer")
    nan = x.isna() | y.isna()
    x, y = x[~nan], y[~nan]
    with np.errstate(invalid="ignore"):
        close = (x - y).abs() <= rtol * np.maximum(x.abs(), y.abs())
    untied = (x != y) & ~close.fillna(False)
    return int(((x > y) & untied).sum()), int(untied.sum()), int(len(nan)), int((~untied).sum()), int(nan.sum())


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


def training_sensitivity(
    result: pd.DataFrame,
    *,
    param: str,
    measures: Sequence[str],
    train_topics: Optional[TopicSet] = None,
    test_topics: Optional[TopicSet] = None,
    tasks: Optional[Tasks] = None,
    baseline: str = "AP",
    reference: Optional[pd.DataFrame] = None,
    full_level=None,
    grid: Optional[Sequence] = None,
    alpha: float = 0.05,
) -> TrainingSensitivity:
    """He, Macdonald & Ounis's (2008) training-sensitivity protocol (MEASURES.md E11).

    For each task (train on one topic set, test on the other), each measure M of
    ``measures`` and the ``baseline`` B (MAP by default, measure ``"AP"``):

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
    result, param
        The sweep on the reduced training qrels and its parameter column (above).
    measures, baseline
        The measures compared with the baseline measure (``"AP"``: MAP).
    train_topics, test_topics, tasks, reference, full_level
        The tasks and the complete-judgment values (above).
    grid, alpha
        The parameter values in tie-breaking order (default: sorted); the tests' level.

    Returns
    -------
    TrainingSensitivity
        Its frames; ``to_frame()`` is :meth:`TrainingSensitivity.sign_tests`.

    Raises
    ------
    PdevalError, SchemaError
        The baseline among ``measures``; missing columns or measures; several values where
        one is needed.
    """
    result = as_result(result)
    if "sample" not in result.columns and "level" in result.columns:
        result = result.assign(sample=0)
    _check_columns(result, [param, "query_id", "level", "sample", "measure", "value"], "result")
    measures = list(dict.fromkeys(measures))
    if baseline in measures:
        raise PdevalError(f"the baseline {baseline!r} must not be one of measures={measures}")
    if not measures:
        raise PdevalError("give at least one measure to compare with the baseline")
    all_measures = [baseline, *measures]
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
        effects, diffs = _tested_frames(name, theta, lookup, measures, baseline, param)
        effect_frames += effects
        diff_frames += diffs
        train_set = {str(t) for t in train}
        if wilcoxon_ok and train_set <= set(ref["query_id"].astype(str)):
            w = full_judgment_wilcoxon(
                ref, param=param, train_topics=train, test_topics=test, measures=measures, baseline=baseline, grid=grid, alpha=alpha
            )
            w.insert(0, "task", name)
            wilcoxon_frames.append(w)
        else:
            wilcoxon_ok = False

    optimal = pd.concat(optimal_frames, ignore_index=True)
    stability = (
        optimal.groupby(["task", "measure", "level"], sort=False, observed=True)["theta"]
        .agg(n_samples="count", sigma=lambda s: _sd(s.astype(float)))
        .reset_index()
    )
    stability["inv_sigma"] = _inverse(stability["sigma"])
    differences = pd.concat(diff_frames, ignore_index=True)
    diff_stability = (
        differences.groupby(["task", "measure", "level", "evaluated"], sort=False, observed=True)["diff"]
        .agg(n_samples="count", sigma=lambda s: _sd(s))
        .reset_index()
    )
    diff_stability["inv_sigma"] = _inverse(diff_stability["sigma"])
    return TrainingSensitivity(
        param=param,
        baseline=baseline,
        measures=measures,
        optimal=optimal,
        stability=stability,
        effectiveness=pd.concat(effect_frames, ignore_index=True),
        differences=differences,
        diff_stability=diff_stability,
        wilcoxon=pd.concat(wilcoxon_frames, ignore_index=True) if wilcoxon_ok else None,
    )
