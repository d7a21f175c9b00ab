"""k-ary randomized response with parameter ε (binary by default)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint

from exactdp.kinds.protocol import LossGroup
from exactdp.numerics.exact import InputError, parse_exact, to_int

__all__ = ["RandomizedResponse"]


@dataclass(frozen=True, order=True)
class RandomizedResponse(LossGroup):
    """Report the true category with probability ``e^ε/(e^ε + k − 1)``, each other one with
    ``1/(e^ε + k − 1)``.

    Two neighbouring inputs differ in their category: the loss under P is ``ε`` with mass
    ``e^ε/(e^ε+k−1)``, ``−ε`` with ``1/(e^ε+k−1)`` and ``0`` with ``(k−2)/(e^ε+k−1)``.
    """

    epsilon: Fraction
    k: int = 2
    kind = "randomized_response"

    def __post_init__(self):
        object.__setattr__(self, "epsilon", parse_exact(self.epsilon, "epsilon", lo=0, hi=10**6))
        k = to_int(self.k, "k")
        if not 2 <= k <= 10**18:
            raise InputError("k", k, "randomized response needs k ≥ 2 categories (k ≤ 1e18)")
        object.__setattr__(self, "k", k)

    @property
    def loss_values(self) -> tuple:
        e = self.epsilon
        vals = [-e, e] if self.k == 2 else [-e, Fraction(0), e]
        return tuple(sorted(set(vals)))

    def loss_atoms(self, prec: int) -> tuple:
        ctx = flint.ctx
        old, ctx.prec = ctx.prec, prec
        try:
            e = self.epsilon
            if e == 0:
                return (Fraction(0),), [flint.arb(1)]
            ee = (flint.arb(e.numerator) / e.denominator).exp()
            den = ee + (self.k - 1)
            masses = [1 / den] + ([flint.arb(self.k - 2) / den] if self.k > 2 else []) + [ee / den]
            return self.loss_values, masses
        finally:
            ctx.prec = old
