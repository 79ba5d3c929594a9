"""Coefficients that compare two system rankings: Kendall's tau, tau_AP, tau_AP_b, tau_GAP, Spearman, Pearson, RMS.

Array-level statistics (MEASURES.md E8): :func:`kendall_tau` (Kendall 1938, 1945),
:func:`tau_ap` (Yilmaz, Aslam & Robertson, SIGIR 2008), :func:`tau_ap_b` (Urbano & Marrero,
ICTIR 2017), :func:`tau_gap` (Gao & Oard, SIGIR 2015), :func:`spearman`, :func:`pearson`,
:func:`rms_error`, :func:`correlation` (one of them by name, with an optional ``@k`` cutoff)
and :func:`tau_significance`. :data:`METHOD` is the domain of a method name.
:mod:`pdeval.analysis.rankings.correlation` applies them to result frames.
"""

from __future__ import annotations

import math
from typing import Literal, Sequence, Union

import numpy as np

from pdeval.analysis.rankings.batched import BASE_METHODS, batched, parse_method
from pdeval.common.domains import Domain, Refused
from pdeval.errors import PdevalError

__all__ = ["METHOD", "METHODS", "Method", "correlation", "kendall_tau", "pearson", "rms_error", "spearman", "tau_ap",
           "tau_ap_b", "tau_gap", "tau_significance"]

#: the comparison statistics :func:`pdeval.rank_correlation` knows (each also as ``name@k``)
METHODS = BASE_METHODS

Method = str


class MethodName(Domain):
    """A coefficient of :data:`METHODS`, optionally with a top-k cutoff: ``"tau_b@10"``."""

    text = "a coefficient of " + ", ".join(repr(m) for m in BASE_METHODS) + " (optionally name@k, as 'tau_b@10')"

    def convert(self, value):
        if not isinstance(value, str):
            raise Refused()
        try:
            parse_method(value)
        except PdevalError:
            hint = " (Kendall's tau-b is 'tau_b', Urbano & Marrero's tauap_b is 'tau_ap_b')" if value.split(
                "@")[0] in ("kendall", "tauap_b") else ""
            raise Refused(f"{value!r} is not a known coefficient" + hint) from None
        return value

    def outside(self) -> list:
        return ["no such method", "tau_b@0", None, 1.5]

    def example(self) -> str:
        return "tau_b"


#: the domain of one method name
METHOD = MethodName()


# ---------------------------------------------------------------------------------------
# array-level statistics
# ---------------------------------------------------------------------------------------


def _pair_vectors(x: Sequence[float], y: Sequence[float]) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64).ravel()
    y = np.asarray(y, dtype=np.float64).ravel()
    if x.shape != y.shape:
        raise PdevalError(f"the two vectors differ in length ({x.size} and {y.size})")
    if np.isnan(x).any() or np.isnan(y).any():
        raise PdevalError("the vectors to compare contain NaN; drop or fill those systems first")
    return x, y


def kendall_tau(x: Sequence[float], y: Sequence[float], variant: Literal["a", "b"] = "b") -> float:
    """Kendall's tau between two score vectors over the same systems (MEASURES.md E8).

    With C concordant and D discordant pairs, ``n0 = n(n-1)/2``, ``n1`` (``n2``) the number
    of pairs tied in ``x`` (``y``)::

        tau_a = (C - D) / n0
        tau_b = (C - D) / sqrt((n0 - n1) (n0 - n2))

    A pair tied in ``x`` or in ``y`` is neither concordant nor discordant. tau-b equals
    ``scipy.stats.kendalltau`` (variant "b"); tau-a is the swap-count form of Buckley &
    Voorhees (2004), used by Yilmaz & Aslam (2008), Sakai (2007) and Ahlgren & Groenqvist
    (2008) on tie-free rankings, where tau_a = tau_b (Kendall, 1938).

    Computed from the n x n sign matrices (no loop over pairs). Returns NaN for fewer than 2
    systems, and tau-b is NaN when either vector is constant.
    """
    x, y = _pair_vectors(x, y)
    n = x.size
    if variant not in ("a", "b"):
        raise PdevalError(f"Kendall tau variant must be 'a' or 'b', not {variant!r}")
    if n < 2:
        return float("nan")
    sx = np.sign(x[:, None] - x[None, :])
    sy = np.sign(y[:, None] - y[None, :])
    # every unordered pair appears twice in the full matrices
    s = float((sx * sy).sum()) / 2.0
    n0 = n * (n - 1) / 2.0
    if variant == "a":
        return s / n0
    n1 = float((sx == 0).sum() - n) / 2.0
    n2 = float((sy == 0).sum() - n) / 2.0
    denominator = math.sqrt((n0 - n1) * (n0 - n2))
    return s / denominator if denominator > 0 else float("nan")


def _harmonic(m: np.ndarray, table: np.ndarray) -> np.ndarray:
    """H(m) = 1 + 1/2 + ... + 1/m, with H(m) = 0 for m <= 0."""
    return table[np.clip(m, 0, None)]


def tau_ap(estimate: Sequence[float], reference: Sequence[float]) -> float:
    """AP correlation tau_AP of an estimated ranking against a reference ("true") ranking.

    Yilmaz, Aslam & Robertson (2008), "A new rank correlation coefficient for information
    retrieval". Systems are ordered by ``estimate``, best (highest) first; for the system at
    position i, C(i) counts the systems above it that the reference also ranks above it::

        tau_AP = 2/(n-1) * sum_{i=2..n} C(i)/(i-1)  -  1

    The statistic is asymmetric: ``reference`` is the true ranking. Errors near the top of
    the estimated ranking cost more than errors near the bottom.

    **Ties** (not covered by the paper) are handled by taking the expected value of tau_AP
    over uniformly random tie-breaking of both rankings:

    * a pair tied in the reference counts as half correct (C gets 1/2);
    * a system in a tie group of the estimate with first position p and size t sits at each
      of the positions p..p+t-1 with probability 1/t, with its tied partners above it at
      random. This gives::

          E = sum_i A_i * (1/t_i) * sum_{k=1..t_i} 1/(p_i+k-2)
              + sum_groups (1/2) * sum_{k=1..t-1} k/(p+k-1)

      where A_i is the (reference-)correct count among the systems in tie groups above i.

    Without ties in the reference this is Urbano & Marrero's (2017) tau_AP_a; without any
    ties it is the original tau_AP. The value lies in [-1, 1]; NaN for fewer than 2 systems.
    """
    est, ref = _pair_vectors(estimate, reference)
    n = est.size
    if n < 2:
        return float("nan")
    # c[j, i]: system j ranked above i by the reference (1), tied (1/2), below (0)
    c = (ref[:, None] > ref[None, :]).astype(np.float64) + 0.5 * (ref[:, None] == ref[None, :])
    above = est[:, None] > est[None, :]  # above[j, i]: j strictly above i in the estimate
    a = (c * above).sum(axis=0)
    # first position p (1-based) and size t of each system's tie group in the estimate
    p = 1 + above.sum(axis=0)
    t = (est[:, None] == est[None, :]).sum(axis=0)
    h = np.concatenate(([0.0], np.cumsum(1.0 / np.arange(1, n + 1))))
    # (1/t) sum_{k=1..t} 1/(p+k-2), the k with p+k-2 = 0 (the top position) left out
    s_above = (_harmonic(p + t - 2, h) - _harmonic(p - 2, h)) / t
    total = float((a * s_above).sum())
    # within-group term, once per group: (1/2) sum_{k=1..t-1} k/(p+k-1)
    #   = (1/2) [(t-1) - (p-1) (H(p+t-2) - H(p-1))]
    first = np.unique(p, return_index=True)[1]
    pg, tg = p[first], t[first]
    within = 0.5 * ((tg - 1) - (pg - 1) * (_harmonic(pg + tg - 2, h) - _harmonic(pg - 1, h)))
    total += float(within.sum())
    return 2.0 / (n - 1) * total - 1.0


def _average_ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1..n, tied values sharing the mean of their ranks."""
    order = np.argsort(x, kind="stable")
    xs = x[order]
    boundary = np.concatenate(([True], xs[1:] != xs[:-1]))
    group = np.cumsum(boundary) - 1
    starts = np.flatnonzero(boundary)
    ends = np.concatenate((starts[1:], [x.size]))
    mean_rank = (starts + ends + 1) / 2.0  # mean of the 1-based ranks start+1 .. end
    ranks = np.empty(x.size)
    ranks[order] = mean_rank[group]
    return ranks


def pearson(x: Sequence[float], y: Sequence[float]) -> float:
    """Pearson's linear correlation (Yilmaz & Aslam's 2008 "linear correlation coefficient").

    ``r = sum (x-mx)(y-my) / sqrt(sum (x-mx)^2 sum (y-my)^2)``; NaN if either is constant.
    """
    x, y = _pair_vectors(x, y)
    if x.size < 2:
        return float("nan")
    dx, dy = x - x.mean(), y - y.mean()
    denominator = math.sqrt(float(dx @ dx) * float(dy @ dy))
    if denominator == 0:
        return float("nan")
    return float(np.clip(float(dx @ dy) / denominator, -1.0, 1.0))


def spearman(x: Sequence[float], y: Sequence[float]) -> float:
    """Spearman's rho: Pearson on average ranks (He, Macdonald & Ounis 2008 use it)."""
    x, y = _pair_vectors(x, y)
    return pearson(_average_ranks(x), _average_ranks(y))


def rms_error(estimate: Sequence[float], reference: Sequence[float]) -> float:
    """Root mean squared error ``sqrt(1/n sum_s (est_s - ref_s)^2)`` (Yilmaz & Aslam 2008)."""
    est, ref = _pair_vectors(estimate, reference)
    if est.size == 0:
        return float("nan")
    return float(np.sqrt(np.mean((est - ref) ** 2)))


def tau_ap_b(estimate: Sequence[float], reference: Sequence[float]) -> float:
    """Urbano & Marrero's tau_AP_b, the tie-aware symmetric AP correlation (ICTIR 2017).

    "The treatment of ties in AP correlation" (Urbano & Marrero, ICTIR 2017). For rankings x
    and y, ``T(x, y)`` walks the systems in the order of ``y``: a system i below the top tie
    group has ``p_i`` systems strictly above its tie group in ``y``, of which ``c_i`` are also
    strictly above it in ``x``::

        T(x, y) = 2 / |{i: p_i > 0}| * sum_{i: p_i > 0} c_i / p_i  -  1
        tau_AP_b = (T(x, y) + T(y, x)) / 2

    (``T`` is 0 when every system is tied in ``y``). Symmetric, unlike :func:`tau_ap`. This is
    ``tauap_b`` of the TREC Auto-Judge meta-evaluation (``autojudge-evaluate``) and of
    ``pyircore``. Without ties it is the mean of tau_AP in both directions.
    """
    est, ref = _pair_vectors(estimate, reference)
    return float(batched("tau_ap_b", est[None], ref[None])[0])


def tau_gap(estimate: Sequence[float], reference: Sequence[float]) -> float:
    """tau_GAP, the head-weighted gap-sensitive correlation of Gao & Oard (SIGIR 2015).

    "A Head-Weighted Gap-Sensitive Correlation Coefficient" (Gao & Oard, SIGIR 2015). The
    systems are walked in the order of ``estimate`` (ties broken by position); for the system
    at position i, ``G_ji = |ref_j - ref_i|`` over the systems j above it, and ``CG_ji = G_ji``
    when the reference also ranks j above i (0 otherwise)::

        tau_GAP = 2 / m * sum_i [ sum_{j<i} CG_ji / sum_{j<i} G_ji ]  -  1

    over the m positions whose gap sum is positive (reference-tied pairs weigh nothing).
    Asymmetric: ``reference`` gives the gaps (the truth), ``estimate`` the order. A swap near
    the head or across a large gap costs more. NaN when every pair is reference-tied.
    """
    est, ref = _pair_vectors(estimate, reference)
    return float(batched("tau_gap", est[None], ref[None])[0])


def correlation(estimate: Sequence[float], reference: Sequence[float], method: Method = "tau_b") -> float:
    """One statistic of :data:`METHODS` between an estimated and a reference score vector.

    The argument order matters for ``tau_ap``, ``tau_gap`` (``reference`` is the true ranking)
    and for a cutoff ``name@k`` (the k systems the reference ranks highest, ties by position).
    """
    if "@" in str(method):
        est, ref = _pair_vectors(estimate, reference)
        return float(batched(method, est[None], ref[None])[0])
    if method == "tau_a":
        return kendall_tau(estimate, reference, "a")
    if method == "tau_b":
        return kendall_tau(estimate, reference, "b")
    if method == "tau_ap":
        return tau_ap(estimate, reference)
    if method == "spearman":
        return spearman(estimate, reference)
    if method == "pearson":
        return pearson(estimate, reference)
    if method == "rms":
        return rms_error(estimate, reference)
    if method in ("tau_ap_b", "tau_gap"):
        return tau_ap_b(estimate, reference) if method == "tau_ap_b" else tau_gap(estimate, reference)
    raise PdevalError(f"unknown comparison method {method!r}; choose from {list(METHODS)}")


def tau_significance(tau: Union[float, np.ndarray], n: Union[int, np.ndarray], alpha: float = 0.05):
    """Two-sided normal test of Kendall's tau against 0 (as used by Sakai 2007).

    Under independence ``Var(tau) = 2(2n+5) / (9n(n-1))`` (Kendall 1938), so
    ``z = tau / sqrt(Var)``, ``p = 2 (1 - Phi(|z|))`` and the critical value is
    ``|tau| = z_{1-alpha/2} sqrt(Var)`` (for n = 30, alpha = 0.01: 0.3319).

    Returns ``(p_value, critical)`` (arrays if the inputs are arrays).
    """
    from scipy.stats import norm

    if not 0 < alpha < 1:
        raise PdevalError(f"alpha must lie in (0, 1), got {alpha!r}")
    n = np.asarray(n, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        sd = np.sqrt(2.0 * (2.0 * n + 5.0) / (9.0 * n * (n - 1.0)))
        sd = np.where(n >= 2, sd, np.nan)
        z = np.asarray(tau, dtype=np.float64) / sd
    p_value = 2.0 * norm.sf(np.abs(z))
    critical = norm.isf(alpha / 2.0) * sd
    if np.ndim(p_value) == 0:
        return float(p_value), float(critical)
    return p_value, critical
