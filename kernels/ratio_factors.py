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
from exactdp.kernels.dgauss import (
    NEGLIGIBLE,
    POISSON_MIN_S2,
    PSI_CONSTS,
    TRUNC_REL,
    log_psi_rows,
    psi_consts,
    psi_terms_len,
    psi_terms_rows,
)
from exactdp.kernels.jit import kernel
from exactdp.kernels.profile import dd_frac2
from exactdp.kernels.units import EPS64

__all__ = ["ratio_logs", "smoothed_factors"]

TWO_PI = 2.0 * math.pi


#: nodes per block of :func:`ratio_logs` (each group's rows of a block are evaluated in one call)
BLOCK = 256


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
    over the groups is ``|G_n|·e^{log_w}``, accumulated as a
    running log-sum-exp with every exponent raised by its rounding (an upper bound).

    Evaluation (the same operations, per node in the same group order, as
    :func:`exactdp.kernels.dgauss.log_psi_at` called per node and group: the same bits): the
    nodes are taken in blocks of :data:`BLOCK`; per block and group the phases are formed
    first, and the nodes that need the theta series get their rows
    (:func:`~exactdp.kernels.dgauss.psi_terms_rows`) and logs
    (:func:`~exactdp.kernels.dgauss.log_psi_rows`) in one call each (no array allocated per
    node and group).  A Poisson-form group (s² ≥ POISSON_MIN_S2) skips the series where
    :func:`~exactdp.kernels.dgauss.log_psi_rows` is known to return ``log ψ = −s²b²/2 + ifb −
    log(1 + d)`` with its series-free bound:

    * all six terms below e^{−745} (``2πs²(π − |b|) ≥ 746``): its ``zabs = 0`` return;
    * else its "z negligible" return, decided from upper bounds instead of the six
      exponentials: every term ``e^{−2πs²k(πk − b)}`` (|k| ≤ 3) is at most
      ``e^{e_m}``, ``e_m = −2πs²(π − |b|)`` (the k = ±1 exponent; |k| ≥ 2 ones are at most
      twice it), so the rounded ``zabs ≤ 6e^{e_m}(1 + 10⁻⁹)`` (e_m raised by 10⁻⁹ relative:
      its own rounding and the exponents' are ≤ 4u relative) and its rounding weight
      ``dz ≤ zabs·max_k(4|e_k|_max + w_k)`` (``|e_k| ≤ 2πs²|k|(π|k| + π)``, w_k the
      b-independent part, :func:`~exactdp.kernels.dgauss.psi_consts`); where these bounds
      pass that return's tests (each monotone in zabs and dz), the computed zabs and dz pass
      them too, and the return is the same."""
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
    dzc = np.zeros(G)
    width = 1
    for g in range(G):
        mu = lam * delta[g]
        n0 = math.floor(mu + 0.5)
        fs[g] = mu - n0
        psi_consts(fs[g], s2[g], cc[g], cr[g])
        kk[g] = m[g] * n0
        moment[g] = m[g] * (abs(fs[g]) + math.sqrt(s2[g]) + 1.0)
        bfast[g] = -1.0
        width = max(width, psi_terms_len(s2[g]))
        if s2[g] >= POISSON_MIN_S2:
            lim = math.pi - 746.0 / (TWO_PI * s2[g])
            if lim > 0.0:
                bfast[g] = lim * (1.0 - 4.0 * EPS64)
            for j in range(6):
                dzc[g] = max(dzc[g], 4.0 * abs(cr[g, j]) * (abs(cr[g, 6 + j]) + math.pi) * (1.0 + 1e-9)
                             + cr[g, 14 + j])
    tab = np.empty(BLOCK * width)
    hs = np.empty(BLOCK)
    ls = np.empty(BLOCK)
    bsl = np.empty(BLOCK)
    slow = np.empty(BLOCK, dtype=np.int64)
    p_re = np.empty(BLOCK)
    p_im = np.empty(BLOCK)
    p_err = np.empty(BLOCK)
    re = np.empty(BLOCK)
    im = np.empty(BLOCK)
    e_tot = np.empty(BLOCK)
    cyc = np.empty(BLOCK)
    w_max = np.empty(BLOCK)
    w_sum = np.empty(BLOCK)
    for start in range(0, N, BLOCK):
        cnt = min(BLOCK, N - start)
        for u in range(cnt):
            re[u] = 0.0
            im[u] = 0.0
            e_tot[u] = 0.0
            cyc[u] = 0.0
            w_max[u] = -np.inf
            w_sum[u] = 0.0
        for g in range(G):
            # the phases; the nodes whose log ψ needs the series, in order
            ns = 0
            for u in range(cnt):
                h, l = dd_frac2(float(nodes[start + u]), tau_hi[g], tau_lo[g])
                hs[u] = h
                ls[u] = l
                b = TWO_PI * (h + l)
                if abs(b) <= bfast[g]:
                    continue
                if dzc[g] > 0.0:
                    em = -TWO_PI * s2[g] * (math.pi - abs(b))
                    em += 1e-9 * (abs(em) + 1.0)
                    if em < -50.0:
                        zub = 6.0 * math.exp(em) * (1.0 + 1e-9)
                        dzub = zub * dzc[g] * (1.0 + 1e-9)
                        gre = -0.5 * s2[g] * b * b
                        gim = fs[g] * b
                        if zub <= 1e-20 and dzub <= 1e10 and abs(gre) >= 1e-250 and abs(gim) >= 1e-250:
                            err = EPS64 * (8.0 * cr[g, 13] + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(cr[g, 12]))
                            if (1.1 * zub <= NEGLIGIBLE * abs(gre) and 1.1 * zub <= NEGLIGIBLE * abs(gim)
                                    and EPS64 * (64.0 * zub + 1.1 * dzub) <= NEGLIGIBLE * err):
                                continue
                bsl[ns] = b
                slow[ns] = u
                ns += 1
            if ns:
                psi_terms_rows(bsl[:ns], s2[g], cr[g], tab, 0, width)
                log_psi_rows(fs[g], s2[g], cc[g], cr[g], tab, 0, width, ns, p_re, p_im, p_err, 0)
            k = 0
            for u in range(cnt):
                nf = float(nodes[start + u])
                h = hs[u]
                l = ls[u]
                e_n = 2.0**-103 * (1.0 + 2.0 * nf * abs(tau_hi[g]))
                b = TWO_PI * (h + l)
                if k < ns and slow[k] == u:
                    lre = p_re[k]
                    lim_ = p_im[k]
                    le = p_err[k]
                    k += 1
                else:  # log_psi_at's series-free return, inline
                    gre = -0.5 * s2[g] * b * b
                    gim = fs[g] * b
                    l2 = cr[g, 12]
                    lre = gre - l2
                    lim_ = gim
                    le = 2.0 * (EPS64 * (8.0 * cr[g, 13] + 4.0 * abs(gre) + 3.0 * abs(gim) + abs(l2))) + 2.0 * TRUNC_REL
                r_ = re[u] + m[g] * lre
                i_ = im[u] + m[g] * lim_
                re[u] = r_
                im[u] = i_
                # the products and (recursive summation) each addition's rounding, ≤ u|partial sum|
                et = e_tot[u] + (m[g] * le + 4.0 * EPS64 * m[g] * (abs(lre) + abs(lim_)) + EPS64 * (abs(r_) + abs(i_)))
                if kk[g] != 0.0:
                    ph, r = dd_frac2(kk[g], h, l)
                    c0 = cyc[u]
                    s = c0 + ph
                    bb = s - c0
                    t = (c0 - (s - bb)) + (ph - bb)  # the addition's exact rounding error (TwoSum)
                    cyc[u] = s
                    et += TWO_PI * (abs(r) + 2.0**-104 * (1.0 + 2.0 * abs(kk[g] * h)) + abs(kk[g]) * e_n
                                    + abs(t)) * (1.0 + 8.0 * EPS64)
                e_tot[u] = et
                # the phase-error weight moment·δb/|ψ| = exp(log(moment·δb) − log|ψ|), its exponent
                # raised by its own rounding
                db = 4.0 * EPS64 * abs(b) + TWO_PI * (e_n + 2.0**-106)
                x = math.log(moment[g] * db) - lre
                x += 4.0 * EPS64 * (abs(x) + 50.0)
                wm = w_max[u]
                if x > wm:
                    w_sum[u] = w_sum[u] * math.exp(wm - x) + 1.0 if wm > -np.inf else 1.0
                    w_max[u] = x
                else:
                    w_sum[u] += math.exp(x - wm)
        for u in range(cnt):
            i = start + u
            c = cyc[u] - math.floor(cyc[u] + 0.5)
            imv = im[u] + TWO_PI * c
            out_re[i] = re[u]
            out_im[i] = imv
            out_err[i] = (e_tot[u] + 8.0 * EPS64 * (abs(imv) + 2.0)) * (1.0 + (G + 8.0) * EPS64)
            # the sum of G positive terms (each rounded, their exponents raised): relative (G + 4)u
            ws = w_sum[u]
            lw = w_max[u] + math.log(ws) if ws > 0.0 else -np.inf
            out_w[i] = lw + 4.0 * EPS64 * (abs(lw) + G + 8.0) if ws > 0.0 else -np.inf
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
