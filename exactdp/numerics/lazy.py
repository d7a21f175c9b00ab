"""Lazy package attributes (PEP 562): a package's public names load on first use.

Used by the package face (:mod:`exactdp`) and by :mod:`exactdp.dgauss`, so that importing
them (or a submodule that needs no kernel) does not compile or load Numba kernels.
"""

from __future__ import annotations

import importlib
import sys

__all__ = ["lazy_names"]


def lazy_names(package: str, names: dict):
    """The ``(__getattr__, __dir__)`` hooks of ``package`` for ``names`` (public name → the
    module defining it); a name is imported on first access and then cached in the
    package's namespace."""

    def __getattr__(name: str):
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__():
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__
