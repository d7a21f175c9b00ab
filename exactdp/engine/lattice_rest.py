"""``D_R(x)`` exactly for a fine part R on one small lattice, by summing its atoms.

When the rest R of a design is a single family (``R = a·S``, S integer-valued; see
:mod:`exactdp.engine.families`) its characteristic function is 2π/a-periodic: a smoothed
inversion would meet a resonance every 2π/a, but the atoms of S are few.  Then

    D_R(x) = Σ_{k > x/a} P(S = k)·(1 − e^{−(a k − x)}),

a sum of positive terms from the first atom above x (its gap ``g₀ = a k₀ − x`` formed
exactly in rationals), evaluated by :func:`exactdp.kernels.profile.lattice_profile`; the
pmf of S is the log-domain convolution of the groups' pmfs stretched by their
multipliers (lower bounds; the mass lost is ``deficit``, added to the upper end).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from exactdp.engine.coarse_split import group_pmf
from exactdp.engine.families import family_of
from exactdp.kernels.profile import lattice_complement_many, lattice_profile, lattice_profile_many, log_convolve
from exactdp.numerics.precision import EPS64

__all__ = ["LatticeRest", "lattice_support"]

#: largest support of S enumerated
MAX_SUPPORT = 2_000_000
#: a term this many nats below the largest ends the sum (the rest is bounded)
TERM_DEPTH = 46.0


def lattice_support(groups, depth: float = 1000.0) -> int:
    """Size of the support of S for the family of ``groups`` down to e^{−depth}."""
    fam = family_of(groups)
    return 1 + sum(2 * n * (int(math.ceil(math.sqrt(2 * g.count * float(g.sigma2) * depth))) + 1)
                   for g, n in zip(fam.groups, fam.multipliers))


class LatticeRest:
    """Certified log brackets of ``D_R`` for R on one lattice (see the module docstring)."""

    def __init__(self, groups, depth: float = 1000.0):
        fam = family_of(groups)
        self.unit = fam.unit
        self.a = float(fam.unit)
        off, lp, le = 0, np.zeros(1), np.zeros(1)
        deficit = 0.0
        for g, n in zip(fam.groups, fam.multipliers):
            goff, glp, gle, gdef = group_pmf(g, depth)
            deficit += gdef
            if n > 1:  # stretch: S_g takes values n·k
                st = np.full((glp.size - 1) * n + 1, -np.inf)
                se = np.zeros(st.size)
                st[::n] = glp
                se[::n] = gle
                glp, gle, goff = st, se, goff * n
            lp, le = log_convolve(lp, le, glp, gle, -depth - 60.0)
            deficit += lp.size * math.exp(-depth - 60.0)
            off += goff
        keep = np.flatnonzero(np.isfinite(lp))
        lo, hi = int(keep[0]), int(keep[-1]) + 1
        self.offset = off + lo
        self.log_p = np.ascontiguousarray(lp[lo:hi])
        self.log_e = np.ascontiguousarray(le[lo:hi])
        self.deficit = deficit
        self.nodes_kept = 0
        #: variance proxy of S in lattice units (S is vs-sub-Gaussian)
        self.vs = float(sum(g.count * n * n * g.sigma2 for g, n in zip(fam.groups, fam.multipliers)))

    def log_mgf(self, lam: float) -> tuple:
        """(log M_R(λ) of the enumerated pmf, absolute error): a lower bound of the true one
        up to the error (the pmf entries are lower bounds); the deficit ``d`` adds at most
        ``d·e^{λ·a·k}`` beyond the support, which the callers' sub-Gaussian bounds cover."""
        k = np.arange(self.log_p.size) + self.offset
        v = self.log_p + lam * self.a * k
        mx = float(np.max(v))
        val = mx + math.log(float(np.sum(np.exp(v - mx))))
        return val, float(np.max(self.log_e)) + 8 * EPS64 * (abs(mx) + self.log_p.size)

    def _one(self, y: float) -> tuple:
        """(log value, log error) of Σ_{k>y/a} p_k(1 − e^{−(ak − y)}) at the float y."""
        q = Fraction(y) / self.unit
        k0 = math.floor(q) + 1
        j0 = k0 - self.offset
        if j0 < 0:
            j0 = 0
            k0 = self.offset
        if j0 >= self.log_p.size:
            return -np.inf, 0.0
        g0 = float(self.unit * k0 - Fraction(y))
        return lattice_profile(self.log_p, self.log_e, j0, g0, self.a, TERM_DEPTH, self.offset, self.vs)

    def log_brackets(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of D_R at each float x."""
        x = np.asarray(x, dtype=float)
        a_hi = float(self.unit)
        a_lo = float(self.unit - Fraction(a_hi))
        v, e, flag = lattice_profile_many(self.log_p, self.log_e, self.offset, a_hi, a_lo, x, TERM_DEPTH, self.vs)
        for i in np.flatnonzero(flag):
            v[i], e[i] = self._one(float(x[i]))
        fin = np.isfinite(v)
        slack = 4 * EPS64 * (np.abs(np.where(fin, v, 0.0)) + 1) + e
        lo = np.where(fin, v - slack, -np.inf)
        hi = np.where(fin, v + slack, -np.inf)
        if self.deficit > 0:
            hi = np.logaddexp(hi, math.log(self.deficit))
        return lo, np.minimum(hi, 0.0)

    def log_complement(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``C_R(x) = Σ_k p_k·min(1, e^{x − ak})`` (positive
        terms, every atom), plus the deficit on the upper end."""
        x = np.asarray(x, dtype=float)
        a_hi = float(self.unit)
        a_lo = float(self.unit - Fraction(a_hi))
        v, e, flag = lattice_complement_many(self.log_p, self.log_e, self.offset, a_hi, a_lo, x, TERM_DEPTH,
                                             self.vs)
        for i in np.flatnonzero(flag):  # a threshold on an atom: every term exactly
            vi, ei = self._complement_one(float(x[i]))
            v[i], e[i] = vi, ei
        fin = np.isfinite(v)
        slack = 4 * EPS64 * (np.abs(np.where(fin, v, 0.0)) + 1) + e
        lo = np.where(fin, v - slack, -np.inf)
        hi = np.where(fin, v + slack, -np.inf)
        if self.deficit > 0:
            hi = np.logaddexp(hi, math.log(self.deficit))
        return lo, np.minimum(hi, 0.0)

    def _complement_one(self, y: float) -> tuple:
        """(log value, log error) of C_R at the float y over every atom (exact comparisons)."""
        fy = Fraction(y)
        terms = []
        for j, lp in enumerate(self.log_p.tolist()):
            gap = self.unit * (j + self.offset) - fy
            terms.append(lp - float(gap) if gap > 0 else lp)
        arr = np.array(terms)
        mx = float(np.max(arr))
        val = mx + math.log(float(np.sum(np.exp(arr - mx))))
        return val, float(np.max(self.log_e)) + 8 * EPS64 * (abs(mx) + arr.size + abs(y))
