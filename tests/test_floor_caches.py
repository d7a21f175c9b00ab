"""The per-mechanism and per-group caches of the planner and the engine's set-up (issue 37).

``lattice_of`` (weights reduced once per mechanism object, integer arithmetic), the planner's
int64 decision (the lattice itself up to 256 groups, ``weights_exceed`` beyond) and the
conditioning's atom estimate (a product of per-group factors) are checked against
independent Fraction computations written here, on random designs with shifts of both
signs and repeated variances, each asked twice (the second answer from the caches).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from fractions import Fraction

from exactdp.accounting.plan import Design
from exactdp.engine.conditioning import atoms_estimate
from exactdp.engine.lattice import INT64_WEIGHTS, lattice_of, weights_exceed
from exactdp.engine.tails import _atoms_factor
from exactdp.mechanisms import Composition, DiscreteGaussian

_RNG = random.Random(20261207)


def _designs(n: int = 80):
    out = []
    for _ in range(n):
        s2s = [Fraction(_RNG.randint(1, 99999), 10 ** _RNG.randint(0, 4)) for _ in range(_RNG.randint(1, 5))]
        spec = [(_RNG.choice(s2s), _RNG.choice([1, -1, 2, -2, 3, 0]), _RNG.randint(1, 5))
                for _ in range(_RNG.randint(1, 7))]
        if all(d == 0 for _, d, _ in spec):
            spec.append((s2s[0], 1, 1))
        out.append(spec)
    return out


def _reference_lattice(spec):
    """``(weights, counts, sigma2, scale, shift)`` from the definition (module docstring of
    exactdp.engine.lattice): ``scale = lcm(den)/gcd(num)`` of the weights |Δ|/σ², groups with
    equal (A, σ²) merged, sorted by (A, σ²), ``K = 2·ρ·scale``."""
    mult: dict = defaultdict(int)
    for s2, d, m in spec:
        mult[(s2, d)] += m
    items = [(Fraction(abs(d)) / s2, s2, m) for (s2, d), m in mult.items() if d != 0]
    den, num = 1, 0
    for w, _, _ in items:
        den = den * w.denominator // math.gcd(den, w.denominator)
        num = math.gcd(num, w.numerator)
    scale = Fraction(den, num)
    merged: dict = defaultdict(int)
    for w, s2, m in items:
        a = w * scale
        assert a.denominator == 1
        merged[(int(a), s2)] += m
    keys = sorted(merged)
    rho = sum((Fraction(d * d) / (2 * s2) * m for (s2, d), m in mult.items()), Fraction(0))
    return (tuple(k[0] for k in keys), tuple(merged[k] for k in keys), tuple(k[1] for k in keys), scale,
            2 * rho * scale)


def test_lattice_of_and_int64_decision_against_the_definition():
    shared = {}  # one mechanism object per (σ², Δ), as a sweep's compositions share them
    for spec in _designs():
        comp = Composition(tuple((shared.setdefault((s2, d), DiscreteGaussian(s2, d)), m) for s2, d, m in spec))
        ref = _reference_lattice(spec)
        for _ in range(2):
            lat = lattice_of(comp)
            assert (lat.weights, lat.counts, lat.sigma2, lat.scale, lat.shift) == ref, spec
            too_large = max(ref[0]) >= INT64_WEIGHTS
            assert Design(comp).lattice_too_large == too_large
            assert weights_exceed(comp, INT64_WEIGHTS) == too_large
            for limit in (2**8, 2**20, 2**40):
                assert weights_exceed(comp, limit) == (max(ref[0]) >= limit), spec


def test_atom_estimate_is_the_product_of_its_group_factors():
    for _ in range(200):
        n = _RNG.randint(1, 4)
        s2 = [_RNG.choice([0.01, 0.2, 0.25, 0.49, 1.0, 3.7, 12.5]) for _ in range(n)]
        m = [_RNG.randint(1, 30) for _ in range(n)]
        for _ in range(2):
            assert math.prod(_atoms_factor(s, c) for s, c in zip(s2, m)) == atoms_estimate(s2, m)
