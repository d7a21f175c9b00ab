"""Issue 14 (quadspeed): the faster tilted-trapezoid path keeps its numbers and its bounds.

* log ψ (the recentred discrete-Gaussian factor of every node) against a direct mpmath
  sum at adversarial points — b at and next to ±π, f at and next to ±1/2, s² = 1 (the
  Poisson/direct switch), 1.0001, 5, 20, 10⁴ — the returned bound must contain the error;
* the node factors ``G_n`` of a small lattice against the product of those direct sums;
* the hockey-stick factor from the cached node trigonometry against its closed form in
  mpmath;
* the aliasing-bound kernel against the engine's Python path, bit for bit (the kernel
  claims the same operations in the same order).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery
from exactdp.kernels.dgauss import log_psi
from exactdp.kernels.tilted import delta_factors, node_factors, node_trig
from harness import log_psi_direct

PI = math.pi


def _log_err(approx: complex, ref) -> float:
    """|approx − ref| for complex logs, the imaginary part taken modulo 2π."""
    d = mpmath.mpc(approx.real, approx.imag) - ref
    im = (float(d.imag) + PI) % (2 * PI) - PI
    return math.hypot(float(d.real), im)


ADVERSARIAL_B = [0.0, 1e-7, 0.5, 2.0, PI - 1e-3, PI - 1e-6, math.nextafter(PI, 0.0), PI, -PI,
                 -PI + 1e-9]
ADVERSARIAL_F = [0.0, 0.25, 0.5, -0.5, 0.4999999, -0.4999999]


@pytest.mark.parametrize("s2", [0.3, 0.9999, 1.0, 1.0001, 5.0, 20.0])
def test_log_psi_bound_contains_the_direct_sum(s2):
    worst = 0.0
    for f in ADVERSARIAL_F:
        for b in ADVERSARIAL_B:
            lp, le = log_psi(f, b, s2)
            ref = log_psi_direct(f, b, s2)
            if not math.isfinite(le):
                # refused only where ψ itself vanishes to rounding (f = ±1/2, b = ±π: the
                # series 1 + z cancels completely), never a finite wrong bound
                assert abs(mpmath.exp(ref)) < 1e-12 * math.exp(-0.5 * s2 * b * b), (s2, f, b)
                continue
            assert le >= 0.0
            e = _log_err(lp, ref)
            assert e <= le, (s2, f, b, e, le)
            worst = max(worst, e / le if le else 0.0)
    assert worst > 0.0  # the comparison sees real rounding, not identical formulas


def test_log_psi_large_variance_and_tight_where_it_matters():
    # s² = 10⁴: only small b survive any sieve (|ψ| ≤ e^{−s²b²/2})
    for f in (0.0, 0.5, -0.4999999, 0.123):
        for b in (0.0, 1e-4, 3e-3, 0.03):
            lp, le = log_psi(f, b, 1e4)
            e = _log_err(lp, log_psi_direct(f, b, 1e4))
            assert e <= le
            assert le <= 1e-12 * (1 + abs(lp.real))  # the bound stays useful
    # at b = π − 1e-6, f = 1/2, s² = 20 the series 1 + z nearly cancels (|1 + z| ~ 1e-4):
    # the error is ~1e-10 and the bound must carry the 1/|1 + z| (it once did not)
    lp, le = log_psi(0.5, PI - 1e-6, 20.0)
    e = _log_err(lp, log_psi_direct(0.5, PI - 1e-6, 20.0))
    assert 1e-11 < e <= le < 1e-6


def test_node_factors_against_direct_products():
    A = np.array([3, 7], dtype=np.int64)
    m = np.array([2, 1], dtype=np.int64)
    s2 = np.array([1.0001, 0.6])
    f = np.array([0.5, -0.25])
    lam, n_nodes = 0.05, 64
    nodes = np.array([0, 1, 5, 16, 21, 32], dtype=np.int64)
    G, err = node_factors(A, m, s2, f, lam, nodes, n_nodes)
    with mpmath.workdps(40):
        for n, g, e in zip(nodes, G, err):
            theta = mpmath.mpf(2) * mpmath.pi * int(n) / n_nodes
            lg = mpmath.mpc(0)
            for a, c, v, ff in zip(A, m, s2, f):
                r = (int(a) * int(n)) % n_nodes
                b = float(2 * PI * (r - n_nodes) / n_nodes) if 2 * r > n_nodes else float(2 * PI * r / n_nodes)
                lg += int(c) * log_psi_direct(ff, b, v)
            z = mpmath.mpc(lam, theta)
            ref = mpmath.exp(lg) * (1 - mpmath.exp(-lam)) / (1 - mpmath.exp(-z))
            rel = abs(mpmath.mpc(g.real, g.imag) / ref - 1)
            assert rel <= e + 1e-15, (n, rel, e)  # + the rounding of b itself (exact in the engine's model)


def test_delta_factors_closed_form():
    nodes = np.array([0, 1, 2, 99, 250, 500], dtype=np.int64)
    n_nodes = 1000
    lam, beta, x0 = 0.01, 0.7, -0.3
    a0, a1 = -math.expm1(x0), math.exp(x0) * -math.expm1(-(x0 + beta))
    X, R2 = delta_factors(*node_trig(nodes, n_nodes), lam, beta, a0, a1)
    with mpmath.workdps(40):
        for n, x, r2 in zip(nodes, X, R2):
            z = mpmath.mpc(lam, 2 * mpmath.pi * int(n) / n_nodes)
            num = (a0 + a1 * mpmath.exp(-z)) / (a0 + a1 * mpmath.exp(-lam))
            sec = (1 - mpmath.exp(-lam - beta)) / (1 - mpmath.exp(-z - beta))
            assert abs(mpmath.mpc(x.real, x.imag) / (num * sec) - 1) < 1e-13
            assert abs(r2 - float(abs(sec))) <= 1e-13 * float(abs(sec))
            assert abs(x) <= 1 + 1e-12


@pytest.mark.parametrize("weights,counts,sigma2", [
    ((1, 3), (4, 2), (Fraction(1, 3), Fraction(5, 2))),   # a small-σ² group: the θ̃ terms
    ((2, 5, 11), (1, 3, 2), (Fraction(40), Fraction(7, 10), Fraction(3))),
    ((1,), (20,), (Fraction(10000),)),                    # Gaussian only
])
def test_alias_kernel_is_the_python_path(weights, counts, sigma2):
    q = QuadratureTails(LatticeSum(weights, counts, sigma2, Fraction(1), Fraction(0), 0))
    sd = math.sqrt(q.vproxy)
    qs = [WeightedQuery(max(1, int(k * sd)), -math.inf, 0.0, 1.0) for k in (0.3, 1, 2.5, 6)]
    qs += [WeightedQuery(int(k * sd) - 3, -0.4, 0.1, 0.5) for k in (0.5, 3)]
    seen = 0
    for qq in qs:
        t = q._tilt(q._grid_lam(qq.threshold, q.lam_min), q._sieve(0))
        for logK in (-t.log1m, -t.log1m + 0.37):
            fast = q._alias_norm(t, qq.threshold, None, logK, None, None)
            slow = q._alias_norm_py(t, qq.threshold, None, logK)
            assert fast == slow
            seen += 1
    assert seen == 2 * len(qs)
