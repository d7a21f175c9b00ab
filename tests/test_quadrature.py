"""The engine's tilted-trapezoid tails (``engine/quadrature.py``, ``engine/tails.py``).

References: brute-force enumeration (tests/harness.py) for the tails, left thresholds and
complements; mpmath for a complement's bound; Fraction arithmetic for the split of the
tilted centres.  And the engine's own routes against each other where a number must not
depend on the route: batch against single queries (a value must not depend on its batch
or on what was asked before), many tilts finished in one kernel call against one call per
tilt, the kernel path against the scalar Python path, a tilt kept against one recomputed
after eviction — on designs off the DHC regime: a tiny-σ² group (1/1000), a huge-σ² group
(10⁷), a mixed design; thresholds from the centre to far right (mp logs, 10¹⁹ beyond the
float path), plain tails and hockey-stick sums.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from exactdp.kernels.quadfinish import FINISH_PYTHON, GRID_PYTHON, finish_tilts, finish_values

from exactdp.engine import quadbatch, quadrature
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery
from exactdp.engine.tails import TailEngine
from exactdp.engine.tilt import frac_parts
from exactdp.engine.values import certified, tail_queries, tail_value

from harness import tail_brute

DESIGNS = {
    "tiny-s2": ((1, 3), (5, 2), (Fraction(1, 1000), Fraction(7, 2))),
    "huge-s2": ((1, 2), (3, 1), (Fraction(10**7), Fraction(5, 3))),
    "mixed": ((1, 2, 5), (4, 3, 2), (Fraction(1, 3), Fraction(20), Fraction(2))),
}
HS = ((-0.3, 0.5), (-1e-3, 0.01), (-2.0, 3.0))


def _lattice(name):
    w, c, s2 = DESIGNS[name]
    return LatticeSum(w, c, s2, Fraction(1), Fraction(0), 0)


def _queries(vproxy, mults=(0.3, 1, 2.5, 6, 15, 40), extra=(1, 2, 10**7), hs=HS):
    sd = math.sqrt(vproxy)
    thr = sorted({int(round(x * sd)) for x in mults} | set(extra))
    qs = [WeightedQuery(k, -math.inf, 0.0, 1.0) for k in thr if k >= 1]
    qs += [WeightedQuery(k, x0, x0 + b, b) for k in thr for x0, b in hs]
    return qs


def _bits(tv):
    lv = tv.log_value
    return (tv.threshold, type(lv).__name__, lv.hex() if isinstance(lv, float) else repr(lv), tv.rel_error.hex(),
            type(tv.rel_error).__name__, tv.method, tv.nodes_kept, tv.nodes_total, tv.lam.hex())


# ------------------------------------------------------------------ against brute force
def test_tails_left_and_right_against_enumeration():
    """P[S ≥ s] for s left of the centre (complements of right tails), at it and right of
    it: the certified bracket contains the enumerated value."""
    w, c, s2 = DESIGNS["tiny-s2"]
    parts = [(a, v) for a, m, v in zip(w, c, s2) for _ in range(m)]
    eng = TailEngine(_lattice("tiny-s2"))
    thr = [-40, -7, -3, 0, 1, 2, 7, 40]
    for s, tv in zip(thr, eng.tails(thr, strict=False)):
        assert eng.done(tv), s
        ref = tail_brute(parts, s, depth=300)
        with mpmath.workdps(40):
            v = mpmath.exp(tv.log_mp)
            assert abs(v - ref) <= mpmath.mpf(tv.rel_error) * v * (1 + mpmath.mpf(10) ** -12), (s, v, ref)
        assert (s <= 0) == tv.method.endswith("+complement")


def test_tails_in_any_order_with_repeats_against_enumeration():
    """A batch of thresholds in any order, repeated, both sides of the centre and far
    (mp logs): each value is the one its threshold gets alone (bit for bit; a left one
    is the complement of its mirror tail, ``_complement``), and each bracket within
    the enumeration's reach contains the enumerated value."""
    w, c, s2 = DESIGNS["tiny-s2"]
    parts = [(a, v) for a, m, v in zip(w, c, s2) for _ in range(m)]
    eng = TailEngine(_lattice("tiny-s2"))
    thr = [7, -3, 0, 7, -3, 1, -40, 0, 40, 10**7, 1 - 10**7]
    got = eng.tails(thr, strict=False)
    asked = dict.fromkeys(thr + [1 - s for s in thr if s <= 0])
    alone = {s: TailEngine(_lattice("tiny-s2")).tails([s], strict=False)[0] for s in asked}
    for s, tv in zip(thr, got):
        assert _bits(tv) == _bits(alone[s]), s
        if s <= 0:
            assert _bits(tv) == _bits(TailEngine._complement(alone[1 - s])), s
        assert eng.done(tv), s
        if abs(s) < 1000:  # the enumeration (factors to e^-300) reaches these
            ref = tail_brute(parts, s, depth=300)
            with mpmath.workdps(40):
                v = mpmath.exp(tv.log_mp)
                assert abs(v - ref) <= mpmath.mpf(tv.rel_error) * v * (1 + mpmath.mpf(10) ** -12), (s, v, ref)


def _hexes(x):
    return x.hex() if isinstance(x, float) else repr(x)


@pytest.mark.parametrize("name", ["tiny-s2", "mixed", "huge-s2"])
@pytest.mark.parametrize("fractions", [False, True])
def test_tail_floats_are_the_tails_fields_against_enumeration(name, fractions, monkeypatch):
    """``tail_floats`` (the trade-off's float path, no TailValue) gives the ``log_value`` and
    ``rel_error`` of ``tails`` bit for bit, in any order with repeats, both sides of the
    centre, far (mp logs: the fallback to ``tails``) or not; on the design the enumeration
    reaches (σ² ≤ 7/2), each bracket contains the enumerated value.  ``fractions``: the tilts keyed by
    the same rationals as Fractions (``plain_floats``' grouping by dict, values put back in
    threshold order)."""
    w, c, s2 = DESIGNS[name]
    parts = [(a, v) for a, m, v in zip(w, c, s2) for _ in range(m)]
    eng = TailEngine(_lattice(name))
    sd = math.sqrt(eng.vproxy)
    near = sorted({int(round(x * sd)) for x in (-6, -2.5, -1, -0.3, 0, 0.3, 1, 2.5, 6)})
    if fractions:
        grid = QuadratureTails._grid_lams
        monkeypatch.setattr(QuadratureTails, "_grid_lams",
                            lambda self, qs, plain=False: [Fraction(x) for x in grid(self, qs, plain)])
    for thr in (near, near[::-1] + near[:3], [5, -4, 1, 0, 5], near + [10**7]):
        logs, rels = eng.tail_floats(thr)
        ref = TailEngine(_lattice(name)).tails(thr)
        assert [_hexes(x) for x in logs] == [_hexes(tv.log_value) for tv in ref], thr
        assert [x.hex() for x in rels] == [tv.rel_error.hex() for tv in ref], thr
        for s, lv, rel in zip(thr, logs, rels):
            assert math.isfinite(rel) and rel <= eng.rel_tol + 1e-15  # a complement: ≤ rel + 4u
            if name == "tiny-s2" and abs(s) < 1000:  # the enumeration (factors to e^-300) reaches these
                with mpmath.workdps(40):
                    v, ref_v = mpmath.exp(mpmath.mpf(lv)), tail_brute(parts, s, depth=300)
                    assert abs(v - ref_v) <= mpmath.mpf(rel) * v * (1 + mpmath.mpf(10) ** -12), (s, v, ref_v)


def test_plain_floats_refuses_what_the_first_pass_does_not_certify():
    """``plain_floats`` answers only when every value is certified on the float path: at
    10⁷ standard deviations (an mp log) it returns None, near the centre the tails' fields."""
    q = QuadratureTails(_lattice("mixed"))
    far = np.array([int(1e7 * math.sqrt(q.vproxy))], dtype=np.int64)
    assert q.plain_floats(far) is None
    thr = np.array([1, 2, 3, 9], dtype=np.int64)
    est, rel = q.plain_floats(thr)
    ref = q.weighted_list(tail_queries(thr.tolist()))
    assert est.tolist() == [tv.log_value for tv in ref] and rel.tolist() == [tv.rel_error for tv in ref]


@pytest.mark.parametrize("lv", [-0.7, -1e-3, -1e-300, 0.0, -math.inf, -40.0])
@pytest.mark.parametrize("rel", [0.0, 1e-12, 1e-3])
def test_a_complement_brackets_one_minus_the_tail(lv, rel):
    """``1 − p`` for every p in the bracket ``e^{lv}·(1 ± rel)`` lies in the complement's
    bracket (or the complement is refused with an infinite bound)."""
    up = tail_value(3, lv, rel, "m", 1, 2, 0.5)
    c = TailEngine._complement(up)
    assert c.threshold == -2 and c.method == "m+complement"
    if not math.isfinite(c.rel_error):
        assert lv == 0.0 or rel > 0.5  # p = 1: nothing to bracket
        return
    with mpmath.workdps(50):
        q = mpmath.exp(c.log_value)
        for p in (mpmath.exp(lv) * (1 - mpmath.mpf(rel)), mpmath.exp(lv) * (1 + mpmath.mpf(rel))):
            assert abs((1 - p) - q) <= mpmath.mpf(c.rel_error) * q, (lv, rel, p, q)


# ------------------------------------------------------------------ the split of the tilted centres
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
    qs = _queries(q.vproxy, (0.3, 1, 2.5, 6, 40, 1e4), (1, 10**7), ((-0.3, 0.5), (-2.0, 3.0)))
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


def _groups(q, qs):
    lams = q._grid_lams(qs)
    by: dict = {}
    for qq, lam in zip(qs, lams):
        by.setdefault(lam, []).append(qq)
    order = sorted(by)
    return order, [by[lam] for lam in order]


def test_finish_tilts_is_finish_values_per_segment():
    q = QuadratureTails(_lattice("mixed"))
    sv = q._sieve(0)
    rng = np.random.default_rng(8)
    tilts = [q._tilt(Fraction(q.lam_step * j), sv) for j in (1, 3, 7, 20)]
    sizes = [3, 0, 1, 6]
    n = sum(sizes)
    s = rng.integers(1, 40 * int(math.sqrt(q.vproxy)), size=n).astype(np.int64)
    r = np.concatenate([rng.uniform(-0.1, 1.0, size=k) for k in sizes])
    r[2] = 0.0  # an empty sum
    aux = np.concatenate([np.repeat(t.aux, k, axis=1) for t, k in zip(tilts, sizes)], axis=1)
    aux[0, -1] += 0.25  # a column of its own
    tps = np.array([t.fin for t in tilts])
    seg = np.array(np.cumsum([0] + sizes), dtype=np.int64)
    got = finish_tilts(r, s, aux, tps, seg, q.n_nodes, q.A, q.m, q.s2, q._small_idx, q.gaussian)
    for t, (a, b) in enumerate(zip(seg[:-1], seg[1:])):
        ref = finish_values(r[a:b].copy(), s[a:b].copy(), np.ascontiguousarray(aux[:, a:b]), tps[t], q.n_nodes, q.A,
                            q.m, q.s2, q._small_idx, q.gaussian)
        for x, y in zip(got, ref):
            assert x[a:b].tobytes() == y.tobytes()


@pytest.mark.parametrize("name", sorted(DESIGNS))
@pytest.mark.parametrize("max_tilts", [1, 2, 10**6])
def test_batched_values_equal_the_per_tilt_route(name, max_tilts):
    lat = _lattice(name)
    batch = QuadratureTails(lat)
    qs = _queries(batch.vproxy, (0.2, 0.7, 1, 1.6, 2.5, 4, 6, 15, 40, 1e4), (1, 10**7, 10**19), HS[:2])
    sv = batch._sieve(0)
    sv.max_tilts = max_tilts  # a batch is cut after this many tilts
    order, groups = _groups(batch, qs)
    assert len(order) >= 6
    got = batch._values_many(sv, order, groups)
    single = QuadratureTails(lat)  # fresh: one finish_values call per tilt (the route of off-float tilts)
    sv1 = single._sieve(0)
    python_path = 0
    for lam, group, (vals, flags) in zip(order, groups, got):
        ref_vals, ref_flags = single._values_at(single._tilt(lam, sv1), group)
        assert [_bits(v) for v in vals] == [_bits(v) for v in ref_vals]
        assert list(flags) == list(ref_flags)
        python_path += sum(not isinstance(v.log_value, float) for v in vals)
    assert python_path > 0  # some values off the float path (mp logs), also in a batch
    assert any(f for _, flags in got for f in flags)


def _python_only(monkeypatch):
    """Disable the batch kernels: every threshold and value takes the scalar Python path."""
    def grid(A, m, s2, s, *args):
        return np.zeros(s.shape[0]), np.full(s.shape[0], GRID_PYTHON, dtype=np.int64)

    def finish(r, *args):
        n = r.shape[0]
        return np.zeros(n), np.zeros(n), np.full(n, FINISH_PYTHON, dtype=np.int64)

    monkeypatch.setattr(quadrature, "grid_tilts", grid)
    monkeypatch.setattr(quadrature, "finish_values", finish)
    monkeypatch.setattr(quadbatch, "finish_tilts", finish)  # the batch of many tilts


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_kernel_path_equals_python_path(name, monkeypatch):
    lat = _lattice(name)
    fast = QuadratureTails(lat)
    qs = _queries(fast.vproxy)
    calls = []
    orig = QuadratureTails._finish
    monkeypatch.setattr(QuadratureTails, "_finish", lambda self, *a: calls.append(1) or orig(self, *a))
    got = fast.weighted(qs)
    assert len(calls) < len(qs) // 2  # the kernel path answered most values
    _python_only(monkeypatch)
    calls.clear()
    slow = QuadratureTails(lat)
    ref = slow.weighted(qs)
    assert len(calls) >= len(qs)  # ... and here none
    assert set(got) == set(ref) == set(qs)
    for q in qs:
        assert _bits(got[q]) == _bits(ref[q]), q
    assert any(isinstance(got[q].log_value, float) and math.isfinite(got[q].log_value) and got[q].rel_error < 1e-10
               for q in qs)


@pytest.mark.parametrize("name", sorted(DESIGNS))
def test_batch_equals_single_queries(name):
    lat = _lattice(name)
    batch = TailEngine(lat)
    qs = _queries(batch.vproxy, (-3, -0.5, 0, 0.3, 1, 2.5, 6, 15, 40))
    got = batch.weighted(qs, strict=False)
    single = TailEngine(lat)  # fresh: no value is remembered from the batch
    for q, tv in reversed(list(zip(qs, got))):
        assert _bits(single.weighted([q], strict=False)[0]) == _bits(tv), q
    thr = sorted({q.threshold for q in qs} | {-q.threshold for q in qs})
    tails = TailEngine(lat).tails(thr, strict=False)
    one = TailEngine(lat)
    for s, tv in reversed(list(zip(thr, tails))):
        assert _bits(one.tails([s], strict=False)[0]) == _bits(tv), s
    assert sum(batch.done(tv) for tv in got) > len(qs) // 2


@pytest.mark.parametrize("name", sorted(DESIGNS))
@pytest.mark.parametrize("python", [False, True])
def test_plain_tails_equal_their_queries(name, python, monkeypatch):
    """Plain tails asked by threshold (no query objects: ``plain=True``) are the values,
    bits and flags of the same tails asked as queries, on the kernel and the scalar path,
    beyond the float path (10¹⁹), and at a level-1 raise (a tolerance nothing meets)."""
    if python:
        _python_only(monkeypatch)
    lat = _lattice(name)
    sd = math.sqrt(QuadratureTails(lat).vproxy)
    thr = sorted({int(round(x * sd)) for x in (0.3, 1, 2.5, 6, 40, 1e4)} | {1, 2, 10**7, 10**19} - {0})
    for tol in (1e-10, 1e-300):
        got, ok = QuadratureTails(lat, rel_tol=tol).weighted_list_ok(list(thr), plain=True)
        ref, ref_ok = QuadratureTails(lat, rel_tol=tol).weighted_list_ok(tail_queries(thr))
        assert [_bits(v) for v in got] == [_bits(v) for v in ref] and ok == ref_ok
        assert ok == [certified(v, tol) for v in got]
    assert any(ok for ok in QuadratureTails(lat).weighted_list_ok(list(thr), plain=True)[1])
    # the engine's tails (their own path) against the same queries through the generic one
    eng, gen = TailEngine(lat), TailEngine(lat)
    got = eng.tails(thr, strict=False)
    ref = gen._values(tail_queries(thr), strict=False, conv_ok=True, unique=True)
    assert [_bits(v) for v in got] == [_bits(v) for v in ref]
