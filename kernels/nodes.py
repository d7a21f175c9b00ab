"""Kernels of the tilted rule's node factors: the nodes' angles and trigonometry, and the
normalised integrand factors ``G_n`` of :func:`node_factors` (see :mod:`exactdp.kernels.tilted`
for the rule).  Phases ``A_g θ_n`` are reduced modulo 2π with exact integer arithmetic
``(A_g·n) mod N``, so no phase error grows with the size of A_g.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np
from exactdp.kernels.dgauss import PSI_CONSTS, TWO_PI, log_psi_rows, psi_consts, psi_terms_len, psi_terms_rows
from exactdp.kernels.jit import kernel
from exactdp.kernels.units import EPS64

__all__ = ["wrapped_angle", "node_trig", "node_factors", "TABLE_BYTES", "clear_tables"]


@kernel("float64(int64, float64)")
def wrapped_angle(r, n_nodes):
    """2π·r/N reduced to [−π, π] for 0 ≤ r < N."""
    if 2 * r > n_nodes:
        return TWO_PI * (r - n_nodes) / n_nodes
    return TWO_PI * r / n_nodes


@kernel("Tuple((int32[:, :], int64[:]))(int64[:], int64[:], int64)")
def _node_slots(A, nodes, n_nodes):
    """Nodes that share a phase.  ``slot[i, g]`` numbers the distinct residues
    ``(A_g·n_i) mod N`` of group g in order of first appearance; group g's slots are
    ``soff[g] .. soff[g+1] − 1`` of a common numbering.  ``A_g·n ≡ A_g·n′ (mod N)`` iff
    ``n ≡ n′ (mod N/gcd(A_g, N))``, so groups with the same period share one numbering
    (a single one, the identity, when every period exceeds the nodes' span)."""
    G = A.shape[0]
    K = nodes.shape[0]
    slot = np.empty((K, G), dtype=np.int32)
    soff = np.zeros(G + 1, dtype=np.int64)
    period = np.empty(G, dtype=np.int64)
    for g in range(G):
        P = n_nodes // np.gcd(abs(A[g]) % n_nodes, n_nodes)
        period[g] = P
        same = -1
        for h in range(g):
            if period[h] == P:
                same = h
                break
        if same >= 0:
            for i in range(K):
                slot[i, g] = slot[i, same]
            soff[g + 1] = soff[g] + (soff[same + 1] - soff[same])
            continue
        distinct = True
        for i in range(K):
            if nodes[i] < 0 or nodes[i] >= P or (i > 0 and nodes[i] <= nodes[i - 1]):
                distinct = False
                break
        if distinct:
            for i in range(K):
                slot[i, g] = i
            soff[g + 1] = soff[g] + K
            continue
        keys = np.empty(K, dtype=np.int64)
        for i in range(K):
            keys[i] = nodes[i] % P
        order = np.argsort(keys, kind="mergesort")
        first = np.empty(K, dtype=np.int64)  # the first node with the same residue
        i = 0
        while i < K:
            j = i
            lo = order[i]
            while j < K and keys[order[j]] == keys[order[i]]:
                lo = min(lo, order[j])
                j += 1
            for q in range(i, j):
                first[order[q]] = lo
            i = j
        c = 0
        for i in range(K):
            if first[i] == i:
                slot[i, g] = c
                c += 1
            else:
                slot[i, g] = slot[first[i], g]
        soff[g + 1] = soff[g] + c
    return slot, soff


@kernel("Tuple((float64[:], int64[:], int64[:]))(int64[:], float64[:], int64[:], int64, int32[:, :], int64[:])")
def _slot_rows(A, s2, nodes, n_nodes, slot, soff):
    """The b-dependent half of every log ψ (:func:`~exactdp.kernels.dgauss.psi_terms_rows`),
    once per slot: slot u of group g is the row ``tab[tbase[g] + u·tw[g] :][: tw[g]]``,
    from ``b_g = A_g θ_n`` reduced exactly modulo 2π at the slot's first node n (one
    call per group)."""
    G = A.shape[0]
    K = nodes.shape[0]
    tw = np.empty(G, dtype=np.int64)
    tbase = np.empty(G, dtype=np.int64)
    total = 0
    for g in range(G):
        tw[g] = psi_terms_len(s2[g])
        tbase[g] = total
        total += tw[g] * (soff[g + 1] - soff[g])
    tab = np.empty(total)
    cc = np.empty(6, dtype=np.complex128)
    cr = np.empty(PSI_CONSTS)
    bs = np.empty(K)
    for g in range(G):
        psi_consts(0.0, s2[g], cc, cr)  # only its f-independent entries are read
        seen = 0
        for i in range(K):
            if slot[i, g] == seen:
                bs[seen] = wrapped_angle((A[g] * nodes[i]) % n_nodes, n_nodes)
                seen += 1
        psi_terms_rows(bs[:seen], s2[g], cr, tab, tbase[g], tw[g])
    return tab, tbase, tw


@kernel("Tuple((complex128[:], float64[:]))(int64[:], float64[:], float64[:], float64, int32[:, :], int64[:], "
        "float64[:], int64[:], int64[:], float64[:], float64[:], float64[:])")
def _node_factors_rows(m, s2, f, lam, slot, soff, tab, tbase, tw, cos_t, sin_t, sh_t):
    """:func:`node_factors` from the tilt-independent tables (:func:`_node_slots`,
    :func:`_slot_rows`, :func:`node_trig`): log ψ once per slot, then per node the
    same sums in the same order as a direct loop over (node, group)."""
    G = m.shape[0]
    K = slot.shape[0]
    U = soff[G]
    # (log ψ real part, imaginary part, error) of slot k side by side in lp[k]: one cache
    # line per gathered slot in the node loop
    lp = np.empty((U, 3))
    cc = np.empty(6, dtype=np.complex128)
    cr = np.empty(PSI_CONSTS)
    for g in range(G):
        psi_consts(f[g], s2[g], cc, cr)
        log_psi_rows(f[g], s2[g], cc, cr, tab, tbase[g], tw[g], soff[g + 1] - soff[g], lp[:, 0], lp[:, 1], lp[:, 2],
                     soff[g])
    for k in range(U):
        lp[k, 2] = lp[k, 2] + 2.0 * EPS64 * (abs(lp[k, 0]) + abs(lp[k, 1]))
    mf = np.empty(G)
    for g in range(G):
        mf[g] = m[g]
    out = np.empty(K, dtype=np.complex128)
    err = np.empty(K)
    one_minus = -math.expm1(-lam)
    e_lam = math.exp(-lam)
    for i in range(K):
        re = 0.0
        im = 0.0
        e = 0.0
        for g in range(G):
            k = soff[g] + slot[i, g]
            re += mf[g] * lp[k, 0]
            im += mf[g] * lp[k, 1]
            e += mf[g] * lp[k, 2]
        # (1 - e^{-λ}) / (1 - e^{-λ-iθ}); the real part of the denominator is formed as
        # (1 - e^{-λ}) cos θ + 2 sin²(θ/2) - a sum of non-negative terms for |θ| ≤ π/2 -
        # instead of 1 - e^{-λ} cos θ, which cancels catastrophically for small λ and θ.
        sh = sh_t[i]
        den = (one_minus * cos_t[i] + 2.0 * sh * sh) + 1j * (e_lam * sin_t[i])
        if re < -745.0:
            out[i] = 0.0
            err[i] = 0.0
        else:
            out[i] = math.exp(re) * (math.cos(im) + 1j * math.sin(im)) * one_minus / den
            err[i] = e + EPS64 * (2.0 * (abs(re) + abs(im)) + 24.0)
    return out, err


#: node tables (:func:`_node_tables`) kept for the next tilts of the same sieve, LRU,
#: at most this many bytes in all
TABLE_BYTES = 256 * 2**20
_TABLES: OrderedDict = OrderedDict()
_TABLES_LOCK = threading.Lock()
_TABLES_SIZE = [0]  # bytes held in _TABLES (kept with it, under the lock)


def _node_tables(A, s2, nodes, n_nodes):
    """The tilt-independent tables of :func:`node_factors` for (A, s², nodes, N), built once
    and kept (a pure function of its arguments: values never depend on the cache)."""
    key = (int(n_nodes), A.tobytes(), s2.tobytes(), nodes.tobytes())
    with _TABLES_LOCK:
        hit = _TABLES.get(key)
        if hit is not None:
            _TABLES.move_to_end(key)
            return hit[0]
    slot, soff = _node_slots(A, nodes, n_nodes)
    tab, tbase, tw = _slot_rows(A, s2, nodes, n_nodes, slot, soff)
    cos_t, sin_t, sh_t = node_trig(nodes, n_nodes)
    tables = (slot, soff, tab, tbase, tw, cos_t, sin_t, sh_t)
    size = sum(a.nbytes for a in tables) + len(key[3])
    if size <= TABLE_BYTES:
        with _TABLES_LOCK:
            old = _TABLES.pop(key, None)  # another thread's copy of the same tables
            if old is not None:
                _TABLES_SIZE[0] -= old[1]
            _TABLES[key] = (tables, size)
            _TABLES_SIZE[0] += size
            while _TABLES_SIZE[0] > TABLE_BYTES:
                _TABLES_SIZE[0] -= _TABLES.popitem(last=False)[1][1]
    return tables


def node_factors(A, m, s2, f, lam, nodes, n_nodes):
    """The normalised integrand factors ``G_n`` at the given nodes, recentred: the exact
    integer phase ``θ_n·s0`` (s0 = Σ m_g A_g n0_g) is left to the caller, so

        G_n = Π_g ψ_g(f_g, b_g)^{m_g} · (1 − e^{−λ}) / (1 − e^{−λ−iθ_n}),

    with ``b_g = A_g θ_n`` reduced exactly modulo 2π and ``f_g`` the fractional part of the
    tilted centre ``A_g λ s_g²``.  Returns ``(G, err)``: ``err[n]`` bounds the relative
    error of ``G[n]`` (series truncation, rounding of every log ψ, of the sum, the exp and
    the kernel factor).

    The b-dependent half of each log ψ (exponentials, sines) does not depend on the tilt:
    it is tabulated once per (residue, group) — nodes with the same residue
    ``A_g·n mod N`` share it, and its log ψ — and kept for the next tilts of the same
    nodes.  Every number is the one of a direct loop over (node, group) evaluating
    :func:`~exactdp.kernels.dgauss.log_psi_at`, bit for bit (the same operations in the
    same order)."""
    tables = _node_tables(A, s2, nodes, int(n_nodes))
    return _node_factors_rows(m, s2, f, float(lam), *tables)


@kernel("Tuple((float64[:], float64[:], float64[:]))(int64[:], int64)")
def node_trig(nodes, n_nodes):
    """``(cos θ_n, sin θ_n, sin(θ_n/2))`` of the nodes (θ_n reduced to [−π, π]): per sieve
    constants of the hockey-stick factor :func:`~exactdp.kernels.tilted.delta_factor`."""
    k = nodes.shape[0]
    c = np.empty(k)
    s = np.empty(k)
    sh = np.empty(k)
    for i in range(k):
        theta = wrapped_angle(nodes[i], n_nodes)
        c[i] = math.cos(theta)
        s[i] = math.sin(theta)
        sh[i] = math.sin(0.5 * theta)
    return c, s, sh


def clear_tables() -> None:
    """Drop the kept node tables (benchmarks: build them as a fresh sweep worker would)."""
    with _TABLES_LOCK:
        _TABLES.clear()
        _TABLES_SIZE[0] = 0
