"""The batched hockey-stick factors of the tilted rule (``delta_factors_rows``,
``tilted_sums_rows`` and ``FloatBatches._hs_rows``): the δ stage asks ~42 hockey-stick kernels
(one per ε) on a few tilts, now formed in one kernel call and one set of numpy operations per
batch instead of one per kernel.

References, independent of the engine: the factor X_n and the signed sums recomputed in
mpmath at 30 digits from their definitions, and the hockey-stick sums
``Σ_{s≥k} P(S = s)(1 − e^{x0 − β(s−k)})`` by exact enumeration of the lattice sum's pmf
(``harness.sum_pmf_brute``, 60 digits).  The batched values must also equal, bit for bit,
those of the per-tilt route ``_values_at`` (one ``delta_factors``/``tilted_sums`` call per
kernel, as before the batching) — the sweep's outputs are byte-identical.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery
from exactdp.kernels.nodes import node_trig
from exactdp.kernels.tilted import delta_factors, delta_factors_rows, tilted_sums, tilted_sums_rows

from harness import sum_pmf_brute

RNG = np.random.default_rng(20261208)


def _nodes(n_nodes, keep):
    """Sorted node numbers in [0, N/2] with gaps and runs (as a sieve leaves them)."""
    half = n_nodes // 2
    return np.array(sorted(RNG.choice(half + 1, size=keep, replace=False)), dtype=np.int64)


def _x_ref(theta, lam, beta, a0, a1):
    """X_n at θ from its definition (mpmath, 30 digits)."""
    z = mpmath.mpc(lam, theta)
    num = (a0 + a1 * mpmath.exp(-z)) / (a0 + a1 * mpmath.exp(-lam))
    return num * (1 - mpmath.exp(-lam - beta)) / (1 - mpmath.exp(-z - beta))


@pytest.mark.parametrize("n_nodes,keep", [(64, 9), (1000, 300), (4096, 1500)])
def test_delta_factors_rows_are_delta_factors_per_row_and_the_definition(n_nodes, keep):
    nodes = _nodes(n_nodes, keep)
    cos_t, sin_t, sh_t = node_trig(nodes, n_nodes)
    R = 7
    lam = RNG.uniform(1e-3, 3.0, R)
    beta = RNG.uniform(1e-4, 2.0, R)
    x0 = -RNG.uniform(1e-6, 4.0, R)
    x1 = np.maximum(x0 + beta, 0.0)
    a0 = -np.expm1(x0)
    a1 = np.exp(x0) * -np.expm1(-x1)
    X, R2 = delta_factors_rows(cos_t, sin_t, sh_t, lam, beta, a0, a1)
    assert X.shape == R2.shape == (R, keep)
    for r in range(R):
        x, r2 = delta_factors(cos_t, sin_t, sh_t, lam[r], beta[r], a0[r], a1[r])
        assert X[r].tobytes() == x.tobytes() and R2[r].tobytes() == r2.tobytes()
        with mpmath.workdps(30):
            for i in RNG.choice(keep, size=min(keep, 5), replace=False):
                ref = _x_ref(2 * mpmath.pi * int(nodes[i]) / n_nodes, lam[r], beta[r], a0[r], a1[r])
                assert abs(complex(ref) - X[r, i]) <= 1e-13 * max(1.0, abs(complex(ref)))
                assert abs(X[r, i]) <= 1 + 1e-12  # |X_n| ≤ 1 (non-negative coefficients)


def test_tilted_sums_rows_are_tilted_sums_per_segment_and_the_definition():
    n_nodes = 2000
    nodes = _nodes(n_nodes, 700)
    rows = (RNG.standard_normal((4, nodes.size)) + 1j * RNG.standard_normal((4, nodes.size)))
    row_of = np.array([2, 0, 0, 3, 1, 2], dtype=np.int64)
    sizes = [3, 1, 0, 5, 2, 1]  # an empty segment, single thresholds (summed alone) and runs
    seg = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=seg[1:])
    thr = RNG.integers(-10**9, 10**9, int(seg[-1])).astype(np.int64)
    got = tilted_sums_rows(rows, row_of, nodes, n_nodes, thr, seg)
    for j, r in enumerate(row_of):
        a, b = seg[j], seg[j + 1]
        if b > a:
            assert got[a:b].tobytes() == tilted_sums(rows[r].copy(), nodes, n_nodes, thr[a:b].copy()).tobytes()
        with mpmath.workdps(30):
            for c in range(a, b):
                s = int(thr[c])
                ref = mpmath.fsum((1 if (n == 0 or 2 * n == n_nodes) else 2)
                                  * mpmath.re(mpmath.mpc(rows[r, i].real, rows[r, i].imag)
                                              * mpmath.expjpi(-2 * mpmath.mpf(int(n) * s % n_nodes) / n_nodes))
                                  for i, n in enumerate(nodes)) / n_nodes
                assert abs(got[c] - float(ref)) <= 1e-12 * float(np.abs(rows[r]).sum()) / n_nodes


DESIGN = ((1, 2, 5), (4, 3, 2), (Fraction(1, 3), Fraction(20), Fraction(2)))


def _queries(eng, n_eps=9):
    """The δ stage's shape: one hockey-stick kernel per ε (x0 = ε − k1·β on the lattice, β
    fixed), several per tilt, plus plain tails beside them on the same tilts."""
    sd = math.sqrt(eng.vproxy)
    beta = 0.75
    qs = []
    for i in range(n_eps):
        k = int(round((0.4 + 0.35 * i) * sd)) + 1
        x0 = -beta * (0.05 + 0.9 * i / n_eps)
        qs.append(WeightedQuery(k, x0, x0 + beta, beta))
        qs.append(WeightedQuery(k, -math.inf, 0.0, 1.0))
    return qs


def _hockey_brute(pmf, q):
    with mpmath.workdps(40):
        if q.x0 == -math.inf:
            return mpmath.fsum(p for v, p in pmf.items() if v >= q.threshold)
        x0, beta = mpmath.mpf(q.x0), mpmath.mpf(q.beta)
        return mpmath.fsum(p * (1 - mpmath.exp(x0 - beta * (v - q.threshold)))
                           for v, p in pmf.items() if v >= q.threshold)


def test_batched_hockey_sticks_against_enumeration_and_the_per_tilt_route():
    w, c, s2 = DESIGN
    lat = LatticeSum(w, c, s2, Fraction(1), Fraction(0), 0)
    eng = QuadratureTails(lat)
    qs = _queries(eng)
    vals, flags = eng.weighted_list_ok(qs)
    # the batch held several kernels on one tilt (the rows of one delta_factors_rows call)
    lams = eng._grid_lams([q for q in qs if q.x0 != -math.inf])
    assert len(set(lams)) < len(lams)
    parts = [(a, v) for a, m, v in zip(w, c, s2) for _ in range(m)]
    pmf = sum_pmf_brute(parts, depth=120)
    for q, tv, ok in zip(qs, vals, flags):
        assert ok, q
        ref = _hockey_brute(pmf, q)
        with mpmath.workdps(40):
            v = mpmath.exp(tv.log_mp)
            assert abs(v - ref) <= mpmath.mpf(tv.rel_error) * v * (1 + mpmath.mpf(10) ** -12), (q, v, ref)
    # bit for bit the per-tilt route (one delta_factors and tilted_sums call per kernel)
    single = QuadratureTails(lat)
    sv = single._sieve(0)
    for q, tv in zip(qs, vals):
        (ref_tv,), _ = single._values_at(single._tilt(eng._grid_lams([q])[0], sv), [q])
        assert (ref_tv.log_value, ref_tv.rel_error) == (tv.log_value, tv.rel_error), q
    # memoised kernels (a second batch on the same tilts, new thresholds beside them) give
    # the same bits as fresh ones
    again = [WeightedQuery(q.threshold + 1, q.x0, q.x1, q.beta) for q in qs]
    got2, _ = eng.weighted_list_ok(again)
    fresh2, _ = QuadratureTails(lat).weighted_list_ok(again)
    assert [(v.log_value, v.rel_error) for v in got2] == [(v.log_value, v.rel_error) for v in fresh2]
