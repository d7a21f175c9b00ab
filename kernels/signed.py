"""Kernels of the tilted rule's signed sums ``(1/N) Σ_n w_n Re[G_n e^{−iθ_n s}]`` (see
:mod:`exactdp.kernels.tilted` for the rule).  The phase ``θ_n s`` is reduced modulo 2π with
exact integer arithmetic ``(n·s) mod N``, so no phase error grows with the size of s.
"""

from __future__ import annotations

import math

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.nodes import wrapped_angle
from exactdp.kernels.summation import neumaier_add

__all__ = ["ANCHOR", "SIDE_BY_SIDE", "tilted_sums"]

#: longest run of phase rotations between exact re-anchorings in :func:`tilted_sums`
ANCHOR = 32


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
    ph1 = -wrapped_angle(s, n_nodes)
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
            ph = -wrapped_angle(res, n_nodes)
            rot_re = math.cos(ph)
            rot_im = math.sin(ph)
            run = 0
        prev = n
        g = Gn[i]
        term = w * (g.real * rot_re - g.imag * rot_im)
        acc, comp = neumaier_add(acc, comp, term)
    return (acc + comp) / n_nodes


#: from this many thresholds on, :func:`tilted_sums` sums them side by side in one pass
SIDE_BY_SIDE = 2


@kernel("float64[:](complex128[:], int64[:], int64, int64[:])")
def tilted_sums(Gn, nodes, n_nodes, thresholds):
    """For each threshold s: ``(1/N) Σ_n w_n Re[G_n e^{−iθ_n s}]``.

    The signed sum is accumulated with Neumaier's compensated summation, so its rounding
    error is at most ``2u·Σ|terms| + O(n u²)·Σ|terms|`` independently of the node count;
    the phase rotations add ≤ 4u·ANCHOR relative per term.

    ``e^{−iθ_n s}`` is formed along runs of consecutive nodes by rotation, re-anchored
    exactly (integer phase ``n·s mod N``, N < 2³¹ so n·s fits) every ANCHOR steps and at
    every gap.  The thresholds are summed side by side in one pass
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
    step_re = np.empty(T)
    step_im = np.empty(T)
    rot_re = np.ones(T)
    rot_im = np.zeros(T)
    acc = np.zeros(T)
    comp = np.zeros(T)
    for t in range(T):
        s = thresholds[t] % n_nodes
        sr[t] = s
        ph1 = -wrapped_angle(s, n_nodes)
        step_re[t] = math.cos(ph1)
        step_im[t] = math.sin(ph1)
    prev = -2  # no node before the first
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
                acc[t], comp[t] = neumaier_add(acc[t], comp[t], w * (gre * r_re - gim * ri))
            run += 1
        else:
            for t in range(T):
                # n·s mod N: the integer _signed_sum carries along the run (one addition per node)
                r = (n * sr[t]) % n_nodes
                ph = -wrapped_angle(r, n_nodes)
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
