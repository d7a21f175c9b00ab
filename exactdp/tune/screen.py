"""The screened full check: every pair at a loose tolerance, the tuner's precise numbers
only where a decision could depend on them.

A full check (:meth:`exactdp.tune.search.Tuner.verify`) decides, from every pair's
certified bracket ``[L_p, U_p]`` of δ(ε): the violators (``U_p > δ``), the ``n_top``
largest ``U_p`` (the active pairs; the largest is the worst pair), and the pairs within
1e-3 of the largest (:meth:`~exactdp.tune.search.Tuner.gradient_pair`).  Most pairs
are far from every such threshold, so :func:`screened_results` first brackets every
pair at a loose tolerance (``[l_p, u_p]``, ≈ 0.55 of the cost at ``1e-5``), then
evaluates at the run's tolerance only the pairs a decision could depend on.

The precise bracket of a screened pair contains δ_p ≥ l_p, and its width is at most
``w`` relative (the accountant's guarantee: ``max(1e-9, 10·rel_tol)``, or it refuses),
so ``U_p`` lies in ``[l_p, u_p·(1 + w)]`` (:func:`precise_margin`).  A pair is kept
screened only if every decision above is the same for every value in that range, and
the same for ``u_p`` itself (the number the results then carry), so the decisions —
hence the tuner's path and its result — are those of the precise numbers on every pair.
Every number in the results is a certified bracket either way.
"""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

__all__ = ["SCREEN_TOL", "screened_results", "precise_margin", "screen_tol_for"]

#: the screen's tail tolerance: its brackets come out ≈ 6e-8 relative wide on DHC pairs, at
#: ≈ 0.55 of the cost of the run's 1e-10.  At 1e-4 or 1e-3 (≈ 6e-7, 6e-6 wide; 0.45, 0.4
#: of the cost) the 43 DHC pairs within 1e-7 of the 4th largest δ — the costliest pairs —
#: were evaluated precisely at every check (5–6 at 1e-5): slower in all (bench/tune.md)
SCREEN_TOL = 1e-5


def precise_margin(rel_tol: float) -> Fraction:
    """``w``: a precise bracket at ``rel_tol`` is at most this wide, relative to its
    upper end — the accountant refuses one wider than ``2·max(1e-9, 10·rel_tol)`` times
    its estimate (:mod:`exactdp.accounting.lattice_route`); four times that, as an exact
    rational, covers the estimate's own offset from either end."""
    return Fraction(max(1e-9, 10 * rel_tol)) * 8


def screen_tol_for(screen_tol: float | None, rel_tol: float) -> float | None:
    """The screen's tolerance, or None (no screen) when it would not be at least 1000
    times looser than the run's own (the screen would cost as much as it saves)."""
    if screen_tol is None or not screen_tol >= 1000 * rel_tol:
        return None
    return float(screen_tol)


def screened_results(coarse: dict, precise: Callable[[list], dict], delta: Fraction, n_top: int,
                     w: Fraction) -> dict:
    """Every pair's bracket: the precise one where a decision could depend on it, else
    the screen's.

    Parameters
    ----------
    coarse : dict
        ``{pair: DeltaBound}`` of every pair at the screen's tolerance.
    precise : callable
        ``precise(pairs) -> {pair: DeltaBound}`` at the run's tolerance (called a few
        times, each with pairs not asked before).
    delta : Fraction
        The target δ.
    n_top : int
        How many of the largest upper ends the caller ranks (the active pairs).
    w : Fraction
        :func:`precise_margin` of the run's tolerance.

    Notes
    -----
    Method: with ``hi_p = u_p·(1 + w)`` (≥ every possible precise ``U_p`` and ≥ ``u_p``),
    ``l_p`` ≤ both: a pair stays screened only when ``hi_p ≤ δ`` or ``l_p > δ``
    (violator or not, alike); ``hi_p < T``, T the ``n_top``-th largest precise upper end
    (outside the top in either case: it ranks below ``n_top`` precise pairs); and
    ``1001·hi_p < 1000·top`` or ``1001·l_p ≥ 1000·top`` (within 1e-3 of the largest or
    not, alike).  Pairs are taken in order of ``u_p`` (largest first) until T settles.
    Exact rational comparisons throughout.
    """
    one_w = 1 + Fraction(w)
    order = sorted(coarse, key=lambda p: (-coarse[p].upper, p))
    hi = {p: coarse[p].upper * one_w for p in order}
    lo = {p: coarse[p].lower for p in order}
    got: dict = {}

    def ask(pairs) -> None:
        todo = [p for p in dict.fromkeys(pairs) if p not in got]
        if todo:
            res = precise(todo)
            for p in todo:
                got[p] = res[p]

    n_top = max(1, int(n_top))
    ask([p for p in order if lo[p] <= delta < hi[p]] + order[:n_top])
    while True:
        ranked = sorted(got, key=lambda p: (-got[p].upper, p))
        if len(ranked) < n_top:
            more = [p for p in order if p not in got][:n_top - len(ranked)]
        else:
            t = got[ranked[n_top - 1]].upper
            more = [p for p in order if p not in got and hi[p] >= t]
        if not more:
            break
        ask(more)
    top = max(b.upper for b in got.values())
    ask([p for p in order if p not in got and 1001 * lo[p] < 1000 * top <= 1001 * hi[p]])
    return {p: got.get(p, coarse[p]) for p in coarse}
