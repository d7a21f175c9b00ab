"""The quadrature sieve against brute force and multiprecision sums.

* ``sieve_candidates(A, umax, N, g*)`` must return, in ascending order, every node
  n ∈ [0, N/2] whose angles ``A_g·2πn/N`` are within ``umax_g`` of 2πℤ for every group —
  dropping a node is what must be certified — and may add only nodes within a hair of a
  limit (the documented widening, 1e-12 relative).  Reference: every node tested with
  exact integer residues (numpy), on the coarse DHC design, a many-group design, and off
  the regime (small and odd N, steps near N/2, negative weights, limits of 0, tiny, π,
  NaN and negative), for every choice of the enumerating group;
* ``wrapped_log_upper(u, s²)`` must bound log Σ_k e^{−s²(u − 2πk)²/2} from above (up to
  the rounding of its leading exponent, 4u relative), tightly (≤ 1e-11 above);
* ``sieve_umax(s², m, T)``: every u ∈ (umax, π] must be excluded by the bound the sieve
  relies on, ``m·(log D − log P(u)) ≥ T`` with the true wrapped sum P and
  D = 1 − 2Σ_{k≥1} e^{−2π²s²k²}, and u slightly below umax must not be.
"""

from __future__ import annotations

import math
import random

import mpmath
import numpy as np
from exactdp.kernels.sieve_bound import POW2, wrapped_log_upper
from exactdp.kernels.tilted import sieve_candidates

from exactdp.engine.tilt import sieve_umax, sieve_umaxes

from harness import wrapped_normal_log

TWO_PI = 2 * math.pi


# ------------------------------------------------------------------ sieve_candidates
def _passing(A, umax, N, widen: float):
    """Nodes of [0, N/2] with ``d_g(n) ≤ umax_g·N/2π·(1 + widen)`` for every g (d the exact
    integer distance of A_g·n to Nℤ); widen < 0 narrows."""
    n = np.arange(0, N // 2 + 1, dtype=np.int64)
    keep = np.ones(n.shape[0], dtype=bool)
    for a, u in zip(A, umax):
        if math.isnan(u):
            continue  # no limit
        r = (int(a) % N) * n % N
        d = np.minimum(r, N - r)
        keep &= d <= u * N / TWO_PI * (1 + widen) + (1e-6 if widen > 0 else -1e-6)
    return n[keep]


def _check_sieve(A, umax, N, gstars):
    must = _passing(A, umax, N, -1e-9)  # every node clearly inside every limit
    may = _passing(A, umax, N, 1e-9)  # and nothing beyond the widened limits
    for gstar in gstars:
        got = sieve_candidates(np.asarray(A, dtype=np.int64), np.asarray(umax, dtype=float), N, gstar)
        assert np.all(np.diff(got) > 0) and (got.size == 0 or (got[0] >= 0 and got[-1] <= N // 2))
        assert np.isin(must, got).all(), (N, gstar, np.setdiff1d(must, got)[:5])
        assert np.isin(got, may).all(), (N, gstar, np.setdiff1d(got, may)[:5])
    return got


def test_sieve_of_a_coarse_design_and_a_many_group_design():
    A = [7592, 30368, 103896, 231959, 389384, 415584, 927836, 1557536]
    umax = [0.19093723, 1.14562339, 0.99891132, 1.58310381, 1.93382233, math.pi, math.pi, math.pi]
    got = _check_sieve(A, umax, 4_032_388, [0])
    assert got.shape[0] > 10_000
    rng = np.random.default_rng(3)
    N = 200_003 * 2
    A = rng.integers(-40_000, 400_000, 13)
    A[5] = N  # A ≡ 0 (mod N): no constraint
    umax = rng.uniform(0.05, 1.5, 13)
    _check_sieve(A, umax, N, [g for g in range(13) if A[g] > 0])


def test_sieve_off_the_regime():
    """Small and odd N, steps near N/2, beyond N and small (both ways of cutting a run),
    negative weights, limits of 0, tiny, π, NaN and negative, every enumerating group."""
    rng = np.random.default_rng(11)
    for trial in range(40):
        N = int(rng.choice([64, 65, 97, 1000, 4099, 65536, 1_000_003]))
        G = int(rng.integers(1, 7))
        A = rng.integers(1, 3 * N, G)
        pick = rng.integers(0, 5, G)
        A = np.where(pick == 0, N // 2 + rng.integers(-2, 3, G), A)
        A = np.where(pick == 2, rng.integers(1, max(2, N // 40), G), A)  # a wrap every > 16 nodes
        A = np.where(pick == 1, -A, A).astype(np.int64)
        umax = rng.uniform(0.0, 2.5, G)
        special = rng.integers(0, 12, G)
        umax = np.where(special == 0, 0.0, umax)
        umax = np.where(special == 1, math.pi, umax)
        umax = np.where(special == 2, 1e-9, umax)
        negative = False
        if trial % 15 == 7:
            g = int(rng.integers(0, G))
            umax[g] = math.nan if trial % 2 else -0.5
            negative = not trial % 2
        gstars = [g for g in range(G) if A[g] > 0 and umax[g] >= 0]
        if negative:  # a negative limit: no node passes
            assert all(sieve_candidates(A, umax, N, g).size == 0 for g in gstars)
        elif gstars:
            _check_sieve(A, umax, N, gstars)


# ------------------------------------------------------------------ the per-group bound
def test_wrapped_log_upper_bounds_the_wrapped_sum_tightly():
    rng = random.Random(7)
    cases = [(rng.uniform(0, math.pi), 10 ** rng.uniform(-3, 7)) for _ in range(150)]
    cases += [(0.0, 0.5), (math.pi, 0.5), (1e-300, 0.5), (math.pi, 1e-3), (0.0, 1e7)]
    for u, s2 in cases:
        got = wrapped_log_upper(u, s2, POW2)
        ref = wrapped_normal_log(u, s2)
        # an upper bound up to the rounding of its own exponent (4u relative: where that
        # matters, |log P| ≤ T/m ≲ 100, it is inside the bound's 1e-12 slack), and tight
        assert ref - 4 * 2.0**-53 * abs(ref) <= got <= ref + 1e-11 * max(1.0, abs(ref)), (u, s2, got, ref)


def _excluded_by(u, s2, m, D):
    """``m·(log D − log P(u))`` with the true wrapped sum P (mpmath)."""
    return m * (mpmath.log(D) - wrapped_normal_log(u, s2))


def test_sieve_umax_excludes_only_what_the_bound_excludes():
    rng = random.Random(20261201)
    cases = []
    for _ in range(40):
        s2 = 10 ** rng.uniform(-3, 7)
        m = rng.choice([1, 2, 3, 7, 43, 1000, 10**6, 10**9])
        T = math.log(10.0 ** rng.uniform(6, 40)) + 0.5 * math.log(2 * math.pi * 10 ** rng.uniform(0, 12)) + 6.0
        cases.append((s2, m, T + 25.0 * rng.randint(0, 1)))
    cases += [(1 / 1000, 1, 30.0), (0.25, 5, 40.0), (1.0, 1, 35.0), (10.0, 2, 50.0), (1e7, 10**6, 60.0)]
    cut = 0
    for s2, m, T in cases:
        umax = sieve_umax(s2, m, T)
        assert 0 < umax <= math.pi
        with mpmath.workdps(40):
            D = 1 - 2 * mpmath.fsum(mpmath.exp(-2 * mpmath.pi ** 2 * s2 * k * k) for k in range(1, 60))
            if umax < math.pi:
                cut += 1
                for u in (umax * (1 + 1e-9), umax * 1.01, (umax + math.pi) / 2, math.pi):
                    if u <= math.pi:
                        assert _excluded_by(u, s2, m, D) >= T, (s2, m, T, umax, u)
                assert _excluded_by(umax * 0.99, s2, m, D) < T, (s2, m, T, umax)  # not far too eager
    assert cut > 20
    s2 = np.array([c[0] for c in cases[:20]])
    m = np.array([c[1] for c in cases[:20]], dtype=np.int64)
    assert sieve_umaxes(s2, m, 45.0).tolist() == [sieve_umax(float(a), int(b), 45.0) for a, b in zip(s2, m)]
