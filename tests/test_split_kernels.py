"""The tail-sum kernels of the exact split enumeration against exact rational arithmetic.

Atoms ``v = d + r/Q`` and thresholds ``y = it + r'/Q`` are exact rationals (so ties and
near-ties are real); the reference computes each atom's ``k = ⌊y − v⌋ + 1`` (strict) or
``⌈y − v⌉`` (non-strict) with Fractions and sums ``p·suffix[k − lo]`` with math.fsum.
A kernel's sum, corrected on the atoms it reports as near (by the rule it documents),
must equal the reference to rounding; no atom outside the reports may be misplaced.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import numpy as np
import pytest
from exactdp.kernels.split import NEAR_BAND, grouped_tail_sums, split_tail_sums


def _case(rng):
    Q = rng.choice([7, 1000, 2**20 + 7, 10**9 + 7])
    n = rng.randint(1, 300)
    d = [rng.randint(-20, 20) for _ in range(n)]
    r = [rng.randrange(Q) for _ in range(n)]
    p = [rng.random() ** 3 for _ in range(n)]
    lo = rng.randint(-60, -30)
    q = np.array([rng.random() for _ in range(rng.randint(40, 120))])
    suffix = np.concatenate([np.cumsum(q[::-1])[::-1], [0.0]])
    T = rng.randint(1, 40)
    thr = []
    for _ in range(T):
        it = rng.randint(-30, 30)
        # thresholds on an atom's fraction (exact ties), a hair off it, or anywhere
        kind = rng.random()
        if kind < 0.3:
            ft = Fraction(rng.choice(r), Q)
        elif kind < 0.5:
            ft = Fraction(rng.choice(r), Q) + Fraction(rng.choice([-1, 1]), Q * 10**6)
        else:
            ft = Fraction(rng.randrange(Q), Q)
        thr.append((it, min(max(ft, Fraction(0)), Fraction(Q - 1, Q))))
    return Q, d, r, p, lo, suffix, thr


def _reference(Q, d, r, p, lo, suffix, it, ft, strict):
    N = suffix.size - 1
    terms = []
    for di, ri, pi in zip(d, r, p):
        y = it + ft - di - Fraction(ri, Q)
        k = math.floor(y) + 1 if strict else math.ceil(y)
        idx = k - lo
        terms.append(0.0 if idx >= N else pi * float(suffix[max(idx, 0)]))
    return math.fsum(terms)


def _exact_k(Q, d, r, it, ft, j, strict):
    y = it + ft - d[j] - Fraction(r[j], Q)
    return math.floor(y) + 1 if strict else math.ceil(y)


def _at(suffix, lo, k):
    idx = k - lo
    return 0.0 if idx >= suffix.size - 1 else float(suffix[max(idx, 0)])


@pytest.mark.parametrize("seed", range(6))
def test_grouped_kernel_equals_exact_arithmetic(seed):
    rng = random.Random(seed)
    for _ in range(40):
        Q, d, r, p, lo, suffix, thr = _case(rng)
        thr = [(it, ft) for it, ft in thr if NEAR_BAND <= float(ft) <= 1 - NEAR_BAND]
        if not thr:
            continue
        thr.sort(key=lambda x: float(x[1]))
        f = np.array([ri / Q for ri in r])
        order = np.lexsort((f, np.array(d)))
        ds, fs, ps = np.array(d)[order], f[order], np.array(p)[order]
        cut = np.flatnonzero(np.diff(ds)) + 1
        starts = np.concatenate(([0], cut, [ds.size])).astype(np.int64)
        fts = np.array([float(ft) for _, ft in thr])
        its = np.array([it for it, _ in thr], dtype=np.int64)
        for strict in (True, False):
            near = np.zeros((len(thr), 400), dtype=np.int64)
            sums, cnt = grouped_tail_sums(starts, ds[starts[:-1]].astype(np.int64), fs, ps, suffix, lo, fts, its,
                                          strict, near)
            for t, (it, ft) in enumerate(thr):
                tot = float(sums[t])
                for qpos in near[t, :cnt[t]]:
                    below = fs[qpos] <= fts[t] if strict else fs[qpos] < fts[t]
                    k_f = it - int(ds[qpos]) + (1 if below else 0)
                    k_x = _exact_k(Q, d, r, it, ft, int(order[qpos]), strict)
                    tot += float(ps[qpos]) * (_at(suffix, lo, k_x) - _at(suffix, lo, k_f))
                ref = _reference(Q, d, r, p, lo, suffix, it, ft, strict)
                assert abs(tot - ref) <= 1e-13 * max(ref, 1e-300) + 1e-300, (seed, strict, it, ft, tot, ref)


@pytest.mark.parametrize("seed", range(3))
def test_one_pass_kernel_equals_exact_arithmetic(seed):
    rng = random.Random(100 + seed)
    for _ in range(40):
        Q, d, r, p, lo, suffix, thr = _case(rng)
        ints = np.array(d, dtype=np.int64)
        fr = np.array([ri / Q for ri in r])
        fts = np.array([float(ft) for _, ft in thr])
        its = np.array([it for it, _ in thr], dtype=np.int64)
        for strict in (True, False):
            near = np.zeros((len(thr), 400), dtype=np.int64)
            sums, cnt = split_tail_sums(ints, fr, np.array(p), suffix, lo, fts, its, strict, near)
            for t, (it, ft) in enumerate(thr):
                tot = float(sums[t])
                for j in near[t, :cnt[t]]:
                    g = fts[t] - fr[j]
                    k_f = it - int(ints[j]) + math.floor(g) + (1 if strict or g - math.floor(g) > 0 else 0)
                    k_x = _exact_k(Q, d, r, it, ft, int(j), strict)
                    tot += p[j] * (_at(suffix, lo, k_x) - _at(suffix, lo, k_f))
                ref = _reference(Q, d, r, p, lo, suffix, it, ft, strict)
                assert abs(tot - ref) <= 1e-13 * max(ref, 1e-300) + 1e-300, (seed, strict, it, ft, tot, ref)
