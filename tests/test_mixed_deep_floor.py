"""A tiny P[L = +∞] beside discrete Gaussians: the floor of the (ε, δ) blocks must keep its
relative accuracy, so that δ far below 2^−128 is still decided (the second audit's false
"ε(1e-100) lies beyond 1e50"; bench/audit.md).  References: exact rationals and
:mod:`tests.mixed_brute` (output distributions enumerated at 70 digits, nothing of exactdp)."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute
import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.engine.finite_loss import FiniteLoss
from exactdp.kinds import ApproxDP, Mixture


def _exact(end) -> Fraction:
    """A ball's end (a radius-0 arb) as an exact rational."""
    man, exp = end.mid().man_exp()
    return Fraction(int(man)) * Fraction(2) ** int(exp)


@pytest.mark.parametrize("blocks", [
    ((ApproxDP("1/10", "1e-300"), 1),),
    ((ApproxDP("1/10", "1e-300"), 1), (ApproxDP("0", "3e-200"), 5)),
    ((ApproxDP("2", "1/3"), 4),),
])
def test_the_floor_of_tiny_deltas_keeps_its_relative_accuracy(blocks):
    keep = Fraction(1)
    for m, c in blocks:
        keep *= (1 - Fraction(m.delta)) ** c
    exact = 1 - keep
    for prec in (128, 256):
        p_inf = FiniteLoss(blocks).tables(prec)[3]
        lo, hi = _exact(p_inf.lower()), _exact(p_inf.upper())
        # the exact floor inside, and the ball relatively narrow (the complement of the product
        # had an absolute radius of 2^−prec: 8.97e-44 at 128 bits around 1e-300)
        assert 0 <= lo <= exact <= hi
        assert float((p_inf.upper() - p_inf.lower()) / p_inf.upper()) < 1e-15


def test_epsilon_far_below_two_to_the_minus_128_beside_the_gaussian_oracle():
    dg, block = (DiscreteGaussian("8.2246", -3), 3), (ApproxDP("1/10", "1e-300"), 1)
    acc = ExactAccountant(Mixture((dg, block)))
    assert acc._route_acc.gauss is not None  # (the oracle path, whose decisions stop at 256 bits)
    atoms = mixed_brute.joint([dg, block])
    for target in ("1e-100", "1e-250"):
        p = acc.epsilon([target])[0]
        star = mixed_brute.epsilon(atoms, Fraction(target))
        assert p.lower <= star <= p.upper
        assert (p.upper - p.lower) <= 1e-9 * p.upper
        with mpmath.workdps(mixed_brute.DPS):  # both ends judged by the enumeration
            t = mpmath.mpf(Fraction(target).numerator) / Fraction(target).denominator
            assert mixed_brute.delta(atoms, Fraction(*p.upper.as_integer_ratio()))[1] <= t
            assert mixed_brute.delta(atoms, Fraction(*p.lower.as_integer_ratio()))[0] > t
