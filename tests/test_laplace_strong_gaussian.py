"""A continuous Laplace beside a strong continuous Gaussian (ρ in the hundreds to thousands) and a
discrete Gaussian (issue 35: δ ≈ 1 was refused), against a reference written here, nothing of
exactdp's engine.

The discrete Gaussian's loss atoms come from its output pmf (``tests/mixed_brute.py``), the
Laplace's atoms and density from its output densities (``tests/laplace_reference.single``), and
the Gaussians' closed forms ``δ_N(s) = Φ((ρ − s)/√(2ρ)) − e^s Φ((−ρ − s)/√(2ρ))`` and, for δ ≈ 1,
the complement ``1 − δ_N(s) = Φ((s − ρ)/√(2ρ)) + e^s Φ((−ρ − s)/√(2ρ))`` (two positive terms:
``1 − δ`` is computed directly, no cancellation).  Each atom's kernel is the Laplace's two atoms
plus ``mpmath.quad`` of its density against the Gaussian's closed form (the quadrature's error
estimate times 100 widens the bracket).  Never a wrong side; brackets ≤ 1e-9 relative."""

from __future__ import annotations

import math
from fractions import Fraction

import laplace_reference as lref
import mixed_brute as brute
import mpmath
import pytest

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian, Mixture
from exactdp.kinds.laplace import Laplace

DPS = 25
REL = mpmath.mpf("1e-9")
LAP = Laplace("1/3", "1/2")  # μ = 3/2
DG = DiscreteGaussian("0.172", -1)
DESIGNS = {
    "rho100": (Gaussian("1/10", 1), 20),
    "rho1000": (Gaussian("1/100", 1), 20),
    "rho3285": (Gaussian("0.0137", 3), 10),
}


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def _kernel(rho_q: Fraction, t: Fraction, complement: bool) -> tuple:
    """``(lo, hi)`` of ``E g(t − L − N)`` over the Laplace's loss L, g = δ_N (or its complement)."""
    atoms, dens, mu = lref.single(LAP.scale, LAP.shift)
    rho = _m(rho_q)
    sd = mpmath.sqrt(2 * rho)

    def g(s):
        tail = mpmath.exp(s) * mpmath.ncdf((-rho - s) / sd)
        return mpmath.ncdf((s - rho) / sd) + tail if complement else mpmath.ncdf((rho - s) / sd) - tail

    tt = _m(t)
    total = mpmath.fsum(p * g(tt - loss) for loss, p in atoms)
    pts = [-mu, 0, mu]
    val, err = mpmath.quad(lambda u: dens(u) * g(tt - u), pts, error=True)
    slack = 100 * abs(err) + abs(total + val) * mpmath.mpf(10) ** (8 - DPS)
    return total + val - slack, total + val + slack


def ref(rho_q: Fraction, eps, complement: bool) -> tuple:
    """``(lo, hi)`` of δ(ε) (or of 1 − δ(ε)) of DG + Laplace + Gaussians of total ρ: the DG's atoms
    (those below 1e-45 of the largest left out, their mass added to the upper end)."""
    d, tail = brute.joint(((DG, 1),))
    with mpmath.workdps(DPS):
        big = max(p for p, _ in d.values())
        lo = hi = mpmath.mpf(0)
        for k, (p, _) in d.items():
            assert k not in (math.inf, -math.inf)
            if p < big * mpmath.mpf("1e-45"):
                hi += p
                continue
            a, b = _kernel(rho_q, Fraction(eps) - k, complement)
            lo, hi = lo + p * a, hi + p * b
        return max(lo, mpmath.mpf(0)), hi + tail


def _acc(name):
    gauss, count = DESIGNS[name]
    acc = ExactAccountant(Mixture(((LAP, 1), (gauss, count), (DG, 1))))
    assert "gaussian-laplace-smoothed-inversion" in acc.diagnostics().method
    return acc, gauss.rho * count


def test_reference_masses():
    """The reference's Laplace law is a probability with ``E e^{−L} = 1`` (checked, not assumed)."""
    with mpmath.workdps(DPS):
        atoms, dens, mu = lref.single(LAP.scale, LAP.shift)
        mass = mpmath.fsum(p for _, p in atoms) + mpmath.quad(dens, [-mu, mu])
        tilt = mpmath.fsum(p * mpmath.exp(-loss) for loss, p in atoms) + \
            mpmath.quad(lambda u: dens(u) * mpmath.exp(-u), [-mu, mu])
        assert abs(mass - 1) < 1e-20 and abs(tilt - 1) < 1e-20
        assert mu == _m(LAP.epsilon)


@pytest.mark.parametrize("name,eps", [("rho1000", "0"), ("rho1000", "5"), ("rho1000", "700"),
                                      ("rho3285", "0"), ("rho3285", "5"), ("rho100", "0")])
def test_delta_near_one(name, eps):
    """δ ≈ 1 (was refused at ρ ≥ 1000): inside ``1 − [C_lo, C_hi]``, C = 1 − δ from the complement."""
    acc, rho = _acc(name)
    pt = acc.delta([eps])[0]
    c_lo, c_hi = ref(rho, eps, complement=True)
    assert c_hi < 1e-9, (name, eps, c_hi)  # (δ within 1e-9 of 1: the refused regime)
    with mpmath.workdps(DPS):
        assert pt.upper >= 1 - c_hi and pt.lower <= 1 - c_lo, (name, eps, pt.lower, pt.upper, c_lo, c_hi)
        assert pt.upper - pt.lower <= REL * pt.upper, (name, eps, pt.lower, pt.upper)


def test_deep_delta_and_epsilon():
    """A deep δ (~1e-40) and ε(0.99), ε(1e-10) of the ρ = 1000 design, against δ itself."""
    acc, rho = _acc("rho1000")
    pt = acc.delta(["1600"])[0]
    lo, hi = ref(rho, "1600", complement=False)
    assert 1e-45 < lo and hi < 1e-35
    assert pt.upper >= lo and pt.lower <= hi, (pt.lower, pt.upper, lo, hi)
    assert pt.upper - pt.lower <= REL * pt.upper
    for target in ("0.99", "1e-10"):
        pt = acc.epsilon([target])[0]
        assert pt.upper - pt.lower <= REL * pt.upper, (target, pt)
        tq = _m(Fraction(target))
        lo_f = Fraction(*map(int, mpmath.mpf(pt.lower).as_integer_ratio()))
        hi_f = Fraction(*map(int, mpmath.mpf(pt.upper).as_integer_ratio()))
        assert ref(rho, lo_f, complement=False)[1] >= tq, (target, "lower")
        assert ref(rho, hi_f, complement=False)[0] <= tq, (target, "upper")
