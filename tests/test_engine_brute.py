"""The engine against brute-force enumeration in mpmath (tests/harness.py)."""

from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import delta_brute, tradeoff_vertices_brute

DESIGNS = {
    "single": [(Fraction(1, 2), 1)],
    "mixed-shifts": [(Fraction(3), 1), (Fraction(7, 3), 2), (Fraction(5, 4), -1)],
    "coarse+fine": [(Fraction(1, 3), 1), (Fraction(40), 1), (Fraction(40), 1)],
    "five": [(Fraction(2), 1), (Fraction(2), 1), (Fraction(9, 2), 1), (Fraction(6, 5), 1), (Fraction(11, 7), 1)],
}


def _comp(mechs):
    return Composition.of(DiscreteGaussian(s, d) for s, d in mechs)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_matches_brute_force_down_to_1e_30(name):
    mechs = DESIGNS[name]
    acc = ExactAccountant(_comp(mechs))
    rho = float(acc.rho)
    eps_list = [Fraction(1, 10), Fraction(1), Fraction(round(rho * 4 + 2)), Fraction(round(rho * 8 + 6))]
    got = acc.delta(eps_list)
    checked_small = False
    for e, pt in zip(eps_list, got):
        ref = delta_brute(mechs, e)
        if ref < mpmath.mpf(10) ** -33:
            continue
        checked_small |= ref < 1e-12
        # the certified bound must hold, and the estimate must be within 1e-9 relative
        assert abs(pt.estimate - ref) <= pt.error_bound + ref * 1e-40, (name, e)
        assert abs(pt.estimate - ref) <= 1e-9 * ref
    assert checked_small or name == "single"


def test_both_directions_agree_with_brute_force():
    mechs = DESIGNS["mixed-shifts"]
    for e in (Fraction(1, 2), Fraction(3)):
        pq = delta_brute(mechs, e, "PQ")
        qp = delta_brute(mechs, e, "QP")
        assert abs(pq - qp) <= 1e-40 * pq + mpmath.mpf(10) ** -60
        est = ExactAccountant(_comp(mechs)).delta([e])[0].estimate
        assert abs(est - max(pq, qp)) <= 1e-10 * pq


def test_reversed_composition_has_same_profile():
    comp = _comp(DESIGNS["mixed-shifts"])
    a = ExactAccountant(comp).delta(["1.5"])[0]
    b = ExactAccountant(comp.reversed()).delta(["1.5"])[0]
    assert abs(a.estimate - b.estimate) <= a.error_bound + b.error_bound


@pytest.mark.parametrize("name", ["mixed-shifts", "five"])
def test_tradeoff_matches_brute_force_vertices(name):
    mechs = DESIGNS[name]
    acc = ExactAccountant(_comp(mechs))
    verts = tradeoff_vertices_brute(mechs)
    # between consecutive vertices f is linear: evaluate at midpoints and at vertices
    # (at 60 digits: the midpoint rounded to 15 digits moved α by ~1e-16, β by slope × that)
    probes = []
    with mpmath.workdps(60):
        for (a0, b0), (a1, b1) in zip(verts, verts[1:]):
            if a1 - a0 < 1e-6 or a0 < 1e-12 or a1 > 1 - 1e-12:
                continue
            alpha = Fraction(mpmath.nstr((a0 + a1) / 2, 40))
            am = mpmath.mpf(alpha.numerator) / alpha.denominator
            probes.append((alpha, am, b0 + (b1 - b0) * (am - a0) / (a1 - a0)))  # f is linear in between
    assert len(probes) >= 5
    for alpha, am, bref in probes[:: max(1, len(probes) // 12)]:
        pt = acc.tradeoff([alpha])[0]
        with mpmath.workdps(60):
            assert abs(pt.estimate - bref) <= pt.error_bound + 1e-25, (name, am)
            assert pt.value <= bref + 1e-25  # conservative side: lower bound on β


def test_epsilon_inverts_delta():
    comp = _comp(DESIGNS["five"])
    acc = ExactAccountant(comp)
    for target in ("1e-3", "1e-9", "1e-20"):
        ep = acc.epsilon([target])[0]
        assert ep.lower <= ep.estimate <= ep.upper
        assert ep.upper - ep.lower < 1e-8
        hi = acc.delta([Fraction(mpmath.nstr(ep.upper + mpmath.mpf("1e-7"), 30))])[0]
        lo = acc.delta([Fraction(mpmath.nstr(ep.lower - mpmath.mpf("1e-7"), 30))])[0]
        t = mpmath.mpf(Fraction(target).numerator) / Fraction(target).denominator
        assert hi.value <= t <= lo.lower
