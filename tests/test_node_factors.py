"""Issue 14 (node factors): the tabulated fast path of ``node_factors`` returns the bits of
the per-node loop it replaced, and its bound holds against mpmath.

The reference below is the per-(node, group) loop of ``kernels/tilted.py::node_factors`` (now in ``kernels/nodes.py``) and
``kernels/dgauss.py::log_psi_at`` as they were at main ca845cd, frozen verbatim (only the
decorator differs: plain ``numba.njit`` with the project's options, no exactdp kernel).  The
fast path shares b-dependent work across tilts and across nodes with the same residue
``A_g·n mod N``; any change of an operation or of its order shows up as a differing bit.
"""

from __future__ import annotations

import math

import mpmath
import numba
import numpy as np
import pytest

from exactdp.kernels import nodes as node_kernels
from exactdp.kernels import tilted
from exactdp.kernels.tilted import node_factors, sieve_candidates
from harness import log_psi_direct, log_psi_dual

_JIT = dict(cache=True, fastmath=False, nogil=True, error_model="numpy")
TWO_PI = 2.0 * math.pi
POISSON_MIN_S2 = 1.0
TRUNC_REL = 1e-25
TRUNC_Z = 1e-100
U64 = 2.0**-52
PSI_CONSTS = 32


# ------------------------------------------------------------------ frozen reference (ca845cd)
@numba.njit("int64(float64)", **_JIT)
def _direct_half_width(s2):
    return int(math.ceil(math.sqrt(120.0 * s2))) + 2


@numba.njit("Tuple((complex128, float64))(complex128)", **_JIT)
def _clog1p(z):
    az = abs(z)
    if az < 0.5:
        x = 2.0 * z.real + z.real * z.real + z.imag * z.imag
        re = 0.5 * math.log1p(x)
        im = math.atan2(z.imag, 1.0 + z.real)
        return complex(re, im), U64 * (40.0 * az + 2.0 * (abs(re) + abs(im)))
    w = 1.0 + z
    aw = abs(w)
    if aw == 0.0:
        return complex(-np.inf, 0.0), np.inf
    re = math.log(aw)
    im = math.atan2(w.imag, w.real)
    return complex(re, im), U64 * (4.0 * (1.0 + az) / aw + 2.0 * (abs(re) + abs(im)))


@numba.njit("void(float64, float64, complex128[:], float64[:])", **_JIT)
def _psi_consts(f, s2, cc, cr):
    if s2 >= POISSON_MIN_S2:
        d = 0.0
        dabs = 0.0
        j = 0
        for k in range(-3, 4):
            if k == 0:
                continue
            ph = -TWO_PI * k * f
            cc[j] = math.cos(ph) + 1j * math.sin(ph)
            cr[j] = -TWO_PI * s2 * k
            cr[6 + j] = math.pi * k
            cr[14 + j] = abs(cr[j]) * (5.0 * abs(k) + 7.0) + 9.0 * abs(k) + 20.0
            j += 1
            if k > 0:
                e0 = -0.5 * s2 * (TWO_PI * k) ** 2
                if e0 > -745.0:
                    q = math.exp(e0)
                    d += 2.0 * q * math.cos(TWO_PI * k * f)
                    dabs += 2.0 * q
        cr[12] = math.log1p(d)
        cr[13] = dabs
        return
    Y = _direct_half_width(s2)
    srho = 0.0
    for y in range(-Y, Y + 1):
        if y == 0:
            continue
        e = -y * (y - 2.0 * f) / (2.0 * s2)
        if e < -745.0:
            cr[y + Y] = -1.0
            continue
        rho = math.exp(e)
        cr[y + Y] = rho
        srho += rho
    cr[2 * Y + 1] = srho


@numba.njit("Tuple((complex128, float64))(float64, float64, float64, complex128[:], float64[:], float64[:])", **_JIT)
def _log_psi_at(f, b, s2, cc, cr, sc):
    if s2 >= POISSON_MIN_S2:
        z = 0.0 + 0.0j
        zabs = 0.0
        dz = 0.0
        for j in range(6):
            e = cr[j] * (cr[6 + j] - b)
            if e > -745.0:
                t = math.exp(e)
                z += t * cc[j]
                zabs += t
                dz += t * (4.0 * abs(e) + cr[14 + j])
        l2 = cr[12]
        dabs = cr[13]
        gre = -0.5 * s2 * b * b
        gim = f * b
        if zabs == 0.0:
            err = U64 * (8.0 * dabs + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))
            return complex(gre, gim) - l2, 2.0 * err + 2.0 * TRUNC_REL
        l1, e1 = _clog1p(z)
        aw_lo = abs(1.0 + z) * (1.0 - 4.0 * U64) - U64 * dz - TRUNC_Z
        if aw_lo <= 0.0:
            return complex(gre, gim) + l1 - l2, np.inf
        err = e1 + U64 * dz / aw_lo + U64 * (8.0 * dabs + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))
        trunc = 2.0 * TRUNC_REL if aw_lo >= TRUNC_Z / TRUNC_REL else 2.0 * TRUNC_REL + 2.0 * TRUNC_Z / aw_lo
        return complex(gre, gim) + l1 - l2, 2.0 * err + trunc
    Y = _direct_half_width(s2)
    num = 0.0 + 0.0j
    sabs = 0.0
    for y in range(-Y, 0):
        rho = cr[y + Y]
        sh = math.sin(0.5 * b * y)
        sb = math.sin(b * y)
        sc[2 * (y + Y)] = sh
        sc[2 * (y + Y) + 1] = sb
        if rho < 0.0:
            continue
        c = -2.0 * sh * sh + 1j * sb
        num += rho * c
        sabs += rho * abs(c)
    for y in range(1, Y + 1):
        rho = cr[y + Y]
        if rho < 0.0:
            continue
        sh = -sc[2 * (Y - y)]
        sb = -sc[2 * (Y - y) + 1]
        c = -2.0 * sh * sh + 1j * sb
        num += rho * c
        sabs += rho * abs(c)
    srho = cr[2 * Y + 1]
    z = num / (1.0 + srho)
    zabs = sabs / (1.0 + srho)
    l1, e1 = _clog1p(z)
    dz = U64 * (200.0 + 2.0 * Y + 8.0) * zabs
    aw = abs(1.0 + z)
    if aw == 0.0:
        return l1, np.inf
    return l1, 2.0 * (e1 + dz / min(aw, 1.0)) + 2.0 * TRUNC_REL


@numba.njit("float64(int64, float64)", **_JIT)
def _wrapped_angle(r, n_nodes):
    if 2 * r > n_nodes:
        return TWO_PI * (r - n_nodes) / n_nodes
    return TWO_PI * r / n_nodes


@numba.njit("Tuple((complex128[:], float64[:]))(int64[:], int64[:], float64[:], float64[:], float64, int64[:], int64)",
            **_JIT)
def old_node_factors(A, m, s2, f, lam, nodes, n_nodes):
    G = A.shape[0]
    out = np.empty(nodes.shape[0], dtype=np.complex128)
    err = np.empty(nodes.shape[0])
    one_minus = -math.expm1(-lam)
    e_lam = math.exp(-lam)
    cc = np.empty((G, 6), dtype=np.complex128)
    cr = np.empty((G, PSI_CONSTS))
    sc = np.empty(PSI_CONSTS)
    for g in range(G):
        _psi_consts(f[g], s2[g], cc[g], cr[g])
    for i in range(nodes.shape[0]):
        n = nodes[i]
        re = 0.0
        im = 0.0
        e = 0.0
        for g in range(G):
            b = _wrapped_angle((A[g] * n) % n_nodes, n_nodes)
            lp, le = _log_psi_at(f[g], b, s2[g], cc[g], cr[g], sc)
            re += m[g] * lp.real
            im += m[g] * lp.imag
            e += m[g] * (le + 2.0 * U64 * (abs(lp.real) + abs(lp.imag)))
        theta = _wrapped_angle(n, n_nodes)
        sh = math.sin(0.5 * theta)
        den = (one_minus * math.cos(theta) + 2.0 * sh * sh) + 1j * (e_lam * math.sin(theta))
        if re < -745.0:
            out[i] = 0.0
            err[i] = 0.0
        else:
            out[i] = math.exp(re) * (math.cos(im) + 1j * math.sin(im)) * one_minus / den
            err[i] = e + U64 * (2.0 * (abs(re) + abs(im)) + 24.0)
    return out, err


ANCHOR = 32


@numba.njit("float64(complex128[:], int64[:], int64, int64)", **_JIT)
def old_signed_sum(Gn, nodes, n_nodes, threshold):
    half = n_nodes // 2
    s = threshold % n_nodes
    acc = 0.0
    comp = 0.0
    ph1 = -_wrapped_angle(s, n_nodes)
    step_re = math.cos(ph1)
    step_im = math.sin(ph1)
    prev = -2
    run = 0
    rot_re = 1.0
    rot_im = 0.0
    for i in range(nodes.shape[0]):
        n = nodes[i]
        if n > half:
            continue
        w = 1.0 if (n == 0 or 2 * n == n_nodes) else 2.0
        if n == prev + 1 and run < ANCHOR:
            r_re = rot_re * step_re - rot_im * step_im
            rot_im = rot_re * step_im + rot_im * step_re
            rot_re = r_re
            run += 1
        else:
            ph = -_wrapped_angle((n * s) % n_nodes, n_nodes)
            rot_re = math.cos(ph)
            rot_im = math.sin(ph)
            run = 0
        prev = n
        g = Gn[i]
        term = w * (g.real * rot_re - g.imag * rot_im)
        tot = acc + term  # neumaier_add
        if abs(acc) >= abs(term):
            comp += (acc - tot) + term
        else:
            comp += (term - tot) + acc
        acc = tot
    return (acc + comp) / n_nodes


@numba.njit("int64(int64[:], float64[:], int64, int64, int64[:], boolean)", **_JIT)
def _old_scan(A, umax, n_nodes, gstar, out, fill):
    G = A.shape[0]
    a_star = A[gstar]
    u_star = umax[gstar]
    half = n_nodes // 2
    limits = np.empty(G)
    for g in range(G):
        limits[g] = umax[g] * n_nodes / TWO_PI * (1.0 + 1e-12) + 1e-9
    count = 0
    last = -1
    jmax = a_star // 2 + 1
    for j in range(jmax + 1):
        lo_f = (TWO_PI * j - u_star) * n_nodes / (TWO_PI * a_star)
        hi_f = (TWO_PI * j + u_star) * n_nodes / (TWO_PI * a_star)
        lo = max(int(math.floor(lo_f)) - 1, 0, last + 1)
        hi = min(int(math.ceil(hi_f)) + 1, half)
        for n in range(lo, hi + 1):
            ok = True
            for g in range(G):
                r = (A[g] * n) % n_nodes
                d = r if 2 * r <= n_nodes else n_nodes - r
                if d > limits[g]:
                    ok = False
                    break
            if ok:
                if fill:
                    out[count] = n
                count += 1
            last = n
    return count


def old_sieve_candidates(A, umax, n_nodes, gstar):
    count = _old_scan(A, umax, n_nodes, gstar, np.empty(0, dtype=np.int64), False)
    out = np.empty(count, dtype=np.int64)
    _old_scan(A, umax, n_nodes, gstar, out, True)
    return out


# ------------------------------------------------------------------ designs
def _bits(a):
    return np.ascontiguousarray(a).view(np.uint64)


def _same_bits(A, m, s2, f, lam, nodes, n_nodes):
    args = (np.asarray(A, dtype=np.int64), np.asarray(m, dtype=np.int64), np.asarray(s2, dtype=float),
            np.asarray(f, dtype=float), float(lam), np.asarray(nodes, dtype=np.int64), int(n_nodes))
    G, err = node_factors(*args)
    G0, err0 = old_node_factors(*args)
    assert np.array_equal(_bits(G), _bits(G0)), np.flatnonzero(_bits(G) != _bits(G0))[:5]
    assert np.array_equal(_bits(err), _bits(err0)), np.flatnonzero(_bits(err) != _bits(err0))[:5]
    return G, err


#: a DHC-like coarse design (pair 6-10's lattice: A_g·s_g² constant, so every group has the
#: same tilted fraction f; one group below the Poisson/direct switch)
COARSE_A = [7592, 30368, 103896, 231959, 389384, 415584, 927836, 1557536]
COARSE_M = [18, 2, 9, 8, 9, 1, 2, 1]
COARSE_S2 = [136.98630137, 34.24657534, 10.01001001, 4.48355097, 2.6708853, 2.5025025, 1.12088774, 0.66772132]
COARSE_N = 52421020


@pytest.fixture(scope="module")
def coarse_nodes():
    umax = np.array([0.19093723, 1.14562339, 0.99891132, 1.58310381, 1.93382233, math.pi, math.pi, math.pi])
    nodes = sieve_candidates(np.array(COARSE_A, dtype=np.int64), umax, COARSE_N, 0)
    # a subset that keeps both members of many residue pairs (n, n + N/4: gcd(A_g, N) = 4)
    sub = nodes[(nodes % (COARSE_N // 4)) % 9 == 0]
    assert np.isin(sub + COARSE_N // 4, sub).sum() > 1000
    return sub


def test_coarse_design_same_bits_every_tilt(coarse_nodes, monkeypatch):
    node_kernels._TABLES.clear()
    for f0 in (-0.30510919, -0.04771022, 0.0, 0.26971971, 0.5, -0.5, 0.4999999999):
        lam = 6.7e-07 * (1 + abs(f0))
        _same_bits(COARSE_A, COARSE_M, COARSE_S2, [f0] * 8, lam, coarse_nodes, COARSE_N)
    assert len(node_kernels._TABLES) == 1  # the tables were built once and reused
    # no cache at all (tables too large to keep): the same bits
    monkeypatch.setattr(node_kernels, "TABLE_BYTES", 0)
    node_kernels._TABLES.clear()
    f = np.linspace(-0.5, 0.5, 8)
    _same_bits(COARSE_A, COARSE_M, COARSE_S2, f, 3e-6, coarse_nodes, COARSE_N)
    assert not node_kernels._TABLES


@pytest.mark.parametrize("s2", [1e-3, 0.05, 0.6, 0.9999, 1.0, 1.0001, 3.0, 50.0, 1e4, 1e7])
def test_off_regime_same_bits(s2):
    # periods of every kind: gcd(A, N) = 1, 2, 4, 8, N (A ≡ 0), a negative weight; nodes
    # unsorted, repeated, beyond N/2 and beyond N
    N = 4096
    A = [3, 2, 12, 8, 4096, -5]
    rng = np.random.default_rng(7)
    nodes = np.concatenate([np.arange(0, 40), rng.integers(0, 3 * N, 300), [N // 2, N // 2, N, 0, 1024, 3072]])
    for f0 in (0.0, 0.5, -0.5, 0.123, -0.3):
        f = [f0, -f0, 0.25, 0.4, 0.0, f0 / 3]
        s2v = [s2, s2 * 2.5, s2, max(s2 / 7, 1e-3), s2, 1.0]
        _same_bits(A, [1, 3, 2, 1, 5, 2], s2v, f, 0.01 + abs(f0), nodes, N)


def test_sorted_sieve_identity_numbering_same_bits():
    # gcd 1 for every group: the numbering is the identity (no sort), nodes in [0, N/2]
    N = 10007 * 2
    A = np.array([1, 3, 7, 10001], dtype=np.int64)
    s2 = [2.0, 0.3, 40.0, 1e-3]
    nodes = np.arange(0, N // 2 + 1, 3)
    _same_bits(A * 1, [4, 1, 2, 1], s2, [0.1, -0.2, 0.3, 0.5], 2e-3, nodes, N)


def test_dual_reference_agrees_with_the_direct_sum():
    for f, b, s2 in ((0.37, 0.3, 3.0), (-0.5, 3.0, 1.0), (0.1, -2.5, 20.0)):
        assert abs(log_psi_dual(f, b, s2) - log_psi_direct(f, b, s2)) < 1e-30


@pytest.mark.parametrize("s2", [1e-3, 0.6, 5.0, 1e7])
def test_bound_holds_against_mpmath(s2):
    # G_n against the product of mpmath theta series (harness: direct sum below s² = 5,
    # dual series above), the kernel factor in mpmath too
    N = 2000 if s2 < 1e6 else 2 * 10**6
    A = np.array([1, 3], dtype=np.int64)
    m = np.array([2, 1], dtype=np.int64)
    s2v = np.array([s2, s2 * 3.0])
    f = np.array([0.37, -0.45])  # (f = ±1/2 with b = π: ψ = 0, refused with an infinite bound)
    lam = 0.02
    nodes = np.array([0, 1, 2, 5, 17, 333, 500, 999, 1000], dtype=np.int64)
    G, err = _same_bits(A, m, s2v, f, lam, nodes, N)
    ref_psi = log_psi_direct if s2 < 5 else log_psi_dual
    with mpmath.workdps(40):
        for n, g, e in zip(nodes, G, err):
            lg = mpmath.mpc(0)
            for a, c, v, ff in zip(A, m, s2v, f):
                r = (int(a) * int(n)) % N
                b = float(2 * math.pi * (r - N) / N) if 2 * r > N else float(2 * math.pi * r / N)
                lg += int(c) * ref_psi(ff, b, v)
            theta = 2 * mpmath.pi * int(n) / N
            ref = mpmath.exp(lg) * (1 - mpmath.exp(-lam)) / (1 - mpmath.exp(-mpmath.mpc(lam, theta)))
            if g == 0 and e == 0:  # log G < −745: flushed to zero (an absolute error < e^{−745})
                assert lg.real < -745
                continue
            rel = abs(mpmath.mpc(g.real, g.imag) / ref - 1)
            assert math.isfinite(e) and rel <= e + 1e-15, (n, rel, e)


@pytest.mark.parametrize("n_thr", [1, 2, 7, 8, 9, 40])
def test_tilted_sums_same_bits(n_thr):
    # runs longer than ANCHOR, gaps, nodes beyond N/2 (skipped), N/2 itself, thresholds
    # negative, beyond N and 0, terms of both signs and magnitudes (the compensation works)
    N = 100_000
    rng = np.random.default_rng(n_thr)
    nodes = np.unique(np.concatenate([np.arange(0, 150), np.arange(777, 900), rng.integers(0, N, 3000), [N // 2]]))
    Gn = (rng.standard_normal(nodes.shape[0]) + 1j * rng.standard_normal(nodes.shape[0])) * np.exp(
        rng.uniform(-30, 0, nodes.shape[0]))
    thr = rng.integers(-3 * N, 3 * N, n_thr)
    thr[0] = 0
    got = tilted.tilted_sums(Gn, nodes, N, thr)
    ref = np.array([old_signed_sum(Gn, nodes, N, int(t)) for t in thr])
    assert np.array_equal(_bits(got), _bits(ref))


def test_sieve_candidates_same_nodes():
    A = np.array(COARSE_A, dtype=np.int64)
    umax = np.array([0.19093723, 1.14562339, 0.99891132, 1.58310381, 1.93382233, math.pi, math.pi, math.pi])
    got = sieve_candidates(A, umax, COARSE_N, 0)
    assert got.shape[0] > 100_000 and np.array_equal(got, old_sieve_candidates(A, umax, COARSE_N, 0))
    # a full-chain-like design (many groups, few survivors), negative weights, a group
    # with A ≡ 0 (mod N), every choice of the enumerating group
    rng = np.random.default_rng(3)
    N = 4_032_388
    A = rng.integers(-40_000, 400_000, 13)
    A[5] = N
    umax = rng.uniform(0.05, 1.5, 13)
    for gstar in range(13):
        if A[gstar] <= 0:
            continue
        got = sieve_candidates(A, umax, N, gstar)
        assert np.array_equal(got, old_sieve_candidates(A, umax, N, gstar)), gstar


def test_sieve_candidates_same_nodes_off_regime():
    """The run-cutting sieve against the frozen per-candidate one off the DHC regime: small
    and odd N, steps near N/2, beyond N and small (both ways of cutting a run), negative
    weights, limits of 0, tiny, π, NaN and negative, every choice of the enumerating group."""
    rng = np.random.default_rng(11)
    for trial in range(60):
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
        if trial % 15 == 7:
            umax[int(rng.integers(0, G))] = math.nan if trial % 2 else -0.5
        for gstar in range(G):
            if A[gstar] <= 0 or not umax[gstar] >= 0:
                continue
            got = sieve_candidates(A, umax, N, gstar)
            assert np.array_equal(got, old_sieve_candidates(A, umax, N, gstar)), (trial, gstar)
