"""Kernels of the enumerated rest (:mod:`exactdp.engine.enumerated_rest`): ``D_R`` and
``C_R = 1 − D_R`` of a finite atom set at many thresholds, each in O(log n + window).

The atoms ``a`` (sorted by the midpoint of their value enclosure ``[v⁻_a, v⁺_a]``) carry
scaled probability bounds ``p⁻_a ≤ e^s·P(R = a) ≤ p⁺_a``.  With the tables of
:func:`~exactdp.kernels.convolution.suffix_sums` (prefix sums: the same of the reversed array;
Neumaier-compensated, so each entry is within
``η_n = 4u + 4(n+2)u²`` relative of the exact sum of its doubles, u = 2⁻⁵³) of ``p⁻``, ``p⁺``
and of ``q`` = ``p·e^{s_q−v}`` bounds:

* ``D_R(x) = Σ_a P(a)(1 − e^{x−v_a})₊``: atoms with midpoint ≥ x + τ are the *far* set,
  ``Σ p(1 − e^{x−v}) = S_p − e^{x−s_q}·S_q`` from two suffix entries (lower: p⁻ with
  v⁻; upper: p⁺ with v⁺, valid because every far atom has v⁺ ≥ mid ≥ x + τ > x); the
  subtraction loses at most a factor ``1/(1 − e^{−τ})`` of relative accuracy.  The atoms
  below (down to ``mid < x − hw``, beyond which ``v⁺ ≤ x``) are summed term by term with
  ``expm1``.
* ``C_R(x) = Σ_a P(a) min(1, e^{x−v_a})``: atoms with ``mid < x − hw`` (``v⁺ ≤ x``) count
  fully (a prefix entry), those with ``mid > x + hw`` (``v⁻ > x``) as ``e^{x−s_q}·S_q`` (a
  suffix entry), the few in between term by term.  No cancellation.

``hw`` bounds every ``v⁺ − mid`` and ``mid − v⁻``.  Every rounding is bounded outward with
u-multiples (exp, expm1: 1 ulp; counted as 2u); an entry whose arithmetic would leave the
float range (``|x − s_q| > 700``) is NaN and the caller sums that threshold another way.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add
from exactdp.kernels.units import UNIT_ROUNDOFF as RU

__all__ = ["log_convolve", "rest_sums", "log_row_sums", "pair_sums"]

#: an a of :func:`pair_sums` whose aggregate error would exceed this fraction of its term is summed exactly
EXACT_REL = 1e-11
#: exponent range beyond which a threshold is left to the caller
_MAX_EXP = 700.0


@kernel("int64(float64[:], float64)")
def _first_at_least(mid, t):
    """The first index i with ``mid[i] ≥ t`` (n if none); mid sorted ascending."""
    lo = 0
    hi = mid.shape[0]
    while lo < hi:
        m = (lo + hi) // 2
        if mid[m] < t:
            lo = m + 1
        else:
            hi = m
    return lo


_PT = "UniTuple(float64, 2)(float64, float64, float64, float64[:], float64[:], float64[:], float64[:], float64[:], " \
      "float64[:], float64[:], float64[:], float64[:], float64, float64)"


@kernel(_PT)
def _delta_at(xk, ex, e_arg, mid, vd, vu, pl, ph, suf_pl, suf_ph, suf_qa, suf_qb, hw, tau):
    """Scaled ``(lo, hi)`` of ``D_R`` at one x (``ex = e^{x−s_q}``, relative error ``e_arg``):
    ``suf_qa`` is the suffix table of ``q ≥ p⁻e^{s_q−v⁻}``, ``suf_qb`` of ``q ≤ p⁺e^{s_q−v⁺}``."""
    n = mid.shape[0]
    eta = 4.0 * RU + 4.0 * (n + 2.0) * RU * RU
    j = _first_at_least(mid, xk + tau)
    # far set: S_p − e^{x−s_q} S_q, outward
    a_lo = suf_pl[j] * (1.0 - eta - 8.0 * RU)
    b_lo = ex * (1.0 + e_arg) * suf_qa[j] * (1.0 + eta + 8.0 * RU)
    far_lo = max(a_lo - b_lo - 4.0 * RU * a_lo, 0.0)
    a_hi = suf_ph[j] * (1.0 + eta + 8.0 * RU)
    b_hi = ex * (1.0 - e_arg) * suf_qb[j] * (1.0 - eta - 8.0 * RU)
    far_hi = a_hi - b_hi + 4.0 * RU * a_hi
    # near set: term by term, down to mid < x − hw (below it v⁺ ≤ x: no term)
    n_lo = 0.0
    c_lo = 0.0
    n_hi = 0.0
    c_hi = 0.0
    i = j - 1
    while i >= 0 and mid[i] >= xk - hw:
        d_up = (xk - vd[i]) + 2.0 * RU * (abs(xk) + abs(vd[i]))
        if d_up < 0.0:
            n_lo, c_lo = neumaier_add(n_lo, c_lo, pl[i] * (-math.expm1(d_up)) * (1.0 - 8.0 * RU))
        d_dn = (xk - vu[i]) - 2.0 * RU * (abs(xk) + abs(vu[i]))
        if d_dn < 0.0:
            n_hi, c_hi = neumaier_add(n_hi, c_hi, ph[i] * (-math.expm1(d_dn)) * (1.0 + 8.0 * RU))
        i -= 1
    m = j - i + 2.0
    near_lo = (n_lo + c_lo) * (1.0 - 4.0 * RU - 4.0 * m * RU * RU)
    near_hi = (n_hi + c_hi) * (1.0 + 4.0 * RU + 4.0 * m * RU * RU)
    return (near_lo + far_lo) * (1.0 - 2.0 * RU), (near_hi + far_hi) * (1.0 + 2.0 * RU)


@kernel(_PT)
def _complement_at(xk, ex, e_arg, mid, vd, vu, pl, ph, pre_pl, pre_ph, suf_qc, suf_qd, hw, tau):
    """Scaled ``(lo, hi)`` of ``C_R`` at one x: ``suf_qc`` is the suffix table of
    ``q ≤ p⁻e^{s_q−v⁺}``, ``suf_qd`` of ``q ≥ p⁺e^{s_q−v⁻}`` (τ unused: no cancellation)."""
    n = mid.shape[0]
    eta = 4.0 * RU + 4.0 * (n + 2.0) * RU * RU
    k0 = _first_at_least(mid, xk - hw)
    k1 = _first_at_least(mid, xk + hw)
    while k1 < n and mid[k1] <= xk + hw:
        k1 += 1
    lo = pre_pl[k0] * (1.0 - eta - 8.0 * RU) + ex * (1.0 - e_arg) * suf_qc[k1] * (1.0 - eta - 8.0 * RU)
    hi = pre_ph[k0] * (1.0 + eta + 8.0 * RU) + ex * (1.0 + e_arg) * suf_qd[k1] * (1.0 + eta + 8.0 * RU)
    for i in range(k0, k1):
        d_dn = (xk - vu[i]) - 2.0 * RU * (abs(xk) + abs(vu[i]))
        d_up = (xk - vd[i]) + 2.0 * RU * (abs(xk) + abs(vd[i]))
        lo += pl[i] * math.exp(min(0.0, d_dn)) * (1.0 - 8.0 * RU)
        hi += ph[i] * min(1.0, math.exp(min(0.0, d_up)) * (1.0 + 4.0 * RU)) * (1.0 + 4.0 * RU)
    m = k1 - k0 + 4.0
    return lo * (1.0 - 2.0 * m * RU), hi * (1.0 + 2.0 * m * RU)


@kernel("Tuple((float64[:], float64[:]))(float64[:], boolean, float64[:], float64[:], float64[:], float64[:], "
        "float64[:], float64[:], float64[:], float64[:], float64[:], float64, float64, float64, float64)")
def rest_sums(x, complement, mid, vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi, hw, tau, sq, omitted):
    """Scaled ``(lo, hi)`` of ``D_R`` (``p_*``: suffix tables of p⁻, p⁺; ``q_*``: of the q bounds
    for D's lower and upper end) or of ``C_R`` (``complement``; ``p_*``: prefix tables) at each
    x (see the module docstring); ``omitted`` (scaled) is added to the upper end.  NaN where
    ``|x − s_q| > 700``."""
    lo_out = np.full(x.shape[0], np.nan)
    hi_out = np.full(x.shape[0], np.nan)
    for k in range(x.shape[0]):
        xk = x[k]
        arg = xk - sq
        if not (abs(arg) <= _MAX_EXP):
            continue
        # e^{x−s_q} and its relative error: the argument's rounding and exp's ulp
        ex = math.exp(arg)
        e_arg = 2.0 * RU * (abs(xk) + abs(sq)) + 4.0 * RU
        if complement:
            lo, hi = _complement_at(xk, ex, e_arg, mid, vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi, hw, tau)
        else:
            lo, hi = _delta_at(xk, ex, e_arg, mid, vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi, hw, tau)
        lo_out[k] = lo
        hi_out[k] = (hi + omitted) * (1.0 + 2.0 * RU)
    return lo_out, hi_out


@kernel("Tuple((float64[:], float64[:]))(float64[:, :])")
def log_row_sums(logs):
    """``log Σ_j e^{logs[i, j]}`` of each row (−inf for an empty row) and an absolute error
    bound of it, given exact ``logs``: max-shifted, Neumaier-compensated (``4u + 4(n+2)u²``
    relative), each shifted term within ``2u + u·|logs − max|`` relative (exp's ulp, the
    shift's rounding: their weighted mean is accumulated), the log's ulp; terms below
    ``e^{−745}`` of the largest are bounded by that.  It also covers term logs that carry
    errors up to ``4u(|logs| + 1)`` beyond ``4u(|sum| + 1)`` (which the caller adds)."""
    rows = logs.shape[0]
    n = logs.shape[1]
    out = np.empty(rows)
    err = np.empty(rows)
    for r in range(rows):
        mx = -np.inf
        for j in range(n):
            if logs[r, j] > mx:
                mx = logs[r, j]
        if mx == -np.inf:
            out[r] = -np.inf
            err[r] = 0.0
            continue
        acc = 0.0
        comp = 0.0
        wsum = 0.0
        dropped = 0.0
        for j in range(n):
            z = mx - logs[r, j]
            if z < 745.0:
                t = math.exp(-z)
                acc, comp = neumaier_add(acc, comp, t)
                wsum += z * t
            elif logs[r, j] > -np.inf:
                dropped += 1.0
        tot = acc + comp
        # the shift (u·z per term), and the caller's term errors 4u(|logs| + 1) beyond 4u(|sum| + 1):
        # |logs| ≤ |sum| + log n + z, so 4u(log n + z) more, weighted by the terms
        rel = 5.0 * RU * wsum / tot * (1.0 + 4.0 * RU) + 4.0 * RU * math.log(n + 1.0) + 8.0 * RU \
            + 4.0 * (n + 2.0) * RU * RU + dropped * 1e-323 / tot
        out[r] = math.log(tot) + mx
        err[r] = 2.0 * rel + 4.0 * RU * (abs(out[r]) + 1.0)
    return out, err


@kernel("Tuple((float64[:], float64[:]))(float64[:], float64[:], float64[:], float64[:], float64)")
def log_convolve(la, ea, lb, eb, floor):
    """Log-domain convolution of two pmfs on consecutive integers: ``out[k] = log Σ_i
    e^{la[i] + lb[k−i]}`` with an absolute error bound of each log.  The inputs carry
    absolute log errors ea, eb; the output's is their *weighted* mean over the terms (times
    ``1 + 2·max``: ``log Σ w e^{e_i}/Σ w ≤ mean_w(e)·e^{max e}``), so a tail entry's large
    error does not spread to the bulk; plus the compensated sum (``4u + 4(n+2)u²``), each
    term's shift (``u·(mx − v)``, weighted) and exponent (``u·|v|``) rounding, the log's ulp,
    and the terms below ``e^{−745}`` of the largest (dropped).  Entries below ``floor`` (log)
    are set to −inf (the caller bounds their mass)."""
    na = la.shape[0]
    nb = lb.shape[0]
    n = na + nb - 1
    out = np.full(n, -np.inf)
    err = np.zeros(n)
    for k in range(n):
        i0 = max(0, k - nb + 1)
        i1 = min(na - 1, k)
        mx = -np.inf
        for i in range(i0, i1 + 1):
            v = la[i] + lb[k - i]
            if v > mx:
                mx = v
        if mx == -np.inf or mx < floor:
            continue
        acc = 0.0
        comp = 0.0
        w_err = 0.0
        w_z = 0.0
        e_max = 0.0
        dropped = 0.0
        for i in range(i0, i1 + 1):
            v = la[i] + lb[k - i]
            z = mx - v
            if z < 745.0:
                t = math.exp(-z)
                acc, comp = neumaier_add(acc, comp, t)
                ev = ea[i] + eb[k - i]
                w_err += t * ev
                w_z += t * z
                if ev > e_max:
                    e_max = ev
            elif v > -np.inf:
                dropped += 1.0
        tot = acc + comp
        terms = i1 - i0 + 1.0
        out[k] = mx + math.log(tot)
        mean_err = w_err / tot * (1.0 + 4.0 * RU * terms) * (1.0 + 2.0 * e_max)
        err[k] = (mean_err + 2.0 * (2.0 * RU * w_z / tot * (1.0 + 4.0 * RU * terms) + 8.0 * RU
                                    + 4.0 * (terms + 2.0) * RU * RU + dropped * 1e-323 / tot)
                  + 4.0 * RU * (abs(mx) + math.log(terms) + 2.0))
    return out, err


_PAIR = "Tuple((float64[:], float64[:]))(float64[:], float64[:], boolean, float64[:], float64[:], float64[:], " \
        "float64[:], float64[:], float64[:], float64[:], float64[:], float64[:], float64[:], float64[:], float64[:], " \
        "float64[:], float64[:], float64, float64, float64, float64, float64)"


@kernel(_PAIR)
def pair_sums(th_dn, th_up, complement, a_vd, a_vu, a_pl, a_ph, a_ex, mid, vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi,
              hw, tau, sq, vmin, vabs):
    """Scaled ``(lo, hi)`` of ``Σ_a P(A = a)·D_B(θ − a)`` (or of ``Σ_a P(A = a)·C_B(θ − a)``,
    ``complement``) for every θ in ``[th_dn, th_up]``: the atoms a of a second enumeration
    (value enclosures ``[a_vd, a_vu]``, scaled probability bounds ``a_pl ≤ a_ph``, sorted by
    value; ``a_ex = e^{−a_vd}`` within ``2u(|a_vd| + 2)`` relative, or 0 where it would leave
    the float range) against B's tables (the arguments of :func:`rest_sums`: suffix tables of p and of
    ``q = p·e^{s_q−v}`` for D, prefix tables of p for C; ``vmin ≤ v ≤ vmin + …``, ``|v| ≤ vabs``).
    A is sorted, so the far-set index moves with a: O(|A| + |B|) a threshold.

    D: for each a, at the float ``x = θ⁺ − a⁻`` (the exact ``θ − a`` within ``dx`` below it),
    ``T_a = Σ_{v ≥ x} p_b(1 − e^{x−v_b}) = S_p − e^{x−s_q}S_q`` (suffix entries at the first
    midpoint ≥ x) in plain floats, *without* a term-by-term window: the cancellation is not
    bounded per a but in aggregate.  Every error of ``T_a`` — the tables' compensated sums
    (η), the q entries' and exp's rounding (``2u(|x| + |s_q| + vabs + 4)``), the values'
    enclosures and dx (``|∂T/∂x| ≤ S_p``, and atoms within ``dx + 2hw`` of x, whose term is
    at most ``(dx + 2hw)p_b``) — is at most ``err_a = c_a·S_p⁺(j')``, j' the first midpoint ≥
    ``x − dx − 2hw``; and ``T_a ≥ 0``.  So ``Σ_a P(a)T_a ∈ [Σ p_a⁻ max(F_a⁻ − err_a, 0),
    Σ p_a⁺ (F_a⁺ + err_a)]``: the bracket's width is about ``c·P(W ≥ θ)``, i.e. ``c·(λ + 1)``
    relative — 1e-13 where the enclosures are 1e-14 wide.

    C: ``C_B(x) = Σ_{v<x} p + e^{x−s_q}Σ_{v>x} q`` plus the few atoms whose enclosure holds
    x term by term (no cancellation), lower end at the smallest x of the enclosure, upper at
    the largest.  Positive terms are summed compensated (``4u + 4(n+2)u²``)."""
    nt = th_dn.shape[0]
    na = a_vd.shape[0]
    n = mid.shape[0]
    eta = 4.0 * RU + 4.0 * (n + 2.0) * RU * RU
    eta_a = 4.0 * RU + 4.0 * (na + 2.0) * RU * RU
    lo_out = np.zeros(nt)
    hi_out = np.zeros(nt)
    for k in range(nt):
        s_lo = 0.0
        c_lo = 0.0
        s_hi = 0.0
        c_hi = 0.0
        j1 = n
        j2 = n
        # e^{x − s_q} = e^{θ⁺ − s_q}·e^{−a⁻}·e^{r}: the product's rounding (3 operations) and
        # the factors' (2u(|θ⁺ − s_q| + 2), 2u(|a⁻| + 2)) are inside err's 16u(…) term
        arg_th = th_up[k] - sq
        e_th = math.exp(arg_th) if abs(arg_th) < _MAX_EXP else 0.0
        e_tab = 2.0 * RU * (abs(th_up[k]) + abs(sq) + 4.0)
        for a in range(na):
            if a_ph[a] == 0.0:
                continue
            x_big = th_up[k] - a_vd[a]
            r = 2.0 * RU * (abs(th_up[k]) + abs(a_vd[a]))
            x_big = x_big + r
            dx = (th_up[k] - th_dn[k]) + (a_vu[a] - a_vd[a]) + 2.0 * r
            dx = dx * (1.0 + 4.0 * RU)
            x_small = x_big - dx
            if complement:
                t_lo = 0.0
                t_hi = 0.0
                for end in range(2):
                    x_e = x_small if end == 0 else x_big
                    arg = x_e - sq
                    e_arg = 2.0 * RU * (abs(x_e) + abs(sq)) + 4.0 * RU
                    if arg > _MAX_EXP:  # every B value is below x − 10
                        t = p_lo[n] * (1.0 - eta - 8.0 * RU) if end == 0 else p_hi[n] * (1.0 + eta + 8.0 * RU)
                    elif arg < -_MAX_EXP:  # every B value is above x + 10: C ≤ e^{x − vmin}·mass
                        d = (x_e - vmin) + 2.0 * RU * (abs(x_e) + abs(vmin))
                        t = 0.0 if end == 0 else p_hi[n] * math.exp(d) * (1.0 + eta + 16.0 * RU)
                    else:
                        ex = math.exp(arg)
                        jj = j1 if end == 0 else j2
                        while jj > 0 and mid[jj - 1] >= x_e - hw:
                            jj -= 1
                        while jj < n and mid[jj] < x_e - hw:
                            jj += 1
                        kk = jj
                        while kk < n and mid[kk] <= x_e + hw:
                            kk += 1
                        if end == 0:
                            j1 = jj
                            t = (p_lo[jj] + ex * (1.0 - e_arg) * q_lo[kk]) * (1.0 - eta - 8.0 * RU)
                            for i in range(jj, kk):
                                d_dn = (x_e - vu[i]) - 2.0 * RU * (abs(x_e) + abs(vu[i]))
                                t += pl[i] * math.exp(min(0.0, d_dn)) * (1.0 - 8.0 * RU)
                            t = t * (1.0 - 2.0 * (kk - jj + 4.0) * RU)
                        else:
                            j2 = jj
                            t = (p_hi[jj] + ex * (1.0 + e_arg) * q_hi[kk]) * (1.0 + eta + 8.0 * RU)
                            for i in range(jj, kk):
                                d_up = (x_e - vd[i]) + 2.0 * RU * (abs(x_e) + abs(vd[i]))
                                t += ph[i] * min(1.0, math.exp(min(0.0, d_up)) * (1.0 + 4.0 * RU)) * (1.0 + 4.0 * RU)
                            t = t * (1.0 + 2.0 * (kk - jj + 4.0) * RU)
                    if end == 0:
                        t_lo = t
                    else:
                        t_hi = t
            else:
                x = x_big
                arg = x - sq
                if arg > _MAX_EXP:  # every B value is below x − 10: T = 0
                    t_lo = 0.0
                    t_hi = 0.0
                elif arg < -_MAX_EXP:  # every B value is above x + 10
                    d = (x - vmin) + 2.0 * RU * (abs(x) + abs(vmin))
                    t_lo = p_lo[0] * (-math.expm1(d)) * (1.0 - eta - 16.0 * RU)
                    t_hi = p_hi[0] * (1.0 + eta + 8.0 * RU)
                else:
                    while j1 > 0 and mid[j1 - 1] >= x:
                        j1 -= 1
                    while j1 < n and mid[j1] < x:
                        j1 += 1
                    band = dx + 2.0 * hw
                    xb = x - band
                    while j2 > 0 and mid[j2 - 1] >= xb:
                        j2 -= 1
                    while j2 < n and mid[j2] < xb:
                        j2 += 1
                    ea = a_ex[a]
                    ex = e_th * ea if ea > 0.0 and e_th > 0.0 else math.exp(arg)
                    f_lo = p_lo[j1] - ex * q_lo[j1]
                    f_hi = p_hi[j1] - ex * q_hi[j1]
                    c = (1.05 * band + 4.0 * eta + 16.0 * RU * (abs(x) + abs(sq) + abs(th_up[k]) + abs(a_vd[a]) + vabs
                                                                + 8.0)) * (1.0 + band)
                    err = c * p_hi[j2] * (1.0 + eta + 8.0 * RU)
                    if err <= EXACT_REL * f_lo:
                        t_lo = max(f_lo - err, 0.0)
                        t_hi = f_hi + err
                    else:  # B's far mass crowds x (an atom at θ − a, or a sparse edge): this a exactly
                        arg1 = x_small - sq
                        t_lo = _delta_at(x, ex, e_tab + 2.0 * RU * (abs(a_vd[a]) + abs(x) + 4.0), mid, vd, vu, pl, ph,
                                         p_lo, p_hi, q_lo, q_hi, hw, tau)[0]
                        t_hi = _delta_at(x_small, math.exp(arg1), 2.0 * RU * (abs(x_small) + abs(sq)) + 4.0 * RU, mid,
                                         vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi, hw, tau)[1]
            if t_lo > 0.0:
                s_lo, c_lo = neumaier_add(s_lo, c_lo, a_pl[a] * t_lo * (1.0 - 2.0 * RU))
            if t_hi > 0.0:
                s_hi, c_hi = neumaier_add(s_hi, c_hi, a_ph[a] * t_hi * (1.0 + 2.0 * RU))
        lo_out[k] = max((s_lo + c_lo) * (1.0 - eta_a - 2.0 * RU), 0.0)
        hi_out[k] = (s_hi + c_hi) * (1.0 + eta_a + 2.0 * RU)
    return lo_out, hi_out
