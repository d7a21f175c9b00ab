"""The resonance sieve: every frequency where all families' factors can be large at once.

Frequencies are measured in cycles, ``v = u/2π ≥ 0``.  Family f (unit a_f, see
:mod:`exactdp.engine.families`) contributes the factor bound ``exp(−pen_f(ψ_f))`` with
``ψ_f = a_f v mod 1`` and ``pen_f(ψ) = Σ_{g∈f} pen_g(dist(n_g ψ, ℤ))`` (each term ≥ 0), so a
frequency whose partial sum over *any* subset of families exceeds T has an integrand
below ``e^{−T}`` and may be dropped.  The sieve is an outer approximation built in
three certified steps:

1. **arcs** (:func:`family_arcs`): ``{ψ : pen_f(ψ) ≤ T}`` covered by finitely many
   intervals, by branch and bound on ψ ∈ [0, 1/2] with exact interval lower bounds
   (``dist(nψ, ℤ)`` is 0 on an interval containing an integer and otherwise smallest at an
   endpoint; pen_g is increasing in the distance).
2. **generation** (:func:`windows`): for two families f1, f2 with ``a_2/a_1 = p/q``,
   ``v = (j + α)/a_1`` with α in an arc of f1 meets an arc J of f2 iff
   ``(p·j mod q)/q ∈ J − (p/q)·I (mod 1)``; the j ∈ [0, a_1·V] satisfying this are
   enumerated *output-sensitively* by :func:`first_hit` (the least x ≥ 0 with
   ``(a x + b) mod m`` in a range, a Euclid-type recursion in O(log m)), so a lattice of
   any size costs only the number of true coincidences.
3. **filters**: every other family refines the window in exact rational phase arithmetic.

4. **sum test** (:func:`window_nodes`): branch and bound inside every window on the
   *sum* of all groups' interval lower bounds, down to runs of a few nodes.

The caller then checks every node of every window against all groups (exact phases).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from exactdp.engine.families import Family, log_d, penalty_arrays
from exactdp.kernels.smoothed import interval_penalty

__all__ = ["family_arcs", "generation_plan", "first_hit", "hits", "windows", "window_nodes", "TooManyResonances", "MAX_HITS"]

#: refuse (rather than run for hours) when the generation step expects more coincidences
MAX_HITS = 400_000
#: widening of every floating interval of the sieve (cycles): keeping more is always safe
PAD = 1e-12


class TooManyResonances(ArithmeticError):
    """The design has too many near-resonances in the frequency range for the sieve."""


_ARCS: dict = {}


def _arcs_key(fam: Family, T: float) -> tuple:
    return (tuple(int(x) for x in fam.multipliers), tuple(float(g.sigma2) for g in fam.groups),
            tuple(int(g.count) for g in fam.groups), float(T), fam.vproxy)


def _arcs_compute(mults: tuple, s2s: tuple, counts: tuple, T: float, vproxy: float):
    lo = np.array([0.0])
    hi = np.array([0.5])
    width = max(math.sqrt(2 * T / max(vproxy, 1e-300)) / (2 * math.pi) / 16.0, 1e-13)
    leaves = []
    n = np.array(mults, dtype=float)
    s2a = np.array(s2s, dtype=float)
    ma = np.array(counts, dtype=np.int64)
    logd = np.array([log_d(x) for x in s2a])
    for _ in range(200):
        if lo.size == 0:
            break
        if lo.size > 400_000:
            return None
        lb = interval_penalty(np.ascontiguousarray(np.outer(n, lo)), np.ascontiguousarray(np.outer(n, hi)),
                              s2a, ma, logd)
        keep = lb <= T
        lo, hi = lo[keep], hi[keep]
        small = (hi - lo) <= width
        leaves.append(np.stack([lo[small], hi[small]], axis=1))
        lo, hi = lo[~small], hi[~small]
        mid = 0.5 * (lo + hi)
        lo, hi = np.concatenate([lo, mid]), np.concatenate([mid, hi])
    if lo.size:
        return None
    allv = np.concatenate(leaves) if leaves else np.zeros((0, 2))
    allv = allv[np.argsort(allv[:, 0])]
    arcs = _merge_sorted(allv[:, 0], allv[:, 1], 1e-15)
    covered = sum(b - a for a, b in arcs)
    if covered >= 0.45 or len(arcs) > 20_000:
        return None
    return tuple((max(a - PAD, 0.0), min(b + PAD, 0.5)) for a, b in arcs)


def _merge_sorted(lo: np.ndarray, hi: np.ndarray, tol: float) -> list:
    """Union of intervals sorted by start: an interval starting at or before the running
    end (+ tol) of the previous ones joins them.  Returns [(start, end), ...]."""
    if lo.size == 0:
        return []
    run = np.maximum.accumulate(hi)
    first = np.concatenate([[True], lo[1:] > run[:-1] + tol])
    starts = np.flatnonzero(first)
    ends = np.concatenate([starts[1:], [lo.size]]) - 1
    return list(zip(lo[starts].tolist(), run[ends].tolist()))


def family_arcs(fam: Family, T: float):
    """Arcs ``(lo, hi) ⊂ [0, 1/2]`` covering ``{ψ : pen_f(ψ) ≤ T}`` (the set is symmetric
    under ψ ↦ −ψ), or ``None`` when the family constrains too little to be a sieve."""
    key = _arcs_key(fam, T)
    if key not in _ARCS:
        if len(_ARCS) > 512:
            _ARCS.pop(next(iter(_ARCS)))
        _ARCS[key] = _arcs_compute(*key)
    return _ARCS[key]


@functools.lru_cache(maxsize=256)
def _symmetric(arcs: tuple) -> tuple:
    """The arcs of [0, 1/2] and their mirror images as sorted intervals of (−1/2, 1/2]
    (an interval starting at or before the running end of the previous ones is merged
    into them; the arcs are sorted by start)."""
    if not arcs:
        return ()
    a = np.asarray(arcs, dtype=float).reshape(-1, 2)
    return tuple(_merge_sorted(np.concatenate([-a[::-1, 1], a[:, 0]]), np.concatenate([-a[::-1, 0], a[:, 1]]), 0.0))


def _min_x(a: int, m: int, lo: int, hi: int):
    """Least x ≥ 0 with ``lo ≤ (a·x) mod m ≤ hi`` (0 ≤ lo ≤ hi < m), or None."""
    if lo == 0:
        return 0
    a %= m
    if a == 0:
        return None
    x = -(-lo // a)
    if a * x <= hi:
        return x
    # a·x − m·y ∈ [lo, hi] with y ≥ 1  ⇔  (m·y) mod a ∈ [(−hi) mod a, (−lo) mod a]
    y = _min_x(m % a, a, (-hi) % a, (-lo) % a)
    if y is None:
        return None
    x = -(-(lo + m * y) // a)
    return x if a * x - m * y <= hi else None


def first_hit(a: int, b: int, m: int, lo: int, hi: int):
    """Least x ≥ 0 with ``(a·x + b) mod m ∈ [lo, hi]`` (integers, 0 ≤ lo ≤ hi < m), or None."""
    a, b = a % m, b % m
    lo2, hi2 = (lo - b) % m, (hi - b) % m
    if lo2 <= hi2:
        return _min_x(a, m, lo2, hi2)
    cands = [x for x in (_min_x(a, m, lo2, m - 1), _min_x(a, m, 0, hi2)) if x is not None]
    return min(cands) if cands else None


def hits(a: int, b: int, m: int, lo: int, hi: int, xmax: int):
    """All x in [0, xmax] with ``(a·x + b) mod m`` in the cyclic range [lo, hi] (ascending)."""
    if hi - lo + 1 >= m:
        yield from range(xmax + 1)
        return
    lo, hi = lo % m, hi % m
    start = 0
    while start <= xmax:
        x = first_hit(a, b + a * start, m, lo, hi) if lo <= hi else _wrap_hit(a, b + a * start, m, lo, hi)
        if x is None or start + x > xmax:
            return
        yield start + x
        start += x + 1


def _wrap_hit(a, b, m, lo, hi):
    cands = [x for x in (first_hit(a, b, m, lo, m - 1), first_hit(a, b, m, 0, hi)) if x is not None]
    return min(cands) if cands else None


def _arcs01(sym) -> tuple:
    """Arcs of (−1/2, 1/2] as sorted intervals of [0, 2) (two turns, for wrap-around)."""
    one = sorted((a % 1.0, a % 1.0 + (b - a)) for a, b in sym)
    both = one + [(a + 1.0, b + 1.0) for a, b in one]
    return [a for a, _ in both], [b for _, b in both]


def _dd_of(x: Fraction):
    f = x - math.floor(x)
    h = float(f)
    return h, float(f - Fraction(h))


def _refine_all(ratio: Fraction, js, lo, hi, arcs01, dd_frac):
    """Vectorised refinement: the α pieces of [lo, hi] (arrays, one row per candidate j)
    whose phase ``ratio·(j + α) mod 1`` lies in the arcs; returns (rows, lo, hi)."""
    starts, ends = np.asarray(arcs01[0]), np.asarray(arcs01[1])
    hi_d, lo_d = _dd_of(ratio)
    base = dd_frac(js, hi_d, lo_d) % 1.0
    r = float(ratio)
    x0 = base + r * lo
    x1 = base + r * hi
    wide = (x1 - x0) >= 1.0
    sh = np.floor(x0)
    x0, x1 = x0 - sh, x1 - sh
    # rounding of base (dd, ≤ 2^-50) and of r·α: widen by a relative slack as well
    # (the computed phase of α is x0 + r(α − lo), off by less than the slack); the arcs
    # are met on the widened interval and mapped back to α widened by slack/r
    slack = 2 * PAD + 4 * 2.0**-52 * (np.abs(x0) + np.abs(x1) + 1.0)
    x0w, x1w = x0 - slack, x1 + slack
    k0 = np.searchsorted(ends, x0w, side="left")
    k1 = np.searchsorted(starts, x1w, side="right")
    cnt = np.where(wide, 1, np.maximum(k1 - k0, 0))
    rows = np.repeat(np.arange(js.size), cnt)
    off = np.arange(rows.size) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    k = np.minimum(k0[rows] + off, starts.size - 1)
    s0 = np.maximum(starts[k], x0w[rows])
    s1 = np.minimum(ends[k], x1w[rows])
    da = (slack[rows] + PAD) / r
    nlo = lo[rows] + (s0 - x0[rows]) / r - da
    nhi = lo[rows] + (s1 - x0[rows]) / r + da
    w = wide[rows]
    nlo = np.where(w, lo[rows], np.maximum(nlo, lo[rows]))
    nhi = np.where(w, hi[rows], np.minimum(nhi, hi[rows]))
    ok = nlo <= nhi
    return rows[ok], nlo[ok], nhi[ok]


def generation_plan(families, arcs, v_max: float) -> tuple:
    """(expected candidates, f1, f2 or None) of the cheapest generation (see :func:`windows`)."""
    sieving = [i for i, a in enumerate(arcs) if a is not None]
    if not sieving:
        return math.inf, None, None
    sym = {i: _symmetric(arcs[i]) for i in sieving}
    widths = {i: np.array([b - a for a, b in sym[i]]) for i in sieving}
    best = None
    for f1 in sieving:
        J1 = float(families[f1].unit) * v_max
        cost = J1 * len(sym[f1])
        if best is None or cost < best[0]:
            best = (cost, f1, None)
        for f2 in sieving:
            if f2 == f1:
                continue
            r = float(families[f2].unit / families[f1].unit)
            w1, w2 = widths[f1], widths[f2]
            if w1.size * w2.size <= 2_000_000:
                cost = J1 * float(np.minimum(1.0, w2[None, :] + r * w1[:, None]).sum())
            else:  # the same sum without the cap at 1 (an upper bound), in O(n1 + n2)
                cost = J1 * min(float(w1.size * w2.size), float(w1.size * w2.sum() + r * w2.size * w1.sum()))
            if cost < best[0]:
                best = (cost, f1, f2)
    return best


def windows(families, arcs, v_max: float, T: float, dd_frac):
    """Candidate windows ``(js, α_lo, α_hi, unit)``: frequencies ``v = (j + α)/unit``, α in
    [α_lo, α_hi], covering every v ∈ [0, v_max] at which each sieving family's penalty
    is ≤ T (``arcs[i]`` from :func:`family_arcs`, None for non-sieving families).

    Raises
    ------
    TooManyResonances
        When the expected number of coincidences exceeds :data:`MAX_HITS`.
    """
    cost, f1, f2 = generation_plan(families, arcs, v_max)
    if cost > MAX_HITS:
        raise TooManyResonances(f"about {cost:.3g} candidate resonances below frequency {v_max:.3g}")
    sieving = [i for i, a in enumerate(arcs) if a is not None]
    sym = {i: _symmetric(arcs[i]) for i in sieving}
    arcs01 = {i: _arcs01(sym[i]) for i in sieving}
    a1 = families[f1].unit
    jmax = int(math.floor(a1 * Fraction(v_max))) + 1
    js, los, his = [], [], []
    if f2 is None:
        for a, b in sym[f1]:
            js.extend(range(jmax + 1))
            los.extend([a] * (jmax + 1))
            his.extend([b] * (jmax + 1))
    else:
        ratio = families[f2].unit / a1
        p, q = ratio.numerator, ratio.denominator
        for a, b in sym[f1]:
            fa, fb = Fraction(a), Fraction(b)
            for c, d in sym[f2]:
                lo_f = Fraction(c) - ratio * fb
                hi_f = Fraction(d) - ratio * fa
                lo_i, hi_i = math.ceil(lo_f * q) - 1, math.floor(hi_f * q) + 1
                for j in hits(p, 0, q, lo_i, hi_i, jmax):
                    js.append(j)
                    los.append(a)
                    his.append(b)
                    if len(js) > 4 * MAX_HITS:  # inside the loop: one arc pair may cover every j
                        raise TooManyResonances("too many candidate resonances")
    js = np.array(js, dtype=np.int64)
    lo = np.array(los, dtype=float)
    hi = np.array(his, dtype=float)
    for f in sieving:
        if f == f1 or js.size == 0:
            continue
        rows, lo, hi = _refine_all(families[f].unit / a1, js, lo, hi, arcs01[f], dd_frac)
        js = js[rows]
    keep = (js + hi) >= 0
    return js[keep], lo[keep], hi[keep], a1


def window_nodes(groups, wins, T: float, period: int, sk2: float, n_max: int, dd_frac, level=None) -> np.ndarray:
    """Node indices n ∈ [0, n_max] (frequency v = n/period) of the windows that can have
    a total penalty ≤ T: branch and bound on α inside each window with the sum over all
    groups of interval lower bounds (plus the Gaussian factor's ``s²u²/2``), down to
    runs of ≤ 32 nodes.  ``dd_frac(js, hi, lo)`` returns frac(j·τ) in [−1/2, 1/2) for
    ``τ ≈ hi + lo`` (double-double, error ≤ 2^-50 cycles); ``wins`` from :func:`windows`.
    """
    js, lo, hi, unit = wins
    if js.size == 0:
        return np.zeros(0, dtype=np.int64)
    win = np.arange(js.size)
    base = []
    ratios = []
    for g in groups:
        r = g.weight / unit
        f = r - math.floor(r)
        h = float(f)
        base.append(dd_frac(js, h, float(f - Fraction(h))))
        ratios.append(float(r))
    base = np.array(base)  # groups × windows
    a1 = float(unit)
    jf = js.astype(float)
    s2a, ma, logd = penalty_arrays(groups)
    chunks = []
    for _ in range(200):
        if lo.size == 0:
            break
        rr = np.array(ratios)[:, None]
        bw = base[:, win]
        lb = interval_penalty(np.ascontiguousarray(bw + rr * lo), np.ascontiguousarray(bw + rr * hi), s2a, ma, logd)
        v_lo = np.maximum((jf[win] + lo) / a1, 0.0)
        lb += 0.5 * sk2 * (2 * math.pi * v_lo * (1 - 1e-12)) ** 2
        if level is None:
            keep = lb <= T
        else:  # the level at the window's last node (levels do not decrease with n)
            keep = lb <= level(np.ceil((jf[win] + hi) / a1 * period) + 2)
        lo, hi, win = lo[keep], hi[keep], win[keep]
        nodes_span = (hi - lo) / a1 * period
        small = nodes_span <= 32
        chunks.append((win[small], lo[small], hi[small]))
        lo, hi, win = lo[~small], hi[~small], win[~small]
        mid = 0.5 * (lo + hi)
        lo, hi, win = np.concatenate([lo, mid]), np.concatenate([mid, hi]), np.concatenate([win, win])
    if lo.size:
        raise TooManyResonances("the window refinement did not converge")
    if not chunks:
        return np.zeros(0, dtype=np.int64)
    w_idx = np.concatenate([c[0] for c in chunks])
    l_arr = np.concatenate([c[1] for c in chunks])
    h_arr = np.concatenate([c[2] for c in chunks])
    # node ranges in float (relative error ~1e-16 of n < 2^53: a margin of 3 nodes covers it)
    scale = float(Fraction(period) / unit)
    jj = js[w_idx].astype(float)
    n0 = np.maximum(np.floor((jj + l_arr) * scale) - 3, 0).astype(np.int64)
    n1 = np.minimum(np.ceil((jj + h_arr) * scale) + 3, n_max).astype(np.int64)
    ok = n1 >= n0
    n0, n1 = n0[ok], n1[ok]
    if n0.size == 0:
        return np.zeros(0, dtype=np.int64)
    # union of the ranges [n0, n1]
    order = np.argsort(n0, kind="stable")
    n0, n1 = n0[order], np.maximum.accumulate(n1[order])
    starts = np.concatenate([[True], n0[1:] > n1[:-1] + 1])
    s0 = n0[starts]
    e1 = np.concatenate([n1[np.flatnonzero(starts)[1:] - 1], n1[-1:]])
    lens = e1 - s0 + 1
    return (np.repeat(s0 - np.cumsum(np.concatenate([[0], lens[:-1]])), lens) + np.arange(lens.sum())).astype(np.int64)
