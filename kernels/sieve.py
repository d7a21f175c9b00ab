"""Kernel of the tilted rule's node sieve: the nodes whose every group's phase lies near a
multiple of 2π (see :mod:`exactdp.kernels.tilted` for the rule)."""

from __future__ import annotations

import math

import numpy as np

from exactdp.kernels.dgauss import TWO_PI
from exactdp.kernels.jit import kernel

__all__ = ["sieve_candidates"]


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
