"""The whole 2020 release for one person: DHC persons pair ∘ P.L. 94-171 persons chain.

A person's record feeds both files, so a record change costs the DHC neighbour case
(i, j) *and* the P.L. 94-171 full chain.  The Bureau accounts the release by adding the
files' ρ (zCDP composes additively) and converting with Bun–Steinke.  The exact
composition's lattice is out of the exact engine's range (the P.L. 94-171 budgets have
~1e12 denominators), so the exact δ is given as a certified bracket
(:mod:`exactdp.accounting.coarsened`), and ε(δ) as a certified bracket found by bisection on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import bun_steinke_epsilon
from exactdp.accounting.coarsened import CoarsenedAccountant
from exactdp.census.designs import PL94_ALLOCATION, release_composition
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import to_mpf

__all__ = ["ReleaseRow", "release_rows"]

#: ε(δ) brackets are bisected to this width
EPS_WIDTH = Fraction(1, 10**9)


@dataclass(frozen=True)
class ReleaseRow:
    """One target δ of one pair: the Bureau's ρ-sum ε and the exact guarantee there."""

    pair: tuple
    delta_target: Fraction
    rho_total: Fraction
    eps_bureau: mpmath.mpf
    delta_lower: mpmath.mpf  # exact δ at eps_bureau, certified bracket
    delta_upper: mpmath.mpf
    eps_lower: mpmath.mpf  # exact ε(δ_target), certified bracket
    eps_upper: mpmath.mpf
    grid: Fraction


def _bisect(acc: CoarsenedAccountant, target, hi: Fraction, upper: bool) -> Fraction:
    """Smallest ε on a 1e-9 grid with bound(ε) ≤ target (bound = upper or lower side)."""
    lo = Fraction(0)

    def side(e):
        b = acc.delta([e])[0]
        return b.upper if upper else b.lower

    while side(hi) > target:
        hi *= 2
    while hi - lo > EPS_WIDTH:
        mid = (lo + hi) / 2
        if side(mid) > target:
            lo = mid
        else:
            hi = mid
    return hi if upper else lo


def release_rows(allocation="dhc-persons-2020", pairs=((13, 13),), deltas=("1e-10",), pl94=PL94_ALLOCATION):
    """Certified whole-release rows for each pair and target δ.

    Notes
    -----
    Method: weights rounded to a grid, exact lattice tails of the rounded sum, and a
    sub-Gaussian bound on the rounding (:mod:`exactdp.accounting.coarsened`).  Error bound: every
    number is a certified bracket.  Reference: Bun & Steinke (2016) for the Bureau's
    conversion; Canonne, Kamath & Steinke (2020) for the sub-Gaussian bound.
    """
    rows = []
    for i, j in pairs:
        comp = release_composition(allocation, i, j, pl94)
        acc = CoarsenedAccountant(comp)
        for d in deltas:
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            eps_b = bun_steinke_epsilon(comp.rho, dt)
            b = acc.delta([eps_b])[0]
            with mpmath.workdps(40):
                target = to_mpf(dt)
            hi = Fraction(mpmath.nstr(b.epsilon, 20)) + 1
            e_up = _bisect(acc, target, hi, upper=True)
            e_lo = _bisect(acc, target, hi, upper=False)
            with mpmath.workdps(40):
                rows.append(ReleaseRow((i, j), dt, comp.rho, b.epsilon, b.lower, b.upper,
                                       to_mpf(e_lo),
                                       to_mpf(e_up), acc.grid))
    return rows
