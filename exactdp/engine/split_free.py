"""Exact tails with the near-deterministic groups taken out: shifted thresholds.

A group with σ² < :data:`exactdp.engine.split.WINDOW_MIN_S2` has a short support and no
useful sub-Gaussian window; with a large weight it also has a huge mgf, so the tilted
window bound of the enumeration (a Chernoff bound over *all* groups under one tilt)
becomes useless exactly where its atoms matter (a tiny-σ² mechanism with a big shift: δ
jumps by its rare atoms).  Conditioning on those *free* groups instead,

    P(W > t) = Σ_v p_v · P(W_R > t − v),   v = Σ_{g free} w_g s_g (exact rationals),

where W_R is the rest of the design, answered by the exact engines
(:class:`~exactdp.engine.split.SplitTails`, then
:class:`~exactdp.engine.split_sorted.SortedSplitTails`) at the shifted thresholds, each
with its own tilt.  Error bound: the inner certified intervals, the relative error of the
free pmf entries and of the sums of non-negative terms, plus the free groups' truncated
mass ``Σ m·2e^{−690}``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.split import TRUNC, WINDOW_MIN_S2, SplitTails, TooManyAtoms, _group_pmf
from exactdp.engine.split_sorted import SortedSplitTails
from exactdp.numerics.precision import EPS64

__all__ = ["FreeShiftTails", "exact_tails", "MAX_FREE_ATOMS"]

#: largest joint support of the free groups (each a shifted threshold)
MAX_FREE_ATOMS = 512


def exact_tails(groups, rel_tol: float):
    """The cheapest exact engine for ``groups``: split, then meet in the middle, each with
    the free (tiny-σ²) groups as shifted thresholds when there are few of their atoms.

    Raises
    ------
    TooManyAtoms
        With the reasons of every engine tried.
    """
    free = [g for g in groups if float(g.sigma2) < WINDOW_MIN_S2]
    rest = [g for g in groups if float(g.sigma2) >= WINDOW_MIN_S2]
    wrap = bool(free) and bool(rest) and math.prod(_group_pmf(float(g.sigma2), g.count)[0].size for g in free) \
        <= MAX_FREE_ATOMS
    errors = []
    for kind in (SplitTails, SortedSplitTails):
        try:
            if wrap:
                return FreeShiftTails(free, kind(rest, rel_tol=rel_tol), groups)
            return kind(groups, rel_tol=rel_tol)
        except TooManyAtoms as exc:
            errors.append(str(exc))
    raise TooManyAtoms("; ".join(errors))


class FreeShiftTails:
    """Certified ``P(W > t)`` / ``P(W ≥ t)`` as a mixture of an exact engine's tails over
    the atoms of the free groups (see module)."""

    def __init__(self, free, inner, groups):
        self.inner = inner
        self.groups = tuple(groups)
        vals, probs, rel = [Fraction(0)], np.ones(1), 0.0
        for g in free:
            p, r = _group_pmf(float(g.sigma2), int(g.count))
            half = (p.size - 1) // 2
            keep = np.flatnonzero(p > 0)
            vals = [v + g.weight * int(k - half) for v in vals for k in keep]
            probs = (probs[:, None] * p[keep][None, :]).ravel()
            rel += r + 2 * EPS64
        self.values = vals
        self.probs = probs
        self.rel = rel + (len(vals) + 4) * EPS64
        self.abs_trunc = 2.0 * math.exp(-TRUNC) * sum(g.count for g in free)
        self.n_atoms = inner.n_atoms * len(vals)
        self.method = inner.method

    def intervals(self, ts, strict: bool = True) -> list:
        """Certified float ``(lo, hi)`` of ``P(W > t)`` (strict) or ``P(W ≥ t)``."""
        ts = list(ts)
        n = len(self.values)
        shifted = []
        for t in ts:
            if isinstance(t, (Fraction, int)):
                shifted.extend(t - v for v in self.values)
            else:
                with mpmath.workdps(80):
                    shifted.extend(mpmath.mpf(t) - mpmath.mpf(v.numerator) / v.denominator for v in self.values)
        iv = np.array(self.inner.intervals(shifted, strict), dtype=float).reshape(len(ts), n, 2)
        lo = (iv[:, :, 0] * self.probs[None, :]).sum(axis=1) * (1 - self.rel)
        hi = (iv[:, :, 1] * self.probs[None, :]).sum(axis=1) * (1 + self.rel) + self.abs_trunc
        return [(max(a, 0.0), min(b, 1.0)) for a, b in zip(lo, hi)]

    def tails(self, ts, strict: bool = True) -> list:
        """``(value, rel_error)`` (midpoint and half-width of :meth:`intervals`)."""
        out = []
        for lo, hi in self.intervals(ts, strict):
            v = 0.5 * (lo + hi)
            out.append((v, (0.5 * (hi - lo) + 2 * EPS64 * v) / v if v > 0 else math.inf))
        return out
