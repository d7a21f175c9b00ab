"""Continuous Laplaces beside discrete Gaussians and continuous Gaussians, in one inversion
(:mod:`exactdp.accounting.laplace_beside`), against a reference written in the tests: the
discrete Gaussians enumerated exactly from their pmfs at 70 digits (``tests/mixed_brute.py``),
each of their loss atoms against the Laplaces + continuous Gaussians' kernel
``E_P[(1 − e^{t−L−N})_+]`` of ``tests/test_laplace_beside.py`` (the Laplaces' atoms and
tilted Irwin–Hall density against the Gaussian's Φ form, ``mpmath.quad`` with its error
estimate ×100 in the bracket).  Atoms of P-mass below 1e-13 of the δ asked are not integrated:
their mass is added to the upper end (the kernel is at most 1; the level only sets the cost).
Off the tuned regime too: μ = 50 and μ = 1/1000, δ near 1e-111, ε = 0, ε(1e-100), discrete
Gaussians too fine for exact windows (refused before), and the refusal without a continuous
Gaussian, whose remedy is answered.  Never a wrong side; brackets ≤ 1e-9 relative."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest
from test_laplace_beside import ref_kernel

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian, InputError, Mixture
from exactdp.kinds import ApproxDP
from exactdp.kinds.laplace import Laplace

REL = mpmath.mpf("1e-9")
ROUTE = "gaussian-laplace-smoothed-inversion"


def atoms_delta(atoms: tuple, kernel, eps, scale) -> tuple:
    """``(lo, hi)`` of δ(ε): Σ over the discrete Gaussians' loss atoms (``mixed_brute.joint``) of
    P-mass ≥ 1e-13·scale of mass × ``kernel(ε − atom)`` (a ``(lo, hi)`` pair), the rest's mass
    (and the windows' tail) on the upper end."""
    d, tail = atoms
    cut = mpmath.mpf(scale) * mpmath.mpf("1e-13")
    lo = hi = mpmath.mpf(0)
    drop = tail
    for k, (p, _) in d.items():
        if p < cut:
            drop += p
            continue
        a, b = kernel(Fraction(eps) - k)
        lo, hi = lo + p * a, hi + p * b
    return max(lo, mpmath.mpf(0)), hi + drop


def ref_delta(atoms: tuple, mu, count: int, rho, eps, scale, dps: int = 25) -> tuple:
    """:func:`atoms_delta` against the Laplace + Gaussian kernel of ``test_laplace_beside``."""
    return atoms_delta(atoms, lambda t: ref_kernel(mu, count, rho, t, dps=dps), eps, scale)


DESIGNS = {
    # discrete Gaussians windowed would leave 120+ atoms: the Laplace goes into the oracle
    "lap+gauss+dg": ((Laplace("1/2"), 1), ((Gaussian(4), 1),), ((DiscreteGaussian("1/2"), 2),)),
    # two discrete Gaussians on incommensurable grids (too fine for exact windows: refused before)
    "too-fine": ((Laplace(1), 2), ((Gaussian(2, 1), 1),),
                 ((DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1))),
    # a huge μ = 50 (the Laplace's atoms far apart) and a tiny one (μ = 1/1000)
    "huge-mu": ((Laplace("1/50"), 1), ((Gaussian(1), 1),), ((DiscreteGaussian("1/2", 2), 1),)),
    "tiny-mu": ((Laplace(1000), 1), ((Gaussian(9), 2),), ((DiscreteGaussian("1/2"), 2),)),
}
QUERIES = {
    "lap+gauss+dg": (["0", "6"], ["1e-6"]),
    "too-fine": (["3"], []),
    "huge-mu": (["49", "70"], []),
    "tiny-mu": (["0", "5"], ["1e-100"]),
}


def _design(name):
    (lap, count), gaussians, finite = DESIGNS[name]
    acc = ExactAccountant(Mixture(((lap, count),) + gaussians + finite))
    rho = sum((g.rho * c for g, c in gaussians), Fraction(0))
    return acc, brute.joint(finite), lap.epsilon, count, rho


def _inside(pt, lo, hi, what):
    assert pt.upper >= lo and pt.lower <= hi, (what, pt.lower, pt.upper, lo, hi)
    assert pt.upper - pt.lower <= REL * max(hi, mpmath.mpf("1e-4000")), (what, pt.lower, pt.upper)


def _f(x) -> Fraction:
    return Fraction(*map(int, mpmath.mpf(x).as_integer_ratio()))


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_and_epsilon(name):
    acc, atoms, mu, count, rho = _design(name)
    assert ROUTE in acc.diagnostics().method, acc.diagnostics().method
    es, targets = QUERIES[name]
    for e, pt in zip(es, acc.delta(es)):
        _inside(pt, *ref_delta(atoms, mu, count, rho, e, pt.upper), (name, e))
    for target in targets:
        pt = acc.epsilon([target])[0]
        tq = mpmath.mpf(Fraction(target).numerator) / Fraction(target).denominator
        assert pt.upper - pt.lower <= REL * max(pt.upper, 1), (name, target, pt)
        # δ(ε_lower) ≥ target ≥ δ(ε_upper): the true ε inside
        assert ref_delta(atoms, mu, count, rho, _f(pt.lower), tq)[1] >= tq, (name, target, "lower")
        assert ref_delta(atoms, mu, count, rho, _f(pt.upper), tq)[0] <= tq, (name, target, "upper")


def test_deep_delta():
    """δ near 1e-100 (the zCDP caps use ρ with the Laplace's μ²/2: still inside the reference)."""
    acc, atoms, mu, count, rho = _design("lap+gauss+dg")
    pt = acc.delta(["50"])[0]
    lo, hi = ref_delta(atoms, mu, count, rho, "50", pt.upper)
    assert 1e-120 < hi < 1e-100, hi
    _inside(pt, lo, hi, "deep")


def test_design_of_the_audit_is_fast():
    """The audit's design 12 (``Laplace(1, 2) + Gaussian(100, 1)×2 + DG(42.0105, 3)×36``: > 170
    CPU-s for ε(1e-3) before) is now one inversion; its δ against the Laplaces' quadrature route
    on the same design with the discrete Gaussians as windows is bench/laplace_beside.md's."""
    acc = ExactAccountant(Mixture(((Laplace(1, 2), 1), (Gaussian(100, 1), 2), (DiscreteGaussian("42.0105", 3), 36))))
    assert ROUTE in acc.diagnostics().method
    pt = acc.epsilon(["1e-3"])[0]
    assert 0 < pt.upper - pt.lower <= REL * pt.upper


def test_refused_without_a_continuous_gaussian_and_the_remedy_answers():
    """Beside discrete Gaussians too fine for windows, of too many joint atoms to sum
    (:mod:`exactdp.accounting.laplace_atoms`; few are answered: tests/test_laplace_atoms.py), and
    no continuous Gaussian, the refusal names kind = "approx_dp" with ε = |shift|/scale, δ = 0 —
    and that remedy is answered, above the same design's δ with the Laplace replaced by nothing
    (a lower reference: δ grows under composition)."""
    many = ((DiscreteGaussian("150"), 1), (DiscreteGaussian("151.7"), 1), (DiscreteGaussian("149.3"), 1))
    with pytest.raises(InputError, match="approx_dp"):
        ExactAccountant(Mixture(((Laplace(1), 1),) + many)).delta(["1"])
    fine = ((DiscreteGaussian("1/5"), 1), (DiscreteGaussian("200001/1000000", -1), 1))
    acc = ExactAccountant(Mixture(((ApproxDP(1, 0), 1),) + fine))
    pt = acc.delta(["1"])[0]
    lo, _ = brute.delta(brute.joint(fine), Fraction(1))
    assert pt.lower >= lo and pt.upper - pt.lower <= REL * pt.upper
