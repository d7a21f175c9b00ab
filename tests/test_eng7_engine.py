"""Issue 14 (eng7): the engine's Python around the quadrature kernels, same bits.

* :func:`frac_parts` with ``exact`` (exact f for some groups only) against a brute-force
  split in Fractions (``Fraction.__round__``, ``float(Fraction)``), nothing of the engine;
* the certified flags :meth:`QuadratureTails.weighted_list_ok` hands up (vectorised for
  the float path) against :func:`certified` of each value, on designs off the DHC regime
  (tiny σ² 1/1000, huge σ² 10⁷, far thresholds with mp logs, values that cannot be
  certified);
* a tilt recomputed after eviction (an LRU of one) gives the same bits as a kept one;
* :func:`tail_queries` and the complement of :class:`TailEngine` against the former
  per-value code, frozen here.
"""

from __future__ import annotations

import math
from fractions import Fraction

import pytest

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery
from exactdp.engine.tails import TailEngine
from exactdp.engine.tilt import frac_parts
from exactdp.engine.values import certified, tail_queries, tail_value
from exactdp.numerics.precision import EPS64

DESIGNS = {
    "tiny-s2": ((1, 3), (5, 2), (Fraction(1, 1000), Fraction(7, 2))),
    "huge-s2": ((1, 2), (3, 1), (Fraction(10**7), Fraction(5, 3))),
    "mixed": ((1, 2, 5), (4, 3, 2), (Fraction(1, 3), Fraction(20), Fraction(2))),
}


def _lattice(name):
    w, c, s2 = DESIGNS[name]
    return LatticeSum(w, c, s2, Fraction(1), Fraction(0), 0)


def _queries(vproxy):
    sd = math.sqrt(vproxy)
    thr = sorted({max(1, int(round(x * sd))) for x in (0.3, 1, 2.5, 6, 40, 1e4)} | {10**7})
    qs = [WeightedQuery(k, -math.inf, 0.0, 1.0) for k in thr]
    qs += [WeightedQuery(k, x0, x0 + b, b) for k in thr for x0, b in ((-0.3, 0.5), (-2.0, 3.0))]
    return qs


def _bits(tv):
    lv = tv.log_value
    return (tv.threshold, lv.hex() if isinstance(lv, float) else repr(lv), tv.rel_error.hex(), tv.method,
            tv.nodes_kept, tv.nodes_total, tv.lam.hex())


@pytest.mark.parametrize("lam", [Fraction(0), Fraction(1, 3), Fraction(0.0123456789), Fraction(-7, 2),
                                 Fraction(10**30 + 1, 3), Fraction(5, 2**70)])
def test_frac_parts_exact_subset_is_the_brute_force_split(lam):
    weights = (1, 3, 2**40 + 1, 7)
    s2q = (Fraction(1, 1000), Fraction(7, 2), Fraction(10**7), Fraction(1, 2))
    for exact in (None, {0, 3}, set()):
        n0, ff, fq = frac_parts(weights, s2q, lam, exact)
        for g, (a, s2) in enumerate(zip(weights, s2q)):
            mu = a * s2 * lam
            n = round(mu)  # half to even
            assert n0[g] == n
            assert ff[g] == float(mu - n) and math.copysign(1, ff[g]) == math.copysign(1, float(mu - n))
            assert fq[g] == (mu - n if exact is None or g in exact else None)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_flags_are_certified_and_values_survive_eviction(name):
    lat = _lattice(name)
    q = QuadratureTails(lat)
    qs = _queries(q.vproxy)
    vals, flags = q.weighted_list_ok(qs)
    assert flags == [v is not None and certified(v, q.rel_tol) for v in vals]
    assert any(flags) and len(vals) == len(qs)
    strict = QuadratureTails(lat, rel_tol=1e-300)  # nothing certifiable: every flag False
    got, no = strict.weighted_list_ok(qs[:6])
    assert no == [certified(v, 1e-300) for v in got] == [False] * 6
    # an LRU of one tilt: every tilt recomputed; the values are the same bits
    lru1 = QuadratureTails(lat)
    lru1._sieve(0).max_tilts = lru1._sieve(1).max_tilts = 1
    again = lru1.weighted_list([x for pair in zip(qs, reversed(qs)) for x in pair])
    ref = dict(zip(qs, vals))
    for x, tv in zip([x for pair in zip(qs, reversed(qs)) for x in pair], again):
        assert _bits(tv) == _bits(ref[x]), x
    # the prior is kept unless the rule does strictly better
    worse = [tail_value(x.threshold, -1.0, 0.5, "prior", 0, 0, 0.0) for x in qs]
    best, ok = QuadratureTails(lat).weighted_list_ok(qs, worse)
    assert ok == [certified(v, q.rel_tol) for v in best]
    assert all(b is w or b.rel_error < w.rel_error for b, w in zip(best, worse))


def test_tail_queries_are_tail_queries():
    got = tail_queries([1, 5, 10**30])
    ref = [WeightedQuery(s, -math.inf, 0.0, 1.0) for s in (1, 5, 10**30)]
    assert got == ref and [hash(x) for x in got] == [hash(x) for x in ref]


def _complement_former(tv):
    """TailEngine._complement as it was (the per-value code), frozen as the reference."""
    lv = float(tv.log_value)
    p = math.exp(lv)
    q = -math.expm1(lv)
    err = (tv.rel_error * p + 2 * EPS64) / q if q > 0 else math.inf
    return (1 - tv.threshold, math.log(q) if q > 0 else -math.inf, err, tv.method + "+complement", tv.nodes_kept,
            tv.nodes_total, tv.lam)


def test_complements_are_the_former_ones():
    eng = TailEngine(_lattice("tiny-s2"))
    thr = [-40, -3, 0, 1, 2, 7, -7]
    got = eng.tails(thr, strict=False)
    ups = eng.tails([1 - s if s <= 0 else s for s in thr], strict=False)
    for s, tv, up in zip(thr, got, ups):
        if s <= 0:
            assert (tv.threshold, tv.log_value, tv.rel_error, tv.method, tv.nodes_kept, tv.nodes_total,
                    tv.lam) == _complement_former(up)
        else:
            assert tv is up or _bits(tv) == _bits(up)
    for lv in (0.0, -1e-300, -math.inf):  # p = 1 (no complement), p ≈ 1, p = 0
        up = tail_value(3, lv, 1e-12, "m", 1, 2, 0.5)
        c = TailEngine._complement(up)
        assert (c.threshold, c.log_value, c.rel_error, c.method) == _complement_former(up)[:4]
