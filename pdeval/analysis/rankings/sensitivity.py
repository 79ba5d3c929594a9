"""The result of :func:`pdeval.training_sensitivity` (He, Macdonald & Ounis 2008; MEASURES.md
E11): :class:`TrainingSensitivity` with its sign tests, :func:`combine_sensitivities` to join
the results of several models, and the statistics they use (:func:`sign_test`,
:func:`inverse_sd`). The protocol itself is in :mod:`pdeval.analysis.rankings.training`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.bundle import ResultBundle, ResultFrame
from pdeval.errors import PdevalError

__all__ = ["TrainingSensitivity", "combine_sensitivities", "inverse_of", "inverse_sd", "sample_sd", "sign_test"]


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
    sd = sample_sd(values, ddof)
    return math.inf if sd == 0 else 1.0 / sd


def sample_sd(values, ddof: int = 1) -> float:
    """Sample standard deviation; exactly 0 when every value is equal (``np.std`` of ten copies
    of 0.6 is 1.2e-16 through the rounding of the mean, which would make 1/sd finite)."""
    values = np.asarray(values, dtype=np.float64)
    if values.size <= ddof:
        return float("nan")
    if values.min() == values.max():
        return 0.0
    return float(np.std(values, ddof=ddof))


def inverse_of(sd: pd.Series) -> pd.Series:
    """1 / sd element-wise: +inf where sd is 0, NaN where it is NaN."""
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
    reference_measure: str
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
        base_opt = opt[opt["measure"] == self.reference_measure].set_index(cases)["inv_sigma"]
        for measure in self.measures:
            mine = opt[opt["measure"] == measure].set_index(cases)["inv_sigma"]
            rows.append(("opt", measure, *_sign_counts(mine, base_opt, rtol), alpha))
            part = dif[dif["measure"] == measure]
            mine = part[part["evaluated"] == measure].set_index(cases)["inv_sigma"]
            base = part[part["evaluated"] == self.reference_measure].set_index(cases)["inv_sigma"]
            rows.append(("diff", measure, *_sign_counts(mine, base, rtol), alpha))
        out = pd.DataFrame(rows, columns=["kind", "measure", "a", "b", "n_cases", "n_tied", "n_nan", "alpha"])
        out["label"] = out["a"].astype(str) + "/" + out["b"].astype(str)
        out["p_value"] = [sign_test(a, b) for a, b in zip(out["a"], out["b"])]
        out["significant"] = out["p_value"] < alpha
        return out[["kind", "measure", "a", "b", "label", "p_value", "significant", "n_cases", "n_tied", "n_nan"]]


def combine_sensitivities(parts: Mapping[str, TrainingSensitivity], *, key: str = "model") -> pd.DataFrame:
    """One :class:`TrainingSensitivity` from several, e.g. one per retrieval model or collection.

    Every frame gets a first column ``key`` holding the part's name, so the tables can be laid
    out by model and :meth:`TrainingSensitivity.sign_tests` counts (model, task, level) cases:
    He, Macdonald & Ounis (2008) pool their sign tests over BM25 and PL2 and over four tasks.
    ``param`` becomes the mapping name -> parameter (``{"BM25": "b", "PL2": "c"}``); ``wilcoxon``
    is ``None`` if any part has none. All parts must share the baseline and the measures.
    """
    parts = {name: getattr(part, "bundle", part) for name, part in dict(parts).items()}  # a ResultFrame's result
    if not parts:
        raise PdevalError("combine_sensitivities needs at least one part")
    first = next(iter(parts.values()))
    for name, part in parts.items():
        if not isinstance(part, TrainingSensitivity):
            raise PdevalError(f"part {name!r} is a {type(part).__name__}, not a TrainingSensitivity")
        if part.reference_measure != first.reference_measure or list(part.measures) != list(first.measures):
            raise PdevalError(
                f"part {name!r} has reference measure {part.reference_measure!r} and measures {part.measures}; the "
                f"first part has {first.reference_measure!r} and {first.measures}: combine only results of the same "
                "comparison"
            )
        if key in part.optimal.columns:
            raise PdevalError(f"part {name!r} already has a {key!r} column; pick another key=")

    def joined(attribute: str) -> pd.DataFrame:
        return pd.concat([getattr(part, attribute).assign(**{key: name}) for name, part in parts.items()],
                         ignore_index=True).pipe(lambda f: f[[key, *f.columns.drop(key)]])

    wilcoxon = None if any(part.wilcoxon is None for part in parts.values()) else joined("wilcoxon")
    return ResultFrame.of(TrainingSensitivity(
        param={name: part.param for name, part in parts.items()},
        reference_measure=first.reference_measure,
        measures=list(first.measures),
        optimal=joined("optimal"),
        stability=joined("stability"),
        effectiveness=joined("effectiveness"),
        differences=joined("differences"),
        diff_stability=joined("diff_stability"),
        wilcoxon=wilcoxon,
    ))


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
