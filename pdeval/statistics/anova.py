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
``ES_E2(i, j) = (xi. - xj.) / sqrt(V_E)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Union

import numpy as np
import pandas as pd

from ..errors import PdevalError
from ..significance import score_matrices

__all__ = ["AnovaFit", "fit_anova", "effect_sizes", "anova", "Anova"]


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


def effect_sizes(fit: AnovaFit, runs: Sequence, *, alpha: float = 0.05) -> pd.DataFrame:
    """ES_E2 for every unordered pair (input order) with a simultaneous CI.

    ``ES_E2 = (xi. - xj.) / sqrt(V_E)``. The interval is Tukey's simultaneous
    ``1 - alpha`` interval of the mean difference, ``diff +- q(alpha; m, phi_E) sqrt(V_E/n)``
    (Sakai 2018, sec. 4.4), divided by ``sqrt(V_E)``, i.e. ``ES_E2 +- q / sqrt(n)``: it
    treats ``V_E`` as known (the usual large-sample reading), so for few topics it is
    slightly too narrow.
    """
    from scipy.stats import studentized_range

    ii, jj = np.triu_indices(fit.m, k=1)
    diff = fit.means[ii] - fit.means[jj]
    scale = math.sqrt(fit.residual_variance)
    half = studentized_range.ppf(1.0 - alpha, fit.m, fit.df_residual) / math.sqrt(fit.n)
    with np.errstate(divide="ignore", invalid="ignore"):
        es = diff / scale
    return pd.DataFrame(
        {
            "run_a": [runs[i] for i in ii],
            "run_b": [runs[j] for j in jj],
            "diff": diff,
            "es_e2": es,
            "ci_low": es - half,
            "ci_high": es + half,
        }
    )


@dataclass
class Anova:
    """Result of :func:`anova`.

    ``table``: one row per (measure, variant, source) with ``source`` (``system``,
    ``topic``, ``residual``), ``df``, ``sum_sq``, ``mean_sq``, ``F``, ``p_value`` (the
    columns of ``statsmodels.stats.anova.anova_lm``). ``summary``: one row per (measure,
    variant) with ``n_runs``, ``n_topics``, ``residual_variance`` (V_E), ``df_residual``,
    ``two_way``. ``effect_sizes``: one row per (measure, variant, run pair) with ``run_a``,
    ``run_b``, ``diff``, ``es_e2``, ``ci_low``, ``ci_high`` (see :func:`effect_sizes`).
    """

    table: pd.DataFrame
    summary: pd.DataFrame
    effect_sizes: pd.DataFrame

    def to_dict(self) -> dict:
        return {"table": self.table, "summary": self.summary, "effect_sizes": self.effect_sizes}


def anova(
    result: pd.DataFrame,
    measure: Union[None, str, Sequence[str]] = None,
    *,
    two_way: bool = True,
    alpha: float = 0.05,
    system: str = "run",
) -> Anova:
    """Two-way ANOVA without replication (system x topic), or one-way, per measure and variant.

    Each (measure, variant) group of the tidy ``result`` (every run on every topic, see
    :func:`pdeval.significance.score_matrices`) is one analysis; see the module docstring
    for the formulas. The table equals ``statsmodels``' ``anova_lm(ols("value ~ C(run) +
    C(query_id)"))`` (type I; the design is balanced, so types I-III agree). Sakai's ES_E2
    effect sizes with ``1 - alpha`` simultaneous intervals come for every run pair.
    Returns an :class:`Anova`.
    """
    if not 0 < alpha < 1:
        raise PdevalError(f"alpha must lie in (0, 1), got {alpha!r}")
    tables, summaries, effects = [], [], []
    for group in score_matrices(result, measure, system=system):
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
        es = effect_sizes(fit, group.runs, alpha=alpha)
        effects.append(es.assign(**keys)[[*keys, *es.columns]])
    if not tables:
        raise PdevalError("the result frame holds no (measure, variant) group to analyse")
    return Anova(
        pd.concat(tables, ignore_index=True), pd.DataFrame(summaries), pd.concat(effects, ignore_index=True)
    )
