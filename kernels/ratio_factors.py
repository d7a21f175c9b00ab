"""The normalised integrand of the smoothed profile at its nodes (:mod:`exactdp.engine.smoothed_profile`).

``G_n = M_W(λ+iu_n)/M_W(λ) · e^{s²((λ+iu)² − λ²)/2}`` (``|G_n| ≤ 1``) at the nodes
``u_n = 2πn/P``, in two parts: :func:`ratio_logs`, the log of the theta ratio (independent of
the smoothing sd s, so one evaluation per tilt and node serves every smoothing level), from
the recentred ratio ``Θ(a+ib)/Θ(a) = e^{ibn₀}·ψ(f, b)`` (``μ = λΔ = n₀ + f``) whose log has an
absolute error bound (:func:`exactdp.kernels.dgauss.log_psi_at`), so ``m·log ψ`` stays
accurate for counts up to 10⁶; and :func:`smoothed_factors`, which adds a level's Gaussian
factor; each with an absolute error bound per node.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.dgauss import POISSON_MIN_S2, PSI_CONSTS, TRUNC_REL, log_psi_at, psi_consts
from exactdp.kernels.jit import kernel
from exactdp.kernels.profile import dd_frac2
from exactdp.kernels.units import EPS64

__all__ = ["ratio_logs", "smoothed_factors"]

TWO_PI = 2.0 * math.pi


@kernel("Tuple((float64[:], float64[:], float64[:], float64[:]))(int64[:], float64[:], float64[:], float64[:], "
        "float64[:], float64[:], float64, float64)")
def ratio_logs(nodes, tau_hi, tau_lo, s2, m, delta, lam, P):
    """The theta part of ``log G_n`` at the nodes for a tilt λ (no smoothing factor; see
    :func:`smoothed_factors`): per node ``(re, im, err, log_w)`` with ``re + i·im`` the log of
    ``M_W(λ+iu_n)/M_W(λ)`` (im reduced modulo 2π only in its integer-phase part), ``err``
    an absolute bound of its error and ``log_w`` an upper bound of
    ``log Σ_g moment_g·δb_g/|ψ_g|`` (the weight of the phase errors δb, below).

    Per group: ``μ = λΔ = n₀ + f``, ``b = 2π·frac(n·τ)``, and the factor
    ``exp(m·log ψ(f, b) + 2πi·frac(m·n₀·frac(n·τ)))``; the phase ``frac(n·τ)`` is a
    double-double (error ``e_n ≤ 2^-103(1 + 2n|τ|)`` cycles).  Error of the log: ``m·err(log
    ψ)`` (absolute, :func:`exactdp.kernels.dgauss.log_psi_at`), the products ``m·log ψ`` and
    (recursive summation) each addition's rounding ``≤ u|partial sum|``; the integer phase
    ``k = m·n₀`` times the double-double phase, reduced by :func:`dd_frac2` (its low part
    dropped: the error is that part, ``2^-104(1 + 2|k·frac|)`` and ``|k|·e_n`` cycles) and
    summed with the exact rounding error of each addition (TwoSum) charged; the final
    reduction and ``2π·cyc``.  The phase error ``δb ≤ 4u|b| + 2π(e_n + 2^-106)`` of b
    (rounded twice) moves a factor ψ^m by at most ``m(|f| + s + 1)δb·|ψ|^{m−1}`` (``|∂ψ/∂b|
    ≤ E_f|Y| ≤ |f| + s + 1``, Y ~ N_Z(f, s²)), so G_n by ``|G_n|/|ψ|`` times that: the sum
    over the groups is ``|G_n|·Σ_g moment_g δb_g/|ψ_g| = |G_n|·e^{log_w}``, accumulated as a
    running log-sum-exp with every exponent raised by its rounding (an upper bound).

    A Poisson-form group whose six series terms are all below e^{−745} at this b (``2πs²(π −
    |b|) ≥ 746``) takes :func:`log_psi_at`'s own early return inline (the same operations,
    the same bits, no call)."""
    N = nodes.shape[0]
    G = s2.shape[0]
    out_re = np.empty(N)
    out_im = np.empty(N)
    out_err = np.empty(N)
    out_w = np.empty(N)
    cc = np.empty((G, 6), dtype=np.complex128)
    cr = np.empty((G, PSI_CONSTS))
    fs = np.empty(G)
    kk = np.empty(G)
    moment = np.empty(G)
    bfast = np.empty(G)
    sc = np.empty(PSI_CONSTS)
    for g in range(G):
        mu = lam * delta[g]
        n0 = math.floor(mu + 0.5)
        fs[g] = mu - n0
        psi_consts(fs[g], s2[g], cc[g], cr[g])
        kk[g] = m[g] * n0
        moment[g] = m[g] * (abs(fs[g]) + math.sqrt(s2[g]) + 1.0)
        bfast[g] = -1.0
        if s2[g] >= POISSON_MIN_S2:
            lim = math.pi - 746.0 / (TWO_PI * s2[g])
            if lim > 0.0:
                bfast[g] = lim * (1.0 - 4.0 * EPS64)
    for i in range(N):
        nf = float(nodes[i])
        re = 0.0
        im = 0.0
        e_tot = 0.0
        cyc = 0.0
        w_max = -np.inf
        w_sum = 0.0
        for g in range(G):
            h, l = dd_frac2(nf, tau_hi[g], tau_lo[g])
            e_n = 2.0**-103 * (1.0 + 2.0 * nf * abs(tau_hi[g]))
            b = TWO_PI * (h + l)
            if abs(b) <= bfast[g]:  # log_psi_at's zabs == 0 return, inline
                gre = -0.5 * s2[g] * b * b
                gim = fs[g] * b
                l2 = cr[g, 12]
                lre = gre - l2
                lim_ = gim
                le = 2.0 * (EPS64 * (8.0 * cr[g, 13] + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))) + 2.0 * TRUNC_REL
            else:
                lp, le = log_psi_at(fs[g], b, s2[g], cc[g], cr[g], sc)
                lre = lp.real
                lim_ = lp.imag
            re += m[g] * lre
            im += m[g] * lim_
            # the products and (recursive summation) each addition's rounding, ≤ u|partial sum|
            e_tot += m[g] * le + 4.0 * EPS64 * m[g] * (abs(lre) + abs(lim_)) + EPS64 * (abs(re) + abs(im))
            if kk[g] != 0.0:
                ph, r = dd_frac2(kk[g], h, l)
                s = cyc + ph
                bb = s - cyc
                t = (cyc - (s - bb)) + (ph - bb)  # the addition's exact rounding error (TwoSum)
                cyc = s
                e_tot += TWO_PI * (abs(r) + 2.0**-104 * (1.0 + 2.0 * abs(kk[g] * h)) + abs(kk[g]) * e_n
                                   + abs(t)) * (1.0 + 8.0 * EPS64)
            # the phase-error weight moment·δb/|ψ| = exp(log(moment·δb) − log|ψ|), its exponent
            # raised by its own rounding
            db = 4.0 * EPS64 * abs(b) + TWO_PI * (e_n + 2.0**-106)
            x = math.log(moment[g] * db) - lre
            x += 4.0 * EPS64 * (abs(x) + 50.0)
            if x > w_max:
                w_sum = w_sum * math.exp(w_max - x) + 1.0 if w_max > -np.inf else 1.0
                w_max = x
            else:
                w_sum += math.exp(x - w_max)
        cyc = cyc - math.floor(cyc + 0.5)
        im += TWO_PI * cyc
        e_tot += 8.0 * EPS64 * (abs(im) + 2.0)
        out_re[i] = re
        out_im[i] = im
        out_err[i] = e_tot * (1.0 + (G + 8.0) * EPS64)
        # the sum of G positive terms (each rounded, their exponents raised): relative (G + 4)u
        lw = w_max + math.log(w_sum) if w_sum > 0.0 else -np.inf
        out_w[i] = lw + 4.0 * EPS64 * (abs(lw) + G + 8.0) if w_sum > 0.0 else -np.inf
    return out_re, out_im, out_err, out_w


@kernel("Tuple((complex128[:], float64[:]))(int64[:], float64[:], float64[:], float64[:], float64[:], float64, "
        "float64, float64)")
def smoothed_factors(nodes, t_re, t_im, t_err, t_w, lam, sk2, P):
    """``G_n = M_W(λ+iu_n)/M_W(λ) · e^{s²((λ+iu)² − λ²)/2}`` (``|G_n| ≤ 1``) at the nodes and
    an absolute error bound of each, from the theta part :func:`ratio_logs` of the same
    nodes and tilt: the Gaussian factor's exponent ``−s²u²/2 + i·s²λu`` (rounding ≤
    4u·|part|, u_n to 2u relative) is added to the theta log; the error is the relative part
    ``e^{E} − 1`` (E: the theta log's bound, the Gaussian part's, the two additions'), exp,
    cos and sin (``4u·|G_n|``), plus the phase errors' ``|G_n|·e^{log_w}``; at most
    ``1 + |out_n|`` (the exact G_n has modulus ≤ 1)."""
    N = nodes.shape[0]
    out = np.empty(N, dtype=np.complex128)
    err = np.empty(N)
    c_u = TWO_PI / P
    for i in range(N):
        u = c_u * float(nodes[i])
        gre = -0.5 * sk2 * u * u
        gim = sk2 * lam * u
        re = t_re[i] + gre
        im = t_im[i] + gim
        e_tot = t_err[i] + 8.0 * EPS64 * (abs(gre) + abs(gim)) + 2.0**-60 + EPS64 * (abs(re) + abs(im))
        e_tot += 8.0 * EPS64 * (abs(im) + 2.0)
        xa = re + t_w[i]
        if xa <= -700.0:
            acc = 1e-300
        elif xa <= 700.0:
            acc = math.exp(xa + 4.0 * EPS64 * (abs(xa) + 1.0))
        else:  # also NaN (a factor of modulus 0): no information
            acc = np.inf
        mod = 0.0
        if re < -745.0:
            out[i] = 0.0
            e = math.exp(re + e_tot) if re + e_tot > -745.0 else 0.0
            e += acc * (1.0 + 8.0 * EPS64)
        else:
            mod = math.exp(re)
            out[i] = mod * (math.cos(im) + 1j * math.sin(im))
            e = mod * math.expm1(e_tot) + 4.0 * EPS64 * mod + acc * (1.0 + 8.0 * EPS64)
        # |G_n| ≤ 1: an error beyond 1 + |out| (or NaN) says nothing more than that
        cap = 1.0 + mod * (1.0 + 8.0 * EPS64)
        err[i] = e if e <= cap else cap
    return out, err
