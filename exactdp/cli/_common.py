"""Shared helpers of the command-line modules: one-line errors, the one JSON envelope,
exact-argument types, the one pair syntax, decimal formatting.

Exit statuses: 0 success, 2 the user's input or environment (the line names the field,
file or path), 3 a result that cannot be certified (the line says what failed and what
to try).

Under ``--json`` every subcommand prints exactly one JSON object on stdout, the
envelope ``{"command", "design", "points"}`` — or ``{"command", "design", "error"}``
when it fails — where ``command`` is the subcommand (``"delta"``, ``"risk posterior"``),
``design`` what was accounted (as given, plus what was derived from it, e.g. its zCDP
ρ; ``null`` where a command has no design) and ``points`` the list of result rows; a
command may add keys after these (``diagnostics``, ``out``, ...).
"""

from __future__ import annotations

import argparse
import json
import re
import sys

import mpmath

from exactdp.numerics.exact import InputError, number_text, parse_exact
from exactdp.numerics.precision import DPS_GUARD, to_mpf

__all__ = ["Parser", "check_out_folder",
           "fail", "fail_input", "begin", "current_command", "set_design", "rational_type", "rel_tol_type",
           "decimal_str", "emit_json", "emit_result", "one_line", "os_error_text", "int_type", "add_pair_arguments",
           "pair_specs", "parse_pairs"]

#: numbers argparse must take as values, not options: -1, -1.5, -.5, -1e300, -3/2
_NEGATIVE_NUMBER = re.compile(r"^-(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?(/\d+)?$")

#: commands whose name has a second word (``risk posterior``); the others take positional arguments
#: (``product NAME``), which are not part of the name
NESTED_COMMANDS = frozenset({"risk", "countdep"})

_STATE: dict = {"json": False, "options": set(), "command": None, "design": None}


def begin(argv, json_mode: bool) -> None:
    """Start a command: its name (the words before the first option, e.g. ``risk
    posterior``) for the envelope, and whether errors are also printed as JSON."""
    words = []
    for a in argv or ():
        if a.startswith("-"):
            break
        words.append(a)
    name = " ".join(words[:2] if words and words[0] in NESTED_COMMANDS else words[:1]) or None
    _STATE.update(json=bool(json_mode), command=name, design=None)


def current_command():
    """The running command's name (``None`` outside one)."""
    return _STATE["command"]


def set_design(design) -> None:
    """The ``design`` of the envelope (also carried by an error printed after this call)."""
    _STATE["design"] = design


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

    def parse_known_args(self, args=None, namespace=None):  # also the options of argument groups
        _STATE["options"].update(s for s in self._option_string_actions if s.startswith("--"))
        return super().parse_known_args(args, namespace)

    def error(self, message):  # noqa: D401 - argparse API
        m = re.match(r"argument ([^:]+): ", message)
        raise SystemExit(fail(message, code=2, field=m.group(1).split("/")[0] if m else None, head=self.prog))


def fail(message: str, code: int = 2, *, field=None, value=None, head: str = "exactdp") -> int:
    """Print a one-line error on stderr (and, under ``--json``, the envelope with an
    ``error`` object ``{"code", "kind", "message", "field", "value"}`` on stdout) and
    return the exit status."""
    line = one_line(message)
    sys.stderr.write(f"{head}: error: {line}\n")
    sys.stderr.flush()
    if _STATE["json"]:
        kind = {2: "input", 3: "uncertified", 130: "interrupted", 143: "terminated"}.get(code, "internal")
        err = {"code": code, "kind": kind, "message": line}
        if field is not None:
            err["field"] = str(field)
        if value is not None:
            err["value"] = str(value)
        emit_json({"command": _STATE["command"], "design": _STATE["design"], "error": err})
    return code


def flag_name(field: str) -> str:
    """The command-line spelling of a library field name (``x_max`` → ``--x-max``) when
    such an option exists, else the field unchanged."""
    flag = "--" + str(field).replace("_", "-")
    return flag if flag in _STATE["options"] else str(field)


def fail_input(exc: InputError) -> int:
    """The one-line message of an :class:`InputError` (field, value, reason), exit 2."""
    value, field = exc.value, flag_name(exc.field)
    shown = "" if value is None else f"={value!r}" if isinstance(value, str) else f"={_value_text(value)}"
    return fail(f"{field}{shown}: {exc.reason}", code=2, field=field,
                value=None if value is None else (value if isinstance(value, str) else shown[1:]))


def os_error_text(exc: OSError) -> str:
    """An operating-system error as one line naming the path it is about (disk full,
    read-only, permission, a file where a folder is needed, a lost connection)."""
    import errno

    reasons: dict[int | None, str] = {
        errno.ENOSPC: "no space left on the device (disk full)", errno.EROFS: "read-only file system",
        errno.EACCES: "permission denied", errno.EPERM: "operation not permitted",
        errno.ENOTDIR: "a component of the path is a file, not a folder", errno.EEXIST: "exists already",
        errno.EISDIR: "is a folder, not a file", errno.EDQUOT: "disk quota exceeded"}
    reason = reasons.get(exc.errno) or exc.strerror or one_line(exc) or type(exc).__name__
    return reason if exc.filename is None else f"{exc.filename}: {reason}"


def _value_text(value) -> str:
    """A value in a message: a rational as ``p/q`` (powers of ten as ``1e-300``)."""
    from fractions import Fraction

    return number_text(value) if isinstance(value, Fraction) else repr(value)


def _argument_error(field: str, text: str, exc: InputError) -> argparse.ArgumentTypeError:
    return argparse.ArgumentTypeError(one_line(f"{flag_name(field)}={text!r}: {exc.reason}"))


def rational_type(field: str, *, positive: bool = False, lo=None, hi=None, lo_open: bool = False,
                  hi_open: bool = False):
    """An argparse ``type=`` converting a string to an exact Fraction
    (:func:`~exactdp.numerics.exact.parse_exact`, the one parser).

    ``positive`` requires > 0; ``lo``/``hi`` bound the value (open ends with
    ``lo_open``/``hi_open``).  The error names ``field`` and the text as typed."""
    if positive and lo is None:
        lo, lo_open = 0, True

    def convert(text: str):
        try:
            return parse_exact(text, field, lo=lo, hi=hi, lo_open=lo_open, hi_open=hi_open)
        except InputError as exc:
            raise _argument_error(field, text, exc) from None

    convert.__name__ = field  # argparse uses it in messages
    return convert


def int_type(field: str, lo: int | None = None, hi: int | None = None):
    """An argparse ``type=`` for an integer in [lo, hi] (either end optional), read by
    the one parser (ASCII digits; ``1e3`` is 1000; ``1.5`` and ``1e20`` beyond ``hi``
    are refused naming the field)."""

    def convert(text: str) -> int:
        try:
            return int(parse_exact(text, field, lo=lo, hi=hi, integer=True))
        except InputError as exc:
            raise _argument_error(field, text, exc) from None

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


# ----------------------------------------------------------------------------- pairs
class _PairAction(argparse.Action):
    """``--pair I J`` or ``--pair I-J`` (one pair), ``--pairs I-J,K-L`` (a list): every
    use appends ``(flag, spec)`` to ``pair_specs`` (repeating adds, never replaces)."""

    def __call__(self, parser, namespace, values, option_string=None):
        if isinstance(values, list):
            if len(values) > 2:
                parser.error(f"argument {option_string}: expected I J or I-J, got {' '.join(values)!r}")
            values = "-".join(v.strip() for v in values)
        specs = list(getattr(namespace, self.dest, None) or [])
        specs.append((option_string, values))
        setattr(namespace, self.dest, specs)


def add_pair_arguments(p, *, many: bool, default: str | None = None) -> None:
    """The one pair syntax of every subcommand: ``--pair I J`` = ``--pair I-J`` =
    ``--pairs I-J``; ``--pairs`` takes a comma-separated list; both repeat (``--pairs A
    --pairs B`` is A and B; a pair named twice is refused).  ``many``: the command runs
    several pairs (else exactly one must be named)."""
    what = "pairs to run" if many else "the neighbour case (one pair) of the allocation"
    p.add_argument("--pair", dest="pair_specs", action=_PairAction, nargs="+", metavar=("I", "J"),
                   help=f"{what}: path I to path J, written 'I J' or 'I-J' (repeatable)")
    p.add_argument("--pairs", dest="pair_specs", action=_PairAction, metavar="SPEC",
                   help=f"{what} as a list, e.g. 13-13,6-6,1-43 (repeatable; 'all' = every pair)"
                        + (f"; default {default}" if default else ""))
    p.set_defaults(pair_specs=None)


def pair_specs(args) -> list:
    """The ``(flag, spec)`` pairs given (empty when none)."""
    return list(getattr(args, "pair_specs", None) or [])


def parse_pairs(args, n_paths: int, *, single: bool = False) -> list | None:
    """The pairs named by ``--pair``/``--pairs`` (``None`` if neither was given), checked
    against the allocation's ``n_paths`` paths by the one pair parser
    (:func:`exactdp.census.allocations.parse_pair_spec`); ``single``: exactly one."""
    from exactdp.census.allocations import parse_pair_spec

    specs = pair_specs(args)
    if not specs:
        return None
    flag = specs[0][0]
    text = ",".join(s for _, s in specs)
    try:
        pairs = parse_pair_spec(text, n_paths)
    except InputError as exc:
        raise InputError(flag, exc.value, exc.reason) from None
    if single and len(pairs) != 1:
        raise InputError(flag, text, f"names {len(pairs)} pairs; this command takes one (e.g. --pair 13 13)")
    return pairs


# ----------------------------------------------------------------------------- output
def decimal_str(value, digits: int = 20) -> str:
    """A decimal string with ``digits`` significant digits (default 20 ≥ 17).

    Accepts mpmath numbers, floats (also ±inf), ints and Fractions; Fractions are
    converted exactly (:func:`~exactdp.numerics.precision.to_mpf`) at ``digits + 10``
    digits before rounding.
    """
    from fractions import Fraction

    with mpmath.workdps(digits + DPS_GUARD):
        x = to_mpf(value) if isinstance(value, Fraction) else mpmath.mpf(value)
        return mpmath.nstr(x, digits, min_fixed=-4, max_fixed=6, strip_zeros=False)


def check_out_folder(out, kind: str) -> None:
    """Refuse, before any work, an ``--out`` folder another running command holds or another
    kind of command wrote (:func:`exactdp.runs.files.check_folder_free`): ``InputError``."""
    if not out:
        return
    from exactdp.runs.files import SweepDirError, check_folder_free

    try:
        check_folder_free(out, kind)
    except SweepDirError as exc:
        raise InputError("--out", str(out), str(exc)) from None


def emit_json(obj) -> None:
    """Print exactly one JSON object on stdout."""
    sys.stdout.write(json.dumps(obj, indent=2) + "\n")


def emit_result(points, design=None, **extra) -> None:
    """Print the envelope ``{"command", "design", "points", **extra}`` (``design``:
    default the one set by :func:`set_design`)."""
    emit_json({"command": _STATE["command"], "design": _STATE["design"] if design is None else design,
               "points": points, **extra})
