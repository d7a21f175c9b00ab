"""ε(δ): inverting the privacy profile of a lattice sum (a mixin of the exact accountant).

On each piece ``ε ∈ [ε_{k−1}, ε_k]``, ``ε_k = c + k/scale``, both tails of the profile are
constant, so ``δ(ε) = δ(ε_{k−1}) − (e^ε − e^{ε_{k−1}}) P[S ≥ k + K]``.  The piece is the
first k where the *certified* predicate ``upper(δ(ε_k)) ≤ target`` holds; inside it ε is
solved in closed form from the bounds of ``δ(ε_{k−1})`` and of the tail, so
``δ(upper) ≤ target`` holds by construction, and the lower end is certified by
``lower(δ(ε_{k'−1})) > target`` on the piece ``k'`` it lies in.

All targets of one call are searched together, in rounds: every unfinished target
proposes its guess of the piece and the piece below it (inverse interpolation of the
estimated ``u = sqrt(−log δ)``, nearly linear in ε beyond ρ), the proposals are evaluated
in one engine batch, and every target narrows its certified bracket on every new piece
inside it; after a few rounds a target bisects.  Estimates only propose where to test;
every decision is a certified comparison (screened in float64 with a rigorous error
bound, in mpmath where the screen cannot settle it: :mod:`exactdp.accounting.screen`).
A target the lattice search cannot pin (a staircase δ(ε) of near-deterministic
mechanisms) goes to the planner's declared fallback route (the lattice-free one, whose
certified bisection handles it: :data:`exactdp.accounting.plan.FALLBACK`) before it is
refused; designs where that is the rule (a σ² < 1/2 group) go there first.
"""

from __future__ import annotations

import bisect
import functools
import math
from fractions import Fraction

import mpmath

from exactdp.accounting.base import bun_steinke_epsilon, sequence_values
from exactdp.accounting.curve import RESULT_ROUNDING, LatticeAccountantState
from exactdp.accounting.results import EpsilonPoint
from exactdp.accounting.screen import decide, delta_bracket, estimate_log_delta, margins, upper_ends
from exactdp.engine.lattice import floor_exact
from exactdp.numerics.arith import (
    ctx_prec,
    dps_to_prec,
    from_float,
    from_rational,
    make,
    mpf_abs,
    mpf_add,
    mpf_exp,
    mpf_ge,
    mpf_gt,
    mpf_le,
    mpf_lt,
    mpf_mul,
    mpf_sub,
    raw_bounds,
    raw_fraction,
    raw_max,
    raw_min,
    solve_in_piece,
    tiny_width,
)
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_DECIDE, DPS_GUARD, DPS_RESULT, to_mpf, workdps

__all__ = ["ProfileInversion"]

#: σ² below this (shifted) makes δ(ε) a staircase the piece search cannot pin
_STAIRCASE_S2 = Fraction(1, 2)

#: rounds of batched evaluations before a target's search is given up (bisection
#: takes over after GUESS_ROUNDS, so ~log2 of the bracket suffices)
MAX_ROUNDS = 80
GUESS_ROUNDS = 4
#: the zCDP piece is walked up this many doubling steps before a target is refused
UPPER_TRIES = 3
_HALF = Fraction(1, 2)
#: targets below this are not screened in float64 (accounting.screen)
_TINY = Fraction(1, 10**290)


def _log_inverse(x: Fraction) -> float:
    """log(1/x) of a Fraction in (0, 1) as a float (no underflow for tiny x)."""
    return math.log(x.denominator) - math.log(x.numerator)


def _floor_log(x: Fraction) -> int:
    """⌊log x⌋ exactly, for a Fraction x in (0, 1) (mpmath only near an integer)."""
    if _HALF <= x < 1:  # −1 < log(1/2) ≤ log x < 0
        return -1
    f = -_log_inverse(x)
    if abs(f - round(f)) > 1e-9 * max(1.0, abs(f)):
        return math.floor(f)
    with workdps(DPS_DECIDE):
        return int(mpmath.floor(mpmath.log(to_mpf(x))))


@functools.lru_cache(maxsize=4096)
def _target_ref(dt: Fraction) -> tuple:
    """``(high, ref, dmp)`` of a target: ``high = dt > 1/2``, the raw mpf at ``DPS_RESULT + DPS_GUARD``
    digits of what δ is compared with (``to_mpf(1 − dt)`` when high, else ``to_mpf(dt)``)
    and ``to_mpf(dt)`` there (the sweep asks the same targets of every pair)."""
    with workdps(DPS_RESULT + DPS_GUARD):
        dmp = to_mpf(dt)
        high = dt > _HALF
        return high, raw_fraction(1 - dt, *ctx_prec()) if high else dmp._mpf_, dmp


@functools.lru_cache(maxsize=4096)
def _target_consts(dt: Fraction) -> tuple:
    """The design-free constants of a target: ``(high, t_f, u, dmp, e_low, log(1/dt))``
    (see :class:`_Target`; the sweep asks the same targets of every pair)."""
    high = dt > _HALF
    t_f = float(dt) if not high and dt > _TINY else None
    log_inv = _log_inverse(dt)
    # δ(ε) ≥ 1 − e^ε > dt for ε < log(1 − dt): an analytic lower bracket
    e_low = Fraction(_floor_log(1 - dt) - 1)
    return high, t_f, math.sqrt(log_inv), _target_ref(dt)[2], e_low, log_inv


class _Target:
    """One target of an ε(δ) call and its certified bracket of pieces ``(lo, hi]``:
    δ(ε_lo) is not certified ≤ target (or lo is the analytic bound), δ(ε_hi) ≤ target is."""

    __slots__ = ("dt", "dmp", "t_f", "u", "high", "e_low", "k_an", "k_zc", "top", "lo", "hi", "rounds", "walk",
                 "step", "error")
    dt: Fraction
    dmp: mpmath.mpf  # the target at DPS_RESULT + DPS_GUARD digits
    t_f: float | None  # as a float when it is one (not high, not tiny)
    u: float  # sqrt(log(1/dt))
    high: bool  # dt > 1/2: compared through 1 − δ
    e_low: Fraction  # an analytic lower bound of ε
    k_an: int  # the piece of e_low (the bracket's analytic lower end)
    k_zc: int | None  # the zCDP bound's piece (computed when first needed)
    top: int  # the zCDP bound's piece, estimated
    lo: int
    hi: int | None
    rounds: int
    walk: int
    step: int
    error: UncertifiedError | None

    def __init__(self, dt: Fraction):
        self.dt = dt
        # high, t_f, u = sqrt(log(1/dt)) (also below the float range: δ = 1e-600), dmp, e_low
        self.high, self.t_f, self.u, self.dmp, self.e_low, _ = _target_consts(dt)
        self.hi = None
        self.rounds = 0
        self.walk = 0
        self.step = 0
        self.error = None
        self.k_zc = None


class _Search:
    """The breakpoints one ε(δ) call has evaluated: engine values and their float
    screens per side (``high``: targets above 1/2, compared through 1 − δ), lazily
    assembled mpmath profiles, full profiles for the closed-form solves, and the
    estimated curve ``u = sqrt(−log δ)`` against the piece (guesses only)."""

    def __init__(self, acc):
        self.acc = acc
        self.raw: dict = {}
        self.screen: dict = {}
        self.ends: dict = {}  # the screen's (hi + err, hi − err) per screened piece
        self.mp: dict = {}
        self.full: dict = {}
        self.base: dict = {}  # per piece k: the solves' target-free values (see _piece_base)
        self.sk: list = []  # samples: pieces (float) and u, sorted by piece
        self.su: list = []
        self.new: dict = {False: [], True: []}
        for kf, u in acc._curve_pts:
            self._sample(kf, u)

    def _sample(self, kf: float, u: float) -> None:
        i = bisect.bisect_left(self.sk, kf)
        if i < len(self.sk) and self.sk[i] == kf:
            return
        self.sk.insert(i, kf)
        self.su.insert(i, u)

    def evaluate(self, ks, high: bool) -> None:
        """Evaluate the reduced profiles of the pieces ``ks`` (one engine batch)."""
        acc = self.acc
        ks = sorted({k for k in ks if (k, high) not in self.raw})
        if not ks:
            return
        eng = acc.engine
        # ε_k = num/den with den > 0 (see _piece_eps): the sign of ε_k is the sign of num, and
        # float(ε_k) is num/den (int true division rounds the exact quotient once, as
        # float(Fraction) does on the reduced terms: the same rational, the same float)
        n0, step, den = acc._ints
        nums = [n0 + int(k) * step for k in ks]
        eps = [acc._piece_eps(k) for k in ks]
        neg = [(k, e) for k, e, n in zip(ks, eps, nums) if n < 0]
        if neg:  # through δ(ε) = 1 − e^ε + e^ε δ(−ε): assembled directly
            for (k, _), pr in zip(neg, acc._profiles_any([e for _, e in neg], full=False, complement=high)):
                self.raw[(k, high)] = None
                self.mp[(k, high)] = pr
                d = float(pr.d)
                if 0.0 < d < 1.0:
                    self._sample(float(k), math.sqrt(-math.log(d)))
        pos = [(k, e, n / den) for k, e, n in zip(ks, eps, nums) if n >= 0]
        if pos:
            recs = acc._profile_values([e for _, e, _ in pos], full=False, complement=high,
                                       pieces=[k for k, _, _ in pos])
            for (k, _, fe), rec in zip(pos, recs):
                self.raw[(k, high)] = rec
                b = self.screen[(k, high)] = delta_bracket(rec, fe, eng.done, eng.log_chernoff)
                if b is not None:
                    self.ends[(k, high)] = upper_ends(b)
                ld = estimate_log_delta(rec, eng.done)
                if ld is not None and ld < 0:
                    self._sample(float(k), math.sqrt(-ld))
        new = self.new[high]
        if new and new[-1] >= ks[0]:  # a second batch in the round: keep the list ascending
            ks = sorted(set(new).union(ks))
            new.clear()
        new.extend(ks)

    def profile(self, k: int, high: bool):
        """The certified (mpmath) reduced profile at piece k (evaluated first if needed)."""
        key = (k, high)
        pr = self.mp.get(key)
        if pr is None:
            if key not in self.raw:
                self.evaluate([k], high)
                pr = self.mp.get(key)
            if pr is None:
                with workdps(DPS_RESULT):
                    pr = self.mp[key] = self.acc._assemble(self.raw[key])
        return pr

    def pred(self, tg: _Target, k: int, side: str) -> bool:
        """The certified comparison of δ(ε_k) with the target (see ``_below``), screened
        in float64 where that settles it (:mod:`exactdp.accounting.screen`)."""
        if tg.t_f is not None:
            key = (k, tg.high)
            if key not in self.raw:
                self.evaluate([k], tg.high)
            got = decide(self.screen.get(key), tg.t_f, side)
            if got is not None:
                return got
        return self.acc._below(self.profile(k, tg.high), tg.dt, side)

    def guess(self, u: float | None) -> int | None:
        """The first piece where the estimated u reaches ``u``: inverse interpolation
        through the samples around it (quadratic when three are near), else None."""
        n = len(self.sk)
        if u is None or n < 2:
            return None
        i = bisect.bisect_left(self.su, u)
        if 0 < i < n:
            idx = [i - 1, i]
            if i - 2 >= 0 and (i + 1 >= n or u - self.su[i - 2] < self.su[i + 1] - u):
                idx.insert(0, i - 2)
            elif i + 1 < n:
                idx.append(i + 1)
        else:
            idx = [0, 1] if i == 0 else [n - 2, n - 1]
        est = 0.0
        for a in idx:
            w = self.sk[a]
            for b in idx:
                if b != a:
                    den = self.su[a] - self.su[b]
                    if den == 0:
                        return None
                    w *= (u - self.su[b]) / den
            est += w
        if not math.isfinite(est) or abs(est) > 1e17:
            return None
        return math.ceil(est)


class ProfileInversion(LatticeAccountantState):
    """The ε(δ) methods of :class:`~exactdp.accounting.accountant.ExactAccountant`
    (which provides ``engine``, ``lattice``, ``identical``, ``max_rel``, ``_profile_at``,
    ``_profile_values``, ``_assemble``, ``_piece_eps``, ``_loose_tails``, ``_curve_pts``
    and ``_uncertified``)."""

    def epsilon(self, deltas) -> tuple[EpsilonPoint, ...]:
        """The smallest ε with δ(ε) ≤ target, for each target δ ∈ (0, 1)."""
        targets = []
        for d in sequence_values(deltas, "delta"):
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            targets.append(dt)
        order = sorted(range(len(targets)), key=lambda i: targets[i], reverse=True)
        out: list = [None] * len(targets)
        first = self._split_first()
        todo = []
        for i in order:
            if first:
                out[i] = self._epsilon_by_split(targets[i])
                if out[i] is not None:
                    continue
            todo.append(i)
        if self.identical:
            for i in todo:
                out[i] = self._epsilon_identical(targets[i])
            return tuple(out)
        got = dict(zip(todo, self._epsilon_batch([targets[i] for i in todo]))) if todo else {}
        for i in todo:  # in the order of the targets, largest first
            p = got[i]
            if isinstance(p, UncertifiedError):
                alt = None if first else self._epsilon_by_split(targets[i])
                if alt is None:
                    raise p
                p = alt
            out[i] = p
        return tuple(out)

    def _split_accountant(self):
        """The planner's declared fallback route for this design (built once by the planner,
        :data:`exactdp.accounting.plan.FALLBACK`), else None (none declared or it cannot be built)."""
        fallback = getattr(self, "fallback", None)
        return fallback() if fallback is not None else None

    def _split_first(self) -> bool:
        """Whether ε(δ) goes to the exact split enumeration first: the int64 method gives
        tails only (the convolution) and a near-deterministic group (σ² < 1/2, shifted)
        makes δ(ε) a staircase the piece search cannot pin.  A property of the design, so
        a target's answer does not depend on the other targets."""
        if self.identical:
            return False
        return bool(self._eng.weighted_costly) and any(
            m.shift != 0 and m.sigma2 < _STAIRCASE_S2 for m, _ in self.composition.groups)

    def _epsilon_by_split(self, dt: Fraction):
        """ε(dt) by the fallback route's certified search (a staircase δ(ε):
        near-deterministic mechanisms), if it brackets it to ``max_rel``; else None."""
        alt = self._split_accountant()
        if alt is None:
            return None
        try:
            (p,) = alt.epsilon([dt])
        except (UncertifiedError, ArithmeticError):  # (OverflowError included)
            return None
        with workdps(DPS_RESULT):
            if not p.upper - p.lower <= self.max_rel * max(abs(p.upper), mpmath.mpf(10) ** -30):
                return None
        return p

    def _below(self, pr, dt: Fraction, side: str) -> bool:
        """Certified comparison of δ with the target: ``side='upper'`` → δ ≤ target is
        certain; ``'lower'`` → δ > target is certain (through 1 − δ above 1/2)."""
        high, ref, _ = _target_ref(dt)  # raw compare: the same as the mpf comparisons
        if high:
            return mpf_ge(pr.c_lo._mpf_, ref) if side == "upper" else mpf_lt(pr.c_hi._mpf_, ref)
        return mpf_le(pr.d_hi._mpf_, ref) if side == "upper" else mpf_gt(pr.d_lo._mpf_, ref)

    @staticmethod
    def _epsilon_identical(dt: Fraction) -> EpsilonPoint:
        """P = Q: δ(ε) = 1 − e^ε, so ε* = log(1 − dt) exactly."""
        with workdps(DPS_RESULT + DPS_GUARD):
            dmp = to_mpf(dt)
            log_c = mpmath.log1p(-dmp) if dt <= Fraction(1, 2) else mpmath.log(to_mpf(1 - dt))
        with workdps(DPS_RESULT):
            rounding = abs(log_c) * RESULT_ROUNDING
            return EpsilonPoint(dmp, +log_c, log_c - rounding, log_c + rounding, 0)

    def _epsilon_batch(self, dts: list) -> list:
        """ε of every target (an EpsilonPoint, or the UncertifiedError that refused it).

        The pieces are located together: each round evaluates, in one engine batch per
        side, the pieces every unfinished target proposes (its guess and the piece below
        it, from the estimated curve), then every target narrows its certified bracket
        on every newly evaluated piece inside it (a piece certified for one target also
        bounds the others).  After GUESS_ROUNDS rounds a target bisects its bracket.
        Then the closed-form solves run on full profiles evaluated in one batch."""
        S = _Search(self)
        lat = self._lat
        floats = (float(lat.c), float(lat.scale), max(1, int(lat.scale)))
        tgs = [self._target(dt, floats) for dt in dts]
        active = list(tgs)
        for _ in range(MAX_ROUNDS):
            want: dict = {False: set(), True: set()}
            for tg in active:
                want[tg.high].update(self._propose(tg, S))
            S.new = {False: [], True: []}
            for high in (False, True):
                if want[high]:
                    S.evaluate(want[high], high)
            nxt = []
            for tg in active:
                try:
                    self._narrow(tg, S)
                except UncertifiedError as exc:
                    tg.error = exc
                if tg.error is None and not (tg.hi is not None and tg.hi - tg.lo <= 1):
                    nxt.append(tg)
            active = nxt
            if not active:
                break
        for tg in active:
            with workdps(DPS_RESULT):
                tg.error = self._uncertified(f"ε(δ={mpmath.nstr(tg.dmp, 6)})")
        self._prefetch_solves([tg for tg in tgs if tg.error is None], S)
        out: list[EpsilonPoint | UncertifiedError] = []
        for tg in tgs:
            if tg.error is None:
                try:
                    out.append(self._finish(tg, S))
                    continue
                except UncertifiedError as exc:
                    tg.error = exc
            out.append(tg.error)
        return out

    def _target(self, dt: Fraction, floats=None) -> _Target:
        """A target's search state; ``floats``: ``(float(c), float(scale), max(1, ⌊scale⌋))``
        of the lattice (computed here when not given)."""
        tg = _Target(dt)
        lat = self._lat
        c, sc = lat.c, lat.scale
        # ⌊(e_low − c)·scale⌋ − 1 in integers (floor_exact of the Fraction e_low − c)
        tg.k_an = ((int(tg.e_low) * c.denominator - c.numerator) * sc.numerator
                   // (c.denominator * sc.denominator)) - 1
        tg.lo = tg.k_an
        # the zCDP bound's piece, estimated (the search's upper start is the exact one)
        cf, scale, step = floats or (float(c), float(sc), max(1, int(sc)))
        tg.top = max(math.floor(2.0 * math.sqrt(cf * _target_consts(dt)[5]) * scale) + 1, tg.k_an + 1)
        tg.step = step
        return tg

    def _propose(self, tg: _Target, S: _Search) -> list:
        """The pieces a target wants evaluated next: its guess and the piece below (both
        inside its bracket); without a certified true end after the guessing rounds, the
        zCDP piece walked up with doubling steps; after GUESS_ROUNDS, bisection."""
        tg.rounds += 1
        lo, hi = tg.lo, tg.hi
        if hi is None:
            if tg.rounds > 2 or tg.lo >= tg.top:
                if tg.k_zc is None:
                    tg.k_zc = self._zcdp_piece(tg.dt, tg.k_an)
                k = tg.k_zc if tg.walk == 0 else tg.k_zc + tg.step * (2**tg.walk - 1)
                while k <= lo:
                    tg.walk += 1
                    k = tg.k_zc + tg.step * (2**tg.walk - 1)
                if tg.walk > UPPER_TRIES:
                    with workdps(DPS_RESULT):
                        tg.error = self._uncertified(f"ε(δ={mpmath.nstr(tg.dmp, 6)}) (δ at the zCDP bound)")
                    return []
                tg.walk += 1
                return [k]
            top = tg.top
        else:
            top = hi - 1
        if tg.rounds > GUESS_ROUNDS and hi is not None:
            return [(lo + hi) // 2]
        g = S.guess(tg.u)
        if g is None:
            return [top] if hi is None else [(lo + hi) // 2]
        g = min(max(g, lo + 1), top)
        return [g - 1, g] if g - 1 > lo else [g]

    def _narrow(self, tg: _Target, S: _Search) -> None:
        """Narrow the target's bracket on the newly evaluated pieces inside it (ascending:
        the first certified true one is the new upper end; those at or below the lower end
        are skipped by bisection, the loop stops at the upper end).

        ``S.pred(tg, k, "upper")`` inline: the float screen's decision from the bracket's
        upper end ``(hi + err, hi − err)`` (:func:`screen.upper_ends`) against the target's
        margins (:func:`screen.margins`), else the mpmath comparison."""
        high, hi = tg.high, tg.hi
        tf = tg.t_f
        ends = S.ends if tf is not None and 0.0 < tf else None
        if ends is not None:
            assert tf is not None
            tl, th = margins(tf)
        new = S.new[high]  # ascending (one sorted batch per side and round, see evaluate)
        for i in range(bisect.bisect_right(new, tg.lo), len(new)):
            k = new[i]
            if hi is not None and k >= hi:
                break  # and so is every later one
            got = None
            if ends is not None:
                e = ends.get((k, high))
                if e is not None:
                    if e[0] < tl:
                        got = True
                    elif e[1] > th:
                        got = False
            if got is None:
                got = self._below(S.profile(k, high), tg.dt, "upper")
            if got:
                tg.hi = k
                break
            tg.lo = k

    def _prefetch_solves(self, tgs: list, S: _Search) -> None:
        """The full profiles at ε_{k−1} and the tails P[S ≥ k + K] of the located pieces,
        one batch per side (the solves then find them memoised); ``S.full`` is keyed by
        the piece k − 1 of the breakpoint."""
        lat = self._lat
        for high in (False, True):
            k0s = [k0 for k0 in dict.fromkeys(tg.hi - 1 for tg in tgs if tg.high == high) if (k0, high) not in S.full]
            if k0s:
                profs = self._profiles_any([self._piece_eps(k0) for k0 in k0s], complement=high, pieces=k0s)
                S.full.update(((k0, high), p) for k0, p in zip(k0s, profs))
        if tgs:
            self._loose_tails([tg.hi + lat.shift for tg in tgs])

    def _finish(self, tg: _Target, S: _Search) -> EpsilonPoint:
        """The certified bracket of ε on the located piece: the upper end by the closed
        form on piece k, the lower end on the piece whose left breakpoint is certified
        above the target (stepping down at most four pieces)."""
        k = tg.hi
        assert k is not None  # a target is finished at its certified upper piece
        dt = tg.dt

        def full_prof(k0):  # 1 − δ (the lower tail) only where the target is compared through it
            key = (k0, tg.high)
            pr = S.full.get(key)
            if pr is None:
                pr = S.full[key] = self._profile_at(self._piece_eps(k0), complement=tg.high)
            return pr

        kk = k
        lower = None
        for _ in range(4):  # the certified lower end: step down while the bracket straddles
            if kk - 1 <= tg.k_an:  # δ(ε) > 1 − e^ε > dt below e_low (analytic)
                break
            if S.pred(tg, kk - 1, "lower"):  # δ(ε_{kk−1}) > dt: ε* in piece kk
                break
            kk -= 1
        else:
            raise self._uncertified(f"ε(δ={mpmath.nstr(tg.dmp, 6)})")
        if kk == k and kk - 1 > tg.k_an:
            upper, est, lower = self._solve_piece(k, dt, ("upper", "est", "lower"), full_prof, S.base)
        else:
            upper, est = self._solve_piece(k, dt, ("upper", "est"), full_prof, S.base)
            if kk - 1 > tg.k_an:
                (lower,) = self._solve_piece(kk, dt, ("lower",), full_prof, S.base)
        # raw at DPS_RESULT digits: upper += |upper|·RESULT_ROUNDING, lower −= |lower|·RESULT_ROUNDING,
        # est clipped
        prec, rnd = _PREC, mpmath.mp._prec_rounding[1]
        rr = RESULT_ROUNDING._mpf_
        up = upper._mpf_
        lw = raw_fraction(tg.e_low, prec, rnd) if lower is None else lower._mpf_
        up = mpf_add(up, mpf_mul(mpf_abs(up, prec, rnd), rr, prec, rnd), prec, rnd)
        lw = mpf_sub(lw, mpf_mul(mpf_abs(lw, prec, rnd), rr, prec, rnd), prec, rnd)
        es = raw_max(est._mpf_, lw)
        es = raw_min(es, up)
        # width ≤ max_rel·max(|upper|, 10^-30)
        room = mpf_mul(raw_max(mpf_abs(up, prec, rnd), tiny_width(prec)), from_float(self.max_rel), prec, rnd)
        if not mpf_le(mpf_sub(up, lw, prec, rnd), room):
            with workdps(DPS_RESULT):
                raise self._uncertified(f"ε(δ={mpmath.nstr(tg.dmp, 6)})")
        return EpsilonPoint(tg.dmp, make(es), make(lw), make(up), k)

    def _zcdp_piece(self, dt: Fraction, k_lo: int) -> int:
        """The piece of the zCDP bound ``ρ + 2 sqrt(ρ log(1/δ))`` (δ ≤ target there)."""
        lat = self._lat
        eps_hi = bun_steinke_epsilon(lat.c, dt)
        return max(floor_exact(lambda dps: eps_hi(dps) - to_mpf(lat.c), lat.scale) + 1, k_lo + 1)

    def _solve_piece(self, k: int, dt: Fraction, sides, profile_at, base: dict) -> tuple:
        """ε on piece k from the bounds of δ(ε_{k−1}) and of P[S ≥ k + K]:
        ``ε = ε_{k−1} + log1p((δ(ε_{k−1}) − dt)/(e^{ε_{k−1}} P[S ≥ k + K]))``, for each of
        ``sides`` (``"upper"``, ``"est"``, ``"lower"``); ``profile_at(k − 1)`` gives the full
        profile at ε_{k−1}, ``base`` memoises the piece's target-free values (the
        breakpoints, e^{ε_{k−1}} and the tail's bounds at ``DPS_RESULT + DPS_GUARD`` digits)."""
        pr = profile_at(k - 1)
        got: tuple | bool | None = base.get(k)
        if got is None:
            (t2,) = self._loose_tails([k + self._lat.shift])
            got = base[k] = self._piece_base(k, t2) if self._eng.done(t2) else False
        if not isinstance(got, tuple):  # False: the tail is not certified
            with workdps(DPS_RESULT):
                raise self._uncertified(f"ε(δ={mpmath.nstr(to_mpf(dt), 6)})")
        em0, e_right, scale, p2, p2lo, p2hi = got
        prec, rnd = _PREC10, mpmath.mp._prec_rounding[1]
        high, ref, _ = _target_ref(dt)  # to_mpf(1 − dt) or to_mpf(dt) at this precision
        out = []
        for side in sides:
            if side == "upper":
                a, b, den = (ref, pr.c_lo._mpf_, p2lo) if high else (pr.d_hi._mpf_, ref, p2lo)
            elif side == "est":  # high: δ0 − dt = (1 − dt) − (1 − δ0)
                a, b, den = (ref, pr.c._mpf_, p2) if high else (pr.d._mpf_, ref, p2)
            elif side == "lower":
                a, b, den = (ref, pr.c_hi._mpf_, p2hi) if high else (pr.d_lo._mpf_, ref, p2hi)
            else:
                raise ValueError(f"unknown side {side!r}")
            out.append(make(solve_in_piece(em0, e_right, scale, mpf_sub(a, b, prec, rnd), den, prec, rnd)))
        return tuple(out)

    def _piece_base(self, k: int, t2) -> tuple:
        """``(ε_{k−1}, ε_k, e^{ε_{k−1}}, P[S ≥ k + K] and its bounds)``, raw at
        ``DPS_RESULT + DPS_GUARD`` digits (the breakpoints' rationals ``(a·s + k·t·b)/(b·s)`` rounded once, as
        ``to_mpf`` of the normalised Fraction)."""
        prec, rnd = _PREC10, mpmath.mp._prec_rounding[1]
        n0, step, d = self._ints
        em0 = from_rational(n0 + (k - 1) * step, d, prec, rnd)
        e_right = from_rational(n0 + k * step, d, prec, rnd)
        return (em0, e_right, mpf_exp(em0, prec, rnd)) + raw_bounds(t2, prec, rnd)


_PREC = dps_to_prec(DPS_RESULT)
_PREC10 = dps_to_prec(DPS_RESULT + DPS_GUARD)
