"""Result points as numbers and table rows (notebooks): conversions stay on the bound's side.

The references are exact rationals (``fractions.Fraction``) compared with the converted
float or Decimal, nothing of the engine: a conversion of an upper bound must be ≥ the exact
value and the least such float; of a lower bound ≤ and the greatest.
"""

from __future__ import annotations

import math
from decimal import Decimal
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, seed, settings
from hypothesis import strategies as st

from exactdp import Composition, ExactAccountant
from exactdp import delta as delta_query
from exactdp.numerics.directed import directed_decimal, directed_float
from exactdp.report.numbers import to_text

# exact rationals from below the subnormal range to beyond the float range
_mant = st.integers(min_value=1, max_value=10**30)
_exp10 = st.integers(min_value=-400, max_value=400)


def _rational(m, e, neg):
    q = Fraction(m) * Fraction(10) ** e
    return -q if neg else q


@seed(20261206)
@settings(max_examples=300, deadline=None)
@given(_mant, _exp10, st.booleans())
def test_directed_float_is_the_nearest_float_on_its_side(m, e, neg):
    q = _rational(m, e, neg)
    up, down = directed_float(q, True), directed_float(q, False)
    if not math.isinf(up):
        assert Fraction(up) >= q
        below = math.nextafter(up, -math.inf)
        assert math.isinf(below) or Fraction(below) < q
    else:
        assert q > Fraction(1.7976931348623157e308)
    if not math.isinf(down):
        assert Fraction(down) <= q
        above = math.nextafter(down, math.inf)
        assert math.isinf(above) or Fraction(above) > q
    else:
        assert q < -Fraction(1.7976931348623157e308)


@seed(20261206)
@settings(max_examples=200, deadline=None)
@given(_mant, _exp10, st.booleans(), st.integers(min_value=1, max_value=30))
def test_decimal_rounds_outward_to_the_digits_asked(m, e, neg, digits):
    q = _rational(m, e, neg)
    with mpmath.workprec(200):  # an mpf carrying more bits than the global precision
        x = mpmath.mpf(q.numerator) / q.denominator
    exact = _mpf_fraction(x)
    up, down = directed_decimal(x, True, digits), directed_decimal(x, False, digits)
    assert Fraction(up) >= exact >= Fraction(down)
    assert len(up.as_tuple().digits) <= digits and len(down.as_tuple().digits) <= digits
    ulp = Decimal((0, (1,), up.as_tuple().exponent))
    assert Fraction(up) - Fraction(ulp) < exact or up == down


def _mpf_fraction(x):
    sign, man, exp, _ = x._mpf_
    v = Fraction(int(man)) * Fraction(2) ** exp
    return -v if sign else v


@pytest.fixture(scope="module")
def acc():
    return ExactAccountant(Composition.from_sigma2(["2"]))


def test_points_convert_to_their_conservative_side(acc):
    # δ far below the float range: float() of an upper bound is never 0
    for p in acc.delta(["1", "0", "40"]):
        assert Fraction(float(p)) >= _mpf_fraction(p.value)
        assert float(p) > 0
        assert Fraction(p.to_decimal()) >= _mpf_fraction(p.value)
        assert Fraction(p.to_decimal(side="lower")) <= _mpf_fraction(p.lower)
    for p in acc.tradeoff(["0.5", "1e-300", "0.999999999999"]):
        assert Fraction(float(p)) <= _mpf_fraction(p.value)
        assert Fraction(p.to_decimal()) <= _mpf_fraction(p.value)
    (e,) = acc.epsilon(["1e-10"])
    assert Fraction(float(e)) >= _mpf_fraction(e.value)
    with pytest.raises(ValueError, match="side"):
        e.to_decimal(side="middle")


def test_rich_display_and_rows(acc):
    (p,) = acc.delta(["1"])
    assert "δ(epsilon = 1.0) ≤ **0.0428120889862**" in p._repr_markdown_()
    assert p._repr_html_().startswith("<span") and "certified bracket" in p._repr_html_()
    (b,) = acc.tradeoff(["0.5"])
    assert "≥" in b._repr_markdown_()
    row = p.as_row()
    assert row["lower"] <= row["value"] <= row["upper"] and row["epsilon"] == 1.0
    res = delta_query(Composition.from_sigma2(["2"]), ["1", "2"])
    assert len(res) == 2 and float(res[0]) == float(p) and list(res)[1] is res.points[1]
    assert res._repr_html_().count("<li>") == 2


def test_to_pandas_is_one_row_per_point():
    import pandas  # in the test extras

    res = delta_query(Composition.from_sigma2(["2"]), ["0", "1", "3"])
    frame = res.to_pandas()
    assert isinstance(frame, pandas.DataFrame)
    assert list(frame.columns) == ["epsilon", "value", "lower", "upper", "estimate", "error_bound"]
    assert list(frame["epsilon"]) == [0.0, 1.0, 3.0]
    assert (frame["value"] >= frame["estimate"]).all()


def test_to_text_of_a_long_mpf_rounds_on_its_side():
    # mpf(x) of a 50-digit mpf re-rounds it to 53 bits (to nearest): to_text once wrote the
    # upper bound 1/3 (50 digits) as 0.33333333333333331483 "up" — below the bound
    with mpmath.workdps(50):
        x = mpmath.mpf(1) / 3
    exact = _mpf_fraction(x)
    assert Fraction(to_text(x, 30, "up")) >= exact >= Fraction(to_text(x, 30, "down"))
    assert to_text(x, 30, "up") == "0.333333333333333333333333333334"


def test_huge_exponents_convert_without_building_the_exact_ratio():
    """A δ of σ² = 1e16 at ε = 1 is ~5e-2171472409516284 (binary exponent −7.2e15): float()
    and Decimal conversions answer on their side at once (exact_ratio would build 2^(7.2e15));
    the far-exponent decimal path is checked against the exact one on 3,000 values."""
    import random
    import time
    from decimal import Decimal
    from fractions import Fraction

    import mpmath
    from mpmath.libmp import MPZ

    from exactdp.numerics.directed import _far_decimal, directed_decimal, directed_float

    man = MPZ(374144419156711147060143317175368453069333172917527)
    tiny = mpmath.mp.make_mpf((0, man, -7213475204445066, 169))
    huge = mpmath.mp.make_mpf((1, man, 7213475204445066, 169))
    t0 = time.perf_counter()
    assert directed_float(tiny, True) == 5e-324 and directed_float(tiny, False) == 0.0
    assert directed_float(huge, True) == -1.7976931348623157e308 and directed_float(huge, False) == -float("inf")
    lo, hi = directed_decimal(tiny, False, 20), directed_decimal(tiny, True, 20)
    assert lo < hi and lo.adjusted() == hi.adjusted() and Decimal(0) < lo
    assert directed_decimal(huge, False, 12) < directed_decimal(huge, True, 12) < 0
    assert time.perf_counter() - t0 < 5
    rng = random.Random(20261207)
    for _ in range(3000):
        with mpmath.workprec(rng.choice((53, 113, 200))):
            v = mpmath.mpf(rng.getrandbits(200) | 1) * mpmath.mpf(2) ** rng.randint(-3000, 3000)
            v = -v if rng.random() < 0.5 else v
        digits = rng.choice((6, 12, 20, 30))
        exact = Fraction(*(int(t) for t in v.as_integer_ratio()))
        up, down = _far_decimal(v, True, digits), _far_decimal(v, False, digits)
        assert Fraction(down) <= exact <= Fraction(up)
        for got, ref in ((up, directed_decimal(v, True, digits)), (down, directed_decimal(v, False, digits))):
            assert abs(Fraction(got) - Fraction(ref)) <= abs(Fraction(ref)) * Fraction(10) ** (2 - digits)


def _q(x: mpmath.mpf) -> Fraction:
    return Fraction(*x.as_integer_ratio())


@pytest.mark.parametrize("k", [150, 180, 300])
def test_derived_ends_are_rounded_outward_not_to_nearest(k):
    """``lower``/``upper``/``value`` of a point whose estimate has more bits than the derived
    arithmetic keeps: 1 − 2^−k ∓ 2^−400 at 50 digits rounds to 1 when rounded to nearest,
    which would put a lower end above the truth (exact rationals judge)."""
    from exactdp.accounting.results import BracketedDelta, BracketedTradeoff, EpsilonPoint

    with mpmath.workprec(600):
        est, err = 1 - mpmath.mpf(2) ** -k, mpmath.mpf(2) ** -400
    exact_lo, exact_hi = _q(est) - _q(err), _q(est) + _q(err)
    beta = BracketedTradeoff(mpmath.mpf(0), est, err, 0, "bracket")
    assert _q(beta.lower) <= exact_lo and _q(beta.value) <= exact_lo
    assert _q(beta.upper) >= min(exact_hi, Fraction(1))
    delta = BracketedDelta(mpmath.mpf(1), est, err, est, mpmath.mpf(0), (), "bracket")
    assert _q(delta.lower) <= exact_lo and _q(delta.upper) >= exact_hi and _q(delta.value) >= exact_hi
    with mpmath.workprec(600):
        hi = 1 + mpmath.mpf(2) ** -k
    eps = EpsilonPoint(mpmath.mpf(0), est, est, hi, 0)
    assert _q(eps.error_bound) >= _q(hi) - _q(est)
