"""The Laplace's ℓ1 ball (exactdp.interop.opendp_laplace_ball): one coordinate moved by the whole norm
dominates every integer shift vector of the ball, alone and beside another mechanism — checked here
by brute force over **every** vector of small balls (no pattern theory): each coordinate's discrete
Laplace loss law on integer keys ``|z − s| − |z|`` (window |z| ≤ R, the rest below 1e-45, added to
the slack), convolved exactly in mpmath at 50 digits, δ(ε) = E[(1 − e^{ε − L})₊] at ε < 0, = 0 and
> 0; then OpenDP's measurements beyond the old 64-pattern limit, read back as one design, against
the same reference maximised over every partition of the norm."""

from __future__ import annotations

import functools
import itertools
from collections import defaultdict
from fractions import Fraction

import mpmath
import pytest

from exactdp import ExactAccountant

DPS = 50
SLACK = mpmath.mpf(10) ** -40


@functools.cache
def _law(scale: Fraction, shift: int) -> dict[int, mpmath.mpf]:
    """One coordinate's P(loss key) under the unshifted discrete Laplace (pmf ∝ e^{−|z|/b})."""
    with mpmath.workdps(DPS):
        b = mpmath.mpf(scale.numerator) / scale.denominator
        R = int(b * 110) + shift + 5  # e^{−R/b} < 1e-47
        w = {z: mpmath.exp(-abs(z) / b) for z in range(-R, R + 1)}
        norm = mpmath.fsum(w.values())
        law: dict[int, mpmath.mpf] = defaultdict(mpmath.mpf)
        for z, v in w.items():
            law[abs(z - shift) - abs(z)] += v / norm
        return dict(law)


@functools.cache
def _joint(scale: Fraction, shifts: tuple[int, ...], with_rr: bool) -> dict:
    """Joint law of (Laplace key sum, randomized response's key) (without it: key 0)."""
    extra = _rr_law()[1] if with_rr else None
    with mpmath.workdps(DPS):
        joint = {(0, 0): mpmath.mpf(1)}
        for s in shifts:
            new: dict = defaultdict(mpmath.mpf)
            for (a, e), pa in joint.items():
                for k, pk in _law(scale, s).items():
                    new[(a + k, e)] += pa * pk
            joint = new
        if extra is not None:
            new = defaultdict(mpmath.mpf)
            for (a, e), pa in joint.items():
                for k, pk in extra.items():
                    new[(a, e + k)] += pa * pk
            joint = new
        return joint


def _delta(scale: Fraction, shifts, eps, with_rr: bool = False) -> mpmath.mpf:
    """δ(ε) with loss ``a/b + e·ε0`` (``a`` the Laplace key sum, ``e`` randomized response's key)."""
    unit = _rr_law()[0]
    with mpmath.workdps(DPS):
        b = mpmath.mpf(scale.numerator) / scale.denominator
        ev = mpmath.mpf(eps.numerator) / eps.denominator
        out = mpmath.mpf(0)
        for (a, e), m in _joint(scale, tuple(sorted(shifts)), with_rr).items():
            loss = a / b + e * unit
            if loss > ev:
                out += m * (1 - mpmath.exp(ev - loss))
        return out


def _ball(n: int, budget: int):
    """Every r ∈ Z_{≥0}^n with Σ r ≤ budget (signs do not matter: the noise is symmetric)."""
    for r in itertools.product(range(budget + 1), repeat=n):
        if 0 < sum(r) <= budget:
            yield tuple(sorted(r, reverse=True))


@functools.cache
def _rr_law():
    """Randomized response with ε0 = 7/10 as a second mechanism: loss key ±1 (unit ε0), its P-masses."""
    with mpmath.workdps(DPS):
        e0 = mpmath.mpf(7) / 10
        p = mpmath.exp(e0) / (1 + mpmath.exp(e0))
        return e0, {1: p, -1: 1 - p}


@pytest.mark.parametrize("scale", [Fraction(1, 5), Fraction(1), Fraction(7, 3), Fraction(12)])
@pytest.mark.parametrize("n,budget", [(2, 5), (3, 4), (4, 4)])
def test_one_coordinate_dominates_every_vector_of_the_ball(scale, n, budget):
    """max over every vector of the ball of δ(ε) = δ(ε) at (budget,) — for ε below 0, at 0, inside
    and near the end of the loss range (budget/b), alone and beside randomized response."""
    top = Fraction(budget) / scale
    epss = [Fraction(-1, 2), Fraction(0), Fraction(1, 10), top / 3, top * 9 / 10, top + Fraction(1, 2)]
    vectors = sorted(set(_ball(n, budget)))
    with mpmath.workdps(DPS):
        for eps in epss:
            for with_rr in (False, True):
                worst = _delta(scale, (budget,), eps, with_rr)
                for r in vectors:
                    assert _delta(scale, r, eps, with_rr) <= worst + SLACK, (scale, r, eps, with_rr)
    # (and the ordering is strict somewhere: a vector with two moved coordinates is really less private)
    with mpmath.workdps(DPS):
        assert _delta(scale, (budget - 1, 1), Fraction(0)) < _delta(scale, (budget,), Fraction(0)) * (1 - 1e-9)


def _partitions(total: int, most: int):
    def grow(prefix, left, largest):
        if left == 0:
            yield tuple(prefix)
            return
        if len(prefix) == most:
            return
        for part in range(min(largest, left), 0, -1):
            yield from grow(prefix + [part], left - part, part)

    yield from grow([], total, total)


def test_opendp_integer_vector_laplace_beyond_64_patterns(opendp):
    """make_laplace / make_geometric on integer vectors with l1_distance at d_in = 13 (101 partitions:
    refused before) is one design, whose certified δ bracket contains the brute-force maximum over
    every partition of 13 (a superset of the maximal vectors: the ball's boundary)."""
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of, designs_of

    iv = dp.vector_domain(dp.atom_domain(T=int), size=16)
    scale = Fraction(3, 2)
    for make in (dp.m.make_laplace, dp.m.make_geometric):
        m = make(iv, dp.l1_distance(T=int), scale=float(scale))
        assert len(designs_of(m, 13)) == 1
        design = design_of(m, 13)
    ((mech, count),) = design.groups
    assert (mech.scale, mech.shift, count) == (scale, 13, 1)
    parts = list(_partitions(13, 16))
    assert len(parts) == 101
    acc = ExactAccountant(design)
    for eps in (Fraction(0), Fraction(3), Fraction(8)):
        with mpmath.workdps(DPS):
            ref = max(_delta(scale, r, eps) for r in parts)
            (got,) = acc.delta([eps])
            lo, hi = got.estimate - got.error_bound, got.estimate + got.error_bound
            assert lo <= ref + SLACK and ref <= hi + SLACK, (eps, lo, hi, ref)


def test_opendp_float_vector_laplace_on_a_fine_grid_is_one_design(opendp):
    """k = −10 on a float vector of size 3 (refused before: 1026 steps of ℓ1 budget, ~88,000
    partitions): DiscreteLaplace(2^10, 1026); its δ reaches 0 at OpenDP's own ε (1026/1024 ≤ map),
    and its profile is at least that of any vector of the ball brute-forced at a coarse point."""
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of

    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3)
    m = dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=1.0, k=-10)
    ((mech, count),) = design_of(m, 1.0).groups
    assert (mech.scale, mech.shift, count) == (1024, 1026, 1)
    assert Fraction(1026, 1024) <= Fraction(m.map(1.0))
    assert ExactAccountant(design_of(m, 1.0)).delta([Fraction(m.map(1.0))])[0].estimate == 0
    # k = None (the continuous convention of the scalar read-back): Laplace(b, d) on the vector
    m = dp.m.make_laplace(vec, dp.l1_distance(T=float), scale=2.0)
    ((mech, count),) = design_of(m, 1.5).groups
    assert (type(mech).__name__, mech.scale, mech.shift) == ("Laplace", 2, Fraction(3, 2))


def test_opendp_gaussian_vectors_beyond_the_limit_still_refused(opendp):
    """The discrete Gaussian has no such theorem (shifts (4, 3) beat 5 at ℓ2): still refused, naming k."""
    dp = opendp
    from exactdp.interop.opendp_measurements import design_of
    from exactdp.numerics.errors import InputError

    vec = dp.vector_domain(dp.atom_domain(T=float, nan=False), size=3)
    with pytest.raises(InputError, match=r"^k=-10: make_gaussian .*more than 64 worst-case"):
        design_of(dp.m.make_gaussian(vec, dp.l2_distance(T=float), scale=1.0, k=-10))
