"""Tests of exactdp.conversions.edgeworth against brute-force sums written here and closed forms.

References:
* brute-force moments of N_Z(0, s2) and brute-force convolutions of the privacy loss
  (60-digit mpmath sums of tests/harness.py);
* the Euler–Maclaurin leading term −h²B₂(t)/2·f(ε) with f the N(ρ, 2ρ) density
  (for ρ = 1/2 at ε = ρ: f = 1/sqrt(2π), t = 1, B₂ = 1/6).
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from exactdp.conversions.bounds import gdp_delta
from exactdp.conversions.edgeworth import dg_cumulants, edgeworth_delta, fit_slope, loss_cumulants, rate_table
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError

from harness import delta_brute, moments_brute


@pytest.mark.parametrize("s2", [F(1, 3), F(1, 2), F(1), F(3)])
def test_dg_cumulants_brute_force(s2):
    m2, m4, m6, _ = moments_brute(s2)
    k2, k4, k6, _ = dg_cumulants(s2)
    with mpmath.workdps(40):
        assert abs(k2 - m2) < mpmath.mpf(10) ** -35
        assert abs(k4 - (m4 - 3 * m2**2)) < mpmath.mpf(10) ** -33
        assert abs(k6 - (m6 - 15 * m4 * m2 + 30 * m2**3)) < mpmath.mpf(10) ** -30


def test_dg_cumulants_gaussian_for_large_variance():
    # Poisson summation: Var = s2 - O(s2^2 e^{-2 pi^2 s2}); at s2 = 60 the correction is < 1e-500
    k2, k4, k6, k8 = dg_cumulants(60)
    assert k2 == 60 and k4 == 0 and k6 == 0 and k8 == 0
    # and continuity at the switch (s2 = 49 by direct sums): kappa_4 tiny
    assert abs(dg_cumulants(49)[3]) < mpmath.mpf(10) ** -30


def test_loss_cumulants_scaling():
    # one mechanism with shift 2, sigma2 = 1/2: L = c - 4 X, kappa_2 = 16 Var X, kappa_4 = 256 k4(X)
    comp = Composition(((DiscreteGaussian(F(1, 2), 2), 1),))
    k2, k4, _, _ = dg_cumulants(F(1, 2))
    cum = loss_cumulants(comp)
    assert cum[1] == 4
    with mpmath.workdps(40):
        assert abs(cum[2] - 16 * k2) < mpmath.mpf(10) ** -30
        assert abs(cum[4] - 256 * k4) < mpmath.mpf(10) ** -28


@pytest.mark.parametrize("eps", [F(1, 2), F(5, 8), F(1), F(2), F(4)])
def test_edgeworth_matches_brute_force_far_better_than_gaussian(eps):
    s2, m = F(8), 8  # rho = 1/2, loss lattice 1/2 + Z/8
    comp = Composition(((DiscreteGaussian(s2), m),))
    exact = delta_brute([(s2, 1)] * m, eps)
    pt = edgeworth_delta(comp, [eps])[0]
    gauss = gdp_delta(comp, eps).delta
    resid = abs(pt.delta - exact)
    assert resid < mpmath.mpf(10) ** -12 * exact
    assert resid * 1000 < abs(gauss - exact)


def test_offset_of_the_first_lattice_point():
    comp = Composition(((DiscreteGaussian(F(4)), 4),))  # lattice 1/2 + Z/4
    p_mid, p_on = edgeworth_delta(comp, [F(5, 8), F(1, 2)])
    assert p_mid.offset == pytest.approx(0.5) and p_on.offset == pytest.approx(1.0)
    assert p_mid.span == pytest.approx(0.25)
    # the lattice correction has the sign of -B2(t): positive half-way, negative on a point
    assert p_mid.lattice > 0 > p_on.lattice


def test_rate_is_m_to_the_minus_two_and_matches_the_leading_term():
    rows = rate_table(ms=(8, 16, 32, 64, 128), epsilons=("1/2",))
    slope = fit_slope([r.m for r in rows], [r.gap for r in rows])
    assert slope == pytest.approx(-2.0, abs=0.02)  # O(m^{-3/2}) holds with room: the rate is m^{-2}
    # leading Euler-Maclaurin term at eps = rho = 1/2: gap * m^2 -> -(1/12) / sqrt(2 pi) (h = 1/m)
    lead = -1 / (12 * (2 * mpmath.pi) ** 0.5)
    assert float(rows[-1].gap * 128**2) == pytest.approx(float(lead), rel=2e-3)
    for r in rows:  # the Edgeworth + lattice residual is at the exact engine's accuracy
        assert abs(r.residual) < 1e-9 * r.exact + 2 * r.exact_error


def test_fit_slope_on_a_power_law():
    ms = [8, 16, 32, 64]
    assert fit_slope(ms, [3 * m**-1.5 for m in ms]) == pytest.approx(-1.5)
    with pytest.raises(ValueError):
        fit_slope([1, 2], [1, 1])


def test_inputs():
    with pytest.raises(InputError, match="sigma2"):
        dg_cumulants(0.5)
    with pytest.raises(InputError, match="epsilon"):
        edgeworth_delta(Composition.from_sigma2(["1"]), [0.5])
