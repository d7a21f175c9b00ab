"""Session 7 (acct7) accounting speed-ups give the bits of the code they replace.

The references are the former code (main cc7036b), frozen verbatim here as plain mpmath
object arithmetic, Fraction arithmetic or the former ``decide`` logic: the raw-libmp
Bureau conversion (``bun_steinke_epsilon``), ``Composition.from_rhos`` keyed on (p, q),
the raw ``ε − c`` of ``LatticeSum.delta_thresholds``, the inlined float screen of the
ε(δ) narrowing (``screen.upper_ends`` / ``margins``), the target constants of
``ProfileInversion._target`` and the memoised piece values of ``_solve_piece``.  Inputs
are off the DHC regime too: tiny and huge ρ, δ down to 1e-600 and above 1/2, ε of both
signs, lattices with large scales.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from fractions import Fraction

import mpmath
import pytest

from exactdp.accounting.accountant import ExactAccountant
from exactdp.accounting.base import bun_steinke_epsilon
from exactdp.accounting.curve import _DPS
from exactdp.accounting.screen import U, decide, margins, upper_ends
from exactdp.dgauss.conventions import variance
from exactdp.engine.lattice import LatticeSum, floor_exact
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.errors import InputError
from exactdp.numerics.exact import to_fraction
from exactdp.numerics.precision import to_mpf, workdps


# ------------------------------------------------------------------ former code (cc7036b)
def _bun_steinke_ref(rho: Fraction, delta: Fraction, dps: int):
    with workdps(dps + 10):
        r = to_mpf(rho)
        return r + 2 * mpmath.sqrt(r * mpmath.log(1 / to_mpf(delta)))


def _from_rhos_ref(rhos) -> Composition:
    counts: Counter = Counter()
    for r in rhos:
        r = to_fraction(r, "rho")
        if r < 0:
            raise InputError("rho", r, "must be >= 0")
        if r > 0:
            counts[r] += 1
    return Composition(tuple((DiscreteGaussian(variance(r, "production"), 1), c) for r, c in counts.items()))


def _decide_ref(bracket, target, side):
    if bracket is None or not 0.0 < target:
        return None
    lo, hi, err = bracket
    tl, th = target * (1.0 - 8.0 * U), target * (1.0 + 8.0 * U)
    if side == "upper":
        if hi + err < tl:
            return True
        if hi - err > th:
            return False
        return None
    if lo - err > th:
        return True
    if lo + err < tl:
        return False
    return None


def _rand_fraction(rng, lo_exp=-12, hi_exp=6):
    e = rng.randint(lo_exp, hi_exp)
    den = 10 ** rng.randint(0, 15)
    return Fraction(rng.randint(1, 10**8) * 10**max(e, 0), den * 10**max(-e, 0))


# ------------------------------------------------------------------ tests
def test_bun_steinke_epsilon_matches_the_former_mpf_code():
    rng = random.Random(7)
    deltas = [Fraction(1, 10**600), Fraction(1, 10**10), Fraction(1, 2), Fraction(999, 1000), Fraction(3, 7)]
    for _ in range(60):
        rho = _rand_fraction(rng)
        delta = rng.choice(deltas + [Fraction(rng.randint(1, 10**6), 10**rng.randint(6, 40))])
        f = bun_steinke_epsilon(rho, delta)
        for dps in (30, 40, 50, 80, 200):
            got, ref = f(dps), _bun_steinke_ref(rho, delta, dps)
            assert type(got) is mpmath.mpf and got._mpf_ == ref._mpf_
    # δ > 1: a complex square root, as mpmath gives it
    got, ref = bun_steinke_epsilon(Fraction(1, 3), Fraction(5, 2))(40), _bun_steinke_ref(Fraction(1, 3), Fraction(5, 2), 40)
    assert got == ref


def test_from_rhos_matches_the_former_counter_code():
    rng = random.Random(8)
    pool = [Fraction(1, 7), Fraction(2, 14), "1/7", 3, Fraction(0), "0.25", Fraction(10**30, 3), Fraction(1, 10**40)]
    for _ in range(80):
        rhos = [rng.choice(pool) for _ in range(rng.randint(1, 30))]
        if all(to_fraction(r) == 0 for r in rhos):
            rhos.append(Fraction(1, 9))
        assert Composition.from_rhos(rhos).groups == _from_rhos_ref(rhos).groups
    with pytest.raises(InputError, match="rho"):
        Composition.from_rhos([Fraction(1, 2), Fraction(-1, 3)])
    with pytest.raises(InputError, match="rho"):
        Composition.from_rhos([0.5])


def test_delta_thresholds_of_a_callable_match_the_former_lambda():
    rng = random.Random(9)
    for _ in range(150):
        scale = Fraction(rng.randint(1, 10**rng.randint(1, 30)), rng.randint(1, 10**rng.randint(0, 8)))
        c = Fraction(rng.randint(0, 10**20), rng.randint(1, 10**15))
        lat = LatticeSum((1,), (1,), (Fraction(1),), scale, c, 7)
        off = rng.choice([mpmath.sqrt(2), -mpmath.pi, mpmath.mpf(10) ** -45, mpmath.mpf(0)])
        base = c + Fraction(rng.randint(-10**6, 10**6), rng.randint(1, 10**6))

        def eps(dps, base=base, off=off):
            with workdps(dps + 10):
                return to_mpf(base) + off

        try:
            ref = floor_exact(lambda dps: eps(dps) - to_mpf(c), scale) + 1
        except ValueError:
            with pytest.raises(ValueError):
                lat.delta_thresholds(eps)
            continue
        assert lat.delta_thresholds(eps) == (ref, ref + 7)


def test_the_inlined_screen_decides_as_before():
    rng = random.Random(10)
    for _ in range(3000):
        t = 10.0 ** rng.uniform(-290, -0.31)
        hi = t * (1 + rng.choice([0.0, 1e-16, -1e-16, 1e-14, -1e-14, 0.5, -0.5]))
        err = abs(hi) * rng.choice([0.0, 1e-17, 1e-15, 1e-12])
        b = (hi * (1 - rng.random() * 1e-10), hi, err)
        tl, th = margins(t)
        up, down = upper_ends(b)
        inline = True if up < tl else (False if down > th else None)
        assert inline == _decide_ref(b, t, "upper") == decide(b, t, "upper")
        assert decide(b, t, "lower") == _decide_ref(b, t, "lower")


def _floor_log_ref(x: Fraction) -> int:
    if Fraction(1, 2) <= x < 1:
        return -1
    f = -(math.log(x.denominator) - math.log(x.numerator))
    if abs(f - round(f)) > 1e-9 * max(1.0, abs(f)):
        return math.floor(f)
    with workdps(60):
        return int(mpmath.floor(mpmath.log(to_mpf(x))))


@pytest.mark.parametrize("mechs", [[(Fraction(1, 1000), 1), (Fraction(3), 1)], [(Fraction(10**7), 5)],
                                   [(Fraction(7, 3), -2), (Fraction(11, 2), 3)]])
def test_targets_and_piece_solves_match_the_former_code(mechs):
    acc = ExactAccountant(Composition.of(DiscreteGaussian(s, d) for s, d in mechs))
    lat = acc.lattice
    targets = [Fraction(1, 10**600), Fraction(1, 10**12), Fraction(1, 3), Fraction(1, 2), Fraction(9, 10),
               Fraction(999999, 10**6)]
    for dt in targets:
        tg = acc._target(dt)
        # the former _Target/_target: Fraction arithmetic and floats per target
        e_low = Fraction(_floor_log_ref(1 - dt) - 1)
        k_an = floor_exact(e_low - lat.c, lat.scale) - 1
        log_inv = math.log(dt.denominator) - math.log(dt.numerator)
        top = max(math.floor(2.0 * math.sqrt(float(lat.c) * log_inv) * float(lat.scale)) + 1, k_an + 1)
        high = dt > Fraction(1, 2)
        assert (tg.high, tg.t_f, tg.u, tg.e_low, tg.k_an, tg.lo, tg.top, tg.step) == (
            high, float(dt) if not high and dt > Fraction(1, 10**290) else None, math.sqrt(log_inv), e_low,
            k_an, k_an, top, max(1, int(lat.scale)))
    for p, dt in zip(acc.epsilon(targets), targets):
        k, high = p.piece, dt > Fraction(1, 2)
        if k - 1 <= acc._target(dt).k_an:
            continue
        profile = acc._profile_at(acc._piece_eps(k - 1), complement=high)
        got = acc._solve_piece(k, dt, ("upper", "est", "lower"), lambda k0: profile, {})
        # the former solve: mpf objects at _DPS + 10 digits from the normalised Fractions
        (t2,) = acc._loose_tails([k + lat.shift])
        with workdps(_DPS + 10):
            em0, e_right = to_mpf(acc._piece_eps(k - 1)), to_mpf(acc._piece_eps(k))
            v, r = mpmath.exp(t2.log_mp), mpmath.mpf(t2.rel_error)
            p2, p2lo, p2hi = v, v * (1 - r), v * (1 + r)
            scale = mpmath.exp(em0)
            if high:
                ref = to_mpf(1 - dt)
                gaps = [ref - profile.c_lo, ref - profile.c, ref - profile.c_hi]
            else:
                ref = to_mpf(dt)
                gaps = [profile.d_hi - ref, profile.d - ref, profile.d_lo - ref]
            want = []
            for gap, den in zip(gaps, (p2lo, p2, p2hi)):
                g = max(gap, mpmath.mpf(0))
                want.append(e_right if den <= 0 else min(em0 + mpmath.log1p(g / (scale * den)), e_right))
        assert [x._mpf_ for x in got] == [x._mpf_ for x in want]
