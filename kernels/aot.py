"""Ahead-of-time compiled kernels: where the module lives, and binding its functions.

``exactdp warmup`` (:mod:`exactdp.kernels.aot_build`) compiles every kernel with
``numba.pycc`` into one extension module, for this machine, under :func:`module_dir`.
Importing that module does not import Numba (~0.45 s saved on a process's first kernel
call).  :func:`function_for` gives a kernel's compiled function, or ``None`` (the kernel
is then built by Numba's JIT exactly as without this module).

Validity: the folder's name is a hash (:func:`build_key`) of everything the machine code
depends on: the kernels' sources (``KERNELS_DIGEST``), the versions of Numba, llvmlite,
NumPy and Python, the platform, the CPU (vendor, model, flags) and Numba's code-generation
settings from the environment.  A folder appears only complete (built in a temporary
folder, then renamed), so a module found is a whole build for exactly this key.

Calls: the exported functions are pycc's wrappers, which (unlike a Numba dispatcher) do
not check an array's dtype or number of dimensions, nor a scalar's type.  So each kernel
is bound through a small generated function that calls the compiled code only when every
argument has exactly the declared kind (``ndarray`` of the declared dtype and dimension;
``float``/``int``/``bool``/``complex`` or the matching NumPy scalar) and otherwise calls the
JIT dispatcher, which converts or refuses exactly as without this module.

``EXACTDP_AOT=0`` disables the path; ``EXACTDP_AOT=require`` makes a kernel of
``exactdp.kernels`` without a compiled function an error (to prove a run used them);
``EXACTDP_AOT_DIR`` overrides the cache root.  This module imports neither Numba nor
llvmlite (on Linux; elsewhere llvmlite names the CPU).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
from pathlib import Path

__all__ = ["MODULE_NAME", "aot_mode", "cache_root", "build_key", "module_dir", "load", "function_for",
           "parse_args", "FALLBACKS"]

#: the extension module's name (one per folder; a process loads at most one)
MODULE_NAME = "exactdp_aot_kernels"

#: Numba settings that change the code it generates (part of the key)
_CODEGEN_ENV = ("NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_OPT", "NUMBA_LOOP_VECTORIZE",
                "NUMBA_SLP_VECTORIZE", "NUMBA_BOUNDSCHECK", "NUMBA_DISABLE_INTEL_SVML", "NUMBA_FASTMATH")

#: calls that took the JIT dispatcher because an argument was not of the declared kind
FALLBACKS: dict = {}

_LOADED: list = []  # [(module or None, manifest)] once looked up


def aot_mode() -> str:
    """``"off"``, ``"on"`` (the default: compiled functions when a valid module exists) or ``"require"``."""
    value = os.environ.get("EXACTDP_AOT", "1").strip().lower()
    if value in ("0", "off", "no", "false") or os.environ.get("NUMBA_DISABLE_JIT", "0") not in ("", "0"):
        return "off"
    return "require" if value == "require" else "on"


def cache_root() -> Path:
    """``$EXACTDP_AOT_DIR``, else ``$NUMBA_CACHE_DIR/exactdp-aot``, else
    ``$XDG_CACHE_HOME/exactdp/aot`` (``~/.cache/exactdp/aot``)."""
    if os.environ.get("EXACTDP_AOT_DIR"):
        return Path(os.environ["EXACTDP_AOT_DIR"])
    if os.environ.get("NUMBA_CACHE_DIR"):
        return Path(os.environ["NUMBA_CACHE_DIR"]) / "exactdp-aot"
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "exactdp" / "aot"


def _cpu_fingerprint() -> str:
    """The CPU as the code generator sees it: on Linux vendor, family, model, stepping and
    flags of the first processor in ``/proc/cpuinfo``; elsewhere LLVM's host CPU name and
    features."""
    try:
        text = Path("/proc/cpuinfo").read_text().split("\n\n", 1)[0]
        fields = dict(line.split(":", 1) for line in text.splitlines() if ":" in line)
        fields = {k.strip(): v.strip() for k, v in fields.items()}
        wanted = ("vendor_id", "cpu family", "model", "stepping", "flags", "CPU implementer", "CPU part",
                  "Features", "cpu", "isa")
        found = [f"{k}={fields[k]}" for k in wanted if k in fields]
        if found:
            return ";".join(found)
    except OSError:
        pass
    import llvmlite.binding as ll

    return f"{ll.get_host_cpu_name()};{ll.get_host_cpu_features().flatten()}"


def _version(dist: str) -> str:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return "absent"


def build_key(kernels_digest: str) -> str:
    """The hash naming the folder of a module valid for this process (see the module's docstring)."""
    import numpy

    parts = [kernels_digest, _version("numba"), _version("llvmlite"), numpy.__version__, sys.version,
             sys.implementation.cache_tag, sys.platform, os.uname().machine if hasattr(os, "uname") else "",
             _cpu_fingerprint(), *(f"{k}={os.environ.get(k, '')}" for k in _CODEGEN_ENV)]
    return hashlib.sha256("\0".join(parts).encode()).hexdigest()[:24]


def module_dir(kernels_digest: str) -> Path:
    """The folder of the module valid for this process (it may not exist)."""
    return cache_root() / build_key(kernels_digest)


def load(kernels_digest: str):
    """``(module, manifest)`` of the valid compiled module, or ``(None, {})`` (off, not
    built, or not loadable); looked up once per process."""
    if not _LOADED:
        found: tuple = (None, {})
        if aot_mode() != "off":
            folder = module_dir(kernels_digest)
            try:
                manifest = json.loads((folder / "manifest.json").read_text())
                path = folder / manifest["file"]
                spec = importlib.util.spec_from_file_location(MODULE_NAME, path)
                if spec is None or spec.loader is None:
                    raise ImportError(f"no loader for {path}")
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                found = (module, manifest)
            except (OSError, ValueError, KeyError, ImportError):
                found = (None, {})
        _LOADED.append(found)
    return _LOADED[0]


#: scalar kinds of a signature and the Python types a compiled call takes for them as is
_SCALARS = {"float64": ("float", "numpy.float64"), "int64": ("int", "numpy.int64"),
            "boolean": ("bool", "numpy.bool_"), "complex128": ("complex", "numpy.complex128")}
#: array dtypes a compiled call checks
_DTYPES = ("float64", "int64", "int32", "complex128", "boolean")


def _split_top(text: str):
    """``text`` split at the commas outside brackets."""
    depth, start = 0, 0
    for k, ch in enumerate(text):
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        elif ch == "," and depth == 0:
            yield text[start:k].strip()
            start = k + 1
    if text[start:].strip():
        yield text[start:].strip()


def parse_args(signature) -> list | None:
    """The argument kinds of an explicit signature string, each ``("scalar", name)`` or
    ``("array", dtype, ndim)`` (any layout); ``None`` if a kind is not one a compiled call
    can check (the kernel then stays JIT-only)."""
    if not isinstance(signature, str) or not signature.endswith(")"):
        return None
    depth = 0
    for k in range(len(signature) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(signature[k], 0)
        if depth == 0:
            break
    kinds: list[tuple] = []
    for arg in _split_top(signature[k + 1:-1]):
        if arg in _SCALARS:
            kinds.append(("scalar", arg))
        elif "[" in arg and arg.endswith("]") and arg[:arg.index("[")] in _DTYPES:
            dims = arg[arg.index("[") + 1:-1].split(",")
            if not all(d.strip() == ":" for d in dims):
                return None  # a contiguity requirement (::1): not checked here
            kinds.append(("array", arg[:arg.index("[")], len(dims)))
        else:
            return None
    return kinds


def _guarded(name: str, compiled, kinds, fallback, py_func):
    """A function calling ``compiled`` when every argument is of its declared kind, else
    ``fallback()`` (the JIT dispatcher) with the same arguments."""
    import numpy

    code = py_func.__code__
    params = list(code.co_varnames[:code.co_argcount])
    if len(params) != len(kinds) or code.co_flags & 0x0C or code.co_kwonlyargcount or py_func.__defaults__:
        return None
    env = {"_compiled": compiled, "_fallback": fallback, "_nd": numpy.ndarray, "_count": FALLBACKS, "_name": name}
    tests = []
    for k, (param, kind) in enumerate(zip(params, kinds)):
        if kind[0] == "array":
            env[f"_d{k}"] = numpy.dtype(kind[1] if kind[1] != "boolean" else "bool")
            tests.append(f"type({param}) is _nd and ({param}.dtype is _d{k} or {param}.dtype == _d{k}) "
                         f"and {param}.ndim == {kind[2]}")  # arrays Numba returns have their own dtype objects
        else:
            env[f"_s{k}"] = tuple(eval(t, {"numpy": numpy}) for t in _SCALARS[kind[1]])  # noqa: S307 - fixed table
            tests.append(f"type({param}) in _s{k}")
    args = ", ".join(params)
    src = (f"def {py_func.__name__}({args}):\n"
           f"    if {' and '.join(tests) or 'True'}:\n"
           f"        return _compiled({args})\n"
           f"    _count[_name] = _count.get(_name, 0) + 1\n"
           f"    return _fallback()({args})\n")
    exec(compile(src, f"<exactdp aot {name}>", "exec"), env)  # noqa: S102 - generated from the signature
    fn = env[py_func.__name__]
    fn.__module__, fn.__qualname__, fn.__doc__ = py_func.__module__, py_func.__qualname__, py_func.__doc__
    fn.__wrapped__ = fn.py_func = py_func
    return fn


def function_for(kernels_digest: str, module: str, qualname: str, signature, py_func, fallback):
    """The compiled function of the kernel ``module.qualname`` (guarded, see the module's
    docstring), or ``None``: off, no valid module, or this kernel (with this signature) not
    in it.  ``fallback()`` returns the kernel's JIT dispatcher."""
    compiled_module, manifest = load(kernels_digest)
    entry = manifest.get("kernels", {}).get(f"{module}.{qualname}")
    fn = None
    if compiled_module is not None and entry is not None and entry["signature"] == signature:
        kinds = parse_args(signature)
        compiled = getattr(compiled_module, entry["export"], None)
        if kinds is not None and compiled is not None:
            fn = _guarded(f"{module}.{qualname}", compiled, kinds, fallback, py_func)
    if fn is None and aot_mode() == "require" and module.startswith("exactdp.kernels."):
        raise RuntimeError(f"EXACTDP_AOT=require: no compiled function for {module}.{qualname} in "
                           f"{module_dir(kernels_digest)} (run `exactdp warmup`)")
    return fn
