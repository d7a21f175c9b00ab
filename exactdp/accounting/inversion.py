"""ε(δ): inverting the privacy profile of a lattice sum (a mixin of the exact accountant).

On each piece ``ε ∈ [ε_{k−1}, ε_k]``, ``ε_k = c + k/scale``, both tails of the profile are
constant, so ``δ(ε) = δ(ε_{k−1}) − (e^ε − e^{ε_{k−1}}) P[S ≥ k + K]``.  The piece is found
by :func:`exactdp.numerics.search.first_true` on the *certified* predicate
``upper(δ(ε_k)) ≤ target``; inside it ε is solved in closed form from the bounds of
``δ(ε_{k−1})`` and of the tail, so ``δ(upper) ≤ target`` holds by construction, and the
lower end is certified by ``lower(δ(ε_{k'−1})) > target`` on the piece ``k'`` it lies in.

Many targets share one search memo (profiles at breakpoints do not depend on the target)
and are solved from the largest δ down: the piece ``k' − 1`` certified above one target is
a certified "false" end for every smaller target, and the points already evaluated give a
Newton step on ``sqrt(−log δ)`` (nearly linear in ε beyond ρ) for the next one.  Estimates
only propose where to test; every decision is a certified comparison, so the memo and the
order change how many points are evaluated, never which piece is certified.  A target the
lattice search cannot pin (a staircase δ(ε) of near-deterministic mechanisms) is passed to
the exact split enumeration's certified bisection before it is refused; designs where that
is the rule (tails only from the convolution, a σ² < 1/2 group) go there first.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath

from exactdp.accounting.base import bun_steinke_epsilon, sequence_values
from exactdp.accounting.curve import _DPS, _ROUND, _bounds, _mp
from exactdp.accounting.results import EpsilonPoint
from exactdp.engine.lattice import floor_exact
from exactdp.engine.split import WINDOW_MIN_S2
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import to_mpf, workdps
from exactdp.numerics.search import SearchError, first_true, first_true_near

__all__ = ["ProfileInversion"]


class _Memo:
    """What one ε(δ) call has evaluated: reduced profiles at breakpoints (per side of
    1/2) and full profiles (the accountant keeps the tails themselves)."""

    __slots__ = ("prof", "full", "answers")

    def __init__(self):
        self.prof: dict = {}
        self.full: dict = {}
        self.answers: list = []  # (sqrt(−log δ(ε_k)), k) at the certified false ends


class ProfileInversion:
    """The ε(δ) methods of :class:`~exactdp.accounting.accountant.ExactAccountant`
    (which provides ``engine``, ``lattice``, ``identical``, ``max_rel``, ``_profile_at``,
    ``_piece_eps``, ``_loose_tails`` and ``_uncertified``)."""

    def epsilon(self, deltas) -> tuple[EpsilonPoint, ...]:
        """The smallest ε with δ(ε) ≤ target, for each target δ ∈ (0, 1)."""
        targets = []
        for d in sequence_values(deltas, "delta"):
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            targets.append(dt)
        memo = _Memo()
        out: list = [None] * len(targets)
        hint = None
        first = self._split_first()
        for i in sorted(range(len(targets)), key=lambda i: targets[i], reverse=True):
            if first:
                out[i] = self._epsilon_by_split(targets[i])
                if out[i] is not None:
                    continue
            try:
                out[i], hint = self._epsilon_one(targets[i], memo, hint)
            except UncertifiedError:
                out[i] = None if first else self._epsilon_by_split(targets[i])
                if out[i] is None:
                    raise
        return tuple(out)

    def _split_accountant(self):
        """The big-lattice accountant of the same design when it enumerates exactly (built
        once), else None."""
        alt = getattr(self, "_alt", None)
        if alt is None:
            from exactdp.accounting.bracketed import BigLatticeAccountant

            try:
                alt = BigLatticeAccountant(self.composition, self.rel_tol, method="split")
            except UncertifiedError:
                alt = False
            self._alt = alt
        return alt or None

    def _split_first(self) -> bool:
        """Whether ε(δ) goes to the exact split enumeration first: the int64 method gives
        tails only (the convolution) and a near-deterministic group (σ² < 1/2, shifted)
        makes δ(ε) a staircase the piece search cannot pin.  A property of the design, so
        a target's answer does not depend on the other targets."""
        if self.identical:
            return False
        return bool(self.engine.weighted_costly) and any(
            m.shift != 0 and m.sigma2 < WINDOW_MIN_S2 for m, _ in self.composition.groups)

    def _epsilon_by_split(self, dt: Fraction):
        """ε(dt) by the exact split enumeration's certified bisection (a staircase δ(ε):
        near-deterministic mechanisms), if it brackets it to ``max_rel``; else None."""
        alt = self._split_accountant()
        if alt is None:
            return None
        try:
            (p,) = alt.epsilon([dt])
        except (UncertifiedError, ArithmeticError):  # (OverflowError included)
            return None
        with workdps(_DPS):
            if not p.upper - p.lower <= self.max_rel * max(abs(p.upper), mpmath.mpf(10) ** -30):
                return None
        return p

    def _below(self, pr, dt: Fraction, side: str) -> bool:
        """Certified comparison of δ with the target: ``side='upper'`` → δ ≤ target is
        certain; ``'lower'`` → δ > target is certain (through 1 − δ above 1/2)."""
        with workdps(_DPS + 10):
            if dt > Fraction(1, 2):
                cd = to_mpf(1 - dt)
                return pr.c_lo >= cd if side == "upper" else pr.c_hi < cd
            dm = to_mpf(dt)
            return pr.d_hi <= dm if side == "upper" else pr.d_lo > dm

    def _epsilon_one(self, dt: Fraction, memo: _Memo, hint) -> tuple[EpsilonPoint, tuple | None]:
        """ε(dt) and the hint for smaller targets: ``(dt, k)`` with δ(ε_k) > dt certified."""
        with workdps(_DPS + 10):
            dmp = to_mpf(dt)
            # log(1 − dt), from the exact complement
            log_c = mpmath.log1p(-dmp) if dt <= Fraction(1, 2) else mpmath.log(to_mpf(1 - dt))
        if self.identical:  # δ(ε) = 1 − e^ε: ε* = log(1 − dt) exactly
            with workdps(_DPS):
                return EpsilonPoint(dmp, +log_c, log_c - abs(log_c) * _ROUND, log_c + abs(log_c) * _ROUND, 0), None
        lat = self.lattice
        # δ(ε) ≥ 1 − e^ε > dt for ε < log(1 − dt): an analytic lower bracket
        e_low = Fraction(math.floor(float(log_c)) - 1)
        k_an = floor_exact(e_low - lat.c, lat.scale) - 1
        high = dt > Fraction(1, 2)
        cache = memo.prof

        def prof(k):
            key = (k, high)
            if key not in cache:
                cache[key] = self._profile_at(self._piece_eps(k), full=False, complement=high)
            return cache[key]

        def pred(k):
            return self._below(prof(k), dt, "upper")

        # a certified false end: the analytic one, or the piece a larger target left
        k_lo = k_an
        if hint is not None and hint[0] >= dt and hint[1] > k_lo:
            k_lo = hint[1]

        k = self._locate(dt, dmp, high, pred, cache, memo.answers, k_lo)

        def full_prof(e0):  # 1 − δ (the lower tail) only where the target is compared through it
            if (e0, high) not in memo.full:
                memo.full[(e0, high)] = self._profile_at(e0, complement=high)
            return memo.full[(e0, high)]

        upper, est = self._solve_piece(k, dt, "upper", full_prof, memo)
        kk = k
        lower = None
        for _ in range(4):  # the certified lower end: step down while the bracket straddles
            if kk - 1 <= k_an:  # δ(ε) > 1 − e^ε > dt below e_low (analytic)
                break
            if self._below(prof(kk - 1), dt, "lower"):  # δ(ε_{kk−1}) > dt: ε* in piece kk
                lower, _ = self._solve_piece(kk, dt, "lower", full_prof, memo)
                break
            kk -= 1
        else:
            raise self._uncertified(f"ε(δ={mpmath.nstr(dmp, 6)})")
        with workdps(_DPS):
            if lower is None:
                lower = to_mpf(e_low)
            upper += abs(upper) * _ROUND
            lower -= abs(lower) * _ROUND
            est = min(max(est, lower), upper)
            width = upper - lower
            if not width <= self.max_rel * max(abs(upper), mpmath.mpf(10) ** -30):
                raise self._uncertified(f"ε(δ={mpmath.nstr(dmp, 6)})")
        hint_out = hint
        if kk - 1 > k_an:
            hint_out = (dt, kk - 1)
            p = prof(kk - 1)
            if 0 < p.d < 1:
                with workdps(_DPS):
                    memo.answers.append((mpmath.sqrt(-mpmath.log(p.d)), kk - 1))
        return EpsilonPoint(dmp, est, lower, upper, k), hint_out

    def _locate(self, dt: Fraction, dmp, high: bool, pred, cache: dict, answers: list, k_lo: int) -> int:
        """The first piece k > k_lo (a certified false end) with ``pred(k)`` true.

        A first guess comes from the solved larger targets (:meth:`_guess_piece`), else
        from a Newton step down from the zCDP bound's piece (tested true); at most three
        secant steps on ``sqrt(−log δ)`` through the last two evaluated points refine it,
        while they move by more than a piece; then :func:`first_true_near` walks from
        the last guess.  Every step tests the certified predicate, so the guesses change
        the cost, never the piece (for a monotone predicate)."""
        guess = self._guess_piece(answers, cache.get((k_lo, high)), k_lo, dmp)
        k_zc = self._zcdp_piece(dt, k_lo)
        if guess is not None and guess > k_lo:  # near a larger target's answer
            a, g = k_lo, min(guess, k_zc)
            if pred(g):
                lo, hi, tested = k_lo, g, True
            elif g == k_zc:  # δ not certified below the target at the zCDP bound
                return first_true(pred, g, self._upper_start(dt, g, pred))
            else:
                lo, hi, tested = g, k_zc, False
        else:
            hi = self._upper_start(dt, k_lo, pred)
            lo, tested, a = k_lo, True, hi
            g = self._guess_piece((), cache.get((hi, high)), hi, dmp)
            if g is None or hi - lo <= 1:
                return first_true(pred, lo, hi)
            g = min(max(g, lo + 1), hi)
            if pred(g):
                hi = g
            else:
                lo = g
        b = g
        for _ in range(3):
            g2 = self._secant_piece(cache.get((a, high)), a, cache.get((b, high)), b, dmp)
            if g2 is None or hi - lo <= 1:
                break
            g = min(max(g2, lo + 1), hi)
            if abs(g - b) <= 1:
                break
            if pred(g):
                hi, tested = g, True
            else:
                lo = g
            a, b = b, g
        if hi - lo <= 1 and tested:
            return hi
        try:
            return first_true_near(pred, g, lo, hi, hi_tested=tested)
        except SearchError:  # δ not certified below the target at the zCDP bound
            return first_true(pred, lo, self._upper_start(dt, lo, pred))

    def _guess_piece(self, answers, p, k: int, dmp):
        """The piece where δ reaches the target, estimated on ``u = sqrt(−log δ)`` (nearly
        linear in ε beyond ρ): inverse interpolation ``k(u)`` through the last three
        solved targets (quadratic; linear through two), else a Newton step from the
        evaluated breakpoint k (``du/dε = e^ε P[S ≥ k + K]/(2uδ)``); None without data."""
        if not (0 < dmp < 1):
            return None
        with workdps(_DPS):
            ut = mpmath.sqrt(-mpmath.log(dmp))
            pts = []
            for u, kk in reversed(answers):
                if all(u != v for v, _ in pts):
                    pts.append((u, kk))
                if len(pts) == 3:
                    break
            if len(pts) >= 2:
                est = mpmath.mpf(0)
                for i, (ui, ki) in enumerate(pts):
                    w = mpmath.mpf(ki)
                    for j, (uj, _) in enumerate(pts):
                        if j != i:
                            w *= (ut - uj) / (ui - uj)
                    est += w
                return int(mpmath.ceil(est))
            if p is None or not (0 < p.d < 1) or p.p2 is None or not (p.p2 > 0) or p.d == dmp:
                return None
            u = mpmath.sqrt(-mpmath.log(p.d))
            step = 2 * u * (ut - u) * p.d / p.p2  # Δε
            return k + int(mpmath.ceil(step * to_mpf(self.lattice.scale)))

    @staticmethod
    def _secant_piece(pa, a: int, pb, b: int, dmp):
        """The piece where the line through ``(a, u_a)``, ``(b, u_b)`` (u = sqrt(−log δ))
        reaches the target's u, or None."""
        if pa is None or pb is None or a == b or not (0 < pa.d < 1 and 0 < pb.d < 1 and 0 < dmp < 1):
            return None
        with workdps(_DPS):
            ua, ub = mpmath.sqrt(-mpmath.log(pa.d)), mpmath.sqrt(-mpmath.log(pb.d))
            if ua == ub:
                return None
            ut = mpmath.sqrt(-mpmath.log(dmp))
            return a + int(mpmath.ceil((b - a) * (ut - ua) / (ub - ua)))

    def _zcdp_piece(self, dt: Fraction, k_lo: int) -> int:
        """The piece of the zCDP bound ``ρ + 2 sqrt(ρ log(1/δ))`` (δ ≤ target there)."""
        lat = self.lattice
        eps_hi = bun_steinke_epsilon(lat.c, dt)
        return max(floor_exact(lambda dps: eps_hi(dps) - to_mpf(lat.c), lat.scale) + 1, k_lo + 1)

    def _upper_start(self, dt: Fraction, k_lo: int, pred) -> int:
        """A piece with the certified predicate true: the zCDP bound's (valid; only an
        uncertifiable δ is not below the target there), walked up with doubling steps."""
        k_hi = self._zcdp_piece(dt, k_lo)
        step = max(1, int(self.lattice.scale))
        tries = 0
        while not pred(k_hi):
            k_hi += step
            step *= 2
            tries += 1
            if tries > 3:
                with workdps(_DPS):
                    raise self._uncertified(f"ε(δ={mpmath.nstr(to_mpf(dt), 6)}) (δ at the zCDP bound)")
        return k_hi

    def _solve_piece(self, k: int, dt: Fraction, side: str, profile_at, memo: _Memo):
        """ε on piece k from the bounds of δ(ε_{k−1}) and of P[S ≥ k + K]:
        ``ε = ε_{k−1} + log1p((δ(ε_{k−1}) − dt)/(e^{ε_{k−1}} P[S ≥ k + K]))``."""
        lat = self.lattice
        e0 = self._piece_eps(k - 1)
        pr = profile_at(e0)
        (t2,) = self._loose_tails([k + lat.shift])
        if not self.engine.done(t2):
            with workdps(_DPS):
                raise self._uncertified(f"ε(δ={mpmath.nstr(to_mpf(dt), 6)})")
        with workdps(_DPS + 10):
            em0 = _mp(e0)
            e_right = _mp(self._piece_eps(k))
            p2, p2lo, p2hi = _bounds(t2)
            scale = mpmath.exp(em0)
            if dt > Fraction(1, 2):  # δ0 − dt = (1 − dt) − (1 − δ0)
                cd = to_mpf(1 - dt)
                gaps = {"est": cd - pr.c, "upper": cd - pr.c_lo, "lower": cd - pr.c_hi}
            else:
                dm = to_mpf(dt)
                gaps = {"est": pr.d - dm, "upper": pr.d_hi - dm, "lower": pr.d_lo - dm}
            den = {"est": p2, "upper": p2lo, "lower": p2hi}

            def solve(which):
                g = max(gaps[which], mpmath.mpf(0))
                if den[which] <= 0:
                    return e_right
                return min(em0 + mpmath.log1p(g / (scale * den[which])), e_right)

            return solve(side), solve("est")
