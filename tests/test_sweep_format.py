"""The sweep's text formatting (``sweep/pair.py``, ``runs/numtext.py``) against its definitions.

A value's text is ``mpmath.nstr`` under ``workdps(digits + 15)``, a bound's text the
smallest 3-digit decimal above it (tests/harness.py: ``decimal_text``, ``bound_text``); a
vertex is the 25-digit text of ``exp(log value)`` and the number that text denotes; the
α grid interpolates linearly between vertices sorted by (α, −β); the probit is
sqrt(2)·erfinv(2p − 1) at 40 digits; the trade-off thresholds are the nearest integers of
U·m/half at 30 digits.  The references are written in mpmath and exact fractions (nothing
of :mod:`exactdp.runs.numtext`) and checked on many values, including the hard cases:
digit-boundary neighbours (9.99…95e-5 ± 1 ulp), exact powers of ten, subnormals, 0 and inf.
"""

from __future__ import annotations

import bisect
import math
import random
from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.runs.numtext import layout, mpfr_context, nearest_digits, vertex_value
from exactdp.sweep.pair import SweepSettings, fmt, fmt_bound, grid_alphas, grid_rows

from harness import bound_text, decimal_text

# ------------------------------------------------------------------ references (the definitions)
ref_fmt = decimal_text
ref_fmt_bound = bound_text


def ref_vertex(log_value, rel: float):
    """Text, value and value·rel of one vertex: the 25-digit text of exp(log value) and the
    40-digit number it denotes."""
    with mpmath.workdps(40):
        t = ref_fmt(mpmath.exp(mpmath.mpf(log_value)), 25)
        v = mpmath.mpf(t)
        return t, v, v * float(rel)


def ref_interpolate(curve, alpha):
    A, B, EA, EB = curve
    if alpha <= A[0]:
        return B[0], EB[0]
    if alpha >= A[-1]:
        return B[-1], EB[-1]
    r = bisect.bisect_right(A, alpha)
    i0, i1 = r - 1, r
    a0, a1, b0, b1 = A[i0], A[i1], B[i0], B[i1]
    if a1 == a0:
        return min(b0, b1), max(EB[i0], EB[i1])
    slope = (b1 - b0) / (a1 - a0)
    return b0 + slope * (alpha - a0), max(EB[i0], EB[i1]) + abs(slope) * max(EA[i0], EA[i1])


def ref_grid_rows(pts, s):
    with mpmath.workdps(40):
        pts = sorted(pts, key=lambda p: (p[0], -p[1]))
        curve = tuple([p[c] for p in pts] for c in range(4))
        rows = [("alpha", "beta", "beta_error_bound")]
        texts, values = grid_alphas(s)
        for t, a in zip(texts, values):
            b, err = ref_interpolate(curve, a)
            rows.append((t, ref_fmt(b), ref_fmt_bound(math.nextafter(float(err), math.inf)) if err > 1e-300
                         else ref_fmt_bound(err)))
        return rows


# ------------------------------------------------------------------ values that stress the digits


def _boundary_values(digits: int) -> list:
    """Values at 40 digits next to the digit boundaries of a ``digits``-digit text."""
    out = []
    with mpmath.workdps(40):
        eps = mpmath.mpf(2) ** -133
        for e in (-300, -21, -5, -4, -1, 0, 1, 5, 6, 7, 40):
            for base in ("9" * digits + "5", "1" + "0" * digits, "1" + "0" * (digits - 1) + "5",
                         "2" + "0" * (digits - 1) + "5", "9" * (digits + 3), "1"):
                v = mpmath.mpf(f"{base[0]}.{base[1:]}e{e}")
                out += [v, v * (1 + eps), v * (1 - eps), v * (1 + 2 ** -40), v * (1 - 2 ** -40)]
    return out


def _raw_equal(fast, ref_mpf) -> bool:
    """Whether a fast value (raw tuple or gmpy2 mpfr) is the same number as an mpf."""
    if not isinstance(fast, tuple):
        if fast.is_nan():
            return mpmath.isnan(ref_mpf)
        if fast.is_zero() or fast.is_infinite():
            return ref_mpf == float(fast)
        m, e = fast.as_mantissa_exp()
        fast = mpmath.libmp.from_man_exp(m, e)
    return fast == ref_mpf._mpf_


# ------------------------------------------------------------------ fmt


@pytest.mark.parametrize("digits", [8, 12, 20, 25])
def test_fmt_matches_nstr_at_digit_boundaries(digits):
    with mpmath.workdps(40):
        vals = _boundary_values(digits)
        vals += [-v for v in vals[:20]] + [mpmath.mpf(0), mpmath.inf, -mpmath.inf, mpmath.nan]
    for v in vals:
        assert fmt(v, digits) == ref_fmt(v, digits), mpmath.nstr(v, 45)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from([8, 20, 25]))
def test_fmt_of_floats_matches_nstr(x, digits):
    assert fmt(x, digits) == ref_fmt(x, digits)


@settings(derandomize=True, max_examples=400, deadline=None)
@given(st.floats(-1e5, 50), st.sampled_from([20, 25]))
def test_fmt_of_40_digit_values_matches_nstr(log_value, digits):
    with mpmath.workdps(40):
        v = mpmath.exp(mpmath.mpf(log_value))
    assert fmt(v, digits) == ref_fmt(v, digits)


def test_fmt_of_other_types_keeps_the_context_path():
    assert fmt(Fraction(1, 3), 20) == ref_fmt(Fraction(1, 3), 20)
    assert fmt(7, 20) == ref_fmt(7, 20)
    assert fmt("1e-10", 20) == ref_fmt("1e-10", 20)
    assert fmt(mpmath.pi, 20) == ref_fmt(mpmath.pi, 20)


# ------------------------------------------------------------------ fmt_bound


def _bound_specials() -> list:
    out = [0.0, -0.0, -1.0, math.inf, -math.inf, math.nan, 5e-324, 1e-323, 2.2250738585072014e-308,
           2.225073858507201e-308, 1e-300, 1.0, 1e300, 1.7976931348623157e308, 3]
    for e in range(-320, 300, 7):
        for m in ("1", "1.23", "9.99", "9.995", "9.9999999", "1.005", "5", "9.991"):
            x = float(f"{m}e{e}")
            out += [x, math.nextafter(x, 0), math.nextafter(x, math.inf)]
    return out


def test_fmt_bound_of_floats_at_boundaries():
    for x in _bound_specials():
        assert fmt_bound(x) == ref_fmt_bound(x), repr(x)


@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.floats(min_value=0.0, allow_infinity=True, allow_nan=False))
def test_fmt_bound_of_floats_matches_fractions(x):
    assert fmt_bound(x) == ref_fmt_bound(x)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.floats(-700, 5))
def test_fmt_bound_of_mpf_matches_the_context_code(log_value):
    with mpmath.workdps(40):
        v = mpmath.exp(mpmath.mpf(log_value))
    assert fmt_bound(v) == ref_fmt_bound(v)


def test_fmt_bound_of_mpf_at_boundaries():
    """Dyadic values (x/10^e an exact integer), powers of ten ± 1 ulp, 3-digit boundaries."""
    from exactdp.runs.numtext import bound_text_raw

    vals = []
    with mpmath.workdps(40):
        eps = mpmath.mpf(2) ** -130
        for k in range(-60, 12):
            vals += [mpmath.mpf(2) ** k, 3 * mpmath.mpf(2) ** k, 5 * mpmath.mpf(2) ** k]
        for e in (-300, -40, -12, -3, 0, 2, 5):
            for m in ("1", "1.23", "9.99", "9.995", "1.005", "9.9949999999999999999999"):
                v = mpmath.mpf(f"{m}e{e}")
                vals += [v, v * (1 + eps), v * (1 - eps), v * (1 + 2 ** -70), v * (1 - 2 ** -70)]
        vals += [mpmath.mpf(0), -mpmath.mpf(1), mpmath.inf, mpmath.nan, mpmath.mpf("1e-400"), mpmath.mpf("1e400")]
    fast = 0
    for v in vals:
        assert fmt_bound(v) == ref_fmt_bound(v), mpmath.nstr(v, 45)
        fast += bound_text_raw(v._mpf_) is not None
    assert fast > len(vals) // 2  # the integer path, not only the mpmath fallback, is tested


# ------------------------------------------------------------------ vertices and the α grid


@settings(derandomize=True, max_examples=500, deadline=None)
@given(st.one_of(st.floats(-1e5, 0), st.floats(-50, 0), st.floats(-1e-12, 0)),
       st.floats(0, 1e-3))
def test_vertex_value_matches_the_context_code(log_value, rel):
    t, v, ev, key = vertex_value(log_value, rel)
    rt, rv, rev = ref_vertex(log_value, rel)
    assert t == rt
    assert _raw_equal(v, rv) and _raw_equal(ev, rev)


def test_vertex_value_special_logs():
    with mpmath.workdps(60):
        big = [-mpmath.mpf(12345) - mpmath.mpf(1) / 3, -mpmath.mpf(10) ** 5 + mpmath.mpf(2) ** -100]
    for lv in [0.0, -0.0, -math.inf, -1e-300, -5e-324, -745.2, -708.4, math.log(1e-20), *big]:
        for rel in (0.0, 1e-10, math.inf):
            t, v, ev, _ = vertex_value(lv, rel)
            rt, rv, rev = ref_vertex(lv, rel)
            assert t == rt and _raw_equal(v, rv) and _raw_equal(ev, rev), lv


def test_vertex_texts_at_digit_boundaries():
    """Logs whose exp lands next to a 25-digit rounding boundary (or a power of ten)."""
    logs = []
    with mpmath.workdps(60):
        for e in (-21, -10, -5, -4, -1):
            for txt in ("9.9999999999999999999999995", "1.0000000000000000000000005", "5.0000000000000000000000005"):
                lv = float(mpmath.log(mpmath.mpf(f"{txt}e{e}")))
                logs += [lv, math.nextafter(lv, 0), math.nextafter(lv, -math.inf)]
    for lv in logs:
        assert vertex_value(lv, 1e-11)[0] == ref_vertex(lv, 1e-11)[0], lv


def test_vertex_values_batch_is_vertex_value_per_key():
    """The batched loop against the one-value function (and the definition), on
    every branch: exponents −34..−1 (inlined), ≤ −35 and 0 (not), mpf logs, huge and
    special logs, logs next to a 25-digit midpoint (fallback), relative errors as mpf."""
    from exactdp.runs.numtext import vertex_values

    rng = random.Random(13)
    with mpmath.workdps(60):
        mid = float(mpmath.log(mpmath.mpf("5.0000000000000000000000005e-7")))
        logs = [rng.uniform(-80, 0) for _ in range(300)] + [math.log(10.0) * -k for k in range(30, 40)]
        logs += [0.0, -0.0, -1e-300, -745.2, -3000.5, -math.inf, mid, mpmath.mpf(-3) / 7]
    keys = [(lv, rel) for lv in logs for rel in (1e-11, mpmath.mpf("2e-12"))][::-1]
    got = vertex_values(keys)
    assert len(got) == len(keys)
    for (lv, rel), g in zip(keys, got):
        w = vertex_value(lv, float(rel))
        assert g[0] == w[0] and g[3] == w[3], lv
        assert all((a == b) or (a.is_nan() and b.is_nan()) for a, b in zip(g[1:3], w[1:3])), lv
        assert g[0] == ref_vertex(lv, float(rel))[0], lv


def test_digits_exp_counts_digits_at_powers_of_ten():
    """``digits_exp``'s digit count (gmpy2's ``num_digits``, exact or one too many, then
    corrected) against ``len(str(·))`` where it matters: values whose scaled integer is
    10^k − 1, 10^k or 10^k + 1, at several precisions."""
    from mpmath.libmp import from_int, from_man_exp, mpf_div, to_str

    from exactdp.runs.numtext import digits_exp

    for dps in (8, 20, 25):
        for k in range(-40, 40):
            ten = from_int(10**k) if k >= 0 else mpf_div(from_int(1), from_int(10**-k), 200, "n")
            for dm in (-1, 0, 1):
                v = from_man_exp((ten[1] << 120) + dm, ten[2] - 120)
                ref = to_str(v, dps, min_fixed=-4, max_fixed=6, strip_zeros=False)
                de = digits_exp(v, dps)
                assert de is not None and layout(de[0], de[1], dps) == ref, (dps, k, dm)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.one_of(st.floats(-2500, 50), st.floats(-1, 1)))
def test_mpmath_exp_is_as_accurate_as_nearest_digits_assumes(x):
    """mpf_exp at 136 bits against MPFR at 300 bits: < 2^-130 relative (2^-103 assumed)."""
    y = mpmath.libmp.mpf_exp(mpmath.libmp.from_float(x), 136, "n")
    c = mpfr_context(300)
    m, e = c.exp(x).as_mantissa_exp()
    with mpmath.workprec(400):
        rel = abs(mpmath.mpf(y) / (mpmath.mpf(int(m)) * mpmath.mpf(2) ** int(e)) - 1)
    assert rel < mpmath.mpf(2) ** -130


def test_nearest_digits_refuses_near_midpoints_and_rounds_elsewhere():
    c = mpfr_context(200)
    rng = random.Random(5)
    for _ in range(300):
        q = rng.randrange(10**24, 10**25)
        e = rng.randrange(-30, 3)
        with mpmath.workprec(300):
            unit = mpmath.mpf(10) ** (e - 24)
            for off, expect in ((mpmath.mpf(0.5), None), (mpmath.mpf(0.5) + mpmath.mpf(2) ** -17, None),
                                (mpmath.mpf(0.5) + mpmath.mpf(2) ** -15, q + 1),
                                (mpmath.mpf(0.5) - mpmath.mpf(2) ** -15, q),
                                (mpmath.mpf(0.01), q), (mpmath.mpf(0.99), q + 1)):
                v = (q + off) * unit
                m, ex = mpmath.mpf(v).man_exp
                z = c.mul_2exp(c.plus(int(m)) if int(m).bit_length() <= 200 else c.plus(m), int(ex))
                got = nearest_digits(z, 25)
                if expect is None:
                    assert got is None
                else:
                    exp_q, exp_e = (expect, e) if expect < 10**25 else (10**24, e + 1)
                    assert got == (exp_q, exp_e)


def test_vertex_fallback_path_matches_the_context_code():
    """The mpmath steps used near a midpoint give the defined text and value."""
    from exactdp.runs.numtext import _vertex_text_mpmath

    rng = random.Random(9)
    for lv in [rng.uniform(-60, 0) for _ in range(200)] + [0.0, -1e-300, -3000.5]:
        t, v = _vertex_text_mpmath(lv)
        rt, rv, _ = ref_vertex(lv, 0.0)
        assert t == rt and v == rv._mpf_


def _random_curve(rng, n):
    """A trade-off-like vertex set from float logs (with repeated α and β values)."""
    logs = sorted(rng.uniform(-46, 0) for _ in range(n))
    logs += logs[:3]  # exact duplicates
    la = logs
    lb = [math.log(-math.expm1(x)) if x < 0 else -50.0 for x in logs]
    return [(a, b, rng.choice([1e-11, 3e-13, 2.5e-12]), rng.choice([1e-11, 7e-14])) for a, b in zip(la, lb)]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_grid_rows_match_the_context_code(seed):
    rng = random.Random(seed)
    s = SweepSettings(envelope_points=101)
    vs = _random_curve(rng, 120)
    rng.shuffle(vs)
    pts, keys, ref_pts = [], [], []
    for la, lb, ra, rb in vs:
        _, a, ea, ka = vertex_value(la, ra)
        _, b, eb, kb = vertex_value(lb, rb)
        pts.append((a, b, ea, eb))
        keys.append((ka, kb))
        ra_ = ref_vertex(la, ra)
        rb_ = ref_vertex(lb, rb)
        ref_pts.append((ra_[1], rb_[1], ra_[2], rb_[2]))
    ref = _csv_lines(ref_grid_rows(ref_pts, s))
    assert grid_rows(pts, s, keys) == ref
    assert grid_rows(pts, s, None) == ref  # the mpf-object sort (fallback) agrees


def test_pair_files_match_the_context_code():
    """A real pair end to end: compute_pair's trade-off and grid files against the defined
    post-processing of the same accountant's vertices."""
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition
    from exactdp.sweep.pair import tradeoff_thresholds

    s = SweepSettings(deltas=("1e-5",), tradeoff_half=60, envelope_points=61)
    rhos = load_allocation("dhc-persons-2020").pair_rhos(1, 1)
    acc = ExactAccountant(Composition.from_rhos(tuple(rhos)), rel_tol=s.rel_tol)
    verts = acc.tradeoff_vertices(tradeoff_thresholds(acc.lattice, s.tradeoff_half, s.alpha_min))
    from exactdp.sweep.pair import compute_pair

    ref_t, ref_g = ref_tradeoff_rows(verts, s)
    res = compute_pair(1, 1, rhos, s)
    assert res.tradeoff_csv.splitlines() == [",".join(map(str, r)) for r in ref_t]
    assert res.grid_csv.splitlines() == [",".join(map(str, r)) for r in ref_g]

def _csv_lines(rows) -> list:
    return [",".join(str(v) for v in r) + "\n" for r in rows]


def ref_tradeoff_rows(verts, s):
    """The trade-off and grid rows of the accountant's vertices, by the definitions."""
    trows, pts = [("threshold", "alpha", "alpha_rel_error", "beta", "beta_rel_error")], []
    for k, ta, tb in verts:
        at, a, ea = ref_vertex(ta.log_value, ta.rel_error)
        bt, b, eb = ref_vertex(tb.log_value, tb.rel_error)
        trows.append((k, at, ref_fmt_bound(ta.rel_error), bt, ref_fmt_bound(tb.rel_error)))
        pts.append((a, b, ea, eb))
    return trows, ref_grid_rows(pts, s)


def ref_probit(text):
    """The probit of a decimal p: float of sqrt(2)·erfinv(2p − 1) at 40 digits."""
    with mpmath.workdps(40):
        p = mpmath.mpf(text)
        if p <= 0 or p >= 1:
            return math.nan
        return float(mpmath.sqrt(2) * mpmath.erfinv(2 * p - 1))


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.one_of(st.floats(1e-25, 1 - 1e-12), st.floats(0, 25).map(lambda k: 10.0 ** -k),
                 st.floats(1, 20).map(lambda k: 1 - 10.0 ** -k)), st.sampled_from([12, 20, 25]))
def test_probit_matches_mpmath(p, digits):
    from exactdp.sweep.plots import _probit

    text = mpmath.nstr(mpmath.mpf(p), digits, strip_zeros=False) if p < 1 else "1"
    if 1 - p < 1e-15:  # the envelope's α reach 1 − 1e-20: write those as decimals
        text = "0." + "9" * 20 + str(int(p * 7) % 10)
    a, b = _probit(text), ref_probit(text)
    assert a == b or (math.isnan(a) and math.isnan(b)), text


def test_probit_special_texts():
    """Also: the MPFR path itself settles these (the fallback is not what is tested)."""
    from exactdp.sweep.plots import _probit_mpfr

    for text in ("0.5", "1e-20", "0.99999999999999999999", "0.3", "0.0001234", "0.7"):
        assert _probit_mpfr(text) == ref_probit(text), text
    from exactdp.sweep.plots import _probit

    for text in ("0", "1", "0.5", "1e-20", "0.99999999999999999999", "1e-300",
                 "0.9999999999999999999999999999999999999999999",
                 "0.5000000000000000000001", "2", "-1"):
        a, b = _probit(text), ref_probit(text)
        assert a == b or (math.isnan(a) and math.isnan(b)), text


# ------------------------------------------------------------------ trade-off thresholds, vectorised bounds


def ref_tradeoff_thresholds(lattice, half, alpha_min):
    """The trade-off thresholds: mpmath nint of U·m/half at 30 digits around the centre."""
    K = int(lattice.shift)
    with mpmath.workdps(30):
        v = sum((Fraction(m * a * a) * s for a, m, s in zip(lattice.weights, lattice.counts, lattice.sigma2)),
                Fraction(0))
        sd = mpmath.sqrt(mpmath.mpf(v.numerator) / v.denominator)
        z = -mpmath.sqrt(2) * mpmath.erfinv(2 * (mpmath.mpf(Fraction(alpha_min).numerator) /
                                                 Fraction(alpha_min).denominator) - 1)
        U = z * sd + mpmath.mpf(K) / 2
        offs = sorted({int(mpmath.nint(U * m / half)) for m in range(half + 1)})
    if K % 2:
        c = (K + 1) // 2
        ks = {c - u for u in offs} | {c + u for u in offs}
    else:
        ks = {K // 2 - u for u in offs} | {K // 2 + 1 + u for u in offs}
    return sorted(ks)


def ref_offsets(U, half):
    with mpmath.workdps(30):
        return sorted({int(mpmath.nint(U * m / half)) for m in range(half + 1)})


def test_tradeoff_thresholds_match_the_definition():
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.census.allocations import load_allocation
    from exactdp.mechanisms import Composition
    from exactdp.sweep.pair import tradeoff_thresholds

    alloc = load_allocation("dhc-persons-2020")
    for (i, j), half, amin in (((13, 13), 400, "1e-20"), ((6, 10), 400, "1e-20"), ((1, 1), 37, "1/3"),
                               ((24, 24), 2, "1e-25"), ((5, 17), 1000, "2e-7")):
        lat = ExactAccountant(Composition.from_rhos(tuple(alloc.pair_rhos(i, j)))).lattice
        assert tradeoff_thresholds(lat, half, amin) == ref_tradeoff_thresholds(lat, half, amin)


@settings(derandomize=True, max_examples=300, deadline=None)
@given(st.one_of(st.integers(-10**7, 10**7).map(lambda k: Fraction(k, 8)),  # exact ties m·U/half = n + 1/2
                 st.integers(-10**30, 10**30).map(lambda k: Fraction(k, 2**80)),  # full 30-digit mantissas
                 st.floats(-1e6, 1e6)),
       st.integers(2, 600))
def test_threshold_offsets_match_mpmath_nint_including_ties(u, half):
    from exactdp.sweep.pair import threshold_offsets

    with mpmath.workdps(30):
        U = mpmath.mpf(u) if isinstance(u, float) else mpmath.mpf(u.numerator) / u.denominator
    assert threshold_offsets(U, half) == ref_offsets(U, half)


def test_threshold_offsets_next_to_half_integers():
    """U·m/half within an ulp of n + 1/2 (either side) and exactly on it, U > 0 and < 0."""
    from exactdp.sweep.pair import threshold_offsets

    with mpmath.workdps(30):
        ulp = mpmath.mpf(2) ** -90
        for half in (2, 3, 400, 401):
            for n in (0, 1, 2, 7, 123456):
                base = (mpmath.mpf(n) + mpmath.mpf(1) / 2) * half / max(1, half // 2)
                for U in (base, base * (1 + ulp), base * (1 - ulp), -base, -base * (1 + ulp)):
                    assert threshold_offsets(U, half) == ref_offsets(U, half), (half, n)


def test_bound_texts_float_match_the_fraction_code():
    """The vectorised bounds on floats at every hard place (3-digit decimals ± 1 ulp, powers
    of ten, the 1e±290 cut-offs, subnormals, 0, inf, nan) and on random magnitudes."""
    from exactdp.runs.numtext import bound_texts_float

    rng = random.Random(3)
    xs = _bound_specials() + [rng.uniform(0.5, 10) * 10.0 ** rng.randint(-310, 300) for _ in range(3000)]
    for e in (-291, -290, -289, 289, 290):
        x = float(f"1e{e}")
        xs += [x, math.nextafter(x, 0), math.nextafter(x, math.inf)]
    assert bound_texts_float(xs) == [ref_fmt_bound(x) for x in xs]
    assert bound_texts_float([]) == []


def ref_read_columns(text):
    """The columns of a CSV text, line by line (the header names them)."""
    lines = text.splitlines()
    head = lines[0].split(",")
    cols = list(zip(*(ln.split(",") for ln in lines[1:] if ln))) or [()] * len(head)
    return {h: list(c) for h, c in zip(head, cols)}


@pytest.mark.parametrize("text", [
    "alpha,beta,beta_error_bound\n1e-20,0.99,1.00e-11\n0.5,0.25,3.00e-12\n",  # a grid file
    "a,b,c\n", "a\nx\ny\n", "a,b\n1,2\n\n3,4\n", "a,b\r\n1,2\r\n", "a,b\n1,2\n3,4",  # header only, 1 column, …
    "a,b\n1,2,3\n4\n", "a,b,c\n1,2\n3,4,5,6\n", "a,b\n1,2\x0c3,4\n", "a,b\n1,\u20282\n", "a,b\n,\n,\n",
])
def test_read_columns_matches_the_line_by_line_code(tmp_path, text):
    from exactdp.sweep.io import read_columns

    p = tmp_path / "f.csv"
    p.write_bytes(text.encode("utf-8"))
    assert read_columns(p) == ref_read_columns(text)


def test_rel_width_matches_the_comparison_code():
    """``_rel``: 0 for a zero width, width/|value|, inf for a zero value."""
    from fractions import Fraction

    from exactdp.sweep.pair import _rel

    def defined(width, value):
        if width == 0:
            return 0.0
        return float(width / abs(value)) if value != 0 else math.inf

    vals = [mpmath.mpf(0), mpmath.mpf(1), mpmath.mpf("1e-300"), -mpmath.mpf(2), mpmath.mpf("nan"), mpmath.inf,
            0.0, -0.0, 1.5, math.nan, Fraction(0), Fraction(1, 3), 0, 2]
    for w in vals:
        for v in vals:
            try:
                want = defined(w, v)
            except ZeroDivisionError:
                with pytest.raises(ZeroDivisionError):
                    _rel(w, v)
                continue
            got = _rel(w, v)
            assert got == want or (math.isnan(got) and math.isnan(want)), (w, v)


@pytest.mark.parametrize("seed", [3, 4])
def test_grid_interpolation_repeated_alphas_and_exact_hits(seed):
    """The grid's interpolation (``envelope.interpolate_grid`` in an MPFR context, as
    ``grid_rows`` calls it) against the chord formula
    in mpmath at the same precision (correctly rounded both: the same numbers), on a curve
    whose vertices repeat α (a vertical step: the smaller β, the larger error) and a grid
    that hits vertices exactly, starts below the first and ends above the last."""
    import gmpy2

    from exactdp.numerics.precision import DPS_RESULT
    from exactdp.runs.numtext import prec_of
    from exactdp.sweep.envelope import interpolate_grid, mpfr_arithmetic

    rng = random.Random(seed)
    prec = prec_of(DPS_RESULT)
    ctx = mpfr_context(prec)
    a_txt = sorted({f"{rng.randint(1, 999)}e-3" for _ in range(60)})
    a_txt = sorted(a_txt + [rng.choice(a_txt) for _ in range(10)], key=Fraction)  # repeated α
    b_txt = [f"{rng.randint(1, 10**6)}e-6" for _ in a_txt]
    ea_txt = [f"{rng.randint(1, 99)}e-15" for _ in a_txt]
    eb_txt = [f"{rng.randint(1, 99)}e-15" for _ in a_txt]
    grid_txt = ["1e-4"] + [rng.choice(a_txt) for _ in range(20)] + [f"{rng.randint(1, 999)}e-3" for _ in range(40)]
    grid_txt = sorted(grid_txt, key=Fraction) + ["9995e-4"]
    curve = tuple([gmpy2.mpfr(t, prec, context=ctx) for t in col] for col in (a_txt, b_txt, ea_txt, eb_txt))
    grid = [gmpy2.mpfr(t, prec, context=ctx) for t in grid_txt]
    got = list(interpolate_grid(curve, grid, mpfr_arithmetic(ctx)))
    with mpmath.workprec(prec):
        ref_curve = tuple([mpmath.mpf(t) for t in col] for col in (a_txt, b_txt, ea_txt, eb_txt))
        for (b, e), t in zip(got, grid_txt):
            rb, re_ = ref_interpolate(ref_curve, mpmath.mpf(t))
            assert Fraction(*b.as_integer_ratio()) == _exact(rb)
            assert Fraction(*e.as_integer_ratio()) == _exact(re_)


def _exact(x) -> Fraction:
    """The exact rational of an mpmath number."""
    man, exp = int(x.man), int(x.exp)
    return Fraction(man) * Fraction(2) ** exp
