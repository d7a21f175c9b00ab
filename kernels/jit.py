"""The one JIT policy of exactdp.

Every Numba kernel is declared with :func:`kernel` and an explicit signature.

Policy (why):

* ``cache=True`` - compiled code is stored next to the source, so worker processes of a
  sweep load it instead of recompiling.  Numba keys a cached kernel on its own file only:
  a kernel compiled with the callees (and module constants) of *another* file is not
  invalidated when that file changes (numba issue #1833), and would run the old callee's
  code.  So every kernel's cache stamp also carries :data:`KERNELS_DIGEST`, a hash of
  all the kernel modules' sources: any change to any of them recompiles every kernel.
* ``fastmath=False`` - always.  Kernels feed privacy numbers; reassociation or
  flush-to-zero would void the rounding-error bounds that are certified.
* ``error_model="numpy"`` - division by zero gives inf/nan instead of raising, the
  Python layer checks results.
* ``nogil=True`` - kernels may be called from threads.
* No ``parallel=True``: parallelism lives in the sweep (one process per core), so a
  kernel never oversubscribes cores.
* Loaded on first call: importing a kernel module neither imports Numba nor loads the
  cache.  The first call of a kernel imports Numba and builds the same eager
  ``numba.njit(signature, ...)`` dispatcher as before (loaded from the cache, or compiled
  for exactly that signature); a process pays only for the kernels it calls.  A kernel
  that calls other kernels gets their dispatchers bound into its module globals before it
  is built, so Numba compiles (or loads) it exactly as if everything had been eager.  Once
  built, every exactdp module's name for the kernel is rebound to the dispatcher itself.
* Ahead of time: after ``exactdp warmup`` a first call binds the kernel's function from a
  module compiled by ``numba.pycc`` for this machine with the same code generation
  (:mod:`exactdp.kernels.aot`), which imports no Numba; without a valid module, or with
  ``EXACTDP_AOT=0``, the kernel is built as above.  ``dispatcher`` is always the JIT one.
  ``numba.pycc`` is deprecated upstream: where it is absent, warmup builds only the
  on-disk cache (``cache=True`` above) and every kernel loads from it.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import operator
import sys
import threading
import types
from pathlib import Path

__all__ = ["kernel", "Kernel", "declared", "bind_callees", "JIT_OPTIONS", "KERNELS_DIGEST"]

JIT_OPTIONS = dict(cache=True, fastmath=False, nogil=True, error_model="numpy")


def _kernels_digest() -> str:
    """A hash of every kernel module's source (names and bytes), in name order."""
    h = hashlib.sha256()
    for path in sorted(Path(__file__).resolve().parent.glob("*.py")):
        h.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return h.hexdigest()[:24]


#: part of every kernel's cache stamp (see the policy above)
KERNELS_DIGEST = _kernels_digest()

#: one lock for building dispatchers (re-entrant: building a caller builds its callees)
_BUILD_LOCK = threading.RLock()

#: every Kernel declared in this process, in declaration order (see :func:`declared`)
_DECLARED: list[Kernel] = []


def declared() -> tuple:
    """Every :class:`Kernel` declared so far in this process (also after exactdp's names
    for it were rebound to what it was built into)."""
    return tuple(_DECLARED)


def kernel(signature):
    """Declare a Numba kernel with the project's JIT policy and an explicit signature.

    The kernel is compiled for exactly ``signature`` (or loaded from the on-disk cache) on
    its first call; see :class:`Kernel`.

    Parameters
    ----------
    signature : str or numba signature
        The explicit signature, e.g. ``"float64(float64, int64)"``.
    """

    def wrap(fn):
        return Kernel(fn, signature)

    return wrap


class Kernel:
    """A Numba kernel whose dispatcher is built on first use.

    Calling it calls ``numba.njit(signature, **JIT_OPTIONS)(fn)``, built once per process
    (thread-safe); other attributes (``signatures``, ``overloads``, ``inspect_types``, ...)
    are those of that dispatcher.  ``py_func`` is the Python function.
    """

    def __init__(self, fn, signature):
        functools.update_wrapper(self, fn)
        self.py_func = fn
        self.signature = signature
        self._dispatcher = None
        #: what a call calls: first a builder, then the dispatcher itself (see __call__)
        self._call = self._build_and_call
        _DECLARED.append(self)

    @property
    def dispatcher(self):
        """The Numba dispatcher (built, i.e. loaded from the cache or compiled, on first access)."""
        dispatcher = self._dispatcher
        if dispatcher is None:
            dispatcher = self._jit()
            with _BUILD_LOCK:
                if self._call == self._build_and_call:  # not called yet: calls go to the dispatcher
                    self._call = dispatcher
                    _rebind(self, dispatcher)
        return dispatcher

    def _build(self):
        """What a call calls from now on: the ahead-of-time compiled function when a valid
        module has it (:mod:`exactdp.kernels.aot`), else the dispatcher; exactdp's names
        for the kernel are rebound to it."""
        with _BUILD_LOCK:
            if self._call == self._build_and_call:
                from exactdp.kernels import aot

                compiled = aot.function_for(KERNELS_DIGEST, self.__module__, self.__qualname__, self.signature,
                                            self.py_func, self._jit)
                self._call = compiled if compiled is not None else self._jit()
                _rebind(self, self._call)
            return self._call

    def _jit(self):
        """The Numba dispatcher, built once (loaded from the cache or compiled)."""
        with _BUILD_LOCK:
            if self._dispatcher is None:
                import numba

                bind_callees(self.py_func)
                self._dispatcher = _compiled(numba, self.py_func, self.signature)
            return self._dispatcher

    def _build_and_call(self, *args, **kwargs):
        return self._build()(*args, **kwargs)

    #: ``kernel(*args)`` calls ``self._call(*args)``: the builder on the first call, the
    #: dispatcher afterwards; fetched by a C-level getter, so that a call of a built kernel
    #: costs no Python frame beyond the dispatcher's own (the sweep makes ~2e4 per pair)
    __call__ = property(operator.attrgetter("_call"))

    def __getattr__(self, name):
        if name.startswith("_"):  # private names, copy/pickle/introspection probes: not forwarded
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self.dispatcher, name)

    def __reduce__(self):
        return _resolve, (self.__module__, self.__qualname__)

    def __repr__(self):
        state = ("not loaded yet" if self._call == self._build_and_call else
                 "loaded" if self._call is self._dispatcher else "ahead-of-time compiled")
        return f"<exactdp kernel {self.__module__}.{self.__qualname__} {self.signature!r} ({state})>"


def _compiled(numba, fn, signature):
    """``numba.njit(signature, **JIT_OPTIONS)(fn)``, step by step as Numba's decorator
    does it (dispatcher, caching, compile for the signature, no further compilation), with
    :data:`KERNELS_DIGEST` added to the cache stamp before anything is loaded.  Should
    Numba's cache internals change, the kernel is compiled without a cache rather than
    loaded from one that could be stale."""
    from numba.core import typeinfer

    disp = numba.njit(**JIT_OPTIONS)(fn)
    if not hasattr(disp, "compile"):  # NUMBA_DISABLE_JIT: the plain function
        return disp
    cache_file = getattr(getattr(disp, "_cache", None), "_cache_file", None)
    if cache_file is not None and hasattr(cache_file, "_source_stamp"):
        cache_file._source_stamp = (cache_file._source_stamp, KERNELS_DIGEST)
    else:
        from numba.core.caching import NullCache

        disp._cache = NullCache()
    with typeinfer.register_dispatcher(disp):
        disp.compile(signature)
    disp.disable_compile()
    return disp


def _resolve(module: str, qualname: str):
    """The kernel ``module.qualname`` (unpickling)."""
    return getattr(importlib.import_module(module), qualname)


def _rebind(kern: Kernel, dispatcher) -> None:
    """Point every name bound to ``kern`` in exactdp's modules at its ``dispatcher``: after
    its first call a kernel is called as the plain dispatcher (no proxy in between) by every
    module that imported it by name."""
    for name, module in list(sys.modules.items()):
        if name == "exactdp" or name.startswith("exactdp."):
            namespace = getattr(module, "__dict__", {})
            for key in [k for k, v in namespace.items() if v is kern]:
                namespace[key] = dispatcher


def _global_names(code: types.CodeType):
    """Every global name a code object (and the code objects nested in it) may load."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _global_names(const)


def bind_callees(fn) -> None:
    """Replace each :class:`Kernel` that ``fn`` refers to by name in its module globals with
    that kernel's dispatcher (built first), so that Numba, compiling ``fn``, sees the
    callee's dispatcher exactly as with eager decoration."""
    namespace = fn.__globals__
    for name in set(_global_names(fn.__code__)):
        value = namespace.get(name)
        if isinstance(value, Kernel):
            namespace[name] = value.dispatcher
