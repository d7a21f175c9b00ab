"""Issue 14 (mpasm): the accounting layer's raw-tuple mpmath arithmetic gives the bits of
the mpf-object code it replaced.

The references below are ``ExactAccountant._assemble``, ``curve._bounds`` and the solve of
``ProfileInversion._solve_piece`` as they were at main e2cac23, frozen verbatim (as plain
functions of the same inputs).  They run on a few hundred random TailValue-like inputs
(log values in [−2000, 0] as floats and a few as high-precision mpf, relative errors
1e-16..1e-3, some uncertified, ε in [−50, 50] as Fractions or as callables) and every
field must be the same mpf tuple; any change of an operation, of its order or of its
precision shows up as a differing bit.
"""

from __future__ import annotations

import math
import random
from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.curve import _DPS, _mp
from exactdp.accounting.screen import ProfileValues
from exactdp.engine.tails import TailValue
from exactdp.engine.values import certified
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.precision import to_mpf, workdps

REL_TOL = 1e-10


# ------------------------------------------------------------------ frozen reference (e2cac23)
def _bounds_ref(tv):
    v = mpmath.exp(tv.log_mp)
    r = mpmath.mpf(tv.rel_error)
    return v, v * (1 - r), v * (1 + r)


def _assemble_ref(engine, r):
    em = _mp(r.eps)
    ee = mpmath.exp(em)
    out = {}
    t2 = r.t2
    ok2 = engine.done(t2)
    if ok2:
        p2, p2lo, p2hi = _bounds_ref(t2)
    else:
        p2, p2lo, p2hi = mpmath.mpf(0), mpmath.mpf(0), mpmath.exp(engine.log_chernoff(r.k2))
    lo, hi = mpmath.mpf(0), mpmath.mpf(1)
    out["p1"] = None
    if r.t1 is not None and engine.done(r.t1):
        p1, p1lo, p1hi = _bounds_ref(r.t1)
        out["p1"] = p1
        lo, hi = max(p1lo - ee * p2hi, lo), min(p1hi - ee * p2lo, hi)
    out["p2"] = p2 * ee
    if engine.done(r.w):
        d, dlo, dhi = _bounds_ref(r.w)
        if dlo > hi or dhi < lo:
            raise UncertifiedError("inconsistent")
        lo, hi = max(lo, dlo), min(hi, dhi)
        if out["p1"] is None:
            out["p1"] = d + out["p2"]
    out["d_lo"], out["d_hi"] = lo, max(hi, lo)
    out["d"] = (out["d_lo"] + out["d_hi"]) / 2
    tl = r.tl
    if tl is not None and engine.done(tl) and ok2:
        ql, qllo, qlhi = _bounds_ref(tl)
        out["c"], out["c_lo"], out["c_hi"] = ql + ee * p2, qllo + ee * p2lo, qlhi + ee * p2hi
    else:
        out["c"], out["c_lo"], out["c_hi"] = 1 - out["d"], 1 - out["d_hi"], 1 - out["d_lo"]
    return out


def _solve_ref(em0, e_right, scale, gap, den):
    g = max(gap, mpmath.mpf(0))
    if den <= 0:
        return e_right
    return min(em0 + mpmath.log1p(g / (scale * den)), e_right)


# ------------------------------------------------------------------ random inputs
class _Engine:
    """The two engine methods ``_assemble`` asks (certification as the engine's)."""

    def __init__(self, rng):
        self.chernoff = {}
        self.rng = rng

    def done(self, tv):
        return certified(tv, REL_TOL)

    def log_chernoff(self, k):
        return self.chernoff.setdefault(k, -self.rng.uniform(0, 50))


def _tail(rng, k, lo=-2000.0, hi=0.0):
    u = rng.random()
    if u < 0.08:  # uncertified: a bound above rel_tol, or infinite
        return TailValue(k, rng.uniform(lo, hi), rng.choice([1e-3, math.inf]), "x", 0, 0, 0.0)
    lv = rng.uniform(lo, hi)
    if u < 0.16:  # a high-precision log (as the engine stores |log| ≥ 1e4)
        with workdps(60):
            lv = mpmath.mpf(lv) + mpmath.mpf(rng.random()) * mpmath.mpf(2) ** -80
    rel = 10 ** rng.uniform(-16, math.log10(REL_TOL))
    return TailValue(k, lv, rel, "x", 0, 0, 0.0)


def _eps(rng):
    e = Fraction(rng.randint(-50 * 10**6, 50 * 10**6), rng.randint(1, 10**6))
    if rng.random() < 0.05:  # a user callable giving a float
        return lambda dps, x=float(e): x
    if rng.random() < 0.2:
        base = e

        def f(dps, base=base):
            with workdps(dps + 10):
                return to_mpf(base) + mpmath.sqrt(2) / 1000

        return f
    return e


def _record(rng):
    k1 = rng.randint(-10**6, 10**6)
    k2 = k1 + rng.randint(0, 10**4)
    # tails near one another (as a real profile's), so that both paths of _assemble run
    top = rng.uniform(-60.0, 0.0)
    t2 = _tail(rng, k2, top - 40.0, top)
    t1 = None if rng.random() < 0.3 else _tail(rng, k1, top - 5.0, top)
    w = TailValue(0, -math.inf, math.inf, "none", 0, 0, 0.0) if rng.random() < 0.2 else _tail(rng, k1, top - 20, top)
    tl = None if rng.random() < 0.3 else _tail(rng, 1 - k1, -5.0, 0.0)
    return ProfileValues(_eps(rng), k1, k2, w, t1, t2, tl)


def _raw(x):
    return None if x is None else x._mpf_


@pytest.mark.parametrize("dps", [_DPS, _DPS + 10])
def test_assemble_matches_the_former_mpf_code(dps):
    rng = random.Random(20261201 + dps)
    eng = _Engine(rng)
    fake = type("A", (), {"engine": eng})()
    n_raise = n_c = 0
    for _ in range(400):
        r = _record(rng)
        with workdps(dps):
            try:
                ref = _assemble_ref(eng, r)
            except UncertifiedError:
                ref = None
            if ref is None:
                n_raise += 1
                with pytest.raises(UncertifiedError, match="inconsistent certified bounds"):
                    ExactAccountant._assemble(fake, r)
                continue
            got = ExactAccountant._assemble(fake, r)
        for f, v in ref.items():
            assert _raw(getattr(got, f)) == _raw(v), (f, r)
        n_c += r.tl is not None and eng.done(r.tl)
    assert n_raise < 200 and n_c > 50  # both outcomes and both complements are exercised


def test_bounds_match_the_former_mpf_code():
    from exactdp.accounting.rawmp import ctx_prec, raw_bounds

    rng = random.Random(7)
    for _ in range(300):
        tv = _tail(rng, 1)
        for dps in (_DPS, _DPS + 10):
            with workdps(dps):
                got = raw_bounds(tv, *ctx_prec())
                assert got == tuple(v._mpf_ for v in _bounds_ref(tv))


def test_solve_matches_the_former_mpf_code():
    from exactdp.accounting.inversion import _solve_raw
    from exactdp.accounting.rawmp import ctx_prec

    rng = random.Random(11)
    with workdps(_DPS + 10):
        for _ in range(300):
            em0 = to_mpf(Fraction(rng.randint(0, 10**8), rng.randint(1, 10**6)))
            e_right = em0 + mpmath.mpf(rng.random())
            scale = mpmath.exp(em0)
            gap = mpmath.mpf(rng.uniform(-1e-3, 1e-3)) * mpmath.mpf(10) ** rng.randint(-40, 0)
            den = mpmath.mpf(0) if rng.random() < 0.05 else mpmath.exp(-rng.uniform(0, 2000))
            got = _solve_raw(em0._mpf_, e_right._mpf_, scale._mpf_, gap._mpf_, den._mpf_, *ctx_prec())
            assert got == _solve_ref(em0, e_right, scale, gap, den)._mpf_


def test_log1p_matches_mpmath():
    from exactdp.accounting.rawmp import ctx_prec, raw_log1p

    rng = random.Random(13)
    xs = [mpmath.mpf(0), mpmath.mpf(-0.25), mpmath.inf, mpmath.mpf(3), mpmath.mpf(2) ** -179, mpmath.mpf(2) ** -180]
    for dps in (_DPS, _DPS + 10):
        with workdps(dps):
            prec = ctx_prec()[0]
            # around the series switch (mag = −(prec + 10)) and the precision switch (mag = 4)
            for m in (-prec - 12, -prec - 11, -prec - 10, -prec - 9, 2, 3, 4, 5):
                xs += [mpmath.mpf(2) ** (m - 1) * (1 + mpmath.mpf(rng.random())) for _ in range(5)]
            xs += [mpmath.mpf(rng.random()) * mpmath.mpf(2) ** rng.randint(-400, 400) for _ in range(300)]
            xs += [mpmath.mpf(2) ** rng.randint(-300, 300) for _ in range(20)]
            for x in xs:
                x = +x
                assert raw_log1p(x._mpf_, *ctx_prec()) == mpmath.log1p(x)._mpf_, x


def _floor_exact_ref(x, scale):
    """``engine.lattice.floor_exact`` for a callable, as at e2cac23."""
    for dps in (50, 200):
        with mpmath.workdps(dps):
            y = x(dps) * (to_mpf(scale))
            f = mpmath.floor(y)
            if min(y - f, f + 1 - y) > mpmath.mpf(10) ** (-(dps - 10)):
                return int(f)
    raise ValueError("threshold is within 1e-190 of a lattice point; pass ε as an exact rational")


def test_floor_exact_matches_the_former_mpf_code():
    from exactdp.engine.lattice import floor_exact

    rng = random.Random(17)
    for i in range(300):
        scale = Fraction(rng.randint(1, 10**30), rng.randint(1, 10**12))
        base = Fraction(rng.randint(-10**40, 10**40), rng.randint(1, 10**20))
        # far from a lattice point, within 1e-45 of one (the 200-digit pass), or on one
        off = [mpmath.sqrt(2) / 7, mpmath.mpf(10) ** -45 * mpmath.sqrt(3), mpmath.mpf(0)][i % 3]
        k = math.floor(base * scale)

        def x(dps, k=k, scale=scale, off=off):
            with workdps(dps + 10):
                return (mpmath.mpf(k) + off) / to_mpf(scale)

        try:
            ref = _floor_exact_ref(x, scale)
        except ValueError:
            with pytest.raises(ValueError):
                floor_exact(x, scale)
            continue
        assert floor_exact(x, scale) == ref


def test_fraction_query_and_breakpoints_match_the_former_rational_code():
    from exactdp.engine.lattice import LatticeSum

    rng = random.Random(19)
    for _ in range(300):
        scale = Fraction(rng.randint(1, 10**rng.randint(1, 40)), rng.randint(1, 10**rng.randint(0, 12)))
        c = Fraction(rng.randint(0, 10**30), rng.randint(1, 10**25))
        lat = LatticeSum((1,), (1,), (Fraction(1),), scale, c, 0)
        fake = type("A", (), {"lattice": lat})()
        a, b, sn, sd = c.numerator, c.denominator, scale.numerator, scale.denominator
        fake._ints = (a * sn, sd * b, b * sn)
        beta = Fraction(1) / scale
        for e in (Fraction(rng.randint(-10**20, 10**20), rng.randint(1, 10**15)), c, c + 7 / scale,
                  Fraction(rng.randint(-10**60, 10**60), rng.randint(1, 10**3))):
            # the former code (e2cac23): Fraction arithmetic
            k1 = math.floor((e - c) * scale) + 1
            x0q = e - c - k1 * beta
            q = ExactAccountant._query(fake, e, beta, float(beta))
            assert (q.threshold, q.x0, q.x1) == (k1, float(x0q), float(max(x0q + beta, 0)))
            assert lat.delta_thresholds(e) == (k1, k1)
        k = rng.randint(-10**12, 10**12)
        assert ExactAccountant._piece_eps(fake, k) == c + Fraction(k) / scale
