"""ε(δ) from certified δ brackets: the smallest ε ≥ 0 with δ(ε) ≤ a target.

δ(ε) is continuous and non-increasing, so the answer ε* lies in ``[lower, upper]``
whenever ``δ_lo(lower) > target`` (or ``lower = 0``: ε* ≥ 0 by definition) and
``δ_hi(upper) ≤ target``, both certified.  The oracle costs about the same per *point*
whatever the batching, so the search spends few points:

1. **Propose.**  The Gaussian mechanism of the same ρ, ``δ_G(ε) = Φ(μ/2 − ε/μ) −
   e^ε Φ(−μ/2 − ε/μ)`` with ``μ = √(2ρ)``, is solved for the target (Newton in
   binary64, no oracle call); it is within 1e-4 relative of ε* on small-σ² designs and
   far closer on large ones.  Each evaluated point's estimate ``log δ_mid`` gives the
   discrepancy ``d = log δ_mid − log δ_G``; the next proposal solves ``log δ_G(ε) + d(ε) =
   log target`` with ``d`` constant (one point) or linear through the last two centres
   (when they are far enough apart for the slope to be above the brackets' noise).  This is
   Newton's method with the model's slope, then a secant on the slowly varying
   discrepancy.
2. **Certify.**  Once the predicted error of the proposal c (last step × observed
   contraction) is below a fifth of the width, the pair ``c(1 ± 0.45·w)`` is evaluated in
   one batch: if the lower is certified above the target and the upper at or below it, the
   bracket is done (width ``0.9·w·c``).  Otherwise the pair's estimates feed the next
   proposal; a pair left undecided next to the answer (the brackets' own width exceeds
   the change of δ across it) is widened fourfold.
3. **Fall back.**  A target not certified after :data:`ROUNDS` rounds goes to
   :func:`exactdp.numerics.search.secant_narrow` (safeguarded secant on the estimate,
   certified decisions, bounded number of tests) from the best certified ends found.

All targets advance together: one oracle call per round.  Estimates only propose points;
every end returned was certified by the oracle (finite brackets only).
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.numerics.precision import DPS_LOW, EPS64, workdps
from exactdp.numerics.search import secant_narrow

__all__ = ["epsilon_brackets", "gaussian_log_delta", "gaussian_log_delta_float", "ROUNDS"]

#: batched rounds before the single-point fallback
ROUNDS = 10
#: half-width of the certifying pair, in units of the target relative width
PAIR = 0.3
#: the widest pair tried where the brackets cannot resolve the target width (relative)
MAX_PAIR = 2.5e-7
#: the absolute width accepted near ε = 0 (times the relative width)
FLOOR = 1e-300
#: fallback tests (each one oracle point) per target
FALLBACK_TESTS = 60


def _log_ncdf(z: float) -> float:
    """log Φ(z) in binary64 (the erfc form, the asymptotic series below z = −30)."""
    if z > -30.0:
        return math.log(0.5 * math.erfc(-z / math.sqrt(2.0)))
    r = 1.0 / (z * z)
    return -0.5 * z * z - math.log(-z) - 0.5 * math.log(2 * math.pi) + math.log1p(-r + 3 * r * r - 15 * r**3)


def gaussian_log_delta_float(x: float, mu: float) -> float:
    """:func:`gaussian_log_delta`'s value in binary64 (−inf where δ_G underflows to 0): for
    searches whose points are then evaluated by the certified oracle."""
    la = _log_ncdf(mu / 2 - x / mu)
    lb = x + _log_ncdf(-mu / 2 - x / mu)
    r = lb - la
    return la + math.log(-math.expm1(r)) if r < 0 else -math.inf


def gaussian_log_delta(x, mu) -> tuple:
    """``(log δ_G(x), d/dx log δ_G(x))`` of the Gaussian mechanism with ``μ = √(2ρ)``.

    Parameters
    ----------
    x, mu : mpmath.mpf
        ε and μ (μ > 0).

    Returns
    -------
    tuple of mpmath.mpf

    Notes
    -----
    Method: ``δ_G = Φ(μ/2 − x/μ) − e^x Φ(−μ/2 − x/μ)`` and ``δ_G' = −e^x Φ(−μ/2 − x/μ)``
    (Balle & Wang 2018), in the caller's precision.  Error bound: none is claimed — the
    value only proposes trial points; the terms differ by a factor about ``1 + μ²/x`` (no
    catastrophic cancellation at the caller's 30 digits).
    """
    a = mpmath.ncdf(mu / 2 - x / mu)
    b = mpmath.exp(x) * mpmath.ncdf(-mu / 2 - x / mu)
    d = a - b
    if not d > 0:
        return mpmath.ninf, mpmath.ninf
    return mpmath.log(d), -b / d


def _gauss_float(x: float, mu: float) -> tuple:
    """``(log δ_G(x), d/dx log δ_G(x))`` in binary64 (−inf, −inf where δ_G underflows):
    ``d/dx log δ_G = −b/(a − b) = −1/expm1(−r)`` with ``r = log b − log a``."""
    la = _log_ncdf(mu / 2 - x / mu)
    r = x + _log_ncdf(-mu / 2 - x / mu) - la
    if not r < 0:
        return -math.inf, -math.inf
    # −1/expm1(−r) ≈ −e^r once −r is beyond the float range of expm1 (r ≪ 0: δ_G ≈ a)
    slope = -1.0 / math.expm1(-r) if r > -700.0 else -math.exp(r)
    return la + math.log(-math.expm1(r)), slope


def _model_root(mu, lt: float, shift: float, tilt: float, x_ref: float) -> float:
    """The ε ≥ 0 solving ``log δ_G(ε) + shift + tilt·(ε − x_ref) = lt`` (0 when the left
    side is ≤ lt already at 0): Newton steps in binary64 inside a bracket grown by
    doubling, bisecting where a step leaves it (a proposal only: the oracle decides)."""
    m = float(mu)

    def fdf(x):
        v, dv = _gauss_float(x, m)
        return lt - v - shift - tilt * (x - x_ref), -dv - tilt

    if fdf(0.0)[0] >= 0:
        return 0.0
    lo, hi = 0.0, 1.0
    for _ in range(1000):
        f_hi, d_hi = fdf(hi)
        if f_hi >= 0 and d_hi > 0:
            break
        lo, hi = hi, 2 * hi
    x = 0.5 * (lo + hi)
    for _ in range(200):
        f, df = fdf(x)
        if f == 0:
            return x
        if f > 0:
            hi = x
        else:
            lo = x
        new = x - f / df if df > 0 and math.isfinite(df) else 0.5 * (lo + hi)
        if not lo < new < hi:
            new = 0.5 * (lo + hi)
        if abs(new - x) <= abs(x) * 1e-15 + 1e-300:
            return new
        x = new
    return x


class _Target:
    """The search state of one target δ (see the module docstring)."""

    def __init__(self, target: Fraction, mu, rel_width: float):
        with workdps(DPS_LOW):
            self.lt = float(mpmath.log(mpmath.mpf(target.numerator) / target.denominator))
        slack = 4 * EPS64 * (abs(self.lt) + 1)
        self.lt_dn, self.lt_up = self.lt - slack, self.lt + slack
        self.mu, self.w = mu, rel_width
        self.low, self.high = 0.0, math.inf  # certified ends (0 is always a lower end)
        self.centres: list = []  # (x, discrepancy, noise) of the evaluated rounds
        self.steps: list = []
        self.hw = PAIR * rel_width
        self.c = _model_root(mu, self.lt, 0.0, 0.0, 0.0)
        self.pair = False
        self.zero_known = False
        self.final = False  # a widened pair certified, or the brackets cannot resolve ε*

    def done(self) -> bool:
        if self.final:
            return True
        if self.high == math.inf:
            return False
        lo, hi = Fraction(self.low), Fraction(self.high)
        return hi - lo <= Fraction(self.w) * max(hi, Fraction(FLOOR))

    def propose(self) -> list:
        """The points of the next round."""
        if self.c <= 0:
            if not self.zero_known:
                return [0.0]
            # the answer is above 0 (0 is certified below it): bisect towards it
            self.c = 0.5 * (self.low + self.high) if self.high < math.inf else max(2 * self.low, 1e-3)
        if self.pair:
            return [self.c * (1 - self.hw), self.c * (1 + self.hw)]
        return [self.c]

    def status(self, lo: float, hi: float) -> int:
        """1: δ_hi ≤ target (certified); −1: δ_lo > target; 0 otherwise (finite brackets only)."""
        if math.isfinite(hi) and hi <= self.lt_dn:
            return 1
        if math.isfinite(lo) and lo > self.lt_up:
            return -1
        return 0

    def take(self, xs: list, lo, hi) -> None:
        """Record the brackets at ``xs`` and choose the next proposal."""
        got = []
        for x, a, b in zip(xs, lo, hi):
            got.append(self.status(a, b))
            if x == 0.0:
                self.zero_known = True
            if got[-1] == 1:
                self.high = min(self.high, x)
            elif got[-1] == -1:
                self.low = max(self.low, x)
        undecided = 0 in got
        self.final = self.pair and got == [-1, 1]  # (a widened pair: the narrowest resolvable)
        if self.done():
            return
        est = [(x, 0.5 * (a + b) if math.isfinite(a) else b, b - a) for x, a, b in zip(xs, lo, hi)
               if math.isfinite(b)]
        if not est:  # no information: bisect the certified range
            self.c = 0.5 * (self.low + min(self.high, 2 * max(self.c, 1e-3)))
            return
        x = sum(e[0] for e in est) / len(est)
        m = sum(e[1] for e in est) / len(est)
        g, dg = _gauss_float(x, float(self.mu))
        d = m - g
        noise = max(e[2] for e in est)
        tilt = 0.0
        if self.centres:
            x0, d0, n0 = self.centres[-1]
            # the discrepancy's slope, where the two centres resolve it against the noise
            if abs(x - x0) * abs(float(dg)) > 100 * (noise + n0) and math.isfinite(noise + n0):
                tilt = (d - d0) / (x - x0)
        self.centres.append((x, d, noise))
        new = _model_root(self.mu, self.lt, d, tilt, x)
        if not self.low < new < self.high:  # safeguard: stay inside the certified range
            new = 0.5 * (self.low + self.high) if self.high < math.inf else 2 * max(new, self.low, 1e-3)
        step = abs(new - self.c)
        # the brackets' noise alone moves ε* by more than a refusable width: give up
        # (only once the certified ends are close: the model's slope may be far from δ's — a
        # near-deterministic group makes δ ≈ 1 flat below ρ where the Gaussian model is steep)
        close = self.high < math.inf and self.high - self.low <= 100 * MAX_PAIR * max(x, FLOOR)
        self.final = close and abs(new - x) < 0.01 * x and noise > 4 * MAX_PAIR * x * abs(float(dg))
        q = self.steps[-1] and step / self.steps[-1] if self.steps else 0.05
        self.steps.append(step)
        if self.pair and undecided and step < self.hw * self.c:
            self.hw = min(4 * self.hw, MAX_PAIR)  # the brackets do not resolve the width
        self.c = new
        self.pair = step * min(max(q, 1e-3), 1.0) <= 0.2 * self.w * new


#: the largest ρ whose ε(δ) the float64 search brackets (σ² ≥ ~1e-250 for a unit shift); beyond it the
#: brackets and their doubling would overflow (σ² 1e-300 beside 174.9 took 50 s to find that out)
RHO_SEARCH_MAX = Fraction(10**250)


def epsilon_brackets(log_delta_at, targets, rho, rel_width: float) -> tuple:
    """``(lower, upper, estimate)`` float lists for each target δ (Fraction in (0, 1)).

    Parameters
    ----------
    log_delta_at : callable
        ``log_delta_at(e_dn, e_up)`` returns certified log brackets of δ over float ε
        enclosures (arrays; one call may carry any number of points).
    targets : sequence of Fraction
    rho : Fraction
        The design's ρ (zCDP); 0 means P = Q (δ ≡ 0 on ε ≥ 0, every ε* is 0).
    rel_width : float

    Returns
    -------
    tuple of three lists of float

    Notes
    -----
    Method: see the module docstring (Gaussian-model Newton/secant proposals, one batched
    call per round for all targets, a certifying pair, the safeguarded secant as fallback).
    Error bound: ``δ_lo(lower) > target`` (or lower = 0) and ``δ_hi(upper) ≤ target`` are
    certified by the oracle; ``upper − lower ≤ rel_width·upper`` (absolute
    ``rel_width·1e-300`` near 0) unless the oracle's brackets cannot resolve that width, in
    which case the narrowest certified bracket found is returned (the caller refuses a
    bracket wider than its limit).
    """
    if rho == 0:
        zero = [0.0] * len(targets)
        return zero, list(zero), list(zero)
    if rho > RHO_SEARCH_MAX:  # ε(δ) ≈ ρ: the float64 brackets (and their doubling) would leave the range
        from exactdp.numerics.errors import UncertifiedError

        raise UncertifiedError(f"ε(δ) ≈ ρ ≈ {float(mpmath.mpf(rho.numerator) / rho.denominator):.3g} lies beyond the "
                               "float64 range of the search (ρ ≤ 1e250)")
    with workdps(DPS_LOW):
        mu = mpmath.sqrt(2 * mpmath.mpf(rho.numerator) / rho.denominator)
    states = [_Target(Fraction(t), mu, rel_width) for t in targets]
    for _ in range(ROUNDS):
        active = [s for s in states if not s.done()]
        if not active:
            break
        asks = [s.propose() for s in active]
        xs = np.array([x for a in asks for x in a], dtype=float)
        lo, hi = log_delta_at(xs, xs)
        k = 0
        for s, a in zip(active, asks):
            s.take(a, lo[k:k + len(a)].tolist(), hi[k:k + len(a)].tolist())
            k += len(a)
    for s in states:
        if not s.done() or s.high == math.inf:  # (a final state's bracket is the narrowest there is)
            try:
                _fallback(log_delta_at, s, rho)
            except OverflowError:  # ρ near the float64 limit (σ² 1e-300): ε(δ) beyond the search's range
                from exactdp.numerics.errors import UncertifiedError

                raise UncertifiedError(f"ε(δ) at δ = e^{s.lt:.6g} lies beyond the float64 range of the search "
                                       f"(ρ ≈ {float(mpmath.mpf(rho.numerator) / rho.denominator):.3g})") from None
    lows = [s.low for s in states]
    ups = [s.high for s in states]
    return lows, ups, [0.5 * (a + b) for a, b in zip(lows, ups)]


def _snap(a: Fraction, b: Fraction) -> Fraction:
    """A binary float inside [a, b] (the one nearest the middle; b if none is)."""
    f = Fraction(float((a + b) / 2))
    return f if a <= f <= b else b


def _fallback(log_delta_at, s: _Target, rho) -> None:
    """Single-point safeguarded secant (:func:`secant_narrow`) from ``s``'s certified ends,
    with at most :data:`FALLBACK_TESTS` tests; the ends stay certified."""
    def one(c: Fraction) -> tuple:
        lo, hi = log_delta_at(np.array([float(c)]), np.array([float(c)]))
        return float(lo[0]), float(hi[0])

    def status(c: Fraction) -> int:
        return s.status(*one(c))

    def estimate(c: Fraction) -> float:
        lo, hi = one(c)
        mid = 0.5 * (lo + hi) if math.isfinite(lo) else hi
        return mid - s.lt if math.isfinite(mid) else -1e300

    if s.high == math.inf:  # ρ-zCDP: ε ≤ ρ + 2√(ρ log(1/δ)) (Bun & Steinke 2016), then doubling
        r = float(rho)
        up = Fraction((r + 2 * math.sqrt(r * max(-s.lt, 0.0))) * (1 + 1e-12) + 1e-300)
        for _ in range(60):
            if status(up) == 1:
                s.high = float(up)
                break
            up *= 2
        else:
            return
    if s.final:
        return
    if s.low == 0.0 and not s.zero_known:
        s.zero_known = True
        st = status(Fraction(0))
        if st == 1:
            s.high = 0.0
        if st != -1:  # δ(0) is at or within the noise of the target: [0, high] is all there is
            return
    width = Fraction(s.w) * max(Fraction(s.low), Fraction(FLOOR))
    lo, hi = secant_narrow(status, estimate, _snap, Fraction(s.low), Fraction(s.high), width,
                           max_tests=FALLBACK_TESTS)
    s.low, s.high = float(lo), float(hi)
