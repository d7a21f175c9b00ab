"""The enumerated rest (its sorted prefix/suffix tables) against brute force.

``D_R(x) = δ_R(x + ρ_R)`` and ``C_R = 1 − D_R`` of a rest of one to three groups: the
reference is :class:`harness.BruteDesign` (exact enumeration at 110 digits, nothing of
exactdp's engine).  hypothesis draws decimal σ² from 1/1000 to 40, shifts ±1…±8 and
counts 1–3, and thresholds from far left of R (δ ≈ 1, where the complement is the
statement) through the bulk to the deep right tail (the deeper, on-demand levels and the
log-space sums).  Property: every bracket contains the reference and, where the value is
above e^{−600}, is at most 1e-9 wide in log (the complement is compared where the
reference's ``1 − δ`` is above 1e-90: it has 110 digits).
"""

from __future__ import annotations

import math
from fractions import Fraction as F

import mpmath
import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from exactdp.engine.enumerated_rest import EnumeratedRest, rest_fits
from exactdp.engine.families import groups_of
from exactdp.mechanisms import Composition, DiscreteGaussian

from harness import BruteDesign

#: the reference's depth (nats)
REF_L = 700


def _decimal(lo: float, hi: float):
    return st.builds(lambda x, d: F(round(x * 10**d), 10**d), st.floats(lo, hi, allow_nan=False),
                     st.integers(1, 4)).filter(lambda v: v > 0)


_groups = st.lists(st.tuples(_decimal(0.001, 40.0), st.integers(1, 8).flatmap(lambda v: st.sampled_from([v, -v])),
                             st.integers(1, 3)), min_size=1, max_size=3, unique_by=lambda g: g[0])


def _check(design, zs) -> None:
    comp = Composition(tuple((DiscreteGaussian(s2, d), m) for s2, d, m in design))
    groups = groups_of(comp)
    if not rest_fits(groups):
        return
    try:
        ref = BruteDesign(design, L=REF_L)
    except ValueError:  # beyond the reference's cost: nothing to compare
        return
    rest = EnumeratedRest(groups)
    sd = math.sqrt(2 * float(comp.rho))
    xs = np.array([z * sd for z in zs])
    lo, hi = rest.log_brackets(xs)
    clo, chi = rest.log_complement(xs)
    with mpmath.workdps(120):  # 1 − δ from the 110-digit reference: compared where above 1e-90
        for x, a, b, ca, cb in zip(xs.tolist(), lo, hi, clo, chi):
            d, err = ref.delta(F(x) + comp.rho)
            c = 1 - d if 1 - d > mpmath.mpf("1e-90") + 1e20 * err else mpmath.mpf(0)
            assert err <= d * mpmath.mpf("1e-30") or d < mpmath.exp(-600), (x, d, err)
            if d > 0:
                assert a <= mpmath.log(d) <= b, (design, x, a, b, mpmath.log(d))
                if d > mpmath.exp(-600) and err <= d * mpmath.mpf("1e-30"):
                    assert b - a <= 1e-9, (design, x, a, b)
            if c > 0:
                assert ca <= mpmath.log(c) <= cb, (design, x, ca, cb, mpmath.log(c))
                assert cb - ca <= 1e-9, (design, x, ca, cb)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(_groups, st.lists(st.floats(-12.0, 30.0, allow_nan=False), min_size=3, max_size=6))
def test_enumerated_rest_contains_brute_force(design, zs):
    _check(design, zs)


def test_enumerated_rest_off_regime():
    # tiny σ² beside a moderate one, thresholds at 0, far left and far right (deep levels)
    _check([(F(1, 1000), 3, 1), (F("7.31"), -2, 2)], [-20.0, -3.0, 0.0, 0.5, 6.0, 18.0, 26.0])
    # a dense two-group rest (the suffix tables' cancellation window is crowded)
    _check([(F("33.3333"), 8, 1), (F("38.21"), -5, 1)], [-8.0, -0.3, 0.0, 0.01, 2.5, 9.0, 20.0])


def test_tables_serve_the_first_level():
    # the scaled tables (not the log-space fallback) answer a typical rest
    comp = Composition(((DiscreteGaussian(F("2.37"), 1), 1), (DiscreteGaussian(F("7/3"), -1), 1)))
    rest = EnumeratedRest(groups_of(comp))
    assert rest._levels[0].tables is not None


def _sum_pmf_brute(s2: F, m: int, ks) -> list:
    """log P(S = k), S the sum of m independent N_Z(0, σ²): exact convolution at 50 digits of
    pmfs truncated where their terms are below e^{−400} (nothing of exactdp's engine)."""
    with mpmath.workdps(50):
        s2m = mpmath.mpf(s2.numerator) / s2.denominator
        half = int(math.sqrt(2 * float(s2) * 400)) + 2
        w = {k: mpmath.exp(-mpmath.mpf(k * k) / (2 * s2m)) for k in range(-half, half + 1)}
        z = mpmath.fsum(w.values())
        one = {k: v / z for k, v in w.items()}
        acc = dict(one)
        for _ in range(m - 1):
            nxt: dict = {}
            for a, pa in acc.items():
                for b, pb in one.items():
                    nxt[a + b] = nxt.get(a + b, 0) + pa * pb
            acc = nxt
        return [mpmath.log(acc[k]) for k in ks]


@settings(max_examples=12, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(_decimal(4.5, 12.0), st.integers(2, 3))
def test_closed_form_of_the_sum_pmf_contains_brute_force(s2, m):
    # P(S = k) = N(k; 0, mσ²)·θ^{−m}·(1 + η), |η| ≤ θ₃(e^{−π²σ²/2})^m − 1: bulk and deep tail
    from exactdp.engine.coarse_split import sum_pmf_closed_form

    K = int(math.sqrt(2 * m * float(s2) * 150))
    lp, err = sum_pmf_closed_form(s2, m, K)
    assert float(err.max()) < 1e-8  # the bound is informative here (σ² ≥ 4.5)
    ks = [0, 1, K // 3, K // 2, K]
    for k, ref in zip(ks, _sum_pmf_brute(s2, m, ks)):
        assert abs(float(ref) - lp[k + K]) <= err[k + K], (s2, m, k, float(ref), lp[k + K], err[k + K])
