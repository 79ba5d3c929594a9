"""ANOVA of a runs x topics score matrix and Sakai's ES_E2 effect sizes.

Two-way ANOVA without replication (Sakai 2018, *Laboratory Experiments in Information
Retrieval*, ch. 3-5): with ``x[i, j]`` the score of system i on topic j (m systems, n
topics), the grand mean ``x..``, system means ``xi.`` and topic means ``x.j``,

* ``SS_A = n sum_i (xi. - x..)^2``, ``phi_A = m - 1`` (systems);
* ``SS_B = m sum_j (x.j - x..)^2``, ``phi_B = n - 1`` (topics);
* ``SS_E = sum_ij (x[i,j] - xi. - x.j + x..)^2``, ``phi_E = (m - 1)(n - 1)`` (residual);
* ``V = SS / phi``, ``F = V / V_E``, ``p = P(F(phi, phi_E) >= F)``.

One-way ANOVA (``two_way=False``) treats the topics as replicates: ``SS_E`` is the
within-system sum of squares with ``phi_E = m (n - 1)`` and there is no topic row.

The residual variance ``V_E`` is the variance estimate that Tukey's HSD, the effect sizes
and topic-set-size design use. Sakai's effect size for a system pair (Sakai 2018, sec. 5.2;
Sakai 2014, "Statistical reform in information retrieval?") is
``ES_E2(i, j) = (xi. - xj.) / sqrt(V_E)``, an estimate of ``(mu_i - mu_j) / sigma``.

Its interval comes in two kinds (``es_interval``):

``"tukey"``
    Tukey's simultaneous ``1 - alpha`` interval of the mean difference divided by
    ``sqrt(V_E)``: ``ES_E2 +- q(alpha; m, phi_E) / sqrt(n)``. All pairs are covered at once,
    but ``V_E`` is treated as known, so for few topics the interval is too narrow for
    ``(mu_i - mu_j) / sigma``.
``"noncentral"``
    the exact interval of one pair with ``sigma`` estimated (Steiger & Fouladi 1997,
    "Noncentrality interval estimation and the evaluation of statistical models"; Cumming &
    Finch 2001, Educational and Psychological Measurement 61(4)). Under the additive model
    with normal errors, ``t = (xi. - xj.) / sqrt(2 V_E / n)`` is noncentral t with ``phi_E``
    degrees of freedom and noncentrality ``lambda = sqrt(n / 2) (mu_i - mu_j) / sigma``
    (the difference of two system means is independent of the residuals). The limits
    ``lambda_low``, ``lambda_high`` solve ``P(T'(phi_E, lambda_low) <= t) = 1 - alpha/2`` and
    ``P(T'(phi_E, lambda_high) <= t) = alpha/2``, and the interval of the effect size is
    ``sqrt(2 / n) [lambda_low, lambda_high]``. It covers each pair at ``1 - alpha``, not all
    pairs at once.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError, PdevalWarning, warn
from pdeval.common.contract import Boolean, Choice, Real, Text, contract
from pdeval.common.options import check_choice
from pdeval.analysis.bundle import ResultBundle, ResultFrame
from pdeval.analysis.statistics.scores import RESULT_MEASURES, score_matrices
from pdeval.frames.domains import Frame

__all__ = ["AnovaFit", "fit_anova", "effect_sizes", "anova", "Anova", "noncentrality_interval"]

#: the kinds of ES_E2 interval (module docstring)
ES_INTERVALS = ("tukey", "noncentral")


@dataclass
class AnovaFit:
    """The sums of squares of one runs x topics matrix (see the module docstring)."""

    m: int
    n: int
    two_way: bool
    means: np.ndarray
    ss_system: float
    ss_topic: float
    ss_residual: float
    df_system: int
    df_topic: int
    df_residual: int

    @property
    def residual_variance(self) -> float:
        """``V_E = SS_E / phi_E``."""
        return self.ss_residual / self.df_residual


def fit_anova(scores: np.ndarray, *, two_way: bool = True) -> AnovaFit:
    """Sums of squares and degrees of freedom of a runs x topics matrix (m >= 2, n >= 2)."""
    if not isinstance(two_way, (bool, np.bool_)):
        raise PdevalError(f"two_way must be True (system x topic) or False (one-way), not {two_way!r}")
    x = np.asarray(scores, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise PdevalError(f"ANOVA needs at least two runs and two topics, got a {x.shape} score matrix")
    m, n = x.shape
    grand = x.mean()
    row = x.mean(axis=1)
    col = x.mean(axis=0)
    ss_system = float(n * ((row - grand) ** 2).sum())
    if two_way:
        ss_topic = float(m * ((col - grand) ** 2).sum())
        residual = x - row[:, None] - col[None, :] + grand
        df_topic, df_residual = n - 1, (m - 1) * (n - 1)
    else:
        ss_topic, df_topic = float("nan"), 0
        residual = x - row[:, None]
        df_residual = m * (n - 1)
    return AnovaFit(
        m, n, two_way, row, ss_system, ss_topic, float((residual**2).sum()), m - 1, df_topic, df_residual
    )


def _table(fit: AnovaFit) -> pd.DataFrame:
    from scipy.stats import f as fisher

    sources = ["system", "topic", "residual"] if fit.two_way else ["system", "residual"]
    ss = [fit.ss_system, fit.ss_topic, fit.ss_residual] if fit.two_way else [fit.ss_system, fit.ss_residual]
    df = [fit.df_system, fit.df_topic, fit.df_residual] if fit.two_way else [fit.df_system, fit.df_residual]
    ss_a, df_a = np.asarray(ss), np.asarray(df, dtype=np.float64)
    mean_sq = ss_a / df_a
    with np.errstate(divide="ignore", invalid="ignore"):
        f_value = mean_sq / fit.residual_variance
    f_value[-1] = np.nan
    p_value = fisher.sf(f_value, df_a, fit.df_residual)
    return pd.DataFrame(
        {"source": sources, "df": df, "sum_sq": ss_a, "mean_sq": mean_sq, "F": f_value, "p_value": p_value}
    )


def noncentrality_interval(t: np.ndarray, df: float, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``1 - alpha`` interval of the noncentrality ``lambda`` of a noncentral t variate
    observed at each ``t`` (``df`` degrees of freedom): the ``lambda`` at which ``t`` is the
    ``1 - alpha/2`` and the ``alpha/2`` quantile (module docstring), found for all ``t`` at once
    by SciPy's vectorised bracketing and root finding (NaN where ``t`` is not finite)."""
    from scipy.optimize import elementwise
    from scipy.stats import nct

    t = np.asarray(t, dtype=np.float64)
    finite = np.isfinite(t)
    # solved at |t| (SciPy's noncentral t is accurate there) and mirrored:
    # P(T'(lambda) <= -x) = 1 - P(T'(-lambda) <= x), so the limits at -x are minus those at x
    sign = np.where(t < 0, -1.0, 1.0)
    limits = []
    for level in (1.0 - alpha / 2.0, alpha / 2.0):
        out = np.full(t.shape, np.nan)
        if finite.any():
            x = np.abs(t[finite])

            def excess(lam, x, level=level):  # x is passed as an argument: the solvers subset it
                return nct.cdf(x, df, lam) - level  # decreasing in lambda

            bracket = elementwise.bracket_root(excess, x - 1.0, x + 1.0, args=(x,))
            root = elementwise.find_root(
                excess, bracket.bracket, args=(x,), tolerances={"xatol": 1e-12, "xrtol": 1e-12}
            )
            out[finite] = np.where(root.success, root.x, np.nan)
        limits.append(out * sign)
    low, high = limits
    return np.where(sign > 0, low, high), np.where(sign > 0, high, low)


def effect_sizes(
    fit: AnovaFit, runs: Sequence, *, alpha: float = 0.05, es_interval: str = "tukey"
) -> pd.DataFrame:
    """ES_E2 for every unordered pair (input order) with a ``1 - alpha`` interval.

    ``ES_E2 = (xi. - xj.) / sqrt(V_E)``. ``es_interval="tukey"``: Tukey's simultaneous
    interval of the mean difference, ``diff +- q(alpha; m, phi_E) sqrt(V_E/n)`` (Sakai 2018,
    sec. 4.4), divided by ``sqrt(V_E)``, i.e. ``ES_E2 +- q / sqrt(n)``, with ``V_E`` taken as
    known; ``"noncentral"``: the exact interval of each pair with ``sigma`` estimated, from
    the noncentral t (module docstring). The column ``es_interval`` names the kind.
    """
    from scipy.stats import studentized_range

    check_choice("es_interval", es_interval, ES_INTERVALS)
    ii, jj = np.triu_indices(fit.m, k=1)
    diff = fit.means[ii] - fit.means[jj]
    scale = math.sqrt(fit.residual_variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        es = diff / scale
    if es_interval == "tukey":
        half = studentized_range.ppf(1.0 - alpha, fit.m, fit.df_residual) / math.sqrt(fit.n)
        low, high = es - half, es + half
    else:
        root = math.sqrt(fit.n / 2.0)
        low, high = noncentrality_interval(es * root, fit.df_residual, alpha)
        low, high = low / root, high / root
        failed = int((np.isnan(low) | np.isnan(high))[np.isfinite(es)].sum())
        if failed:
            warn(
                f"the noncentral ES_E2 interval of {failed} pair(s) is NaN: SciPy's noncentral t cannot be "
                f"inverted that far out (|t| up to {np.nanmax(np.abs(es)) * root:.3g} on {fit.df_residual} degrees "
                "of freedom); use es_interval='tukey' or more topics",
                PdevalWarning,
            )
    return pd.DataFrame(
        {
            "run_a": [runs[i] for i in ii],
            "run_b": [runs[j] for j in jj],
            "diff": diff,
            "es_e2": es,
            "ci_low": low,
            "ci_high": high,
            "es_interval": es_interval,
        }
    )


@dataclass(repr=False)
class Anova(ResultBundle):
    """Result of :func:`anova`; ``to_frame()`` is the ANOVA table.

    ``table``: one row per (measure, variant, source) with ``source`` (``system``,
    ``topic``, ``residual``), ``df``, ``sum_sq``, ``mean_sq``, ``F``, ``p_value`` (the
    columns of ``statsmodels.stats.anova.anova_lm``). ``summary``: one row per (measure,
    variant) with ``n_runs``, ``n_topics``, ``residual_variance`` (V_E), ``df_residual``,
    ``two_way``. ``effect_sizes``: one row per (measure, variant, run pair) with ``run_a``,
    ``run_b``, ``diff``, ``es_e2``, ``ci_low``, ``ci_high``, ``es_interval`` (see :func:`effect_sizes`).
    """

    table: pd.DataFrame
    summary: pd.DataFrame
    effect_sizes: pd.DataFrame

    _summary = "table"


@contract(
    result=Frame("result"),
    measures=RESULT_MEASURES,
    two_way=Boolean(),
    alpha=Real(0, 1, closed="neither"),
    es_interval=Choice(*ES_INTERVALS),
    system=Text("a column name"),
)
def anova(
    result: pd.DataFrame,
    *,
    measures: Union[None, str, Sequence[str]] = None,
    two_way: bool = True,
    alpha: float = 0.05,
    es_interval: Literal["tukey", "noncentral"] = "tukey",
    system: str = "run",
) -> pd.DataFrame:
    """Two-way ANOVA without replication (system x topic), or one-way, per measure and variant.

    Each (measure, variant) group of the tidy ``result`` (every run on every topic, see
    :func:`pdeval.analysis.statistics.scores.score_matrices`) is one analysis; see the module docstring
    for the formulas (two-way: ``SS_T = SS_A + SS_B + SS_E``, ``V_E = SS_E / ((m-1)(n-1))``,
    ``F = V_A / V_E``). The table equals ``statsmodels``' ``anova_lm(ols("value ~ C(run) +
    C(query_id)"))`` (type I; the design is balanced, so types I-III agree). Sakai's ES_E2
    effect sizes with ``1 - alpha`` intervals come for every run pair: Tukey's simultaneous
    ones (``es_interval="tukey"``) or each pair's exact noncentral-t interval with ``sigma``
    estimated (``"noncentral"``); see the module docstring (Sakai 2018, *Laboratory
    Experiments in Information Retrieval*, ch. 5).

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values, every run on every topic.
    measures : str or list of str, optional
        The measure(s) whose ANOVA is computed (default: all of ``result``).
    two_way : bool, default True
        Two-way ANOVA without replication (system x topic) or one-way (system).
    alpha : float, default 0.05
        One minus the level of the effect-size intervals.
    es_interval : {'tukey', 'noncentral'}, default 'tukey'
        Simultaneous (Tukey) or per-pair (noncentral t) intervals of ES_E2.
    system : str, default 'run'
        The column naming the systems.

    Returns
    -------
    DataFrame
        The ANOVA table, one row per (measure, variant, source): ``source`` (``system``,
        ``topic``, ``residual``), ``df``, ``sum_sq``, ``mean_sq``, ``F``, ``p_value``. Its
        attributes ``.summary`` (per (measure, variant): ``n_runs``, ``n_topics``,
        ``residual_variance`` V_E, ``df_residual``, ``two_way``) and ``.effect_sizes`` (per
        run pair: ``run_a``, ``run_b``, ``diff``, ``es_e2``, ``ci_low``, ``ci_high``,
        ``es_interval``) are frames too (see :class:`Anova`).

    Raises
    ------
    PdevalError
        An option outside its domain, or no group to analyse.
    SchemaError
        A missing measure, or a run without a value on some topic.

    See Also
    --------
    tukey_hsd : Which pairs of runs differ, with the same residual variance.
    topic_set_size : Topics needed for a given power, from the residual variance.

    Examples
    --------
    >>> result = pd.DataFrame({"run": np.repeat(["a", "b", "c"], 4), "query_id": list("1234") * 3,
    ...                        "measure": "AP", "value": [.2, .4, .3, .5, .3, .6, .3, .6, .5, .7, .6, .9]})
    >>> table = pdeval.anova(result)
    >>> table[["source", "df", "F"]].round(2)
         source  df      F
    0    system   2  36.27
    1     topic   3  22.82
    2  residual   6    NaN
    >>> table.summary[["n_runs", "n_topics", "residual_variance"]].round(4)
       n_runs  n_topics  residual_variance
    0       3         4             0.0031
    """
    tables, summaries, effects = [], [], []
    for group in score_matrices(result, measures, system=system):
        fit = fit_anova(group.scores, two_way=two_way)
        keys = {"measure": group.measure, **group.variant}
        table = _table(fit)
        tables.append(table.assign(**keys)[[*keys, *table.columns]])
        summaries.append(
            {
                **keys,
                "n_runs": fit.m,
                "n_topics": fit.n,
                "residual_variance": fit.residual_variance,
                "df_residual": fit.df_residual,
                "two_way": two_way,
            }
        )
        es = effect_sizes(fit, group.runs, alpha=alpha, es_interval=es_interval)
        effects.append(es.assign(**keys)[[*keys, *es.columns]])
    if not tables:
        raise PdevalError("the result frame holds no (measure, variant) group to analyse")
    return ResultFrame.of(Anova(
        pd.concat(tables, ignore_index=True), pd.DataFrame(summaries), pd.concat(effects, ignore_index=True)
    ))
