"""Startup: what a CLI call and an import load.

``--help`` of the tool and of a command import no Numba (nor SciPy, nor matplotlib);
importing the kernels or the engine loads no kernel; a kernel is built on first call with
the one JIT policy and its declared signature, its callees first, and exactdp's names for
it rebound to the dispatcher; a command's reduced parser (only its module registered) is the full parser's for it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import json
import os
import pickle
import subprocess
import sys

import pytest
from exactdp.kernels.jit import Kernel, kernel

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
    loaded = _modules_after("import exactdp.kernels.tilted, exactdp.kernels.profile, "
                            "exactdp.kernels.convolution, exactdp.accounting.accountant, "
                            "exactdp.accounting.lattice_free")
    assert "numba" not in loaded


_FIRST_CALL = """
import json, sys
import numpy as np
from exactdp.kernels import dgauss, tilted
from exactdp.kernels.jit import JIT_OPTIONS, Kernel
out = {"kernel_before": isinstance(tilted.saddle_point, Kernel), "numba_before": "numba" in sys.modules}
held = tilted.saddle_point  # a reference held across the first call (as an importer's would be)
held(np.array([1], dtype=np.int64), np.array([1], dtype=np.int64), np.array([2.0]), 0.25, 0.1)
import numba
D = numba.core.registry.CPUDispatcher
out["rebound"] = {f"{m.__name__}.{n}": isinstance(m.__dict__[n], D) for m, n in
                  ((tilted, "saddle_point"), (tilted, "cgf_slope_at"), (tilted, "tilted_moments_at"),
                   (dgauss, "tilted_moments_at"))}
out["unbuilt_stays"] = isinstance(dgauss.log_theta_real, Kernel)
disp = held.dispatcher
out["same_py_func"] = disp.py_func is held.py_func and tilted.saddle_point is disp
out["options"] = {k: disp.targetoptions[k] == JIT_OPTIONS[k] for k in ("fastmath", "nogil", "error_model")}
out["cache"] = type(disp._cache).__name__
out["signatures"] = [len(d.signatures) for d in (disp, tilted.cgf_slope_at, dgauss.tilted_moments_at)]
try:
    dgauss.tilted_moments(np.arange(3), 2.0)
    out["other_types"] = "compiled"
except TypeError:
    out["other_types"] = "refused"
print(json.dumps(out))
"""


def test_kernel_built_on_first_call_with_the_policy():
    """In a new process: no Numba until the first call; the call builds the kernel and its
    callees (one eager signature each, the policy's options, the disk cache), rebinds
    exactdp's names to the dispatchers, and leaves kernels not called unbuilt."""
    out = subprocess.run([sys.executable, "-c", _FIRST_CALL], capture_output=True, text=True, timeout=600,
                         env={**os.environ, "EXACTDP_AOT": "0"})  # the JIT path (tests/test_aot.py: the other)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout.splitlines()[-1])
    assert got == {"kernel_before": True, "numba_before": False,
                   "rebound": {f"exactdp.kernels.{n}": True
                               for n in ("tilted.saddle_point", "tilted.cgf_slope_at", "tilted.tilted_moments_at",
                                         "dgauss.tilted_moments_at")},
                   "unbuilt_stays": True, "same_py_func": True,
                   "options": {"fastmath": True, "nogil": True, "error_model": True},
                   "cache": "FunctionCache", "signatures": [1, 1, 1], "other_types": "refused"}


@kernel("float64(float64)")
def _twice(x):  # never called: pickling needs no build
    return 2.0 * x


def test_kernel_pickles_by_reference():
    assert isinstance(_twice, Kernel) and "not loaded" in repr(_twice)
    assert pickle.loads(pickle.dumps(_twice)) is _twice
    assert _twice._dispatcher is None


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


_COMPILE_AFTER_CAP = """
import os, sys
sys.path.insert(0, {d!r})
import numba  # loaded first, as in a --jobs 1 sweep whose manifest recorded numba's version
from exactdp.sweep.driver import _cap_threads
_cap_threads()
import fresh_kernel
print(fresh_kernel.plus_one(1.0))
"""


def test_kernel_compiles_after_the_sweep_caps_threads(tmp_path):
    """A kernel first compiled after the sweep capped the threads of a process that had
    already imported Numba (``exactdp sweep --jobs 1`` on a cold cache) compiles."""
    (tmp_path / "fresh_kernel.py").write_text(
        "from exactdp.kernels.jit import kernel\n\n\n@kernel('float64(float64)')\ndef plus_one(x):\n"
        "    return x + 1.0\n")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    env["NUMBA_CACHE_DIR"] = str(tmp_path / "cache")
    out = subprocess.run([sys.executable, "-c", _COMPILE_AFTER_CAP.format(d=str(tmp_path))], capture_output=True,
                         text=True, env=env, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["2.0"]
