"""Startup: what a CLI call and an import load (issue 14).

``--help`` of the tool and of a command import no Numba (nor SciPy, nor matplotlib);
importing the kernels or the engine loads no kernel; a kernel is built on first call with
the one JIT policy and its declared signature, its callees' dispatchers bound first; a
command's reduced parser (only its module registered) is the full parser's for it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import pickle
import subprocess
import sys

import pytest

from exactdp.cli import SUBCOMMANDS, build_parser

HEAVY = ("numba", "scipy", "matplotlib", "llvmlite")


def _modules_after(code: str) -> set:
    """The top-level packages imported by running ``code`` in a new interpreter."""
    script = (f"import sys, json\n{code}\n"
              "sys.stdout.write('\\n' + json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


_CLI = ("from exactdp.cli import main\n"
        "try:\n    main({argv!r})\nexcept SystemExit as e:\n    assert e.code == 0, e.code\n")


@pytest.mark.parametrize("argv", [["--help"], ["delta", "--help"], ["--version"], ["sweep", "--help"],
                                  ["risk", "--help"]])
def test_help_imports_no_numba(argv):
    loaded = _modules_after(_CLI.format(argv=argv))
    assert "exactdp" in loaded
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))


def test_importing_kernels_and_engine_loads_no_numba():
    loaded = _modules_after("import exactdp.kernels.tilted, exactdp.kernels.smoothed, exactdp.kernels.split, "
                            "exactdp.kernels.convolution, exactdp.accounting.accountant")
    assert "numba" not in loaded


def test_kernel_built_on_first_call_with_the_policy():
    import numba
    import numpy as np

    from exactdp.kernels import dgauss
    from exactdp.kernels.jit import JIT_OPTIONS, Kernel

    kern = dgauss.tilted_moments  # no kernel of its module calls it: it stays the Kernel object
    assert isinstance(kern, Kernel)
    assert all(isinstance(x, float) for x in kern(0.1, 2.0))
    disp = kern.dispatcher
    assert isinstance(disp, numba.core.registry.CPUDispatcher) and disp.py_func is kern.py_func
    assert {k: disp.targetoptions[k] for k in ("fastmath", "nogil", "error_model")} == \
        {k: JIT_OPTIONS[k] for k in ("fastmath", "nogil", "error_model")}
    assert disp._cache.__class__.__name__ == "FunctionCache"  # cache=True
    assert len(disp.signatures) == 1  # exactly the declared signature, compiled eagerly
    with pytest.raises(TypeError):  # and no other specialisation compiled on demand
        kern(np.arange(3), 2.0)


def test_caller_built_after_its_callees():
    import numba

    from exactdp.kernels import tilted

    tilted.saddle_point.dispatcher  # calls cgf_slope, which calls tilted_moments
    for name in ("cgf_slope", "tilted_moments"):
        assert isinstance(tilted.__dict__[name], numba.core.registry.CPUDispatcher), name
        assert len(tilted.__dict__[name].signatures) == 1


def test_kernel_pickles_by_reference():
    from exactdp.kernels import dgauss

    again = pickle.loads(pickle.dumps(dgauss.log_theta_real))
    assert again(0.25, 3.0) == dgauss.log_theta_real(0.25, 3.0)


def test_subcommand_table_matches_registration():
    for module, commands in SUBCOMMANDS.items():
        parser = argparse.ArgumentParser()
        sub = parser.add_subparsers()
        importlib.import_module(f"exactdp.cli.{module}").register(sub)
        assert tuple(sub.choices) == commands, module


def _help(parser, argv) -> str:
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf), pytest.raises(SystemExit):
        parser.parse_args(argv)
    return buf.getvalue()


@pytest.mark.parametrize("command", [c for cs in SUBCOMMANDS.values() for c in cs])
def test_reduced_parser_is_the_full_one(command):
    full, reduced = build_parser(), build_parser([command, "--help"])
    assert set(reduced._subparsers._group_actions[0].choices) == set(
        next(cs for cs in SUBCOMMANDS.values() if command in cs))
    assert _help(reduced, [command, "--help"]) == _help(full, [command, "--help"])
