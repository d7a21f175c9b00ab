"""The discrete Gaussian N_Z(μ, σ²): ``Pr[X = x] ∝ exp(−(x − μ)²/(2σ²))``, x ∈ ℤ.

Float64 functions call the Numba kernels of :mod:`exactdp.kernels.dgauss`; each has a
multiprecision twin (suffix ``_mp``) evaluated with mpmath inside a ``workdps`` context.
The sampler is exact (Canonne, Kamath & Steinke 2020, Algorithms 1–3) and uses integer
arithmetic only.

Series and truncation (both twins):

* normaliser ``Z(μ, σ²) = Σ_x exp(−(x−μ)²/(2σ²))``: Poisson form
  ``sqrt(2πσ²)·Σ_k exp(−2π²σ²k²)·cos(2πkμ)`` for σ² ≥ 1 (|k| ≤ 3 in float64, terms
  beyond below e^{−18π²}), direct sum otherwise (terms beyond ``sqrt(2σ²·50)`` from the
  centre below e^{−50} relative).
* ``M(z) = E e^{zX}``, ``φ(t) = M(it)`` from the same theta function (see kernels).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.exact import positive_fraction, to_fraction, to_int
from exactdp.kernels.dgauss import log_theta, log_theta_real

__all__ = [
    "log_normalizer", "logpmf", "pmf", "tail", "log_mgf", "cf",
    "log_normalizer_mp", "logpmf_mp", "pmf_mp", "tail_mp", "mgf_mp", "cf_mp",
    "sample", "variance", "variance_float",
]


def _wrap(b: float) -> float:
    return math.remainder(b, 2 * math.pi)


def log_normalizer(sigma2, mu=0) -> float:
    """``log Σ_x exp(−(x−μ)²/(2σ²))`` (float64)."""
    s2 = float(positive_fraction(sigma2, "sigma2"))
    mu = to_fraction(mu, "mu")
    # Σ_x exp(−(x−μ)²/(2s²)) = e^{−μ²/(2s²)} Θ(μ/s²)
    return -float(mu) ** 2 / (2 * s2) + log_theta_real(float(mu) / s2, s2)


def logpmf(x: int, sigma2, mu=0) -> float:
    s2 = float(positive_fraction(sigma2, "sigma2"))
    return -((to_int(x, "x") - float(to_fraction(mu, "mu"))) ** 2) / (2 * s2) - log_normalizer(sigma2, mu)


def pmf(x: int, sigma2, mu=0) -> float:
    return math.exp(logpmf(x, sigma2, mu))


def variance(sigma2) -> float:
    """Var N_Z(0, σ²) (≤ σ²), float64 by the direct/Poisson series."""
    return variance_float(float(positive_fraction(sigma2, "sigma2")))


def variance_float(s2: float) -> float:
    """Var N_Z(0, s²) for a float s² (Poisson form for s² ≥ 1: the first correction term
    ``4π²s⁴ e^{−2π²s²}`` suffices in float64; direct sum over |x| ≤ 60 otherwise)."""
    if s2 >= 1.0:
        q = math.exp(-2 * math.pi**2 * s2)
        return s2 * (1 - 4 * math.pi**2 * s2 * q / (1 + 2 * q))
    x = np.arange(-60, 61, dtype=float)
    w = np.exp(-x * x / (2 * s2))
    return float((w * x * x).sum() / w.sum())


def log_mgf(z: complex, sigma2) -> complex:
    """``log E e^{zX}`` for X ~ N_Z(0, σ²) (complex z; float64)."""
    s2 = float(positive_fraction(sigma2, "sigma2"))
    z = complex(z)
    return log_theta(z.real, _wrap(z.imag), s2) - log_theta_real(0.0, s2)


def cf(t: float, sigma2) -> complex:
    """Characteristic function ``E e^{itX}`` (float64)."""
    import cmath

    return cmath.exp(log_mgf(complex(0.0, t), sigma2))


def tail(k: int, sigma2, mu=0) -> float:
    """``P(X ≥ k)`` as a float: the 20-digit twin :func:`tail_mp` rounded (relative accuracy)."""
    return float(tail_mp(k, sigma2, mu, dps=20))


# --------------------------------------------------------------------- mp twins
def _mp(q: Fraction):
    return mpmath.mpf(q.numerator) / q.denominator


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


# --------------------------------------------------------------------- sampler
def _bernoulli(p: Fraction, rng) -> bool:
    return rng.randrange(p.denominator) < p.numerator


def _bernoulli_exp(gamma: Fraction, rng) -> bool:
    """Bernoulli(exp(−γ)) for rational γ ≥ 0 (CKS Algorithm 1)."""
    while gamma > 1:
        if not _bernoulli_exp(Fraction(1), rng):
            return False
        gamma -= 1
    k = 1
    while _bernoulli(gamma / k, rng):
        k += 1
    return k % 2 == 1


def _discrete_laplace(t: int, rng) -> int:
    """P[X = x] ∝ exp(−|x|/t) (CKS Algorithm 2)."""
    while True:
        u = rng.randrange(t)
        if not _bernoulli_exp(Fraction(u, t), rng):
            continue
        v = 0
        while _bernoulli_exp(Fraction(1), rng):
            v += 1
        x = u + t * v
        y = rng.randrange(2)
        if y == 1 and x == 0:
            continue
        return -x if y else x


def sample(sigma2, size: int = 1, seed=None, mu: int = 0) -> list[int]:
    """Exact samples of N_Z(μ, σ²) (CKS Algorithm 3; integer arithmetic only).

    Parameters
    ----------
    sigma2 : Fraction-like
    size : int
    seed : int or random.Random, optional
        For reproducible output; by default the OS entropy source is used.
    mu : int
        Integer location.

    Notes
    -----
    Method: rejection from a discrete Laplace with scale ``t = ⌊σ⌋ + 1`` using exact
    Bernoulli(exp(−γ)) trials on rationals.  No floating point is involved, so the
    output distribution is exactly N_Z(μ, σ²).  Reference: Canonne, Kamath & Steinke,
    "The Discrete Gaussian for Differential Privacy", NeurIPS 2020.
    """
    s2 = positive_fraction(sigma2, "sigma2")
    mu = to_int(mu, "mu")
    rng = seed if isinstance(seed, random.Random) else (random.Random(seed) if seed is not None else random.SystemRandom())
    t = math.isqrt(s2.numerator // s2.denominator) + 1
    out = []
    while len(out) < size:
        y = _discrete_laplace(t, rng)
        gamma = (abs(y) - s2 / t) ** 2 / (2 * s2)
        if _bernoulli_exp(gamma, rng):
            out.append(y + mu)
    return out
