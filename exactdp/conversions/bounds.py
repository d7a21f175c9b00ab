"""Conversions and bounds to report beside the exact profile: Bun–Steinke, CKS, RDP, GDP.

For a :class:`~exactdp.mechanisms.Composition` of discrete Gaussians with zCDP ρ:

* **Bun–Steinke** (BS16, Prop. 1.3; the Census Bureau's conversion):
  ``ε = ρ + 2 sqrt(ρ ln(1/δ))``, equivalently ``δ(ε) = exp(−(ε−ρ)²/(4ρ))`` for ε ≥ ρ.
* **CKS** (Canonne, Kamath & Steinke 2020, Cor. 13, the optimal zCDP → (ε, δ) conversion):
  ``δ(ε) = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1−1/α)^α``.  The log-objective is convex
  in α with derivative ``(2α−1)ρ − ε + log(1−1/α)``, so α* is its unique root.
* **RDP** (the exact Rényi curve of the discrete composition) converted with the improved
  conversion of Balle et al. (2020, Thm 21) / CKS (Prop. 12):
  ``ε = D_α + log((α−1)/α) − (log δ + log α)/(α−1)``, optimised over α.  For one discrete
  Gaussian with integer shift Δ (Poisson summation, q = e^{−2π²σ²}):
  ``D_α = αΔ²/(2σ²) + log(θ₃(π(1−α)Δ, q)/θ₃(0, q))/(α−1) ≤ αΔ²/(2σ²)``, with equality at
  integer α; the divergence of the composition is the sum.
* **GDP** (Dong, Roth & Su 2022): the continuous-Gaussian counterpart μ² = Σ Δ²/σ² = 2ρ,
  ``δ(ε) = Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2)``.  This is **not** a bound for discrete noise:
  the exact profile differs from it by the lattice (Euler–Maclaurin) term
  ``−h²B₂(t)/2·f(ε) + …`` (see :mod:`exactdp.conversions.edgeworth`), which has either sign.

The first three are valid upper bounds on the exact δ(ε) (and ε(δ)) of every design; the
tests check this against exact values over a grid of designs.  Every function works in
mpmath at ``dps`` digits (default :data:`~exactdp.numerics.precision.DPS_ANALYSIS` = 50)
inside ``workdps``; any α yields a valid bound, so the optimisation accuracy only affects
tightness, and the returned value is the objective at the returned α (relative rounding
error below 10^{−(dps−10)}, stated as the :class:`BoundPoint`'s ``error_bound``).  The
searches (optimal order, inverse conversions) are those of :mod:`exactdp.numerics.search`;
the theta ratio of the Rényi divergence is the twin
:func:`exactdp.dgauss.mp.log_theta_shift_ratio_mp`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.dgauss.mp import log_theta_shift_ratio_mp
from exactdp.mechanisms import Composition
from exactdp.numerics.bracket import Bracket
from exactdp.numerics.exact import InputError, as_real, to_fraction
from exactdp.numerics.precision import DPS_ANALYSIS, DPS_GUARD, to_mpf
from exactdp.numerics.search import bisect_real, expand, golden_min, newton_root

__all__ = [
    "BoundPoint",
    "bun_steinke_delta",
    "bun_steinke_eps",
    "cks_delta",
    "cks_epsilon",
    "renyi_divergence",
    "rdp_delta",
    "rdp_epsilon",
    "gdp_mu",
    "gdp_delta",
    "gdp_epsilon",
    "METHODS",
]

#: The conversions reported beside the exact curve; ``is_bound`` tells which are bounds.
METHODS = ("bun-steinke", "cks", "rdp", "gdp")


def _rel_error(dps: int) -> mpmath.mpf:
    """Relative accuracy of the ``dps``-digit evaluations (1e-40 at the default 50)."""
    return mpmath.mpf(10) ** (-(dps - 10))


@dataclass(frozen=True)
class BoundPoint(Bracket):
    """One point of a conversion: the (ε, δ) pair and how it was obtained.

    Attributes
    ----------
    method : str
        One of :data:`METHODS`.
    epsilon, delta : mpmath.mpf
        The point.  For a bound, δ ≥ exact δ(ε) and ε ≥ exact ε(δ).
    alpha : mpmath.mpf or None
        The Rényi order used (CKS, RDP).
    is_bound : bool
        True for the valid upper bounds (Bun–Steinke, CKS, RDP); False for GDP.
    solved_for : str
        ``"delta"`` or ``"epsilon"``: the coordinate that was computed (the other one was
        given).
    error_bound : mpmath.mpf
        ``|estimate − exact value of the conversion| ≤ error_bound`` (rounding and root
        finding; a relative 10^{−(dps−10)}).

    The result vocabulary of :mod:`exactdp.accounting.results`: ``estimate`` is the
    computed coordinate, ``lower``/``upper`` its bracket, ``value`` the conservative
    (upper) side.
    """

    method: str
    epsilon: mpmath.mpf
    delta: mpmath.mpf
    alpha: object
    is_bound: bool
    solved_for: str
    error_bound: mpmath.mpf

    @property
    def _ARG(self) -> str:  # type: ignore[override]
        return "epsilon" if self.solved_for == "delta" else "delta"

    @property
    def _NAME(self) -> str:  # type: ignore[override]
        return f"{'δ' if self.solved_for == 'delta' else 'ε'} ({self.method})"

    @property
    def estimate(self) -> mpmath.mpf:
        return self.delta if self.solved_for == "delta" else self.epsilon

    @property
    def upper(self) -> mpmath.mpf:
        # exact sums (no rounding at the ambient precision, which could lose the bound)
        up = mpmath.fadd(self.estimate, self.error_bound, exact=True)
        return min(up, mpmath.mpf(1)) if self.solved_for == "delta" else up

    @property
    def lower(self) -> mpmath.mpf:
        return max(mpmath.fsub(self.estimate, self.error_bound, exact=True), mpmath.mpf(0))

    @property
    def value(self) -> mpmath.mpf:
        return self.upper

    @property
    def relative_error(self) -> float:
        return float(self.error_bound / self.estimate) if self.estimate > 0 else float("inf")


def _point(method, eps, delta, alpha, is_bound, solved_for, dps):
    est = delta if solved_for == "delta" else eps
    return BoundPoint(method, +eps, +delta, alpha, is_bound, solved_for, abs(est) * _rel_error(dps))


# ----------------------------------------------------------------------------- helpers
def _real(x, field: str = "value") -> mpmath.mpf:
    """Exact rational / decimal string / callable ``f(dps)`` → mpf at the current dps.

    An :class:`mpmath.mpf` is accepted as an already computed real (e.g. an ε returned by
    another conversion); user parameters should be exact rationals or callables.
    """
    if isinstance(x, mpmath.mpf):
        return +x
    v = as_real(x, field)
    if isinstance(v, Fraction):
        return to_mpf(v)
    return mpmath.mpf(v(mpmath.mp.dps))


def _rho(design):
    """ρ of a Composition, an exact rational ρ > 0, or an already computed real ρ > 0
    (an :class:`mpmath.mpf`, e.g. a count-dependent budget); Fraction or mpf."""
    if isinstance(design, Composition):
        return design.rho
    if isinstance(design, mpmath.mpf):
        if not design > 0:
            raise InputError("rho", design, "must be > 0")
        return design
    r = to_fraction(design, "rho")
    if r <= 0:
        raise InputError("rho", design, "must be > 0")
    return r


def _delta_in(delta) -> mpmath.mpf:
    d = _real(delta, "delta")
    if not 0 < d < 1:
        raise InputError("delta", delta, "must lie in (0, 1)")
    return d


def _smallest_below(fn, target, lo, hi, rtol):
    """Smallest x ≥ lo (to ``rtol`` relative) with fn(x) ≤ target, fn non-increasing:
    ``hi`` grows as ``2·hi + 1`` until it satisfies it, then bisection
    (:mod:`exactdp.numerics.search`); returns the satisfying end of the bracket."""
    if fn(lo) <= target:
        return lo
    pred = lambda x: fn(x) <= target  # noqa: E731
    prev, hi = expand(pred, hi, hi + 1)
    lo = lo if prev is None else prev
    return bisect_real(pred, lo, hi, width=lambda a, b: abs(b) * rtol)[1]


# ----------------------------------------------------------------------------- Bun–Steinke
def bun_steinke_eps(design, delta, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """The Bureau's conversion ``ε = ρ + 2 sqrt(ρ ln(1/δ))`` (Bun & Steinke 2016, Prop. 1.3).

    Parameters
    ----------
    design : Composition, rational ρ or mpf ρ (an already computed real)
    delta : rational or callable ``f(dps) -> mpf`` in (0, 1)
    dps : int
        Working precision (decimal digits).

    Returns
    -------
    BoundPoint

    Notes
    -----
    Method: closed form at ``dps`` digits.  Error bound: rounding, 10^{−(dps−10)}
    relative (1e-40 at the default 50 digits).  Reference: M. Bun and T. Steinke,
    Concentrated differential privacy (TCC 2016).
    """
    rho = _rho(design)
    with mpmath.workdps(dps):
        d = _delta_in(delta)
        r = to_mpf(rho)
        eps = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))
        return _point("bun-steinke", eps, d, None, True, "epsilon", dps)


def bun_steinke_delta(design, eps, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """δ(ε) = exp(−(ε−ρ)²/(4ρ)) for ε ≥ ρ (1 below), the inverse of :func:`bun_steinke_eps`.

    Notes
    -----
    Method: closed form at ``dps`` digits.  Error bound: rounding, 10^{−(dps−10)}
    relative.  Reference: Bun & Steinke (2016), Prop. 1.3.
    """
    rho = _rho(design)
    with mpmath.workdps(dps):
        e = _real(eps, "epsilon")
        r = to_mpf(rho)
        d = mpmath.mpf(1) if e <= r else mpmath.exp(-((e - r) ** 2) / (4 * r))
        return _point("bun-steinke", e, d, None, True, "delta", dps)


# ----------------------------------------------------------------------------- CKS
def _cks_log_objective(alpha, r, e):
    return (alpha - 1) * (alpha * r - e) - mpmath.log(alpha - 1) + alpha * mpmath.log(1 - 1 / alpha)


def _cks_alpha(r, e):
    """Root of ``G(α) = (2α−1)ρ − ε + log(1−1/α)`` (increasing, concave): the optimal order.

    Bracket ``[1, 2^k]`` by doubling, then Newton kept inside the bracket
    (:func:`~exactdp.numerics.search.newton_root`) to 10^{−(dps−15)} relative (1e-35 at 50
    digits)."""

    def g(a):
        return (2 * a - 1) * r - e + mpmath.log(1 - 1 / a)

    prev, hi = expand(lambda a: g(a) >= 0, mpmath.mpf(2), 2)
    lo = mpmath.mpf(1) if prev is None else prev
    tol = mpmath.mpf(10) ** (-(mpmath.mp.dps - 15))
    root, _, _ = newton_root(lambda a: (g(a), 2 * r + 1 / (a * (a - 1))), lo, hi, hi,
                             xtol=lambda a: tol * a)
    return root


def cks_delta(design, eps, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """The optimal zCDP → (ε, δ) conversion of Canonne, Kamath & Steinke (2020).

    ``δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1−1/α)^α`` (capped at 1).

    Notes
    -----
    Method: the log-objective is convex in α (second derivative 2ρ + 1/(α(α−1)) > 0);
    α* is the root of its derivative (safeguarded Newton) and the objective is evaluated
    there (any α gives a valid bound).  Error bound: rounding, 10^{−(dps−10)} relative.
    Reference: C. Canonne, G. Kamath, T. Steinke, The discrete Gaussian for differential
    privacy (NeurIPS 2020), Corollary 13.
    """
    rho = _rho(design)
    with mpmath.workdps(dps):
        e = _real(eps, "epsilon")
        r = to_mpf(rho)
        a = _cks_alpha(r, e)
        d = min(mpmath.mpf(1), mpmath.exp(_cks_log_objective(a, r, e)))
        return _point("cks", e, d, +a, True, "delta", dps)


def cks_epsilon(design, delta, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """Smallest ε with :func:`cks_delta` ≤ δ (the CKS conversion, inverted).

    Notes
    -----
    Method: log δ_CKS(ε) is convex decreasing with slope −(α*−1) (envelope theorem):
    Newton from ε = 0 inside the bracket [0, ε_BS] (Bun–Steinke is a valid upper end),
    to 10^{−(dps−10)}; the returned ε is the bracket's upper end (δ_CKS(ε) ≤ δ was
    tested there).  Error bound: 10^{−(dps−10)} relative.
    Reference: Canonne, Kamath & Steinke (2020), Corollary 13.
    """
    rho = _rho(design)
    with mpmath.workdps(dps):
        d = _delta_in(delta)
        r = to_mpf(rho)
        ld = mpmath.log(d)

        def logdelta(e):
            return _cks_log_objective(_cks_alpha(r, e), r, e)

        def fdf(e):  # ld − log δ_CKS(ε): increasing in ε, slope α* − 1
            a = _cks_alpha(r, e)
            return ld - _cks_log_objective(a, r, e), a - 1

        lo, hi = mpmath.mpf(0), r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))  # BS: valid upper
        if logdelta(lo) <= ld:
            e = lo
        else:
            tol = mpmath.mpf(10) ** (-(dps - 10))
            # hi only ever moves to points with log δ_CKS ≤ log δ: it is the certified end
            _, _, e = newton_root(fdf, lo, hi, lo, xtol=lambda x: tol * (1 + abs(x)), max_iter=200)
        return _point("cks", e, d, +_cks_alpha(r, e), True, "epsilon", dps)


# ----------------------------------------------------------------------------- RDP
def renyi_divergence(design: Composition, alpha, *, dps: int = DPS_ANALYSIS) -> mpmath.mpf:
    """Exact Rényi divergence D_α(P‖Q) of the discrete composition (α > 1).

    Parameters
    ----------
    design : Composition
    alpha : rational, mpf or callable; must be > 1
    dps : int

    Returns
    -------
    mpmath.mpf
        ``Σ_g m_g [αΔ²/(2σ²) + log(θ(−(α−1)Δ)/θ(0))/(α−1)]`` (≤ αρ).

    Notes
    -----
    Method: completing the square, ``Σ_x p^α q^{1−α} = e^{α(α−1)Δ²/(2σ²)} θ((1−α)Δ)/θ(0)``;
    θ by Poisson summation (:func:`exactdp.dgauss.mp.log_theta_shift_ratio_mp`, series
    truncated below 10^{−(dps+5)} relative).  Error bound: 10^{−(dps−10)} relative.
    Reference: Canonne, Kamath & Steinke (2020), Prop. 7 (the bound D_α ≤ αρ); Mironov
    (2017) for RDP composition.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(dps):
        a = _real(alpha, "alpha")
        if not a > 1:
            raise InputError("alpha", alpha, "must be > 1")
        return +_renyi(design, a)


def _renyi(design, a):
    total = mpmath.mpf(0)
    for mech, count in design.groups:
        if mech.shift == 0:
            continue
        s2 = to_mpf(mech.sigma2)
        d = mech.shift
        term = a * d * d / (2 * s2) + log_theta_shift_ratio_mp((1 - a) * d, s2) / (a - 1)
        total += count * term
    return total


def _rdp_log_delta(design, a, e):
    """log δ of the RDP conversion at order α (Balle et al. 2020 / CKS Prop. 12)."""
    return (a - 1) * (_renyi(design, a) - e + mpmath.log(1 - 1 / a)) - mpmath.log(a)


def _refine_min(obj, grid):
    """Minimise ``obj`` over a grid, then by 60 golden-section steps between the grid
    neighbours of the best point; the better of the two (t, value)."""
    vals = [obj(t) for t in grid]
    i = min(range(len(grid)), key=lambda k: vals[k])
    m = golden_min(obj, grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)], tol=0, max_iter=60)
    if vals[i] < m.value:
        return grid[i], vals[i]
    return m.argmin, m.value


def _rdp_best_alpha(design, e, rho):
    """Order minimising the RDP log-δ: start from the CKS optimum, scan a log grid around
    it, refine by golden section on log(α−1)."""
    t0 = mpmath.log(_cks_alpha(rho, e) - 1)

    def obj(t):
        return _rdp_log_delta(design, 1 + mpmath.exp(t), e)

    t, v = _refine_min(obj, [t0 + mpmath.mpf(k) / 4 for k in range(-12, 13)])
    return 1 + mpmath.exp(t), v


def rdp_delta(design: Composition, eps, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """δ(ε) from the exact RDP curve with the improved conversion, optimised over α.

    ``δ = inf_α exp((α−1)(D_α − ε + log(1−1/α)) − log α)``.

    Notes
    -----
    Method: log-grid scan around the CKS optimum then golden section; the value at the
    returned α is a valid bound whatever the optimiser's accuracy.  Error bound:
    10^{−(dps−10)} relative.  Reference: Balle, Barthe, Gaboardi, Hsu & Sato, Hypothesis
    testing interpretations and Rényi DP (AISTATS 2020), Thm 21; CKS (2020), Prop. 12.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(dps):
        e = _real(eps, "epsilon")
        r = to_mpf(design.rho)
        a, logd = _rdp_best_alpha(design, e, r)
        return _point("rdp", e, min(mpmath.mpf(1), mpmath.exp(logd)), +a, True, "delta", dps)


def rdp_epsilon(design: Composition, delta, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """ε(δ) = min_α D_α + log((α−1)/α) − (log δ + log α)/(α−1) (exact RDP curve).

    Notes
    -----
    Method: golden section on log(α−1) around the CKS optimum after a grid scan.
    Error bound: 10^{−(dps−10)} relative (any α gives a valid bound).  Reference: Balle
    et al. (2020), Thm 21; CKS (2020), Prop. 12.
    """
    if not isinstance(design, Composition):
        raise InputError("design", design, "expected an exactdp.Composition")
    with mpmath.workdps(dps):
        d = _delta_in(delta)
        r = to_mpf(design.rho)
        ld = mpmath.log(d)

        def obj(t):
            a = 1 + mpmath.exp(t)
            return _renyi(design, a) + mpmath.log(1 - 1 / a) - (ld + mpmath.log(a)) / (a - 1)

        e_cks = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d))
        t0 = mpmath.log(_cks_alpha(r, e_cks) - 1)
        t, v = _refine_min(obj, [t0 + mpmath.mpf(k) / 3 for k in range(-18, 19)])
        return _point("rdp", v, d, 1 + mpmath.exp(t), True, "epsilon", dps)


# ----------------------------------------------------------------------------- GDP
def gdp_mu(design, *, dps: int = DPS_ANALYSIS) -> mpmath.mpf:
    """μ = sqrt(Σ Δ²/σ²) = sqrt(2ρ) of the continuous-Gaussian counterpart (``dps`` digits)."""
    rho = _rho(design)
    with mpmath.workdps(dps):
        return mpmath.sqrt(2 * to_mpf(rho))


def _gdp_delta_mp(mu, e):
    return mpmath.ncdf(-e / mu + mu / 2) - mpmath.exp(e) * mpmath.ncdf(-e / mu - mu / 2)


def gdp_delta(design, eps, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """δ(ε) of μ-GDP, μ² = 2ρ: ``Φ(−ε/μ+μ/2) − e^ε Φ(−ε/μ−μ/2)``.

    Not a bound for discrete noise (``is_bound=False``); see the module notes.

    Notes
    -----
    Method: closed form, evaluated at dps + |ε|/2 digits up to |ε| = 400; beyond, at the
    guard digits the cancellation of the two terms and the conditioning of Φ actually need
    (measured at the working precision, bounded by Mills' ratio).  Error bound: 10^{−(dps−10)} relative.
    Reference: Dong, Roth
    & Su, Gaussian differential privacy (JRSS-B 2022), Cor. 2.13.
    """
    rho = _rho(design)
    with mpmath.workdps(dps):
        e = _real(eps, "epsilon")
    d = _gdp_delta_at(rho, eps, dps)
    with mpmath.workdps(dps):
        return _point("gdp", e, d, None, False, "delta", dps)


def _gdp_delta_at(rho, eps, dps: int) -> mpmath.mpf:
    """μ-GDP δ(ε) to 10^{−(dps−10)} relative: at dps + |ε|/2 + 5 digits for |ε| ≤
    :data:`_GDP_FIXED_UP_TO`, else at the guard digits the cancellation needs.  ``eps``
    (exact, or an mpf) is converted at the working precision: at tiny μ, δ is sensitive
    to ε like e^{−ε²/(2μ²)}, so ε rounded to dps digits alone would cost digits of δ."""
    with mpmath.workdps(dps):
        e = _real(eps, "epsilon")
    cap = dps + int(abs(e)) // 2 + 5
    d = _gdp_delta_guarded(rho, eps, dps, cap) if abs(e) > _GDP_FIXED_UP_TO else None
    if d is None:
        with mpmath.workdps(cap):
            mu = mpmath.sqrt(2 * to_mpf(rho))
            d = _gdp_delta_mp(mu, _real(eps, "epsilon"))
    return d


#: |ε| up to which :func:`gdp_delta` works at the fixed dps + |ε|/2 + 5 digits (cheap there)
_GDP_FIXED_UP_TO = 400


def _gdp_delta_guarded(rho, eps, dps: int, cap: int):
    """δ(ε) of μ-GDP for large |ε| at the fewest guard digits that keep 10^{−(dps−10)}.

    At ``dps + g`` digits (u = 10^{−dps−g}), A = Φ(x_a) and B = e^ε Φ(x_b) carry relative
    errors ≤ u·(10 + s·(2.5 + |x|)) (+ u·|ε| for B): s = |ε|/μ + μ/2 bounds the rounding of
    the argument x, and φ(x)/Φ(x) ≤ 2.5 + |x| for every real x (Mills).  The difference
    then has relative error ≤ u·amp with amp = (A·(…) + B·(…))/(A − B); the value is kept
    when log10(amp) + 5 ≤ g (amp evaluated at the same precision), else g grows.  ``None``
    when g would reach the fixed precision ``cap`` (the caller then uses it)."""
    guard = 20
    while dps + guard < cap:
        with mpmath.workdps(dps + guard):
            e = _real(eps, "epsilon")
            mu = mpmath.sqrt(2 * to_mpf(rho))
            xa, xb = -e / mu + mu / 2, -e / mu - mu / 2
            a = mpmath.ncdf(xa)
            b = mpmath.exp(e) * mpmath.ncdf(xb)
            d = a - b
            if d > 0:
                s = abs(e) / mu + mu / 2
                amp = (a * (10 + s * (mpmath.mpf(2.5) + abs(xa)))
                       + b * (10 + s * (mpmath.mpf(2.5) + abs(xb)) + abs(e))) / d
                need = int(mpmath.ceil(mpmath.log10(amp))) + 5
                if need <= guard:
                    return d
                guard = max(2 * guard, need + 10)
            else:
                guard *= 2
    return None


def gdp_epsilon(design, delta, *, dps: int = DPS_ANALYSIS) -> BoundPoint:
    """ε(δ) of μ-GDP (μ² = 2ρ) by bisection on the decreasing δ(ε).  Not a bound.

    Notes
    -----
    Method: bisection (:mod:`exactdp.numerics.search`) to 10^{−(dps−5)} relative at
    dps + 10 + ε/2 digits (beyond ε ≈ 400: ε at dps + 10 digits, each δ at the guard
    digits its cancellation needs, see :func:`gdp_delta`), returning the upper end.  Error bound: 10^{−(dps−10)}
    relative.  Reference: Dong, Roth & Su (2022), Cor. 2.13.
    """
    rho = _rho(design)
    with mpmath.workdps(dps):
        d = _delta_in(delta)
        r = to_mpf(rho)
        hi0 = r + 2 * mpmath.sqrt(r * mpmath.log(1 / d)) + 1
    if hi0 > _GDP_FIXED_UP_TO:  # δ(x) at the guard digits it needs, x at dps + 10 digits
        with mpmath.workdps(dps + DPS_GUARD):
            rtol = mpmath.mpf(10) ** (-(dps - 5))
            e = _smallest_below(lambda x: _gdp_delta_at(rho, x, dps), d, mpmath.mpf(0), hi0, rtol)
    else:
        cancelled = int(hi0) // 2  # the digits δ(ε)'s cancellation costs, ε/2 (as in _gdp_delta_at)
        with mpmath.workdps(dps + cancelled + DPS_GUARD):
            rtol = mpmath.mpf(10) ** (-(dps - 5))
            mu = mpmath.sqrt(2 * to_mpf(rho))
            e = _smallest_below(lambda x: _gdp_delta_mp(mu, x), d, mpmath.mpf(0), hi0, rtol)
    with mpmath.workdps(dps):
        return _point("gdp", e, d, None, False, "epsilon", dps)
