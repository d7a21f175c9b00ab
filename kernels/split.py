"""Kernel of the exact split enumeration (:mod:`exactdp.engine.split`).

For enumerated atoms ``c = a_b·(ints[i] + fracs[i])`` (exact integer part, float
fractional part of ``c/a_b``) with probabilities ``probs[i]`` and a base family with tail
table ``suffix`` (``suffix[k − base_lo] = P(S_b ≥ k)``), the tail at threshold
``t = a_b·(it + ft)`` is ``Σ_i probs[i]·P(S_b ≥ k_i)`` with ``k_i = it − ints[i] + ⌊ft −
fracs[i]⌋ + 1`` (strict) or ``+ [ft − fracs[i] ∉ ℤ]`` (non-strict).  Atoms whose
``ft − fracs[i]`` lies within 1e-9 of an integer are reported (their floor is settled
exactly by the caller); the sum is Neumaier-compensated (all terms ≥ 0).
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add

__all__ = ["split_tail_sums", "grouped_tail_sums", "sorted_tail_sums", "NEAR_SLOTS", "NEAR_BAND"]

#: near-integer atoms reported per threshold (more: the caller redoes that threshold)
NEAR_SLOTS = 64
#: an atom whose fractional part is within this of the threshold's is settled exactly
NEAR_BAND = 1e-9


@kernel("Tuple((float64[:], int64[:]))(int64[:], float64[:], float64[:], float64[:], int64, float64[:], int64[:], "
        "boolean, int64[:, :])")
def split_tail_sums(ints, fracs, probs, suffix, base_lo, fts, its, strict, near):
    """Tail sums for each threshold (see module) and the number of near-integer atoms,
    whose indices go to ``near[t, :]`` (up to its width)."""
    T = fts.shape[0]
    n = ints.shape[0]
    N = suffix.shape[0] - 1
    slots = near.shape[1]
    out = np.empty(T)
    cnt = np.zeros(T, dtype=np.int64)
    for t in range(T):
        ft = fts[t]
        it = its[t]
        acc = 0.0
        comp = 0.0
        c = 0
        for i in range(n):
            f = ft - fracs[i]
            fl = math.floor(f)
            r = f - fl
            if r < NEAR_BAND or r > 1.0 - NEAR_BAND:
                if c < slots:
                    near[t, c] = i
                c += 1
            k = it - ints[i] + np.int64(fl)
            if strict or r > 0.0:
                k += 1
            idx = k - base_lo
            if idx >= N:
                continue
            if idx < 0:
                idx = 0
            acc, comp = neumaier_add(acc, comp, probs[i] * suffix[idx])
        out[t] = acc + comp
        cnt[t] = c
    return out, cnt


@kernel("Tuple((float64[:], int64[:]))(int64[:], int64[:], float64[:], float64[:], float64[:], int64, float64[:], "
        "int64[:], boolean, int64[:, :])")
def grouped_tail_sums(starts, dvals, f2, p2, suffix, base_lo, fts, its, strict, near):
    """The tail sums of :func:`split_tail_sums` with the atoms grouped by integer part:
    atom j of group g is ``d_g + f2[j]`` (``0 ≤ f2 < 1``, ascending within the group,
    group g at ``starts[g]:starts[g+1]``), and the thresholds sorted by ``fts`` (each in
    ``[NEAR_BAND, 1 − NEAR_BAND]``).  In group g the atoms with ``f2 ≤ ft`` (``< ft``
    when not strict) have ``k = it − d_g + 1``, the others ``k = it − d_g``; their two
    probability sums come from an ascending and a descending compensated walk over the
    group (no complement, no cancellation), so a batch costs O(atoms + groups × thresholds)
    instead of O(atoms × thresholds).  Atoms with ``|f2 − ft| ≤ NEAR_BAND`` go to
    ``near[t, :]`` (sorted positions) for the caller to settle exactly."""
    T = fts.shape[0]
    D = dvals.shape[0]
    N = suffix.shape[0] - 1
    slots = near.shape[1]
    acc = np.zeros(T)
    comp = np.zeros(T)
    cnt = np.zeros(T, dtype=np.int64)
    for g in range(D):
        a = starts[g]
        b = starts[g + 1]
        d = dvals[g]
        j = a
        jl = a
        jh = a
        s = 0.0
        c = 0.0
        for t in range(T):
            ft = fts[t]
            while j < b and (f2[j] <= ft if strict else f2[j] < ft):
                s, c = neumaier_add(s, c, p2[j])
                j += 1
            while jl < b and f2[jl] < ft - NEAR_BAND:
                jl += 1
            if jh < jl:
                jh = jl
            while jh < b and f2[jh] <= ft + NEAR_BAND:
                jh += 1
            for q in range(jl, jh):
                if cnt[t] < slots:
                    near[t, cnt[t]] = q
                cnt[t] += 1
            low = s + c
            idx = its[t] - d + 1 - base_lo
            if low > 0.0 and idx < N:
                acc[t], comp[t] = neumaier_add(acc[t], comp[t], low * suffix[max(idx, 0)])
        j = b - 1
        s = 0.0
        c = 0.0
        for t in range(T - 1, -1, -1):
            ft = fts[t]
            while j >= a and (f2[j] > ft if strict else f2[j] >= ft):
                s, c = neumaier_add(s, c, p2[j])
                j -= 1
            high = s + c
            idx = its[t] - d - base_lo
            if high > 0.0 and idx < N:
                acc[t], comp[t] = neumaier_add(acc[t], comp[t], high * suffix[max(idx, 0)])
    return acc + comp, cnt


@kernel("Tuple((float64[:], int64[:]))(float64[:], float64[:], float64[:], float64[:], float64[:], float64[:], "
        "boolean, int64[:, :])")
def sorted_tail_sums(c_desc, p, b_asc, suffix, ts, tol, strict, near):
    """``Σ_i p_i · Σ_{b_j > t − c_i + tol} q_j`` for each threshold t by one merge (c sorted
    descending, b ascending, ``suffix[j] = Σ_{j' ≥ j} q_{j'}``), and the ranges
    ``[j0, j1)`` of b within ``tol`` of ``t − c_i`` (to be settled exactly by the caller;
    ``strict`` is theirs), as triples ``(i, j0, j1)`` in ``near[t, :]``."""
    T = ts.shape[0]
    NO = c_desc.shape[0]
    NB = b_asc.shape[0]
    slots = near.shape[1] // 3
    out = np.empty(T)
    cnt = np.zeros(T, dtype=np.int64)
    for k in range(T):
        t = ts[k]
        e = tol[k]
        jlo = 0
        jhi = 0
        acc = 0.0
        comp = 0.0
        c = 0
        for i in range(NO):
            y = t - c_desc[i]
            while jhi < NB and b_asc[jhi] <= y + e:
                jhi += 1
            while jlo < NB and b_asc[jlo] < y - e:
                jlo += 1
            acc, comp = neumaier_add(acc, comp, p[i] * suffix[jhi])
            if jhi > jlo:
                if c < slots:
                    near[k, 3 * c] = i
                    near[k, 3 * c + 1] = jlo
                    near[k, 3 * c + 2] = jhi
                c += 1
        out[k] = acc + comp
        cnt[k] = c
    return out, cnt
