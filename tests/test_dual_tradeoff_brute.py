"""β(α) of the lattice-free dual (:mod:`exactdp.accounting.dual_tradeoff`) against the exact
Neyman–Pearson curve, on small designs drawn by hypothesis.

The reference is :func:`harness.tradeoff_brute`: the exact loss distributions of both
hypotheses enumerated in mpmath (60 digits, atoms below e^{−165} dropped: an absolute error
below :data:`harness.BRUTE_ABS_ERROR`), the curve's vertices summed from the rejected end and
interpolated linearly — nothing of exactdp's engine.  The designs are two or three discrete
Gaussians with σ² in [0.05, 1.3] and shifts ±1, 2: their loss is a few dozen atoms, so G is
piecewise linear in e^ε and the maximiser sits on a kink (the case where Brent's location and
the stencils must hand over to the chords' peak).  α runs from 1e-100 to 1 − 1e-12.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BRUTE_ABS_ERROR, tradeoff_brute

SIGMA2 = ("0.05", "0.1", "0.15", "0.37", "0.7", "1.0", "1.3")
EXTREMES = [F(1, 10**100), F(1, 10**30), F(1, 10**6), 1 - F(1, 10**6), 1 - F(1, 10**12)]
REL = mpmath.mpf("1e-9")

designs = st.lists(st.tuples(st.sampled_from(SIGMA2), st.sampled_from((1, -1, 2))), min_size=2, max_size=3)
middle = st.fractions(min_value=F(1, 1000), max_value=F(999, 1000), max_denominator=1000)


@settings(max_examples=8, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(design=designs, a1=middle, a2=middle, k=st.integers(0, len(EXTREMES) - 2))
def test_beta_brackets_contain_the_neyman_pearson_curve(design, a1, a2, k):
    mechs = [(F(s2), d) for s2, d in design]
    acc = LatticeFreeAccountant(Composition([(DiscreteGaussian(s2, d), 1) for s2, d in mechs]))
    alphas = sorted({a1, a2, *EXTREMES[k:k + 2]})
    points = acc.tradeoff(alphas)
    for a, p in zip(alphas, points):
        ref = tradeoff_brute(mechs, a)
        with mpmath.workdps(60):
            assert p.lower - BRUTE_ABS_ERROR <= ref <= p.upper + BRUTE_ABS_ERROR, (design, a, p.lower, ref, p.upper)
            assert p.upper - p.lower <= REL * p.upper, (design, a, p.lower, p.upper)


def test_beta_at_the_extremes_on_a_kink_design():
    """Every α of :data:`EXTREMES` on the bench's three tiny variances (atoms 10 nats apart)."""
    mechs = [(F("0.05"), 1), (F("0.37"), 1), (F("1.0"), -1)]
    acc = LatticeFreeAccountant(Composition([(DiscreteGaussian(s2, d), 1) for s2, d in mechs]))
    alphas = EXTREMES + [F(1, 100), F(1, 2), F(9, 10)]
    for a, p in zip(alphas, acc.tradeoff(alphas)):
        ref = tradeoff_brute(mechs, a)
        with mpmath.workdps(60):
            assert p.lower - BRUTE_ABS_ERROR <= ref <= p.upper + BRUTE_ABS_ERROR, (a, p.lower, ref, p.upper)
            assert p.upper - p.lower <= REL * p.upper, (a, p.lower, p.upper)
