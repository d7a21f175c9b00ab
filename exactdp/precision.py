"""Multiprecision contexts.

exactdp never changes mpmath's global precision.  Every multiprecision computation runs
inside :func:`workdps` (a thin alias of :func:`mpmath.workdps`), which restores the
previous precision on exit, also when an exception is raised.
"""

from __future__ import annotations

import mpmath

__all__ = ["workdps", "workprec", "backend", "VERIFY_DPS"]

#: Default number of decimal digits of the verification twin.
VERIFY_DPS = 60

workdps = mpmath.workdps
workprec = mpmath.workprec


def backend() -> str:
    """The arithmetic backend of mpmath: ``"gmpy"`` when gmpy2 is in use (expected)."""
    return mpmath.libmp.BACKEND
