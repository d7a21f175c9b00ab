"""The ``exactdp`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; the module only parses arguments, calls the public API and
prints.  Heavy imports happen inside the command functions, and a call naming a command
imports and registers only that command's module, so that ``--help`` and the first answer
are fast (neither ``exactdp --help`` nor ``exactdp CMD --help`` imports Numba).
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import sys
import warnings

from exactdp.cli._common import Parser, fail, fail_input, json_errors, one_line
from exactdp.numerics.errors import InputError, UncertifiedError

__all__ = ["main", "build_parser", "as_program"]

#: Modules that contribute subcommands, in the order ``--help`` lists them, with the
#: commands each registers (``tests/test_startup.py`` checks this against ``register``).
SUBCOMMANDS = {
    "accounting": ("delta", "epsilon", "tradeoff"),
    "sweep": ("sweep",),
    "release": ("release",),
    "crosscheck": ("crosscheck",),
    "calibrate": ("calibrate",),
    "tune": ("tune",),
    "risk": ("risk",),
    "countdep": ("countdep",),
    "warmup": ("warmup",),
}
SUBCOMMAND_MODULES = tuple(SUBCOMMANDS)


class _VersionAction(argparse.Action):
    """``--version``: the installed version, looked up only when asked for."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS,
                 help="show program's version number and exit"):
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        from exactdp._version import __version__

        sys.stdout.write(f"exactdp {__version__}\n")
        parser.exit()


def build_parser(argv=None) -> Parser:
    """The ``exactdp`` parser.  When ``argv`` starts with a known command, only the module
    of that command is imported and registered (a command's parser and its messages do not
    depend on the other modules); otherwise (``--help``, ``--version``, an unknown
    command) all of them, in :data:`SUBCOMMAND_MODULES` order."""
    parser = Parser(
        prog="exactdp",
        description=(
            "Exact, certified privacy accounting for compositions of discrete Gaussian "
            "mechanisms. Every reported number carries a certified error bound."
        ),
    )
    parser.add_argument("--version", action=_VersionAction)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=Parser)
    sub.required = True
    for name in _modules_for(argv):
        importlib.import_module(f"exactdp.cli.{name}").register(sub)
    return parser


def _modules_for(argv) -> tuple:
    """The subcommand modules a parse of ``argv`` needs."""
    command = argv[0] if argv else None
    owners = [name for name, commands in SUBCOMMANDS.items() if command in commands]
    return tuple(owners) if owners else SUBCOMMAND_MODULES


#: what to try when a result cannot be certified (appended unless the message says it)
UNCERTIFIED_HINT = ("try a looser --rel-tol (e.g. 1e-8), or certified brackets from the Python API "
                    "exactdp.accounting.bracketed.BigLatticeAccountant")


def main(argv=None) -> int:
    """Run ``exactdp``: 0 on success, 2 for bad input, 3 for a result that cannot be
    certified; every error is one line on stderr (and a JSON ``error`` object on stdout
    under ``--json``), never a traceback (``EXACTDP_DEBUG=1`` re-raises).  Argument errors
    found by argparse raise ``SystemExit(2)`` after printing their line.

    Called without ``argv`` it is the ``exactdp`` program (the console script, ``python -m
    exactdp.cli``) and also applies :func:`as_program`."""
    if argv is None:
        as_program()
    argv = list(sys.argv[1:] if argv is None else argv)
    json_errors("--json" in argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a bound is certified or refused, never a warning
            parser = build_parser(argv)
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


#: threshold of the cyclic collector's oldest generation in the program (CPython's default: 10)
PROGRAM_GC_THRESHOLD2 = 100


def as_program() -> None:
    """Process-wide garbage-collector settings of the ``exactdp`` program (never applied when
    :func:`main` is called with ``argv``, as from Python or the tests).

    Starting a query allocates ~10⁵ long-lived objects (NumPy, Numba's typing and target
    registries, mpmath) and then few cycles: full collections over them are made 10× rarer
    (oldest-generation threshold :data:`PROGRAM_GC_THRESHOLD2`; the younger generations
    still collect every new cycle), and skipped at exit (``gc.freeze`` in an atexit handler,
    run before the interpreter's final collections, which took ~0.3 s with Numba loaded;
    the process ends right after, other atexit handlers still run).  No number depends on
    either."""
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, PROGRAM_GC_THRESHOLD2)
    atexit.unregister(gc.freeze)  # once per process
    atexit.register(gc.freeze)


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
