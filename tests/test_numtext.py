"""The sweep's MPFR text routines (``exactdp.runs.numtext``) against their definitions and
a golden file.

* ``fmt_mpfr(x, dps)`` prints ``mpmath.nstr`` of x (tests/harness.py ``decimal_text``)
  except at a few exact decimal ties, where the sweep's bytes round the other way (its
  digits come from a rounded, not a truncated, digit count); those cases are pinned,
  byte for byte, by ``tests/golden/fmt_mpfr_ties.txt`` (regenerate with
  ``EXACTDP_REGEN_GOLDEN=1`` only when a change of the sweep's output is intended);
* ``vertex_values`` gives the 25-digit text of exp(log value) and the number it denotes;
* ``fmt_mpf_raw`` prints ``nstr`` of an mpf;
* ``pair._curve_rows`` (raw libmp arithmetic) writes each field's text of the values
  computed in mpmath objects at ``DPS_RESULT``;
* ``grid_rows``' two-pass key sort orders vertices as their values sort.

Inputs concentrate on the hard cases: tails next to the decision thresholds, exact ties,
powers of ten (carries), tiny and huge exponents, 0, negative, inf and nan.
"""

from __future__ import annotations

import math
import os
import random
from pathlib import Path

import gmpy2
import mpmath
from mpmath.libmp import mpf_pos

from exactdp.runs.numtext import (
    RND,
    fmt_mpf_raw,
    fmt_mpfr,
    fmt_raw,
    mpfr_context,
    mpfr_to_raw,
    prec_of,
    raw_to_mpfr,
    vertex_values,
)

from harness import bound_text, decimal_text

GOLDEN = Path(__file__).parent / "golden" / "fmt_mpfr_ties.txt"
TIE_DPS = (3, 7, 8, 20, 25)


# ------------------------------------------------------------------ inputs
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


def _tie_values() -> list:
    rng = random.Random(71)
    c = mpfr_context(136)
    ties = _near_ties(20, 13, rng, 40) + _near_ties(8, 13, rng, 10) + _near_ties(25, 13, rng, 5)
    for _ in range(30):  # exact decimal ties (integers …d5·10^j): half to even
        for dps in (8, 20):
            q = rng.randrange(10 ** (dps - 1), 10**dps)
            ties += [c.plus(gmpy2.mpfr((q * 10 + 5) * 10**j, 200)) for j in (0, 1, 5)]
    return ties


def _key(v, dps: int) -> str:
    m, e = v.as_mantissa_exp()
    return f"{int(m):x} {int(e)} {dps}"


def _read_golden() -> dict:
    out = {}
    for line in GOLDEN.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            m, e, dps, text = line.split()
            out[f"{m} {e} {dps}"] = text
    return out


# ------------------------------------------------------------------ fmt_mpfr
def test_fmt_mpfr_is_nstr_but_at_the_pinned_ties():
    ties = _tie_values()
    deviations = {}
    for dps in TIE_DPS:
        for v in ties:
            got = fmt_mpfr(v, dps)
            ref = decimal_text(mpmath.mp.make_mpf(mpfr_to_raw(v)), dps)
            if got != ref:
                deviations[_key(v, dps)] = got
    if os.environ.get("EXACTDP_REGEN_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        lines = ["# fmt_mpfr(mantissa·2^exponent, dps) where it differs from mpmath.nstr (tests/test_numtext.py)",
                 "# mantissa_hex exponent dps text"] + [f"{k} {t}" for k, t in sorted(deviations.items())]
        GOLDEN.write_text("\n".join(lines) + "\n", encoding="utf-8")
    golden = _read_golden()
    assert deviations == golden  # the same texts where they differ, and nowhere else
    assert 0 < len(golden) < len(ties) // 50  # a few exact ties, not a different format


def test_fmt_mpfr_is_nstr_off_the_ties():
    rng = random.Random(72)
    c = mpfr_context(136)
    vals = [c.exp(rng.uniform(-700, 60)) for _ in range(400)]
    for k in range(-40, 41):  # powers of ten and their neighbours (carries to the next decade)
        t = c.div(gmpy2.mpfr(1), gmpy2.mpfr(10**-k, 200)) if k < 0 else c.plus(gmpy2.mpfr(10**k, 200))
        vals += [t, gmpy2.next_above(t), gmpy2.next_below(t)]
    vals += [c.mul_2exp(gmpy2.mpfr(1), s) for s in (-3500, -3401, -3400, -3399, -1074, 63, 64, 65, 200)]
    vals += [gmpy2.mpfr(0), -gmpy2.mpfr(0), c.minus(c.exp(-3.5))]
    vals += [gmpy2.mpfr("inf"), gmpy2.mpfr("-inf"), gmpy2.mpfr("nan")]
    with mpmath.workdps(60):  # 80-digit values rounded into 300-bit mpfr, both signs
        for _ in range(300):
            x = mpmath.mpf(rng.random()) * mpmath.mpf(2) ** rng.randint(-3500, 70)
            vals += [raw_to_mpfr(x._mpf_, mpfr_context(300)), raw_to_mpfr((-x)._mpf_, mpfr_context(300))]
    for dps in (3, 7, 8, 12, 20, 25):
        for v in vals:
            assert fmt_mpfr(v, dps) == decimal_text(mpmath.mp.make_mpf(mpfr_to_raw(v)), dps), (dps, v)


def test_fmt_of_an_mpf_is_nstr():
    rng = random.Random(83)
    xs = []
    with mpmath.workdps(60):
        xs += [mpmath.mpf(rng.random()) * mpmath.mpf(2) ** rng.randint(-3500, 70) for _ in range(300)]
        xs += [mpmath.mpf(rng.random()) ** 7 / 3 for _ in range(100)]
        for k in (-3401, -3400, -3399, 62, 63, 64, 65):
            xs += [mpmath.mpf(2) ** k, mpmath.mpf(2) ** k * (1 - mpmath.mpf(2) ** -100)]
        for e in range(-60, 19, 7):  # powers of ten and just below (a carry)
            xs += [mpmath.mpf(10) ** e, mpmath.mpf(10) ** e * (1 - mpmath.mpf(10) ** -30)]
    xs += [-x for x in xs[:100]]
    for x in xs:
        for dps in (6, 8, 20, 25):
            assert fmt_mpf_raw(x._mpf_, dps) == decimal_text(x, dps), (dps, x)
    for x in (mpmath.mpf(0), mpmath.inf, -mpmath.inf, mpmath.nan):  # the context-free path
        for dps in (6, 20):
            assert fmt_mpf_raw(x._mpf_, dps) == fmt_raw(mpf_pos(x._mpf_, prec_of(dps + 15), RND), dps)


# ------------------------------------------------------------------ vertices
def test_vertex_values_are_the_25_digit_texts_of_the_exponentials():
    """Random logs, logs whose exp lands next to a 25-digit midpoint (tails 49995 … 50005 of
    30 digits, both sides of the fallback band), next to powers of ten (carries, the e = 0
    and e = −34 edges), and outside the inlined window."""
    rng = random.Random(81)
    logs = [rng.uniform(-82, 0.5) for _ in range(600)]
    with mpmath.workdps(80):
        for _ in range(30):
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
    for lv in (rng.uniform(-79, -0.01) for _ in range(60_000)):
        if abs(int(c.exp(lv).digits(10, 30)[0][25:]) - 50000) <= 8:
            near.append(lv)
    assert len(near) >= 4
    logs += near + [0.0, -0.0, -1e-300, -5e-324, 1.5, -80.99, -81.0, -745.2, -3000.5, -math.inf]
    logs.append(mpmath.mpf(-3) / 7)
    keys = [(lv, 10.0 ** rng.uniform(-16, -8)) for lv in logs]
    for (lv, rel), (text, v, vr, _) in zip(keys, vertex_values(keys)):
        with mpmath.workdps(40):
            want = decimal_text(mpmath.exp(mpmath.mpf(lv)), 25)
            assert text == want, lv
            assert mpfr_to_raw(v) == mpmath.mpf(want)._mpf_, lv
            assert mpfr_to_raw(vr) == (mpmath.mpf(want) * rel)._mpf_, lv


# ------------------------------------------------------------------ rows
def _row_by_definition(i, j, d, dp, ep):
    from exactdp.numerics.precision import DPS_RESULT

    with mpmath.workdps(DPS_RESULT):
        upper = dp.estimate + dp.error_bound * (1 + mpmath.mpf(10) ** -15)
    return (i, j, d, decimal_text(dp.epsilon), decimal_text(dp.estimate), bound_text(dp.error_bound),
            decimal_text(upper), decimal_text(dp.first_term), decimal_text(dp.second_term),
            decimal_text(ep.estimate), decimal_text(ep.lower), decimal_text(ep.upper))


def test_curve_rows_are_the_texts_of_the_values():
    """Random 40-digit δ/ε points (the sweep's mpf), zero widths, zero estimates, negative
    ε, widths at a tie of the 20-digit text, and a row of Fraction / float fields."""
    from fractions import Fraction
    from types import SimpleNamespace as NS

    from exactdp.numerics.precision import DPS_RESULT
    from exactdp.sweep.pair import PAIR_COLUMNS, _curve_rows

    rng = random.Random(84)
    dpts, epts = [], []
    with mpmath.workdps(DPS_RESULT):
        for n in range(200):
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
    rows, worst_d, worst_e = _curve_rows(2, 17, deltas, dpts, epts)
    assert rows[0] == PAIR_COLUMNS
    assert rows[1:] == [_row_by_definition(2, 17, d, dp, ep) for d, dp, ep in zip(deltas, dpts, epts)]

    def rel(width, value):  # 0 for no width, inf for a zero value
        return 0.0 if width == 0 else float(width / abs(value)) if value != 0 else math.inf

    with mpmath.workdps(DPS_RESULT):
        assert worst_d == max(rel(dp.error_bound, dp.estimate) for dp in dpts)
        assert worst_e == max(rel(ep.upper - ep.lower, ep.estimate) for ep in epts)


def test_grid_rows_key_sort_with_shared_alphas_matches_the_value_sort():
    """Vertices sharing their α (several β each, errors differing), shuffled: the two-pass
    key sort (β descending, then α ascending) orders them as the sort of ``(α, −β)`` and
    as the sort of the mpfr values (``keys=None``)."""
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
    by_value = [t[2] for t in sorted([(a, -b, m) for m, (a, b, _, _) in enumerate(pts)])]
    order = sorted(range(len(keys)), key=[kb for _, kb in keys].__getitem__, reverse=True)
    order.sort(key=[ka for ka, _ in keys].__getitem__)
    assert [pts[m][:2] for m in order] == [pts[m][:2] for m in by_value]
    assert grid_rows(pts, s, keys) == grid_rows(pts, s, None)
