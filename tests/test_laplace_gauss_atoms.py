"""Continuous Laplaces of huge ``mμ`` beside a continuous Gaussian of tiny ρ_N and few discrete
Gaussians: the discrete Gaussians' atoms summed against the Laplace + Gaussian kernel
(:mod:`exactdp.accounting.laplace_atoms`, issue 35: the smoothed inversion refused ε(1e-9) of
``Laplace(1/50) + Gaussian(10⁴) + DG(1/2)×2``), against a reference written here: the discrete
Gaussians enumerated from their pmfs at 70 digits (``tests/mixed_brute.py``), each atom against
the kernel ``E_P[(1 − e^{t−L−N})_+]`` — the Laplaces' atoms and tilted Irwin–Hall density
(``tests/test_laplace_beside.py``) against the Gaussian's Φ form, ``mpmath.quad`` with break
points at the knots and at 0, ±2, ±4, … ±32 sd around the Gaussian's kink (sd = √(2ρ_N) ≤ 0.01: a piece
across it would be misjudged), its error estimate ×100 in the bracket.  Atoms of P-mass below
1e-13 of the δ asked are not integrated (their mass on the upper end).  δ at ε = 0 … 97 (down to
~2e-116), ε(1e-9) on μ = 50 and a smaller μ = 2 (two Laplaces); never a wrong side, brackets
≤ 1e-9 relative."""

from __future__ import annotations

from fractions import Fraction

import mixed_brute as brute
import mpmath
import pytest
from test_laplace_beside import gauss_hockey, laplace_split
from test_laplace_inversion import _f, _inside, atoms_delta

from exactdp import DiscreteGaussian, ExactAccountant, Gaussian, Mixture
from exactdp.kinds.laplace import Laplace

REL = mpmath.mpf("1e-9")
ROUTE = "dg-atoms-laplace-gaussian-quadrature"


def _m(q) -> mpmath.mpf:
    q = Fraction(q)
    return mpmath.mpf(q.numerator) / q.denominator


def ref_kernel(mu_q: Fraction, count: int, rho_q: Fraction, t: Fraction, dps: int = 20) -> tuple:
    """``(lo, hi)`` of ``E_P[(1 − e^{t − L − N})_+]``, ``count`` Laplaces of μ, N ~ N(ρ, 2ρ) (break
    points also around the Gaussian's kink: its sd may be far below μ)."""
    with mpmath.workdps(dps):
        mu, rho = _m(mu_q), _m(rho_q)
        sd = mpmath.sqrt(2 * rho)
        d_n = gauss_hockey(rho, sd)
        total, err = mpmath.mpf(0), mpmath.mpf(0)
        for mass, tt, c, dens in laplace_split(mu_q, count, t):
            if c == 0:
                total += mass * d_n(tt)
                continue
            pts = {-c * mu + 2 * mu * mpmath.mpf(k) / 3 for k in range(3 * c + 1)}
            pts |= {tt - rho + j * sd for j in (-32, -16, -8, -4, -2, 0, 2, 4, 8, 16, 32)
                    if -c * mu < tt - rho + j * sd < c * mu}
            val, e = mpmath.quad(lambda u, tt=tt, dens=dens: dens(u) * d_n(tt - u), sorted(pts), error=True)
            total += mass * val
            err += mass * abs(e)
        slack = 100 * err + abs(total) * mpmath.mpf(10) ** (8 - dps)
        return total - slack, total + slack


def ref_delta(atoms: tuple, mu, count: int, rho, eps, scale) -> tuple:
    """:func:`test_laplace_inversion.atoms_delta` against :func:`ref_kernel`."""
    return atoms_delta(atoms, lambda t: ref_kernel(mu, count, rho, t), eps, scale)


DESIGNS = {
    # issue 35: μ = 50 beside ρ_N = 5e-5 (the inversion's 383,379 nodes cancel by 1e7: refused)
    "huge-mu": ((Laplace("1/50"), 1), (Gaussian(10**4), 1), ((DiscreteGaussian("1/2"), 2),)),
    # a smaller μ = 2, two Laplaces, ρ_N = 5e-7
    "small-mu": ((Laplace(1, 2), 2), (Gaussian(10**6), 1), ((DiscreteGaussian("1/2"), 2),)),
}
DELTAS = {"huge-mu": ["0", "49", "97"], "small-mu": ["0", "41"]}


def _design(name):
    (lap, count), (g, gc), finite = DESIGNS[name]
    acc = ExactAccountant(Mixture(((lap, count), (g, gc)) + finite))
    return acc, brute.joint(finite), lap.epsilon, count, g.rho * gc


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_delta_and_epsilon(name):
    acc, atoms, mu, count, rho = _design(name)
    assert ROUTE in acc.diagnostics().method, acc.diagnostics().method
    es = DELTAS[name]
    pts = acc.delta(es)
    for e, pt in zip(es, pts):
        _inside(pt, *ref_delta(atoms, mu, count, rho, e, pt.upper), (name, e))
    assert pts[-1].upper < mpmath.mpf("1e-25" if name == "small-mu" else "1e-100"), pts[-1]  # (deep)
    pt = acc.epsilon(["1e-9"])[0]
    tq = mpmath.mpf("1e-9")
    assert 0 < pt.upper - pt.lower <= REL * pt.upper, (name, pt)
    # δ(ε_lower) ≥ 1e-9 ≥ δ(ε_upper): the true ε inside
    assert ref_delta(atoms, mu, count, rho, _f(pt.lower), tq)[1] >= tq, (name, "lower")
    assert ref_delta(atoms, mu, count, rho, _f(pt.upper), tq)[0] <= tq, (name, "upper")


def test_kernel_brackets_hold_off_the_laplace_range():
    """The atoms' first brackets (tail bounds of ``D_{L+N}``) hold against the reference far
    left, near the knots and far right, and the exact kernel sits inside them."""
    import numpy as np

    from exactdp.accounting.laplace_atoms import LaplaceAtomsProfile
    from exactdp.engine.families import groups_of
    from exactdp.kinds.laplace import LaplaceLoss
    from exactdp.kinds.laplace_gauss import LaplaceGaussLoss
    from exactdp.mechanisms import Composition

    rho = Fraction(1, 20000)
    prof = LaplaceAtomsProfile(groups_of(Composition(((DiscreteGaussian("1/2"), 1),))),
                               LaplaceGaussLoss(LaplaceLoss(Fraction(50), 1), rho))
    xs = [-50.2, -50.03, -49.99, 0.0, 49.99, 50.02, 50.08, 50.3]
    lo, hi = prof._gauss_brackets(np.array(xs), np.array(xs))
    for x, a, b in zip(xs, lo, hi):
        r_lo, r_hi = ref_kernel(Fraction(50), 1, rho, Fraction(x))
        assert a <= r_hi and r_lo <= b, (x, a, b, r_lo, r_hi)
    assert hi[-1] < 1e-100 and hi[0] - lo[0] < 1e-14  # (far off the range: narrow)


@pytest.mark.parametrize("mu,rho,ts", [
    ("50", "1/20000", ["-351/7", "25", "4999/100", "1003/20"]),  # sd 0.01 ≪ μ
    ("1/2", "1/8", ["-9/14", "49/100", "6"]),
    ("1/1000", "2", ["-1007/7000", "9"]),  # μ ≪ sd
])
def test_single_laplace_closed_form_against_the_reference(mu, rho, ts):
    """One Laplace beside continuous Gaussians: the closed form of ``D_{L+N}`` (no quadrature,
    :meth:`~exactdp.kinds.laplace_gauss.LaplaceGaussLoss._closed`) inside the reference's bracket,
    ≤ 1e-12 relative, deep in the right tail too (μ = 50: D ≈ 1e-60 at 50.15)."""
    from exactdp.kinds.laplace import LaplaceLoss
    from exactdp.kinds.laplace_gauss import LaplaceGaussLoss

    loss = LaplaceGaussLoss(LaplaceLoss(Fraction(mu), 1), Fraction(rho))
    for t in ts:
        b = loss._closed(Fraction(t), 64)
        assert b is not None
        lo, hi = (_m(Fraction(int(m)) * Fraction(2) ** int(e)) for m, e in (b.lower().man_exp(), b.upper().man_exp()))
        r_lo, r_hi = ref_kernel(Fraction(mu), 1, Fraction(rho), Fraction(t))
        assert hi >= r_lo and lo <= r_hi, (mu, rho, t, lo, hi, r_lo, r_hi)
        assert hi - lo <= mpmath.mpf("1e-12") * hi, (mu, rho, t, lo, hi)
