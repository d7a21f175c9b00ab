"""OpenDP's float Laplace / Gaussian on float *vectors* with an explicit ``k``, read back exactly,
against a reference written here: every integer shift vector r (in grid steps) of ℓp norm at most
B = (d + n^{1/p}(2^k − 2^k_min))/2^k enumerated by brute force over a box (no pattern theory), the
product noise's loss distribution convolved exactly on integer loss keys (discrete Laplace:
Σ |z − r| − |z|; discrete Gaussian: Σ r² − 2zr) in mpmath at 60 digits with |z| ≤ R (the rest
below 1e-60), δ(ε) = E[(1 − e^{ε − L})₊] maximised over the shifts; OpenDP's own privacy map as
an upper bound (its ε where δ reaches 0, its ρ above every shift's) and its own outputs on the
grid, rounded coordinatewise."""

from __future__ import annotations

import functools
import itertools
import math
from collections import defaultdict
from fractions import Fraction

import mpmath
import pytest

from exactdp import ExactAccountant

DPS = 60
K_MIN = -1074


def _inside(r: tuple[int, ...], d: Fraction, k: int, p: int) -> bool:
    """‖r‖_p ≤ D + n^{1/p}·c exactly (D = d/2^k, c = 1 − 2^{k_min − k}): for p = 2 by squaring twice."""
    n, g = len(r), Fraction(2) ** k
    big_d, c = d / g, 1 - Fraction(2) ** (K_MIN - k)
    if p == 1:
        return sum(r) <= big_d + n * c
    gap = sum(v * v for v in r) - big_d ** 2 - n * c * c  # ≤ 2·D·c·√n ?
    return gap <= 0 or gap * gap <= 4 * big_d ** 2 * c * c * n


def _shift_vectors(n: int, d: Fraction, k: int, p: int):
    """Every r ∈ Z_{≥0}^n (signs and order do not matter for iid symmetric noise) with ‖r‖_p ≤ the bound."""
    top = int(d / Fraction(2) ** k) + n + 1
    for r in itertools.product(range(top + 1), repeat=n):
        if _inside(r, d, k, p):
            yield r


def _loss_law(gaussian: bool, s: mpmath.mpf, shift: int) -> dict[int, mpmath.mpf]:
    """One coordinate: P(integer loss key) under the unshifted noise."""
    r = int(s * (20 if gaussian else 150)) + abs(shift) + 5
    w = {z: (mpmath.exp(-mpmath.mpf(z * z) / (2 * s * s)) if gaussian else mpmath.exp(-abs(z) / s))
         for z in range(-r, r + 1)}
    norm = mpmath.fsum(w.values())
    law: dict[int, mpmath.mpf] = defaultdict(mpmath.mpf)
    for z, v in w.items():
        law[shift * shift - 2 * z * shift if gaussian else abs(z - shift) - abs(z)] += v / norm
    return law


@functools.cache
def _joint(gaussian: bool, s: Fraction, r: tuple[int, ...]) -> dict[int, mpmath.mpf]:
    """The product noise's law of the integer loss key, shifts r (sorted: the law is symmetric)."""
    with mpmath.workdps(DPS):
        sf = mpmath.mpf(s.numerator) / s.denominator
        joint = {0: mpmath.mpf(1)}
        for shift in r:
            one = _loss_law(gaussian, sf, shift)
            new: dict[int, mpmath.mpf] = defaultdict(mpmath.mpf)
            for a, pa in joint.items():
                for b, pb in one.items():
                    new[a + b] += pa * pb
            joint = new
        return joint


def _ref_delta(gaussian: bool, s: Fraction, r: tuple[int, ...], eps: Fraction) -> mpmath.mpf:
    joint = _joint(gaussian, s, tuple(sorted(r)))
    with mpmath.workdps(DPS):
        sf = mpmath.mpf(s.numerator) / s.denominator
        unit = 2 * sf * sf if gaussian else sf  # loss = key / unit
        e = mpmath.mpf(eps.numerator) / eps.denominator
        return mpmath.fsum(m * (1 - mpmath.exp(e - key / unit)) for key, m in joint.items() if key / unit > e)


CASES = [  # kind, size, scale, k, d_in
    ("laplace", 2, 1.5, -1, 1.0), ("laplace", 3, 2.0, 0, 1.0), ("laplace", 3, 0.25, 0, 0.5),
    ("gaussian", 2, 1.0, -1, 1.0), ("gaussian", 3, 0.7, 0, 1.5), ("gaussian", 2, 9.0, 1, 3.0),
    ("gaussian", 2, 2.0, 0, 3.6),  # ‖r‖₂² ≤ 25: shifts (4, 3) have a larger δ(2) than (5, 0)
]


@pytest.mark.parametrize("kind,n,scale,k,d_in", CASES)
def test_opendp_grid_vectors_against_brute_force(opendp, kind, n, scale, k, d_in):
    dp = opendp
    from exactdp.interop.opendp_measurements import designs_of

    gaussian = kind == "gaussian"
    p = 2 if gaussian else 1
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=n)
    metric = dp.l2_distance(T=float) if gaussian else dp.l1_distance(T=float)
    m = (dp.m.make_gaussian if gaussian else dp.m.make_laplace)(vec, metric, scale=scale, k=k)
    grid = Fraction(2) ** k
    s = Fraction(scale) / grid
    designs = designs_of(m, d_in)
    shifts = sorted({tuple(sorted(r)) for r in _shift_vectors(n, Fraction(d_in), k, p) if any(r)})
    assert shifts and len(designs) >= 1
    # every design is a product of this noise with a shift vector inside the ball
    norms = set()
    for design in designs:
        r = [mech.shift for mech, count in design.groups for _ in range(count)]
        assert len(r) <= n and tuple(sorted(r + [0] * (n - len(r)))) in {tuple(sorted(x)) for x in shifts}
        for mech, _ in design.groups:
            assert (mech.sigma2 == s * s) if gaussian else (mech.scale == s)
        norms.add(sum(v ** p for v in r))
    # the largest norm of the ball is reached (OpenDP's own map, computed in floats, is its bound)
    top = max(sum(v ** p for v in r) for r in shifts)
    assert max(norms) == top
    opendp_value = Fraction(m.map(d_in))
    if gaussian:
        assert Fraction(top) * grid * grid / (2 * Fraction(scale) ** 2) <= opendp_value
    else:
        assert Fraction(top) * grid / Fraction(scale) <= opendp_value
    accs = [ExactAccountant(design) for design in designs]
    epss = [Fraction(0), Fraction(1, 4), Fraction(1), Fraction(2)]
    if not gaussian:
        epss.append(opendp_value * Fraction(999, 1000))
    for eps in epss:
        ref = max(_ref_delta(gaussian, s, r, eps) for r in shifts)
        got = [acc.delta([eps])[0] for acc in accs]
        with mpmath.workdps(DPS):
            lo = max(g.estimate - g.error_bound for g in got)
            hi = max(g.estimate + g.error_bound for g in got)
            assert lo <= ref + mpmath.mpf(10) ** -55 and ref <= hi + mpmath.mpf(10) ** -55, (eps, lo, hi, ref)
            assert hi - lo <= 1e-9 * ref + mpmath.mpf(10) ** -300
    if not gaussian:  # OpenDP's ε is where the exact δ reaches 0 or beyond
        assert all(acc.delta([opendp_value])[0].estimate == 0 for acc in accs)


def test_opendp_grid_vectors_sample_on_the_grid_rounded_coordinatewise(opendp):
    """OpenDP's own release at a negligible scale (2^-60 on the 2^-2 grid: nonzero noise with
    probability below e^{-2^58}) is the input rounded coordinatewise, ties up; at scale 3 its
    empirical variance per step matches the discrete Laplace's 2e^{-1/s}/(1 − e^{-1/s})² (s = 12)."""
    dp = opendp
    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=4)
    m = dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=2.0 ** -60, k=-2)
    x = [0.125, -0.125, 0.375, 1.124]
    assert [Fraction(v) for v in m(x)] == [Fraction(1, 4), Fraction(0), Fraction(1, 2), Fraction(1)]
    m = dp.m.make_laplace(dp.vector_domain(dp.atom_domain(T=float, nan=False), size=2000),
                          dp.l1_distance(T=float), scale=3.0, k=-2)
    out = [Fraction(v) * 4 for v in m([0.0] * 2000)]
    assert all(v.denominator == 1 for v in out)
    var = sum(float(v) ** 2 for v in out) / len(out)
    q = math.exp(-1 / 12)
    want = 2 * q / (1 - q) ** 2
    assert abs(var - want) < 6 * want * math.sqrt(5 / 2000)  # (kurtosis of a Laplace: 6; 6 standard errors)


def test_opendp_grid_vectors_in_compositions_and_chains(opendp):
    """make_composition and post-processing chains take the vector reads: the joint worst cases are
    the products of each part's patterns (for the Laplace one each: opendp_laplace_ball), and
    make_exact_composition's map is their maximum, against every pair of the parts' shift vectors."""
    dp = opendp
    from exactdp.interop.opendp_measurements import designs_of, make_exact_composition

    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=2)
    a = dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=1.5, k=-1)
    b = dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=3.0, k=0)
    assert len(designs_of(a, 1.0)) == 1 and len(designs_of(b, 1.0)) == 1
    both = designs_of(dp.c.make_composition([a, b >> (lambda v: v)]), 1.0)
    assert len(both) == 1 and set(both) == set(designs_of([a, b], 1.0))
    eps = Fraction(1, 2)
    with mpmath.workdps(DPS):
        # the composition's reference: the same brute force, the two parts' shift vectors independently
        ref = max(_ref_joint(ra, rb, eps) for ra in {tuple(sorted(r)) for r in _shift_vectors(2, Fraction(1), -1, 1)}
                  for rb in {tuple(sorted(r)) for r in _shift_vectors(2, Fraction(1), 0, 1)})
    got = make_exact_composition([a, b]).map(1.0).delta(float(eps))
    assert float(ref) <= got <= float(ref) * (1 + 1e-9)


def _ref_joint(ra, rb, eps) -> mpmath.mpf:
    """δ(ε) of two independent discrete Laplace vectors (grid scales 3 and 3) shifted by ra and rb."""
    return _ref_delta(False, Fraction(3), tuple(ra) + tuple(rb), eps)


def test_opendp_grid_vectors_refusals(opendp):
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of
    from exactdp.numerics.errors import InputError

    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3)
    got = design_of(dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=1.0, k=-10))  # (refused before the
    assert got.groups[0][0].shift == 1026  # Laplace's ℓ1 theorem: tests/test_opendp_laplace_ball.py)
    with pytest.raises(InputError, match=r"^k=-10: make_gaussian .*more than 64 worst-case"):
        design_of(dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale=1.0, k=-10))
    one = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=1)  # one coordinate: always one pattern
    got = design_of(dp.m.make_gaussian(one, dp.l2_distance(T=float), scale=1.0, k=-10))
    assert got.groups[0][0].shift == 1024 and got.groups[0][0].sigma2 == 2 ** 20
