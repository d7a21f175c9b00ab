"""The exact composition of finite, symmetric privacy-loss distributions, in ball arithmetic.

Every loss group of :mod:`exactdp.kinds` has finitely many rational loss values under P and
possibly an atom at +∞.  The sum of independent such losses lives on one rational grid
``v_i = offset + step·i`` (``step`` the gcd of the groups' grid steps): its P-masses are the
coefficients of the product of the groups' generating polynomials, each raised to its count
(:class:`flint.arb_poly`: balls with relative error bounds for coefficients of any
magnitude, no underflow), and ``P[L = +∞] = 1 − Π(1 − δ_g)^{n_g}``.

Every group is symmetric, so the grid is symmetric about 0 and ``Q[L = v] = P[L = −v]``:

    δ(ε) = P[L = ∞] + Σ_{v_i > ε} p_i (1 − e^{ε − v_i})
         = P[L = ∞] + Σ_{near} p_i·(−expm1(ε − v_i)) + P[L ≥ v_k] − e^ε P[L ≤ −v_k]

with the atoms just above ε taken one by one (no cancellation as ε approaches an atom) and
the rest from prefix sums.  Reference: Meiser & Mohammadi (2018), Koskela et al. (2020)
for privacy-loss distributions; here without discretisation: the grid is exact.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint

from exactdp.kinds.protocol import LossGroup, grid_step
from exactdp.numerics.errors import UncertifiedError

__all__ = ["FiniteLoss", "MAX_ATOMS", "prec_ctx"]

#: the largest grid the composition enumerates (atoms of the summed loss)
MAX_ATOMS = 4_000_000
#: atoms above ε taken one by one before the prefix sums
_NEAR = 4


class prec_ctx:
    """``with prec_ctx(bits):`` flint's working precision for the block."""

    def __init__(self, bits: int):
        self.bits = bits

    def __enter__(self):
        self.old, flint.ctx.prec = flint.ctx.prec, self.bits

    def __exit__(self, *exc):
        flint.ctx.prec = self.old


def _arb(q: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(q.numerator, q.denominator))


def _cumulative(xs: list) -> list:
    """``[0, x0, x0 + x1, …]`` (balls)."""
    out = [flint.arb(0)]
    s = flint.arb(0)
    for x in xs:
        s += x
        out.append(s)
    return out


class FiniteLoss:
    """The summed loss of ``(LossGroup, count)`` groups under P (see the module docstring).

    Attributes
    ----------
    step, offset : Fraction
        The grid ``v_i = offset + step·i``, ``i = 0 … size − 1`` (symmetric: offset = −v_max).
    size : int
        Number of grid points.
    """

    def __init__(self, groups: tuple):
        self.groups = tuple(groups)
        for g, _ in self.groups:
            if not isinstance(g, LossGroup):
                raise TypeError(f"not a loss group: {g!r}")
        steps = [g.lattice_weight for g, _ in self.groups]
        self.step = grid_step([Fraction(0), *steps])
        self.offset = sum((min(g.loss_values) * c for g, c in self.groups), Fraction(0))
        top = sum((max(g.loss_values) * c for g, c in self.groups), Fraction(0))
        if top != -self.offset:
            raise UncertifiedError("the loss groups are not symmetric (internal)")
        self.size = 1 if self.step == 0 else int((top - self.offset) / self.step) + 1
        if self.size > MAX_ATOMS:
            raise UncertifiedError(f"the composed loss of the non-Gaussian mechanisms has {self.size:.3g} grid atoms, "
                                   f"more than exactdp enumerates ({MAX_ATOMS:.0e}); use fewer distinct ε/scale "
                                   f"denominators (a coarser common grid) or smaller counts")
        self.has_infinite_mass = any(g.has_infinite_mass for g, _ in self.groups)
        self._cache: dict = {}

    def floor_exact(self) -> Fraction | None:
        """``P[L = +∞] = 1 − Π(1 − δ_g)^{n_g}`` exactly (None when the rational would pass
        10^5 digits: compare the balls of :meth:`tables` then)."""
        keep = Fraction(1)
        for g, c in self.groups:
            d = getattr(g, "delta", Fraction(0)) if g.has_infinite_mass else Fraction(0)
            if d:
                if c * (d.denominator.bit_length() + d.numerator.bit_length()) > 300_000:
                    return None
                keep *= (1 - d) ** c
        return 1 - keep

    def deficit(self, prec: int) -> flint.arb:
        """A ball ``[0, D]`` above the P-mass the groups' atoms leave out (windows of
        discrete Gaussians): every δ lies in ``[δ_kept, δ_kept + D]``."""
        got = self._cache.get(("deficit", prec))
        if got is None:
            with prec_ctx(prec):
                d = sum((g.deficit(prec) * c for g, c in self.groups), flint.arb(0))
                got = self._cache[("deficit", prec)] = flint.arb(0).union(d.upper()) if not d.is_zero() else d
        return got

    def value(self, i: int) -> Fraction:
        return self.offset + self.step * i

    # ------------------------------------------------------------------ the masses
    def tables(self, prec: int) -> tuple:
        """``(masses, prefix, suffix, p_inf)`` at ``prec`` bits: the P-mass of every grid atom,
        its prefix and suffix sums (``prefix[i] = Σ_{j<i} masses[j]``, ``suffix[i] = Σ_{j≥i}
        masses[j]``, each a sum of positive terms) and ``P[L = +∞]`` (balls)."""
        got = self._cache.get(prec)
        if got is None:
            got = self._cache[prec] = self._build(prec)
        return got

    def _build(self, prec: int) -> tuple:
        with prec_ctx(prec + 2 * max(8, int(math.log2(self.size + 1)))):
            total = flint.arb_poly([1])
            keep = flint.arb(1)
            for g, c in self.groups:
                values, masses = g.loss_atoms(flint.ctx.prec)
                v0 = values[0]
                pos = [0 if self.step == 0 else (v - v0) / self.step for v in values]
                if any(q.denominator != 1 for q in pos):  # every value must lie on the grid, exactly
                    raise UncertifiedError(f"internal: a loss value of {g!r} is off the composed grid")
                pos = [int(q) for q in pos]
                coeffs: list = [flint.arb(0)] * (pos[-1] + 1)
                for i, m in zip(pos, masses):
                    coeffs[i] += m
                total *= flint.arb_poly(coeffs) ** c
                if g.has_infinite_mass:
                    keep *= (1 - g.infinite_mass(flint.ctx.prec)) ** c
            masses = total.coeffs()
            masses += [flint.arb(0)] * (self.size - len(masses))
            return masses, _cumulative(masses), _cumulative(masses[::-1])[::-1], 1 - keep

    # ------------------------------------------------------------------ δ(ε)
    def first_above(self, e: Fraction) -> int:
        """The first grid index i with ``v_i > e`` (clamped to [0, size])."""
        if self.step == 0:
            return 0 if self.offset > e else self.size
        return min(max(math.floor((e - self.offset) / self.step) + 1, 0), self.size)

    def delta(self, e_lo: Fraction, e_hi: Fraction, e_ball: flint.arb, prec: int, kept: bool = False) -> flint.arb:
        """A ball containing δ(ε) for every ε in ``[e_lo, e_hi]`` (``e_ball`` ⊇ that interval);
        ``kept``: the δ of the kept atoms alone (without the :meth:`deficit`)."""
        masses, prefix, suffix, p_inf = self.tables(prec)
        with prec_ctx(prec):
            i0, i1 = self.first_above(e_lo), self.first_above(e_hi)
            out = p_inf + 0
            for i in range(i0, i1):  # atoms inside [e_lo, e_hi]: their term lies in [0, p_i(1 − e^{e_lo − v_i})]
                hi = masses[i] * -(_arb(e_lo - self.value(i))).expm1()
                out += flint.arb(0).union(hi.upper())
            k = min(i1 + _NEAR, self.size)
            for i in range(i1, k):
                out += masses[i] * -(e_ball - _arb(self.value(i))).expm1()
            if k < self.size:  # P[L ≥ v_k] − e^ε P[L ≤ −v_k]; v_k − ε ≥ _NEAR·step: little cancellation
                out += suffix[k] - e_ball.exp() * prefix[self.size - k]
            out = out.nonnegative_part() if out.lower() < 0 < out.upper() else out
            return out if kept else out + self.deficit(prec)

    def atoms(self, prec: int) -> tuple:
        """``(indices, masses)`` of the grid atoms of positive mass (masses as balls)."""
        masses = self.tables(prec)[0]
        idx = [i for i, m in enumerate(masses) if not m.is_zero()]
        return idx, [masses[i] for i in idx]
