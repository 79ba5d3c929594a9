"""Topic set size design (Sakai 2016, "Topic set size design", Information Retrieval
Journal 19(3): 256-283; Sakai 2018, *Laboratory Experiments in Information Retrieval*, ch. 6).

How many topics does a test collection need so that an experiment meets a statistical
requirement? Three designs, each the smallest ``n >= 2`` that meets it:

``design="t"`` (paired t-test, two-sided, level ``alpha``)
    power ``1 - beta`` for a true mean difference ``min_delta``. With the standard deviation
    ``sigma_d`` of the per-topic differences, ``lambda = sqrt(n) min_delta / sigma_d`` and
    ``t_c = t_{alpha/2}(n - 1)``: ``power(n) = P(T' >= t_c) + P(T' <= -t_c)``, T' the
    noncentral t with ``n - 1`` degrees of freedom and noncentrality ``lambda``.
``design="anova"`` (one-way ANOVA over ``n_systems`` = m systems)
    power ``1 - beta`` when the best and worst of the m systems differ by ``min_delta``
    (the least favourable configuration: the other means halfway between, so
    ``sum_i (mu_i - mu)^2 = min_delta^2 / 2``): ``lambda = n min_delta^2 / (2 sigma^2)``,
    ``power(n) = P(F'(m - 1, m(n - 1); lambda) >= F_alpha(m - 1, m(n - 1)))``.
``design="ci"`` (confidence interval of a paired mean difference)
    the expected width of the ``1 - alpha`` interval is at most ``ci_width``:
    ``2 t_{alpha/2}(n - 1) E[s_d] / sqrt(n) <= ci_width`` with
    ``E[s_d] = sigma_d sqrt(2 / (n - 1)) Gamma(n / 2) / Gamma((n - 1) / 2)``.

The variance: ``sigma^2`` is the within-system variance of a single score, estimated from
existing runs (:func:`pdeval.anova`) by the residual variance ``V_E`` of a two-way ANOVA
without replication (``two_way=True``, the default: the score's variance around its system
and topic effects; Sakai, EVIA 2014, "Topic set size design with variance estimates from
two-way ANOVA") or of a one-way ANOVA (``two_way=False``: the pooled within-system variance
``sum_ij (x[i,j] - xi.)^2 / (m (n - 1))``: each system's scores around its own mean, the
topic effects left in). The
two-way estimate is the smaller one wherever topics differ in difficulty. The paired designs
use ``sigma_d^2 = 2 sigma^2`` (the variance of a difference of two such scores).

``method="exact"`` (the default) computes the powers with SciPy's noncentral t and F
distributions. ``method="sakai2016"`` uses instead the normal approximations of Nagata
(2003, *How to design the sample size*, in Japanese) with which Sakai (2016) designs topic
sets and which his Excel tools (now ``samplesizeTTEST2``, ``samplesizeANOVA2``) compute:

``design="t"``
    with ``phi = n - 1``, ``w = t_{alpha/2}(phi)``, ``lambda = sqrt(n) min_delta / sigma_d``
    and ``s = sqrt(1 + w^2 / (2 phi))``: ``power(n) = Phi((-w (1 - 1/(4 phi)) - lambda) / s)
    + 1 - Phi((w (1 - 1/(4 phi)) - lambda) / s)`` (``sqrt(chi^2_phi / phi)`` taken as normal
    with mean ``1 - 1/(4 phi)`` and variance ``1/(2 phi)``).
``design="anova"``
    with ``phi_A = m - 1``, ``phi_E = m (n - 1)``, ``w = F_alpha(phi_A, phi_E)``,
    ``lambda = n min_delta^2 / (2 sigma^2)``, ``c_A = (phi_A + 2 lambda) / (phi_A + lambda)``
    and ``phi_A* = (phi_A + lambda)^2 / (phi_A + 2 lambda)``: ``power(n) = 1 - Phi(u)``,
    ``u = (sqrt(w / phi_E) sqrt(2 phi_E - 1) - sqrt(c_A / phi_A) sqrt(2 phi_A* - 1))
    / sqrt(c_A / phi_A - w / phi_E)`` (NaN, i.e. not enough, where the root is of a negative
    number). The minus sign in the denominator is the tool's: a difference of two independent
    normal approximations would have a plus, but only the minus reproduces the topic-set
    sizes Sakai published with the tool (EVIA 2014 table for TREC adhoc/news, m = 10; see the
    tests), and a public reproduction of ``samplesizeANOVA2`` has it too.
``design="ci"``
    the same in both methods (the expected width above, with the Gamma functions). Nagata's
    shortcut ``E[s_d] ~ sigma_d (1 - 1/(4 phi))``, the default of a public reproduction of
    ``samplesizeCI2``, changes ``n`` by one topic in about 1 % of requirements (measured on
    a grid of variances and widths). Which of the two the tool uses is not stated in any
    source found; Sakai (EVIA 2017, "Evaluating evaluation measures with worst-case
    confidence interval widths", abstract) calls his CI-based tool one "that cannot handle
    large topic set sizes", which fits Gamma functions (a spreadsheet's ``GAMMA`` overflows
    beyond 171.6, i.e. ``n > 343``) and not the shortcut.

Both methods return the smallest ``n >= 2`` that meets the requirement. Sakai's tools start
from Nagata's closed-form first guess (``n' = ((z_{alpha/2} + z_beta) / Delta)^2 + z_{alpha/2}^2
/ 2`` for the t-test, ``n' = lambda / Delta`` from a linear approximation of ``lambda`` for
ANOVA, ``n' = 4 z_{alpha/2}^2 sigma_d^2 / delta^2`` for the interval) and step ``n`` until the
requirement holds; where that guess is already above the smallest ``n``, a tool that only
counts upwards would report the guess instead. The two methods agree to within two topics or
3 % of ``n``, whichever is more (the t-test to a topic; the ANOVA approximation asks for up
to 3 % fewer topics with two or three systems and many topics).
"""

from __future__ import annotations

import math
from typing import Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError
from pdeval.common.contract import Boolean, Choice, Integer, ListOf, Nullable, Real, Text, contract
from pdeval.analysis.statistics.scores import RESULT_MEASURES, score_matrices
from pdeval.frames.domains import Frame
from pdeval.analysis.statistics.anova import fit_anova

__all__ = ["topic_set_size", "required_topics"]

Design = Literal["t", "anova", "ci"]
Method = Literal["exact", "sakai2016"]


def _criterion(
    design: str, n: np.ndarray, variance: float, alpha: float, target: float, m: int, method: str = "exact"
) -> np.ndarray:
    """Power (t, anova) or expected CI width (ci) for every candidate topic count ``n``."""
    from scipy import special, stats

    if design == "t":
        sd = math.sqrt(2.0 * variance)
        df = n - 1.0
        tc = stats.t.isf(alpha / 2.0, df)
        nc = np.sqrt(n) * target / sd
        if method == "sakai2016":
            mean = tc * (1.0 - 1.0 / (4.0 * df))
            scale = np.sqrt(1.0 + tc**2 / (2.0 * df))
            return stats.norm.cdf((-mean - nc) / scale) + stats.norm.sf((mean - nc) / scale)
        return stats.nct.sf(tc, df, nc) + stats.nct.cdf(-tc, df, nc)
    if design == "anova":
        df1, df2 = m - 1.0, m * (n - 1.0)
        crit = stats.f.isf(alpha, df1, df2)
        nc = n * target**2 / (2.0 * variance)
        if method == "sakai2016":
            c_a = (df1 + 2.0 * nc) / (df1 + nc)
            df1_star = (df1 + nc) ** 2 / (df1 + 2.0 * nc)
            gap = np.sqrt(crit / df2) * np.sqrt(2.0 * df2 - 1.0) - np.sqrt(c_a / df1) * np.sqrt(2.0 * df1_star - 1.0)
            spread = c_a / df1 - crit / df2  # the tool's minus sign (module docstring)
            with np.errstate(invalid="ignore"):
                return stats.norm.sf(gap / np.sqrt(np.where(spread > 0, spread, np.nan)))
        return stats.ncf.sf(crit, df1, df2, nc)
    sd = math.sqrt(2.0 * variance)
    c4 = np.sqrt(2.0 / (n - 1.0)) * np.exp(special.gammaln(n / 2.0) - special.gammaln((n - 1.0) / 2.0))
    return 2.0 * stats.t.isf(alpha / 2.0, n - 1.0) * sd * c4 / np.sqrt(n)


def required_topics(
    variance: float,
    *,
    design: Design = "t",
    alpha: float = 0.05,
    beta: float = 0.20,
    min_delta: Optional[float] = None,
    ci_width: Optional[float] = None,
    n_systems: Optional[int] = None,
    method: Method = "exact",
    max_topics: int = 1_000_000,
) -> tuple[int, float]:
    """``(n, achieved)``: the smallest topic count of a design (module docstring) and its
    power (``t``, ``anova``) or expected interval width (``ci``), computed exactly
    (``method="exact"``) or with Sakai's normal approximations (``method="sakai2016"``).

    Candidates are evaluated as one vectorised array, in windows that double in size up
    to ``max_topics`` (a :class:`~pdeval.errors.PdevalError` if none suffices).
    """
    if not (variance > 0 and math.isfinite(variance)):
        raise PdevalError(f"the variance must be a positive number, got {variance!r}: the scores do not vary "
                          "(a result frame whose runs score alike on every topic needs no topics to tell apart)")
    if design == "ci":
        if ci_width is None or not ci_width > 0:
            raise PdevalError("design='ci' needs ci_width > 0 (the largest acceptable interval width)")
        target, m = float(ci_width), 0
    else:
        if min_delta is None or not min_delta > 0:
            raise PdevalError(f"design={design!r} needs min_delta > 0 (the smallest difference to detect)")
        target = float(min_delta)
        m = 2 if design == "t" else int(n_systems or 0)
        if m < 2:
            raise PdevalError("design='anova' needs n_systems >= 2 (the number of systems compared)")
    low, high = 2, 64
    while low <= max_topics:
        n = np.arange(low, min(high, max_topics) + 1, dtype=np.float64)
        value = _criterion(design, n, variance, alpha, target, m, method)
        ok = value <= target if design == "ci" else value >= 1.0 - beta
        if ok.any():
            first = int(np.argmax(ok))
            return int(n[first]), float(value[first])
        low, high = high + 1, high * 4
    raise PdevalError(f"more than max_topics={max_topics} topics would be needed; relax the requirement")


@contract(
    result=Real(0, closed="neither") | Frame("result"),
    measures=RESULT_MEASURES,
    design=Choice("t", "anova", "ci"),
    alpha=Real(0, 1, closed="neither"),
    beta=Real(0, 1, closed="neither"),
    min_delta=Nullable(ListOf(Real(0, closed="neither"))),
    ci_width=Nullable(ListOf(Real(0, closed="neither"))),
    n_systems=Nullable(Integer(2)),
    method=Choice("exact", "sakai2016"),
    two_way=Boolean(),
    system=Text("a column name"),
    modes={
        "beta": ("design", ("t", "anova")),
        "min_delta": ("design", ("t", "anova")),
        "ci_width": ("design", ("ci",)),
        "n_systems": ("design", ("anova",)),
    },
    remedies={"result": "the variance of single scores, or a result frame to estimate it from"},
)
def topic_set_size(
    result: Union[float, pd.DataFrame],
    *,
    measures: Union[None, str, Sequence[str]] = None,
    design: Design = "t",
    alpha: float = 0.05,
    beta: float = 0.20,
    min_delta: Union[None, float, Sequence[float]] = None,
    ci_width: Union[None, float, Sequence[float]] = None,
    n_systems: Optional[int] = None,
    method: Method = "exact",
    two_way: bool = True,
    system: str = "run",
) -> pd.DataFrame:
    """Topics needed for a paired t-test, a one-way ANOVA or a CI width (Sakai 2016).

    ``result`` is the variance ``sigma^2`` of single scores, or a result frame: then
    ``sigma^2`` is the residual variance ``V_E`` of each (measure, variant) group's two-way
    ANOVA without replication (``two_way=True``) or one-way ANOVA (``two_way=False``, the
    pooled within-system variance; module docstring), and ``n_systems`` (``design="anova"``)
    defaults to its number of runs. ``min_delta`` (``t``, ``anova``) or ``ci_width`` (``ci``) may be a list:
    one row each. ``method="exact"`` computes powers with the noncentral t and F
    distributions (t: power ``= P(|t'(n-1, sqrt(n) delta / sqrt(2 sigma^2))| > t_{alpha/2})``),
    ``method="sakai2016"`` with the normal approximations of Sakai's Excel tools (Sakai 2016,
    "Topic set size design", Information Retrieval Journal 19(3)). Formulas: module docstring.

    Parameters
    ----------
    result : float or DataFrame
        A result frame with per-topic values (every run on every topic), or the variance
        ``sigma^2`` of single scores as a positive number.
    measures : str or list of str, optional
        The measure(s) of a result frame (default: all).
    design : {'t', 'anova', 'ci'}, default 't'
        A paired t-test, a one-way ANOVA, or a confidence interval's width (module docstring).
    alpha : float, default 0.05
        The significance level.
    beta : float, default 0.2
        One minus the power (``'t'`` and ``'anova'`` only).
    min_delta : float or list of float, optional
        The mean difference to detect (``'t'``, ``'anova'``; required there).
    ci_width : float or list of float, optional
        The largest expected interval width (``'ci'``; required there).
    n_systems : int, optional
        The number of systems of ``'anova'`` (default: the runs of ``result``).
    method : {'exact', 'sakai2016'}, default 'exact'
        Noncentral t and F, or Nagata's approximations as Sakai's tools.
    two_way : bool, default True
        The ANOVA whose residual variance estimates ``sigma^2`` (a result frame only).
    system : str, default 'run'
        The column naming the systems.

    Returns
    -------
    DataFrame
        Columns (``measure``, variant keys when ``result`` is a frame), ``variance``,
        ``design``, ``method``, ``alpha``, ``beta`` (NaN for ``ci``), ``min_delta`` or
        ``ci_width``, ``n_systems`` (``anova``), ``n_topics``, and ``power`` or
        ``expected_width`` at ``n_topics``.

    Raises
    ------
    PdevalError
        An option outside its domain, a design without its target, or a requirement no
        topic set size meets.

    See Also
    --------
    anova : The residual variance of a result frame.
    discriminative_power : How many run pairs a measure tells apart on the topics at hand.

    Examples
    --------
    >>> pdeval.topic_set_size(0.05, min_delta=[0.05, 0.1])[["min_delta", "n_topics", "power"]].round(3)
       min_delta  n_topics  power
    0       0.05       316  0.800
    1       0.10        81  0.803
    """
    targets = ci_width if design == "ci" else min_delta
    targets = [None] if targets is None else targets
    name = "ci_width" if design == "ci" else "min_delta"
    if isinstance(result, pd.DataFrame):
        groups = [
            (
                {"measure": g.measure, **g.variant},
                fit_anova(g.scores, two_way=two_way).residual_variance,
                g.scores.shape[0],
            )
            for g in score_matrices(result, measures, system=system)
        ]
    else:
        groups = [({}, float(result), None)]
    rows = []
    for keys, variance, runs in groups:
        m = n_systems if n_systems is not None else runs
        for target in targets:
            options = {"ci_width": target} if design == "ci" else {"min_delta": target}
            n, achieved = required_topics(
                variance, design=design, alpha=alpha, beta=beta, n_systems=m, method=method, **options
            )
            row = {**keys, "variance": variance, "design": design, "method": method, "alpha": alpha}
            row["beta"] = float("nan") if design == "ci" else beta
            row[name] = target
            if design == "anova":
                row["n_systems"] = m
            row["n_topics"] = n
            row["expected_width" if design == "ci" else "power"] = achieved
            rows.append(row)
    return pd.DataFrame(rows)
