"""The discrete Gaussians' oracle beside continuous Gaussians: one inversion, no smoothing bias.

A :class:`~exactdp.kinds.Mixture` whose discrete Gaussians' grid is too fine for exact windows
sums ``p_∞ + Σ_i p_i δ_G(ε − v_i)`` over its finite part's atoms, δ_G the discrete Gaussians'
certified oracle (:mod:`exactdp.accounting.mixed`).  Continuous Gaussians of total ρ = μ add an
independent ``N(μ, 2μ)`` to the loss under P, so the oracle beside them is the profile of
``ρ_G + R + μ + Z`` (R the discrete Gaussians' centred loss noise, ``Z ~ N(0, 2μ)``):

    δ_{G+N}(t) = E(1 − e^{x − (R + Z)})₊ = D_s(x),   x = t − ρ_G − μ,  s² = 2μ,

exactly the Gaussian-smoothed profile ``D_s`` the lattice-free route inverts
(its term ``d``, :class:`exactdp.engine.smoothed_profile.SmoothedProfile`).  There the smoothing
is a device whose bias must be bracketed; here it is the continuous Gaussians' own loss, so
there is no bias, and its sd ``√(2μ)`` (not ~1e-5) keeps the frequency range small (a few
hundred nodes).  The atoms, the pruning, the reflection ``δ(t) = 1 − e^t + e^t δ(−t)`` and the
zCDP caps (at ρ = ρ_G + μ, the design being (ρ_G + μ)-zCDP and symmetric) are the mixed route's.

Error bound (every term certified):

* the inversion's own bound of ``D_s`` (kept nodes, dropped nodes, Gaussian tail, aliases,
  node values, roundings) at the float variance ``v' = fl(fl(s)²)``;
* ``v'`` is not 2μ: with the exact rational gap ``g = |2μ − v'|`` and the heat equation
  ``∂D_v/∂v = ½(p_{V_v}(x) − E e^{x−V_v}1{V_v > x})`` (V_v = R + N(0, v)), for any λ > 0 both
  terms are at most ``M_R(λ)e^{λ²v/2 − λx}`` times ``1/√(2πv)`` resp. 1
  (``φ_s(y) ≤ e^{λ²s²/2 − λy}/(s√(2π))``, ``e^{−y}1{y > 0} ≤ e^{λy}``), so
  ``|D_{2μ}(x) − D_{v'}(x)| ≤ ½g·M_R(λ)e^{λ²v_hi/2 − λx}(1 + 1/√(2πv_lo))`` at the inversion's tilt
  (``v_lo, v_hi`` the ends of [v', 2μ]; ~1e-16 relative, a Chernoff bound beside D);
* far left (x < −6 sd): the complement bounds of
  :func:`~exactdp.engine.fine_profile.far_left_brackets` for the sub-Gaussian V with proxy
  ``vproxy_R + 2μ`` and ``M_V(1) = M_R(1)e^{μ}``; far right: ``D ≤ M_V(λ)e^{−λx}/(λ + 1)``.

Continuous Laplaces join V as one more factor of the inversion's node values (their loss's
closed-form moment generating function, centred by an exact rational near its mean:
:mod:`~exactdp.accounting.laplace_beside`); then ρ above is that centre's (the thresholds) and the
zCDP caps take ``rho_cap`` (with ``μ²/2`` per Laplace).  The far-left bounds then hold for
``W = V − m``, ``m = E L'`` (a rounding's worth, enclosed in Arb): W is sub-Gaussian about 0 with
proxy ``vproxy_R + Σ m_k μ_k² + 2μ`` (Hoeffding: ``L_k ∈ [−μ_k, μ_k]``), ``C_V(x) = C_W(x − m)``, and
``E e^{−W} = M_R(1)e^{μ + E L}`` exactly in closed form (``E_P e^{−L} = 1``): they answer δ ≈ 1
beside a strong Gaussian (ρ in the thousands, x tens of sd left), where the inversion's absolute
error alone leaves D's bracket wide (issue 35).

References: Balle & Wang (2018) for the Gaussian's loss N(μ, 2μ); Daniels (1954), Abate & Whitt
(1992) for the inversion; Canonne, Kamath & Steinke (2020) for the sub-Gaussian tails of N_Z.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

from exactdp.accounting.laplace_beside import LaplaceFactor, LaplaceFactorProfile
from exactdp.accounting.lattice_free import DesignTooCostly, LatticeFreeAccountant
from exactdp.engine.families import groups_of
from exactdp.engine.fine_profile import complement_from_delta, far_left_brackets, far_left_complement
from exactdp.engine.smoothed_profile import SmoothedProfile, TooCostly, float_enclosure, log_sub
from exactdp.mechanisms import Composition
from exactdp.numerics.precision import EPS64

__all__ = ["GaussianSmoothedProfile", "GaussianBesideAccountant", "ROUTE", "LAPLACE_ROUTE"]

#: the oracle's route name (``MixedAccountant.gauss_route``)
ROUTE = "gaussian-smoothed-inversion"
#: ... with continuous Laplaces' characteristic function in the inversion
LAPLACE_ROUTE = "gaussian-laplace-smoothed-inversion"
#: the far-left / far-right bounds take over beyond this many sd of V
_FAR_SD = 6.0


class GaussianSmoothedProfile:
    """Certified log brackets of ``D_V(x) = E(1 − e^{x−V})₊``, ``V = R + N(0, 2μ)`` (module docstring).

    Parameters
    ----------
    groups : sequence of Group
        The discrete Gaussians' loss noise R (:func:`exactdp.engine.families.groups_of`).
    mu : Fraction
        The continuous Gaussians' total ρ (> 0).
    laplace : LaplaceFactor, optional
        Continuous Laplaces in V too (their centred loss L' = L − c,
        :mod:`~exactdp.accounting.laplace_beside`): V = R + L' + N(0, 2μ).  The far-left
        bounds are then taken on V − E L' (module docstring).

    Raises
    ------
    TooCostly
        When the frequency sieve at s = √(2μ) exceeds its budget.
    """

    method = ROUTE

    def __init__(self, groups, mu: Fraction, laplace: LaplaceFactor | None = None):
        self.groups = tuple(groups)
        self.mu = Fraction(mu)
        if self.mu <= 0:
            raise ValueError("mu must be positive")
        two = 2 * self.mu
        self.laplace = laplace
        self.inner = (SmoothedProfile(self.groups, math.sqrt(float(two))) if laplace is None else
                      LaplaceFactorProfile(self.groups, math.sqrt(float(two)), laplace))
        v = Fraction(self.inner.sk2)  # (the variance the inversion uses, exactly)
        gap = abs(two - v)
        dn, up = float_enclosure([gap, min(two, v), max(two, v), self.mu, two])
        self._log_gap = math.log(float(up[0])) - math.log(2.0) if gap else -math.inf
        self._v_lo, self._v_hi = float(dn[1]), float(up[2])
        self._mu_dn, self._mu_up = float(dn[3]), float(up[3])
        vp = self.inner.consts.vproxy
        self.vproxy = math.nextafter(math.nextafter(vp * (1 + 4 * EPS64), math.inf) + float(up[4]), math.inf)
        self.sd = math.sqrt(self.vproxy)
        # (with Laplaces: W = V − m is the sub-Gaussian of proxy vproxy about 0 the far-left bounds need)
        self._gap, self._el = laplace.mean_enclosure() if laplace is not None else ((0.0, 0.0), (0.0, 0.0))

    @property
    def nodes_kept(self) -> int:
        return self.inner.nodes_kept

    def _log_mgf_v(self, lam: float) -> float:
        """An upper bound of ``log M_V(λ) = log M_R(λ) + μλ²``."""
        val, err = self.inner.log_mgf(lam)
        return val + err + self._mu_up * lam * lam * (1 + 4 * EPS64) + 4 * EPS64 * (abs(val) + 1)

    def _centred(self, x) -> tuple:
        """``(x_up, x_dn)``: float bounds of ``x − m`` (m = E L', the Laplaces' centred mean; 0
        and x itself without Laplaces), the points of the far-left bounds of W = V − m
        (``C_V(x) = C_W(x − m)``, non-decreasing in x: its upper bound at x_up, its lower at x_dn)."""
        x = np.asarray(x, dtype=float)
        if self.laplace is None:
            return x, x
        return np.nextafter(x - self._gap[0], np.inf), np.nextafter(x - self._gap[1], -np.inf)

    def _log_m1(self) -> tuple:
        """Bounds of ``log E e^{−W}`` = ``log M_R(1) + μ (+ E L)`` (R symmetric; ``E e^{−(L'−m)} = e^{E L}``,
        :meth:`~exactdp.accounting.laplace_beside.LaplaceFactor.mean_enclosure`)."""
        lm1, e1 = SmoothedProfile.log_mgf(self.inner, 1.0)  # (R's alone, also under the Laplace factor)
        slack = 4 * EPS64 * (abs(lm1) + 1)
        m_lo, m_hi = lm1 - e1 + self._mu_dn - slack, lm1 + e1 + self._mu_up + slack
        if self.laplace is None:
            return m_lo, m_hi
        # (E L may dwarf log M_R(1): the two sums rounded outward)
        return math.nextafter(m_lo + self._el[0], -math.inf), math.nextafter(m_hi + self._el[1], math.inf)

    def _at(self, x: np.ndarray) -> tuple:
        """``(log lo, log hi)`` of D_V at the float points x."""
        x = np.asarray(x, dtype=float)
        lo = np.full(x.size, -np.inf)
        hi = np.zeros(x.size)
        x_up, x_dn = self._centred(x)
        left = np.flatnonzero(x_up < -_FAR_SD * self.sd)
        if left.size:
            m_lo, m_hi = self._log_m1()
            lo[left] = far_left_brackets(x_up[left], self.vproxy, m_lo, m_hi)[0]
            hi[left] = far_left_brackets(x_dn[left], self.vproxy, m_lo, m_hi)[1]
        todo = np.flatnonzero(np.where(np.isfinite(hi), -np.expm1(lo - hi), np.inf) > 1e-13)
        if todo.size:
            # (D_s itself, without its smoothing bracket's κ̄: it overflows at λs ≫ 1 and is not needed)
            t = self.inner._log_terms(x[todo], bias=False)
            d_lo, d_hi, lam = t["d_lo"], t["d_hi"], t["lam"]
            if self._log_gap > -math.inf:  # (the float variance's gap to 2μ, by the heat equation)
                err = np.empty(todo.size)
                extra = math.log1p(1 / math.sqrt(2 * math.pi * self._v_lo)) + 1e-12
                for k, (lv, xv) in enumerate(zip(lam.tolist(), x[todo].tolist())):
                    lm, em = self.inner.log_mgf(lv)
                    core = lm + em + 0.5 * lv * lv * self._v_hi - lv * xv
                    err[k] = self._log_gap + core + extra + 1e-9 * (abs(core) + 1)
                d_lo = log_sub(d_lo, err)
                d_lo = d_lo - 8 * EPS64 * (np.abs(np.where(np.isfinite(d_lo), d_lo, 0.0)) + 1)
                d_hi = np.minimum(np.logaddexp(d_hi, err) + 8 * EPS64 * (np.abs(d_hi) + 1), 0.0)
            lo[todo] = np.maximum(lo[todo], d_lo)
            hi[todo] = np.minimum(hi[todo], d_hi)
        right = np.flatnonzero(x > _FAR_SD * self.sd)
        for i in right.tolist():
            lam = max(float(x[i]) / self.vproxy, 1.0 / self.sd)
            bound = self._log_mgf_v(lam) - lam * float(x[i]) - math.log1p(lam)
            hi[i] = min(hi[i], 0.0, bound + 8 * EPS64 * (abs(lam * float(x[i])) + abs(bound) + 1))
        return np.minimum(lo, hi), hi

    def log_brackets(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of ``D_V(θ)`` for every θ in ``[th_dn, th_up]`` (D_V
        is non-increasing: its lower end at th_up, its upper end at th_dn)."""
        th_dn = np.asarray(th_dn, dtype=float)
        n = th_dn.size
        lo, hi = self._at(np.concatenate([np.asarray(th_up, dtype=float), th_dn]))
        lo, hi = lo[:n], hi[n:]
        return np.minimum(lo, hi), hi

    def log_complement(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of ``1 − D_V(θ)`` for every θ in ``[th_dn, th_up]``:
        from D's brackets, and for θ < 0 the far-left complement bounds too."""
        th_dn = np.asarray(th_dn, dtype=float)
        th_up = np.asarray(th_up, dtype=float)
        n = th_dn.size
        c_lo, c_hi = complement_from_delta(*self._at(np.concatenate([th_dn, th_up])))
        c_lo, c_hi = c_lo[:n], c_hi[n:]
        up = self._centred(th_up)[0]
        dn = self._centred(th_dn)[1]
        neg = np.flatnonzero(up < 0)
        if neg.size:
            m_lo, m_hi = self._log_m1()
            c_lo[neg] = np.maximum(c_lo[neg], far_left_complement(dn[neg], self.vproxy, m_lo, m_hi)[0])
            c_hi[neg] = np.minimum(c_hi[neg], far_left_complement(up[neg], self.vproxy, m_lo, m_hi)[1])
        return np.minimum(c_lo, c_hi), c_hi


class GaussianBesideAccountant(LatticeFreeAccountant):
    """δ(ε), ε(δ), β(α) of discrete Gaussians composed with continuous Gaussians of total ρ = μ
    (the oracle of :class:`~exactdp.accounting.mixed.MixedAccountant` beside them; the
    lattice-free accountant's queries on :class:`GaussianSmoothedProfile`).

    Parameters
    ----------
    composition : Composition
        The discrete Gaussians (at least one with a nonzero shift).
    mu : Fraction
        The continuous Gaussians' total ρ (> 0).
    rel_tol : float
        Accepted for the common interface.
    laplace : LaplaceFactor, optional
        Continuous Laplaces composed in too (ρ then includes their zCDP ``Σ mμ²/2``, the
        centring of their loss: :mod:`~exactdp.accounting.laplace_beside`).

    Raises
    ------
    DesignTooCostly
        (an UncertifiedError) when the inversion's sieve exceeds its budget.
    """

    def __init__(self, composition: Composition, mu: Fraction, rel_tol: float = 1e-10,
                 laplace: LaplaceFactor | None = None):
        # (not LatticeFreeAccountant.__init__: its profile is the discrete part's alone)
        self.composition = composition
        self.mu = Fraction(mu)
        self.laplace = laplace
        # (with Laplaces: ρ the thresholds' centre, rho_cap a zCDP parameter for the caps)
        self.rho = composition.rho + self.mu + (laplace.centre if laplace is not None else 0)
        self.rho_cap = composition.rho + self.mu + (laplace.rho if laplace is not None else 0)
        self.rel_tol = float(rel_tol)
        self.identical = False
        try:
            self.profile = GaussianSmoothedProfile(groups_of(composition), self.mu, laplace)
        except TooCostly as exc:
            raise DesignTooCostly(str(exc)) from None
        dn, up = float_enclosure([self.rho])
        self._rho_dn, self._rho_up = float(dn[0]), float(up[0])

    @property
    def method(self) -> str:
        return ROUTE if self.laplace is None else LAPLACE_ROUTE

    def log_delta_at(self, e_dn, e_up, exact=None) -> tuple:
        """As :meth:`LatticeFreeAccountant.log_delta_at`; with Laplaces the thresholds' centre
        is not a zCDP ρ, so the cap ``δ(ε) ≤ e^{−(ε−ρ)²/(4ρ)}`` (ε ≥ ρ) is taken at ``rho_cap``."""
        if self.laplace is None:
            return super().log_delta_at(e_dn, e_up, exact)
        e_dn = np.asarray(e_dn, dtype=float)
        th_dn, th_up = self._thresholds(e_dn, np.asarray(e_up, dtype=float), exact)
        assert self.profile is not None
        lo, hi = self.profile.log_brackets(th_dn, th_up)
        _, up = float_enclosure([self.rho_cap])
        r = float(up[0])
        y = np.nextafter(e_dn - r, -np.inf)  # (below ε − ρ_cap)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = np.where(y > 0, -(y**2) / (4 * r) * (1 - 4 * EPS64) + 1e-15, 0.0)
        hi = np.minimum(hi, z)
        return np.minimum(lo, hi), hi


def gaussian_oracle(moving: tuple, mu: Fraction, rel_tol: float, laplace: LaplaceFactor | None = None) -> tuple:
    """``(accountant, route)``: the oracle of the discrete Gaussians ``moving`` (``(mechanism,
    count)`` pairs) composed with continuous Gaussians of total ρ = μ (and continuous Laplaces)."""
    acc = GaussianBesideAccountant(Composition(moving), mu, rel_tol, laplace)
    return acc, acc.method
