"""Kernels that build a level of the two-half enumeration (:mod:`exactdp.engine.halves`) in
single passes: the untilted logs of a tilted half's atoms, a gather of a half's four atom
arrays by a sort order, and A's per-atom and per-block arrays.

Each kernel does the float operations of the NumPy expressions it replaces (the same
operations in the same order, ``fastmath`` off), so its outputs are those of the
expressions; what it saves is the temporaries and the passes over arrays of millions of
atoms.  The rounding bounds stay those stated where the expressions were
(:func:`exactdp.engine.tilted_atoms.tilted_atoms`, :class:`exactdp.engine.halves._Level`).
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.units import EPS64

__all__ = ["untilted_logs", "gather_atoms", "a_blocks"]


@kernel("Tuple((float64[:], float64[:], float64[:]))(float64[:], float64[:], float64[:], float64[:], float64, "
        "float64, float64, float64)")
def untilted_logs(v_dn, v_up, lp, le, c_sum, lam, tilt_err, c_abs):
    """``(mid, log_p, log_err)`` of a tilted half's atoms: ``mid = ½(v⁻ + v⁺)``,
    ``log_p = lp + Σc − λ·mid`` and ``log_err = le + |λ|·½(v⁺ − v⁻) + tilt_err +
    8u(|lp| + |Σc| + |λ|·|mid| + Σ|c| + 4)`` (``c_abs = Σ|c_g|``), each as the NumPy
    expressions of :func:`exactdp.engine.tilted_atoms.tilted_atoms` evaluate it."""
    n = lp.shape[0]
    mid = np.empty(n)
    log_p = np.empty(n)
    log_err = np.empty(n)
    alam = abs(lam)
    for i in range(n):
        m = 0.5 * (v_dn[i] + v_up[i])
        mid[i] = m
        log_p[i] = (lp[i] + c_sum) - lam * m
        log_err[i] = ((le[i] + alam * 0.5 * (v_up[i] - v_dn[i])) + tilt_err) \
            + 8 * EPS64 * ((((abs(lp[i]) + abs(c_sum)) + alam * abs(m)) + c_abs) + 4)
    return mid, log_p, log_err


@kernel("Tuple((float64[:], float64[:], float64[:], float64[:]))(int64[:], float64[:], float64[:], float64[:], "
        "float64[:])")
def gather_atoms(order, v_dn, v_up, log_p, log_err):
    """The four arrays of a half's atoms gathered by ``order`` (``x[order]`` each): first
    interleaved into records (one sequential pass), so each random read of the gather is one
    record of 32 bytes instead of four scattered floats."""
    n = order.shape[0]
    rec = np.empty((n, 4))
    for i in range(n):
        rec[i, 0] = v_dn[i]
        rec[i, 1] = v_up[i]
        rec[i, 2] = log_p[i]
        rec[i, 3] = log_err[i]
    o_dn = np.empty(n)
    o_up = np.empty(n)
    o_lp = np.empty(n)
    o_le = np.empty(n)
    for r in range(n):
        i = order[r]
        o_dn[r] = rec[i, 0]
        o_up[r] = rec[i, 1]
        o_lp[r] = rec[i, 2]
        o_le[r] = rec[i, 3]
    return o_dn, o_up, o_lp, o_le


@kernel("Tuple((uint8[:], float64[:], float64[:], float64[:], float64[:], float64[:], float64[:], float64[:]))("
        "float64[:], float64[:], float64[:], float64[:], float64, float64, int64, int64)")
def a_blocks(v_dn, v_up, log_p, log_err, s_a, shell_nats, per_tile, ns_cap):
    """A's arrays of :class:`exactdp.engine.halves._Level` (atoms sorted by value, scale
    ``s_a``): ``(shell, p⁻, p⁺, e^{−v⁻}, tile_vd, tile_vu, blk_p⁻, blk_p⁺)``.

    ``shell = min((−s_a − lp⁺)/shell_nats, ns_cap)`` truncated to an integer (``lp^± = log_p ±
    log_err``); ``p^± = e^{lp^± + s_a}(1 ∓ 2u(|lp^± + s_a| + 2))`` (exp's ulp and the
    argument's rounding); ``e^{−v⁻}`` where ``|v⁻| < 700``, else 0; each tile's (``per_tile``
    consecutive atoms) least ``v⁻`` and greatest ``v⁺``; each block's (tile × shell, ``ns``
    shells a tile, ``ns`` the deepest shell + 1) float sums of ``p⁻``, ``p⁺`` in atom order,
    rounded by ``(1 ∓ 2(per_tile + 1)u)``."""
    n = log_p.shape[0]
    shell = np.empty(n, dtype=np.uint8)
    pl = np.empty(n)
    ph = np.empty(n)
    ex = np.empty(n)
    top = 0
    for i in range(n):
        lo = log_p[i] - log_err[i]
        hi = log_p[i] + log_err[i]
        f = min((-s_a - hi) / shell_nats, float(ns_cap))
        sh = int(f)
        shell[i] = sh
        if sh > top:
            top = sh
        a_lo = lo + s_a
        a_hi = hi + s_a
        pl[i] = math.exp(a_lo) * (1 - 2 * EPS64 * (abs(a_lo) + 2))
        ph[i] = math.exp(a_hi) * (1 + 2 * EPS64 * (abs(a_hi) + 2))
        ex[i] = math.exp(-v_dn[i]) if abs(v_dn[i]) < 700.0 else 0.0
    ns = top + 1
    ntile = (n + per_tile - 1) // per_tile
    tile_vd = np.empty(ntile)
    tile_vu = np.empty(ntile)
    blk_pl = np.zeros(ntile * ns)
    blk_ph = np.zeros(ntile * ns)
    for t in range(ntile):
        a0 = t * per_tile
        a1 = min(a0 + per_tile, n)
        vd = v_dn[a0]
        vu = v_up[a0]
        for i in range(a0, a1):
            vd = min(vd, v_dn[i])
            vu = max(vu, v_up[i])
            b = t * ns + shell[i]
            blk_pl[b] += pl[i]
            blk_ph[b] += ph[i]
        tile_vd[t] = vd
        tile_vu[t] = vu
    down = 1 - 2 * (per_tile + 1) * EPS64
    up = 1 + 2 * (per_tile + 1) * EPS64
    for b in range(ntile * ns):
        blk_pl[b] *= down
        blk_ph[b] *= up
    return shell, pl, ph, ex, tile_vd, tile_vu, blk_pl, blk_ph
