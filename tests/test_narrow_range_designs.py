"""Many distinct decimal σ² in a narrow range (issue 33): answered, not refused.

Ten three-decimal σ² in [10, 12] (shift 1, count 1): no coarse group is worth conditioning
on and the frequency sieve keeps ~1/s coincidence nodes, beyond the ordinary node budget;
the smoothed inversion's wide budget (:meth:`exactdp.engine.fine_profile.FineProfile.wide`)
answers it.  Checks, each against a reference written here:

* the flat-level sieve's a-posteriori dropped mass (sieved, or filtered from a finer level)
  bounds the dropped nodes' integrand
  moduli, each computed here by Poisson summation (``|E e^{itX}| = Σ_k e^{−σ²(t−2πk)²/2} /
  Σ_k e^{−2π²σ²k²}``, positive terms);
* a four-group analogue (three-decimal σ² in [10, 11]) at the wide budget's flat sieve
  level (sieved, or filtered from a finer level): the certified bracket of
  ``D(x) = E(1 − e^{x−W})₊`` contains a meet-in-the-middle enumeration in mpmath (40
  digits; truncation bounded) and is ≤ 1e-9 relative wide;
* the ten-group design through the public accountant: δ(ε) and ε(δ) inside
  dp_accounting's optimistic/pessimistic PLD sandwich at δ ≥ 1e-8, and δ, ε(δ), β(α)
  certified to 1e-9 relative.
"""

from __future__ import annotations

import bisect
import functools
import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.engine.families import groups_of
from exactdp.engine.fine_profile import WIDE_LEVEL
from exactdp.engine.smoothed_profile import FILTER_MASS, SmoothedProfile
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import pld_pair

REL = mpmath.mpf("1e-9")
TEN = [f"{10 + 0.213 * j + 0.001 * (j * j % 7):.3f}" for j in range(10)]
FOUR = ["10.000", "10.214", "10.429", "10.643"]


def _design(sigma2s) -> Composition:
    return Composition(tuple((DiscreteGaussian(F(v), 1), 1) for v in sigma2s))


def _group_table(s2: F, depth: int = 60) -> tuple:
    """(values k/σ², probabilities, omitted mass bound) of w·X, X ~ N_Z(0, σ²), w = 1/σ²,
    |k| ≤ K (mpmath at the caller's precision; the normaliser summed to |k| ≤ 3K)."""
    s = mpmath.mpf(s2.numerator) / s2.denominator
    K = int(math.ceil(math.sqrt(2 * float(s2) * depth)))
    z = 1 + 2 * mpmath.fsum(mpmath.exp(-mpmath.mpf(k * k) / (2 * s)) for k in range(1, 3 * K + 1))
    vals = [mpmath.mpf(k) / s for k in range(-K, K + 1)]
    probs = [mpmath.exp(-mpmath.mpf(k * k) / (2 * s)) / z for k in range(-K, K + 1)]
    # Σ_{k>K} e^{−k²/2σ²} ≤ e^{−(K+1)²/2σ²}/(1 − e^{−(K+1)/σ²}), both sides
    tail = 2 * mpmath.exp(-mpmath.mpf((K + 1) ** 2) / (2 * s)) / (1 - mpmath.exp(-mpmath.mpf(K + 1) / s)) / z
    return vals, probs, tail


def _half(tables) -> tuple:
    vals, probs = [mpmath.mpf(0)], [mpmath.mpf(1)]
    for v, p, _ in tables:
        vals = [a + b for a in vals for b in v]
        probs = [a * b for a in probs for b in p]
    return vals, probs


@functools.lru_cache(maxsize=4)  # the same reference for the sieved and the filtered level
def _brute_profile(sigma2s: tuple, xs: tuple) -> list:
    """``[(D(x) of the truncated sum, omitted mass bound)]``: ``D_trunc ≤ D(x) ≤ D_trunc +
    omitted`` (every term of D lies in [0, 1]) — two halves, the second sorted, with suffix
    sums of p and p·e^{−b}: ``Σ_{a+b>x} p_a p_b (1 − e^{x−a−b})``."""
    with mpmath.workdps(40):
        tables = [_group_table(F(v)) for v in sigma2s]
        omitted = mpmath.fsum(t[2] for t in tables)
        h = len(tables) // 2
        av, ap = _half(tables[:h])
        bv, bp = _half(tables[h:])
        order = sorted(range(len(bv)), key=lambda i: bv[i])
        bv = [bv[i] for i in order]
        bp = [bp[i] for i in order]
        s1 = [mpmath.mpf(0)] * (len(bv) + 1)
        s2 = [mpmath.mpf(0)] * (len(bv) + 1)
        for i in range(len(bv) - 1, -1, -1):
            s1[i] = s1[i + 1] + bp[i]
            s2[i] = s2[i + 1] + bp[i] * mpmath.exp(-bv[i])
        out = []
        for x in xs:
            xm = mpmath.mpf(x)
            total = mpmath.mpf(0)
            for a, p in zip(av, ap):
                j = bisect.bisect_right(bv, xm - a)  # b > x − a
                total += p * (s1[j] - mpmath.exp(xm - a) * s2[j])
            out.append((total, omitted))
        return out


@pytest.mark.parametrize("filtered", [False, True], ids=["sieved", "filtered"])
def test_four_group_analogue_contains_the_enumeration_at_the_flat_sieve_level(filtered):
    groups = groups_of(_design(FOUR))
    src = SmoothedProfile(groups, 2.0**-17.5, None, None, 10**8, flat_level=WIDE_LEVEL) if filtered else None
    prof = SmoothedProfile(groups, 2.0**-17, None, None, 10**8, flat_level=WIDE_LEVEL, source=src)
    assert (prof.visited == 0) == filtered  # a filtered level sieves nothing
    sd = math.sqrt(prof.vproxy)
    xs = np.array([0.5 * sd, 1.5 * sd, 2.5 * sd])
    lo, hi, _ = prof.log_brackets(xs)
    ref = _brute_profile(tuple(FOUR), tuple(xs.tolist()))
    with mpmath.workdps(40):
        for x, l, u, (d, om) in zip(xs, lo, hi, ref):
            lo_m, hi_m = mpmath.exp(mpmath.mpf(float(l))), mpmath.exp(mpmath.mpf(float(u)))
            assert om < mpmath.mpf(10) ** -20 * d
            assert lo_m <= d + om and d <= hi_m, (x, lo_m, d, hi_m)
            assert hi_m - lo_m <= REL * d, (x, float((hi_m - lo_m) / d))


def test_ten_group_design_is_answered_inside_the_pld_sandwich():
    comp = _design(TEN)
    acc = ExactAccountant(comp)
    assert acc.diagnostics().method == "smoothed-inversion"
    opt, pess = pld_pair(comp)
    targets = (F(1, 100), F(1, 10**5), F(1, 10**8))
    eps = [F(float(bun_steinke_epsilon(comp.rho, t)(30))) for t in targets]
    deltas = acc.delta(eps + [bun_steinke_epsilon(comp.rho, F(1, 10**20))])
    for e, p in zip(eps, deltas):
        assert opt.get_delta_for_epsilon(float(e)) <= p.lower <= p.upper <= pess.get_delta_for_epsilon(float(e))
    epsilons = acc.epsilon(list(targets) + ["1e-10"])
    for t, e in zip(targets, epsilons):
        assert opt.get_epsilon_for_delta(float(t)) <= e.lower <= e.upper <= pess.get_epsilon_for_delta(float(t))
    betas = acc.tradeoff(["0.01", "0.5", "0.9"])
    with mpmath.workdps(40):
        for p in deltas:
            assert 0 < p.lower <= p.upper and p.upper - p.lower <= REL * p.upper
        for e in epsilons:
            assert 0 < e.lower <= e.upper and e.upper - e.lower <= REL * e.upper
        for b in betas:
            assert 0 < b.lower <= b.upper <= 1 - b.alpha and b.upper - b.lower <= REL * b.upper


def _log_abs_cf(t: np.ndarray, s2: float) -> np.ndarray:
    """log |E e^{itX}|, X ~ N_Z(0, σ²), by Poisson summation (positive terms, |k| ≤ 6 around
    the nearest lattice point: the rest are below e^{−2π²σ²·25} relative)."""
    k0 = np.round(t / (2 * math.pi))
    terms = [-(s2 / 2) * (t - 2 * math.pi * (k0 + k)) ** 2 for k in range(-6, 7)]
    num = np.logaddexp.reduce(np.array(terms), axis=0)
    den = math.log(sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(-6, 7)))
    return num - den


def _log_moduli(prof, groups) -> tuple:
    """Every node n of the profile's rule and log |integrand| there (Poisson summation of each
    group's characteristic function, ``_log_abs_cf``, times the smoothing's Gaussian)."""
    n = np.arange(prof.n_max + 1)
    u = 2 * math.pi * n / prof.period
    log_mod = -0.5 * prof.s**2 * u**2
    for g in groups:
        log_mod = log_mod + g.count * _log_abs_cf(u * float(g.weight), float(g.sigma2))
    return n, log_mod


@pytest.mark.parametrize("filtered", [False, True], ids=["sieved", "filtered"])
def test_flat_sieve_mass_bounds_every_dropped_node(filtered):
    groups = groups_of(_design(FOUR[:3]))
    src = SmoothedProfile(groups, 0.01, None, None, 10**8, flat_level=12.0) if filtered else None
    prof = SmoothedProfile(groups, 0.02, None, None, 10**8, flat_level=12.0, source=src)  # a low level: many drops
    assert (prof.visited == 0) == filtered
    n, log_mod = _log_moduli(prof, groups)
    dropped = np.setdiff1d(n, prof.nodes)
    assert prof.nodes.size > 10 and dropped.size > prof.nodes.size
    assert np.all(log_mod[dropped] <= -prof.flat_level + 1e-9)  # only nodes below the level are dropped
    mass = math.fsum(np.exp(log_mod[dropped]).tolist())
    assert mass <= prof.dropped_mass <= 1e3 * mass, (mass, prof.dropped_mass)  # a bound, not vacuous


def test_filtered_level_drops_its_least_nodes_within_the_filter_mass():
    """A filtered level whose source leaves room below FILTER_MASS drops its least nodes too
    (some above the flat level's cut): the dropped mass still bounds every dropped node's
    integrand modulus (Poisson summation, here), stays within FILTER_MASS, and the kept nodes
    are the largest ones."""
    groups = groups_of(_design(FOUR[:3]))
    src = SmoothedProfile(groups, 0.01, None, None, 10**8, flat_level=33.0)  # mass ≪ FILTER_MASS
    prof = SmoothedProfile(groups, 0.02, None, None, 10**8, flat_level=25.0, source=src)
    n, log_mod = _log_moduli(prof, groups)
    dropped = np.setdiff1d(n, prof.nodes)
    above = dropped[log_mod[dropped] > -prof.flat_level + 1e-9]
    assert above.size > 10  # the cut dropped nodes the flat level keeps
    mass = math.fsum(np.exp(log_mod[dropped]).tolist())
    assert mass <= prof.dropped_mass <= FILTER_MASS * (1 + 1e-9), (mass, prof.dropped_mass)
    assert mass >= 1e-3 * FILTER_MASS  # the room was used, not vacuous
    assert np.min(log_mod[prof.nodes]) >= np.max(log_mod[above]) - 1e-6  # the least nodes went first
