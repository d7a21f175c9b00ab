"""Utility of the shifted-log Gaussian mechanism: Lemma 4.1, the exact expected absolute
error with clipping (and with stochastic rounding), its multiprecision-quadrature twin,
a Monte Carlo check with a confidence interval, and the drift optimality of Section 4.1.

Closed forms used (W = exp(σZ − σ²), U = (n+c)W − c, z₀ = (log(c/(n+c)) + σ²)/σ):

* E|W − 1| = 2Φ(σ) − 1 (Lemma 4.1), so E|U − n| = (n+c)·r0/(1+c) exactly (eq. 9);
* clipping gain E|U − n| − E|[U]₊ − n| = E[(−U)·1{U ≤ 0}] = cΦ(z₀) − (n+c)e^{−σ²/2}Φ(z₀−σ)
  (Gaussian identity e^{σz−σ²}φ(z) = e^{−σ²/2}φ(z−σ));
* stochastic rounding leaves the expected error unchanged: for integer n the map
  z ↦ |z − n| is linear on every [k, k+1], so E[|R − n| | Y = y] = |y − n|.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.countdep.mechanism import sample
from exactdp.countdep.params import DPS, GUARD, SEARCH_FACTOR, ShiftedLogParams, validate_count
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_FLOAT64, to_mpf
from exactdp.numerics.search import golden_max

__all__ = [
    "lemma41",
    "lemma41_quad",
    "drift_error",
    "DriftOptimum",
    "optimal_drift",
    "UtilityPoint",
    "UtilityReport",
    "expected_error",
    "utility_report",
    "log_grid",
    "MonteCarloResult",
    "monte_carlo_error",
]


def lemma41(sigma, dps: int = DPS) -> mpmath.mpf:
    """E|exp(σZ − σ²) − 1| = 2Φ(σ) − 1 (Lemma 4.1), closed form.

    Notes
    -----
    ``mpmath.ncdf`` at dps + 10 digits (relative error < 10**-dps).  Reference:
    Fitzsimons (2026), Lemma 4.1.
    """
    with mpmath.workdps(dps + GUARD):
        return 2 * mpmath.ncdf(mpmath.mpf(sigma)) - 1


def lemma41_quad(sigma, dps: int = DPS) -> mpmath.mpf:
    """E|exp(σZ − σ²) − 1| by tanh-sinh quadrature split at the kink z = σ.

    Notes
    -----
    The multiprecision twin of :func:`lemma41`; mpmath's quadrature error estimate is
    heuristic, agreement with the closed form (to ~10**-dps) is the check.
    """
    with mpmath.workdps(dps + GUARD):
        s = mpmath.mpf(sigma)
        f = lambda z: abs(mpmath.exp(s * z - s * s) - 1) * mpmath.npdf(z)  # noqa: E731
        return mpmath.quad(f, [-mpmath.inf, s, mpmath.inf])


def drift_error(sigma, a, dps: int = DPS) -> mpmath.mpf:
    """f(a) = E|exp(σZ − a) − 1| = 2Φ(a/σ) − 1 + e^{σ²/2−a}(1 − 2Φ(a/σ − σ)).

    Notes
    -----
    Split at the crossing Z = a/σ and use E[e^{σZ}1{Z > t}] = e^{σ²/2}Φ(σ − t);
    evaluated at dps + 10 digits (relative error < 10**-dps).  Reference: Fitzsimons
    (2026), Section 4.1.
    """
    with mpmath.workdps(dps + GUARD):
        s, a = mpmath.mpf(sigma), mpmath.mpf(a)
        t = a / s
        return 2 * mpmath.ncdf(t) - 1 + mpmath.exp(s * s / 2 - a) * (1 - 2 * mpmath.ncdf(t - s))


@dataclass(frozen=True)
class DriftOptimum:
    """The numerically located minimiser of the expected multiplicative error f(a).

    Attributes
    ----------
    sigma : mpmath.mpf
    sigma_squared : mpmath.mpf
        σ², the paper's optimal drift (for comparison with a_star).
    a_star : mpmath.mpf
        argmin of f (located by golden-section search, not assumed).
    f_min : mpmath.mpf
        f(a_star); equals 2Φ(σ) − 1 when a_star = σ².
    bracket_width : mpmath.mpf
        Width of the final bracket around a_star.
    f_half : mpmath.mpf
        f(σ²/2), the error with the mean-unbiased drift, for comparison.
    """

    sigma: mpmath.mpf
    sigma_squared: mpmath.mpf
    a_star: mpmath.mpf
    f_min: mpmath.mpf
    bracket_width: mpmath.mpf
    f_half: mpmath.mpf


def optimal_drift(sigma, dps: int = DPS) -> DriftOptimum:
    """Minimise f(a) = E|exp(σZ − a) − 1| over a numerically (Section 4.1).

    Notes
    -----
    f is unimodal (its derivative changes sign once), so golden-section search on
    [0, 4σ² + 1] brackets the minimiser to width ~10**-(dps/2); the paper's answer is
    a = σ².  The bracket width is reported.
    """
    digits = SEARCH_FACTOR * dps
    with mpmath.workdps(digits + GUARD):
        s = mpmath.mpf(sigma)
        best = golden_max(lambda a: -drift_error(s, a, digits), 0, 4 * s * s + 1)
        return DriftOptimum(s, s * s, best.argmax, -best.value, best.bracket_width, drift_error(s, s * s / 2, digits))


@dataclass(frozen=True)
class UtilityPoint:
    """Expected absolute error of the release at one count.

    Attributes
    ----------
    n : int
    error : mpmath.mpf
        E|x̂ − n| of the clipped release; also the error after stochastic rounding.
    preclip : Fraction
        E|U − n| = (n + c)·r0/(1 + c) before clipping (exact, eq. 9).
    gain : mpmath.mpf
        preclip − error, the clipping gain (≥ 0).
    relative_gain : mpmath.mpf
        gain / preclip.
    target : Fraction
        r·max(n, 1), the utility requirement (2).
    ratio : mpmath.mpf
        error / target (must be < 1).
    quad_value, quad_error_estimate : mpmath.mpf or None
        The same expectation by multiprecision quadrature (twin) and mpmath's error
        estimate for it.
    """

    n: int
    error: mpmath.mpf
    preclip: Fraction
    gain: mpmath.mpf
    relative_gain: mpmath.mpf
    target: Fraction
    ratio: mpmath.mpf
    quad_value: mpmath.mpf | None = None
    quad_error_estimate: mpmath.mpf | None = None


def _clip_gain(params: ShiftedLogParams, n: int, s) -> mpmath.mpf:
    c = to_mpf(params.c)
    nc = n + c
    z0 = (mpmath.log(c / nc) + s * s) / s
    return c * mpmath.ncdf(z0) - nc * mpmath.exp(-s * s / 2) * mpmath.ncdf(z0 - s)


def _quad_error(params: ShiftedLogParams, n: int, s):
    c = to_mpf(params.c)
    nc = n + c
    nm = mpmath.mpf(n)
    z0 = (mpmath.log(c / nc) + s * s) / s

    def integrand(z):
        u = nc * mpmath.exp(s * z - s * s) - c
        return abs(max(u, 0) - nm) * mpmath.npdf(z)

    # kinks: U = 0 at z0 and U = n (W = 1) at z = σ; they coincide when n = 0.
    pts = [-mpmath.inf, z0, s, mpmath.inf] if n >= 1 else [-mpmath.inf, z0, mpmath.inf]
    return mpmath.quad(integrand, pts, error=True)


def expected_error(params: ShiftedLogParams, n, *, dps: int = DPS, quad: bool = False) -> UtilityPoint:
    """Exact expected absolute error of the clipped (or rounded) release at count n.

    Parameters
    ----------
    params : ShiftedLogParams
    n : int
        Count ``>= 0``.
    dps : int
        Decimal digits.
    quad : bool
        Also evaluate the expectation by tanh-sinh quadrature (the multiprecision twin).

    Returns
    -------
    UtilityPoint

    Notes
    -----
    error = (n+c)·r0/(1+c) − [cΦ(z₀) − (n+c)e^{−σ²/2}Φ(z₀−σ)], evaluated at dps + 10
    digits; the bracket cancels ≈ log10(1 + |z₀|/σ) digits, absorbed by the guard digits,
    so the relative error is below 10**-dps.  The quadrature twin integrates
    |[U(z)]₊ − n|·φ(z) split at the kinks U = 0 and U = n (mpmath's error estimate is
    heuristic).  Reference: Fitzsimons (2026), Lemma 4.1 and eq. (9).
    """
    n = validate_count(n)
    with mpmath.workdps(dps + GUARD):
        s = params.sigma(dps)
        preclip = (n + params.c) * params.q
        gain = _clip_gain(params, n, s)
        err = to_mpf(preclip) - gain
        target = params.r * max(n, 1)
        qv = qe = None
        if quad:
            qv, qe = _quad_error(params, n, s)
        return UtilityPoint(n, err, preclip, gain, gain / to_mpf(preclip), target, err / to_mpf(target), qv, qe)


def log_grid(max_n: int, per_decade: int = 4) -> list:
    """Counts 0, 1, … up to ``max_n`` on a logarithmic grid (distinct integers).

    Notes
    -----
    round(10**(k/per_decade)) for k = 0, 1, …, plus 0 and ``max_n``; exact integers.
    """
    max_n = validate_count(max_n, "max_n")
    pts = {0, max_n}
    if max_n >= 1:
        k = 0
        while True:
            v = int(round(10 ** (k / per_decade)))
            if v > max_n:
                break
            pts.add(v)
            k += 1
    return sorted(pts)


@dataclass(frozen=True)
class UtilityReport:
    """Utility over a grid of counts.

    Attributes
    ----------
    params : ShiftedLogParams
    points : tuple of UtilityPoint
    max_ratio : mpmath.mpf
        max over the grid of error / (r·max(n, 1)).
    all_within : bool
        Whether every error is strictly below r·max(n, 1) (eq. 2).
    max_quad_discrepancy : mpmath.mpf or None
        max |closed form − quadrature| / closed form, when the twin was run.
    """

    params: ShiftedLogParams
    points: tuple
    max_ratio: mpmath.mpf
    all_within: bool
    max_quad_discrepancy: mpmath.mpf | None


def utility_report(params: ShiftedLogParams, ns, *, dps: int = DPS, quad: bool = False) -> UtilityReport:
    """:func:`expected_error` at every count of ``ns`` and the check against (2).

    Notes
    -----
    Closed form per count (relative error < 10**-dps); with ``quad=True`` the quadrature
    twin is run too and the largest relative discrepancy reported.  Reference:
    Fitzsimons (2026), Theorem 3.1 (i) and eq. (2).
    """
    pts = tuple(expected_error(params, n, dps=dps, quad=quad) for n in ns)
    if not pts:
        raise InputError("n", ns, "give at least one count")
    with mpmath.workdps(dps + GUARD):
        max_ratio = max(p.ratio for p in pts)
        disc = None
        if quad:
            disc = max(abs(p.error - p.quad_value) / p.error for p in pts)
    return UtilityReport(params, pts, max_ratio, bool(max_ratio < 1), disc)


@dataclass(frozen=True)
class MonteCarloResult:
    """A Monte Carlo estimate of E|x̂ − n| with a CLT confidence interval.

    Attributes
    ----------
    n, size : int
    rounding : bool
    mean, std : float
        Sample mean and sample standard deviation of |x̂ − n|.
    confidence : Fraction
        Nominal coverage of [low, high] (asymptotic, CLT; |x̂ − n| has all moments).
    low, high : float
    seed : int or None
    """

    n: int
    size: int
    rounding: bool
    mean: float
    std: float
    confidence: Fraction
    low: float
    high: float
    seed: int | None

    def contains(self, value) -> bool:
        return self.low <= float(value) <= self.high


def monte_carlo_error(
    params: ShiftedLogParams,
    n,
    size: int = 100_000,
    *,
    seed: int | None = 0,
    rounding: bool = False,
    confidence="0.999",
) -> MonteCarloResult:
    """Estimate E|x̂ − n| by simulation with a two-sided CLT confidence interval.

    Notes
    -----
    mean ± z·s/√size with z = Φ⁻¹(1 − (1 − confidence)/2): an asymptotic interval whose
    coverage error is O(size^-1/2) (Berry–Esseen; the lognormal error has finite third
    moment).  Uses :func:`~exactdp.countdep.mechanism.sample` with
    ``numpy.random.default_rng(seed)``.
    """
    n = validate_count(n)
    conf = to_fraction(confidence, "confidence")
    if not 0 < conf < 1:
        raise InputError("confidence", confidence, "must satisfy 0 < confidence < 1")
    size = int(validate_count(size, "size"))
    if size < 2:
        raise InputError("size", size, "need at least 2 samples")
    rng = np.random.default_rng(seed)
    total = 0.0
    total2 = 0.0
    chunk = 1 << 18
    done = 0
    while done < size:
        m = min(chunk, size - done)
        e = np.abs(sample(params, np.full(m, n), rng, rounding=rounding) - n).astype(np.float64)
        total += math.fsum(e)
        total2 += math.fsum(e * e)
        done += m
    mean = total / size
    var = max(total2 / size - mean * mean, 0.0) * size / (size - 1)
    std = math.sqrt(var)
    with mpmath.workdps(DPS_FLOAT64):
        z = float(mpmath.sqrt(2) * mpmath.erfinv(to_mpf(conf)))
    half = z * std / math.sqrt(size)
    return MonteCarloResult(n, size, rounding, mean, std, conf, mean - half, mean + half, seed)
