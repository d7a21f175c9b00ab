"""Exact parameters: parsing to :class:`fractions.Fraction`, refusing binary floats.

Privacy parameters (variances, budgets, ε, δ targets) are exact rationals in exactdp.
Accepted spellings: ``int``, :class:`fractions.Fraction`, ``gmpy2.mpq``/``mpz``,
:class:`decimal.Decimal`, and strings such as ``"11/10000"``, ``"0.0011"`` or ``"1e-10"``
(a decimal string is read exactly, digit for digit).  A binary ``float`` is refused:
``0.1`` is not one tenth, and silently using 0.1000000000000000055511151231257827 where
an exact budget was meant is the kind of error this project exists to avoid.
"""

from __future__ import annotations

import decimal
import math
import numbers
from fractions import Fraction

import mpmath

from exactdp.numerics.errors import InputError

__all__ = [
    "InputError",
    "MemoReal",
    "as_real",
    "S2_RANGE",
    "check_sigma2_range",
    "to_fraction",
    "positive_fraction",
    "fraction_str",
    "to_int",
]


def _float_message(value) -> str:
    if not math.isfinite(float(value)):
        return "is a non-finite binary float; pass an exact rational string such as \"11/10000\""
    exact = Fraction(float(value))
    hint = f'"{float(value)!r}"'
    return (
        f"is a binary float, not an exact value (it equals {exact.numerator}/{exact.denominator}). "
        f"Pass an exact rational: "
        f"a string such as {hint} or \"11/10000\", a fractions.Fraction, a gmpy2.mpq, "
        f"a decimal.Decimal or an int."
    )


def to_fraction(value, field: str = "value") -> Fraction:
    """Convert an exact parameter to a :class:`~fractions.Fraction`.

    Parameters
    ----------
    value : int, Fraction, gmpy2.mpq, gmpy2.mpz, decimal.Decimal or str
        The parameter.  Strings may be ``"p/q"`` or a decimal literal.
    field : str
        Name used in error messages.

    Returns
    -------
    Fraction

    Raises
    ------
    InputError
        For binary floats, booleans, unparsable strings and non-finite values.
    """
    if isinstance(value, bool):
        raise InputError(field, value, "a boolean is not a number; pass an int or a rational string")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float) or type(value).__name__ in ("float16", "float32", "float64", "longdouble", "mpf"):
        raise InputError(field, value, _float_message(value))
    if isinstance(value, numbers.Integral):
        return Fraction(int(value))
    if isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise InputError(field, value, "must be finite")
        return Fraction(value)
    tname = type(value).__name__
    if tname in ("mpq", "mpz"):
        return Fraction(int(value.numerator), int(value.denominator))
    if isinstance(value, str):
        text = value.strip().replace("_", "")
        if not text:
            raise InputError(field, value, "empty string; expected a rational such as \"11/10000\" or \"0.0011\"")
        try:
            if "/" in text:
                num, den = text.split("/", 1)
                frac = Fraction(_parse_decimal(num), 1) / _parse_decimal(den)
            else:
                frac = _parse_decimal(text)
        except (ValueError, ZeroDivisionError, decimal.InvalidOperation) as exc:
            raise InputError(
                field, value, f"not a rational number ({exc}); expected e.g. \"11/10000\", \"0.0011\" or \"1e-10\""
            ) from None
        return frac
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    raise InputError(field, value, f"unsupported type {tname}; pass a rational string, int or Fraction")


def _parse_decimal(text: str) -> Fraction:
    text = text.strip()
    d = decimal.Decimal(text)
    if not d.is_finite():
        raise ValueError("must be finite")
    return Fraction(d)


def positive_fraction(value, field: str = "value") -> Fraction:
    """Like :func:`to_fraction` but require the value to be > 0."""
    frac = to_fraction(value, field)
    if frac <= 0:
        raise InputError(field, value, "must be > 0")
    return frac


def to_int(value, field: str = "value") -> int:
    """Parse an exact integer (refusing floats and non-integral rationals)."""
    frac = to_fraction(value, field)
    if frac.denominator != 1:
        raise InputError(field, value, "must be an integer")
    return int(frac)


def fraction_str(frac: Fraction) -> str:
    """Canonical text of a rational: ``"p/q"`` or ``"p"``."""
    frac = Fraction(frac)
    return str(frac.numerator) if frac.denominator == 1 else f"{frac.numerator}/{frac.denominator}"


#: variances the float64 engine accepts (outside, its float64 kernels cannot represent them)
S2_RANGE = (Fraction(1, 10**300), Fraction(10**300))


def check_sigma2_range(sigma2: Fraction, field: str = "sigma2", text=None) -> None:
    """Refuse variances outside the float64 engine's range [1e-300, 1e300]."""
    if not S2_RANGE[0] <= sigma2 <= S2_RANGE[1]:
        if text is None:
            e = len(str(sigma2.numerator)) - len(str(sigma2.denominator))
            text = f"~1e{e}"
        raise InputError(field, text, "outside [1e-300, 1e300], the range of the float64 engine (below it the "
                                      "noise is deterministic to e^-1e300, above it leaks nothing measurable)")


def as_real(value, field: str):
    """An exact rational (Fraction) or a callable ``f(dps) -> mpf`` for an irrational
    (memoised per precision: it is evaluated several times per point)."""
    if callable(value):
        if isinstance(value, MemoReal):
            return value
        return MemoReal(value)
    return to_fraction(value, field)


class MemoReal:
    """A callable ``f(dps) -> mpf`` remembering its values (an exact real is a pure
    function of the precision asked)."""

    __slots__ = ("f", "cache")

    def __init__(self, f):
        self.f = f
        self.cache = {}

    def __call__(self, dps):
        need = max(int(dps), mpmath.mp.dps)
        for d, v in self.cache.items():
            if d >= need:
                return v
        d = max(need, 80)
        with mpmath.workdps(d):
            v = self.f(d)
        self.cache[d] = v
        return v
