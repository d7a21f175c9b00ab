"""The lattice-free route: independent checks beside the brute-force campaign.

* dp_accounting's PLD sandwich: for designs too large for brute force, the certified δ
  bracket must lie between PLD's optimistic and pessimistic estimates (both are bounds
  by construction; no float error can fake the inclusion) at δ ≥ 1e-8;
* the trade-off curve by convex duality against the exact Neyman–Pearson vertices of the
  enumerated loss distribution (``harness.tradeoff_brute``), α from 1e-6 to 1 − 1e-6;
* the complement: ``1 − δ`` from positive terms overlaps ``1 − δ``'s own bracket, and
  carries δ within 1e-30 of 1;
* deep δ (below 1e-300, down to ~1e-500) against :class:`harness.BruteDesign`;
* the planner: decimal designs the issue lists go to this route and answer certified.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BRUTE_ABS_ERROR, BruteDesign, pld_pair, tradeoff_brute

REL = mpmath.mpf("1e-9")


def _design(spec) -> Composition:
    return Composition(tuple((DiscreteGaussian(F(s2), d), m) for s2, d, m in spec))


FIVE = [("174.9", 1, 1), ("1522.8", 1, 1), ("113.4", 1, 1), ("1301.5", 1, 1), ("210.5", 1, 1)]
THREE_BY_TEN = [("2588.462", 1, 10), ("1361.867", -1, 10), ("1018.116", 2, 10)]
TWELVE = [(v, 1, 1) for v in ("1.21", "19.66", "485.92", "1214.81", "2429.62", "3.17", "77.7", "5.55", "12.34",
                              "250.01", "999.99", "42.42")]


def _pld_bounds(comp: Composition, eps: float) -> tuple:
    """(optimistic, pessimistic) δ of dp_accounting's PLD at its default discretisation."""
    opt, pess = pld_pair(comp)
    return opt.get_delta_for_epsilon(eps), pess.get_delta_for_epsilon(eps)


def test_rho_400_mix_inside_the_pld_sandwich():
    # four incommensurate small-σ² families with large shifts (ρ ≈ 401): refused before the
    # enumerated rest's tables; δ and ε(δ) must lie between PLD's optimistic and pessimistic
    comp = _design([("33.3333", 8, 2), ("485.92", -8, 1), ("9.8696", 7, 11), ("1.21", -5, 36)])
    acc = LatticeFreeAccountant(comp)
    opt, pess = pld_pair(comp, interval=1e-3)
    for target in (F(1, 100), F(1, 10**6), F(1, 10**8)):
        eps = float(bun_steinke_epsilon(comp.rho, target)(30))
        (p,) = acc.delta([F(eps)])
        assert opt.get_delta_for_epsilon(eps) <= p.lower <= p.upper <= pess.get_delta_for_epsilon(eps)
        (e,) = acc.epsilon([target])
        d = float(target)
        assert opt.get_epsilon_for_delta(d) <= e.lower <= e.upper <= pess.get_epsilon_for_delta(d)
        with mpmath.workdps(40):
            assert p.upper - p.lower <= REL * p.upper and e.upper - e.lower <= REL * e.upper


@pytest.mark.parametrize("spec", [FIVE, THREE_BY_TEN, TWELVE], ids=["five", "three-by-ten", "twelve"])
def test_delta_lies_inside_the_pld_sandwich(spec):
    comp = _design(spec)
    acc = LatticeFreeAccountant(comp)
    for target in (F(1, 100), F(1, 10**5), F(1, 10**8)):
        eps = float(bun_steinke_epsilon(comp.rho, target)(30))
        (p,) = acc.delta([F(eps)])
        lo, hi = _pld_bounds(comp, eps)
        assert lo <= p.lower <= p.upper <= hi, (spec[0], float(target), lo, float(p.lower), float(p.upper), hi)
        with mpmath.workdps(40):
            assert p.upper - p.lower <= REL * p.upper


SMALL = [(F("0.7"), 1, 1), (F("1.3"), 2, 1), (F("0.15"), -1, 1)]


@pytest.mark.parametrize("spec", [SMALL], ids=["small"])
def test_tradeoff_by_duality_contains_the_neyman_pearson_curve(spec):
    comp = _design([(str(s2), d, m) for s2, d, m in spec])
    alphas = ["1e-6", "0.5", "0.999999"]
    pts = LatticeFreeAccountant(comp).tradeoff(alphas)
    for alpha, p in zip(alphas, pts):
        ref = tradeoff_brute([(s2, d) for s2, d, m in spec for _ in range(m)], F(alpha))
        with mpmath.workdps(60):  # the reference is accurate to BRUTE_ABS_ERROR absolute
            assert p.lower <= ref + BRUTE_ABS_ERROR and ref - BRUTE_ABS_ERROR <= p.upper, (alpha, p.lower, ref)
            if ref > 1e10 * BRUTE_ABS_ERROR:
                assert p.upper - p.lower <= REL * ref, (alpha, float((p.upper - p.lower) / ref))


def test_tradeoff_at_huge_rho_is_certified():
    # ρ ≈ 2000: the maximiser's ε is beyond binary64's exp range (the proposals work in log
    # form), and a chord-peak point that does not certify re-centres the stencil (both
    # raised before); β is below 1e-600, beyond the 60-digit Neyman–Pearson reference, so
    # the check is the brackets' consistency: ordered, within [0, 1 − α], compatible with a
    # non-increasing β, and β(1/2) certified to 1e-9 relative
    comp = _design([("1/1000", 2, 1), ("2.37", 1, 1), ("0.61", -1, 1)])
    pts = LatticeFreeAccountant(comp).tradeoff(["1e-6", "0.5", "0.999999"])
    with mpmath.workdps(60):
        for p in pts:
            assert 0 <= p.lower <= p.upper <= 1 - p.alpha
        assert pts[0].upper >= pts[1].lower and pts[1].upper >= pts[2].lower  # β non-increasing
        assert 0 < pts[1].lower and pts[1].upper - pts[1].lower <= REL * pts[1].upper < mpmath.mpf(10) ** -600


def test_complement_overlaps_the_profile_and_resolves_delta_near_one():
    comp = _design([("0.5", 6, 34), ("1.16", 8, 1), ("1.1", 2, 3)])  # ρ ≈ 1257: δ(ε) ≈ 1 for ε ≪ ρ
    acc = LatticeFreeAccountant(comp)
    eps = np.array([0.0, 10.0, 1200.0, 1257.0, 1300.0])
    lo, hi = acc.log_delta_at(eps, eps)
    c_lo, c_hi = acc.log_complement_at(eps, eps)
    for k in range(eps.size):
        d_lo, d_hi = math.exp(lo[k]), math.exp(hi[k])
        assert 1 - math.exp(c_hi[k]) <= d_hi + 1e-15 and d_lo <= 1 - math.exp(c_lo[k]) + 1e-15
    (p,) = acc.delta([F(10)])
    ref, err = BruteDesign([(F("0.5"), 6, 34), (F("1.16"), 8, 1), (F("1.1"), 2, 3)], L=400).delta(F(10))
    with mpmath.workdps(60):
        assert p.lower <= ref + err and ref - err <= p.upper
        assert 1 - p.lower < mpmath.mpf(10) ** -30  # the complement carried it, not 1 − δ's bracket


def test_delta_within_1e_30_of_one_contains_brute_force():
    # 1 − δ(0) ≈ 2.6e-30, known to 1e-12 from the complement: 1 − C rounds at the result's 40
    # digits by more than C's own width, so the bracket is widened relative to the result
    # (it had collapsed to one number 9e-43 off the truth: found by the campaign)
    spec = [(F(1, 2), 4, 14), (F(1, 10), -1, 2), (F(2, 25), -2, 1)]
    comp = _design([(str(s2), d, m) for s2, d, m in spec])
    (p,) = LatticeFreeAccountant(comp).delta([F(0)])
    ref, err = BruteDesign(spec, L=200).delta(F(0))
    with mpmath.workdps(60):
        assert p.lower <= ref + err and ref - err <= p.upper, (p.lower, ref, p.upper)
        assert p.upper - p.lower <= REL * ref


def test_deep_delta_below_the_float_range_against_brute_force():
    spec = [(F("7.25"), 1, 3), (F("0.35"), 2, 1), (F("0.61"), -1, 1)]
    comp = _design([(str(s2), d, m) for s2, d, m in spec])
    acc = LatticeFreeAccountant(comp)
    ref_design = BruteDesign(spec, L=1700)
    for eps in (F(60), F(160), F(200)):  # δ ≈ 1e-48, 1e-370, 1e-580
        (p,) = acc.delta([eps])
        ref, err = ref_design.delta(eps)
        with mpmath.workdps(60):
            assert ref < mpmath.mpf(10) ** -300 or eps == 60
            assert p.lower <= ref + err and ref - err <= p.upper, (eps, p.lower, ref, p.upper)
            assert p.upper - p.lower <= REL * ref


@pytest.mark.parametrize("spec", [FIVE, TWELVE], ids=["five", "twelve"])
def test_planner_sends_decimal_designs_here_and_they_answer(spec):
    comp = _design(spec)
    acc = ExactAccountant(comp)
    assert acc.route == "lattice-free" and isinstance(acc.answerer, LatticeFreeAccountant)
    (e,) = acc.epsilon(["1e-10"])
    (b,) = acc.tradeoff(["0.05"])
    with mpmath.workdps(40):
        assert 0 < e.lower <= e.upper and e.upper - e.lower <= REL * e.upper
        assert 0 < b.lower <= b.upper and b.upper - b.lower <= REL * b.upper


def test_enumerated_rest_brackets_contain_brute_force():
    # D_R(x) = δ_R(x + ρ_R) and C_R = 1 − D_R of a small-support rest, summed over its atoms
    from exactdp.engine.enumerated_rest import EnumeratedRest, rest_fits
    from exactdp.engine.families import groups_of

    assert rest_fits(groups_of(Composition.from_sigma2(["3.14159"])))
    design = ((F("1.1"), 1, 1), (F("2.37"), -2, 2))  # 60,363 atoms: above the planner's limit, not the method's
    comp = Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in design))
    rest = EnumeratedRest(groups_of(comp))
    xs = np.array([-7.5, -1.25, -0.1, 0.0, 0.3, 2.0, 9.0, 25.0, 45.0, 60.0])  # the last two: deep atoms
    lo, hi = rest.log_brackets(xs)
    clo, chi = rest.log_complement(xs)
    ref = BruteDesign(design, L=700)  # δ down to e^{-700}: 110 digits, no truncation above it
    with mpmath.workdps(60):
        for x, a, b, ca, cb in zip(xs.tolist(), lo, hi, clo, chi):
            d, err = ref.delta(F(x) + comp.rho)
            assert err < d * 1e-20
            assert a <= mpmath.log(d) <= b and b - a <= 1e-9, (x, a, b, mpmath.log(d))
            assert ca <= mpmath.log(1 - d) <= cb and cb - ca <= 1e-9, (x, ca, cb)



def test_near_deterministic_group_beside_a_huge_variance_contains_brute_force():
    # σ² = 1e7 × 1000 beside σ² = 1/1000 shift 3: the smoothed inversion of the whole design
    # could not resolve the near-deterministic group's clumps (δ(ρ + 5) was refused, 3.4e-5 wide);
    # conditioned on it, the bracket is ≤ 1e-9
    spec = [(F(10**7), 100, 1000), (F(1, 1000), 3, 1)]
    comp = _design([(str(s2), d, m) for s2, d, m in spec])
    acc = LatticeFreeAccountant(comp)
    ref_design = BruteDesign(spec, L=1500)
    for eps in (F(4505), F(5070)):  # δ ≈ 5.8e-7, 7e-218
        (p,) = acc.delta([eps])
        ref, err = ref_design.delta(eps)
        with mpmath.workdps(60):
            assert p.lower <= ref + err and ref - err <= p.upper, (eps, p.lower, ref, p.upper)
            assert p.upper - p.lower <= REL * ref


def test_tradeoff_on_a_clumpy_design_is_located_and_certified():
    # β(1e-9) ≈ 5.3e-78: the Gaussian model's proposals miss the maximiser on this clumpy design
    # (a refusal, [0, 1.4e-75]); the fallback locates it on the oracle's own estimates.  Every
    # ε gives a lower bound e^ε(1 − α − δ(−ε)) of β (ε < 0); the brute-force δ at the
    # engine's bracket of points must not exceed the certified upper end
    spec = [(F("12.5"), -7, 40), (F("0.013"), 2, 1), (F("0.3"), 0, 1)]
    comp = _design([(str(s2), d, m) for s2, d, m in spec])
    alpha = F(1, 10**9)
    (b,) = LatticeFreeAccountant(comp).tradeoff([alpha])
    ref = BruteDesign(spec, L=1500)
    with mpmath.workdps(60):
        assert 0 < b.lower and b.upper - b.lower <= REL * b.upper
        best = mpmath.mpf(0)
        for k in range(-40, 41):  # a grid of ε < 0 around the maximiser
            e = -F(157) - F(k, 10)
            d, err = ref.delta(-e)
            one_minus = 1 - mpmath.mpf(alpha.numerator) / alpha.denominator
            best = max(best, mpmath.exp(mpmath.mpf(e.numerator) / e.denominator) * (one_minus - d - err))
        assert 0 < best <= b.upper, (best, b.upper)
