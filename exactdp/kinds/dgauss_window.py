"""A discrete Gaussian as a finite loss group: its pmf on a window, the rest as a deficit."""

from __future__ import annotations

import math
from fractions import Fraction

import flint

from exactdp.kinds.protocol import LossGroup
from exactdp.mechanisms import DiscreteGaussian

__all__ = ["GaussianWindow"]

#: the window keeps all but e^{-NATS} of the mass (relative), far below any δ asked (1e-300)
NATS = 760


class GaussianWindow(LossGroup):
    """``N_Z(0, σ²)`` against ``N_Z(s, σ²)`` on the outputs ``x ∈ [−K, K + |s|]`` (a window
    symmetric under the reflection ``x ↦ |s| − x`` that swaps P and Q), with loss values
    ``(s² − 2|s|x)/(2σ²)``; the mass outside is :meth:`deficit` (a certified bound), which
    widens every answer on its conservative side.

    Parameters
    ----------
    mech : DiscreteGaussian
    count : int
        The multiplicity (the window is sized so that ``count`` copies lose ≤ e^{-nats}).
    nats : float
        How deep the window reaches (default :data:`NATS`; a β far below e^{-NATS} needs more).
    """

    kind = "discrete_gaussian"

    def __init__(self, mech: DiscreteGaussian, count: int = 1, nats: float = NATS):
        self.mech = mech
        self.s = abs(mech.shift)
        self.nats = nats
        sigma = math.sqrt(float(mech.sigma2))
        self.k = int(math.ceil(sigma * math.sqrt(2 * (nats + math.log(max(count, 1)))))) + 1
        self._values: tuple | None = None  # (built on first use: the span decides whether it is)

    @property
    def loss_values(self) -> tuple:
        if self._values is None:
            s, s2 = self.s, self.mech.sigma2
            self._values = tuple(Fraction(s * s - 2 * s * x) / (2 * s2) for x in range(self.k + s, -self.k - 1, -1))
        return self._values

    @property
    def span(self) -> Fraction:
        """``max − min`` of the loss values, ``s(s + 2K)/σ²``, without building them."""
        return Fraction(self.s * (self.s + 2 * self.k)) / self.mech.sigma2

    @property
    def lattice_weight(self) -> Fraction:
        return Fraction(self.s) / self.mech.sigma2  # consecutive x: (s² − 2s·x)/(2σ²) moves by s/σ²
    def _tail(self, m: int, inv: flint.arb) -> flint.arb:
        """A ball above ``Σ_{x ≥ m} e^{−x²/(2σ²)}`` (m ≥ 1): first term plus the integral."""
        first = (-(flint.arb(m) ** 2) * inv).exp()
        return first * (1 + 1 / (flint.arb(m) * inv * 2))

    def _norm(self, prec: int) -> tuple:
        s2 = self.mech.sigma2
        inv = 1 / (2 * flint.arb(flint.fmpq(s2.numerator, s2.denominator)))
        m = self.k + self.s
        w = {x: (-(flint.arb(x) ** 2) * inv).exp() for x in range(0, m + 1)}
        inner = w[0] + 2 * sum((w[x] for x in range(1, m + 1)), flint.arb(0))
        z = inner + flint.arb(0).union(2 * self._tail(m + 1, inv))
        del prec
        return w, z, inv

    def loss_atoms(self, prec: int) -> tuple:
        ctx = flint.ctx
        old, ctx.prec = ctx.prec, prec
        try:
            w, z, _ = self._norm(prec)
            s = self.s
            # the loss (s² − 2sx)/(2σ²) decreases in x: sorted values are x = K + s, …, −K
            masses = [w[abs(x)] / z for x in range(self.k + s, -self.k - 1, -1)]
            return self.loss_values, masses
        finally:
            ctx.prec = old

    def deficit(self, prec: int) -> flint.arb:
        """A ball containing the P-mass outside the window."""
        ctx = flint.ctx
        old, ctx.prec = ctx.prec, prec
        try:
            _, z, inv = self._norm(prec)
            out = (self._tail(self.k + 1, inv) + self._tail(self.k + self.s + 1, inv)) / z.lower()
            return flint.arb(0).union(out.upper())
        finally:
            ctx.prec = old
