"""Kernels of the joint-atom enumeration (:func:`exactdp.engine.coarse_split.coarse_atoms`):
one group's step of the product, the repair of a nearly sorted permutation, and a bucket sort
whose buckets double as an O(1) search table.

:func:`product_step` does, in one pass and without the ``n × m`` temporaries, exactly the
float operations of the NumPy broadcasting it replaces (the same sums in the same order, no
reassociation: ``fastmath`` is off), so its atoms are bit-identical, listed row-major in
(previous atom, group entry) as ``numpy.nonzero`` lists them.

:func:`stable_repair` finishes a stable argsort whose keys were first sorted by a monotone
quantisation (see :func:`exactdp.engine.coarse_split.stable_order`): entries with equal
quantised keys are put in (value, index) order by insertion, O(n + inversions).

:func:`bucket_sort` sorts keys by a monotone quantisation ``c(x) = ⌊(x − g₀)·inv⌋`` (clipped
to the cells; :func:`cell_of`) and by insertion within each cell.  Its cell starts answer
"the first key ≥ x" exactly: keys of lower cells are below x, keys of higher cells above
it (``c`` is non-decreasing), so only x's own cell is scanned.
"""

from __future__ import annotations

import numpy as np
from exactdp.kernels.jit import kernel
from exactdp.kernels.units import EPS64

__all__ = ["product_step", "stable_repair", "cell_of", "counting_order", "bucket_sort"]


@kernel("Tuple((float64[:], float64[:], float64[:], float64[:], int64))(float64[:], float64[:], float64[:], "
        "float64[:], float64[:], float64[:], float64[:], float64[:], float64)")
def product_step(v_dn, v_up, lp, le, add, add_err, glp, gle, cut):
    """The joint atoms of the previous atoms (value enclosures ``[v_dn, v_up]``, log
    probabilities ``lp`` with log errors ``le``) and one group's entries (values ``add`` within
    ``add_err``, logs ``glp`` within ``gle``) whose log ``lp + glp`` is at least ``cut``; and
    how many pairs fell below it.  Each value is widened by its rounding (``2·EPS64`` relative
    per sum), as in :func:`~exactdp.engine.coarse_split.coarse_atoms`."""
    n = lp.shape[0]
    m = glp.shape[0]
    count = 0
    for i in range(n):
        li = lp[i]
        for j in range(m):
            if li + glp[j] >= cut:
                count += 1
    o_dn = np.empty(count)
    o_up = np.empty(count)
    o_lp = np.empty(count)
    o_le = np.empty(count)
    k = 0
    for i in range(n):
        li = lp[i]
        for j in range(m):
            tot = li + glp[j]
            if tot >= cut:
                dn = v_dn[i] + (add[j] - add_err[j])
                up = v_up[i] + (add[j] + add_err[j])
                o_dn[k] = dn - 2.0 * EPS64 * abs(dn)
                o_up[k] = up + 2.0 * EPS64 * abs(up)
                o_lp[k] = tot
                o_le[k] = le[i] + gle[j]
                k += 1
    return o_dn, o_up, o_lp, o_le, n * m - count


@kernel("int64[:](float64[:], int64[:])")
def stable_repair(mid, idx):
    """``idx`` (a permutation sorted by a non-decreasing function of ``mid``) put in the order
    of ``(mid[i], i)`` by insertion: the stable argsort of ``mid``.  Only entries whose
    quantised keys tie are out of order, so this is linear in practice."""
    n = idx.shape[0]
    out = idx.copy()
    key = np.empty(n)
    for r in range(n):
        key[r] = mid[out[r]]
    for r in range(1, n):
        kv = key[r]
        iv = out[r]
        s = r - 1
        while s >= 0 and (key[s] > kv or (key[s] == kv and out[s] > iv)):
            key[s + 1] = key[s]
            out[s + 1] = out[s]
            s -= 1
        key[s + 1] = kv
        out[s + 1] = iv
    return out


@kernel("int64(float64, float64, float64, int64)")
def cell_of(x, g0, inv, ncell):
    """``⌊(x − g₀)·inv⌋`` clipped to ``0 .. ncell − 1`` (a non-decreasing function of x; NaN → 0)."""
    f = (x - g0) * inv
    if not f >= 0.0:
        return 0
    if f >= ncell - 1.0:
        return ncell - 1
    return int(f)


@kernel("Tuple((int64[:], int64[:]))(int64[:], int64)")
def counting_order(ids, m):
    """``(order, start)``: the indices listed by id (stable; ids in ``0 .. m − 1``) and where
    each id's run starts (``m + 1`` entries)."""
    n = ids.shape[0]
    start = np.zeros(m + 1, dtype=np.int64)
    for i in range(n):
        start[ids[i] + 1] += 1
    for c in range(m):
        start[c + 1] += start[c]
    fill = start[:m].copy()
    order = np.empty(n, dtype=np.int64)
    for i in range(n):
        c = ids[i]
        order[fill[c]] = i
        fill[c] += 1
    return order, start


@kernel("Tuple((int64[:], int64[:]))(float64[:], float64, float64, int64)")
def bucket_sort(keys, g0, inv, ncell):
    """``(order, start)``: the argsort of ``keys`` (ties in index order) and the start of each
    cell of :func:`cell_of` in it (``ncell + 1`` entries)."""
    n = keys.shape[0]
    ids = np.empty(n, dtype=np.int64)
    for i in range(n):
        ids[i] = cell_of(keys[i], g0, inv, ncell)
    order, start = counting_order(ids, ncell)
    for c in range(ncell):
        for r in range(start[c] + 1, start[c + 1]):
            iv = order[r]
            kv = keys[iv]
            s = r - 1
            while s >= start[c] and (keys[order[s]] > kv or (keys[order[s]] == kv and order[s] > iv)):
                order[s + 1] = order[s]
                s -= 1
            order[s + 1] = iv
    return order, start
