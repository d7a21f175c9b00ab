"""The MPFR-digit shortcuts of the pair text (session 7, txt7) print the former bytes.

``fmt_mpfr`` and ``vertex_values`` now read MPFR's own decimal digits (``mpfr.digits``)
and decide the rounding from a few extra digits, falling back to the former integer
code near a tie; ``bound_texts_float`` formats through tables.  References here are
mpmath's own steps (``nstr`` under ``workdps``, ``mpmath.exp``) and the former
``bound_texts_float`` loop, frozen below; inputs concentrate on the hard cases: tails
next to the decision thresholds, exact ties, powers of ten (carries), tiny and huge
exponents, 0, negative, inf and nan.
"""

from __future__ import annotations

import math
import random

import gmpy2
import mpmath
import numpy as np

from exactdp.sweep.numtext import bound_text_float, bound_texts_float, fmt_mpfr, mpfr_context, mpfr_to_raw, vertex_values

# ------------------------------------------------------------------ references (mpmath / former code)


def former_fmt_mpfr(x, dps: int) -> str:
    """The former ``numtext.fmt_mpfr`` verbatim (``digits_exp`` on MPFR's mantissa and
    exponent, both ``mpz``: its ``fixdps`` is ``int()`` of an mpfr, *rounded*, where
    ``to_str`` truncates — one digit more in some decades, which can move a value within
    ``~5·10^-12`` units above a tie; the sweep's bytes are those of this code)."""
    from exactdp.sweep.numtext import digits_exp, fmt_raw, layout, prec_of

    y = mpfr_context(prec_of(dps + 15)).plus(x)
    if y > 0 and y.is_finite():
        m, ex = y.as_mantissa_exp()
        de = digits_exp((0, m, ex, m.bit_length()), dps)
        if de is not None:
            return layout(de[0], de[1], dps)
    return fmt_raw(mpfr_to_raw(y), dps)


def ref_vertex_text(log_value) -> tuple:
    with mpmath.workdps(40):
        t = ref_fmt_mpf(mpmath.exp(mpmath.mpf(log_value)), 25)
        return t, mpmath.mpf(t)._mpf_


def ref_fmt_mpf(x, digits: int) -> str:
    with mpmath.workdps(digits + 15):
        x = mpmath.mpf(x)
        return "0" if x == 0 else mpmath.nstr(x, digits, min_fixed=-4, max_fixed=6, strip_zeros=False)


def ref_bound_texts_float(xs) -> list:
    """The former ``bound_texts_float`` (its output loop verbatim)."""
    from fractions import Fraction

    p10 = [float(Fraction(10) ** p) for p in range(-300, 301)]
    x = np.array(xs, dtype=np.float64)
    ok = (x > 1e-290) & (x < 1e290)
    xs_ok = np.where(ok, x, 1.0)
    e = np.floor(np.log10(xs_ok)).astype(np.int64)
    s = xs_ok / np.array(p10)[e - 2 + 300]
    m = np.ceil(s)
    ok &= (s > 100 + 1e-11) & (s < 1000 - 1e-11) & (m - s > 1e-11) & (m - s < 1 - 1e-11)
    out = []
    for xv, okv, mv, ev in zip(xs, ok.tolist(), m.astype(np.int64).tolist(), e.tolist()):
        if not okv:
            out.append(bound_text_float(float(xv)))
        elif mv == 1000:
            out.append(f"1.00e{ev + 1}")
        else:
            out.append(f"{mv // 100}.{mv % 100:02d}e{ev}")
    return out


# ------------------------------------------------------------------ tests


def _near_ties(digits: int, extra: int, rng, n: int) -> list:
    """mpfr values (136 bits) whose ``digits + extra`` digits put the tail at the
    thresholds of fmt_mpfr (5·10^12 − 2 … + 5002) and at 0 / 10^extra − 1, over exponents."""
    c = mpfr_context(200)
    half = 5 * 10 ** (extra - 1)
    offs = (-3, -2, -1, 0, 1, 2, 5000, 5001, 5002, 5003) if extra == 13 else (-4, -3, -2, -1, 0, 1, 2, 3, 4)
    out = []
    for _ in range(n):
        q = rng.randrange(10 ** (digits - 1), 10**digits)
        k = rng.choice((-400, -60, -30, -8, -5, -4, -1, 0, 3, 5, 6, 7, 15))
        for off in offs + (-half, half - 1):
            num = q * 10**extra + half + off
            for wiggle in (-1, 0, 1):  # the 200-bit value rounded to 136 bits, and ± one ulp
                sh, x = digits + extra - 1 - k, gmpy2.mpfr(num, 200)
                v = c.div(x, gmpy2.mpfr(10**sh, 2000)) if sh >= 0 else c.mul(x, gmpy2.mpfr(10**-sh, 2000))
                v = mpfr_context(136).plus(v)
                out.append(gmpy2.next_above(v) if wiggle > 0 else gmpy2.next_below(v) if wiggle < 0 else v)
    return out


def test_fmt_mpfr_is_the_former_code_and_nstr_off_the_tie_band():
    rng = random.Random(71)
    c = mpfr_context(136)
    ties = _near_ties(20, 13, rng, 40) + _near_ties(8, 13, rng, 10) + _near_ties(25, 13, rng, 5)
    vals = [c.exp(rng.uniform(-700, 60)) for _ in range(400)]
    for k in range(-40, 41):  # powers of ten and their neighbours (carries to the next decade)
        t = c.div(gmpy2.mpfr(1), gmpy2.mpfr(10**-k, 200)) if k < 0 else c.plus(gmpy2.mpfr(10**k, 200))
        vals += [t, gmpy2.next_above(t), gmpy2.next_below(t)]
    vals += [c.mul_2exp(gmpy2.mpfr(1), s) for s in (-3500, -3401, -3400, -3399, -1074, 63, 64, 65, 200)]
    vals += [gmpy2.mpfr(0), -gmpy2.mpfr(0), c.minus(c.exp(-3.5)), gmpy2.mpfr("inf"), gmpy2.mpfr("-inf"), gmpy2.mpfr("nan")]
    for _ in range(30):  # exact decimal ties (integers ...d5·10^j): half to even
        for dps in (8, 20):
            q = rng.randrange(10 ** (dps - 1), 10**dps)
            ties += [c.plus(gmpy2.mpfr((q * 10 + 5) * 10**j, 200)) for j in (0, 1, 5)]
    assert all(type(v) is type(c.plus(1.5)) for v in vals + ties)
    for dps in (3, 7, 8, 20, 25):
        for v in ties:
            assert fmt_mpfr(v, dps) == former_fmt_mpfr(v, dps), (dps, v)
        for v in vals:
            got = fmt_mpfr(v, dps)
            assert got == former_fmt_mpfr(v, dps), (dps, v)
            assert got == ref_fmt_mpf(mpmath.mp.make_mpf(mpfr_to_raw(v)), dps), (dps, v)


def test_vertex_values_read_mpfr_digits_as_mpmath_exp_prints():
    """Random logs, logs whose exp lands next to a 25-digit midpoint (the fallback band
    and just outside it), next to powers of ten, and beyond the inlined exponents."""
    rng = random.Random(72)
    logs = [rng.uniform(-80, 0) for _ in range(400)]
    with mpmath.workdps(80):
        for _ in range(60):
            q = rng.randrange(10**24, 10**25)
            e = rng.randrange(-34, 0)
            for tail in (49990, 49996, 49997, 49998, 50000, 50002, 50003, 50004, 50010, 0, 99999):
                v = mpmath.mpf(q * 10**5 + tail) * mpmath.mpf(10) ** (e - 29)
                logs.append(float(mpmath.log(v)))
        for k in range(0, 40):
            lv = float(mpmath.log(mpmath.mpf(10) ** -k))
            logs += [lv, math.nextafter(lv, 0), math.nextafter(lv, -math.inf)]
    c = mpfr_context(136)
    near = []  # float logs whose exp has 30-digit tail within ±12 of 50000 (a 25-digit midpoint)
    for lv in (rng.uniform(-70, -0.01) for _ in range(120_000)):
        if abs(int(c.exp(lv).digits(10, 30)[0][25:]) - 50000) <= 12:
            near.append(lv)
    assert len(near) >= 10
    logs += near + [0.0, -0.0, -1e-300, 1.5, -745.2, -3000.5, -math.inf, mpmath.mpf(-3) / 7]
    keys = [(lv, 1e-11) for lv in logs]
    for (lv, rel), (text, v, vr, key) in zip(keys, vertex_values(keys)):
        t, raw = ref_vertex_text(lv)
        assert text == t, lv
        assert mpfr_to_raw(v) == raw, lv


def test_bound_texts_float_tables_match_the_former_loop():
    rng = random.Random(73)
    xs = [10 ** rng.uniform(-295, 295) for _ in range(2000)]
    xs += [m * 10.0**e for m in (1.0, 9.99, 9.995, 9.999999999999, 1.001, 5.0) for e in range(-300, 301, 7)]
    xs += [math.nextafter(x, d) for x in (1e-3, 1e-290, 1e290, 0.125, 999.0) for d in (0, math.inf)]
    xs += [0.0, -0.0, -1.0, 5e-324, math.inf, -math.inf, math.nan, 1.7976931348623157e308]
    assert bound_texts_float(xs) == ref_bound_texts_float(xs)
    assert bound_texts_float([]) == []
