"""Pairs of a sweep that compose the same mechanisms: computed once, written relabelled.

:func:`exactdp.sweep.pair.compute_pair` depends on a pair's ρ only through the composition
they define (its groups of equal mechanisms), and on its labels ``(i, j)`` only through the
``path_i, path_j`` fields of the ε–δ rows.  In the 2020 DHC allocation 106 of the 946
pairs share their multiset with another pair.
"""

from __future__ import annotations

from collections import Counter

from exactdp.sweep.pair import PairResult

__all__ = ["composition_key", "relabel"]


def composition_key(rhos) -> tuple:
    """What :func:`compute_pair` depends on besides the labels: the multiset of the
    non-zero ρ, which :meth:`~exactdp.mechanisms.Composition.from_rhos` turns into the
    composition's groups (a ρ of 0 adds no mechanism).  Counted directly: building the
    composition costs ~5× more, serially in the driver, for the same grouping."""
    return tuple(sorted(Counter(r for r in rhos if r).items()))


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
