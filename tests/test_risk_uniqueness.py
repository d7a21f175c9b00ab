"""ℓ-level uniqueness attack (exactdp.risk.uniqueness) and the prior-reinterpretation attacks.

References: brute-force multiple sums over the noise values written here (mpmath at 30
digits over the kernel tables of tests/harness.py, exact rational decisions), the closed-form single-level case,
and the seed's
qualitative statements (supplement §S1.3: the risk grows with ℓ, most between ℓ = 1 and 2).
"""

from __future__ import annotations

import itertools
from fractions import Fraction

import mpmath
import pytest

from exactdp.numerics.exact import InputError
from exactdp.risk import (
    ATTACKS,
    assess_attack,
    decision,
    expected_risk,
    uniqueness_attack,
    uniqueness_curve,
    uniqueness_posterior,
)
from exactdp.risk.presets import PRESETS
from exactdp.risk.uniqueness import SIGMA4_SUP

from harness import kernel_pmf, mp


def brute(p, rhos, K):
    """(E[posterior | X=1], P[posterior > 1/2 | X=1]) by the full sum over |η_i| ≤ K."""
    p = Fraction(p)
    with mpmath.workdps(30):
        pmfs = [kernel_pmf(r, K) for r in rhos]
        lpo = mpmath.log(mp(p) / (1 - mp(p)))
        e_post, p_corr = [], []
        for etas in itertools.product(range(-K, K + 1), repeat=len(rhos)):
            wt = mpmath.fprod(pm[e] for pm, e in zip(pmfs, etas))
            W = sum((Fraction(r) * (2 * (1 + e) - 1) for r, e in zip(rhos, etas)), Fraction(0))
            Wm = mp(W)
            e_post.append(wt / (1 + mpmath.exp(-(lpo + Wm))))
            decide = (W > 0) if p == Fraction(1, 2) else (lpo + Wm > 0)
            if decide:
                p_corr.append(wt)
        return mpmath.fsum(e_post), mpmath.fsum(p_corr)


def brute_tie_mass(rhos, K):
    f = [kernel_pmf(r, K) for r in rhos]
    tot = mpmath.mpf(0)
    for e1, e2 in itertools.product(range(-K, K + 1), repeat=2):
        if rhos[0] * (2 * e1 + 1) + rhos[1] * (2 * e2 + 1) == 0:
            tot += f[0][e1] * f[1][e2]
    return tot


def test_sigma_fourth_derivative_bound():
    # SIGMA4_SUP must dominate |σ''''| (sampled with mpmath.diff on a fine grid).
    sig = lambda t: 1 / (1 + mpmath.exp(-t))  # noqa: E731
    worst = max(abs(mpmath.diff(sig, t, 4)) for t in mpmath.linspace(-10, 10, 801))
    assert worst < SIGMA4_SUP < worst * 1.001


def test_one_level_equals_single_level():
    rho = PRESETS["paper"].rho_block
    for p in ("1/2", "1/10"):
        r = uniqueness_attack(p, (rho,))
        single = expected_risk(p, rho)
        d = decision(p, rho)
        assert abs(r.expected_posterior - float(single.expected_posterior)) <= r.error_bound + 1e-15
        assert abs(r.p_correct - float(d.p_correct)) <= r.p_correct_error_bound + 1e-15
        assert r.error_bound < 1e-12


@pytest.mark.parametrize("p", ["1/5", "1/2"])
def test_two_levels_against_brute_double_sum(p):
    rhos = (Fraction(1, 2), Fraction(1, 3))  # |η| ≤ 14 leaves out < e^-65
    r = uniqueness_attack(p, rhos)
    ref_post, ref_pc = brute(p, rhos, 14)
    assert abs(r.expected_posterior - float(ref_post)) <= r.error_bound + 1e-15
    assert abs(r.p_correct - float(ref_pc)) <= r.p_correct_error_bound + 1e-15
    assert r.expected_risk == pytest.approx(float(ref_post / mp(Fraction(p))),
                                            abs=r.error_bound / float(Fraction(p)) + 1e-14)


@pytest.mark.parametrize("rhos", [(Fraction(1, 2), Fraction(1, 2)), (Fraction(1, 2), Fraction(1, 6))])
def test_exact_ties_are_decided_exactly(rhos):
    # p = 1/2: Σ ρ_i (2x_i* - 1) = 0 happens exactly (η1 + η2 = -1 for equal ρ; 3(2η1+1) = -(2η2+1)
    # for 1/2, 1/6); the posterior is then exactly 1/2 and the adversary decides "lacks".
    r = uniqueness_attack("1/2", rhos)
    ref_post, ref_pc = brute("1/2", rhos, 16)  # |η| ≤ 16 leaves out < e^-40
    assert abs(r.p_correct - float(ref_pc)) <= r.p_correct_error_bound + 1e-15
    assert abs(r.expected_posterior - float(ref_post)) <= r.error_bound + 1e-15
    with mpmath.workdps(30):
        # the tie mass is large, so a wrong tie rule could not pass the check above
        tie = brute_tie_mass(rhos, 16)
    assert tie > 0.05


def test_closed_form_posterior():
    rhos = ("1/2", "1/4", "1/8")
    with mpmath.workdps(40):
        v = uniqueness_posterior((2, 0, 1), "1/5", rhos)
        # likelihood ratio Π exp(-ρ_i((x_i-1)² - x_i²)) = exp(Σ ρ_i (2x_i - 1))
        lr = mpmath.exp(mpmath.mpf(1) / 2 * 3 + mpmath.mpf(1) / 4 * (-1) + mpmath.mpf(1) / 8 * 1)
        ref = mpmath.mpf(1) / 5 * lr / (mpmath.mpf(1) / 5 * lr + mpmath.mpf(4) / 5)
        assert abs(v - ref) < 1e-35


def test_seed_figure7_risk_grows_with_ell_most_from_one_to_two():
    # Supplement §S1.3: "the risk increases as a function of ℓ ... the increase is most
    # substantial between ℓ = 1 and ℓ = 2, since ρ2 is the largest privacy parameter".
    rhos = PRESETS["paper"].level_rhos()
    for p in ("1/2", "1/50"):
        curve = uniqueness_curve(p, rhos)
        risks = [c.expected_risk for c in curve]
        assert all(b > a for a, b in zip(risks, risks[1:]))
        steps = [b - a for a, b in zip(risks, risks[1:])]
        assert steps[0] == max(steps)
        assert max(c.error_bound for c in curve) < 1e-12
        assert [c.ell for c in curve] == [1, 2, 3, 4, 5, 6]


def test_prior_reinterpretation_attacks_are_the_single_level_formulas():
    rho = PRESETS["paper"].rho_block
    assert set(ATTACKS) == {"characteristics", "participation", "misreporting", "unknown-variable"}
    base = decision("1/10", rho)
    for name in ATTACKS:
        a = assess_attack(name, "1/10", rho)
        assert a.decision.p_correct == base.p_correct and a.decision.threshold == base.threshold
        assert a.attack.name == name
    with pytest.raises(InputError) as exc:
        assess_attack("participation", "3/2", rho)
    assert exc.value.field == "p_f"
    with pytest.raises(InputError, match="attack"):
        assess_attack("linkage", "1/2", rho)


def test_uniqueness_input_errors():
    with pytest.raises(InputError):
        uniqueness_attack("1/2", ())
    with pytest.raises(InputError) as exc:
        uniqueness_attack("1/2", ("0.1", 0.2))
    assert exc.value.field == "rho[2]"
    with pytest.raises(InputError, match="x_stars"):
        uniqueness_posterior((1,), "1/2", ("0.1", "0.2"))
