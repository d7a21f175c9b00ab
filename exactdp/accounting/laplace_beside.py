"""Continuous Laplaces inside the smoothed inversion: their loss's characteristic function as a factor.

One continuous Laplace of ``μ = |shift|/scale`` has, under P, the loss ``L`` with atoms ``μ``
(mass 1/2), ``−μ`` (mass ``e^{−μ}/2``) and the density ``e^{(l−μ)/2}/4`` on ``(−μ, μ)``
(:mod:`exactdp.kinds.laplace`).  Its moment generating function is entire and closed-form:
with ``w = z + 1/2``,

    M_μ(z) = E_P e^{zL} = e^{−μ/2} (cosh(wμ) + sinh(wμ)/(2w))
           = e^{(w−1/2)μ}/2 · F_μ(w),   F_μ(w) = 1 + e^{−2wμ} + (1 − e^{−2wμ})/(2w)

(``M(0) = M(−1) = 1``).  Laplaces of several ``μ_k`` (counts ``m_k``) compose into the product
``Π M_{μ_k}^{m_k}``.  The noise the inversion sees is ``L' = L − c``, centred by an exact
rational ``c`` near its mean ``Σ m_k(μ_k + e^{−μ_k} − 1)`` (the thresholds are
``ε − ρ_G − ρ_N − c``).  A pure ε-DP mechanism is ε²/2-zCDP (Bun & Steinke 2016, Prop. 1.4), so
the zCDP caps ``δ(ε) ≤ e^{−(ε−ρ)²/(4ρ)}`` use ``ρ = ρ_G + ρ_N + Σ m_k μ_k²/2``.

:class:`LaplaceFactorProfile` is :class:`~exactdp.engine.smoothed_profile.SmoothedProfile` with

* every node value ``G_n`` multiplied by ``H_n = M_{L'}(λ + iu_n)/M_{L'}(λ)`` (``|H_n| ≤ 1``:
  L's P-law is a positive measure), computed in Arb balls at the exact node ``u_n = 2πn/P``
  (its radius and the rounding to complex128 added to the node's error bound);
* ``log M_{L'}(λ)`` added to the prefactor's ``log M(λ)`` (and to the aliasing Chernoff bound's);
* the saddle of ``R + Z + L'`` (a fixed-point correction of R's saddle; any λ > 0 is valid).

The sieve is unchanged: its bound of the integrand's relative modulus holds times ``|H_n| ≤ 1``.
Atoms do not smooth (``|H_n|`` does not decay in u), so the inversion needs a smoothing of its
own: here the continuous Gaussians' loss (:mod:`~exactdp.accounting.gaussian_beside`).  Without
one, the discrete Gaussians' joint atoms are summed against the Laplaces' closed form instead
(:mod:`~exactdp.accounting.laplace_atoms`) when they are few.

References: Balle & Wang (2018); Abate & Whitt (1992); Johansson (2017), Arb.
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import numpy as np

from exactdp.engine.smoothed_profile import GroupConsts, SmoothedProfile
from exactdp.kinds.laplace import laplace_part
from exactdp.numerics.precision import EPS64

__all__ = ["LaplaceFactor", "LaplaceFactorProfile", "laplace_factor", "LAPLACE_REMEDY", "few_windows",
           "LAPLACE_WINDOW_ATOMS"]

#: the refusal of continuous Laplaces beside discrete Gaussians too fine for exact windows, with
#: no continuous Gaussian to smooth the inversion and too many joint atoms to sum
#: (:mod:`~exactdp.accounting.laplace_atoms`), and what is answered instead
LAPLACE_REMEDY = ("continuous Laplaces beside discrete Gaussians too fine for exact windows are composed exactly "
                  "beside a continuous Gaussian, or when the discrete Gaussians' joint atoms are few "
                  "(200,000 at most, down to 40 nats); "
                  "for a certified upper bound give each as kind = \"approx_dp\", epsilon = |shift|/scale, delta = 0 "
                  "(a pure ε-DP dominating pair)")

#: beside continuous Gaussians, discrete Gaussians whose windows leave at most this many atoms
#: stay windows (each atom one Laplace–Gaussian quadrature, ~10–50 ms)
LAPLACE_WINDOW_ATOMS = 32
#: Arb working precision (bits) of the node factors and log M
_PREC = 96


def _q(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


class LaplaceFactor:
    """The moment generating function of the centred loss ``L' = L − c`` of continuous Laplaces
    (module docstring).

    Parameters
    ----------
    parts : sequence of (Fraction, int)
        ``(μ_k, m_k)``: ``|shift|/scale`` (> 0) and the count of each.
    """

    def __init__(self, parts):
        self.parts = tuple((Fraction(mu), int(m)) for mu, m in parts if m)
        if not self.parts or any(mu <= 0 or m < 0 for mu, m in self.parts):
            raise ValueError("Laplace parts must have μ > 0 and a positive count")
        #: the Laplaces' zCDP ρ = Σ m μ²/2 (pure ε-DP is ε²/2-zCDP): the oracle's zCDP caps
        self.rho = sum((m * mu * mu / 2 for mu, m in self.parts), Fraction(0))
        #: the centring c: a rational near the mean E_P L = Σ m(μ + e^{−μ} − 1) (any exact c is
        #: exact: the thresholds ε − ρ_G − ρ_N − c stay near the loss's bulk, not μ²/2 away)
        self.centre = Fraction(sum(m * (float(mu) + math.expm1(-float(mu))) for mu, m in self.parts))
        #: a sub-Gaussian proxy of L' − E L' (Hoeffding: L_k ∈ [−μ_k, μ_k])
        self.proxy = sum((m * mu * mu for mu, m in self.parts), Fraction(0))
        self.extent = sum((m * mu for mu, m in self.parts), Fraction(0))
        self._f = [(float(mu), float(m)) for mu, m in self.parts]
        self._cf = float(self.centre)

    def _log_f(self, w: flint.arb, mu: Fraction) -> flint.arb:
        """``log M_μ(w − 1/2) = log F_μ(w) + (w − 1/2)μ − log 2``, a ball (real w ≥ 1/2: F > 0)."""
        mq = _q(mu)
        return self._f_of(flint.acb(w), mq).real.log() + (w - flint.arb(1) / 2) * mq - flint.arb(2).log()

    def log_mgf(self, lam: float) -> tuple:
        """``(log M_{L'}(λ), absolute error bound)`` for a float λ ≥ 0."""
        old = flint.ctx.prec
        try:
            flint.ctx.prec = _PREC
            lb = flint.arb(lam)
            w = lb + flint.arb(1) / 2
            tot = -lb * _q(self.centre)
            for mu, m in self.parts:
                tot += m * self._log_f(w, mu)
            mid = float(tot.mid())
            err = float(tot.rad()) * (1 + 1e-9) + 2 * EPS64 * (abs(mid) + 1e-300)
        finally:
            flint.ctx.prec = old
        return mid, err

    def mean_enclosure(self) -> tuple:
        """Float enclosures ``((m_lo, m_hi), (e_lo, e_hi))`` of the centred loss's mean
        ``m = E L' = E L − c`` (a rounding's worth: c is a float near E L) and of
        ``E L = Σ m_k(μ_k + e^{−μ_k} − 1)`` (Arb balls, rounded outward).

        ``L − E L`` is sub-Gaussian with proxy :attr:`proxy` (Hoeffding: ``L_k ∈ [−μ_k, μ_k]``), and
        ``E e^{−L'} = e^{c}`` exactly (``E_P e^{−L} = 1``), so ``E e^{−(L' − m)} = e^{E L}``: the
        far-left bounds of the complement take ``V − m`` (:mod:`~exactdp.accounting.gaussian_beside`)."""
        old = flint.ctx.prec
        try:
            flint.ctx.prec = _PREC
            el = flint.arb(0)
            for mu, m in self.parts:
                mq = _q(mu)
                el += m * (mq + (-mq).expm1())
            gap = el - _q(self.centre)
            out = []
            for b in (gap, el):
                lo, hi = float(b.lower()), float(b.upper())  # (arb → float rounds to nearest)
                out.append((math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf)))
        finally:
            flint.ctx.prec = old
        return out[0], out[1]

    def ratios(self, lam: float, nodes: np.ndarray, period: int) -> tuple:
        """``(H, err)``: complex128 values and absolute error bounds of ``H_n = M_{L'}(λ + iu_n)/M_{L'}(λ)``
        at ``u_n = 2πn/P`` (exact; ``|H_n| ≤ 1``), as ``e^{iu(Σmμ − c)} Π (F_μ(w)/F_μ(a))^m``
        (``w = a + iu``, ``a = λ + 1/2``; integer powers in Arb: no branch of a logarithm)."""
        old = flint.ctx.prec
        out = np.empty(nodes.size, dtype=np.complex128)
        err = np.empty(nodes.size)
        try:
            flint.ctx.prec = _PREC
            a = flint.arb(lam) + flint.arb(1) / 2
            mus = [(_q(mu), m) for mu, m in self.parts]
            f_a = [self._f_of(flint.acb(a), mq) for mq, _ in mus]
            drift = _q(self.extent - self.centre)  # (Σ mμ − c: the phase e^{iuμ} of each M_μ, less the centring's)
            step = 2 * flint.arb.pi() / period
            for i, n in enumerate(nodes.tolist()):
                u = step * int(n)
                w = flint.acb(a, u)
                h = flint.acb(0, u * drift).exp()
                for (mq, m), fa in zip(mus, f_a):
                    h *= (self._f_of(w, mq) / fa) ** m
                re, im = h.real, h.imag
                v = complex(float(re.mid()), float(im.mid()))
                out[i] = v
                # (the two mids rounded to float64, and the radii rounded up)
                err[i] = (float(re.rad()) + float(im.rad())) * (1 + 1e-9) + 2 * EPS64 * (abs(v.real) + abs(v.imag)) \
                    + 1e-300
        finally:
            flint.ctx.prec = old
        return out, err

    @staticmethod
    def _f_of(w: flint.acb, mq: flint.arb) -> flint.acb:
        """``F_μ(w) = 1 + e^{−2wμ} + (1 − e^{−2wμ})/(2w)`` (module docstring)."""
        e = (-2 * w * mq).exp()
        return 1 + e - (-2 * w * mq).expm1() / (2 * w)

    def slope(self, lam: np.ndarray) -> np.ndarray:
        """An estimate of ``K'_{L'}(λ) = d/dλ log M_{L'}(λ)`` (float; for the saddle only)."""
        lam = np.asarray(lam, dtype=float)
        w = lam + 0.5
        tot = np.full(lam.shape, -self._cf)
        for mu, m in self._f:
            t = np.tanh(w * mu)
            tot += m * (mu * t + mu / (2 * w) - t / (2 * w * w)) / (1 + t / (2 * w))
        return tot


def few_windows(fin) -> bool:
    """Whether a finite loss with the discrete Gaussians as windows (or None) has at most
    :data:`LAPLACE_WINDOW_ATOMS` atoms: then the Laplaces' quadrature per atom
    (:mod:`~exactdp.kinds.laplace_gauss`) is kept, else they go into the oracle's inversion."""
    return fin is not None and min(fin.size, fin.sparse_bound()) <= LAPLACE_WINDOW_ATOMS


def laplace_factor(laplaces) -> LaplaceFactor | None:
    """The :class:`LaplaceFactor` of ``(Laplace, count)`` groups (None without a moving one).

    Raises
    ------
    InputError
        Too many Laplaces (:func:`~exactdp.kinds.laplace.laplace_part`: the closed form's limits,
        kept here so that every route takes the same designs).
    """
    part = laplace_part(laplaces)
    return None if part is None else LaplaceFactor(part.parts)


class LaplaceFactorProfile(SmoothedProfile):
    """:class:`~exactdp.engine.smoothed_profile.SmoothedProfile` of ``R + L'`` (module docstring).

    Parameters
    ----------
    groups : sequence of Group
        The discrete Gaussians' loss noise R.
    s : float
        The smoothing sd.
    factor : LaplaceFactor
        The continuous Laplaces.
    """

    def __init__(self, groups, s: float, factor: LaplaceFactor):
        consts = GroupConsts(groups)
        # (a larger proxy only widens the period and moves the aliases' Chernoff tilt: both choices)
        consts.vproxy = math.nextafter(consts.vproxy + float(factor.proxy), math.inf)
        consts.var = consts.var + float(factor.proxy) / 3
        self.factor = factor
        self._lap: dict = {}
        super().__init__(groups, s, consts=consts)

    def log_mgf(self, lam: float) -> tuple:
        """``(log M_{R+L'}(λ), absolute error bound)``."""
        val, err = super().log_mgf(lam)
        lv, le = self.factor.log_mgf(lam)
        tot = val + lv
        return tot, err + le + 2 * EPS64 * (abs(tot) + 1.0)

    def saddle(self, x) -> np.ndarray:
        """R's saddle at ``x − K'_{L'}(λ)``, iterated from R's own (float estimates; any λ > 0 is valid)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        lam = super().saddle(x)
        for _ in range(6):
            new = super().saddle(x - self.factor.slope(lam))
            lam = 0.5 * (lam + new)
        return np.maximum(lam, self.lam_floor)

    def _tilt(self, lam: float) -> tuple:
        hit = self._lap.get(lam)
        if hit is None:
            G, err, logm, logm_err, lam2, logm2_hi = super()._tilt(lam)
            H, eh = self.factor.ratios(lam, self.nodes, self.period)
            aG, aH = np.abs(G), np.abs(H)
            out = G * H
            e = err * (aH + eh) + aG * eh + 8 * EPS64 * aG * aH
            cap = 1.0 + np.abs(out) * (1 + 8 * EPS64)  # (|G_n H_n| ≤ 1)
            hit = (out, np.minimum(e, cap), logm, logm_err, lam2, logm2_hi)
            if len(self._lap) > 256:
                self._lap.pop(next(iter(self._lap)))
            self._lap[lam] = hit
        return hit
