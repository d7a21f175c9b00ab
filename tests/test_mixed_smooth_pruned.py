"""Finite parts of many atoms beside continuous Gaussians: δ summed over the atoms that matter.

``MixedAccountant._smooth`` sums ``p_i δ_N(ε − v_i)`` (the continuous Gaussians' closed form)
over the atoms in decreasing order of their zCDP bound, the rest bounded
(:meth:`~exactdp.accounting.mixed.MixedAccountant._pruned`), and ε(δ)'s search starts from the
least ε that bound certifies, its estimates on the 128-bit ball (a near-deterministic group with a
large shift beside them once took minutes for one ε(δ)).  The reference: the finite part's loss
atoms enumerated from the output distributions and the Gaussians' closed form (``mixed_brute``,
nothing of the engine); ε(δ) judged by the reference's δ at both ends.
"""

from __future__ import annotations

from fractions import Fraction

import mixed_brute
import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant
from exactdp.kinds import DiscreteLaplace, Gaussian, Mixture

FINITE = ((DiscreteGaussian("0.1", -5), 6), (DiscreteLaplace("1/2", -1), 6))
GAUSS = (Gaussian("1/2", 3), 2)
MU = Fraction(18)  # 2 × 3²/(2 · 1/2)


@pytest.fixture(scope="module")
def design():
    acc = ExactAccountant(Mixture(FINITE + (GAUSS,)))
    atoms = mixed_brute.joint(list(FINITE))
    assert len(atoms[0]) > 256  # (the pruned sum, not the plain one)
    return acc, atoms


def _fraction(x) -> Fraction:
    return Fraction(*map(int, mpmath.mpf(x).as_integer_ratio()))


@pytest.mark.parametrize("eps", ["0", "700", "780", "850", "1000", "1400"])
def test_delta_contains_the_enumeration(design, eps):
    acc, atoms = design
    p = acc.delta([eps])[0]
    lo, hi = mixed_brute.delta_gaussian(atoms, Fraction(eps), MU)
    assert p.lower <= lo and min(hi, 1) <= p.upper, (eps, p, lo, hi)  # (δ ≤ 1: the engine's upper end is
    # clamped there, the reference's s·(1 + err) at ε = 0 lies above it)
    assert p.upper - p.lower <= mpmath.mpf("1e-9") * p.upper


@pytest.mark.parametrize("target", ["0.5", "1e-3", "1e-10", "1e-60", "1e-300"])
def test_epsilon_ends_are_judged_right_by_the_enumeration(design, target):
    acc, atoms = design
    p = acc.epsilon([target])[0]
    t = mpmath.mpf(Fraction(target).numerator) / Fraction(target).denominator
    assert mixed_brute.delta_gaussian(atoms, _fraction(p.lower), MU)[0] > t  # δ(ε_lo) > target
    assert mixed_brute.delta_gaussian(atoms, _fraction(p.upper), MU)[1] <= t  # δ(ε_hi) ≤ target
    assert p.upper - p.lower <= mpmath.mpf("1e-9") * p.upper
