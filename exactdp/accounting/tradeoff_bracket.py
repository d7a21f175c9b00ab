"""Certified brackets of the f-DP trade-off β = f(α) from certified tails of W.

The deterministic test "reject iff W ≥ x" has ``(α, β) = (A(x), B(x)) = (P(W ≥ x),
P(W > 2c − x))``; the optimal (randomised Neyman–Pearson) curve f is the convex,
non-increasing, piecewise-linear curve through these points, with one segment per atom
ℓ of W of slope ``−P(W = 2c−ℓ)/P(W = ℓ) = −e^{ℓ−c}`` (the likelihood ratio: W's law
satisfies ``P(W = y) = e^{c−y} P(W = 2c−y)``).  Hence, for any reals ``x₁ < x₂`` with
``A(x₁) ≥ α ≥ A(x₂)`` and ``r_i = e^{x_i − c}``:

* **supporting lines** (exact at every atom, whatever its size; Lagrangian form of
  Neyman–Pearson): ``f(α) ≥ B(x) + e^{x−c}(A(x) − α)`` for every real x;
* **slope bounds**: on ``[A(x₂), A(x₁)]`` every slope of f lies in ``[−r₂, −r₁]``, so
  ``f(α) ≤ B(x₂) − r₁(α − A(x₂))`` and ``f(α) ≤ B(x₁) + r₂(A(x₁) − α)``.

The bracket is therefore ``[max_i B_lo(x_i) + r_i·(A − α)_lo, min(…)]``, of width
≈ ``(r₂ − r₁)(A(x₁) − A(x₂)) + w_B + r·w_A``: the tails' own errors once x₂ − x₁ is small,
with no interpolation error between consecutive atoms.  x₁, x₂ are found by a batched
search (interpolation plus bisection, certified decisions only) on float x.
For α > 1/2 the complement ``1 − A(x) = P(W > −x)`` is used, so α near 1 keeps its
relative accuracy.  Reference: Dong, Roth & Su (2022), Gaussian differential privacy
(Prop. 2.2: f is the lower convex envelope of the NP tests).
"""

from __future__ import annotations

import math
from fractions import Fraction
from statistics import NormalDist

import numpy as np

from exactdp.engine.smoothed import SmoothedTails, float_enclosure
from exactdp.numerics.precision import EPS64

__all__ = ["tradeoff_brackets", "SEARCH_ROUNDS"]

#: refinement rounds of the x search (each shrinks [x₁, x₂] by ≥ 8× unless undecided)
SEARCH_ROUNDS = 40
_GRID = np.array([-8.0, -4.0, -2.0, -1.0, -0.5, -0.25, 0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0])
_ZOOM = np.array([-1.0, -1 / 8, -1 / 64, -1 / 512, 0.0, 1 / 512, 1 / 64, 1 / 8, 1.0])
_ENDS = np.array([1 / 8, 2.0**-6, 2.0**-10, 2.0**-15, 2.0**-21])
_UNIFORM = np.arange(1, 8) / 8


class _Curve:
    """Certified curve data at float points x, for a batch of α (one row per α)."""

    def __init__(self, acc, eng, alphas):
        self.acc, self.eng = acc, eng
        self.c = acc.c
        self.small = np.array([a <= Fraction(1, 2) for a in alphas])
        self.a_dn, self.a_up = float_enclosure(alphas)
        self.b_dn, self.b_up = float_enclosure([1 - a for a in alphas])

    def _tails(self, dn, up, exact, strict):
        """Log brackets at thresholds enclosed by [dn, up] (floats); the exact engine gets
        the exact thresholds (``exact()``, or the floats themselves when dn == up)."""
        if isinstance(self.eng, SmoothedTails):
            return self.eng.log_tail_brackets(dn, up)
        ts = exact() if exact is not None else [Fraction(float(x)) for x in dn]
        return self.acc._log_tails_on(self.eng, ts, strict)

    def evaluate(self, rows, xs):
        """(dlo, dhi, B_lo, B_hi, r_dn, r_up) at points xs (float array) of rows (α index)."""
        xs = np.asarray(xs, dtype=float)
        small = self.small[rows]
        s_lo = np.empty(xs.size)
        s_hi = np.empty(xs.size)
        k = np.flatnonzero(small)
        if k.size:
            s_lo[k], s_hi[k] = self._tails(xs[k], xs[k], None, False)
        k = np.flatnonzero(~small)
        if k.size:
            s_lo[k], s_hi[k] = self._tails(-xs[k], -xs[k], None, True)
        two_c = 2 * self.c
        b_lo, b_hi = self._tails(np.nextafter(2 * self.acc._c_dn - xs, -np.inf),
                                 np.nextafter(2 * self.acc._c_up - xs, np.inf),
                                 lambda: [two_c - Fraction(float(x)) for x in xs], True)
        S_lo, S_hi = np.exp(s_lo), np.exp(s_hi)
        a_dn, a_up = self.a_dn[rows], self.a_up[rows]
        b_dn, b_up = self.b_dn[rows], self.b_up[rows]
        # bounds on A(x) − α (for α > 1/2: (1 − α) − P(W > −x))
        dlo = np.where(small, S_lo - a_up, b_dn - S_hi)
        dhi = np.where(small, S_hi - a_dn, b_up - S_lo)
        slack = 2 * EPS64 * (S_hi + np.where(small, a_up, b_up))
        xc_dn, xc_up = float_enclosure([Fraction(float(x)) - self.c for x in xs])
        with np.errstate(over="ignore"):
            r_dn = np.exp(np.nextafter(xc_dn, -np.inf)) * (1 - 4 * EPS64)
            r_up = np.exp(np.nextafter(xc_up, np.inf)) * (1 + 4 * EPS64)
        return dlo - slack, dhi + slack, np.exp(b_lo), np.exp(b_hi), r_dn, r_up


def _bracket(p1, p2, one_minus_alpha):
    """Certified (lo, hi) of β from the data at a valid x₁ (p1) and x₂ (p2)."""
    d1lo, d1hi, B1lo, B1hi, r1dn, r1up = p1
    d2lo, d2hi, B2lo, B2hi, r2dn, r2up = p2
    with np.errstate(over="ignore", invalid="ignore"):
        t1 = np.where(d1lo >= 0, r1dn, r1up) * d1lo
        t2 = np.where(d2lo >= 0, r2dn, r2up) * d2lo
        L1 = B1lo + t1 - 4 * EPS64 * (np.abs(B1lo) + np.abs(t1))
        L2 = B2lo + t2 - 4 * EPS64 * (np.abs(B2lo) + np.abs(t2))
        u1 = np.where(d1hi >= 0, r2up, r2dn) * d1hi
        u2 = np.where(d2hi >= 0, r1up, r1dn) * d2hi
        U1 = B1hi + u1 + 4 * EPS64 * (np.abs(B1hi) + np.abs(u1))
        U2 = B2hi + u2 + 4 * EPS64 * (np.abs(B2hi) + np.abs(u2))
    L1, L2 = np.where(np.isnan(L1), -np.inf, L1), np.where(np.isnan(L2), -np.inf, L2)
    U1, U2 = np.where(np.isnan(U1), np.inf, U1), np.where(np.isnan(U2), np.inf, U2)
    lo = np.maximum(np.maximum(L1, L2), 0.0)
    hi = np.minimum(np.minimum(np.minimum(U1, U2), np.minimum(B2hi, one_minus_alpha)), 1.0)
    return lo, np.maximum(hi, lo)


def _guess(alphas, sd):
    out = np.empty(len(alphas))
    nd = NormalDist()
    for i, a in enumerate(alphas):
        q = float(min(a, 1 - a))
        z = -nd.inv_cdf(q) if q > 1e-300 else math.sqrt(2 * math.log(1 / max(q, 1e-320)))
        out[i] = sd * z if a <= Fraction(1, 2) else -sd * z
    return out


def tradeoff_brackets(acc, eng, alphas, target: float = 1.5e-10) -> tuple:
    """Certified (lo, hi) float arrays of β = f(α) for α ∈ (0, 1) (Fractions), using the
    tails of engine ``eng`` of accountant ``acc``; each search stops once its bracket is
    ``target`` relative wide or cannot shrink."""
    n = len(alphas)
    cv = _Curve(acc, eng, alphas)
    sd = math.sqrt(2 * float(acc.c))
    x0 = _guess(alphas, sd)
    one_m = cv.b_up
    x1 = np.full(n, np.nan)
    x2 = np.full(n, np.nan)
    p1 = [np.zeros(n) for _ in range(6)]
    p2 = [np.zeros(n) for _ in range(6)]

    def absorb(rows, xs, data):
        for k in np.unique(rows):
            sel = np.flatnonzero(rows == k)
            ok1 = sel[data[0][sel] >= 0]
            ok2 = sel[data[1][sel] <= 0]
            if ok1.size:
                j = ok1[np.argmax(xs[ok1])]
                if not xs[j] <= x1[k]:
                    x1[k] = xs[j]
                    for q in range(6):
                        p1[q][k] = data[q][j]
            if ok2.size:
                j = ok2[np.argmin(xs[ok2])]
                if not xs[j] >= x2[k]:
                    x2[k] = xs[j]
                    for q in range(6):
                        p2[q][k] = data[q][j]

    rows = np.repeat(np.arange(n), _GRID.size)
    xs = (x0[:, None] + sd * _GRID[None, :]).ravel()
    for expand in range(12):
        absorb(rows, xs, cv.evaluate(rows, xs))
        miss1 = np.flatnonzero(np.isnan(x1))
        miss2 = np.flatnonzero(np.isnan(x2))
        if not miss1.size and not miss2.size:
            break
        step = sd * 16.0 * 4.0**expand
        left = np.where(np.isnan(x2[miss1]), x0[miss1], np.minimum(x0[miss1], x2[miss1])) - step
        right = np.where(np.isnan(x1[miss2]), x0[miss2], np.maximum(x0[miss2], x1[miss2])) + step
        rows = np.concatenate([np.repeat(miss1, 4), np.repeat(miss2, 4)])
        xs = np.concatenate([(left[:, None] + step * np.array([0.0, 0.25, 0.5, 0.75])[None, :]).ravel(),
                             (right[:, None] - step * np.array([0.0, 0.25, 0.5, 0.75])[None, :]).ravel()])
    lo = np.zeros(n)
    hi = np.minimum(one_m, 1.0)
    found = np.flatnonzero(~np.isnan(x1) & ~np.isnan(x2))
    active = found
    stall = np.zeros(n, dtype=int)
    for _ in range(SEARCH_ROUNDS):
        if active.size == 0:
            break
        P1 = [p[active] for p in p1]
        P2 = [p[active] for p in p2]
        l, h = _bracket(P1, P2, one_m[active])
        lo[active], hi[active] = l, h
        gap = x2[active] - x1[active]
        done = ((h - l) <= target * np.maximum(h, 1e-300)) | (gap <= 4 * EPS64 * np.maximum(np.abs(x1[active]), 1e-300))
        done |= stall[active] >= 3
        active = active[~done]
        if active.size == 0:
            break
        # interpolated crossing of A(x) − α between x1 and x2 (midpoints of the d brackets)
        a, b = x1[active], x2[active]
        y1 = 0.5 * (p1[0][active] + p1[1][active])
        y2 = 0.5 * (p2[0][active] + p2[1][active])
        with np.errstate(invalid="ignore", divide="ignore"):
            frac = np.where(y1 > y2, y1 / (y1 - y2), 0.5)
        frac = np.clip(np.nan_to_num(frac, nan=0.5), 0.0, 1.0)
        xstar = a + frac * (b - a)
        width = (b - a) / 8
        # zoom around the interpolated crossing (smooth parts), and geometric steps in from
        # both ends (a large atom near an end: the crossing is a jump there)
        pts = np.concatenate([xstar[:, None] + width[:, None] * _ZOOM[None, :],
                              a[:, None] + (b - a)[:, None] * _ENDS[None, :],
                              b[:, None] - (b - a)[:, None] * _ENDS[None, :],
                              a[:, None] + (b - a)[:, None] * _UNIFORM[None, :]], axis=1)
        k = pts.shape[1]
        rows = np.repeat(active, k)
        pts = pts.ravel()
        inside = (pts > np.repeat(a, k)) & (pts < np.repeat(b, k))
        rows, pts = rows[inside], pts[inside]
        before = x2[active] - x1[active]
        if pts.size:
            absorb(rows, pts, cv.evaluate(rows, pts))
        shrunk = (x2[active] - x1[active]) < 0.5 * before
        stall[active] = np.where(shrunk, 0, stall[active] + 1)
    return lo, hi
