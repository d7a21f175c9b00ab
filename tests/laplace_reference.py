"""An independent reference for compositions of up to three continuous Laplaces (nothing of
exactdp's engine): the hockey-stick divergence by numerical integration at 50 digits.

One Laplace ``Lap(0, b)`` against ``Lap(s, b)`` (s > 0) is written from its output density
``p(x) = e^{−|x|/b}/(2b)``: the loss ``(|x − s| − |x|)/b`` is ``μ = s/b`` for ``x ≤ 0`` (P-mass
``∫_{−∞}^0 p``), ``−μ`` for ``x ≥ s`` and ``(s − 2x)/b`` in between, whose density in the loss
``l`` is ``p(x(l))·|dx/dl|`` with ``x(l) = (s − lb)/2`` (evaluated here, not simplified).  Sums
of ``c`` continuous pieces have the closed-form density of a tilted Irwin–Hall sum (the
textbook formula), integrated by ``mpmath.quad`` piece by piece, split at every kink; the
atoms are enumerated.
"""

from __future__ import annotations

import math
from fractions import Fraction
from itertools import product

import mpmath

DPS = 50


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def single(scale, shift):
    """``(atoms, density, mu)`` of one Laplace's loss under P: atoms ``[(loss, mass)]`` and the
    density of its continuous part on ``(−μ, μ)``."""
    b, s = _m(scale), abs(_m(shift))
    mu = s / b
    p = lambda x: mpmath.exp(-abs(x) / b) / (2 * b)  # noqa: E731
    left = mpmath.quad(p, [-mpmath.inf, 0])  # x ≤ 0: loss μ
    right = mpmath.quad(p, [s, mpmath.inf])  # x ≥ s: loss −μ

    def density(loss):
        if not -mu < loss < mu:
            return mpmath.mpf(0)
        return p((s - loss * b) / 2) * b / 2

    return [(mu, left), (-mu, right)], density, mu


def hockey(scale, shift, count: int, t, dps: int = DPS) -> mpmath.mpf:
    """``E_P[(1 − e^{t−L})_+]`` for the loss L of ``count`` ≤ 3 identical Laplaces (``dps`` digits;
    t exact, its distance to every atom and knot taken exactly)."""
    with mpmath.workdps(dps):
        atoms, dens, mu = single(scale, shift)
        mu_q = abs(Fraction(shift)) / Fraction(scale)  # the loss at x ≤ 0, (|x − s| − |x|)/b = s/b
        t = Fraction(t)
        total = mpmath.mpf(0)
        # each of the `count` mechanisms: atom μ, atom −μ, or continuous (None)
        for choice in product([0, 1, None], repeat=count):
            base, mass = Fraction(0), mpmath.mpf(1)
            for ch in choice:
                if ch is not None:
                    base += mu_q if ch == 0 else -mu_q
                    mass *= atoms[ch][1]
            c = sum(ch is None for ch in choice)
            total += mass * _integrate(dens, mu, mu_q, c, t - base)
        return total


def _integrate(dens, mu, mu_q: Fraction, c: int, t: Fraction) -> mpmath.mpf:
    """``∫ (1 − e^{t−u})_+ f^{*c}(u) du``, the c-fold convolution of the continuous part's density
    f in closed form: f is ``K·e^{l/2}`` on (−μ, μ) (K = f(0), the shape checked at a few points),
    so ``f^{*c}(u) = K^c e^{u/2} (2μ)^{c−1} IH_c((u + cμ)/(2μ))`` with the Irwin–Hall density IH_c
    (its textbook sum from the left end, used on its left half by symmetry); integrated in
    ``w = cμ − u`` (the distance to the top, exact at its ends), one quad per piece."""
    if c == 0:
        return -mpmath.expm1(_m(t)) if t < 0 else mpmath.mpf(0)
    k0 = dens(mpmath.mpf(0))
    for x in (-mu / 2, mu / 3):
        assert abs(dens(x) - k0 * mpmath.exp(x / 2)) <= mpmath.mpf(10) ** (5 - mpmath.mp.dps) * k0
    top_q = c * mu_q
    span = top_q - t  # u > t  ⇔  w < span
    if span <= 0:
        return mpmath.mpf(0)

    def irwin_hall(y):
        if not 0 < y < c:
            return mpmath.mpf(0)
        y = min(y, c - y)
        return mpmath.fsum((-1) ** k * mpmath.binomial(c, k) * (y - k) ** (c - 1)
                           for k in range(int(mpmath.floor(y)) + 1)) / mpmath.factorial(c - 1)

    sp = _m(span)

    def integrand(w):
        return -mpmath.expm1(w - sp) * k0**c * mpmath.exp((c * mu - w) / 2) * (2 * mu) ** (c - 1) * \
            irwin_hall(w / (2 * mu))

    hi_q = min(span, 2 * top_q)
    pts = sorted({Fraction(0), hi_q} | {2 * k * mu_q for k in range(1, c) if 2 * k * mu_q < hi_q})
    return mpmath.quad(integrand, [_m(x) for x in pts])


def single_closed(scale, shift, eps) -> mpmath.mpf:
    """δ(ε) of one Laplace for ε ≥ 0: ``max(0, 1 − e^{(ε−μ)/2})`` (derived in
    :mod:`exactdp.kinds.laplace`, checked against :func:`hockey` in the tests)."""
    with mpmath.workdps(DPS):
        x = Fraction(eps) - abs(Fraction(shift)) / Fraction(scale)  # (exact: ε may lie 1e-300 below μ)
        return -mpmath.expm1(_m(x) / 2) if x < 0 else mpmath.mpf(0)


def single_tradeoff(scale, shift, alpha) -> mpmath.mpf:
    """The Laplace trade-off function (Dong, Roth & Su 2022, Prop. A.x), from the Neyman–Pearson
    test on x: reject for x > τ.  α = P(X > τ), β = Q(X ≤ τ) with Q = Lap(s, b)."""
    with mpmath.workdps(DPS):
        b, s, a = _m(scale), abs(_m(shift)), _m(alpha)
        # the likelihood ratio q/p is nondecreasing in x: the test rejects the largest x
        if a == 0:
            return mpmath.mpf(1)
        # τ with P(X > τ) = α
        # (1 − α from the exact α: α = 1 − 1e-300 is 1 at 50 digits)
        tau = -b * mpmath.log(2 * a) if a <= mpmath.mpf(1) / 2 else b * mpmath.log(2 * _m(1 - Fraction(alpha)))
        def qcdf(x):
            return (mpmath.exp((x - s) / b) / 2 if x <= s else 1 - mpmath.exp(-(x - s) / b) / 2)
        return qcdf(tau)


def mixed_delta(atoms: tuple, scale, shift, count, eps, dps: int = DPS) -> tuple:
    """``(lo, hi)`` of δ(ε) of a finite part (``tests/mixed_brute.joint`` atoms) composed with
    ``count`` Laplaces: ``Σ_ℓ P_ℓ·H(ε − ℓ)`` (+ the mass at +∞), the quadratures' error allowed
    for by a relative ``10^{15−dps}``; atoms of mass below ``10^{−dps}`` (relative) are left out,
    their mass added to the upper end (0 ≤ H ≤ 1)."""
    d, tail = atoms
    with mpmath.workdps(dps):
        e = Fraction(eps)
        s = left_out = mpmath.mpf(0)
        big = max(p for p, _ in d.values())
        for k, (p, _) in d.items():
            if k == math.inf:
                s += p
            elif k != -math.inf and p:
                if p < big * mpmath.mpf(10) ** -dps:
                    left_out += p
                    continue
                s += p * hockey(scale, shift, count, e - k, dps)
        err = mpmath.mpf(10) ** (15 - dps)
        return s * (1 - err), s * (1 + err) + tail + left_out
