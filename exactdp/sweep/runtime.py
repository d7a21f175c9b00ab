"""Upkeep of a running sweep: the driver's file writes, the workers' leak guard.

* :class:`GroupWriter` writes finished tasks from one thread in group commits
  (:func:`exactdp.sweep.io.write_tasks`: one durability barrier and one folder fsync a
  group): the tasks that finished while the previous group was being written, gathered
  for at most ``gather`` seconds.  A task's future is done only once its files are
  durable.

* :class:`WriteQueue` collects the driver's finished file writes (futures of its writer
  threads) as they complete, by completion callbacks: O(1) a write.  Waiting on the whole
  set of pending writes after every result (``concurrent.futures.wait`` installs a waiter
  on each) was quadratic in the backlog when the disk lagged behind the results.
* :func:`allow_worker_growth` lets a sweep worker grow as its pairs need: loky's leak
  guard restarted a worker whose pairs legitimately grew it by 300 MB (a new process's
  imports and kernel loads to pay, and a warning about a memory leak).
* :func:`after_worker_task` settles a sweep worker's heap once its first task is done
  (:func:`settle_worker_heap`: the cyclic collector no longer re-scans the ~10⁶ objects of
  the loaded kernels and modules; 946 DHC pairs: about −7 % of the sweep's CPU).
* :func:`guard_worker` makes a local sweep worker die with its driver (Linux
  ``PR_SET_PDEATHSIG``, and a parent-pid watchdog thread elsewhere and as a fallback) and
  ignore Ctrl-C (the driver stops the workers); :func:`exactdp.runs.backends.workers_ignore_sigint`
  starts the workers with SIGINT ignored, so that a Ctrl-C while they import prints nothing.
* :class:`ProgressLines` prints one progress line per N finished tasks or per minute
  when stderr is not a terminal (a log file, a batch job).
"""

from __future__ import annotations

import collections
import contextlib
import gc
import os
import queue
import signal
import sys
import threading
import time
from concurrent.futures import Future, wait
from typing import Any

from exactdp.sweep.io import write_tasks

__all__ = ["GroupWriter", "WriteQueue", "after_worker_task", "allow_worker_growth", "settle_worker_heap",
           "WORKER_GROWTH_ALLOWED", "guard_worker", "ProgressLines"]


class GroupWriter:
    """A thread writing finished tasks' files in groups, once ``before`` is done.

    Parameters
    ----------
    before : Future, optional
        A write every task's files wait for (the run's first manifest: a folder never
        holds pair files without it); its error is every task's error.
    identity : str
        The sweep's identity, recorded in every task's json file
        (:func:`exactdp.sweep.io.info_text`).
    gather : float
        Seconds to wait, after the first task of a group, for more tasks to join it.

    Use as a context manager: leaving the block writes what is queued and stops the
    thread.  :meth:`submit` returns a future done once the task's files are durable
    (or failed with the group's error).
    """

    def __init__(self, before: Future | None = None, gather: float = 0.05, identity: str = ""):
        self._before = before
        self._gather = gather
        self._identity = identity
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="exactdp-write", daemon=True)
        self._thread.start()

    def submit(self, files: dict, result) -> Future:
        """Queue the files of one finished task (``result.diagnostics`` is its info)."""
        fut: Future = Future()
        self._queue.put((files, result, fut))
        return fut

    def _run(self) -> None:
        stop = False
        while not stop:
            item = self._queue.get()
            if item is None:
                return
            group = [item]
            deadline = time.monotonic() + self._gather
            try:
                while True:  # the tasks already queued, and those arriving within `gather`
                    wait_for = deadline - time.monotonic()
                    nxt = self._queue.get(timeout=wait_for) if wait_for > 0 else self._queue.get_nowait()
                    if nxt is None:
                        stop = True
                        break
                    group.append(nxt)
            except queue.Empty:
                pass
            try:
                if self._before is not None:
                    self._before.result()
                write_tasks([(files, res, {**res.diagnostics, "sweep_identity": self._identity})
                             for files, res, _ in group])
            except BaseException as exc:  # noqa: BLE001 - handed to every task's future
                for *_, fut in group:
                    fut.set_exception(exc)
            else:
                for *_, fut in group:
                    fut.set_result(None)

    def close(self) -> None:
        """Write what is queued, then stop the thread."""
        self._queue.put(None)
        self._thread.join()

    def __enter__(self) -> GroupWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        self.close()


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
    mod: Any = sys.modules.get("joblib.externals.loky.process_executor")  # loky's private limit
    limit = getattr(mod, "_MAX_MEMORY_LEAK_SIZE", None)
    if isinstance(limit, int) and limit < WORKER_GROWTH_ALLOWED:
        mod._MAX_MEMORY_LEAK_SIZE = WORKER_GROWTH_ALLOWED


#: the cyclic collector of a settled sweep worker: youngest generation's threshold × this
WORKER_GC_GEN0_FACTOR = 10
#: ... and the oldest generation's threshold (CPython's default: 10)
WORKER_GC_THRESHOLD2 = 100

_HEAP: dict[str, int | bool | None] = {"driver_pid": None, "settled": False}
_HEAP_LOCK = threading.Lock()


def mark_driver_process() -> None:
    """Called by the sweep's driver: tasks run in this process (``--jobs 1``, joblib's
    sequential path) leave its collector alone."""
    _HEAP["driver_pid"] = os.getpid()


def after_worker_task() -> None:
    """After the first finished task of a worker process (not the driver's, see
    :func:`mark_driver_process`): :func:`settle_worker_heap`, once."""
    with _HEAP_LOCK:
        due = not _HEAP["settled"] and os.getpid() != _HEAP["driver_pid"]
        _HEAP["settled"] = _HEAP["settled"] or due
    if due:
        settle_worker_heap()


def settle_worker_heap() -> None:
    """Move a sweep worker's objects so far out of the cyclic collector's reach and make its
    full collections rarer.

    After its first pair a worker holds ~10⁶ long-lived objects (NumPy, Numba's loaded
    kernels and registries, mpmath, the engine's caches) and every pair then allocates
    ~10⁵ short-lived ones (rows, texts, tails) with few reference cycles.  CPython's
    collector re-scanned the long-lived ones at every oldest-generation collection.
    :func:`gc.freeze` moves every object alive now to the permanent
    generation (never scanned, never freed by the cyclic collector; freed by reference
    counting as before); the youngest generation's threshold is multiplied by
    :data:`WORKER_GC_GEN0_FACTOR` and the oldest's set to :data:`WORKER_GC_THRESHOLD2`
    (every new cycle is still collected, later; the same policy as the CLI's
    ``exactdp.cli.as_program`` for its own process).  Measured: about −7 % of a DHC sweep's
    CPU; no number depends on it, the pairs' files are byte-identical
    (``bench/sweep_timing.md``, 19th section)."""
    gc.freeze()
    gen0, gen1, _ = gc.get_threshold()
    gc.set_threshold(WORKER_GC_GEN0_FACTOR * gen0, gen1, WORKER_GC_THRESHOLD2)


# ----------------------------------------------------------------------------- processes
#: seconds between two checks of the parent-pid watchdog of a sweep worker
WATCHDOG_PERIOD = 1.0
_PR_SET_PDEATHSIG = 1
_GUARDED: dict = {}


def guard_worker(driver_pid: int) -> None:
    """In a local worker process of the sweep whose driver is ``driver_pid`` (once per
    process; nothing in the driver itself or on a cluster's workers): die with the driver
    and ignore Ctrl-C.

    * Linux: ``prctl(PR_SET_PDEATHSIG, SIGKILL)``: the kernel kills the worker when the
      driver's thread that started it ends — the driver's exit, ``kill -9`` included;
    * everywhere: a daemon thread checks every :data:`WATCHDOG_PERIOD` seconds that the
      parent is still ``driver_pid`` and ends the process otherwise (a worker re-parented
      to init or a subreaper has lost its driver);
    * SIGINT is ignored: on Ctrl-C the driver stops its workers itself, and a worker's
      ``KeyboardInterrupt`` traceback would only add lines to the terminal."""
    pid = os.getpid()
    if _GUARDED.get(pid) or pid == driver_pid or os.getppid() != driver_pid:
        return
    _GUARDED[pid] = True
    with contextlib.suppress(ValueError):  # only possible in the main thread
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != driver_pid:  # the driver died before the prctl
        os._exit(1)

    def watch():
        while os.getppid() == driver_pid:
            time.sleep(WATCHDOG_PERIOD)
        os._exit(1)

    threading.Thread(target=watch, name="exactdp-driver-watch", daemon=True).start()


class ProgressLines:
    """One line on ``stream`` per ``every`` finished tasks or per ``period`` seconds,
    whichever comes first (for a log or a batch job: no bar, no carriage returns).

    Parameters
    ----------
    total : int
        Tasks to finish.
    label : str
        The line's head (``"exactdp sweep"``).
    stream : file, optional
        Default ``sys.stderr``.
    every, period : int, float
        Default: a tenth of the tasks, and a minute.
    """

    def __init__(self, total: int, label: str, stream=None, every: int | None = None, period: float = 60.0):
        self.total, self.label, self.stream = total, label, stream or sys.stderr
        self.every = every or max(1, total // 10)
        self.period = period
        self.done = 0
        self._start = self._last_time = time.monotonic()
        self._last_done = 0

    def update(self, n: int = 1) -> None:
        """Count ``n`` finished tasks; print a line when one is due."""
        self.done += n
        now = time.monotonic()
        if self.done - self._last_done >= self.every or now - self._last_time >= self.period \
                or self.done == self.total:
            self._last_done, self._last_time = self.done, now
            elapsed = now - self._start
            left = elapsed / self.done * (self.total - self.done) if self.done else float("nan")
            tail = f", about {_clock(left)} left" if 0 < self.done < self.total else ""
            self.stream.write(f"{self.label}: {self.done}/{self.total} done ({100 * self.done / self.total:.0f} %), "
                              f"{_clock(elapsed)} elapsed{tail}\n")
            self.stream.flush()

    def close(self) -> None:
        """Nothing to clear (the interface of a progress bar)."""


def _clock(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    if seconds < 3600:
        return f"{seconds // 60} min {seconds % 60:02d} s"
    return f"{seconds // 3600} h {seconds // 60 % 60:02d} min"
