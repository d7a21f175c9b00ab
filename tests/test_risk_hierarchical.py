"""Two-level posterior and decision probabilities (exactdp.risk.hierarchical) vs brute force.

References written here, independent of the package:

* ``brute_log_odds``: the joint posterior summed term by term over X2 (no completing the
  square, no log-sum-exp) in mpmath at 40 digits, up to X2 = x2* + 40/sqrt(a2) (remainder
  < e^-1600), and the Gibbs-variant stationary law from the 2×2 transition matrix;
* the d-fold convolution of discrete Gaussians in mpmath (``kernel_sum_pmf`` of
  tests/harness.py, with ``kernel_pmf`` and ``theta3`` for the single laws);
* ``brute_decision_probability``: the triple sum over (x1*, x2*, y1*) with the cell
  decisions from ``brute_log_odds``;
* numbers quoted in the seed (Kazan and Reiter, arXiv 2204.04253, §4.2).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from exactdp.numerics.exact import InputError
from exactdp.risk import HierarchicalSetup, decision_map, decision_probability, hierarchical_posterior
from exactdp.risk.presets import PRESETS

from harness import kernel_pmf, kernel_sum_pmf, mp, theta3

P = PRESETS["paper"]
RHO1, RHO2 = P.rho_block, P.rho_block_group  # ≈ 0.0992, 0.2465 (seed: 0.099, 0.246)


def brute_log_odds(s: HierarchicalSetup, x1s, x2s, y1s, kernel=None):
    """Posterior log-odds of X1 = known+1 by direct summation (mpmath, current precision)."""
    x1s -= s.known
    x2s -= s.known
    a1, a2, b, p = mp(s.a1), mp(s.a2), mp(s.b), mp(s.p)
    if kernel is None:
        def kernel(u):
            return mpmath.exp(-b * u * u)
    top = max(x2s, 0) + int(40 / mpmath.sqrt(a2)) + 1
    f = lambda z: mpmath.exp(-a1 * z * z)  # noqa: E731 (normaliser cancels)
    g = lambda j: mpmath.exp(-a2 * (x2s - j) ** 2)  # noqa: E731
    w = {0: (1 - p) * f(x1s), 1: p * f(x1s - 1)}
    if s.model == "joint":
        S = {x: mpmath.fsum(g(j) * kernel(y1s + x - j) for j in range(x, top)) for x in (0, 1)}
        return mpmath.log(w[1] * S[1]) - mpmath.log(w[0] * S[0])
    # Gibbs variant: X2 | X1 = x on j ≥ x; X1 | X2 = j without the indicator
    q = {}
    for x in (0, 1):
        t = {j: g(j) * kernel(y1s + x - j) for j in range(x, top)}
        tot = mpmath.fsum(t.values())
        q[x] = {j: v / tot for j, v in t.items()}
    P1 = {j: w[1] * kernel(y1s + 1 - j) / (w[1] * kernel(y1s + 1 - j) + w[0] * kernel(y1s - j)) for j in range(0, top)}
    k01 = mpmath.fsum(q[0][j] * P1[j] for j in q[0])
    k10 = mpmath.fsum(q[1][j] * (1 - P1[j]) for j in q[1])
    return mpmath.log(k01) - mpmath.log(k10)


GRID = [(2, 1, -1), (0, -3, 30), (5, 8, -30), (1, 0, 0), (-4, 12, 3), (3, 40, 45)]


@pytest.mark.parametrize("model", ["joint", "gibbs-variant"])
def test_posterior_matches_brute_force(model):
    s = HierarchicalSetup(RHO1, RHO2, 27, "1/2", model=model)
    for D in GRID:
        res = hierarchical_posterior(s, *D)
        with mpmath.workdps(40):
            ref = 1 / (1 + mpmath.exp(-brute_log_odds(s, *D)))
            assert abs(res.posterior - ref) < 1e-30, D
        assert res.error_bound < 1e-30
        assert res.method == "mpmath"


def test_seed_table7_and_table8():
    # Seed §4.2, D = (2, 1, -1), p = 1/2: "the posterior places more weight on X1 = 1 than X1 = 0,
    # but the difference is only slight"; without hierarchy 57.4%; Table 8: "40% of the mass on
    # X2 = 1".  Brute force gives 50.33% / 38.66% (coherent joint) and 57.77% / 39.50% (variant).
    joint = hierarchical_posterior(HierarchicalSetup(RHO1, RHO2, 27, "1/2"), 2, 1, -1)
    var = hierarchical_posterior(HierarchicalSetup(RHO1, RHO2, 27, "1/2", model="gibbs-variant"), 2, 1, -1)
    assert 0.5 < float(joint.posterior) < float(joint.single_level_posterior)  # slight, and a decrease
    assert round(float(joint.single_level_posterior) * 100, 1) == 57.4
    pj = dict(zip(joint.x2_values, joint.x2_probs))
    pv = dict(zip(var.x2_values, var.x2_probs))
    assert round(float(pv[1]) * 100) == 40
    assert abs(float(pj[1]) - 0.38659507229113) < 1e-12
    # brute-force X2 marginal of the joint: P[X2 = j] ∝ Σ_{x ≤ j} w_x f2(x2*-j) k(y1*+x-j)
    with mpmath.workdps(40):
        a1, a2, b = mp(RHO1), mp(RHO2), mp(RHO1 / 27)
        w = {0: mpmath.exp(-a1 * 4), 1: mpmath.exp(-a1)}
        m = {j: sum(w[x] * mpmath.exp(-a2 * (1 - j) ** 2 - b * (-1 + x - j) ** 2) for x in (0, 1) if x <= j)
             for j in range(0, 200)}
        tot = mpmath.fsum(m.values())
        for j in range(0, 6):
            assert abs(pj[j] - m[j] / tot) < 1e-30


def test_known_count_shifts_block_and_block_group_values():
    s0 = HierarchicalSetup(RHO1, RHO2, 27, "1/5")
    s7 = s0.replace(known=7)
    for x1s, x2s, y1s in GRID[:3]:
        a = hierarchical_posterior(s0, x1s, x2s, y1s).posterior
        b = hierarchical_posterior(s7, x1s + 7, x2s + 7, y1s).posterior
        with mpmath.workdps(40):
            assert abs(a - b) < 1e-35


def test_exact_y_noise_against_brute_convolution():
    # ρ1 = 1/2, d = 3: the sum of three DG(0, 1) is measurably not a discrete Gaussian.
    s = HierarchicalSetup("1/2", "1/3", 3, "1/3", y_noise="exact")
    with mpmath.workdps(40):
        h = kernel_sum_pmf(Fraction(1, 2), 3)

        def kernel(u):
            return h.get(int(u), mpmath.mpf(0))

        for D in [(1, 2, 0), (0, 0, 3), (2, 5, -2), (-1, 1, 4)]:
            for model in ("joint", "gibbs-variant"):
                sm = s.replace(model=model)
                res = hierarchical_posterior(sm, *D)
                ref = 1 / (1 + mpmath.exp(-brute_log_odds(sm, *D, kernel=kernel)))
                assert res.method == "float64"
                assert res.error_bound < 1e-10
                assert abs(res.posterior - float(ref)) <= res.error_bound + 1e-15, (D, model)
                approx = hierarchical_posterior(sm.replace(y_noise="approx"), *D)
                # the approximation differs here by 5e-8 … 5e-7, far above the error bound
                assert abs(float(approx.posterior) - float(ref)) > 1e-8 > 1000 * res.error_bound


def test_exact_and_approx_y_noise_agree_at_census_rho():
    # Poisson summation: the d-fold DG convolution equals the discrete Gaussian of variance
    # d/(2ρ1) up to relative corrections of order exp(-π²/(2ρ1)) ≈ 1e-22 at ρ1 ≈ 0.099, so the
    # two posteriors agree to rounding (the paper's "very accurate" approximation, §S2).
    s = HierarchicalSetup(RHO1, RHO2, 27, "1/2")
    assert math.exp(-math.pi**2 / (2 * float(RHO1))) < 1e-21
    for D in GRID:
        a = hierarchical_posterior(s, *D)
        e = hierarchical_posterior(s.replace(y_noise="exact"), *D)
        assert abs(float(a.posterior) - e.posterior) <= e.error_bound + 1e-15


def brute_decision_probability(s: HierarchicalSetup, x2, Kx1=10, Kx2=7, Ky=14):
    """Σ f1 f2 h 1{decide has} for truth (1, x2, x2-1), cell decisions from brute_log_odds (joint)."""
    a1, a2 = Fraction(s.a1), Fraction(s.a2)
    with mpmath.workdps(30):
        f1, f2 = kernel_pmf(a1, 60), kernel_pmf(a2, 60)
        h = kernel_sum_pmf(a1, s.d, K=30)
        y1 = x2 - 1
        lpo = mpmath.log(mp(s.p) / (1 - mp(s.p)))
        total = mpmath.mpf(0)
        for x2s in range(x2 - Kx2, x2 + Kx2 + 1):
            w2 = f2[x2s - x2]
            for y1s in range(y1 - Ky, y1 + Ky + 1):
                wy = h.get(y1s - y1, 0)
                # joint model: log-odds = lpo + a1(2x1*-1) + L(x2*, y1*); L from x1* = 0
                L = brute_log_odds(s, 0, x2s, y1s) - lpo - mp(a1) * (-1)
                for x1s in range(1 - Kx1, 1 + Kx1 + 1):
                    if lpo + mp(a1) * (2 * x1s - 1) + L > 0:
                        total += w2 * wy * f1[x1s - 1]
        return total


def test_decision_probability_against_brute_triple_sum():
    # ρ1 = 1, ρ2 = 2, d = 2, p = 1/3: the windows of the brute sum leave out < 4e-42 of each
    # released value (DG tails e^-100, e^-98; sub-Gaussian sum tail 2e^-98).
    s = HierarchicalSetup("1", "2", 2, "1/3")
    for x2 in (1, 3):
        dp = decision_probability(s, x2)
        ref = brute_decision_probability(s, x2)
        assert abs(dp.estimate - float(ref)) <= dp.error_bound + 1e-15
        assert dp.left_out <= 1e-12
        assert dp.ambiguous_mass == 0.0


def test_seed_decision_curve_is_exact_with_tiny_left_out_mass():
    # "Done when": the decision-probability-vs-x2 curve is exact with left-out mass ≤ 1e-12.
    s = HierarchicalSetup(RHO1, RHO2, 27, "1/2")
    values = []
    for x2 in (1, 2, 3, 5, 10, 100):
        dp = decision_probability(s, x2)
        assert dp.left_out <= 1e-12
        assert dp.error_bound <= 1e-12
        # the single-level part: 58.89% (seed), identical for every x2
        assert round(float(dp.single_level) * 100, 2) == 58.89
        # decomposition: value - single = changed_correct - changed_incorrect
        assert abs(dp.estimate - float(dp.single_level) - (dp.changed_correct - dp.changed_incorrect)) < 1e-12
        values.append(dp.estimate)
    # far from the X2 ≥ X1 boundary the coherent posterior gains a little (58.97% vs 58.89%),
    # the 'independent measurement X2* - Y1*' limit; at x2 = 1 the flat prior penalises X1 = 1.
    assert values[-1] > float(dp.single_level)
    assert abs(values[-1] - values[-2]) < 1e-6
    assert values[0] < 0.33  # 31.82% for the coherent joint posterior (brute-force checked above)


def test_gibbs_variant_reproduces_the_seeds_figure5_pattern():
    # Seed §4.2: "x2 = 1 is a clear outlier; the probability ... is higher than when ignoring
    # hierarchical information, and higher than for x2 > 1"; Figure 4: the hierarchy changes
    # decisions correctly on 2.48% and wrongly on 1.83% of the mass (net +0.65 points).  The
    # variant sampler gives 2.38% / 1.81% (net +0.57) — the coherent posterior does not.
    s = HierarchicalSetup(RHO1, RHO2, 27, "1/2", model="gibbs-variant")
    one, five = decision_probability(s, 1), decision_probability(s, 5)
    single = float(one.single_level)
    assert one.estimate > five.estimate > single
    assert 0.003 < one.estimate - single < 0.01
    assert 0.02 < one.changed_correct < 0.03 and 0.015 < one.changed_incorrect < 0.02
    assert one.left_out <= 1e-12


def test_decision_map_matches_brute_decisions():
    s = HierarchicalSetup(RHO1, RHO2, 27, "1/2")
    dm = decision_map(s, truth_x2=1)
    assert dm.decide_has.shape == (2, 9, 61) and dm.certified.all()
    assert dm.single_decide_has == (False, True)
    rng = np.random.default_rng(3)
    with mpmath.workdps(40):
        for _ in range(12):
            i, j, m = rng.integers(0, 2), rng.integers(0, 9), rng.integers(0, 61)
            lo = brute_log_odds(s, dm.x1_stars[i], dm.x2_stars[j], dm.y1_stars[m])
            assert bool(lo > 0) == bool(dm.decide_has[i, j, m])
            assert abs(dm.log_odds[i, j, m] - float(lo)) <= dm.log_odds_error_bound[i, j, m] + 1e-15
    # the seed's region (-3 ≤ x2* ≤ 5, -30 ≤ y1* ≤ 30) "contains over 99% of the probability mass":
    # cell_prob[i] sums to P[X1* = x1*] · (region mass); P[X1* = 0 | x1 = 1] = e^{-ρ1}/Z(ρ1) (θ3).
    with mpmath.workdps(30):
        f_minus1 = mpmath.exp(-mp(RHO1)) / theta3(RHO1)
    # (exactly: 98.98% with d = 27 — slightly under the quoted 99%)
    region = dm.cell_prob[0].sum() / float(f_minus1)
    assert 0.985 < region < 0.99


def test_input_errors():
    s = HierarchicalSetup(RHO1, RHO2, 27, "1/2")
    with pytest.raises(InputError) as exc:
        decision_probability(s, 0)  # x2 < x1 = 1
    assert exc.value.field == "x2"
    with pytest.raises(InputError) as exc:
        HierarchicalSetup(RHO1, 0.25, 27, "1/2")
    assert exc.value.field == "rho2"
    with pytest.raises(InputError) as exc:
        HierarchicalSetup(RHO1, RHO2, 0, "1/2")
    assert exc.value.field == "d"
    with pytest.raises(InputError, match="y_noise"):
        HierarchicalSetup(RHO1, RHO2, 3, "1/2", y_noise="gauss")
    with pytest.raises(InputError, match="model"):
        HierarchicalSetup(RHO1, RHO2, 3, "1/2", model="mcmc")


def test_near_ties_at_large_rho2_are_resolved_in_multiprecision():
    # ρ2 = 100, d = 27 (odd): X2 is known to within e^-100, and with the approximation kernel the
    # log-odds a1(2x1* - 1) - (a1/d)(2(y1* - x2*) + 1) vanish exactly on a lattice of cells; the
    # e^-100 corrections decide them, far below binary64, so the multiprecision pass must run.
    # Independent bracket (ρ2 → ∞ limit, brute force here): strict and non-strict tie rules.
    s = HierarchicalSetup(RHO1, "100", 27, "1/2")
    dp = decision_probability(s, 10)
    assert dp.ambiguous_mass == 0.0
    a1 = float(RHO1)
    K = 60
    z = np.arange(-K, K + 1)
    f = np.exp(-a1 * z * z)
    f /= f.sum()
    h = np.array([1.0])
    for _ in range(27):
        h = np.convolve(h, f)
    xi = np.arange(h.size) - 27 * K  # Y1* - y1 noise
    E, X = np.meshgrid(z, xi, indexing="ij")
    # x1* = 1 + E, y1* - x2* = -1 + X; score·d/a1 = d(2x1* - 1) - (2(y1* - x2*) + 1) (integers)
    score = 27 * (2 * (1 + E) - 1) - (2 * (X - 1) + 1)
    W = np.outer(f, h)
    strict, loose = W[score > 0].sum(), W[score >= 0].sum()
    assert strict + 1e-12 < dp.estimate < loose - 1e-12
