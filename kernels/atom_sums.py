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

__all__ = ["log_convolve", "rest_sums", "log_row_sums"]

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
