"""The 2020 Census layer: allocation files, the built-in allocations, designs of pairs
and of the whole release (DHC ∘ P.L. 94-171).

* :mod:`exactdp.census.allocation_format` — our TOML format (parse, validate, dump);
* :mod:`exactdp.census.allocations` — :class:`Allocation`, :func:`load_allocation`;
* :mod:`exactdp.census.designs` — compositions of pairs and of the whole release;
* :mod:`exactdp.census.release` — certified brackets of the whole release.
"""

from __future__ import annotations

from exactdp.census.allocations import Allocation, builtin_allocations, load_allocation, parse_pair_spec

__all__ = ["Allocation", "load_allocation", "builtin_allocations", "parse_pair_spec"]
