"""Decimal text of the sweep's numbers, computed on raw ``mpmath.libmp`` values.

The sweep writes every number with :func:`exactdp.sweep.pair.fmt` (``mpmath.nstr`` under
``mpmath.workdps(digits + 15)``) and :func:`exactdp.sweep.pair.fmt_bound`.  Done per
value through mpmath's context (a ``workdps`` switch, mpf objects, ``Fraction`` powers
of ten), that cost ~0.3 s per pair.  This module does the *same computations* on the raw
``(sign, man, exp, bc)`` tuples:

* ``mpmath.mpf(x)`` under ``workdps(d)`` is ``mpf_pos(x, dps_to_prec(d), round_nearest)``
  (mpmath's default rounding, which exactdp never changes);
* ``nstr(x, n, **kw)`` is ``to_str(x._mpf_, n, **kw)`` (context-free).  For a positive
  finite ``x`` with ``|exp + bc| ≤ 3500``, ``to_str(x, n, min_fixed=-4, max_fixed=6,
  strip_zeros=False)`` is: ``D = to_digits_exp(x, n + 10)`` (the binary value truncated
  to ``n + 10``-ish decimal digits: ``floor(floor(x·2^f)·10^g / 2^f)``), then
  ``round_digits`` (round half to even on that digit string), then the fixed/scientific
  layout.  :func:`digits_exp` and :func:`layout` are those three steps in integer
  arithmetic (same ``bitprec``, ``fixprec``, ``fixdps`` formulas); other inputs go to
  ``to_str`` itself;
* ``mpmath.mpf(text)`` is ``from_str(text, prec, round_nearest)``, which for a decimal
  ``man·10^exp`` with ``-400 ≤ exp < 0`` is ``from_rational(man, 10^-exp, prec, rnd)``:
  a correctly rounded quotient (``mpf_div`` with a sticky bit), so it depends only on
  the value; :func:`value_of` passes the same value as integers (other exponents go to
  ``from_str`` itself).

``tests/test_sweep_format.py`` compares every function here with the mpmath-context
reference (the former code) on many values, and the sweep's files are byte-identical.
"""

from __future__ import annotations

import math

from mpmath.libmp import (
    dps_to_prec,
    from_rational,
    from_str,
    fzero,
    round_nearest,
    to_str,
)
from mpmath.libmp.libmpf import blog2_10

__all__ = ["RND", "prec_of", "digits_exp", "layout", "value_of", "text_of", "fmt_raw", "bound_text_float",
           "POW10"]

RND = round_nearest
#: 10**k for k = 0..1199 (covers every scale digits_exp and bound_text_float use)
POW10 = tuple(10**k for k in range(1200))
_MIN_FIXED, _MAX_FIXED = -4, 6


_PREC: dict = {}


def prec_of(dps: int) -> int:
    """Binary precision of ``mpmath.workdps(dps)`` (``dps_to_prec``)."""
    p = _PREC.get(dps)
    if p is None:
        p = _PREC[dps] = dps_to_prec(dps)
    return p


def digits_exp(s, dps: int):
    """``(q, e)`` of ``to_str(s, dps)``: the text's value is ``q·10^(e − dps + 1)`` with
    ``10^(dps−1) ≤ q < 10^dps``; ``None`` when ``s`` is not positive and finite or
    ``|exp + bc| > 3500`` (then ``to_str`` takes another path)."""
    sign, man, exp, bc = s
    if sign or not man or abs(exp + bc) > 3500:
        return None
    bitprec = int((dps + 10) * blog2_10) + 10  # to_digits_exp(s, dps + 10)
    fixprec = bitprec - exp - bc
    if fixprec < 0:
        fixprec = 0
    fixdps = int(fixprec / blog2_10 + 0.5)
    off = exp + fixprec
    sf = man << off if off >= 0 else man >> -off
    sb = sf * POW10[fixdps] >> fixprec
    n = len(str(sb))
    if n <= dps:  # round_digits would assert; let to_str say so
        return None
    k = n - dps
    q, r = divmod(sb, POW10[k])
    half = 5 * POW10[k - 1]
    e = n - fixdps - 1
    if r > half or (r == half and q & 1):  # round_digits: half to even on the digits
        q += 1
        if q == POW10[dps]:
            q, e = POW10[dps - 1], e + 1
    return q, e


def layout(q: int, e: int, dps: int) -> str:
    """The text ``to_str`` prints for ``(q, e)`` with ``min_fixed=-4, max_fixed=6,
    strip_zeros=False`` (no sign: positive values only)."""
    digits = str(q)
    if _MIN_FIXED < e < _MAX_FIXED:
        if e < 0:
            return "0." + "0" * (-e - 1) + digits
        split = e + 1
        if split > dps:
            digits += "0" * (split - dps)
        return digits[:split] + "." + digits[split:]
    return f"{digits[0]}.{digits[1:]}e{e:+}"


def value_of(q: int, e: int, dps: int, text: str, prec: int):
    """``from_str(text, prec, round_nearest)`` of a text printed from ``(q, e)``."""
    k = e - dps + 1  # text = q·10^k; from_str's exponent lies in [k, e]
    if k >= -400 and e < 0:
        return from_rational(q, POW10[-k], prec, RND)
    return from_str(text, prec, RND)


def text_of(s, dps: int) -> str:
    """``to_str(s, dps, min_fixed=-4, max_fixed=6, strip_zeros=False)``."""
    de = digits_exp(s, dps)
    if de is None:
        return to_str(s, dps, min_fixed=_MIN_FIXED, max_fixed=_MAX_FIXED, strip_zeros=False)
    return layout(de[0], de[1], dps)


def fmt_raw(s, dps: int) -> str:
    """:func:`exactdp.sweep.pair.fmt` of a raw value already at ``prec_of(dps + 15)``."""
    if s == fzero:
        return "0"
    return text_of(s, dps)


def bound_text_float(x: float) -> str:
    """:func:`exactdp.sweep.pair.fmt_bound` of a float: 3 significant digits rounded up,
    in exact integer arithmetic (``x = n/d``, ``d`` a power of two)."""
    if not math.isfinite(x):
        return "inf"
    if x <= 0:
        return "0"
    n, d = x.as_integer_ratio()
    e = math.floor(math.log10(x)) - 2
    # 10^(e+2) ≤ x < 10^(e+3), decided exactly (the float log10 is only a start)
    while _ge_pow10(n, d, e + 3):
        e += 1
    while not _ge_pow10(n, d, e + 2):
        e -= 1
    if e >= 0:
        m = -(-n // (d * POW10[e]))
    else:
        m = -(-(n * POW10[-e]) // d)
    if m >= 1000:
        m, e = (m + 9) // 10, e + 1
    return f"{m // 100}.{m % 100:02d}e{e + 2}"


def _ge_pow10(n: int, d: int, p: int) -> bool:
    """Whether n/d ≥ 10^p."""
    return n >= d * POW10[p] if p >= 0 else n * POW10[-p] >= d
