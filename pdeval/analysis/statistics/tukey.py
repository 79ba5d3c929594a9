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

With ``baseline`` the family is only the comparisons with the baselines, and both tests
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
from pdeval.common.contract import Boolean, Choice, Integer, Real, Text, contract
from pdeval.common.options import check_int
from pdeval.common.progress import PROGRESS, one_bar, progress_bar
from pdeval.common.docs import shared_docs
from pdeval.common.seeds import SEED, Seed, generator
from pdeval.analysis.statistics.scores import BASELINE, CHUNK_ELEMENTS, RESULT_MEASURES, ZERO, baseline_pairs, score_matrices
from pdeval.frames.domains import Frame
from pdeval.analysis.statistics.anova import fit_anova
from pdeval.analysis.statistics.dunnett import Dunnett
from pdeval.analysis.statistics.studentized_range import studentized_range_sf

__all__ = ["tukey_hsd", "randomised_ranges"]


def randomised_ranges(
    scores: np.ndarray,
    n_resamples: int,
    *,
    seed: Seed = 0,
    baselines: Optional[np.ndarray] = None,
    progress: Optional[bool] = None,
) -> np.ndarray:
    """The ``n_resamples`` (B) null statistics ``R_b`` of the randomised Tukey HSD test (module docstring).

    ``scores``: runs x topics; ``baselines``: row indices of the baselines (``None``: all
    pairs, ``R_b`` = range of the permuted means). Chunked over resamples.
    """
    x = np.asarray(scores, dtype=np.float64)
    m, n = x.shape
    B = check_int("n_resamples", n_resamples, 1)
    rng = generator(seed)
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


@contract(
    result=Frame("result"),
    measures=RESULT_MEASURES,
    method=Choice("randomised", "parametric"),
    n_resamples=Integer(1),
    seed=SEED,
    alpha=Real(0, 1, closed="neither"),
    baseline=BASELINE,
    two_way=Boolean(),
    progress=PROGRESS,
    system=Text("a column name"),
    modes={"n_resamples": ("method", ("randomised",)), "seed": ("method", ("randomised",))},
    renamed={"baselines": "baseline"},
)
@shared_docs
@one_bar
def tukey_hsd(
    result: pd.DataFrame,
    *,
    measures: Union[None, str, Sequence[str]] = None,
    method: Literal["randomised", "parametric"] = "randomised",
    n_resamples: int = 5000,
    seed: Seed = 0,
    alpha: float = 0.05,
    baseline: Union[None, str, Sequence[str]] = None,
    two_way: bool = True,
    progress: Optional[bool] = None,
    system: str = "run",
) -> pd.DataFrame:
    """Tukey's HSD between all run pairs (or ``baseline`` against the rest), topics paired.

    See the module docstring for both methods (Tukey 1953; Carterette, TOIS 2012, "Multiple
    testing in statistical analysis of systems-based information retrieval experiments";
    Sakai 2018, *Laboratory Experiments in Information Retrieval*, sec. 4.4-4.5; Dunnett
    1955 with ``baseline``). Each (measure, variant) group of ``result`` is one family.
    Parametric: ``q_ij = |xi. - xj.| / sqrt(V_E / n)``, ``p_ij = P(Q(m, phi_E) >= q_ij)``;
    randomised: ``p_ij = #{b : R_b >= |xi. - xj.|} / B`` with ``R_b`` the range of the
    system means after permuting every topic's scores across systems.

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values, every run on every topic.
    measures : str or list of str, optional
        The measure(s) whose runs are compared (default: all of ``result``).
    method : {'randomised', 'parametric'}, default 'randomised'
        Permutations within topics, or the studentised range distribution with the ANOVA
        residual variance.
    n_resamples : int, default 5000
        B, the permutations of the randomised test (``method='randomised'`` only).
    {seed}
    alpha : float, default 0.05
        The family-wise error rate; the intervals are simultaneous at ``1 - alpha``.
    baseline : str or list of str, optional
        A run or several: the family is their comparisons with every other run.
    two_way : bool, default True
        The ANOVA residual ``V_E`` of ``q``, ``es_e2`` and the parametric test: two-way
        without replication (Sakai's recommendation) or one-way; the randomised test always
        keeps topics paired.
    {progress}
    {system}

    Returns
    -------
    DataFrame
        One row per pair: ``measure``, variant keys, ``run_a``, ``run_b`` (or ``run``,
        ``baseline``), ``n_topics``, ``mean_a``, ``mean_b``, ``diff`` (mean_a - mean_b),
        ``q`` (``|diff| / sqrt(V_E/n)``), ``es_e2`` (``diff / sqrt(V_E)``, Sakai's effect
        size), ``p_value``, ``hsd`` (the threshold of ``|diff|``), ``ci_low``, ``ci_high``
        (``diff -+ hsd``, simultaneous at ``1 - alpha``), ``significant``
        (``p_value < alpha``), ``method``, ``n_resamples`` (0 for the parametric test).

    Raises
    ------
    PdevalError
        An option outside its domain (the old ``baselines=`` names ``baseline``), or no
        group to analyse.
    SchemaError
        A missing measure or baseline, or a run without a value on some topic.

    See Also
    --------
    compare : Paired tests of run pairs with a multiple-comparison correction.
    anova : The ANOVA whose residual variance the parametric test uses.
    topic_set_size : How many topics a test of a given power needs.

    Examples
    --------
    >>> result = pd.DataFrame({"run": np.repeat(["a", "b", "c"], 5),
    ...                        "query_id": list("12345") * 3, "measure": "AP",
    ...                        "value": [.2, .3, .4, .5, .6, .25, .45, .45, .65, .7, .6, .75, .8, .85, 1.]})
    >>> tukey = pdeval.tukey_hsd(result, method="parametric")
    >>> tukey[["run_a", "run_b", "diff", "significant"]].round(2)
      run_a run_b  diff  significant
    0     a     b  -0.1         True
    1     a     c  -0.4         True
    2     b     c  -0.3         True
    """
    from scipy.stats import studentized_range

    B = n_resamples
    frames = []
    for group in score_matrices(result, measures, system=system):
        runs, scores = group.runs, group.scores
        where = f"measure {group.measure!r} {group.variant}"
        fit = fit_anova(scores, two_way=two_way)
        m, n = scores.shape
        if baseline is None:
            ii, jj = np.triu_indices(m, k=1)
            pair_columns = {"run_a": [runs[i] for i in ii], "run_b": [runs[j] for j in jj]}
            family = None
        else:
            ii, jj = baseline_pairs(runs, baseline, where)
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
        frame["n_resamples"] = B if method == "randomised" else 0
        frames.append(frame)
    if not frames:
        raise PdevalError("the result frame holds no (measure, variant) group to analyse")
    return pd.concat(frames, ignore_index=True)
