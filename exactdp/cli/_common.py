"""Shared helpers of the command-line modules: one-line errors (with a JSON error object
under ``--json``), exact-argument types, decimal formatting and JSON output.

Exit statuses: 0 success, 2 bad input (the line names the field and the value), 3 a
result that cannot be certified (the line says what failed and what to try).
"""

from __future__ import annotations

import argparse
import decimal
import json
import re
import sys
from fractions import Fraction

import mpmath

from exactdp.numerics.exact import InputError, to_fraction
from exactdp.numerics.precision import DPS_GUARD, to_mpf

__all__ = ["Parser", "fail", "fail_input", "json_errors", "rational_type", "rel_tol_type", "decimal_str",
           "emit_json", "one_line", "check_exponent", "int_type", "MAX_EXPONENT"]

#: largest decimal exponent accepted in an exact argument (``1e±1000000``): beyond it the
#: exact rational alone has more than 10⁶ digits (slow to build, no meaningful answer)
MAX_EXPONENT = 1_000_000

#: numbers argparse must take as values, not options: -1, -1.5, -.5, -1e300, -3/2
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(/\d+)?$")

_STATE = {"json": False, "options": set()}


def json_errors(enabled: bool) -> None:
    """Whether errors are also printed as a JSON object on stdout (``--json`` given)."""
    _STATE["json"] = bool(enabled)


def one_line(text) -> str:
    """The text on one line (newlines and runs of blanks collapsed)."""
    return " ".join(str(text).split())


class Parser(argparse.ArgumentParser):
    """An ArgumentParser whose errors are a single line naming the problem (exit 2), and
    which reads ``-1e300`` or ``-3/2`` as a value, not as an option."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_NUMBER

    def add_argument(self, *args, **kwargs):
        action = super().add_argument(*args, **kwargs)
        _STATE["options"].update(s for s in action.option_strings if s.startswith("--"))
        return action

    def error(self, message):  # noqa: D401 - argparse API
        m = re.match(r"argument ([^:]+): ", message)
        raise SystemExit(fail(message, code=2, field=m.group(1).split("/")[0] if m else None, head=self.prog))


def fail(message: str, code: int = 2, *, field=None, value=None, head: str = "exactdp") -> int:
    """Print a one-line error on stderr (and, under ``--json``, one JSON object
    ``{"error": {"code", "kind", "message", "field", "value"}}`` on stdout) and return
    the exit status."""
    line = one_line(message)
    sys.stderr.write(f"{head}: error: {line}\n")
    if _STATE["json"]:
        err = {"code": code, "kind": {2: "input", 3: "uncertified"}.get(code, "error"), "message": line}
        if field is not None:
            err["field"] = str(field)
        if value is not None:
            err["value"] = str(value)
        emit_json({"error": err})
    return code


def flag_name(field: str) -> str:
    """The command-line spelling of a library field name (``x_max`` → ``--x-max``) when
    such an option exists, else the field unchanged."""
    flag = "--" + str(field).replace("_", "-")
    return flag if flag in _STATE["options"] else str(field)


def fail_input(exc: InputError) -> int:
    """The one-line message of an :class:`InputError` (field, value, reason), exit 2."""
    value = exc.value
    shown = "" if value is None else f"={value!r}" if not isinstance(value, Fraction) else f"={_fraction_text(value)}"
    return fail(f"{exc.field}{shown}: {exc.reason}", code=2, field=exc.field,
                value=None if value is None else (value if isinstance(value, str) else shown[1:]))


def _fraction_text(q) -> str:
    """``1e-300`` for powers of ten, else ``p/q`` (interval ends in messages)."""
    q = Fraction(q)
    for big, sign in ((q.denominator, "-"), (q.numerator, "")):
        other = q.numerator if sign else q.denominator
        if other == 1 and big > 10**6 and str(big).rstrip("0") == "1":
            return f"1e{sign}{len(str(big)) - 1}"
    return str(q.numerator) if q.denominator == 1 else f"{q.numerator}/{q.denominator}"


def check_exponent(text: str, field: str) -> None:
    """Refuse decimal literals whose exponent exceeds :data:`MAX_EXPONENT` before they
    are expanded into an exact rational of millions of digits."""
    for part in text.strip().replace("_", "").split("/"):
        try:
            d = decimal.Decimal(part.strip())
        except (decimal.InvalidOperation, ValueError):
            return  # to_fraction words the parse error
        if d.is_finite() and d != 0 and abs(d.adjusted()) > MAX_EXPONENT:
            raise InputError(field, text, f"magnitude 1e{d.adjusted()} is outside 1e±{MAX_EXPONENT}, the range "
                                          f"exactdp accepts for exact arguments")


def rational_type(field: str, *, positive: bool = False, lo=None, hi=None, lo_open: bool = False,
                  hi_open: bool = False):
    """An argparse ``type=`` converting a string to an exact Fraction.

    ``positive`` requires > 0; ``lo``/``hi`` bound the value (open ends with
    ``lo_open``/``hi_open``).  The error names ``field`` and the text as typed."""

    def convert(text: str) -> Fraction:
        try:
            check_exponent(text, field)
            value = to_fraction(text, field)
        except InputError as exc:
            reason = re.sub(r" \(\[<class 'decimal\.\w+'>\]\)", "", exc.reason)
            raise argparse.ArgumentTypeError(one_line(f"{flag_name(field)}={text!r}: {reason}")) from None
        if positive and value <= 0:
            raise argparse.ArgumentTypeError(f"{flag_name(field)}={text!r}: must be > 0")
        if lo is not None and (value < lo or (lo_open and value == lo)) or \
                hi is not None and (value > hi or (hi_open and value == hi)):
            interval = f"{'(' if lo_open else '['}{_fraction_text(lo) if lo is not None else '-inf'}, " \
                       f"{_fraction_text(hi) if hi is not None else 'inf'}{')' if hi_open else ']'}"
            raise argparse.ArgumentTypeError(f"{flag_name(field)}={text!r}: must lie in {interval}")
        return value

    convert.__name__ = field  # argparse uses it in messages
    return convert


def int_type(field: str, lo: int | None = None, hi: int | None = None):
    """An argparse ``type=`` for an integer in [lo, hi] (either end optional)."""

    def convert(text: str) -> int:
        try:
            value = int(text.strip())
        except ValueError:
            raise argparse.ArgumentTypeError(f"{field}={text!r}: expected an integer") from None
        if lo is not None and value < lo or hi is not None and value > hi:
            raise argparse.ArgumentTypeError(f"{field}={text!r}: must lie in [{lo if lo is not None else '-inf'}, "
                                             f"{hi if hi is not None else 'inf'}]")
        return value

    convert.__name__ = field
    return convert


def rel_tol_type(field: str = "--rel-tol"):
    """An argparse ``type=`` for the engine accuracy (a number in [1e-15, 1e-2])."""

    def convert(text: str) -> float:
        from exactdp.accounting.base import check_rel_tol

        try:
            return check_rel_tol(text, field)
        except InputError as exc:
            raise argparse.ArgumentTypeError(f"{field}={text!r}: {exc.reason}") from None

    convert.__name__ = field
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
