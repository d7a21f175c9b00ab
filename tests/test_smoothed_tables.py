"""The smoothed profile's shared tables and the trade-off's hinted fallback.

* :func:`exactdp.kernels.profile.penalty_tables` (every group in one call) gives the same
  bits as the per-group :func:`exactdp.engine.families.group_penalty`, and each entry is a
  lower bound of the exact penalty ``m·(log D − log P(2πd))`` computed in mpmath at 40
  digits (|k| ≤ 40 terms of both series: the reference shares nothing with the kernel).
* :func:`exactdp.engine.smoothed_profile.exact_sum` equals the sequential ``Fraction`` sum.
* A :class:`SmoothedProfile` built on shared :class:`GroupConsts` keeps the node set of one
  built alone.
* β(α) where the batched search is stopped before its stencil certifies (``ROUNDS = 0``):
  the α continue from the batch's proposal (the hinted zoom) and end certified, ≤ 1e-9
  relative, and intersecting the bracket of the unforced search (both contain β).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from exactdp.kernels.profile import penalty_tables

import exactdp.accounting.tradeoff_batch as tb
from exactdp.accounting.lattice_free import LatticeFreeAccountant
from exactdp.engine.families import Group, group_penalty, log_d
from exactdp.engine.smoothed_profile import PEN_TABLE, GroupConsts, SmoothedProfile, exact_sum
from exactdp.mechanisms import Composition, DiscreteGaussian

FIVE = ("174.9", "1522.8", "113.4", "1301.5", "210.5")


def _exact_penalty(d: float, s2: float, m: int):
    """``m·(log D − log Σ_k e^{−σ²(2πd − 2πk)²/2})`` at 40 digits (0 where D ≤ 1/2)."""
    with mpmath.workdps(40):
        s2m, dm = mpmath.mpf(s2), mpmath.mpf(d)
        D = 1 - 2 * mpmath.fsum(mpmath.exp(-2 * mpmath.pi**2 * s2m * k * k) for k in range(1, 41))
        if D <= 0.5:
            return mpmath.mpf(0)
        P = mpmath.fsum(mpmath.exp(-s2m * (2 * mpmath.pi * (dm - k)) ** 2 / 2) for k in range(-40, 41))
        return max(mpmath.mpf(0), m * (mpmath.log(D) - mpmath.log(P)))


def test_penalty_tables_match_per_group_and_bound_the_exact_penalty():
    rng = np.random.default_rng(20261207)
    s2 = np.concatenate([[0.05, 0.3, 1.0, 7.5, 2429.62, 1e6], rng.uniform(0.1, 500.0, 10)])
    m = np.concatenate([[1, 3, 1, 38, 10, 1], rng.integers(1, 50, 10)]).astype(np.int64)
    logd = np.array([log_d(float(v)) for v in s2])
    d_cap = np.minimum(0.5, rng.uniform(1e-4, 0.6, s2.size))
    tab = penalty_tables(s2, m, logd, d_cap, PEN_TABLE)
    for g in range(s2.size):
        grid = np.arange(PEN_TABLE + 1) * (d_cap[g] / PEN_TABLE)
        ref = np.maximum(group_penalty(grid, float(s2[g]), int(m[g])), 0.0)
        assert tab[g].tobytes() == ref.tobytes(), g
        for k in range(0, PEN_TABLE + 1, 37):
            assert tab[g, k] <= _exact_penalty(float(grid[k]), float(s2[g]), int(m[g])), (g, k)


def test_exact_sum_is_the_fraction_sum():
    vals = [F(13 * (j % 7 + 1), 1000 + 7 * j) for j in range(301)] + [F(-5, 3), 0, 7]
    assert exact_sum(vals) == sum(vals, F(0))
    assert exact_sum([]) == 0


def test_shared_constants_keep_the_node_set():
    groups = [Group(F(1) / F(v), F(v), c) for v, c in (("174.9", 1), ("113.4", 3), ("1301.5", 2))]
    consts = GroupConsts(groups)
    for s in (1e-3, 2.0**-12):
        alone = SmoothedProfile(groups, s)
        shared = SmoothedProfile(groups, s, None, consts)
        assert alone.nodes.tobytes() == shared.nodes.tobytes()
        assert alone.vproxy == shared.vproxy == float(sum(g.count * g.weight**2 * g.sigma2 for g in groups))
        assert alone.rho == sum(F(g.count) * g.weight**2 * g.sigma2 for g in groups) / 2


@pytest.fixture
def five():
    return Composition([(DiscreteGaussian(F(v), 1), 1) for v in FIVE])


def test_tradeoff_hinted_fallback_certifies(five, monkeypatch):
    alphas = ["0.01", "1/2", "0.9"]
    free = LatticeFreeAccountant(five).tradeoff(alphas)
    monkeypatch.setattr(tb, "ROUNDS", 0)
    forced = LatticeFreeAccountant(five).tradeoff(alphas)
    with mpmath.workdps(40):
        for a, p, q in zip(alphas, forced, free):
            assert 0 < p.lower <= p.upper and p.upper - p.lower <= mpmath.mpf("1e-9") * p.upper, a
            assert max(p.lower, q.lower) <= min(p.upper, q.upper), (a, p, q)
            assert math.isfinite(float(p.estimate))
