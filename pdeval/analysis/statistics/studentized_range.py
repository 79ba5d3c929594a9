"""The upper tail of the studentised range distribution, vectorised over many quantiles,
and the mixing over the estimated standard deviation that every studentised family shares.

``Q = (max_i Z_i - min_i Z_i) / S`` for k independent standard normals Z_i and an independent
``S = sqrt(chi^2_df / df)``. Tukey's HSD needs ``P(Q > q)`` at one q per system pair;
``scipy.stats.studentized_range.sf`` integrates numerically for each value (20-50 ms each),
which makes thousands of pairs slow. Here, with ``phi``/``Phi`` the standard normal density
and distribution function,

* ``Rbar_k(w) = P(range of k normals > w) = k int phi(z) [Phi(z)^(k-1) - (Phi(z) - Phi(z - w))^(k-1)] dz``
  is computed by 256-point Gauss-Legendre quadrature over ``z in [-9, 9]`` at the nodes of a
  degree-400 Chebyshev interpolant on ``w in [0, W]``, ``W = 12 + 2 sqrt(2 ln k)``
  (beyond W, ``Rbar_k < 1e-15``: it is taken as 0);
* ``P(Q > q) = int g(t) Rbar_k(q e^t) dt`` over ``t = ln S``, whose density is
  ``g(t) = 2 (df/2)^(df/2) / Gamma(df/2) exp(df t - df e^(2t) / 2)``, by 256-point
  Gauss-Legendre quadrature over ``[-max(12 sd, 40/df), 12 sd]``, ``sd = 1/sqrt(2 df)``.

The second step holds for any statistic ``max over a family of |Z_i - Z_j| / S``: Dunnett's
many-to-one family (:mod:`pdeval.analysis.statistics.dunnett`) shares it (:func:`studentized_sf`) and
differs only in ``Rbar``.

As in SciPy, ``df >= 100000`` uses the infinite-df limit ``P(Q > q) = Rbar_k(q)``. The
tests check agreement with ``scipy.stats.studentized_range.sf`` to 1e-9 over k = 2..200 and
df = 1..10^6; one call for 2,000 quantiles takes well under a second.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from pdeval.errors import PdevalError
from pdeval.analysis.statistics.scores import CHUNK_ELEMENTS

__all__ = ["studentized_range_sf", "studentized_sf", "normal_nodes", "tail_limit", "interpolate_tail"]

NODES = 256
DEGREE = 400
#: SciPy's threshold for the infinite-df limit
ASYMPTOTIC_DF = 100_000
#: the normal integrals run over z in [-Z_LIMIT, Z_LIMIT]
Z_LIMIT = 9.0


def normal_nodes() -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Legendre nodes ``z`` on ``[-9, 9]`` and weights times the normal density."""
    from numpy.polynomial.legendre import leggauss

    x, weight = leggauss(NODES)
    z = Z_LIMIT * x
    return z, Z_LIMIT * weight * np.exp(-0.5 * z * z) / math.sqrt(2.0 * math.pi)


def tail_limit(k: int) -> float:
    """``W``: beyond it the normal tails of ``k`` means are below 1e-15 and taken as 0."""
    return 12.0 + 2.0 * math.sqrt(2.0 * math.log(k))


def interpolate_tail(tail: Callable[[np.ndarray], np.ndarray], limit: float):
    """A degree-400 Chebyshev interpolant of ``tail`` on ``[0, limit]``."""
    from numpy.polynomial import Chebyshev

    return Chebyshev.interpolate(tail, DEGREE, domain=[0.0, limit])


def _range_tail(k: int):
    """``Rbar_k`` as a Chebyshev interpolant on ``[0, W]`` and ``W``."""
    from scipy.special import ndtr

    z, density = normal_nodes()
    Phi = ndtr(z)
    top = Phi ** (k - 1)

    def tail(w: np.ndarray) -> np.ndarray:
        inner = Phi - ndtr(z - np.asarray(w, dtype=np.float64)[..., None])
        return k * ((top - inner ** (k - 1)) @ density)

    limit = tail_limit(k)
    return interpolate_tail(tail, limit), limit


def studentized_sf(q, tail, limit: float, df: float) -> np.ndarray:
    """``P(max_family |Z_i - Z_j| / S > q)`` for an array of ``q`` from the normal tail
    ``Rbar`` (a callable on ``[0, limit]``, 0 beyond) of the family: the mixing over ``S``
    of the module docstring (NaN stays NaN, ``q <= 0`` gives 1)."""
    from numpy.polynomial.legendre import leggauss
    from scipy.special import gammaln

    if not df > 0:
        raise PdevalError(f"a studentised statistic needs df > 0, got df={df}")
    q = np.asarray(q, dtype=np.float64)
    flat = q.ravel()
    out = np.full(flat.shape, np.nan)
    valid = ~np.isnan(flat)
    values = np.maximum(flat[valid], 0.0)

    def rbar(w: np.ndarray) -> np.ndarray:
        return np.where(w < limit, tail(np.minimum(w, limit)), 0.0)

    if df >= ASYMPTOTIC_DF:
        result = rbar(values)
    else:
        x, weight = leggauss(NODES)
        sd = 1.0 / math.sqrt(2.0 * df)
        low, high = -max(12.0 * sd, 40.0 / df), 12.0 * sd
        t = 0.5 * (high - low) * x + 0.5 * (high + low)
        g = np.exp(
            math.log(2.0) + 0.5 * df * math.log(0.5 * df) - gammaln(0.5 * df) + df * t - 0.5 * df * np.exp(2.0 * t)
        ) * (0.5 * (high - low) * weight)
        s = np.exp(t)
        result = np.empty(values.size)
        step = max(1, CHUNK_ELEMENTS // NODES)
        for start in range(0, values.size, step):  # chunks of quantiles bound the memory
            result[start : start + step] = rbar(values[start : start + step, None] * s[None, :]) @ g
    out[valid] = np.clip(result, 0.0, 1.0)
    out[valid & (flat <= 0)] = 1.0
    return out.reshape(q.shape)


def studentized_range_sf(q, k: int, df: float) -> np.ndarray:
    """``P(Q > q)`` for the studentised range with ``k`` means and ``df`` degrees of freedom
    (module docstring), for an array of ``q`` (NaN stays NaN, ``q <= 0`` gives 1)."""
    if k < 2 or not df > 0:
        raise PdevalError(f"the studentised range needs k >= 2 means and df > 0, got k={k}, df={df}")
    tail, limit = _range_tail(int(k))
    return studentized_sf(q, tail, limit, df)
