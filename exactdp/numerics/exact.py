"""Exact parameters: parsing to :class:`fractions.Fraction`, refusing binary floats.

Privacy parameters (variances, budgets, ε, δ targets) are exact rationals in exactdp.
Accepted spellings: ``int``, :class:`fractions.Fraction`, ``gmpy2.mpq``/``mpz``,
:class:`decimal.Decimal`, and strings such as ``"11/10000"``, ``"0.0011"`` or ``"1e-10"``
(a decimal string is read exactly, digit for digit).  A binary ``float`` is refused:
``0.1`` is not one tenth, and silently using 0.1000000000000000055511151231257827 where
an exact budget was meant is the kind of error this project exists to avoid.

This is the one parser of exact numbers for the command line, the input files and the
Python API (:func:`parse_exact`; :func:`to_fraction` is it without bounds).  It checks a
value on its written form *before* expanding it: a string must be ASCII digits in the
grammar ``[+-]digits[.digits][e[+-]digits]`` or ``p/q`` of two such (``"١"`` or ``"𝟏"``
are refused, not read as 1), and no number may need more than :data:`MAX_DIGITS`
decimal digits in its numerator or denominator (``"1e999999999"`` is refused at once
instead of being expanded into a billion-digit integer).
"""

from __future__ import annotations

import decimal
import math
import numbers
import re
from collections.abc import Iterable
from fractions import Fraction

import mpmath

from exactdp.numerics.errors import InputError

__all__ = [
    "InputError",
    "MemoReal",
    "MAX_DIGITS",
    "as_real",
    "as_sequence",
    "S2_RANGE",
    "check_sigma2_range",
    "decimal_exponent",
    "interval_text",
    "number_text",
    "parse_exact",
    "to_fraction",
    "positive_fraction",
    "fraction_str",
    "int_text",
    "rational_display",
    "alpha_display",
    "to_int",
]

#: the most decimal digits the numerator or the denominator of an exact number may have
#: (CPython's own limit for converting an int to text, ``sys.int_info.default_max_str_digits``):
#: ``1e4299`` and ``1e-4299`` are accepted, ``1e4300`` is refused before it is expanded
MAX_DIGITS = 4300
_MAX_BITS = math.floor(MAX_DIGITS * math.log2(10))  # an int of at most this many bits has ≤ MAX_DIGITS digits

#: a decimal literal: ASCII digits only (``re.ASCII``: ``\d`` is [0-9])
_DECIMAL = re.compile(r"([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?", re.ASCII)
#: longest exponent text read (more digits are out of range whatever the mantissa)
_EXPONENT_CHARS = 12
#: longest text shown back in a message
_SHOWN_CHARS = 40


def _shown(value):
    """The value as a message quotes it (long texts cut in the middle)."""
    if isinstance(value, str) and len(value) > _SHOWN_CHARS:
        return f"{value[:16]}…{value[-16:]} ({len(value)} characters)"
    return value


def _too_large(digits: int, exponent: int) -> str | None:
    """Why ``c × 10**exponent`` (``c`` an integer of ``digits`` digits, not 0) is refused,
    or ``None``: its numerator or denominator would need more than MAX_DIGITS digits."""
    if digits + max(exponent, 0) > MAX_DIGITS or 1 - exponent > MAX_DIGITS:
        top = digits - 1 + exponent
        return (f"about 1e{top}: more than {MAX_DIGITS} digits written out exactly; exactdp accepts numerators "
                f"and denominators of at most {MAX_DIGITS} digits")
    return None


def _decimal_text(text: str) -> Fraction:
    """An ASCII decimal literal as an exact Fraction, its size checked before it is built."""
    m = _DECIMAL.fullmatch(text)
    if m is None or not (m.group(2) or m.group(3)):
        raise ValueError(f"{_shown(text)!r} is not a decimal number")
    sign, whole, frac, exp = m.group(1), m.group(2), m.group(3) or "", m.group(4) or "0"
    mantissa = (whole + frac).lstrip("0")
    if not mantissa:
        return Fraction(0)
    if len(exp.lstrip("+-").lstrip("0")) > _EXPONENT_CHARS:
        raise OverflowError(f"exponent {_shown(exp)}: far more than {MAX_DIGITS} digits written out exactly; exactdp "
                            f"accepts numerators and denominators of at most {MAX_DIGITS} digits")
    scale = int(exp) - len(frac)
    stripped = mantissa.rstrip("0")
    scale += len(mantissa) - len(stripped)
    why = _too_large(len(stripped), scale)
    if why:
        raise OverflowError(why)
    n = int(stripped) * 10 ** max(scale, 0)
    value = Fraction(n, 10 ** -scale) if scale < 0 else Fraction(n)
    return -value if sign == "-" else value


def decimal_exponent(q: Fraction) -> int:
    """``floor(log10 |q|)`` (0 for 0), from the bit lengths then exact integer comparisons
    (no conversion to text, which CPython refuses beyond 4300 digits)."""
    if q == 0:
        return 0
    n, d = abs(q.numerator), q.denominator
    e = math.floor((n.bit_length() - d.bit_length()) * math.log10(2))

    def at_least(k: int) -> bool:  # |q| >= 10**k
        return n >= d * 10**k if k >= 0 else n * 10**-k >= d

    while at_least(e + 1):
        e += 1
    while not at_least(e):
        e -= 1
    return e


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
        The parameter.  Strings may be ``"p/q"`` or a decimal literal (ASCII digits;
        ``_`` between digits is ignored).
    field : str
        Name used in error messages.

    Returns
    -------
    Fraction

    Raises
    ------
    InputError
        For binary floats, booleans, unparsable or non-ASCII strings, non-finite values,
        and numbers whose numerator or denominator would need more than
        :data:`MAX_DIGITS` digits (checked on the written form, before expansion).
    """
    if isinstance(value, bool):
        raise InputError(field, value, "a boolean is not a number; pass an int or a rational string")
    if isinstance(value, Fraction):
        return value
    if isinstance(value, float) or type(value).__name__ in ("float16", "float32", "float64", "longdouble", "mpf"):
        raise InputError(field, value, _float_message(value))
    if isinstance(value, numbers.Integral):
        value = int(value)
        if value.bit_length() > _MAX_BITS:
            raise InputError(field, f"<integer of {value.bit_length()} bits>",
                             f"has more than {MAX_DIGITS} decimal digits, the most exactdp accepts")
        return Fraction(value)
    if isinstance(value, decimal.Decimal):
        return _decimal_object(value, field)
    tname = type(value).__name__
    if tname in ("mpq", "mpz"):
        return to_fraction(int(value.numerator), field) / to_fraction(int(value.denominator), field)
    if isinstance(value, str):
        return _string(value, field)
    if isinstance(value, numbers.Rational):
        return Fraction(int(value.numerator), int(value.denominator))
    raise InputError(field, _shown(value) if isinstance(value, (bytes, str)) else value,
                     f"unsupported type {tname}; pass a rational string, int or Fraction")


def _decimal_object(value: decimal.Decimal, field: str) -> Fraction:
    if not value.is_finite():
        raise InputError(field, value, "must be finite")
    _, digit_tuple, exp = value.as_tuple()
    assert isinstance(exp, int)  # a finite Decimal's exponent
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    if not digits:
        return Fraction(0)
    why = _too_large(len(digits), exp)
    if why:
        raise InputError(field, f"Decimal with exponent {exp}", why)
    return Fraction(value)


#: blanks a number may carry around it (ASCII only: a no-break space or another Unicode blank is refused)
_BLANKS = " \t\r\n\f\v"


def _string(value: str, field: str) -> Fraction:
    text = value.strip(_BLANKS)
    if not text:
        raise InputError(field, value, "empty string; expected a rational such as \"11/10000\" or \"0.0011\"")
    if not text.isascii():
        bad = next(c for c in text if not c.isascii())
        raise InputError(field, _shown(value), f"contains the non-ASCII character {bad!r} (U+{ord(bad):04X}); write "
                                               "numbers with the digits 0-9, e.g. \"11/10000\" or \"0.0011\"")
    if "_" in text:
        text = re.sub(r"(?<=\d)_(?=\d)", "", text)
    num, slash, den = text.partition("/")
    if num.isdigit() and len(num) <= MAX_DIGITS and (not slash or (den.isdigit() and len(den) <= MAX_DIGITS)):
        if not slash:  # the common spellings "12" and "11/10000", without the general grammar
            return Fraction(int(num))
        if int(den):
            return Fraction(int(num), int(den))
    if "/" in text and ("e" in text or "E" in text):
        raise InputError(field, _shown(value), "an exponent inside a fraction is ambiguous (5/2e3: (5/2)·1e3 or "
                                               "5/(2e3)?); write the fraction with integers or decimals, e.g. "
                                               "\"1/400\", or the decimal alone, e.g. \"2.5e-3\"")
    try:
        if "/" in text:
            num, den = text.split("/", 1)
            frac = _decimal_text(num.strip()) / _decimal_text(den.strip())
        else:
            frac = _decimal_text(text)
    except OverflowError as exc:
        raise InputError(field, _shown(value), str(exc)) from None
    except (ValueError, ZeroDivisionError) as exc:
        why = "division by zero" if isinstance(exc, ZeroDivisionError) else str(exc)
        raise InputError(field, _shown(value),
                         f"not a rational number ({why}); "
                         "expected e.g. \"11/10000\", \"0.0011\" or \"1e-10\"") from None
    return frac


def interval_text(lo, hi, lo_open: bool = False, hi_open: bool = False) -> str:
    """``[lo, hi)``-style text of an interval (``None`` ends are infinite; powers of ten
    as ``1e-300``)."""
    return (f"{'(' if lo_open or lo is None else '['}{'-inf' if lo is None else number_text(lo)}, "
            f"{'inf' if hi is None else number_text(hi)}{')' if hi_open or hi is None else ']'}")


def number_text(q) -> str:
    """``1e-300`` for a power of ten beyond 10⁶, else ``p/q``."""
    q = Fraction(q)
    for big, sign in ((q.denominator, "-"), (q.numerator, "")):
        other = q.numerator if sign else q.denominator
        if other == 1 and big > 10**6 and str(big).rstrip("0") == "1":
            return f"1e{sign}{len(str(big)) - 1}"
    return fraction_str(q)


def parse_exact(value, field: str = "value", *, lo=None, hi=None, lo_open: bool = False, hi_open: bool = False,
                integer: bool = False) -> Fraction:
    """The one parser of an exact number with its range: :func:`to_fraction`, then
    ``lo ≤ value ≤ hi`` (strict at an open end; ``None``: unbounded) and, with
    ``integer``, an integer value.

    Raises
    ------
    InputError
        Naming ``field``, the value as given and the interval.
    """
    frac = to_fraction(value, field)
    if integer and frac.denominator != 1:
        raise InputError(field, _shown(value), "must be an integer")
    below = lo is not None and (frac < lo or (lo_open and frac == lo))
    above = hi is not None and (frac > hi or (hi_open and frac == hi))
    if below or above:
        if lo == 0 and hi is None:
            raise InputError(field, _shown(value), "must be > 0" if lo_open else "must be >= 0")
        raise InputError(field, _shown(value), f"must lie in {interval_text(lo, hi, lo_open, hi_open)}")
    return frac


def as_sequence(values, field: str) -> list:
    """The items of a sequence argument; a lone string, bytes or number is refused (a
    string is never read digit by digit: ``"25"`` is not ``["2", "5"]``)."""
    if isinstance(values, (str, bytes, bytearray)) or not isinstance(values, Iterable):
        raise InputError(field, _shown(values) if isinstance(values, str) else values,
                         "expected a sequence of values, e.g. [\"1\", \"11/10\"] (not a lone value)")
    return list(values)


def positive_fraction(value, field: str = "value") -> Fraction:
    """Like :func:`to_fraction` but require the value to be > 0."""
    return parse_exact(value, field, lo=0, lo_open=True)


def to_int(value, field: str = "value") -> int:
    """Parse an exact integer (refusing floats and non-integral rationals)."""
    return int(parse_exact(value, field, integer=True))


#: integers below this in magnitude print by ``str`` (computed once: forming 10**4000 cost
#: ≈ 45 µs at every call)
_STR_LIMIT = 10**4000


def int_text(n: int) -> str:
    """The decimal digits of an integer of any size (Python's ``str`` refuses more than
    4300 digits; the exact ρ of a thousand decimal variances has more)."""
    if -_STR_LIMIT < n < _STR_LIMIT:
        return str(n)
    import gmpy2

    return gmpy2.mpz(n).digits(10)


def rational_display(frac, limit: int = 60) -> str:
    """A rational for a line of text: :func:`fraction_str` when it is at most ``limit``
    characters, else its value to 12 significant digits and the size of the exact form
    (``"≈ 3.14159265359 (exact: a rational of 5120 digits)"``)."""
    frac = Fraction(frac)
    num_digits = len(int_text(abs(frac.numerator))) + len(int_text(frac.denominator))
    if num_digits + 1 <= limit:
        return fraction_str(frac)
    import mpmath

    with mpmath.workdps(30):
        approx = mpmath.nstr(mpmath.mpf(frac.numerator) / frac.denominator, 12)
    return f"≈ {approx} (exact: a rational of {num_digits} digits)"


def fraction_str(frac: Fraction) -> str:
    """Canonical text of a rational: ``"p/q"`` or ``"p"`` (any number of digits)."""
    try:
        frac = Fraction(frac)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        raise InputError("value", _shown(frac) if isinstance(frac, str) else repr(frac)[:40],
                         "is not a rational number") from None
    num = int_text(frac.numerator)
    return num if frac.denominator == 1 else f"{num}/{int_text(frac.denominator)}"


def alpha_display(alpha) -> str:
    """α ∈ [0, 1] for a message, exactly: :func:`rational_display` where that is exact, else
    ``"1 − c"`` with the complement c = 1 − α shown by :func:`rational_display` (α = 1 − 10⁻⁴⁰
    prints as ``"1 − 1/10000000000000000000000000000000000000000"``, never rounded to 1)."""
    alpha = Fraction(alpha)
    shown = rational_display(alpha)
    if not shown.startswith("≈") or alpha <= Fraction(1, 2):
        return shown
    return f"1 − {rational_display(1 - alpha)}"


#: variances the float64 engine accepts (outside, its float64 kernels cannot represent them)
S2_RANGE = (Fraction(1, 10**300), Fraction(10**300))


def check_sigma2_range(sigma2: Fraction, field: str = "sigma2", text=None) -> None:
    """Refuse variances outside the float64 engine's range [1e-300, 1e300]."""
    if not S2_RANGE[0] <= sigma2 <= S2_RANGE[1]:
        if text is None:
            text = f"~1e{decimal_exponent(sigma2)}"
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
