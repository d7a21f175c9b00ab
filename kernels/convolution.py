"""Direct lattice convolution kernels (all terms non-negative: every entry of a
convolution of non-negative sequences is computed to a relative error ≤ n·u)."""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add

__all__ = ["dg_pmf", "convolve_strided", "suffix_sums", "atom_tails", "atom_residues", "ATOM_LANES"]


@kernel("float64[:](float64, int64, float64)")
def dg_pmf(s2, w, log_norm):
    """``exp(−x²/(2s²) − log_norm)`` for x = −w..w."""
    out = np.empty(2 * w + 1)
    for i in range(2 * w + 1):
        x = float(i - w)
        out[i] = math.exp(-x * x / (2.0 * s2) - log_norm)
    return out


@kernel("float64[:](float64[:], float64[:], int64)")
def convolve_strided(dense, p, stride):
    """``out[i] = Σ_j dense[i − stride·j]·p[j]`` (p placed at stride ``stride``)."""
    n = dense.shape[0]
    k = p.shape[0]
    out = np.zeros(n + stride * (k - 1))
    for j in range(k):
        pj = p[j]
        if pj == 0.0:
            continue
        off = stride * j
        for i in range(n):
            out[i + off] += dense[i] * pj
    return out


@kernel("float64[:](float64[:])")
def suffix_sums(p):
    """``out[k] = Σ_{i ≥ k} p[i]`` summed from the top (Neumaier-compensated); len+1 entries."""
    n = p.shape[0]
    out = np.zeros(n + 1)
    acc = 0.0
    comp = 0.0
    for i in range(n - 1, -1, -1):
        acc, comp = neumaier_add(acc, comp, p[i])
        out[i] = acc + comp
    return out


#: thresholds summed side by side in one pass over the atoms by :func:`atom_tails`
ATOM_LANES = 4


@kernel("float64[:](float64[:], int64[:], int64[:], float64[:], int64, int64, int64[:])")
def atom_tails(suffix, atom_q, atom_r, atom_probs, lo, d, thresholds):
    """``Σ_c p_c · P(d·T ≥ s − v_c)`` for each s, with ``P(d·T ≥ y) = suffix[⌈y/d⌉ − lo]``
    (clipped to the table); ``suffix[0]`` is the total mass of T.  The atoms' values are
    given as ``v_c = q_c·d + r_c`` (0 ≤ r_c < d, :func:`atom_residues`): with
    ``s = q·d + r`` the index is ``⌈(s − v_c)/d⌉ = q − q_c + [r > r_c]``, exactly, with no
    division per atom.  :data:`ATOM_LANES` thresholds are summed side by side in one pass
    over the atoms; each one's terms are the same and added in the same order (atom
    order, Neumaier-compensated)."""
    T = thresholds.shape[0]
    out = np.empty(T)
    n = suffix.shape[0] - 1
    C = atom_q.shape[0]
    top = suffix[0]

    def add(idx, pc, acc, comp):
        if idx <= 0:
            return neumaier_add(acc, comp, pc * top)
        if idx >= n:
            return acc, comp
        return neumaier_add(acc, comp, pc * suffix[idx])

    for t0 in range(0, T, ATOM_LANES):
        # lane l: threshold t0 + l (the last one repeated past the end, its sums unused);
        # b = q − lo, so idx = b − q_c + [r > r_c]
        s = thresholds[t0]
        q0 = s // d
        b0, r0 = q0 - lo, s - q0 * d
        s = thresholds[min(t0 + 1, T - 1)]
        q1 = s // d
        b1, r1 = q1 - lo, s - q1 * d
        s = thresholds[min(t0 + 2, T - 1)]
        q2 = s // d
        b2, r2 = q2 - lo, s - q2 * d
        s = thresholds[min(t0 + 3, T - 1)]
        q3 = s // d
        b3, r3 = q3 - lo, s - q3 * d
        a0 = c0 = a1 = c1 = a2 = c2 = a3 = c3 = 0.0
        for c in range(C):
            qc = atom_q[c]
            rc = atom_r[c]
            pc = atom_probs[c]
            a0, c0 = add(b0 - qc + (1 if r0 > rc else 0), pc, a0, c0)
            a1, c1 = add(b1 - qc + (1 if r1 > rc else 0), pc, a1, c1)
            a2, c2 = add(b2 - qc + (1 if r2 > rc else 0), pc, a2, c2)
            a3, c3 = add(b3 - qc + (1 if r3 > rc else 0), pc, a3, c3)
        out[t0] = a0 + c0
        if t0 + 1 < T:
            out[t0 + 1] = a1 + c1
        if t0 + 2 < T:
            out[t0 + 2] = a2 + c2
        if t0 + 3 < T:
            out[t0 + 3] = a3 + c3
    return out


@kernel("Tuple((int64[:], int64[:]))(int64[:], int64)")
def atom_residues(values, d):
    """``(q, r)`` with ``values = q·d + r``, ``0 ≤ r < d`` (floor division, d ≥ 1): the
    atoms' values as :func:`atom_tails` reads them."""
    q = np.empty(values.shape[0], dtype=np.int64)
    r = np.empty(values.shape[0], dtype=np.int64)
    for c in range(values.shape[0]):
        q[c] = values[c] // d
        r[c] = values[c] - q[c] * d
    return q, r
