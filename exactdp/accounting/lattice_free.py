"""The lattice-free accountant: δ(ε), ε(δ) and β = f(α) of any design, as certified brackets.

:class:`LatticeFreeAccountant` answers every composition whatever its lattice (decimal
variances, thousands of incommensurate groups, σ² from 1/1000 to 10⁷, counts to 10⁶) from
one oracle, the certified log bracket of ``δ(ε)`` at float ε enclosures
(:class:`exactdp.engine.conditioned_profile.ConditionedProfile`: coarse atoms enumerated,
the rest by the second-order smoothed inversion or its lattice atoms):

* ``δ(ε)``, ε ≥ 0: the bracket, capped by the ρ-zCDP bound ``exp(−(ε−ρ)²/(4ρ))`` for
  ε ≥ ρ (Bun & Steinke 2016); ε < 0: ``δ(ε) = 1 − e^ε + e^ε δ(−ε)`` (a symmetric design).
* ``ε(δ)``: the smallest ε ≥ 0 with δ(ε) ≤ target lies in ``[lower, upper]`` with
  ``δ_hi(upper) ≤ target < δ_lo(lower)`` (δ is continuous and non-increasing); secant
  steps on the estimates propose, certified brackets decide (:func:`epsilon_brackets`).
* ``β(α)``: :mod:`exactdp.accounting.dual_tradeoff` (the trade-off as the concave
  conjugate of the profile).

Every point carries ``lower``/``upper``; ``certification`` is ``"bracket"``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.accounting.base import Accountant, check_epsilon_range, sequence_values
from exactdp.accounting.results import AccountingResult, BracketedDelta, BracketedEpsilon, Diagnostics, centred
from exactdp.engine.conditioned_profile import profile_for
from exactdp.engine.families import groups_of
from exactdp.engine.smoothed_profile import TooCostly, float_enclosure
from exactdp.mechanisms import Composition
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError, as_real, to_fraction
from exactdp.numerics.precision import DPS_DECIDE, DPS_RESULT, EPS64, to_mpf, workdps

__all__ = ["LatticeFreeAccountant", "MAX_REPORTED_WIDTH"]

_DPS = DPS_RESULT
#: a bracket wider than this (relative, above REPORT_FLOOR) is refused, not reported
MAX_REPORTED_WIDTH = 1e-6
REPORT_FLOOR = 1e-300
#: ε brackets are narrowed to this relative width (the promise is 1e-9; the release's bar 2.5e-10)
EPS_WIDTH = 2.5e-10


def _mp_exp(x: float):
    return mpmath.exp(mpmath.mpf(float(x))) if x > -np.inf else mpmath.mpf(0)


class DesignTooCostly(UncertifiedError, TooCostly):
    """No split of the design fits the lattice-free route's work budget: an
    :class:`UncertifiedError` for the caller, a :class:`TooCostly` for the planner."""


class LatticeFreeAccountant(Accountant):
    """δ(ε), ε(δ) and β = f(α) of a composition of any lattice (see the module docstring).

    Parameters
    ----------
    composition : Composition
    rel_tol : float
        Accepted for the common interface; the brackets aim at 2.5e-10 relative.
    wide : bool
        Whether the smoothed inversion's wide budget may answer a design beyond the ordinary
        one (:func:`exactdp.engine.conditioned_profile.profile_for`; seconds of work).

    Notes
    -----
    Method: conditioning on the coarse groups (exact atoms) and the Gaussian-smoothed
    tilted Fourier inversion of the rest with a second-order bracket and a certified
    frequency sieve (:mod:`exactdp.engine.smoothed_profile`), or the rest's own lattice
    atoms.  Error bound: every number is a certified bracket ``[lower, upper]``, at most
    1e-9 relative wide in the class the accountant is built for (refused beyond 1e-6).
    Reference: Daniels (1954); Canonne, Kamath & Steinke (2020); Dong, Roth & Su (2022).
    """

    certification = "bracket"

    def __init__(self, composition: Composition, rel_tol: float = 1e-10, wide: bool = True):
        if not isinstance(composition, Composition):
            raise InputError("composition", composition, "expected an exactdp.Composition")
        self.composition = composition
        self.rho = composition.rho
        self.rel_tol = float(rel_tol)
        self.identical = all(m.shift == 0 for m, _ in composition.groups)
        try:
            self.profile = None if self.identical else profile_for(groups_of(composition), wide)
        except TooCostly as exc:  # public face: an uncertifiable design is an UncertifiedError (still a TooCostly)
            raise DesignTooCostly(str(exc)) from None
        dn, up = float_enclosure([self.rho])
        self._rho_dn, self._rho_up = float(dn[0]), float(up[0])

    @property
    def method(self) -> str:
        return "identical" if self.profile is None else self.profile.method

    def diagnostics(self) -> Diagnostics:
        kept = 0 if self.profile is None else self.profile.nodes_kept
        n = 0 if self.profile is None else len(self.profile.groups)
        return Diagnostics(method=self.method, nodes_kept=int(kept), nodes_total=0, lattice_scale="none",
                           n_groups=n)

    # ------------------------------------------------------------------ the oracle
    def log_delta_at(self, e_dn, e_up, exact=None) -> tuple:
        """Certified ``(log lo, log hi)`` of δ(ε) for every ε in ``[e_dn, e_up]`` (float
        arrays, ε ≥ 0), zCDP-capped; ``exact``: optionally the exact ε of each point (a
        Fraction inside the enclosure, or None), for a tighter θ."""
        e_dn = np.asarray(e_dn, dtype=float)
        e_up = np.asarray(e_up, dtype=float)
        if self.profile is None:
            return np.full(e_dn.size, -np.inf), np.where(e_dn > 0, -np.inf, 0.0)
        th_dn, th_up = self._thresholds(e_dn, e_up, exact)
        lo, hi = self.profile.log_brackets(th_dn, th_up)
        # ρ-zCDP: δ(ε) ≤ exp(−(ε−ρ)²/(4ρ)) for ε ≥ ρ
        r = self._rho_up
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(th_dn > 0, -(th_dn**2) / (4 * r) * (1 - 4 * EPS64) + 1e-15, 0.0)
        hi = np.minimum(hi, z)
        return np.minimum(lo, hi), hi

    def log_complement_at(self, e_dn, e_up, exact=None) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − δ(ε)`` for every ε in ``[e_dn, e_up]`` (float
        arrays, ε ≥ 0), from positive terms (accurate where δ is close to 1)."""
        e_dn = np.asarray(e_dn, dtype=float)
        e_up = np.asarray(e_up, dtype=float)
        if self.profile is None:
            return np.zeros(e_dn.size), np.zeros(e_dn.size)  # P = Q: δ = 0 for ε ≥ 0
        th_dn, th_up = self._thresholds(e_dn, e_up, exact)
        return self.profile.log_complement(th_dn, th_up)

    def _thresholds(self, e_dn, e_up, exact=None) -> tuple:
        """Float enclosures of ``θ = ε − ρ`` for ε in ``[e_dn, e_up]``: the exact differences
        ``e_dn − ρ`` and ``e_up − ρ`` (binary floats minus the exact ρ) rounded outward, so θ
        keeps its own relative precision where ε ≈ ρ is large (ρ ≈ 10⁴: θ = ε − ρ in floats
        would carry ρ's ulp, 4e-12, and δ(ε) ≈ |θ| near an atom at 0 could not be resolved)."""
        th_dn = np.nextafter(e_dn - self._rho_up, -np.inf)
        th_up = np.nextafter(e_up - self._rho_dn, np.inf)
        near = np.flatnonzero(np.abs(th_up) < 1e-3 * max(self._rho_up, 1e-300))
        if near.size:
            rho = self.rho
            ex = [exact[i] if exact is not None else None for i in near]
            dn, _ = float_enclosure([(Fraction(float(e_dn[i])) if x is None else x) - rho for i, x in zip(near, ex)])
            _, up = float_enclosure([(Fraction(float(e_up[i])) if x is None else x) - rho for i, x in zip(near, ex)])
            th_dn[near], th_up[near] = dn, up
        return th_dn, th_up

    # ------------------------------------------------------------------ δ(ε)
    def _enclose(self, e) -> tuple:
        """(dn, up) floats around an exact real ε (Fraction or ``f(dps)``)."""
        if isinstance(e, Fraction):
            dn, up = float_enclosure([e])
            return float(dn[0]), float(up[0])
        with workdps(DPS_DECIDE):
            x = e(DPS_DECIDE)
        dn, up = float_enclosure([x])
        return math.nextafter(float(dn[0]), -math.inf), math.nextafter(float(up[0]), math.inf)

    def delta(self, epsilons) -> tuple:
        """δ(ε) for each ε (exact value or ``f(dps)`` callable), as certified brackets
        (``value`` = upper end)."""
        epsilons = sequence_values(epsilons, "epsilon")
        es = [as_real(e, "epsilon") for e in epsilons]
        check_epsilon_range(self.rho, es, "epsilon", shown=epsilons)
        enc = [self._enclose(e) for e in es]
        neg = [up < 0 or (dn < 0 and _is_negative(e)) for e, (dn, up) in zip(es, enc)]
        # ε < 0: evaluate at −ε, then δ(ε) = 1 − e^ε + e^ε δ(−ε)
        a_dn = np.array([(-up if n else max(dn, 0.0)) for (dn, up), n in zip(enc, neg)])
        a_up = np.array([(-dn if n else max(up, 0.0)) for (dn, up), n in zip(enc, neg)])
        exact = [(-e if n else max(e, Fraction(0))) if isinstance(e, Fraction) else None for e, n in zip(es, neg)]
        lo, hi = self.log_delta_at(a_dn, a_up, exact)
        # where δ is above 1/2 its complement (positive terms) is the sharper statement
        c_lo = np.full(lo.size, -np.inf)
        c_hi = np.zeros(lo.size)
        near_one = np.flatnonzero(hi > -math.log(2))
        if near_one.size:
            c_lo[near_one], c_hi[near_one] = self.log_complement_at(a_dn[near_one], a_up[near_one],
                                                                    [exact[i] for i in near_one])
        out = []
        with workdps(_DPS):
            widen = mpmath.mpf(10) ** (5 - _DPS)
            for k, e in enumerate(es):
                em = to_mpf(e) if isinstance(e, Fraction) else e(_DPS)
                lo_k, hi_k = _mp_exp(lo[k]) * (1 - widen), min(_mp_exp(hi[k]) * (1 + widen), mpmath.mpf(1))
                if c_lo[k] > -np.inf or c_hi[k] < 0:  # 1 − δ ∈ [C_lo, C_hi] (C non-decreasing in ε)
                    # widened relative to the result too: 1 − C rounds at _DPS digits of 1, which
                    # may be more than C_hi − C_lo (a C near 1e-30)
                    lo_k = max(lo_k, (1 - _mp_exp(c_hi[k]) * (1 + widen)) * (1 - widen))
                    hi_k = min(hi_k, (1 - _mp_exp(c_lo[k]) * (1 - widen)) * (1 + widen))
                if neg[k]:
                    ee, one = mpmath.exp(em), -mpmath.expm1(em)
                    lo_k, hi_k = (one + ee * lo_k) * (1 - widen), min((one + ee * hi_k) * (1 + widen), mpmath.mpf(1))
                _usable(lo_k, hi_k, f"δ(ε={mpmath.nstr(em, 12)})")
                th = e - self.rho if isinstance(e, Fraction) else None
                est, err = centred(lo_k, hi_k)
                out.append(BracketedDelta(em, est, err, est, mpmath.mpf(0), (th,) if th is not None else (), "bracket"))
        return tuple(out)

    # ------------------------------------------------------------------ ε(δ)
    def epsilon(self, deltas) -> tuple:
        """The smallest ε ≥ 0 with δ(ε) ≤ each target, as a certified bracket (``value`` =
        upper end: ``δ(upper) ≤ target`` is certified)."""
        deltas = sequence_values(deltas, "delta")
        dts = []
        for d in deltas:
            dt = to_fraction(d, "delta")
            if not 0 < dt < 1:
                raise InputError("delta", d, "must lie in (0, 1)")
            dts.append(dt)
        from exactdp.accounting.profile_search import epsilon_brackets

        low, up, est = epsilon_brackets(self.log_delta_at, dts, self.rho, EPS_WIDTH)
        out = []
        with workdps(_DPS):
            for dt, l, u, m in zip(dts, low, up, est):
                target = to_mpf(dt)
                lm, um = mpmath.mpf(float(l)), mpmath.mpf(float(u))
                _usable(lm, um, f"ε(δ={mpmath.nstr(target, 6)})")
                out.append(BracketedEpsilon(target, mpmath.mpf(float(m)), lm, um, 0, "bracket"))
        return tuple(out)

    # ------------------------------------------------------------------ trade-off
    def tradeoff(self, alphas) -> tuple:
        """β = f(α) for each α ∈ [0, 1], as a certified bracket (``value`` = lower end)."""
        from exactdp.accounting.dual_tradeoff import tradeoff_points

        alphas = sequence_values(alphas, "alpha")
        afs = []
        for a in alphas:
            af = to_fraction(a, "alpha")
            if not 0 <= af <= 1:
                raise InputError("alpha", a, "must lie in [0, 1]")
            afs.append(af)
        try:
            return tradeoff_points(self, afs)
        except OverflowError:  # ρ near the float64 limit (σ² 1e-300): the dual search's model leaves its range
            raise UncertifiedError(f"the trade-off search leaves the float64 range at ρ ≈ {float(to_mpf(self.rho)):.3g}"
                                   ) from None

    def result(self, kind: str, points) -> AccountingResult:
        return AccountingResult(kind, self.rho, tuple(points), self.diagnostics())


def _is_negative(e) -> bool:
    if isinstance(e, Fraction):
        return e < 0
    with workdps(DPS_DECIDE):
        return e(DPS_DECIDE) < 0


def _usable(lo, hi, what: str) -> None:
    """Refuse a bracket too wide to be a statement: a result is certified, bracketed
    tightly, or refused."""
    if hi <= REPORT_FLOOR or hi - lo <= MAX_REPORTED_WIDTH * abs(hi):
        return
    raise UncertifiedError(f"{what}: the lattice-free method brackets it only in [{mpmath.nstr(lo, 6)}, "
                           f"{mpmath.nstr(hi, 6)}]")
