"""``D_R`` and its complement exactly for a fine part R on one small lattice.

When the rest R of a design is a single family (``R = a·S``, S integer-valued; see
:mod:`exactdp.engine.families`) its characteristic function is 2π/a-periodic: a smoothed
inversion would meet a resonance every 2π/a, while the int64 lattice engine
(:class:`exactdp.engine.tails.TailEngine` on S) answers exactly.  With the first atom above
x, ``k₀ = ⌊x/a⌋ + 1``, and its gap ``g₀ = a k₀ − x ∈ (0, a]`` (exact rationals):

    D_R(x) = Σ_{s≥k₀} P(S = s)(1 − e^{−g₀ − a(s − k₀)})        (a hockey-stick query),
    C_R(x) = 1 − D_R(x) = P(S ≤ k₀ − 1) + e^{x+ρ_R} P(R > x + 2ρ_R)   (two tails),

the second because R is the privacy-loss noise of its own sub-design (ρ_R = Σ mΔ²/(2σ²)):
``E e^{−R}1{R > y} = e^{ρ_R} P(R > y + 2ρ_R)`` (the change of measure from P to Q, R
symmetric).  Both are sums of positive terms, each with the engine's certified relative
error.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from exactdp.engine.families import family_of
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tails import TailEngine
from exactdp.engine.values import WeightedQuery
from exactdp.numerics.precision import EPS64

__all__ = ["LatticeRest"]

#: the engine's certified relative error of each value
REST_REL_TOL = 1e-12


def _log_bracket(tv) -> tuple:
    """(log lo, log hi) of a TailValue (−inf, 0 where it is not certified)."""
    lv, rel = float(tv.log_value), float(tv.rel_error)
    if not (math.isfinite(lv) and rel < 1):
        return -np.inf, 0.0
    slack = 4 * EPS64 * (abs(lv) + 1)
    return lv + math.log1p(-rel) - slack, min(lv + math.log1p(rel) + slack, 0.0)


class LatticeRest:
    """Certified log brackets of ``D_R`` and ``C_R`` for R on one lattice (module docstring).

    Raises
    ------
    exactdp.numerics.errors.LatticeTooLarge
        When the lattice engine cannot take the family.
    """

    def __init__(self, groups):
        fam = family_of(groups)
        self.unit = fam.unit
        self.a = float(fam.unit)
        self.rho = sum((Fraction(g.count) * g.weight**2 * g.sigma2 for g in fam.groups), Fraction(0)) / 2
        lattice = LatticeSum(tuple(int(n) for n in fam.multipliers), tuple(int(g.count) for g in fam.groups),
                             tuple(Fraction(g.sigma2) for g in fam.groups), 1 / fam.unit, self.rho, 0)
        self.engine = TailEngine(lattice, rel_tol=REST_REL_TOL)
        self.nodes_kept = int(self.engine.nodes_kept)
        self._vproxy = float(sum(g.count * g.weight**2 * g.sigma2 for g in fam.groups))

    def log_mgf(self, lam: float) -> tuple:
        """(log M_R(λ) from above, 0): the sub-Gaussian bound ``λ²V/2`` (CKS)."""
        return 0.5 * lam * lam * self._vproxy * (1 + 1e-12), 0.0

    def _first_atom(self, x: float) -> tuple:
        """(k₀, g₀) of the float x: the first lattice point above x and its exact gap."""
        fx = Fraction(x)
        k0 = math.floor(fx / self.unit) + 1
        return k0, self.unit * k0 - fx

    def log_brackets(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``D_R`` at each float x."""
        x = np.asarray(x, dtype=float)
        qs = []
        for v in x.tolist():
            k0, g0 = self._first_atom(v)
            g = float(g0)
            qs.append(WeightedQuery(int(k0), -g, float(self.unit - g0), self.a))
        lo = np.full(x.size, -np.inf)
        hi = np.zeros(x.size)
        for i, tv in enumerate(self.engine.weighted(qs, strict=False)):
            lo[i], hi[i] = _log_bracket(tv)
        return lo, hi

    def log_complement(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``C_R = 1 − D_R`` at each float x (two tails)."""
        x = np.asarray(x, dtype=float)
        low_k, up_k, pref = [], [], []
        for v in x.tolist():
            k0, _ = self._first_atom(v)
            low_k.append(1 - k0)  # P(S ≤ k₀ − 1) = P(S ≥ 1 − k₀) (S symmetric)
            y = Fraction(v) + 2 * self.rho
            up_k.append(math.floor(y / self.unit) + 1)  # P(R > y) = P(S ≥ ⌊y/a⌋ + 1)
            pref.append(v + float(self.rho))
        t1 = self.engine.tails(low_k, strict=False)
        t2 = self.engine.tails(up_k, strict=False)
        lo = np.full(x.size, -np.inf)
        hi = np.zeros(x.size)
        for i in range(x.size):
            l1, h1 = _log_bracket(t1[i])
            l2, h2 = _log_bracket(t2[i])
            p = pref[i]
            slack = 4 * EPS64 * (abs(p) + abs(float(self.rho)) + 1)
            lo[i] = np.logaddexp(l1, l2 + p - slack)
            hi[i] = min(np.logaddexp(h1, h2 + p + slack), 0.0)
        return lo, hi
