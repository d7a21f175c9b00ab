"""Utility: Lemma 4.1, exact expected error with clipping/rounding (eq. 2, 9), Monte Carlo,
drift optimality (Section 4.1), sampler, and the boundary propositions 2.2 and 2.3."""

from fractions import Fraction

import mpmath
import numpy as np
import pytest

from exactdp.countdep import (
    ShiftedLogParams,
    drift_error,
    endpoint_r1_check,
    expected_error,
    lemma41,
    log_grid,
    monte_carlo_error,
    optimal_drift,
    sample,
    utility_report,
    zero_count_check,
)
from exactdp.countdep.utility import lemma41_quad
from exactdp.numerics.exact import InputError

P = ShiftedLogParams.create("1/10")
Q = ShiftedLogParams.create("1/2", "1/4", "1/3")
R = ShiftedLogParams.create("9/10", "89/100", "1/50")  # large σ: clipping matters


def _m(fr):
    return mpmath.mpf(fr.numerator) / fr.denominator


def _error_by_quadrature(params, n):
    # Independent brute force: E|[(n+c)e^{σZ−σ²} − c]₊ − n| by tanh-sinh quadrature of the
    # definition (eq. 4), splitting at the kinks (release hits 0, release equals n).
    s = params.sigma(30)
    c = _m(params.c)
    f = lambda z: abs(max((n + c) * mpmath.exp(s * z - s * s) - c, 0) - n) * mpmath.npdf(z)  # noqa: E731
    z0 = (mpmath.log(c / (n + c)) + s * s) / s
    return mpmath.quad(f, [-mpmath.inf, *sorted({z0, s}), mpmath.inf])


@pytest.mark.parametrize("sigma", ["0.01", "0.3", "1", "2.5"])
def test_lemma_4_1(sigma):
    # Lemma 4.1: E|e^{σZ−σ²} − 1| = 2Φ(σ) − 1; reference by mpmath.quad in the test.
    with mpmath.workdps(30):
        s = mpmath.mpf(sigma)
        ref = mpmath.quad(lambda z: abs(mpmath.exp(s * z - s * s) - 1) * mpmath.npdf(z), [-mpmath.inf, s, mpmath.inf])
        assert abs(lemma41(s) / ref - 1) < mpmath.mpf(10) ** -25
        assert abs(lemma41_quad(s) / ref - 1) < mpmath.mpf(10) ** -25


@pytest.mark.parametrize("params", [P, Q, R])
@pytest.mark.parametrize("n", [0, 1, 7, 1000])
def test_expected_error_matches_bruteforce_quadrature(params, n):
    with mpmath.workdps(30):
        ref = _error_by_quadrature(params, n)
        pt = expected_error(params, n)
        assert abs(pt.error / ref - 1) < mpmath.mpf(10) ** -20
        # eq. (9): before clipping the error is exactly (n+c)·r0/(1+c)
        assert pt.preclip == (n + params.c) * params.r0 / (1 + params.c)
        assert pt.gain >= 0


def test_clipping_gain_at_zero_closed_form():
    # At n = 0 the gain is E[(−U)₊] = c·E[(1 − W)₊] = c(Φ(σ) − e^{−σ²/2}/2), by the Gaussian
    # identity E[e^{σZ−σ²}1{Z ≤ σ}] = e^{−σ²/2}/2 of eq. (8).
    for params in (P, Q, R):
        with mpmath.workdps(30):
            s = params.sigma(30)
            ref = _m(params.c) * (mpmath.ncdf(s) - mpmath.exp(-s * s / 2) / 2)
            assert abs(expected_error(params, 0).gain / ref - 1) < mpmath.mpf(10) ** -25


@pytest.mark.parametrize("params", [P, Q, R])
def test_utility_requirement_on_log_grid_to_a_million(params):
    # eq. (2): E|x̂ − n| < r·max(n, 1) for n = 0..10⁶ (log grid), both by the closed form
    # and by the multiprecision quadrature twin, plus Theorem 3.1 (i): ≤ r0(n+c)/(1+c).
    grid = log_grid(10**6, 2)
    assert grid[0] == 0 and grid[-1] == 10**6
    rep = utility_report(params, grid, dps=20, quad=True)
    assert rep.all_within
    assert rep.max_quad_discrepancy < mpmath.mpf(10) ** -15
    with mpmath.workdps(40):
        for pt in rep.points:
            assert pt.error < pt.target and pt.quad_value < pt.target
            assert pt.error <= _m(pt.preclip) * (1 + mpmath.mpf(10) ** -24)
            assert pt.preclip < params.r * max(pt.n, 1)


def test_clipping_gain_is_quantified():
    # With σ large (R) clipping removes most of the error at n = 0 and a visible share at n = 1;
    # for P (σ ≈ 0.03) it is negligible already at n = 1.
    r0 = expected_error(R, 0)
    assert 0.5 < r0.relative_gain < 1
    assert expected_error(R, 1).relative_gain > 1e-4
    assert expected_error(P, 1).relative_gain < 1e-100


@pytest.mark.parametrize("params, n, rounding", [(P, 0, False), (P, 3, True), (Q, 2, False), (R, 0, True),
                                                 (R, 40, True)])
def test_monte_carlo_confidence_interval_contains_exact(params, n, rounding):
    # Monte Carlo with a 99.9% CLT interval (seeded, so deterministic); the exact value is the
    # closed form (also verified against quadrature above).  Stochastic rounding must not
    # change the expected error (z ↦ |z − n| is linear between integers).
    mc = monte_carlo_error(params, n, 200_000, seed=12345, rounding=rounding, confidence="0.999")
    exact = expected_error(params, n).error
    assert mc.contains(exact), (mc, exact)
    assert mc.high - mc.low < 0.05 * max(float(exact), 1e-3) + 0.01


def _rounded_error_bruteforce(params, n, kmax):
    # E|R − n| = Σ_k P(R = k)|k − n| with P(R = k) = E[(1 − |Y − k|)₊] (stochastic rounding
    # puts mass 1 − |y − k| on each neighbouring integer), by quadrature over z.
    s = params.sigma(20)
    c = _m(params.c)
    y = lambda z: max((n + c) * mpmath.exp(s * z - s * s) - c, 0)  # noqa: E731
    kink = lambda j: (mpmath.log((j + c) / (n + c)) + s * s) / s  # noqa: E731  (y = j there)
    total = 0
    for k in range(kmax + 1):
        pts = sorted({kink(j) for j in (k - 1, k, k + 1) if j >= 0} | {kink(0)})
        pk = mpmath.quad(lambda z, k=k: max(1 - abs(y(z) - k), 0) * mpmath.npdf(z), [-mpmath.inf, *pts, mpmath.inf])
        total += pk * abs(k - n)
    return total


def test_stochastic_rounding_error_identity_bruteforce():
    with mpmath.workdps(20):
        for n in (0, 2):
            ref = _rounded_error_bruteforce(Q, n, 25)  # mass beyond y = 25 is < 1e-23
            assert abs(expected_error(Q, n, dps=20).error - ref) < mpmath.mpf(10) ** -15


def test_sampler_shapes_seeding_and_rounding():
    counts = np.array([0, 1, 5, 1000])
    a = sample(P, counts, np.random.default_rng(7), size=3)
    b = sample(P, counts, np.random.default_rng(7), size=3)
    assert a.shape == (3, 4) and np.array_equal(a, b) and (a >= 0).all()
    r = sample(Q, counts, np.random.default_rng(7), size=(2, 5), rounding=True)
    assert r.shape == (2, 5, 4) and r.dtype == np.int64 and (r >= 0).all()
    # rounding preserves the conditional mean: compare means of 2·10⁵ rounded vs unrounded draws
    rng = np.random.default_rng(3)
    y = sample(Q, np.full(200_000, 3), rng)
    from exactdp.countdep import stochastic_round

    rr = stochastic_round(y, np.random.default_rng(4))
    assert abs(rr.mean() - y.mean()) < 4 * 0.5 / np.sqrt(200_000)
    with pytest.raises(InputError, match="^counts="):
        sample(P, [1, -1], np.random.default_rng(0))
    with pytest.raises(InputError, match="^counts="):
        sample(P, [1.5], np.random.default_rng(0))
    with pytest.raises(InputError, match="^rng="):
        sample(P, [1], 42)


def test_drift_minimised_at_sigma_squared():
    # Section 4.1: f(a) = E|e^{σZ−a} − 1| is minimised at a = σ² (paper), with f(σ²) = 2Φ(σ) − 1;
    # the minimiser is located numerically by the code.  f itself is checked against quadrature.
    for params in (P, Q, R):
        with mpmath.workdps(40):
            s = params.sigma(30)
            opt = optimal_drift(s)
            assert abs(opt.a_star / (s * s) - 1) < mpmath.mpf(10) ** -15
            assert abs(opt.f_min - (2 * mpmath.ncdf(s) - 1)) < mpmath.mpf(10) ** -28
            assert opt.f_half > opt.f_min  # the mean-unbiased drift σ²/2 is worse
            for a in (s * s / 3, 2 * s * s):
                ref = mpmath.quad(lambda z, s=s, a=a: abs(mpmath.exp(s * z - a) - 1) * mpmath.npdf(z),
                                  [-mpmath.inf, a / s, mpmath.inf])
                assert abs(drift_error(s, a) / ref - 1) < mpmath.mpf(10) ** -25


def test_proposition_2_3_endpoint():
    # Prop. 2.3: at r = 1 the constant release 1/2 meets (2) strictly with v ≡ 0.
    chk = endpoint_r1_check([0, 1, 2, 10, 10**6])
    assert chk.all_strict and chk.budget == 0
    assert chk.rows[0].error == Fraction(1, 2) and chk.rows[0].target == 1
    assert chk.rows[-1].error == Fraction(2 * 10**6 - 1, 2)


def test_proposition_2_2_zero_count():
    # Prop. 2.2: the literal target is infeasible at 0; the weak version forces error 1 > r at
    # count one; the mechanism's error at zero is positive (violates (1)) but < r (meets (2)).
    chk = zero_count_check("1/10", P)
    assert not chk.literal_feasible_at_zero
    assert chk.weak_forced_error_at_one == 1 and chk.weak_version_contradiction
    assert 0 < chk.mechanism_error_at_zero < P.r
    assert 0 < expected_error(P, 0).error < P.r
    assert not zero_count_check("1").weak_version_contradiction
