"""The aliasing bound of the sieved tilted-contour rule (a base of QuadratureTails).

The trapezoid rule at tilt λ with N nodes returns ``Σ_j e^{λjN} P(S ≥ s + jN)``; both
aliasing sums (j > 0 and j < 0) are bounded in units of the rule's normalising factor
``R = e^{E − λs + κ}·K(λ)`` by Chernoff's inequality at the saddle point of the shifted
threshold, with the CGF bounded by the Gaussian part plus the theta ratios of the small
groups (see :mod:`exactdp.engine.quadrature` for the method and its references).  The
float path is the kernel :func:`~exactdp.kernels.tilted.alias_bound`; every other case
(huge tilts, exact CGF differences) is answered here in Python.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

import numpy as np

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.tilt import HUGE_MU, frac_parts
from exactdp.kernels.dgauss import log_theta_tilde_ratio
from exactdp.kernels.tilted import ALIAS_FALLBACK, alias_bound
from exactdp.numerics.precision import EPS64

__all__ = ["AliasBounds"]


class AliasBounds:
    """The aliasing methods of :class:`~exactdp.engine.quadrature.QuadratureTails` (which
    provides ``n_nodes``, ``vproxy``, ``vq``, the groups and the saddle points)."""

    # set by QuadratureTails.__init__
    lattice: LatticeSum
    A: np.ndarray  # lattice weights (int64)
    m: np.ndarray  # group counts (int64)
    s2: np.ndarray  # σ² (float)
    s2q: tuple[Fraction, ...]  # σ² (exact)
    vq: Fraction  # V' = Σ m A² σ² (exact)
    vproxy: float  # V' (float)
    n_nodes: int
    small: list[int]  # the groups with σ² < GAUSS_S2
    _small_idx: np.ndarray
    gaussian: bool
    _mu_scale: float

    if TYPE_CHECKING:  # QuadratureTails' saddle points
        def saddle(self, s) -> float: ...

        def saddle_q(self, s) -> Fraction: ...

    # -- aliasing ---------------------------------------------------------------------
    def _dK(self, t, tt, s: int) -> float:
        """An upper bound of ``[K(tt) − tt·s] − [K(λ) − λs]`` (float; exact rationals
        when tt is one or the float products would lose more than 1e-6)."""
        lam = t.lam
        V = self.vproxy
        exact_tt = isinstance(tt, Fraction)
        ttf = float(tt)
        a = (ttf + lam) * V / 2
        d = (ttf - lam) * (a - s)
        derr = 4 * EPS64 * abs(ttf - lam) * (abs(a) + abs(s)) + 4 * EPS64 * abs(d)
        if derr > 1e-6 or exact_tt:
            lq, tq = t.lamq, Fraction(tt)
            d = float((tq - lq) * ((tq + lq) * self.vq / 2 - s))
            derr = 4 * EPS64 * abs(d)
        out = d - t.rho_lam
        if self.small:
            mus = [float(self.A[g]) * self.s2[g] * ttf for g in self.small]
            if max(abs(x) for x in mus) < 1e8 and not exact_tt:
                for g, mu in zip(self.small, mus):
                    f = mu - math.floor(mu + 0.5)
                    out += int(self.m[g]) * log_theta_tilde_ratio(f, self.s2[g])
                    derr += int(self.m[g]) * EPS64 * 8 * (abs(mu) + 1) / self.s2[g]
            else:
                _, f, _ = frac_parts([self.lattice.weights[g] for g in self.small], [self.s2q[g] for g in self.small],
                                     Fraction(tt))
                for g, fg in zip(self.small, f):
                    out += int(self.m[g]) * log_theta_tilde_ratio(float(fg), self.s2[g])
        return out + derr + 1e-9 * (1 + abs(out) + abs(t.rho_lam))

    def _alias_norm(self, t, s: int, big, logK: float, log_est, log_est_mp) -> float:
        """Both aliasing sums in units of the normalising factor R = e^{E − λs + κ}·K(λ)."""
        N = self.n_nodes
        lam = t.lam
        huge = lam * self._mu_scale > HUGE_MU
        if not huge and big is None and abs(s) < 2**53:
            tot = alias_bound(lam, N, s, self._logR_float(t, s, big, logK), logK, t.rho_lam, self.vproxy, self.A,
                              self.m, self.s2, self._small_idx, self.gaussian)
            if tot != ALIAS_FALLBACK:
                return tot
        return self._alias_norm_py(t, s, big, logK)

    def _alias_norm_py(self, t, s: int, big, logK: float) -> float:
        """:meth:`_alias_norm` in Python: every case (huge tilts, exact CGF differences);
        the kernel :func:`~exactdp.kernels.tilted.alias_bound` repeats its float path."""
        N = self.n_nodes
        lam = t.lam
        huge = lam * self._mu_scale > HUGE_MU
        # logs relative to log R
        cands_neg = [-lam * N - math.log(-math.expm1(-lam * N)) - self._logR_float(t, s, big, logK)]
        cands_pos: list[float] = []
        for target, side in ((s + N, +1), (s - N, -1)):
            if target <= 0:
                continue
            if huge:
                cands = {self.saddle_q(target), t.lamq + side * Fraction(N) / self.vq}
            else:
                cands = {self.saddle(target), lam + side * N / self.vproxy}
            for cand in cands:
                gap = float(cand - t.lamq if huge else cand - lam) * side
                if gap <= 0 or cand <= 0:
                    continue
                val = self._dK(t, cand, s) - gap * N - math.log(-math.expm1(-gap * N)) - logK
                (cands_pos if side > 0 else cands_neg).append(val)
        la_pos = min(cands_pos) if cands_pos else math.inf
        la_neg = min(cands_neg)
        tot = 0.0
        for la in (la_pos, la_neg):
            tot += math.exp(min(la, 700.0))
        return tot

    def _logR_float(self, t, s: int, big, logK: float) -> float:
        if big is None:
            b = t.exact_f - t.lam * s
        else:
            b = float(big) if abs(big) < 1e300 else -math.inf
        return b + float(t.kappa) + logK
