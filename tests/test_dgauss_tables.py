"""The discrete-Gaussian tables, sums, tail bounds, conventions and the real-shift theta
twin (exactdp.dgauss.{tables,sums,mp,conventions}) against the brute-force references of
tests/harness.py (direct sums and dictionary convolutions at 60 digits), off the regime
they are tuned on: tiny and huge variances, tails far below 1e-300.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.dgauss.conventions import coefficient, variance
from exactdp.dgauss.mp import gauss_tail_sum, half_tail_sum_bound, log_theta_shift_ratio_mp, tail_sum_bound
from exactdp.dgauss.sums import convolution_power, dg_sum_pmf, sum_pmf
from exactdp.dgauss.tables import cutoff, dg_table, subgaussian_cutoff
from exactdp.numerics.exact import InputError

from harness import kernel_sum_pmf, mp, sum_pmf_brute, theta3

PROPS = settings(max_examples=25, deadline=None, derandomize=True)


def test_conventions():
    rho = F(11, 10000)
    assert variance(rho, "paper") == 1 / (2 * rho) and coefficient(rho, "paper") == rho
    assert variance(rho, "production") == 1 / rho and coefficient(rho, "production") == rho / 2
    with pytest.raises(InputError, match="convention"):
        coefficient(rho, "other")
    with pytest.raises(InputError, match="rho"):
        variance(0)


@PROPS
@given(a=st.fractions(F(1, 1000), F(50)), K=st.integers(0, 200))
def test_tail_bounds_dominate_the_direct_sums(a, K):
    with mpmath.workdps(40):
        am = mp(a)
        top = K + 1 + int(math.sqrt(200 / float(a))) + 5  # the rest is below e^-200 of the first term
        direct = mpmath.fsum(mpmath.exp(-am * z * z) for z in range(K + 1, top))
        bound = half_tail_sum_bound(a, K)
        assert direct <= bound and tail_sum_bound(a, K) == 2 * bound
        # and the bound is tight to a factor ≤ 1/(1 − e^{-2a(K+1)}) over the first term
        assert bound <= mpmath.exp(-am * (K + 1) ** 2) / -mpmath.expm1(-2 * am * (K + 1)) * (1 + mpmath.mpf(10) ** -30)


@PROPS
@given(a=st.fractions(F(1, 100), F(20)), y=st.fractions(F(1, 7), F(60)))
def test_gauss_tail_sum_keeps_relative_accuracy(a, y):
    with mpmath.workdps(40):
        am, ym = mp(a), mp(y)
        n = int(math.sqrt(300 / float(a))) + 10
        direct = mpmath.fsum(mpmath.exp(-am * (ym + j) ** 2) for j in range(n))
        got = gauss_tail_sum(a, y, mpmath.mpf(10) ** -35)
        assert abs(got / direct - 1) < mpmath.mpf(10) ** -33  # tails down to e^{-72000}


@pytest.mark.parametrize("a, log_eps", [(F(1, 1000), -50.0), (F(1, 10), -140.0), (F(3), -300.0), (F(7, 3), -2.0)])
def test_cutoff_is_the_smallest_certified_K(a, log_eps):
    K = cutoff(a, log_eps)
    with mpmath.workdps(30):
        assert mpmath.log(tail_sum_bound(a, K)) <= log_eps
        assert K == 1 or mpmath.log(tail_sum_bound(a, K - 1)) > log_eps
    Ks = subgaussian_cutoff(a, 5, log_eps)
    assert math.log(2) - float(a) * Ks * Ks / 5 <= log_eps


@pytest.mark.parametrize("a", [F(1, 2), F(1666368, 16793603), F(40)])
def test_table_against_theta3_and_direct_tails(a):
    t = dg_table(a, dps=40)
    with mpmath.workdps(40):
        Z = theta3(a)
        assert abs(t.Z - Z) <= t.tail + mpmath.mpf(10) ** -38 * Z  # lacks ≤ tail (+ rounding)
        for n in (1, t.K, t.K + 3, -t.K - 2):
            direct = mpmath.fsum(mpmath.exp(-mp(a) * z * z) for z in range(n, n + 4000)) / Z
            assert abs(t.survival(n) - direct) <= t.outside * direct + mpmath.mpf(10) ** -38 * direct + (
                t.outside if -t.K < n <= t.K else 0)


@pytest.mark.parametrize("a, d", [(F(1, 2), 3), (F(1, 10), 5), (F(2), 2)])
def test_sum_pmf_against_brute_convolution(a, d):
    h = sum_pmf(a, d)
    ref = kernel_sum_pmf(a, d, K=60)
    worst = 0.0
    for u in range(h.offset, h.offset + h.values.size, 3):
        r = float(ref.get(u, 0))
        got = float(h(np.array([u]))[0])
        assert got <= r * (1 + h.rel_error) + 1e-300  # h̃ ≤ h up to rounding
        assert r - got <= h.rel_error * r + h.error_bound
        if r > 1e-40:  # where the component truncation (≤ d·1e-60) is negligible
            worst = max(worst, abs(got / r - 1))
    assert worst <= h.rel_error and h.rel_error < 1e-11


@pytest.mark.parametrize("s2, m", [(2.5, 3), (0.3, 4), (1000 / 11, 2), (7.0, 1)])
def test_dg_sum_pmf_against_brute_force(s2, m):
    w = int(math.ceil(math.sqrt(2.0 * s2 * 100))) + 1
    vals, rel = dg_sum_pmf(s2, m, w, 100.0)
    ref = sum_pmf_brute([(1, F(s2))] * m, depth=200)
    trunc = 2 * m * math.exp(-100)  # each factor drops ≤ 2e^-100 (|x| > w)
    for i in range(0, vals.size, max(1, vals.size // 40)):
        r = float(ref.get(i - m * w, 0))
        assert abs(vals[i] - r) <= rel * r + trunc
        assert vals[i] <= r * (1 + rel)


def test_convolution_power_of_a_point_mass_and_of_one_factor():
    base = np.array([0.25, 0.5, 0.25])
    one, r1 = convolution_power(base, 1, 1e-16)
    assert one is base and r1 == 1e-16
    two, r2 = convolution_power(base, 2, 0.0)
    assert np.allclose(two, [1 / 16, 1 / 4, 3 / 8, 1 / 4, 1 / 16], rtol=0, atol=1e-17) and r2 > 0


@pytest.mark.parametrize("s2", [F(1, 1000), F(1, 3), F(9, 10), F(1), F(5, 2), F(10**7)])
@pytest.mark.parametrize("t", [F(0), F(1, 2), F(-3), F(-41, 4), F(123, 7)])
def test_theta_shift_ratio_against_direct_sums(s2, t):
    # log θ(t)/θ(0), θ(t) = Σ_x exp(−(x−t)²/(2σ²)): direct sums at 150 digits (the ratio
    # can be 1 − 1e-21, so the reference needs the digits); for σ² = 10⁷ the first Poisson
    # term −4q sin²(πt)/(1+2q), q = e^{−2π²σ²} (the ratio is 1 − 1e-(8.6e7)).
    with mpmath.workdps(50):
        got = log_theta_shift_ratio_mp(mp(t), mp(s2))
    with mpmath.workdps(150):
        if s2 > 100:
            q = mpmath.exp(-2 * mpmath.pi**2 * mp(s2))
            ref = -4 * q * mpmath.sin(mpmath.pi * mp(t)) ** 2 / (1 + 2 * q)
        else:
            def theta(c):
                return mpmath.fsum(mpmath.exp(-(x - c) ** 2 / (2 * mp(s2))) for x in range(-600, 601))

            ref = mpmath.log(theta(mp(t)) / theta(0))
        if t.denominator == 1:  # integer shift: θ(t) = θ(0); only sin(πk·t) rounding remains
            assert abs(got) < mpmath.mpf(10) ** -90
        else:
            assert abs(got / ref - 1) < mpmath.mpf(10) ** -40, (got, ref)
