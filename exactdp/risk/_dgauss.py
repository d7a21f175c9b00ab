"""Discrete Gaussian helpers of the disclosure-risk package (private).

The noise added to a count is ``DG(0, σ²)``: ``P[E = z] = exp(-a z²) / Z(a)`` with the
*kernel coefficient* ``a = 1/(2σ²)`` and ``Z(a) = Σ_{z∈ℤ} exp(-a z²)`` (a Jacobi θ value).
Two conventions map a zCDP budget ρ to σ²:

* ``"paper"`` (Kazan and Reiter, arXiv 2204.04253): ``σ² = 1/(2ρ)``, so ``a = ρ``;
* ``"production"`` (Census DAS, change-one-record ρ): ``σ² = 1/ρ``, so ``a = ρ/2``.

Tail bound used everywhere (proof: for ``z = K+1+j``, ``z² ≥ (K+1)² + 2(K+1)j``, then
sum the geometric series, twice for both signs)::

    Σ_{|z|>K} exp(-a z²) ≤ 2 exp(-a (K+1)²) / (1 - exp(-2a(K+1))).

A sum of ``d`` independent ``DG`` variables with coefficient ``a`` is sub-Gaussian with
variance proxy ``d/(2a)`` (Canonne, Kamath and Steinke 2020, Cor. 9), so
``P[|S| ≥ K] ≤ 2 exp(-a K²/d)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import to_mpf

__all__ = [
    "CONVENTIONS",
    "coefficient",
    "variance",
    "mpf_of",
    "tail_sum_bound",
    "half_tail_sum_bound",
    "cutoff",
    "subgaussian_cutoff",
    "DGTable",
    "dg_table",
    "SumPMF",
    "sum_pmf",
    "UNIT_ROUNDOFF",
]

#: Noise conventions: name -> (description, factor f with a = f·ρ).
CONVENTIONS = {
    "paper": ("σ² = 1/(2ρ) (Kazan and Reiter's DG(0, 1/(2ρ)))", Fraction(1)),
    "production": ("σ² = 1/ρ (Census DAS production, change-one-record ρ)", Fraction(1, 2)),
}

#: Unit roundoff of IEEE binary64.
UNIT_ROUNDOFF = 2.0**-53


def check_convention(convention: str) -> str:
    if convention not in CONVENTIONS:
        raise InputError("convention", convention, f"must be one of {sorted(CONVENTIONS)}")
    return convention


def coefficient(rho, convention: str = "paper") -> Fraction:
    """Kernel coefficient ``a`` (``P[E=z] ∝ exp(-a z²)``) for budget ``rho``.

    Parameters
    ----------
    rho : rational
        The zCDP budget of the noisy count (> 0).
    convention : {"paper", "production"}
        ``"paper"``: σ² = 1/(2ρ), a = ρ; ``"production"``: σ² = 1/ρ, a = ρ/2.

    Returns
    -------
    Fraction

    Notes
    -----
    Exact rational arithmetic.  ``DG(0, σ²)`` has ``P[E = z] ∝ exp(-z²/(2σ²))``
    (Canonne, Kamath and Steinke 2020); Kazan and Reiter use σ² = 1/(2ρ).
    """
    rho = to_fraction(rho, "rho")
    if rho <= 0:
        raise InputError("rho", rho, "must be > 0")
    return CONVENTIONS[check_convention(convention)][1] * rho


def variance(rho, convention: str = "paper") -> Fraction:
    """The variance parameter σ² = 1/(2a) of the noise for budget ``rho``.

    Notes
    -----
    Exact: ``1/(2ρ)`` (paper) or ``1/ρ`` (production).  This is the parameter of the
    discrete Gaussian, not exactly its variance (which is slightly smaller; Canonne,
    Kamath and Steinke 2020).
    """
    return 1 / (2 * coefficient(rho, convention))


def mpf_of(frac: Fraction):
    """A Fraction as an mpf at the current working precision."""
    return to_mpf(frac)


def tail_sum_bound(a, K: int):
    """Upper bound on ``Σ_{|z|>K} exp(-a z²)`` (mpf, current precision)."""
    return 2 * half_tail_sum_bound(a, K)


def half_tail_sum_bound(a, K: int):
    """Upper bound on ``Σ_{z>K} exp(-a z²)`` = exp(-a(K+1)²)/(1-exp(-2a(K+1)))."""
    a = mpmath.mpf(a) if not isinstance(a, Fraction) else mpf_of(a)
    K = max(int(K), 0)
    return mpmath.exp(-a * (K + 1) ** 2) / -mpmath.expm1(-2 * a * (K + 1))


def cutoff(a, log_eps: float) -> int:
    """Smallest ``K ≥ 1`` with :func:`tail_sum_bound` ``≤ exp(log_eps)`` (log_eps < 0)."""
    af = float(a)
    K = max(1, int(math.sqrt(max(-log_eps, 1.0) / af)))
    with mpmath.workdps(30):
        target = mpmath.mpf(log_eps)
        while mpmath.log(tail_sum_bound(a, K)) > target:
            K += max(1, K // 8)
        while K > 1 and mpmath.log(tail_sum_bound(a, K - 1)) <= target:
            K -= 1
    return K


def subgaussian_cutoff(a, d: int, log_eps: float) -> int:
    """Smallest ``K`` with ``2 exp(-a K²/d) ≤ exp(log_eps)`` (sum of d DG variables)."""
    af = float(a)
    K = int(math.ceil(math.sqrt(max(math.log(2.0) - log_eps, 0.0) * d / af)))
    while math.log(2.0) - af * K * K / d > log_eps:
        K += 1
    return K


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

    def _far_tail(self, n: int):
        """``Σ_{z ≥ n} exp(-a z²)`` for ``n > K``, summed until the remainder bound is below
        a relative 10^-(dps+5) (so tiny tails keep their relative accuracy)."""
        a = mpf_of(self.a)
        terms = []
        z = n
        target = mpmath.mpf(10) ** (-(self.dps + 5))
        while True:
            terms.append(mpmath.exp(-a * z * z))
            if half_tail_sum_bound(a, z) <= target * terms[0]:
                break
            z += 1
        return mpmath.fsum(terms)

    def survival(self, n: int):
        """``P[E ≥ n]``.

        Inside the table the true value exceeds the returned one by at most ``outside``
        (every in-table term is over-estimated by at most a relative ``tail/Z`` and the
        terms beyond ``K`` are missing).  For ``n > K`` the tail is summed directly, so the
        (tiny) value is accurate to a relative ``tail/Z + 10^-(dps+5)``; for ``n ≤ -K`` the
        complement is used.
        """
        with mpmath.workdps(self.dps):
            if n > self.K:
                return self._far_tail(n) / self.Z
            if n <= -self.K:
                return 1 - self._far_tail(1 - n) / self.Z
            return mpmath.fsum(self.weights[n + self.K :]) / self.Z

    def floats(self) -> np.ndarray:
        """The pmf on ``[-K, K]`` as float64 (each value correctly rounded from ``dps`` digits)."""
        with mpmath.workdps(self.dps):
            return np.array([float(w / self.Z) for w in self.weights], dtype=np.float64)


_TABLES: dict = {}


def dg_table(a: Fraction, dps: int = 40, log_eps: float | None = None) -> DGTable:
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
    with mpmath.workdps(dps):
        am = mpf_of(a)
        weights = tuple(mpmath.exp(-am * z * z) for z in range(-K, K + 1))
        Z = mpmath.fsum(weights)
        tail = tail_sum_bound(am, K)
    table = DGTable(a=a, K=K, weights=weights, Z=Z, tail=tail, dps=dps)
    if len(_TABLES) > 256:
        _TABLES.clear()
    _TABLES[key] = table
    return table


@dataclass(frozen=True)
class SumPMF:
    """pmf of ``E_1 + … + E_d`` (iid ``DG`` with coefficient ``a``), in float64.

    Attributes
    ----------
    a : Fraction
    d : int
    offset : int
        ``values[i]`` is the probability of ``offset + i``.
    values : numpy.ndarray
        Read-only float64 array; truncated-component convolution ``h̃ ≤ h``.
    rel_err : float
        Relative rounding error bound of every entry that is ≥ 1e-290.
    abs_err : float
        Bound on ``h(u) - h̃(u)`` for every ``u`` (also outside the array), from truncating
        each component at ``|z| ≤ K`` (≤ d·P[|E| > K]) plus underflow.
    deficit : float
        Bound on the mass missing from ``h̃`` because of the component truncation
        (``≤ d·P[|E| > K]``); the binary64 rounding of the total is within ``rel_err``.

    Notes
    -----
    Direct (not FFT) convolution of non-negative arrays: each entry carries a relative
    error ≤ γ_n per convolution (Higham, *Accuracy and Stability*, §3.1), so after d − 1
    convolutions of (2K+1)-term kernels ``rel_err ≤ 1.01·d·(2K+2)·u``.
    """

    a: Fraction
    d: int
    offset: int
    values: np.ndarray
    rel_err: float
    abs_err: float
    deficit: float

    def __call__(self, u):
        """Vectorised lookup (0 outside the support)."""
        u = np.asarray(u)
        idx = u - self.offset
        ok = (idx >= 0) & (idx < self.values.size)
        out = np.zeros(u.shape, dtype=np.float64)
        out[ok] = self.values[idx[ok]]
        return out


_SUMS: dict = {}


def sum_pmf(a: Fraction, d: int) -> SumPMF:
    """Cached :class:`SumPMF` with component tail ≤ 1e-60.

    The truncation error ``≤ d·1e-60`` per entry is reported in ``abs_err`` and
    ``deficit``; callers turn it into relative bounds where they use the values.
    """
    a = Fraction(a)
    d = int(d)
    key = (a, d)
    hit = _SUMS.get(key)
    if hit is not None:
        return hit
    log_eps = -60 * math.log(10.0)
    table = dg_table(a, dps=30, log_eps=log_eps)
    comp = table.floats()
    K = table.K
    vals = comp.copy()
    for _ in range(d - 1):
        vals = np.convolve(vals, comp)
    vals.setflags(write=False)
    with mpmath.workdps(30):
        outside = float(table.outside)
    rel = 1.01 * d * (2 * K + 2) * UNIT_ROUNDOFF
    abs_err = d * outside + 1e-300 * (2 * K + 1) * d
    res = SumPMF(a=a, d=d, offset=-d * K, values=vals, rel_err=rel, abs_err=abs_err, deficit=d * outside)
    if len(_SUMS) > 32:
        _SUMS.clear()
    _SUMS[key] = res
    return res
