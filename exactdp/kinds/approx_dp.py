"""Any (ε, δ)-DP mechanism, through its exact dominating pair."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint

from exactdp.kinds.protocol import LossGroup
from exactdp.numerics.exact import parse_exact

__all__ = ["ApproxDP"]


@dataclass(frozen=True, order=True)
class ApproxDP(LossGroup):
    """An (ε, δ)-DP mechanism known only by (ε, δ), composed through the pair that dominates
    every such mechanism (Kairouz, Oh & Viswanath 2015; Murtagh & Vadhan 2016)::

        P = (δ, (1−δ)e^ε/(1+e^ε), (1−δ)/(1+e^ε), 0)
        Q = (0, (1−δ)/(1+e^ε), (1−δ)e^ε/(1+e^ε), δ)

    The loss under P is +∞ with mass δ, ε with ``(1−δ)e^ε/(1+e^ε)``, −ε with ``(1−δ)/(1+e^ε)``.
    """

    epsilon: Fraction
    delta: Fraction = Fraction(0)
    kind = "approx_dp"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", parse_exact(self.epsilon, "epsilon", lo=0, hi=10**6))
        object.__setattr__(self, "delta", parse_exact(self.delta, "delta", lo=0, hi=1, hi_open=True))

    @property
    def has_infinite_mass(self) -> bool:
        return self.delta > 0

    def infinite_mass(self, prec: int) -> flint.arb:
        del prec
        return flint.arb(self.delta.numerator) / self.delta.denominator if self.delta else flint.arb(0)

    @property
    def loss_values(self) -> tuple:
        e = self.epsilon
        return (Fraction(0),) if e == 0 else (-e, e)

    def loss_atoms(self, prec: int) -> tuple:
        ctx = flint.ctx
        old, ctx.prec = ctx.prec, prec
        try:
            keep = 1 - flint.arb(self.delta.numerator) / self.delta.denominator
            e = self.epsilon
            if e == 0:
                return (Fraction(0),), [keep]
            ee = (flint.arb(e.numerator) / e.denominator).exp()
            return self.loss_values, [keep / (1 + ee), keep * ee / (1 + ee)]
        finally:
            ctx.prec = old
