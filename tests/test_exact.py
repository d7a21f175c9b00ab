from decimal import Decimal
from fractions import Fraction

import gmpy2
import numpy as np
import pytest

from exactdp.numerics.exact import InputError, fraction_str, positive_fraction, to_fraction, to_int


@pytest.mark.parametrize(
    "value, expected",
    [
        ("11/10000", Fraction(11, 10000)),
        (" 0.0011 ", Fraction(11, 10000)),
        ("1e-10", Fraction(1, 10**10)),
        ("2.5/3", Fraction(5, 6)),
        (7, Fraction(7)),
        (np.int64(3), Fraction(3)),
        (Decimal("0.1"), Fraction(1, 10)),
        (gmpy2.mpq(3, 7), Fraction(3, 7)),
        (gmpy2.mpz(5), Fraction(5)),
        (Fraction(2, 9), Fraction(2, 9)),
    ],
)
def test_exact_spellings(value, expected):
    assert to_fraction(value, "x") == expected


@pytest.mark.parametrize("value", [0.1, np.float64(0.25), float("nan")])
def test_binary_float_refused_with_instructions(value):
    with pytest.raises(InputError) as info:
        to_fraction(value, "sigma2")
    msg = str(info.value)
    assert msg.startswith("sigma2=")
    assert "11/10000" in msg


@pytest.mark.parametrize("value", ["", "abc", "1/0", "inf", "nan", True, [1]])
def test_garbage_refused(value):
    with pytest.raises(InputError, match="x="):
        to_fraction(value, "x")


def test_positive_and_int():
    with pytest.raises(InputError, match="must be > 0"):
        positive_fraction("0", "sigma2")
    with pytest.raises(InputError, match="integer"):
        to_int("1/2", "shift")
    assert to_int("4", "shift") == 4
    assert fraction_str(Fraction(6, 4)) == "3/2"
    assert fraction_str(Fraction(4)) == "4"
