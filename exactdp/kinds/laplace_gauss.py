"""Continuous Laplaces composed with continuous Gaussians, exactly (certified quadrature).

``m`` continuous Laplaces of one ``μ = |shift|/scale`` (:mod:`exactdp.kinds.laplace`) have the
loss ``L`` whose P-law is atoms ``a_j = K e^{A_j/2} C(m, j)`` at the knots ``A_j = (2j − m)μ``
(``K = (e^{−μ/2}/2)^m``) and, between consecutive knots, the density

    f(l) = K e^{l/2} Σ_{c ≥ 1} Σ_{i: A_i > l} Γ_{c,i} (A_i − l)^{c−1} / (2^c (c−1)!)

(the B-spline expansion of :mod:`~exactdp.kinds.laplace`, whose hockey-stick integral is its
``W_c``).  The continuous Gaussians' loss is ``N(ρ, 2ρ)`` (ρ their total zCDP), with the
hockey-stick ``δ_N(s) = ½erfc((s − ρ)/(2√ρ)) − ½e^s erfc((s + ρ)/(2√ρ))``.  By independence,
conditioning on L,

    D(t) = Σ_j a_j δ_N(t − A_j) + Σ_{j<m} ∫_{A_j}^{A_{j+1}} f(l) δ_N(t − l) dl.

On each knot interval the integrand is entire (a polynomial with exact rational coefficients,
an exponential and erfc), so each integral is a rigorous enclosure by Arb's Petras–Gauss–Legendre
integration (``acb.integral``: error bounds from the integrand's bound on complex ellipses,
Johansson 2018, "Numerical integration in arbitrary-precision ball arithmetic").  The working
precision is raised until the sum's relative radius is about ``2^{−prec}`` (the polynomials'
alternating coefficients cancel by more bits as ``m`` grows), never guessed.

Laplaces of several μ (:class:`~exactdp.kinds.laplace.LaplaceLoss` with several groups) have the
same form with their merged knots ``A_j`` (not equally spaced), ``K = e^{−E/2}2^{−m}`` and the
atoms' weights ``Γ_{0,j}`` in place of ``C(m, j)``: each knot interval ``[A_j, A_{j+1}]`` is
mapped to ``w ∈ [0, 1]`` by ``l = A_j + h_j w`` (exact rational polynomials in w).

One Laplace (m = 1) needs no quadrature: with ``Φ`` the normal cdf, ``σ² = 2ρ`` and
``∫e^{al}Φ((l − c)/σ)dl = (e^{al}Φ((l − c)/σ) − e^{ac + a²σ²/2}Φ((l − c − aσ²)/σ))/a``
(differentiate), the density's part is ``(e^{−μ/2}/2)(G(μ) − G(−μ))`` with

    G(l) = e^{l/2}Φ((l − x + ρ)/σ) + e^{x − l/2}Φ((l − x − ρ)/σ) − 2e^{x/2 − ρ/4}Φ((l − x)/σ)

(a = ±½; the two ``e^{ac + a²σ²/2}`` terms coincide), every Φ an Arb ``erfc`` ball; its
cancellation is met by the same precision raising (:data:`CLOSED_BITS` at most, then the
quadrature).  As σ → 0 it is the single Laplace's ``1 − e^{(x−μ)/2}`` (``x ∈ [0, μ]``).
Several Laplaces likewise: on each knot interval the density is ``K e^{l/2} P_j(l)``, P_j the exact
polynomial above in l, and by parts ``I_k = ∫ l^k e^{al}Φ((l − c)/σ) dl`` is
``(l^k e^{al}Φ((l − c)/σ) − k I_{k−1} − e^{ac + a²σ²/2} N_k)/a`` with the Gaussian partial moments
``N_k = Σ_i C(k, i) c'^{k−i} σ^i T_i(u)``, ``c' = c + aσ²``, ``u = (l − c')/σ``, ``T_0 = Φ(u)``,
``T_1 = −φ(u)``, ``T_i = −u^{i−1}φ(u) + (i − 1)T_{i−2}`` (:meth:`LaplaceGaussLoss._closed_poly`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint

from exactdp.kinds.laplace import LaplaceLoss
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import InputError

__all__ = ["LaplaceGaussLoss", "MAX_COUNT_BESIDE_GAUSS"]

#: the most continuous Laplaces composed beside continuous Gaussians (one polynomial of degree
#: count − 1 per knot interval; the quadrature's cost grows with the count)
MAX_COUNT_BESIDE_GAUSS = 48
#: the largest working precision (bits)
MAX_BITS = 1 << 13
#: one Laplace's closed form is tried up to this working precision (bits), then the quadrature
CLOSED_BITS = 1 << 11


def _q(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def _powers(b: flint.arb, n: int) -> list:
    """``[1, b, …, b^n]`` by products (Arb's ``**`` of a ball containing 0 is nan)."""
    out = [flint.arb(1)]
    for _ in range(n):
        out.append(out[-1] * b)
    return out


def _certified(ball, start: int, prec: int) -> flint.arb | None:
    """``ball()`` (a non-negative quantity) evaluated at working precisions ``start``, 2·start, …
    up to :data:`CLOSED_BITS`, until its radius is within ``2^{4−prec}`` of its upper end; the
    ball clipped to [0, ∞) and rounded to ``prec`` bits, or None.  Arb's precision is restored."""
    old = flint.ctx.prec
    try:
        wp = start
        while wp <= CLOSED_BITS:
            flint.ctx.prec = wp
            d = ball()
            if d.lower() < 0:
                d = d.nonnegative_part() if d.upper() > 0 else flint.arb(0)
            if d.is_zero() or d.rad() <= d.upper() * flint.arb(2) ** (-prec + 4):
                flint.ctx.prec = prec
                return +d
            wp *= 2
        return None
    finally:
        flint.ctx.prec = old


class LaplaceGaussLoss:
    """The composed loss of ``m`` Laplaces (one ``μ`` or several) and continuous Gaussians of total ρ
    (module docstring); the same interface as :class:`~exactdp.kinds.laplace.LaplaceLoss`
    (``delta``, ``extent``, ``mu``, ``m``).

    Parameters
    ----------
    lap : LaplaceLoss
    rho : Fraction
        The continuous Gaussians' total zCDP ρ (> 0).
    """

    def __init__(self, lap: LaplaceLoss, rho: Fraction):
        if lap.m > MAX_COUNT_BESIDE_GAUSS:
            raise InputError("laplace count", lap.m, f"at most {MAX_COUNT_BESIDE_GAUSS} continuous Laplaces beside "
                                                     "continuous Gaussians")
        self.lap, self.rho = lap, Fraction(rho)
        self.mu, self.m, self.extent, self.zcdp = lap.mu, lap.m, lap.extent, lap.zcdp
        self.knots = lap.knots
        self.polys = self._densities()
        self._cache: dict = {}

    def _densities(self) -> list:
        """``polys[j]``: the exact polynomial ``g_j(w)`` with ``f(A_j + h_jw) = K e^{(A_j + h_jw)/2}
        g_j(w)`` for ``w ∈ (0, 1)``, ``h_j = A_{j+1} − A_j``:
        ``g_j(w) = Σ_c Σ_{i>j} Γ_{c,i} (A_i − A_j − h_jw)^{c−1}/(2^c(c−1)!)`` (one μ: ``A_j = (2j − m)μ``,
        built from the top incrementally)."""
        if len(self.lap.parts) > 1:
            return self._densities_general()
        m, mu = self.m, self.mu
        gam = self.lap.gamma
        out = [flint.fmpq_poly([0]) for _ in range(m)]
        for c in range(1, m + 1):
            weight = flint.fmpq(mu.numerator ** (c - 1), mu.denominator ** (c - 1) * 2 * math.factorial(c - 1))
            acc = flint.fmpz_poly([0])  # Σ_{i>j} Γ_{c,i} (i − x)^{c−1}, built from the top
            for j in range(m - 1, -1, -1):
                i = j + 1
                if gam[c][i]:
                    acc += gam[c][i] * flint.fmpz_poly([i, -1]) ** (c - 1)
                shifted = acc(flint.fmpz_poly([j, 1]))  # x = j + w
                out[j] += flint.fmpq_poly(shifted) * weight
        return out

    def _densities_general(self) -> list:
        """:meth:`_densities` for several μ (unequal knot intervals)."""
        m, knots, gam = self.m, self.knots, self.lap.gamma
        out = []
        for j in range(len(knots) - 1):
            a, h = knots[j], knots[j + 1] - knots[j]
            g = flint.fmpq_poly([0])
            for c in range(1, m + 1):
                weight = flint.fmpq(1, 2**c * math.factorial(c - 1))
                for i in range(j + 1, len(knots)):
                    if gam[c][i]:
                        d = knots[i] - a
                        base = flint.fmpq_poly([flint.fmpq(d.numerator, d.denominator), flint.fmpq(-h.numerator,
                                                                                                   h.denominator)])
                        g += base ** (c - 1) * (weight * gam[c][i])
            out.append(g)
        return out

    # ------------------------------------------------------------------ D(t)
    def delta(self, t_lo: Fraction, t_hi: Fraction, tb: flint.arb | None, prec: int) -> flint.arb:
        """A ball of ``D(t)`` for the real ``t ∈ [t_lo, t_hi]`` (``tb`` unused beyond its ends:
        D is nonincreasing, so ``D(t) ∈ [D(t_hi), D(t_lo)]``), relative radius about ``2^{−prec}``.

        Raises
        ------
        UncertifiedError
            When the quadrature would need more than :data:`MAX_BITS` bits.
        """
        del tb
        if t_lo == t_hi:
            return self._at(Fraction(t_lo), prec)
        hi = self._at(Fraction(t_lo), prec)
        lo = self._at(Fraction(t_hi), prec)
        return lo.union(hi)

    def _at(self, t: Fraction, prec: int) -> flint.arb:
        key = (t, prec)
        if key in self._cache:
            return self._cache[key]
        d = self._closed(t, prec) if self.lap.parts[0][1] == 1 == self.m else self._closed_poly(t, prec)
        if d is not None:
            self._cache[key] = d
            return d
        old = flint.ctx.prec
        try:
            wp = prec + 32 + 2 * self.m
            while True:
                flint.ctx.prec = wp
                d = self._delta_at(t, wp)
                if d.is_zero() or d.rad() <= d.upper() * flint.arb(2) ** (-prec + 4):
                    break
                if wp > MAX_BITS:
                    raise UncertifiedError(f"continuous Laplaces beside continuous Gaussians at t = {float(t):.6g}: "
                                           f"the quadrature needs more than {MAX_BITS} bits")
                wp *= 2
            flint.ctx.prec = prec
            d = +d
        finally:
            flint.ctx.prec = old
        self._cache[key] = d
        return d

    def _closed(self, t: Fraction, prec: int) -> flint.arb | None:
        """One Laplace's D(t) in closed form (module docstring), a ball of relative radius about
        ``2^{−prec}``, or None where :data:`CLOSED_BITS` do not suffice."""

        def ball() -> flint.arb:
            mu, rho, x = _q(self.lap.parts[0][0]), _q(self.rho), _q(t)
            root = 2 * rho.sqrt()  # (Φ(z/σ) = ½erfc(−z/(2√ρ)), σ² = 2ρ)

            def phi(z):
                return (-z / root).erfc() / 2

            def d_n(s):  # δ_N(s) = Φ((ρ − s)/σ) − e^s Φ((−ρ − s)/σ)
                return phi(rho - s) - s.exp() * phi(-rho - s)

            def g(lq):
                return ((lq / 2).exp() * phi(lq - x + rho) + (x - lq / 2).exp() * phi(lq - x - rho)
                        - 2 * (x / 2 - rho / 4).exp() * phi(lq - x))

            return d_n(x - mu) / 2 + (-mu).exp() * d_n(x + mu) / 2 + (-mu / 2).exp() * (g(mu) - g(-mu)) / 2

        return _certified(ball, prec + 40, prec)

    def _closed_poly(self, t: Fraction, prec: int) -> flint.arb | None:
        """D(t) of several Laplaces in closed form (module docstring: the by-parts integrals of
        ``l^k e^{±l/2}Φ``), a ball of relative radius about ``2^{−prec}``, or None where
        :data:`CLOSED_BITS` do not suffice."""
        if not hasattr(self, "_lpolys"):  # P_j(l) = g_j((l − A_j)/h_j), exact
            self._lpolys = []
            for j, g in enumerate(self.polys):
                a, h = self.knots[j], self.knots[j + 1] - self.knots[j]
                sub = flint.fmpq_poly([flint.fmpq(-a.numerator * h.denominator, a.denominator * h.numerator),
                                       flint.fmpq(h.denominator, h.numerator)])
                self._lpolys.append([flint.fmpq(c) for c in g(sub).coeffs()])
        return _certified(lambda: self._poly_at(t), prec + 40 + 4 * self.m, prec)

    def _poly_at(self, t: Fraction) -> flint.arb:
        """:meth:`_closed_poly`'s ball at the current precision."""
        m, knots, gam = self.m, self.knots, self.lap.gamma
        rho, x = _q(self.rho), _q(t)
        s2 = 2 * rho
        sig = s2.sqrt()
        root = 2 * rho.sqrt()
        k = (-_q(self.extent) / 2).exp() / flint.arb(2) ** m
        half = flint.arb(1) / 2
        inv_sqrt2pi = 1 / (2 * flint.arb.pi()).sqrt()

        def phi_cdf(z):  # Φ(z)
            return (-z / 2 ** half).erfc() / 2

        def d_n(s):
            return ((s - rho) / root).erfc() / 2 - s.exp() * ((s + rho) / root).erfc() / 2

        def antider(l, a, c, deg):  # [I_0(l), …, I_deg(l)] for ∫ l^k e^{al} Φ((l − c)/σ) dl
            cp = c + a * s2
            pref = (a * c + a * a * s2 / 2).exp()
            u = (l - cp) / sig
            ph = (-(u * u) / 2).exp() * inv_sqrt2pi
            up, cpp, sp, lp = _powers(u, deg), _powers(cp, deg), _powers(sig, deg), _powers(l, deg)
            tt = [phi_cdf(u), -ph]
            for i in range(2, deg + 1):
                tt.append(-up[i - 1] * ph + (i - 1) * tt[i - 2])
            eal_phi = (a * l).exp() * phi_cdf((l - c) / sig)
            out, prev = [], flint.arb(0)
            for kk in range(deg + 1):
                n_k = sum((math.comb(kk, i) * cpp[kk - i] * sp[i] * tt[i] for i in range(kk + 1)), flint.arb(0))
                cur = (lp[kk] * eal_phi - kk * prev - pref * n_k) / a
                out.append(cur)
                prev = cur
            return out

        total = flint.arb(0)
        for j, kn in enumerate(knots):
            if gam[0][j]:
                a = _q(kn)
                total += gam[0][j] * k * (a / 2).exp() * d_n(x - a)
        for j, coeffs in enumerate(self._lpolys):
            deg = len(coeffs) - 1
            if deg < 0:
                continue
            lo, hi = _q(knots[j]), _q(knots[j + 1])
            for a, c, w in ((half, x - rho, flint.arb(1)), (-half, x + rho, -x.exp())):
                i_hi, i_lo = antider(hi, a, c, deg), antider(lo, a, c, deg)
                part = sum((flint.arb(cf) * (i_hi[kk] - i_lo[kk]) for kk, cf in enumerate(coeffs)), flint.arb(0))
                total += k * w * part
        return total

    def _delta_at(self, t: Fraction, wp: int) -> flint.arb:
        m, knots, gam = self.m, self.knots, self.lap.gamma
        rho = _q(self.rho)
        root = 2 * rho.sqrt()
        tq = _q(t)
        k = (-_q(self.extent) / 2).exp() / flint.arb(2) ** m  # K = Π(e^{−μ_k/2}/2)^{m_k}

        def d_n(s):  # δ_N(s), a ball (real or complex)
            return (((s - rho) / root).erfc() - s.exp() * ((s + rho) / root).erfc()) / 2

        atoms = flint.arb(0)
        for j, kn in enumerate(knots):
            a = _q(kn)
            atoms += gam[0][j] * k * (a / 2).exp() * d_n(tq - a)
        if atoms.lower() <= 0:
            atoms = atoms.nonnegative_part()
        total = atoms
        goal = atoms.lower() * flint.arb(2) ** (-wp - 8) if atoms.lower() > 0 else flint.arb(2) ** (-wp)
        rho_c, root_c = flint.acb(rho), flint.acb(root)
        for j in range(len(knots) - 1):
            a = _q(knots[j])
            two_mu = _q(knots[j + 1] - knots[j])  # (h_j: 2μ for one μ)
            poly = flint.acb_poly([flint.acb(flint.arb(cf)) for cf in self.polys[j].coeffs()])
            scale = flint.acb(two_mu * k * (a / 2).exp())
            s0 = flint.acb(tq - a)
            tm = flint.acb(two_mu)

            def f(w, _analytic, poly=poly, scale=scale, s0=s0, tm=tm):
                s = s0 - tm * w
                dn = (((s - rho_c) / root_c).erfc() - s.exp() * ((s + rho_c) / root_c).erfc()) / 2
                return scale * (tm * w / 2).exp() * poly(w) * dn

            got = flint.acb.integral(f, 0, 1, rel_tol=flint.arb(2) ** (-wp), abs_tol=goal)
            total += got.real
        if total.lower() < 0:
            total = total.nonnegative_part() if total.upper() > 0 else flint.arb(0)
        return total
