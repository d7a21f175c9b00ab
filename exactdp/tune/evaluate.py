"""Certified δ(ε) of many compositions: the tuner's one evaluator, and its target.

:func:`delta_bound` is *the* evaluator: a pure, module-level function of one pair's ρ
(unit-shift discrete Gaussians, σ² = 1/ρ), the target and the tail tolerance, returning a
certified bracket of δ(ε) as exact dyadic rationals.  It is the one function to replace
when a faster exact route exists (issue 24, the lattice-free engine): the tuner only asks
``evaluator(rhos, target, rel_tol) -> DeltaBound``.  :class:`BatchEvaluator` runs it over
distinct compositions on the sweep's backends (:func:`exactdp.runs.backends.unordered_results`)
and returns the results in the order asked, so nothing depends on the worker count.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction

import mpmath
from mpmath.libmp import to_man_exp

from exactdp.numerics.bracket import RationalBracket
from exactdp.numerics.exact import InputError, decimal_exponent, fraction_str, to_fraction
from exactdp.numerics.precision import DPS_GUARD

__all__ = ["Target", "DeltaBound", "delta_bound", "composition_key", "CompositionKey", "BatchEvaluator"]


#: the largest target ε (the accountants refuse |ε| above it)
EPS_MAX = Fraction(10**50)


def _bureau_eps_float(rho: Fraction, delta: Fraction) -> float:
    """ρ + 2·sqrt(ρ·ln(1/δ)) in float64 (only to compare with the range of ε; inf when huge)."""
    import math

    try:
        r = float(rho)
        return r + 2 * math.sqrt(r * (math.log(int(delta.denominator)) - math.log(int(delta.numerator))))
    except OverflowError:
        return math.inf


@dataclass(frozen=True)
class Target:
    """The privacy target: δ(ε) ≤ ``delta`` at ``eps`` for every neighbour pair.

    ``eps`` is an exact rational, or None for the Bureau's ε_BS(δ) = ρ + 2·sqrt(ρ·ln(1/δ))
    at ``bureau_rho`` (the input allocation's ρ: an exact real, never rounded).
    """

    delta: Fraction
    eps: Fraction | None = None
    bureau_rho: Fraction | None = None

    def __post_init__(self):
        d = to_fraction(self.delta, "delta")
        if not 0 < d < 1:
            raise InputError("delta", self.delta, "must lie in (0, 1)")
        object.__setattr__(self, "delta", d)
        if self.eps is None:
            if self.bureau_rho is None:
                raise InputError("eps", None, "give eps, or bureau_rho for the Bureau's epsilon")
            object.__setattr__(self, "bureau_rho", to_fraction(self.bureau_rho, "rho"))
        else:
            e = to_fraction(self.eps, "eps")
            if not 0 <= e <= EPS_MAX:
                raise InputError("eps", self.eps, "must lie in [0, 1e50] (the engine's range of epsilon)")
            object.__setattr__(self, "eps", e)
        if self.eps is None:
            rho = self.bureau_rho
            if rho <= 0:
                raise InputError("rho", fraction_str(rho), "the allocation spends no budget (total rho 0); give --eps")
            if rho >= EPS_MAX / 2 or _bureau_eps_float(rho, d) > 1e50:
                raise InputError("rho", f"~1e{decimal_exponent(rho)}",
                                 "the Bureau's epsilon of this total rho lies beyond the engine's range [0, 1e50] "
                                 "of epsilon; give a smaller budget or --eps")

    def epsilon(self):
        """ε as the accountant takes it (a Fraction, or the exact-real callable)."""
        if self.eps is not None:
            return self.eps
        return _bureau_epsilon(self.bureau_rho, self.delta)

    def as_dict(self) -> dict:
        if self.eps is not None:
            return {"delta": fraction_str(self.delta), "eps": fraction_str(self.eps), "eps_rule": "given"}
        assert self.bureau_rho is not None  # __post_init__ requires eps or bureau_rho
        return {"delta": fraction_str(self.delta), "eps": None,
                "eps_rule": "Bureau eps_BS(delta) = rho + 2 sqrt(rho ln(1/delta)) at "
                f"rho = {fraction_str(self.bureau_rho)}"}

    def eps_decimal(self, digits: int = 20) -> str:
        with mpmath.workdps(digits + DPS_GUARD):
            e = self.epsilon()
            v = mpmath.mpf(e.numerator) / e.denominator if isinstance(e, Fraction) else e(digits + DPS_GUARD)
            return mpmath.nstr(v, digits, strip_zeros=False)


@functools.lru_cache(maxsize=16)
def _bureau_epsilon(rho: Fraction, delta: Fraction):
    """``bun_steinke_epsilon(rho, delta)``, one callable per worker and target: its values are
    memoised per precision (a pure function of the digits asked), so the tuner's thousands of
    evaluations at the one ε compute each precision once.  (The accountant wraps it in a
    fresh :class:`~exactdp.numerics.exact.MemoReal` per evaluation, as before.)"""
    from exactdp.accounting.accountant import bun_steinke_epsilon

    return bun_steinke_epsilon(rho, delta)


def _dyadic(x) -> Fraction:
    """An mpmath number as the exact rational it is."""
    man, exp = to_man_exp(mpmath.mpf(x)._mpf_, signed=True) if x else (0, 0)
    man = int(man)
    return Fraction(man << exp) if exp >= 0 else Fraction(man, 1 << -exp)  # man·2^exp, reduced


@dataclass(frozen=True)
class DeltaBound(RationalBracket):
    """A certified bracket ``lower ≤ δ(ε) ≤ upper`` and the engine's estimate (exact
    dyadic rationals: decisions compare them with the target exactly); a
    :class:`~exactdp.numerics.bracket.Bracket` reporting ``upper``."""

    _NAME = "δ"

    lower: Fraction
    upper: Fraction
    estimate: Fraction

    def as_list(self) -> list:
        return [fraction_str(self.lower), fraction_str(self.upper), fraction_str(self.estimate)]

    @classmethod
    def from_list(cls, values) -> DeltaBound:
        return cls(*(Fraction(v) for v in values))


class CompositionKey(tuple):
    """A :func:`composition_key` (a tuple, equal to and hashing as the plain tuple) that
    computes its hash once: the trace's dictionaries hash a key several times, and a
    Fraction's hash inverts its denominator modulo a prime each time."""

    def __hash__(self) -> int:
        d = self.__dict__
        h = d.get("h")
        if h is None:
            h = d["h"] = tuple.__hash__(self)
        return h


def composition_key(rhos) -> tuple:
    """Two pairs with the same multiset of non-zero ρ have the same δ: the key of that multiset,
    ``((ρ, count), ...)`` with ρ ascending (each ρ a Fraction).

    Fractions are counted by their ``(numerator, denominator)`` (normalised, so equal values
    have equal pairs): hashing a Fraction inverts its denominator modulo a prime, which
    for the tuner's exact σ² of hundreds of digits was most of a key's cost."""
    seen: dict = {}  # (p, q) → [ρ, count]
    for r in rhos:
        if not r:
            continue
        if type(r) is not Fraction:
            r = Fraction(r)
        nd = (r.numerator, r.denominator)
        hit = seen.get(nd)
        if hit is None:
            seen[nd] = [r, 1]
        else:
            hit[1] += 1
    return CompositionKey(sorted((r, m) for r, m in seen.values()))


def delta_bound(rhos, target: Target, rel_tol: float = 1e-10) -> DeltaBound:
    """Certified δ(ε) of the composition of unit-shift discrete Gaussians σ² = 1/ρ.

    Notes
    -----
    Method: :class:`exactdp.accounting.accountant.ExactAccountant` (which hands designs
    beyond the int64 lattice to the big-lattice accountant).  Error bound: ``[lower,
    upper]`` is the accountant's certified bracket (≤ max(1e-9, 10·rel_tol) relative) or
    :class:`~exactdp.numerics.errors.UncertifiedError` is raised.  Reference: the
    accountant's (Su, Su & Wang; Canonne, Kamath & Steinke).
    """
    from exactdp.accounting.accountant import ExactAccountant
    from exactdp.sweep.compose import composition_from_rhos

    point = ExactAccountant(composition_from_rhos(list(rhos)), rel_tol=rel_tol).delta([target.epsilon()])[0]
    return DeltaBound(_dyadic(point.lower), _dyadic(point.value), _dyadic(point.estimate))


_THREAD_VARS = ("NUMBA_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
_READY: set = set()


def _task(k: int, fn: Callable, rhos, target: Target, rel_tol: float, driver_pid: int = 0):
    """Worker entry point: one composition (module level, so every backend pickles it).
    Once per worker: one compute thread, loky's leak guard raised, and the guard that
    ends a local worker with its driver ``driver_pid`` (the sweep's
    :func:`~exactdp.sweep.runtime.guard_worker`: ``kill -9`` of the driver leaves no
    worker behind)."""
    if os.getpid() not in _READY:  # one compute thread per worker (parallelism is across pairs)
        for var in _THREAD_VARS:
            if not (var == "NUMBA_NUM_THREADS" and "numba" in sys.modules):
                os.environ[var] = "1"
        from exactdp.sweep.runtime import allow_worker_growth, guard_worker

        allow_worker_growth()
        if driver_pid:
            guard_worker(driver_pid)
        _READY.add(os.getpid())
    return k, fn(rhos, target, rel_tol)


class BatchEvaluator:
    """Evaluate many compositions in parallel; results in the order asked.

    Parameters
    ----------
    fn : callable
        ``fn(rhos, target, rel_tol) -> DeltaBound`` (default :func:`delta_bound`); must be
        a module-level function (the backends pickle it by reference).
    backend, jobs, scheduler
        As :func:`exactdp.runs.backends.unordered_results`.
    rel_tol : float
        Certified relative accuracy of every tail.
    """

    def __init__(self, fn: Callable = delta_bound, *, backend: str = "loky", jobs: int = 1, scheduler=None,
                 rel_tol: float = 1e-10):
        from exactdp.runs.backends import check_backend

        check_backend(backend, scheduler)
        self.fn, self.backend, self.jobs, self.scheduler, self.rel_tol = fn, backend, jobs, scheduler, rel_tol
        self._close: Callable[[], object] | None = None

    def __enter__(self) -> BatchEvaluator:
        """Hold one connection for all batches: a dask Client, or a ray instance (the
        private local one when no address is given), instead of one per batch."""
        if self.backend == "dask" and isinstance(self.scheduler, str):
            from dask.distributed import Client

            client = Client(self.scheduler)
            self.scheduler, self._close = client, client.close
        elif self.backend == "ray":
            import logging

            import ray

            if not ray.is_initialized():
                if self.scheduler is None:
                    ray.init(address="local", num_cpus=self.jobs if self.jobs > 0 else os.cpu_count(),
                             include_dashboard=False, logging_level=logging.WARNING, log_to_driver=False)
                else:
                    ray.init(address=self.scheduler, logging_level=logging.WARNING, log_to_driver=False)
                self._close = ray.shutdown
        return self

    def __exit__(self, *exc) -> None:
        if self._close is not None:
            self._close()
            self._close = None

    def __call__(self, compositions: list, target: Target, rel_tol: float | None = None) -> list[DeltaBound]:
        """``fn`` of every composition, at ``rel_tol`` (default: the evaluator's)."""
        tol = self.rel_tol if rel_tol is None else rel_tol
        if not compositions:
            return []
        if self.jobs == 1 or len(compositions) == 1:
            return [self.fn(r, target, tol) for r in compositions]
        from exactdp.runs.backends import unordered_results

        out: list = [None] * len(compositions)
        calls = [(k, self.fn, tuple(r), target, tol, os.getpid()) for k, r in enumerate(compositions)]
        calls.sort(key=lambda c: len(c[2]))  # few coarse mechanisms are the slow ones: start them first
        for k, res in unordered_results(_task, calls, self.backend, self.jobs, self.scheduler):
            out[k] = res
        return out

