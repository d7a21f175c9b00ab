"""Kernel of the smoothed inversion's frequency sieve at a flat level, with the dropped mass
summed as it goes (:mod:`exactdp.engine.smoothed_profile`, the wide budget).

:func:`exactdp.kernels.profile.sieve_nodes` drops node n below the level ``T0 + slope·log(1+n)``
and bounds the dropped nodes a priori by ``Σ_n e^{−T(n)}``: every node up to ``n_max`` is
charged as if it sat at the level, so the level grows by ~18 nats at ~10⁸ nodes.  Where
the kept nodes are sparse coincidence windows (many groups of close σ²), almost every
dropped node lies far below the level, and an a-posteriori sum is much smaller: here the
level is flat and each dropped interval ``[a, b]`` adds ``(b − a + 1)·e^{−lb}`` to the
returned mass (``lb`` the same certified lower bound of ``Σ_g pen_g + s²u²/2`` over it);
an interval is dropped only when that term is at most ``e^{−T}``, each dropped node of a
leaf adds ``e^{−pen}`` (penalties summed until 10 nats above the level: a partial sum is a
lower bound).  The caller charges ``2·mass`` (the nodes ±n) to every sum.

The range is cut into blocks of :func:`block_length` nodes (each group's phase moves by at
most :data:`BLOCK_CYCLES` of a cycle over one), each bisected on its own: an interval whose
phases may cross an integer for every group bounds nothing, and the bisection from
``[0, n_max]`` visited ~2·n_max·max|τ| of them (a third of its visits for ten σ² ≈ 11)
before any could be dropped.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.profile import _pen_lookup, node_pen
from exactdp.kernels.units import EPS64

__all__ = ["sieve_nodes_flat", "block_length", "block_pens", "kernel_log_weight", "phase_interval_pen"]

TWO_PI = 2.0 * math.pi
#: a block's phase sweep (cycles) for the group of the largest |τ|
BLOCK_CYCLES = 0.3
#: the penalties of a dropped interval or node are summed until this many nats above its
#: level (a partial sum is a lower bound: ``e^{−partial}`` bounds the term)
_MORE = 10.0


@kernel("int64(float64[:], int64, int64)")
def block_length(tau_hi, leaf, n_max):
    """The sieve's block length: the largest power of two ``L ≥ leaf`` with ``L·max|τ| ≤``
    :data:`BLOCK_CYCLES` (``leaf`` at least; ``n_max + 1`` at most)."""
    t = 0.0
    for g in range(tau_hi.shape[0]):
        t = max(t, abs(tau_hi[g]))
    L = leaf
    while 2 * L * t <= BLOCK_CYCLES and 2 * L <= n_max + 1:
        L *= 2
    return L


@kernel("float64(float64, float64, float64, float64, float64[:], float64)")
def phase_interval_pen(af, length, th, tl, tab, scale):
    """A lower bound of a group's penalty at every node of ``[a, a + span]`` (``af = a``, the
    phases' sweep ``length ≥ span·|τ|`` given; τ = hi + lo to 2^-104 relative) from a binary64
    phase: the product ``p = fl(a·hi)`` (error ``≤ 2^-53|p|``), its fraction ``f = p − ⌊p⌋``
    (``≤ 2^-53``), the part ``a·lo`` and τ's own representation error (``2^-104·a|τ|``) are
    all within ``e = 2^-51(|p| + 1) + |a·lo|`` cycles, so the phases lie in
    ``[f − e, f + length + e]`` (τ > 0; mirrored for τ < 0).  0 where that interval may
    reach an integer (``x0 ≤ 0`` or ``x1 ≥ 1``; 0 is always a lower bound), else it lies in
    (0, 1) and its least distance to ℤ is ``min(x0, 1 − x1)`` (the lesser of the two is
    formed exactly: ``1 − x1`` is exact for x1 ≥ 1/2), lowered by the endpoints' rounding as
    in :func:`exactdp.kernels.profile.interval_pen` — the same distance that function takes
    at its endpoints, from ~5× fewer operations than its double-double phase."""
    if length >= 1.0:
        return 0.0
    p = af * th
    f = p - math.floor(p)
    e = 2.0**-51 * (abs(p) + 1.0) + abs(af * tl)
    if th >= 0.0:
        x0 = f - e
        x1 = f + length + e
    else:
        x0 = f - length - e
        x1 = f + e
    if x0 <= 0.0 or x1 >= 1.0:
        return 0.0
    return _pen_lookup(min(x0, 1.0 - x1) - 4.0 * EPS64, tab, scale)


@kernel("float64(float64, float64)")
def _w1(u, lam1):
    """``max(1, u/lam1)`` rounded down (``lam1 = inf``: 1): the tail kernel's decay weight."""
    if not lam1 < np.inf or u <= lam1:
        return 1.0
    return max(1.0, (u / lam1) * (1.0 - 8.0 * EPS64))


@kernel("float64(float64, float64, float64)")
def kernel_log_weight(u, lam1, lam2):
    """``log max(1, u²/lam2)`` rounded up (``lam2 = inf``: 0): the log of the profile
    kernel's decay weight ``w₂(u)``, ``|λ(λ+1)/((λ+iu)(λ+1+iu))| ≤ 1/w₂(u)`` for
    ``λ(λ+1) ≤ lam2`` (``lam1`` is unused here; see :func:`sieve_nodes_flat`)."""
    if not lam2 < np.inf or u * u <= lam2:
        return 0.0
    lu = math.log(u)
    ll = math.log(lam2)
    # u = (2π/P)·n is formed to a few ulps; each log to one: lowered by all of it
    x = (2.0 * lu - ll) - 8.0 * EPS64 * (2.0 * abs(lu) + abs(ll) + 4.0)
    return x if x > 0.0 else 0.0


#: blocks whose first visits :func:`sieve_nodes_flat` bounds together (:func:`block_pens`)
BATCH = 64


@kernel("void(int64, int64, int64, int64, float64[:], float64[:], float64[:], float64[:, :], float64[:], float64[:], "
        "float64[:], boolean[:])")
def block_pens(start, count, blen, n_max, tau_hi, tau_lo, tlen, pen_tab, pen_scale, lb, level, on):
    """Add the groups' penalties to the lower bounds ``lb[k]`` of the ``count`` blocks
    ``[start + k·blen, min(n_max, start + (k+1)·blen − 1)]`` (their first visits in
    :func:`sieve_nodes_flat`), group by group in the sieve's order, while ``on[k]``: a block
    starts on where its Gaussian part is within its level, and is switched off once its sum
    exceeds ``level[k] +`` :data:`_MORE` (the sieve's own early stop) — the same additions,
    in the same order, of the same values as its per-visit loop.  Each penalty is
    :func:`phase_interval_pen`'s, its operations in the same order but without branches
    (its three zero cases — ``length ≥ 1``, an interval that may reach an integer, a
    distance ≤ 0 — select 0; the table index is clamped to ``[0, K]``, which is its
    lookup's ``tab[K]`` beyond the table), so a block costs no mispredicted branch per
    group.  ``tlen[g] = |τ_hi| + |τ_lo|``."""
    K = pen_tab.shape[1] - 1
    kf = float(K)
    for g in range(tau_hi.shape[0]):
        th = tau_hi[g]
        tl = tau_lo[g]
        sc = pen_scale[g]
        for k in range(count):
            a = start + k * blen
            b = min(n_max, a + blen - 1)
            length = float(b - a) * tlen[g] * (1.0 + 4.0 * EPS64)
            af = float(a)
            p = af * th
            f = p - math.floor(p)
            e = 2.0**-51 * (abs(p) + 1.0) + abs(af * tl)
            x0 = f - length - e if th < 0.0 else f - e
            x1 = f + e if th < 0.0 else f + length + e
            d = min(x0, 1.0 - x1) - 4.0 * EPS64
            pv = pen_tab[g, int(max(0.0, min(d * sc, kf)))]
            add = on[k] and length < 1.0 and x0 > 0.0 and x1 < 1.0 and d > 0.0
            v = lb[k] + (pv if add else 0.0)
            if on[k]:
                lb[k] = v
                on[k] = not v > level[k] + _MORE


@kernel("Tuple((int64[:], float64[:], int64, float64[:]))(float64[:], float64[:], float64[:, :], float64[:], "
        "int64, float64, float64, float64, float64, float64, int64, int64, int64)")
def sieve_nodes_flat(tau_hi, tau_lo, pen_tab, pen_scale, n_max, P, sk2, T, lam1, lam2, leaf, budget, node_cap):
    """``(nodes, pens, visited, masses)``: the node indices n ∈ [0, n_max] kept (increasing),
    each one's certified lower bound of ``Σ_g pen_g`` (the groups' part, for filtering a
    coarser smoothing from these nodes), the number of intervals visited (negated when
    ``budget`` intervals or more than ``node_cap`` nodes were reached), and three upper
    bounds ``m_j = Σ_{n dropped} exp(−Σ_g pen_g(dist(n·τ_g, ℤ)) − s²u_n²/2)/w_j(u_n)``
    (rounded up; −1 when the sieve stopped early) with the kernel weights ``w₀ = 1``,
    ``w₁(u) = max(1, u/lam1)`` and ``w₂(u) = max(1, u²/lam2)``.

    The weights are the decay of the inversion's kernels: the tail's ``|λ/(λ+iu)| ≤ 1/w₁``
    for λ ≤ lam1 and the profile's ``|λ(λ+1)/((λ+iu)(λ+1+iu))| ≤ 1/w₂`` for λ(λ+1) ≤ lam2
    (``|λ+iu|, |λ+1+iu| ≥ u``), so ``m_j`` bounds kernel j's dropped terms in the caller's
    normalised units.  The profile's sum is the one that needs ~1e-11 of its value (the
    density and the tail enter the bracket's width only, ×s²): nodes are dropped by the
    *profile's* weighted integrand, ``lb + log w₂(u)`` — at u ≫ λ that is the level lowered
    by ``2·log(u/λ)`` nats, and most coincidence nodes of a fine smoothing lie there.
    (``lam1 = lam2 = inf``: every weight 1, the unweighted sieve.)

    Interval ``[a, b]``: dropped when its lower bound ``lb`` (as in ``sieve_nodes``) plus
    ``log w₂(u_a)`` (the weights increase with u) exceeds ``T + log(b − a + 1)``; a leaf's
    node n is kept when its own lower bound plus ``log w₂(u_n)`` is at most T.  A node's
    phase is the double-double one of :func:`exactdp.kernels.profile.sieve_nodes`; an
    interval's bound takes its binary64 phase padded by its rounding
    (:func:`phase_interval_pen`: ~2.5× cheaper, the same bound wherever the padding does not
    move a table cell).  The blocks of :func:`block_length` nodes are bisected in increasing
    order; the logs shared by the visits (``log Λ(Λ+1)``, a whole block's ``log`` length, a
    block's first kernel weight) are formed once.  The first visits of the next
    :data:`BATCH` blocks (~97 % of all visits on the bench's narrow rows) are bounded
    together, group by group (:func:`block_pens`: the same values, branch-free), then taken
    in order as before: the node sets, visits and masses are the same bits."""
    G = tau_hi.shape[0]
    cap = 1024
    out = np.empty(cap, dtype=np.int64)
    pens = np.empty(cap, dtype=np.float64)
    n_out = 0
    stack_a = np.empty(256, dtype=np.int64)
    stack_b = np.empty(256, dtype=np.int64)
    top = 0
    visited = 0
    m0 = 0.0
    m1 = 0.0
    m2 = 0.0
    c_u = TWO_PI / P
    blen = block_length(tau_hi, leaf, n_max)
    # the logs every visit shares, formed once (the same values kernel_log_weight forms)
    weighted = lam2 < np.inf
    ll = math.log(lam2) if weighted else 0.0
    log_blen = math.log(float(blen - 1) + 1.0) * (1.0 - 4.0 * EPS64)
    # the next blocks' first visits, bounded together (block_pens): Gaussian part, kernel
    # weight, level and the groups' lower bound per block
    q_us = np.empty(BATCH)
    q_gauss = np.empty(BATCH)
    q_lw = np.empty(BATCH)
    q_lb = np.empty(BATCH)
    q_level = np.empty(BATCH)
    q_on = np.empty(BATCH, dtype=np.bool_)
    tlen = np.empty(G)
    for g in range(G):
        tlen[g] = abs(tau_hi[g]) + abs(tau_lo[g])
    q_n = 0
    q_i = 0
    start = 0
    while top > 0 or start <= n_max:
        if top == 0:  # the next block, unless the Gaussian part alone drops the rest of the range
            if q_i == q_n:
                q_n = 0
                s0 = start
                while q_n < BATCH and s0 <= n_max:
                    us = c_u * float(s0)
                    gl = 0.5 * sk2 * us * us * (1.0 - 4.0 * EPS64)
                    lw = 0.0
                    if weighted and us * us > lam2:
                        lu = math.log(us)
                        x = (2.0 * lu - ll) - 8.0 * EPS64 * (2.0 * abs(lu) + abs(ll) + 4.0)
                        lw = x if x > 0.0 else 0.0
                    b0 = min(n_max, s0 + blen - 1)
                    lspan = log_blen if b0 - s0 == blen - 1 else math.log(float(b0 - s0) + 1.0) * (1.0 - 4.0 * EPS64)
                    q_us[q_n] = us
                    q_gauss[q_n] = gl
                    q_lw[q_n] = lw
                    q_lb[q_n] = gl
                    q_level[q_n] = T + lspan - lw
                    q_on[q_n] = gl <= q_level[q_n]
                    q_n += 1
                    s0 = b0 + 1
                block_pens(start, q_n, blen, n_max, tau_hi, tau_lo, tlen, pen_tab, pen_scale, q_lb, q_level, q_on)
                q_i = 0
            ua = q_us[q_i]
            lw = q_lw[q_i]
            lb = q_gauss[q_i]
            # (log rest ≥ 0: formed only where the test can pass)
            if lb + lw > T:
                rest = float(n_max - start) + 1.0
                if lb + lw > T + math.log(rest) * (1.0 - 4.0 * EPS64):
                    visited += 1
                    term = rest * math.exp(-lb) * (1.0 + 1e-12)
                    m0 += term
                    m1 += term / _w1(ua, lam1)
                    m2 += term * math.exp(-lw)
                    break
            a = start
            b = min(n_max, start + blen - 1)
            start = b + 1
            visited += 1
            if visited > budget:
                return out[:n_out], pens[:n_out], -visited, np.full(3, -1.0)
            span = float(b - a)
            lb = q_lb[q_i]
            level = q_level[q_i]
            q_i += 1
        else:
            top -= 1
            a = stack_a[top]
            b = stack_b[top]
            visited += 1
            if visited > budget:
                return out[:n_out], pens[:n_out], -visited, np.full(3, -1.0)
            af = float(a)
            ua = c_u * af
            span = float(b - a)
            lw = kernel_log_weight(ua, lam1, lam2)
            lspan = log_blen if b - a == blen - 1 else math.log(span + 1.0) * (1.0 - 4.0 * EPS64)
            level = T + lspan - lw
            lb = 0.5 * sk2 * ua * ua * (1.0 - 4.0 * EPS64)
            if lb <= level:
                for g in range(G):
                    length = span * (abs(tau_hi[g]) + abs(tau_lo[g])) * (1.0 + 4.0 * EPS64)
                    lb += phase_interval_pen(af, length, tau_hi[g], tau_lo[g], pen_tab[g], pen_scale[g])
                    if lb > level + _MORE:
                        break
        if lb > level:
            term = (span + 1.0) * math.exp(-lb) * (1.0 + 1e-12)
            m0 += term
            m1 += term / _w1(ua, lam1)
            m2 += term * math.exp(-lw)
            continue
        if b - a + 1 <= leaf:
            for n in range(a, b + 1):
                nf = float(n)
                un = c_u * nf
                gauss = 0.5 * sk2 * un * un * (1.0 - 4.0 * EPS64)
                lwn = kernel_log_weight(un, lam1, lam2)
                gp = 0.0
                pen = gauss
                for g in range(G):
                    gp += node_pen(nf, tau_hi[g], tau_lo[g], pen_tab[g], pen_scale[g])
                    pen = gauss + gp
                    if pen + lwn > T + _MORE:
                        break
                if pen + lwn > T:
                    term = math.exp(-pen) * (1.0 + 1e-12)
                    m0 += term
                    m1 += term / _w1(un, lam1)
                    m2 += term * math.exp(-lwn)
                    continue
                if n_out == cap:
                    new = np.empty(2 * cap, dtype=np.int64)
                    new[:cap] = out
                    out = new
                    newp = np.empty(2 * cap, dtype=np.float64)
                    newp[:cap] = pens
                    pens = newp
                    cap *= 2
                out[n_out] = n
                pens[n_out] = gp * (1.0 - 4.0 * EPS64 * G)  # the sum's rounding, rounded down
                n_out += 1
                if n_out > node_cap:
                    return out[:n_out], pens[:n_out], -visited, np.full(3, -1.0)
            continue
        mid = a + (b - a) // 2
        if top + 2 > stack_a.shape[0]:
            return out[:n_out], pens[:n_out], -visited, np.full(3, -1.0)
        stack_a[top] = mid + 1
        stack_b[top] = b
        stack_a[top + 1] = a
        stack_b[top + 1] = mid
        top += 2
    # the sum's own rounding: at most visited·leaf additions of positive terms
    rounding = 1.0 + 4.0 * EPS64 * (float(visited) * float(leaf) + 4.0)
    masses = np.empty(3)
    masses[0] = m0 * rounding + 1e-300
    masses[1] = m1 * rounding + 1e-300
    masses[2] = m2 * rounding + 1e-300
    return out[:n_out], pens[:n_out], visited, masses
