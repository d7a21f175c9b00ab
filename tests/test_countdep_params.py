"""Parameters and σ of the shifted-log Gaussian mechanism (Fitzsimons 2026, eq. 3)."""

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.countdep import ShiftedLogParams
from exactdp.countdep.params import validate_count, validate_positive_count
from exactdp.numerics.exact import InputError


def _sigma_by_root(r0, c):
    # Independent reference: solve Φ(σ) = 1/2 + r0/(2(1+c)) with mpmath.findroot (secant),
    # instead of the code's √2·erfinv(r0/(1+c)).
    with mpmath.workdps(50):
        r0m, cm = mpmath.mpf(r0.numerator) / r0.denominator, mpmath.mpf(c.numerator) / c.denominator
        target = mpmath.mpf(1) / 2 + r0m / (2 * (1 + cm))
        return mpmath.findroot(lambda s: mpmath.ncdf(s) - target, mpmath.mpf("0.5"))


@pytest.mark.parametrize("r, r0, c", [("1/10", "1/20", "1"), ("0.5", "0.49", "1/100"), ("1", "0.999", "7")])
def test_sigma_solves_eq3(r, r0, c):
    p = ShiftedLogParams.create(r, r0, c)
    ref = _sigma_by_root(p.r0, p.c)
    with mpmath.workdps(40):
        assert abs(p.sigma(30) / ref - 1) < mpmath.mpf(10) ** -28
    assert abs(p.sigma_float() / float(ref) - 1) < 1e-15


def test_defaults_are_theorem_1_1():
    # Theorem 1.1: "take, for example, r0 = r/2 and c = 1".
    p = ShiftedLogParams.create("3/10")
    assert (p.r, p.r0, p.c) == (Fraction(3, 10), Fraction(3, 20), Fraction(1))


def test_corollary_3_2_sigma_with_c_1():
    # Corollary 3.2: with c = 1, σ = Φ⁻¹(1/2 + r0/4); reference computed with mpmath.findroot.
    p = ShiftedLogParams.create("1/4", "1/8", 1)
    with mpmath.workdps(40):
        ref = mpmath.findroot(lambda s: mpmath.ncdf(s) - (mpmath.mpf(1) / 2 + mpmath.mpf(1) / 32), 0.1)
        assert abs(p.sigma() - ref) < mpmath.mpf(10) ** -30


@settings(max_examples=25, deadline=None)
@given(
    r=st.fractions(min_value=Fraction(1, 1000), max_value=1),
    t=st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000)),
    c=st.fractions(min_value=Fraction(1, 1000), max_value=100),
)
def test_sigma_invariant_2phi_minus_1(r, t, c):
    # Lemma 4.1 + eq. (3): 2Φ(σ) − 1 = r0/(1+c), the pre-clipping relative error.
    p = ShiftedLogParams.create(r, r * t, c)
    with mpmath.workdps(40):
        lhs = 2 * mpmath.ncdf(p.sigma(30)) - 1
        rhs = mpmath.mpf(p.q.numerator) / p.q.denominator
        assert abs(lhs / rhs - 1) < mpmath.mpf(10) ** -27
        assert p.sigma() > 0


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"r": "0"}, "r"),
        ({"r": "11/10"}, "r"),
        ({"r": "-1/2"}, "r"),
        ({"r": 0.1}, "r"),  # a binary float is refused
        ({"r": "1/10", "r0": "1/10"}, "r0"),
        ({"r": "1/10", "r0": "1/5"}, "r0"),
        ({"r": "1/10", "r0": "0"}, "r0"),
        ({"r": "1/10", "r0": 0.05}, "r0"),
        ({"r": "1/10", "c": "0"}, "c"),
        ({"r": "1/10", "c": "-2"}, "c"),
        ({"r": "1/10", "c": 1.5}, "c"),
    ],
)
def test_invalid_parameters_name_the_field(kwargs, field):
    with pytest.raises(InputError) as info:
        ShiftedLogParams.create(**kwargs)
    assert info.value.field == field
    assert str(info.value).startswith(f"{field}=")


def test_direct_construction_validates():
    with pytest.raises(InputError, match="r0"):
        ShiftedLogParams(Fraction(1, 10), Fraction(1, 5), Fraction(1))
    with pytest.raises(InputError, match="create"):
        ShiftedLogParams("1/10", Fraction(1, 20), Fraction(1))


def test_count_validation():
    assert validate_count("0") == 0
    assert validate_count(12) == 12
    with pytest.raises(InputError, match="^n="):
        validate_count(-1)
    with pytest.raises(InputError, match="^n="):
        validate_count("2.5")
    with pytest.raises(InputError, match="^n="):
        validate_count(3.0)
    with pytest.raises(InputError, match="^n="):
        validate_positive_count(0)
