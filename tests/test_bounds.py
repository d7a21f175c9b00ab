"""Tests of exactdp.conversions.bounds: closed forms, brute-force sums written here, published numbers,
and validity of every bound against exact profiles over a grid of designs.

References:
* ../shared/notes/dhc_model.md §3.4 (the project notes beside the checkout, see
  tests/conftest.py; computed from the closed forms, independently of this code):
  DHC persons rho = 24811/5000 at delta = 1e-10: BS 26.3406, CKS 25.419, GDP 24.4565;
  PL94 persons 17.144 and PL94 units 2.475 (CKS), the Census' published 17.14 / 2.47.
* brute-force pmf sums and privacy-loss distributions of the discrete Gaussian
  (tests/harness.py, 60 digits, independent of the package).
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from exactdp.accounting.accountant import ExactAccountant
from exactdp.conversions.bounds import (
    bun_steinke_delta,
    bun_steinke_eps,
    cks_delta,
    cks_epsilon,
    gdp_delta,
    gdp_epsilon,
    gdp_mu,
    rdp_delta,
    rdp_epsilon,
    renyi_divergence,
)
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.exact import InputError

from harness import delta_brute, dg_pmf

DHC_RHO = F(24811, 5000)


def _le(a, b, rel="1e-25"):
    """a <= b up to a relative slack (evaluated at 80 digits, so the slack is not rounded away)."""
    with mpmath.workdps(80):
        return a <= b + abs(b) * mpmath.mpf(rel)


# ----------------------------------------------------------------------------- brute force
def _mechs(groups):
    """(σ², shift, count) groups as the harness's list of (σ², shift) mechanisms."""
    return [(s2, shift) for s2, shift, count in groups for _ in range(count)]


# ----------------------------------------------------------------------------- closed forms
def test_published_conversions_dhc_persons():
    # ../shared/notes/dhc_model.md §3.4: BS 26.3406, CKS 25.419, GDP 24.4565 (rho = 4.9622, delta = 1e-10)
    assert float(bun_steinke_eps(DHC_RHO, "1e-10").epsilon) == pytest.approx(26.3406, abs=5e-5)
    assert float(cks_epsilon(DHC_RHO, "1e-10").epsilon) == pytest.approx(25.419, abs=5e-4)
    assert float(gdp_epsilon(DHC_RHO, "1e-10").epsilon) == pytest.approx(24.4565, abs=5e-5)


@pytest.mark.parametrize(
    "rho, published",
    [
        (F(542, 339) ** 2, 17.14),  # PL94 persons, global_scale 339/542: Census' published epsilon 17.14
        (F(3379, 12343) ** 2, 2.47),  # PL94 units, global_scale 12343/3379: published 2.47
    ],
)
def test_cks_matches_census_published_epsilons(rho, published):
    assert float(cks_epsilon(rho, "1e-10").epsilon) == pytest.approx(published, abs=0.006)


def test_bun_steinke_delta_closed_form():
    # delta = exp(-(eps - rho)^2 / (4 rho)): rho = 1, eps = 3 -> e^{-1}
    assert bun_steinke_delta(1, 3).delta == pytest.approx(mpmath.e**-1, rel=1e-30)
    assert bun_steinke_delta(1, "1/2").delta == 1


def test_cks_optimum_against_a_dense_grid():
    # min over alpha of the CKS objective by a dense grid (mpmath one-liner here)
    rho, eps = F(1, 2), F(3)

    def obj(a):
        return mpmath.exp((a - 1) * (a * mpmath.mpf(rho) - eps)) / (a - 1) * (1 - 1 / a) ** a

    with mpmath.workdps(30):
        grid = min(obj(1 + mpmath.mpf(k) / 2000) for k in range(1, 20000))
    got = cks_delta(rho, eps).delta
    assert _le(got, grid, "1e-20")
    assert got >= grid * (1 - 1e-6)


@pytest.mark.parametrize("s2", [F(1, 3), F(1), F(5, 2)])
@pytest.mark.parametrize("alpha", [F(3, 2), F(2), F(7, 3), F(10)])
def test_renyi_divergence_brute_force(s2, alpha):
    comp = Composition.from_sigma2([s2])
    pmf = dg_pmf(s2, depth=400)  # deep: the summand p^α q^{1−α} peaks far in the tail
    with mpmath.workdps(40):
        a = mpmath.mpf(alpha.numerator) / alpha.denominator
        # q(x) = p(x - 1): same normaliser
        tot = sum(p**a * pmf[x - 1] ** (1 - a) for x, p in pmf.items() if x - 1 in pmf)
        brute = mpmath.log(tot) / (a - 1)
        got = renyi_divergence(comp, alpha)
        assert abs(got - brute) <= mpmath.mpf(10) ** -25 * abs(brute)
        # CKS Prop.: D_alpha <= alpha rho, equality at integer alpha
        arho = a / (2 * mpmath.mpf(s2.numerator) / s2.denominator)
        assert _le(got, arho, "1e-35")
        if alpha.denominator == 1:
            assert abs(got - arho) <= mpmath.mpf(10) ** -30 * arho


def test_rdp_epsilon_is_the_formula_at_its_alpha():
    comp = Composition.from_sigma2(["1/2", "1/2", "3"])
    pt = rdp_epsilon(comp, "1e-6")
    with mpmath.workdps(40):
        a = pt.alpha
        d = sum(renyi_divergence(Composition.from_sigma2([s]), a) for s in ["1/2", "1/2", "3"])
        formula = d + mpmath.log((a - 1) / a) - (mpmath.log(mpmath.mpf("1e-6")) + mpmath.log(a)) / (a - 1)
        assert abs(pt.epsilon - formula) < mpmath.mpf(10) ** -25
        # and no alpha on a coarse grid does better
        for k in range(1, 400):
            b = 1 + mpmath.mpf(k) / 20
            db = sum(renyi_divergence(Composition.from_sigma2([s]), b) for s in ["1/2", "1/2", "3"])
            e = db + mpmath.log((b - 1) / b) - (mpmath.log(mpmath.mpf("1e-6")) + mpmath.log(b)) / (b - 1)
            assert pt.epsilon <= e + mpmath.mpf(10) ** -20


def test_gdp_delta_against_quadrature():
    # delta(eps) = E[(1 - e^{eps - L})_+], L ~ N(mu^2/2, mu^2): mpmath.quad
    rho, eps = F(2), F(3)
    with mpmath.workdps(30):
        mu = mpmath.sqrt(4)
        f = lambda l: mpmath.npdf(l, mu**2 / 2, mu) * (1 - mpmath.exp(eps - l))  # noqa: E731
        ref = mpmath.quad(f, [eps, eps + 5, eps + 40])
        assert abs(gdp_delta(rho, eps).delta - ref) < mpmath.mpf(10) ** -20
    assert float(gdp_mu(rho)) == pytest.approx(2.0)


# ----------------------------------------------------------------------------- validity
SMALL_DESIGNS = [
    [(F(1, 2), 1, 1)],
    [(F(1), 1, 3)],
    [(F(1), 1, 2), (F(3), 1, 1)],
    [(F(4), 2, 1), (F(2), 1, 1)],
]


@pytest.mark.parametrize("groups", SMALL_DESIGNS)
def test_bounds_dominate_brute_force_profile(groups):
    comp = Composition(tuple((DiscreteGaussian(s2, sh), n) for s2, sh, n in groups))
    for eps in [F(0), F(1, 3), F(1), F(2), F(7, 2), F(6)]:
        exact = delta_brute(_mechs(groups), eps)
        for fn in (bun_steinke_delta, cks_delta, rdp_delta):
            assert _le(exact, fn(comp, eps).delta, "1e-30"), (fn.__name__, groups, eps)


GRID = [
    ["1/4"],
    ["1"] * 4,
    ["5/2"] * 10 + ["909"] * 5,
    ["2"] * 3 + ["1/3"],
    ["100"] * 2 + ["7/3"] * 7,
]


@pytest.mark.parametrize("sigma2", GRID)
def test_bounds_dominate_exact_delta_and_epsilon(sigma2):
    comp = Composition.from_sigma2(sigma2)
    acc = ExactAccountant(comp)
    rho = comp.rho
    eps_grid = [rho / 2, rho, rho + 1, 2 * rho + 2, 4 * rho + 4]
    exact = acc.delta(eps_grid)
    for e, pt in zip(eps_grid, exact):
        for fn in (bun_steinke_delta, cks_delta, rdp_delta):
            assert fn(comp, e).delta >= pt.lower, (fn.__name__, sigma2, e)
    deltas = ["1e-2", "1e-6", "1e-10"]
    ex_eps = acc.epsilon(deltas)
    for d, pt in zip(deltas, ex_eps):
        for fn in (bun_steinke_eps, cks_epsilon, rdp_epsilon):
            assert fn(comp, d).epsilon >= pt.lower, (fn.__name__, sigma2, d)


@settings(max_examples=25, deadline=None)
@given(
    rho=st.fractions(min_value=F(1, 100), max_value=20),
    eps=st.fractions(min_value=0, max_value=80),
)
def test_cks_improves_bun_steinke(rho, eps):
    assert _le(cks_delta(rho, eps).delta, bun_steinke_delta(rho, eps).delta)


@settings(max_examples=10, deadline=None)
@given(
    s2=st.lists(st.fractions(min_value=F(1, 5), max_value=50), min_size=1, max_size=3),
    eps=st.fractions(min_value=0, max_value=10),
)
def test_rdp_improves_cks(s2, eps):
    comp = Composition.from_sigma2(s2)
    assert _le(rdp_delta(comp, eps).delta, cks_delta(comp, eps).delta)


# ----------------------------------------------------------------------------- GDP is not a bound
def test_gdp_is_not_a_bound_for_discrete_noise():
    # 4 x N_Z(0, 4) (rho = 1/2, loss lattice 1/2 + Z/4): at eps = 5/8, half-way between lattice
    # points (B2(1/2) = -1/12 < 0), the exact profile exceeds the Gaussian one; at the lattice
    # point eps = 1/2 it is below.  Exact values by brute-force convolution.
    groups = [(F(4), 1, 4)]
    comp = Composition.from_sigma2(["4"] * 4)
    above = delta_brute(_mechs(groups), F(5, 8))
    below = delta_brute(_mechs(groups), F(1, 2))
    assert above > gdp_delta(comp, F(5, 8)).delta
    assert below < gdp_delta(comp, F(1, 2)).delta
    assert gdp_delta(comp, 1).is_bound is False


def test_gdp_not_a_bound_for_small_variance():
    # one N_Z(0, 1/2): total variation (eps = 0) exceeds the GDP value 2 Phi(mu/2) - 1.
    assert delta_brute(_mechs([(F(1, 2), 1, 1)]), F(0)) > gdp_delta(Composition.from_sigma2(["1/2"]), 0).delta


# ----------------------------------------------------------------------------- input errors
def test_float_inputs_are_refused():
    with pytest.raises(InputError, match="delta"):
        bun_steinke_eps(1, 0.1)
    with pytest.raises(InputError, match="delta"):
        cks_epsilon(1, "2")
    with pytest.raises(InputError, match="alpha"):
        renyi_divergence(Composition.from_sigma2(["1"]), "1")
    with pytest.raises(InputError, match="rho"):
        cks_delta("-1", 1)


def test_bound_point_ends_do_not_round_at_the_ambient_precision():
    # estimate 1 + 1e-30 and error 1e-40 at 60 digits: the ends must keep the error at the
    # default 15-digit context (a rounded sum would return the estimate itself)
    from exactdp.conversions.bounds import BoundPoint

    with mpmath.workdps(60):
        est, err = mpmath.mpf(1) + mpmath.mpf("1e-30"), mpmath.mpf("1e-40")
    pt = BoundPoint("bun-steinke", est, mpmath.mpf("1e-10"), None, True, "epsilon", err)
    with mpmath.workdps(60):
        assert pt.upper - est == err and est - pt.lower == err
