"""The cost budget: how much time and memory one request may be estimated to need.

A request whose estimated cost is beyond the budget is refused at once with one line
(:class:`~exactdp.numerics.errors.BudgetExceeded`, an :class:`InputError`: exit status 2
on the command line) instead of being started; the user raises the budget when the cost
is intended.  Estimates are made from the request alone (sizes, counts, resolutions),
before any work, by the layer that knows the cost (:func:`check_cost`).

The budget (:class:`Budget`) is, in order of precedence:

* in Python, the innermost ``with cost_budget(seconds=..., memory=...):``;
* on the command line, ``--budget-seconds S`` and ``--budget-memory SIZE`` (which set
  the same context for the command);
* the environment variables ``EXACTDP_BUDGET_SECONDS`` and ``EXACTDP_BUDGET_MEMORY``;
* the request's own default — :data:`DEFAULT_SECONDS` (a minute) and
  :data:`DEFAULT_MEMORY` (2 GB) for a query; an hour of wall-clock time for a sweep,
  whose pairs are checkpointed, resumable and shown in progress.

Time is the estimated wall-clock time of the request; memory is per process (for a
sweep: per worker).

The hook for any layer that can estimate a cost before it starts (the sweep's planner
does, :mod:`exactdp.sweep.plan`; an engine that sizes a lattice or a node set can):
``check_cost(field, value, seconds=..., memory=..., what=...)`` raises
:class:`BudgetExceeded`, whose one-line message is ``{field}={value}: {what} would need
about {estimate}, beyond the time budget of {limit} (raise it with --budget-seconds)``
(and likewise for memory); the command line exits with status 2, naming the field.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import re
from dataclasses import dataclass

from exactdp.numerics.errors import BudgetExceeded, InputError

__all__ = ["Budget", "DEFAULT_SECONDS", "DEFAULT_MEMORY", "current_budget", "cost_budget", "check_cost",
           "parse_size", "BudgetExceeded"]

#: default time budget of one request (seconds)
DEFAULT_SECONDS = 60.0
#: default memory budget of one request (bytes)
DEFAULT_MEMORY = 2e9

_UNITS = {"": 1, "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
          "kib": 2**10, "mib": 2**20, "gib": 2**30, "tib": 2**40}
_SIZE = re.compile(r"\s*([0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?)\s*([a-zA-Z]*)\s*", re.ASCII)


@dataclass(frozen=True)
class Budget:
    """A cost budget: ``seconds`` of wall-clock time and ``memory`` bytes (of one
    process) for one request."""

    seconds: float = DEFAULT_SECONDS
    memory: float = DEFAULT_MEMORY

    def __post_init__(self):
        for name, v in (("seconds", self.seconds), ("memory", self.memory)):
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not 0 < v < float("inf"):
                raise InputError(f"budget {name}", v, "must be a positive finite number")


def parse_size(text, field: str = "--budget-memory") -> float:
    """``"2G"``, ``"500MB"``, ``"1.5GiB"`` or a number of bytes, as bytes."""
    m = _SIZE.fullmatch(str(text))
    unit = m.group(2).lower() if m else None
    if m is None or unit not in _UNITS:
        raise InputError(field, text, "expected a size such as 2G, 500MB, 1.5GiB or a number of bytes")
    value = float(m.group(1)) * _UNITS[unit]
    if not 0 < value < float("inf"):
        raise InputError(field, text, "must be a positive size")
    return value


def parse_seconds(text, field: str = "--budget-seconds") -> float:
    """A positive number of seconds (``"600"``, ``"1e4"``)."""
    m = _SIZE.fullmatch(str(text))
    if m is None or m.group(2).lower() not in ("", "s"):
        raise InputError(field, text, "expected a number of seconds, e.g. 600")
    value = float(m.group(1))
    if not 0 < value < float("inf"):
        raise InputError(field, text, "must be a positive number of seconds")
    return value


_CURRENT: contextvars.ContextVar = contextvars.ContextVar("exactdp_cost_budget", default=(None, None))


def current_budget(default_seconds: float | None = None, default_memory: float | None = None) -> Budget:
    """The budget in force (see the module docstring for the order); where neither a
    context nor the environment sets a part, ``default_seconds`` / ``default_memory``
    (a request's own default, e.g. a sweep's), else :data:`DEFAULT_SECONDS` /
    :data:`DEFAULT_MEMORY`."""
    seconds, memory = _CURRENT.get()
    if seconds is None:
        env = os.environ.get("EXACTDP_BUDGET_SECONDS")
        seconds = parse_seconds(env, "EXACTDP_BUDGET_SECONDS") if env else default_seconds or DEFAULT_SECONDS
    if memory is None:
        env = os.environ.get("EXACTDP_BUDGET_MEMORY")
        memory = parse_size(env, "EXACTDP_BUDGET_MEMORY") if env else default_memory or DEFAULT_MEMORY
    return Budget(seconds, memory)


@contextlib.contextmanager
def cost_budget(seconds: float | None = None, memory: float | None = None):
    """Run the ``with`` block under a budget of ``seconds`` and ``memory`` bytes (``None``:
    keep that part as it is)."""
    now_s, now_m = _CURRENT.get()
    if seconds is not None or memory is not None:
        Budget(seconds or 1.0, memory or 1.0)  # validates the given parts
    token = _CURRENT.set((now_s if seconds is None else seconds, now_m if memory is None else memory))
    try:
        yield current_budget()
    finally:
        _CURRENT.reset(token)


def check_cost(field: str, value, *, seconds: float | None = None, memory: float | None = None,
               what: str = "", default_seconds: float | None = None) -> None:
    """Refuse (:class:`BudgetExceeded`) a request estimated to need more than the budget.

    Parameters
    ----------
    field, value
        What makes the request costly, as the user named it (``"--tradeoff-half"``,
        ``1000000000``); the message names them.
    seconds, memory : float, optional
        The estimate: wall-clock seconds and bytes (either may be omitted).
    what : str
        The request in words (``"one pair's trade-off curve"``), for the message.
    default_seconds : float, optional
        The request's own default time budget (:func:`current_budget`).
    """
    budget = current_budget(default_seconds)
    if (seconds is not None and seconds > budget.seconds) or (memory is not None and memory > budget.memory):
        raise BudgetExceeded(field, value, seconds=seconds, memory=memory, limit_seconds=budget.seconds,
                             limit_memory=budget.memory, what=what)
