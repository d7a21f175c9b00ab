"""Exact lattice thresholds (exactdp.engine.lattice) against exact and 400-digit references.

``floor_exact(x, scale)`` must be ``⌊scale·x⌋`` exactly, for a Fraction and for an
irrational value given as a callable ``x(dps)``; a callable within 1e-190 of a lattice
point must be refused (ValueError), never rounded.  ``delta_thresholds(ε)`` must be
``(k1, k1 + K)`` with ``k1 = ⌊(ε − c)·scale⌋ + 1``.  References: Fraction arithmetic, and
the callable evaluated at 400 digits (far beyond the 50 and 200 the code uses).
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import pytest

from exactdp.engine.lattice import LatticeSum, floor_exact
from exactdp.numerics.precision import to_mpf, workdps

from harness import mp

REF_DPS = 400


def _reference_floor(x, scale):
    """``⌊scale·x(400)⌋`` and the distance of ``scale·x`` to the nearest integer."""
    with mpmath.workdps(REF_DPS):
        y = x(REF_DPS) * mp(scale)
        f = mpmath.floor(y)
        return int(f), min(y - f, f + 1 - y)


def _offsets():
    with mpmath.workdps(REF_DPS):
        # far from a lattice point, within 1e-45 of one (the 200-digit pass), on one
        return [mpmath.sqrt(2) / 7, mpmath.mpf(10) ** -45 * mpmath.sqrt(3), mpmath.mpf(0), -mpmath.pi / 10**60]


def _check(got_or_error, ref, dist):
    if dist > mpmath.mpf(10) ** -180:
        assert got_or_error == ref
    elif dist < mpmath.mpf(10) ** -200:
        assert got_or_error is ValueError
    # (between the two: either answer is allowed)


def _call(f, *args):
    try:
        return f(*args)
    except ValueError:
        return ValueError


def test_floor_exact_of_fractions_is_the_rational_floor():
    rng = random.Random(3)
    for _ in range(300):
        x = Fraction(rng.randint(-10**40, 10**40), rng.randint(1, 10**20))
        scale = Fraction(rng.randint(1, 10**30), rng.randint(1, 10**12))
        assert floor_exact(x, scale) == math.floor(x * scale)
        assert floor_exact(x) == math.floor(x)
    assert floor_exact(Fraction(-7, 2), 2) == -7 and floor_exact(Fraction(-7, 3), 3) == -7


def test_floor_exact_of_irrationals_or_refusal():
    rng = random.Random(17)
    offs = _offsets()
    refused = 0
    for i in range(200):
        scale = Fraction(rng.randint(1, 10**30), rng.randint(1, 10**12))
        k = rng.randint(-10**9, 10**9)  # |scale·x| ≤ 1e9 (see the test below)
        off = offs[i % len(offs)]

        def x(dps, k=k, scale=scale, off=off):
            with workdps(dps + 10):
                return (mpmath.mpf(k) + off) / to_mpf(scale)

        ref, dist = _reference_floor(x, scale)
        got = _call(floor_exact, x, scale)
        _check(got, ref, dist)
        refused += got is ValueError
    assert 0 < refused < 100  # both outcomes are exercised


def test_delta_thresholds_of_fractions_and_callables():
    rng = random.Random(9)
    offs = _offsets()
    for i in range(150):
        scale = Fraction(rng.randint(1, 10 ** rng.randint(1, 6)), rng.randint(1, 10 ** rng.randint(0, 8)))
        c = Fraction(rng.randint(0, 10**20), rng.randint(1, 10**15))
        K = rng.randint(0, 10**6)
        lat = LatticeSum((1,), (1,), (Fraction(1),), scale, c, K)
        e = c + Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 10**6))
        k1 = math.floor((e - c) * scale) + 1
        assert lat.delta_thresholds(e) == (k1, k1 + K)
        assert lat.threshold_above(e - c) == k1
        off = offs[i % len(offs)]

        def eps(dps, e=e, off=off):
            with workdps(dps + 10):
                return to_mpf(e) + off

        ref, dist = _reference_floor(lambda dps, eps=eps, c=c: eps(dps) - mp(c), scale)
        got = _call(lat.delta_thresholds, eps)
        _check(got, (ref + 1, ref + 1 + K), dist)


def test_floor_exact_near_a_lattice_point_of_a_large_product():
    # |scale·x| ~ 1e40 and 1e-30 below an integer: an absolute 1e-40 gap at 50 digits
    # (the product's rounding is relative, ~1e-10 here) floored it to the integer
    wrong = []
    for j in range(1, 40):
        k = 10**40 + 12345 * j
        scale = Fraction(10**12 + 39 * j, 7)

        def x(dps, k=k, scale=scale):
            with workdps(dps + 10):
                return (mpmath.mpf(k) - mpmath.mpf(10) ** -30 * mpmath.sqrt(2)) / to_mpf(scale)

        got = _call(floor_exact, x, scale)
        if got not in (k - 1, ValueError):
            wrong.append((k, got))
    assert not wrong


@pytest.mark.parametrize("e", [Fraction(0), Fraction(-10**30, 7), Fraction(10**60 + 1, 3)])
def test_delta_thresholds_far_from_the_offset(e):
    lat = LatticeSum((3, 5), (2, 1), (Fraction(1), Fraction(2)), Fraction(10**12, 7), Fraction(1, 3), 12)
    k1 = math.floor((e - lat.c) * lat.scale) + 1
    assert lat.delta_thresholds(e) == (k1, k1 + 12)
