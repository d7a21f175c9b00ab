"""The ``exactdp`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; the module only parses arguments, calls the public API and
prints.  Heavy imports happen inside the command functions so that ``--help`` is fast.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings

from exactdp.cli._common import Parser, fail, fail_input, json_errors, one_line
from exactdp.numerics.errors import InputError, UncertifiedError

__all__ = ["main", "build_parser"]

#: Modules that contribute subcommands, in the order ``--help`` lists them.
SUBCOMMAND_MODULES = ("accounting", "sweep", "release", "crosscheck", "calibrate", "risk", "countdep")


def build_parser() -> Parser:
    parser = Parser(
        prog="exactdp",
        description=(
            "Exact, certified privacy accounting for compositions of discrete Gaussian "
            "mechanisms. Every reported number carries a certified error bound."
        ),
    )
    from exactdp._version import __version__

    parser.add_argument("--version", action="version", version=f"exactdp {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in SUBCOMMAND_MODULES:
        importlib.import_module(f"exactdp.cli.{name}").register(sub)
    return parser


#: what to try when a result cannot be certified (appended unless the message says it)
UNCERTIFIED_HINT = ("try a looser --rel-tol (e.g. 1e-8), or certified brackets from the Python API "
                    "exactdp.accounting.bracketed.BigLatticeAccountant")


def main(argv=None) -> int:
    """Run ``exactdp``: 0 on success, 2 for bad input, 3 for a result that cannot be
    certified; every error is one line on stderr (and a JSON ``error`` object on stdout
    under ``--json``), never a traceback (``EXACTDP_DEBUG=1`` re-raises).  Argument errors
    found by argparse raise ``SystemExit(2)`` after printing their line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    json_errors("--json" in argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a bound is certified or refused, never a warning
            parser = build_parser()
            args = parser.parse_args(argv)
            return int(args.func(args) or 0)
    except InputError as exc:
        return fail_input(exc)
    except KeyboardInterrupt:
        return fail("interrupted", code=130)
    except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
        if os.environ.get("EXACTDP_DEBUG"):
            raise
        return fail(*_describe(exc))
    finally:
        json_errors(False)


def _describe(exc: Exception):
    """``(message, exit status)`` of an error that is not an :class:`InputError`."""
    text = one_line(exc) or type(exc).__name__
    if isinstance(exc, UncertifiedError):
        hint = "" if "try " in text else f"; {UNCERTIFIED_HINT}"
        return f"could not certify the result: {text}{hint}", 3
    if isinstance(exc, (OSError, ValueError)):  # a file or a value the user named
        return f"{type(exc).__name__}: {text}", 2
    if isinstance(exc, (ArithmeticError, MemoryError, RecursionError)):
        return (f"could not certify the result: the design or query is beyond the engine's numeric range "
                f"({type(exc).__name__}: {text}); {UNCERTIFIED_HINT}", 3)
    return (f"could not compute the result ({type(exc).__name__}: {text}); this is a bug in exactdp, please "
            f"report it (EXACTDP_DEBUG=1 shows where)", 3)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
