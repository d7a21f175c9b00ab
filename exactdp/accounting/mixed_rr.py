"""Randomized response by its noise parameter (:class:`~exactdp.kinds.RandomizedResponseNoise`)
beside the rest of a :class:`~exactdp.kinds.Mixture`.

Each such group of n events has the loss ``B·log R`` with B the net count of ``+log R`` steps,
``P[B = b]`` the coefficient of ``z^b`` in ``(q2 z⁻¹ + q0 + q1 z)^n`` (exact integers over
``D^n`` with D the masses' common denominator: :class:`flint.fmpz_poly` powers).  Groups with
the same R multiply their polynomials; distinct R are independent.  By independence,

    δ(ε) = Σ_b P[b] · δ_rest(ε − Σ_g b_g log R_g)

where δ_rest is the rest's δ at the (ball) threshold, its own answer at negative thresholds
(``E_P[(1 − e^{t − L})₊]`` holds for every t; beside discrete Gaussians answered by their own
route, at the dyadic ends of t's ball: ``MixedAccountant._rest_at``).  Every term is a nonnegative ball
(:mod:`flint`): no cancellation between terms.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import flint

from exactdp.engine.finite_loss import prec_ctx
from exactdp.kinds.randomized_response import RandomizedResponseNoise
from exactdp.numerics.errors import UncertifiedError

__all__ = ["RRPart", "rr_part", "MAX_TERMS"]

#: the most joint values of the net counts taken (one evaluation of the rest each)
MAX_TERMS = 20001


def _exact(x: flint.arb) -> Fraction:
    """The exact value of an exact ball end."""
    m, e = x.man_exp()
    return Fraction(int(m)) * Fraction(2) ** int(e)


class RRPart:
    """The groups of :class:`~exactdp.kinds.RandomizedResponseNoise` of a design.

    Attributes
    ----------
    ratios : tuple of Fraction
        The distinct R > 1 (R = 1 is no loss and is left out).
    terms : list of (tuple of int, flint.fmpq)
        The net counts b (one per ratio) and their exact probability.
    extent : Fraction
        An upper bound of the largest loss ``Σ n log R``.
    """

    def __init__(self, groups: tuple):
        by_r: dict = {}
        for m, c in groups:
            q2, q0, q1 = m.masses
            if q1 == q2:  # (p = 1: the output ignores the input)
                continue
            den = math.lcm(q2.denominator, q0.denominator, q1.denominator)
            poly = flint.fmpz_poly([int(q * den) for q in (q2, q0, q1)]) ** c
            num, d, n = by_r.get(m.ratio, (flint.fmpz_poly([1]), 1, 0))
            by_r[m.ratio] = (num * poly, d * den**c, n + c)
        self.ratios = tuple(sorted(by_r))
        count = math.prod(2 * by_r[r][2] + 1 for r in self.ratios)
        if count > MAX_TERMS:
            raise UncertifiedError(f"randomized response by noise parameter: {count} joint net counts of the log R "
                                   f"steps exceed {MAX_TERMS} evaluations of the rest")
        per = []
        for r in self.ratios:
            num, d, n = by_r[r]
            per.append([(j - n, flint.fmpq(c, d)) for j, c in enumerate(num.coeffs()) if c != 0])
        self.terms = [(tuple(b for b, _ in combo), math.prod((q for _, q in combo), start=flint.fmpq(1)))
                      for combo in itertools.product(*per)]
        self.extent = sum((by_r[r][2] * _log_up(r) for r in self.ratios), Fraction(0))

    def delta(self, eb: flint.arb, prec: int, at) -> flint.arb:
        """``Σ_b P[b] · at(lo, hi, t_b)`` with the ball ``t_b = eb − Σ b_g log R_g`` and its exact
        ends lo ≤ hi (``at``: the rest's ball of δ for every threshold in [lo, hi])."""
        with prec_ctx(prec):
            logs = [flint.arb(flint.fmpq(r.numerator, r.denominator)).log() for r in self.ratios]
            total = flint.arb(0)
            for bs, q in self.terms:
                tb = eb - sum((b * lg for b, lg in zip(bs, logs)), flint.arb(0))
                got = at(_exact(tb.lower()), _exact(tb.upper()), tb)
                total += flint.arb(q) * got
            return total


def _log_up(r: Fraction) -> Fraction:
    """A rational above log r."""
    with prec_ctx(64):
        return _exact(flint.arb(flint.fmpq(r.numerator, r.denominator)).log().upper())


def rr_part(others: tuple) -> tuple:
    """``(RRPart or None, the other groups)``."""
    rr = tuple((m, c) for m, c in others if isinstance(m, RandomizedResponseNoise))
    rest = tuple((m, c) for m, c in others if not isinstance(m, RandomizedResponseNoise))
    return (RRPart(rr) if rr else None), rest
