"""The tilted trapezoid rule's node kernels against multiprecision references (tests/harness.py).

* log ψ (the recentred discrete-Gaussian factor of every node) against a direct mpmath sum
  at adversarial points — b at and next to ±π, f at and next to ±1/2, s² = 1 (the
  Poisson/direct switch), 1.0001, 5, 20, 10⁴ — the returned bound must contain the error;
* the node factors ``G_n`` (``kernels/tilted.py::node_factors``) against the product of
  direct or dual mpmath theta series, on a DHC-like coarse design and off the regime
  (σ² from 1e-3 to 1e7, weights with every kind of period mod N, a negative weight, nodes
  unsorted, repeated and beyond N): the bound must contain the error; with and without
  the kernels' tables the same numbers;
* the signed sums ``tilted_sums`` against the sum written out with exact integer phases
  and mpmath trigonometry, within the bound their docstring states;
* the hockey-stick factor from the cached node trigonometry against its closed form;
* the aliasing-bound kernel against the engine's Python path (two implementations of one
  formula in the package, the same operations: equal floats).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from exactdp.kernels import nodes as node_kernels
from exactdp.kernels.dgauss import log_psi
from exactdp.kernels.signed import ANCHOR
from exactdp.kernels.tilted import delta_factors, node_factors, node_trig, sieve_candidates, tilted_sums

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery

from harness import log_psi_direct, log_psi_dual

PI = math.pi
U = 2.0**-53


def _log_err(approx: complex, ref) -> float:
    """|approx − ref| for complex logs, the imaginary part taken modulo 2π."""
    d = mpmath.mpc(approx.real, approx.imag) - ref
    im = (float(d.imag) + PI) % (2 * PI) - PI
    return math.hypot(float(d.real), im)


# ------------------------------------------------------------------ log ψ
ADVERSARIAL_B = [0.0, 1e-7, 0.5, 2.0, PI - 1e-3, PI - 1e-6, math.nextafter(PI, 0.0), PI, -PI, -PI + 1e-9]
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
    # s² = 10⁴: only small b survive any sieve (|ψ| ≤ e^{−s²b²/2}); the dual series there
    for f in (0.0, 0.5, -0.4999999, 0.123):
        for b in (0.0, 1e-4, 3e-3, 0.03):
            lp, le = log_psi(f, b, 1e4)
            e = _log_err(lp, log_psi_dual(f, b, 1e4))
            assert e <= le
            assert le <= 1e-12 * (1 + abs(lp.real))  # the bound stays useful
    # at b = π − 1e-6, f = 1/2, s² = 20 the series 1 + z nearly cancels (|1 + z| ~ 1e-4):
    # the error is ~1e-10 and the bound must carry the 1/|1 + z| (it once did not)
    lp, le = log_psi(0.5, PI - 1e-6, 20.0)
    e = _log_err(lp, log_psi_direct(0.5, PI - 1e-6, 20.0))
    assert 1e-11 < e <= le < 1e-6


def test_dual_reference_agrees_with_the_direct_sum():
    for f, b, s2 in ((0.37, 0.3, 3.0), (-0.5, 3.0, 1.0), (0.1, -2.5, 20.0), (0.5, 0.03, 1e4), (0.123, 3e-3, 1e4)):
        assert abs(log_psi_dual(f, b, s2) - log_psi_direct(f, b, s2)) < 1e-30


# ------------------------------------------------------------------ node factors
def _check_node_factors(A, m, s2, f, lam, nodes, N, G, err):
    """Every returned G_n against Π_g ψ_g^{m_g}·(1 − e^{−λ})/(1 − e^{−λ−iθ_n}) in mpmath
    (direct series below s² = 5, dual above); the bound must contain the relative error
    (+ the rounding of b itself, exact in the kernel's model)."""
    checked = 0
    with mpmath.workdps(40):
        for n, g, e in zip(nodes, G, err):
            lg = mpmath.mpc(0)
            for a, c, v, ff in zip(A, m, s2, f):
                r = (int(a) * int(n)) % N
                b = float(2 * PI * (r - N) / N) if 2 * r > N else float(2 * PI * r / N)
                lg += int(c) * (log_psi_direct if v < 5 else log_psi_dual)(float(ff), b, float(v))
            theta = 2 * mpmath.pi * int(n) / N
            ref = mpmath.exp(lg) * (1 - mpmath.exp(-lam)) / (1 - mpmath.exp(-mpmath.mpc(lam, theta)))
            if g == 0 and e == 0:  # log G < −745: flushed to zero (an absolute error < e^{−745})
                assert lg.real < -740, (n, lg)
                continue
            if not math.isfinite(e):  # refused: only where a factor ψ vanishes (f = ±1/2, b = π)
                assert abs(ref) < 1e-10, (n, ref)
                continue
            rel = abs(mpmath.mpc(g.real, g.imag) / ref - 1)
            assert rel <= e + 1e-15, (n, rel, e)
            checked += 1
    return checked


def _node_factors(A, m, s2, f, lam, nodes, N):
    args = (np.asarray(A, dtype=np.int64), np.asarray(m, dtype=np.int64), np.asarray(s2, dtype=float),
            np.asarray(f, dtype=float), float(lam), np.asarray(nodes, dtype=np.int64), int(N))
    return node_factors(*args)


#: a DHC-like coarse design (pair 6-10's lattice: A_g·s_g² constant, so every group has the
#: same tilted fraction f; one group below the Poisson/direct switch)
COARSE_A = [7592, 30368, 103896, 231959, 389384, 415584, 927836, 1557536]
COARSE_M = [18, 2, 9, 8, 9, 1, 2, 1]
COARSE_S2 = [136.98630137, 34.24657534, 10.01001001, 4.48355097, 2.6708853, 2.5025025, 1.12088774, 0.66772132]
COARSE_N = 52421020
COARSE_UMAX = [0.19093723, 1.14562339, 0.99891132, 1.58310381, 1.93382233, PI, PI, PI]


@pytest.fixture(scope="module")
def coarse_nodes():
    nodes = sieve_candidates(np.array(COARSE_A, dtype=np.int64), np.array(COARSE_UMAX), COARSE_N, 0)
    # a subset that keeps both members of many residue pairs (n, n + N/4: gcd(A_g, N) = 4)
    sub = nodes[(nodes % (COARSE_N // 4)) % 9 == 0]
    assert np.isin(sub + COARSE_N // 4, sub).sum() > 1000
    return sub


def test_coarse_design_tables_change_no_number(coarse_nodes, monkeypatch):
    node_kernels._TABLES.clear()
    runs = []
    for f0 in (-0.30510919, 0.0, 0.26971971, 0.5):
        lam = 6.7e-07 * (1 + abs(f0))
        runs.append((f0, lam, *_node_factors(COARSE_A, COARSE_M, COARSE_S2, [f0] * 8, lam, coarse_nodes, COARSE_N)))
    assert len(node_kernels._TABLES) == 1  # the tables were built once and reused
    monkeypatch.setattr(node_kernels, "TABLE_BYTES", 0)  # no tables at all (too large to keep)
    node_kernels._TABLES.clear()
    for f0, lam, G, err in runs:
        G0, err0 = _node_factors(COARSE_A, COARSE_M, COARSE_S2, [f0] * 8, lam, coarse_nodes, COARSE_N)
        assert np.array_equal(G, G0) and np.array_equal(err, err0)
    assert not node_kernels._TABLES
    f0, lam, G, err = runs[0]
    pick = np.linspace(0, len(coarse_nodes) - 1, 6).astype(int)
    assert _check_node_factors(COARSE_A, COARSE_M, COARSE_S2, [f0] * 8, lam, coarse_nodes[pick], COARSE_N, G[pick],
                               err[pick]) == 6


@pytest.mark.parametrize("s2", [1e-3, 0.05, 0.6, 0.9999, 1.0, 1.0001, 3.0, 50.0, 1e4, 1e7])
def test_node_factors_off_the_regime(s2):
    # periods of every kind: gcd(A, N) = 1, 2, 4, 8, N (A ≡ 0), a negative weight; nodes
    # unsorted, repeated, beyond N/2 and beyond N
    N = 4096
    A = [3, 2, 12, 8, 4096, -5]
    rng = np.random.default_rng(7)
    nodes = np.concatenate([[0, 1, 2, 39], rng.integers(0, 3 * N, 6), [N // 2, N // 2, N, 1024, 3072]])
    f0 = (0.0, 0.5, -0.5, 0.123, -0.3)[int(rng.integers(0, 5)) if s2 != 1.0 else 1]
    f = [f0, -f0, 0.25, 0.4, 0.0, f0 / 3]
    s2v = [s2, s2 * 2.5, s2, max(s2 / 7, 1e-3), s2, 1.0]
    lam = 0.01 + abs(f0)
    G, err = _node_factors(A, [1, 3, 2, 1, 5, 2], s2v, f, lam, nodes, N)
    _check_node_factors(A, [1, 3, 2, 1, 5, 2], s2v, f, lam, nodes, N, G, err)


@pytest.mark.parametrize("s2", [1e-3, 0.6, 5.0, 1e7])
def test_node_factor_bounds_hold(s2):
    N = 2000 if s2 < 1e6 else 2 * 10**6
    A, m = [1, 3], [2, 1]
    s2v = [s2, s2 * 3.0]
    f = [0.37, -0.45]  # (f = ±1/2 with b = π: ψ = 0, refused with an infinite bound)
    nodes = np.array([0, 1, 2, 5, 17, 333, 500, 999, 1000], dtype=np.int64)
    G, err = _node_factors(A, m, s2v, f, 0.02, nodes, N)
    assert np.isfinite(err).all()
    _check_node_factors(A, m, s2v, f, 0.02, nodes, N, G, err)


def test_node_factors_of_a_small_lattice_against_direct_products():
    A, m = [3, 7], [2, 1]
    s2 = [1.0001, 0.6]
    f = [0.5, -0.25]
    nodes = np.array([0, 1, 5, 16, 21, 32], dtype=np.int64)
    G, err = _node_factors(A, m, s2, f, 0.05, nodes, 64)
    # n = 32: 3·32 ≡ N/2, so b = π where ψ(1/2, π) = 0: refused with an infinite bound
    assert _check_node_factors(A, m, s2, f, 0.05, nodes, 64, G, err) == len(nodes) - 1


# ------------------------------------------------------------------ the signed sums
def _signed_sum_reference(Gn, nodes, N, s):
    """``(1/N) Σ_{n ≤ N/2} w_n Re[G_n e^{−2πi·n·s/N}]`` (w = 1 at 0 and N/2, else 2) with the
    phase n·s mod N exact in integers, and Σ|terms|/N."""
    tot, mag = [], []
    with mpmath.workdps(30):
        for g, n in zip(Gn.tolist(), nodes.tolist()):
            if 2 * n > N:
                continue
            w = 1 if n == 0 or 2 * n == N else 2
            ph = -2 * mpmath.pi * ((n * s) % N) / N
            tot.append(w * (g.real * mpmath.cos(ph) - g.imag * mpmath.sin(ph)))
            mag.append(w * abs(g))
        return mpmath.fsum(tot) / N, mpmath.fsum(mag) / N


@pytest.mark.parametrize("n_thr", [1, 2, 7, 8, 9, 40])
def test_tilted_sums_within_their_stated_bound(n_thr):
    # runs longer than ANCHOR, gaps, nodes beyond N/2 (skipped), N/2 itself, thresholds
    # negative, beyond N and 0, terms of both signs and magnitudes
    N = 100_000
    rng = np.random.default_rng(n_thr)
    nodes = np.unique(np.concatenate([np.arange(0, 80), np.arange(777, 830), rng.integers(0, N, 150), [N // 2]]))
    Gn = (rng.standard_normal(nodes.shape[0]) + 1j * rng.standard_normal(nodes.shape[0])) * np.exp(
        rng.uniform(-30, 0, nodes.shape[0]))
    thr = rng.integers(-3 * N, 3 * N, n_thr)
    thr[0] = 0
    got = tilted_sums(Gn, nodes, N, thr)
    for t, g in zip(thr.tolist(), got.tolist()):
        ref, mag = _signed_sum_reference(Gn, nodes, N, t)
        # the docstring's bound: 2u·Σ|terms| for the compensated sum, 4u·ANCHOR per rotated term
        assert abs(g - ref) <= (4 * ANCHOR + 4) * U * mag, (t, g, ref, mag)


# ------------------------------------------------------------------ hockey-stick factor, aliasing
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


@pytest.mark.parametrize("s2", [0.05, 0.3, 0.9999])
def test_direct_rows_hold_y_below_zero_and_log_psi_reads_their_conjugates(s2):
    """The direct form's b-row (``psi_terms_rows``) keeps y = −Y..−1 only (3 floats each:
    e^{iby} − 1 and its modulus, against mpmath); ``log_psi`` reads y > 0 as their
    conjugates: at seeded b (b = 0 and ±π included) and f its bound contains the error of
    the direct mpmath sum, which a wrong sign of the mirrored terms' imaginary part breaks."""
    from exactdp.kernels.dgauss import PSI_CONSTS, direct_half_width, psi_consts, psi_terms, psi_terms_len

    Y = direct_half_width(s2)
    assert psi_terms_len(s2) == 3 * Y
    cc, cr = np.empty(6, dtype=np.complex128), np.empty(PSI_CONSTS)
    psi_consts(0.0, s2, cc, cr)
    rng = np.random.default_rng(20261207)
    bs = [0.0, PI, -PI] + list(rng.uniform(-PI, PI, 12))
    for b in bs:
        row = np.full(3 * Y + 4, 7.0)
        psi_terms(float(b), s2, cr, row)
        assert np.all(row[3 * Y:] == 7.0)  # nothing written beyond the half row
        for y in range(-Y, 0):
            p = y + Y
            with mpmath.workdps(40):
                ref = mpmath.expj(mpmath.mpf(float(b)) * y) - 1
            tol = 8 * U * (1 + abs(b * y))  # the product b·y is rounded once before its sine
            assert abs(mpmath.mpc(row[3 * p], row[3 * p + 1]) - ref) <= tol, (b, y)
            assert abs(row[3 * p + 2] - abs(ref)) <= tol, (b, y)
        for f in (0.0, 0.3, -0.45, 0.5):
            lp, le = log_psi(f, float(b), s2)
            ref = log_psi_direct(f, float(b), s2)
            if not math.isfinite(le):
                assert abs(mpmath.exp(ref)) < 1e-12, (s2, f, b)
                continue
            assert _log_err(lp, ref) <= le, (s2, f, b)
