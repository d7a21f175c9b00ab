"""Designs of issue 33 ("One core that can grow") that were refused, now answered and certified.

* ε ≫ ρ on the lattice route (174.9 + 2429.62×3 at ε = 1e6, which the README says is answered):
  the certified bracket [0, zCDP cap], checked against the Bun–Steinke bound computed here;
* the README's product example under ``budget_rule = "tumult-float"`` (δ ≈ 1e-12 … 1e-27 at
  the Bun–Steinke ε): the lattice-free fallback's bracket contains :class:`harness.BruteDesign`'s
  exact value;
* near-deterministic designs with ρ ≈ 10⁴ (δ ≈ |ε − ρ| near an atom at 0): the closed form of
  the dominant atom, ``δ = 1 − e^{ε−ρ}`` up to e^{−100}, computed here in 60 digits.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BruteDesign

REL = mpmath.mpf("1e-9")


def test_huge_epsilon_on_the_lattice_route_is_the_zcdp_cap():
    comp = Composition(((DiscreteGaussian(F("174.9")), 1), (DiscreteGaussian(F("2429.62")), 3)))
    acc = ExactAccountant(comp)
    (p,) = acc.delta([F(10**6)])
    with mpmath.workdps(60):
        rho = mpmath.mpf(comp.rho.numerator) / comp.rho.denominator
        cap = mpmath.exp(-((10**6 - rho) ** 2) / (4 * rho))
        assert p.lower == 0 and cap <= p.upper <= cap * (1 + mpmath.mpf(10) ** -5)


README_PRODUCT = '''format = "exactdp-product/1"
name = "my-product"
description = "One paragraph."
product = "Public name"
relation = "what one case's neighbouring datasets differ by"
budget_rule = "tumult-float"
configured_rho = "3/4"

[provenance]
source = "repository @ commit"

[budgets]
b = "1/2"
c = "1/4"

[tables]
s1 = { budget = "b", factor = "1/5", sensitivity_sq = 9 }
s2 = { budget = "b", factor = "4/5", sensitivity_sq = 9 }
d  = { budget = "b", sensitivity_sq = 9 }
u  = { budget = "c", sensitivity_sq = 484 }

[units]
adaptive = { s1 = [1], s2 = [1] }
only = { d = [1] }
household = { u = [21] }

[fixed]
household = 1

[[choice]]
name = "detailed-only groups"
labels = ["j=0", "j=1"]
options = [ { adaptive = 2 }, { adaptive = 1, only = 1 } ]
'''


def test_readme_product_under_tumult_float_against_brute_force(tmp_path):
    # (dp_accounting's "optimistic" PLD at 1e-4 is 6.0278e-13 here, above the exact 6.02163e-13:
    # not a bound on this design, so the reference is the exact enumeration)
    from exactdp.census.product_accounting import product_cases
    from exactdp.census.products import load_product

    path = tmp_path / "my-product.toml"
    path.write_text(README_PRODUCT, encoding="utf-8")
    case = product_cases(load_product(str(path)))[0]
    comp = case.composition
    eps = F(float(bun_steinke_epsilon(comp.rho, F(1, 10**10))(30)))
    (p,) = ExactAccountant(comp).delta([eps])
    value, err = BruteDesign([(m.sigma2, m.shift, n) for m, n in comp.groups], L=60).delta(eps)
    with mpmath.workdps(60):
        assert p.lower <= value + err and value - err <= p.upper, (p.lower, p.upper, value)
        assert p.upper - p.lower <= REL * value


def test_near_deterministic_design_near_rho():
    # 20 σ² ≈ 0.001–0.004 (shifts 1–3): W = 0 but for mass below e^{−120}, so for ε ≤ ρ
    # δ(ε) = 1 − e^{ε−ρ} within e^{−100} (relative 1e-40 at the δ tested)
    spec = [(F(1000 + 151 * j, 10**6), 1 + j % 3) for j in range(20)]
    comp = Composition(tuple((DiscreteGaussian(s, d), 1) for s, d in spec))
    acc = LatticeFreeAccountant(comp)
    eps = [comp.rho - F(1, 10**k) for k in (2, 6, 9)]
    with mpmath.workdps(60):
        for e, p in zip(eps, acc.delta(eps)):
            x = mpmath.mpf((e - comp.rho).numerator) / (e - comp.rho).denominator
            ref = -mpmath.expm1(x)
            slack = mpmath.exp(-100)
            assert p.lower - slack <= ref <= p.upper + slack, (float(x), p.lower, p.upper)
            assert p.upper - p.lower <= REL * ref
    (ep,) = acc.epsilon(["1e-6"])
    with mpmath.workdps(60):
        rho = mpmath.mpf(comp.rho.numerator) / comp.rho.denominator
        exact = rho + mpmath.log1p(-mpmath.mpf("1e-6"))
        assert ep.lower - mpmath.mpf(10) ** -30 <= exact <= ep.upper + mpmath.mpf(10) ** -30
