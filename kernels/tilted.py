"""Kernels of the tilted-contour trapezoid rule for lattice tails.

For ``S = Σ_g A_g Σ_k X_{g,k}`` (integer A_g, X ~ N_Z(0, s_g²)), any λ > 0 and integer s,

    P(S ≥ s) = (1/2π) ∫_{−π}^{π} M(λ+iθ) e^{−(λ+iθ)s} / (1 − e^{−(λ+iθ)}) dθ .

On the nodes ``θ_n = 2πn/N`` the trapezoid rule is evaluated as

    P(S ≥ s) ≈ R(λ, s) · (1/N) Σ_n w_n Re[ G_n e^{−iθ_n s} ],
    R(λ, s) = M(λ) e^{−λ s} / (1 − e^{−λ}),
    G_n     = [M(λ+iθ_n)/M(λ)] · [(1 − e^{−λ}) / (1 − e^{−λ−iθ_n})],   |G_n| ≤ 1,

over the nodes n ∈ [0, N/2] (weights w_0 = w_{N/2} = 1, else 2, by conjugate symmetry).
Phases ``A_g θ_n`` and ``θ_n s`` are reduced modulo 2π with exact integer arithmetic
``(A_g·n) mod N``, so no phase error grows with the size of s or A_g.
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.dgauss import POISSON_MIN_S2, log_poisson_numerator, log_theta, log_theta_ratio
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add

__all__ = ["log_mgf_real", "node_factors", "tilted_sums", "sieve_candidates"]

TWO_PI = 2.0 * math.pi
#: longest run of phase rotations between exact re-anchorings in :func:`tilted_sums`
ANCHOR = 32


@kernel("float64(int64, float64)")
def _wrapped_angle(r, n_nodes):
    """2π·r/N reduced to [−π, π] for 0 ≤ r < N."""
    if 2 * r > n_nodes:
        return TWO_PI * (r - n_nodes) / n_nodes
    return TWO_PI * r / n_nodes


@kernel("float64(int64[:], int64[:], float64[:], float64[:], float64)")
def log_mgf_real(A, m, s2, logtheta0, lam):
    """``log M(λ) = Σ_g m_g [log Θ_g(A_g λ) − log Θ_g(0)]``."""
    tot = 0.0
    for g in range(A.shape[0]):
        tot += m[g] * (log_theta(A[g] * lam, 0.0, s2[g]).real - logtheta0[g])
    return tot


@kernel("complex128[:](int64[:], int64[:], float64[:], float64, int64[:], int64)")
def node_factors(A, m, s2, lam, nodes, n_nodes):
    """The normalised integrand factors ``G_n`` (see module docstring) at the given nodes."""
    G = A.shape[0]
    out = np.empty(nodes.shape[0], dtype=np.complex128)
    one_minus = -math.expm1(-lam)
    # the b = 0 normaliser of the Poisson numerator depends on λ only: once per group
    ref = np.empty(G, dtype=np.complex128)
    for g in range(G):
        if s2[g] >= POISSON_MIN_S2:
            ref[g] = log_poisson_numerator(A[g] * lam, 0.0, s2[g])
    for i in range(nodes.shape[0]):
        n = nodes[i]
        re = 0.0
        im = 0.0
        for g in range(G):
            b = _wrapped_angle((A[g] * n) % n_nodes, n_nodes)
            if s2[g] >= POISSON_MIN_S2:
                lt = log_poisson_numerator(A[g] * lam, b, s2[g]) - ref[g]
                re += m[g] * (lt.real - 0.5 * s2[g] * b * b)
            else:
                lt = log_theta_ratio(A[g] * lam, b, s2[g])
                re += m[g] * lt.real
            im += m[g] * lt.imag
        theta = _wrapped_angle(n, n_nodes)
        # (1 - e^{-λ}) / (1 - e^{-λ-iθ}); the real part of the denominator is formed as
        # (1 - e^{-λ}) cos θ + 2 sin²(θ/2) - a sum of non-negative terms for |θ| ≤ π/2 -
        # instead of 1 - e^{-λ} cos θ, which cancels catastrophically for small λ and θ.
        sh = math.sin(0.5 * theta)
        den = (one_minus * math.cos(theta) + 2.0 * sh * sh) + 1j * (math.exp(-lam) * math.sin(theta))
        if re < -745.0:
            out[i] = 0.0
        else:
            out[i] = math.exp(re) * (math.cos(im) + 1j * math.sin(im)) * one_minus / den
    return out


@kernel("Tuple((float64[:], float64[:]))(complex128[:], int64[:], int64, int64[:])")
def tilted_sums(Gn, nodes, n_nodes, thresholds):
    """For each threshold s: ``(1/N) Σ_n w_n Re[G_n e^{−iθ_n s}]`` and ``(1/N) Σ_n w_n |G_n|``.

    The signed sum is accumulated with Neumaier's compensated summation, so its rounding
    error is at most ``2u·Σ|terms| + O(n u²)·Σ|terms|`` independently of the node count.
    """
    T = thresholds.shape[0]
    res = np.empty(T)
    absres = np.empty(T)
    half = n_nodes // 2
    for t in range(T):
        s = thresholds[t] % n_nodes
        acc = 0.0
        comp = 0.0
        acc_abs = 0.0
        # e^{−iθ_n s} along runs of consecutive nodes by rotation, re-anchored exactly
        # (integer phase) every ANCHOR steps: its relative error stays ≤ 4u·ANCHOR
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
            acc, comp = neumaier_add(acc, comp, term)
            acc_abs += w * abs(g)
        res[t] = (acc + comp) / n_nodes
        absres[t] = acc_abs / n_nodes
    return res, absres


@kernel("int64(int64[:], float64[:], int64, int64, int64[:], boolean)")
def _scan(A, umax, n_nodes, gstar, out, fill):
    G = A.shape[0]
    a_star = A[gstar]
    u_star = umax[gstar]
    half = n_nodes // 2
    limits = np.empty(G)
    for g in range(G):
        # keep iff distance d = min(r, N-r) satisfies 2π d / N <= umax_g (slightly widened:
        # keeping an extra node is always safe, dropping one is what must be certified)
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


@kernel("int64[:](int64[:], float64[:], int64, int64)")
def sieve_candidates(A, umax, n_nodes, gstar):
    """Nodes n ∈ [0, N/2] with ``dist(A_g θ_n, 2πℤ) ≤ umax_g`` for every group g.

    Candidates are enumerated around the peaks ``2πj/A_{g*}`` of the group ``g*`` (the
    one with the fewest surviving nodes) and filtered by all the others.
    """
    dummy = np.empty(0, dtype=np.int64)
    count = _scan(A, umax, n_nodes, gstar, dummy, False)
    out = np.empty(count, dtype=np.int64)
    _scan(A, umax, n_nodes, gstar, out, True)
    return out
