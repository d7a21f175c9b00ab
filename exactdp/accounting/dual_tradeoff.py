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

Each G is formed without cancellation where it matters: for ε ≥ 0, ``1 − δ(ε) − e^ε α``;
for ε < 0 (α beyond the curve's fixed point, β small), ``e^ε((1 − α) − δ(−ε))`` with
``1 − α`` exact.  The maximiser is located on estimates (golden section on ε), the
bounds are certified at every step.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.accounting.results import BracketedTradeoff
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.precision import DPS_RESULT, to_mpf, workdps

__all__ = ["tradeoff_points", "TRADEOFF_WIDTH"]

_DPS = DPS_RESULT
#: relative width aimed at for β (the promise is 1e-9)
TRADEOFF_WIDTH = 5e-10
#: refusal threshold (relative), as for δ and ε
MAX_REPORTED_WIDTH = 1e-6


class _G:
    """Certified brackets of G(ε) for one α (mp), cached by float ε."""

    def __init__(self, acc, alpha: Fraction):
        self.acc = acc
        self.alpha = alpha
        self.a = to_mpf(alpha)
        self.one_minus = to_mpf(1 - alpha)
        self.cache: dict = {}

    def at(self, eps: np.ndarray) -> list:
        todo = [e for e in eps.tolist() if e not in self.cache]
        if todo:
            arr = np.array(todo)
            mag = np.abs(arr)
            lo, hi = self.acc.log_delta_at(mag, mag)
            with workdps(_DPS):
                slack = mpmath.mpf(10) ** (6 - _DPS)
                for e, l, h in zip(todo, lo, hi):
                    dl = mpmath.exp(mpmath.mpf(float(l))) if l > -np.inf else mpmath.mpf(0)
                    dh = min(mpmath.exp(mpmath.mpf(float(h))), mpmath.mpf(1))
                    ee = mpmath.exp(mpmath.mpf(e))
                    if e >= 0:
                        g_lo = 1 - dh - ee * self.a
                        g_hi = 1 - dl - ee * self.a
                    else:
                        g_lo = ee * (self.one_minus - dh)
                        g_hi = ee * (self.one_minus - dl)
                    self.cache[e] = (ee, g_lo - slack * (abs(g_lo) + ee * self.a + 1),
                                     g_hi + slack * (abs(g_hi) + ee * self.a + 1))
        return [self.cache[e] for e in eps.tolist()]

    def mid(self, e: float) -> float:
        _, lo, hi = self.at(np.array([e]))[0]
        return float((lo + hi) / 2)


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

    # left of x_0 (x > 0): G(x) ≤ G(x_0) + t·(x − x_0) with t ≤ chord (x_0, x_1)
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
            f1 = lambda x: g1 + s1 * (x - p1)  # noqa: E731
            f2 = lambda x: g2 + s2 * (x - p2)  # noqa: E731
            cand = max(min(f1(a), f2(a)), min(f1(b), f2(b)))
            if s1 != s2:
                xc = (g2 - s2 * p2 - g1 + s1 * p1) / (s1 - s2)
                if a < xc < b:
                    cand = max(cand, min(f1(xc), f2(xc)))
        best = max(best, cand)
    return best


def _argmax(g: _G, lo: float, hi: float, iters: int = 80) -> float:
    """Golden-section maximiser of the estimate of G on [lo, hi] (ε units)."""
    r = (math.sqrt(5) - 1) / 2
    a, b = lo, hi
    c, d = b - r * (b - a), a + r * (b - a)
    fc, fd = g.mid(c), g.mid(d)
    for _ in range(iters):
        if b - a <= 1e-9 * max(1.0, abs(a), abs(b)):
            break
        if fc >= fd:
            b, d, fd = d, c, fc
            c = b - r * (b - a)
            fc = g.mid(c)
        else:
            a, c, fc = c, d, fd
            d = a + r * (b - a)
            fd = g.mid(d)
    return 0.5 * (a + b)


def _range(acc, alpha: Fraction) -> tuple:
    """An ε interval containing the maximiser: the stationary point has
    ``P(W > ε + ρ) = α``; sub-Gaussian tails (variance proxy 2ρ) put it within
    ``|ε + ρ| ≤ √(4ρ·log(2/min(α, 1−α)))`` (beyond, G's slope has a certain sign)."""
    rho = float(acc.rho)
    m = min(float(alpha), float(1 - alpha))
    r = math.sqrt(4 * max(rho, 1e-300) * (math.log(2 / max(m, 1e-300)) + 1)) + 1.0
    return -rho - r, -rho + r + 2 * rho


def tradeoff_points(acc, alphas) -> tuple:
    """:class:`BracketedTradeoff` for each exact α (see the module docstring)."""
    out = []
    with workdps(_DPS):
        for af in alphas:
            am = to_mpf(af)
            if af == 0 or af == 1 or acc.profile is None:
                beta = mpmath.mpf(1 - af)
                out.append(BracketedTradeoff(am, beta, mpmath.mpf(0), 0, "bracket"))
                continue
            g = _G(acc, af)
            lo_e, hi_e = _range(acc, af)
            e_star = _argmax(g, lo_e, hi_e)
            h = 1e-3 * max(1.0, abs(e_star))
            lower = upper = None
            for _ in range(12):
                eps = np.array(sorted({e_star + k * h for k in (-2, -1, 0, 1, 2)}))
                pts = g.at(eps)
                lower = max(p[1] for p in pts)
                upper = _upper(pts)
                if upper == mpmath.inf:
                    e_star += 2 * h
                    continue
                if upper - lower <= TRADEOFF_WIDTH * abs(lower):
                    break
                best = int(np.argmax([float(p[1]) for p in pts]))
                e_star = float(eps[best])
                h /= 4
            if upper is None or upper == mpmath.inf or not (upper - lower <= MAX_REPORTED_WIDTH * abs(upper)
                                                             or upper < 1e-300):
                raise UncertifiedError(f"β(α={mpmath.nstr(am, 6)}): the dual bracket is [{mpmath.nstr(lower, 6)}, "
                                       f"{mpmath.nstr(upper, 6)}]")
            lower = max(lower, mpmath.mpf(0))
            upper = min(upper, mpmath.mpf(1 - af))
            out.append(BracketedTradeoff(am, (lower + upper) / 2, (upper - lower) / 2, 0, "bracket"))
    return tuple(out)
