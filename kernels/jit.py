"""The one JIT policy of exactdp.

Every Numba kernel is declared with :func:`kernel` and an explicit signature.

Policy (why):

* ``cache=True`` - compiled code is stored next to the source, so worker processes of a
  sweep load it instead of recompiling.
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
  is built, so Numba compiles (or loads) it exactly as if everything had been eager.
"""

from __future__ import annotations

import functools
import importlib
import threading
import types

__all__ = ["kernel", "Kernel", "JIT_OPTIONS"]

JIT_OPTIONS = dict(cache=True, fastmath=False, nogil=True, error_model="numpy")

#: one lock for building dispatchers (re-entrant: building a caller builds its callees)
_BUILD_LOCK = threading.RLock()


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

    @property
    def dispatcher(self):
        """The Numba dispatcher (built, i.e. loaded from the cache or compiled, on first access)."""
        dispatcher = self._dispatcher
        return dispatcher if dispatcher is not None else self._build()

    def _build(self):
        with _BUILD_LOCK:
            if self._dispatcher is None:
                import numba

                _bind_callees(self.py_func)
                self._dispatcher = numba.njit(self.signature, **JIT_OPTIONS)(self.py_func)
            return self._dispatcher

    def __call__(self, *args, **kwargs):
        dispatcher = self._dispatcher
        if dispatcher is None:
            dispatcher = self._build()
        return dispatcher(*args, **kwargs)

    def __getattr__(self, name):
        if name.startswith("__"):  # copy, pickle and introspection probes: not the dispatcher's
            raise AttributeError(name)
        return getattr(self.dispatcher, name)

    def __reduce__(self):
        return _resolve, (self.__module__, self.__qualname__)

    def __repr__(self):
        state = "loaded" if self._dispatcher is not None else "not loaded yet"
        return f"<exactdp kernel {self.__module__}.{self.__qualname__} {self.signature!r} ({state})>"


def _resolve(module: str, qualname: str):
    """The kernel ``module.qualname`` (unpickling)."""
    return getattr(importlib.import_module(module), qualname)


def _global_names(code: types.CodeType):
    """Every global name a code object (and the code objects nested in it) may load."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _global_names(const)


def _bind_callees(fn) -> None:
    """Replace each :class:`Kernel` that ``fn`` refers to by name in its module globals with
    that kernel's dispatcher (built first), so that Numba, compiling ``fn``, sees the
    callee's dispatcher exactly as with eager decoration."""
    namespace = fn.__globals__
    for name in set(_global_names(fn.__code__)):
        value = namespace.get(name)
        if isinstance(value, Kernel):
            namespace[name] = value.dispatcher
