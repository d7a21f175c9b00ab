"""Kernels of the lattice-free smoothed inversion (:mod:`exactdp.engine.smoothed`).

Nodes are ``u_n = 2π n ν`` (n ≥ 0 integer, ν rational).  Every phase ``frac(n·τ)`` of a
node (τ = w_g ν for a group, τ = ν t for a threshold) is formed in double-double
arithmetic from ``τ = hi + lo`` (``|τ − hi − lo| ≤ 2^-104``): ``n·hi`` exactly by Dekker's
product, so for n < 2^53 the phase in cycles is off by at most ``2^-50`` of a cycle
whatever the size of n·τ (:data:`PHASE_ERR`, in radians).
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.dgauss import log_theta_ratio
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add

__all__ = ["dd_phases", "smoothed_factors", "smoothed_sums", "interval_penalty", "PHASE_ERR"]

TWO_PI = 2.0 * math.pi
#: bound on the absolute error (radians) of every node phase formed by :func:`_dd_frac`
PHASE_ERR = TWO_PI * 2.0**-50
_SPLIT = 134217729.0  # 2^27 + 1


@kernel("float64(float64, float64, float64)")
def _dd_frac(x, hi, lo):
    """``x·(hi + lo)`` reduced to [−1/2, 1/2) (x an integer-valued float < 2^53)."""
    p = x * hi
    c = _SPLIT * x
    xh = c - (c - x)
    xl = x - xh
    c = _SPLIT * hi
    hh = c - (c - hi)
    hl = hi - hh
    e = ((xh * hh - p) + xh * hl + xl * hh) + xl * hl
    f = p - math.floor(p)
    r = (f + e) + x * lo
    return r - math.floor(r + 0.5)


@kernel("float64[:](int64[:], float64, float64)")
def dd_phases(nodes, hi, lo):
    """Phases ``frac(n·τ)`` in cycles, in [−1/2, 1/2), for the nodes."""
    out = np.empty(nodes.shape[0])
    for i in range(nodes.shape[0]):
        out[i] = _dd_frac(float(nodes[i]), hi, lo)
    return out


@kernel("Tuple((complex128[:], float64[:]))(float64[:], int64[:], float64[:], float64[:], float64[:, :], "
        "float64[:], float64, float64, float64)")
def smoothed_factors(w, m, s2, e_abs, phase, u, lam, sk2, dphase):
    """Normalised integrand at the nodes and the error its phases can cause:

    ``G_n = Π_g [Θ_g(w_g λ + i b_g)/Θ_g(w_g λ)]^{m_g} · e^{−s²u²/2 + i s²λu} · λ/(λ + iu)``

    with ``b_g = 2π·phase[n, g]`` (w_g u mod 2π) and s² = sk2, so ``|G_n| ≤ 1``; and
    ``err_n = dphase·Σ_g m_g e_abs[g]·|G_n|/|F_g|`` with ``F_g`` the group's ratio: a phase
    error ``≤ dphase`` moves one factor by at most ``E_a|X_g| ≤ e_abs[g]`` (absolute), so
    the product moves by at most err_n to first order."""
    N = u.shape[0]
    G = w.shape[0]
    out = np.empty(N, dtype=np.complex128)
    err = np.empty(N)
    lre = np.empty(G)
    for i in range(N):
        re = -0.5 * sk2 * u[i] * u[i]
        im = sk2 * lam * u[i]
        for g in range(G):
            lt = log_theta_ratio(w[g] * lam, TWO_PI * phase[i, g], s2[g])
            lre[g] = lt.real
            re += m[g] * lt.real
            im += m[g] * lt.imag
        z = lam / (lam + 1j * u[i])
        if re < -745.0:
            out[i] = 0.0
        else:
            out[i] = math.exp(re) * (math.cos(im) + 1j * math.sin(im)) * z
        acc = 0.0
        for g in range(G):
            x = re - lre[g]
            if x > -745.0:
                acc += m[g] * e_abs[g] * math.exp(min(x, 700.0))
        err[i] = dphase * acc * abs(z)
    return out, err


@kernel("Tuple((float64[:], float64[:]))(complex128[:], int64[:], float64[:], float64[:])")
def smoothed_sums(Gn, nodes, t_hi, t_lo):
    """For each threshold k: ``Σ_n c_n Re[G_n e^{−2πi frac(n τ_k)}]`` (c_0 = 1, else 2,
    Neumaier-compensated) and ``Σ_n c_n |G_n|``, with ``τ_k = t_hi[k] + t_lo[k]``."""
    T = t_hi.shape[0]
    res = np.empty(T)
    absres = np.empty(T)
    for k in range(T):
        acc = 0.0
        comp = 0.0
        acc_abs = 0.0
        for i in range(nodes.shape[0]):
            c = 1.0 if nodes[i] == 0 else 2.0
            ph = -TWO_PI * _dd_frac(float(nodes[i]), t_hi[k], t_lo[k])
            g = Gn[i]
            term = c * (g.real * math.cos(ph) - g.imag * math.sin(ph))
            acc, comp = neumaier_add(acc, comp, term)
            acc_abs += c * abs(g)
        res[k] = acc + comp
        absres[k] = acc_abs
    return res, absres


@kernel("float64[:](float64[:, :], float64[:, :], float64[:], int64[:], float64[:])")
def interval_penalty(x0, x1, s2, m, logD):
    """Σ_g of the sieve penalty's lower bound over the phase intervals [x0, x1] (cycles;
    one row per group, one column per interval): the distance to ℤ is 0 when the interval
    holds an integer, else the smaller endpoint distance, lowered by a rounding slack;
    ``pen_g(d) = m_g·max(0, log D_g − log Σ_{|k|≤3} e^{−σ²(2πd − 2πk)²/2})`` (the terms
    |k| ≥ 4 weigh < e^{−24π²σ²} ≤ 2e-11 of the k = 0 one where D_g > 1/2, covered by the
    margin).  Groups with ``logD = −inf`` (D ≤ 1/2) contribute 0."""
    G = x0.shape[0]
    K = x0.shape[1]
    out = np.zeros(K)
    for g in range(G):
        if logD[g] == -np.inf:
            continue
        for k in range(K):
            a = x0[g, k]
            b = x1[g, k]
            if math.floor(b) >= math.ceil(a):
                continue
            da = abs(a - math.floor(a + 0.5))
            db = abs(b - math.floor(b + 0.5))
            d = min(da, db) - (4e-16 * (abs(a) + abs(b)) + 2.0**-50 + 1e-15)
            if d <= 0.0:
                continue
            if d > 0.5:
                d = 0.5
            bb = TWO_PI * d
            mx = -0.5 * s2[g] * bb * bb
            acc = 0.0
            for j in range(-3, 4):
                e = bb - TWO_PI * j
                acc += math.exp(-0.5 * s2[g] * e * e - mx)
            logp = mx + math.log(acc)
            margin = 3e-11 + 8.0 * 2.0**-52 * (abs(mx) + 1.0)
            pen = logD[g] - logp - margin
            if pen > 0.0:
                out[k] += m[g] * pen
    return out
