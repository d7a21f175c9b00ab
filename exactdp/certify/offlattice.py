"""Certificates for designs off any small lattice: δ(ε), ε(δ) and β(α) by meet in the middle.

The sums come from :class:`~exactdp.certify.mitm.Halves` (exact enumeration of each
weight's atoms in Arb balls, two halves, one sorted merge per threshold); ``kept`` below
means the enumerated configurations, ``μ_P`` the ball bounding the P-mass left out
(untilted, λ = 0).

* **δ(ε)** ``= Σ_x P(x)(1 − e^{ε−L(x)})_+``: the kept part is
  ``P(kept, L > ε) − e^ε Q(kept, L > ε)`` (every term ≥ 0), the rest lies in
  ``[0, P(left out, L > ε)]``.  For ε above ρ the atoms are kept by their weight under the
  tilted measure ``P e^{λL}/M`` (λ the saddle point: tilted mean ε; ``M = E_P e^{λL}``) and
  ``P(left out, L > ε) ≤ e^{−λε} M · (tilted mass left out)`` (Chernoff): the atoms that
  matter at ε are kept, and a δ of 1e-300 needs no more of them than a δ of 0.1.
* **ε(δ)**: for any event S, ``P(S) − e^ε Q(S) ≤ δ(ε)``, and δ(·) is strictly decreasing
  where positive; with ``S = {kept, L > ε₀}`` the root ``ε_S = log((P(S) − δ)/Q(S))`` is a
  lower bound of ε(δ).  An upper end u is proved by ``δ(u) ≤ δ`` (the upper end of its
  enclosure); u is tried a little above ε_S.  ε₀ comes from Newton's iteration on the
  float64 image (``δ`` is convex in ``e^ε`` and the tangent root approaches from below).
* **β(α)** of the optimal test between P and Q: the test ``φ = 1{L < ℓ}`` has
  ``α_φ ∈ P(kept, L < ℓ) + [0, μ_P]`` and ``β_φ = Q(L ≥ ℓ) ∈ Q(kept, L ≥ ℓ) + [0, e^{−ℓ}μ_P]``
  (``Q = P e^{−L} ≤ P e^{−ℓ}`` where ``L ≥ ℓ``); one with ``α_φ ≤ α`` bounds β from above,
  and two with ``α_{φ1} ≤ α ≤ α_{φ2}`` give the chord, a sharper upper bound (randomised tests).
  The supporting line of slope ``−e^{−ℓ}`` gives the lower bound
  ``β ≥ Q(kept, L ≥ ℓ) + e^{−ℓ}(P(kept, L < ℓ) − α)`` (the dual of Dong, Roth & Su's
  ``f(α) = sup_ε 1 − δ(ε) − e^ε α``; the dropped mass only raises it).

Each query runs at the precision levels of :data:`LEVELS` until the enclosure is narrower
than ``rel_width``; the truncation is deepened when ``μ_P`` is not small beside the value.
"""

from __future__ import annotations

import math
from fractions import Fraction

from flint import arb

from exactdp.certify.balls import ball, endpoints, interval, precision
from exactdp.certify.dgball import float_log_mgf, float_tilted_mean
from exactdp.certify.mitm import MAX_HALF_ATOMS, Halves, Unit, estimate_atoms, half_estimate, split_halves, units_of
from exactdp.certify.result import Enclosure
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import InputError, UncertifiedError
from exactdp.numerics.exact import fraction_str, to_fraction

__all__ = ["MitmCertifier", "METHOD", "LEVELS", "reach"]

METHOD = "arb/meet-in-the-middle"
#: (Arb precision in bits, log₂ of the relative truncation target) of the attempts
LEVELS = ((128, 50), (192, 80))
_LN2 = math.log(2.0)
_MAX_DEEPEN = 4


def reach(design: Composition, log_inv_tau: float) -> tuple[int, int]:
    """The estimated atoms of the two halves at truncation ``e^{−log_inv_tau}`` (planning:
    nothing is built)."""
    sizes = [estimate_atoms(members, log_inv_tau) for _, members in units_of(design)]
    ia, ib = split_halves(sizes)
    return int(half_estimate([sizes[i] for i in ia])), int(half_estimate([sizes[i] for i in ib]))


class MitmCertifier:
    """Ball-arithmetic enclosures for a design off the lattice (see the module docstring).

    Parameters
    ----------
    design : Composition
    rel_width : float
        Target relative width of an enclosure (default 1e-14); the last level's enclosure
        is returned otherwise (still rigorous).
    levels : tuple of (int, int)

    Raises
    ------
    OverflowError
        (from the queries) when the halves would exceed :data:`~exactdp.certify.mitm.MAX_HALF_ATOMS`.
    """

    method = METHOD
    tail_method = "meet-in-the-middle"

    def __init__(self, design: Composition, *, rel_width: float = 1e-14, levels=LEVELS):
        if not isinstance(design, Composition):
            raise InputError("design", design, "expected an exactdp.Composition")
        self.design = design
        self.units = units_of(design)
        if not self.units:
            raise InputError("design", design, "every mechanism has shift 0: nothing to certify")
        self.rho = sum((Fraction(d * d * m) / (2 * Fraction(s2)) for _, mem in self.units for s2, d, m in mem),
                       Fraction(0))
        self._offsets = [sum((Fraction(d * d * m) / (2 * Fraction(s2)) for s2, d, m in mem), Fraction(0))
                         for _, mem in self.units]
        self.rel_width = float(rel_width)
        self.levels = tuple(levels)
        self._halves: dict = {}

    def finest(self) -> MitmCertifier:
        """The same design at every level, returning the narrowest enclosure (shares the halves)."""
        other = MitmCertifier(self.design, rel_width=0.0, levels=self.levels)
        other._halves = self._halves
        return other

    # -- machinery ----------------------------------------------------------------------
    def check_reach(self, log_inv_tau: float) -> None:
        """OverflowError when the halves at this truncation would be beyond reach."""
        na, nb = reach(self.design, log_inv_tau)
        if max(na, nb) > MAX_HALF_ATOMS:
            raise OverflowError(f"meet in the middle needs about {max(na, nb):.3g} atoms in one half "
                                f"(at most {MAX_HALF_ATOMS:.3g})")

    def within_reach(self) -> bool:
        """Whether δ at the first level (and so most queries) is within reach."""
        try:
            self.check_reach(self.levels[0][1] * _LN2 + 8.0)
        except OverflowError:
            return False
        return True

    def halves(self, prec: int, log_inv_tau: float, lower: bool, lam: Fraction = Fraction(0)) -> Halves:
        """The halves at this precision, truncation and tilt (prefix sums too when
        ``lower``); the last set built is cached."""
        key = (prec, round(log_inv_tau, 3), lower, lam)
        h = self._halves.get(key)
        if h is None:
            self.check_reach(log_inv_tau)
            self._halves.clear()
            with precision(prec):
                units = [Unit(w, mem, log_inv_tau, lam) for w, mem in self.units]
                tau = math.exp(-log_inv_tau - 7.0) if log_inv_tau < 700 else 0.0
                h = Halves(units, lower_sums=lower, tau=tau, lam=lam)
            self._halves.clear()  # one set at a time: each can hold millions of balls
            self._halves[key] = h
        return h

    def _run(self, compute) -> Enclosure:
        best: Enclosure | None = None
        error: ArithmeticError | None = None
        for prec, bits in self.levels:
            try:
                with precision(prec):
                    enc = compute(prec, bits)
            except OverflowError:
                if best is not None:  # a finer level beyond reach: the coarser enclosure stands
                    return best
                raise
            except ArithmeticError as exc:
                error = exc
                continue
            if enc.relative_width <= self.rel_width:
                return enc
            if best is None or enc.relative_width < best.relative_width:
                best = enc
        if best is None:
            assert error is not None
            raise UncertifiedError(f"the meet-in-the-middle certificate could not enclose this point ({error}); "
                                   f"run the command without --certify: its numbers are the engine's certified "
                                   f"brackets") from error
        return best

    def _enclosure(self, quantity, argument, lo: Fraction, hi: Fraction, prec, h: Halves, lit, **extra):
        params = {"tail_method": "meet-in-the-middle", "atoms_per_half": h.atoms, "units": len(self.units),
                  "log_inv_tau": round(lit, 3), "left_out_mass": h.lost.upper().str(3, radius=False), **extra}
        return Enclosure(quantity, argument, lo, hi, METHOD, prec, tuple(sorted(params.items())))

    def _tilted_mean(self, lam: float) -> float:
        """``E[L e^{λL}]/E[e^{λL}]`` in float64 (planning only)."""
        return sum(float(c) + float(w) * sum(m * float_tilted_mean(Fraction(s2), lam * float(w)) for s2, _, m in mem)
                   for (w, mem), c in zip(self.units, self._offsets))

    def _log_mgf(self, lam: float) -> float:
        """``log E e^{λL}`` in float64 (planning only)."""
        return sum(lam * float(c) + sum(m * float_log_mgf(Fraction(s2), lam * float(w)) for s2, _, m in mem)
                   for (w, mem), c in zip(self.units, self._offsets))

    def _tilt(self, eps: float) -> Fraction:
        """The saddle point λ ≥ 0 whose tilted mean of L is ε (bisection on the float64 images;
        any λ ≥ 0 is valid, this one keeps the atoms that matter at ε), on a grid of 2⁻²⁰."""
        if self._tilted_mean(0.0) >= eps:
            return Fraction(0)
        lo, hi = 0.0, 1.0
        while self._tilted_mean(hi) < eps and hi < 1e6:
            lo, hi = hi, 2 * hi
        for _ in range(50):
            mid = 0.5 * (lo + hi)
            if self._tilted_mean(mid) < eps:
                lo = mid
            else:
                hi = mid
        return Fraction(round(lo * 2**20), 2**20)

    def _epsilon_estimate(self, log_inv_delta: float) -> float:
        """ε where the Chernoff bound ``min_λ log E e^{λ(L−ε)}`` reaches ``−log(1/δ)`` (planning:
        an upper estimate of ε(δ), for the tilt)."""
        def chernoff(e):
            lam = float(self._tilt(e))
            return self._log_mgf(lam) - lam * e

        lo = self._tilted_mean(0.0)
        step = max(1.0, math.sqrt(2 * float(self.rho) * max(log_inv_delta, 1.0)))
        hi = lo + step
        while chernoff(hi) > -log_inv_delta and hi < 1e9:
            lo, hi = hi, hi + 2 * step
            step *= 2
        for _ in range(40):
            mid = 0.5 * (lo + hi)
            if chernoff(mid) > -log_inv_delta:
                lo = mid
            else:
                hi = mid
        return hi

    # -- δ(ε) ---------------------------------------------------------------------------
    def delta(self, epsilon) -> Enclosure:
        """Enclosure of δ(ε) for an exact rational ε."""
        e = to_fraction(epsilon, "epsilon")
        arg = f"epsilon={fraction_str(e)}"

        def compute(prec, bits):
            lit = bits * _LN2 + 8.0
            lam = self._tilt(float(e))
            for _ in range(_MAX_DEEPEN):
                h = self.halves(prec, lit, False, lam)
                lo, hi, s = self._delta_ends(h, e)
                lost = h.lost_above(e)
                target = lo * ball(Fraction(1, 2**bits))
                if lo > 0 and not lost > target:
                    break
                new = lit + (float((lost / lo).log().upper()) + bits * _LN2 + 5.0 if lo > 0 else lit)
                try:
                    self.check_reach(new)  # the tilt moves the atoms kept, not their number
                except OverflowError:
                    break  # the enclosure stays valid, only wider
                lit = new
            elo, ehi = endpoints_of(lo, hi)
            return self._enclosure("delta", arg, elo, min(ehi, Fraction(1)), prec, h, lit, window_pairs=s.window,
                                   tilt=fraction_str(lam))

        return self._run(compute)

    @staticmethod
    def _delta_ends(h: Halves, e: Fraction):
        s = h.sums(e)
        v = s.gt_p - ball(e).exp() * s.gt_q
        lo = v.lower().max(arb(0))
        return lo, v.upper() + h.lost_above(e), s

    # -- ε(δ) ---------------------------------------------------------------------------
    def epsilon(self, delta, hint=None) -> Enclosure:
        """Enclosure of ε(δ) = min{ε : δ(ε) ≤ delta}; ``hint`` (a number near ε(δ)) is only
        tried as one more candidate for the upper end."""
        dt = to_fraction(delta, "delta")
        if not 0 < dt < 1:
            raise InputError("delta", delta, "must lie in (0, 1)")
        arg = f"delta={fraction_str(dt)}"

        def compute(prec, bits):
            lit = bits * _LN2 + 8.0
            log_inv = math.log(dt.denominator) - math.log(dt.numerator)
            h = self.halves(prec, lit, False, self._tilt(self._epsilon_estimate(log_inv)))
            db = ball(dt)
            e0 = self._float_root(h, float(dt))
            for _ in range(40):
                s = h.sums(e0)
                num = s.gt_p - db
                if num > 0 and s.gt_q > 0:
                    break
                e0 -= Fraction(1, 2**30) * (1 + abs(e0))
            else:
                raise UncertifiedError(f"{arg}: no event S with P(S) > delta found near the float estimate")
            sol = (num / s.gt_q).log()
            # tangent steps in balls from below (the float image may have lost Q to underflow):
            # each ε_S is a lower bound and they increase towards ε(δ)
            for _ in range(30):
                nxt = endpoints(sol)[0]
                if nxt <= e0 + Fraction(1, 2**44) * (1 + abs(e0)):
                    break
                s2 = h.sums(nxt)
                num2 = s2.gt_p - db
                if not (num2 > 0 and s2.gt_q > 0):
                    break
                e0, s, num, sol = nxt, s2, num2, (num2 / s2.gt_q).log()
            lo, hi = endpoints(sol)
            for k in range(6):
                step = (abs(hi) + 1) * Fraction(1, 2 ** max(8, bits + 4 - 8 * k))
                u = hi + step
                if self._delta_upper(h, u) <= dt:
                    return self._enclosure("epsilon", arg, lo, u, prec, h, lit, window_pairs=s.window,
                                           event_threshold=fraction_str(e0))
            if hint is not None:
                u = _exact_number(hint)
                if u is not None and u >= lo and self._delta_upper(h, u) <= dt:
                    return self._enclosure("epsilon", arg, lo, u, prec, h, lit, window_pairs=s.window,
                                           event_threshold=fraction_str(e0), upper_from="hint")
            raise ArithmeticError(f"{arg}: no upper end of epsilon proved at {prec} bits")

        return self._run(compute)

    @staticmethod
    def _delta_upper(h: Halves, u: Fraction) -> Fraction:
        _, hi, _ = MitmCertifier._delta_ends(h, u)
        return endpoints(hi)[1]

    @staticmethod
    def _float_root(h: Halves, d: float) -> Fraction:
        """ε₀ near ε(δ) from below: tangent (Newton) steps in ``t = e^ε`` on the float image."""
        e = 0.0
        a, b = h.float_gt(e)
        if a - b <= d:
            e = math.log1p(-d) - 1.0
        for _ in range(80):
            a, b = h.float_gt(e)
            if not (b > 0 and a > d):
                break
            new = math.log((a - d) / b)
            if abs(new - e) <= 1e-15 * (1 + abs(e)):
                e = new
                break
            e = new
        return Fraction(e) - Fraction(1, 2**40) * (1 + abs(Fraction(e)))

    # -- β(α) ---------------------------------------------------------------------------
    def tradeoff(self, alpha, hint=None) -> Enclosure:
        """Enclosure of β = f(α), the optimal type-II error at type-I error α (``hint``
        is ignored: the thresholds are searched on the float image)."""
        af = to_fraction(alpha, "alpha")
        if not 0 <= af <= 1:
            raise InputError("alpha", alpha, "must lie in [0, 1]")
        arg = f"alpha={fraction_str(af)}"

        def compute(prec, bits):
            if af in (0, 1):
                return Enclosure("beta", arg, 1 - af, 1 - af, METHOD, prec, ())
            lit = bits * _LN2 + 8.0 + max(0.0, -math.log(max(float(af), 1e-300)))
            h = self.halves(prec, lit, True)
            ab = ball(af)
            l1, l2 = self._float_thresholds(h, float(af))
            for _ in range(30):
                s1, s2 = h.sums(l1, lower=True), h.sums(l2, lower=True)
                ok1, ok2 = s1.lt_p + h.lost_p.upper() <= ab, s2.lt_p >= ab
                if ok1 and ok2:
                    break
                width = (l2 - l1) + Fraction(1, 2**40) * (1 + abs(l1))
                if not ok1:
                    l1 -= width
                if not ok2:
                    l2 += width
            else:
                raise ArithmeticError(f"{arg}: could not bracket alpha by two tests")
            # the tests 1{L < ℓ} over every configuration: α_φ ∈ P(kept, L < ℓ) + [0, μ_P] and
            # β_φ = Q(L ≥ ℓ) ∈ Q(kept, L ≥ ℓ) + [0, e^{−ℓ} μ_P] (Q = P·e^{−L} ≤ P·e^{−ℓ} there)
            mp = interval(arb(0), h.lost_p.upper())
            a1, a2 = s1.lt_p + mp, s2.lt_p + mp
            b1 = s1.gt_q + s1.eq_q + (-ball(l1)).exp() * mp
            b2 = s2.gt_q + s2.eq_q + (-ball(l2)).exp() * mp
            upper = b1.upper()  # φ₁ alone: α_φ₁ ≤ α
            if (a2 - a1) > 0:
                t = ((ab - a1) / (a2 - a1)).max(arb(0)).min(arb(1))
                upper = upper.min((b1 + (b2 - b1) * t).upper())
            lower = arb(0)
            # the supporting lines at the two tests and, where few atoms lie between them, at
            # each atom (the slope of the curve's segment there: the bound is then exact)
            tries = [(l1, s1), (l2, s2)] + [(v, None) for v in (h.atom_values(l1, l2) or ())]
            for ell, s in tries:
                s = s if s is not None else h.sums(ell, lower=True)
                lower = lower.max((s.gt_q + s.eq_q + (-ball(ell)).exp() * (s.lt_p - ab)).lower())
            lo, hi = endpoints_of(lower, upper)
            return self._enclosure("beta", arg, lo, min(hi, Fraction(1)), prec, h, lit,
                                   thresholds=(fraction_str(l1), fraction_str(l2)),
                                   window_pairs=s1.window + s2.window)

        return self._run(compute)

    @staticmethod
    def _float_thresholds(h: Halves, a: float) -> tuple[Fraction, Fraction]:
        """ℓ₁ < ℓ₂ close together with ``P(L < ℓ₁) ≤ α ≤ P(L < ℓ₂)`` on the float image."""
        lo = float(h.A.values.min() + h.vb.min()) - 1.0
        hi = float(h.A.values.max() + h.vb.max()) + 1.0
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            if h.float_lt(mid) <= a:
                lo = mid
            else:
                hi = mid
            if hi - lo <= 1e-13 * (1 + abs(lo)):
                break
        return Fraction(lo), Fraction(hi)


def endpoints_of(lo: arb, hi: arb) -> tuple[Fraction, Fraction]:
    """Exact ends of ``[lo, hi]`` (balls; the lower end of lo, the upper end of hi)."""
    return endpoints(interval(lo, lo))[0], endpoints(interval(hi, hi))[1]


def _exact_number(x) -> Fraction | None:
    """A finite number (mpmath, float, Fraction) exactly, else None."""
    import mpmath

    if isinstance(x, Fraction):
        return x
    try:
        v = mpmath.mpf(x)
    except (TypeError, ValueError):
        return None
    if not mpmath.isfinite(v):
        return None
    m, e = v.man_exp
    return Fraction(int(m)) * Fraction(2) ** int(e)
