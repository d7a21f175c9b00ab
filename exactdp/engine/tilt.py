"""Exact pieces of an exponential tilt (shared by the engine's methods).

For a group of m iid N_Z(0, s²) with lattice weight A and a tilt λ (a float taken as an
exact rational), the tilted centre ``μ = A λ s² = n0 + f`` splits into an integer n0 and
|f| ≤ 1/2, exactly (Fractions).  The log-MGF of the group is

    m [log Θ(Aλ) − log Θ(0)] = m [μ²/(2s²) + log θ̃(f) − log θ̃(0)],   θ̃(f) = Σ_y e^{−(y−f)²/(2s²)},

with ``log θ̃(f) = ½ log(2πs²) + ℓ_P(f)`` (Poisson form, used for s² ≥ 1) or
``−f²/(2s²) + ℓ_D(f)`` (direct form, s² < 1), where ℓ_P, ℓ_D are log1p of bounded sums.
The quadratic parts are exact rationals; ``κ = Σ m [ℓ(f) − ℓ(0)]`` is evaluated here at
30 digits (truncation of either series below e^{−60} relative per term, so κ is exact to
≤ 1e-25·Σm).  Groups with s² ≥ GAUSS_S2 have |ℓ_P(f) − ℓ_P(0)| ≤ 4e^{−2π²s²}/(1 − 2e^{−2π²s²})
(< 1e-85): they are left out of κ and their total is returned by :func:`gauss_slack`.
:func:`sieve_umax` is the per-group node bound of the quadrature's sieve (a function of
the group's σ², count and the sieve level only).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.kernels.dgauss import tilted_moments
from exactdp.kernels.quadfinish import HUGE_MU as KERNEL_HUGE_MU
from exactdp.kernels.sieve_bound import POW2
from exactdp.kernels.sieve_bound import sieve_umax as sieve_umax_kernel
from exactdp.kernels.sieve_bound import sieve_umaxes as sieve_umaxes_kernel
from exactdp.numerics.precision import EPS64, to_mpf

__all__ = ["GAUSS_S2", "HUGE_MU", "frac_parts", "ell_ratio_mp", "gauss_slack", "log_as_value", "mp_bits_for",
           "exact_saddle", "log_mgf_parts", "sieve_umax", "sieve_umaxes"]

#: variances from which a group counts as Gaussian (its κ is below 1e-85 relative)
GAUSS_S2 = 10.0
_DPS = 30


def frac_parts(weights, s2q, lamq: Fraction, exact=None):
    """``(n0, f_float, f_exact)`` per group: ``A λ s² = n0 + f``, n0 = round, |f| ≤ 1/2.

    ``exact`` (a set of group indices, default all) limits which groups get their exact f
    (None in the others' place: building a Fraction costs a gcd)."""
    n0, ff, fq = [], [], []
    rational_lam = isinstance(lamq, (Fraction, int))
    if rational_lam:
        ln, ld = lamq.numerator, lamq.denominator
    for g, (a, s2) in enumerate(zip(weights, s2q)):
        if rational_lam and isinstance(s2, (Fraction, int)):
            # integers only: A·s²·λ = num/den, rounded half to even (as Fraction.__round__)
            num, den = int(a) * s2.numerator * ln, s2.denominator * ld
            n, rem = divmod(num, den)
            if 2 * rem > den or (2 * rem == den and n % 2):
                n += 1
            rn = num - n * den
            n0.append(n)
            fq.append(Fraction(rn, den) if exact is None or g in exact else None)
            ff.append(rn / den)  # = float(Fraction(rn, den)): the correctly rounded quotient
            continue
        mu = int(a) * s2 * lamq
        n = round(mu)
        f = mu - n
        n0.append(int(n))
        fq.append(f if exact is None or g in exact else None)
        ff.append(float(f))
    return n0, ff, fq


def _ell(s2, f):
    """ℓ(f) at the current precision (Poisson form for s² ≥ 1, else direct)."""
    if float(s2) >= 1.0:
        S2 = to_mpf(s2)
        F = to_mpf(f)
        tot = mpmath.mpf(0)
        for k in range(1, 6):
            tot += 2 * mpmath.exp(-2 * mpmath.pi**2 * S2 * k * k) * mpmath.cos(2 * mpmath.pi * k * F)
        return mpmath.log1p(tot)
    Y = int(math.ceil(math.sqrt(120.0 * float(s2)))) + 2
    S2 = to_mpf(s2)
    F = to_mpf(f)
    tot = mpmath.mpf(0)
    for y in range(-Y, Y + 1):
        if y:
            tot += mpmath.exp(-y * (y - 2 * F) / (2 * S2))
    return mpmath.log1p(tot)


def ell_ratio_mp(items):
    """``(κ, error bound)`` for items ``(s2 exact, m, f exact)``: κ = Σ m [ℓ(f) − ℓ(0)].

    Each term is first evaluated in float64 (log1p of a bounded sum, absolute error
    ≤ 8u·(|ℓ(f)| + |ℓ(0)| + 1e-300)); when the accumulated bound exceeds 1e-13 the sum is
    redone at 30 digits."""
    if not items:
        return 0.0, 0.0
    tot = 0.0
    err = 0.0
    msum = 0
    for s2, m, f in items:
        s2f = float(s2)
        a = _ell_float(s2f, float(f))
        b = _ell_float_zero(s2f)
        tot += m * (a - b)
        err += m * 8 * EPS64 * (abs(a) + abs(b)) + EPS64 * abs(tot)
        msum += m
    if err <= 1e-13:
        return tot, err + 1e-25 * msum
    with mpmath.workdps(_DPS):
        acc = mpmath.mpf(0)
        for s2, m, f in items:
            acc += m * (_ell(s2, f) - _ell(s2, 0))
        return +acc, 1e-25 * msum


@functools.lru_cache(maxsize=4096)
def _ell_float_zero(s2: float) -> float:
    """ℓ(0) in float64 (a pure function of s², asked once per tilt and group)."""
    return _ell_float(s2, 0.0)


def _ell_float(s2: float, f: float) -> float:
    if s2 >= 1.0:
        tot = 0.0
        for k in range(1, 6):
            e = -2 * math.pi**2 * s2 * k * k
            if e < -745:
                break
            tot += 2 * math.exp(e) * math.cos(2 * math.pi * k * f)
        return math.log1p(tot)
    Y = int(math.ceil(math.sqrt(120.0 * s2))) + 2
    tot = 0.0
    for y in range(-Y, Y + 1):
        if y:
            e = -y * (y - 2 * f) / (2 * s2)
            if e > -745:
                tot += math.exp(e)
    return math.log1p(tot)


def gauss_slack(s2, m) -> float:
    """Relative effect of leaving the Gaussian groups (s² ≥ GAUSS_S2) out of κ."""
    tot = 0.0
    for s, c in zip(s2, m):
        if s >= GAUSS_S2:
            q = math.exp(-2 * math.pi**2 * s)
            tot += int(c) * 4 * q / (1 - 2 * q)
    return tot


def mp_bits_for(x) -> int:
    """Working precision (bits) for a log of size |x| to be carried to ~1e-20 absolute."""
    try:
        mag = abs(float(x))
    except OverflowError:
        mag = math.inf
    if math.isfinite(mag):
        return max(64, int(mag).bit_length() + 80)
    fx = Fraction(x)
    return max(64, fx.numerator.bit_length() - fx.denominator.bit_length() + 80)


def log_as_value(log_est, rel: float):
    """A log for a TailValue: a float when |log| < 1e4 (its rounding added to ``rel``),
    otherwise the mpmath number itself."""
    if isinstance(log_est, float):
        return log_est, rel
    if abs(log_est) < 1e4:
        f = float(log_est)
        return f, rel + 2 * EPS64 * abs(f)
    return log_est, rel


#: above this tilted centre |A λ s²| a float λ cannot place the centre to 1e-4: tilts are
#: then exact rationals from :func:`exact_saddle` (defined with the kernel that tests it)
HUGE_MU = KERNEL_HUGE_MU


def exact_saddle(weights, counts, s2q, s: int, vq: Fraction) -> Fraction:
    """The saddle point ``K'(λ) = s`` as an exact rational, for huge thresholds: Newton on
    the bounded periodic correction of ``K'(λ) = λV' + Σ m_g A_g (E[Y_g] − f_g)``, with
    the integer parts ``n0_g`` exact (|E[Y] − f| ≤ 1/2, so λ = s/V' is within
    ``Σ m A /(2V')`` of the answer from the start)."""
    lam = Fraction(s) / vq
    cap = sum(int(m) * abs(int(a)) for a, m in zip(weights, counts)) / float(vq)
    for _ in range(40):
        n0, ff, fq = frac_parts(weights, s2q, lam)
        resid = float(s - sum(int(m) * int(a) * n for a, m, n in zip(weights, counts, n0)))
        k2 = 0.0
        for a, m, s2, f in zip(weights, counts, s2q, ff):
            mean, var = tilted_moments(f, float(s2))
            resid -= int(m) * int(a) * mean
            k2 += int(m) * int(a) ** 2 * var
        if abs(resid) <= 1e-6 * max(1.0, k2 ** 0.5) or k2 <= 0:
            break
        step = resid / k2
        lam += Fraction(max(-cap, min(cap, step)))
    return lam


def log_mgf_parts(weights, counts, s2q, t: Fraction):
    """``K(t) = log E e^{tS}`` of ``S = Σ_g A_g Σ_k X_{g,k}`` as ``(exact, κ, κ_err)``:
    ``exact = t²V'/2 − Σ_{s²<1} m f²/(2s²)`` (Fraction) and κ (float or mpf)."""
    n0, ff, fq = frac_parts(weights, s2q, t)
    exact = Fraction(0)
    items = []
    for a, m, s2, f in zip(weights, counts, s2q, fq):
        mu = int(a) * s2 * t
        exact += int(m) * mu * mu / (2 * s2)
        if float(s2) < 1.0:
            exact -= int(m) * f * f / (2 * s2)
        if float(s2) < GAUSS_S2:
            items.append((s2, int(m), f))
    kappa, kerr = ell_ratio_mp(items)
    kerr += gauss_slack([float(s) for s in s2q], counts)
    return exact, kappa, kerr


def sieve_umax(s2: float, m: int, T: float) -> float:
    """Largest u ∈ [0, π] not excluded by group (s2, m) alone at sieve level T (the
    kernel :func:`exactdp.kernels.sieve_bound.sieve_umax`: a bisection on the bound
    ``m·(log D − log P(u)) > T``, P the wrapped normal sum bounded above)."""
    return sieve_umax_kernel(float(s2), int(m), float(T), POW2)


def sieve_umaxes(s2, m, T: float) -> np.ndarray:
    """:func:`sieve_umax` of every group (σ² and counts as sequences), in one kernel call."""
    return sieve_umaxes_kernel(np.asarray(s2, dtype=float), np.asarray(m, dtype=np.int64), float(T), POW2)
