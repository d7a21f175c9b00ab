"""Kernel of the tilted rule's node sieve: the nodes whose every group's phase lies near a
multiple of 2π (see :mod:`exactdp.kernels.tilted` for the rule)."""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.dgauss import TWO_PI
from exactdp.kernels.jit import kernel

__all__ = ["sieve_candidates"]


@kernel("int64(int64[:], int64[:], int64, int64, int64)")
def _add_run(out_lo, out_hi, c, n, e):
    """Append the run n .. e to the ``c`` runs ``out_lo``/``out_hi`` (joined to the last one
    when adjacent); returns the new count."""
    if c > 0 and out_hi[c - 1] == n - 1:
        out_hi[c - 1] = e
        return c
    out_lo[c] = n
    out_hi[c] = e
    return c + 1


@kernel("int64(int64[:], int64[:], int64[:], int64[:], int64, int64, int64, int64)")
def _keep_runs(lo, hi, out_lo, out_hi, count, a, L, n_nodes):
    """The runs ``lo[i] .. hi[i]`` (i < count, ascending, disjoint) cut to the nodes n with
    ``(a·n + L) mod N ≤ 2L``, i.e. ``dist(a·n, Nℤ) ≤ L`` (for 0 ≤ L, 2L < N), into
    ``out_lo``/``out_hi`` (ascending, disjoint; a run of length ℓ yields at most
    ``min(ℓ, ⌊a(ℓ − 1)/N⌋ + 2)`` of them); returns their count.  ``0 < a ≤ N/2``.

    The residue is carried exactly: along a run that passes by one division, across the
    rejected arc to its next wrap by one more, so the work is one step per wrap of ``a·n``
    around N, not one per node (for a step above N/16: node by node, the residue carried
    by one addition)."""
    W = 2 * L
    c = 0
    per_node = 16 * a > n_nodes  # a wrap every < 16 nodes: test node by node instead
    for i in range(count):
        x = lo[i]
        y = hi[i]
        v = (a * x + L) % n_nodes
        n = x
        if per_node:
            for n in range(x, y + 1):
                if v <= W:
                    c = _add_run(out_lo, out_hi, c, n, n)
                v += a
                if v >= n_nodes:
                    v -= n_nodes
            continue
        while n <= y:
            if v <= W:
                k = (W - v) // a  # n .. n + k pass
                e = n + k
                if e > y:
                    e = y
                c = _add_run(out_lo, out_hi, c, n, e)
                v += a * (k + 1)
                n += k + 1
                if v >= n_nodes:
                    v -= n_nodes
            else:
                t = (n_nodes - v + a - 1) // a  # the first step at which a·n wraps
                n += t
                v += a * t - n_nodes
    return c


@kernel("int64[:](int64[:], float64[:], int64, int64)")
def sieve_candidates(A, umax, n_nodes, gstar):
    """Nodes n ∈ [0, N/2] with ``dist(A_g θ_n, 2πℤ) ≤ umax_g`` for every group g.

    Candidates are the nodes around the peaks ``2πj/A_{g*}`` of the group ``g*`` (the one
    with the fewest surviving nodes); they are kept iff every group passes its test
    ``d_g(n) ≤ limits_g`` on the exact integer residue ``A_g·n mod N`` (d its distance to
    0 mod N).  For an integer d the test is ``d ≤ L_g = ⌊limits_g⌋``; as d is that of
    ``−A_g·n`` too, the step ``a_g = A_g mod N`` is replaced by ``N − a_g`` when larger.
    The candidates' runs are cut group by group (the most selective first) by
    :func:`_keep_runs`, exactly: the same nodes as testing every candidate against every
    group, in ascending order.
    """
    G = A.shape[0]
    a_star = A[gstar]
    u_star = umax[gstar]
    half = n_nodes // 2
    empty = np.empty(0, dtype=np.int64)
    # the groups that reject something: integer limit L and step a (ascending L)
    lim = np.empty(G, dtype=np.int64)
    stp = np.empty(G, dtype=np.int64)
    ng = 0
    for g in range(G):
        # keep iff distance d = min(r, N-r) satisfies 2π d / N <= umax_g (slightly widened:
        # keeping an extra node is always safe, dropping one is what must be certified)
        limit = umax[g] * n_nodes / TWO_PI * (1.0 + 1e-12) + 1e-9
        if limit < 0.0:
            return empty  # d ≥ 0 > limit: no node passes
        if not (limit < 0.5 * n_nodes):
            continue  # d ≤ N/2 ≤ limit (or NaN: `d > limit` is never true): every node passes
        a = A[g] % n_nodes
        if 2 * a > n_nodes:
            a = n_nodes - a
        if a == 0:
            continue  # residue 0: passes
        lim[ng] = int(math.floor(limit))
        stp[ng] = a
        ng += 1
    order = np.argsort(lim[:ng], kind="mergesort")
    # the candidates: the windows around the peaks of g*, as disjoint ascending runs
    jmax = a_star // 2 + 1
    cap = 64
    lo = np.empty(cap, dtype=np.int64)
    hi = np.empty(cap, dtype=np.int64)
    nr = 0
    last = -1
    for j in range(jmax + 1):
        lo_f = (TWO_PI * j - u_star) * n_nodes / (TWO_PI * a_star)
        hi_f = (TWO_PI * j + u_star) * n_nodes / (TWO_PI * a_star)
        wlo = max(int(math.floor(lo_f)) - 1, 0, last + 1)
        whi = min(int(math.ceil(hi_f)) + 1, half)
        if whi < wlo:
            continue
        if nr > 0 and hi[nr - 1] == wlo - 1:
            hi[nr - 1] = whi
        else:
            if nr == cap:
                cap *= 2
                lo2 = np.empty(cap, dtype=np.int64)
                hi2 = np.empty(cap, dtype=np.int64)
                lo2[:nr] = lo[:nr]
                hi2[:nr] = hi[:nr]
                lo = lo2
                hi = hi2
            lo[nr] = wlo
            hi[nr] = whi
            nr += 1
        last = whi
    # cut the runs group by group
    for q in range(ng):
        if nr == 0:
            break
        g = order[q]
        size = 0
        for r in range(nr):
            size += min(hi[r] - lo[r] + 1, (hi[r] - lo[r]) * stp[g] // n_nodes + 2)
        out_lo = np.empty(size, dtype=np.int64)
        out_hi = np.empty(size, dtype=np.int64)
        nr = _keep_runs(lo, hi, out_lo, out_hi, nr, stp[g], lim[g], n_nodes)
        lo = out_lo
        hi = out_hi
    count = 0
    for r in range(nr):
        count += hi[r] - lo[r] + 1
    out = np.empty(count, dtype=np.int64)
    c = 0
    for r in range(nr):
        for n in range(lo[r], hi[r] + 1):
            out[c] = n
            c += 1
    return out
