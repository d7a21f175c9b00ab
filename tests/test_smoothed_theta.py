"""The smoothed inversion's integrand, shared across levels, against independent references.

* :func:`exactdp.kernels.ratio_factors.ratio_logs` + :func:`~exactdp.kernels.ratio_factors.smoothed_factors`
  (the theta part once per tilt and node, the level's Gaussian factor added after): at every
  node, ``|G_n − Ĝ_n| ≤ err_n`` against ``Π_g (Θ_g(w_g(λ+iu))/Θ_g(w_gλ))^{m_g}·e^{s²((λ+iu)²−λ²)/2}``
  summed directly in mpmath at 40 digits (``Θ(z) = Σ_x e^{zx − x²/(2σ²)}``, nothing shared
  with the kernels), for groups in the Poisson form's inline return (σ² ≥ 38 at small b),
  its general path, the direct form (σ² < 1), counts > 1 and tilts with integer phases
  (λΔ ≥ 1/2) and negative tilts; the bound at u = 0 is a few ulps (no per-group slack).
* :func:`exactdp.kernels.profile.log_mgf_sum` (compensated) against the same direct sums.
* the same over three of :func:`ratio_logs`' node blocks on the shift-2 bench row (issue 33) with a
  direct-form group, at nodes where a group's theta series is skipped and where none is.
* :class:`~exactdp.engine.fine_profile.FineProfile` of a wide group with a count, alone and
  beside a small one (every level sharing one theta cache), against :class:`harness.BruteDesign`
  — δ_R and 1 − δ_R at thresholds across the range — also when its target is below the
  other errors' floor (the levels stop refining, the brackets still hold the reference).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
import pytest
from exactdp.kernels.profile import log_mgf_sum
from exactdp.kernels.ratio_factors import ratio_logs, smoothed_factors

from exactdp.engine.families import groups_of
from exactdp.engine.fine_profile import FineProfile
from exactdp.engine.smoothed_profile import GroupConsts, SmoothedProfile
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BruteDesign


def _design(spec) -> Composition:
    return Composition(tuple((DiscreteGaussian(F(s2), d), m) for s2, d, m in spec))


def _log_theta(z, s2):
    """log Σ_x e^{zx − x²/(2σ²)} (complex z, mpmath), the terms within 13 sd of the tilted
    centre (the rest below e^{−84} of the sum)."""
    s2m = mpmath.mpf(s2)
    c = int(round(float(mpmath.re(z)) * float(s2)))
    half = int(13 * math.sqrt(float(s2))) + 20
    return mpmath.log(mpmath.fsum(mpmath.exp(z * x - mpmath.mpf(x) ** 2 / (2 * s2m))
                                  for x in range(c - half, c + half + 1)))


def _g_ref(groups, lam, u, sk2):
    """G(u) at 40 digits (module docstring)."""
    with mpmath.workdps(40):
        tot = mpmath.mpf(0)
        for g in groups:
            w = mpmath.mpf(g.weight.numerator) / g.weight.denominator
            s2 = mpmath.mpf(g.sigma2.numerator) / g.sigma2.denominator
            z = (mpmath.mpf(lam) + 1j * mpmath.mpf(u)) * w
            tot += g.count * (_log_theta(z, s2) - _log_theta(mpmath.mpf(lam) * w, s2))
        zz = mpmath.mpf(lam) + 1j * mpmath.mpf(u)
        tot += mpmath.mpf(sk2) * (zz * zz - mpmath.mpf(lam) ** 2) / 2
        return mpmath.exp(tot)


SPECS = {
    "large-variances": [("41.3", 1, 1), ("57.9", 1, 2), ("77.7", -1, 1), ("120.5", 2, 1)],
    "mixed-forms": [("0.35", 1, 2), ("2.9", 1, 3), ("45.3", -1, 1), ("12.34", 2, 1)],
}


@pytest.mark.parametrize("name", sorted(SPECS))
def test_factors_contain_the_direct_theta_product(name):
    groups = groups_of(_design(SPECS[name]))
    consts = GroupConsts(groups)
    prof = SmoothedProfile(groups, 2.0**-12, consts=consts)
    P = prof.period
    nodes = np.unique(np.concatenate([np.arange(0, 6), prof.nodes[:: max(1, prof.nodes.size // 8)],
                                      [P // 4, P // 2 - 1, P - 1]])).astype(np.int64)
    with mpmath.workdps(40):
        for lam in (0.31, 0.5 / float(prof.delta.min()) + 0.07, 2.6, -0.43):
            t = ratio_logs(nodes, consts.taus(P)[0], consts.taus(P)[1], consts.s2, consts.m, consts.delta, lam,
                           float(P))
            G, err = smoothed_factors(nodes, *t, lam, prof.sk2, float(P))
            assert err[0] <= 1e-13  # u = 0: G = 1, a few ulps per group, no per-group slack
            for k, n in enumerate(nodes.tolist()):
                u = 2 * mpmath.pi * n / P
                ref = _g_ref(groups, lam, u, prof.sk2)
                gap = abs(ref - mpmath.mpc(G[k].real, G[k].imag))
                assert gap <= err[k], (name, lam, n, float(gap), err[k])
                assert err[k] <= 1e-9 * abs(ref) + 1e-16, (name, lam, n, err[k])


@pytest.mark.parametrize("name", sorted(SPECS))
def test_log_mgf_sum_contains_the_direct_sum(name):
    groups = groups_of(_design(SPECS[name]))
    c = GroupConsts(groups)
    for lam in (0.0, 0.31, 2.6, -0.43, 17.0):
        val, err = log_mgf_sum(lam, c.delta, c.s2, c.m)
        with mpmath.workdps(40):
            ref = mpmath.fsum(g.count * (_log_theta(mpmath.mpf(lam) * mpmath.mpf(g.weight.numerator)
                                                    / g.weight.denominator, g.sigma2.numerator / g.sigma2.denominator)
                                         - _log_theta(mpmath.mpf(0), g.sigma2.numerator / g.sigma2.denominator))
                              for g in groups)
            assert abs(ref - val) <= err, (lam, val, float(ref), err)
            assert err <= 1e-12 * (abs(ref) + 1)


#: rests the reference enumerates: one wide group with a count (integer phases from λ ≥ 1/6),
#: and beside it one small-support group
RESTS = {"wide": [(F("100000.3"), 3, 40)], "wide+small": [(F("100000.3"), 3, 40), (F("0.35"), 1, 1)]}


@pytest.mark.parametrize("target", [2.5e-10, 1e-15], ids=["target", "below-floor"])
@pytest.mark.parametrize("name", sorted(RESTS))
def test_fine_profile_contains_brute_force(name, target):
    spec = RESTS[name]
    comp = _design([(str(s2), d, m) for s2, d, m in spec])
    fine = FineProfile(groups_of(comp))
    fine.target = target  # as the trade-off's oracle_width sets it
    xs = np.array([-3.0, -0.5, 0.0, 0.4, 1.3, 2.75, 4.0, 6.5]) * fine.sd
    lo, hi = fine.log_brackets(xs)
    if target < 1e-12:  # beyond the other errors' floor a point stops two levels past its first
        first = max(fine._level_for(float(v)) for v in fine._any.saddle(xs))
        assert max(key[0] for key, p in fine._levels.items() if p is not None) <= first + 4
    c_lo, c_hi = fine.log_complement(xs)
    ref = BruteDesign(spec, L=200)
    with mpmath.workdps(60):
        for x, a, b, ca, cb in zip(xs.tolist(), lo, hi, c_lo, c_hi):
            d, e = ref.delta(F(x) + comp.rho)
            assert e < d * 1e-20
            assert a <= mpmath.log(d) <= b, (x, a, float(mpmath.log(d)), b)
            assert ca <= mpmath.log(1 - d) <= cb, (x, ca, float(mpmath.log(1 - d)), cb)
            assert b - a <= (2 * target if target > 1e-12 else 1e-9), (x, b - a)


#: the bench row "ten two-decimal σ² in [2.5, 4.5], shift 2" (issue 33) and a direct-form group
BLOCKS_SPEC = [(v, 2, 1) for v in ("2.53", "2.71", "2.96", "3.18", "3.37", "3.59", "3.82", "4.03", "4.26", "4.47")] \
    + [("0.35", 1, 2)]


def _picked(groups, P: int, nodes) -> list:
    """Indices into ``nodes`` to check, decided by exact phases (Fractions): nodes where some
    Poisson group's largest series term ``e^{−2πσ²(π − |b|)}`` is below e^{−55} at |b| > 0.05
    (:func:`ratio_logs` may skip that group's theta series there), nodes where one is within
    [e^{−45}, e^{−25}] (its series matters at the bound's scale), and each block's ends."""
    skip, needed = [], []
    for i, n in enumerate(nodes.tolist()):
        ems = []
        for g in groups:
            if g.sigma2 < 1:
                continue
            ph = (n * g.weight / P) % 1
            b = 2 * math.pi * float(min(ph, 1 - ph))
            ems.append((-2 * math.pi * float(g.sigma2) * (math.pi - b), b))
        if any(e < -55 and b > 0.05 for e, b in ems):
            skip.append(i)
        if any(-45 < e < -25 for e, _ in ems):
            needed.append(i)
    ends = [0, 255, 256, 511, 512, len(nodes) - 1]
    return sorted(set(skip[::max(1, len(skip) // 8)] + needed[::max(1, len(needed) // 8)] + ends))


def test_factors_in_several_blocks_contain_the_direct_theta_product():
    """:func:`ratio_logs` over ~730 kept nodes (three of its blocks) of the shift-2 bench row
    beside a direct-form group: at nodes in each block, where a group's theta series is
    skipped and where it matters, ``|G_n − Ĝ_n| ≤ err_n`` (relative bounds) against the 40-digit
    theta product (a shortcut taken where the series is not negligible fails it)."""
    groups = groups_of(_design(BLOCKS_SPEC))
    consts = GroupConsts(groups)
    prof = SmoothedProfile(groups, 2.0**-10, consts=consts)
    P = prof.period
    nodes = np.ascontiguousarray(prof.nodes[::60])
    picked = _picked(groups, P, nodes)
    assert nodes.size > 512 and len(picked) >= 16
    with mpmath.workdps(40):
        for lam in (0.8718240405724438, 2.3246):
            t = ratio_logs(nodes, consts.taus(P)[0], consts.taus(P)[1], consts.s2, consts.m, consts.delta, lam,
                           float(P))
            G, err = smoothed_factors(nodes, *t, lam, prof.sk2, float(P))
            rel = []
            for k in picked:
                n = int(nodes[k])
                ref = _g_ref(groups, lam, 2 * mpmath.pi * n / P, prof.sk2)
                gap = abs(ref - mpmath.mpc(G[k].real, G[k].imag))
                assert gap <= err[k], (lam, n, float(gap), err[k])
                rel.append(err[k] / float(abs(ref)))
            # not vacuous: the bounds are relative ones (the phase-error weight grows at large n)
            assert np.median(rel) <= 1e-7 and max(rel) <= 1e-5, (lam, np.median(rel), max(rel))
