"""The monotone searches of exactdp.numerics.search against brute force.

Every search is checked on predicates (or functions) whose answer is known by
construction or found here by exhaustive enumeration / dense grids: integer thresholds,
rational thresholds, increasing functions with closed-form roots, unimodal functions.
Property tests use a fixed seed (``derandomize=True``).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.numerics.search import (
    BrentMax,
    SearchError,
    bisect_real,
    brent_max,
    expand,
    first_true,
    first_true_near,
    golden_max,
    golden_min,
    least_int,
    newton_root,
    secant_narrow,
)

PROPS = settings(max_examples=60, deadline=None, derandomize=True)


class Counted:
    """A predicate ``x ≥ t`` that counts its evaluations."""

    def __init__(self, t):
        self.t, self.calls = t, 0

    def __call__(self, x):
        self.calls += 1
        return x >= self.t


def _brute_first(pred, lo, hi):
    return next(k for k in range(lo + 1, hi + 1) if pred(k))


# ----------------------------------------------------------------------------- integers
@PROPS
@given(lo=st.integers(-10**6, 10**6), n=st.integers(1, 5000), frac=st.floats(0, 1),
       probe=st.sampled_from(["none", "exact", "wrong", "edge"]))
def test_first_true_finds_the_threshold_whatever_the_probe(lo, n, frac, probe):
    hi = lo + n
    t = lo + 1 + int(frac * (n - 1))
    pred = Counted(t)
    probes = {"none": None, "exact": lambda a, b: t, "wrong": lambda a, b: 2 * b - a + 7,
              "edge": lambda a, b: a}
    got = first_true(pred, lo, hi, probe=probes[probe])
    assert got == _brute_first(lambda k: k >= t, lo, hi) == t
    # probes alternate with midpoints: the bracket at least halves every two tests
    assert pred.calls <= 2 * math.ceil(math.log2(n)) + 2


@PROPS
@given(lo=st.integers(-10**6, 10**6), n=st.integers(1, 5000), frac=st.floats(0, 1),
       off=st.integers(-6000, 6000), hi_tested=st.booleans())
def test_first_true_near_finds_the_threshold_whatever_the_guess(lo, n, frac, off, hi_tested):
    hi = lo + n
    t = lo + 1 + int(frac * (n - 1))
    pred = Counted(t)
    got = first_true_near(pred, t + off, lo, hi, hi_tested=hi_tested)
    assert got == _brute_first(lambda k: k >= t, lo, hi) == t
    d = abs(min(max(t + off, lo + 1), hi) - t)
    # a right guess costs two tests; a guess d away O(log d) more
    assert pred.calls <= (2 if d == 0 else 4 * math.ceil(math.log2(d + 1)) + 4)


def test_first_true_near_refuses_a_false_upper_end():
    with pytest.raises(SearchError):
        first_true_near(lambda k: k >= 100, 5, 0, 50, hi_tested=False)


@PROPS
@given(lowest=st.integers(-1000, 1000), start_off=st.integers(0, 3000), t_off=st.integers(-50, 3000))
def test_least_int_is_the_brute_force_minimum(lowest, start_off, t_off):
    t = lowest + t_off
    got = least_int(lambda k: k >= t, lowest + start_off, lowest=lowest)
    assert got == next(k for k in range(lowest, lowest + 4000) if k >= t)


def test_least_int_on_a_tail_bound_matches_a_linear_scan():
    # the use in dgauss.tables: smallest K with 2 exp(-a (K+1)^2)/(1 - exp(-2a(K+1))) <= eps
    a, eps = 0.013, 1e-60

    def ok(K):
        return 2 * math.exp(-a * (K + 1) ** 2) / -math.expm1(-2 * a * (K + 1)) <= eps

    linear = next(K for K in range(1, 10**4) if ok(K))
    for guess in (1, 7, linear, linear + 1, 10 * linear):
        assert least_int(ok, guess, lowest=1) == linear


@PROPS
@given(start=st.integers(-100, 100), step=st.integers(1, 50), t=st.integers(-100, 10**5))
def test_expand_brackets_the_change(start, step, t):
    prev, x = expand(lambda v: v >= t, start, step)
    assert x >= t
    assert (prev is None and start >= t) or (prev is not None and prev < t)
    # the points visited are start, start + step, start + 3 step, ...
    k = 0
    while start + step * (2**k - 1) != x:
        k += 1
    assert k == 0 or prev == start + step * (2 ** (k - 1) - 1)


def test_expand_gives_up():
    with pytest.raises(SearchError):
        expand(lambda v: False, 1, 1, max_steps=10)


# ----------------------------------------------------------------------------- reals
@PROPS
@given(t=st.fractions(F(-50), F(50)), w=st.fractions(F(1, 10**9), F(1, 10)))
def test_bisect_real_on_fractions(t, w):
    lo, hi = bisect_real(lambda x: x >= t, F(-64), F(64), width=w)
    assert lo < t <= hi and hi - lo <= w


@PROPS
@given(t=st.floats(1e-30, 1e6))
def test_bisect_real_relative_width_on_mpf(t):
    with mpmath.workdps(40):
        tm = mpmath.mpf(t)
        lo, hi = bisect_real(lambda x: x >= tm, mpmath.mpf(0), mpmath.mpf(2) * 10**6,
                             width=lambda a, b: abs(b) * mpmath.mpf(10) ** -30)
        assert lo < tm <= hi and hi - lo <= hi * mpmath.mpf(10) ** -30


@PROPS
@given(c=st.floats(1e-6, 1e6), a=st.floats(0, 10))
def test_newton_root_of_increasing_functions(c, a):
    # f(x) = e^x + a x − c is increasing; root by 200-step bisection written here
    with mpmath.workdps(40):
        cm, am = mpmath.mpf(c), mpmath.mpf(a)

        def f(x):
            return mpmath.exp(x) + am * x - cm

        lo, hi = mpmath.mpf(-60), mpmath.mpf(20)
        blo, bhi = lo, hi
        for _ in range(200):
            mid = (blo + bhi) / 2
            blo, bhi = (mid, bhi) if f(mid) < 0 else (blo, mid)
        tol = mpmath.mpf(10) ** -30
        root, rlo, rhi = newton_root(lambda x: (f(x), mpmath.exp(x) + am), lo, hi, hi,
                                     xtol=lambda x: tol * (1 + abs(x)))
        assert abs(root - blo) <= 10 * tol * (1 + abs(blo))
        assert rlo <= blo + tol and bhi - tol <= rhi  # the bracket keeps the root


def test_newton_root_falls_back_to_bisection():
    # a derivative that is wildly wrong: every Newton step leaves the bracket
    root, lo, hi = newton_root(lambda x: (x - F(1, 3), F(1, 10**9)), F(0), F(1), F(1),
                               xtol=lambda x: F(1, 10**12))
    assert lo <= F(1, 3) <= hi and hi - lo <= 2 * F(1, 10**12)
    assert abs(root - F(1, 3)) <= 2 * F(1, 10**12)


def _simplest(a: F, b: F) -> F:
    """The rational of smallest denominator in [a, b], by brute force."""
    q = 1
    while math.ceil(a * q) > b * q:
        q += 1
    return F(math.ceil(a * q), q)


@settings(max_examples=20, deadline=None, derandomize=True)
@given(t=st.fractions(F(1, 10), F(9, 10)), band=st.integers(0, 10), bias=st.floats(-0.9, 3.0),
       snap=st.sampled_from(["mid", "simplest"]))
def test_secant_narrow_brackets_a_three_valued_threshold(t, band, bias, snap):
    width = F(1, 10**5)
    undecided = width * band / 100  # |c − t| < undecided: the test cannot tell

    def status(c):
        return 1 if c >= t + undecided else (-1 if c < t - undecided else 0)

    def estimate(c):  # a log-like estimate with a wrong scale on one side
        x = float(t - c)
        return mpmath.mpf(x * (1 + bias) if x > 0 else x)

    snaps = {"mid": lambda a, b: (a + b) / 2, "simplest": _simplest}
    lo, hi = secant_narrow(status, estimate, snaps[snap], F(0), F(1), width)
    assert status(lo) == -1 and status(hi) == 1 and hi - lo <= width
    assert lo < t <= hi


# ----------------------------------------------------------------------------- golden section
@settings(max_examples=20, deadline=None, derandomize=True)
@given(m=st.floats(-3, 3), k=st.floats(0.1, 10), p=st.sampled_from([2, 1, 4]))
def test_golden_max_and_min_against_a_dense_grid(m, k, p):
    with mpmath.workdps(30):
        mm = mpmath.mpf(m)

        def f(x):
            return -k * abs(x - mm) ** p

        mx = golden_max(f, -4, 4)
        mn = golden_min(lambda x: -f(x), -4, 4)
        grid = max(f(mpmath.mpf(i) / 200) for i in range(-800, 801))
        assert mx.value >= grid - mpmath.mpf(10) ** -12
        assert abs(mx.argmax - mm) <= mx.bracket_width + mpmath.mpf(10) ** -12
        assert mn.value == -mx.value or abs(mn.value + mx.value) <= mpmath.mpf(10) ** -25
        assert abs(mn.argmin - mm) <= mn.bracket_width + mpmath.mpf(10) ** -12


def test_golden_float64_mode_runs_the_same_steps_in_binary64():
    f = lambda x: -(x - 0.3) ** 2  # noqa: E731
    fl = golden_max(f, -1.0, 2.0, max_iter=60, float64=True)
    with mpmath.workdps(30):
        mp = golden_max(f, -1, 2, tol=0, max_iter=60)
    assert isinstance(fl.argmax, float)
    assert abs(fl.argmax - 0.3) < 1e-9 and abs(fl.argmax - float(mp.argmax)) < 1e-12


# ----------------------------------------------------------------------------- Brent
@settings(max_examples=30, deadline=None, derandomize=True)
@given(m=st.floats(-3, 3), k=st.floats(0.1, 10), p=st.sampled_from([2, 1, 4]), n=st.integers(0, 4))
def test_brent_max_finds_the_peak_of_smooth_and_kinked_functions(m, k, p, n):
    """-k|x − m|^p (p = 1: a kink, where the parabolas fail and golden section carries it) on
    [−4, 4]: the bracket keeps the peak and shrinks to it; resumed from n grid points
    (``BrentMax.warm``) the same."""
    def f(x):
        return -k * abs(x - m) ** p

    x = brent_max(lambda u, w: f(u), -4.0, 4.0, lambda x, w: w < 1e-9)
    assert abs(x - m) < 1e-8
    grid = [(-4.0 + 8.0 * (i + 0.5) / n, f(-4.0 + 8.0 * (i + 0.5) / n)) for i in range(n)]
    s = BrentMax.warm(grid, -4.0, 4.0) if grid else BrentMax(-4.0, 4.0)
    for _ in range(200):
        if s.width < 1e-9:
            break
        u = s.ask()
        assert s.a <= u <= s.b
        s.tell(f(u))
        assert s.a - 1e-12 <= m <= s.b + 1e-12  # the bracket holds the peak
    assert abs(s.x - m) < 1e-8
