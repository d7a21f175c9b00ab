"""The ``exactdp`` command line.

Each subcommand lives in its own module of this package and exposes
``register(subparsers)``; the module only parses arguments, calls the public API and
prints.  Heavy imports happen inside the command functions so that ``--help`` is fast.
"""

from __future__ import annotations

import importlib
import sys

from exactdp.cli._common import Parser, fail
from exactdp.numerics.exact import InputError

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


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except InputError as exc:
        return fail(str(exc))
    except ArithmeticError as exc:  # e.g. exactdp.engine.tails.UncertifiedError
        return fail(f"could not certify the result: {exc}", code=3)
    except (OSError, ValueError) as exc:
        return fail(f"{type(exc).__name__}: {exc}")


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
