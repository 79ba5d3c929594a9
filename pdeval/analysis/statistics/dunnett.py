"""Dunnett's many-to-one comparisons, for one baseline or several, with topics paired.

The family: each baseline ``s`` of the ``b`` baselines ``S`` against every other of the ``m``
systems (a pair of baselines once). With the residual variance ``V_E`` of the ANOVA on
``phi_E`` degrees of freedom (:mod:`pdeval.analysis.statistics.anova`) the statistic of a pair is
``q_is = |xi. - xs.| / sqrt(V_E / n)``, on the scale of the studentised range. Under the
null hypothesis with normal errors, ``xi. = mu + sigma Z_i / sqrt(n)`` with independent
standard normals ``Z_i``, and ``q_is = |Z_i - Z_s| / S`` with ``S = sqrt(V_E) / sigma``,
distributed as ``sqrt(chi^2_phi_E / phi_E)`` independently of the ``Z``. The family-wise
p-value of a pair is ``P(max_family q > q_is)`` and the simultaneous threshold is its
``1 - alpha`` quantile (Dunnett 1955, "A multiple comparison procedure for comparing
several treatments with a control", JASA 50: 1096-1121, two-sided, equal sizes).

The largest ``|Z_i - Z_s|`` of the family stays below ``w`` exactly when the baselines'
own ``Z`` lie within ``w`` of each other, ``U - L < w`` with ``L``, ``U`` their least and
largest, and every other system's ``Z_i`` lies in ``(U - w, L + w)``. So

* ``b = 1``: ``P_1(w) = int phi(z) [Phi(z + w) - Phi(z - w)]^(m - 1) dz`` (Dunnett's
  integral, correlation 1/2 between comparisons);
* ``b >= 2``, from the joint density ``b (b - 1) phi(L) phi(U) [Phi(U) - Phi(L)]^(b - 2)``
  of the least and largest of ``b`` normals: ``P_b(w) = int int_{0 < D < w} b (b - 1)
  phi(L) phi(L + D) [Phi(L + D) - Phi(L)]^(b - 2) [Phi(L + w) - Phi(L + D - w)]^(m - b)
  dD dL``;
* ``b = m`` is the studentised range of all m systems (Tukey's HSD), a check the tests make.

``Rbar_b(w) = 1 - P_b(w)`` is computed by Gauss-Legendre quadrature (256 nodes in ``z`` or
``L`` over ``[-9, 9]``, 128 in ``D / w`` over ``[0, 1]``) at the nodes of a Chebyshev
interpolant in ``w``, and mixed over ``S`` as for the studentised range
(:func:`pdeval.analysis.statistics.studentized_range.studentized_sf`). The tests check it against
``scipy.stats.dunnett`` (one baseline, one-way ANOVA), SciPy's ``dblquad`` over the values of
two baselines taken straight from the event, a simulation of the family (several baselines)
and ``scipy.stats.studentized_range`` (``b = m``). SciPy's multivariate t cannot serve for
several baselines: the comparisons of the family are linearly dependent, so their
correlation matrix is singular.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from pdeval.errors import PdevalError
from pdeval.analysis.statistics.scores import CHUNK_ELEMENTS
from pdeval.analysis.statistics.studentized_range import interpolate_tail, normal_nodes, studentized_sf, tail_limit

__all__ = ["Dunnett"]

#: Gauss-Legendre nodes of the inner integral over D / w in [0, 1] (b >= 2)
SPREAD_NODES = 128


def _family_tail(m: int, b: int) -> Callable[[np.ndarray], np.ndarray]:
    """``Rbar_b(w)`` of the module docstring for an array of ``w`` (vectorised)."""
    from numpy.polynomial.legendre import leggauss
    from scipy.special import ndtr

    z, density = normal_nodes()
    others = m - b
    if b == 1:

        def tail(w: np.ndarray) -> np.ndarray:
            w = np.asarray(w, dtype=np.float64)[..., None]
            inside = ndtr(z + w) - ndtr(z - w)
            with np.errstate(divide="ignore"):
                return -np.expm1(others * np.log(inside)) @ density

        return tail

    x, weight = leggauss(SPREAD_NODES)
    u, u_weight = 0.5 * (x + 1.0), 0.5 * weight  # D = w u
    Phi_low = ndtr(z)[:, None]  # Phi(L): L on axis 0, u on axis 1
    pair = b * (b - 1) * density[:, None] * u_weight[None, :]

    def tail(w: np.ndarray) -> np.ndarray:
        w = np.atleast_1d(np.asarray(w, dtype=np.float64))
        out = np.empty(w.shape)
        step = max(1, CHUNK_ELEMENTS // (z.size * u.size))
        for start in range(0, w.size, step):  # chunks of w bound the memory
            width = w[start : start + step, None, None]
            high = z[:, None] + width * u[None, :]  # U = L + D
            # phi(U) [Phi(U) - Phi(L)]^(b-2) [Phi(L + w) - Phi(U - w)]^(m-b) in one exp of logs
            with np.errstate(divide="ignore"):
                log_spread = -0.5 * high * high
                if b > 2:
                    log_spread += (b - 2) * np.log(ndtr(high) - Phi_low)
                if others:
                    log_spread += others * np.log(ndtr(z[:, None] + width) - ndtr(high - width))
            spread = np.exp(log_spread) / math.sqrt(2.0 * math.pi)
            out[start : start + step] = 1.0 - (pair * spread * width).sum(axis=(1, 2))
        return out

    return tail


@dataclass(frozen=True)
class Dunnett:
    """The distribution of the family's largest studentised difference (module docstring)
    for ``m`` systems of which ``baselines`` are baselines, on ``df`` degrees of freedom.

    The normal tail is interpolated once, on construction; :meth:`sf` and :meth:`isf` share it.
    """

    m: int
    baselines: int
    df: float
    tail: Callable[[np.ndarray], np.ndarray] = field(init=False, repr=False)
    limit: float = field(init=False, repr=False)

    def __post_init__(self) -> None:
        m, b, df = self.m, self.baselines, self.df
        whole = all(isinstance(v, (int, np.integer)) for v in (m, b))
        if not (whole and 1 <= b <= m and m >= 2 and df > 0):
            raise PdevalError(
                f"Dunnett's distribution needs m >= 2 systems, 1 <= baselines <= m and df > 0, got m={m!r}, "
                f"baselines={b!r}, df={df!r}"
            )
        limit = tail_limit(int(m))
        object.__setattr__(self, "limit", limit)
        object.__setattr__(self, "tail", interpolate_tail(_family_tail(int(m), int(b)), limit))

    def sf(self, q) -> np.ndarray:
        """``P(max_family |Z_i - Z_s| / S > q)`` for an array of ``q`` on the studentised-range
        scale (NaN stays NaN, ``q <= 0`` gives 1)."""
        return studentized_sf(q, self.tail, self.limit, self.df)

    def isf(self, p: float) -> float:
        """The ``q`` whose :meth:`sf` is ``p``: the simultaneous ``1 - p`` threshold."""
        from scipy.optimize import brentq

        if not 0 < p < 1:
            raise PdevalError(f"the tail probability must lie in (0, 1), got {p!r}")

        def excess(q: float) -> float:
            return float(self.sf(q)) - p

        high = 8.0
        while excess(high) > 0:  # few degrees of freedom have a long tail: widen the bracket
            high *= 2.0
        return float(brentq(excess, 0.0, high, xtol=1e-12, rtol=1e-12))
