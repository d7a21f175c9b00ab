"""The two noise conventions that map a zCDP budget ρ to a discrete Gaussian N_Z(0, σ²).

* ``"paper"`` (Kazan and Reiter, arXiv 2204.04253; Bun and Steinke's ρ of one unit
  shift): ``σ² = 1/(2ρ)``;
* ``"production"`` (the Census DAS: per-query ρ_q under change-one-record neighbours,
  which move two cells, so ρ_q = 2·1/(2σ²)): ``σ² = 1/ρ``.

The pmf is written with the *kernel coefficient* ``a = 1/(2σ²)``:
``P[E = z] = exp(−a z²)/Z(a)``; ``a = ρ`` (paper) or ``a = ρ/2`` (production).  Exact
rational arithmetic only.
"""

from __future__ import annotations

from fractions import Fraction

from exactdp.numerics.errors import InputError
from exactdp.numerics.exact import to_fraction

__all__ = ["CONVENTIONS", "check_convention", "coefficient", "variance"]

#: Noise conventions: name → (description, factor f with a = f·ρ).
CONVENTIONS = {
    "paper": ("σ² = 1/(2ρ) (Kazan and Reiter's DG(0, 1/(2ρ)))", Fraction(1)),
    "production": ("σ² = 1/ρ (Census DAS production, change-one-record ρ)", Fraction(1, 2)),
}


def check_convention(convention: str) -> str:
    """The name itself if it is one of :data:`CONVENTIONS` (else :class:`InputError`)."""
    if convention not in CONVENTIONS:
        raise InputError("convention", convention, f"must be one of {sorted(CONVENTIONS)}")
    return convention


def coefficient(rho, convention: str = "paper") -> Fraction:
    """Kernel coefficient ``a`` (``P[E=z] ∝ exp(-a z²)``) for budget ``rho``.

    Parameters
    ----------
    rho : rational
        The zCDP budget of the noisy count (> 0).
    convention : {"paper", "production"}
        ``"paper"``: σ² = 1/(2ρ), a = ρ; ``"production"``: σ² = 1/ρ, a = ρ/2.

    Returns
    -------
    Fraction

    Notes
    -----
    Exact rational arithmetic.  ``DG(0, σ²)`` has ``P[E = z] ∝ exp(-z²/(2σ²))``
    (Canonne, Kamath and Steinke 2020); Kazan and Reiter use σ² = 1/(2ρ).
    """
    rho = to_fraction(rho, "rho")
    if rho <= 0:
        raise InputError("rho", rho, "must be > 0")
    return CONVENTIONS[check_convention(convention)][1] * rho


def variance(rho, convention: str = "paper") -> Fraction:
    """The variance parameter σ² = 1/(2a) of the noise for budget ``rho``.

    Notes
    -----
    Exact: ``1/(2ρ)`` (paper) or ``1/ρ`` (production).  This is the parameter of the
    discrete Gaussian, not exactly its variance (which is slightly smaller; Canonne,
    Kamath and Steinke 2020).
    """
    return 1 / (2 * coefficient(rho, convention))
