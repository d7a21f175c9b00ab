"""Issue 14 (eng8): the values of many tilts finished in one kernel call, same bits.

:meth:`QuadratureTails._values_many` finishes the float-path values of a batch of tilts
in one :func:`~exactdp.kernels.quadfinish.finish_tilts` call; the per-tilt route it
replaces (:meth:`QuadratureTails._values_at`, one ``finish_values`` call per tilt, kept for
the tilts off the float path) is the reference here, field for field and flag for flag:

* ``finish_tilts`` on segments (empty, single and longer ones, narrow ``aux`` columns
  widened) against ``finish_values`` segment by segment;
* whole batches on designs off the DHC regime (tiny σ² 1/1000, huge σ² 10⁷, a mixed
  design; thresholds from the centre to far right with mp logs and 10¹⁹, beyond the
  float path; plain tails and hockey-stick sums), with batches cut after 1, 2 and all
  tilts, against a fresh engine asked tilt by tilt.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery
from exactdp.kernels.quadfinish import finish_tilts
from exactdp.kernels.quadfinish import finish_values

DESIGNS = {
    "tiny-s2": ((1, 3), (5, 2), (Fraction(1, 1000), Fraction(7, 2))),
    "huge-s2": ((1, 2), (3, 1), (Fraction(10**7), Fraction(5, 3))),
    "mixed": ((1, 2, 5), (4, 3, 2), (Fraction(1, 3), Fraction(20), Fraction(2))),
}
HS = ((-0.3, 0.5), (-1e-3, 0.01))


def _lattice(name):
    w, c, s2 = DESIGNS[name]
    return LatticeSum(w, c, s2, Fraction(1), Fraction(0), 0)


def _queries(vproxy):
    sd = math.sqrt(vproxy)
    thr = sorted({max(1, int(round(x * sd))) for x in (0.2, 0.7, 1, 1.6, 2.5, 4, 6, 15, 40, 1e4)} | {10**7, 10**19})
    qs = [WeightedQuery(k, -math.inf, 0.0, 1.0) for k in thr]
    qs += [WeightedQuery(k, x0, x0 + b, b) for k in thr for x0, b in HS]
    return qs


def _bits(tv):
    lv = tv.log_value
    return (tv.threshold, type(lv).__name__, lv.hex() if isinstance(lv, float) else repr(lv), tv.rel_error.hex(),
            tv.method, tv.nodes_kept, tv.nodes_total, tv.lam.hex())


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
    qs = _queries(batch.vproxy)
    sv = batch._sieve(0)
    sv.max_tilts = max_tilts  # a batch is cut after this many tilts
    order, groups = _groups(batch, qs)
    assert len(order) >= 6
    got = batch._values_many(sv, order, groups)
    single = QuadratureTails(lat)  # fresh: the former route, one finish_values call per tilt
    sv1 = single._sieve(0)
    python_path = 0
    for lam, group, (vals, flags) in zip(order, groups, got):
        ref_vals, ref_flags = single._values_at(single._tilt(lam, sv1), group)
        assert [_bits(v) for v in vals] == [_bits(v) for v in ref_vals]
        assert list(flags) == list(ref_flags)
        python_path += sum(not isinstance(v.log_value, float) for v in vals)
    assert python_path > 0  # some values off the float path (mp logs), also in a batch
    assert any(f for _, flags in got for f in flags)
