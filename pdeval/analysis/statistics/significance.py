"""Paired significance tests between runs, with multiple-comparison corrections.

:func:`compare` runs a paired test (t, Wilcoxon, sign, permutation, bootstrap) between runs
of a tidy result frame, per measure and variant, and corrects the p-values of each family
(:func:`adjust_pvalues`). The bootstrap and swap studies of measures are in
:mod:`pdeval.analysis.statistics.bootstrap` and :mod:`pdeval.analysis.statistics.swaps`; score matrices in
:mod:`pdeval.analysis.statistics.scores`.
"""

from __future__ import annotations

import math
import warnings
from typing import Literal, Optional, Sequence, Union

import numpy as np
import pandas as pd

from pdeval.analysis.statistics.bootstrap import bootstrap_replicates, chunk_size, studentised
from pdeval.analysis.statistics.scores import CHUNK_ELEMENTS, baseline_pairs, pair_indices, score_matrices
from pdeval.analysis.statistics.scores import BASELINE, RESULT_MEASURES
from pdeval.common.contract import Choice, Integer, Nullable, Real, Text, contract
from pdeval.common.progress import PROGRESS, one_bar, progress_bar
from pdeval.common.docs import shared_docs
from pdeval.common.seeds import SEED, Seed, generator
from pdeval.frames.domains import Frame
from pdeval.errors import PdevalError

__all__ = ["CORRECTIONS", "TESTS", "adjust_pvalues", "check_test", "compare", "sign_test_p"]


#: the paired tests of :func:`compare` and the corrections of :func:`adjust_pvalues`
TESTS = ("t", "wilcoxon", "sign", "permutation", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "fdr_bh")


def check_test(test, correction) -> None:
    """Refuse a test name (``None``: not checked) or a correction that pdeval does not know."""
    if test is not None and test not in TESTS:
        raise PdevalError(f"test must be one of {', '.join(TESTS)}, not {test!r}")
    if correction is not None and correction not in CORRECTIONS:
        raise PdevalError(f"correction must be {', '.join(map(repr, CORRECTIONS))} or None, not {correction!r}")


def adjust_pvalues(p: Sequence[float], method: Optional[str] = "holm") -> np.ndarray:
    """Multiple-comparison adjusted p-values (NaN entries are left out of the family).

    * ``bonferroni``: ``min(1, m p_i)``;
    * ``holm`` (Holm 1979): sorted ascending, ``max_{j <= i} min(1, (m - j + 1) p_(j))``;
    * ``fdr_bh`` (Benjamini & Hochberg 1995): sorted ascending,
      ``min_{j >= i} min(1, m p_(j) / j)``;
    * ``None``: unchanged.
    """
    p = np.asarray(p, dtype=np.float64)
    if method is None:
        return p.copy()
    check_test(None, method)
    out = np.full(p.shape, np.nan)
    valid = ~np.isnan(p)
    q = p[valid]
    m = q.size
    if m == 0:
        return out
    if method == "bonferroni":
        out[valid] = np.minimum(1.0, q * m)
        return out
    order = np.argsort(q, kind="stable")
    ranks = np.arange(1, m + 1)
    sorted_p = q[order]
    if method == "holm":
        adjusted = np.maximum.accumulate(np.minimum(1.0, (m - ranks + 1) * sorted_p))
    else:
        adjusted = np.minimum.accumulate((m * sorted_p / ranks)[::-1])[::-1]
        adjusted = np.minimum(1.0, adjusted)
    back = np.empty(m)
    back[order] = adjusted
    out[valid] = back
    return out


def sign_test_p(k: np.ndarray, n: np.ndarray) -> np.ndarray:
    """Exact two-sided binomial (p = 1/2) p-value: min(1, 2 P(X <= min(k, n-k)))."""
    from scipy.stats import binom

    k = np.asarray(k)
    n = np.asarray(n)
    p = np.minimum(1.0, 2.0 * binom.cdf(np.minimum(k, n - k), n, 0.5))
    return np.where(n > 0, p, 1.0)


def _t_interval(diff: np.ndarray, sd: np.ndarray, n: int, confidence: float) -> tuple[np.ndarray, np.ndarray]:
    from scipy.stats import t as student

    half = student.ppf(0.5 + confidence / 2.0, n - 1) * sd / math.sqrt(n)
    return diff - half, diff + half


def _permutation_p(z: np.ndarray, permutations: int, rng: np.random.Generator, progress: Optional[bool]) -> np.ndarray:
    """Two-sided sign-flip permutation p-values of the mean difference, per row of z.

    Exact over all 2^n sign vectors when 2^n <= permutations; otherwise ``permutations``
    random sign vectors shared by all pairs and ``p = (1 + #{|mean*| >= |mean|}) / (1 + P)``
    (Phipson & Smyth 2010, "Permutation p-values should never be zero").
    """
    p, n = z.shape
    observed = np.abs(z.mean(axis=1)) - 1e-12
    exact = n <= 30 and 2**n <= permutations
    total = 2**n if exact else permutations
    chunk = chunk_size(p, 1) if p else 1
    chunk = max(1, min(chunk, CHUNK_ELEMENTS // max(1, n)))
    hits = np.zeros(p, dtype=np.int64)
    starts = range(0, total, chunk)
    for start in progress_bar(starts, enabled=progress, total=len(starts), desc="permutations"):
        size = min(chunk, total - start)
        if exact:
            codes = np.arange(start, start + size, dtype=np.int64)
            signs = 1.0 - 2.0 * ((codes[:, None] >> np.arange(n)) & 1)
        else:
            signs = 1.0 - 2.0 * (rng.random((size, n)) < 0.5)
        means = z @ signs.T / n  # pairs x size
        hits += (np.abs(means) >= observed[:, None]).sum(axis=1)
    return hits / total if exact else (hits + 1) / (total + 1)


TestName = Literal["t", "wilcoxon", "sign", "permutation", "bootstrap"]

#: number of topics from which :func:`compare` notes that Wilcoxon and sign tests are over-sensitive
LARGE_TOPICS = 1000


def _oversensitivity_note(test: str, n: int, large_topics: Optional[int]) -> str:
    """The ``note`` of a Wilcoxon / sign test on ``n >= large_topics`` topics, else ``""``."""
    if test not in ("wilcoxon", "sign") or large_topics is None or n < large_topics:
        return ""
    return (
        f"{n} topics: with this many topics the {test} test rejects true null hypotheses of equal "
        "means far more often than alpha (Ihemelandu & Ekstrand, SIGIR 2023); prefer test='t', "
        "'permutation' or 'bootstrap'"
    )


#: the number of resamples of :func:`compare`'s resampling tests when ``n_resamples`` is None
RESAMPLES = {"permutation": 10_000, "bootstrap": 1_000}


def _paired_test(test: str, a: np.ndarray, b: np.ndarray, resamples: int, rng: np.random.Generator,
                 confidence: float, progress: Optional[bool]) -> tuple[np.ndarray, np.ndarray, Optional[tuple]]:
    """(statistic, p-value, bootstrap interval or None) of one test for the pairs (rows) a - b."""
    from scipy import stats

    z = a - b
    n = z.shape[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if test == "t":
            res = stats.ttest_rel(a, b, axis=1)
            return np.asarray(res.statistic, float), np.asarray(res.pvalue, float), None
        if test == "wilcoxon":
            res = stats.wilcoxon(z, axis=1, zero_method="wilcox")
            p_value = np.where((z == 0).all(axis=1), 1.0, np.asarray(res.pvalue, float))
            return np.asarray(res.statistic, float), p_value, None
        if test == "sign":
            positive = (z > 0).sum(axis=1)
            return positive.astype(float), sign_test_p(positive, (z != 0).sum(axis=1)), None
        diff = z.mean(axis=1)
        if test == "permutation":
            return diff, _permutation_p(z, resamples, rng, progress), None
        sd = z.std(axis=1, ddof=1) if n > 1 else np.full(z.shape[0], np.nan)
        indices = rng.integers(0, n, size=(resamples, n))
        t_obs = studentised(diff, sd, n)
        _, tstar = bootstrap_replicates(z, indices, progress=progress)
        p_value = (np.abs(tstar) >= np.abs(t_obs)[:, None]).mean(axis=1)
        # percentile interval of the (not null-shifted) bootstrap mean difference
        replicate = np.repeat(np.arange(indices.shape[0], dtype=np.int64), n)
        counts = np.bincount(replicate * n + indices.ravel(), minlength=indices.size).reshape(-1, n)
        boot_means = z @ counts.T.astype(np.float64) / n
        lo = (1.0 - confidence) / 2.0
        return t_obs, p_value, tuple(np.quantile(boot_means, [lo, 1.0 - lo], axis=1))


@contract(
    result=Frame("result"),
    measures=RESULT_MEASURES,
    baseline=BASELINE,
    test=Choice(*TESTS),
    correction=Nullable(Choice(*CORRECTIONS)),
    alpha=Real(0, 1, closed="neither"),
    n_resamples=Nullable(Integer(1)),
    seed=SEED,
    progress=PROGRESS,
    system=Text("a column name"),
    large_topics=Nullable(Integer(1)),
    modes={"n_resamples": ("test", ("permutation", "bootstrap"))},
    renamed={"confidence": "alpha", "baselines": "baseline"},
    remedies={"alpha": "the tests' level; the intervals cover 1 - alpha, e.g. alpha=0.05 for 95 %"},
)
@shared_docs
@one_bar
def compare(
    result: pd.DataFrame,
    *,
    measures: Union[None, str, Sequence[str]] = None,
    baseline: Union[None, str, Sequence[str]] = None,
    test: TestName = "t",
    correction: Optional[Literal["holm", "bonferroni", "fdr_bh"]] = "holm",
    alpha: float = 0.05,
    n_resamples: Optional[int] = None,
    seed: Seed = 0,
    progress: Optional[bool] = None,
    system: str = "run",
    large_topics: Optional[int] = LARGE_TOPICS,
) -> pd.DataFrame:
    """Paired significance tests between runs, per measure and variant.

    Pairs: each run against ``baseline`` if given (columns ``run``, ``baseline``), else every
    unordered pair in input order (``run_a``, ``run_b``). ``baseline`` may name several runs:
    each is compared with every other run (a pair of baselines once, see
    :func:`~pdeval.analysis.statistics.scores.baseline_pairs`), and the correction runs over all these
    comparisons of a (measure, variant). With per-topic differences ``z = a - b`` over the n
    topics:

    ``t``
        paired t-test (Student 1908; ``scipy.stats.ttest_rel``);
    ``wilcoxon``
        Wilcoxon signed-rank test (Wilcoxon 1945; ``scipy.stats.wilcoxon``, zero
        differences dropped; all-zero differences give p = 1);
    ``sign``
        exact two-sided binomial test on the signs of the nonzero differences;
    ``permutation``
        two-sided sign-flip randomisation test of the mean difference (exact over all 2^n
        flips when 2^n <= ``n_resamples``; else ``n_resamples`` random flips shared by
        all pairs, ``p = (1 + hits) / (1 + n_resamples)``, Phipson & Smyth 2010);
    ``bootstrap``
        Sakai's (SIGIR 2006) studentised paired bootstrap
        (:func:`~pdeval.analysis.statistics.bootstrap.paired_bootstrap`, ``n_resamples`` replicates
        shared by all pairs); p = ASL.

    ``note`` is empty except for the Wilcoxon and sign tests on ``large_topics`` topics or
    more: Ihemelandu & Ekstrand (SIGIR 2023, "Inference at scale") found that on large query
    samples these tests reject a true null hypothesis of equal means far more often than
    ``alpha`` (they test medians / symmetry, which rarely hold exactly), while t, permutation
    and bootstrap tests keep their error rate. The test is still run; the note says so. The
    default of 1000 topics is pdeval's choice (their experiments used thousands of queries),
    ``None`` turns the note off.

    Parameters
    ----------
    result : DataFrame
        A result frame with per-topic values, every run on every topic; each (measure,
        variant) group is one family.
    measures : str or list of str, optional
        The measure(s) to test (default: all of ``result``).
    baseline : str or list of str, optional
        A run (or several) to compare every other run with; None compares every pair.
    test : {'t', 'wilcoxon', 'sign', 'permutation', 'bootstrap'}, default 't'
        The paired test (above).
    correction : {'holm', 'bonferroni', 'fdr_bh'} or None, default 'holm'
        Holm (1979), Bonferroni or Benjamini & Hochberg (1995), over the pairs of each
        (measure, variant) family (:func:`adjust_pvalues`); None: no correction.
    alpha : float, default 0.05
        The tests' level: an adjusted p-value below it is significant. The intervals of the
        mean difference follow it: they cover ``1 - alpha`` (95 % for 0.05).
    n_resamples : int, optional
        The random flips of the permutation test or the replicates of the bootstrap test
        (those tests only); None: 10,000 for the permutation test, 1,000 for the bootstrap
        (:data:`RESAMPLES`).
    {seed}
    {progress}
    {system}
    large_topics : int or None, default 1000
        The number of topics from which Wilcoxon and sign tests get a ``note``; None: never.

    Returns
    -------
    DataFrame
        ``measure``, variant keys, the pair columns, ``n_topics``, ``mean_a``, ``mean_b``,
        ``diff`` (mean of z), ``effect_size`` (paired Cohen's d = mean(z) / sd(z), ddof=1),
        ``ci_low``, ``ci_high`` (the ``1 - alpha`` interval of the mean difference: percentile
        bootstrap for ``bootstrap``, Student t otherwise), ``statistic`` (t, Wilcoxon's T,
        #positive signs, mean difference, t(z)), ``p_value``, ``p_adjusted``, ``significant``
        (``p_adjusted < alpha``), ``test``, ``note``.

    Raises
    ------
    PdevalError
        An option outside its domain (the old ``confidence=`` names ``alpha``).
    SchemaError
        A missing measure or baseline, or a run without a value on some topic.

    See Also
    --------
    tukey_hsd : All pairs with the family-wise error held at alpha (Tukey's HSD).
    discriminative_power : The share of run pairs a measure tells apart.
    anova : The ANOVA table and Sakai's effect sizes.

    Examples
    --------
    >>> result = pd.DataFrame({"run": ["bm25"] * 4 + ["dense"] * 4,
    ...                        "query_id": ["1", "2", "3", "4"] * 2, "measure": "AP",
    ...                        "value": [0.2, 0.4, 0.3, 0.5, 0.3, 0.6, 0.4, 0.7]})
    >>> out = pdeval.compare(result, baseline="bm25")
    >>> out[["run", "baseline", "diff", "p_value", "significant"]].round(4)
         run baseline  diff  p_value  significant
    0  dense     bm25  0.15   0.0138         True
    """
    resamples = RESAMPLES.get(test, 0) if n_resamples is None else n_resamples
    confidence = 1.0 - alpha
    frames = []
    for group in score_matrices(result, measures, system=system):
        scores, runs = group.scores, group.runs
        m, n = scores.shape
        if baseline is not None:
            ii, jj = baseline_pairs(runs, baseline, f"measure {group.measure!r} {group.variant}")
            pair_columns = {"run": [runs[i] for i in ii], "baseline": [runs[j] for j in jj]}
        else:
            ii, jj = pair_indices(m)
            pair_columns = {"run_a": [runs[i] for i in ii], "run_b": [runs[j] for j in jj]}
        if ii.size == 0:
            continue
        a, b_ = scores[ii], scores[jj]
        z = a - b_
        diff = z.mean(axis=1)
        sd = z.std(axis=1, ddof=1) if n > 1 else np.full(ii.size, np.nan)
        with np.errstate(divide="ignore", invalid="ignore"):
            effect = diff / sd
            ci_low, ci_high = _t_interval(diff, sd, n, confidence)
        statistic, p_value, interval = _paired_test(test, a, b_, resamples, generator(seed), confidence, progress)
        if interval is not None:
            ci_low, ci_high = interval
        frame = pd.DataFrame(
            {
                "measure": group.measure,
                **{k: [v] * ii.size for k, v in group.variant.items()},
                **pair_columns,
                "n_topics": n,
                "mean_a": a.mean(axis=1),
                "mean_b": b_.mean(axis=1),
                "diff": diff,
                "effect_size": effect,
                "ci_low": ci_low,
                "ci_high": ci_high,
                "statistic": statistic,
                "p_value": p_value,
            }
        )
        frame["p_adjusted"] = adjust_pvalues(frame["p_value"].to_numpy(), correction)
        frame["significant"] = frame["p_adjusted"].to_numpy() < alpha
        frame["test"] = test
        frame["note"] = _oversensitivity_note(test, n, large_topics)
        frames.append(frame)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)
