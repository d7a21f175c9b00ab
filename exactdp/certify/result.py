"""The result of a certification: a frozen enclosure with the parameters that produced it."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from exactdp.certify.balls import decimal_outward, dyadic_mpf
from exactdp.numerics.bracket import Bracket

__all__ = ["Enclosure"]


@dataclass(frozen=True)
class Enclosure(Bracket):
    """A rigorous enclosure ``lower ≤ exact value ≤ upper`` of one privacy number.

    A :class:`~exactdp.numerics.bracket.Bracket`: ``estimate`` is the midpoint,
    ``error_bound`` the half-width (both exact), and ``value`` the conservative end —
    ``upper`` for δ, ε and a tail, ``lower`` for β.

    Attributes
    ----------
    quantity : str
        ``"delta"`` (δ at ε), ``"epsilon"`` (ε at δ), ``"beta"`` (trade-off β at α) or
        ``"tail"`` (``P[S ≥ k]`` of the lattice sum).
    argument : str
        The query point, e.g. ``"epsilon=263405888527/10000000000"``.
    lower_exact, upper_exact : Fraction
        The endpoints, exact dyadic rationals (the ball's outward-rounded ends).
    method : str
        ``"arb/<tail method>"``: ``tilted-trapezoid``, ``conditioned`` or ``enumeration``.
    precision_bits : int
        Arb working precision.
    parameters : tuple of (str, object)
        Everything else used: lattice thresholds, nodes kept / total, sieve level, ...
    """

    quantity: str
    argument: str
    lower_exact: Fraction
    upper_exact: Fraction
    method: str
    precision_bits: int
    parameters: tuple = ()

    @property
    def _UPPER(self) -> bool:  # type: ignore[override]
        return self.quantity != "beta"

    @property
    def _NAME(self) -> str:  # type: ignore[override]
        return f"{self.quantity} at {self.argument}"

    @property
    def estimate(self):
        """The midpoint, exactly (an mpmath number)."""
        return dyadic_mpf((self.lower_exact + self.upper_exact) / 2)

    @property
    def error_bound(self):
        """The half-width, exactly (an mpmath number): ``|estimate − truth| ≤ error_bound``."""
        return dyadic_mpf((self.upper_exact - self.lower_exact) / 2)

    @property
    def value(self):
        """The conservative end (the module's :class:`~exactdp.numerics.bracket.Bracket`)."""
        return self.lower if self.quantity == "beta" else self.upper

    @property
    def lower(self):
        """Lower end as an mpmath number (exact: the dyadic endpoint itself)."""
        return dyadic_mpf(self.lower_exact)

    @property
    def upper(self):
        """Upper end as an mpmath number (exact)."""
        return dyadic_mpf(self.upper_exact)

    @property
    def width(self) -> Fraction:
        return self.upper_exact - self.lower_exact

    @property
    def relative_width(self) -> float:
        """``(upper − lower)/|lower|`` (inf when the enclosure touches 0)."""
        if self.lower_exact == 0:
            return 0.0 if self.upper_exact == 0 else float("inf")
        return float(self.width / abs(self.lower_exact))

    @property
    def params(self) -> dict:
        return dict(self.parameters)

    def contains(self, x) -> bool:
        """Whether the exact rational (or mpmath number, taken exactly) x is inside."""
        q = x if isinstance(x, Fraction) else _exact_of(x)
        return self.lower_exact <= q <= self.upper_exact

    def decimal(self, digits: int = 20) -> tuple[str, str]:
        """``(lower, upper)`` as decimal strings rounded outward to ``digits`` significant
        digits (so the decimal interval contains the exact one)."""
        return (decimal_outward(self.lower_exact, digits, "floor"),
                decimal_outward(self.upper_exact, digits, "ceil"))


def _exact_of(x) -> Fraction:
    """An mpmath number, int, float or exact string as the Fraction it denotes."""
    import mpmath

    from exactdp.numerics.exact import to_fraction

    if isinstance(x, (int, float)):
        return Fraction(x)
    if isinstance(x, mpmath.mpf):
        if not mpmath.isfinite(x):
            raise ValueError(f"{x} is not finite")
        m, e = x.man_exp
        return Fraction(int(m)) * (Fraction(2) ** int(e))
    return to_fraction(x, "value")
