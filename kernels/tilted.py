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
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict

import numpy as np

from exactdp.kernels.dgauss import (PSI_CONSTS, U64, log_psi_terms, log_theta_tilde_ratio, psi_consts, psi_terms, psi_terms_len,
                                    tilted_moments)
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add

__all__ = ["node_factors", "node_trig", "delta_factor", "delta_factors", "tilted_sums", "cgf_slope", "saddle_point", "sieve_candidates",
           "alias_bound"]

TWO_PI = 2.0 * math.pi
#: longest run of phase rotations between exact re-anchorings in :func:`tilted_sums`
ANCHOR = 32


@kernel("float64(int64, float64)")
def _wrapped_angle(r, n_nodes):
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
    """The b-dependent half of every log ψ (:func:`psi_terms`), once per slot: slot u of
    group g is the row ``tab[tbase[g] + u·tw[g] :][: tw[g]]``, from ``b_g = A_g θ_n``
    reduced exactly modulo 2π at the slot's first node n."""
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
    for g in range(G):
        psi_consts(0.0, s2[g], cc, cr)  # only its f-independent entries are read
        w = tw[g]
        seen = 0
        for i in range(K):
            if slot[i, g] == seen:
                base = tbase[g] + seen * w
                b = _wrapped_angle((A[g] * nodes[i]) % n_nodes, n_nodes)
                psi_terms(b, s2[g], cr, tab[base:base + w])
                seen += 1
    return tab, tbase, tw


@kernel("Tuple((complex128[:], float64[:]))(int64[:], float64[:], float64[:], float64, int32[:, :], int64[:], float64[:], "
        "int64[:], int64[:], float64[:], float64[:], float64[:])")
def _node_factors_rows(m, s2, f, lam, slot, soff, tab, tbase, tw, cos_t, sin_t, sh_t):
    """:func:`node_factors` from the tilt-independent tables (:func:`_node_slots`,
    :func:`_slot_rows`, :func:`node_trig`): log ψ once per slot, then per node the
    same sums in the same order as a direct loop over (node, group)."""
    G = m.shape[0]
    K = slot.shape[0]
    U = soff[G]
    lre = np.empty(U)
    lim = np.empty(U)
    lq = np.empty(U)
    cc = np.empty(6, dtype=np.complex128)
    cr = np.empty(PSI_CONSTS)
    for g in range(G):
        psi_consts(f[g], s2[g], cc, cr)
        w = tw[g]
        for u in range(soff[g + 1] - soff[g]):
            base = tbase[g] + u * w
            lp, le = log_psi_terms(f[g], s2[g], cc, cr, tab, base)
            k = soff[g] + u
            lre[k] = lp.real
            lim[k] = lp.imag
            lq[k] = le + 2.0 * U64 * (abs(lp.real) + abs(lp.imag))
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
            re += m[g] * lre[k]
            im += m[g] * lim[k]
            e += m[g] * lq[k]
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
            err[i] = e + U64 * (2.0 * (abs(re) + abs(im)) + 24.0)
    return out, err


#: node tables (:func:`_node_tables`) kept for the next tilts of the same sieve, LRU,
#: at most this many bytes in all
TABLE_BYTES = 256 * 2**20
_TABLES: OrderedDict = OrderedDict()
_TABLES_LOCK = threading.Lock()


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
            _TABLES[key] = (tables, size)
            while sum(v[1] for v in _TABLES.values()) > TABLE_BYTES:
                _TABLES.popitem(last=False)
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


@kernel("float64(complex128[:], int64[:], int64, int64)")
def _signed_sum(Gn, nodes, n_nodes, threshold):
    """``(1/N) Σ_n w_n Re[G_n e^{−iθ_n s}]`` for one threshold (see :func:`tilted_sums`)."""
    half = n_nodes // 2
    s = threshold % n_nodes
    acc = 0.0
    comp = 0.0
    # e^{−iθ_n s} along runs of consecutive nodes by rotation, re-anchored exactly
    # (integer phase n·s mod N, carried along the run by one addition per node) every
    # ANCHOR steps and at every gap: its relative error stays ≤ 4u·ANCHOR
    ph1 = -_wrapped_angle(s, n_nodes)
    step_re = math.cos(ph1)
    step_im = math.sin(ph1)
    prev = -2
    res = (prev * s) % n_nodes  # n·s mod N at the previous node
    run = 0
    rot_re = 1.0
    rot_im = 0.0
    for i in range(nodes.shape[0]):
        n = nodes[i]
        if n > half:
            continue
        w = 1.0 if (n == 0 or 2 * n == n_nodes) else 2.0
        if n == prev + 1:
            res += s
            if res >= n_nodes:
                res -= n_nodes
        else:
            res = (n * s) % n_nodes
        if n == prev + 1 and run < ANCHOR:
            r_re = rot_re * step_re - rot_im * step_im
            rot_im = rot_re * step_im + rot_im * step_re
            rot_re = r_re
            run += 1
        else:
            ph = -_wrapped_angle(res, n_nodes)
            rot_re = math.cos(ph)
            rot_im = math.sin(ph)
            run = 0
        prev = n
        g = Gn[i]
        term = w * (g.real * rot_re - g.imag * rot_im)
        acc, comp = neumaier_add(acc, comp, term)
    return (acc + comp) / n_nodes


#: from this many thresholds on, :func:`tilted_sums` sums them side by side in one pass
SIDE_BY_SIDE = 8


@kernel("float64[:](complex128[:], int64[:], int64, int64[:])")
def tilted_sums(Gn, nodes, n_nodes, thresholds):
    """For each threshold s: ``(1/N) Σ_n w_n Re[G_n e^{−iθ_n s}]``.

    The signed sum is accumulated with Neumaier's compensated summation, so its rounding
    error is at most ``2u·Σ|terms| + O(n u²)·Σ|terms|`` independently of the node count;
    the phase rotations add ≤ 4u·ANCHOR relative per term.

    ``e^{−iθ_n s}`` is formed along runs of consecutive nodes by rotation, re-anchored
    exactly (integer phase ``n·s mod N``, carried from node to node by one addition) every
    ANCHOR steps and at every gap.  The thresholds are summed side by side in one pass
    over the nodes (from :data:`SIDE_BY_SIDE` of them on; fewer, each by a pass of its
    own, :func:`_signed_sum`): each one's terms are the same and added in the same order.
    """
    T = thresholds.shape[0]
    if T < SIDE_BY_SIDE:
        res = np.empty(T)
        for t in range(T):
            res[t] = _signed_sum(Gn, nodes, n_nodes, thresholds[t])
        return res
    half = n_nodes // 2
    sr = np.empty(T, dtype=np.int64)
    res_t = np.empty(T, dtype=np.int64)  # n·s mod N at the current node
    step_re = np.empty(T)
    step_im = np.empty(T)
    rot_re = np.ones(T)
    rot_im = np.zeros(T)
    acc = np.zeros(T)
    comp = np.zeros(T)
    prev0 = -2  # no node before the first
    for t in range(T):
        s = thresholds[t] % n_nodes
        sr[t] = s
        res_t[t] = (prev0 * s) % n_nodes
        ph1 = -_wrapped_angle(s, n_nodes)
        step_re[t] = math.cos(ph1)
        step_im[t] = math.sin(ph1)
    prev = prev0
    run = 0
    for i in range(nodes.shape[0]):
        n = nodes[i]
        if n > half:
            continue
        w = 1.0 if (n == 0 or 2 * n == n_nodes) else 2.0
        gre, gim = Gn[i].real, Gn[i].imag
        if n == prev + 1 and run < ANCHOR:
            for t in range(T):
                r_re = rot_re[t] * step_re[t] - rot_im[t] * step_im[t]
                ri = rot_re[t] * step_im[t] + rot_im[t] * step_re[t]
                rot_re[t] = r_re
                rot_im[t] = ri
                r = res_t[t] + sr[t]
                res_t[t] = r - n_nodes if r >= n_nodes else r
                acc[t], comp[t] = neumaier_add(acc[t], comp[t], w * (gre * r_re - gim * ri))
            run += 1
        else:
            step_run = n == prev + 1
            for t in range(T):
                if step_run:
                    r = res_t[t] + sr[t]
                    r = r - n_nodes if r >= n_nodes else r
                else:
                    r = (n * sr[t]) % n_nodes
                res_t[t] = r
                ph = -_wrapped_angle(r, n_nodes)
                r_re = math.cos(ph)
                ri = math.sin(ph)
                rot_re[t] = r_re
                rot_im[t] = ri
                acc[t], comp[t] = neumaier_add(acc[t], comp[t], w * (gre * r_re - gim * ri))
            run = 0
        prev = n
    out = np.empty(T)
    for t in range(T):
        out[t] = (acc[t] + comp[t]) / n_nodes
    return out


@kernel("Tuple((float64[:], float64[:], float64[:]))(int64[:], int64)")
def node_trig(nodes, n_nodes):
    """``(cos θ_n, sin θ_n, sin(θ_n/2))`` of the nodes (θ_n reduced to [−π, π]): per sieve
    constants of the hockey-stick factor :func:`delta_factor`."""
    k = nodes.shape[0]
    c = np.empty(k)
    s = np.empty(k)
    sh = np.empty(k)
    for i in range(k):
        theta = _wrapped_angle(nodes[i], n_nodes)
        c[i] = math.cos(theta)
        s[i] = math.sin(theta)
        sh[i] = math.sin(0.5 * theta)
    return c, s, sh


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


@kernel("UniTuple(float64, 2)(int64[:], int64[:], float64[:], float64)")
def cgf_slope(A, m, s2, lam):
    """``(K'(λ), K''(λ))`` of ``S = Σ_g A_g Σ_k X_{g,k}`` in float64 (for the saddle point):
    the mean and variance of the λ-tilted S, each tilted factor being N_Z(A_g λ s_g², s_g²)."""
    k1 = 0.0
    k2 = 0.0
    for g in range(A.shape[0]):
        mu = A[g] * lam * s2[g]
        n0 = math.floor(mu + 0.5)
        mean, var = tilted_moments(mu - n0, s2[g])
        k1 += m[g] * A[g] * (n0 + mean)
        k2 += m[g] * A[g] * A[g] * var
    return k1, k2


@kernel("float64(int64[:], int64[:], float64[:], float64, float64)")
def saddle_point(A, m, s2, s, lam0):
    """The λ > 0 with ``K'(λ) = s`` (s > 0) by Newton steps safeguarded by bisection
    (K' is increasing); ``lam0`` is the first guess (e.g. s/V')."""
    lo = 0.0
    hi = lam0
    for _ in range(2000):
        k1, _ = cgf_slope(A, m, s2, hi)
        if k1 >= s:
            break
        lo = hi
        hi *= 2.0
    lam = lam0 if lam0 < hi else 0.5 * (lo + hi)
    for _ in range(200):
        k1, k2 = cgf_slope(A, m, s2, lam)
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


@kernel("int64[:](int64[:], float64[:], int64, int64)")
def sieve_candidates(A, umax, n_nodes, gstar):
    """Nodes n ∈ [0, N/2] with ``dist(A_g θ_n, 2πℤ) ≤ umax_g`` for every group g.

    Candidates are enumerated around the peaks ``2πj/A_{g*}`` of the group ``g*`` (the
    one with the fewest surviving nodes) and filtered by all the others, in order up to the
    first that rejects; a group's residue ``A_g·n mod N`` is carried from the previous
    candidate by one addition when it was tested there, else formed by a multiplication
    (exact integers either way).  One pass, into a buffer that doubles.
    """
    G = A.shape[0]
    a_star = A[gstar]
    u_star = umax[gstar]
    half = n_nodes // 2
    limits = np.empty(G)
    step = np.empty(G, dtype=np.int64)
    for g in range(G):
        # keep iff distance d = min(r, N-r) satisfies 2π d / N <= umax_g (slightly widened:
        # keeping an extra node is always safe, dropping one is what must be certified)
        limits[g] = umax[g] * n_nodes / TWO_PI * (1.0 + 1e-12) + 1e-9
        step[g] = A[g] % n_nodes
    res = np.empty(G, dtype=np.int64)
    at = np.full(G, -2, dtype=np.int64)  # the node whose residue res[g] holds
    out = np.empty(1024, dtype=np.int64)
    count = 0
    last = -1
    jmax = a_star // 2 + 1
    for j in range(jmax + 1):
        lo_f = (TWO_PI * j - u_star) * n_nodes / (TWO_PI * a_star)
        hi_f = (TWO_PI * j + u_star) * n_nodes / (TWO_PI * a_star)
        lo = max(int(math.floor(lo_f)) - 1, 0, last + 1)
        hi = min(int(math.ceil(hi_f)) + 1, half)
        for n in range(lo, hi + 1):
            ok = True
            for g in range(G):
                if at[g] == n - 1:
                    r = res[g] + step[g]
                    if r >= n_nodes:
                        r -= n_nodes
                else:
                    r = (A[g] * n) % n_nodes
                res[g] = r
                at[g] = n
                d = r if 2 * r <= n_nodes else n_nodes - r
                if d > limits[g]:
                    ok = False
                    break
            if ok:
                if count == out.shape[0]:
                    grown = np.empty(2 * count, dtype=np.int64)
                    grown[:count] = out
                    out = grown
                out[count] = n
                count += 1
            last = n
    return out[:count].copy()


#: returned by :func:`alias_bound` when the float path does not apply
ALIAS_FALLBACK = -1.0


@kernel("float64(float64, float64, float64, float64, float64, int64[:], int64[:], float64[:], int64[:])")
def _dk_float(lam, tt, s, rho_lam, V, A, m, s2, small):
    """``[K(tt) − tt·s] − [K(λ) − λs]`` bounded above in float64 (the float branch of
    ``QuadratureTails._dK``, the same operations in the same order); NaN when that
    branch does not apply (a float product too inexact, or a tilted centre ≥ 1e8)."""
    a = (tt + lam) * V / 2
    d = (tt - lam) * (a - s)
    derr = 4 * U64 * abs(tt - lam) * (abs(a) + abs(s)) + 4 * U64 * abs(d)
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
        out += m[g] * log_theta_tilde_ratio(f, s2[g])
        derr += m[g] * U64 * 8 * (abs(mu) + 1) / s2[g]
    return out + derr + 1e-9 * (1 + abs(out) + abs(rho_lam))


@kernel("float64(float64, int64, int64, float64, float64, float64, float64, int64[:], int64[:], float64[:], int64[:], "
        "boolean)")
def alias_bound(lam, n_nodes, s, log_r, log_k, rho_lam, V, A, m, s2, small, gaussian):
    """Both aliasing sums of the tilted rule in units of its normalising factor R (the
    float path of ``QuadratureTails._alias_norm``, the same operations in the same
    order), or :data:`ALIAS_FALLBACK` when that path does not apply (|s| + N ≥ 2⁵³, an
    inexact float branch of the CGF difference, or a non-finite candidate).

    ``log_r = log R`` (float), ``log_k`` the log of the kernel factor, ``rho_lam =
    K(λ) − λ²V'/2``; ``small`` lists the groups whose CGF is bounded by their theta ratio."""
    N = float(n_nodes)
    if abs(s) + n_nodes >= 2**53:
        return ALIAS_FALLBACK
    la_neg = -lam * N - math.log(-math.expm1(-lam * N)) - log_r
    la_pos = np.inf
    have_pos = False
    for side in (1, -1):
        target = s + side * n_nodes
        if target <= 0:
            continue
        ft = float(target)
        c0 = ft / V
        if not gaussian:
            c0 = saddle_point(A, m, s2, ft, c0)
        c1 = lam + float(side * n_nodes) / V
        for c in range(2):
            cand = c0 if c == 0 else c1
            if c == 1 and c1 == c0:
                continue
            gap = (cand - lam) * side
            if gap <= 0 or cand <= 0:
                continue
            dk = _dk_float(lam, cand, float(s), rho_lam, V, A, m, s2, small)
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
