"""Binary numbers as exact rationals, and their conversions rounded to a chosen side.

A certified bound is only as good as its last conversion: an upper bound written with 20
digits must be rounded *up*, a lower bound *down*, and nothing in between may round to
nearest.  Two traps this module avoids: ``mpmath.mpf(x)`` of an existing ``mpf`` re-rounds
it to the *global* precision (53 bits) to nearest, and ``libmp.to_float(rnd=...)`` flushes
below the float range to 0 whatever the direction.  Every conversion here goes through the
exact rational value (:func:`exact_ratio`) and is correctly rounded in its direction.
"""

from __future__ import annotations

import math
from decimal import ROUND_CEILING, ROUND_FLOOR, Context, Decimal
from fractions import Fraction

import mpmath

__all__ = ["exact_ratio", "directed_float", "directed_decimal", "FLOAT_MAX"]

FLOAT_MAX = 1.7976931348623157e308


def exact_ratio(x) -> tuple[int, int]:
    """``x`` as an exact ``(numerator, denominator)``: an ``mpmath.mpf`` read from its raw
    tuple (never re-rounded), a ``gmpy2.mpfr``, an int, a Fraction, a float or a decimal
    string (each the rational it denotes).

    Raises
    ------
    ValueError
        For ±inf or NaN.
    """
    if isinstance(x, mpmath.mpf):
        sign, man, exp, _ = x._mpf_
        if not man and exp:  # ±inf, nan
            raise ValueError(f"not a finite number: {x}")
        n = -int(man) if sign else int(man)
        return (n << exp, 1) if exp >= 0 else (n, 1 << -exp)
    if type(x).__name__ == "mpfr":  # gmpy2: exact as_integer_ratio
        if not x.is_finite():
            raise ValueError(f"not a finite number: {x}")
        n, d = x.as_integer_ratio()
        return int(n), int(d)
    f = Fraction(x)
    return f.numerator, f.denominator


def directed_float(x, up: bool) -> float:
    """The float64 nearest ``x`` on one side: the least float ≥ ``x`` (``up``) or the
    greatest float ≤ ``x``, subnormals and overflow included (a positive value below the
    least subnormal rounds up to it, never to 0; one beyond the float range rounds down to
    the largest float, up to inf)."""
    n, d = exact_ratio(x)
    try:
        f = n / d  # int / int: correctly rounded to nearest
    except OverflowError:
        f = math.inf if n > 0 else -math.inf
    if math.isinf(f):
        return f if (f > 0) == up else math.copysign(FLOAT_MAX, f)
    q = Fraction(n, d)
    if up and Fraction(f) < q:
        return math.nextafter(f, math.inf)
    if not up and Fraction(f) > q:
        return math.nextafter(f, -math.inf)
    return f


def directed_decimal(x, up: bool, digits: int) -> Decimal:
    """``x`` as a :class:`~decimal.Decimal` of ``digits`` significant digits, rounded up
    (towards +∞) or down: the exact ratio divided out in a decimal context of that
    precision and direction (correctly rounded)."""
    n, d = exact_ratio(x)
    ctx = Context(prec=digits, rounding=ROUND_CEILING if up else ROUND_FLOOR, Emin=-(10**9), Emax=10**9)
    return ctx.divide(Decimal(n), Decimal(d))
