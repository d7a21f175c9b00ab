"""k-ary randomized response with parameter ε (binary by default)."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import flint

from exactdp.kinds.protocol import LossGroup
from exactdp.numerics.exact import InputError, parse_exact, to_int

__all__ = ["RandomizedResponse", "RandomizedResponseNoise"]



def _categories(k) -> int:
    """The number of categories k as an int in [2, 1e18], or InputError naming ``k``."""
    k = to_int(k, "k")
    if not 2 <= k <= 10**18:
        raise InputError("k", k, "randomized response needs k ≥ 2 categories (k ≤ 1e18)")
    return k

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
        object.__setattr__(self, "k", _categories(self.k))

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


@dataclass(frozen=True, order=True)
class RandomizedResponseNoise(LossGroup):
    """k-ary randomized response by its noise parameter p (dp_accounting's
    ``RandomizedResponseDpEvent``): with probability p the output is a uniformly random
    bucket, else the true one.

    The true bucket comes out with ``q1 = 1 − p + p/k``, each other one with ``q2 = p/k``; the
    loss under P is ``+log R`` (mass q1), ``−log R`` (mass q2) and 0 (mass ``(k − 2)p/k``) with
    the rational ``R = q1/q2 = 1 + k(1 − p)/p``.  Its ε = log R is irrational, so the kind is
    not on a rational loss grid: the mixed accountant conditions on the net count of ±log R
    steps (:mod:`exactdp.accounting.mixed_rr`).  p = 0 (no noise) is refused.

    >>> from exactdp.kinds import RandomizedResponseNoise
    >>> RandomizedResponseNoise("1/2", 3).ratio
    Fraction(4, 1)
    """

    p: Fraction
    k: int = 2
    kind = "randomized_response_noise"

    def __post_init__(self):
        p = parse_exact(self.p, "noise_parameter", lo=0, hi=1)
        if p == 0:
            raise InputError("noise_parameter", self.p, "p = 0 releases the true bucket: no finite ε")
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "k", _categories(self.k))

    @property
    def masses(self) -> tuple:
        """``(q2, q0, q1)``: the exact P-masses of the losses −log R, 0 and +log R."""
        q2 = self.p / self.k
        return q2, (self.k - 2) * q2, 1 - self.p + q2

    @property
    def ratio(self) -> Fraction:
        """R = q1/q2 (1 when p = 1: no loss)."""
        q2, _, q1 = self.masses
        return q1 / q2

    @property
    def loss_values(self) -> tuple:
        raise NotImplementedError("the loss values ±log R are irrational (see mixed_rr)")

    def loss_atoms(self, prec: int) -> tuple:
        raise NotImplementedError("the loss values ±log R are irrational (see mixed_rr)")

    @property
    def pure_epsilon(self) -> Fraction | None:
        """None: its ε = log R is irrational (not an exact rational ε)."""
        return None
