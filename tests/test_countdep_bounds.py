"""Lower bounds of Section 6, Table 2 constants, the optimised prior, and Section 7."""

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.countdep import (
    ShiftedLogParams,
    best_uniform_bound,
    budget,
    c_star_bracket,
    c_star_upper,
    gaussian_renyi,
    lower_bound_report,
    many_count_bound,
    optimise_prior,
    renyi_order_threshold,
    table2,
    truncated_gaussian_coefficient,
    truncated_gaussian_constant,
    truncated_gaussian_moments,
    two_count_bound,
    two_count_limit,
    two_count_small_r_constant,
    unequal_gaussian_edge,
    uniform_bound,
    uniform_limit,
    uniform_small_r_constant,
)
from exactdp.numerics.exact import InputError

REL = mpmath.mpf(10) ** -12


def mp(x):
    """An exact rational as an mpf."""
    return mpmath.mpf(x.numerator) / x.denominator


def _rel(a, b):
    with mpmath.workdps(40):
        return abs(mpmath.mpf(a) / mpmath.mpf(b) - 1)


# --- Table 2 and (15), (29), (32): values computed by the code, references typed here ----


def test_table2_constants_reproduced_numerically():
    with mpmath.workdps(40):
        e, pi = mpmath.e, mpmath.pi
        tc, theta = two_count_small_r_constant()
        assert _rel(tc.value, mpmath.mpf(1) / 128) < REL  # Table 2: 1/128
        assert abs(tc.argmax - 8) < 1e-6 and abs(theta - mpmath.mpf(1) / 2) < 1e-6  # a = 8, θ = 1/2
        un = uniform_small_r_constant()
        assert _rel(un.value, 3 / (2 * e**3)) < REL  # (25): 3/(2e³)
        assert _rel(un.argmax, 2 * e ** mpmath.mpf(1.5)) < REL  # maximiser a = 2e^{3/2}
        assert abs(un.value - mpmath.mpf("0.0746806")) < 5e-8  # decimal quoted in the paper
        up = c_star_upper()
        assert _rel(up.value, 1 / pi) < REL  # (13)/(32): 1/π
        t2 = table2()
        for got, ref in ((t2.two_count, mpmath.mpf(1) / 128), (t2.uniform, 3 / (2 * e**3)),
                         (t2.truncated_gaussian, pi / (4 * e**2)), (t2.mechanism, 1 / pi)):
            assert _rel(got, ref) < REL
        assert abs(t2.truncated_gaussian - mpmath.mpf("0.1062921")) < 5e-8  # decimal quoted in the paper
        assert abs(t2.mechanism - mpmath.mpf("0.31831")) < 5e-6  # decimal quoted in Table 2
        assert abs(t2.mechanism / t2.truncated_gaussian - mpmath.mpf("2.995")) < 1e-3  # "≈ 2.995"
        assert t2.accuracy < 1e-20


def test_c_star_bracket_and_truncated_gaussian_limit():
    # (29) and (32): π/(4e²) ≤ C⋆ ≤ 1/π, ratio 4e²/π².
    with mpmath.workdps(30):
        tg = truncated_gaussian_constant()
        assert _rel(tg.value, mpmath.pi / (4 * mpmath.e**2)) < REL and tg.error_estimate < 1e-25
        br = c_star_bracket()
        assert _rel(br.ratio, 4 * mpmath.e**2 / mpmath.pi**2) < REL


@settings(max_examples=40, deadline=None)
@given(r=st.fractions(min_value=Fraction(1, 10**6), max_value=Fraction(999999, 10**6)))
def test_two_count_limit_is_eq_15(r):
    # (15): lim n²·(14) = (1−r)⁶/(128 r²(1+r)²), exactly (the code takes the limit of (14)).
    assert two_count_limit(r) == (1 - r) ** 6 / (128 * r**2 * (1 + r) ** 2)


@pytest.mark.parametrize("r", ["1/100", "1/10", "1/2", "9/10"])
def test_two_count_bound_converges_and_matches_proof(r):
    r = Fraction(r)
    lim = (1 - r) ** 6 / (128 * r**2 * (1 + r) ** 2)  # (15)
    for n in (1, 7, 1000):
        b = two_count_bound(r, n)
        # the proof of Prop. 6.2: m = ⌈C_r n⌉ gives q = √(m/n) ≥ (1+3r)/(1−r), and the two
        # Markov bounds r(q+1)/(q−1) sum to at most (1+r)/2
        m = math.ceil(((1 + 3 * r) / (1 - r)) ** 2 * n)
        q = math.sqrt(m / n)
        assert q >= float((1 + 3 * r) / (1 - r)) * (1 - 1e-12)
        assert float(r) * (q + 1) / (q - 1) <= float((1 + r) / 2) * (1 + 1e-12)
        assert b == (1 - r) ** 2 / (2 * Fraction(m - n) ** 2)
    n = 10**9 + 7
    assert abs(float(n * n * two_count_bound(r, n) / lim) - 1) < 1e-6


# --- (19) and (23) -----------------------------------------------------------------------


def _uniform_23(K, n, r):
    # (23) typed from the paper: 12/(K²−1)·[log(K/(2e(r(n+(K−1)/2)+1/4)))]₊
    with mpmath.workdps(40):
        rr = mpmath.mpf(r.numerator) / r.denominator
        x = mpmath.log(K / (2 * mpmath.e * (rr * (n + mpmath.mpf(K - 1) / 2) + mpmath.mpf(1) / 4)))
        return 12 * max(x, 0) / (K * K - 1)


def _best_uniform_scan(n, r):
    # Brute force over all odd K up to a generous limit, in float64 (independent scan).
    K = np.arange(3, 40 * int(r * n + 2) * 8 + 1001, 2, dtype=np.float64)
    v = 12 * np.maximum(np.log(K / (2 * math.e * (float(r) * (n + (K - 1) / 2) + 0.25))), 0) / (K * K - 1)
    i = int(np.argmax(v))
    return float(v[i]), int(K[i])


@pytest.mark.parametrize("n, r", [(1, "1/10"), (10, "1/10"), (100, "1/100"), (1000, "1/10"), (50, "3/10")])
def test_uniform_bound_closed_form_and_best_K(n, r):
    r = Fraction(r)
    for K in (3, 5, 21):
        assert _rel(uniform_bound(K, n, r) + 1e-300, _uniform_23(K, n, r) + 1e-300) < mpmath.mpf(10) ** -25
    ref, kref = _best_uniform_scan(n, r)
    got = best_uniform_bound(n, r)
    assert got.K == kref
    assert abs(float(got.value) / ref - 1) < 1e-12


def test_many_count_bound_with_uniform_prior_is_23():
    # Corollary 6.5 is (19) with J uniform on {0..K−1}, j⋆ = (K−1)/2.
    r = Fraction(1, 20)
    for K, n in ((3, 1), (9, 10), (41, 30)):
        mc = many_count_bound([Fraction(1, K)] * K, n, r)
        assert mc.j_star == (K - 1) // 2 and mc.second_moment == Fraction(K * K - 1, 12)
        assert _rel(mc.value + 1e-300, _uniform_23(K, n, r) + 1e-300) < mpmath.mpf(10) ** -25


def test_many_count_bound_user_pmf_bruteforce():
    pmf = {0: Fraction(1, 8), 1: Fraction(1, 4), 2: Fraction(3, 8), 3: Fraction(1, 4)}
    n, r = 2, Fraction(1, 50)
    mc = many_count_bound(pmf, n, r, j_star=2)
    with mpmath.workdps(40):
        H = -sum(mp(p) * mpmath.log(mp(p)) for p in pmf.values())
        EJ = sum(j * p for j, p in pmf.items())
        V = sum(p * (j - 2) ** 2 for j, p in pmf.items())
        ref = (H - mpmath.log(2 * mpmath.e * (mpmath.mpf(1) / 50 * (n + mp(EJ)) + mpmath.mpf(1) / 4))) / mp(V)
        assert mc.mean == EJ and mc.second_moment == V
        assert _rel(mc.value, ref) < mpmath.mpf(10) ** -25
    with pytest.raises(InputError, match="sum to exactly 1"):
        many_count_bound([Fraction(1, 2), Fraction(1, 3)], 1, r)
    with pytest.raises(InputError, match=r"pmf\[0\]"):
        many_count_bound([0.5, 0.5], 1, r)
    with pytest.raises(InputError, match="j_star"):
        many_count_bound([1], 1, r, j_star=0)
    with pytest.raises(InputError, match="^r="):
        many_count_bound([Fraction(1, 2)] * 2, 1, 1)
    with pytest.raises(InputError, match="^n="):
        many_count_bound([Fraction(1, 2)] * 2, 0, r)


def test_uniform_limit_24_is_the_limit_of_23():
    # (24): with K_n odd, K_n/(rn) → a, r²n²·(23) → (12/a²)[log(a/(2e(1+ar/2)))]₊.
    r, a = Fraction(1, 20), mpmath.mpf(9)
    with mpmath.workdps(40):
        ref = 12 / a**2 * mpmath.log(a / (2 * mpmath.e * (1 + a / 40)))  # (24) typed here
        assert _rel(uniform_limit(a, r), ref) < mpmath.mpf(10) ** -25
        n = 10**8
        K = int(9 * n / 20) | 1
        approx = mpmath.mpf(r.numerator) ** 2 / r.denominator**2 * n * n * uniform_bound(K, n, r)
        assert _rel(approx, ref) < 1e-6


def test_truncated_gaussian_moments_and_31():
    # Closed forms for N(0,1) conditioned on [−L, L]: Z = erf(L/√2), τ² = 1 − 2Lφ(L)/Z,
    # h = ½log(2πe) + log Z − Lφ(L)/Z; (31) = e^{2h}/(8e³τ²).
    for L in (1, 3):
        with mpmath.workdps(40):
            Z = mpmath.erf(L / mpmath.sqrt(2))
            tau2 = 1 - 2 * L * mpmath.npdf(L) / Z
            h = mpmath.log(2 * mpmath.pi * mpmath.e) / 2 + mpmath.log(Z) - L * mpmath.npdf(L) / Z
            hc, tc = truncated_gaussian_moments(L)
            assert _rel(hc, h) < mpmath.mpf(10) ** -25 and _rel(tc, tau2) < mpmath.mpf(10) ** -25
            got = truncated_gaussian_coefficient(L)
            assert _rel(got.value, mpmath.exp(2 * h) / (8 * mpmath.e**3 * tau2)) < REL
            assert _rel(got.argmax, 2 * mpmath.exp(mpmath.mpf(3) / 2 - h)) < 1e-10  # x_L = 2e^{3/2−h_L}


# --- optimised prior -----------------------------------------------------------------------


def _eval_19_mp(prior, n, r):
    # (19) on the exported pmf, recomputed from scratch at 40 digits.
    j, _ = prior.pmf()
    par = prior.parameters
    with mpmath.workdps(40):
        if prior.family == "geometric":
            lw = [-mpmath.mpf(par["beta"]) * int(k) for k in j]
        else:
            m, s = mpmath.mpf(par["m"]), mpmath.mpf(par["s"])
            lw = [-(int(k) - m) ** 2 / (2 * s * s) for k in j]
        top = max(lw)
        w = [mpmath.exp(x - top) for x in lw]
        W = mpmath.fsum(w)
        p = [x / W for x in w]
        H = -mpmath.fsum(q * mpmath.log(q) for q in p)
        mu = mpmath.fsum(int(k) * q for k, q in zip(j, p))
        js = int(mpmath.floor(mu + mpmath.mpf(1) / 2))
        V = mpmath.fsum(q * (int(k) - js) ** 2 for k, q in zip(j, p))
        rr = mpmath.mpf(r.numerator) / r.denominator
        return (H - mpmath.log(2 * mpmath.e * (rr * (n + mu) + mpmath.mpf(1) / 4))) / V


@pytest.mark.parametrize("n, r", [(1, "1/10"), (10, "1/100"), (100, "1/10"), (1000, "1/10"), (20, "1/4"), (5, "1/3"),
                                  (3, "2/5")])
def test_optimised_prior_at_least_uniform_and_exactly_evaluated(n, r):
    r = Fraction(r)
    opt = optimise_prior(n, r)
    ref_uniform, _ = _best_uniform_scan(n, r)
    assert opt.value >= ref_uniform * (1 - 1e-12)
    assert not opt.vacuous and opt.value > 0
    if opt.best is not None:
        exact = _eval_19_mp(opt.best, n, r)
        assert opt.value <= exact and opt.value >= exact * (1 - 1e-11)


def test_optimised_prior_beats_uniform_for_small_r():
    # the discrete-Gaussian prior improves on the uniform one (cf. π/(4e²) vs 3/(2e³) as r ↓ 0)
    opt = optimise_prior(1000, Fraction(1, 100))
    assert opt.value > 1.3 * float(opt.uniform.value)


def test_vacuity_regions():
    # (23) is vacuous iff r ≥ 1/e; (19) for every prior iff r ≥ 1/2 (the bracket tends to
    # log(1/(er)) resp. −log(2r) as the prior spreads out).
    assert best_uniform_bound(10, Fraction(3, 8)).vacuous  # 3/8 > 1/e
    assert not best_uniform_bound(10, Fraction(9, 25)).vacuous  # 9/25 < 1/e
    o = optimise_prior(10, Fraction(1, 2))
    assert o.vacuous and o.value == 0 and "1/2" in o.reason
    o = optimise_prior(10, Fraction(2, 5))
    assert not o.vacuous and o.value > 0 and o.uniform.vacuous


def test_report_best_is_max_and_mechanism_dominates():
    p = ShiftedLogParams.create("1/10")
    rep = lower_bound_report(p.r, [1, 50], p)
    for pt in rep.points:
        vals = [mp(pt.two_count), pt.uniform.value, mpmath.mpf(pt.optimised.value)]
        assert pt.best == max(vals)
        assert pt.ratio >= 1 and pt.mechanism_v == budget(p, pt.n)
    assert rep.two_count_limit == (1 - p.r) ** 6 / (128 * p.r**2 * (1 + p.r) ** 2)
    rep2 = lower_bound_report(Fraction(3, 5), [10], ShiftedLogParams.create("3/5"))
    pt = rep2.points[0]
    assert pt.many_count_vacuous and pt.best_source == "two-count (14)" and pt.uniform.vacuous
    rep1 = lower_bound_report(1, [1, 10])
    assert all(q.best == 0 and q.best_source == "none" for q in rep1.points)


@settings(max_examples=12, deadline=None, derandomize=True)
@given(
    r=st.fractions(min_value=Fraction(1, 50), max_value=Fraction(49, 50)),
    t=st.fractions(min_value=Fraction(1, 20), max_value=Fraction(19, 20)),
    c=st.fractions(min_value=Fraction(1, 20), max_value=20),
    n=st.integers(min_value=1, max_value=300),
)
def test_mechanism_budget_dominates_every_lower_bound(r, t, c, n):
    # The mechanism satisfies the hypotheses of Section 6, so v(n) ≥ every valid lower bound.
    p = ShiftedLogParams.create(r, r * t, c)
    v = budget(p, n)
    assert v >= two_count_bound(r, n)
    assert v >= best_uniform_bound(n, r).value
    assert v >= optimise_prior(n, r, max_eval=80).value


# --- Section 7 ---------------------------------------------------------------------------


def test_renyi_threshold_35():
    for n in (1, 2, 10, 1000):
        assert renyi_order_threshold(n) == Fraction((n + 1) ** 2, 2 * n + 1)
    with pytest.raises(InputError):
        renyi_order_threshold(0)


def _renyi_quad(alpha, m1, s1, m2, s2):
    # D_α(N(m1,s1²)‖N(m2,s2²)) = log ∫ p^α q^{1−α} /(α−1), by quadrature.
    f = lambda x: mpmath.npdf(x, m1, s1) ** alpha * mpmath.npdf(x, m2, s2) ** (1 - alpha)  # noqa: E731
    return mpmath.log(mpmath.quad(f, [-mpmath.inf, m1 - 10 * s1, m1, m1 + 10 * s1, mpmath.inf])) / (alpha - 1)


@pytest.mark.parametrize("n, r", [(1, "1/2"), (3, "1/5"), (10, "1/10")])
def test_unequal_gaussian_divergences(n, r):
    r = Fraction(r)
    thr = renyi_order_threshold(n)
    with mpmath.workdps(30):
        s_n, s_m = float(r) * n, float(r) * (n + 1)
        for alpha in ((1 + thr) / 2, (3 + thr) / 4):  # below the threshold (35)
            e = unequal_gaussian_edge(n, r, alpha)
            a = mpmath.mpf(alpha.numerator) / alpha.denominator
            assert _rel(e.reverse, _renyi_quad(a, n + 1, mpmath.mpf(r) * (n + 1), n, mpmath.mpf(r) * n)) < 1e-15
            assert _rel(e.forward, _renyi_quad(a, n, mpmath.mpf(r) * n, n + 1, mpmath.mpf(r) * (n + 1))) < 1e-15
        assert s_m > s_n
        # at and above the threshold the reverse divergence is infinite, forward stays finite
        for alpha in (thr, thr + Fraction(1, 10**9), 10 * thr):
            e = unequal_gaussian_edge(n, r, alpha)
            assert e.reverse == mpmath.inf and mpmath.isfinite(e.forward)
    e0 = unequal_gaussian_edge(0, Fraction(1, 2), 2)
    assert e0.reverse == mpmath.inf and e0.forward == mpmath.inf
    assert gaussian_renyi(2, 0, 1, 0, 1) == 0
