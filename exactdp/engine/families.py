"""Groups of the privacy-loss noise, families, and the sieve's per-group penalty.

A design's privacy-loss noise is ``W = Σ_g w_g Σ_k X_{g,k}`` with one *group* per distinct
(weight ``w_g = |Δ_g|/σ_g²``, σ_g²) and ``m_g`` mechanisms.  Groups whose weights are
integer multiples ``w_g = n_g·a`` of one rational unit a form a *family*: then
``Σ_{g} w_g S_g = a·S`` with S integer-valued, and the family's characteristic function is
2π/a-periodic (:func:`family_of`).

The certified per-group penalty of the frequency sieve:
``|M_g(w_g(λ+iu))/M_g(w_gλ)|^{m_g} ≤ exp(−pen_g(d))``, ``d = dist(w_g u/2π, ℤ)``, with
``pen_g(d) = m_g·max(0, log D_g − log P_g(2πd))``, ``P_g(b) = Σ_k e^{−σ²(b−2πk)²/2}``
(the wrapped normal, decreasing on [0, π]) and ``D_g = 1 − 2Σ_{k≥1} e^{−2π²σ²k²}``
(Poisson summation of the theta function; independent of λ).  For σ² so small that
``D_g ≤ 1/2`` the penalty is 0 (only the trivial bound 1 is used).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from functools import reduce

import numpy as np

from exactdp.kernels.profile import interval_penalty
from exactdp.mechanisms import Composition

__all__ = ["Group", "Family", "groups_of", "family_of", "group_penalty", "rational_gcd"]


@dataclass(frozen=True)
class Group:
    """``count`` iid N_Z(0, sigma2) entering the privacy-loss noise with weight ``weight``."""

    weight: Fraction
    sigma2: Fraction
    count: int


@dataclass(frozen=True)
class Family:
    """Groups with weights ``multipliers[i]·unit`` (integers, gcd 1)."""

    unit: Fraction
    groups: tuple
    multipliers: tuple

    @property
    def vproxy(self) -> float:
        """``Σ m n² σ²``: variance proxy of S_f (lattice units)."""
        return float(sum(g.count * n * n * g.sigma2 for g, n in zip(self.groups, self.multipliers)))


def rational_gcd(values) -> Fraction:
    """Largest rational a with every value an integer multiple of a."""
    vals = [Fraction(v) for v in values]
    num = reduce(math.gcd, (v.numerator for v in vals))
    den = reduce(math.lcm, (v.denominator for v in vals))
    return Fraction(num, den)


def family_of(groups) -> Family:
    """The family of the given groups (unit: the rational gcd of their weights)."""
    unit = rational_gcd(g.weight for g in groups)
    mult = tuple(int(g.weight / unit) for g in groups)
    return Family(unit, tuple(groups), mult)


def groups_of(comp: Composition) -> tuple:
    """Groups of the privacy-loss noise (shift-0 mechanisms dropped, equal groups merged)."""
    merged: dict = {}
    for mech, count in comp.groups:
        if mech.shift == 0:
            continue
        key = (mech.weight, mech.sigma2)
        merged[key] = merged.get(key, 0) + count
    if not merged:
        raise ValueError("every mechanism has shift 0: the two distributions are identical")
    # sorted by (weight, σ²) exactly; the floats first (rounding is monotone, so a float order
    # is the exact one, and equal floats fall through to the exact values): the same order
    # as comparing the Fractions, without a Fraction comparison for most pairs
    items = sorted(merged.items(), key=lambda kv: (float(kv[0][0]), kv[0][0], float(kv[0][1]), kv[0][1]))
    return tuple(Group(w, s2, m) for (w, s2), m in items)


def log_d(s2: float) -> float:
    """``log D_g`` of the penalty (−inf when D ≤ 1/2: only the trivial bound is used)."""
    D = 1 - 2 * sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 8))
    return math.log(D) if D > 0.5 else -math.inf


def group_penalty(d, s2: float, m: int):
    """``pen_g(d)`` (see module docstring) for distances ``d ∈ [0, 1/2]`` in cycles (array)."""
    d = np.ascontiguousarray(np.asarray(d, dtype=float).reshape(1, -1))
    return interval_penalty(d, d, np.array([float(s2)]), np.array([int(m)], dtype=np.int64),
                            np.array([log_d(float(s2))]))
