"""The lattice-free searches spend few oracle points and stay certified.

ε(δ) (:mod:`exactdp.accounting.profile_search`) and β(α)
(:mod:`exactdp.accounting.dual_tradeoff`) are counted in oracle points (the profile's
``log_brackets`` wrapped) and checked against independent brute force
(:func:`harness.epsilon_brute`, :func:`harness.tradeoff_brute`) on a small design.
"""

from __future__ import annotations

from fractions import Fraction as F

import mpmath
import pytest

from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import epsilon_brute, tradeoff_brute

FOUR = ("1.1", "2.37", "3.14159", "7/3")
FIVE = ("174.9", "1522.8", "113.4", "1301.5", "210.5")
SMALL = [(F("0.7"), 1), (F("1.3"), 2), (F("0.15"), -1)]  # small enough for brute force
REL = mpmath.mpf("1e-9")


def _counted(values) -> tuple:
    mechs = values if values is SMALL else [(F(v), 1) for v in values]
    comp = Composition([(DiscreteGaussian(s2, d), 1) for s2, d in mechs])
    acc = LatticeFreeAccountant(comp)
    inner = acc.profile.log_brackets
    count = [0]

    def wrapped(a, b):
        count[0] += len(a)
        return inner(a, b)

    acc.profile.log_brackets = wrapped
    return acc, count


@pytest.mark.parametrize("values", [FOUR, FIVE, SMALL], ids=["four", "five", "small"])
def test_epsilon_within_ten_points_per_target(values):
    acc, count = _counted(values)
    targets = ["1e-2", "1e-6", "1e-10"]
    pts = acc.epsilon(targets)
    # the small mixed-shift design still needs ~21 points per target (its lattice-like δ;
    # 63 at EPS_WIDTH 2.5e-10, 57 at 5e-10)
    assert count[0] <= (22 if values is SMALL else 10) * len(targets), count[0]
    for p in pts:
        assert 0 < p.lower <= p.upper and p.upper - p.lower <= REL * p.upper
    if values is SMALL:
        for t, p in zip(targets, pts):
            ref = epsilon_brute(SMALL, F(t))
            with mpmath.workdps(60):
                assert p.lower <= ref <= p.upper, (t, p.lower, ref, p.upper)


@pytest.mark.parametrize("values", [FOUR, SMALL], ids=["four", "small"])
def test_tradeoff_within_budget_and_against_brute_force(values):
    acc, count = _counted(values)
    alphas = ["1/2", "0.9"]
    pts = acc.tradeoff(alphas)
    assert count[0] <= 25 * len(alphas), count[0]
    for a, p in zip(alphas, pts):
        if values is not SMALL:
            assert p.upper - p.lower <= REL * p.upper
            continue
        ref = tradeoff_brute(SMALL, F(a))
        with mpmath.workdps(60):
            assert p.lower <= ref <= p.upper, (a, p.lower, ref, p.upper)
            assert p.upper - p.lower <= REL * ref


def test_tradeoff_large_variances_in_few_points_including_extreme_alphas():
    acc, count = _counted(FIVE)
    alphas = ["1e-12", "0.01", "0.5", "0.9", "0.999999999999"]
    pts = acc.tradeoff(alphas)
    assert count[0] <= 10 * len(alphas), count[0]
    for p in pts:
        with mpmath.workdps(40):
            assert 0 < p.lower <= p.upper and p.upper - p.lower <= REL * p.upper


def test_epsilon_edges_stay_certified():
    acc, count = _counted(FIVE)
    (deep,) = acc.epsilon(["1e-200"])
    assert deep.upper - deep.lower <= REL * deep.upper and count[0] <= 10
    acc4, count4 = _counted(FOUR)
    (zero,) = acc4.epsilon(["0.6"])  # above δ(0) ≈ 0.529: ε = 0 on one point
    assert zero.upper == 0 and count4[0] == 1
    (near,) = acc4.epsilon(["0.5"])  # ε ≈ 0.12, near the answer 0
    assert near.upper - near.lower <= REL * near.upper and count4[0] <= 11
