"""Continuous Laplaces beside discrete Gaussians too fine for exact windows: a certified
quadrature of the Gaussian route's oracle against the Laplaces' loss law.

A prototype, not yet used by :class:`~exactdp.accounting.mixed.MixedAccountant`: one δ(ε)
costs 10⁴–10⁵ oracle values and as many cells of ball arithmetic (0.5–5 CPU-s), too slow for
ε(δ)'s and β(α)'s searches as they stand (bench/laplace_beside.md).

With ``m`` Laplaces of one μ (:mod:`exactdp.kinds.laplace`: atoms ``a_j`` at the knots
``A_j = (2j − m)μ``, density ``f(l) = K e^{l/2} g_j((l − A_j)/(2μ))`` between them,
:mod:`exactdp.kinds.laplace_gauss`) and the discrete Gaussians' certified ``δ_G`` (the
oracle: the lattice or lattice-free route), by independence

    δ(ε) = Σ_j a_j δ_G(ε − A_j) + ∫ f(l) δ_G(ε − l) dl.

The integral is bracketed from δ_G at the nodes ``s_k = k·2^{−n}`` of one grid for every ε
(the oracle's answers are cached: a search's ε share them).  ``γ(x) = δ_G(log x)`` is convex
and nonincreasing in x (a hockey-stick curve), so on a cell ``[x_a, x_b]`` (``x = e^s``,
``s = ε − l``) γ lies below its chord and above each neighbouring secant extended (slopes
bounded with the nodes' brackets outward) and above ``γ(x_b)``; each bound is linear in x,
whose integrals against f are the cell's masses ``∫f`` and ``e^ε∫f e^{−l}`` in closed form
(``∫ e^{al} q(l) dl = e^{al} Σ_k (−1)^k q^{(k)}(l)/a^{k+1}``), in balls.  The chord's and the
secants' gap is of second order in the grid step: n is raised from 10 until the bracket is
:data:`GOAL` relative (a node budget bounds the work; beyond it the query is refused).
δ_G at s < 0 is ``1 − e^s + e^s δ_G(−s)`` (or its zCDP-bounded form far below −ρ).
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint

from exactdp.engine.finite_loss import prec_ctx
from exactdp.kinds.laplace import LaplaceLoss
from exactdp.kinds.laplace_gauss import MAX_COUNT_BESIDE_GAUSS, LaplaceGaussLoss
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError

__all__ = ["LaplaceOracleLoss", "GOAL", "MAX_NODES"]

#: the relative width aimed at (the oracle's own brackets add theirs)
GOAL = 2e-10
#: the most grid nodes one δ(ε) may span (beyond: refused)
MAX_NODES = 1 << 16
_PREC = 192
_N0, _N_MAX = 10, 20


def _q(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


class LaplaceOracleLoss:
    """``δ(ε)`` of ``m`` Laplaces of one μ beside a discrete-Gaussian oracle (module docstring);
    the interface of :class:`~exactdp.kinds.laplace.LaplaceLoss` (``delta``, ``extent``, ``mu``, ``m``).

    Parameters
    ----------
    lap : LaplaceLoss
    oracle : Accountant
        The discrete Gaussians' route (its ``delta`` gives certified brackets).
    reflected : callable
        ``t -> ball or None``: δ_G at ``t < −ρ`` from the zCDP bound (``MixedAccountant._reflected``).
    """

    def __init__(self, lap: LaplaceLoss, oracle, reflected):
        if lap.m > MAX_COUNT_BESIDE_GAUSS:
            raise InputError("laplace count", lap.m, f"at most {MAX_COUNT_BESIDE_GAUSS} continuous Laplaces beside "
                                                     "discrete Gaussians too fine for exact windows")
        self.lap, self.oracle, self.reflected = lap, oracle, reflected
        self.mu, self.m, self.extent = lap.mu, lap.m, lap.extent
        # (the density's polynomials g_j, exact: kinds/laplace_gauss; ρ there is not used)
        self.polys = LaplaceGaussLoss(lap, Fraction(1)).polys
        self.evaluations = 0
        self._g: dict = {}  # node s (Fraction) → ball of δ_G(s)
        self._cache: dict = {}
        self._last_n = _N0

    # ------------------------------------------------------------------ δ_G at nodes
    def _fill(self, ss) -> None:
        """Balls of δ_G at the exact thresholds ``ss`` into the cache (one batch of the oracle)."""
        ask = set()
        for s in ss:
            if s in self._g:
                continue
            if s < 0:
                got = self.reflected(s)
                if got is not None:
                    self._g[s] = got
                    continue
                if -s not in self._g:
                    ask.add(-s)
            else:
                ask.add(s)
        if ask:
            todo = sorted(ask)
            self.evaluations += len(todo)
            with prec_ctx(_PREC):
                for s, pt in zip(todo, self.oracle.delta(todo)):
                    self._g[s] = flint.arb(pt.lower).union(flint.arb(pt.upper))
        with prec_ctx(_PREC):
            for s in ss:
                if s not in self._g:  # (s < 0: mirrored, a sum of two nonnegative terms)
                    sb = _q(s)
                    self._g[s] = -sb.expm1() + sb.exp() * self._g[-s]

    # ------------------------------------------------------------------ δ(ε)
    def delta(self, t_lo: Fraction, t_hi: Fraction, tb: flint.arb, prec: int) -> flint.arb:
        """A ball of δ at the real ``t ∈ [t_lo, t_hi]`` (δ nonincreasing: ``[δ(t_hi), δ(t_lo)]``);
        ``prec`` is not used beyond :data:`_PREC` (the oracle's width dominates)."""
        del tb, prec
        if t_lo == t_hi:
            return self._at(Fraction(t_lo))
        return self._at(Fraction(t_hi)).union(self._at(Fraction(t_lo)))

    def _at(self, e: Fraction) -> flint.arb:
        if e in self._cache:
            return self._cache[e]
        m = self.m
        atoms = [self.lap.knot(j) for j in range(m + 1)]
        self._fill([e - a for a in atoms])
        with prec_ctx(_PREC):
            k = ((-_q(self.mu)) / 2).exp() / 2
            k = k**m
            atom_sum = flint.arb(0)
            for j, a in enumerate(atoms):
                atom_sum += math.comb(m, j) * k * (_q(a) / 2).exp() * self._g[e - a]
        best = None
        for n in range(max(_N0, self._last_n - 1), _N_MAX + 1):  # (from the level the last ε needed)
            h = Fraction(1, 2**n)
            span = (e + self.extent) / h - (e - self.extent) / h
            if span > MAX_NODES:
                break
            lo, hi = self._integral(e, h, k)
            with prec_ctx(_PREC):
                d = (atom_sum + lo).union(atom_sum + hi)
            best = d
            if d.rad() <= d.upper() * (GOAL / 2):
                self._last_n = n
                break
        if best is None or not best.rad() <= best.upper() * 5e-10:
            raise UncertifiedError(f"continuous Laplaces beside the discrete Gaussians' oracle: δ(ε={float(e):.6g}) "
                                   f"is not bracketed to 1e-9 within {MAX_NODES} quadrature nodes")
        self._cache[e] = best
        return best

    def _integral(self, e: Fraction, h: Fraction, k: flint.arb) -> tuple:
        """``(lower, upper)`` balls of ``∫ f(l) δ_G(e − l) dl`` on the grid of step h."""
        m, mu = self.m, self.mu
        k_lo = math.floor((e - self.extent) / h) - 1
        k_hi = math.ceil((e + self.extent) / h) + 1
        nodes = [i * h for i in range(k_lo, k_hi + 1)]
        self._fill(nodes)
        lower, upper = flint.arb(0), flint.arb(0)
        with prec_ctx(_PREC):
            eb = _q(e)
            ee = eb.exp()
            xs = {i: _q(i * h).exp() for i in range(k_lo, k_hi + 1)}
            g = {i: self._g[i * h] for i in range(k_lo, k_hi + 1)}
            for j in range(m):
                a_j, a_j1 = self.lap.knot(j), self.lap.knot(j + 1)
                exact = [self.polys[j]]
                while exact[-1].degree() > 0:
                    exact.append(exact[-1].derivative())
                derivs = [flint.arb_poly([flint.arb(c) for c in d.coeffs()]) for d in exact]
                two_mu = _q(2 * mu)

                def anti(l: Fraction, sign: int, a_j=a_j, derivs=derivs, two_mu=two_mu):
                    # (∫ e^{sign·l/2} g_j((l − A_j)/(2μ)) dl, its antiderivative at l)
                    w = _q((l - a_j) / (2 * mu))
                    a = flint.arb(sign) / 2
                    tot = flint.arb(0)
                    for r, dp in enumerate(derivs):
                        tot += (-1) ** r * dp(w) / (two_mu**r * a ** (r + 1))
                    return (a * _q(l)).exp() * tot

                # the cells [s_i, s_{i+1}] meeting s ∈ (e − A_{j+1}, e − A_j)
                s_lo, s_hi = e - a_j1, e - a_j
                i0, i1 = math.floor(s_lo / h), math.ceil(s_hi / h)
                bounds = [max(s_lo, i * h) for i in range(i0, i1)] + [s_hi]
                prev = {}
                for idx, i in enumerate(range(i0, i1)):
                    lo_s, hi_s = bounds[idx], bounds[idx + 1]
                    if lo_s >= hi_s:
                        continue
                    for s in (lo_s, hi_s):  # (l = e − s)
                        if s not in prev:
                            prev[s] = (anti(e - s, 1), anti(e - s, -1))
                    p_hi, p_lo = prev[lo_s], prev[hi_s]  # (l decreasing in s)
                    m0 = k * (p_hi[0] - p_lo[0])
                    m1 = k * ee * (p_hi[1] - p_lo[1])
                    xa, xb = xs[i], xs[i + 1]
                    ga, gb = g[i], g[i + 1]
                    da, db = m1 - xa * m0, xb * m0 - m1  # ∫f(x − x_a), ∫f(x_b − x): both ≥ 0
                    da, db = da.nonnegative_part(), db.nonnegative_part()
                    dx = xb - xa
                    upper += (flint.arb(ga.upper()) * db + flint.arb(gb.upper()) * da) / dx
                    cands = [flint.arb(gb.lower()) * m0]
                    if i - 1 in g:
                        s1 = (flint.arb(ga.lower()) - flint.arb(g[i - 1].upper())) / (xa - xs[i - 1])
                        cands.append(flint.arb(ga.lower()) * m0 + s1 * da)
                    if i + 2 in g:
                        s2 = (flint.arb(g[i + 2].upper()) - flint.arb(gb.lower())) / (xs[i + 2] - xb)
                        cands.append(flint.arb(gb.lower()) * m0 - s2 * db)
                    lower += max(cands, key=lambda c: c.lower()).lower()
        return lower, upper
