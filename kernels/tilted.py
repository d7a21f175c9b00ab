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

The rule's kernels live by job in :mod:`~exactdp.kernels.nodes` (node factors, node
trigonometry), :mod:`~exactdp.kernels.signed` (signed sums) and
:mod:`~exactdp.kernels.sieve` (the node sieve); this module holds the hockey-stick factor,
the saddle point and the aliasing bound, and re-exports the others.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.dgauss import (
    HALF_ULP_REL,
    MOMENT_CONSTS,
    log_theta_tilde_ratio_at,
    moment_consts,
    tilted_moments_at,
)
from exactdp.kernels.jit import kernel
from exactdp.kernels.nodes import node_factors, node_trig
from exactdp.kernels.sieve import sieve_candidates
from exactdp.kernels.signed import ANCHOR, tilted_sums
from exactdp.kernels.units import EPS64

__all__ = ["node_factors", "node_trig", "delta_factor", "delta_factors", "tilted_sums", "cgf_slope", "saddle_point",
           "sieve_candidates", "alias_bound", "ANCHOR", "ALIAS_FALLBACK", "moment_table", "cgf_slope_at",
           "saddle_point_at", "alias_bound_at"]


@kernel("Tuple((complex128, float64))(float64, float64, float64, float64, float64, float64, float64, float64, float64)")
def delta_factor(c, s, sh, a0, a1, e_lam, one_minus2, e_lb, num0):
    """Per-node factor turning the tail kernel into the hockey-stick kernel.

    ``Σ_{j≥0} f_j e^{−zj}`` with ``f_j = 1 − c e^{−βj}`` (``a0 = 1 − c``, ``a1 = c − e^{−β}``,
    both ≥ 0) equals ``(a0 + a1 e^{−z}) / ((1 − e^{−z})(1 − e^{−z−β}))``; normalised by its
    value at z = λ the extra factor over the tail kernel is

        X_n = [(a0 + a1 e^{−z})/(a0 + a1 e^{−λ})] · [(1 − e^{−λ−β})/(1 − e^{−z−β})],  z = λ + iθ_n,

    of modulus ≤ 1 (non-negative coefficients).  Inputs: ``cos θ_n, sin θ_n, sin(θ_n/2)``,
    ``e^{−λ}``, ``1 − e^{−λ−β}``, ``e^{−λ−β}``, ``a0 + a1 e^{−λ}``.  Returns ``X_n`` and
    ``|R2|`` (the modulus of the second factor, which bounds the absolute error of the
    first one's numerator)."""
    num = (a0 + a1 * e_lam * c) - 1j * (a1 * e_lam * s)
    den2 = (one_minus2 * c + 2.0 * sh * sh) + 1j * (e_lb * s)
    r2 = one_minus2 / den2
    return (num / num0) * r2, abs(r2)


@kernel("Tuple((complex128[:], float64[:]))(float64[:], float64[:], float64[:], float64, float64, float64, float64)")
def delta_factors(cos_t, sin_t, sh_t, lam, beta, a0, a1):
    """:func:`delta_factor` at every node, from the nodes' :func:`node_trig`: ``(X, |R2|)``."""
    k = cos_t.shape[0]
    X = np.empty(k, dtype=np.complex128)
    R2 = np.empty(k)
    e_lam = math.exp(-lam)
    lb = lam + beta
    one_minus2 = -math.expm1(-lb)
    e_lb = math.exp(-lb)
    num0 = a0 + a1 * e_lam
    for i in range(k):
        X[i], R2[i] = delta_factor(cos_t[i], sin_t[i], sh_t[i], a0, a1, e_lam, one_minus2, e_lb, num0)
    return X, R2


@kernel("float64[:, :](float64[:])")
def moment_table(s2):
    """:func:`~exactdp.kernels.dgauss.moment_consts` of every group, one row each: the
    s²-only constants of :func:`cgf_slope_at`, :func:`saddle_point_at` and
    :func:`alias_bound_at`, evaluated once per kernel call instead of once per step."""
    mc = np.empty((s2.shape[0], MOMENT_CONSTS))
    for g in range(s2.shape[0]):
        moment_consts(s2[g], mc[g])
    return mc


@kernel("UniTuple(float64, 2)(int64[:], int64[:], float64[:], float64[:, :], float64)")
def cgf_slope_at(A, m, s2, mc, lam):
    """:func:`cgf_slope` from the constants :func:`moment_table` of s²."""
    k1 = 0.0
    k2 = 0.0
    for g in range(A.shape[0]):
        mu = A[g] * lam * s2[g]
        n0 = math.floor(mu + 0.5)
        mean, var = tilted_moments_at(mu - n0, s2[g], mc[g])
        k1 += m[g] * A[g] * (n0 + mean)
        k2 += m[g] * A[g] * A[g] * var
    return k1, k2


@kernel("UniTuple(float64, 2)(int64[:], int64[:], float64[:], float64)")
def cgf_slope(A, m, s2, lam):
    """``(K'(λ), K''(λ))`` of ``S = Σ_g A_g Σ_k X_{g,k}`` in float64 (for the saddle point):
    the mean and variance of the λ-tilted S, each tilted factor being N_Z(A_g λ s_g², s_g²)."""
    return cgf_slope_at(A, m, s2, moment_table(s2), lam)


@kernel("float64(int64[:], int64[:], float64[:], float64[:, :], float64, float64)")
def saddle_point_at(A, m, s2, mc, s, lam0):
    """:func:`saddle_point` from the constants :func:`moment_table` of s² (the slope at
    ``lam0``, evaluated by the bracketing, is not evaluated again by the first Newton step)."""
    lo = 0.0
    hi = lam0
    k1_0 = 0.0
    k2_0 = 0.0
    for it in range(2000):
        k1, k2 = cgf_slope_at(A, m, s2, mc, hi)
        if it == 0:
            k1_0 = k1
            k2_0 = k2
        if k1 >= s:
            break
        lo = hi
        hi *= 2.0
    at_lam0 = lam0 < hi  # the first step is at lam0, whose slope is (k1_0, k2_0)
    lam = lam0 if at_lam0 else 0.5 * (lo + hi)
    for it in range(200):
        if it == 0 and at_lam0:
            k1 = k1_0
            k2 = k2_0
        else:
            k1, k2 = cgf_slope_at(A, m, s2, mc, lam)
        if abs(k1 - s) <= 1e-12 * s:
            return lam
        if k1 < s:
            lo = lam
        else:
            hi = lam
        if hi - lo <= 1e-14 * hi:
            return lam
        nxt = lam - (k1 - s) / k2 if k2 > 0.0 else -1.0
        if not (lo < nxt < hi):
            nxt = 0.5 * (lo + hi)
        lam = nxt
    return lam


@kernel("float64(int64[:], int64[:], float64[:], float64, float64)")
def saddle_point(A, m, s2, s, lam0):
    """The λ > 0 with ``K'(λ) = s`` (s > 0) by Newton steps safeguarded by bisection
    (K' is increasing); ``lam0`` is the first guess (e.g. s/V')."""
    return saddle_point_at(A, m, s2, moment_table(s2), s, lam0)


#: returned by :func:`alias_bound` when the float path does not apply
ALIAS_FALLBACK = -1.0


@kernel("float64(float64, float64, float64, float64, float64, int64[:], int64[:], float64[:], int64[:], float64[:, :])")
def _dk_float(lam, tt, s, rho_lam, V, A, m, s2, small, mc):
    """``[K(tt) − tt·s] − [K(λ) − λs]`` bounded above in float64 (the float branch of
    ``QuadratureTails._dK``, the same operations in the same order); NaN when that
    branch does not apply (a float product too inexact, or a tilted centre ≥ 1e8).
    ``mc``: the constants :func:`moment_table` of s²."""
    a = (tt + lam) * V / 2
    d = (tt - lam) * (a - s)
    derr = 4 * EPS64 * abs(tt - lam) * (abs(a) + abs(s)) + 4 * EPS64 * abs(d)
    if derr > 1e-6:
        return np.nan
    out = d - rho_lam
    for j in range(small.shape[0]):
        g = small[j]
        if abs(float(A[g]) * s2[g] * tt) >= 1e8:
            return np.nan
    for j in range(small.shape[0]):
        g = small[j]
        mu = float(A[g]) * s2[g] * tt
        f = mu - math.floor(mu + 0.5)
        # a ratio below half an ulp of out (|m·ratio| ≤ m·mc[g, 6] ≤ 2^{−54}|out|) leaves it unchanged
        if not (abs(out) >= 1e-250 and m[g] * mc[g, 6] <= abs(out) * HALF_ULP_REL):
            out += m[g] * log_theta_tilde_ratio_at(f, s2[g], mc[g])
        derr += m[g] * EPS64 * 8 * (abs(mu) + 1) / s2[g]
    return out + derr + 1e-9 * (1 + abs(out) + abs(rho_lam))


@kernel("float64(float64, int64, int64, float64, float64, float64, float64, int64[:], int64[:], float64[:], int64[:], "
        "boolean, float64[:, :], float64)")
def alias_bound_at(lam, n_nodes, s, log_r, log_k, rho_lam, V, A, m, s2, small, gaussian, mc, log_tail):
    """Both aliasing sums of the tilted rule in units of its normalising factor R (the
    float path of ``QuadratureTails._alias_norm``, the same operations in the same
    order), or :data:`ALIAS_FALLBACK` when that path does not apply (|s| + N ≥ 2⁵³, an
    inexact float branch of the CGF difference, or a non-finite candidate).

    ``log_r = log R`` (float), ``log_k`` the log of the kernel factor, ``rho_lam =
    K(λ) − λ²V'/2``; ``small`` lists the groups whose CGF is bounded by their theta ratio;
    ``mc`` the constants :func:`moment_table` of s², ``log_tail = log(1 − e^{−λN})`` (both
    the same for every threshold of one tilt: :func:`alias_bound` forms them)."""
    N = float(n_nodes)
    if abs(s) + n_nodes >= 2**53:
        return ALIAS_FALLBACK
    la_neg = -lam * N - log_tail - log_r
    la_pos = np.inf
    have_pos = False
    for side in (1, -1):
        target = s + side * n_nodes
        if target <= 0:
            continue
        ft = float(target)
        c0 = ft / V
        if not gaussian:
            c0 = saddle_point_at(A, m, s2, mc, ft, c0)
        c1 = lam + float(side * n_nodes) / V
        for c in range(2):
            cand = c0 if c == 0 else c1
            if c == 1 and c1 == c0:
                continue
            gap = (cand - lam) * side
            if gap <= 0 or cand <= 0:
                continue
            dk = _dk_float(lam, cand, float(s), rho_lam, V, A, m, s2, small, mc)
            if not math.isfinite(dk):
                return ALIAS_FALLBACK
            val = dk - gap * N - math.log(-math.expm1(-gap * N)) - log_k
            if math.isnan(val):
                return ALIAS_FALLBACK
            if side > 0:
                if not have_pos or val < la_pos:
                    la_pos = val
                have_pos = True
            elif val < la_neg:
                la_neg = val
    if math.isnan(la_neg):
        return ALIAS_FALLBACK
    tot = 0.0
    tot += math.exp(min(la_pos, 700.0))
    tot += math.exp(min(la_neg, 700.0))
    return tot


@kernel("float64(float64, int64, int64, float64, float64, float64, float64, int64[:], int64[:], float64[:], int64[:], "
        "boolean)")
def alias_bound(lam, n_nodes, s, log_r, log_k, rho_lam, V, A, m, s2, small, gaussian):
    """Both aliasing sums of the tilted rule in units of its normalising factor R, or
    :data:`ALIAS_FALLBACK` (:func:`alias_bound_at` with its per-tilt constants formed here)."""
    log_tail = math.log(-math.expm1(-lam * float(n_nodes)))
    return alias_bound_at(lam, n_nodes, s, log_r, log_k, rho_lam, V, A, m, s2, small, gaussian, moment_table(s2),
                          log_tail)
