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
import contextlib
import gc
import importlib
import os
import signal
import sys
import threading
import warnings

from exactdp.cli._common import Parser, begin, current_command, fail, fail_input, one_line, os_error_text
from exactdp.numerics.errors import InputError, UncertifiedError

__all__ = ["main", "build_parser", "as_program"]

#: Modules that contribute subcommands, in the order ``--help`` lists them, with the
#: commands each registers (``tests/test_startup.py`` checks this against ``register``).
SUBCOMMANDS = {
    "accounting": ("delta", "epsilon", "tradeoff"),
    "sweep": ("sweep",),
    "release": ("release",),
    "products": ("product", "portfolio"),
    "census2020": ("census-2020",),
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
    for leaf in _leaf_parsers(parser):
        _add_budget_options(leaf)
    return parser


def _leaf_parsers(parser):
    """The parsers that run a command (those without subcommands of their own)."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield parser
        return
    for action in subs:
        for child in dict.fromkeys(action.choices.values()):
            yield from _leaf_parsers(child)


def _add_budget_options(p) -> None:
    """``--budget-seconds`` / ``--budget-memory`` on every command
    (:mod:`exactdp.numerics.budget`)."""
    from exactdp.numerics.budget import DEFAULT_MEMORY, DEFAULT_SECONDS

    g = p.add_argument_group("cost budget")
    g.add_argument("--budget-seconds", type=_budget_type("seconds"), default=None, metavar="S",
                   help=f"refuse at once, instead of starting it, a request estimated to take more than S seconds "
                        f"(default {DEFAULT_SECONDS:g}; a sweep: 3600; or EXACTDP_BUDGET_SECONDS)")
    g.add_argument("--budget-memory", type=_budget_type("memory"), default=None, metavar="SIZE",
                   help=f"likewise for the memory of one process (a sweep: of each worker), e.g. 8G "
                        f"(default {DEFAULT_MEMORY / 1e9:g}G, or EXACTDP_BUDGET_MEMORY)")


def _budget_type(kind: str):
    def convert(text: str) -> float:
        from exactdp.numerics.budget import parse_seconds, parse_size

        try:
            return (parse_seconds if kind == "seconds" else parse_size)(text)
        except InputError as exc:
            raise argparse.ArgumentTypeError(f"--budget-{kind}={text!r}: {exc.reason}") from None

    convert.__name__ = f"--budget-{kind}"
    return convert


def _modules_for(argv) -> tuple:
    """The subcommand modules a parse of ``argv`` needs."""
    command = argv[0] if argv else None
    owners = [name for name, commands in SUBCOMMANDS.items() if command in commands]
    return tuple(owners) if owners else SUBCOMMAND_MODULES


#: what to try when a result cannot be certified (appended unless the message says it)
UNCERTIFIED_HINT = ("try a looser --rel-tol (e.g. 1e-8), or --method lattice-free (delta, epsilon, tradeoff: "
                    "certified brackets)")


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main thread: unwinds like Ctrl-C (workers stopped, locks
    released, finished files kept), then exit status 143."""


def main(argv=None) -> int:
    """Run ``exactdp``: 0 on success, 2 for the user's input or environment, 3 for a
    result that cannot be certified, 130 / 143 after Ctrl-C / SIGTERM; every error is one
    line on stderr (and the JSON envelope with an ``error`` object on stdout under
    ``--json``), never a traceback or a warning (``EXACTDP_DEBUG=1`` re-raises).  Argument
    errors found by argparse raise ``SystemExit(2)`` after printing their line.

    Called without ``argv`` it is the ``exactdp`` program (the console script, ``python -m
    exactdp.cli``) and also applies :func:`as_program`."""
    if argv is None:
        as_program()
    argv = list(sys.argv[1:] if argv is None else argv)
    begin(argv, "--json" in argv)
    with contextlib.ExitStack() as stack:
        stack.enter_context(warnings.catch_warnings())
        warnings.simplefilter("ignore")  # a bound is certified or refused, never a warning
        stack.callback(_restore_sigterm, _catch_sigterm())
        try:
            parser = build_parser(argv)
            args = parser.parse_args(argv)
            from exactdp.numerics.budget import cost_budget

            with cost_budget(getattr(args, "budget_seconds", None), getattr(args, "budget_memory", None)):
                return int(args.func(args) or 0)
        except InputError as exc:
            return fail_input(exc)
        except Terminated:
            return fail(f"terminated (SIGTERM){_kept()}", code=143)
        except KeyboardInterrupt:
            return fail(f"interrupted (Ctrl-C){_kept()}", code=130)
        except Exception as exc:  # noqa: BLE001 - the CLI never shows a traceback
            if os.environ.get("EXACTDP_DEBUG"):
                raise
            signalled = _signal_inside(exc)
            if signalled is not None:  # Ctrl-C / SIGTERM while a compiled kernel returned (a SystemError)
                return (fail(f"terminated (SIGTERM){_kept()}", code=143) if isinstance(signalled, Terminated)
                        else fail(f"interrupted (Ctrl-C){_kept()}", code=130))
            return fail(*_describe(exc))
        finally:
            begin((), False)


def _signal_inside(exc: BaseException):
    """The Ctrl-C or SIGTERM (:class:`Terminated`) that ``exc`` wraps, if any: a signal
    whose handler raised while a Numba kernel returned surfaces as ``SystemError: ...
    returned a result with an exception set`` caused by it (was exit 1, "a bug")."""
    seen = 0
    cur = exc.__cause__ or exc.__context__
    while cur is not None and seen < 8:
        if isinstance(cur, KeyboardInterrupt):
            return cur
        cur, seen = cur.__cause__ or cur.__context__, seen + 1
    return None


def _kept() -> str:
    """What an interrupted command leaves (a sweep: its finished pairs)."""
    kept = {"sweep": "; finished pairs are kept, --resume finishes the sweep",
            "tune": "; finished batches are kept, --resume finishes the run"}
    return kept.get(current_command() or "", "")


def _catch_sigterm():
    """Make SIGTERM raise :class:`Terminated` in the main thread (returns the previous
    handler, or ``None`` when not in the main thread)."""
    if threading.current_thread() is not threading.main_thread():
        return None

    def handler(_signum, _frame):
        raise Terminated()

    return signal.signal(signal.SIGTERM, handler)


def _restore_sigterm(previous) -> None:
    if previous is not None:
        signal.signal(signal.SIGTERM, previous)


#: threshold of the cyclic collector's oldest generation in the program (CPython's default: 10)
PROGRAM_GC_THRESHOLD2 = 100


def as_program() -> None:
    """Process-wide settings of the ``exactdp`` program (never applied when :func:`main` is
    called with ``argv``, as from Python or the tests): its child processes inherit
    ``PYTHONWARNINGS=ignore`` (unless ``EXACTDP_DEBUG`` is set), and the garbage collector.

    Starting a query allocates ~10⁵ long-lived objects (NumPy, Numba's typing and target
    registries, mpmath) and then few cycles: full collections over them are made 10× rarer
    (oldest-generation threshold :data:`PROGRAM_GC_THRESHOLD2`; the younger generations
    still collect every new cycle), and skipped at exit (``gc.freeze`` in an atexit handler,
    run before the interpreter's final collections, which took ~0.3 s with Numba loaded;
    the process ends right after, other atexit handlers still run).  No number depends on
    either.

    A background thread's uncaught exception prints nothing (unless ``EXACTDP_DEBUG``): loky's
    executor-manager thread can raise ``KeyError`` when Ctrl-C lands while it queues work, and
    its traceback came before the program's one line.  A failure that matters reaches the main
    thread (a broken pool) and is reported there."""
    if not os.environ.get("EXACTDP_DEBUG"):
        threading.excepthook = _thread_exception_quiet
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(gen0, gen1, PROGRAM_GC_THRESHOLD2)
    if not os.environ.get("EXACTDP_DEBUG"):  # the program's child processes (workers, loky's resource
        os.environ["PYTHONWARNINGS"] = "ignore"  # tracker) print no warnings either: stderr is the one line
    atexit.unregister(gc.freeze)  # once per process
    atexit.register(gc.freeze)


def _thread_exception_quiet(args) -> None:
    """:data:`threading.excepthook` of the program: nothing on stderr (:func:`as_program`)."""
    del args


def _describe(exc: Exception):
    """``(message, exit status)`` of an error that is not an :class:`InputError`: 3 only
    for a result that cannot be certified; 2 for the environment (a file or folder, the
    disk, memory, a cluster); 1 for anything else (a bug)."""
    text = one_line(exc) or type(exc).__name__
    if isinstance(exc, UncertifiedError):
        hint = "" if "try " in text else f"; {UNCERTIFIED_HINT}"
        return f"could not certify the result: {text}{hint}", 3
    if isinstance(exc, OSError):
        return os_error_text(exc), 2
    if isinstance(exc, MemoryError):
        return ("ran out of memory (the request needs more than this machine has; a smaller design, fewer "
                "--jobs or a larger machine)"), 2
    if isinstance(exc, UnicodeError):
        return f"cannot read a file as UTF-8 text ({text})", 2
    return (f"internal error ({type(exc).__name__}: {text}); this is a bug in exactdp, please report it "
            f"(EXACTDP_DEBUG=1 shows where)"), 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
