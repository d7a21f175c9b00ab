"""Decimal texts of the sweep's trade-off vertices and grid points, in double-double.

The sweep writes each trade-off vertex value as the 25-digit text of ``exp(log value)``
and each grid point as the 20-digit text of a chord value computed in 136-bit MPFR
arithmetic (:mod:`exactdp.runs.numtext`, :func:`exactdp.sweep.pair.grid_rows`).  These
kernels compute the same texts from a double-double (dd) value and a rigorous bound of its
distance to the number whose text is printed: the text is the nearest ``n``-digit
rounding of every number within the bound, unless the ball reaches a rounding midpoint
(or :data:`TIE_MARGIN` units of the last digit around it: ``to_str`` rounds a digit string
truncated ≥ 10 digits further, which differs from the nearest rounding only within
1.1e-11 units above a midpoint, see :func:`exactdp.runs.numtext.fmt_mpfr`), and then the
value is flagged for the Python (MPFR / mpmath) path.

Arithmetic: error-free transformations (TwoSum, FastTwoSum, Dekker's TwoProduct with
Veltkamp's split: no FMA, which Numba does not contract without fastmath) and the
double-word algorithms of Joldes, Muller & Popescu (ACM TOMS 44, 2017): addition
(AccurateDWPlusDW, relative error ≤ 3u²), product by a double (DWTimesFP, ≤ 3u²), product
(DWTimesDW, ≤ 7u²), quotient (DWDivDW, ≤ 15u²), u = 2⁻⁵³ (UNIT_ROUNDOFF).  The bounds
counted here are :data:`C_OP` = 16u² for every operation (the largest), and each radius is
inflated by :data:`SAFETY` before a decision, which also covers the float64 rounding of
the radius computation itself.  Values stay within ``[1e-40, 1e30]`` (no underflow of a
low word, no overflow of Veltkamp's split).
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.units import UNIT_ROUNDOFF

__all__ = ["C_OP", "SAFETY", "TIE_MARGIN", "TEXT_WIDTH", "TEXT_OK", "TEXT_PYTHON", "dd_tables", "exp_texts",
           "grid_texts"]

#: relative error counted for one double-word operation (≥ every published bound used)
C_OP = 16.0 * UNIT_ROUNDOFF * UNIT_ROUNDOFF
#: factor on every radius before a rounding decision
SAFETY = 4.0
#: the unit roundoff of a 136-bit MPFR operation (round to nearest): 2⁻¹³⁶
U136 = UNIT_ROUNDOFF * 2.0**-83
#: characters (ASCII codes, int64) of one text row (the longest text: 25 digits, "d." and "e-NN")
TEXT_WIDTH = 32
#: units of the last digit around a rounding midpoint that are never decided (> 1.1e-11)
TIE_MARGIN = 1e-9
#: status of a value: its text is in the buffer
TEXT_OK = 0
#: status of a value: undecided or outside the kernel's range, the Python path answers
TEXT_PYTHON = 1

_P13 = 10**13
_SPLIT = 134217729.0  # 2^27 + 1 (Veltkamp)


@kernel("UniTuple(float64, 2)(float64, float64)")
def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


@kernel("UniTuple(float64, 2)(float64, float64)")
def fast_two_sum(a, b):
    s = a + b
    return s, b - (s - a)


@kernel("UniTuple(float64, 2)(float64, float64)")
def two_prod(a, b):
    p = a * b
    c = _SPLIT * a
    ah = c - (c - a)
    al = a - ah
    c = _SPLIT * b
    bh = c - (c - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@kernel("UniTuple(float64, 2)(float64, float64, float64, float64)")
def dd_add(xh, xl, yh, yl):
    sh, sl = two_sum(xh, yh)
    th, tl = two_sum(xl, yl)
    vh, vl = fast_two_sum(sh, sl + th)
    return fast_two_sum(vh, tl + vl)


@kernel("UniTuple(float64, 2)(float64, float64, float64)")
def dd_mul_d(xh, xl, y):
    ch, cl1 = two_prod(xh, y)
    th, tl1 = fast_two_sum(ch, xl * y)
    return fast_two_sum(th, tl1 + cl1)


@kernel("UniTuple(float64, 2)(float64, float64, float64, float64)")
def dd_mul(xh, xl, yh, yl):
    ch, cl1 = two_prod(xh, yh)
    cl3 = cl1 + (xh * yl + xl * yh)
    return fast_two_sum(ch, cl3)


@kernel("UniTuple(float64, 2)(float64, float64, float64, float64)")
def dd_div(xh, xl, yh, yl):
    th = xh / yh
    rh, rl = dd_mul_d(yh, yl, th)
    ph = xh - rh
    dl = xl - rl
    d = ph + dl
    return fast_two_sum(th, d / yh)


def dd_tables():
    """``(p10, m10, inv_fact)``: 10^n and 10^−n (n = 0..69) and 1/n! (n = 0..27) as
    double-words ``[hi, lo]`` nearest to the exact values (relative error ≤ u²), from
    exact rationals."""
    from fractions import Fraction

    def dd(x: Fraction):
        hi = float(x)
        return hi, float(x - Fraction(hi))

    p10 = np.array([dd(Fraction(10) ** n) for n in range(70)])
    m10 = np.array([dd(Fraction(1, 10**n)) for n in range(70)])
    inv_fact = np.array([dd(Fraction(1, math.factorial(n))) for n in range(28)])
    return p10, m10, inv_fact


#: ln 2 = L1 + L2 + L3 + 4.5e-48: L1 with 44 bits (k·L1 exact for |k| < 2^9)
_L1 = 0.6931471805598903
_L2 = 5.497923018708371e-14
_L3 = 1.94704509238075e-31
_N_TAYLOR = 23


@kernel("UniTuple(float64, 3)(float64, float64[:, :])")
def exp_dd(x, inv_fact):
    """``(hi, lo, rel)``: e^x as a double-word with relative error ≤ rel, for
    −700 < x ≤ 0: x = k·ln 2 + r (|r| ≤ 0.35, r as a double-word), Taylor's polynomial
    of degree 23 in r by Horner's rule, times 2^k."""
    k = np.rint(x / 0.6931471805599453)
    rh, rl = two_sum(x, -k * _L1)  # k·L1 exact
    ph, pl = two_prod(k, _L2)
    rh, rl = dd_add(rh, rl, -ph, -pl)
    rh, rl = dd_add(rh, rl, -k * _L3, 0.0)
    ph, pl = inv_fact[_N_TAYLOR, 0], inv_fact[_N_TAYLOR, 1]
    for n in range(_N_TAYLOR - 1, -1, -1):
        ph, pl = dd_mul(ph, pl, rh, rl)
        ph, pl = dd_add(ph, pl, inv_fact[n, 0], inv_fact[n, 1])
    # error: r's (|k|·2^-150 + 2·C_OP·|r|, relative in e^r), the truncation (< 1e-33) and
    # Horner's: 2·(N+1) operations of C_OP plus the constants' u², on terms whose absolute
    # sum is ≤ e^|r| ≤ 1.42 with e^r ≥ 0.70 (a factor ≤ 2.03): ≤ 2.03·(2N + 3)·C_OP
    rel = 2.03 * (2 * _N_TAYLOR + 3) * C_OP + 2.0 * C_OP + 1e-33 + (abs(k) + 1.0) * 2.0**-150
    s = 2.0 ** k
    return ph * s, pl * s, rel


@kernel("boolean(float64, float64, float64, int64, float64[:, :], float64[:, :], int64[:], int64[:])")
def round_digits(ch, cl, rad, nd, p10, m10, buf, out):
    """Round the value ``ch + cl`` (any value within ``rad`` of it) to ``nd`` digits:
    ``out[0..2]`` = (high, low, e) with ``q = high·10^13 + low``, ``10^(nd−1) ≤ q < 10^nd``
    and the value ``q·10^(e−nd+1)``; ``buf`` receives the digit characters of q.  False
    when a midpoint (or :data:`TIE_MARGIN` units around it) lies within the ball."""
    if not (1e-40 < ch < 1e30):
        return False
    e = int(math.floor(math.log10(ch)))
    hi_lo = np.int64(1)  # 10^(nd−14): q ≥ 10^(nd−1) ⇔ high ≥ hi_lo (integers: no float power)
    for _ in range(nd - 14):
        hi_lo *= 10
    hi_hi = hi_lo * 10
    for _ in range(3):
        n = nd - 1 - e
        if n >= 0:
            if n >= 70:
                return False
            wh, wl = dd_mul(ch, cl, p10[n, 0], p10[n, 1])
        else:
            if -n >= 70:
                return False
            wh, wl = dd_mul(ch, cl, m10[-n, 0], m10[-n, 1])
        scale = p10[n, 0] if n >= 0 else m10[-n, 0]
        tol = SAFETY * (2.0 * C_OP * abs(wh) + rad * scale * (1.0 + 2 * C_OP)) + TIE_MARGIN
        # w = wh + wl with wh an integer (w ≥ 10^18 > 2^59: ulp(wh) ≥ 2^7), |wl| ≤ ulp(wh)/2 ≤ 2^34
        if wh < 1e18 or wh > 1e26 or abs(wl) > 2.0**50:
            return False
        fl = np.floor(wl)
        frac = wl - fl
        a = np.floor(wh * 2.0**-32)  # wh = a·2^32 + b exactly, a < 2^55, 0 ≤ b < 2^32
        b = wh - a * 2.0**32
        ai = np.int64(a)
        c = np.int64(b) + np.int64(fl)
        a1, a0 = ai // 100000000, ai % 100000000
        x = a0 * 4294967296 + c
        y = a1 * 4294967296
        x1, x0 = x // _P13, x % _P13
        y1, y0 = y // 100000, y % 100000
        low = x0 + y0 * 100000000
        high = x1 + y1
        if low >= _P13:
            low -= _P13
            high += 1
        if high < hi_lo:
            e -= 1
            continue
        if high >= hi_hi:
            e += 1
            continue
        # a ball reaching below 10^(nd−1) at exponent e holds values whose digits at e − 1
        # are ≥ 10^nd − 10·tol > 10^nd − 1/2: they round up to the same text
        if abs(frac - 0.5) <= tol or tol >= 0.04:
            return False
        if frac > 0.5:
            low += 1
            if low == _P13:
                low = 0
                high += 1
                if high == hi_hi:
                    high = hi_lo
                    e += 1
        out[0], out[1], out[2] = high, low, e
        for j in range(13):
            buf[nd - 1 - j] = 48 + low % 10
            low //= 10
        for j in range(13, nd):
            buf[nd - 1 - j] = 48 + high % 10
            high //= 10
        return True
    return False


@kernel("int64(int64[:], int64, int64, int64[:, :], int64)")
def layout(digits, nd, e, buf, row):
    """Write ``to_str``'s layout (``min_fixed=-4, max_fixed=6, strip_zeros=False``) of the
    ``nd`` digits with decimal exponent ``e`` into ``buf[row]``; returns the length."""
    k = 0
    if -4 < e < 6:
        if e < 0:
            buf[row, 0] = 48
            buf[row, 1] = 46
            k = 2
            for _ in range(-e - 1):
                buf[row, k] = 48
                k += 1
            for j in range(nd):
                buf[row, k] = digits[j]
                k += 1
            return k
        for j in range(e + 1):  # e + 1 ≤ 6 ≤ nd
            buf[row, k] = digits[j]
            k += 1
        buf[row, k] = 46
        k += 1
        for j in range(e + 1, nd):
            buf[row, k] = digits[j]
            k += 1
        return k
    buf[row, 0] = digits[0]
    buf[row, 1] = 46
    k = 2
    for j in range(1, nd):
        buf[row, k] = digits[j]
        k += 1
    buf[row, k] = 101
    buf[row, k + 1] = 45 if e < 0 else 43
    k += 2
    a = abs(e)
    nexp = 1 if a < 10 else (2 if a < 100 else 3)
    for j in range(nexp):
        buf[row, k + nexp - 1 - j] = 48 + a % 10
        a //= 10
    return k + nexp


@kernel("Tuple((int64[:, :], int64[:], int64[:, :], int64[:]))(float64[:], float64[:, :], float64[:, :], "
        "float64[:, :], float64)")
def exp_texts(x, p10, m10, inv_fact, extra):
    """The 25-digit texts of e^x for each x (−87 < x ≤ 0): rows of ``TEXT_WIDTH`` bytes,
    their lengths, the decimals ``(high, low, e)`` (see :func:`round_digits`) and a status
    (:data:`TEXT_OK` or :data:`TEXT_PYTHON`).  ``extra``: a relative distance added to the
    ball (the printed number's own distance to e^x)."""
    n = x.shape[0]
    buf = np.zeros((n, TEXT_WIDTH), dtype=np.int64)
    lens = np.zeros(n, dtype=np.int64)
    dec = np.zeros((n, 3), dtype=np.int64)
    status = np.full(n, TEXT_PYTHON, dtype=np.int64)
    digits = np.zeros(25, dtype=np.int64)
    out = np.zeros(3, dtype=np.int64)
    for i in range(n):
        if x[i] == 0.0:  # e^0 = 1 exactly: "1.000000000000000000000000"
            digits[0] = 49
            digits[1:] = 48
            lens[i] = layout(digits, 25, 0, buf, i)
            dec[i, 0], dec[i, 1], dec[i, 2] = 100000000000, 0, 0
            status[i] = TEXT_OK
            continue
        if not (-87.0 < x[i] < 0.0):
            continue
        zh, zl, rel = exp_dd(x[i], inv_fact)
        if round_digits(zh, zl, (rel + extra) * zh * (1.0 + 4 * C_OP), 25, p10, m10, digits, out):
            lens[i] = layout(digits, 25, out[2], buf, i)
            dec[i, 0], dec[i, 1], dec[i, 2] = out[0], out[1], out[2]
            status[i] = TEXT_OK
    return buf, lens, dec, status


# ------------------------------------------------------------------ balls around MPFR values
#
# A ball (h, l, r): the double-word h + l and a radius r ≥ the distance from h + l to the
# 136-bit MPFR value it stands for.  Each operation below bounds the MPFR result of the
# same operation on any values within its operands' balls: the operands' radii carried
# through the exact operation, the double-word error (C_OP relative) and MPFR's rounding
# (U136 relative); _GROW (1 + 1e-12) covers the float64 rounding of the radius formulas
# and |h + l| ≤ |h|·(1 + u).

_GROW = 1.0 + 1e-12


@kernel("UniTuple(float64, 3)(int64, int64, int64, float64[:, :], float64[:, :])")
def decimal_ball(high, low, e, p10, m10):
    """The ball of the 136-bit rounding of the 25-digit decimal ``(high·10^13 + low)·10^(e−24)``."""
    qh, ql = two_prod(float(high), 1e13)  # exact (< 2^84)
    qh, ql = dd_add(qh, ql, float(low), 0.0)
    n = 24 - e
    if n >= 0:
        h, l = dd_mul(qh, ql, m10[n, 0], m10[n, 1])
    else:
        h, l = dd_mul(qh, ql, p10[-n, 0], p10[-n, 1])
    return h, l, (3.0 * C_OP + U136) * abs(h) * _GROW


@kernel("UniTuple(float64, 3)(float64, float64, float64, float64, float64, float64, float64)")
def ball_add(xh, xl, xr, yh, yl, yr, sign):
    """The ball of MPFR's ``x + sign·y`` (sign ±1)."""
    h, l = dd_add(xh, xl, sign * yh, sign * yl)
    r = xr + yr
    return h, l, (r + (C_OP + U136) * abs(h) + U136 * r) * _GROW


@kernel("UniTuple(float64, 3)(float64, float64, float64, float64, float64, float64)")
def ball_mul(xh, xl, xr, yh, yl, yr):
    """The ball of MPFR's ``x·y``."""
    h, l = dd_mul(xh, xl, yh, yl)
    r = abs(xh) * yr + abs(yh) * xr + xr * yr
    return h, l, (r + (C_OP + U136) * abs(h) + U136 * r) * _GROW


@kernel("UniTuple(float64, 3)(float64, float64, float64, float64)")
def ball_mul_d(xh, xl, xr, f):
    """The ball of MPFR's ``x·f`` for a double f (exact)."""
    h, l = dd_mul_d(xh, xl, f)
    r = abs(f) * xr
    return h, l, (r + (C_OP + U136) * abs(h) + U136 * r) * _GROW


@kernel("UniTuple(float64, 3)(float64, float64, float64, float64, float64, float64)")
def ball_div(xh, xl, xr, yh, yl, yr):
    """The ball of MPFR's ``x / y`` (radius inf when y's ball is not well inside one sign)."""
    d = abs(yh) * (1.0 - 1e-15) - yr
    if not d > 2.0 * yr:
        return 0.0, 0.0, np.inf
    h, l = dd_div(xh, xl, yh, yl)
    r = (xr + abs(h) * (1.0 + 1e-15) * yr) / d
    return h, l, (r + (C_OP + U136) * abs(h) + U136 * r) * _GROW


@kernel("UniTuple(float64, 3)(int64[:], int64[:], float64, float64, float64[:, :], float64[:, :])")
def dec_sub(x, y, xr, yr, p10, m10):
    """The ball of MPFR's ``x − y`` for two 25-digit decimals (their 136-bit roundings).

    With exponents ``e_y ≤ e_x ≤ e_y + 1`` (or the reverse), ``x − y`` is an exact integer
    ``d·10^(e−24)`` (|d| < 10^26: ``d = dh·10^13 + dl`` in int64 parts) and only the
    inputs' roundings (U136 relative each: ``xr``, ``yr`` bound |x| and |y|), the
    double-word conversion and MPFR's subtraction count; otherwise (``x − y`` is then at
    least 0.9 of the larger) the balls of x and y are subtracted."""
    k = x[2] - y[2]
    if k < -1 or k > 1:
        h, l, r = decimal_ball(x[0], x[1], x[2], p10, m10)
        h2, l2, r2 = decimal_ball(y[0], y[1], y[2], p10, m10)
        return ball_add(h, l, r, h2, l2, r2, -1.0)
    sgn = 1.0
    if k < 0:
        x, y = y, x
        sgn = -1.0
    hx, lx = x[0], x[1]
    if k != 0:  # q_x·10 in the parts of q_y's scale
        lx *= 10
        c = lx // _P13
        lx -= c * _P13
        hx = hx * 10 + c
    qh, ql = two_prod(float(hx - y[0]), 1e13)  # |hx − hy| < 10^13: exact
    qh, ql = dd_add(qh, ql, float(lx - y[1]), 0.0)
    n = 24 - y[2]
    if n >= 0:
        h, l = dd_mul(qh, ql, m10[n, 0], m10[n, 1])
    else:
        h, l = dd_mul(qh, ql, p10[-n, 0], p10[-n, 1])
    r = U136 * (xr + yr)
    return sgn * h, sgn * l, (r + (3.0 * C_OP + U136) * abs(h) + U136 * r) * _GROW


@kernel("int64(int64[:], int64[:])")
def dec_cmp(x, y):
    """−1, 0, 1 as the decimal ``x = (high, low, e)`` is below, equal to or above ``y``."""
    for j in (2, 0, 1):
        if x[j] != y[j]:
            return -1 if x[j] < y[j] else 1
    return 0


@kernel("Tuple((int64[:, :], int64[:], float64[:], int64[:]))(int64[:, :], int64[:, :], float64[:], float64[:], "
        "int64[:, :], float64[:, :], float64[:, :])")
def grid_texts(va, vb, rel_a, rel_b, grid, p10, m10):
    """The grid rows of one pair: for each grid α (25-digit decimals ``grid``, ascending)
    the 20-digit text of β (a row of ``TEXT_WIDTH`` bytes, its length), the float64
    nearest to the error bound and a status (:data:`TEXT_OK`, :data:`TEXT_PYTHON`).

    ``va``, ``vb``: the vertices' α and β as 25-digit decimals (see :func:`round_digits`),
    sorted by (α ascending, β descending); ``rel_a``, ``rel_b`` their relative errors.  The
    numbers bounded are those of :func:`exactdp.sweep.envelope.interpolate_grid` in 136-bit
    MPFR arithmetic on the 136-bit roundings of the decimals: β = b0 + s·(α − a0),
    s = (b1 − b0)/(a1 − a0), error eb + |s|·ea (eb, ea: the larger of the two vertices'
    ``v·rel``)."""
    n = va.shape[0]
    m = grid.shape[0]
    A = np.empty((n, 4))  # ball (h, l, r) and a bound of |value|
    B = np.empty((n, 4))
    EA = np.empty((n, 3))
    EB = np.empty((n, 3))
    for i in range(n):
        h, l, r = decimal_ball(va[i, 0], va[i, 1], va[i, 2], p10, m10)
        A[i, 0], A[i, 1], A[i, 2], A[i, 3] = h, l, r, abs(h) * 1.001
        EA[i, 0], EA[i, 1], EA[i, 2] = ball_mul_d(h, l, r, rel_a[i])
        h, l, r = decimal_ball(vb[i, 0], vb[i, 1], vb[i, 2], p10, m10)
        B[i, 0], B[i, 1], B[i, 2], B[i, 3] = h, l, r, abs(h) * 1.001
        EB[i, 0], EB[i, 1], EB[i, 2] = ball_mul_d(h, l, r, rel_b[i])
    buf = np.zeros((m, TEXT_WIDTH), dtype=np.int64)
    lens = np.zeros(m, dtype=np.int64)
    errf = np.zeros(m)
    status = np.full(m, TEXT_PYTHON, dtype=np.int64)
    digits = np.zeros(20, dtype=np.int64)
    out = np.zeros(3, dtype=np.int64)
    r_idx = 0
    for g in range(m):
        al = grid[g]
        if dec_cmp(al, va[0]) <= 0:
            bh, bl, br = B[0, 0], B[0, 1], B[0, 2]
            eh, el, er = EB[0, 0], EB[0, 1], EB[0, 2]
        elif dec_cmp(al, va[n - 1]) >= 0:
            bh, bl, br = B[n - 1, 0], B[n - 1, 1], B[n - 1, 2]
            eh, el, er = EB[n - 1, 0], EB[n - 1, 1], EB[n - 1, 2]
        else:
            while r_idx < n and not dec_cmp(al, va[r_idx]) < 0:
                r_idx += 1
            i0, i1 = r_idx - 1, r_idx
            j = i1 if (EB[i1, 0] > EB[i0, 0] or (EB[i1, 0] == EB[i0, 0] and EB[i1, 1] > EB[i0, 1])) else i0
            eh, el, er = EB[j, 0], EB[j, 1], max(EB[i0, 2], EB[i1, 2])
            if dec_cmp(va[i0], va[i1]) == 0:
                j = i0 if dec_cmp(vb[i0], vb[i1]) <= 0 else i1
                bh, bl, br = B[j, 0], B[j, 1], B[j, 2]
            else:
                d1h, d1l, d1r = dec_sub(vb[i1], vb[i0], B[i1, 3], B[i0, 3], p10, m10)
                d2h, d2l, d2r = dec_sub(va[i1], va[i0], A[i1, 3], A[i0, 3], p10, m10)
                sh, sl, sr = ball_div(d1h, d1l, d1r, d2h, d2l, d2r)
                ga = decimal_ball(al[0], al[1], al[2], p10, m10)[0]
                d3h, d3l, d3r = dec_sub(al, va[i0], abs(ga) * 1.001, A[i0, 3], p10, m10)
                ph, pl, pr = ball_mul(sh, sl, sr, d3h, d3l, d3r)
                bh, bl, br = ball_add(B[i0, 0], B[i0, 1], B[i0, 2], ph, pl, pr, 1.0)
                j = i1 if (EA[i1, 0] > EA[i0, 0] or (EA[i1, 0] == EA[i0, 0] and EA[i1, 1] > EA[i0, 1])) else i0
                ah, al_, ar = EA[j, 0], EA[j, 1], max(EA[i0, 2], EA[i1, 2])
                if sh < 0:
                    sh, sl = -sh, -sl
                ph, pl, pr = ball_mul(sh, sl, sr, ah, al_, ar)
                eh, el, er = ball_add(eh, el, er, ph, pl, pr, 1.0)
        # fmt_mpfr rounds β to 120 bits first (2^-119 relative, counted doubled)
        if not (br < np.inf and er < np.inf) or not eh > 1e-290:
            continue
        if not round_digits(bh, bl, br + 2.0**-118 * abs(bh), 20, p10, m10, digits, out):
            continue
        # float(err) rounds to nearest: decided when the ball lies inside eh's rounding interval
        up = np.nextafter(eh, np.inf) - eh
        dn = eh - np.nextafter(eh, -np.inf)
        rr = SAFETY * er
        if not (el + rr < 0.5 * up * (1.0 - 1e-6) and el - rr > -0.5 * dn * (1.0 - 1e-6)):
            continue
        lens[g] = layout(digits, 20, out[2], buf, g)
        errf[g] = eh
        status[g] = TEXT_OK
    return buf, lens, errf, status
