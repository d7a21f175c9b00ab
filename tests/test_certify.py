"""Arb certificates (exactdp.certify) against brute-force enumeration in tests/harness.py.

Every enclosure must contain the 60-digit brute-force value and be ≤ 1e-15 relative wide;
each tail method (enumeration, conditioned, tilted trapezoid) is forced in turn, and the
building blocks (outward decimals, theta balls, the sieve lemma, the node enumeration)
are checked on their own.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest
from flint import arb, fmpq

from exactdp.certify import Certifier, bureau_epsilon
from exactdp.certify.balls import decimal_outward, endpoints, precision
from exactdp.certify.dgball import U_CUT, DGBall
from exactdp.certify.nodes import SieveGroup, select_nodes
from exactdp.certify.tails import METHODS
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BRUTE_ABS_ERROR, delta_brute, delta_single_brute, epsilon_brute, tradeoff_brute

F = Fraction
# the brute-force designs of test_engine_brute.py (their references are built once per session)
DESIGNS = {
    "single": [(F(1, 2), 1)],
    "mixed-shifts": [(F(3), 1), (F(7, 3), 2), (F(5, 4), -1)],
    "coarse+fine": [(F(1, 3), 1), (F(40), 1), (F(40), 1)],
    "five": [(F(2), 1), (F(2), 1), (F(9, 2), 1), (F(6, 5), 1), (F(11, 7), 1)],
}
WIDTH = 1e-15


def comp_of(mechs):
    return Composition.of(DiscreteGaussian(s, d) for s, d in mechs)


def encloses(enc, ref, tol=BRUTE_ABS_ERROR) -> bool:
    """The enclosure contains the reference up to the reference's own accuracy ``tol``."""
    with mpmath.workdps(80):
        return enc.lower - tol <= ref <= enc.upper + tol


def feasible(mechs, method):
    return not (method == "conditioned" and len({(s, abs(d)) for s, d in mechs}) == 1)


def deep_epsilon(mechs, target="1e-40"):
    """An exact rational ε with δ(ε) ≈ target (from the brute-force ε(δ))."""
    with mpmath.workdps(60):
        return F(mpmath.nstr(epsilon_brute(mechs, F(target)), 30))


# -- building blocks ---------------------------------------------------------------------
def test_decimal_outward_brackets_the_exact_value():
    for q in (F(1, 3), F(-2, 7), F(10**40 + 1, 10**20), F(999999, 10**6 * 7), F(1, 10**600), F(7)):
        lo, hi = decimal_outward(q, 20, "floor"), decimal_outward(q, 20, "ceil")
        assert F(lo) <= q <= F(hi)
        assert F(hi) - F(lo) <= abs(q) * F(1, 10**18)
        assert len(lo.split("e")[0].replace("-", "").replace(".", "")) == 20
    assert decimal_outward(F(99999999999999999999, 10**20) + F(1, 10**30), 20, "ceil") == "1.0000000000000000000e+0"


def test_bureau_epsilon_ball_contains_the_60_digit_value():
    with mpmath.workdps(60):
        ref = F(24811, 5000) + 2 * mpmath.sqrt(mpmath.mpf(24811) / 5000 * mpmath.log(mpmath.mpf(10) ** 10))
        lo, hi = endpoints(bureau_epsilon(F(24811, 5000), F(1, 10**10))(128))
        m, e = ref.man_exp
        exact = F(int(m)) * F(2) ** int(e)
        assert lo <= exact <= hi and hi - lo < F(1, 10**35)


def mp_of(x: arb):
    return mpmath.mpf(x.mid().str(45, radius=False))


def theta_mp(s2: Fraction, z):
    """Θ(z) at the working mpmath precision: direct sum for s² < 4, else the Poisson form
    sqrt(2πs²) Σ_k exp(s²(z − 2πik)²/2) (no cancellation either way)."""
    s2m = mpmath.mpf(s2.numerator) / s2.denominator
    if s2 < 4:
        c = int(mpmath.nint(z.real * s2m))
        half = int(math.sqrt(2 * float(s2) * 400)) + 10
        return mpmath.fsum(mpmath.exp(z * x - x * x / (2 * s2m)) for x in range(c - half, c + half + 1))
    kk = int(mpmath.nint(z.imag / (2 * mpmath.pi)))
    terms = [mpmath.exp(s2m * (z - 2j * mpmath.pi * k) ** 2 / 2) for k in range(kk - 6, kk + 7)]
    return mpmath.sqrt(2 * mpmath.pi * s2m) * mpmath.fsum(terms)


@pytest.mark.parametrize("s2", [F(1, 3), F(5, 2), F(10000, 11)])
def test_theta_balls_contain_direct_sums(s2):
    with precision(128), mpmath.workdps(60):
        dg = DGBall(s2)
        for a, r in ((F(0), F(0)), (F(3, 7), F(0)), (F(1, 5), F(17, 101)), (F(-2, 3), F(-1, 4))):
            z = mpmath.mpf(a.numerator) / a.denominator + 2j * mpmath.pi * mpmath.mpf(r.numerator) / r.denominator
            ref = theta_mp(s2, z)
            got = dg.theta_node(fmpq(r.numerator, r.denominator), arb(fmpq(a.numerator, a.denominator)))
            err = abs(mpmath.mpc(mp_of(got.real), mp_of(got.imag)) - ref)
            assert err <= mp_of(arb(got.real.rad())) + mp_of(arb(got.imag.rad())) + abs(ref) * mpmath.mpf(10) ** -40
            assert err <= abs(ref) * 1e-30


@pytest.mark.parametrize("s2", [F(1, 3), F(2), F(7), F(10000, 11)])
def test_sieve_lemma_bounds_the_theta_ratio(s2):
    """|Θ(a+ib)|/Θ(a) ≤ min(1, exp(−(s² min(u, u_c)²/2 − c))) on a grid of (a, b)."""
    with precision(128):
        dg = DGBall(s2)
        c = dg.sieve_constant()
        assert c is not None and not c < 0
        for a in (F(0), F(1, 10), F(2), F(-5, 3)):
            ab = arb(fmpq(a.numerator, a.denominator))
            den = dg.theta_real(ab)
            for r in (F(1, 1000), F(1, 50), F(1, 7), F(1, 3), F(9, 20), F(1, 2)):
                ratio = abs(dg.theta_node(fmpq(r.numerator, r.denominator), ab)) / den
                u = 2 * arb.pi() * arb(fmpq(min(r, 1 - r).numerator, min(r, 1 - r).denominator))
                uc = u.min(arb.pi() * arb(fmpq(9, 10)))
                bound = (-(dg.s2b * uc * uc / 2 - c)).exp().min(arb(1))
                assert ratio.lower() <= bound.upper(), (s2, a, r)


def test_node_enumeration_matches_a_full_scan():
    groups = [(3, 4, F(7)), (5, 2, F(11, 3)), (12, 1, F(1, 2)), (7, 3, F(20))]
    with precision(128):
        sg = [SieveGroup(a, m, s2, None if (c := DGBall(s2).sieve_constant()) is None else float(c.upper()))
              for a, m, s2 in groups]
    N, T = 2 * 1234, 30.0
    kept = set(int(n) for n in select_nodes(sg, N, T))
    full = set()
    for n in range(N // 2 + 1):
        h = 0.0
        for g in sg:
            r = g.a * n % N
            u = min(2 * math.pi * min(r, N - r) / N, U_CUT * math.pi)
            h += g.m * max(0.0, 0.5 * g.s2 * u * u - g.c) if math.isfinite(g.c) else 0.0
        if h < T * (1 + 1e-9) + 1e-9:
            full.add(n)
    assert kept == full and 0 < len(kept) < N // 2


# -- enclosures against brute force ------------------------------------------------------
@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_enclosures_contain_brute_force(name, method):
    mechs = DESIGNS[name]
    if not feasible(mechs, method):
        pytest.skip("one group: nothing to condition on")
    cert = Certifier(comp_of(mechs), method=method)
    rho = comp_of(mechs).rho
    eps_list = [F(0), F(1, 10), F(1), F(round(4 * rho + 2)), deep_epsilon(mechs)]
    for e in eps_list:
        ref = delta_brute(mechs, e)
        enc = cert.delta(e)
        assert enc.method == "arb/" + method
        assert encloses(enc, ref), (name, method, e, enc.decimal(25), mpmath.nstr(ref, 25))
        assert enc.relative_width <= WIDTH
    assert delta_brute(mechs, eps_list[-1]) < 1e-39


@pytest.mark.parametrize("name,method", [("five", None), ("mixed-shifts", "tilted-trapezoid"),
                                         ("coarse+fine", "conditioned")])
def test_epsilon_and_tradeoff_enclosures_contain_brute_force(name, method):
    mechs = DESIGNS[name]
    cert = Certifier(comp_of(mechs), method=method)
    for d in (F(1, 10), F(1, 10**6), F(1, 10**30)):
        enc = cert.epsilon(d)
        # ε of the reference: δ accurate to 1e-65, |dδ/dε| ≥ δ/10 here, so ε to 1e-64/δ
        assert encloses(enc, epsilon_brute(mechs, d), mpmath.mpf(10) ** -64 / d), (name, d)
        assert enc.relative_width <= WIDTH
    for a in (F(1, 10**9), F(1, 20), F(1, 2), F(999, 1000)):
        enc = cert.tradeoff(a)
        assert encloses(enc, tradeoff_brute(mechs, a), mpmath.mpf(10) ** -50), (name, a)
        assert enc.relative_width <= WIDTH
    assert cert.tradeoff(0).lower_exact == 1 and cert.tradeoff(1).upper_exact == 0


def test_wrong_hints_cost_time_not_correctness():
    mechs = DESIGNS["five"]
    cert = Certifier(comp_of(mechs))
    ref = epsilon_brute(mechs, F(1, 10**6))
    good = cert.epsilon(F(1, 10**6))
    for hint in (1, 10**4, good.params["piece"] + 3, -(10**5)):
        assert encloses(cert.epsilon(F(1, 10**6), hint=hint), ref, mpmath.mpf(10) ** -55)
    beta = tradeoff_brute(mechs, F(1, 20))
    for hint in (0, 10**5):
        assert encloses(cert.tradeoff(F(1, 20), hint=hint), beta, mpmath.mpf(10) ** -50)


@pytest.mark.parametrize("mechs", [
    [(F(1, 1000), 1), (F(2), 1)],                 # tiny σ²: ρ = 500.25
    [(F(25), 1), (F(25), 1), (3 * F(2**70 + 1, 2**70), 1)],   # lattice scale ≈ 1e25
    [(F(3), 3), (F(3), -2), (F(1, 2), 5)],         # shifts 3, −2, 5
], ids=["tiny-sigma2", "lattice-beyond-64-bits", "large-shifts"])
def test_extreme_regimes(mechs):
    comp = comp_of(mechs)
    cert = Certifier(comp)
    rho = comp.rho
    for e in (F(0), rho / 2, rho, 2 * rho + 3):
        ref = delta_brute(mechs, e)
        if ref < mpmath.mpf(10) ** -50:
            continue
        enc = cert.delta(e)
        assert encloses(enc, ref), (e, enc.decimal(25), mpmath.nstr(ref, 25))
        assert enc.relative_width <= WIDTH


def test_huge_variance():
    """σ² = 10⁷ (one mechanism): δ ≈ 8e-5 and ≈ 1.7e-36."""
    cert = Certifier(comp_of([(F(10**7), 1)]))
    for e in (F(1, 10**4), F(37, 10**4)):
        ref = delta_single_brute(F(10**7), e)
        enc = cert.delta(e)
        assert encloses(enc, ref, mpmath.mpf(10) ** -55 * ref), (e, enc.decimal(25), mpmath.nstr(ref, 25))
        assert enc.relative_width <= WIDTH


@pytest.mark.parametrize("method", ["enumeration", "tilted-trapezoid"])
def test_tails_far_below_float64(method):
    """δ ≈ 1e-600 and ≈ 1e-4000 (one mechanism, σ² = 2) against the direct-sum reference."""
    cert = Certifier(comp_of([(F(2), 1)]), method=method)
    for e, below in ((F(37), mpmath.mpf(10) ** -590), (F(96), mpmath.mpf(10) ** -3990)):
        ref = delta_single_brute(F(2), e)
        enc = cert.delta(e)
        assert ref < below and encloses(enc, ref, ref * mpmath.mpf(10) ** -50), (e, enc.decimal(25))
        assert enc.relative_width <= WIDTH


def test_three_methods_agree_far_below_float64():
    """δ ≈ 4.5e-417 on a three-group design: the three enclosures (independent computations)
    must intersect and each be ≤ 1e-15 relative wide."""
    comp = comp_of(DESIGNS["mixed-shifts"])
    encs = [Certifier(comp, method=m).delta(F(75)) for m in METHODS]
    assert max(e.lower_exact for e in encs) <= min(e.upper_exact for e in encs)
    assert all(e.relative_width <= WIDTH for e in encs) and encs[0].upper < mpmath.mpf(10) ** -416
