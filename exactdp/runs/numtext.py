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

import gmpy2
import mpmath
from mpmath.libmp import (
    dps_to_prec,
    finf,
    fnan,
    fninf,
    from_float,
    from_man_exp,
    from_rational,
    from_str,
    fzero,
    mpf_exp,
    mpf_pos,
    round_nearest,
    to_str,
)
from mpmath.libmp.libmpf import blog2_10

from exactdp.numerics.precision import DPS_RESULT

__all__ = ["RND", "prec_of", "digits_exp", "layout", "value_of", "text_of", "fmt_raw", "bound_text_float",
           "bound_texts_float", "POW10", "layout_digits", "mpfr_context", "nearest_digits", "decimal_mpfr",
           "mpfr_to_raw", "raw_to_mpfr", "fmt_mpfr",
           "parse_mpfr", "fmt_mpf_raw", "bound_text_raw", "float_text", "vertex_value", "vertex_values"]

RND = round_nearest
#: 10**k for k = 0..1199 (covers every scale digits_exp and bound_text_float use)
POW10 = tuple(10**k for k in range(1200))
_P10Z = tuple(gmpy2.mpz(v) for v in POW10)  # the same as gmpy2 integers (no conversions)
_HALF10 = (None,) + tuple(5 * v for v in _P10Z[:-1])  # 10^k / 2, k ≥ 1
_num_digits = gmpy2.num_digits
_MIN_FIXED, _MAX_FIXED = -4, 6


_PREC: dict = {}


def prec_of(dps: int) -> int:
    """Binary precision of ``mpmath.workdps(dps)`` (``dps_to_prec``)."""
    p = _PREC.get(dps)
    if p is None:
        p = _PREC[dps] = dps_to_prec(dps)
    return p


def mpfr_context(prec: int):
    """A gmpy2 (MPFR) context of ``prec`` bits, round to nearest-even (as mpmath's
    ``round_nearest``), no traps and MPFR's default (practically unbounded) exponents.
    Every call of the sweep names its context: the global gmpy2 context is never used."""
    c = _CTX.get(prec)
    if c is None:
        c = _CTX[prec] = gmpy2.context(precision=prec, round=gmpy2.RoundToNearest)
    return c


_CTX: dict = {}
_BITPREC: dict = {}
_FMT_CTX: dict = {}


def digits_exp(s, dps: int):
    """``(q, e)`` of ``to_str(s, dps)``: the text's value is ``q·10^(e − dps + 1)`` with
    ``10^(dps−1) ≤ q < 10^dps``; ``None`` when ``s`` is not positive and finite or
    ``|exp + bc| > 3500`` (then ``to_str`` takes another path)."""
    sign, man, exp, bc = s
    mag = exp + bc
    if sign or not man or mag > 3500 or mag < -3500:
        return None
    bitprec = _BITPREC.get(dps)
    if bitprec is None:
        bitprec = _BITPREC[dps] = int((dps + 10) * blog2_10) + 10  # to_digits_exp(s, dps + 10)
    fixprec = bitprec - mag if bitprec > mag else 0
    fixdps = int(fixprec / blog2_10 + 0.5)
    off = exp + fixprec
    sb = ((man << off) if off >= 0 else (man >> -off)) * _P10Z[fixdps] >> fixprec
    n = _num_digits(sb)  # len(str(sb)): exact or one too many, then settled by one comparison
    if n > 1 and sb < _P10Z[n - 1]:
        n -= 1
    if n <= dps:  # round_digits would assert; let to_str say so
        return None
    k = n - dps
    q, r = divmod(sb, _P10Z[k])
    half = _HALF10[k]
    e = n - fixdps - 1
    if r > half or (r == half and q & 1):  # round_digits: half to even on the digits
        q += 1
        if q == _P10Z[dps]:
            q, e = _P10Z[dps - 1], e + 1
    return q, e


def layout(q: int, e: int, dps: int) -> str:
    """The text ``to_str`` prints for ``(q, e)`` with ``min_fixed=-4, max_fixed=6,
    strip_zeros=False`` (no sign: positive values only)."""
    return layout_digits(str(q), e, dps)


def layout_digits(digits: str, e: int, dps: int) -> str:
    """:func:`layout` of the ``dps`` decimal digits of ``q`` (``str(q)``)."""
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
    """:func:`exactdp.sweep.pair.fmt_bound` of a float: 3 significant digits rounded up.

    ``t = f"{x:.16e}"`` is the nearest 17-digit decimal of the exact binary value
    (correctly rounded, so monotone in x).  Unless ``t`` is itself a 3-digit decimal,
    ``x`` lies strictly between the same two 3-digit decimals as ``t`` (rounding cannot
    cross a 17-digit number), and the ceiling is the upper one, read off ``t``.  When it
    is, the ceiling is ``t`` or the next one up, decided exactly (``x = n/d``).
    """
    if not math.isfinite(x):
        return "inf"
    if x <= 0:
        return "0"
    t = f"{x:.16e}"  # d.dddddddddddddddde±X...
    m, e = int(t[0] + t[2:4]), int(t[19:])
    if t[4:18] != "00000000000000":
        m += 1
    else:
        n, d = x.as_integer_ratio()
        p = e - 2  # t = m·10^p exactly
        if (m * POW10[p] * d < n) if p >= 0 else (m * d < n * POW10[-p]):
            m += 1
    if m == 1000:
        m, e = 100, e + 1
    return f"{m // 100}.{m % 100:02d}e{e}"


_P10_FLOAT: list = []  # float(10**p) correctly rounded, p = -300..300 (index p + 300)


def bound_texts_float(xs) -> list:
    """``[bound_text_float(x) for x in xs]`` for a sequence of floats, vectorised.

    With ``e`` about ``floor(log10 x)`` and ``f = float(10^(e−2))`` (correctly rounded),
    ``s = x / f`` in float64 is ``x/10^(e−2)`` within 2.3e-16 relative (two roundings),
    i.e. within 2.3e-13 absolute for ``s < 1000``.  Where ``100 + 1e-11 < s < 1000 − 1e-11``
    and ``s`` is more than 1e-11 from an integer, ``e`` is the exact decimal exponent and
    ``ceil(s)`` the exact 3-digit ceiling, as :func:`bound_text_float` finds them; every
    other element (near a power of ten or a 3-digit decimal, outside [1e-290, 1e290],
    0, inf, nan) goes to :func:`bound_text_float` itself.
    """
    import numpy as np

    if not _P10_FLOAT:
        from fractions import Fraction

        _P10_FLOAT.extend(float(Fraction(10) ** p) for p in range(-300, 301))
    n = len(xs)
    if n == 0:
        return []
    x = np.array(xs, dtype=np.float64)
    ok = (x > 1e-290) & (x < 1e290)
    xs_ok = np.where(ok, x, 1.0)
    e = np.floor(np.log10(xs_ok)).astype(np.int64)
    s = xs_ok / np.array(_P10_FLOAT)[e - 2 + 300]
    m = np.ceil(s)
    ok &= (s > 100 + 1e-11) & (s < 1000 - 1e-11) & (m - s > 1e-11) & (m - s < 1 - 1e-11)
    top = m == 1000  # ceil 1000: "1.00" one decade up
    mi = np.where(ok, np.where(top, 100, m), 100).astype(np.int64)
    ei = np.where(ok, e + top, 0)
    mant, expo = _MANT3, _EXP3
    out = [mant[mv] + expo[ev] for mv, ev in zip(mi.tolist(), (ei + 300).tolist())]
    for k in np.flatnonzero(~ok).tolist():
        out[k] = bound_text_float(float(xs[k]))
    return out


_MANT3 = tuple(f"{m // 100}.{m % 100:02d}e" for m in range(1000))  # "d.dde" of a 3-digit m
_EXP3 = tuple(str(p) for p in range(-300, 301))  # decimal exponent p at index p + 300


# ------------------------------------------------------------------ MPFR values (gmpy2)
#
# mpmath's mpf_add/sub/mul/div and from_rational are correctly rounded (exact result,
# or a sticky bit, then ``normalize`` with round-half-even), and so is every MPFR
# operation: at the same precision and rounding both give the same number, so values
# may be carried as ``gmpy2.mpfr`` between the steps.  exp is the exception (mpmath's
# ``mpf_exp`` is accurate, not correctly rounded): see :func:`nearest_digits`.

_G = 64  # guard bits below the last decimal digit in nearest_digits
_HALF = 1 << (_G - 1)
_MARGIN = 1 << (_G - 16)
_MASK = gmpy2.mpz((1 << _G) - 1)
_LOG10_2 = math.log10(2)


def nearest_digits(z, dps: int):
    """``(q, e)``: an mpfr ``z > 0`` rounded to the nearest ``dps``-digit decimal
    ``q·10^(e−dps+1)``, or ``None`` when ``z`` lies within 2^-16 units of the last digit
    of a rounding midpoint, or its binary exponent is beyond ±3400.

    Used on ``z`` = MPFR's correctly rounded ``exp`` (relative error ≤ 2^-136) in place of
    ``to_str(mpf_exp(x, 136), dps)``: that text is the nearest rounding of
    ``y = mpf_exp(x)`` except within 1e-10 units of a midpoint (``to_str`` rounds half to
    even a digit string truncated ≥ 10 digits further), and ``|y − e^x| ≤ 2^-103·e^x``
    (mpmath works at 150 bits, ``tests/test_sweep_format.py`` measures < 2^-130), i.e.
    < 2^-20 units of the 25th digit; outside the 2^-16 margin all of them round alike.
    """
    m, ex = z.as_mantissa_exp()
    bl = m.bit_length()
    if m <= 0 or abs(ex + bl) > 3400:
        return None
    lo, hi = _P10Z[dps - 1], _P10Z[dps]
    f = float(z)
    e = math.floor(math.log10(f)) if 0 < f < math.inf else math.floor((ex + bl - 1) * _LOG10_2)
    while True:  # the float estimate of e can be one off next to a power of ten
        sh = dps - 1 - e
        num, den = (m * _P10Z[sh], 1) if sh >= 0 else (m, _P10Z[-sh])
        g = ex + _G
        x = (num << g) // den if g >= 0 else num // (den << -g)
        q = x >> _G
        if q < lo:
            e -= 1
        elif q >= hi:
            e += 1
        else:
            break
    frac = x & _MASK
    if abs(frac - _HALF) <= _MARGIN:
        return None
    if frac > _HALF:
        q += 1
        if q == hi:
            q, e = lo, e + 1
    return q, e


#: exact MPFR powers of ten 10^j, j ≤ 58 (5^58 has 135 bits)
_P10_MPFR = tuple(gmpy2.mpfr(10**j, 136) for j in range(59))


def decimal_mpfr(q: int, e: int, dps: int, text: str, ctx):
    """``mpmath.mpf(text)`` at ``ctx.precision`` bits (≥ 136) as an mpfr, for a text
    printed from ``(q, e)``: one correctly rounded division ``q / 10^j``
    (= ``from_rational``), else ``from_str`` itself."""
    k = e - dps + 1
    if e < 0 and -58 <= k and ctx.precision >= 136:
        return ctx.div(q, _P10_MPFR[-k])
    return raw_to_mpfr(value_of(q, e, dps, text, ctx.precision), ctx)


def mpfr_to_raw(x):
    """The raw mpmath value of an mpfr (exact)."""
    if x.is_zero():
        return fzero
    if x.is_nan():
        return fnan
    if x.is_infinite():
        return fninf if x < 0 else finf
    m, e = x.as_mantissa_exp()
    return from_man_exp(m, int(e))


def raw_to_mpfr(raw, ctx):
    """The mpfr of a raw mpmath value with at most ``ctx.precision`` bits (exact)."""
    sign, man, exp, bc = raw
    if not man:
        return gmpy2.mpfr({fzero: 0, finf: "inf", fninf: "-inf"}.get(raw, "nan"), 2)
    x = ctx.mul_2exp(gmpy2.mpfr(man, max(bc, 2)), exp)
    return ctx.minus(x) if sign else x


def fmt_mpfr(x, dps: int) -> str:
    """:func:`exactdp.sweep.pair.fmt` of an mpfr (``mpf(x)`` at ``dps + 15`` digits,
    then ``nstr``).

    ``to_str``'s text of ``y`` (the rounded ``x``) is the half-even rounding of ``S``, a
    multiple of ``10^-k`` units of the last digit with ``F − 11·10^-k < S ≤ F`` (``F``:
    ``y`` in those units; the ``k ≥ 12`` extra digits of :func:`digits_exp` truncated
    twice, at scales ``2^-fixprec`` and ``10^-fixdps`` a factor ≤ 10 apart — ``fixdps`` is
    ``int()`` of an mpfr here, rounded, where ``to_str`` truncates a float, so it can be one
    digit more than mpmath's): the nearest rounding of ``y`` unless ``F``'s fraction lies
    in ``[1/2, 1/2 + 1.1·10^-11]``, for this code and for ``to_str`` alike.  The ``dps + 13``
    leading digits of ``y`` truncated (:func:`_digits_text`; session 7 read MPFR's rounded
    ones) are within one unit of their last digit, ``10^-13`` of ours: a tail
    ``t < 5·10^12 − 1`` means a fraction below 1/2, ``t > 5·10^12 + 5001`` one above
    ``1/2 + 5·10^-10``; both give to_str's digits (a carry into the next power of ten
    included).  Other tails, values outside ``(2^-3400, 2^64)`` and ``dps < 8`` take
    :func:`digits_exp`.
    """
    ctx = _FMT_CTX.get(dps)
    if ctx is None:
        ctx = _FMT_CTX[dps] = mpfr_context(prec_of(dps + 15))
    y = ctx.plus(x)
    if dps >= 8 and _FMT_LO < y < _FMT_HI:
        m, ex = y.as_mantissa_exp()
        text = _digits_text(m, int(ex), dps)
        if text is not None:
            return text
    if y > 0 and y.is_finite():
        m, ex = y.as_mantissa_exp()
        de = digits_exp((0, m, ex, m.bit_length()), dps)
        if de is not None:
            return layout(de[0], de[1], dps)
    return fmt_raw(mpfr_to_raw(y), dps)


def _digits_text(m, ex, dps: int):
    """``to_str``'s text of ``y = m·2^ex`` (``m > 0``; ``y`` already at
    ``prec_of(dps + 15)``, within ``[2^-3400, 2^64)``, ``dps ≥ 8``) from its ``dps + 13``
    leading digits truncated, ``X = floor(y·10^(dps+12−e))`` (``e = floor(log10 y)``: from
    the binary exponent, settled by comparing ``X`` with ``10^(dps+12)``,
    ``10^(dps+13)``), or ``None`` for a tail near a tie (see :func:`fmt_mpfr`: ``X`` is
    within one unit of its last digit, as MPFR's rounded digits that session 7 read).
    """
    n = dps + 13
    lo, hi = _P10Z[n - 1], _P10Z[n]
    e = math.floor((ex + m.bit_length() - 1) * _LOG10_2)
    while True:  # e ≤ 19 here, so n − 1 − e ≥ 1
        num = m * _P10Z[n - 1 - e]
        x = (num >> -ex) if ex < 0 else (num << ex)
        if x < lo:
            e -= 1
        elif x >= hi:
            e += 1
        else:
            break
    q, t = divmod(x, _P10_13)
    if t < _TO_STR_DOWN:
        return layout_digits(str(q), e, dps)
    if t > _TO_STR_UP:
        q += 1
        if q == _P10Z[dps]:
            return layout_digits(str(_P10Z[dps - 1]), e + 1, dps)
        return layout_digits(str(q), e, dps)
    return None


def fmt_mpf_raw(s, dps: int) -> str:
    """:func:`exactdp.sweep.pair.fmt` of a raw mpmath value ``s`` (any precision):
    ``fmt_raw(mpf_pos(s, prec_of(dps + 15), round_nearest), dps)``, whose text is
    :func:`_digits_text`'s wherever that gives one (:func:`fmt_mpfr`'s argument: both
    are the nearest rounding away from a tie); other values (negative, zero, near a tie,
    outside ``[2^-3400, 2^64)``, ``dps < 8``) take the raw path.
    """
    y = mpf_pos(s, prec_of(dps + 15), RND)
    sign, man, exp, bc = y
    if not sign and man and dps >= 8 and -3399 <= exp + bc <= 64:
        text = _digits_text(man, exp, dps)
        if text is not None:
            return text
    return fmt_raw(y, dps)


_P10_13 = _P10Z[13]
_FMT_LO = mpfr_context(2).mul_2exp(gmpy2.mpfr(1), -3400)
_FMT_HI = mpfr_context(2).mul_2exp(gmpy2.mpfr(1), 64)
_TO_STR_DOWN, _TO_STR_UP = 5 * 10**12 - 1, 5 * 10**12 + 5001


def parse_mpfr(text: str, ctx):
    """``mpmath.mpf(text)`` under a context of ``ctx.precision`` bits, as an mpfr.

    ``from_str`` is correctly rounded (``from_rational`` / ``from_int``) when its decimal
    exponent lies within ±400, as MPFR's string conversion always is: for the sweep's
    texts (≤ 30 digits, exponent ``E`` with ``|E| < 360``) the two are the same number;
    other texts go through ``from_str`` itself.
    """
    i = text.find("e")
    if len(text) <= 40 and (i < 0 or -360 < int(text[i + 1:]) < 360):
        return gmpy2.mpfr(text, ctx.precision, context=ctx)
    return raw_to_mpfr(from_str(text, ctx.precision, RND), ctx)


_P_BOUND = dps_to_prec(30)  # fmt_bound's workdps(DPS_LOW)


def bound_text_raw(s):
    """:func:`exactdp.sweep.pair.fmt_bound` of a raw mpf, or ``None`` (use the mpmath code).

    That code rounds ``x`` to 30 digits, takes ``e = floor(log10 x) − 2`` and
    ``ceil(x / 10^e)`` in mpmath (each step accurate to ~1e-29); here both are exact
    integer arithmetic on the rounded ``x``, which gives the same integers whenever
    ``x`` is not within 1e-20 (relative) of a power of ten and ``x / 10^e`` not within
    2^-56 of an integer; otherwise ``None``.
    """
    s = mpf_pos(s, _P_BOUND, RND)
    sign, man, exp, bc = s
    if sign or not man or abs(exp + bc) > 3000:
        return None
    man = int(man)
    exp = int(exp)
    num, den = (man << exp, 1) if exp >= 0 else (man, 1 << -exp)  # x = num/den exactly
    big = math.floor((exp + bc - 1) * _LOG10_2)  # floor(log10 x), about
    while _ge_10(num, den, big + 1):
        big += 1
    while not _ge_10(num, den, big):
        big -= 1
    e = big - 2
    n, d = (num, den * POW10[e]) if e >= 0 else (num * POW10[-e], den)  # x / 10^e
    # not near a power of ten: 10^(e+2)·(1 + 1e-20) ≤ x < 10^(e+3)·(1 − 1e-20)
    if not (n * 10**20 >= d * 100 * (10**20 + 1) and n * 10**20 < d * 1000 * (10**20 - 1)):
        return None
    g = 80
    xg = (n << g) // d
    m, frac = xg >> g, xg & ((1 << g) - 1)
    if frac < (1 << (g - 56)) or frac > (1 << g) - (1 << (g - 56)):
        return None
    m += 1
    if m >= 1000:
        m, e = (m + 9) // 10, e + 1
    return f"{m // 100}.{m % 100:02d}e{e + 2}"


def _ge_10(num: int, den: int, p: int) -> bool:
    """Whether num/den ≥ 10^p."""
    return num >= den * POW10[p] if p >= 0 else num * POW10[-p] >= den


def float_text(x: float, digits: int) -> str:
    """``to_str`` of a float's exact value to ``digits`` significant digits (the layout of
    :func:`exactdp.sweep.pair.fmt`: fixed notation from 1e-4 to 1e6), "0" for zero."""
    if x == 0:
        return "0"
    return to_str(from_float(x), digits, min_fixed=-4, max_fixed=6, strip_zeros=False)


# ------------------------------------------------------------------ trade-off vertices

_P_RESULT = prec_of(DPS_RESULT)
_P_VERTEX = prec_of(25 + 15)  # fmt(·, 25)
_C_RESULT = mpfr_context(_P_RESULT)


def vertex_value(log_value, rel: float) -> tuple:
    """One trade-off vertex value: its 25-digit text, ``v`` and ``v·rel``, a sort key.

    The former code, under ``workdps(DPS_RESULT)``: ``t = fmt(exp(mpf(log_value)), 25)``,
    ``v = mpf(t)``, ``v * rel``.  Here: ``t`` from MPFR's exp rounded to 25 digits
    (:func:`nearest_digits`; near a rounding midpoint, mpmath's own
    ``mpf_exp`` and ``to_str`` steps instead), ``v`` and ``v·rel`` as correctly rounded
    ``gmpy2.mpfr`` values at ``DPS_RESULT`` (the same numbers as mpmath's).  The key
    ``(e, q)`` of a positive text ``q·10^(e−24)`` orders as the value and as ``v`` (the
    25-digit texts are far apart at 136 bits, so rounding keeps order and ties); it is
    ``None`` for a text from the fallback path (the caller then sorts the values).
    """
    de = None
    if type(log_value) is float and -2000.0 < log_value < 2000.0:
        de = nearest_digits(_C_RESULT.exp(log_value), 25)
    if de is not None:
        text = layout(de[0], de[1], 25)
        key: tuple[int, int] | None = (de[1], de[0])
        v = decimal_mpfr(de[0], de[1], 25, text, _C_RESULT)
    else:
        text, v_raw = _vertex_text_mpmath(log_value)
        v = raw_to_mpfr(v_raw, _C_RESULT)
        key = (-(10**9), 0) if v_raw == fzero else None
    return text, v, _C_RESULT.mul(v, rel), key


def _vertex_text_mpmath(log_value) -> tuple:
    """``fmt(exp(mpf(log_value)), 25)`` and ``mpf`` of it, by mpmath's own steps (raw)."""
    if type(log_value) is float:
        x = from_float(log_value)
    elif type(log_value) is mpmath.mpf:
        x = mpf_pos(log_value._mpf_, _P_RESULT, RND)
    else:
        with mpmath.workdps(DPS_RESULT):
            x = mpmath.mpf(log_value)._mpf_
    y = mpf_pos(mpf_exp(x, _P_RESULT, RND), _P_VERTEX, RND)
    de = digits_exp(y, 25)
    if de is None:
        text = fmt_raw(y, 25)
        return text, mpf_pos(from_str(text, _P_RESULT, RND), _P_RESULT, RND)
    text = layout(de[0], de[1], 25)
    return text, value_of(de[0], de[1], 25, text, _P_RESULT)


def vertex_values(keys) -> list:
    """``[vertex_value(lv, float(rel)) for lv, rel in keys]``: the common path (a float
    log, a text of exponent ``−34 ≤ e < 0``, whose value is ``q / 10^(24−e)``:
    :func:`decimal_mpfr`'s division) written out in one loop; every other key goes to
    :func:`vertex_value`.

    The 25 digits come from ``X = floor(z·10^(29−e))``, the 30 leading digits of ``z`` =
    MPFR's exp truncated (one multiplication and shift of its mantissa; ``e`` from
    ``lv·log10(e)``, settled by comparing ``X`` with ``10^29`` and ``10^30``; the same
    digits as :func:`nearest_digits` finds): ``X`` is within one unit of its last digit
    (``10^-5`` units of ours), ``z`` within ``2^-135·e^x`` and mpmath's ``y`` within
    ``2^-103·e^x`` (``< 10^-6`` units), so a tail ``t`` of the last 5 digits with
    ``|t − 50000| ≥ 4`` puts ``y`` more than ``2.9·10^-5`` units from the midpoint, on the
    side ``t`` says (``to_str`` then rounds it there, see :func:`nearest_digits`); tails
    with ``|t − 50000| ≤ 3`` go to :func:`vertex_value`.  (Session 7 read the digits with
    ``mpfr.digits(10, 30)``, correctly rounded instead of truncated: the same texts,
    ``tests/test_txt8_text.py`` keeps it as the reference.)
    """
    ctx = _C_RESULT
    if ctx.precision < 136:  # _P10_MPFR's powers would be rounded
        return [vertex_value(lv, float(rel)) for lv, rel in keys]
    exp, div, mul, p10, pz = ctx.exp, ctx.div, ctx.mul, _P10_MPFR, _P10Z
    lo30, hi30, top, one = pz[29], pz[30], pz[25], pz[24]
    fixed, sci, floor, l10e = _FIXED_HEAD, _SCI_TAIL, math.floor, _LOG10_E
    near_lo, near_hi = _NEAR_LO, _NEAR_HI
    out: list[tuple] = []
    append = out.append
    for lv, rel in keys:
        if type(lv) is float and -81.0 < lv < 0.0:
            e = floor(lv * l10e)  # floor(log10 z), or one off next to a power of ten
            m, ex = exp(lv).as_mantissa_exp()
            sh = -ex
            x = (m * pz[29 - e]) >> sh
            while x < lo30:
                e -= 1
                x = (m * pz[29 - e]) >> sh
            while x >= hi30:
                e += 1
                x = (m * pz[29 - e]) >> sh
            q, t = divmod(x, 100000)
            if (t < near_lo or t > near_hi) and e >= -34:
                if t > 50000:
                    q += 1
                    if q == top:
                        q, e = one, e + 1
                if e < 0:  # layout_digits: "0.0…digits" for e ≥ −3, else "d.ddd…e-N"
                    digits = str(q)
                    v = div(q, p10[24 - e])
                    append((fixed[e] + digits if e > -4 else digits[0] + "." + digits[1:] + sci[-e],
                            v, mul(v, float(rel)), (e, q)))
                    continue
        append(vertex_value(lv, float(rel)))
    return out


_LOG10_E = 1 / math.log(10)
_NEAR_LO, _NEAR_HI = 50000 - 3, 50000 + 3
_FIXED_HEAD = {-1: "0.", -2: "0.0", -3: "0.00"}
_SCI_TAIL = tuple(f"e{-k:+}" for k in range(40))  # "e-k" at index k
