"""Compositions from per-query ρ (``Composition.from_rhos``) against the stated convention.

The Census convention: one unit-shift discrete Gaussian of variance σ² = 1/ρ per query with
ρ > 0 (a ρ of 0 adds no mechanism); equal ρ, however written, form one group whose count
is their number; ρ < 0 and binary floats are refused naming the field.  The reference
is that sentence, counted here with ``collections.Counter`` on exact rationals.
"""

from __future__ import annotations

import random
from collections import Counter
from fractions import Fraction

import pytest

from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import InputError


def _reference_groups(rhos) -> Counter:
    counts = Counter(Fraction(r) for r in rhos)
    counts.pop(Fraction(0), None)
    return Counter({DiscreteGaussian(1 / r, 1): c for r, c in counts.items()})


def test_from_rhos_groups_equal_rhos_and_drops_zeros():
    rng = random.Random(8)
    pool = [Fraction(1, 7), Fraction(2, 14), "1/7", 3, Fraction(0), "0.25", Fraction(10**30, 3), Fraction(1, 10**40),
            "0"]
    for _ in range(80):
        rhos = [rng.choice(pool) for _ in range(rng.randint(1, 30))]
        if all(Fraction(r) == 0 for r in rhos):
            rhos.append(Fraction(1, 9))
        comp = Composition.from_rhos(rhos)
        got = Counter()
        for mech, count in comp.groups:
            got[mech] += count
        assert got == _reference_groups(rhos)
        assert len(comp.groups) == len(got)  # one group per distinct ρ
        assert comp.size == sum(1 for r in rhos if Fraction(r) != 0)


@pytest.mark.parametrize("bad", [[Fraction(1, 2), Fraction(-1, 3)], [0.5], [Fraction(1, 3), float("nan")]])
def test_from_rhos_refuses_negative_and_binary_floats(bad):
    with pytest.raises(InputError, match="rho"):
        Composition.from_rhos(bad)
