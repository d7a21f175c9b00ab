"""The package version, read from the installed metadata (written only in pyproject.toml).

Looked up on first access of ``__version__`` (PEP 562): :mod:`importlib.metadata` costs
tens of milliseconds to import, which a CLI call that never shows the version should not pay.
"""

from __future__ import annotations

__all__ = ["__version__"]  # noqa: F822 - provided by the module __getattr__ (PEP 562)


def __getattr__(name: str):
    if name != "__version__":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("exactdp")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without installing
        value = "0+unknown"
    globals()["__version__"] = value
    return value
