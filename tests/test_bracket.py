"""One bracket type (:class:`exactdp.accounting.results.Bracket`) and one meaning of
``error_bound`` (a certified bound on ``|estimate − truth|``), checked on both routes'
points against exact brute-force references (``harness``: enumeration of the loss
distribution at 60 digits), not against the code itself.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.results import Bracket
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import delta_brute, epsilon_brute, tradeoff_brute

MECHS = [(F(3), 1), (F(7, 3), 2), (F(5, 4), -1)]


def _check(point, truth, side: str) -> None:
    assert isinstance(point, Bracket)
    with mpmath.workdps(80):
        t = mpmath.mpf(truth)
        assert point.lower <= t <= point.upper
        assert point.reported_side == side and point.value == getattr(point, side)
        assert point.width == point.upper - point.lower >= 0  # exact
        assert abs(point.estimate - t) <= point.half_width <= point.width
        assert abs(point.estimate - t) <= point.error_bound  # the one meaning
        # outward conversions keep the reported side a bound
        assert (float(point) >= t) if side == "upper" else (float(point) <= t)
        d8 = mpmath.mpf(str(point.to_decimal(8)))
        assert (d8 >= t) if side == "upper" else (d8 <= t)


@pytest.mark.parametrize("method", ["lattice", "lattice-free"])
def test_points_are_brackets_with_one_error_bound_meaning(method):
    acc = ExactAccountant(Composition.of(DiscreteGaussian(s, d) for s, d in MECHS), method=method)
    for pt, eps in zip(acc.delta(["1/2", "2"]), (F(1, 2), F(2))):
        _check(pt, delta_brute(MECHS, eps), "upper")
        # δ: the half-width (the ends are estimate ± error_bound at DPS_RESULT + 10 digits: one
        # rounding of the larger end, absorbed by the bound's own rounding allowance)
        with mpmath.workdps(80):
            assert pt.half_width <= pt.error_bound + pt.upper * mpmath.mpf(10) ** -35
    for pt, dl in zip(acc.epsilon(["1e-3", "1e-9"]), (F(1, 10**3), F(1, 10**9))):
        _check(pt, epsilon_brute(MECHS, dl), "upper")
        assert pt.error_bound == pt.width  # ε: the full width (documented)
    for pt, a in zip(acc.tradeoff(["1/10", "1/1000"]), (F(1, 10), F(1, 1000))):
        _check(pt, tradeoff_brute(MECHS, a), "lower")
