"""The finishing kernel of the tilted rule for the queries of many tilts in one call.

:func:`finish_tilts` is :func:`~exactdp.kernels.quadfinish.finish_values` applied to
consecutive segments of its inputs, each segment with the floats of its own tilt: the
engine asks one call per batch of tilts instead of one per tilt.  Each value is the same
call of ``finish_values`` on the same numbers, so every output is bit-identical.
"""

from __future__ import annotations

import numpy as np

from exactdp.kernels.jit import kernel
from exactdp.kernels.quadfinish import finish_values

__all__ = ["finish_tilts"]


@kernel("Tuple((float64[:], float64[:], int64[:]))(float64[:], int64[:], float64[:, :], float64[:, :], int64[:], "
        "int64, int64[:], int64[:], float64[:], int64[:], boolean)")
def finish_tilts(r, s, aux, tps, seg, n_nodes, A, m, s2, small, gaussian):
    """``(log estimate, relative error, status)`` of every query: the queries
    ``seg[t]:seg[t + 1]`` lie on tilt t, whose floats are ``tps[t]`` (as ``tp`` of
    :func:`finish_values`); ``aux`` has one column per query."""
    n = r.shape[0]
    log_est = np.empty(n)
    rel_out = np.empty(n)
    status = np.empty(n, dtype=np.int64)
    for t in range(seg.shape[0] - 1):
        a = seg[t]
        b = seg[t + 1]
        if b <= a:
            continue
        e, rl, st = finish_values(r[a:b], s[a:b], aux[:, a:b], tps[t], n_nodes, A, m, s2, small, gaussian)
        log_est[a:b] = e
        rel_out[a:b] = rl
        status[a:b] = st
    return log_est, rel_out, status
