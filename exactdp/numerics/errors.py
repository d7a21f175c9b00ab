"""The exceptions of exactdp (imported by every layer; this module imports nothing).

* :class:`InputError` — bad user input; the message names the field and the value
  (the CLI exits with status 2).
* :class:`UncertifiedError` — the requested accuracy could not be certified (the CLI
  exits with status 3 and says what to try).
* :class:`LatticeTooLarge` — a design's exact privacy-loss lattice is beyond the range of
  an engine's integer phase arithmetic (a control signal between engine layers, never a
  plain ``ValueError``).
"""

from __future__ import annotations

__all__ = ["InputError", "UncertifiedError", "LatticeTooLarge"]


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
        super().__init__(f"{field}={value!r}: {reason}")


class UncertifiedError(ArithmeticError):
    """A number could not be certified to the requested accuracy."""


class LatticeTooLarge(ArithmeticError):
    """The exact lattice of a design is too large for an engine's phase arithmetic."""
