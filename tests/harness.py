"""The shared test harness: independent brute-force references in mpmath and integers.

Every reference value a test compares exactdp against is generated here (in the spirit of
scipy's ``special/_mptestutils.py``), next to the code that makes it; nothing here imports
exactdp.  Add new references here instead of writing them again in a test module.

The privacy-loss distribution is built by exact enumeration: each mechanism's output
distribution is truncated where its mass is below 1e-70 and the loss
ℓ(x) = log P(x)/Q(x) is accumulated as an exact rational on the support, with
probabilities at 60 digits.  Nothing here uses exactdp's engine.
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import mpmath

DPS = 60


def _dg(sigma2: Fraction, center: int):
    """{x: P[N_Z(center, σ²) = x]} truncated at mass 1e-70 (mp values)."""
    s2 = mpmath.mpf(sigma2.numerator) / sigma2.denominator
    half = int(math.isqrt(int(2 * sigma2 * 165)) + 3)
    xs = range(center - half, center + half + 1)
    w = {x: mpmath.exp(-mpmath.mpf(x - center) ** 2 / (2 * s2)) for x in xs}
    big = int(math.isqrt(int(2 * sigma2 * 400)) + 10)
    z = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) for x in range(-big, big + 1))
    return {x: v / z for x, v in w.items()}


@functools.lru_cache(maxsize=16)
def _loss_distributions(mechs):
    return _build(mechs)


def loss_distributions(mechs):
    return _loss_distributions(tuple(tuple(m) for m in mechs))


def _build(mechs):
    """mechs: list of (sigma2 Fraction, shift int).  Returns (dist_P, dist_Q) of the loss
    ℓ = log P/Q as {Fraction: mpf}."""
    with mpmath.workdps(DPS):
        dist_p = {Fraction(0): mpmath.mpf(1)}
        dist_q = {Fraction(0): mpmath.mpf(1)}
        for s2, d in mechs:
            # per-coordinate loss at x: (Δ² − 2Δx)/(2σ²)
            lp = {}
            for x, pr in _dg(s2, 0).items():
                lv = Fraction(d * d - 2 * d * x) / (2 * s2)
                lp[lv] = lp.get(lv, 0) + pr
            lq = {}
            for x, pr in _dg(s2, d).items():
                lv = Fraction(d * d - 2 * d * x) / (2 * s2)
                lq[lv] = lq.get(lv, 0) + pr
            dist_p = _conv(dist_p, lp)
            dist_q = _conv(dist_q, lq)
        return dist_p, dist_q


def _conv(a, b, floor=mpmath.mpf(10) ** -75):
    out = {}
    for x, p in a.items():
        for y, q in b.items():
            v = p * q
            if v < floor:
                continue
            out[x + y] = out.get(x + y, 0) + v
    return out


def delta_brute(mechs, eps, direction="PQ"):
    """δ(ε) = E_P[(1 − e^{ε−ℓ})_+] (PQ) or E_Q[(1 − e^{ε+ℓ})_+] (QP), at 60 digits."""
    dist_p, dist_q = loss_distributions(mechs)
    with mpmath.workdps(DPS):
        e = mpmath.mpf(eps.numerator) / eps.denominator if isinstance(eps, Fraction) else mpmath.mpf(eps)
        if direction == "PQ":
            items = dist_p.items()
            return mpmath.fsum(p * (1 - mpmath.exp(e - mpmath.mpf(l.numerator) / l.denominator))
                               for l, p in items if l > e)
        return mpmath.fsum(p * (1 - mpmath.exp(e + mpmath.mpf(l.numerator) / l.denominator))
                           for l, p in dist_q.items() if -l > e)


def tradeoff_vertices_brute(mechs):
    """Vertices (α, β) of the exact trade-off curve: the likelihood-ratio test that rejects
    P when ℓ ≤ t (small loss = evidence for Q), for every t in the support."""
    dist_p, dist_q = loss_distributions(mechs)
    with mpmath.workdps(DPS):
        levels = sorted(set(dist_p) | set(dist_q))
        # cumulative masses below each level, summed from the small end (positive terms)
        verts = []
        cp = cq = mpmath.mpf(0)
        for t in levels:
            verts.append((cp, 1 - cq))  # reject when ℓ < t
            cp += dist_p.get(t, 0)
            cq += dist_q.get(t, 0)
        verts.append((cp, 1 - cq))
        return verts


# -- interop: outward rounding to binary64 (section of the interop tests) -------------------------
def float_up_reference(value) -> float:
    """The smallest binary64 float ≥ the exact rational ``value`` (a decimal string such as
    the CLI prints, or a Fraction): ``float()`` of a Fraction is correctly rounded to
    nearest, so at most one step up is needed, decided by an exact comparison."""
    x = value if isinstance(value, Fraction) else Fraction(value)
    f = float(x)
    if Fraction(f) < x:
        f = math.nextafter(f, math.inf)
    return f


def gaussian_delta_reference(mu, eps):
    """δ(ε) of the continuous Gaussian pair N(0, 1) vs N(μ, 1) in closed form,
    Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) (Balle & Wang 2018), at 60 digits — the limit of a
    discrete Gaussian composition with total zCDP ρ = μ²/2 as every σ² grows."""
    with mpmath.workdps(DPS):
        mu, e = mpmath.mpf(mu), mpmath.mpf(eps)
        return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)
