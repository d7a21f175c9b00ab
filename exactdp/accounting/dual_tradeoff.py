"""The trade-off curve β = f(α) from certified δ brackets, by convex duality.

For any pair (P, Q), ``f(α) = sup_{x>0} G(x)``, ``G(x) = 1 − H_x − x·α`` with
``H_x = E_P(dQ/dP − x)₊`` the hockey-stick divergence (Dong, Roth & Su 2022, Prop. 2.12;
a symmetric design has ``H_{e^ε} = δ(ε)``).  G is concave in x (H is convex), so:

* every evaluated point gives a certified **lower** bound ``G_lo(x) ≤ f(α)``;
* between evaluated points ``x_0 < … < x_n`` chords give a certified **upper** bound:
  on ``[x_i, x_{i+1}]``, ``G ≤ min(G(x_i) + s·(x − x_i), G(x_{i+1}) + t·(x − x_{i+1}))``
  with s the slope of the chord ``(x_{i−1}, x_i)`` and t of ``(x_{i+1}, x_{i+2})`` (taken at
  the ends of their certified ranges); left of x_0 and right of x_n the end chords bound G
  the same way.  The gap closes as the stencil around the maximiser shrinks.

G is formed without cancellation where it matters: for ε ≥ 0, ``1 − δ(ε) − e^ε α``; for
ε < 0 (α beyond the curve's fixed point, β small), ``e^ε((1 − α) − δ(−ε))`` with ``1 − α``
exact.  The maximisers of all α are located together on float estimates (batched zooming
on ε: G is unimodal in ε), the bounds are certified in mpmath on a stencil around each.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.accounting.results import BracketedTradeoff, centred
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.precision import DPS_RESULT, to_mpf, workdps

__all__ = ["tradeoff_points", "TRADEOFF_WIDTH"]

_DPS = DPS_RESULT
#: relative width aimed at for β (the promise is 1e-9)
TRADEOFF_WIDTH = 5e-10
#: refusal threshold (relative), as for δ and ε
MAX_REPORTED_WIDTH = 1e-6
#: the stencil around a maximiser (multiples of its spacing)
STENCIL = (-16, -4, -2, -1, 0, 1, 2, 4, 16)


def _float_lower(acc, eps: np.ndarray, alphas: np.ndarray) -> np.ndarray:
    """log of the lower end of G at each (ε, α) pair (float estimates for the search;
    −inf where not positive)."""
    mag = np.abs(eps)
    lo, hi = acc.log_delta_at(mag, mag)
    d_hi = np.exp(np.minimum(hi, 0.0))
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        pos = 1.0 - d_hi - np.exp(eps) * alphas
        neg = np.exp(eps) * ((1.0 - alphas) - d_hi)
        g = np.where(eps >= 0, pos, neg)
        return np.where(g > 0, np.log(np.where(g > 0, g, 1.0)), -np.inf)


def _argmaxes(acc, alphas: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
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
        vals = _float_lower(acc, g.ravel(), np.repeat(alphas[active], g.shape[1])).reshape(g.shape)
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


class _G:
    """Certified mp brackets of G(ε) for one α, cached by float ε."""

    def __init__(self, acc, alpha: Fraction):
        self.acc = acc
        self.a = to_mpf(alpha)
        self.one_minus = to_mpf(1 - alpha)
        self.cache: dict = {}

    def fill(self, eps: list, lo, hi, c_lo, c_hi) -> None:
        """Store the brackets of G at ε from the log brackets of δ and of 1 − δ at |ε|: each
        form gives a certified bracket, their intersection is kept (1 − δ from δ cancels
        where δ ≈ 1, the complement's own positive terms do not)."""
        slack = mpmath.mpf(10) ** (6 - _DPS)

        def ex(v):
            return mpmath.exp(mpmath.mpf(float(v))) if v > -np.inf else mpmath.mpf(0)

        for e, l, h, cl, ch in zip(eps, lo, hi, c_lo, c_hi):
            dl, dh = ex(l), min(ex(h), mpmath.mpf(1))
            cm_lo, cm_hi = ex(cl), min(ex(ch), mpmath.mpf(1))
            ee = mpmath.exp(mpmath.mpf(e))
            if e >= 0:  # G = 1 − δ(ε) − e^ε α = C(ε) − e^ε α
                g_lo = max(1 - dh, cm_lo) - ee * self.a
                g_hi = min(1 - dl, cm_hi) - ee * self.a
                size = 1 + dh + ee * self.a  # the magnitudes the mp rounding acts on
            else:  # G = e^ε((1 − α) − δ(−ε)) = e^ε(C(−ε) − α)
                g_lo = ee * max(self.one_minus - dh, cm_lo - self.a)
                g_hi = ee * min(self.one_minus - dl, cm_hi - self.a)
                size = ee * (1 + dh)
            self.cache[e] = (ee, g_lo - slack * size, g_hi + slack * size)

    def at(self, eps) -> list:
        return [self.cache[e] for e in eps]


def _upper(points) -> mpmath.mpf:
    """Certified upper bound of sup G from brackets at sorted x (see the module docstring);
    ``inf`` when the right end is not certified to decrease."""
    n = len(points)
    xs = [p[0] for p in points]
    lo = [p[1] for p in points]
    hi = [p[2] for p in points]
    best = max(hi)

    def s_hi(i):  # upper bound of the chord slope (x_{i-1}, x_i)
        return (hi[i] - lo[i - 1]) / (xs[i] - xs[i - 1])

    def t_lo(i):  # lower bound of the chord slope (x_i, x_{i+1})
        return (lo[i + 1] - hi[i]) / (xs[i + 1] - xs[i])

    # left of x_0 (x > 0): G(x) ≤ G(x_0) + t·(x − x_0) with t ≤ the chord (x_0, x_1)
    t0 = t_lo(0)
    best = max(best, hi[0] + (-t0 * xs[0] if t0 < 0 else 0))
    # right of x_{n-1}: needs a certified decrease
    if s_hi(n - 1) > 0:
        return mpmath.inf
    for i in range(n - 1):
        a, b = xs[i], xs[i + 1]
        lines = []
        if i >= 1:
            lines.append((hi[i], s_hi(i), a))
        if i + 2 <= n - 1:
            lines.append((hi[i + 1], t_lo(i + 1), b))
        if not lines:
            return mpmath.inf
        if len(lines) == 1:
            g0, s, x0 = lines[0]
            cand = max(g0 + s * (a - x0), g0 + s * (b - x0))
        else:
            (g1, s1, p1), (g2, s2, p2) = lines
            ends = [a, b]
            if s1 != s2:
                xc = (g2 - s2 * p2 - g1 + s1 * p1) / (s1 - s2)
                if a < xc < b:
                    ends.append(xc)
            cand = max(min(g1 + s1 * (x - p1), g2 + s2 * (x - p2)) for x in ends)
        best = max(best, cand)
    return best


def _range(rho: float, alpha: float) -> tuple:
    """An ε interval containing the maximiser: the stationary point has ``P(W > ε + ρ) =
    α``, and W is 2ρ-sub-Gaussian, so ``|ε + ρ| ≤ √(4ρ·log(1/min(α, 1−α)))`` (widened)."""
    m = min(alpha, 1.0 - alpha)
    r = math.sqrt(4 * max(rho, 1e-300) * (math.log(2 / max(m, 1e-300)) + 1)) + 1.0
    return -rho - r, rho + r


def tradeoff_points(acc, alphas) -> tuple:
    """:class:`BracketedTradeoff` for each exact α (see the module docstring)."""
    out: list = [None] * len(alphas)
    inner = []
    with workdps(_DPS):
        for i, af in enumerate(alphas):
            if af == 0 or af == 1 or acc.profile is None:
                out[i] = BracketedTradeoff(to_mpf(af), to_mpf(1 - af), mpmath.mpf(0), 0, "bracket")
            else:
                inner.append(i)
        if inner:
            af = np.array([float(alphas[i]) for i in inner])
            rng = np.array([_range(float(acc.rho), a) for a in af])
            e_star = _argmaxes(acc, af, rng[:, 0], rng[:, 1])
            for i, pt in zip(inner, _certified(acc, [alphas[i] for i in inner], e_star.tolist())):
                out[i] = pt
    return tuple(out)


def _fill(acc, gs: list, wanted: list) -> None:
    """Evaluate the δ (and, where δ is above 1/2, the 1 − δ) brackets of every (G, ε) pair
    not cached yet, in one batch."""
    pairs = [(g, e) for g, eps in zip(gs, wanted) for e in eps if e not in g.cache]
    if not pairs:
        return
    mag = np.abs(np.array([e for _, e in pairs]))
    lo, hi = acc.log_delta_at(mag, mag)
    c_lo = np.full(mag.size, -np.inf)
    c_hi = np.zeros(mag.size)
    near_one = np.flatnonzero(hi > -math.log(2))
    if near_one.size:
        c_lo[near_one], c_hi[near_one] = acc.log_complement_at(mag[near_one], mag[near_one])
    for k, (g, e) in enumerate(pairs):
        g.fill([e], lo[k:k + 1], hi[k:k + 1], c_lo[k:k + 1], c_hi[k:k + 1])


def _certified(acc, alphas: list, e_stars: list) -> list:
    """The certified brackets of f(α) from stencils around each maximiser, refined (all α
    in one batch per round) until the relative width is TRADEOFF_WIDTH or the rounds run
    out; ``h`` widens when the stencil's slopes are not resolved (brackets too wide at
    that spacing) and narrows around an inner maximiser."""
    n = len(alphas)
    gs = [_G(acc, a) for a in alphas]
    h = [1e-4 * max(1.0, abs(e)) for e in e_stars]
    e_star = list(e_stars)
    lower = [mpmath.mpf(0)] * n
    upper = [mpmath.inf] * n
    active = list(range(n))
    for _ in range(24):
        if not active:
            break
        stencils = {i: sorted({e_star[i] + k * h[i] for k in STENCIL}) for i in active}
        _fill(acc, [gs[i] for i in active], [stencils[i] for i in active])
        nxt = []
        for i in active:
            pts = gs[i].at(stencils[i])
            lower[i] = max(lower[i], max(p[1] for p in pts))
            up = _upper(pts)
            upper[i] = min(upper[i], up)
            if upper[i] - lower[i] <= TRADEOFF_WIDTH * abs(lower[i]):
                continue
            vals = [p[1] for p in pts]
            best = max(range(len(pts)), key=vals.__getitem__)
            e_star[i] = stencils[i][best]
            if up == mpmath.inf:  # the slopes are not resolved at this spacing: widen
                h[i] *= 4
            elif best not in (0, len(pts) - 1):  # inside: zoom; at an end: move, keep h
                h[i] /= 4
            nxt.append(i)
        active = nxt
    out = []
    for i, alpha in enumerate(alphas):
        am = to_mpf(alpha)
        lo, up = lower[i], upper[i]
        if up == mpmath.inf or not (up - lo <= MAX_REPORTED_WIDTH * abs(up) or up < 1e-300):
            raise UncertifiedError(f"β(α={mpmath.nstr(am, 6)}): the dual bracket is [{mpmath.nstr(lo, 6)}, "
                                   f"{mpmath.nstr(up, 6)}]")
        lo = max(lo, mpmath.mpf(0))
        up = min(up, to_mpf(1 - alpha))
        est, err = centred(lo, up)
        out.append(BracketedTradeoff(am, est, err, 0, "bracket"))
    return out
