"""Mechanism-independent lower bounds on v(n) (Fitzsimons 2026, Section 6).

Every bound here holds for any mechanism with E_m|Y − m| ≤ r·m at all m ≥ 1 and a finite
nonincreasing count-dependent zCDP budget v, for 0 < r < 1 and base count n ≥ 1:

* :func:`two_count_bound` — (14), an exact rational; :func:`two_count_limit` — (15);
* :func:`many_count_bound` — (19) for a user-supplied finitely supported prior J;
* :func:`uniform_bound` / :func:`best_uniform_bound` — (23), J uniform on {0..K−1};
* :func:`uniform_limit` — (24), the n → ∞ limit with K_n/(rn) → a;
* the small-r template constants :func:`two_count_small_r_constant` (1/128) and
  :func:`uniform_small_r_constant` (3/(2e³)), found by numerical maximisation.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.countdep.params import DPS, GUARD, SEARCH_FACTOR, validate_positive_count, validate_r
from exactdp.numerics.exact import InputError, to_fraction, to_int
from exactdp.numerics.precision import to_mpf
from exactdp.numerics.search import Maximum, golden_max

__all__ = [
    "strict_r",
    "two_count_constant",
    "two_count_bound",
    "two_count_limit",
    "two_count_template",
    "two_count_small_r_constant",
    "ManyCountBound",
    "many_count_bound",
    "uniform_bound",
    "UniformBound",
    "best_uniform_bound",
    "uniform_limit",
    "uniform_small_r_constant",
]


def strict_r(value, field: str = "r") -> Fraction:
    """Parse r and require 0 < r < 1 (the lower bounds are trivial at r = 1, Prop. 2.3).

    Notes
    -----
    Exact parsing with :func:`exactdp.numerics.exact.to_fraction`; raises InputError naming ``r``.
    """
    r = validate_r(value, field)
    if r == 1:
        raise InputError(field, value, "lower bounds need 0 < r < 1 (at r = 1, v = 0 is achievable: Prop. 2.3)")
    return r


def two_count_constant(r) -> Fraction:
    """C_r = ((1 + 3r)/(1 − r))² of Proposition 6.2.

    Notes
    -----
    Exact rational.  Reference: Fitzsimons (2026), Proposition 6.2.
    """
    r = strict_r(r)
    return ((1 + 3 * r) / (1 - r)) ** 2


def two_count_bound(r, n) -> Fraction:
    """The two-count lower bound (14): v(n) ≥ (1−r)²/(2(⌈C_r n⌉ − n)²), exactly.

    Notes
    -----
    Exact rational arithmetic (no rounding).  Proof: Markov's inequality at the
    threshold √(mn), m = ⌈C_r n⌉, Pinsker, and quadratic group privacy (Prop. 6.2).
    """
    r = strict_r(r)
    n = validate_positive_count(n)
    cr = two_count_constant(r)
    m = math.ceil(cr * n)  # exact ceiling of a Fraction
    return (1 - r) ** 2 / (2 * Fraction(m - n) ** 2)


def two_count_limit(r) -> Fraction:
    """lim n²·(14) as n → ∞, evaluated from the bound itself (eq. 15).

    Notes
    -----
    n²·(14) = (1−r)²/(2(⌈C_r n⌉/n − 1)²) and ⌈C_r n⌉/n → C_r.  Along the multiples of the
    denominator q of the rational C_r the ceiling is exact, so the sequence n²·(14) is
    constant there and equals its limit: the function returns q²·two_count_bound(r, q),
    an exact rational.  The paper states it as (1−r)⁶/(128 r²(1+r)²).
    """
    r = strict_r(r)
    q = two_count_constant(r).denominator
    return q * q * two_count_bound(r, q)


def two_count_template(a, theta, dps: int = DPS) -> mpmath.mpf:
    """Small-r two-count template (2/a²)·[1 − 1/(aθ(1−θ))]₊² (Section 8).

    With m − n = arn and threshold n + θ(m − n): Markov gives total error probability
    1/(aθ(1−θ)) in the small-r limit, Pinsker gives KL ≥ 2TV², group privacy KL ≤ a²r²n²v.

    Notes
    -----
    Closed form at dps + 10 digits (relative error < 10**-dps).  Reference: Fitzsimons
    (2026), Section 8 ("Why the two-count proof stops at 1/128").
    """
    with mpmath.workdps(dps + GUARD):
        a, th = mpmath.mpf(a), mpmath.mpf(theta)
        tv = 1 - 1 / (a * th * (1 - th))
        return 2 * max(tv, 0) ** 2 / a**2


@functools.lru_cache(maxsize=8)
def _two_count_small_r_constant_impl(dps: int) -> tuple:
    """Body of :func:`two_count_small_r_constant` (cached per dps)."""
    with mpmath.workdps(dps + GUARD):

        def best_split(a):  # the threshold fraction θ maximising the template at a
            return golden_max(lambda t: two_count_template(a, t, dps), mpmath.mpf(1) / 100, mpmath.mpf(99) / 100)

        outer = golden_max(lambda a: best_split(a).value, 4, 64)
        return outer, best_split(outer.argmax).argmax


@dataclass(frozen=True)
class ManyCountBound:
    """The many-count bound (19) for one prior.

    Attributes
    ----------
    value : mpmath.mpf
        [H(J) − log(2e(r(n + EJ) + 1/4))]₊ / E(J − j⋆)².
    numerator : mpmath.mpf
        The bracket before the positive part (≤ 0 means vacuous).
    entropy : mpmath.mpf
        H(J) in nats.
    mean, second_moment : Fraction
        EJ and E(J − j⋆)², exact.
    j_star : int
    vacuous : bool
    rel_error : mpmath.mpf
        Bound on the relative error of ``value`` (and absolute error of ``numerator``).
    """

    value: mpmath.mpf
    numerator: mpmath.mpf
    entropy: mpmath.mpf
    mean: Fraction
    second_moment: Fraction
    j_star: int
    vacuous: bool
    rel_error: mpmath.mpf


def _parse_pmf(pmf) -> dict:
    items = pmf.items() if isinstance(pmf, dict) else enumerate(pmf)
    out: dict = {}
    for j, p in items:
        jj = to_int(j, "pmf support")
        if jj < 0:
            raise InputError("pmf support", j, "J must take nonnegative integer values")
        pp = to_fraction(p, f"pmf[{jj}]")
        if pp < 0:
            raise InputError(f"pmf[{jj}]", p, "probabilities must be >= 0")
        if pp > 0:
            out[jj] = out.get(jj, Fraction(0)) + pp
    total = sum(out.values(), Fraction(0))
    if total != 1:
        raise InputError("pmf", pmf, f"probabilities must sum to exactly 1 (they sum to {total})")
    return out


def many_count_bound(pmf, n, r, j_star=None, dps: int = DPS) -> ManyCountBound:
    """The many-count inequality (19) of Theorem 6.4 for a finitely supported prior J.

    Parameters
    ----------
    pmf : dict {j: p} or sequence (p_0, p_1, …)
        Exact rational probabilities summing to exactly 1, on nonnegative integers.
    n : int
        Base count, ``n >= 1``.
    r : rational
        Relative-error tolerance, ``0 < r < 1``.
    j_star : int, optional
        Reference offset; default the integer nearest EJ (which minimises E(J − j⋆)²).
    dps : int

    Returns
    -------
    ManyCountBound

    Notes
    -----
    EJ and E(J−j⋆)² are exact rationals; H(J) = −Σ p log p and the logarithm are
    evaluated at dps + 10 digits, so ``value`` has relative error below 10**-dps unless
    the numerator nearly cancels (its absolute error is below 10**-(dps+5)).
    Reference: Fitzsimons (2026), Theorem 6.4 and Lemma 6.3.
    """
    n = validate_positive_count(n)
    r = strict_r(r)
    p = _parse_pmf(pmf)
    mean = sum((j * q for j, q in p.items()), Fraction(0))
    if j_star is None:
        js = int(math.floor(mean + Fraction(1, 2)))
    else:
        js = to_int(j_star, "j_star")
        if js < 0:
            raise InputError("j_star", j_star, "must be a nonnegative integer")
    m2 = sum((q * (j - js) ** 2 for j, q in p.items()), Fraction(0))
    if m2 <= 0:
        raise InputError("pmf", pmf, "E(J - j_star)^2 must be > 0 (J must not be the constant j_star)")
    with mpmath.workdps(dps + GUARD):
        h = -mpmath.fsum(to_mpf(q) * mpmath.log(to_mpf(q)) for q in p.values())
        num = h - mpmath.log(2 * mpmath.e * to_mpf(r * (n + mean) + Fraction(1, 4)))
        val = max(num, 0) / to_mpf(m2)
    with mpmath.workdps(dps):
        rel = mpmath.mpf(10) ** (-dps)
    return ManyCountBound(val, num, h, mean, m2, js, bool(num <= 0), rel)


def uniform_bound(K, n, r, dps: int = DPS) -> mpmath.mpf:
    """Corollary 6.5 (23): 12/(K²−1)·[log(K/(2e(r(n + (K−1)/2) + 1/4)))]₊ for odd K ≥ 3.

    Notes
    -----
    Closed form of (19) with J uniform on {0, …, K−1}, j⋆ = (K−1)/2; relative error below
    10**-dps (dps + 10 working digits).
    """
    K = to_int(K, "K")
    if K < 3 or K % 2 == 0:
        raise InputError("K", K, "must be an odd integer >= 3")
    n = validate_positive_count(n)
    r = strict_r(r)
    with mpmath.workdps(dps + GUARD):
        inner = to_mpf(r * (n + Fraction(K - 1, 2)) + Fraction(1, 4))
        num = mpmath.log(K / (2 * mpmath.e * inner))
        return 12 * max(num, 0) / (K * K - 1)


@dataclass(frozen=True)
class UniformBound:
    """The best uniform-prior bound (23) over odd K.

    Attributes
    ----------
    value : mpmath.mpf
    K : int or None
        The maximising odd K (None when vacuous).
    vacuous : bool
    reason : str
    rel_error : mpmath.mpf
        Bound on the relative error of ``value`` (10**-dps).
    """

    value: mpmath.mpf
    K: int | None
    vacuous: bool
    reason: str
    rel_error: mpmath.mpf = mpmath.mpf(10) ** -30


def best_uniform_bound(n, r, dps: int = DPS) -> UniformBound:
    """Maximise (23) over odd K ≥ 3.

    Notes
    -----
    The bracket of (23) is log K − log(A + BK) with A = 2e(rn − r/2 + 1/4), B = er: concave
    and increasing; it is positive for some K iff er < 1, i.e. r < 1/e (for r ≥ 1/e,
    A + BK > K for all K, so (23) is vacuous).  On the positive region (23) is a ratio of
    a nonnegative concave function to the convex K² − 1, hence quasi-concave: golden-
    section search over real K locates the maximiser, and the best odd K is one of the
    two odd integers around it (both are evaluated).  Exact in the sense of
    :func:`uniform_bound` (relative error < 10**-dps).
    """
    n = validate_positive_count(n)
    r = strict_r(r)
    with mpmath.workdps(dps + GUARD):
        rm = to_mpf(r)
        if mpmath.e * rm >= 1:
            return UniformBound(mpmath.mpf(0), None, True,
                                "r >= 1/e: log K - log(2e(r(n+(K-1)/2)+1/4)) < 0 for every K")
        A = 2 * mpmath.e * (rm * n - rm / 2 + mpmath.mpf(1) / 4)
        B = mpmath.e * rm
        kmin = max(mpmath.mpf(3), A / (1 - B))

        def g(logk):
            k = mpmath.exp(logk)
            return 12 * (logk - mpmath.log(A + B * k)) / (k * k - 1)

        lo, hi = mpmath.log(kmin), mpmath.log(kmin) + mpmath.log(10**6)
        mx = golden_max(g, lo, hi, tol=mpmath.mpf(10) ** -12)
        kc = mpmath.exp(mx.argmax)
        base = int(mpmath.floor(kc))
        cands = {k for k in range(base - 3, base + 5) if k >= 3 and k % 2 == 1} | {3}
        best = max(((uniform_bound(k, n, r, dps), k) for k in cands), key=lambda t: t[0])
        rel = mpmath.mpf(10) ** (-dps)
        if best[0] <= 0:
            return UniformBound(mpmath.mpf(0), None, True, "no odd K gives a positive bracket at this n", rel)
        return UniformBound(best[0], best[1], False, "", rel)


def uniform_limit(a, r, dps: int = DPS) -> mpmath.mpf:
    """(24): lim inf r²n²v(n) ≥ (12/a²)·[log(a/(2e(1 + ar/2)))]₊ for K_n/(rn) → a.

    ``r = 0`` gives the small-r form (12/a²)·[log(a/(2e))]₊.

    Notes
    -----
    Closed form at dps + 10 digits (relative error < 10**-dps).  Reference: Fitzsimons
    (2026), Corollary 6.5, eq. (24).
    """
    with mpmath.workdps(dps + GUARD):
        a = mpmath.mpf(a)
        rr = to_mpf(to_fraction(r, "r"))
        num = mpmath.log(a / (2 * mpmath.e * (1 + a * rr / 2)))
        return 12 * max(num, 0) / a**2


@functools.lru_cache(maxsize=8)
def _uniform_small_r_constant_impl(dps: int) -> Maximum:
    """Body of :func:`uniform_small_r_constant` (cached per dps)."""
    with mpmath.workdps(SEARCH_FACTOR * dps + GUARD):
        lo = 2 * mpmath.e
        return golden_max(lambda a: uniform_limit(a, 0, SEARCH_FACTOR * dps), lo, lo * mpmath.e**4)


def two_count_small_r_constant(dps: int = DPS) -> tuple:
    """Maximise :func:`two_count_template` over (a, θ) numerically (nested golden sections).

    Returns ``(Maximum over a, theta_at_optimum)``.

    Notes
    -----
    Golden section over θ ∈ [1/100, 99/100] nested in golden section over a ∈ [4, 64];
    the value is accurate to ~10**-dps (quadratic in the bracket width), the maximiser to
    ~10**-(dps/2).  The paper's answer is 1/128 at a = 8, θ = 1/2 (Fitzsimons 2026,
    Section 8).  Cached per ``dps``.
    """
    return _two_count_small_r_constant_impl(int(dps))


def uniform_small_r_constant(dps: int = DPS) -> Maximum:
    """Maximise (24) at r → 0 over a numerically.

    Notes
    -----
    Golden section on [2e, 2e⁵] at 2·dps + 10 digits: the value is accurate to far below
    10**-dps, the argmax to ~10**-dps.  The paper's closed form is 3/(2e³) ≈ 0.0746806 at
    a = 2e^{3/2} (Fitzsimons 2026, eq. 25).  Cached per ``dps``.
    """
    return _uniform_small_r_constant_impl(int(dps))
