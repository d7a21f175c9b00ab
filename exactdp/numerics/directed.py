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
    return int(f.numerator), int(f.denominator)  # Fraction(gmpy2.mpq) keeps mpz parts


def directed_float(x, up: bool) -> float:
    """The float64 nearest ``x`` on one side: the least float ≥ ``x`` (``up``) or the
    greatest float ≤ ``x``, subnormals and overflow included (a positive value below the
    least subnormal rounds up to it, never to 0; one beyond the float range rounds down to
    the largest float, up to inf)."""
    if isinstance(x, mpmath.mpf) and x._mpf_[1]:
        sign, _man, exp, bc = x._mpf_
        if exp + bc < -1080:  # |x| < 2^-1080, below the least subnormal 2^-1074 (no 2^|exp| integer built)
            return (-0.0 if up else -5e-324) if sign else (5e-324 if up else 0.0)
        if exp + bc > 1030:  # |x| ≥ 2^1029, beyond the float range
            return (-FLOAT_MAX if up else -math.inf) if sign else (math.inf if up else FLOAT_MAX)
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
    if isinstance(x, mpmath.mpf) and x._mpf_[1] and abs(x._mpf_[2]) > HUGE_EXPONENT:
        return _far_decimal(x, up, digits)
    n, d = exact_ratio(x)
    ctx = Context(prec=digits, rounding=ROUND_CEILING if up else ROUND_FLOOR, Emin=-(10**9), Emax=10**9)
    return ctx.divide(Decimal(n), Decimal(d))


#: binary exponents beyond which :func:`directed_decimal` does not build the exact ratio
#: (a δ of 5e-2171472409516284 has a 2^(7e15) denominator)
HUGE_EXPONENT = 100_000


def _far_decimal(x: mpmath.mpf, up: bool, digits: int) -> Decimal:
    """``x`` of a huge binary exponent as a Decimal of ``digits`` digits, rounded outward.

    x = 10^k · r with 1 ≤ r < 10: r is computed at P bits (P covers the exponent's bits, so
    the relative error of log10 and 10^· stays below 2^-(P − bits(exp) − 16)); r is then
    widened by 2^-(4·digits + 8) relative — far above that error, far below one unit of the
    last digit, so the side is certain and the text at most one step looser."""
    sign, _man, exp, bc = x._mpf_
    extra = 4 * digits + 8
    with mpmath.workprec(extra + 2 * (abs(exp) + bc).bit_length() + 64):
        a = abs(x)
        s = mpmath.log10(a)
        k = int(mpmath.floor(s))
        r = mpmath.power(10, s - k)
        slack = r * mpmath.ldexp(1, -extra)
        far_up = (sign == 0) == up  # the end away from zero
        r = r + slack if far_up else r - slack
        text = mpmath.nstr(r, digits + 12, strip_zeros=False, min_fixed=-1, max_fixed=2)
    rounding = ROUND_CEILING if far_up else ROUND_FLOOR
    ctx = Context(prec=digits, rounding=rounding, Emin=-(10**18) + 1, Emax=10**18 - 1)
    mag = ctx.plus(Decimal(text)).scaleb(k, ctx)
    return ctx.copy_negate(mag) if sign else mag
