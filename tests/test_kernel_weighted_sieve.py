"""The flat sieve weighted by the inversion kernels' decay (issue 33: ten σ² near 5, 7, 8).

:func:`exactdp.kernels.mass_sieve.sieve_nodes_flat` with a kernel tilt Λ drops a node by its
integrand bound times ``min(1, Λ(Λ+1)/u²)`` and returns one dropped mass per kernel
(density 1, tail ``λ/(λ+iu)``, profile ``λ(λ+1)/((λ+iu)(λ+1+iu))``);
:meth:`SmoothedProfile._drop` scales them above Λ.  Checks, each against a reference
written here:

* every dropped node's modulus times each kernel's *exact* modulus ``|k_j(u)|`` (at tilts
  below, at and above Λ), summed over the dropped nodes by Poisson summation of each
  group's characteristic function (``|E e^{itX}| = Σ_k e^{−σ²(t−2πk)²/2}/Σ_k
  e^{−2π²σ²k²}``, positive terms), is within the bound the profile charges — sieved, and
  filtered from a finer weighted level;
* a four-group design of three-decimal σ² near 5 at a weighted level (sieved and
  filtered): the certified bracket of ``D(x) = E(1 − e^{x−W})₊`` contains a
  meet-in-the-middle enumeration in mpmath (40 digits; truncation bounded), ≤ 1e-9
  relative wide, with far fewer nodes than the unweighted level.
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest

# the meet-in-the-middle enumeration of the narrow-range designs (mpmath at 40 digits, nothing of the engine)
from test_narrow_range_designs import _brute_profile

from exactdp.engine.families import groups_of
from exactdp.engine.fine_profile import WIDE_LEVEL
from exactdp.engine.smoothed_profile import SmoothedProfile
from exactdp.mechanisms import Composition, DiscreteGaussian

NEAR5 = ["5.000", "5.101", "5.204", "5.302"]


def _groups(sigma2s):
    return groups_of(Composition(tuple((DiscreteGaussian(F(v), 1), 1) for v in sigma2s)))


def _log_abs_cf(t: np.ndarray, s2: float) -> np.ndarray:
    """log |E e^{itX}|, X ~ N_Z(0, σ²), by Poisson summation (|k| ≤ 6 around the nearest
    lattice point; the rest are below e^{−2π²σ²·25} relative)."""
    k0 = np.round(t / (2 * math.pi))
    terms = [-(s2 / 2) * (t - 2 * math.pi * (k0 + k)) ** 2 for k in range(-6, 7)]
    num = np.logaddexp.reduce(np.array(terms), axis=0)
    den = math.log(sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(-6, 7)))
    return num - den


def _log_moduli(prof, groups) -> tuple:
    """Every node n ≤ n_max of the profile's rule, its u and log |integrand| there."""
    n = np.arange(prof.n_max + 1)
    u = 2 * math.pi * n / prof.period
    log_mod = -0.5 * prof.s**2 * u**2
    for g in groups:
        log_mod = log_mod + g.count * _log_abs_cf(u * float(g.weight), float(g.sigma2))
    return n, u, log_mod


def _kernel_moduli(u: np.ndarray, lam: float) -> tuple:
    """|k_0|, |k_1|, |k_2| of the density, tail and profile kernels at tilt λ."""
    a = np.hypot(lam, u)
    b = np.hypot(lam + 1, u)
    return np.ones(u.size), lam / a, lam * (lam + 1) / (a * b)


@pytest.mark.parametrize("filtered", [False, True], ids=["sieved", "filtered"])
def test_weighted_masses_bound_every_dropped_node_for_each_kernel(filtered):
    groups = _groups(NEAR5[:3])
    lam_w = 2.0
    src = SmoothedProfile(groups, 0.01, None, None, 10**8, flat_level=14.0, lam_w=3.0) if filtered else None
    prof = SmoothedProfile(groups, 0.02, None, None, 10**8, flat_level=14.0, source=src, lam_w=lam_w)
    plain = SmoothedProfile(groups, 0.02, None, None, 10**8, flat_level=14.0)
    assert (prof.visited == 0) == filtered
    assert prof.nodes.size < 0.8 * plain.nodes.size  # the weight drops nodes the flat level keeps
    n, u, log_mod = _log_moduli(prof, groups)
    dropped = np.setdiff1d(n, prof.nodes)
    assert prof.nodes.size > 10 and dropped.size > prof.nodes.size
    # only nodes below the level, weighted by the profile kernel's bound at Λ, are dropped
    w2 = np.maximum(1.0, u**2 / (lam_w * (lam_w + 1)))
    assert np.all(log_mod[dropped] - np.log(w2[dropped]) <= -prof.flat_level + 1e-9)
    for lam in (0.5, lam_w, 3 * lam_w):
        for j, k in enumerate(_kernel_moduli(u[dropped], lam)):
            # nodes ±n: twice each, the node 0 once (c_n of the sums)
            c = np.where(dropped == 0, 1.0, 2.0)
            true = math.fsum((c * np.exp(log_mod[dropped]) * k).tolist())
            bound = prof._drop(j, lam)
            assert true <= bound, (lam, j, true, bound)
            if j == 2 and lam == lam_w:
                assert bound <= 1e3 * true + prof.e_gauss  # a bound, not vacuous
    assert prof.drop_masses[0] > 100 * prof.drop_masses[2]  # the density's mass is the unweighted one


@pytest.mark.parametrize("filtered", [False, True], ids=["sieved", "filtered"])
def test_four_groups_near_five_contain_the_enumeration_at_a_weighted_level(filtered):
    groups = _groups(NEAR5)
    s = 2.0**-16
    # Λ = 1.2 at the level, below the deepest point's tilt (≈ 2.5/sd ≈ 2.8): that one's bound is scaled up
    src = SmoothedProfile(groups, s / 2**0.5, None, None, 10**8, flat_level=WIDE_LEVEL, lam_w=1.6) if filtered \
        else None
    prof = SmoothedProfile(groups, s, None, None, 10**8, flat_level=WIDE_LEVEL, source=src, lam_w=1.2)
    assert (prof.visited == 0) == filtered
    sd = math.sqrt(prof.vproxy)
    xs = np.array([0.5 * sd, 1.5 * sd, 2.5 * sd])
    lo, hi, t = prof.log_brackets(xs)
    assert t["lam"].max() > 1.2
    ref = _brute_profile(tuple(NEAR5), tuple(xs.tolist()))
    with mpmath.workdps(40):
        for x, lv, uv, (d, om) in zip(xs, lo, hi, ref):
            lo_m, hi_m = mpmath.exp(mpmath.mpf(float(lv))), mpmath.exp(mpmath.mpf(float(uv)))
            assert om < mpmath.mpf(10) ** -20 * d
            assert lo_m <= d + om and d <= hi_m, (x, lo_m, d, hi_m)
            assert hi_m - lo_m <= mpmath.mpf("1e-9") * d, (x, float((hi_m - lo_m) / d))
