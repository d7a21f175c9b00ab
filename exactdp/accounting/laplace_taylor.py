"""A certified piecewise Taylor model of the continuous Laplaces' hockey-stick, vectorised.

``D_L(t) = E_P[(1 − e^{t−L})₊]`` of ``m`` Laplaces (one ``μ`` or several) is, between two of its knots
``A_j`` (``(2j − m)μ`` for one μ), the entire function (:mod:`exactdp.kinds.laplace`; E = Σ m_kμ_k)

    D(t) = 2^{1−m} e^{(t − E)/2} Σ_{j: A_j > t} Σ_c Γ_{c,j} W_c((A_j − t)/2).

Since ``W_c' = W_{c−1}`` (``W_{−1} = cosh``, ``W_{−2} = sinh``, alternating below), its Taylor
coefficients at ``t₀`` are, with ``S(k) = Σ_j Σ_c Γ_{c,j} W_{c−k}((A_j − t₀)/2)``,

    a_n = 2^{1−m} e^{(t₀ − E)/2} (½)^n/n! Σ_{k≤n} C(n, k)(−1)^k S(k),

and ``D^{(N)}`` has the same form at ``n = N``.  Each knot interval is cut into cells; on a cell
of half-width h about ``t₀`` the degree-(N−1) polynomial is within ``sup_cell |D^{(N)}|·h^N/N!``
of D (Lagrange), the supremum enclosed by the same formula at a ball covering the cell (Arb).
Cells straddling a knot (one float ulp wide) have no model; a cell is modelled when first used.
Evaluation is float64 Horner, its error bounded by ``(4N + 8)·2^{−52}·Σ (n+1)|a_n||d|^n`` (the
rounding of ``d = x − t₀`` and of Horner's 2N operations) plus the coefficients' balls and float
roundings ``Σ r_n |d|^n``.

Reference: Higham (2002), *Accuracy and Stability of Numerical Algorithms*, §5.1 (Horner's error).
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np

from exactdp.engine.smoothed_profile import float_enclosure
from exactdp.kinds.laplace import LaplaceLoss
from exactdp.numerics.precision import EPS64

__all__ = ["LaplaceTaylor", "DEGREE", "CELLS"]

#: the polynomials' degree + 1 (N)
DEGREE = 12
#: cells over the whole support (split evenly between the m knot intervals, at least 2 each), each
#: modelled on first use
CELLS = 256
_PREC = 128


def _q(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


class LaplaceTaylor:
    """Piecewise Taylor polynomials of ``D_L`` on ``[−mμ, mμ]`` with certified error (module docstring).

    Parameters
    ----------
    loss : LaplaceLoss
        The composed Laplaces.

    Attributes
    ----------
    grid : numpy.ndarray
        The cells' float ends (increasing).
    """

    def __init__(self, loss: LaplaceLoss):
        self.loss = loss
        nk = loss.n_knots
        knots = list(loss.knots)
        dn, up = float_enclosure(knots)
        per = max(2, CELLS // max(1, nk - 1))
        pts = [float(dn[0])]
        for j in range(nk - 1):
            seg = np.linspace(float(up[j]), float(dn[j + 1]), per + 1)
            seg[0], seg[-1] = up[j], dn[j + 1]
            pts.extend(seg.tolist())
        pts.append(float(up[nk - 1]))
        self.grid = np.unique(np.array(pts))
        n_cells = self.grid.size - 1
        N = DEGREE
        # a cell is modelled unless a knot lies inside it (the one-ulp cells [fl_dn(A_j), fl_up(A_j)])
        self.valid = np.ones(n_cells, dtype=bool)
        for j in range(nk):
            if dn[j] < up[j]:
                self.valid[int(np.searchsorted(self.grid, dn[j], side="right")) - 1] = False
        self.built = np.zeros(n_cells, dtype=bool)  # (cells are modelled on first use)
        self.t0 = np.zeros(n_cells)
        self.coef = np.zeros((n_cells, N))
        self.rad = np.zeros((n_cells, N))
        self.rem = np.zeros(n_cells)

    def _build(self, cells) -> None:
        """Model the given cells (:meth:`_cell`)."""
        old = flint.ctx.prec
        try:
            flint.ctx.prec = _PREC
            for i in cells:
                a, b = float(self.grid[i]), float(self.grid[i + 1])
                fa, fb = Fraction(a), Fraction(b)
                t0 = 0.5 * (a + b)
                self._cell(i, t0, fa, fb, max(Fraction(t0) - fa, fb - Fraction(t0)))
                self.built[i] = True
        finally:
            flint.ctx.prec = old

    def _s(self, tb: flint.arb, kmax: int, right: Fraction) -> list:
        """``[S(0), …, S(kmax)]`` at the ball ``tb`` inside a cell of right end ``right`` (no knot
        inside the cell: the knots at or above ``right`` are those above every t of the cell, a
        knot at the very end included — its term's derivatives do not vanish there)."""
        loss = self.loss
        m = loss.m
        s = [flint.arb(0)] * (kmax + 1)
        for j in range(loss.n_knots):
            if loss.knot(j) < right:
                continue
            a = _q(loss.knot(j))
            y = (a - tb) / 2
            y = y.nonnegative_part() if y.lower() < 0 else y  # (y ≥ 0 on the cell; its ball may reach below 0)
            w = loss._w(y, _PREC)  # W_0 … W_m (a ball y ≥ 0)
            ch, sh = y.cosh(), y.sinh()
            for k in range(kmax + 1):
                tot = flint.arb(0)
                for c in range(m + 1):
                    g = loss.gamma[c][j]
                    if g:
                        idx = c - k
                        tot += g * (w[idx] if idx >= 0 else (ch if idx % 2 else sh))
                s[k] += tot
        return s

    def _derivative(self, tb: flint.arb, s: list, n: int) -> flint.arb:
        """``D^{(n)}`` at the ball ``tb`` from its ``S`` values."""
        loss = self.loss
        scale = loss.prefactor(tb)
        tot = sum((math.comb(n, k) * (-1) ** k * s[k] for k in range(n + 1)), flint.arb(0))
        return scale * tot / flint.arb(2) ** n

    def _cell(self, i: int, t0: float, fa: Fraction, fb: Fraction, h: Fraction) -> None:
        N = DEGREE
        tb = flint.arb(t0)
        s = self._s(tb, N - 1, fb)
        for n in range(N):
            a_n = self._derivative(tb, s, n) / math.factorial(n)
            mid = float(a_n.mid())
            self.coef[i, n] = mid
            self.rad[i, n] = math.nextafter(float(a_n.rad()) * (1 + 1e-9) + EPS64 * abs(mid), math.inf)
        cell = _q(fa).union(_q(fb))
        top = self._derivative(cell, self._s(cell, N, fb), N)
        bound = abs(top).upper() * _q(h) ** N / math.factorial(N)
        self.rem[i] = math.nextafter(float(bound.upper()) * (1 + 1e-9), math.inf) + 1e-300
        self.t0[i] = t0

    def brackets(self, x_dn: np.ndarray, x_up: np.ndarray) -> tuple:
        """``(lo, hi, ok)``: float bounds of D over each ``[x_dn, x_up]`` where both ends lie in
        one modelled cell (``ok``; elsewhere lo = 0, hi = 1)."""
        g = self.grid
        k = np.searchsorted(g, x_dn, side="right") - 1
        k2 = np.searchsorted(g, x_up, side="right") - 1
        inside = (k >= 0) & (k == k2) & (k < g.size - 1)
        kk = np.where(inside, k, 0)
        ok = inside & self.valid[kk]
        new = np.unique(kk[ok & ~self.built[kk]])
        if new.size:
            self._build(new.tolist())
        lo = np.zeros(x_dn.size)
        hi = np.ones(x_dn.size)
        idx = np.flatnonzero(ok)
        if idx.size:
            c = kk[idx]
            v_up, e_up = self._eval(c, x_up[idx])
            v_dn, e_dn = self._eval(c, x_dn[idx])
            lo[idx] = np.clip(v_up - e_up, 0.0, 1.0)
            hi[idx] = np.clip(v_dn + e_dn, 0.0, 1.0)
        return lo, hi, ok

    def _eval(self, c: np.ndarray, x: np.ndarray) -> tuple:
        """Horner's value and its error bound (module docstring) at x in the cells c."""
        N = DEGREE
        d = x - self.t0[c]
        ad = np.abs(d) * (1 + 2 * EPS64)
        coef, rad = self.coef[c], self.rad[c]
        p = coef[:, N - 1].copy()
        b = N * np.abs(coef[:, N - 1])
        r = rad[:, N - 1].copy()
        for n in range(N - 2, -1, -1):
            p = p * d + coef[:, n]
            b = b * ad + (n + 1) * np.abs(coef[:, n])
            r = r * ad + rad[:, n]
        err = ((4 * N + 8) * EPS64 * b + r) * (1 + 8 * N * EPS64) + self.rem[c]
        return p, err
