"""An independent brute force for designs mixing mechanism kinds (nothing of exactdp's engine).

Every mechanism is enumerated from its *output* distributions P and Q (the pmf of the noise
on a window, not the closed-form loss atoms exactdp uses), its outputs are merged by their
exact rational privacy loss ``log P(x)/Q(x)`` (±∞ where one side vanishes), and the joint
loss distribution of a composition is the convolution of these dictionaries, in mpmath at
:data:`DPS` digits.  Windows are wide enough that every dropped tail is below 1e-400 (its
P-mass is carried as ``tail`` and widens the reference's bracket); the hockey-stick
divergence is then ``Σ_ℓ (P_ℓ − e^ε Q_ℓ)₊`` summed over the atoms, in either direction.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

DPS = 70
INF = float("inf")
#: the negligible tail of every window (below every δ a test asks about)
TAIL = mpmath.mpf("1e-400")


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def dlap_atoms(scale, shift) -> tuple:
    """``({loss: [P, Q]}, tail)`` of the discrete Laplace mechanism from its pmf on a window."""
    b = Fraction(scale)
    s = int(shift)
    with mpmath.workdps(DPS):
        r = mpmath.exp(-1 / _m(b))
        c = (1 - r) / (1 + r)
        k = int(math.ceil(float(mpmath.log(TAIL) / mpmath.log(r)))) + 2 if r > 0 else 2
        out: dict = {}
        for x in range(min(0, s) - k, max(0, s) + k + 1):
            key = Fraction(abs(x - s) - abs(x)) / b
            p, q = c * r ** abs(x), c * r ** abs(x - s)
            got = out.setdefault(key, [mpmath.mpf(0), mpmath.mpf(0)])
            got[0] += p
            got[1] += q
        return out, 4 * r ** k / (1 + r)


def rr_atoms(eps, k: int = 2) -> tuple:
    e = Fraction(eps)
    with mpmath.workdps(DPS):
        ee = mpmath.exp(_m(e))
        d = ee + k - 1
        p = [ee / d] + [1 / d] * (k - 1)  # input 0
        q = [1 / d, ee / d] + [1 / d] * (k - 2)  # input 1
        out: dict = {}
        for j in range(k):
            key = e if j == 0 else (-e if j == 1 else Fraction(0))
            got = out.setdefault(key, [mpmath.mpf(0), mpmath.mpf(0)])
            got[0] += p[j]
            got[1] += q[j]
        return out, mpmath.mpf(0)


def approx_atoms(eps, delta) -> tuple:
    e, d = Fraction(eps), Fraction(delta)
    with mpmath.workdps(DPS):
        ee, dm = mpmath.exp(_m(e)), _m(d)
        p = [dm, (1 - dm) * ee / (1 + ee), (1 - dm) / (1 + ee), mpmath.mpf(0)]
        q = [mpmath.mpf(0), (1 - dm) / (1 + ee), (1 - dm) * ee / (1 + ee), dm]
        out: dict = {}
        for key, pp, qq in zip((INF, e, -e, -INF), p, q):
            if pp == 0 and qq == 0:
                continue
            got = out.setdefault(key, [mpmath.mpf(0), mpmath.mpf(0)])
            got[0] += pp
            got[1] += qq
        return out, mpmath.mpf(0)


def dg_atoms(sigma2, shift) -> tuple:
    """The discrete Gaussian N_Z(0, σ²) against N_Z(shift, σ²), normalised on the window."""
    s2 = Fraction(sigma2)
    s = int(shift)
    with mpmath.workdps(DPS):
        k = int(math.ceil(math.sqrt(2 * float(s2) * 930))) + 2
        xs = range(min(0, s) - k, max(0, s) + k + 1)
        w = {x: mpmath.exp(-_m(Fraction(x * x) / (2 * s2))) for x in range(-k - 2 * abs(s), k + 2 * abs(s) + 1)}
        z = mpmath.fsum(w[x] for x in range(-k, k + 1))
        out: dict = {}
        for x in xs:
            key = Fraction(s * s - 2 * s * x) / (2 * s2)
            got = out.setdefault(key, [mpmath.mpf(0), mpmath.mpf(0)])
            got[0] += w[x] / z
            got[1] += w[x - s] / z
        return out, 2 * TAIL


def convolve(a: tuple, b: tuple) -> tuple:
    (da, ta), (db, tb) = a, b
    out: dict = {}
    with mpmath.workdps(DPS):
        for ka, (pa, qa) in da.items():
            for kb, (pb, qb) in db.items():
                p, q = pa * pb, qa * qb
                if p == 0 and q == 0:
                    continue
                key = ka + kb
                got = out.setdefault(key, [mpmath.mpf(0), mpmath.mpf(0)])
                got[0] += p
                got[1] += q
        return out, ta + tb


def atoms_of(mech) -> tuple:
    name = type(mech).__name__
    if name == "DiscreteLaplace":
        return dlap_atoms(mech.scale, mech.shift)
    if name == "RandomizedResponse":
        return rr_atoms(mech.epsilon, mech.k)
    if name == "ApproxDP":
        return approx_atoms(mech.epsilon, mech.delta)
    if name == "DiscreteGaussian":
        return dg_atoms(mech.sigma2, mech.shift)
    raise TypeError(name)


def joint(groups) -> tuple:
    """The joint loss atoms ``({loss: [P, Q]}, tail)`` of ``(mechanism, count)`` groups."""
    acc: tuple = ({Fraction(0): [mpmath.mpf(1), mpmath.mpf(1)]}, mpmath.mpf(0))
    for mech, count in groups:
        one = atoms_of(mech)
        for _ in range(count):
            acc = convolve(acc, one)
    return acc


def delta(atoms: tuple, eps, direction: str = "PQ") -> tuple:
    """``(lo, hi)`` of δ(ε) = Σ (P − e^ε Q)₊ (``"QP"``: the other direction)."""
    d, tail = atoms
    with mpmath.workdps(DPS):
        ee = mpmath.exp(_m(eps)) if not callable(eps) else mpmath.exp(eps(DPS))
        s = size = mpmath.mpf(0)
        for p, q in d.values():
            a, b = (p, q) if direction == "PQ" else (q, p)
            t = a - ee * b
            if t > 0:
                s += t
                size += a + ee * b
        err = size * mpmath.mpf(10) ** (8 - DPS)  # the rounding of the sums (terms of either sign)
        return max(s - err, mpmath.mpf(0)), s + err + tail


def epsilon(atoms: tuple, target) -> mpmath.mpf:
    """The smallest ε ≥ 0 with δ(ε) ≤ target, solved exactly on its piece."""
    d, _ = atoms
    keys = sorted((k for k in d if k != -INF), reverse=True)
    with mpmath.workdps(DPS):
        t = _m(target)
        a = b = mpmath.mpf(0)
        for i, k in enumerate(keys):
            a += d[k][0]
            b += d[k][1]
            nxt = keys[i + 1] if i + 1 < len(keys) else -INF
            # on (nxt, k]: δ(ε) = a − e^ε b
            if k == INF:
                if a > t:
                    raise ValueError("target below the floor")
                continue
            if a - t <= 0:
                continue
            e = mpmath.log((a - t) / b)
            if _m(k) < e <= _m(k) * (1 + mpmath.mpf(10) ** (10 - DPS)):  # (δ(k) ≤ t by less than the rounding)
                e = _m(k)
            if e <= _m(k) and (nxt == -INF or e > _m(nxt)):
                return max(e, mpmath.mpf(0))
        return mpmath.mpf(0)


def beta(atoms: tuple, alpha) -> mpmath.mpf:
    """The Neyman–Pearson β(α): reject in increasing order of the loss."""
    d, _ = atoms
    with mpmath.workdps(DPS):
        al = _m(alpha)
        used = mpmath.mpf(0)
        rejected_q = mpmath.mpf(0)
        for k in sorted(d):
            p, q = d[k]
            if used + p <= al:
                used += p
                rejected_q += q
                continue
            frac = (al - used) / p
            return max(1 - rejected_q - frac * q, mpmath.mpf(0))
        return max(1 - rejected_q, mpmath.mpf(0))


def delta_gaussian(atoms: tuple, eps, mu) -> tuple:
    """``(lo, hi)`` of δ(ε) of the atoms composed with continuous Gaussians of total ρ = mu
    (their loss is N(μ, 2μ) under P): ``Σ_ℓ P_ℓ·δ_N(ε − ℓ)`` with the closed form
    ``δ_N(t) = Φ((μ − t)/√(2μ)) − e^t Φ((−μ − t)/√(2μ))`` (mpmath's ncdf)."""
    d, tail = atoms
    with mpmath.workdps(DPS):
        m = _m(mu)
        sd = mpmath.sqrt(2 * m)
        e = _m(eps)
        s = mpmath.mpf(0)
        for k, (p, _) in d.items():
            if k == INF:
                s += p
            elif k != -INF:
                t = e - _m(k)
                s += p * (mpmath.ncdf((m - t) / sd) - mpmath.exp(t) * mpmath.ncdf((-m - t) / sd))
        err = mpmath.mpf(10) ** (12 - DPS)
        return s * (1 - err), s * (1 + err) + tail
