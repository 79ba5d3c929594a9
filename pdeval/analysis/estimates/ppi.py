"""Prediction-powered inference for mean scores: automatic labels everywhere, human labels on
a random sample, an unbiased estimate with a valid confidence interval.

For a mean θ = E[Y] with gold values ``Y`` on n labelled units, predictions ``Ŷ`` on the same
units and predictions ``Ŷᵘ`` on N unlabelled units, PPI (Angelopoulos, Bates, Fannjiang,
Jordan & Zrnic, Science 2023) estimates

    θ̂ = λ·mean(Ŷᵘ) + mean(Y − λŶ)

with the normal interval θ̂ ± z_{1−α/2} √( sd(λŶᵘ)²/N + sd(Y − λŶ)²/n ) (standard deviations
with divisor N and n). ``λ = 1`` is classical PPI; power tuning (PPI++, Angelopoulos, Duchi &
Zrnic 2023) chooses

    λ = clip( 2 cov(g, ĝ) / (2 (1 + n/N) var(ĝ ∪ ĝᵘ)), 0, 1 )

from the gradients g = Y − θ̂₁, ĝ = Ŷ − θ̂₁, ĝᵘ = Ŷᵘ − θ̂₁ at the λ = 1 estimate θ̂₁ (cov
with divisor n over the labelled units counted twice, as the quadratic form of the paper;
var with divisor n + N − 1). Oosterhuis, Jagerman, Qin, Wang & Bendersky (KDD 2024) apply it
to IR evaluation with LLM labels. These are the formulas of the ``ppi-python`` package, which
the tests use as the oracle; where the predictions do not vary at all (var = 0) ppi-python
divides by zero, here λ = 0 (the classical estimate).

Every function is vectorised over columns: one column per run (or per pair of runs).

:func:`stratified_ppi_mean` is stratified PPI (StratPPI; Fisch, Maynez, Hofer, Dhingra, Globerson
& Cohen, NeurIPS 2024): the units fall into K strata with known population shares, the labelled
sample is drawn within each stratum, and the strata's PPI(++) estimates are combined with those
shares; its interval is narrower than PPI's where the judge's bias or accuracy differs between
the strata.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pandas as pd

from pdeval.errors import PdevalError


def _check(Y: np.ndarray, Yhat: np.ndarray, Yhat_unlabeled: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    Y, Yhat, Yu = (np.asarray(a, dtype=np.float64) for a in (Y, Yhat, Yhat_unlabeled))
    Y, Yhat, Yu = (a[:, None] if a.ndim == 1 else a for a in (Y, Yhat, Yu))
    if Y.shape != Yhat.shape or Y.shape[1] != Yu.shape[1]:
        raise PdevalError(f"PPI needs Y and Yhat of one shape and Yhat_unlabeled with as many columns; got "
                          f"{Y.shape}, {Yhat.shape}, {Yu.shape}")
    if len(Y) < 2 or len(Yu) < 1:
        raise PdevalError(f"PPI needs at least 2 labelled and 1 unlabelled unit, got {len(Y)} and {len(Yu)}")
    if not (np.isfinite(Y).all() and np.isfinite(Yhat).all() and np.isfinite(Yu).all()):
        raise PdevalError("PPI got NaN or infinite values: evaluate with undefined='zero' or drop those units")
    return Y, Yhat, Yu


def power_tuning(Y: np.ndarray, Yhat: np.ndarray, Yhat_unlabeled: np.ndarray) -> np.ndarray:
    """PPI++'s λ per column (see the module docstring)."""
    Y, Yhat, Yu = _check(Y, Yhat, Yhat_unlabeled)
    n, N = len(Y), len(Yu)
    theta = Yu.mean(axis=0) + (Y - Yhat).mean(axis=0)
    grads, grads_hat, grads_unlabeled = Y - theta, Yhat - theta, Yu - theta
    covariance = 2.0 / n * ((grads - grads.mean(axis=0)) * (grads_hat - grads_hat.mean(axis=0))).sum(axis=0)
    variance = np.var(np.concatenate([grads_hat, grads_unlabeled]), axis=0, ddof=1)
    denominator = 2.0 * (1.0 + n / N) * variance
    lam = np.divide(covariance, denominator, out=np.zeros_like(covariance), where=denominator > 0)
    return np.clip(lam, 0.0, 1.0)


def ppi_mean(
    Y: np.ndarray,
    Yhat: np.ndarray,
    Yhat_unlabeled: np.ndarray,
    *,
    confidence: float = 0.95,
    tuned: bool = True,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PPI estimate of each column's mean, its interval and λ: ``(estimate, low, high, lam)``.

    ``tuned=True`` chooses λ by :func:`power_tuning` (PPI++); ``False`` is classical PPI (λ = 1).
    """
    if not 0 < confidence < 1:
        raise PdevalError(f"confidence must lie strictly between 0 and 1, not {confidence!r}")
    Y, Yhat, Yu = _check(Y, Yhat, Yhat_unlabeled)
    lam = power_tuning(Y, Yhat, Yu) if tuned else np.ones(Y.shape[1])
    estimate = lam * Yu.mean(axis=0) + (Y - lam * Yhat).mean(axis=0)
    se = np.sqrt((lam * Yu).std(axis=0) ** 2 / len(Yu) + (Y - lam * Yhat).std(axis=0) ** 2 / len(Y))
    z = _z(confidence)
    return estimate, estimate - z * se, estimate + z * se, lam


def _z(confidence: float) -> float:
    from scipy import stats  # (scipy.stats costs a second to import: not on the CLI's path)

    return float(stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0))


class StratifiedPPI(NamedTuple):
    """The result of :func:`stratified_ppi_mean` (arrays of m columns; per stratum K x m)."""

    #: θ̂ = Σ_k w_k θ̂_k per column
    estimate: np.ndarray
    #: θ̂ − z √(Σ_k w_k² σ̂_k²)
    low: np.ndarray
    #: θ̂ + z √(Σ_k w_k² σ̂_k²)
    high: np.ndarray
    #: λ_k per stratum and column (K x m; ones for classical PPI)
    lam: np.ndarray
    #: the K stratum labels, sorted
    strata: np.ndarray
    #: w_k = N_k / N: the stratum's share of all units, labelled and unlabelled
    weights: np.ndarray
    #: θ̂_k, the PPI(++) estimate within each stratum (K x m)
    stratum_estimate: np.ndarray
    #: σ̂_k², the variance of θ̂_k (K x m)
    stratum_variance: np.ndarray


def _stratum_codes(labelled: np.ndarray, unlabelled: np.ndarray, n: int, N: int):
    labelled, unlabelled = np.asarray(labelled, dtype=object).ravel(), np.asarray(unlabelled, dtype=object).ravel()
    if len(labelled) != n or len(unlabelled) != N:
        raise PdevalError(f"stratified PPI needs one stratum per unit: got {len(labelled)} strata for {n} labelled "
                          f"and {len(unlabelled)} for {N} unlabelled units")
    every = np.concatenate([labelled, unlabelled])
    if any(s is None or (isinstance(s, float) and np.isnan(s)) for s in set(every.tolist())):
        raise PdevalError("stratified PPI got a unit without a stratum (None or NaN): give every unit a stratum")
    try:
        codes, names = pd.factorize(every, sort=True)
    except TypeError:  # labels of mixed types: ordered by their text
        codes, names = pd.factorize(np.array([str(s) for s in every], dtype=object), sort=True)
    return codes[:n], codes[n:], np.asarray(names, dtype=object)


def stratified_ppi_mean(
    Y: np.ndarray,
    Yhat: np.ndarray,
    Yhat_unlabeled: np.ndarray,
    stratum_of_labelled: np.ndarray,
    stratum_of_unlabelled: np.ndarray,
    *,
    confidence: float = 0.95,
    tuned: bool = True,
) -> StratifiedPPI:
    """Stratified PPI (StratPPI) estimate of each column's mean, with its interval.

    Fisch, Maynez, Hofer, Dhingra, Globerson & Cohen, "Stratified Prediction-Powered Inference
    for Hybrid Language Model Evaluation", NeurIPS 2024. The units fall into K strata; stratum k
    holds n_k labelled and N_k unlabelled units and has the population weight
    w_k = (n_k + N_k) / (n + N). Within each stratum PPI(++) gives

        θ̂_k = λ_k·mean_k(Ŷᵘ) + mean_k(Y − λ_kŶ),
        σ̂_k² = sd_k(λ_kŶᵘ)²/N_k + sd_k(Y − λ_kŶ)²/n_k

    (standard deviations with divisor N_k and n_k, as :func:`ppi_mean`), and

        θ̂ = Σ_k w_k θ̂_k,    interval θ̂ ± z_{1−α/2} √(Σ_k w_k² σ̂_k²).

    ``tuned=True`` chooses each λ_k by PPI++'s formula within the stratum (:func:`power_tuning`
    on the stratum's units: λ_k = clip(cov_k(Y, Ŷ) / ((1 + n_k/N_k) var_k(Ŷ ∪ Ŷᵘ)), 0, 1)). For a
    mean the Hessian is 1 and the asymptotic variance Σ_k w_k² σ_k²(λ_k) separates over the
    strata, so the paper's optimal λ_k is the minimiser of σ_k²(λ_k) alone, i.e. PPI++'s λ of
    the stratum; as for :func:`ppi_mean` it is clipped to [0, 1] (ppi-python's choice for
    means) and is 0 where the predictions of a stratum do not vary. ``tuned=False`` is
    classical PPI within each stratum (λ_k = 1). With one stratum this is :func:`ppi_mean`.

    Vectorised over columns (one per run, pair of runs or repetition); the per-stratum sums
    are group sums over the units sorted by stratum.

    Parameters
    ----------
    Y : array (n,) or (n, m)
        Gold values of the labelled units.
    Yhat : array like Y
        Predictions on the labelled units.
    Yhat_unlabeled : array (N,) or (N, m)
        Predictions on the unlabelled units.
    stratum_of_labelled, stratum_of_unlabelled : array (n,) and (N,)
        The stratum of each labelled and unlabelled unit (any hashable labels).
    confidence : float, default 0.95
        Level of the normal interval.
    tuned : bool, default True
        Per-stratum power tuning (PPI++); False: classical PPI (λ_k = 1).

    Returns
    -------
    StratifiedPPI
        ``estimate``, ``low``, ``high`` (m), ``lam``, ``stratum_estimate`` and
        ``stratum_variance`` (K x m), ``strata`` (the K labels, sorted) and ``weights`` (K).

    Raises
    ------
    PdevalError
        Arrays of mismatched shapes, NaN or infinite values, a unit without a stratum, a
        stratum with fewer than 2 labelled units or without an unlabelled unit (named, with the
        remedy), ``confidence`` outside (0, 1).
    """
    if not 0 < confidence < 1:
        raise PdevalError(f"confidence must lie strictly between 0 and 1, not {confidence!r}")
    Y, Yhat, Yu = _check(Y, Yhat, Yhat_unlabeled)
    cl, cu, names = _stratum_codes(stratum_of_labelled, stratum_of_unlabelled, len(Y), len(Yu))
    K = len(names)
    n_k, N_k = np.bincount(cl, minlength=K), np.bincount(cu, minlength=K)
    for k in np.flatnonzero((n_k < 2) | (N_k < 1)):  # (only the refused strata: a loop over K at most)
        raise PdevalError(f"stratum {names[k]!r} has {n_k[k]} labelled and {N_k[k]} unlabelled unit(s): stratified "
                          "PPI needs at least 2 labelled and 1 unlabelled unit in every stratum; label more units "
                          "of it (or leave some unlabelled), or merge it with another stratum")
    order_l, order_u = np.argsort(cl, kind="stable"), np.argsort(cu, kind="stable")
    starts_l, starts_u = np.r_[0, np.cumsum(n_k)[:-1]], np.r_[0, np.cumsum(N_k)[:-1]]

    def on_labelled(values):  # (n, m) -> (K, m) sums per stratum
        return np.add.reduceat(values[order_l], starts_l, axis=0)

    def on_unlabelled(values):
        return np.add.reduceat(values[order_u], starts_u, axis=0)

    nk, Nk = n_k[:, None].astype(np.float64), N_k[:, None].astype(np.float64)
    mean_Y, mean_Yhat, mean_Yu = on_labelled(Y) / nk, on_labelled(Yhat) / nk, on_unlabelled(Yu) / Nk
    if tuned:
        covariance = on_labelled((Y - mean_Y[cl]) * (Yhat - mean_Yhat[cl])) / nk
        pooled = (mean_Yhat * nk + mean_Yu * Nk) / (nk + Nk)
        variance = (on_labelled((Yhat - pooled[cl]) ** 2) + on_unlabelled((Yu - pooled[cu]) ** 2)) / (nk + Nk - 1)
        denominator = (1.0 + nk / Nk) * variance
        lam = np.divide(covariance, denominator, out=np.zeros_like(covariance), where=denominator > 0)
        lam = np.clip(lam, 0.0, 1.0)
    else:
        lam = np.ones_like(mean_Y)
    stratum_estimate = lam * mean_Yu + mean_Y - lam * mean_Yhat
    rectifier = Y - lam[cl] * Yhat
    residual = on_labelled((rectifier - (mean_Y - lam * mean_Yhat)[cl]) ** 2) / nk
    spread = on_unlabelled((Yu - mean_Yu[cu]) ** 2) / Nk
    stratum_variance = lam ** 2 * spread / Nk + residual / nk
    weights = (n_k + N_k) / float(len(Y) + len(Yu))
    estimate = weights @ stratum_estimate
    se = np.sqrt((weights ** 2) @ stratum_variance)
    z = _z(confidence)
    return StratifiedPPI(estimate, estimate - z * se, estimate + z * se, lam, names, weights, stratum_estimate,
                         stratum_variance)


__all__ = ["StratifiedPPI", "power_tuning", "ppi_mean", "stratified_ppi_mean"]
