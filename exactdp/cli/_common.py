"""Shared helpers of the command-line modules: one-line errors, exact-argument types,
decimal formatting and JSON output."""

from __future__ import annotations

import argparse
import json
import sys
from fractions import Fraction

import mpmath

from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_GUARD, to_mpf

__all__ = ["Parser", "fail", "rational_type", "decimal_str", "emit_json"]


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line naming the problem."""

    def error(self, message):  # noqa: D401 - argparse API
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def fail(message: str, code: int = 2) -> int:
    """Print a one-line error and return the exit status."""
    sys.stderr.write(f"exactdp: error: {message}\n")
    return code


def rational_type(field: str, *, positive: bool = False):
    """An argparse ``type=`` converting a string to an exact Fraction."""

    def convert(text: str) -> Fraction:
        try:
            value = to_fraction(text, field)
        except InputError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        if positive and value <= 0:
            raise argparse.ArgumentTypeError(f"{field}={text!r}: must be > 0")
        return value

    convert.__name__ = field  # argparse uses it in messages
    return convert


def decimal_str(value, digits: int = 20) -> str:
    """A decimal string with ``digits`` significant digits (default 20 ≥ 17).

    Accepts mpmath numbers, floats (also ±inf), ints and Fractions; Fractions are
    converted exactly (:func:`~exactdp.numerics.precision.to_mpf`) at ``digits + 10``
    digits before rounding.
    """
    with mpmath.workdps(digits + DPS_GUARD):
        x = to_mpf(value) if isinstance(value, Fraction) else mpmath.mpf(value)
        return mpmath.nstr(x, digits, min_fixed=-4, max_fixed=6, strip_zeros=False)


def emit_json(obj) -> None:
    """Print exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")
