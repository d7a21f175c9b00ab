"""OpenDP's float Laplace / Gaussian with an explicit ``k`` read back exactly, against OpenDP's own
output distributions written here: the input rounded to the nearest multiple of 2^k, ties up
(checked on OpenDP's own output at a negligible scale), integer noise ∝ e^{−|z|/s} or
e^{−z²/(2s²)} with s = scale/2^k (the float scale taken exactly), the worst-case inputs
x = 2^(k−1) (a tie, rounded up) and x' = x − d; δ(ε) = Σ_z (P(z) − e^ε Q(z))₊ over the integers in mpmath at
60 digits (|z| ≤ R, the rest below 1e-60), and OpenDP's own privacy map as an upper bound."""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import pytest

from exactdp import ExactAccountant
from exactdp.kinds import DiscreteLaplace, Mixture
from exactdp.mechanisms import Composition, DiscreteGaussian

DPS = 60


def _round(x: Fraction, grid: Fraction) -> Fraction:
    """x to the nearest multiple of grid, a tie up (what OpenDP 0.16 does: checked below on its output)."""
    return math.floor(x / grid + Fraction(1, 2)) * grid


def _ref_delta(gaussian: bool, s: Fraction, shift: int, eps: Fraction) -> mpmath.mpf:
    """Σ_z (P(z) − e^ε Q(z))₊ with P = noise, Q = noise + shift on the integers (s the grid scale)."""
    with mpmath.workdps(DPS):
        sf = mpmath.mpf(s.numerator) / s.denominator
        if gaussian:
            r = int(sf * 20) + abs(shift) + 5
            w = lambda z: mpmath.exp(-mpmath.mpf(z * z) / (2 * sf * sf))  # noqa: E731
        else:
            r = int(sf * 150) + abs(shift) + 5
            w = lambda z: mpmath.exp(-abs(z) / sf)  # noqa: E731
        zs = range(-r, r + 1)
        norm = mpmath.fsum(w(z) for z in zs)
        e = mpmath.exp(mpmath.mpf(eps.numerator) / eps.denominator)
        return mpmath.fsum(max(mpmath.mpf(0), (w(z) - e * w(z - shift)) / norm) for z in zs)


CASES = [("laplace", 1.5, -2, 1.0), ("laplace", 0.3, -3, 1.1), ("gaussian", 1.5, -2, 1.0),
         ("gaussian", 0.7, 0, 2.5), ("laplace", 2.0, 1, 0.5)]


@pytest.mark.parametrize("kind,scale,k,d_in", CASES)
def test_opendp_grid_noise_against_its_output_distributions(opendp, kind, scale, k, d_in):
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of

    atom = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    make = dp.m.make_gaussian if kind == "gaussian" else dp.m.make_laplace
    m = make(*atom, scale=scale, k=k)
    grid = Fraction(2) ** k
    x1 = grid / 2
    x0 = x1 - Fraction(d_in)
    assert Fraction(float(x0)) == x0  # (both inputs are floats: the worst case is attained)
    shift = int((_round(x1, grid) - _round(x0, grid)) / grid)
    s = Fraction(scale) / grid
    want = Composition(((DiscreteGaussian(s * s, shift), 1),)) if kind == "gaussian" else \
        Mixture(((DiscreteLaplace(s, shift), 1),))
    assert design_of(m, d_in) == want
    # OpenDP's own outputs lie on the grid
    assert all((Fraction(m(float(x0))) / grid).denominator == 1 for _ in range(5))
    acc = ExactAccountant(want)
    opendp_eps = Fraction(m.map(d_in)) if kind == "laplace" else None
    epss = [Fraction(0), Fraction(1, 4), Fraction(1)] + ([opendp_eps * Fraction(999, 1000)] if opendp_eps else [])
    for eps, got in zip(epss, acc.delta(epss)):
        ref = _ref_delta(kind == "gaussian", s, shift, eps)
        with mpmath.workdps(DPS):
            lo, hi = got.estimate - got.error_bound, got.estimate + got.error_bound
            assert lo <= ref <= hi + mpmath.mpf(10) ** -55, (eps, lo, hi, ref)
            assert hi - lo <= 1e-9 * ref + mpmath.mpf(10) ** -300
    if kind == "laplace":  # OpenDP's ε bounds the exact pure ε (d/b + the rounding's 2^k/b)
        assert acc.delta([opendp_eps])[0].estimate == 0
        assert Fraction(shift) / s <= opendp_eps
    else:  # OpenDP's ρ bounds the exact ρ
        assert want.rho <= Fraction(m.map(d_in))


def test_opendp_rounds_ties_down_on_the_grid(opendp):
    """The rounding model above, on OpenDP's own output: at scale 2^-60 the noise on the 2^-2
    grid is 0 except with probability below e^{−2^58} (ties go up: 0.125 → 0.25, −0.125 → 0)."""
    dp = opendp
    atom = dp.atom_domain(T=float, nan=False), dp.absolute_distance(T=float)
    m = dp.m.make_laplace(*atom, scale=2.0**-60, k=-2)
    for x in (0.125, 0.375, 1.125, 0.126, 0.124, -0.125, -0.375, 1.0 + 0.125 + 2.0**-40):
        assert Fraction(m(x)) == _round(Fraction(x), Fraction(1, 4)), x


def test_opendp_grid_refusals(opendp):
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of
    from exactdp.numerics.errors import InputError

    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3)
    with pytest.raises(InputError, match="^k=-10: .*more than 64 worst-case shift patterns"):  # (k=-1: read back,
        design_of(dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale=1.0, k=-10))  # test_opendp_grid_vectors)
