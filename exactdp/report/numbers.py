"""Numbers for people: certified decimal texts rounded to a few digits on the safe side.

A certified upper bound rounded *up* is still a certified upper bound, and a lower bound
rounded *down* still a lower bound; :func:`round_up` and :func:`round_down` do exactly
that, in decimal arithmetic on the text (no binary float in between).
"""

from __future__ import annotations

from decimal import ROUND_CEILING, ROUND_FLOOR, ROUND_HALF_EVEN, Decimal, localcontext
from fractions import Fraction

from exactdp.numerics.directed import exact_ratio

__all__ = ["round_up", "round_down", "display", "to_text", "CITE_DIGITS"]

#: significant digits of a number to cite
CITE_DIGITS = 6


def _decimal(value, rounding: str) -> Decimal:
    """``value`` (decimal text, ``p/q`` text, int, Fraction or Decimal) as a Decimal of
    200 digits, rounded in the direction ``rounding`` if it is not a short decimal."""
    if isinstance(value, Decimal):
        return value
    if isinstance(value, str) and "/" not in value:
        return Decimal(value)
    frac = Fraction(value)
    with localcontext() as ctx:
        ctx.prec = 200
        ctx.rounding = rounding
        return Decimal(int(frac.numerator)) / Decimal(int(frac.denominator))


def _round(value, digits: int, rounding: str) -> str:
    d = _decimal(value, rounding)
    with localcontext() as ctx:
        ctx.prec = 400
        if not d.is_finite() or d == 0:
            return str(d)
        q = d.quantize(Decimal(1).scaleb(d.adjusted() - digits + 1), rounding=rounding)
        return _text(q, digits)


def _text(q: Decimal, digits: int) -> str:
    """``q`` (with ``digits`` significant digits) as plain decimals between 1e-4 and 1e6,
    else as ``m.mmmmme-N``; both are exact renderings of ``q``."""
    if Decimal("1e-4") <= abs(q) < Decimal("1e6"):
        places = max(digits - 1 - q.adjusted(), 0)
        return f"{q:.{places}f}"
    return f"{q:.{digits - 1}e}".replace("e+", "e")


def round_up(text, digits: int = CITE_DIGITS) -> str:
    """``text`` (decimal or ``p/q`` text, int, Fraction) rounded towards +∞ to ``digits``
    significant digits (≥ the number)."""
    return _round(text, digits, ROUND_CEILING)


def round_down(text, digits: int = CITE_DIGITS) -> str:
    """``text`` rounded towards −∞ to ``digits`` significant digits (≤ the number)."""
    return _round(text, digits, ROUND_FLOOR)


def display(text, digits: int = 12) -> str:
    """A long decimal text shortened for a table (rounded to nearest: for display only,
    never for a number to cite)."""
    return _round(text, digits, ROUND_HALF_EVEN)


_ROUNDING = {"up": ROUND_CEILING, "down": ROUND_FLOOR, "nearest": ROUND_HALF_EVEN}


def to_text(x, digits: int = 20, rounding: str = "nearest") -> str:
    """An exact number (int, Fraction, decimal text, or a binary ``mpmath.mpf`` / float,
    each taken exactly) as a decimal text of ``digits`` significant digits, rounded
    ``"up"``, ``"down"`` or to ``"nearest"``: a certified upper end written ``"up"`` stays
    an upper bound."""
    n, d = exact_ratio(x)  # an mpf read from its raw tuple: mpf(x) would re-round it to 53 bits
    frac = Fraction(n, d)
    return _round(frac, digits, _ROUNDING[rounding])
