"""Parameters of the shifted-log Gaussian mechanism and the noise level σ (eq. 3).

The user-facing parameters ``r``, ``r0`` and ``c`` are exact rationals.  σ is the only
transcendental quantity; it is evaluated with mpmath inside :func:`mpmath.workdps`
(never changing mpmath's global precision) and, for the vectorised fast paths, once
rounded to a binary float.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from fractions import Fraction

import mpmath

from exactdp.numerics.exact import InputError, fraction_str, to_fraction, to_int
from exactdp.numerics.precision import DPS_FLOAT64, DPS_GUARD, DPS_LOW, to_mpf

__all__ = [
    "DPS",
    "GUARD",
    "SEARCH_FACTOR",
    "LIMIT_FACTOR",
    "ShiftedLogParams",
    "validate_count",
    "validate_positive_count",
    "validate_r",
]

#: Default number of decimal digits of reported quantities (``numerics.precision.DPS_LOW``).
DPS = DPS_LOW
#: Extra decimal digits carried internally (``numerics.precision.DPS_GUARD``).
GUARD = DPS_GUARD
#: Factor of the digits of a golden-section search whose maximiser matters: it runs at
#: ``SEARCH_FACTOR · dps`` digits, as :func:`~exactdp.numerics.search.golden_max` locates
#: the maximiser to about half the working digits.
SEARCH_FACTOR = 2
#: Factor of the digits of C⋆'s small-r limit (:func:`~exactdp.countdep.constants.c_star_upper`):
#: its terms at r = 10^-(dps/2 + 6) and their difference (the error estimate) are
#: evaluated at ``LIMIT_FACTOR · dps`` digits.
LIMIT_FACTOR = 3


def validate_r(value, field: str = "r") -> Fraction:
    """Parse a relative-error tolerance ``r`` and require ``0 < r <= 1``."""
    r = to_fraction(value, field)
    if not 0 < r <= 1:
        raise InputError(field, fraction_str(r), "must satisfy 0 < r <= 1")
    return r


#: the largest count the formulas take (they evaluate n in float64 and mpmath)
MAX_COUNT = 10**300


def validate_count(value, field: str = "n") -> int:
    """Parse a group count and require an integer ``0 <= n <= 1e300``."""
    n = to_int(value, field)
    if n < 0:
        raise InputError(field, value, "a count must be >= 0")
    if n > MAX_COUNT:
        raise InputError(field, value, "a count above 1e300 is beyond the float64 range the formulas use")
    return n


def validate_positive_count(value, field: str = "n") -> int:
    """Parse a base count for the lower bounds and require an integer ``n >= 1``."""
    n = validate_count(value, field)
    if n < 1:
        raise InputError(field, value, "the lower bounds of Section 6 need a count n >= 1")
    return n


@functools.lru_cache(maxsize=256)
def _sigma_cached(q: Fraction, dps: int) -> mpmath.mpf:
    with mpmath.workdps(dps + GUARD):
        # σ = Φ⁻¹(1/2 + q/2) = √2 · erfinv(q), q = r0/(1+c) ∈ (0, 1).
        return mpmath.sqrt(2) * mpmath.erfinv(to_mpf(q))


@dataclass(frozen=True)
class ShiftedLogParams:
    """Parameters of the shifted-log Gaussian mechanism (Fitzsimons 2026, eq. 3–4).

    Parameters
    ----------
    r : Fraction
        Requested relative-error tolerance, ``0 < r <= 1`` (utility target (2)).
    r0 : Fraction
        Design tolerance, ``0 < r0 < r``; the mechanism's error is at most
        ``r0 (n + c)/(1 + c)``.
    c : Fraction
        Shift of the logarithm, ``c > 0``.

    Notes
    -----
    Use :meth:`create` to build from user input (strings, ints, Fractions); it applies the
    defaults ``r0 = r/2`` and ``c = 1`` of Theorem 1.1 and raises
    :class:`~exactdp.numerics.exact.InputError` naming the field on invalid input.  The noise level
    is σ = Φ⁻¹(1/2 + r0/(2(1+c))) = √2·erfinv(r0/(1+c)) (eq. 3), evaluated by mpmath at
    ``dps + GUARD`` digits; its relative error is below ``10**-dps``.
    """

    r: Fraction
    r0: Fraction
    c: Fraction

    def __post_init__(self):
        for name in ("r", "r0", "c"):
            if not isinstance(getattr(self, name), Fraction):
                raise InputError(name, getattr(self, name), "use ShiftedLogParams.create() to parse user input")
        if not 0 < self.r <= 1:
            raise InputError("r", fraction_str(self.r), "must satisfy 0 < r <= 1")
        if not 0 < self.r0 < self.r:
            raise InputError("r0", fraction_str(self.r0), f"must satisfy 0 < r0 < r = {fraction_str(self.r)}")
        if not self.c > 0:
            raise InputError("c", fraction_str(self.c), "must be > 0")

    @classmethod
    def create(cls, r, r0=None, c=1) -> ShiftedLogParams:
        """Parse and validate ``r``, ``r0`` (default ``r/2``) and ``c`` (default 1)."""
        rr = validate_r(r, "r")
        r00 = rr / 2 if r0 is None else to_fraction(r0, "r0")
        cc = to_fraction(c, "c")
        if not 0 < r00 < rr:
            raise InputError("r0", fraction_str(r00), f"must satisfy 0 < r0 < r = {fraction_str(rr)}")
        if cc <= 0:
            raise InputError("c", fraction_str(cc), "must be > 0")
        return cls(rr, r00, cc)

    @property
    def q(self) -> Fraction:
        """``r0/(1+c) = 2Φ(σ) − 1``, the pre-clipping relative error at ``n + c``."""
        return self.r0 / (1 + self.c)

    def sigma(self, dps: int = DPS) -> mpmath.mpf:
        """σ of eq. (3) as an mpf with relative error below ``10**-dps``."""
        return _sigma_cached(self.q, int(dps))

    def sigma_float(self) -> float:
        """σ rounded to a binary float (relative error ≤ 2⁻⁵³), for the fast paths."""
        return float(self.sigma(DPS_FLOAT64))

    def as_dict(self) -> dict:
        return {"r": fraction_str(self.r), "r0": fraction_str(self.r0), "c": fraction_str(self.c)}
