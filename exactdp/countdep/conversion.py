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

The three are computed by :mod:`exactdp.conversions.bounds` (``bun_steinke_eps``,
``cks_epsilon``, ``gdp_epsilon``, ``cks_delta``) at ``dps + 10`` digits; this module only
validates the count-dependent inputs (ρ = v(n) ≥ 0 may be 0) and states the error bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.countdep.budget import budget
from exactdp.countdep.params import DPS, GUARD, ShiftedLogParams
from exactdp.numerics.bracket import Bracket
from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import to_mpf

__all__ = ["ApproxDP", "METHODS", "zcdp_to_dp", "per_count_dp", "cks_delta"]

METHODS = ("bun-steinke", "cks", "gaussian")

#: the conversion of :mod:`exactdp.conversions.bounds` behind each method
_EPSILON = {"bun-steinke": "bun_steinke_eps", "cks": "cks_epsilon", "gaussian": "gdp_epsilon"}


def _bounds():
    """:mod:`exactdp.conversions.bounds`, imported on first use (it loads the accounting
    layer, which the rest of countdep does not need)."""
    from exactdp.conversions import bounds

    return bounds


@dataclass(frozen=True)
class ApproxDP(Bracket):
    """An (ε, δ)-DP guarantee derived from a zCDP budget.

    Attributes
    ----------
    epsilon : mpmath.mpf
        A valid ε (rounded up: the reported ε is never below the true optimum of the
        method by more than ``error_bound``, and the guarantee holds at the reported ε).
    delta : Fraction
    rho : mpmath.mpf
    method : str
        One of ``"bun-steinke"``, ``"cks"``, ``"gaussian"``.
    alpha : mpmath.mpf or None
        The Rényi order used by ``"cks"``.
    error_bound : mpmath.mpf
        Bound on |epsilon − exact value of the method's ε|.

    A :class:`~exactdp.numerics.bracket.Bracket`: ``value`` (= ``upper`` = ``estimate`` =
    ``epsilon``) is the conservative side, ``lower = epsilon − error_bound``.
    """

    _ARG, _NAME = "delta", "ε"

    epsilon: mpmath.mpf
    delta: Fraction
    rho: mpmath.mpf
    method: str
    alpha: mpmath.mpf | None
    error_bound: mpmath.mpf

    @property
    def value(self) -> mpmath.mpf:
        return self.epsilon

    @property
    def estimate(self) -> mpmath.mpf:
        return self.epsilon

    @property
    def upper(self) -> mpmath.mpf:
        return self.epsilon

    @property
    def lower(self) -> mpmath.mpf:
        # exact difference: a rounded one could land above the true lower end
        return max(mpmath.fsub(self.epsilon, self.error_bound, exact=True), mpmath.mpf(0))


def cks_delta(rho, epsilon, dps: int = DPS) -> mpmath.mpf:
    """δ(ε) of Canonne–Kamath–Steinke Cor. 13 for ρ-zCDP, minimised over α > 1.

    Notes
    -----
    :func:`exactdp.conversions.bounds.cks_delta` at ``dps + 10`` digits (the optimal α is
    the root of the increasing α-derivative of log δ_α; any α gives a valid δ, so an
    inexact root only makes δ (slightly) larger).  Capped at 1; 0 for ρ = 0.
    """
    with mpmath.workdps(dps + GUARD):
        rho = to_mpf(rho)
        if rho == 0:
            return mpmath.mpf(0)
        return _bounds().cks_delta(rho, to_mpf(epsilon), dps=dps + GUARD).delta


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
    ``bun-steinke`` is a closed form; ``cks`` is the smallest ε with δ_CKS(ε) ≤ δ, which
    equals inf_α ε_α, ε_α = αρ + log(1−1/α) + (log(1/δ) − log α)/(α−1) (valid at any α,
    so the result is a certified upper bound within ~10**-dps of the infimum);
    ``gaussian`` solves δ(ε) = δ for the exact Gaussian profile by bisection on ε,
    returning the upper end of the final bracket (valid).  All three by
    :mod:`exactdp.conversions.bounds` at ``dps + 10`` digits; ``error_bound`` is
    ``10**-dps (1 + ρ)`` plus the conversion's own.  References: Bun and Steinke (2016);
    Canonne, Kamath and Steinke (2020), Cor. 13; Balle and Wang (2018), Thm. 8.
    """
    d = to_fraction(delta, "delta")
    if not 0 < d < 1:
        raise InputError("delta", delta, "must satisfy 0 < delta < 1")
    if method not in METHODS:
        raise InputError("method", method, f"must be one of {', '.join(METHODS)}")
    with mpmath.workdps(dps + GUARD):
        rho_m = to_mpf(rho)
        if rho_m < 0:
            raise InputError("rho", rho, "must be >= 0")
        if rho_m == 0:
            return ApproxDP(mpmath.mpf(0), d, rho_m, method, None, mpmath.mpf(0))
        tiny = mpmath.mpf(10) ** (-dps) * (1 + rho_m)
        pt = getattr(_bounds(), _EPSILON[method])(rho_m, d, dps=dps + GUARD)
        eps = max(pt.epsilon, mpmath.mpf(0))
        return ApproxDP(eps, d, rho_m, method, pt.alpha, tiny + pt.error_bound)


def per_count_dp(params: ShiftedLogParams, n, delta, method: str = "cks", dps: int = DPS) -> ApproxDP:
    """(ε, δ) for a member of a group of count n, from ρ = v(n) (Definition 2.1)."""
    return zcdp_to_dp(budget(params, n, dps), delta, method, dps)
