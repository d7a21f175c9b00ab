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
"""

from __future__ import annotations

import numba

__all__ = ["kernel", "JIT_OPTIONS"]

JIT_OPTIONS = dict(cache=True, fastmath=False, nogil=True, error_model="numpy")


def kernel(signature):
    """Compile a function eagerly with the project's JIT policy.

    Parameters
    ----------
    signature : str or numba signature
        The explicit signature, e.g. ``"float64(float64, int64)"``.
    """

    def wrap(fn):
        return numba.njit(signature, **JIT_OPTIONS)(fn)

    return wrap
