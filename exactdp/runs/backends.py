"""Where the sweep's tasks run: joblib's loky processes, a dask cluster, or a ray cluster.

:func:`unordered_results` is the one interface the driver uses: it yields the result of
every task as soon as that task finishes (completion order), so each finished pair can be
written to disk at once (the crash-safety of :mod:`exactdp.runs.files` and :mod:`exactdp.sweep.io` depends on that).

* ``loky`` and ``dask`` run through joblib (``Parallel(return_as="generator_unordered")``);
  dask connects to a running scheduler (``scheduler`` = its address or a Client).
* ``ray`` uses ray's own task API (``ray.remote`` + ``ray.wait``), because joblib's ray
  backend can only return a list at the end.  Without ``scheduler`` a private local
  ray instance with ``jobs`` CPUs is started for the sweep and shut down after it;
  ``scheduler`` is a ray cluster address (``"auto"``, ``"HOST:PORT"``, ``"ray://HOST:PORT"``).
  At most ``jobs`` tasks are in flight at a time.

Results never depend on the backend: every task is a pure function of its arguments and
the driver assembles the outputs from the files in pair order.

Local loky workers are started with SIGINT ignored
(:func:`workers_ignore_sigint`: the driver stops them on Ctrl-C).
A dask scheduler that cannot be reached or is lost mid-sweep is an
:class:`~exactdp.numerics.errors.InputError` naming ``--scheduler`` (its client's log
lines are silenced for the sweep).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator

from exactdp.numerics.exact import InputError

__all__ = ["BACKENDS", "check_backend", "unordered_results", "workers_ignore_sigint"]

BACKENDS = ("loky", "dask", "ray")


def check_backend(backend: str, scheduler=None) -> None:
    """Refuse an unknown backend, or one whose package is missing, before any work."""
    if backend not in BACKENDS:
        raise InputError("backend", backend, f"must be one of {', '.join(BACKENDS)}")
    if backend == "dask":
        try:
            import dask.distributed  # noqa: F401
        except ImportError:
            raise InputError("backend", backend, "needs dask[distributed] (pip install 'exactdp[dask]')") from None
        if scheduler is None:
            raise InputError("scheduler", None, "--backend dask needs --scheduler ADDRESS of a running dask scheduler")
    elif backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise InputError("backend", backend, "needs ray (pip install 'exactdp[ray]')") from None
    elif scheduler is not None:
        raise InputError("scheduler", scheduler, "is only used with --backend dask or --backend ray")


class _Carried(Exception):
    """An exception of exactdp's own types raised in a worker, carried to the driver as
    plain data (``InputError(field, value, reason)`` cannot be rebuilt from its message
    alone: unpickled as is, it broke the process pool, ``BrokenProcessPool``)."""

    def __init__(self, cls_name: str, args: tuple, attrs: dict):
        super().__init__(cls_name, args, attrs)
        self.cls_name, self.exc_args, self.attrs = cls_name, args, attrs

    def __reduce__(self):
        return (_Carried, (self.cls_name, self.exc_args, self.attrs))

    def rebuilt(self) -> BaseException:
        from exactdp.numerics import errors

        cls = getattr(errors, self.cls_name, None)
        if not (isinstance(cls, type) and issubclass(cls, BaseException)):  # pragma: no cover - a newer worker
            return errors.UncertifiedError(f"a worker failed: {self.exc_args[0] if self.exc_args else self.cls_name}")
        exc = cls.__new__(cls)
        BaseException.__init__(exc, *self.exc_args)
        exc.__dict__.update(self.attrs)
        return exc


def _plain(value):
    """``value`` if it is plain data that pickles anywhere, else its text."""
    from fractions import Fraction

    if value is None or isinstance(value, (str, int, float, bool, Fraction)):
        return value
    return str(value)[:200]


def carry_errors(fn: Callable, *args):
    """Worker side of every task: ``fn(*args)``; an exception of
    :mod:`exactdp.numerics.errors` (InputError, BudgetExceeded, UncertifiedError, ...)
    is raised as :class:`_Carried` (plain data), rebuilt by :func:`unordered_results`
    in the driver as the same type with the same message and fields."""
    from exactdp.numerics import errors

    try:
        return fn(*args)
    except (errors.InputError, errors.UncertifiedError, errors.LatticeTooLarge) as exc:
        raise _Carried(type(exc).__name__, tuple(str(a) for a in exc.args),
                       {k: _plain(v) for k, v in vars(exc).items()}) from None


def unordered_results(fn: Callable, calls: Iterable[tuple], backend: str = "loky", jobs: int = 1,
                      scheduler=None) -> Iterator:
    """Yield ``fn(*args)`` for every ``args`` in ``calls``, in completion order; an error
    of exactdp's own types raised in a worker is raised here as that type
    (:func:`carry_errors`).  See :func:`_unordered_results` for the parameters."""
    try:
        yield from _unordered_results(carry_errors, ((fn, *args) for args in calls), backend, jobs, scheduler)
    except _Carried as carried:
        raise carried.rebuilt() from None


def _unordered_results(fn: Callable, calls: Iterable[tuple], backend: str = "loky", jobs: int = 1,
                       scheduler=None) -> Iterator:
    """Yield ``fn(*args)`` for every ``args`` in ``calls``, in completion order.

    Parameters
    ----------
    fn : callable
        A module-level function (every backend pickles it by reference).
    calls : iterable of tuple
        The arguments of each task.
    backend : {"loky", "dask", "ray"}
    jobs : int
        Parallel workers (``-1``: all cores, or all CPUs of the ray cluster).
    scheduler : str or dask.distributed.Client, optional
        The cluster to connect to (dask: required; ray: optional).
    """
    check_backend(backend, scheduler)
    if backend == "ray":
        yield from _ray_results(fn, iter(calls), jobs, scheduler)
        return
    from joblib import Parallel, delayed, parallel_config

    with contextlib.ExitStack() as stack:
        if backend == "loky":
            stack.enter_context(parallel_config(backend="loky", n_jobs=jobs, inner_max_num_threads=1))
        else:
            stack.enter_context(_quiet_dask())
            with _scheduler_errors(scheduler):
                from dask.distributed import Client

                if not isinstance(scheduler, Client):  # the context keeps the connection open for the sweep
                    stack.enter_context(Client(scheduler, timeout=DASK_CONNECT_SECONDS))
            stack.enter_context(parallel_config(backend="dask", n_jobs=jobs, wait_for_workers_timeout=60))
        with workers_ignore_sigint():  # the call starts the pool (loky: its worker processes)
            results = Parallel(return_as="generator_unordered")(delayed(fn)(*args) for args in calls)
        if backend == "loky":
            yield from results
            return
        while True:
            with _scheduler_errors(scheduler):
                try:
                    item = next(results)
                except StopIteration:
                    return
            yield item


#: seconds to wait for a dask scheduler to answer before the sweep is refused
DASK_CONNECT_SECONDS = 30


@contextlib.contextmanager
def _scheduler_errors(scheduler):
    """A dask scheduler that cannot be reached or is lost: one :class:`InputError`
    naming ``--scheduler`` (the connection errors of distributed are ``OSError`` and
    ``TimeoutError``)."""
    try:
        yield
    except (OSError, TimeoutError) as exc:
        raise InputError("scheduler", str(scheduler), f"the dask scheduler cannot be reached or was lost "
                                                      f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]}); "
                                                      f"finished pairs are kept, --resume finishes the sweep") from None


@contextlib.contextmanager
def _quiet_dask():
    """distributed's log lines (connection retries, a lost scheduler: dozens of lines)
    silenced for the sweep; the one error line says what happened."""
    names = ("distributed", "distributed.client", "distributed.comm", "distributed.core", "distributed.batched",
             "distributed.worker")
    loggers = [logging.getLogger(n) for n in names]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        yield
    finally:
        for lg, level in zip(loggers, levels):
            lg.setLevel(level)


def _ray_results(fn: Callable, calls: Iterator, jobs: int, address) -> Iterator:
    import ray

    started = False
    if not ray.is_initialized():
        if address is None:  # a private local instance, never someone else's cluster
            ray.init(address="local", num_cpus=jobs if jobs > 0 else os.cpu_count(), include_dashboard=False,
                     logging_level=logging.WARNING, log_to_driver=False)
        else:
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
        started = True
    pending: list = []
    try:
        remote = ray.remote(num_cpus=1, max_retries=3)(fn)
        limit = jobs if jobs > 0 else max(1, int(ray.cluster_resources().get("CPU", 1)))
        todo = iter(calls)
        for args in todo:
            pending.append(remote.remote(*args))
            if len(pending) >= limit:
                break
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            for args in todo:  # keep `limit` tasks in flight
                pending.append(remote.remote(*args))
                break
            yield ray.get(done[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()


@contextlib.contextmanager
def workers_ignore_sigint():
    """Within the block, the local worker processes loky starts inherit SIGINT ignored
    (an ignored signal stays ignored across ``exec``, and Python then installs no
    ``KeyboardInterrupt`` handler): a Ctrl-C while they start and import prints no worker
    traceback.  loky starts each worker with ``fork_exec`` of
    ``joblib.externals.loky.backend.fork_exec`` (looked up at each start); within the
    block it is wrapped so that this process ignores SIGINT for the instant of each start
    only (in the main thread: ``signal.signal`` works nowhere else): a Ctrl-C within those
    few milliseconds is not seen (pressed again, it is), any other reaches the driver.
    Without that module (another joblib) nothing changes."""
    try:
        from joblib.externals.loky.backend import fork_exec as spawner
    except ImportError:  # pragma: no cover - another joblib layout
        yield
        return
    original = getattr(spawner, "fork_exec", None)
    if original is None:  # pragma: no cover
        yield
        return

    def fork_exec(*args, **kwargs):
        if threading.current_thread() is not threading.main_thread():
            return original(*args, **kwargs)
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            return original(*args, **kwargs)
        finally:
            signal.signal(signal.SIGINT, previous)

    spawner.fork_exec = fork_exec
    try:
        yield
    finally:
        spawner.fork_exec = original
