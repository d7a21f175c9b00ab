"""The exceptions of exactdp (imported by every layer; this module imports nothing).

* :class:`InputError` — bad user input; the message names the field and the value
  (the CLI exits with status 2).
* :class:`BudgetExceeded` — an :class:`InputError`: the estimated cost of what was asked
  is beyond the cost budget (:mod:`exactdp.numerics.budget`); refused before any work
  (exit status 2), the message says how to raise the budget.
* :class:`UncertifiedError` — the requested accuracy could not be certified (the CLI
  exits with status 3 and says what to try).
* :class:`LatticeTooLarge` — a design's exact privacy-loss lattice is beyond the range of
  an engine's integer phase arithmetic (a control signal between engine layers, never a
  plain ``ValueError``).
"""

from __future__ import annotations

__all__ = ["InputError", "BudgetExceeded", "UncertifiedError", "LatticeTooLarge"]


class InputError(ValueError):
    """Bad user input; the message names the field and the value.

    Attributes
    ----------
    field : str
        The name of the offending parameter (as the user would spell it).
    value : object
        The value that was given.
    reason : str
        Why it was refused and, where useful, how to pass it instead.
    """

    def __init__(self, field: str, value, reason: str):
        self.field = field
        self.value = value
        self.reason = reason
        super().__init__(f"{field}={_shown(value)}: {reason}")


#: longest repr of a value shown in a message
_SHOWN_CHARS = 80


def _shown(value) -> str:
    """``repr(value)``, cut in the middle when long; an integer too long for text (over
    CPython's 4300 digits) by its size."""
    try:
        text = repr(value)
    except ValueError:  # int → str beyond sys.get_int_max_str_digits()
        return f"<{type(value).__name__} of {abs(int(value)).bit_length()} bits>"
    if len(text) > _SHOWN_CHARS:
        text = f"{text[:36]}…{text[-36:]} ({len(text)} characters)"
    return text


class BudgetExceeded(InputError):
    """The estimated cost of a request is beyond the cost budget: refused before any work.

    Attributes
    ----------
    field, value : str, object
        What the user asked that makes it costly (``--tradeoff-half``, ``sigma2``...).
    seconds, memory : float or None
        The estimate (wall-clock seconds, bytes), where known.
    limit_seconds, limit_memory : float
        The budget it exceeds.
    """

    def __init__(self, field: str, value, *, seconds=None, memory=None, limit_seconds: float, limit_memory: float,
                 what: str = ""):
        self.seconds, self.memory = seconds, memory
        self.limit_seconds, self.limit_memory = limit_seconds, limit_memory
        parts = []
        if seconds is not None and seconds > limit_seconds:
            parts.append(f"about {_duration(seconds)}, beyond the time budget of {_duration(limit_seconds)} "
                         f"(raise it with --budget-seconds)")
        if memory is not None and memory > limit_memory:
            parts.append(f"about {_size(memory)} of memory, beyond the memory budget of {_size(limit_memory)} "
                         f"(raise it with --budget-memory)")
        lead = f"{what} would need " if what else "would need "
        super().__init__(field, value, lead + " and ".join(parts or ["more than the cost budget"]))


def _duration(seconds: float) -> str:
    for unit, size in (("days", 86400), ("h", 3600), ("min", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:.3g} {unit}"
    return f"{seconds:.3g} s"


def _size(nbytes: float) -> str:
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6)):
        if nbytes >= size:
            return f"{nbytes / size:.3g} {unit}"
    return f"{nbytes:.3g} bytes"


class UncertifiedError(ArithmeticError):
    """A number could not be certified to the requested accuracy."""


class LatticeTooLarge(ArithmeticError):
    """The exact lattice of a design is too large for an engine's phase arithmetic."""
