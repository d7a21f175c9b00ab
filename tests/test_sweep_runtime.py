"""The sweep driver's upkeep (exactdp.sweep.runtime): write queue and loky's leak guard."""

from __future__ import annotations

import os
import sys
import threading
import types
from concurrent.futures import ThreadPoolExecutor

import pytest

from exactdp.sweep import driver
from exactdp.sweep.runtime import WORKER_GROWTH_ALLOWED, WriteQueue, allow_worker_growth


def test_write_queue_counts_each_write_once_and_waits_for_all():
    counted = []
    gate = threading.Event()
    queue = WriteQueue(counted.append)
    with ThreadPoolExecutor(max_workers=3) as pool:
        fast = [pool.submit(lambda: None) for _ in range(5)]
        for fut in fast:
            queue.add(fut)
        slow = pool.submit(gate.wait, 30)
        queue.add(slow)
        for fut in fast:
            fut.result()
        queue.reap()
        assert len(counted) == 5 and len(queue) == 1  # the unfinished write is left pending
        gate.set()
        queue.reap(wait_all=True)
    assert counted == [1] * 6 and len(queue) == 0
    queue.reap(wait_all=True)  # nothing left: nothing counted twice
    assert len(counted) == 6


def test_write_queue_reraises_a_failed_write():
    queue = WriteQueue(lambda n: None)
    with ThreadPoolExecutor(max_workers=1) as pool:
        queue.add(pool.submit(lambda: (_ for _ in ()).throw(OSError("disk full"))))
        with pytest.raises(OSError, match="disk full"):
            queue.reap(wait_all=True)


def test_leak_guard_raised_only_in_a_loky_worker(monkeypatch):
    fake = types.ModuleType("joblib.externals.loky.process_executor")
    fake._MAX_MEMORY_LEAK_SIZE = int(3e8)
    monkeypatch.setitem(sys.modules, "joblib.externals.loky.process_executor", fake)
    allow_worker_growth()
    assert fake._MAX_MEMORY_LEAK_SIZE == WORKER_GROWTH_ALLOWED
    fake._MAX_MEMORY_LEAK_SIZE = 10**10  # a larger setting is left as it is
    allow_worker_growth()
    assert fake._MAX_MEMORY_LEAK_SIZE == 10**10
    del fake._MAX_MEMORY_LEAK_SIZE  # another loky without the guard: nothing to do
    allow_worker_growth()
    assert not hasattr(fake, "_MAX_MEMORY_LEAK_SIZE")
    monkeypatch.delitem(sys.modules, "joblib.externals.loky.process_executor")
    allow_worker_growth()  # not a loky process


def test_loky_still_has_the_guard_we_raise():
    """If loky renames or drops its leak guard this test says so (the raise is then a no-op)."""
    from joblib.externals.loky import process_executor

    assert isinstance(process_executor._MAX_MEMORY_LEAK_SIZE, int)
    assert process_executor._MAX_MEMORY_LEAK_SIZE <= WORKER_GROWTH_ALLOWED


def test_thread_cap_does_not_import_numba(monkeypatch):
    monkeypatch.delitem(sys.modules, "numba", raising=False)
    for var in driver._THREAD_VARS:  # set first, so that the teardown restores each (absent too)
        monkeypatch.setenv(var, "unset")
        monkeypatch.delenv(var)

    class _Finder:  # an import of numba there fails the test
        def find_spec(self, name, path=None, target=None):
            if name == "numba":
                raise AssertionError("_cap_threads imported numba")
            return None

    finder = _Finder()
    monkeypatch.setattr(sys, "meta_path", [finder] + sys.meta_path)
    driver._cap_threads()
    assert "numba" not in sys.modules
    assert all(os.environ[v] == "1" for v in driver._THREAD_VARS)
