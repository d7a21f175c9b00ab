"""The flat sieve's cheaper interval bound and its visit count (issue 33: ten σ² in [2.5, 4.5] at shift 2, 3).

* :func:`exactdp.kernels.mass_sieve.phase_interval_pen` (an interval's penalty from its
  binary64 phase, padded by its rounding) never exceeds the table's value at the least
  *exact* distance to ℤ of the interval's phases ``n·τ`` (Fractions, every node of the
  interval), for τ = w/P of the bench rows' weights, starts up to 2^45, intervals whose
  endpoint phases are integers (or next to one) or near a table cell's edge, and τ < 0;
  and it is not vacuous (within one cell of the phase *segment's* least distance where that
  is positive and the phase below 2^32, where its padding is below 0.02 cells).
* :func:`exactdp.engine.smoothed_profile.flat_sieve_blocks` is at most the intervals the
  sieve visits (at several levels), so the refusal it allows is the sieve's own.
* six of the bench row's σ² at shift 2, at a weighted flat level: every dropped node's
  integrand modulus (Poisson summation of each group's characteristic function, written
  here) weighted by the profile kernel's bound is within the charged mass.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction as F

import numpy as np
import pytest
from exactdp.kernels.mass_sieve import block_length, phase_interval_pen, sieve_nodes_flat

from exactdp.engine.families import groups_of
from exactdp.engine.smoothed_profile import SmoothedProfile, TooCostly, flat_sieve_blocks
from exactdp.mechanisms import Composition, DiscreteGaussian

K = 4096
TAB = np.arange(K + 1, dtype=float)  # value = cell index: the bound is floor(distance·SCALE)
SCALE = K / 0.5


def _tau(w: F, P: int) -> tuple:
    t = w / P
    hi = float(t)
    lo = float(t - F(hi))
    return t, hi, lo


def _exact_cells(a: int, span: int, t: F) -> int:
    """floor(SCALE · min over n ∈ [a, a + span] of dist(n·t, ℤ)), exactly."""
    best = None
    for n in range(a, a + span + 1):
        x = (n * t) % 1
        d = min(x, 1 - x)
        best = d if best is None or d < best else best
    return min(K, math.floor(best * F(SCALE)))


def _continuum_cells(a: int, span: int, t: F) -> int:
    """floor(SCALE · the least distance to ℤ of the phase *segment* from a·t to (a + span)·t)
    (0 where it holds an integer): what an interval bound can resolve at best."""
    x0, x1 = sorted((a * t, (a + span) * t))
    if math.floor(x1) >= math.ceil(x0):
        return 0
    d = min(x0 - math.floor(x0), math.ceil(x1) - x1)
    return min(K, math.floor(d * F(SCALE)))


def _length(span: int, t: F) -> float:
    up = float(abs(t) * span)
    return up if F(up) >= abs(t) * span else math.nextafter(up, math.inf)


WEIGHTS = [F(200, 253), F(200, 447), F(300, 296), F(2, 1) / F("3.14"), F(1, 7)]


def _cases():
    rng = random.Random(20261207)
    out = []
    for w in WEIGHTS:
        for P in (166, 248, 13):
            t = w / P
            for _ in range(25):
                a = rng.choice([rng.randrange(0, 10**6), rng.randrange(0, 4 * 10**8), rng.randrange(0, 2**45)])
                out.append((t, a, rng.choice([0, 1, 7, 15, 31])))
            # endpoints whose phase is an integer, or within a few ulps of one or of a cell edge
            q = t.denominator
            for k in (1, 3, 10**5 + 7, 2**30 + 1):
                out.append((t, k * q, 0))  # phase exactly an integer at a
                out.append((t, k * q - 5, 4))  # ... at the interval's last node
                out.append((t, k * q + 1, 3))
            edge = F(37, int(SCALE))  # a cell edge: find a node whose phase is near it
            for n in range(1, 4000):
                if abs((n * t) % 1 - edge) < F(1, 10**5):
                    out.append((t, n, 0))
    return out


def test_phase_interval_pen_is_below_the_exact_distance_and_not_vacuous():
    cases = _cases()
    assert len(cases) > 400
    tight = 0
    for t, a, span in cases:
        for sign in (1, -1):
            ts = sign * t
            _, hi, lo = _tau(ts, 1)
            got = phase_interval_pen(float(a), _length(span, ts), hi, lo, TAB, SCALE)
            exact = _exact_cells(a, span, ts)
            assert got <= exact, (t, a, span, sign, got, exact)
            best = _continuum_cells(a, span, ts)
            if best >= 2 and a * abs(t) < 2**32:  # the padding 2^-51(|p| + 1) is below 0.02 cells there
                assert got >= best - 1, (t, a, span, sign, got, best)
                tight += 1
    assert tight > 200


def _design(sigma2s, shift):
    return groups_of(Composition(tuple((DiscreteGaussian(F(v), shift), 1) for v in sigma2s)))


SIX = ["2.53", "2.96", "3.37", "3.82", "4.26", "4.47"]


def test_flat_sieve_blocks_is_a_lower_bound_of_the_visits():
    groups = _design(SIX, 2)
    for s, level, lam_w in ((2.0**-12, 14.0, 3.0), (2.0**-14, 18.0, 1.0), (2.0**-14, 18.0, None)):
        prof = SmoothedProfile(groups, s, None, None, 10**8, flat_level=level, lam_w=lam_w)
        c = prof.consts
        o = c.order
        tab, scale = prof._penalty_tables(level + math.log1p(prof.n_max) + 1.0)
        for T in (level, level + 6.0):
            _, _, visited, _ = sieve_nodes_flat(prof.tau_hi[o], prof.tau_lo[o], tab[o], scale[o], prof.n_max,
                                                float(prof.period), prof.sk2, T, prof.lam_w, prof._lam2, 16,
                                                10**9, 2**40)
            blen = int(block_length(prof.tau_hi, 16, prof.n_max))
            least = flat_sieve_blocks(prof.n_max, float(prof.period), prof.sk2, T, prof._lam2, blen)
            assert 0 < least <= visited, (s, T, least, visited)
            assert least >= 0.5 * visited  # not vacuous
        # a budget below the bound: refused before the sieve runs, as the sieve would refuse
        with pytest.raises(TooCostly):
            SmoothedProfile(groups, s, None, None, max(1, least // 2), flat_level=level, lam_w=lam_w)


def _log_abs_cf(t: np.ndarray, s2: float) -> np.ndarray:
    """log |E e^{itX}|, X ~ N_Z(0, σ²), by Poisson summation (|k| ≤ 6 around the nearest
    lattice point)."""
    k0 = np.round(t / (2 * math.pi))
    terms = [-(s2 / 2) * (t - 2 * math.pi * (k0 + k)) ** 2 for k in range(-6, 7)]
    num = np.logaddexp.reduce(np.array(terms), axis=0)
    den = math.log(sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(-6, 7)))
    return num - den


def test_weighted_flat_sieve_on_six_of_the_shift_two_row_bounds_every_dropped_node():
    """Six of the bench row's σ² at shift 2, a weighted flat level: every dropped node's
    integrand modulus (Poisson summation) times the profile kernel's bound at Λ is within
    the charged mass, which is not vacuous, and every kept node is above the level's cut."""
    groups = _design(SIX, 2)
    lam_w = 2.0
    prof = SmoothedProfile(groups, 2.0**-10, None, None, 10**8, flat_level=16.0, lam_w=lam_w)
    n = np.arange(prof.n_max + 1)
    u = 2 * math.pi * n / prof.period
    log_mod = -0.5 * prof.s**2 * u**2
    for g in groups:
        log_mod = log_mod + g.count * _log_abs_cf(u * float(g.weight), float(g.sigma2))
    w2 = np.maximum(1.0, u**2 / (lam_w * (lam_w + 1)))
    dropped = np.setdiff1d(n, prof.nodes)
    assert prof.nodes.size > 10 and dropped.size > 10 * prof.nodes.size
    assert np.all(log_mod[dropped] - np.log(w2[dropped]) <= -prof.flat_level + 1e-9)
    true = math.fsum(np.exp(log_mod[dropped] - np.log(w2[dropped])).tolist())
    assert true <= prof.drop_masses[2] <= 1e4 * true + 1e-300, (true, prof.drop_masses[2])
