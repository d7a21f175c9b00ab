"""Upkeep of a running sweep: the driver's queue of file writes, the workers' leak guard.

* :class:`WriteQueue` collects the driver's finished file writes (futures of its writer
  threads) as they complete, by completion callbacks: O(1) a write.  Waiting on the whole
  set of pending writes after every result (``concurrent.futures.wait`` installs a waiter
  on each) was quadratic in the backlog when the disk lagged behind the results.
* :func:`allow_worker_growth` lets a sweep worker grow as its pairs need: loky's leak
  guard restarted a worker whose pairs legitimately grew it by 300 MB (a new process's
  imports and kernel loads to pay, and a warning about a memory leak).
"""

from __future__ import annotations

import collections
import sys
from concurrent.futures import wait

__all__ = ["WriteQueue", "allow_worker_growth", "WORKER_GROWTH_ALLOWED"]


class WriteQueue:
    """Pending file writes of the driver; each finished one counted once with ``on_done(1)``.

    Parameters
    ----------
    on_done : callable
        Called with 1 for every write collected (the progress bar's ``update``).
    """

    def __init__(self, on_done):
        self._on_done = on_done
        self._pending: set = set()
        self._finished: collections.deque = collections.deque()  # appended by the writer threads

    def add(self, future) -> None:
        """Track a submitted write."""
        self._pending.add(future)
        future.add_done_callback(self._finished.append)

    def reap(self, wait_all: bool = False) -> None:
        """Collect the writes finished so far (all of them with ``wait_all``), re-raising
        the first error of a write."""
        if wait_all:
            wait(list(self._pending))
        while self._finished:
            fut = self._finished.popleft()
            self._pending.discard(fut)
            fut.result()
            self._on_done(1)

    def __len__(self) -> int:
        return len(self._pending)


#: bytes a sweep worker may grow beyond its size after its first task before loky's leak
#: guard restarts it (loky's default: 300 MB)
WORKER_GROWTH_ALLOWED = 2 * 10**9


def allow_worker_growth() -> None:
    """In a loky worker process: raise loky's leak guard to :data:`WORKER_GROWTH_ALLOWED`.

    loky measures a worker's resident size after its first task and restarts the worker
    once it has grown 300 MB beyond it.  A sweep worker's size depends on its pairs, not
    on a leak: one that ran pair 6-6 first and 6-10 later grew by 320 MB (heap, kernels
    loaded, bounded caches) and was restarted mid-sweep — with a warning about a memory
    leak on the terminal and a new process's imports and kernel loads (~2.2 CPU-s) to
    pay.  The guard stays (at 2 GB); outside a loky worker nothing changes."""
    mod = sys.modules.get("joblib.externals.loky.process_executor")
    limit = getattr(mod, "_MAX_MEMORY_LEAK_SIZE", None)
    if isinstance(limit, int) and limit < WORKER_GROWTH_ALLOWED:
        mod._MAX_MEMORY_LEAK_SIZE = WORKER_GROWTH_ALLOWED
