"""The discrete Laplace (two-sided geometric) mechanism ``x + DLap(scale)``."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint

from exactdp.kinds.protocol import LossGroup
from exactdp.numerics.exact import InputError, positive_fraction, to_int

__all__ = ["DiscreteLaplace"]


@dataclass(frozen=True, order=True)
class DiscreteLaplace(LossGroup):
    """``Pr[X = x] ∝ exp(−|x|/scale)`` on the integers, added to a query of integer ``shift``.

    The loss ``(|x − s| − |x|)/b`` under P takes ``|s| + 1`` values ``(|s| − 2j)/b``:
    ``|s|/b`` with mass ``1/(1+r)``, ``(|s| − 2j)/b`` with ``(1−r)/(1+r)·r^j`` (0 < j < |s|),
    ``−|s|/b`` with ``r^|s|/(1+r)``, where ``r = e^{−1/b}``; it is ε-DP with ε = |s|/b.
    """

    scale: Fraction
    shift: int = 1
    kind = "discrete_laplace"

    def __post_init__(self):
        object.__setattr__(self, "scale", positive_fraction(self.scale, "scale"))
        shift = to_int(self.shift, "shift")
        if abs(shift) > 10**6:
            raise InputError("shift", shift, "a discrete Laplace shift beyond 1e6 has more loss atoms than exactdp "
                                             "enumerates (|shift| ≤ 1e6); rescale the design")
        object.__setattr__(self, "shift", shift)

    @property
    def loss_values(self) -> tuple:
        m = abs(self.shift)
        return tuple(Fraction(m - 2 * j) / self.scale for j in range(m, -1, -1))

    def loss_atoms(self, prec: int) -> tuple:
        m = abs(self.shift)
        ctx = flint.ctx
        old, ctx.prec = ctx.prec, prec
        try:
            b = self.scale
            r = (-flint.arb(b.denominator) / b.numerator).exp()
            one_plus = 1 + r
            if m == 0:
                return (Fraction(0),), [flint.arb(1)]
            inner = (1 - r) / one_plus
            masses = [r**m / one_plus] + [inner * r**j for j in range(m - 1, 0, -1)] + [1 / one_plus]
            return self.loss_values, masses
        finally:
            ctx.prec = old
