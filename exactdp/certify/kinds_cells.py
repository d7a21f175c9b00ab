"""Continuous Gaussians beside a large discrete part: the Gaussian's closed form summed over cells.

A continuous Gaussian of total ``μ = Σρ`` beside a discrete part with loss atoms ``v_j`` (P-mass
``p_j``, Q-mass ``q_j = e^{−v_j}p_j``) makes every tail of the loss ``L`` a smooth sum

    ``P(L < ℓ) = Σ_j p_j Φ((ℓ − v_j − μ)/s)``,   ``Q(L ≥ ℓ) = Σ_j q_j Φ̄((ℓ − v_j + μ)/s)``,
    ``P(L > ε) = Σ_j p_j Φ̄((ε − v_j − μ)/s)``,   ``Q(L > ε) = Σ_j q_j Φ̄((ε − v_j + μ)/s)``,

``s = √(2μ)`` — the Gaussian's exact trade-off conditioned on each discrete atom (Neyman–Pearson
on the joint outputs).  When the joint atoms are too many to list (several groups whose loss grids
share no short grid), each group's atoms are put on cells ``h·c`` of one dyadic width ``h`` with
their *moments*: the group becomes the truncated series ``Σ_c x^c Σ_{i∈c} p_i e^{Δ_i y}`` (``Δ_i``
the atom's exact offset from its cell), and the groups compose by multiplying these series — an
exact identity for every retained order of ``y`` (offsets add).  The sums above are then
``Σ_c Σ_{n≤N} J_{c,n}·∂_v^n F(hc)`` with ``∂_v^n`` of ``Φ((t − v)/s)`` equal to ``−s^{−n}He_{n−1}(z)φ(z)``
(``z = (t − v)/s``, He the probabilists' Hermite polynomials) and the opposite for ``Φ̄``.

Error bound.  The Taylor remainder of each atom at order ``N`` is at most
``(|Δ|/s)^{N+1}/((N+1)√N!)·1.09/√(2π)·e^{−m²/4}``, ``m`` the least ``|z|`` over the atom's cell
offset: Cramér's inequality ``|He_N(x)| ≤ 1.086435·√N!·e^{x²/4}`` (Abramowitz & Stegun 22.14.17,
with ``He_N(x) = 2^{−N/2}H_N(x/√2)``).  ``|Δ| ≤ D``, the sum over groups of their largest offset,
and ``h`` is chosen with ``D ≤ s/4``; the remainder is added to each sum's ball, cell by cell
(its P- or Q-mass times the bound).  Everything else is Arb balls; the groups' atoms and their
left-out mass are :mod:`.kind_atoms`'s.  Nothing is shared with the engine's oracle, sieve or
nodes (:mod:`exactdp.accounting.gaussian_beside`).

Reference: the tensor product of trade-off functions and the Gaussian's ``G_μ`` (Dong, Roth & Su
2022); the moment expansion is the classical Taylor expansion of a convolution with a Gaussian.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb, arb_poly, ctx

from exactdp.certify.balls import ball, prefix_sums
from exactdp.certify.kind_atoms import REMEDY, GroupAtoms
from exactdp.numerics.errors import UncertifiedError

__all__ = ["Cells", "MAX_CELLS", "METHOD"]

METHOD = "arb/kinds-gaussian-cells"
#: most cells of the groups together (the series products cost about (cells·order)²/2 in Arb)
MAX_CELLS = 50_000
#: Cramér's constant, rounded up (1.086434811…)
_CRAMER = Fraction(10865, 10000)


def _order(prec: int) -> int:
    """The series order N with the remainder factor ``(1/4)^{N+1}/((N+1)√N!)`` below ``2^{−prec/2−32}``
    (of each cell's mass: a query needing more runs at the next precision level)."""
    n = 4
    while (n + 1) * 2 * math.log(2) + 0.5 * math.lgamma(n + 1) + math.log(n + 1) < (prec // 2 + 32) * math.log(2):
        n += 1
    return n


class Cells:
    """The discrete part of a design as moment series on cells of width ``h`` (module docstring).

    Parameters
    ----------
    parts : list of GroupAtoms
        The groups' loss atoms (:func:`~.kind_atoms.group_atoms`).
    mu : Fraction
        The continuous Gaussians' total ``μ = Σρ`` (> 0).
    prec : int
        Arb precision (bits) the sums are wanted at; sets the series order.
    """

    def __init__(self, parts: list, mu: Fraction, prec: int):
        if mu <= 0 or not parts:
            raise ValueError("cells need continuous Gaussians and a discrete part")
        self.mu = Fraction(mu)
        self.s = (2 * ball(self.mu)).sqrt()
        s_lo = float(self.s.lower()) * (1 - 1e-12)
        self.h = Fraction(2) ** math.floor(math.log2(s_lo / (2 * len(parts))))  # D ≤ G·h/2 ≤ s/4
        self.N = _order(prec)
        width = sum(int(p.s * len(p.coeffs) / self.h) + 2 for p in parts)
        if width > MAX_CELLS:
            raise UncertifiedError(
                f"--certify: continuous Gaussians (√(2μ) = {float(self.s.mid()):.3g}) beside a discrete part spanning "
                f"{width:.3g} cells of width {float(self.h):.3g} (at most {MAX_CELLS:.3g}): the Gaussian is too narrow "
                f"beside the discrete losses' spread for the cell series; {REMEDY}")
        D = Fraction(0)
        series_p: list | None = None
        series_q: list | None = None
        offset = 0
        self.lost = arb(0)
        for part in parts:
            c0, sp, sq, dmax = self._group(part)
            D += dmax
            offset += c0
            self.lost += part.lost
            series_p = sp if series_p is None else _times(series_p, sp, self.N)
            series_q = sq if series_q is None else _times(series_q, sq, self.N)
        assert series_p is not None and series_q is not None  # (at least one group)
        self.D = D
        self.lost_up = self.lost.upper()
        self.offset = offset
        # the series' coefficients times s^{−n}, cell by cell: J[k] = [J_{k,0}, J_{k,1}/s, …]
        self.K = max(max(series_p[n].degree(), series_q[n].degree()) for n in range(self.N + 1)) + 1
        inv = [(1 / self.s) ** n for n in range(self.N + 1)]
        self.P = [[series_p[n][k] * inv[n] for n in range(self.N + 1)] for k in range(self.K)]
        self.Q = [[series_q[n][k] * inv[n] for n in range(self.N + 1)] for k in range(self.K)]
        self.mass = {id(self.P): prefix_sums([row[0] for row in self.P]),
                     id(self.Q): prefix_sums([row[0] for row in self.Q])}
        # the remainder factor (|Δ|/s)^{N+1}/((N+1)√N!)·1.09/√(2π), as a ball's upper end
        ratio = ball(D) / self.s
        self.rem = (ratio ** (self.N + 1) / ((self.N + 1) * arb(math.factorial(self.N)).sqrt())
                    * ball(_CRAMER) / (2 * arb.pi()).sqrt()).upper()
        self.dz = (ball(D) / self.s).upper()
        self._plan: tuple | None = None

    def __len__(self) -> int:
        return self.K

    def _group(self, part: GroupAtoms):
        """``(first cell, P-series, Q-series, largest |offset|)`` of one group's atoms."""
        h = self.h
        cells = [round((part.c + part.s * i) / h) for i in range(len(part.coeffs))]
        c0 = min(cells)
        width = max(cells) - c0 + 1
        n_ord = self.N + 1
        P = [[arb(0)] * width for _ in range(n_ord)]
        Q = [[arb(0)] * width for _ in range(n_ord)]
        dmax = Fraction(0)
        for i, (p, c) in enumerate(zip(part.coeffs, cells)):
            v = part.c + part.s * i
            delta = v - h * c
            dmax = max(dmax, abs(delta))
            db = ball(delta)
            q = p * (-ball(v)).exp()
            tp, tq = p, q
            k = c - c0
            for n in range(n_ord):
                P[n][k] += tp
                Q[n][k] += tq
                tp = tp * db / (n + 1)
                tq = tq * db / (n + 1)
        return c0, [arb_poly(row) for row in P], [arb_poly(row) for row in Q], dmax

    # -- the four sums -------------------------------------------------------------------
    def _sum(self, J: list, t: Fraction, upper: bool) -> arb:
        """``Σ_j w_j F((t − v_j)/s)``, F = Φ̄ (``upper``) or Φ, over the series ``J`` (P or Q),
        with the Taylor remainder in the ball."""
        s, h = self.s, ball(self.h)
        tb = ball(t)
        root2 = arb(2).sqrt()
        rad = arb(0)
        total = arb(0)
        c_lo = self.offset
        # cells with |z| > Z (z = (t − hc)/s falls with the cell): F is within Φ̄(Z − dz) of 0 or 1 on
        # all their atoms (monotone), so their sum is their mass times [0, Φ̄(Z − dz)] or [1 − that, 1]
        zmax = float(self.dz.mid()) + math.sqrt(2 * (ctx.prec + 16) * math.log(2))
        hf, sf, tf = float(self.h), float(self.s.mid()), float(t)
        k_hi = min(self.K, max(0, math.floor((tf + zmax * sf) / hf) - c_lo + 2))  # from here z < −Z
        k_lo = min(k_hi, max(0, math.ceil((tf - zmax * sf) / hf) - c_lo - 2))  # below here z > Z
        pre = self.mass[id(J)]
        for k, inside in ((k_lo - 1, False), (k_hi, True)):
            if 0 <= k < self.K:  # (check the cut on the ball: the edge cells must be beyond Z)
                z = (tb - h * (c_lo + k)) / s
                if not (z > zmax if not inside else z < -zmax):
                    raise ArithmeticError("the far cells' cut is not certain")
        eps = (((ball(Fraction(zmax)) - self.dz) / root2).erfc() / 2).upper()
        high, low = pre[k_lo], pre[self.K] - pre[k_hi]  # the masses at z > Z and z < −Z
        # F = Φ̄ (upper): ≈ 0 at z > Z, ≈ 1 at z < −Z; F = Φ: the other way round
        near_one, near_zero = (low, high) if upper else (high, low)
        total += near_one + arb(0, ((near_one.upper() + near_zero.upper()) * eps).upper())
        for k in range(k_lo, k_hi):
            row = J[k]
            w0 = row[0]
            if w0 == 0:
                continue
            z = (tb - h * (c_lo + k)) / s
            phi = (-(z * z) / 2).exp() / (2 * arb.pi()).sqrt()
            tail = ((z / root2).erfc() if upper else (-z / root2).erfc()) / 2
            # Σ_{n≥1} J_n s^{−n} He_{n−1}(z): He_0 = 1, He_1 = z, He_{k+1} = z He_k − k He_{k−1}
            he_prev, he = arb(0), arb(1)
            acc = arb(0)
            for n in range(1, self.N + 1):
                acc += row[n] * he
                he_prev, he = he, z * he - (n - 1) * he_prev
            total += w0 * tail + (phi * acc if upper else -phi * acc)
            m = (abs(z) - self.dz).max(arb(0))
            rad += w0.upper() * (-(m * m) / 4).exp().upper()
        bound = (rad * self.rem).upper()
        return total + arb(0, bound)

    def p_below(self, ell: Fraction) -> arb:
        """``P(kept, L < ℓ)``."""
        return self._sum(self.P, ell - self.mu, upper=False)

    def q_at_least(self, ell: Fraction) -> arb:
        """``Q(kept, L ≥ ℓ)``."""
        return self._sum(self.Q, ell + self.mu, upper=True)

    def p_above(self, e: Fraction) -> arb:
        """``P(kept, L > ε)``."""
        return self._sum(self.P, e - self.mu, upper=True)

    def q_above(self, e: Fraction) -> arb:
        """``Q(kept, L > ε)``."""
        return self._sum(self.Q, e + self.mu, upper=True)

    # -- planning (float64) -------------------------------------------------------------------
    def _p_below_float(self, ell: float) -> float:
        if self._plan is None:
            mids = np.array([[float(x.mid()) for x in row] for row in self.P])  # K × (N+1)
            cells = float(self.h) * (self.offset + np.arange(self.K))
            self._plan = (mids, cells, float(self.s.mid()))
        mids, cells, s = self._plan
        z = (ell - float(self.mu) - cells) / s
        erfc = np.frompyfunc(math.erfc, 1, 1)
        phi = np.exp(-z * z / 2) / math.sqrt(2 * math.pi)
        cdf = erfc(-z / math.sqrt(2)).astype(float) / 2
        he_prev, he, acc = np.zeros_like(z), np.ones_like(z), np.zeros_like(z)
        for n in range(1, self.N + 1):
            acc += mids[:, n] * he
            he_prev, he = he, z * he - (n - 1) * he_prev
        return float(np.sum(mids[:, 0] * cdf - phi * acc))

    def threshold_tests(self, ab: arb, prec: int) -> list:
        """``(ℓ, P(kept, L < ℓ), Q(kept, L ≥ ℓ))`` at ℓ either side of the root of ``P(L < ℓ) = α``
        (found on float midpoints: only where to look)."""
        amid = float(ab.mid())
        lo = float(self.h) * self.offset - float(self.mu) - 40 * float(self.s.mid()) - 1
        hi = float(self.h) * (self.offset + self.K) + float(self.mu) + 40 * float(self.s.mid()) + 1
        for _ in range(200):
            mid = (lo + hi) / 2
            if hi - lo <= 1e-13 * (abs(mid) + 1):
                break
            if self._p_below_float(mid) < amid:
                lo = mid
            else:
                hi = mid
        centre = Fraction((lo + hi) / 2)
        out = []
        half = prec // 2
        for k in (0, 1, 2):  # (the float root is good to about 2^−40: the nearest pair straddles it)
            eta = (abs(centre) + 1) * Fraction(1, 2 ** max(8, min(half, 38) - 8 * k))
            for ell in (centre - eta, centre + eta):
                out.append((ell, self.p_below(ell), self.q_at_least(ell)))
        out.sort(key=lambda t: t[0])
        return out


def _times(a: list, b: list, N: int) -> list:
    """The product of two truncated series in y with arb_poly coefficients (orders ≤ N)."""
    out = []
    for n in range(N + 1):
        acc = arb_poly([])
        for i in range(n + 1):
            acc += a[i] * b[n - i]
        out.append(acc)
    return out
