"""The whole 2020 release for one person: DHC persons pair ∘ P.L. 94-171 persons chain.

A person's record feeds both files, so a record change costs the DHC neighbour case
(i, j) *and* the P.L. 94-171 full chain.  The Bureau accounts the release by adding the
files' ρ (zCDP composes additively) and converting with Bun–Steinke.  The composition's
exact lattice (scale ≈ 1.6e23: the P.L. 94-171 budgets have ~1e12 denominators) is beyond
the int64 engine, so the exact δ and ε come from the lattice-free accountant
(``ExactAccountant(..., method="lattice-free")``) as certified brackets about
1e-10 relative wide.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.census.designs import PL94_ALLOCATION, release_composition
from exactdp.numerics.exact import to_fraction

__all__ = ["ReleaseRow", "release_rows"]


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
    certification: str  # "bracket" (the lattice-free route) or "exact"


def release_rows(allocation="dhc-persons-2020", pairs=((13, 13),), deltas=("1e-10",), pl94=PL94_ALLOCATION):
    """Certified whole-release rows for each pair and target δ.

    Notes
    -----
    Method: the Gaussian-smoothed tilted inversion with a second-order bracket and a
    certified frequency sieve (:mod:`exactdp.engine.smoothed_profile`); ε(δ) by a
    certified bracket search.  Error bound: every number is a certified bracket.
    Reference: Bun & Steinke (2016) for the Bureau's conversion; Daniels (1954) for the
    saddle-point inversion.
    """
    rows = []
    for i, j in pairs:
        comp = release_composition(allocation, i, j, pl94)
        acc = ExactAccountant(comp, method="lattice-free")  # the planner's route, forced: certified brackets
        eps = acc.epsilon(deltas)  # validates every target
        targets = [to_fraction(d, "delta") for d in deltas]
        dps = acc.delta([bun_steinke_epsilon(comp.rho, dt) for dt in targets])
        for dt, dp, ep in zip(targets, dps, eps):
            rows.append(ReleaseRow((i, j), dt, comp.rho, dp.epsilon, dp.lower, dp.upper, ep.lower, ep.upper,
                                   dp.certification))
    return rows
