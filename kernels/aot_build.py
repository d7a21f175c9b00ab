"""Building the ahead-of-time module of every kernel (``exactdp warmup``).

:func:`build` runs :func:`build_here` in a new interpreter: it compiles every
:class:`~exactdp.kernels.jit.Kernel` of ``exactdp.kernels`` with ``numba.pycc`` into one
extension module in a temporary folder under the cache root, writes its manifest and
renames the folder to :func:`exactdp.kernels.aot.module_dir` (atomic; a lock file keeps two
builds for one key from doing the work twice, and a folder that already exists is kept).

Same code as the JIT: pycc is made to compile exactly as a kernel's dispatcher does, that
is for the host CPU *with the host's feature set* (pycc's default is a generic CPU, and its
``target_cpu="host"`` alone takes the model's default features), with the compiler flags of
:data:`~exactdp.kernels.jit.JIT_OPTIONS` (``error_model="numpy"``, no fastmath, GIL
released), and callees bound to their dispatchers (as :class:`~exactdp.kernels.jit.Kernel` does)
so that they are compiled in as with the JIT.  No fastmath means no FP contraction (no FMA)
in either.  ``tests/test_aot.py`` compares the two bit for bit.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from exactdp.kernels import aot
from exactdp.kernels.jit import JIT_OPTIONS, KERNELS_DIGEST, bind_callees, declared

__all__ = ["all_kernels", "export_name", "build", "build_here", "pycc_available"]


def pycc_available() -> bool:
    """Whether ``numba.pycc`` can be imported here.  It is deprecated upstream and will be
    removed from Numba; without it ``exactdp warmup`` builds the JIT's on-disk cache only
    (``cache=True`` in :data:`~exactdp.kernels.jit.JIT_OPTIONS`), from which every process
    then loads the kernels it calls (``bench/startup.md``: the start-up either way)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # its deprecation notice
        try:
            import numba.pycc  # noqa: F401
        except ImportError:
            return False
    return True


def all_kernels(only=None) -> dict:
    """``{"module.qualname": Kernel}`` of every kernel defined in ``exactdp.kernels`` (or of
    those named in ``only``), in name order."""
    import exactdp.kernels as package

    for info in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{package.__name__}.{info.name}")
    found = {f"{k.__module__}.{k.__qualname__}": k for k in declared()
             if k.__module__.startswith(package.__name__ + ".")}
    return {k: found[k] for k in sorted(found) if only is None or k in only}


def export_name(qualified: str) -> str:
    """The exported symbol of kernel ``exactdp.kernels.MODULE.NAME``: ``MODULE__NAME``."""
    return qualified.removeprefix("exactdp.kernels.").replace(".", "__")


def build(only=None, timeout: float = 1800) -> dict:
    """Build the module valid for this process in a new interpreter (unless it exists) and
    return its manifest.  ``only``: the qualified kernel names to compile (tests)."""
    folder = aot.module_dir(KERNELS_DIGEST)
    if only is None and (folder / "manifest.json").exists():
        return json.loads((folder / "manifest.json").read_text())
    code = f"from exactdp.kernels.aot_build import build_here\nbuild_here({only!r})\n"
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=timeout,
                         env={**os.environ, "EXACTDP_AOT": "0"})
    if run.returncode != 0:
        lines = [line for line in run.stderr.strip().splitlines() if line.strip()]
        raise RuntimeError(f"the ahead-of-time build failed: {lines[-1] if lines else run.returncode}")
    return json.loads((folder / "manifest.json").read_text())


def _jit_flags():
    """Numba's compiler flags of a kernel's dispatcher (those of :data:`JIT_OPTIONS`)."""
    from numba.core import compiler
    from numba.core.registry import cpu_target

    flags = compiler.Flags()
    options = {k: v for k, v in JIT_OPTIONS.items() if k != "cache"}
    cpu_target.options.parse_as_flags(flags, {"nopython": True, **options})
    return flags


def _pin_codegen() -> None:
    """Make pycc (in this build process) compile as the JIT does: host CPU and host features,
    the dispatcher's flags."""
    from numba.core import codegen
    from numba.pycc import compiler as pycc_compiler

    # patches of Numba internals (a method, a class): untyped on purpose
    aot_codegen: Any = codegen.AOTCPUCodegen
    aot_codegen._customize_tm_features = codegen.CPUCodegen._get_host_cpu_features
    template = _jit_flags()

    def flags():
        return template.copy()

    compiler: Any = pycc_compiler
    compiler.Flags = flags


def build_here(only=None) -> None:
    """Compile the kernels into the module valid for this process (see the module's docstring)."""
    import warnings

    warnings.simplefilter("ignore")  # pycc's and distutils' deprecation notices
    from filelock import FileLock
    from numba.core import codegen
    from numba.pycc import CC

    root = aot.cache_root()
    root.mkdir(parents=True, exist_ok=True)
    key = aot.build_key(KERNELS_DIGEST)
    final = root / key
    with FileLock(str(root / f"{key}.lock")):
        if only is None and (final / "manifest.json").exists():
            return
        for stale in root.glob(f".{key}-*"):  # left by a build that was killed (builds of a key hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        _pin_codegen()
        kernels = all_kernels(only)
        cc = CC(aot.MODULE_NAME)
        cc.target_cpu = "host"
        entries = {}
        for name, kern in kernels.items():
            if aot.parse_args(kern.signature) is None:
                continue  # stays JIT-only
            bind_callees(kern.py_func)
            cc.export(export_name(name), kern.signature)(kern.py_func)
            entries[name] = {"export": export_name(name), "signature": kern.signature}
        tmp = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=root))
        host_cpu: Any = codegen.CPUCodegen  # its two host queries ignore self (called with None)
        try:
            cc.output_dir = str(tmp)
            t0 = time.perf_counter()
            cc.compile()
            files = [p.name for p in tmp.iterdir() if p.name.startswith(aot.MODULE_NAME)]
            manifest = {"key": key, "kernels_digest": KERNELS_DIGEST, "file": files[0], "kernels": entries,
                        "jit_only": sorted(set(kernels) - set(entries)),
                        "cpu_name": host_cpu._get_host_cpu_name(None),
                        "cpu_features": host_cpu._get_host_cpu_features(None),
                        "versions": {d: aot._version(d) for d in ("numba", "llvmlite", "numpy")},
                        "python": sys.version, "seconds": round(time.perf_counter() - t0, 1)}
            (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
            if final.exists():
                shutil.rmtree(final)  # only a partial (``only``) build can be replaced, under the lock
            os.rename(tmp, final)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
