"""Rational privacy-loss weights onto one integer lattice, with exact thresholds.

For a composition with weights ``w_i = |Δ_i|/σ_i²`` (rationals) let

    D = lcm of the denominators of the w_i,   G = gcd of the integers D·w_i,
    scale = D / G,   A_i = scale · w_i ∈ ℤ,   gcd(A_i) = 1.

Then ``S = scale · W = Σ A_i X_i`` is integer valued and, by Bézout, its support
generates ℤ.  Every event of the accounting is an integer threshold of S, computed from
exact rationals (or from irrational ε evaluated at high precision and checked to be far
from a lattice point): no floating rounding of a threshold ever.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
from mpmath.libmp import (
    fone,
    from_rational,
    mpf_abs,
    mpf_add,
    mpf_floor,
    mpf_gt,
    mpf_lt,
    mpf_mul,
    mpf_sub,
    round_nearest,
    to_int,
)

from exactdp.mechanisms import Composition
from exactdp.numerics.precision import to_mpf

__all__ = ["LatticeSum", "lattice_of", "floor_exact", "weights_exceed", "INT64_WEIGHTS"]

#: lattice weights at or above this do not fit the engine's int64 phase arithmetic
INT64_WEIGHTS = 2**62

_make_mpf = mpmath.mp.make_mpf


@dataclass(frozen=True)
class LatticeSum:
    """``S = Σ_g A_g Σ_{k=1}^{m_g} X_{g,k}``, ``X_{g,k} ~ N_Z(0, sigma2_g)`` independent.

    Attributes
    ----------
    weights : tuple of int
        The integer lattice weights A_g (coprime as a set).
    counts : tuple of int
        Multiplicities m_g.
    sigma2 : tuple of Fraction
        Variance parameters σ_g².
    scale : Fraction
        ``S = scale · W`` where ``W = Σ w_i X_i`` is the privacy-loss noise.
    c : Fraction
        The loss offset Σ Δ²/(2σ²) (= zCDP ρ).
    shift : int
        ``K = 2·c·scale`` (an integer): under Q the statistic is S + K.
    """

    weights: tuple
    counts: tuple
    sigma2: tuple
    scale: Fraction
    c: Fraction
    shift: int

    @property
    def n_groups(self) -> int:
        return len(self.weights)

    def threshold_above(self, x) -> int:
        """Smallest integer k with ``k > scale·x`` (so ``{W > x} = {S ≥ k}``).

        ``x`` is a Fraction (exact) or a callable ``x(dps) -> mpf`` for irrational values.
        """
        return floor_exact(x, self.scale) + 1

    def delta_thresholds(self, eps) -> tuple[int, int]:
        """Integer thresholds (k1, k2) with δ(ε) = P[S ≥ k1] − e^ε P[S ≥ k2]."""
        if isinstance(eps, Fraction):  # ⌊(ε − c)·scale⌋ + 1 in integers
            c, sc = self.c, self.scale
            k1 = ((eps.numerator * c.denominator - c.numerator * eps.denominator) * sc.numerator
                  // (eps.denominator * c.denominator * sc.denominator)) + 1
        else:
            k1 = floor_exact(functools.partial(_minus_fraction, eps, self.c), self.scale) + 1
        return k1, k1 + self.shift


def _minus_fraction(x, c: Fraction, dps: int):
    """``x(dps) − to_mpf(c)`` at the current precision (raw libmp for an mpf value: the
    calls the mpf operator makes, so the same bits)."""
    v = x(dps)
    if type(v) is not mpmath.mpf:
        return v - to_mpf(c)
    prec, rnd = mpmath.mp._prec_rounding
    return _make_mpf(mpf_sub(v._mpf_, from_rational(c.numerator, c.denominator, prec, round_nearest), prec, rnd))


def floor_exact(x, scale: Fraction = Fraction(1)) -> int:
    """``floor(scale·x)`` exactly, for a Fraction x or a callable ``x(dps) -> mpf``.

    For a callable the value is evaluated at 50 and, if it lies within ``1e-40·(1 + |y|)``
    of an integer (``y = scale·x``: the gap is relative, as the rounding of ``x(dps)`` and
    of the product is), at 200 digits; an irrational number that close to a lattice point
    at 200 digits is refused rather than rounded.
    """
    if isinstance(x, (int, Fraction)):
        if isinstance(scale, (int, Fraction)):  # ⌊p·s/(q·t)⌋ in integers
            return x.numerator * scale.numerator // (x.denominator * scale.denominator)
        return math.floor(Fraction(x) * scale)
    for dps in (50, 200):
        with mpmath.workdps(dps):
            v = x(dps)
            if type(v) is not mpmath.mpf or not isinstance(scale, (int, Fraction)):
                y = v * (to_mpf(scale))
                f = mpmath.floor(y)
                if min(y - f, f + 1 - y) > _lattice_gap(dps) * (1 + abs(y)):
                    return int(f)
                continue
            # the same on raw mpf tuples: the libmp calls of the mpf operators above
            prec, rnd = mpmath.mp._prec_rounding
            y = mpf_mul(v._mpf_, from_rational(scale.numerator, scale.denominator, prec, rnd), prec, rnd)
            f = mpf_floor(y, prec, rnd)
            a, b = mpf_sub(y, f, prec, rnd), mpf_sub(mpf_add(f, fone, prec, rnd), y, prec, rnd)
            gap = mpf_mul(_lattice_gap(dps)._mpf_, mpf_add(fone, mpf_abs(y), prec, rnd), prec, rnd)
            if mpf_gt(b if mpf_lt(b, a) else a, gap):
                return int(to_int(f))
    raise ValueError("threshold is within 1e-190 (relative) of a lattice point; pass ε as an exact rational")


_GAPS: dict = {}


def _lattice_gap(dps: int):
    """``mpf(10) ** (−(dps − 10))`` at ``dps`` digits, computed once per dps."""
    g = _GAPS.get(dps)
    if g is None:
        g = _GAPS[dps] = mpmath.mpf(10) ** (-(dps - 10))
    return g


#: id of a mechanism → (the mechanism, numerator, denominator of its weight |Δ|/σ²): a sweep's and a
#: tune's compositions share their (cached) mechanisms, so each weight is reduced once
_WEIGHTS: dict = {}


def _weight_parts(m) -> tuple:
    """``(n, d, p, q)``: ``m.weight = |Δ|/σ² = n/d`` and ``σ² = p/q`` in lowest terms (kept per
    mechanism object, which is held in the memo so its id is not reused)."""
    got = _WEIGHTS.get(id(m))
    if got is not None and got[0] is m:
        return got[1]
    w, s2 = m.weight, m.sigma2
    if len(_WEIGHTS) >= 65536:
        _WEIGHTS.clear()
    parts = (w.numerator, w.denominator, s2.numerator, s2.denominator)
    _WEIGHTS[id(m)] = (m, parts)
    return parts


def lattice_of(comp: Composition, rho=None) -> LatticeSum:
    """Map a composition's privacy-loss weights onto an integer lattice.

    Mechanisms with shift 0 carry no privacy loss and are dropped; groups with equal
    (A_g, σ_g²) are merged.  ``rho``: ``comp.rho`` when the caller has it already.
    The weights are reduced fractions ``n/d`` (:func:`_weight_parts`), so ``A = n·(D/d)/G`` in
    integers: the integer ``w·scale`` is.
    """
    items = [(_weight_parts(m), m.sigma2, count) for m, count in comp.groups if m.shift != 0]
    if not items:
        raise ValueError("every mechanism has shift 0: the two distributions are identical")
    den = math.lcm(*(w[1] for w, _, _ in items))
    scaled = [w[0] * (den // w[1]) for w, _, _ in items]
    g = math.gcd(*scaled)
    scale = Fraction(den, g)
    merged: dict = {}  # (A, p, q) of σ² = p/q (lowest terms: equal σ², equal keys) → [A, σ², count]
    for a_g, (w, s2, count) in zip(scaled, items):
        key = (a_g // g, w[2], w[3])
        got = merged.get(key)
        if got is None:
            merged[key] = [key[0], s2, count]
        else:
            got[2] += count
    rows = sorted(merged.values())  # by (A, σ²): the keys (A, σ²) are distinct
    c = comp.rho if rho is None else rho
    shift = 2 * c * scale
    assert shift.denominator == 1
    return LatticeSum(
        weights=tuple(r[0] for r in rows),
        counts=tuple(r[2] for r in rows),
        sigma2=tuple(r[1] for r in rows),
        scale=scale,
        c=c,
        shift=int(shift),
    )


def weights_exceed(comp: Composition, limit: int = INT64_WEIGHTS) -> bool:
    """Whether the largest integer weight ``A_g`` of :func:`lattice_of` is ``≥ limit``, decided
    without building the lattice.

    With reduced weights ``w = n/d``, ``scale = lcm(d)/gcd(n)`` and ``max A = max w · scale``.
    First from the sizes alone: ``lcm(d) ≥ max d`` and ``gcd(n) ≤ min n``, so
    ``max A ≥ max w · max d / min n`` (no gcd at all); then by the running lcm and gcd, whose
    ratio only grows, stopping as soon as it settles the question (a few steps for thousands
    of distinct decimal variances, where :func:`lattice_of` would run its gcds over every one).
    The answer is exact: at the end the running ratio is the scale itself.
    """
    ws = {_weight_parts(m)[:2] for m, _ in comp.groups if m.shift != 0}  # (n, d) of each weight, reduced
    if not ws:
        return False
    tn, td = next(iter(ws))
    for n, d in ws:  # the largest weight n/d
        if n * td > tn * d:
            tn, td = n, d
    big_d = max(d for _, d in ws)
    small_n = min(n for n, _ in ws)
    if tn * big_d >= limit * td * small_n:
        return True
    den, g = 1, 0
    for n, d in sorted(ws, key=lambda x: -x[1]):
        den = math.lcm(den, d)
        g = math.gcd(g, n)
        if tn * den >= limit * td * g:
            return True
    return False
