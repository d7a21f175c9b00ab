"""Multiprecision twins of the discrete Gaussian primitives (mpmath, inside ``workdps``).

Series and truncation: the normaliser uses the Poisson form for σ² ≥ 1 (terms beyond
``K`` below 10^{−(dps+10)}), the direct sum otherwise; direct sums keep the terms within
:func:`_half_width` of their centre (the rest below e^{−depth} of the largest term);
tails are summed until the bound :func:`shifted_tail_bound` on the rest is below
10^{−(dps+12)} of the first term.

Also here: the rigorous bounds on Gaussian tail sums used by every truncation
(:func:`shifted_tail_bound`, :func:`half_tail_sum_bound`, :func:`tail_sum_bound`), the tail
sum :func:`gauss_tail_sum` itself, and the multiprecision theta twins of
:mod:`exactdp.kernels.dgauss` (:func:`log_theta_ratio_mp`, :func:`log_theta_real_mp`) and
the real-shift ratio :func:`log_theta_shift_ratio_mp` (Poisson summation, relative accuracy
when the ratio is close to 1).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from exactdp.numerics.exact import positive_fraction, to_fraction, to_int
from exactdp.numerics.precision import DPS_ANALYSIS, DPS_GUARD, to_mpf

__all__ = ["log_normalizer_mp", "logpmf_mp", "pmf_mp", "tail_mp", "mgf_mp", "cf_mp",
           "shifted_tail_bound", "half_tail_sum_bound", "tail_sum_bound", "gauss_tail_sum",
           "log_theta_ratio_mp", "log_theta_real_mp", "log_theta_shift_ratio_mp"]

#: e-folds per decimal digit used to size truncation windows (ln 10 = 2.3026, rounded up).
_LN10_UP = 2.31


def _half_width(s2, depth) -> int:
    """Half-width ``h`` of a direct sum of ``exp(−(x−c)²/(2s²))`` around its centre: the
    terms with ``|x − c| > h`` are below ``e^{−depth}`` of the largest (``h²/(2s²) ≥ depth``)."""
    return int(math.ceil(math.sqrt(2 * float(s2) * depth))) + 2


# --------------------------------------------------------------------- tail bounds
def shifted_tail_bound(a, y):
    """Upper bound on ``Σ_{j≥0} exp(−a (y + j)²)`` for real ``y > 0`` and ``a > 0``:
    ``exp(−a y²)/(1 − exp(−2a y))`` (from ``(y+j)² ≥ y² + 2yj``: a geometric series).
    mpf at the current precision; ``a`` may be a Fraction."""
    a = to_mpf(a)
    y = to_mpf(y)
    return mpmath.exp(-a * y * y) / -mpmath.expm1(-2 * a * y)


def half_tail_sum_bound(a, K: int):
    """Upper bound on ``Σ_{z>K} exp(-a z²)`` = exp(-a(K+1)²)/(1-exp(-2a(K+1))) (K ≥ 0)."""
    return shifted_tail_bound(a, max(int(K), 0) + 1)


def tail_sum_bound(a, K: int):
    """Upper bound on ``Σ_{|z|>K} exp(-a z²)`` (mpf, current precision)."""
    return 2 * half_tail_sum_bound(a, K)


def gauss_tail_sum(a, y, rel):
    """``Σ_{j≥0} exp(−a (y + j)²)`` for real ``y > 0``, at the current precision.

    Terms are added until :func:`shifted_tail_bound` of the rest is at most ``rel`` times
    the first term, so the sum keeps a relative accuracy ``rel`` (plus rounding) however
    small it is."""
    a = to_mpf(a)
    y = to_mpf(y)
    terms = []
    j = 0
    while True:
        terms.append(mpmath.exp(-a * (y + j) ** 2))
        if shifted_tail_bound(a, y + j + 1) <= rel * terms[0]:
            break
        j += 1
    return mpmath.fsum(terms)


# --------------------------------------------------------------------- pmf, tails, MGF
def log_normalizer_mp(sigma2, mu=0, dps: int = DPS_ANALYSIS):
    """``log Σ_x exp(−(x−μ)²/(2σ²))`` at ``dps`` digits (returned at the caller's precision)."""
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_fraction(mu, "mu")
    with mpmath.workdps(dps + DPS_GUARD):
        S2, M = to_mpf(s2), to_mpf(mu)
        if s2 >= 1:
            K = int(math.ceil(math.sqrt((dps + DPS_GUARD) * _LN10_UP / (2 * math.pi**2 * float(s2))))) + 2
            z = mpmath.sqrt(2 * mpmath.pi * S2) * mpmath.fsum(
                mpmath.exp(-2 * mpmath.pi**2 * S2 * k * k) * mpmath.cos(2 * mpmath.pi * k * M)
                for k in range(-K, K + 1))
        else:
            c = int(mpmath.nint(M))
            half = _half_width(s2, (dps + DPS_GUARD) * _LN10_UP)
            z = mpmath.fsum(mpmath.exp(-(x - M) ** 2 / (2 * S2)) for x in range(c - half, c + half + 1))
        out = mpmath.log(z)
    return +out


def logpmf_mp(x: int, sigma2, mu=0, dps: int = DPS_ANALYSIS):
    """``log P[X = x]`` at ``dps`` digits."""
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_fraction(mu, "mu")
    with mpmath.workdps(dps + DPS_GUARD):
        out = -(to_mpf(Fraction(to_int(x, "x")) - mu)) ** 2 / (2 * to_mpf(s2)) - log_normalizer_mp(s2, mu, dps)
    return +out


def pmf_mp(x: int, sigma2, mu=0, dps: int = DPS_ANALYSIS):
    """``P[X = x]`` at ``dps`` digits."""
    with mpmath.workdps(dps + DPS_GUARD):
        return +mpmath.exp(logpmf_mp(x, sigma2, mu, dps))


def tail_mp(k: int, sigma2, mu=0, dps: int = DPS_ANALYSIS):
    """``P(X ≥ k)`` at ``dps`` digits.

    The sum on the far side of μ is :func:`gauss_tail_sum` (relative accuracy
    10^{−(dps+12)}, however small the tail) over :func:`log_normalizer_mp`; for ``k ≤ μ``
    the complement of the lower tail, which is then ≤ 1/2-ish."""
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_fraction(mu, "mu")
    k = to_int(k, "k")
    with mpmath.workdps(dps + DPS_GUARD):
        if k <= mu:  # complement: P(X ≥ k) = 1 − P(X ≤ k−1) = 1 − P(−X ≥ 1−k), −X ~ N_Z(−μ, σ²)
            return +(1 - _upper_tail(1 - k, s2, -mu, dps))
        return +_upper_tail(k, s2, mu, dps)


def _upper_tail(k: int, s2: Fraction, mu: Fraction, dps: int):
    """``P(X ≥ k)`` for ``k > μ`` (current precision)."""
    rel = mpmath.mpf(10) ** (-(dps + 12))
    total = gauss_tail_sum(1 / (2 * s2), k - mu, rel)
    return total / mpmath.exp(log_normalizer_mp(s2, mu, dps + 2))


def mgf_mp(z, sigma2, dps: int = DPS_ANALYSIS):
    """``E e^{zX}`` for X ~ N_Z(0, σ²) at ``dps`` digits: the tilted direct sum around its
    maximum over :func:`log_normalizer_mp`."""
    s2 = positive_fraction(sigma2, "sigma2")
    with mpmath.workdps(dps + DPS_GUARD):
        S2 = to_mpf(s2)
        z = mpmath.mpc(z)
        c = int(mpmath.nint(z.real * S2))
        half = _half_width(s2, (dps + 12) * _LN10_UP)
        num = mpmath.fsum(mpmath.exp(z * x - mpmath.mpf(x) ** 2 / (2 * S2)) for x in range(c - half, c + half + 1))
        return +(num / mpmath.exp(log_normalizer_mp(s2, 0, dps + 2)))


def cf_mp(t, sigma2, dps: int = DPS_ANALYSIS):
    """Characteristic function ``E e^{itX}`` at ``dps`` digits."""
    return mgf_mp(mpmath.mpc(0, t), sigma2, dps)


# --------------------------------------------------------------------- theta twins
def log_theta_ratio_mp(a, b, s2):
    """mp twin of :func:`exactdp.kernels.dgauss.log_theta_ratio`: ``log[Θ(a+ib)/Θ(a)]``
    (b in [−π, π]; Poisson form with |k| ≤ 8 for s² ≥ 1, else a ±sqrt(460 s²)-wide direct sum)."""
    pi2 = 2 * mpmath.pi
    if s2 >= 1:
        num = mpmath.fsum(mpmath.exp(-s2 * (b - pi2 * k) ** 2 / 2 + 1j * s2 * a * (b - pi2 * k)) for k in range(-8, 9))
        den = mpmath.fsum(mpmath.exp(-s2 * (pi2 * k) ** 2 / 2 - 1j * s2 * a * pi2 * k) for k in range(-8, 9))
        return mpmath.log(num) - mpmath.log(den)
    x0 = int(mpmath.nint(a * s2))
    half = _half_width(s2, 230)
    ts = [(a * x - mpmath.mpf(x) ** 2 / (2 * s2), x) for x in range(x0 - half, x0 + half + 1)]
    tmax = max(t for t, _ in ts)
    num = mpmath.fsum(mpmath.exp(t - tmax + 1j * b * x) for t, x in ts)
    den = mpmath.fsum(mpmath.exp(t - tmax) for t, _ in ts)
    return mpmath.log(num / den)


def log_theta_real_mp(a, s2, depth: float = 230):
    """mp twin of :func:`exactdp.kernels.dgauss.log_theta_real`: ``log Θ(a)`` for real a
    (direct sum around the maximum, terms below ``e^{−depth}`` of it dropped)."""
    x0 = int(mpmath.nint(a * s2))
    half = _half_width(s2, depth)
    ts = [a * x - mpmath.mpf(x) ** 2 / (2 * s2) for x in range(x0 - half, x0 + half + 1)]
    tmax = max(ts)
    return tmax + mpmath.log(mpmath.fsum(mpmath.exp(t - tmax) for t in ts))


def log_theta_real_deep_mp(a, s2, dps: int):
    """``log Θ(a)`` for real a and rational s² to ``dps`` digits: the Poisson form
    ``μ²/(2s²) + ½log(2πs²) + log Σ_k e^{−2π²s²k²} cos 2πkμ`` (μ = a s²) for s² ≥ 1, else
    the direct sum around the maximum; both truncated below 10^{−(dps+5)}."""
    s2f = float(s2)
    S2 = to_mpf(s2)
    if s2f >= 1.0:
        mu = a * S2
        K = int(math.ceil(math.sqrt((dps * _LN10_UP + 12) / (2 * math.pi**2 * s2f)))) + 1
        ser = 1 + 2 * mpmath.fsum(mpmath.exp(-2 * mpmath.pi**2 * S2 * k * k) * mpmath.cos(2 * mpmath.pi * k * mu)
                                  for k in range(1, K + 1))
        return mu * mu / (2 * S2) + mpmath.log(2 * mpmath.pi * S2) / 2 + mpmath.log(ser)
    return log_theta_real_mp(a, S2, dps * _LN10_UP + 12)


def log_theta_shift_ratio_mp(t, s2):
    """``log(θ(t)/θ(0))`` for the real shift ``t``, ``θ(t) = Σ_x exp(−(x−t)²/(2s²))``, at
    the current precision, with relative accuracy in both regimes.

    * s² ≥ 1 (as the kernels' ``POISSON_MIN_S2``): Poisson summation,
      ``θ(t)/θ(0) = (1 + 2Σ q^{k²} cos 2πkt)/(1 + 2Σ q^{k²})``, ``q = e^{−2π²s²}``; the
      difference from 1 is computed as ``−4Σ q^{k²} sin²(πkt)`` (over the denominator) to
      keep relative accuracy when it is tiny, and the series stops once ``q^{k²}`` is below
      10^{−(dps+5)}.
    * s² < 1: the two direct sums (positive terms, truncated below 10^{−(dps+10)} of the
      largest); there the Poisson series would converge slowly and cancel.

    (In the tilt form of :func:`log_theta_real_mp`, ``θ(t) = e^{−t²/(2s²)}·Θ(t/s²)``; these
    forms avoid the cancellation of that difference.)
    """
    if s2 < 1:
        half = _half_width(s2, (mpmath.mp.dps + DPS_GUARD) * _LN10_UP)

        def theta(c):
            x0 = int(mpmath.nint(c))
            return mpmath.fsum(mpmath.exp(-(x - c) ** 2 / (2 * s2)) for x in range(x0 - half, x0 + half + 1))

        return mpmath.log(theta(t) / theta(mpmath.mpf(0)))
    q = mpmath.exp(-2 * mpmath.pi**2 * s2)
    if q == 0:
        return mpmath.mpf(0)
    num = mpmath.mpf(0)
    den = mpmath.mpf(1)
    k = 1
    while True:
        qk = q ** (k * k)
        num += -4 * qk * mpmath.sin(mpmath.pi * k * t) ** 2
        den += 2 * qk
        if qk < mpmath.mpf(10) ** (-(mpmath.mp.dps + 5)) or k > 10**4:
            break
        k += 1
    return mpmath.log1p(num / den)
