"""The truncated-integer digits of the pair text (session 8, txt8) print the former bytes.

``vertex_values`` and ``fmt_mpfr`` read the leading decimal digits of a value as one
integer (``floor(m·2^ex·10^k)`` of its mantissa) instead of MPFR's rounded digit string,
and ``fmt`` of an mpf takes the same route (``fmt_mpf_raw``).  References: the former
code (session 7: ``mpfr.digits``), frozen below, and mpmath's own steps (``nstr`` under
``workdps``, ``mpmath.exp``); inputs concentrate on the hard cases: tails next to the
decision thresholds, exact ties, powers of ten (carries), tiny and huge exponents, 0,
negative, inf and nan.
"""

from __future__ import annotations

import math
import random

import gmpy2
import mpmath
from mpmath.libmp import mpf_pos

from exactdp.sweep.numtext import (
    RND,
    fmt_mpf_raw,
    fmt_mpfr,
    fmt_raw,
    mpfr_context,
    mpfr_to_raw,
    prec_of,
    raw_to_mpfr,
    vertex_value,
    vertex_values,
)

# ------------------------------------------------------------------ the former code (frozen)

_P10 = tuple(10**k for k in range(60))
_P10_MPFR = tuple(gmpy2.mpfr(10**j, 136) for j in range(59))
_C136 = mpfr_context(prec_of(40))


def former_vertex_values(keys) -> list:
    """Session 7's ``numtext.vertex_values`` verbatim (MPFR's 30 rounded digits)."""
    ctx = _C136
    exp, div, mul = ctx.exp, ctx.div, ctx.mul
    top, one = _P10[25], _P10[24]
    fixed = {-1: "0.", -2: "0.0", -3: "0.00"}
    sci = tuple(f"e{-k:+}" for k in range(40))
    out = []
    for lv, rel in keys:
        rel = float(rel)
        if type(lv) is float and -2000.0 < lv < 2000.0:
            digits, pe, _ = exp(lv).digits(10, 30)
            t = int(digits[25:])
            if (t < 50000 - 3 or t > 50000 + 3) and -33 <= pe <= 0:
                q, e = int(digits[:25]), pe - 1
                if t > 50000:
                    q += 1
                    if q == top:
                        q, e = one, pe
                    digits = str(q)
                else:
                    digits = digits[:25]
                if e < 0:
                    text = fixed[e] + digits if e > -4 else digits[0] + "." + digits[1:] + sci[-e]
                    v = div(q, _P10_MPFR[24 - e])
                    out.append((text, v, mul(v, rel), (e, q)))
                    continue
        out.append(vertex_value(lv, rel))
    return out


def former_fmt_mpfr(x, dps: int) -> str:
    """Session 7's ``numtext.fmt_mpfr`` fast path verbatim (MPFR's ``dps + 13`` rounded
    digits); its fallback is the current one (unchanged)."""
    from exactdp.sweep.numtext import digits_exp, layout, layout_digits

    y = mpfr_context(prec_of(dps + 15)).plus(x)
    lo = mpfr_context(2).mul_2exp(gmpy2.mpfr(1), -3400)
    hi = mpfr_context(2).mul_2exp(gmpy2.mpfr(1), 64)
    if dps >= 8 and lo < y < hi:
        digits, pe, _ = y.digits(10, dps + 13)
        t = int(digits[dps:])
        if t < 5 * 10**12 - 1:
            return layout_digits(digits[:dps], pe - 1, dps)
        if t > 5 * 10**12 + 5001:
            q = int(digits[:dps]) + 1
            if q == 10**dps:
                return layout_digits(str(10 ** (dps - 1)), pe, dps)
            return layout_digits(str(q), pe - 1, dps)
    if y > 0 and y.is_finite():
        m, ex = y.as_mantissa_exp()
        de = digits_exp((0, m, ex, m.bit_length()), dps)
        if de is not None:
            return layout(de[0], de[1], dps)
    return fmt_raw(mpfr_to_raw(y), dps)


def ref_nstr(x, dps: int) -> str:
    """``pair.fmt`` of an mpf, the mpmath-context way (``nstr`` under ``workdps``)."""
    with mpmath.workdps(dps + 15):
        x = mpmath.mpf(x)
        return "0" if x == 0 else mpmath.nstr(x, dps, min_fixed=-4, max_fixed=6, strip_zeros=False)


# ------------------------------------------------------------------ inputs


def _tie_values(rng, dps: int, count: int) -> list:
    """80-digit mpf values whose ``dps + 13``-digit tail sits at the decision thresholds
    (5·10^12 − 2 … + 5002), at exact ties, at 0 / 10^13 − 1, over many exponents."""
    out = []
    with mpmath.workdps(80):
        for _ in range(count):
            q = rng.randrange(10 ** (dps - 1), 10**dps)
            e = rng.randrange(-60, 19)
            for tail in (5 * 10**12 - 2, 5 * 10**12 - 1, 5 * 10**12, 5 * 10**12 + 1, 5 * 10**12 + 5001,
                         5 * 10**12 + 5002, 0, 10**13 - 1):
                for nudge in (0, 1, -1):
                    v = (mpmath.mpf(q * 10**13 + tail) + mpmath.mpf(nudge) / 3) * mpmath.mpf(10) ** (e - dps - 12)
                    out.append(v)
            out.append(mpmath.mpf(10) ** e)
            out.append(mpmath.mpf(10) ** e * (1 - mpmath.mpf(10) ** -30))
    return out


def _values(seed: int) -> list:
    rng = random.Random(seed)
    out = []
    with mpmath.workdps(60):
        out += [mpmath.mpf(rng.random()) * mpmath.mpf(2) ** rng.randint(-3500, 70) for _ in range(600)]
        out += [mpmath.mpf(rng.random()) ** 7 / 3 for _ in range(200)]
        for k in (-3401, -3400, -3399, 62, 63, 64, 65):
            out += [mpmath.mpf(2) ** k, mpmath.mpf(2) ** k * (1 - mpmath.mpf(2) ** -100)]
    for dps in (8, 20, 25):
        out += _tie_values(rng, dps, 12)
    return out


# ------------------------------------------------------------------ tests


def test_vertex_values_match_the_former_code_and_mpmath():
    """Random logs, logs whose exp lands next to a 25-digit midpoint (the fallback band and
    just outside it: tails 49990 … 50010 of 30 digits, both sides of the truncation),
    next to powers of ten (carries into the next decade, the e = 0 and e = −34 edges),
    and outside the inlined window."""
    rng = random.Random(81)
    logs = [rng.uniform(-82, 0.5) for _ in range(1500)]
    with mpmath.workdps(80):
        for _ in range(60):
            q = rng.randrange(10**24, 10**25)
            e = rng.randrange(-36, 1)
            for tail in (49995, 49996, 49997, 49998, 50000, 50002, 50003, 50004, 50005, 0, 99999):
                for nudge in (0, 1, -1):
                    v = (mpmath.mpf(q * 10**5 + tail) + mpmath.mpf(nudge) / 7) * mpmath.mpf(10) ** (e - 29)
                    logs.append(float(mpmath.log(v)))
        for k in range(0, 37):
            lv = float(mpmath.log(mpmath.mpf(10) ** -k))
            logs += [lv, math.nextafter(lv, 0), math.nextafter(lv, -math.inf), lv + 1e-13, lv - 1e-13]
    c = mpfr_context(136)
    near = []  # float logs whose exp has a 30-digit tail within ±8 of 50000 (a 25-digit midpoint)
    for lv in (rng.uniform(-79, -0.01) for _ in range(100_000)):
        if abs(int(c.exp(lv).digits(10, 30)[0][25:]) - 50000) <= 8:
            near.append(lv)
    assert len(near) >= 8
    logs += near
    logs += [0.0, -0.0, -1e-300, -5e-324, 1.5, -80.99, -81.0, -745.2, -3000.5, -math.inf, mpmath.mpf(-3) / 7]
    keys = [(lv, 10.0 ** rng.uniform(-16, -8)) for lv in logs]
    got, ref = vertex_values(keys), former_vertex_values(keys)
    assert len(got) == len(ref)
    for (lv, _), g, r in zip(keys, got, ref):
        assert g[0] == r[0] and g[3] == r[3], lv
        assert mpfr_to_raw(g[1]) == mpfr_to_raw(r[1]) and mpfr_to_raw(g[2]) == mpfr_to_raw(r[2]), lv
    for lv in logs[:300] + logs[-60:]:  # and mpmath's own steps, independently of both
        with mpmath.workdps(40):
            t = ref_nstr(mpmath.exp(mpmath.mpf(lv)), 25)
        assert vertex_values([(lv, 1e-11)])[0][0] == t, lv


def test_fmt_mpfr_matches_the_former_code():
    ctx = mpfr_context(300)
    for x in _values(82):
        y = raw_to_mpfr(x._mpf_, ctx)
        for dps in (8, 12, 20, 25):
            assert fmt_mpfr(y, dps) == former_fmt_mpfr(y, dps), (dps, x)
            assert fmt_mpfr(-y, dps) == former_fmt_mpfr(-y, dps), (dps, x)
    for z in (gmpy2.mpfr(0), gmpy2.mpfr("inf"), gmpy2.mpfr("-inf"), gmpy2.mpfr("nan")):
        assert fmt_mpfr(z, 20) == former_fmt_mpfr(z, 20)


def test_fmt_of_mpf_matches_the_raw_path_and_nstr():
    """``fmt_mpf_raw`` against the former ``fmt`` of an mpf (``fmt_raw`` after
    ``mpf_pos``) on every input, and against ``nstr`` under ``workdps`` on a sample."""
    xs = _values(83)
    xs += [-x for x in xs[:100]] + [mpmath.mpf(0), mpmath.inf, -mpmath.inf, mpmath.nan]
    for n, x in enumerate(xs):
        for dps in (6, 8, 20, 25):
            got = fmt_mpf_raw(x._mpf_, dps)
            assert got == fmt_raw(mpf_pos(x._mpf_, prec_of(dps + 15), RND), dps), (dps, x)
            if n % 7 == 0 and mpmath.isfinite(x):
                assert got == ref_nstr(x, dps), (dps, x)


def former_curve_rows(i, j, deltas, dpts, epts) -> tuple:
    """Session 7's ``pair._curve_rows`` verbatim (mpf operators under ``workdps``)."""
    from exactdp.numerics.precision import DPS_RESULT
    from exactdp.sweep.pair import PAIR_COLUMNS, _rel, fmt, fmt_bound

    worst_d = 0.0
    worst_e = 0.0
    rows = [PAIR_COLUMNS]
    with mpmath.workdps(DPS_RESULT):
        up = 1 + mpmath.mpf(10) ** -15
        for d, dp, ep in zip(deltas, dpts, epts):
            rel_d = _rel(dp.error_bound, dp.estimate)
            rel_e = _rel(ep.upper - ep.lower, ep.estimate)
            worst_d, worst_e = max(worst_d, rel_d), max(worst_e, rel_e)
            rows.append((i, j, d, fmt(dp.epsilon), fmt(dp.estimate), fmt_bound(dp.error_bound),
                         fmt(dp.estimate + dp.error_bound * up),
                         fmt(dp.first_term), fmt(dp.second_term),
                         fmt(ep.estimate), fmt(ep.lower), fmt(ep.upper)))
    return rows, worst_d, worst_e


def test_curve_rows_on_raw_values_match_the_former_operators():
    """Random 40-digit δ/ε points (the sweep's mpf), zero widths, zero estimates, negative
    ε, widths at a tie of the 20-digit text, and a row with Fraction / float fields (the
    operator path)."""
    from fractions import Fraction
    from types import SimpleNamespace as NS

    from exactdp.numerics.precision import DPS_RESULT
    from exactdp.sweep.pair import _curve_rows

    rng = random.Random(84)
    dpts, epts = [], []
    with mpmath.workdps(DPS_RESULT):
        for n in range(300):
            est = mpmath.mpf(rng.random()) * mpmath.mpf(10) ** rng.randint(-40, 0) / 7
            eb = est * mpmath.mpf(10) ** rng.randint(-16, -6) / 3 if n % 9 else mpmath.mpf(0)
            if n % 23 == 0:
                est = mpmath.mpf(0)
            if n % 17 == 0:  # estimate + bound·(1 + 1e-15) on a 20-digit tie
                est, eb = mpmath.mpf("0.012345678901234567895"), mpmath.mpf(0)
            eps = mpmath.mpf(rng.uniform(-2, 30)) / 3
            width = mpmath.mpf(10) ** rng.randint(-14, -8) / 11 if n % 5 else mpmath.mpf(0)
            lo, hi = (eps - width, eps + width) if n % 13 else (mpmath.mpf(0), width)
            dpts.append(NS(epsilon=eps + 1, estimate=est, error_bound=eb, first_term=est / 3, second_term=est / 5))
            epts.append(NS(estimate=eps if n % 13 else mpmath.mpf(0), lower=lo, upper=hi))
    dpts.append(NS(epsilon=Fraction(3, 2), estimate=0.25, error_bound=Fraction(1, 10**12), first_term=0.1,
                   second_term=mpmath.mpf(0)))
    epts.append(NS(estimate=Fraction(1, 3), lower=0.3, upper=Fraction(2, 5)))
    deltas = [f"{n}e-9" for n in range(len(dpts))]
    assert _curve_rows(2, 17, deltas, dpts, epts) == former_curve_rows(2, 17, deltas, dpts, epts)
    neg = [n for n, ep in enumerate(epts[:-1]) if ep.estimate < 0 and ep.upper > ep.lower]
    assert len(neg) >= 3  # the worst ε width of negative estimates only (|value| in the quotient)
    sub = ([deltas[n] for n in neg], [dpts[n] for n in neg], [epts[n] for n in neg])
    got, ref = _curve_rows(2, 17, *sub), former_curve_rows(2, 17, *sub)
    assert got == ref and got[2] > 0


def test_grid_rows_key_sort_with_shared_alphas_matches_the_value_sort():
    """Vertices sharing their α (several β each, errors differing), shuffled: the two-pass
    key sort (β descending, then α ascending) orders them as the former one-pass sort of
    ``(α, −β, index)`` tuples and as the sort of the mpfr values (``keys=None``)."""
    from exactdp.sweep.pair import SweepSettings, grid_rows

    rng = random.Random(85)
    s = SweepSettings(envelope_points=101)
    logs = sorted(rng.uniform(-46, -0.01) for _ in range(60))
    vs = []
    for n, la in enumerate(logs):
        lb = math.log(-math.expm1(la))
        for k in range(1 + n % 3):  # 1–3 β for one α (the last one equal to another's)
            vs.append((la, lb - 0.01 * k, rng.choice([1e-11, 3e-13]), rng.choice([1e-11, 7e-14, 2e-12])))
    vs += vs[:4]
    rng.shuffle(vs)
    pts, keys = [], []
    for la, lb, ra, rb in vs:
        (_, a, ea, ka), (_, b, eb, kb) = vertex_values([(la, ra), (lb, rb)])
        pts.append((a, b, ea, eb))
        keys.append((ka, kb))
    former = [t[4] for t in sorted([(ka[0], ka[1], -kb[0], -kb[1], m) for m, (ka, kb) in enumerate(keys)])]
    order = sorted(range(len(keys)), key=[kb for _, kb in keys].__getitem__, reverse=True)
    order.sort(key=[ka for ka, _ in keys].__getitem__)
    assert order == former
    assert grid_rows(pts, s, keys) == grid_rows(pts, s, None)
