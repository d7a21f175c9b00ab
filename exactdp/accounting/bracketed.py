"""Accounting beyond the int64 lattice: δ(ε), ε(δ) and the trade-off from certified tails.

:class:`BigLatticeAccountant` answers every design whose exact lattice is too large for
the int64 engine (two-decimal variances, the P.L. 94-171 budgets, the whole 2020
release, binary-float σ² from other libraries), with the same methods as
:class:`~exactdp.accounting.accountant.ExactAccountant` (which hands such designs over).
Tails ``P(W > t)`` and ``P(W ≥ t)`` come from one of two engines, chosen per design:

* :class:`exactdp.engine.split.SplitTails` — *exact*: all families but one enumerated,
  the last by its own lattice; certified relative error ≤ rel_tol.  Chosen when the
  design has few families (atoms ≤ 3·10⁶).
* :class:`exactdp.engine.smoothed.SmoothedTails` — *bracketed*: the lattice-free
  smoothed inversion with monotone brackets of resolution a (any lattice scale).

Every point says which (``certification`` is ``"exact"`` or ``"bracket"``) and carries
``lower``/``upper``.  Formulas (W symmetric, c = ρ, atoms at a threshold cancel):

* ``δ(ε) = P(W > ε−c) − e^ε P(W > ε+c)``: bracket ``[lo₁ − e^ε hi₂, hi₁ − e^ε lo₂]``;
* ε(δ): the smallest ε ≥ 0 with δ(ε) ≤ target lies in ``[ε_lo, ε_up]`` with
  ``δ_hi(ε_up) ≤ target < δ_lo(ε_lo)`` (δ is continuous and non-increasing);
* trade-off: the deterministic tests "reject iff W ≥ x" have
  ``(α, β) = (P(W ≥ x), P(W > 2c − x))`` on the curve, and f is non-increasing, so
  ``P(W ≥ x') ≥ α ≥ P(W ≥ x'')`` gives ``f(α) ∈ [P(W > 2c−x'), P(W > 2c−x'')]``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.base import Accountant, sequence_values
from exactdp.accounting.results import AccountingResult, DeltaPoint, Diagnostics, EpsilonPoint, TradeoffPoint
from exactdp.engine.families import groups_of
from exactdp.engine.resonance import TooManyResonances
from exactdp.engine.smoothed import SmoothedTails, resolution_for
from exactdp.engine.split import SplitTails, TooManyAtoms
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_RESULT, to_mpf, workdps

__all__ = ["BigLatticeAccountant", "BracketedDelta", "BracketedEpsilon", "BracketedTradeoff"]

_DPS = DPS_RESULT


@dataclass(frozen=True)
class BracketedDelta(DeltaPoint):
    """A DeltaPoint whose ``certification`` says ``"exact"`` (error ≤ the certified bound
    of an exact method) or ``"bracket"`` (``lower ≤ δ ≤ upper`` by monotonicity)."""

    certification: str = "bracket"


@dataclass(frozen=True)
class BracketedEpsilon(EpsilonPoint):
    certification: str = "bracket"


@dataclass(frozen=True)
class BracketedTradeoff(TradeoffPoint):
    certification: str = "bracket"


def _real(value, field):
    return value if callable(value) else to_fraction(value, field)


def _at(x, dps=_DPS):
    return to_mpf(x) if isinstance(x, Fraction) else x(dps)


class BigLatticeAccountant(Accountant):
    """δ(ε), ε(δ) and β = f(α) of a composition of any lattice size (see module).

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Certified relative accuracy of each exact tail (split engine).
    delta_floor : float
        The smallest δ for which the smoothed engine's brackets are sized to stay below
        ~1e-9 relative (smaller δ still get certified, wider brackets).
    method : {"auto", "split", "smoothed"}

    Notes
    -----
    Method: exact split enumeration or the Gaussian-smoothed tilted inversion with a
    certified resonance sieve (:mod:`exactdp.engine.smoothed`).  Error bound: every
    number is a certified bracket ``[lower, upper]``.  Reference: Daniels (1954);
    Canonne, Kamath & Steinke (2020); Dong, Roth & Su (2022) for f-DP.
    """

    def __init__(self, composition: Composition, rel_tol: float = 1e-10, delta_floor: float = 1e-21,
                 method: str = "auto"):
        if not isinstance(composition, Composition):
            raise InputError("composition", composition, "expected an exactdp.Composition")
        self.composition = composition
        self.rho = composition.rho
        self.c = composition.rho
        self.groups = groups_of(composition)
        self.rel_tol = float(rel_tol)
        self.tails = None
        errors = []
        if method in ("auto", "split"):
            try:
                self.tails = SplitTails(self.groups, rel_tol=self.rel_tol / 10)
                self.certification, self.method = "exact", self.tails.method
            except TooManyAtoms as exc:
                errors.append(str(exc))
        if self.tails is None and method in ("auto", "smoothed"):
            try:
                self.tails = SmoothedTails(self.groups, resolution_for(float(self.c), delta_floor))
                self.certification, self.method = "bracket", "smoothed-inversion"
            except TooManyResonances as exc:
                errors.append(str(exc))
        if self.tails is None:
            raise UncertifiedError("design beyond every big-lattice engine: " + "; ".join(errors)
                                   + " (try fewer incommensurate variance groups)")

    @property
    def engine(self):
        """There is no int64 lattice engine here: the 60-digit twin of
        :mod:`exactdp.accounting.verification` (which re-runs it) does not apply."""
        raise UncertifiedError("this design is beyond the int64 lattice: its numbers are certified brackets of "
                               f"the {self.method} method; the 60-digit lattice twin (--verify) does not apply")

    # ------------------------------------------------------------------ tails
    def brackets(self, ts, strict: bool = True) -> list:
        """Certified (lo, hi) of ``P(W > t)`` (strict) or ``P(W ≥ t)`` for each t
        (Fraction or mpf)."""
        if isinstance(self.tails, SplitTails):
            vals = self.tails.tails(ts, strict)
            out = []
            with workdps(_DPS):
                for v, rel in vals:
                    if not math.isfinite(rel) or rel >= 1:
                        raise UncertifiedError(f"tail not certified (relative bound {rel})")
                    v = mpmath.mpf(v)
                    out.append((v * (1 - rel), min(v * (1 + rel), mpmath.mpf(1))))
            return out
        with workdps(_DPS):
            return self.tails.brackets([_at(t) if not isinstance(t, mpmath.mpf) else t for t in ts])

    def diagnostics(self) -> Diagnostics:
        kept = getattr(self.tails, "nodes_kept", getattr(self.tails, "n_atoms", 0))
        return Diagnostics(method=self.method, nodes_kept=int(kept), nodes_total=0, lattice_scale="none",
                           n_groups=len(self.groups))

    # ------------------------------------------------------------------ δ(ε)
    def _thresholds(self, e):
        if isinstance(e, Fraction):
            return e - self.c, e + self.c
        with workdps(_DPS + 20):
            x = e(_DPS + 20)
            c = to_mpf(self.c)
            return x - c, x + c

    def _delta_brackets(self, es) -> list:
        """(lo, hi, P1 mid, e^ε·P2 mid, thresholds) of δ at each exact real ε (one batch)."""
        ths = [self._thresholds(e) for e in es]
        br = self.brackets([t for pair in ths for t in pair])
        out = []
        with workdps(_DPS):
            tiny = mpmath.mpf(10) ** -30
            for k, e in enumerate(es):
                (l1, h1), (l2, h2) = br[2 * k], br[2 * k + 1]
                ee = mpmath.exp(_at(e))
                lo = max(l1 - ee * h2 * (1 + tiny), mpmath.mpf(0))
                hi = h1 - ee * l2 * (1 - tiny)
                out.append((lo, hi, (l1 + h1) / 2, ee * (l2 + h2) / 2, ths[k]))
        return out

    def _delta_bracket(self, e):
        return self._delta_brackets([e])[0]

    def delta(self, epsilons) -> tuple:
        """δ(ε) for each ε (exact value or ``f(dps)`` callable), as certified brackets."""
        epsilons = sequence_values(epsilons, "epsilon")
        es = [_real(e, "epsilon") for e in epsilons]
        out = []
        for e, (lo, hi, p1, p2, th) in zip(es, self._delta_brackets(es)):
            with workdps(_DPS):
                out.append(BracketedDelta(_at(e), (lo + hi) / 2, (hi - lo) / 2, p1, p2, th, self.certification))
        return tuple(out)

    # ------------------------------------------------------------------ ε(δ)
    def epsilon(self, deltas) -> tuple:
        """The smallest ε ≥ 0 with δ(ε) ≤ each target, as a certified bracket.

        Newton steps on log δ (``d log δ/dε = −e^ε P(W > ε+c)/δ``) for all targets at once,
        then certified sides: ``δ_hi(upper) ≤ target < δ_lo(lower)``, stepping outwards
        from the Newton point by the bracket's own width (×4 per retry)."""
        deltas = sequence_values(deltas, "delta")
        dts = []
        for d in deltas:
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            dts.append(dt)
        with workdps(_DPS):
            targets = [to_mpf(d) for d in dts]
        zero_hi = self._delta_bracket(Fraction(0))[1]
        c = float(self.c)
        eps = {i: Fraction(c + 2 * math.sqrt(c * math.log(1 / float(d)))).limit_denominator(10**12)
               for i, d in enumerate(dts) if zero_hi > targets[i]}
        active = list(eps)
        for _ in range(60):
            if not active:
                break
            res = self._delta_brackets([eps[i] for i in active])
            nxt = []
            for i, (lo, hi, _, p2, _) in zip(active, res):
                mid = (lo + hi) / 2
                if not mid > 0 or not p2 > 0:
                    eps[i] = eps[i] / 2
                    nxt.append(i)
                    continue
                step = float((mpmath.log(mid) - mpmath.log(targets[i])) * mid / p2)
                eps[i] = max(eps[i] + Fraction(step).limit_denominator(10**15), Fraction(0))
                if abs(step) > 1e-13 * max(1.0, float(eps[i])):
                    nxt.append(i)
            active = nxt
        res = dict(zip(eps, self._delta_brackets(list(eps.values())))) if eps else {}
        step, up, low = {}, dict(eps), dict(eps)
        for i, (lo, hi, _, p2, _) in res.items():
            h = float(1.5 * (hi - lo) / p2) if p2 > 0 else 0.0
            step[i] = Fraction(max(h, 1e-15 * max(1.0, float(eps[i])))).limit_denominator(10**18)
        for side in ("up", "low"):
            pos = dict(up if side == "up" else low)
            k = dict(step)
            todo = list(pos)
            for _ in range(200):
                if not todo:
                    break
                res = self._delta_brackets([pos[i] for i in todo])
                nxt = []
                for i, (lo, hi, _, _, _) in zip(todo, res):
                    done = hi <= targets[i] if side == "up" else (lo > targets[i] or pos[i] == 0)
                    if not done:
                        pos[i] = pos[i] + k[i] if side == "up" else max(pos[i] - k[i], Fraction(0))
                        k[i] *= 4
                        nxt.append(i)
                todo = nxt
            (up if side == "up" else low).update(pos)
        out = []
        with workdps(_DPS):
            for i, target in enumerate(targets):
                if i not in eps:
                    z = mpmath.mpf(0)
                    out.append(BracketedEpsilon(target, z, z, z, 0, self.certification))
                    continue
                lower = to_mpf(low[i]) if low[i] > 0 else mpmath.mpf(0)
                out.append(BracketedEpsilon(target, to_mpf(eps[i]), min(lower, to_mpf(up[i])), to_mpf(up[i]), 0,
                                            self.certification))
        return tuple(out)

    # ------------------------------------------------------------------ trade-off
    def _alpha_at(self, x, side):
        lo, hi = self.brackets([x], strict=False)[0]
        return lo if side == "lo" else hi

    def tradeoff(self, alphas) -> tuple:
        """β = f(α) for each α ∈ [0, 1], as a certified bracket (value = lower bound)."""
        alphas = sequence_values(alphas, "alpha")
        out = []
        two_c = 2 * self.c
        sd = math.sqrt(2 * float(self.c))
        for a in alphas:
            af = to_fraction(a, "alpha")
            if not 0 <= af <= 1:
                raise InputError("alpha", a, "must lie in [0, 1]")
            with workdps(_DPS):
                amp = to_mpf(af)
            if af in (0, 1):
                beta = mpmath.mpf(1 - af)
                out.append(BracketedTradeoff(amp, beta, mpmath.mpf(0), 0, self.certification))
                continue
            # x with P(W ≥ x) ≈ α by bisection on the bracket midpoints
            lo_x, hi_x = -sd, sd
            while self._alpha_at(Fraction(lo_x), "lo") < amp:
                lo_x -= 4 * sd
            while self._alpha_at(Fraction(hi_x), "hi") > amp:
                hi_x += 4 * sd
            lo_f, hi_f = Fraction(lo_x), Fraction(hi_x)
            for _ in range(200):
                if hi_f - lo_f < Fraction(1, 10**14) * max(1, abs(lo_f)):
                    break
                mid = (lo_f + hi_f) / 2
                l, h = self.brackets([mid], strict=False)[0]
                if l >= amp:
                    lo_f = mid  # P(W ≥ mid) ≥ α certainly
                elif h <= amp:
                    hi_f = mid  # P(W ≥ mid) ≤ α certainly
                else:
                    break
            # widen to certified sides
            step = Fraction(1, 10**13) * max(1, abs(lo_f))
            x1 = lo_f
            while self._alpha_at(x1, "lo") < amp:
                x1 -= step
                step *= 4
            step = Fraction(1, 10**13) * max(1, abs(hi_f))
            x2 = hi_f
            while self._alpha_at(x2, "hi") > amp:
                x2 += step
                step *= 4
            out.append(self._tradeoff_from(amp, x1, x2, two_c))
        return tuple(out)

    def _tradeoff_from(self, amp, x1: Fraction, x2: Fraction, two_c: Fraction):
        """β bracket from the curve points at x1 < x2 (P(W ≥ x1) ≥ α ≥ P(W ≥ x2)): above by
        the chord (f is convex), below by f(α) ≥ P(W > 2c − x1) and by the extensions of
        the neighbouring chords (x1 − d, x1) and (x2, x2 + d)."""
        d = max(x2 - x1, Fraction(1, 10**12))
        xs = [x1 - d, x1, x2, x2 + d]
        al = self.brackets(xs, strict=False)
        be = self.brackets([two_c - x for x in xs], strict=True)
        with workdps(_DPS):
            A = [(lo + hi) / 2 for lo, hi in al]
            B = [(lo + hi) / 2 for lo, hi in be]
            eA = [(hi - lo) / 2 for lo, hi in al]
            eB = [(hi - lo) / 2 for lo, hi in be]

            def line(i, j, with_err):
                if A[i] == A[j]:
                    return None
                slope = (B[j] - B[i]) / (A[j] - A[i])
                val = B[i] + slope * (amp - A[i])
                err = max(eB[i], eB[j]) + abs(slope) * max(eA[i], eA[j])
                return val + err if with_err > 0 else val - err * (1 + 2 * abs(amp - A[i]) / abs(A[j] - A[i]))

            upper = line(1, 2, +1)
            lows = [be[1][0]] + [v for v in (line(0, 1, -1), line(2, 3, -1)) if v is not None]
            lower = max(max(lows), mpmath.mpf(0))
            if upper is None or upper < lower:
                upper = be[2][1]
            upper = min(upper, be[2][1], mpmath.mpf(1))
            return BracketedTradeoff(amp, (lower + upper) / 2, (upper - lower) / 2, 0, self.certification)

    def tradeoff_vertex_brackets(self, xs) -> list:
        """Curve points ``(P(W ≥ x), P(W > 2c − x))`` as brackets, for loss offsets x."""
        al = self.brackets(list(xs), strict=False)
        be = self.brackets([2 * self.c - x for x in xs], strict=True)
        return list(zip(al, be))


def result(kind: str, acc: BigLatticeAccountant, points) -> AccountingResult:
    """An AccountingResult of a big-lattice accountant (same shape as the exact one's)."""
    return AccountingResult(kind, acc.rho, tuple(points), acc.diagnostics())
