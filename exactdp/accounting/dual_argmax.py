"""The maximiser of the dual's G on the oracle's float estimates, for many α at once.

The fallbacks of :mod:`~exactdp.accounting.dual_tradeoff` (its zooming stencil and kink
search) start from where G's estimated lower end is largest over each α's whole ε range:
:func:`argmaxes` finds it by grids (65 points, then 17 per round, all α in one oracle call),
:func:`float_lower` gives the estimates (binary64; they only choose points, every bound is
certified by the caller).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["argmaxes", "float_lower"]


def float_lower(acc, eps: np.ndarray, alphas: np.ndarray, complement: bool = False) -> np.ndarray:
    """log of the lower end of G at each (ε, α) pair (float estimates for the search;
    −inf where not positive).  ``complement``: where δ > 1/2, ``1 − δ`` from the oracle's
    complement (positive terms) and G in log form (the kink search: α below the mass of the
    lowest atoms, G = e^ε(C − α) with C ≈ e^{−250})."""
    mag = np.abs(eps)
    lo, hi = acc.log_delta_at(mag, mag)
    d_hi = np.exp(np.minimum(hi, 0.0))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        pos = 1.0 - d_hi - np.exp(eps) * alphas
        neg = np.exp(eps) * ((1.0 - alphas) - d_hi)
        g = np.where(eps >= 0, pos, neg)
        out = np.where(g > 0, np.log(np.where(g > 0, g, 1.0)), -np.inf)
        if not complement:
            return out
        c_lo = np.log1p(-d_hi)  # log(1 − δ) from δ's upper end
        # the complement where δ's bracket neither decides C < α nor gives C − α to a factor 2
        one_minus = 1.0 - alphas
        d_lo = np.exp(np.minimum(lo, 0.0))
        open_ = ~(d_lo > one_minus) & ~(one_minus - d_hi > 0.5 * (one_minus - d_lo))
        near_one = np.flatnonzero((hi > -math.log(2)) & open_)
        if near_one.size:
            c_lo[near_one], _ = acc.log_complement_at(mag[near_one], mag[near_one])
        la = np.log(alphas)
        # ε ≥ 0: log(C − e^{ε+log α}); ε < 0: ε + log(C − α) (log C − log(1 − e^{log α − log C}))
        t = np.where(eps >= 0, eps + la, la)
        r = t - c_lo
        core = np.where(r < 0, c_lo + np.log(-np.expm1(np.where(r < 0, r, -1.0))), -np.inf)
        return np.where(eps >= 0, core, eps + core)


def argmaxes(acc, alphas: np.ndarray, lo: np.ndarray, hi: np.ndarray, complement: bool = False) -> np.ndarray:
    """The maximiser of G's lower end for each α, all α together: G is unimodal in ε
    (concave in e^ε), so the best of 65 (then 17) equally spaced points and its
    neighbours bracket the maximiser; each round shrinks the brackets 8-fold."""
    n = alphas.size
    k = 65
    grid = lo[:, None] + (hi - lo)[:, None] * np.linspace(0.0, 1.0, k)[None, :]
    best = 0.5 * (lo + hi)
    active = np.arange(n)
    for _ in range(40):
        if active.size == 0:
            break
        g = grid  # one row per active α
        vals = float_lower(acc, g.ravel(), np.repeat(alphas[active], g.shape[1]), complement).reshape(g.shape)
        idx = np.argmax(vals, axis=1)
        rows = np.arange(active.size)
        best[active] = g[rows, idx]
        ok = np.isfinite(vals[rows, idx])
        a = g[rows, np.maximum(idx - 1, 0)]
        b = g[rows, np.minimum(idx + 1, g.shape[1] - 1)]
        done = ~ok | (b - a <= 1e-10 * np.maximum(1.0, np.maximum(np.abs(a), np.abs(b))))
        keep = ~done
        active = active[keep]
        grid = a[keep][:, None] + (b - a)[keep][:, None] * np.linspace(0.0, 1.0, 17)[None, :]
    return best
