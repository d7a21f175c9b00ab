"""The float64 fast path keeps *relative* accuracy for tails down to 1e-300 and beyond
(the regime stated in exactdp.engine.tails), against direct mpmath sums written here."""

from fractions import Fraction

import mpmath
import pytest

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tails import TailEngine


def _tail_of_sum(parts, s, dps=60):
    """P(Σ a_i X_i ≥ s), X_i ~ N_Z(0, σ_i²), by direct summation (mpmath, terms > 1e-400)."""
    with mpmath.workdps(dps):
        dists = []
        for a, s2 in parts:
            s2 = mpmath.mpf(s2.numerator) / s2.denominator
            half = int(mpmath.sqrt(2 * s2 * 1000)) + 5
            z = mpmath.fsum(mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) for x in range(-half, half + 1))
            dists.append({a * x: mpmath.exp(-mpmath.mpf(x) ** 2 / (2 * s2)) / z for x in range(-half, half + 1)})
        tot = {0: mpmath.mpf(1)}
        for d in dists:
            new = {}
            for u, p in tot.items():
                for v, q in d.items():
                    new[u + v] = new.get(u + v, 0) + p * q
            tot = new
        return mpmath.fsum(p for v, p in tot.items() if v >= s)


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
        ref = _tail_of_sum(parts, s)
        assert ref < mpmath.mpf("1e-270")
        got = mpmath.exp(mpmath.mpf(tv.log_value))
        assert abs(got / ref - 1) <= tv.rel_error
        assert tv.rel_error <= max(1e-10, 32 * 2.0**-52 * abs(tv.log_value))
