"""From a per-count zCDP budget ρ = v(n) to an (ε, δ) guarantee for members of a group of
size n.

Three conversions, each valid for the released (clipped, optionally rounded) output:

* ``"bun-steinke"``: ε = ρ + 2√(ρ log(1/δ)) (Bun and Steinke 2016, Prop. 1.3);
* ``"cks"``: the optimal conversion from Rényi/zCDP bounds of Canonne, Kamath and
  Steinke (2020, "The Discrete Gaussian for Differential Privacy", Prop. 12 and Cor. 13):
  δ = inf_{α>1} exp((α−1)(αρ−ε))/(α−1) · (1−1/α)^α, i.e. for fixed δ
  ε = inf_{α>1} αρ + log(1−1/α) + (log(1/δ) − log α)/(α−1);
* ``"gaussian"``: the exact privacy profile of the unprojected release, which is a
  Gaussian shift in log space with μ = Δ/σ = √(2ρ) (Balle and Wang 2018, Thm. 8):
  δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ).  Tight for the unprojected Gaussian and valid
  after clipping/rounding by post-processing.  Always ε_gaussian ≤ ε_cks ≤ ε_bun-steinke.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.countdep.budget import budget
from exactdp.countdep.params import DPS, GUARD, ShiftedLogParams, mpf_of
from exactdp.numerics.exact import InputError, to_fraction

__all__ = ["ApproxDP", "METHODS", "zcdp_to_dp", "per_count_dp", "cks_delta"]

METHODS = ("bun-steinke", "cks", "gaussian")


@dataclass(frozen=True)
class ApproxDP:
    """An (ε, δ)-DP guarantee derived from a zCDP budget.

    Attributes
    ----------
    epsilon : mpmath.mpf
        A valid ε (rounded up: the reported ε is never below the true optimum of the
        method by more than ``abs_error``, and the guarantee holds at the reported ε).
    delta : Fraction
    rho : mpmath.mpf
    method : str
        One of ``"bun-steinke"``, ``"cks"``, ``"gaussian"``.
    alpha : mpmath.mpf or None
        The Rényi order used by ``"cks"``.
    abs_error : mpmath.mpf
        Bound on |epsilon − exact value of the method's ε|.
    """

    epsilon: mpmath.mpf
    delta: Fraction
    rho: mpmath.mpf
    method: str
    alpha: mpmath.mpf | None
    abs_error: mpmath.mpf


def _cks_eps_at(rho, L, alpha):
    return alpha * rho + mpmath.log1p(-1 / alpha) + (L - mpmath.log(alpha)) / (alpha - 1)


def cks_delta(rho, epsilon, dps: int = DPS) -> mpmath.mpf:
    """δ(ε) of Canonne–Kamath–Steinke Cor. 13 for ρ-zCDP, minimised over α > 1.

    Notes
    -----
    The α-derivative of log δ_α is (2α−1)ρ − ε + log(1−1/α), increasing in α; its root
    is found by bisection to the working precision.  Any α gives a valid δ, so an
    inexact root only makes δ (slightly) larger.  Capped at 1.
    """
    with mpmath.workdps(dps + GUARD):
        rho = mpmath.mpf(rho)
        eps = mpmath.mpf(epsilon)
        if rho == 0:
            return mpmath.mpf(0)
        lo, hi = mpmath.mpf(1), max(mpmath.mpf(2), (eps + 1) / (2 * rho) + 2)
        for _ in range(int(3.4 * (dps + GUARD)) + 20):
            mid = (lo + hi) / 2
            if (2 * mid - 1) * rho - eps + mpmath.log1p(-1 / mid) < 0:
                lo = mid
            else:
                hi = mid
        a = hi
        d = mpmath.exp((a - 1) * (a * rho - eps) + a * mpmath.log1p(-1 / a)) / (a - 1)
        return min(d, mpmath.mpf(1))


def _gaussian_delta(mu, eps):
    return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu)


def zcdp_to_dp(rho, delta, method: str = "cks", dps: int = DPS) -> ApproxDP:
    """Convert ρ-zCDP to (ε, δ)-DP.

    Parameters
    ----------
    rho : mpf, Fraction or int
        The zCDP parameter (e.g. v(n)); ``rho >= 0``.
    delta : exact rational
        Target δ in (0, 1) (parsed with :func:`exactdp.numerics.exact.to_fraction`).
    method : {"cks", "bun-steinke", "gaussian"}
    dps : int

    Returns
    -------
    ApproxDP

    Notes
    -----
    ``bun-steinke`` is a closed form (rel. error ≤ 10**-dps).  ``cks`` minimises
    ε_α = αρ + log(1−1/α) + (log(1/δ) − log α)/(α−1) over α > 1: its derivative
    ρ − (log(1/δ) − log α)/(α−1)² has a single root in (1, 1 + √(log(1/δ)/ρ)], found by
    bisection; ε_α is valid at any α, so the result is a certified upper bound within
    ~10**-dps of the infimum.  ``gaussian`` solves δ(ε) = δ for the exact Gaussian
    profile by bisection on ε, returning the upper end of the final bracket (valid).
    References: Bun and Steinke (2016); Canonne, Kamath and Steinke (2020), Cor. 13;
    Balle and Wang (2018), Thm. 8.
    """
    d = to_fraction(delta, "delta")
    if not 0 < d < 1:
        raise InputError("delta", delta, "must satisfy 0 < delta < 1")
    if method not in METHODS:
        raise InputError("method", method, f"must be one of {', '.join(METHODS)}")
    with mpmath.workdps(dps + GUARD):
        rho_m = mpf_of(rho) if isinstance(rho, Fraction) else mpmath.mpf(rho)
        if rho_m < 0:
            raise InputError("rho", rho, "must be >= 0")
        tiny = mpmath.mpf(10) ** (-dps) * (1 + rho_m)
        L = -mpmath.log(mpf_of(d))
        if rho_m == 0:
            return ApproxDP(mpmath.mpf(0), d, rho_m, method, None, mpmath.mpf(0))
        if method == "bun-steinke":
            eps = rho_m + 2 * mpmath.sqrt(rho_m * L)
            return ApproxDP(eps, d, rho_m, method, None, tiny)
        if method == "cks":
            lo, hi = mpmath.mpf(1), 1 + mpmath.sqrt(L / rho_m)
            for _ in range(int(3.4 * (dps + GUARD)) + 40):
                mid = (lo + hi) / 2
                if rho_m * (mid - 1) ** 2 - (L - mpmath.log(mid)) < 0:
                    lo = mid
                else:
                    hi = mid
            alpha = hi
            eps = max(_cks_eps_at(rho_m, L, alpha), mpmath.mpf(0))
            return ApproxDP(eps, d, rho_m, method, alpha, tiny)
        # exact Gaussian profile
        mu = mpmath.sqrt(2 * rho_m)
        dm = mpf_of(d)
        if _gaussian_delta(mu, mpmath.mpf(0)) <= dm:
            return ApproxDP(mpmath.mpf(0), d, rho_m, method, None, mpmath.mpf(0))
        lo, hi = mpmath.mpf(0), rho_m + 2 * mpmath.sqrt(rho_m * L) + 1
        for _ in range(int(3.4 * (dps + GUARD)) + 20):
            mid = (lo + hi) / 2
            if _gaussian_delta(mu, mid) > dm:
                lo = mid
            else:
                hi = mid
        return ApproxDP(hi, d, rho_m, method, None, tiny + (hi - lo))


def per_count_dp(params: ShiftedLogParams, n, delta, method: str = "cks", dps: int = DPS) -> ApproxDP:
    """(ε, δ) for a member of a group of count n, from ρ = v(n) (Definition 2.1)."""
    return zcdp_to_dp(budget(params, n, dps), delta, method, dps)
