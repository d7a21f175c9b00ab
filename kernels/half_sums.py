"""Kernels of the two-half enumeration (:mod:`exactdp.engine.halves`): B's tables in one pass,
and ``Σ_a P(A = a)·D_B(θ − a)`` (or ``C_B``) at a batch of thresholds in one call, A's atoms
taken block by block, largest bound first, the blocks whose bounds are negligible left out.

**Tables** (:func:`half_tables`): B's scaled probability bounds ``p⁻ ≤ e^s P(B = b) ≤ p⁺`` and
the Neumaier-compensated suffix tables (prefix tables for ``C``) of ``p⁻``, ``p⁺`` and of the
``q = p·e^{s_q − v}`` bounds that :func:`_block_terms` reads, each
exponential rounded outward (``exp``'s ulp and its argument's roundings, counted as
``2·EPS64·(|arguments| + 2)`` relative).

**Blocks** (:func:`block_sums`): A's atoms (sorted by value) come in tiles of consecutive
ones, and each atom in a shell of probability; a block is one shell of one tile, with the
tile's value range ``[vd_t, vu_t]`` and the rounded-up sum ``P_b`` of its scaled upper
probabilities.  ``D_B`` decreases and ``C_B`` increases in its argument, so a block adds at
most ``P_b·D_B⁺(θ⁻ − vu_t)`` (resp. ``P_b·C_B⁺(θ⁺ − vd_t)``), with

    D_B(x) ≤ Σ_{v ≥ x} p⁺ ≤ S_p⁺(first midpoint ≥ x − hw),
    C_B(x) ≤ Σ_{mid ≤ x + hw} p⁺ + e^{x − s_q}·Σ_{mid > x + hw} p⁺e^{s_q − v⁻}

(an atom past ``x + hw`` has ``v⁻ > x``), both capped by B's total.  For each threshold the
blocks are bucketed by the binary exponent of their bound (largest first), and the buckets
are summed down to the first whose bounds, with those of every later bucket, are at most
``skip_rel`` times an estimate of the sum (then, should the lower end come out smaller,
further buckets until they are at most ``skip_rel`` times the lower end).  In a tile, every
shell up to the deepest one asked for is summed, its atoms in value order, each term exactly
as :func:`_block_terms` says (its error bounds per term; B's indices from the cells of
:func:`exactdp.kernels.enumeration.bucket_sort`).  The
bounds of the shells left out are added to the upper end: a certified bracket whose left-out
part is at most ``skip_rel`` of its lower end.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.atom_sums import _delta_at
from exactdp.kernels.enumeration import cell_of
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add
from exactdp.kernels.units import EPS64
from exactdp.kernels.units import UNIT_ROUNDOFF as RU

__all__ = ["half_tables", "block_sums", "EXACT_REL"]

#: an a whose aggregate error would exceed this fraction of its term is summed exactly
EXACT_REL = 1e-11
#: exponent range beyond which an exponential is not taken
_MAX_EXP = 700.0
#: buckets of bound exponents (bounds more than 2^-(_BUCKETS - 2) below the largest share the last)
_BUCKETS = 160


@kernel("Tuple((float64[:], float64[:], float64[:], float64[:], float64[:], float64[:]))(float64[:], float64[:], "
        "float64[:], float64[:], float64, float64, boolean)")
def half_tables(vd, vu, lp, le, s, sq, complement):
    """``(p⁻, p⁺, P⁻, P⁺, Q_lo, Q_hi)`` of B's atoms (value enclosures ``[vd, vu]`` sorted by
    midpoint, log probabilities ``lp`` within ``le``; scale ``s``, q-scale ``sq``): for ``D``
    (``complement`` false) the suffix tables ``P^± = Σ_{i ≥ k} p^±`` and those of
    ``q_lo ≥ p⁻e^{s_q − v⁻}``, ``q_hi ≤ p⁺e^{s_q − v⁺}``; for ``C`` the prefix tables
    ``P^± = Σ_{i < k} p^±`` and suffix tables of ``q_lo ≤ p⁻e^{s_q − v⁺}``,
    ``q_hi ≥ p⁺e^{s_q − v⁻}``.  Tables have n + 1 entries (the last, resp. first, is 0)."""
    n = lp.shape[0]
    pl = np.empty(n)
    ph = np.empty(n)
    for i in range(n):
        rel = 2.0 * EPS64 * (abs(lp[i]) + le[i] + abs(s) + 2.0)
        pl[i] = math.exp((lp[i] - le[i]) + s) * (1.0 - rel)
        ph[i] = math.exp((lp[i] + le[i]) + s) * (1.0 + rel)
    t_lo = np.zeros(n + 1)
    t_hi = np.zeros(n + 1)
    q_lo = np.zeros(n + 1)
    q_hi = np.zeros(n + 1)
    if complement:  # prefix sums of p, from the bottom
        a0 = 0.0
        c0 = 0.0
        a1 = 0.0
        c1 = 0.0
        for i in range(n):
            a0, c0 = neumaier_add(a0, c0, pl[i])
            a1, c1 = neumaier_add(a1, c1, ph[i])
            t_lo[i + 1] = a0 + c0
            t_hi[i + 1] = a1 + c1
    a0 = 0.0
    c0 = 0.0
    a1 = 0.0
    c1 = 0.0
    a2 = 0.0
    c2 = 0.0
    a3 = 0.0
    c3 = 0.0
    for i in range(n - 1, -1, -1):
        d_dn = sq - vd[i]  # one rounded difference each
        d_up = sq - vu[i]
        if complement:  # q_lo = p⁻e^{s_q − v⁺} down, q_hi = p⁺e^{s_q − v⁻} up
            e_lo = math.exp(d_up) * (1.0 - 2.0 * EPS64 * (abs(d_up) + 2.0))
            e_hi = math.exp(d_dn) * (1.0 + 2.0 * EPS64 * (abs(d_dn) + 2.0))
            a2, c2 = neumaier_add(a2, c2, pl[i] * e_lo * (1.0 - 2.0 * EPS64))
            a3, c3 = neumaier_add(a3, c3, ph[i] * e_hi * (1.0 + 2.0 * EPS64))
        else:  # q_lo = p⁻e^{s_q − v⁻} up (D's lower end), q_hi = p⁺e^{s_q − v⁺} down
            e_lo = math.exp(d_dn) * (1.0 + 2.0 * EPS64 * (abs(d_dn) + 2.0))
            e_hi = math.exp(d_up) * (1.0 - 2.0 * EPS64 * (abs(d_up) + 2.0))
            a0, c0 = neumaier_add(a0, c0, pl[i])
            a1, c1 = neumaier_add(a1, c1, ph[i])
            t_lo[i] = a0 + c0
            t_hi[i] = a1 + c1
            a2, c2 = neumaier_add(a2, c2, pl[i] * e_lo * (1.0 + 2.0 * EPS64))
            a3, c3 = neumaier_add(a3, c3, ph[i] * e_hi * (1.0 - 2.0 * EPS64))
        q_lo[i] = a2 + c2
        q_hi[i] = a3 + c3
    return pl, ph, t_lo, t_hi, q_lo, q_hi


@kernel("int64(float64[:], int64[:], float64, float64, float64)")
def _rank(mid, cstart, g0, inv, x):
    """The first index i with ``mid[i] ≥ x`` (n if none): only x's cell of the bucket table
    ``cstart`` (:func:`exactdp.kernels.enumeration.bucket_sort`) is scanned."""
    c = cell_of(x, g0, inv, cstart.shape[0] - 1)
    j = cstart[c]
    e = cstart[c + 1]
    while j < e and mid[j] < x:
        j += 1
    return j


@kernel("int64(float64[:], int64, float64)")
def _walk(mid, j, x):
    """The first index i with ``mid[i] ≥ x`` (n if none), walked from ``j`` either way: the
    index :func:`_rank` finds, in few steps where x is near the last x ranked (A's atoms are
    summed in value order, so θ − a moves little from one to the next)."""
    n = mid.shape[0]
    while j < n and mid[j] < x:
        j += 1
    while j > 0 and mid[j - 1] >= x:
        j -= 1
    return j


_TERMS = "Tuple((float64, float64, float64, float64))(int64[:], int64, boolean, float64, float64, float64, float64, " \
    + "float64[:], " * 6 + "int64[:], " + "float64[:], " * 8 + "float64, " * 11 + "float64)"


@kernel(_TERMS)
def _block_terms(idx, m, complement, th_dn, th_up, e_th, e_tab, a_vd, a_vu, a_pl, a_ph, a_ex, mid, cstart, vd, vu, pl,
                 ph, p_lo, p_hi, q_lo, q_hi, g0, inv, hw, tau, sq, vmin, vabs, eta, s_lo, c_lo, s_hi, c_hi):
    """Add the terms of A's atoms ``idx[0 .. m]`` at one threshold ``[th_dn, th_up]`` to the
    compensated sums ``(s_lo, c_lo)``, ``(s_hi, c_hi)`` (B's first index by :func:`_rank`, the
    next ones walked from the last, :func:`_walk`: the same indices).

    D: for each a, at the float ``x = θ⁺ − a⁻`` (the exact ``θ − a`` within ``dx`` below it),
    ``T_a = Σ_{v ≥ x} p_b(1 − e^{x−v_b}) = S_p − e^{x−s_q}S_q`` (suffix entries at the first
    midpoint ≥ x) in plain floats, *without* a term-by-term window: the cancellation is not
    bounded per a but in aggregate.  Every error of ``T_a`` — the tables' compensated sums
    (η), the q entries' and exp's rounding (``2u(|x| + |s_q| + vabs + 4)``), the values'
    enclosures and dx (``|∂T/∂x| ≤ S_p``, and atoms within ``dx + 2hw`` of x, whose term is
    at most ``(dx + 2hw)p_b``) — is at most ``err_a = c_a·S_p⁺(j')``, j' the first midpoint ≥
    ``x − dx − 2hw``; and ``T_a ≥ 0``.  So ``Σ_a P(a)T_a ∈ [Σ p_a⁻ max(F_a⁻ − err_a, 0),
    Σ p_a⁺ (F_a⁺ + err_a)]``: the bracket's width is about ``c·P(W ≥ θ)``; an a whose
    aggregate error would exceed :data:`EXACT_REL` of its term is summed term by term.

    C: ``C_B(x) = Σ_{v<x} p + e^{x−s_q}Σ_{v>x} q`` plus the few atoms whose enclosure holds
    x term by term (no cancellation), lower end at the smallest x of the enclosure, upper at
    the largest.  Positive terms are summed compensated (``4u + 4(n+2)u²``)."""
    n = mid.shape[0]
    tab = 1.0 + eta + 8.0 * RU
    jp = -1  # B's index of the last rank (−1: none yet)
    for r in range(m):
        a = idx[r]
        if a_ph[a] == 0.0:
            continue
        x_big = th_up - a_vd[a]
        rr = 2.0 * RU * (abs(th_up) + abs(a_vd[a]))
        x_big = x_big + rr
        dx = (th_up - th_dn) + (a_vu[a] - a_vd[a]) + 2.0 * rr
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
                    t = p_lo[n] * (1.0 - eta - 8.0 * RU) if end == 0 else p_hi[n] * tab
                elif arg < -_MAX_EXP:  # every B value is above x + 10: C ≤ e^{x − vmin}·mass
                    d = (x_e - vmin) + 2.0 * RU * (abs(x_e) + abs(vmin))
                    t = 0.0 if end == 0 else p_hi[n] * math.exp(d) * (1.0 + eta + 16.0 * RU)
                else:
                    ex = math.exp(arg)
                    jj = _rank(mid, cstart, g0, inv, x_e - hw) if jp < 0 else _walk(mid, jp, x_e - hw)
                    jp = jj
                    kk = jj
                    while kk < n and mid[kk] <= x_e + hw:
                        kk += 1
                    if end == 0:
                        t = (p_lo[jj] + ex * (1.0 - e_arg) * q_lo[kk]) * (1.0 - eta - 8.0 * RU)
                        for i in range(jj, kk):
                            d_dn = (x_e - vu[i]) - 2.0 * RU * (abs(x_e) + abs(vu[i]))
                            t += pl[i] * math.exp(min(0.0, d_dn)) * (1.0 - 8.0 * RU)
                        t = t * (1.0 - 2.0 * (kk - jj + 4.0) * RU)
                    else:
                        t = (p_hi[jj] + ex * (1.0 + e_arg) * q_hi[kk]) * tab
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
                t_hi = p_hi[0] * tab
            else:
                j1 = _rank(mid, cstart, g0, inv, x) if jp < 0 else _walk(mid, jp, x)
                jp = j1
                band = dx + 2.0 * hw
                xb = x - band
                j2 = j1  # xb ≤ x: the first midpoint ≥ xb is at or below j1
                while j2 > 0 and mid[j2 - 1] >= xb:
                    j2 -= 1
                ea = a_ex[a]
                ex = e_th * ea if ea > 0.0 and e_th > 0.0 else math.exp(arg)
                f_lo = p_lo[j1] - ex * q_lo[j1]
                f_hi = p_hi[j1] - ex * q_hi[j1]
                c = (1.05 * band + 4.0 * eta + 16.0 * RU * (abs(x) + abs(sq) + abs(th_up) + abs(a_vd[a]) + vabs
                                                            + 8.0)) * (1.0 + band)
                err = c * p_hi[j2] * tab
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
    return s_lo, c_lo, s_hi, c_hi


_BLOCKS = "Tuple((float64[:], float64[:]))(float64[:], float64[:], boolean, int64, int64, uint8[:], " \
    + "float64[:], " * 10 + "int64[:], " + "float64[:], " * 8 + "float64, " * 7 + "float64)"


@kernel(_BLOCKS)
def block_sums(th_dn, th_up, complement, per_tile, ns, shell, tile_vd, tile_vu, blk_pl, blk_ph, a_vd, a_vu, a_pl, a_ph,
               a_ex, mid, cstart, vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi, g0, inv, hw, tau, sq, vmin, vabs, skip_rel):
    """Scaled ``(lo, hi)`` of ``Σ_a P(A = a)·D_B(θ − a)`` (``C_B``: ``complement``) for every θ
    in ``[th_dn, th_up]``.

    A's atoms (value enclosures ``[a_vd, a_vu]``, scaled probability bounds ``a_pl ≤ a_ph``,
    sorted by value; ``a_ex = e^{−a_vd}`` within ``2u(|a_vd| + 2)`` relative, or 0 where it
    would leave the float range) in tiles of ``per_tile`` consecutive ones (``tile_vd ≤ v⁻``,
    ``v⁺ ≤ tile_vu``), atom a in
    probability shell ``shell[a] < ns ≤ 256``; block ``t·ns + s`` is tile t's shell s, with rounded
    sums ``blk_pl ≤ Σ p⁻``, ``blk_ph ≥ Σ p⁺``.  B's atoms sorted by midpoint ``mid`` with the
    cell starts ``cstart`` of :func:`exactdp.kernels.enumeration.bucket_sort` (``g0``, ``inv``)
    and B's tables (for D: suffix tables of p and q; for C: prefix tables of p, suffix of q).
    Blocks are left out as the module docstring says (``skip_rel`` in
    ``[0, 1)``); in a tile, the shells summed are those up to the deepest one asked for."""
    nth = th_dn.shape[0]
    nb = blk_ph.shape[0]
    ntile = tile_vd.shape[0]
    na = a_vd.shape[0]
    n = mid.shape[0]
    eta = 4.0 * RU + 4.0 * (n + 2.0) * RU * RU
    eta_a = 4.0 * RU + 4.0 * (na + 2.0) * RU * RU
    tab = 1.0 + eta + 8.0 * RU
    total = (p_hi[n] if complement else p_hi[0]) * tab  # ≥ D_B and C_B everywhere (scaled)
    sum_up = 1.0 + 2.0 * (nb + 2.0) * RU  # a float sum of ≤ nb + 1 positive terms, rounded up
    lo_out = np.zeros(nth)
    hi_out = np.zeros(nth)
    bound = np.empty(nb)
    bucket = np.empty(nb, dtype=np.int64)
    done = np.empty(ntile, dtype=np.int64)
    idx = np.empty(per_tile, dtype=np.int64)
    for k in range(nth):
        # ---- each block's bound (its tile's table entry times its mass), and an estimate of
        # the sum from below (which only steers how many blocks are summed)
        top_e = -100000
        guess = 0.0
        for tl in range(ntile):
            if complement:
                x = (th_up[k] - tile_vd[tl]) + 2.0 * RU * (abs(th_up[k]) + abs(tile_vd[tl]))  # ≥ θ − a
                arg = x - sq
                if arg > _MAX_EXP or arg < -_MAX_EXP:
                    t = total
                else:
                    xh = (x + hw) + 2.0 * RU * (abs(x) + hw)
                    k1 = _rank(mid, cstart, g0, inv, xh)
                    while k1 < n and mid[k1] <= xh:
                        k1 += 1
                    e_arg = 2.0 * RU * (abs(x) + abs(sq)) + 4.0 * RU
                    t = min((p_hi[k1] + math.exp(arg) * (1.0 + e_arg) * q_hi[k1]) * tab, total)
                # C_B at the tile's smallest θ − a, from below: the atoms whose midpoints lie below it
                g = p_lo[_rank(mid, cstart, g0, inv, th_dn[k] - tile_vu[tl] - hw)] * 0.5
            else:
                x = (th_dn[k] - tile_vu[tl]) - 2.0 * RU * (abs(th_dn[k]) + abs(tile_vu[tl]))  # ≤ θ − a
                xq = (x - hw) - 2.0 * RU * (abs(x) + hw)
                t = p_hi[_rank(mid, cstart, g0, inv, xq)] * tab
                # D_B at the tile's largest θ − a, from below (roughly: p − e^{x−s_q}q at its index)
                xl = th_up[k] - tile_vd[tl]
                argl = xl - sq
                g = 0.0
                if -_MAX_EXP < argl < _MAX_EXP:
                    j = _rank(mid, cstart, g0, inv, xl)
                    g = max(p_lo[j] - math.exp(argl) * q_lo[j], 0.0) * 0.5
            for b in range(tl * ns, tl * ns + ns):
                # (a subnormal product's absolute rounding covered by the smallest subnormal)
                v = blk_ph[b] * t * (1.0 + 4.0 * RU) + 5e-324 if blk_ph[b] > 0.0 and t > 0.0 else 0.0
                bound[b] = v
                guess += blk_pl[b] * g
                if v > 0.0:
                    e = math.frexp(v)[1]
                    bucket[b] = e
                    if e > top_e:
                        top_e = e
        sums = np.zeros(_BUCKETS + 1)
        for b in range(nb):
            if bound[b] > 0.0:
                r = top_e - bucket[b]
                if r > _BUCKETS - 1:
                    r = _BUCKETS - 1
                bucket[b] = r
                sums[r] += bound[b]
            else:
                bucket[b] = _BUCKETS  # zero bound: nothing to sum
        # rem[r] = Σ_{r' ≥ r} sums (rounded up)
        rem = np.zeros(_BUCKETS + 1)
        acc = 0.0
        for r in range(_BUCKETS - 1, -1, -1):
            acc += sums[r]
            rem[r] = acc * sum_up
        # ---- the buckets the estimate asks for; then more while the rest is not negligible
        # against the lower end so far
        stop = 0
        while stop < _BUCKETS and rem[stop] > skip_rel * guess:
            stop += 1
        s_lo = 0.0
        c_lo = 0.0
        s_hi = 0.0
        c_hi = 0.0
        arg_th = th_up[k] - sq
        e_th = math.exp(arg_th) if abs(arg_th) < _MAX_EXP else 0.0
        e_tab = 2.0 * RU * (abs(th_up[k]) + abs(sq) + 4.0)
        done[:] = -1
        while True:
            for tl in range(ntile):
                w = done[tl]
                for sh in range(ns - 1, w, -1):
                    if bucket[tl * ns + sh] < stop:
                        w = sh
                        break
                if w > done[tl]:  # the tile's atoms of shells done < s ≤ w, in value order
                    d = done[tl]
                    m = 0
                    for a in range(tl * per_tile, min(tl * per_tile + per_tile, na)):
                        sa = np.int64(shell[a])
                        idx[m] = a
                        m += (sa > d) * (sa <= w)  # (no branch: the shells of a tile are mixed)
                    s_lo, c_lo, s_hi, c_hi = _block_terms(
                        idx, m, complement, th_dn[k], th_up[k], e_th, e_tab, a_vd, a_vu, a_pl, a_ph, a_ex, mid,
                        cstart, vd, vu, pl, ph, p_lo, p_hi, q_lo, q_hi, g0, inv, hw, tau, sq, vmin, vabs, eta, s_lo,
                        c_lo, s_hi, c_hi)
                    done[tl] = w
            cur = skip_rel * ((s_lo + c_lo) * (1.0 - eta_a - 2.0 * RU))
            if stop >= _BUCKETS or rem[stop] <= cur:
                break
            while stop < _BUCKETS and rem[stop] > cur:
                stop += 1
        # every block not summed (in each tile, the shells deeper than the last summed): its bound
        skipped = 0.0
        for tl in range(ntile):
            for sh in range(done[tl] + 1, ns):
                skipped += bound[tl * ns + sh]
        lo_out[k] = max((s_lo + c_lo) * (1.0 - eta_a - 2.0 * RU), 0.0)
        hi_out[k] = ((s_hi + c_hi) * (1.0 + eta_a + 2.0 * RU) + skipped * sum_up) * (1.0 + 2.0 * RU)
    return lo_out, hi_out
