"""Multiprecision twins of the discrete Gaussian primitives (mpmath, inside ``workdps``).

Series and truncation: the normaliser uses the Poisson form for σ² ≥ 1 (terms beyond
``K`` below 10^{−(dps+10)}), the direct sum otherwise; tails are direct sums truncated where
terms fall below 10^{−(dps+10)} of the first one.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from exactdp.numerics.exact import positive_fraction, to_fraction, to_int
from exactdp.numerics.precision import to_mpf

__all__ = ["log_normalizer_mp", "logpmf_mp", "pmf_mp", "tail_mp", "mgf_mp", "cf_mp",
           "log_theta_ratio_mp", "log_theta_real_mp"]


def _mp(q: Fraction):
    return to_mpf(q)


def log_normalizer_mp(sigma2, mu=0, dps: int = 50):
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_fraction(mu, "mu")
    with mpmath.workdps(dps + 10):
        S2, M = _mp(s2), _mp(mu)
        if s2 >= 1:
            K = int(math.ceil(math.sqrt((dps + 10) * 2.31 / (2 * math.pi**2 * float(s2))))) + 2
            z = mpmath.sqrt(2 * mpmath.pi * S2) * mpmath.fsum(
                mpmath.exp(-2 * mpmath.pi**2 * S2 * k * k) * mpmath.cos(2 * mpmath.pi * k * M) for k in range(-K, K + 1))
        else:
            c = int(mpmath.nint(M))
            half = int(math.ceil(math.sqrt(2 * float(s2) * (dps + 10) * 2.31))) + 2
            z = mpmath.fsum(mpmath.exp(-(x - M) ** 2 / (2 * S2)) for x in range(c - half, c + half + 1))
        out = mpmath.log(z)
    return +out


def logpmf_mp(x: int, sigma2, mu=0, dps: int = 50):
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_fraction(mu, "mu")
    with mpmath.workdps(dps + 10):
        out = -(_mp(Fraction(to_int(x, "x")) - mu)) ** 2 / (2 * _mp(s2)) - log_normalizer_mp(s2, mu, dps)
    return +out


def pmf_mp(x: int, sigma2, mu=0, dps: int = 50):
    with mpmath.workdps(dps + 10):
        return +mpmath.exp(logpmf_mp(x, sigma2, mu, dps))


def tail_mp(k: int, sigma2, mu=0, dps: int = 50):
    """``P(X ≥ k)`` at ``dps`` digits; the sum is truncated where terms fall below
    10^{−(dps+10)} of the first one (the rest is bounded by a geometric series)."""
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_fraction(mu, "mu")
    k = to_int(k, "k")
    with mpmath.workdps(dps + 10):
        S2, M = _mp(s2), _mp(mu)
        if k <= mu:  # complement: P(X ≥ k) = 1 − P(X ≤ k−1), the latter ≤ 1/2-ish
            lower = _lower_tail(k - 1, S2, M, dps)
            return +(1 - lower)
        return +_upper_tail(k, S2, M, dps)


def _upper_tail(k, S2, M, dps):
    lz = _log_norm_generic(S2, M, dps)
    terms = []
    x = k
    first = None
    while True:
        t = -(x - M) ** 2 / (2 * S2) - lz
        if first is None:
            first = t
        terms.append(mpmath.exp(t))
        if t < first - (dps + 12) * 2.31:
            break
        x += 1
    return mpmath.fsum(terms)


def _lower_tail(k, S2, M, dps):
    # P(X ≤ k) = P(−X ≥ −k) with −X ~ N_Z(−μ, σ²)
    return _upper_tail(-k, S2, -M, dps)


def _log_norm_generic(S2, M, dps):
    c = int(mpmath.nint(M))
    half = int(math.ceil(math.sqrt(2 * float(S2) * (dps + 12) * 2.31))) + 2
    return mpmath.log(mpmath.fsum(mpmath.exp(-(x - M) ** 2 / (2 * S2)) for x in range(c - half, c + half + 1)))


def mgf_mp(z, sigma2, dps: int = 50):
    """``E e^{zX}`` for X ~ N_Z(0, σ²) by the direct sum at ``dps`` digits."""
    s2 = positive_fraction(sigma2, "sigma2")
    with mpmath.workdps(dps + 10):
        S2 = _mp(s2)
        z = mpmath.mpc(z)
        c = int(mpmath.nint(z.real * S2))
        half = int(math.ceil(math.sqrt(2 * float(s2) * (dps + 12) * 2.31))) + 2
        num = mpmath.fsum(mpmath.exp(z * x - mpmath.mpf(x) ** 2 / (2 * S2)) for x in range(c - half, c + half + 1))
        h0 = int(math.ceil(math.sqrt(2 * float(s2) * (dps + 12) * 2.31))) + 2
        den = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * S2)) for x in range(-h0, h0 + 1))
        return +(num / den)


def cf_mp(t, sigma2, dps: int = 50):
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
    half = int(math.ceil(math.sqrt(2 * float(s2) * 230))) + 2
    ts = [(a * x - mpmath.mpf(x) ** 2 / (2 * s2), x) for x in range(x0 - half, x0 + half + 1)]
    tmax = max(t for t, _ in ts)
    num = mpmath.fsum(mpmath.exp(t - tmax + 1j * b * x) for t, x in ts)
    den = mpmath.fsum(mpmath.exp(t - tmax) for t, _ in ts)
    return mpmath.log(num / den)


def log_theta_real_mp(a, s2):
    """mp twin of :func:`exactdp.kernels.dgauss.log_theta_real`: ``log Θ(a)`` for real a
    (direct sum around the maximum)."""
    x0 = int(mpmath.nint(a * s2))
    half = int(math.ceil(math.sqrt(2 * float(s2) * 230))) + 2
    ts = [a * x - mpmath.mpf(x) ** 2 / (2 * s2) for x in range(x0 - half, x0 + half + 1)]
    tmax = max(ts)
    return tmax + mpmath.log(mpmath.fsum(mpmath.exp(t - tmax) for t in ts))
