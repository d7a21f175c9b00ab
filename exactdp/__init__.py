"""exactdp: exact, certified privacy accounting for discrete Gaussian compositions."""

from __future__ import annotations

__version__ = "0.1.0"

from exactdp.exact import InputError, fraction_str, to_fraction  # noqa: E402

__all__ = ["__version__", "InputError", "to_fraction", "fraction_str"]
