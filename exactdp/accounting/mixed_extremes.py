"""The mixed route's edge cases: β at α ∈ {0, 1} exactly, and designs beyond float64's range.

* β(1) = 0 for every design (the test that always rejects); β(0) = 1 − Q[P = 0] =
  1 − p_∞ = Π(1 − δ_i)^{n_i} over the (ε, δ) blocks (the Q-only atom's mass equals the
  P-only one's, p_∞, by the blocks' symmetry; every other kind has full support), an exact
  rational, returned as its two directed roundings.
* The ε search and the β dual steer by floats (ρ, the largest finite loss, the continuous
  Laplaces' extent); a σ² or a scale below ~1e-50 puts one beyond what they take (ρ =
  Δ²/(2σ²), Δ/b; float64 ends at 1.8e308 and ρ is squared): such a design is
  near-deterministic (δ ≈ 1 at every moderate ε, ε(δ) and β's scale astronomically far), and
  those queries are refused (:class:`UncertifiedError`) naming the parameter, rather than
  overflowing (exit 3 on the command line, not a traceback).
"""

from __future__ import annotations

from fractions import Fraction

import mpmath
from mpmath.libmp import from_rational

from exactdp.numerics.errors import UncertifiedError

__all__ = ["beta_at_ends", "check_float_range", "FLOAT_LIMIT"]

#: the largest ρ, loss or grid step the float steering takes (float64 ends at 1.8e308, and the steering
#: squares ρ: ρ = 5e89 overflowed in the β dual; the oracles take |ε| ≤ 1e50,
#: :func:`~exactdp.accounting.base.check_epsilon_range`)
FLOAT_LIMIT = Fraction(10) ** 50


def _rounded(x: Fraction, up: bool) -> mpmath.mpf:
    return mpmath.mp.make_mpf(from_rational(x.numerator, x.denominator, 200, "c" if up else "f"))


def beta_at_ends(acc, alpha: Fraction) -> tuple | None:
    """``(lower, upper)`` of β(α) for α = 1 (0 exactly) and α = 0 (``Π(1 − δ_i)^{n_i}``,
    rounded outward at 200 bits); None for any other α or where that rational is too long
    (:meth:`~exactdp.engine.finite_loss.FiniteLoss.floor_exact` declines)."""
    if alpha == 1:
        return mpmath.mpf(0), mpmath.mpf(0)
    if alpha != 0:
        return None
    fin = acc.finite
    p_inf = fin.floor_exact() if fin.has_infinite_mass else Fraction(0)
    if p_inf is None:
        return None
    return _rounded(1 - p_inf, False), _rounded(1 - p_inf, True)


def check_float_range(acc, query: str, parts: tuple = ("rho", "extent", "finite")) -> None:
    """Refuse ``query`` (e.g. ``"ε(δ=1e-06)"``) when a quantity the search steers by (of
    ``parts``) lies beyond :data:`FLOAT_LIMIT`, naming the parameter that put it there and the
    remedy; returns None (a guard)."""
    fin = acc.finite
    top = max(abs(fin.value(0)), abs(fin.value(fin.size - 1))) if fin.size else Fraction(0)
    sizes = {"rho": (acc.rho, "the Gaussians' ρ = Σ Δ²/(2σ²) (a σ², --gaussian / --sigma2)"),
             "extent": (acc.extent, "the continuous Laplaces' loss Σ Δ/b (a scale b, --laplace)"),
             "finite": (max(top, abs(fin.step)), "the finite kinds' largest loss (a discrete Laplace's scale, "
                                                 "--dlaplace, or a randomized response's ε)")}
    for name in parts:
        size, what = sizes[name]
        if size > FLOAT_LIMIT:
            raise UncertifiedError(
                f"{query}: {what} is {mpmath.nstr(_rounded(size, True), 3)}, beyond the search's float range "
                f"(a σ² or scale below ~1e-50: the mechanism is near-deterministic, δ ≈ 1 at every moderate ε); "
                f"try σ² and scales ≥ 1e-50, or treat the mechanism as deterministic (δ = 1 at every ε, "
                f"conservative)")
