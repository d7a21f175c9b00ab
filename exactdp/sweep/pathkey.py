"""Readable names of an allocation's paths: which geographic levels each one spends at.

A path of an allocation (e.g. the 43 of the 2020 DHC persons file) is a pattern of
per-level multipliers; a level with multiplier 0 is bypassed by the spine optimiser.  The
figures and the report name a path by its number and one letter per level, the letter
where the path spends budget and ``·`` where it bypasses the level: path 13 of the DHC
persons file (the full 8-level chain) is ``13 USCPTRBL``, path 6 (US and State only)
``6 US······``.  The letters are chosen from each level's name (its initials first) so
that no two levels share one; :func:`path_key` returns the labels and the key.
"""

from __future__ import annotations

__all__ = ["level_letters", "path_key"]


def level_letters(levels) -> tuple[str, ...]:
    """One distinct upper-case letter per level name, initials of its parts first
    (``Tract_Subset_Group`` → ``T``), then its other letters, then any free letter."""
    used: list[str] = []
    for name in levels:
        parts = [p for p in str(name).replace("-", "_").split("_") if p]
        initials = [p[0].upper() for p in parts if p[0].isalpha()]
        rest = [c.upper() for c in str(name) if c.isalpha()]
        spare = [chr(c) for c in range(ord("A"), ord("Z") + 1)] + [str(d) for d in range(10)]
        letter = next((c for c in initials + rest + spare if c not in used), "?")
        used.append(letter)
    return tuple(used)


def path_key(allocation) -> tuple[tuple[str, ...], str]:
    """``(labels, key)`` of an :class:`~exactdp.census.allocations.Allocation`'s paths.

    ``labels[k]`` names path ``k + 1``: its number, then per level its letter or ``·``;
    ``key`` explains the letters (one line).  Plain strings, so they can be handed to the
    figures' process.
    """
    letters = level_letters(allocation.levels)
    width = len(str(allocation.n_paths))
    labels = []
    for k, mult in enumerate(allocation.paths, start=1):
        code = "".join(c if m != 0 else "·" for c, m in zip(letters, mult))
        labels.append(f"{k:>{width}} {code}")
    key = "levels: " + ", ".join(f"{c} = {lev}" for c, lev in zip(letters, allocation.levels))
    return tuple(labels), key + "; · = level bypassed (its budget moved to a neighbouring level)"
