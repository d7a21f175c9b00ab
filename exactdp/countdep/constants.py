"""Small-r leading coefficients: the truncated-Gaussian prior (eq. 29–31), the mechanism's
upper constant 1/π (eq. 13), the bracket (32) on C⋆ and Table 2 — all obtained by
evaluating the bound expressions numerically (maximising, taking limits), not typed in.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mpmath

from exactdp.countdep.bounds import strict_r, two_count_small_r_constant, uniform_limit, uniform_small_r_constant
from exactdp.countdep.params import DPS, GUARD, LIMIT_FACTOR, SEARCH_FACTOR, ShiftedLogParams
from exactdp.numerics.precision import to_mpf
from exactdp.numerics.search import Maximum, golden_max

__all__ = [
    "truncated_gaussian_moments",
    "truncated_gaussian_coefficient",
    "LimitValue",
    "truncated_gaussian_constant",
    "truncated_gaussian_finite_r",
    "uniform_finite_r",
    "mechanism_coefficient",
    "c_star_upper",
    "CStarBracket",
    "c_star_bracket",
    "Table2",
    "table2",
]


def truncated_gaussian_moments(L, dps: int = DPS) -> tuple:
    """(h_L, τ_L²): differential entropy and variance of N(0,1) conditioned on [−L, L].

    Notes
    -----
    Tanh-sinh quadrature of −f log f and z² f (f = φ/Z_L) at dps + 10 digits; smooth
    integrands on a finite interval, so the error is far below 10**-dps.  Reference:
    Fitzsimons (2026), proof of Corollary 6.7.
    """
    with mpmath.workdps(dps + GUARD):
        L = mpmath.mpf(L)
        Z = mpmath.quad(mpmath.npdf, [-L, 0, L])
        f = lambda z: mpmath.npdf(z) / Z  # noqa: E731
        h = mpmath.quad(lambda z: -f(z) * mpmath.log(f(z)), [-L, 0, L])
        tau2 = mpmath.quad(lambda z: z * z * f(z), [-L, 0, L])
        return h, tau2


def truncated_gaussian_coefficient(L, dps: int = DPS) -> Maximum:
    """max over x of [log x + h_L − log(2e)]₊/(x²τ_L²): (30) after r ↓ 0, i.e. (31).

    Golden-section maximisation over x ∈ [2e^{1−h_L}, 2e^{4−h_L}] (the bracket is positive
    exactly for x > 2e^{1−h_L}); the paper's closed form is e^{2h_L}/(8e³τ_L²).
    """
    with mpmath.workdps(SEARCH_FACTOR * dps + GUARD):
        h, tau2 = truncated_gaussian_moments(L, SEARCH_FACTOR * dps)
        x0 = 2 * mpmath.exp(1 - h)

        def F(x):
            return max(mpmath.log(x) + h - mpmath.log(2 * mpmath.e), 0) / (x * x * tau2)

        return golden_max(F, x0, x0 * mpmath.e**3)


@dataclass(frozen=True)
class LimitValue:
    """A limit evaluated numerically.

    Attributes
    ----------
    value : mpmath.mpf
    parameter : mpmath.mpf
        The last value of the limiting parameter used (L, or r).
    error_estimate : mpmath.mpf
        |last − previous| of the sequence, plus the optimisation accuracy.
    """

    value: mpmath.mpf
    parameter: mpmath.mpf
    error_estimate: mpmath.mpf


@functools.lru_cache(maxsize=8)
def _truncated_gaussian_constant_impl(dps: int) -> LimitValue:
    """Body of :func:`truncated_gaussian_constant` (cached per dps)."""
    with mpmath.workdps(dps + GUARD):
        prev = None
        L = 2
        while True:
            cur = truncated_gaussian_coefficient(L, dps).value
            if prev is not None and abs(cur - prev) < mpmath.mpf(10) ** (-(dps + 2)) * cur:
                return LimitValue(cur, mpmath.mpf(L), abs(cur - prev) + mpmath.mpf(10) ** (-(dps + 2)))
            if L > 60:  # pragma: no cover - cannot happen for dps <= 200
                raise RuntimeError("truncated-Gaussian limit did not converge")
            prev = cur
            L += 2


def truncated_gaussian_finite_r(r, L, dps: int = DPS) -> Maximum:
    """(30) at a fixed r: max over x of [log x + h_L − log(2e) − log(1 + Lxr)]₊/(x²τ_L²).

    A lower bound on lim inf_n r²n²v(n) valid for every 0 < r < 1 (Corollary 6.7's proof
    before r ↓ 0); 0 when the bracket is never positive.
    """
    r = strict_r(r)
    with mpmath.workdps(dps + GUARD):
        h, tau2 = truncated_gaussian_moments(L, dps)
        rm, Lm = to_mpf(r), mpmath.mpf(L)

        def F(logx):
            x = mpmath.exp(logx)
            return max(logx + h - mpmath.log(2 * mpmath.e * (1 + Lm * x * rm)), 0) / (x * x * tau2)

        x0 = 2 * mpmath.exp(1 - h)
        return golden_max(F, mpmath.log(x0), mpmath.log(x0) + 12)


def uniform_finite_r(r, dps: int = DPS) -> Maximum:
    """max over a of (24) at a fixed r (0 if (24) is vacuous, i.e. r ≥ 1/e)."""
    r = strict_r(r)
    with mpmath.workdps(dps + GUARD):
        lo = 2 * mpmath.e
        return golden_max(lambda la: uniform_limit(mpmath.exp(la), r, dps), mpmath.log(lo), mpmath.log(lo) + 12)


def mechanism_coefficient(params: ShiftedLogParams, dps: int = DPS) -> mpmath.mpf:
    """r²·lim n²v(n) = r²/(2σ²) for the mechanism (eq. 7 scaled as in Section 6).

    Notes
    -----
    Closed form at dps + 10 digits.  Reference: Fitzsimons (2026), eq. (7) and (13).
    """
    with mpmath.workdps(dps + GUARD):
        s = params.sigma(dps)
        return to_mpf(params.r) ** 2 / (2 * s * s)


@functools.lru_cache(maxsize=8)
def _c_star_upper_impl(dps: int) -> LimitValue:
    """Body of :func:`c_star_upper` (cached per dps)."""
    with mpmath.workdps(LIMIT_FACTOR * dps + GUARD):
        vals = []
        for k in (dps // 2 + 5, dps // 2 + 6):
            r = mpmath.mpf(10) ** (-k)
            vals.append(r * r / (4 * mpmath.erfinv(r) ** 2))
        return LimitValue(vals[-1], mpmath.mpf(10) ** (-(dps // 2 + 6)), abs(vals[-1] - vals[-2]))


@dataclass(frozen=True)
class CStarBracket:
    """π/(4e²) ≤ C⋆ ≤ 1/π (eq. 32), both ends computed numerically.

    Attributes
    ----------
    lower, upper : LimitValue
    ratio : mpmath.mpf
        upper/lower (≈ 2.995 = 4e²/π²).
    """

    lower: LimitValue
    upper: LimitValue
    ratio: mpmath.mpf


@functools.lru_cache(maxsize=8)
def _c_star_bracket_impl(dps: int) -> CStarBracket:
    """Body of :func:`c_star_bracket` (cached per dps)."""
    lo, up = truncated_gaussian_constant(dps), c_star_upper(dps)
    with mpmath.workdps(dps + GUARD):
        return CStarBracket(lo, up, up.value / lo.value)


@dataclass(frozen=True)
class Table2:
    """Table 2 of Fitzsimons (2026), every entry computed numerically.

    Attributes
    ----------
    two_count : mpmath.mpf
        max of the Markov–Pinsker template (→ 1/128).
    uniform : mpmath.mpf
        max over a of (24) at r → 0 (→ 3/(2e³)).
    truncated_gaussian : mpmath.mpf
        lim_L of (31) (→ π/(4e²)).
    mechanism : mpmath.mpf
        lim_r of the mechanism's coefficient (→ 1/π).
    accuracy : mpmath.mpf
        Common bound on the absolute error of the four entries.
    """

    two_count: mpmath.mpf
    uniform: mpmath.mpf
    truncated_gaussian: mpmath.mpf
    mechanism: mpmath.mpf
    accuracy: mpmath.mpf


@functools.lru_cache(maxsize=8)
def _table2_impl(dps: int) -> Table2:
    """Body of :func:`table2` (cached per dps)."""
    tc, _theta = two_count_small_r_constant(dps)
    un = uniform_small_r_constant(dps)
    br = c_star_bracket(dps)
    with mpmath.workdps(dps):
        acc = max(br.lower.error_estimate, br.upper.error_estimate, mpmath.mpf(10) ** (-(dps - 2)))
    return Table2(tc.value, un.value, br.lower.value, br.upper.value, acc)


def truncated_gaussian_constant(dps: int = DPS) -> LimitValue:
    """lim_{L→∞} of (31): the many-count constant π/(4e²) ≈ 0.1062921 of Corollary 6.7.

    Notes
    -----
    Evaluates :func:`truncated_gaussian_coefficient` at L = 2, 4, 6, … until two
    successive values agree to 10**-(dps+2).  h_L and τ_L² approach their Gaussian values
    with error O(Lφ(L)), so the sequence converges super-exponentially; the reported
    error estimate is the last difference plus the maximisation accuracy.
    """
    return _truncated_gaussian_constant_impl(int(dps))


def c_star_upper(dps: int = DPS) -> LimitValue:
    """lim_{r↓0} r²/(2Φ⁻¹((1+r)/2)²): the upper constant 1/π of (13) and (32).

    Notes
    -----
    The limit r0 ↑ r, c ↓ 0 of the mechanism's coefficient r²/(2σ²) is
    r²/(2Φ⁻¹((1+r)/2)²) = r²/(4 erfinv(r)²) = 1/π·(1 + O(r²)); it is evaluated at
    r = 10^-k for k = dps/2 + 5 and dps/2 + 6 (the O(r²) term is then below 10**-dps),
    the error estimate being the difference of the two.
    """
    return _c_star_upper_impl(int(dps))


def c_star_bracket(dps: int = DPS) -> CStarBracket:
    """The bracket (32) on the optimal small-r coefficient C⋆.

    Notes
    -----
    Both ends from :func:`truncated_gaussian_constant` and :func:`c_star_upper`, whose
    error estimates are carried.  Reference: Fitzsimons (2026), eq. (32).
    """
    return _c_star_bracket_impl(int(dps))


def table2(dps: int = DPS) -> Table2:
    """Compute the four small-r coefficients of Table 2 numerically.

    Notes
    -----
    Maximisation of the two-count template and of (24) at r → 0 (golden section), the
    L → ∞ limit of (31), and the r → 0 limit of the mechanism's coefficient; the common
    accuracy is reported.  Cached per ``dps``.  Reference: Fitzsimons (2026), Table 2.
    """
    return _table2_impl(int(dps))
