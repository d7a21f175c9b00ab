"""Noise calibration: the largest variance reduction that still meets an (ε, δ) target.

Given a design and a target (ε_t, δ_t) — by default the Bureau's own point (ε_BS(δ_t), δ_t),
ε_BS = ρ + 2 sqrt(ρ ln(1/δ)) — scale variances σ² → c·σ² (all, or one geographic level's) by a
rational c and find the smallest c whose *exact* profile still meets the target,
δ_c(ε_t) ≤ δ_t by the certified upper bound of :class:`ExactAccountant`; the variance
reduction is 1 − c.  The search keeps c_hi **certified feasible** and c_lo **certified
infeasible** (lower bound of δ > δ_t) and narrows [c_lo, c_hi] by safeguarded secant steps on
log δ (Illinois rule) until c_hi − c_lo ≤ width.  Trial points are the simplest rationals in a
window around the secant estimate; for one-level scaling "simplest" is measured on the ratio
of the level's weights to the others', which keeps the loss lattice small.

Whole release: it meets the target iff every pair does, so c*_release = max over pairs of
c*_pair.  The most exposed pair is bracketed, then every other pair is certified at c_hi
(pruned without evaluation when the CKS bound at its ρ(c) already meets the target); a
violator is bracketed next.  Every pair is certified by an exact evaluation of the design at
c_hi itself (the int64 lattice engine, or the lattice-free one when that lattice is large) or
pruned by the CKS bound at its ρ — never through a neighbouring design: δ(ε) is *not*
non-increasing in the variances of discrete Gaussians (``docs/tune.rst`` has a counter-
example), so a design with less noise does not bound one with more.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.accounting.accountant import ExactAccountant, bun_steinke_epsilon
from exactdp.conversions.bounds import cks_delta, gdp_delta
from exactdp.mechanisms import Composition, DiscreteGaussian
from exactdp.numerics.bracket import Bracket
from exactdp.numerics.exact import InputError, as_real, fraction_str, to_fraction
from exactdp.numerics.precision import DPS_LOW, to_mpf
from exactdp.numerics.search import SearchError, bisect_real, expand, secant_narrow

__all__ = ["CalibrationResult", "Family", "uniform_family", "level_family", "simplest_between",
           "calibrate_design", "calibrate_pair", "calibrate_release", "DEFAULT_WIDTH"]

#: Default width of the certified bracket on the variance reduction.
DEFAULT_WIDTH = Fraction(1, 10**6)


# ----------------------------------------------------------------------------- rationals
def simplest_between(lo: Fraction, hi: Fraction) -> Fraction:
    """The rational with the smallest denominator in the closed interval [lo, hi] (lo ≤ hi, lo > 0).

    Continued-fraction descent of the Stern–Brocot tree (exact Fraction arithmetic).
    """
    lo, hi = Fraction(lo), Fraction(hi)
    if lo > hi:
        lo, hi = hi, lo
    fl = math.floor(lo)
    if fl == lo:
        return Fraction(fl)
    if fl + 1 <= hi:
        return Fraction(fl + 1)
    # lo, hi in (fl, fl+1): recurse on reciprocals of the fractional parts
    return fl + 1 / simplest_between(1 / (hi - fl), 1 / (lo - fl))


def _gcd_rationals(values) -> Fraction:
    vals = [Fraction(v) for v in values]
    den = math.lcm(*(v.denominator for v in vals))
    return Fraction(math.gcd(*(v.numerator * (den // v.denominator) for v in vals)), den)


# ----------------------------------------------------------------------------- families
@dataclass(frozen=True)
class Family:
    """A one-parameter family of designs ``c ↦ Composition`` and its preferred rationals.

    Attributes
    ----------
    label : str — what is scaled (``"all"`` or a level name) and on which design
    compose : callable — ``compose(c) -> Composition`` for a rational c > 0
    snap : callable — ``snap(lo, hi)``: a rational in [lo, hi] giving a small lattice
    rho : callable — ``rho(c)``: the zCDP ρ of the design at c (for pruning)
    coarse : callable or None — ``coarse(c, digits)``: the design with every ρ_q rounded
        *up* to ``digits`` significant digits of the smallest (more loss, small lattice)
    """

    label: str
    compose: Callable
    snap: Callable
    rho: Callable
    coarse: Callable | None = None


def _rhos_family(label, fixed: tuple, scaled: tuple) -> Family:
    """Unit-shift mechanisms σ² = 1/ρ_q; the ``scaled`` ones get σ² = c/ρ_q."""
    fixed = tuple(Fraction(r) for r in fixed if r)
    scaled = tuple(Fraction(r) for r in scaled if r)
    if not scaled:
        raise InputError("level", label, "no mechanism of the design is scaled (the level is absent)")
    if fixed:
        k = _gcd_rationals(scaled) / _gcd_rationals(fixed)

        def snap(lo, hi):  # simplest ratio r = k/c of level to other lattice weights
            return k / simplest_between(k / hi, k / lo)
    else:
        snap = simplest_between
    s_fixed, s_scaled = sum(fixed, Fraction(0)), sum(scaled, Fraction(0))

    def compose(c):
        return Composition.from_rhos(fixed + tuple(r / c for r in scaled))

    def coarse(c, digits):
        rhos = fixed + tuple(r / c for r in scaled)
        g = Fraction(1, 10) ** (digits - 1 - math.floor(math.log10(min(rhos))))
        return Composition.from_rhos([-(-r // g) * g for r in rhos])

    return Family(label, compose, snap, lambda c: (s_fixed + s_scaled / c) / 2, coarse)


def uniform_family(design) -> Family:
    """All variances scaled: ``σ_i² → c σ_i²`` (a Composition, or unit-shift ρ_q list)."""
    if isinstance(design, Composition):
        groups = design.groups

        def compose(c):
            return Composition(tuple((DiscreteGaussian(m.sigma2 * c, m.shift), n) for m, n in groups))

        return Family("all", compose, simplest_between, lambda c: design.rho / c)
    return _rhos_family("all", (), tuple(design))


def level_family(allocation, pair: tuple[int, int], level: str | None) -> Family:
    """Pair (i, j) of an allocation with one level's variances scaled (all if level is None).

    The level's lattice weights are ρ_q/c and the others' ρ_q; snapping c through the
    simplest ratio ``k/c`` (k = gcd of the level's ρ_q over the gcd of the others') keeps the
    integer weights of the loss lattice small.
    """
    if level is not None and level not in allocation.levels:
        raise InputError("level", level, f"unknown level (levels are {', '.join(allocation.levels)})")
    fixed: list = []
    scaled: list = []
    for path in pair:
        table = allocation.path_table(path)
        for lev in allocation.levels:
            (scaled if level is None or lev == level else fixed).extend(r for r in table[lev] if r)
    label = f"{level or 'all'} on pair {pair[0]},{pair[1]}"
    return _rhos_family(label, tuple(fixed), tuple(scaled))


# ----------------------------------------------------------------------------- result
@dataclass(frozen=True)
class CalibrationResult(Bracket):
    """A certified bracket ``(lower, upper]`` on the smallest variance scaling c* meeting
    the target.

    Attributes
    ----------
    target_epsilon : mpmath.mpf
    target_delta : Fraction
    lower : Fraction
        c_lo < c*: certified to violate the target (δ lower bound > δ_t).
    upper : Fraction
        c_hi ≥ c*: certified to meet the target (δ upper bound ≤ δ_t).
    delta_at_scale : mpmath.mpf
        Certified upper bound of the (max over pairs) δ(ε_t) at ``upper``.
    scope : str
        What was calibrated (design, pair, level, release).
    evaluations : int
        Exact δ evaluations made.
    argmax : tuple or None
        The pair attaining the release maximum (release calibrations).
    pairs_evaluated, pairs_pruned, pairs_sandwiched : int
        Release calibrations: pairs certified by an exact evaluation at ``upper`` and by the
        CKS bound; ``pairs_sandwiched`` is always 0 (kept in the output's columns: no pair
        is certified through a neighbouring design, δ not being monotone in σ²).

    A :class:`~exactdp.numerics.bracket.Bracket`: ``value`` (= ``upper`` = ``estimate``)
    is the conservative side — the scaling to deploy — and ``error_bound`` the bracket
    width.
    """

    _NAME = "c*"

    target_epsilon: mpmath.mpf
    target_delta: Fraction
    lower: Fraction
    upper: Fraction
    delta_at_scale: mpmath.mpf
    scope: str
    evaluations: int
    argmax: tuple | None = None
    pairs_evaluated: int = 0
    pairs_pruned: int = 0
    pairs_sandwiched: int = 0

    @property
    def value(self) -> Fraction:
        """``upper``: the certified scaling to deploy."""
        return self.upper

    @property
    def estimate(self) -> Fraction:
        """``upper`` (inside the bracket ``(lower, upper]``)."""
        return self.upper

    @property
    def error_bound(self) -> Fraction:
        """``upper − lower``: the width of the certified bracket."""
        return self.upper - self.lower

    @property
    def variance_reduction(self) -> Fraction:
        """``1 − upper``: the certified achievable reduction (lower end of the bracket)."""
        return 1 - self.upper

    @property
    def variance_reduction_lower(self) -> Fraction:
        return 1 - self.upper

    @property
    def variance_reduction_upper(self) -> Fraction:
        """``1 − lower``: the reduction at ``lower``, certified to miss the target.  Whether
        every larger reduction misses it too is not claimed: δ is monotone in a uniform
        scaling on the grids the tests check, but not proved monotone in the variances of
        discrete Gaussians (``docs/tune.rst`` shows a single-variance counterexample)."""
        return 1 - self.lower

    def as_json(self) -> dict:
        """JSON-ready dict; decimals with 20 significant digits, scales as exact p/q."""
        def dec(x):
            with mpmath.workdps(DPS_LOW):
                x = to_mpf(x) if isinstance(x, Fraction) else mpmath.mpf(x)
                return mpmath.nstr(x, 20, min_fixed=-4, max_fixed=6, strip_zeros=False)

        return {
            "scope": self.scope, "target_epsilon": dec(self.target_epsilon), "target_delta": dec(self.target_delta),
            "variance_reduction": dec(self.variance_reduction),
            "variance_reduction_lower": dec(self.variance_reduction_lower),
            "variance_reduction_upper": dec(self.variance_reduction_upper),
            "scale": fraction_str(self.upper), "scale_infeasible": fraction_str(self.lower),
            "delta_at_scale_upper_bound": dec(self.delta_at_scale), "evaluations": self.evaluations,
            "argmax_pair": list(self.argmax) if self.argmax else None, "pairs_evaluated": self.pairs_evaluated,
            "pairs_pruned": self.pairs_pruned, "pairs_sandwiched": self.pairs_sandwiched,
        }


# ----------------------------------------------------------------------------- search
class _Evaluator:
    """Certified (lower, upper) of δ_c(ε_t) for one family, memoised, counting calls."""

    def __init__(self, family: Family, eps_t, rel_tol: float):
        self.family, self.eps_t, self.rel_tol = family, eps_t, rel_tol
        self.cache: dict = {}
        self.count = 0

    def __call__(self, c: Fraction):
        if c not in self.cache:
            self.count += 1
            point = ExactAccountant(self.family.compose(c), rel_tol=self.rel_tol).delta([self.eps_t])[0]
            self.cache[c] = (point.lower, point.value, point.estimate)
        return self.cache[c]


def _target(delta, eps, rho):
    d = to_fraction(delta, "delta")
    if not 0 < d < 1:
        raise InputError("delta", delta, "must lie in (0, 1)")
    e = bun_steinke_epsilon(rho, d) if eps is None else as_real(eps, "eps")
    if isinstance(e, Fraction) and e < 0:
        raise InputError("eps", eps, "must be >= 0")
    return d, e


def _bracket(ev: _Evaluator, d: Fraction, width: Fraction, c_lo=None, guess=None):
    """Certified [c_lo, c_hi] of the family's threshold; returns (c_lo, c_hi, δ_upper(c_hi))."""
    with mpmath.workdps(DPS_LOW):
        dmp = to_mpf(d)
        logd = mpmath.log(dmp)
    snap = ev.family.snap

    def status(c):
        lo, up, _ = ev(c)
        return 1 if up <= dmp else (-1 if lo > dmp else 0)

    def fval(c):
        with mpmath.workdps(DPS_LOW):
            return mpmath.log(ev(c)[2]) - logd

    # -- an initial certified bracket: c_hi by doubling from 1, then a walk down ---------
    try:
        _, c_hi = expand(lambda c: status(c) == 1, Fraction(1), Fraction(1), max_steps=31)
    except SearchError:
        raise ArithmeticError("the target is not met even with 2^30 times the variances") from None
    if c_lo is not None and (c_lo >= c_hi or status(c_lo) != -1):
        c_lo = None
    if c_lo is None:
        c = snap(guess * Fraction(99, 100), guess) if guess and guess < c_hi else c_hi * Fraction(9, 10)
        while True:
            s = status(c)
            if s == -1:
                c_lo = c
                break
            if s == 1:
                c_hi = c
            c = snap(c * Fraction(3, 4), c * Fraction(4, 5)) if s == 1 else c - width
            if c < Fraction(1, 10**9):
                raise ArithmeticError("the target is met for every scaling down to 1e-9")
    # -- Illinois secant on log δ, snapped to simple rationals ---------------------------
    c_lo, c_hi = secant_narrow(status, fval, snap, c_lo, c_hi, width)
    return c_lo, c_hi, ev(c_hi)[1]


def _gdp_guess(rho_fn, eps_t, d) -> Fraction | None:
    """c at which the continuous-Gaussian profile of the family meets the target (start):
    60 bisection steps on [1e-6, 10] (exact rational midpoints)."""
    lo, hi = Fraction(1, 10**6), Fraction(10)
    dmp = to_mpf(d)
    lo, hi = bisect_real(lambda c: gdp_delta(rho_fn(c), eps_t).delta <= dmp, lo, hi, width=(hi - lo) / 2**60)
    return simplest_between(lo, hi)


def calibrate_design(design, delta, eps=None, *, width=DEFAULT_WIDTH, rel_tol: float = 1e-10,
                     family: Family | None = None, scope: str | None = None) -> CalibrationResult:
    """Calibrate a uniform variance scaling of one design (or a given :class:`Family`).

    Parameters
    ----------
    design : Composition — ignored when ``family`` is given
    delta : rational in (0, 1) — target δ
    eps : rational or callable, optional — target ε (default ε_BS(δ) at the design's ρ)
    width : rational — required width of the certified bracket on c (default 1e-6)
    rel_tol : float — certified relative accuracy of each exact tail

    Returns
    -------
    CalibrationResult

    Notes
    -----
    Method: certified bracket + safeguarded secant on log δ_c(ε_t) (module notes).
    Error bound: ``upper`` meets the target by a certified exact evaluation;
    ``lower`` violates it by one; the bracket width ``error_bound`` is ≤ ``width``.
    Reference: Su, Su & Wang (2020 Census exact accounting; variance reduction at the
    Bureau's (ε, δ)); Canonne, Kamath & Steinke (2020) for the discrete Gaussian.
    """
    fam = family or uniform_family(design)
    width = to_fraction(width, "width")
    d, e = _target(delta, eps, fam.rho(Fraction(1)))
    ev = _Evaluator(fam, e, rel_tol)
    guess = _gdp_guess(fam.rho, e, d)
    c_lo, c_hi, dup = _bracket(ev, d, width, guess=guess)
    label = "all variances of the design" if fam.label == "all" else fam.label
    return CalibrationResult(_eps_mp(e), d, lower=c_lo, upper=c_hi, delta_at_scale=dup, scope=scope or label,
                             evaluations=ev.count)


def calibrate_pair(allocation, pair, delta, eps=None, *, level=None, width=DEFAULT_WIDTH,
                   rel_tol: float = 1e-10) -> CalibrationResult:
    """Calibrate pair (i, j) of an allocation: all variances, or one level's (``level``).

    The default target ε is ``ε_BS(δ)`` at the allocation's total ρ (the Bureau's point).
    Notes as :func:`calibrate_design`.
    """
    fam = level_family(allocation, tuple(pair), level)
    d, e = _target(delta, eps, allocation.total_rho)
    return calibrate_design(None, d, e, width=width, rel_tol=rel_tol, family=fam,
                            scope=f"{level or 'all levels'} on pair ({pair[0]}, {pair[1]})")


def _eps_mp(e):
    with mpmath.workdps(DPS_LOW):
        return to_mpf(e) if isinstance(e, Fraction) else e(DPS_LOW)


def _share(allocation, pair, level) -> Fraction:
    if level is None:
        return Fraction(1)
    return sum((allocation.level_rho(p)[level] for p in pair), Fraction(0)) / (2 * allocation.total_rho)


@functools.lru_cache(maxsize=4096)
def _cks_cached(rho: Fraction, e):
    return cks_delta(rho, e).delta


def _quick(fam: Family, c: Fraction, e, dmp, rel_tol: float):
    """A cheap certificate at c: ('pruned', None) by the CKS bound at ρ(c) (valid for the
    exact design); else (None, rank) — the pair is evaluated exactly."""
    if _cks_cached(fam.rho(c), e) <= dmp:
        return "pruned", None
    comp = fam.compose(c)
    return None, -min(m.sigma2 for m, _ in comp.groups)  # coarse-noise pairs first


def _full(fam: Family, c: Fraction, e, dmp, rel_tol: float):
    """('exact' | 'violates', δ estimate, evaluations) of the design at c itself (the
    planner of :class:`ExactAccountant` picks the lattice or the lattice-free route)."""
    pt = ExactAccountant(fam.compose(c), rel_tol=rel_tol).delta([e])[0]
    return ("exact" if pt.value <= dmp else "violates"), pt.estimate, 1


def calibrate_release(allocation, delta, eps=None, *, level: str | None = None, width=DEFAULT_WIDTH,
                      rel_tol: float = 1e-10, pairs=None, progress=None) -> CalibrationResult:
    """Calibrate the whole release (max over all pairs), all variances or one level's.

    Parameters
    ----------
    allocation : Allocation
    delta, eps : the target (default ε = ε_BS(δ) at the allocation's total ρ)
    level : str, optional — scale only this level's queries (every path measuring it)
    width : rational — bracket width on c (default 1e-6)
    pairs : list of (i, j), optional — default all (946 for the DHC persons file)
    progress : callable, optional — ``progress(message)`` once per pass

    Returns
    -------
    CalibrationResult
        ``argmax`` is the pair bracketed last (the release maximum at ``upper``).

    Notes
    -----
    Method: bracket the most exposed pair (the proxy (13, 13) for uniform scaling, the pair
    with the largest share of the level otherwise); certify the others at c_hi — CKS-bound
    pruning, then exact evaluations of the design at c_hi in order of exposure — and on the
    first violator bracket it and repeat.  Error bound: ``upper`` is certified for every
    pair by its own exact evaluation or the CKS bound, ``lower`` violates the target for
    ``argmax``.  Reference: Su, Su & Wang
    (max over the 946 DHC pairs).
    """
    width = to_fraction(width, "width")
    d, e = _target(delta, eps, allocation.total_rho)
    dmp = to_mpf(d)
    pairs = [tuple(p) for p in (pairs or allocation.pairs())]
    fams, fixed, evals = {}, [], 0
    for p in pairs:
        if _share(allocation, p, level) == 0:
            fixed.append(p)
        else:
            fams[p] = level_family(allocation, p, level)
    if not fams:
        raise InputError("level", level, "is not measured on any path of the allocation")
    fixed_counts = {"pruned": 0, "exact": 0, "sandwiched": 0}  # "sandwiched" stays 0
    for p in fixed:  # pairs the scaling does not touch: certified once, at their own design
        fam = level_family(allocation, p, None)
        st = _quick(fam, Fraction(1), e, dmp, rel_tol)[0]
        if st is None:
            st, _, n = _full(fam, Fraction(1), e, dmp, rel_tol)
            evals += n
        if st == "violates":
            raise InputError("delta", str(d), f"pair {p} violates the target whatever the scaling of {level}")
        fixed_counts[st] += 1
    proxy = (13, 13) if level is None and (13, 13) in fams else max(
        fams, key=lambda p: (_share(allocation, p, level), p))
    cur, c_lo, done = proxy, None, set()
    while True:
        ev = _Evaluator(fams[cur], e, rel_tol)
        c_lo, c_hi, dup = _bracket(ev, d, width, c_lo=c_lo, guess=_gdp_guess(fams[cur].rho, e, d))
        evals += ev.count
        done.add(cur)
        counts = dict(fixed_counts)
        pending, worst = [], None
        for p, fam in fams.items():
            if p != cur:
                st, rank = _quick(fam, c_hi, e, dmp, rel_tol)
                if st:
                    counts[st] += 1
                else:
                    pending.append((rank, p))
        pending.sort(key=lambda t: t[0], reverse=True)
        for _, p in pending:
            st, est, n = _full(fams[p], c_hi, e, dmp, rel_tol)
            evals += n
            if st == "violates":
                worst = p
                break
            counts[st] += 1
        if progress:
            progress(f"bracketed {cur}: c in [{float(c_lo):.9f}, {float(c_hi):.9f}]; {counts}; "
                     f"violator: {worst or 'none'}")
        if worst is None:
            return CalibrationResult(_eps_mp(e), d, lower=c_lo, upper=c_hi, delta_at_scale=dup,
                                     scope=f"{level or 'all levels'} on the release ({len(pairs)} pairs)",
                                     evaluations=evals, argmax=cur, pairs_evaluated=counts["exact"] + 1,
                                     pairs_pruned=counts["pruned"], pairs_sandwiched=counts["sandwiched"])
        if worst in done:
            raise ArithmeticError(f"pair {worst} violates the target again after its own bracket")
        cur, c_lo = worst, c_hi  # the violator is (at least not certified) feasible at c_hi
