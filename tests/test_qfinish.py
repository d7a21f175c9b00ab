"""Issue 14 (qfinish): the batched finish of the tilted rule keeps every number, bit for bit.

The engine finishes all queries of a tilt in one kernel call (``kernels/quadfinish.py``:
the grid tilts of a batch, then logs and certified bounds with the aliasing bound); the
scalar Python code it replaces (``QuadratureTails._grid_lam`` and ``_finish``) still
answers whatever is off the float path.  Checked here on designs with a tiny-σ² group
(1/1000), a huge-σ² group (10⁷), a mixed one, plain tails (right, centre, far right: mp
logs) and hockey-stick sums (central and far):

* the kernel path against the Python path (the kernels disabled), field for field;
* a mixed batch against single-query calls in reverse order on a fresh engine (a value
  must not depend on its batch), also through :class:`TailEngine` (left thresholds,
  complements).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest

from exactdp.engine import quadrature
from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import QuadratureTails, WeightedQuery
from exactdp.engine.tails import TailEngine
from exactdp.kernels.quadfinish import FINISH_PYTHON, GRID_PYTHON

DESIGNS = {
    "tiny-s2": ((1, 3), (5, 2), (Fraction(1, 1000), Fraction(7, 2))),
    "huge-s2": ((1, 2), (3, 1), (Fraction(10**7), Fraction(5, 3))),
    "mixed": ((1, 2, 5), (4, 3, 2), (Fraction(1, 3), Fraction(20), Fraction(2))),
}
HS = ((-0.3, 0.5), (-1e-3, 0.01), (-2.0, 3.0))


def _lattice(name):
    w, c, s2 = DESIGNS[name]
    return LatticeSum(w, c, s2, Fraction(1), Fraction(0), 0)


def _queries(vproxy, left=False):
    sd = math.sqrt(vproxy)
    mults = (-3, -0.5, 0, 0.3, 1, 2.5, 6, 15, 40) if left else (0.3, 1, 2.5, 6, 15, 40)
    thr = sorted({int(round(x * sd)) for x in mults} | {1, 2, 10**7})
    qs = [WeightedQuery(k, -math.inf, 0.0, 1.0) for k in thr if k >= 1]
    qs += [WeightedQuery(k, x0, x0 + b, b) for k in thr for x0, b in HS]
    return qs


def _bits(tv):
    lv = tv.log_value
    return (tv.threshold, type(lv).__name__, lv.hex() if isinstance(lv, float) else repr(lv), tv.rel_error.hex(),
            type(tv.rel_error).__name__, tv.method, tv.nodes_kept, tv.nodes_total, tv.lam.hex())


def _python_only(monkeypatch):
    """Disable the batch kernels: every threshold and value takes the scalar Python path."""
    def grid(A, m, s2, s, *args):
        return np.zeros(s.shape[0]), np.full(s.shape[0], GRID_PYTHON, dtype=np.int64)

    def finish(r, *args):
        n = r.shape[0]
        return np.zeros(n), np.zeros(n), np.full(n, FINISH_PYTHON, dtype=np.int64)

    monkeypatch.setattr(quadrature, "grid_tilts", grid)
    monkeypatch.setattr(quadrature, "finish_values", finish)
    monkeypatch.setattr(quadrature, "finish_tilts", finish)  # the batch of many tilts (eng8)


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
    qs = _queries(batch.vproxy, left=True)
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
