"""All lower bounds at given (n, r), the best of them, where (19) is vacuous, and the
pointwise ratio between the mechanism's v(n) and the best lower bound."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.countdep.bounds import UniformBound, two_count_bound, two_count_limit
from exactdp.countdep.budget import budget
from exactdp.countdep.constants import uniform_finite_r
from exactdp.countdep.params import DPS, GUARD, ShiftedLogParams, validate_positive_count, validate_r
from exactdp.countdep.prior_opt import OptimisedPrior, optimise_prior
from exactdp.numerics.precision import to_mpf

__all__ = ["LowerBoundPoint", "LowerBoundReport", "lower_bound_report"]


@dataclass(frozen=True)
class LowerBoundPoint:
    """Every lower bound on v(n) at one base count.

    Attributes
    ----------
    n : int
    two_count : Fraction
        (14), exact.
    uniform : UniformBound
        (23) maximised over odd K (relative error < 10**-dps).
    optimised : OptimisedPrior or None
        (19) with the numerically optimised prior (≥ the uniform bound by construction;
        relative error ~1e-13, already rounded down).  None at r = 1.
    best : mpmath.mpf
        The largest of the valid bounds above.
    best_source : str
        ``"two-count (14)"``, ``"uniform prior (23)"``, ``"optimised prior (19)"`` or
        ``"none"`` (all zero).
    many_count_vacuous : bool
        Whether (19) gave nothing (for every prior when r ≥ 1/2).
    vacuity_reason : str
    mechanism_v : mpmath.mpf or None
        v(n) of the mechanism, when one was given.
    ratio : mpmath.mpf or None
        mechanism_v / best (≥ 1 necessarily; inf when best = 0).
    """

    n: int
    two_count: Fraction
    uniform: UniformBound
    optimised: OptimisedPrior | None
    best: mpmath.mpf
    best_source: str
    many_count_vacuous: bool
    vacuity_reason: str
    mechanism_v: mpmath.mpf | None
    ratio: mpmath.mpf | None


@dataclass(frozen=True)
class LowerBoundReport:
    """Lower bounds over several counts for one tolerance r.

    Attributes
    ----------
    r : Fraction
    points : tuple of LowerBoundPoint
    two_count_limit : Fraction or None
        (15): lim n²·(14) (None at r = 1).
    uniform_asymptotic : mpmath.mpf or None
        max over a of (24): a lower bound on lim inf r²n²v(n) at this r.
    mechanism : ShiftedLogParams or None
    mechanism_coefficient : mpmath.mpf or None
        r²·lim n²v(n) = r²/(2σ²) of the mechanism.
    note : str
    """

    r: Fraction
    points: tuple
    two_count_limit: Fraction | None
    uniform_asymptotic: mpmath.mpf | None
    mechanism: ShiftedLogParams | None
    mechanism_coefficient: mpmath.mpf | None
    note: str


def lower_bound_report(r, ns, mechanism: ShiftedLogParams | None = None, dps: int = DPS) -> LowerBoundReport:
    """Evaluate (14), (23) and the optimised (19) at every n ≥ 1 of ``ns``.

    Parameters
    ----------
    r : rational, 0 < r ≤ 1
    ns : iterable of int ≥ 1
    mechanism : ShiftedLogParams, optional
        Compare its v(n) with the best lower bound (its r must equal ``r``).

    Notes
    -----
    All bounds hold for every mechanism with E_m|Y − m| ≤ rm (m ≥ 1) and a nonincreasing
    count-dependent zCDP budget (Fitzsimons 2026, Prop. 6.2, Thm. 6.4, Cor. 6.5), so the
    best is their maximum.  At r = 1 there is no positive lower bound: the constant
    release 1/2 has v ≡ 0 (Prop. 2.3).  The mechanism satisfies the hypotheses, so
    ratio ≥ 1 is a consistency check.
    """
    r = validate_r(r)
    counts = [validate_positive_count(n, "n") for n in ns]
    if mechanism is not None and mechanism.r != r:
        raise ValueError("mechanism.r must equal r")
    points = []
    with mpmath.workdps(dps + GUARD):
        zero = mpmath.mpf(0)
        for n in counts:
            mv = budget(mechanism, n, dps) if mechanism is not None else None
            if r == 1:
                uni = UniformBound(zero, None, True, "r = 1")
                reason = "r = 1: the data-independent release 1/2 has v = 0 (Prop. 2.3), so no lower bound is positive"
                points.append(LowerBoundPoint(n, Fraction(0), uni, None, zero, "none", True, reason, mv,
                                              None if mv is None else (mpmath.inf if mv > 0 else zero)))
                continue
            tc = two_count_bound(r, n)
            opt = optimise_prior(n, r)
            uni = opt.uniform
            cands = [(to_mpf(tc), "two-count (14)"), (uni.value, "uniform prior (23)"),
                     (mpmath.mpf(opt.value), "optimised prior (19)")]
            best, src = max(cands, key=lambda t: t[0])
            if best <= 0:
                src = "none"
            ratio = None
            if mv is not None:
                ratio = mv / best if best > 0 else mpmath.inf
            points.append(LowerBoundPoint(n, tc, uni, opt, best, src, opt.vacuous, opt.reason, mv, ratio))
        tcl = None if r == 1 else two_count_limit(r)
        ua = None if r == 1 else uniform_finite_r(r, dps).value
        coef = None
        if mechanism is not None:
            s = mechanism.sigma(dps)
            coef = to_mpf(r) ** 2 / (2 * s * s)
    note = (
        "(19) is vacuous for every prior iff r >= 1/2; the uniform prior (23) is vacuous iff r >= 1/e; "
        "(14) is positive for every 0 < r < 1."
    )
    return LowerBoundReport(r, tuple(points), tcl, ua, mechanism, coef, note)
