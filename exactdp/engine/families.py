"""Families: the groups of a design that share one small integer lattice.

A design beyond the int64 lattice (:mod:`exactdp.engine.lattice`) still consists of a
few *families*: groups whose weights ``w_g = |Δ_g|/σ_g²`` are integer multiples
``w_g = n_g·a_f`` of one rational unit ``a_f`` with a lattice small enough for int64
phase arithmetic (every DHC pair; each geographic level of P.L. 94-171; each binary
float σ² on its own).  Then

    W = Σ_g w_g Σ_k X_{g,k} = Σ_f a_f S_f,   S_f = Σ_{g∈f} n_g Σ_k X_{g,k} ∈ ℤ,

and the characteristic function of family f is 2π/a_f-periodic in the frequency u.
Families are found greedily: two families merge when the merged lattice still fits
(``max n_g · N_f < 2^60`` with ``N_f`` the node count the tilted rule would use).

Also here: the certified per-group penalty of the sieves,
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

from exactdp.kernels.smoothed import interval_penalty

from exactdp.engine.lattice import LatticeSum
from exactdp.mechanisms import Composition

__all__ = ["Group", "Family", "groups_of", "families_of", "family_of", "family_lattice", "group_penalty", "penalty_arrays",
           "rational_gcd", "FAMILY_LIMIT"]

#: a family is kept only while ``max n_g · N_f`` stays below this (int64 phases with margin)
FAMILY_LIMIT = 2.0**60


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

    @property
    def n_nodes(self) -> int:
        return max(64, 2 * int(math.ceil(16.0 * math.sqrt(self.vproxy) / 2.0)))

    @property
    def feasible(self) -> bool:
        return float(max(self.multipliers)) * self.n_nodes < FAMILY_LIMIT


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
    return tuple(Group(w, s2, m) for (w, s2), m in sorted(merged.items()))


def families_of(groups, max_multiplier: float = FAMILY_LIMIT) -> tuple:
    """Greedy merge of the groups into feasible families (deterministic order).

    ``max_multiplier`` caps the integer multipliers (the sieve wants moderate ones).
    Groups are taken in order of weight denominator; each joins the existing family whose merged lattice is smallest, if any is feasible, else starts
    a family of its own.
    """
    fams: list = []
    for g in sorted(groups, key=lambda g: (g.weight.denominator, g.weight, g.sigma2)):
        best = None
        for i, f in enumerate(fams):
            unit = rational_gcd((f.unit, g.weight))
            top = max(max(f.multipliers) * int(f.unit / unit), int(g.weight / unit))
            if top > max_multiplier:
                continue
            cand = family_of(f.groups + (g,))
            if cand.feasible and (best is None or top < best[0]):
                best = (top, i, cand)
        if best is None:
            fams.append(family_of([g]))
        else:
            fams[best[1]] = best[2]
    return tuple(sorted(fams, key=lambda f: (-f.vproxy * float(f.unit) ** 2, f.unit)))


def family_lattice(fam: Family, c: Fraction) -> LatticeSum:
    """The family's lattice sum ``S_f`` (``W_f = unit·S_f``) as a LatticeSum."""
    return LatticeSum(tuple(fam.multipliers), tuple(g.count for g in fam.groups),
                      tuple(g.sigma2 for g in fam.groups), 1 / fam.unit, c, 0)


def log_d(s2: float) -> float:
    """``log D_g`` of the penalty (−inf when D ≤ 1/2: only the trivial bound is used)."""
    D = 1 - 2 * sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 8))
    return math.log(D) if D > 0.5 else -math.inf


def penalty_arrays(groups):
    """(σ², m, log D) arrays of the groups for :func:`exactdp.kernels.smoothed.interval_penalty`."""
    s2 = np.array([float(g.sigma2) for g in groups])
    m = np.array([int(g.count) for g in groups], dtype=np.int64)
    return s2, m, np.array([log_d(x) for x in s2])


def group_penalty(d, s2: float, m: int):
    """``pen_g(d)`` (see module docstring) for distances ``d ∈ [0, 1/2]`` in cycles (array)."""
    d = np.ascontiguousarray(np.asarray(d, dtype=float).reshape(1, -1))
    return interval_penalty(d, d, np.array([float(s2)]), np.array([int(m)], dtype=np.int64),
                            np.array([log_d(float(s2))]))
