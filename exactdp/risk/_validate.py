"""Input validation shared by the disclosure-risk modules (private)."""

from __future__ import annotations

from fractions import Fraction

from exactdp.numerics.exact import InputError, to_fraction, to_int

__all__ = ["check_prior", "check_rho", "check_int", "check_positive_int"]


def check_prior(p, field: str = "p") -> Fraction:
    """A prior probability strictly between 0 and 1, as a Fraction."""
    frac = to_fraction(p, field)
    if not 0 < frac < 1:
        raise InputError(field, p, "must be strictly between 0 and 1")
    return frac


def check_rho(rho, field: str = "rho") -> Fraction:
    """A zCDP budget > 0, as a Fraction."""
    frac = to_fraction(rho, field)
    if frac <= 0:
        raise InputError(field, rho, "must be > 0")
    return frac


def check_int(value, field: str) -> int:
    """An exact integer (refuses floats and non-integral rationals)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return to_int(value, field)


def check_positive_int(value, field: str) -> int:
    out = check_int(value, field)
    if out < 1:
        raise InputError(field, value, "must be a positive integer")
    return out
