"""Direct lattice convolution kernels (all terms non-negative: every entry of a
convolution of non-negative sequences is computed to a relative error ≤ n·u)."""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.jit import kernel
from exactdp.kernels.summation import neumaier_add

__all__ = ["dg_pmf", "convolve_strided", "suffix_sums", "atom_tails"]


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


@kernel("float64[:](float64[:], int64[:], float64[:], int64, int64, int64[:])")
def atom_tails(suffix, atom_values, atom_probs, lo, d, thresholds):
    """``Σ_c p_c · P(d·T ≥ s − v_c)`` for each s, with ``P(d·T ≥ y) = suffix[⌈y/d⌉ − lo]``
    (clipped to the table); ``suffix[0]`` is the total mass of T."""
    out = np.empty(thresholds.shape[0])
    n = suffix.shape[0] - 1
    for t in range(thresholds.shape[0]):
        s = thresholds[t]
        acc = 0.0
        comp = 0.0
        for c in range(atom_values.shape[0]):
            y = s - atom_values[c]
            k = -((-y) // d)  # ceil(y/d)
            idx = k - lo
            if idx <= 0:
                v = suffix[0]
            elif idx >= n:
                continue
            else:
                v = suffix[idx]
            acc, comp = neumaier_add(acc, comp, atom_probs[c] * v)
        out[t] = acc + comp
    return out
