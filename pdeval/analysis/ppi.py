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
"""

from __future__ import annotations

import numpy as np

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
    from scipy import stats  # (scipy.stats costs a second to import: not on the CLI's path)

    z = stats.norm.ppf(1.0 - (1.0 - confidence) / 2.0)
    return estimate, estimate - z * se, estimate + z * se, lam


__all__ = ["power_tuning", "ppi_mean"]
