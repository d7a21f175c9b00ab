"""v(n) (eq. 5–7), composition and the (ε, δ) conversions."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.countdep import (
    ShiftedLogParams,
    asymptotic_budget,
    budget,
    budget_float,
    budget_table,
    compose,
    per_count_dp,
    zcdp_to_dp,
)
from exactdp.numerics.exact import InputError

P = ShiftedLogParams.create("1/10")  # r0 = 1/20, c = 1
Q = ShiftedLogParams.create("1/3", "1/4", "1/2")


def _m(fr):
    return mpmath.mpf(fr.numerator) / fr.denominator


def _renyi_equal_var_quad(alpha, mu1, mu2, s):
    # Brute force: D_α(N(μ1,s²)‖N(μ2,s²)) = log(∫ p^α q^{1−α})/(α−1) by tanh-sinh quadrature.
    p = lambda x: mpmath.npdf(x, mu1, s)  # noqa: E731
    q = lambda x: mpmath.npdf(x, mu2, s)  # noqa: E731
    m = alpha * mu1 + (1 - alpha) * mu2  # centre of the tilted integrand
    integral = mpmath.quad(lambda x: p(x) ** alpha * q(x) ** (1 - alpha),
                           [-mpmath.inf, m - 20 * s, m, m + 20 * s, mpmath.inf])
    return mpmath.log(integral) / (alpha - 1)


@pytest.mark.parametrize("params, n", [(P, 1), (P, 100), (Q, 2), (Q, 7)])
def test_budget_is_the_renyi_divergence_of_the_log_space_gaussians(params, n):
    # eq. (10)–(12): log(U_n + c) ~ N(log(n+c) − σ², σ²); the edge n−1 ↔ n has
    # D_α = α v(n) in both directions.  Reference: numerical integration at α = 2 and 7/2.
    with mpmath.workdps(30):
        s = params.sigma(30)
        mu_n = mpmath.log(n + _m(params.c)) - s * s
        mu_m = mpmath.log(n - 1 + _m(params.c)) - s * s
        v = budget(params, n)
        for alpha in (mpmath.mpf(2), mpmath.mpf(7) / 2)[: 1 if n == 1 else 2]:
            d1 = _renyi_equal_var_quad(alpha, mu_n, mu_m, s)
            d2 = _renyi_equal_var_quad(alpha, mu_m, mu_n, s)
            assert abs(d1 / (alpha * v) - 1) < mpmath.mpf(10) ** -20
            assert abs(d2 / (alpha * v) - 1) < mpmath.mpf(10) ** -20


def test_corollary_3_2_closed_forms():
    # Corollary 3.2 (c = 1): v(0) = v(1) = log²2/(2σ²), v(n) = log²(1 + 1/n)/(2σ²).
    with mpmath.workdps(40):
        s = P.sigma(30)
        assert abs(budget(P, 0) / (mpmath.log(2) ** 2 / (2 * s * s)) - 1) < mpmath.mpf(10) ** -29
        assert budget(P, 0) == budget(P, 1)
        for n in (1, 3, 10**3, 10**9):
            ref = mpmath.log(1 + mpmath.mpf(1) / n) ** 2 / (2 * s * s)
            assert abs(budget(P, n) / ref - 1) < mpmath.mpf(10) ** -29


def test_boundary_cost_eq5():
    # eq. (5): v(1) = log²((1+c)/c)/(2σ²), here c = 1/2 → log²3/(2σ²).
    with mpmath.workdps(40):
        s = Q.sigma(30)
        assert abs(budget(Q, 1) / (mpmath.log(3) ** 2 / (2 * s * s)) - 1) < mpmath.mpf(10) ** -29


def test_asymptotics_and_n_cubed_remainder():
    # eq. (7): n²v(n) → 1/(2σ²), and n³(v(n) − 1/(2σ²n²)) → (1 − 2c)/(2σ²): from the Taylor
    # expansion log(1 + 1/(n−1+c)) = 1/n + (1/2 − c)/n² + O(n⁻³) (derived by hand).
    for params in (P, Q):
        with mpmath.workdps(40):
            s = params.sigma(30)
            lead = 1 / (2 * s * s)
            limit = (1 - 2 * _m(params.c)) * lead
            tab = budget_table(params, [10**k for k in range(2, 8)])
            diffs = []
            for pt in tab.points:
                assert abs(pt.asymptotic / asymptotic_budget(params, pt.n) - 1) < mpmath.mpf(10) ** -29
                assert abs(pt.n2v - lead) < 2 * abs(limit) / pt.n + lead / pt.n
                diffs.append(abs(pt.remainder - limit))
            # the remainder's own error is O(1/n): each decade shrinks it about tenfold
            for a, b in zip(diffs, diffs[1:]):
                assert b < a / 5


def test_remainder_vanishes_to_next_order_at_c_half():
    # With c = 1/2 the n⁻³ term cancels: n³(v − lead/n²) = O(1/n).
    p = ShiftedLogParams.create("1/10", "1/20", "1/2")
    tab = budget_table(p, [10**3, 10**5])
    assert abs(tab.points[1].remainder) < abs(tab.points[0].remainder) / 50


@settings(max_examples=30, deadline=None)
@given(
    r=st.fractions(min_value=Fraction(1, 100), max_value=1),
    t=st.fractions(min_value=Fraction(1, 100), max_value=Fraction(99, 100)),
    c=st.fractions(min_value=Fraction(1, 100), max_value=50),
    n=st.integers(min_value=0, max_value=10**6),
)
def test_budget_nonincreasing_and_float_twin(r, t, c, n):
    p = ShiftedLogParams.create(r, r * t, c)
    assert budget(p, n + 1) <= budget(p, n)
    fast = budget_float(p, np.array([n, n + 1]))
    with mpmath.workdps(30):
        assert abs(fast[0] / budget(p, n) - 1) < 1e-13
        assert abs(fast[1] / budget(p, n + 1) - 1) < 1e-13


def test_composition_adds_pointwise():
    # Section 8: v_tot(n) = Σ_t v_t(n); reference from the closed form (6) evaluated here.
    total = compose(P, Q, Q)
    with mpmath.workdps(40):
        sp, sq = P.sigma(30), Q.sigma(30)
        for n in (1, 5, 1000):
            ref = mpmath.log(1 + 1 / (n - 1 + _m(P.c))) ** 2 / (2 * sp * sp) + 2 * mpmath.log(
                1 + 1 / (n - 1 + _m(Q.c))
            ) ** 2 / (2 * sq * sq)
            assert abs(total.v(n) / ref - 1) < mpmath.mpf(10) ** -28
        assert abs(total.v_float(np.array([5]))[0] / float(total.v(5)) - 1) < 1e-13
    with pytest.raises(InputError):
        compose()


def test_budget_rejects_negative_counts():
    with pytest.raises(InputError, match="^n="):
        budget(P, -1)
    with pytest.raises(InputError, match="^n="):
        budget_float(P, np.array([3, -2]))


# --- (ε, δ) conversions -------------------------------------------------------------


def _cks_delta_bruteforce(rho, eps):
    # Canonne–Kamath–Steinke (2020) Cor. 13: δ = inf_α exp((α−1)(αρ−ε) + α log(1−1/α))/(α−1)
    # (the formula as in Steinke's reference implementation, cdp2adp.py of
    # github.com/IBM/discrete-gaussian-differential-privacy); infimum by a dense
    # logarithmic grid of α followed by golden refinement, independent of the code's method.
    def d(a):
        return mpmath.exp((a - 1) * (a * rho - eps) + a * mpmath.log(1 - 1 / a)) / (a - 1)

    grid = [1 + mpmath.mpf(10) ** (k / mpmath.mpf(50)) for k in range(-300, 301)]
    best = min(range(len(grid)), key=lambda i: d(grid[i]))
    lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, len(grid) - 1)]
    g = (mpmath.sqrt(5) - 1) / 2
    for _ in range(120):
        x1, x2 = hi - g * (hi - lo), lo + g * (hi - lo)
        if d(x1) < d(x2):
            hi = x2
        else:
            lo = x1
    return d((lo + hi) / 2)


@pytest.mark.parametrize("rho, delta", [("1/2", "1e-6"), ("0.05", "1e-9"), ("3", "1/100")])
def test_cks_conversion_against_bruteforce(rho, delta):
    with mpmath.workdps(30):
        rho_m = mpmath.mpf(Fraction(rho).numerator) / Fraction(rho).denominator
        res = zcdp_to_dp(Fraction(rho), delta, "cks")
        dlt = _m(Fraction(delta))
        # valid: δ(ε) ≤ target; optimal: a slightly smaller ε needs a larger δ
        assert _cks_delta_bruteforce(rho_m, res.epsilon) <= dlt * (1 + mpmath.mpf(10) ** -15)
        assert _cks_delta_bruteforce(rho_m, res.epsilon * (1 - mpmath.mpf(10) ** -8)) > dlt


@pytest.mark.parametrize("rho, delta", [("1/2", "1e-6"), ("0.05", "1e-9")])
def test_bun_steinke_and_gaussian_conversions(rho, delta):
    with mpmath.workdps(30):
        rho_m, dlt = _m(Fraction(rho)), _m(Fraction(delta))
        bs = zcdp_to_dp(Fraction(rho), delta, "bun-steinke")
        # Bun–Steinke (2016) Prop. 1.3: ε = ρ + 2√(ρ log(1/δ))
        assert abs(bs.epsilon - (rho_m + 2 * mpmath.sqrt(rho_m * mpmath.log(1 / dlt)))) < mpmath.mpf(10) ** -25
        g = zcdp_to_dp(Fraction(rho), delta, "gaussian")
        # exact hockey-stick divergence of N(μ,1) vs N(0,1), μ = √(2ρ), by quadrature:
        # δ(ε) = ∫ (p − e^ε q)₊, the integrand positive for x > ε/μ + μ/2.
        mu = mpmath.sqrt(2 * rho_m)
        x0 = g.epsilon / mu + mu / 2
        hs = mpmath.quad(lambda x: mpmath.npdf(x, mu, 1) - mpmath.exp(g.epsilon) * mpmath.npdf(x, 0, 1),
                         [x0, mpmath.inf])
        assert abs(hs / dlt - 1) < mpmath.mpf(10) ** -12
        cks = zcdp_to_dp(Fraction(rho), delta, "cks")
        assert g.epsilon <= cks.epsilon <= bs.epsilon


@settings(max_examples=20, deadline=None, derandomize=True)
@given(n=st.integers(min_value=0, max_value=10**5), k=st.integers(min_value=2, max_value=12))
def test_conversion_ordering(n, k):
    d = Fraction(1, 10**k)
    e = [per_count_dp(Q, n, d, m, dps=20).epsilon for m in ("gaussian", "cks", "bun-steinke")]
    assert e[0] <= e[1] <= e[2]


def test_conversion_input_errors():
    with pytest.raises(InputError, match="^delta="):
        zcdp_to_dp(Fraction(1), "0", "cks")
    with pytest.raises(InputError, match="^delta="):
        zcdp_to_dp(Fraction(1), 1e-6, "cks")
    with pytest.raises(InputError, match="^method="):
        zcdp_to_dp(Fraction(1), "1e-6", "rdp")
    assert zcdp_to_dp(0, "1e-6").epsilon == 0
