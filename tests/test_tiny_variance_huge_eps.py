"""Tiny variances at huge ε, off the DHC regime.

* ``kernels.dgauss.tilted_moments`` returned NaN (0/0) when every weight e^{−(y−f)²/(2σ²)}
  underflowed (σ² below ~1.8e-4), and the conditioning engine then died on ``int(NaN)``
  (``exactdp calibrate --sigma2 3 --delta 1e-10 --eps 100000`` exited 2 with a ValueError).
* ``conversions.bounds.gdp_delta`` worked at dps + |ε|/2 digits: at ε = 1e5, 50 000-digit
  erfc's, and the calibration's 60-step GDP start never finished.

References are written here in mpmath (direct sums, the closed form at the old fixed
precision, the analytic transition), nothing of the engine.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest
from exactdp.kernels.dgauss import tilted_moments

from exactdp.accounting.accountant import ExactAccountant
from exactdp.calibration.calibrate import calibrate_design
from exactdp.conversions.bounds import gdp_delta, gdp_epsilon
from exactdp.mechanisms import Composition

from harness import dg_centred_moments, single_delta


@pytest.mark.parametrize("f, s2", [(0.08845546468158709, 5.144226977012164e-06), (0.5, 1e-5), (-0.5, 1e-6),
                                   (0.49, 1e-7), (0.3, 1e-3), (0.2, 0.5), (-0.1, 1e-4)])
def test_tilted_moments_finite_and_right_at_tiny_variance(f, s2):
    mean, var = tilted_moments(f, s2)
    ref_m, ref_v = dg_centred_moments(f, s2)
    assert abs(mean - ref_m) <= 1e-12 * max(1.0, abs(float(ref_m))) + 1e-300
    assert abs(var - ref_v) <= 1e-12 * float(ref_v) + 1e-300


@pytest.mark.parametrize("sigma2", [["3"] * 5, ["1/1000"], ["10000000"]])
@pytest.mark.parametrize("eps", [F(401), F(4001, 3), F(20000), F(-1000)])
def test_gdp_delta_at_large_eps_against_the_fixed_precision_closed_form(sigma2, eps):
    comp = Composition.from_sigma2(sigma2)
    got = gdp_delta(comp, eps)
    with mpmath.workdps(50 + int(abs(eps)) // 2 + 5):  # erfc form at the former precision
        mu = mpmath.sqrt(2 * mpmath.mpf(comp.rho.numerator) / comp.rho.denominator)
        e = mpmath.mpf(eps.numerator) / eps.denominator
        phi = lambda x: mpmath.erfc(-x / mpmath.sqrt(2)) / 2  # noqa: E731
        ref = phi(-e / mu + mu / 2) - mpmath.exp(e) * phi(-e / mu - mu / 2)
        assert abs(got.delta - ref) <= got.error_bound


@pytest.mark.parametrize("sigma2", ["1/600", "1/2000"])
@pytest.mark.parametrize("delta", [F(1, 10**10), F(1, 2)])
def test_gdp_epsilon_beyond_400_against_a_bisection_of_the_closed_form(sigma2, delta):
    comp = Composition.from_sigma2([sigma2])
    got = gdp_epsilon(comp, delta)
    rho = comp.rho
    with mpmath.workdps(50 + int(2 * rho) // 2 + 20):
        mu = mpmath.sqrt(2 * mpmath.mpf(rho.numerator) / rho.denominator)
        d = mpmath.mpf(delta.numerator) / delta.denominator
        phi = lambda x: mpmath.erfc(-x / mpmath.sqrt(2)) / 2  # noqa: E731
        g = lambda e: phi(-e / mu + mu / 2) - mpmath.exp(e) * phi(-e / mu - mu / 2)  # noqa: E731
        lo, hi = mpmath.mpf(0), mpmath.mpf(4 * rho + 100)
        for _ in range(200):
            mid = (lo + hi) / 2
            lo, hi = (lo, mid) if g(mid) <= d else (mid, hi)
        assert abs(got.epsilon - hi) <= got.error_bound + hi * mpmath.mpf(10) ** -44


def test_exact_delta_at_tiny_variance_and_huge_eps():
    p = ExactAccountant(Composition.from_sigma2(["1/100000"])).delta([F(100000)])[0]
    ref = single_delta(F(1, 100000), 1, F(100000))
    assert p.estimate - p.error_bound <= ref <= p.estimate + p.error_bound
    assert p.error_bound < ref * 1e-9


def test_calibration_at_huge_eps_brackets_the_analytic_transition():
    # one unit-shift N_Z(0, 3c): at ε = 1e5, δ(ε) jumps from ≈ e^{−1/(6c)} to ≈ 1 where
    # 1/(6c) = 1e5, i.e. c = 1/600000; δ = 1e-10 is met just above it
    res = calibrate_design(Composition.from_sigma2(["3"]), F(1, 10**10), F(100000))
    assert res.lower < F(1, 600000) < res.upper
    assert res.upper - res.lower <= F(1, 10**6)


def test_risk_table_beyond_reach_is_refused_quickly():
    import time

    from exactdp.cli import main
    from exactdp.numerics.errors import UncertifiedError
    from exactdp.risk.single import expected_risk

    t = time.process_time()
    with pytest.raises(UncertifiedError, match="terms at this accuracy"):
        expected_risk(F(1, 2), F(1, 10**12))
    assert main(["risk", "expected", "--rho1", "1e-12", "--p", "1/2"]) == 3
    assert time.process_time() - t < 20  # was hours: 2·10⁷ multiprecision weights
