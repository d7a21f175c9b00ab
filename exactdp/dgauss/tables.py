"""Multiprecision pmf tables of the discrete Gaussian in the kernel-coefficient form.

``P[E = z] = exp(−a z²)/Z(a)`` with ``a = 1/(2σ²)`` (see :mod:`exactdp.dgauss.conventions`)
and ``Z(a) = Σ_{z∈ℤ} exp(−a z²)`` (a Jacobi θ value).  A :class:`DGTable` holds the
weights on ``|z| ≤ K``, with ``K`` from :func:`cutoff` so that the rigorous tail bound
(:func:`~exactdp.dgauss.mp.tail_sum_bound`, proof: for ``z = K+1+j``,
``z² ≥ (K+1)² + 2(K+1)j``, then a geometric series, twice for both signs)::

    Σ_{|z|>K} exp(-a z²) ≤ 2 exp(-a (K+1)²) / (1 - exp(-2a(K+1)))

is below a requested level.  Tails beyond the table are summed directly
(:func:`~exactdp.dgauss.mp.gauss_tail_sum`), so tiny probabilities keep their relative
accuracy.

A sum of ``d`` independent ``DG`` variables with coefficient ``a`` is sub-Gaussian with
variance proxy ``d/(2a)`` (Canonne, Kamath and Steinke 2020, Cor. 9), so
``P[|S| ≥ K] ≤ 2 exp(-a K²/d)`` (:func:`subgaussian_cutoff`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.dgauss.mp import gauss_tail_sum, tail_sum_bound
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.precision import DPS_LOW, DPS_RESULT, to_mpf
from exactdp.numerics.search import least_int

__all__ = ["cutoff", "subgaussian_cutoff", "DGTable", "dg_table"]


def cutoff(a, log_eps: float) -> int:
    """Smallest ``K ≥ 1`` with :func:`~exactdp.dgauss.mp.tail_sum_bound` ``≤ exp(log_eps)``
    (log_eps < 0), decided at 30 digits (the bound decreases in K)."""
    guess = max(1, int(math.sqrt(max(-log_eps, 1.0) / float(a))))
    with mpmath.workdps(DPS_LOW):
        target = mpmath.mpf(log_eps)
        return least_int(lambda K: mpmath.log(tail_sum_bound(a, K)) <= target, guess, lowest=1)


def subgaussian_cutoff(a, d: int, log_eps: float) -> int:
    """Smallest ``K`` from ``⌈sqrt((log 2 − log_eps)·d/a)⌉`` up with
    ``2 exp(-a K²/d) ≤ exp(log_eps)`` (sum of d DG variables; float64 test)."""
    af = float(a)
    K0 = int(math.ceil(math.sqrt(max(math.log(2.0) - log_eps, 0.0) * d / af)))
    return least_int(lambda K: math.log(2.0) - af * K * K / d <= log_eps, K0, lowest=K0)


@dataclass(frozen=True)
class DGTable:
    """The pmf of ``DG`` with coefficient ``a`` on ``[-K, K]`` at ``dps`` digits.

    Attributes
    ----------
    a : Fraction
        Kernel coefficient.
    K : int
        Half-width of the table.
    weights : tuple of mpf
        ``exp(-a z²)`` for ``z = -K..K``.
    Z : mpf
        ``Σ_{|z|≤K} exp(-a z²)`` (the normaliser lacks at most ``tail``).
    tail : mpf
        Bound on ``Σ_{|z|>K} exp(-a z²)``; the pmf mass outside the table is at most
        ``tail / Z`` and every pmf value is over-estimated by a relative ``tail / Z`` at most.
    dps : int
        Working precision used.
    """

    a: Fraction
    K: int
    weights: tuple
    Z: object
    tail: object
    dps: int

    def pmf(self, z: int):
        """``exp(-a z²)/Z`` (0 outside the table; see ``tail``)."""
        if abs(z) > self.K:
            return mpmath.mpf(0)
        with mpmath.workdps(self.dps):
            return self.weights[z + self.K] / self.Z

    @property
    def outside(self):
        """Bound on the probability of ``|E| > K``."""
        with mpmath.workdps(self.dps):
            return self.tail / self.Z

    def survival(self, n: int):
        """``P[E ≥ n]``.

        Inside the table the true value exceeds the returned one by at most ``outside``
        (every in-table term is over-estimated by at most a relative ``tail/Z`` and the
        terms beyond ``K`` are missing).  For ``n > K`` the tail is summed directly
        (:func:`~exactdp.dgauss.mp.gauss_tail_sum`), so the (tiny) value is accurate to a
        relative ``tail/Z + 10^-(dps+5)``; for ``n ≤ -K`` the complement is used.
        """
        with mpmath.workdps(self.dps):
            rel = mpmath.mpf(10) ** (-(self.dps + 5))
            if n > self.K:
                return gauss_tail_sum(self.a, n, rel) / self.Z
            if n <= -self.K:
                return 1 - gauss_tail_sum(self.a, 1 - n, rel) / self.Z
            return mpmath.fsum(self.weights[n + self.K :]) / self.Z

    def floats(self) -> np.ndarray:
        """The pmf on ``[-K, K]`` as float64 (each value correctly rounded from ``dps`` digits)."""
        with mpmath.workdps(self.dps):
            return np.array([float(w / self.Z) for w in self.weights], dtype=np.float64)


_TABLES: dict = {}

#: largest K of a :func:`dg_table` (2K + 1 multiprecision weights; ~10⁶ take ~15 s): beyond,
#: a refusal rather than minutes to hours of enumeration (ρ ≈ 1e-10 at 20 digits)
MAX_TABLE_HALF_WIDTH = 500_000


def dg_table(a: Fraction, dps: int = DPS_RESULT, log_eps: float | None = None) -> DGTable:
    """A cached :class:`DGTable` whose tail bound is below ``exp(log_eps)``.

    ``log_eps`` defaults to ``-(dps + 5)·log(10)`` (the table is then as accurate as
    the working precision).
    """
    a = Fraction(a)
    if log_eps is None:
        log_eps = -(dps + 5) * math.log(10.0)
    key = (a, dps, round(log_eps, 6))
    hit = _TABLES.get(key)
    if hit is not None:
        return hit
    K = cutoff(a, log_eps)
    if K > MAX_TABLE_HALF_WIDTH:
        sigma2 = 1 / (2 * a)
        raise UncertifiedError(
            f"the discrete Gaussian of variance parameter 1/(2a) = {float(sigma2):.4g} needs a table of "
            f"{2 * K + 1:,} terms at this accuracy (limit {2 * MAX_TABLE_HALF_WIDTH + 1:,}): "
            f"try a larger budget (rho); the exact enumeration is within reach up to that limit")
    with mpmath.workdps(dps):
        am = to_mpf(a)
        weights = tuple(mpmath.exp(-am * z * z) for z in range(-K, K + 1))
        Z = mpmath.fsum(weights)
        tail = tail_sum_bound(am, K)
    table = DGTable(a=a, K=K, weights=weights, Z=Z, tail=tail, dps=dps)
    if len(_TABLES) > 256:
        _TABLES.clear()
    _TABLES[key] = table
    return table
