"""Pairs of a sweep that compose the same mechanisms: computed once, written relabelled.

:func:`exactdp.sweep.pair.compute_pair` depends on a pair's ρ only through their multiset
(the composition groups equal mechanisms), and on its labels ``(i, j)`` only through the
``path_i, path_j`` fields of the ε–δ rows.  In the 2020 DHC allocation 106 of the 946
pairs share their multiset with another pair.
"""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

from exactdp.sweep.pair import PairResult

__all__ = ["composition_key", "relabel"]


def composition_key(rhos) -> tuple:
    """What :func:`compute_pair` depends on besides the labels: the multiset of ρ (two
    pairs with the same multiset compose the same mechanisms, so have the same numbers)."""
    return tuple(sorted(Counter(Fraction(r) for r in rhos).items()))


def relabel(result: PairResult, i: int, j: int) -> PairResult:
    """``result`` as :func:`compute_pair` returns it for pair ``(i, j)`` of the same
    composition: only the ``path_i, path_j`` fields of the ε–δ rows carry the labels."""
    lines = result.curve_csv.split("\n")
    head = f"{i},{j},"
    out = [lines[0]]
    for ln in lines[1:]:
        if ln:
            _, _, rest = ln.split(",", 2)
            ln = head + rest
        out.append(ln)
    return PairResult(i, j, "\n".join(out), result.tradeoff_csv, result.grid_csv, dict(result.diagnostics),
                      {k: 0.0 for k in result.seconds})
