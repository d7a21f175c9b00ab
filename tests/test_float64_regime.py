"""The float64 fast path keeps *relative* accuracy for tails down to 1e-300 and beyond
(the regime stated in exactdp.engine.tails), against direct mpmath sums of the shared
harness (tests/harness.py: factors kept down to e^-1000, 60 digits)."""

from fractions import Fraction

import mpmath
import pytest

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tails import TailEngine

from harness import tail_brute


@pytest.mark.parametrize(
    "parts, thresholds",
    [
        ([(1, Fraction(2))], [52, 60]),  # ~1e-294, ~1e-391
        ([(1, Fraction(3)), (2, Fraction(5, 2))], [140, 170]),  # ~1e-327, ~1e-483
    ],
)
def test_relative_accuracy_far_below_1e_300(parts, thresholds):
    lat = LatticeSum(tuple(a for a, _ in parts), (1,) * len(parts), tuple(s2 for _, s2 in parts),
                     Fraction(1), Fraction(0), 0)  # S = Σ a_i X_i directly
    eng = TailEngine(lat)
    for s, tv in zip(thresholds, eng.tails(thresholds)):
        ref = tail_brute(parts, s)
        assert ref < mpmath.mpf("1e-270")
        got = mpmath.exp(mpmath.mpf(tv.log_value))
        assert abs(got / ref - 1) <= tv.rel_error
        assert tv.rel_error <= max(1e-10, 32 * 2.0**-52 * abs(tv.log_value))
