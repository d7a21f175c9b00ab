"""The per-α state of the dual trade-off search: model proposals, then the certifying stencil.

Used by :mod:`~exactdp.accounting.dual_tradeoff` (see its docstring for the search as a whole).
:class:`GBrackets` holds the certified brackets of ``G(ε)`` for one α; :class:`AlphaSearch`
proposes the next points from a *model* of G: the Gaussian mechanism of the same ρ with a
discrepancy ``d(u) ≈ d0 + d1·(u − u0)`` fitted at the evaluated points, on ``log δ`` where δ is
below 1/2 and on ``log C``, ``C = 1 − δ``, where the oracle gave the complement (δ above
1/2: α below 1/2, the maximiser at ``u = |ε|`` below ρ, where ``log δ ≈ −C`` carries no
shape; a lattice-free design of near-deterministic discrete Gaussians, ρ ≈ 6600 and
β ≈ 1e-2779, has ``C ≈ 1e-3`` there, three orders above the Gaussian model's).  Estimates only
propose points: every bound is certified by the caller's brackets.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.accounting.chord_envelope import chord_envelope
from exactdp.accounting.profile_search import _log_ncdf, gaussian_log_delta, gaussian_log_delta_float
from exactdp.numerics.precision import DPS_LOW, DPS_RESULT, to_mpf, workdps
from exactdp.numerics.search import golden_max

__all__ = ["GBrackets", "AlphaSearch", "chord_upper", "gaussian_log_complement_float", "TRADEOFF_WIDTH",
           "CERTIFY", "MODEL_ROUNDS", "STENCIL_ROUNDS", "PROMISED_WIDTH"]

_DPS = DPS_RESULT
#: relative width (upper − lower)/lower aimed at for β: a certified relative error (half-width)
#: of at most 2e-10 (the release's bar is 2.5e-10, the promise 1e-9)
TRADEOFF_WIDTH = 2.4e-10
#: the certifying stencil (multiples of its spacing)
CERTIFY = (-2, -1, 0, 1, 2)
#: model rounds (one point per α each) before the stencil, and stencil rounds
MODEL_ROUNDS = 6
STENCIL_ROUNDS = 16
#: the width promised (relative): a search whose gap is within it and has stopped shrinking (its
#: points' noise: the oracle's floor amplified by C/(C − α), e.g. 2.5e-11 × 23 on a lattice-free design
#: of near-deterministic groups) is settled — further stencils cannot narrow it (:meth:`AlphaSearch.settled`)
PROMISED_WIDTH = 1e-9
#: stencil rounds over which a settled gap has not halved
SETTLE_ROUNDS = 4


def gaussian_log_complement_float(u: float, mu: float) -> float:
    """``log(1 − δ_G(u))`` of the Gaussian mechanism with ``μ = √(2ρ)``, binary64 (proposals
    only): ``1 − δ_G(u) = Φ(u/μ − μ/2) + e^u Φ(−u/μ − μ/2)``, two positive terms."""
    la = _log_ncdf(u / mu - mu / 2)
    lb = u + _log_ncdf(-u / mu - mu / 2)
    top = max(la, lb)
    return top + math.log1p(math.exp(min(la, lb) - top)) if top > -math.inf else -math.inf


def chord_upper(points) -> mpmath.mpf:
    """Certified upper bound of sup G from brackets at sorted x (the chord envelope,
    :mod:`~exactdp.accounting.dual_tradeoff`); ``inf`` when the right end is not certified
    to decrease."""
    return chord_envelope(points)[0]


class GBrackets:
    """Certified mp brackets of G(ε) for one α, cached by float ε."""

    def __init__(self, acc, alpha: Fraction):
        self.acc = acc
        self.a = to_mpf(alpha)
        self.one_minus = to_mpf(1 - alpha)
        self.cache: dict = {}
        self.raw: dict = {}  # ε -> (log δ_lo, log δ_hi) at |ε| (floats: the model's data)
        self.raw_c: dict = {}  # ε -> (log C_lo, log C_hi), C = 1 − δ(|ε|), where the oracle gave it

    def fill(self, eps: list, lo, hi, c_lo, c_hi) -> None:
        """Store the brackets of G at ε from the log brackets of δ and of 1 − δ at |ε|: each
        form gives a certified bracket, their intersection is kept (1 − δ from δ cancels
        where δ ≈ 1, the complement's own positive terms do not)."""
        slack = mpmath.mpf(10) ** (6 - _DPS)

        def ex(v):
            return mpmath.exp(mpmath.mpf(float(v))) if v > -np.inf else mpmath.mpf(0)

        for e, l, h, cl, ch in zip(eps, lo, hi, c_lo, c_hi):
            dl, dh = ex(l), min(ex(h), mpmath.mpf(1))
            cm_lo, cm_hi = ex(cl), min(ex(ch), mpmath.mpf(1))
            ee = mpmath.exp(mpmath.mpf(e))
            if e >= 0:  # G = 1 − δ(ε) − e^ε α = C(ε) − e^ε α
                g_lo = max(1 - dh, cm_lo) - ee * self.a
                g_hi = min(1 - dl, cm_hi) - ee * self.a
                size = 1 + dh + ee * self.a  # the magnitudes the mp rounding acts on
                c_lo, c_hi = cm_lo - ee * self.a, cm_hi - ee * self.a
                c_size = min(size, cm_hi + ee * self.a)
            else:  # G = e^ε((1 − α) − δ(−ε)) = e^ε(C(−ε) − α)
                g_lo, g_hi = ee * (self.one_minus - dh), ee * (self.one_minus - dl)  # (the direct form
                size = ee * (self.one_minus + dh)  # alone: its rounding acts on 1 − α + δ, far below 1 near α = 1)
                c_lo, c_hi = ee * (cm_lo - self.a), ee * (cm_hi - self.a)
                c_size = ee * (cm_hi + self.a)
            # the complement's form alone acts on magnitudes C + α only: with C far below 1
            # (α below the lowest atoms' mass) its rounding slack is that much smaller
            self.cache[e] = (ee, max(g_lo - slack * size, c_lo - slack * c_size),
                             min(g_hi + slack * size, c_hi + slack * c_size))
            self.raw[e] = (float(l), float(h))
            if cl > -np.inf:
                self.raw_c[e] = (float(cl), float(ch))

    def at(self, eps) -> list:
        return [self.cache[e] for e in eps]


class AlphaSearch:
    """The search state of one α: model proposals, then the certifying stencil."""

    def __init__(self, g: GBrackets, mu, rng: tuple, locate: bool = False):
        self.g, self.mu, self.rng = g, mu, rng
        self.a_f, self.one_minus_f = float(g.a), float(g.one_minus)
        self.fit = (0.0, 0.0, 0.0)  # (u0, d0, d1): the discrepancy d(u) ≈ d0 + d1·(u − u0)
        self.comp = False  # whether the discrepancy is of log C (C = 1 − δ) rather than of log δ
        self.centre: tuple | None = None  # (u, d, noise) of the last model point
        self.steps: list = []
        self.c, self.h = self._propose()
        self.stencil = False
        # ``locate``: model proposals that do not converge hand over to :func:`_locate` (``lost``),
        # stencils whose gap stops shrinking to the kink search (``stuck``)
        self.locate, self.lost, self.stuck, self.located = locate, False, False, False
        self.gap = mpmath.inf
        self.kelley: float | None = None  # the envelope's peak, evaluated next
        self.model_rounds = self.stencil_rounds = 0
        self.lower, self.upper = mpmath.mpf(0), mpmath.inf
        self.gaps: list = []  # the relative gap after each stencil round

    def _log_model(self, eps: float) -> float:
        """log G with log δ (or log C, :attr:`comp`) from the Gaussian model plus the fitted
        discrepancy (binary64: it only proposes points; −inf where G ≤ 0)."""
        u = abs(eps)
        u0, d0, d1 = (float(v) for v in self.fit)
        if self.comp:
            return self._log_model_c(eps, gaussian_log_complement_float(u, float(self.mu)) + d0 + d1 * (u - u0))
        lg = gaussian_log_delta_float(u, float(self.mu)) + d0 + d1 * (u - u0)
        dl = math.exp(min(lg, 0.0))
        if eps >= 0:  # e^ε·α in log form: ε may be beyond binary64's exp range
            t = eps + math.log(self.a_f) if self.a_f > 0 else -math.inf
            g = 1.0 - dl - math.exp(t) if t < 0 else -1.0
            return math.log(g) if g > 0 else -math.inf
        g = self.one_minus_f - dl
        return eps + math.log(g) if g > 0 else -math.inf

    def _log_model_c(self, eps: float, lc: float) -> float:
        """log G from the model's ``log C`` at ``|ε|``: ``log(C − e^ε α)`` (ε ≥ 0), ``ε + log(C − α)``."""
        lc = min(lc, 0.0)
        la = math.log(self.a_f) if self.a_f > 0 else -math.inf
        t = eps + la if eps >= 0 else la
        if not t < lc:
            return -math.inf
        core = lc + math.log(-math.expm1(t - lc)) if t > -math.inf else lc
        return core if eps >= 0 else eps + core

    def _propose(self) -> tuple:
        """(argmax, spacing) of the model: golden section on log G, then
        ``h = √(W/|(log G)''|)`` (at the maximum ``(log G)'' = G''/G``)."""
        lo, hi = float(self.rng[0]), float(self.rng[1])
        m = golden_max(self._log_model, lo, hi, tol=1e-12 * max(1.0, abs(lo), abs(hi)), float64=True)
        c = float(m.argmax)
        s = 1e-4 * max(1.0, abs(c))
        curv = abs(self._log_model(c + s) - 2 * float(m.value) + self._log_model(c - s)) / s**2
        h = math.sqrt(TRADEOFF_WIDTH / curv) if curv > 0 and math.isfinite(curv) else s
        return c, max(h, 1e-12 * max(1.0, abs(c)))

    def open(self) -> bool:
        return not self.lost and not self.stuck and not self.certified() and not self.settled() and \
            self.stencil_rounds < STENCIL_ROUNDS

    def settled(self) -> bool:
        """Within :data:`PROMISED_WIDTH` and not halved over the last :data:`SETTLE_ROUNDS` stencil
        rounds: the points' noise bounds the gap (a choice of work only; the bounds are certified)."""
        g = self.gaps
        return len(g) > SETTLE_ROUNDS and g[-1] <= PROMISED_WIDTH and g[-1] > g[-1 - SETTLE_ROUNDS] / 2

    def certified(self) -> bool:
        return self.upper - self.lower <= TRADEOFF_WIDTH * abs(self.lower)

    def points(self) -> list:
        if self.kelley is not None:
            return [self.kelley]
        if self.stencil:
            return [self.c + k * self.h for k in CERTIFY]
        return [self.c]

    def take(self, eps: list) -> None:
        """Record a round: bound f(α) from every point so far, then the next proposal."""
        allpts = self.g.at(sorted(self.g.cache))
        self.lower = max(self.lower, max(p[1] for p in allpts))
        self.upper = min(self.upper, chord_upper(allpts))
        if self.stencil:
            if self.kelley is None:
                self.upper = min(self.upper, chord_upper(self.g.at(sorted(eps))))
            self.kelley = None
            self.stencil_rounds += 1
            self.gaps.append((self.upper - self.lower) / self.lower if self.lower > 0 else mpmath.inf)
            if not self.certified():
                gap = self.upper - self.lower
                # (a kink: the stencil's parabola and the chords' peak creep towards it)
                stuck = self.locate and (gap == mpmath.inf or (self.stencil_rounds >= 2 and gap > self.gap / 2))
                self.gap = gap
                if stuck and not self.located:  # (the centre is off: locate the maximiser first)
                    self.lost = True
                    return
                self.stuck = stuck and gap < mpmath.inf
                self._refit(eps)
            return
        self.model_rounds += 1
        e = eps[0]
        lo, hi = self.g.raw[e]
        if not math.isfinite(hi):
            self.stencil = True  # no estimate to fit: certify around the proposal as it is
            return
        u = abs(e)
        comp = e in self.g.raw_c  # (δ above 1/2: the discrepancy of log C, where the shape is)
        if comp != self.comp:  # (a new quantity: its fit starts afresh)
            self.comp, self.centre, self.fit = comp, None, (0.0, 0.0, 0.0)
        if comp:
            c_lo, c_hi = self.g.raw_c[e]
            lg = gaussian_log_complement_float(u, float(self.mu))
            noise = c_hi - c_lo
            d = 0.5 * (c_lo + c_hi) - lg
        else:
            with workdps(DPS_LOW):
                lg, dlg = gaussian_log_delta(mpmath.mpf(u), self.mu)
            noise = hi - lo
            d = (0.5 * (lo + hi) if math.isfinite(lo) else hi) - float(lg)
        d1 = self.fit[2]
        if self.centre is not None:
            u0, d0, n0 = self.centre
            if comp:  # (the model's own change across the two points, above both brackets' noise)
                resolved = abs(lg - gaussian_log_complement_float(u0, float(self.mu))) > 100 * (noise + n0)
            else:
                resolved = abs(u - u0) * abs(float(dlg)) > 100 * (noise + n0)
            if resolved and u != u0:
                d1 = (d - d0) / (u - u0)
        elif comp and lg < 0 and c_hi < 0:
            # the first point of log C: the slope of the scaled model ``log C ≈ k·log C_G`` through it
            # (the constant shift alone may leave C below α everywhere: a near-deterministic design's
            # log C falls k ≈ 2.4 times as fast as the Gaussian's)
            s = 1e-3 * max(1.0, u)
            slope = (gaussian_log_complement_float(u + s, float(self.mu)) - gaussian_log_complement_float(
                u - s, float(self.mu))) / (2 * s)
            d1 = (0.5 * (c_lo + c_hi) / lg - 1) * slope
        self.centre = (u, d, noise)
        self.fit = (u, d, d1)
        old = self.c
        self.c, self.h = self._propose()
        step = abs(self.c - old)
        q = (step / self.steps[-1] if self.steps[-1] > 0 else 0.0) if self.steps else 0.05
        self.steps.append(step)
        converged = step * min(max(q, 1e-3), 1.0) <= 0.25 * self.h
        if (self.locate or comp) and not converged and (self.model_rounds >= MODEL_ROUNDS or (len(self.steps) >= 3 and
                                                                                            q >= 1)):
            # the steps do not contract: the model is far off (or, on log C, the profile is curved
            # at scales the model does not see: lattice-like steps of near-deterministic groups)
            self.lost = True
            return
        self.stencil = converged or self.model_rounds >= MODEL_ROUNDS

    def _refit(self, eps: list) -> None:
        """A stencil that did not certify: the least-squares parabola through its estimates
        gives the new centre and curvature; the spacing follows the measured gap."""
        if self.upper == mpmath.inf:  # the chords' slopes are not resolved: widen
            self.h *= 4
            return
        bound, x = chord_envelope(self.g.at(sorted(self.g.cache)))
        if x is not None and x > 0:
            peak = float(mpmath.log(x))
            if all(abs(peak - e) > 1e-15 * max(1.0, abs(e)) for e in self.g.cache):
                self.kelley = peak
                return
        if len(eps) != len(CERTIFY):  # a chord-peak point that did not certify: re-centre the
            self.c = max(self.g.cache, key=lambda e: self.g.cache[e][1])  # stencil on the best point
            return
        mids = [(p[1] + p[2]) / 2 for p in self.g.at(eps)]
        y = [float(v - mids[2]) for v in mids]  # the stencil is c + h·(−2 … 2)
        b = sum(k * v for k, v in zip(CERTIFY, y)) / 10
        c2 = (sum(k * k * v for k, v in zip(CERTIFY, y)) - 2 * sum(y)) / 14
        if c2 < 0 and abs(b / (2 * c2)) <= 2:
            self.c += -b / (2 * c2) * self.h
        else:
            self.c = eps[max(range(len(eps)), key=lambda k: mids[k])]
        gap = float((self.upper - self.lower) / (TRADEOFF_WIDTH * abs(self.lower))) if self.lower > 0 else 4.0
        self.h *= min(max(math.sqrt(0.25 / max(gap, 1e-300)), 0.125), 1.0)
