"""Single-level disclosure risk (exactdp.risk.single) against the seed paper and brute force.

References
----------
* Seed: Kazan and Reiter, arXiv 2204.04253 (../shared/seeds/001_d93ffe9a08066068.txt,
  the reference folder beside the checkout, see tests/conftest.py).
* Brute force: the discrete Gaussian normaliser from Jacobi's θ3 (``theta3`` of
  tests/harness.py: ``mpmath.jtheta(3, 0, exp(-a))``, an independent evaluation of
  Σ exp(-a z²)) and explicit sums written here over |z| ≤ 70/sqrt(a) (remainder
  < e^-4900), at 40 digits.
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.numerics.exact import InputError
from exactdp.risk import decision, expected_risk, posterior, posterior_curve
from exactdp.risk.presets import PRESETS, RHO_GLOBAL, gvhr_rho

from harness import mp, theta3

# The paper's ρ1: 2.56 · 165/4099 · 3945/4097 (seed §2, "≈ 0.099").
RHO1 = Fraction(256, 100) * Fraction(165, 4099) * Fraction(3945, 4097)


def brute_pmf(a, z):
    return mpmath.exp(-mp(a) * z * z) / theta3(a)


def brute_sum(a, lo, hi):
    """Σ_{z=lo}^{hi} exp(-a z²)/Z, clipped to |z| ≤ 70/sqrt(a) (the rest is < e^-4900)."""
    K = int(70 / mpmath.sqrt(mp(a))) + 1
    lo, hi = max(lo, -K), min(hi, K)
    return mpmath.fsum(mpmath.exp(-mp(a) * z * z) for z in range(lo, hi + 1)) / theta3(a)


def brute_posterior(xs, p, a, known=0):
    """Bayes' rule from the two likelihoods, no simplification."""
    num = mp(p) * brute_pmf(a, xs - known - 1)
    return num / (num + (1 - mp(p)) * brute_pmf(a, xs - known))


def test_preset_rho1_is_the_papers_value():
    # 2.56·165/4099·3945/4097 = 41659200/419840075 = 1666368/16793603 (exact arithmetic by hand:
    # 64/25 · 650925/16793603, gcd 25).
    assert PRESETS["paper"].rho_block == Fraction(1666368, 16793603) == RHO1
    # seed: "≈ 0.099" and ../shared/notes/disclosure_risk.md §3: 0.09923 (paper), 0.09908
    # (production ρ_global = (542/339)²)
    assert abs(float(PRESETS["paper"].rho_block) - 0.09923) < 5e-6
    assert abs(float(PRESETS["production"].rho_block) - 0.09908) < 5e-6
    # block group: seed "ρ2 ≈ 0.246" (0.24648 with 2.56; 0.24612 in production, disclosure_risk.md §3)
    assert abs(float(PRESETS["paper"].rho_block_group) - 0.24648) < 5e-6
    assert abs(float(PRESETS["production"].rho_block_group) - 0.24612) < 5e-6
    assert RHO_GLOBAL["production"] == Fraction(293764, 114921)  # 542² / 339²
    assert gvhr_rho("block_group", Fraction(1)) == Fraction(1256, 4099) * Fraction(1288, 4099)


def test_seed_correct_decision_probability_p_half():
    # Seed §4.1: "When ignoring hierarchical information, the corresponding probability is 58.89%".
    with mpmath.workdps(40):
        d = decision(Fraction(1, 2), RHO1)
        # closed form for p = 1/2: 1/2 + 1/(2 Z(ρ1)) with Z from θ3
        ref = mpmath.mpf(1) / 2 + 1 / (2 * theta3(RHO1))
        assert abs(d.p_correct - ref) < 1e-30
    assert d.threshold == 1
    assert str(mpmath.nstr(d.p_correct, 5)) == "0.58886"
    assert round(float(d.p_correct) * 100, 2) == 58.89
    assert d.error_bound < 1e-30


def test_seed_release_probabilities_four_and_five():
    # Seed Table 4: "x1* = 4 will occur only 3.6% of the time, and x1* = 5 only 1.5%"; these are
    # P[X1* = x* | the target lacks c] = exp(-ρ1 x*²)/Z (3.633% and 1.487%,
    # ../shared/notes/disclosure_risk.md §3, Table 4).
    four = posterior(4, Fraction(1, 2), RHO1)
    five = posterior(5, Fraction(1, 2), RHO1)
    with mpmath.workdps(40):
        assert abs(four.prob_if_lacks - brute_pmf(RHO1, 4)) < 1e-30
        assert abs(five.prob_if_lacks - brute_pmf(RHO1, 5)) < 1e-30
    assert round(float(four.prob_if_lacks) * 100, 2) == 3.63
    assert round(float(five.prob_if_lacks) * 100, 2) == 1.49
    assert round(float(four.prob_if_lacks) * 100, 1) == 3.6
    assert round(float(five.prob_if_lacks) * 100, 1) == 1.5


def test_seed_figure3_examples():
    # Seed §4.1: p = 1/5, ρ1 = 0.5 -> decide iff x* ≥ 2, P ≈ 0.30; ρ1 = 0.6 -> still x* ≥ 2, P ≈ 0.28.
    for rho, ref in (("0.5", 0.30), ("0.6", 0.28)):
        d = decision("1/5", rho)
        assert d.threshold == 2
        assert round(float(d.p_correct), 2) == ref
        a = Fraction(rho)
        with mpmath.workdps(40):
            brute = brute_sum(a, 1, 10**9)  # P[E ≥ 1]
            assert abs(d.p_correct - brute) < 1e-25


def test_seed_table7_single_level_posterior():
    # Seed §4.2: "If the adversary does not use hierarchical information, the posterior
    # probability that X1 = 1 is 57.4%" (x1* = 2, p = 1/2).
    pt = posterior(2, "1/2", RHO1)
    assert round(float(pt.posterior) * 100, 1) == 57.4
    with mpmath.workdps(40):
        assert abs(pt.posterior - brute_posterior(2, Fraction(1, 2), RHO1)) < 1e-30


def test_seed_table5_expected_risks():
    # Seed: "the risks are between 1.05 and 1.21" (Table 5; p = 1/2 ... 1/50 at ρ1 ≈ 0.099).
    lo = expected_risk("1/2", RHO1)
    hi = expected_risk("1/50", RHO1)
    assert round(float(lo.expected_risk), 2) == 1.05
    assert round(float(hi.expected_risk), 2) == 1.21
    # brute force: Σ_z f(z) R(1 + z) over |z| ≤ 250 (remainder < e^-6000)
    for p in (Fraction(1, 2), Fraction(1, 5), Fraction(1, 10), Fraction(1, 50), Fraction(1, 864)):
        r = expected_risk(p, RHO1)
        with mpmath.workdps(40):
            brute = mpmath.fsum(brute_pmf(RHO1, z) * brute_posterior(1 + z, p, RHO1) for z in range(-250, 251))
            assert abs(r.expected_posterior - brute) < 1e-25
            assert abs(r.expected_risk - brute / mp(p)) < 1e-25 / float(p)
        assert r.error_bound < 1e-30


def test_expected_risk_under_prior_predictive_is_one():
    # E[R] over the adversary's own prior predictive is 1 (posterior averages to the prior):
    # p·E[R | has] + (1-p)·E[R | lacks] = 1 — an identity, independent of the code path.
    for p in ("1/2", "1/10", "1/864"):
        has = expected_risk(p, "0.3")
        lacks = expected_risk(p, "0.3", target_has=False)
        pf = Fraction(p)
        with mpmath.workdps(40):
            tot = mp(pf) * has.expected_risk + (1 - mp(pf)) * lacks.expected_risk
            assert abs(tot - 1) < 1e-28


@settings(max_examples=40, deadline=None)
@given(
    x=st.integers(-12, 12),
    known=st.integers(-3, 40),
    p=st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000)),
    rho=st.fractions(min_value=Fraction(1, 100), max_value=Fraction(3), max_denominator=1000),
)
def test_posterior_matches_bayes_rule_and_shifts(x, known, p, rho):
    pt = posterior(x + known, p, rho, known=known)
    with mpmath.workdps(40):
        ref = brute_posterior(x, p, rho)
        assert abs(pt.posterior - ref) < 1e-28
        # R = 1/(p + (1-p) e^{-ρ(2u-1)}): R ≤ e^{ρ(2u-1)} when u ≥ 1 (evidence for "has"),
        # R ≥ e^{ρ(2u-1)} when u ≤ 0, and always R < 1/p
        bound = mpmath.exp(mp(rho) * (2 * x - 1))
        if x >= 1:
            assert pt.risk <= bound * (1 + mpmath.mpf(10) ** -30)
        else:
            assert pt.risk >= bound * (1 - mpmath.mpf(10) ** -30)
        assert pt.risk < 1 / mp(p)
        assert abs(pt.prob_if_has - brute_pmf(rho, x - 1)) < 1e-28


@settings(max_examples=25, deadline=None)
@given(
    p=st.fractions(min_value=Fraction(1, 1000), max_value=Fraction(999, 1000)),
    rho=st.fractions(min_value=Fraction(1, 20), max_value=Fraction(3), max_denominator=1000),
    known=st.integers(0, 20),
)
def test_decision_threshold_is_smallest_x_with_posterior_above_half(p, rho, known):
    d = decision(p, rho, known=known)
    with mpmath.workdps(40):
        assert brute_posterior(d.threshold, p, rho, known) > mpmath.mpf(1) / 2
        assert brute_posterior(d.threshold - 1, p, rho, known) < mpmath.mpf(1) / 2
        n = d.threshold - known - 1
        ref = brute_sum(rho, n, 10**9)  # P[E ≥ n]
        assert abs(d.p_correct - ref) <= 1e-25 * ref or abs(d.p_correct - ref) < 1e-34
        ref0 = brute_sum(rho, -(10**9), n)  # P[E ≤ n]
        assert abs(d.p_correct_if_lacks - ref0) < 1e-25
        assert abs(d.p_correct_overall - (mp(p) * ref + (1 - mp(p)) * ref0)) < 1e-25


def test_tiny_decision_probability_keeps_relative_accuracy():
    # p = 1/864: threshold 35, P[E ≥ 34] ≈ 2.717e-51 (explicit-sum reference) — not rounded to 0.
    d = decision("1/864", RHO1)
    assert d.threshold == 35
    with mpmath.workdps(40):
        ref = brute_sum(RHO1, 34, 10**9)
        assert abs(d.p_correct / ref - 1) < 1e-25


def test_production_convention_is_paper_convention_at_half_rho():
    # σ² = 1/ρ (production) equals σ² = 1/(2·(ρ/2)) (paper) — same coefficient a = ρ/2.
    a = decision("1/5", "0.4", convention="production")
    b = decision("1/5", "0.2", convention="paper")
    assert a.threshold == b.threshold
    assert a.p_correct == b.p_correct
    assert a.convention == "production" and b.convention == "paper"
    pts = posterior_curve(range(-2, 3), "1/3", "0.4", convention="production")
    assert all(pt.convention == "production" for pt in pts)


def test_risk_tends_to_one_over_p():
    # Seed §3.1: R → 1/p as x* → ∞ (posterior → 1).
    pt = posterior(400, "1/50", "0.1")
    assert abs(float(pt.risk) - 50) < 1e-12


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"p": 0.5, "rho": "0.1"}, "p"),
        ({"p": "1/2", "rho": 0.1}, "rho1"),
        ({"p": "1", "rho": "0.1"}, "p"),
        ({"p": "1/2", "rho": "-1"}, "rho1"),
    ],
)
def test_bad_inputs_name_the_field(kwargs, field):
    with pytest.raises(InputError) as exc:
        decision(kwargs["p"], kwargs["rho"])
    assert exc.value.field == field


def test_bad_convention_and_non_integer_x():
    with pytest.raises(InputError, match="convention"):
        decision("1/2", "0.1", convention="dp")
    with pytest.raises(InputError, match="x_star"):
        posterior(1.0, "1/2", "0.1")
