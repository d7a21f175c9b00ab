"""Resonance windows by lattice reduction: where many incommensurate groups peak together.

The pairwise generation of :mod:`exactdp.engine.resonance` enumerates every coincidence of
two sieving families and filters the rest, so its cost is the number of *pairwise*
coincidences below v_max — hopeless for four or more incommensurate groups with large σ²
even when the frequencies where *all* of them peak are few.  Here those are enumerated
directly.  With certified quadratic minorants ``pen_g(d) ≥ q_g d² − η_g`` on ``d ∈ [0, 1/2]``
(:func:`quadratic_minorants`) and the Gaussian factor ``2π²s²v²``, a frequency v with total
penalty ≤ T has an integer vector k (the nearest integers to ``w_g v``) with

    Q(v, k) = γ v² + Σ_g q_g (w_g v − k_g)² ≤ R² = T + Σ_g η_g,     γ ≤ 2π²s².

Minimising over v (``v* = Σ q_g w_g k_g / (γ + Σ q_g w_g²)``) leaves the positive definite
form ``Q*(k) = kᵀAk``, ``A = D − (Dw)(Dw)ᵀ/(γ + wᵀDw)`` (exact rationals), and for each k
the frequencies with ``Q ≤ R²`` lie in ``|v − v*| ≤ sqrt(R²/(γ + wᵀDw))``.  The integer k
with ``kᵀAk ≤ R²`` are found by LLL reduction (python-flint, exact integers, of a rounded
basis: any unimodular transform is valid; its quality only affects the speed) and
Fincke–Pohst enumeration on the exactly transformed form ``U A Uᵀ`` (its LDLᵀ in rational
arithmetic, rounded to floats; the enumeration radius carries a relative slack of 1e-9
that covers the float rounding of the partial sums).  The expected count is the
ellipsoid's volume ``V_G R^G / sqrt(det A)``, ``det A = Π q_g · γ/(γ + wᵀDw)``.

Every window is then refined node by node with all groups' exact penalties
(:func:`exactdp.engine.resonance.window_nodes`).  References: Lenstra, Lenstra & Lovász
(1982); Fincke & Pohst (1985) for the enumeration of lattice points in an ellipsoid.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.families import log_d
from exactdp.engine.resonance import TooManyResonances
from exactdp.kernels.smoothed import interval_penalty

__all__ = ["quadratic_minorants", "expected_windows", "lattice_windows", "MAX_LATTICE_WINDOWS", "MAX_LATTICE_NODES",
           "MAX_DIM"]

#: refuse when the ellipsoid holds more integer vectors than this (windows)
MAX_LATTICE_WINDOWS = 300_000
#: refuse when the windows would hold more nodes than this (expected)
MAX_LATTICE_NODES = 3_000_000
#: at most this many groups (the strongest) enter the lattice; the others filter later
MAX_DIM = 14
#: additive slack per group of the quadratic minorant
ETA = 0.05
_GRID = 2**15


def quadratic_minorants(groups) -> list:
    """Exact ``q_g`` (Fraction, ≥ 0) with ``pen_g(d) ≥ q_g d² − ETA`` for ``d ∈ [0, 1/2]``.

    On each grid interval ``[d_i, d_{i+1}]`` the kernel's certified lower bound ``L_i`` of
    ``pen_g`` holds, so ``q_g ≤ (L_i + ETA)/d_{i+1}²`` for every i suffices."""
    edges = np.arange(_GRID + 1) / (2.0 * _GRID)
    out = []
    for g in groups:
        s2 = float(g.sigma2)
        ld = log_d(s2)
        if ld == -math.inf:
            out.append(Fraction(0))
            continue
        lb = interval_penalty(edges[None, :-1].copy(), edges[None, 1:].copy(), np.array([s2]),
                              np.array([int(g.count)], dtype=np.int64), np.array([ld]))
        q = float(np.min((lb + ETA) / edges[1:] ** 2)) * (1 - 1e-12)
        out.append(Fraction(max(q, 0.0)))
    return out


def _form(ws, qs, gamma):
    """The exact Gram matrix A of ``Q*(k)`` and ``c = γ + Σ q w²``."""
    c = gamma + sum(q * w * w for q, w in zip(qs, ws))
    dw = [q * w for q, w in zip(qs, ws)]
    n = len(ws)
    A = [[(qs[i] if i == j else 0) - dw[i] * dw[j] / c for j in range(n)] for i in range(n)]
    return A, c


def expected_windows(ws, qs, gamma, R2: float) -> float:
    """Volume estimate of the number of k ≥ (half the symmetric set) with ``kᵀAk ≤ R²``."""
    G = len(ws)
    c = gamma + sum(q * w * w for q, w in zip(qs, ws))
    log_det = sum(math.log(q) for q in qs) + math.log(gamma) - math.log(c)
    log_vol = (G / 2) * math.log(math.pi) - math.lgamma(G / 2 + 1) + (G / 2) * math.log(R2)
    return 0.5 * math.exp(log_vol - 0.5 * log_det)


def _reduce(ws, qs, gamma):
    """A unimodular U (rows) with a reduced basis for kᵀAk (LLL on a rounded basis)."""
    import flint

    n = len(ws)
    with mpmath.workdps(80):
        t = [mpmath.sqrt(mpmath.mpf(q.numerator) / q.denominator) * (mpmath.mpf(w.numerator) / w.denominator)
             for q, w in zip(qs, ws)]
        tt = mpmath.fsum(x * x for x in t)
        g = mpmath.mpf(gamma.numerator) / gamma.denominator
        rho = mpmath.sqrt(g / (g + tt))
        that = [x / mpmath.sqrt(tt) for x in t]
        scale = mpmath.mpf(2) ** 100
        rows = []
        for i in range(n):
            sq = mpmath.sqrt(mpmath.mpf(qs[i].numerator) / qs[i].denominator)
            col = [(sq if j == i else 0) - that[j] * that[i] * sq * (1 - rho) for j in range(n)]
            rows.append([int(mpmath.nint(x * scale)) for x in col])
    _, U = flint.fmpz_mat(rows).lll(transform=True)
    return [[int(U[i, j]) for j in range(n)] for i in range(n)]


def _ldl(M):
    """Exact LDLᵀ of a positive definite rational matrix: (d, mu) with
    ``xᵀMx = Σ_i d_i (x_i + Σ_{j>i} mu[i][j] x_j)²`` (Gram–Schmidt order)."""
    n = len(M)
    M = [row[:] for row in M]
    d = [Fraction(0)] * n
    mu = [[Fraction(0)] * n for _ in range(n)]
    for i in range(n):
        d[i] = M[i][i]
        if d[i] <= 0:
            raise ArithmeticError("the resonance form is not positive definite")
        for j in range(i + 1, n):
            mu[i][j] = M[i][j] / d[i]
        for j in range(i + 1, n):
            for k in range(i + 1, n):
                M[j][k] -= mu[i][j] * mu[i][k] * d[i]
    return d, mu


def _enumerate(d, mu, R2: float, limit: int) -> list:
    """All integer x with ``Σ_i d_i (x_i + Σ_{j>i} mu[i][j] x_j)² ≤ R2`` (Fincke–Pohst from
    the last index; floats with a relative slack of 1e-9 on the radius, far above the
    rounding of the partial sums; x and −x both listed)."""
    n = len(d)
    df = [float(v) for v in d]
    muf = [[float(v) for v in row] for row in mu]
    bound = R2 * (1 + 1e-9) + 1e-9
    out: list = []
    x = [0] * n
    partial = [0.0] * (n + 1)

    def level(i):
        center = -sum(muf[i][j] * x[j] for j in range(i + 1, n))
        rem = bound - partial[i + 1]
        if rem < 0:
            return
        r = math.sqrt(rem / df[i]) * (1 + 1e-12) + 1e-12
        for xi in range(math.ceil(center - r), math.floor(center + r) + 1):
            x[i] = xi
            partial[i] = partial[i + 1] + df[i] * (xi - center) ** 2
            if partial[i] > bound:
                continue
            if i == 0:
                out.append(tuple(x))
                if len(out) > limit:
                    raise TooManyResonances(f"more than {limit // 2} resonance windows in the lattice ellipsoid")
            else:
                level(i - 1)
        x[i] = 0

    level(n - 1)
    return out


def lattice_windows(groups, sk2: float, T: float, v_max: float, period: int):
    """Candidate windows ``(js, α_lo, α_hi, unit = 1)`` (frequency ``v = j + α``) covering
    every v ∈ [0, v_max] where the sieving groups' total penalty plus ``2π²s²v²`` is ≤ T.

    Raises
    ------
    TooManyResonances
        When the ellipsoid holds too many integer vectors (expected or found).
    """
    qs_all = quadratic_minorants(groups)
    order = sorted(range(len(groups)), key=lambda i: -float(qs_all[i]))
    keep = [i for i in order if qs_all[i] > 4 * ETA][:MAX_DIM]
    if len(keep) < 2:
        raise TooManyResonances("fewer than two groups constrain the frequencies")
    ws = [groups[i].weight for i in keep]
    qs = [qs_all[i] for i in keep]
    gamma = Fraction(2 * math.pi**2 * sk2 * (1 - 1e-12))
    R2 = T + ETA * len(keep)
    est = expected_windows(ws, qs, gamma, R2)
    A, c = _form(ws, qs, gamma)
    nodes = est * (2 * math.sqrt(R2 / float(c)) * period + 1)  # volume estimate
    if est > MAX_LATTICE_WINDOWS or nodes > MAX_LATTICE_NODES:
        raise TooManyResonances(f"about {est:.3g} resonance windows ({nodes:.3g} nodes) below frequency {v_max:.3g}")
    U = _reduce(ws, qs, gamma)
    n = len(ws)
    Ared = [[sum(U[i][a] * sum(A[a][b] * U[j][b] for b in range(n)) for a in range(n)) for j in range(n)]
            for i in range(n)]
    d, mu = _ldl(Ared)
    per_window = 2 * math.sqrt(R2 / float(c)) * period + 1
    # x and −x are both listed; the count can exceed the volume estimate for commensurate groups
    xs = _enumerate(d, mu, R2, int(2 * min(MAX_LATTICE_WINDOWS, MAX_LATTICE_NODES / per_window)) + 2)
    half = Fraction(math.sqrt(R2 / float(c)) * (1 + 1e-9))
    dw = [q * w for q, w in zip(qs, ws)]
    vmax = Fraction(v_max)
    js, los, his = [], [], []
    for x in xs:
        k = [sum(U[i][g] * x[i] for i in range(n)) for g in range(n)]
        vstar = sum(a * b for a, b in zip(dw, k)) / c  # exact
        lo, hi = max(vstar - half, Fraction(0)), min(vstar + half, vmax)
        if lo > hi:
            continue
        j = math.floor(lo)
        js.append(j)
        los.append(math.nextafter(float(lo - j), -math.inf))
        his.append(math.nextafter(float(hi - j), math.inf))
    return (np.array(js, dtype=np.int64), np.array(los), np.array(his), Fraction(1))
