"""The levels by depth handing deep thresholds to the grouped tilted levels (ten three-decimal
σ² near 0.54 with counts 1–3 at shift 1: ε(1e-30) was 4.8e-9 relative wide, δ at that ε
1.5e-7, ε(1e-60) refused — the untilted halves' first depth omits ~e^{−85}, the next depth
was too large to build, the counts spelled out too large for the tilted levels).

The reference is :class:`test_halves_ladder._Brute`: exact enumeration in mpmath (50 digits)
of three single mechanisms, nothing of exactdp.  A count-2 group and a single one take the
levels by depth (the counts keep them from the tilted levels); the deeper depths are made
unbuildable here (``DEEP_HALF_ATOMS = 0``) as the large design's are, so what the first depth
leaves out must be answered by the grouped tilted levels.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
from test_halves_ladder import _Brute

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.engine import halves
from exactdp.engine.families import groups_of
from exactdp.engine.halves import HalvesProfile
from exactdp.mechanisms import Composition, DiscreteGaussian

PROMISE = 1e-9


def test_depths_beyond_reach_go_to_the_grouped_levels(monkeypatch):
    monkeypatch.setattr(halves, "DEEP_HALF_ATOMS", 0)  # no level beyond the first depth
    comp = Composition(((DiscreteGaussian(F("0.540")), 2), (DiscreteGaussian(F("0.547")), 1)))
    acc = LatticeFreeAccountant(comp)
    acc.profile = HalvesProfile(groups_of(comp))
    assert not acc.profile.tilted  # the count 2 keeps the groups from the tilted levels
    ref = _Brute((("0.540", 1), ("0.540", 1), ("0.547", 1)))
    eps = [F(3), F(12), F(22), F(30), F(38), F(45)]
    with mpmath.workdps(50):
        assert ref.delta(eps[-1]) < mpmath.mpf(10) ** -55  # beyond the first depth's e^{−100}
        for e, p in zip(eps, acc.delta(eps)):
            value = ref.delta(e)
            assert p.lower <= value <= p.upper, (e, p.lower, p.upper, value)
            assert p.upper - p.lower <= PROMISE * value, (e, float((p.upper - p.lower) / value))
    for target in (F(1, 10**30), F(1, 10**50)):
        (ep,) = acc.epsilon([target])
        with mpmath.workdps(50):
            level = mpmath.mpf(target.numerator) / target.denominator
            assert ref.delta(F(mpmath.nstr(ep.upper, 40)) + F(1, 10**30)) <= level
            assert ref.delta(F(mpmath.nstr(ep.lower, 40)) - F(1, 10**30)) >= level
            assert ep.upper - ep.lower <= PROMISE * ep.upper, float((ep.upper - ep.lower) / ep.upper)


def test_the_narrow2_design_answers_deep_epsilon_within_the_promise():
    """The design itself through the public accountant: ε(1e-30) and ε(1e-60) within 1e-9
    (main: 4.8e-9 and refused, "brackets it only in [110.456, 112.336]"), inside main's
    certified brackets [82.2659927984, 82.2659931903] and that range."""
    d = [("0.540", 2), ("0.543", 3), ("0.548", 1), ("0.541", 2), ("0.538", 1), ("0.547", 3), ("0.539", 1),
         ("0.549", 1), ("0.536", 2), ("0.544", 2)]
    acc = ExactAccountant(Composition(tuple((DiscreteGaussian(F(s)), c) for s, c in d)))
    e30, e60 = acc.epsilon(["1e-30", "1e-60"])
    assert 82.2659927984 <= e30.lower <= e30.upper <= 82.2659931903
    assert 110.456 < e60.lower <= e60.upper < 112.337
    for ep in (e30, e60):
        assert ep.upper - ep.lower <= PROMISE * ep.upper, float((ep.upper - ep.lower) / ep.upper)
