"""Exact log-probabilities of a coarse group's sum, at any atom (for conditioning).

For T = X_1 + … + X_m, X_i iid N_Z(0, s²) (s² small: few atoms matter), the probability
of any integer t is obtained with *relative* accuracy at any depth by tilting to t:
with the saddle point a of T at t (``K_T'(a) = t``, exact rational) and μ = a s² =
n0 + f (n0 ∈ ℤ, |f| ≤ 1/2, exact),

    P(T = t) = e^{K_T(a) − a t} · P̃_a(T = t),

where K_T(a) = m [log Θ(a) − log Θ(0)] is split exactly (:func:`exactdp.engine.tilt.log_mgf_parts`)
and the tilted law is the m-fold convolution of N_Z(f, s²) shifted by n0 — at t its mass
is O(1/sd), the centre of the tilted law.  Each tilted factor is kept on
``n0 ± w`` (mass outside ≤ ETA_S, :func:`window`); the m-fold sum of the windows is
convolved in float64 (non-negative: relative error ≤ (n+1)u per entry and level) and
trimmed at 1e-50 of its mass.  An entry P̃ then has relative error
``≤ conv + (m·ETA_S + trimmed)/P̃``.  One convolution serves a ladder of neighbouring t
(entries ≥ 1e-20 of the maximum); the others get their own tilt.

Tails by Chernoff: ``P(T ≥ x) ≤ e^{K_T(a) − a x}`` at the saddle point a of x.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.tilt import HUGE_MU, exact_saddle, frac_parts, log_mgf_parts, mp_bits_for
from exactdp.kernels.convolution import convolve_strided
from exactdp.kernels.tilted import saddle_point
from exactdp.numerics.precision import EPS64, to_mpf

__all__ = ["ETA_S", "window", "GroupPMF", "SetCGF"]

#: tilted single-factor mass left outside its window
ETA_S = 1e-50
_TRIM = 1e-50


def window(s2: float, eta: float) -> int:
    """Half-width w ≥ 1 of a tilted factor N_Z(f, s²) (|f| ≤ 1/2) with mass beyond
    ``n0 ± w`` at most eta: ``2 e^{(1/4 − (w+½)²)/(2s²)}/(1 − e^{−(w+½)/s²})``."""
    w = 1
    while True:
        x = w + 0.5
        lb = math.log(2) + (0.25 - x * x) / (2 * s2) - math.log(-math.expm1(-x / s2))
        if lb <= math.log(eta):
            return w
        w += 1


def _trim(p: np.ndarray, lo: int):
    """Drop both ends of a non-negative array while their mass stays ≤ _TRIM·total."""
    tot = float(p.sum())
    c = np.cumsum(p)
    cut = _TRIM * tot
    i = int(np.searchsorted(c, cut, side="right"))
    r = np.cumsum(p[::-1])
    j = int(np.searchsorted(r, cut, side="right"))
    i = min(i, p.shape[0] - 1)
    j = min(j, p.shape[0] - 1 - i)
    dropped = (float(c[i - 1]) if i else 0.0) + (float(r[j - 1]) if j else 0.0)
    return p[i:p.shape[0] - j], lo + i, dropped * (1 + 1e-12) / tot


class SetCGF:
    """Saddle points and the exact CGF of ``Σ_g A_g T_g`` for a set of groups."""

    def __init__(self, weights, counts, sigma2):
        self.A = tuple(int(a) for a in weights)
        self.m = tuple(int(c) for c in counts)
        self.s2q = tuple(Fraction(s) for s in sigma2)
        self.vq = sum((m * a * a * s for a, m, s in zip(self.A, self.m, self.s2q)), Fraction(0))
        self._A = np.array(self.A, dtype=np.int64)
        self._m = np.array(self.m, dtype=np.int64)
        self._s2 = np.array([float(s) for s in self.s2q])
        self._mu_scale = float(np.max(np.abs(self._A.astype(float)) * self._s2)) if self.A else 0.0

    def saddle(self, x: int) -> Fraction:
        """The a with K'(a) = x (negative for x < 0; the sum is symmetric)."""
        if x == 0 or not self.A:
            return Fraction(0)
        if x < 0:
            return -self.saddle(-x)
        v = float(self.vq)
        a = float(saddle_point(self._A, self._m, self._s2, float(x), float(x) / v))
        if a * self._mu_scale > HUGE_MU:
            return exact_saddle(self.A, self.m, self.s2q, int(x), self.vq)
        return Fraction(a)

    def K(self, a: Fraction):
        """K(a) = log E e^{a Σ A_g T_g} (exact part + κ + its error, rounded up)."""
        return self.K_err(a)[0]

    def K_err(self, a: Fraction):
        """``(K(a) rounded up by its error bound, that bound)``."""
        if not self.A:
            return mpmath.mpf(0), 0.0
        exact, kappa, kerr = log_mgf_parts(self.A, self.m, self.s2q, a)
        with mpmath.workprec(mp_bits_for(exact)):
            return to_mpf(exact) + kappa + kerr, float(kerr)

    def log_upper_tail(self, x: int):
        """An upper bound of log P(Σ ≥ x) (Chernoff at the saddle point; 0 for x ≤ 0)."""
        if x <= 0 or not self.A:
            return mpmath.mpf(0) if x <= 0 else mpmath.mpf("-inf")
        a = self.saddle(x)
        if a <= 0:
            return mpmath.mpf(0)
        with mpmath.workprec(mp_bits_for(a * x) + 64):
            return min(self.K(a) - to_mpf(a * x), mpmath.mpf(0))


class GroupPMF:
    """``log P(T = t)`` of one coarse group's sum, at any integer t, with a relative error."""

    def __init__(self, s2, m: int):
        self.s2q = Fraction(s2)
        self.s2 = float(self.s2q)
        self.m = int(m)
        self.cgf = SetCGF([1], [self.m], [self.s2q])
        self.sd = math.sqrt(self.m * max(self.s2, 0.25))
        self.h = max(1, int(self.sd))
        self._ladder: dict = {}
        self._cache: dict = {}

    def logp(self, t: int):
        """``(log P(T = t), relative error)``: a float log when |log| < 1e4, else mpf."""
        u = abs(int(t))
        hit = self._cache.get(u)
        if hit is not None:
            return hit
        tr = int(round(u / self.h)) * self.h
        out = self._read(self._conv(tr), u)
        if out is None:
            out = self._read(self._conv(u), u)
        if out is None:  # the tilted law at its own centre cannot be this small: a bug
            raise ArithmeticError(f"coarse atom {u} not representable")
        if len(self._cache) > 50_000:
            self._cache.clear()
        self._cache[u] = out
        return out

    def _read(self, conv, u: int):
        a, Kmp, lo, p, rel, drop, pmax = conv
        i = u - lo
        if not 0 <= i < p.shape[0]:
            return None
        e = float(p[i])
        if not e >= 1e-20 * pmax:
            return None
        r = rel + (self.m * ETA_S + drop) / e
        with mpmath.workprec(mp_bits_for(a * u) + 64):
            lg = Kmp - to_mpf(a * u) + math.log(e)
            if abs(lg) < 1e4:
                return float(lg), r + 4 * EPS64 * (1 + abs(float(lg)))
            return lg, r

    def _conv(self, c: int):
        hit = self._ladder.get(c)
        if hit is not None:
            return hit
        a = self.cgf.saddle(c)
        n0, ff, _ = frac_parts([1], [self.s2q], a)
        n0, f = n0[0], ff[0]
        w = window(self.s2, ETA_S)
        y = np.arange(-w, w + 1, dtype=float)
        ex = -((y - f) ** 2) / (2 * self.s2)
        base = np.exp(ex - ex.max())
        base /= math.fsum(base)
        # the exponents to 3u·|ex|, the normalisation (a window sum) to (2w+1)u and ≤ ETA_S
        rel = EPS64 * (3 * float(np.max(np.abs(ex))) + 2 * len(y) + 8) + ETA_S
        power, lo_p, out, lo_out, drop = base, -w, None, 0, 0.0
        k = self.m
        while k:
            if k & 1:
                if out is None:
                    out, lo_out = power, lo_p
                else:
                    rel += (min(out.shape[0], power.shape[0]) + 1) * EPS64
                    out = convolve_strided(out, power, 1)
                    lo_out += lo_p
                out, lo_out, d = _trim(out, lo_out)
                drop += d
            k >>= 1
            if k:
                rel += (power.shape[0] + 1) * EPS64
                power = convolve_strided(power, power, 1)
                lo_p *= 2
                power, lo_p, d = _trim(power, lo_p)
                drop += d * (k + 1)
        assert out is not None  # m ≥ 1
        K, kerr = self.cgf.K_err(a)
        rel += 2 * kerr  # K is rounded up by kerr: the atom's log is within 2·kerr
        res = (a, K, lo_out + self.m * n0, out, rel, drop, float(out.max()))
        if len(self._ladder) > 64:
            self._ladder.clear()
        self._ladder[c] = res
        return res
