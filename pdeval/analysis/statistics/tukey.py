"""Tukey's HSD test with topics kept paired: parametric and randomised.

Both compare the system means of a runs x topics matrix (m systems, n topics) with the
family-wise error rate of all comparisons held at ``alpha``.

*Parametric* (Tukey 1953, with the two-way ANOVA residual of Sakai 2018, *Laboratory
Experiments in Information Retrieval*, sec. 4.4): with ``V_E`` and ``phi_E`` of the two-way
ANOVA without replication (:mod:`pdeval.analysis.statistics.anova`; one-way with ``two_way=False``),

* ``q_ij = |xi. - xj.| / sqrt(V_E / n)``, ``p_ij = P(Q(m, phi_E) >= q_ij)`` for the
  studentised range distribution Q (:func:`~pdeval.analysis.statistics.studentized_range.studentized_range_sf`,
  vectorised over pairs, equal to ``scipy.stats.studentized_range.sf`` to 1e-9);
* ``HSD = q(alpha; m, phi_E) sqrt(V_E / n)``; the simultaneous interval is ``diff +- HSD``.

*Randomised* (Carterette 2012, TOIS 30(1), "Multiple testing in statistical analysis of
systems-based information retrieval experiments"; Sakai 2018, sec. 4.5): under the null
hypothesis that all systems are equivalent, the m scores of a topic are exchangeable. For
``b = 1..B`` the scores of every topic are permuted across systems independently (a
permutation of each column of the matrix), the system means are recomputed and
``R_b = max_i x*i. - min_i x*i.`` is recorded. Then

* ``p_ij = #{b : R_b >= |xi. - xj.|} / B`` (Carterette's and Sakai's estimator);
* ``HSD`` = the ``k``-th largest ``R_b`` with ``k = ceil(alpha B)``, so that
  ``|diff| > HSD`` exactly when ``p < alpha``; the interval is ``diff +- HSD``.

The null distribution is estimated from the observed scores, real system differences
included, so with many clearly different systems the randomised test is more conservative
than the parametric one; under the null hypothesis with normal errors the two agree.

With ``baselines`` the family is only the comparisons with the baselines, and both tests
take the largest difference of that family instead of the range of all m means, which
keeps the family-wise error at ``alpha`` and is less conservative: the randomised test
records ``R_b = max_{s in baselines} max_i |x*i. - x*s.|``; the parametric test is
Dunnett's (1955) many-to-one test, for one baseline or several, with the same ``V_E``:
``p_ij = P(max_family q > q_ij)`` and ``HSD = q_D(alpha) sqrt(V_E / n)`` from the
distribution of the family's largest studentised difference
(:class:`~pdeval.analysis.statistics.dunnett.Dunnett`). With every run a baseline it is Tukey's HSD.

Permutations are drawn as ``argsort(rng.random((chunk, n, m)), axis=2)`` chunk by chunk
(:data:`CHUNK_ELEMENTS` values per chunk), vectorised over resamples and topics; the same
seed gives the same p-values.
"""

from __future__ import annotations

import math
from typing import Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError
from pdeval.common.options import check_choice, check_int
from pdeval.common.progress import progress_bar
from pdeval.analysis.significance import CHUNK_ELEMENTS, ZERO, Seed, _rng, baseline_pairs, score_matrices
from pdeval.analysis.statistics.anova import fit_anova
from pdeval.analysis.statistics.dunnett import Dunnett
from pdeval.analysis.statistics.studentized_range import studentized_range_sf

__all__ = ["tukey_hsd", "randomised_ranges"]


def randomised_ranges(
    scores: np.ndarray,
    B: int,
    *,
    seed: Seed = 0,
    baselines: Optional[np.ndarray] = None,
    progress: bool = False,
) -> np.ndarray:
    """The ``B`` null statistics ``R_b`` of the randomised Tukey HSD test (module docstring).

    ``scores``: runs x topics; ``baselines``: row indices of the baselines (``None``: all
    pairs, ``R_b`` = range of the permuted means). Chunked over resamples.
    """
    x = np.asarray(scores, dtype=np.float64)
    m, n = x.shape
    rng = _rng(seed)
    columns = np.ascontiguousarray(x.T)[None]  # 1 x n x m: the scores of each topic
    chunk = max(1, CHUNK_ELEMENTS // (m * n))
    out = np.empty(B)
    starts = range(0, B, chunk)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="randomised Tukey HSD"):
        size = min(chunk, B - start)
        perm = np.argsort(rng.random((size, n, m)), axis=2)
        means = np.take_along_axis(np.broadcast_to(columns, (size, n, m)), perm, axis=2).mean(axis=1)
        high, low = means.max(axis=1), means.min(axis=1)
        if baselines is None:
            out[start : start + size] = high - low
        else:
            base = means[:, baselines]
            out[start : start + size] = np.maximum(high[:, None] - base, base - low[:, None]).max(axis=1)
    return out


def tukey_hsd(
    result: pd.DataFrame,
    measure: Union[None, str, Sequence[str]] = None,
    *,
    method: Literal["randomised", "parametric"] = "randomised",
    B: int = 5000,
    seed: Seed = 0,
    alpha: float = 0.05,
    baselines: Union[None, str, Sequence[str]] = None,
    two_way: bool = True,
    progress: bool = True,
    system: str = "run",
) -> pd.DataFrame:
    """Tukey's HSD between all run pairs (or ``baselines`` against the rest), topics paired.

    See the module docstring for both methods. Each (measure, variant) group of ``result``
    is one family. ``two_way`` chooses the ANOVA residual of the parametric test (two-way
    without replication, Sakai's recommendation, or one-way); the randomised test always
    keeps topics paired (it permutes within topics).

    Returns one row per pair: ``measure``, variant keys, ``run_a``, ``run_b`` (or ``run``,
    ``baseline``), ``n_topics``, ``mean_a``, ``mean_b``, ``diff`` (mean_a - mean_b),
    ``q`` (``|diff| / sqrt(V_E/n)``), ``es_e2`` (``diff / sqrt(V_E)``, Sakai's effect size),
    ``p_value``, ``hsd`` (the threshold of ``|diff|``), ``ci_low``, ``ci_high``
    (``diff -+ hsd``, simultaneous at ``1 - alpha``), ``significant`` (``p_value < alpha``),
    ``method``, ``B`` (0 for the parametric test).
    """
    from scipy.stats import studentized_range

    check_choice("method", method, ("randomised", "parametric"))
    if not 0 < alpha < 1:
        raise PdevalError(f"alpha must lie in (0, 1), got {alpha!r}")
    B = check_int("B", B, 1)  # a fraction would be truncated, a string raise a bare ValueError
    frames = []
    for group in score_matrices(result, measure, system=system):
        runs, scores = group.runs, group.scores
        where = f"measure {group.measure!r} {group.variant}"
        fit = fit_anova(scores, two_way=two_way)
        m, n = scores.shape
        if baselines is None:
            ii, jj = np.triu_indices(m, k=1)
            pair_columns = {"run_a": [runs[i] for i in ii], "run_b": [runs[j] for j in jj]}
            family = None
        else:
            ii, jj = baseline_pairs(runs, baselines, where)
            pair_columns = {"run": [runs[i] for i in ii], "baseline": [runs[j] for j in jj]}
            family = np.unique(jj)
        means = fit.means
        diff = means[ii] - means[jj]
        scale = math.sqrt(fit.residual_variance / n)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.abs(diff) / scale
        if method == "parametric" and family is None:
            p_value = studentized_range_sf(q, m, fit.df_residual)
            hsd = float(studentized_range.ppf(1.0 - alpha, m, fit.df_residual)) * scale
        elif method == "parametric":
            many_to_one = Dunnett(m, int(family.size), fit.df_residual)
            p_value = many_to_one.sf(q)
            hsd = many_to_one.isf(alpha) * scale
        else:
            ranges = np.sort(randomised_ranges(scores, B, seed=seed, baselines=family, progress=progress))
            below = np.searchsorted(ranges, np.abs(diff) - ZERO, side="left")
            p_value = (B - below) / B
            k = min(B, max(1, math.ceil(alpha * B - 1e-9)))
            hsd = float(ranges[B - k])
        frame = pd.DataFrame(
            {
                "measure": group.measure,
                **{key: [value] * ii.size for key, value in group.variant.items()},
                **pair_columns,
                "n_topics": n,
                "mean_a": means[ii],
                "mean_b": means[jj],
                "diff": diff,
                "q": q,
                "es_e2": diff / math.sqrt(fit.residual_variance) if fit.residual_variance > 0 else np.nan,
                "p_value": p_value,
                "hsd": hsd,
                "ci_low": diff - hsd,
                "ci_high": diff + hsd,
            }
        )
        frame["significant"] = frame["p_value"].to_numpy() < alpha
        frame["method"] = method
        frame["B"] = B if method == "randomised" else 0
        frames.append(frame)
    if not frames:
        raise PdevalError("the result frame holds no (measure, variant) group to analyse")
    return pd.concat(frames, ignore_index=True)
