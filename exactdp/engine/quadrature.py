"""The sieved tilted-contour trapezoid rule on one lattice (float64, certified).

Method: the tilted-contour trapezoid rule of :mod:`exactdp.kernels.tilted` with a sieve.
For threshold s the contour is shifted to ``Re z = λ`` near the saddle point
``λ* ≈ s/Var(S)``; there the integrand near θ = 0 has one sign and size
≈ P(S ≥ s)·sqrt(2π Var S), so a tail of 1e-300 is obtained with *relative* accuracy from
sums of O(1) terms (everything in log space, no cancellation).

Certified error bound (absolute, returned as relative to the estimate):

* **sieve**: a node is dropped only if one group alone forces ``|G_n| ≤ e^{−T}``
  (``|M_g(A_g(λ+iθ))|/M_g(A_gλ) ≤ P_g(u)/D_g`` with ``P_g`` the wrapped normal sum and
  ``D_g = 1 − 2Σ_{k≥1} e^{−2π²s_g²k²}``); the dropped nodes add at most ``R·e^{−T}``.
* **aliasing**: the rule returns ``Σ_j e^{λjN} P(S ≥ s + jN)``; the ``j < 0`` terms are
  ≤ ``e^{−λN}/(1−e^{−λN})`` and, by the sub-Gaussian bound ``E e^{tX} ≤ e^{t²s²/2}``
  (Canonne–Kamath–Steinke 2020), the ``j > 0`` terms are
  ≤ ``exp(−(s+N)²/(2V') + λN)/(1 − e^{−(μ−λ)N})``, μ = (s+N)/V', V' = Σ m_g A_g² s_g².
* **rounding**: ``γ·R·(1/N)Σ w_n|G_n|`` with γ from the operation count of each node, plus
  the error of ``R = exp(log M(λ) − λs)/(1−e^{−λ})`` and of the float64 variances.
* series truncations of the theta functions are below 1e-21 relative (see kernels).

Regime where float64 is trusted: a tail is *accepted* only when its certified relative
error is below ``rel_tol`` (default 1e-10), or, for tails below e^{−700} (beyond float64's
range, carried as logarithms), below ``32u·|log P|``.  References: exponential tilting /
saddle-point contours for lattice distributions (Daniels 1954); trapezoid-rule
convergence for periodic analytic integrands (Trefethen & Weideman, SIAM Review 2014).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from exactdp.dgauss.float64 import variance_float
from exactdp.engine.lattice import LatticeSum
from exactdp.kernels.dgauss import log_theta_real
from exactdp.kernels.tilted import ANCHOR, log_mgf_real, node_factors, sieve_candidates, tilted_sums
from exactdp.numerics.errors import LatticeTooLarge
from exactdp.numerics.precision import EPS64

__all__ = ["TailValue", "QuadratureTails", "sieve_umax", "tol_for"]


@dataclass(frozen=True)
class TailValue:
    """A tail probability with a certified relative error bound.

    ``|estimate − P(S ≥ s)| ≤ rel_error · estimate`` where ``estimate = exp(log_value)``.
    """

    threshold: int
    log_value: float
    rel_error: float
    method: str
    nodes_kept: int
    nodes_total: int
    lam: float

    @property
    def value(self) -> float:
        return math.exp(self.log_value)


def tol_for(rel_tol: float, log_value: float) -> float:
    """``rel_tol``, relaxed for tails beyond float64's range (< e^{−700}) to the float64
    floor ``32u·|log P|`` of a result carried as a logarithm (still certified)."""
    return max(rel_tol, 32 * EPS64 * abs(log_value))


def _wrapped_log(u: float, s2: float) -> float:
    """log Σ_k exp(−s²(u − 2πk)²/2) for u in [0, π] (decreasing in u)."""
    terms = [-0.5 * s2 * (u - 2 * math.pi * k) ** 2 for k in range(-3, 4)]
    mx = max(terms)
    return mx + math.log(sum(math.exp(t - mx) for t in terms))


def sieve_umax(s2: float, m: int, T: float) -> float:
    """Largest u ∈ [0, π] not excluded by group (s2, m) alone at sieve level T."""
    q = sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 8))
    D = 1 - 2 * q
    if D <= 0.5:
        return math.pi
    logD = math.log(D)

    def h(u):
        return -m * (_wrapped_log(u, s2) - logD)

    if h(math.pi) <= T:
        return math.pi
    lo, hi = 0.0, math.pi
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        if h(mid) > T:
            hi = mid
        else:
            lo = mid
    return hi


class QuadratureTails:
    """Certified upper tails ``P(S ≥ s)``, s ≥ 1, of one lattice sum by the sieved rule.

    Parameters
    ----------
    lattice : LatticeSum
    rel_tol : float
        Required certified relative error of every accepted tail (default 1e-10).
    kappa : float
        Nodes per standard deviation: ``N ≈ kappa·sqrt(V')`` (default 16).
    lam_step_sd : float
        Spacing of the tilt grid in units of 1/sd(S) (default 1).

    Raises
    ------
    LatticeTooLarge
        When ``max A_g · N`` does not fit int64 phase arithmetic.
    """

    def __init__(self, lattice: LatticeSum, rel_tol: float = 1e-10, kappa: float = 16.0,
                 lam_step_sd: float = 1.0):
        self.lattice = lattice
        self.rel_tol = float(rel_tol)
        self.A = np.array(lattice.weights, dtype=np.int64)
        self.m = np.array(lattice.counts, dtype=np.int64)
        self.s2 = np.array([float(s) for s in lattice.sigma2])
        self.logtheta0 = np.array([log_theta_real(0.0, s) for s in self.s2])
        self.vproxy = float(np.sum(self.m * self.A.astype(float) ** 2 * self.s2))
        self.var = float(sum(m * a * a * variance_float(s) for a, m, s in zip(self.A.astype(float), self.m, self.s2)))
        n = int(math.ceil(kappa * math.sqrt(self.vproxy) / 2.0)) * 2
        self.n_nodes = max(n, 64)
        if float(self.A.max()) * self.n_nodes >= 2.0**62:
            raise LatticeTooLarge("lattice too large for int64 phase arithmetic")
        # tilts on a grid of lam_step_sd/sd(S): thresholds on the same tilt share one
        # evaluation of the product; a tilt ≤ lam_step_sd/2 sd from the saddle point
        # enlarges the integrand by at most exp(lam_step_sd²/8) (and the bound says so)
        self.lam_step = lam_step_sd / math.sqrt(self.var)
        self.lam_min = (math.log(1.0 / self.rel_tol) + 12.0) / self.n_nodes
        # per-node operation count, plus ≤ 4u per phase rotation between exact anchors
        # (each factor's complex log carries ≲ 6u absolute error: angle, phase product,
        # exp/cos/sin, sum, abs, log/atan2, each within one ulp; 8u per factor is used)
        self._gamma_base = EPS64 * (64.0 + 8.0 * float(self.m.sum()) + 4.0 * ANCHOR)
        self._set_sieve(math.log(1.0 / self.rel_tol) + 0.5 * math.log(2 * math.pi * self.vproxy) + 6.0)

    # -- sieve ------------------------------------------------------------------------
    def _set_sieve(self, T: float) -> None:
        self.sieve_T = T
        self.umax = np.array([sieve_umax(s, int(m), T) for s, m in zip(self.s2, self.m)])
        gstar = int(np.argmin(self.umax))
        self.nodes = sieve_candidates(self.A, self.umax, self.n_nodes, gstar)
        self._cache: OrderedDict = OrderedDict()

    @property
    def nodes_kept(self) -> int:
        return int(self.nodes.shape[0])

    def done(self, tv: TailValue | None) -> bool:
        """Whether a tail is certified to the required accuracy."""
        return tv is not None and tv.rel_error <= tol_for(self.rel_tol, tv.log_value)

    # -- tilts ------------------------------------------------------------------------
    def _lam_index(self, s: int) -> int:
        """Tilt grid index of threshold s; −1 is the floor tilt λ_min itself (central
        thresholds, whose saddle point lies below it, all share it exactly)."""
        j = int(round(s / self.var / self.lam_step))
        return j if j * self.lam_step > self.lam_min else -1

    def _factors(self, j: int):
        hit = self._cache.get(j)
        if hit is not None:
            self._cache.move_to_end(j)
            return hit
        lam = self.lam_min if j < 0 else j * self.lam_step
        Gn = node_factors(self.A, self.m, self.s2, lam, self.nodes, self.n_nodes)
        logm = log_mgf_real(self.A, self.m, self.s2, self.logtheta0, lam)
        self._cache[j] = (lam, Gn, logm)
        while len(self._cache) > 24:
            self._cache.popitem(last=False)
        return self._cache[j]

    # -- tails ------------------------------------------------------------------------
    def tails(self, thresholds, best: dict | None = None) -> dict:
        """Offer quadrature tails for the upper thresholds (s ≥ 1) not yet certified in
        ``best`` (a dict threshold → TailValue, updated in place and returned): one pass
        at the current sieve level and, for what is still uncertified, one at a raised
        level."""
        best = {} if best is None else best
        for attempt in range(2):
            todo = [s for s in thresholds if not self.done(best.get(s))]
            if not todo:
                break
            if attempt:
                self._set_sieve(self.sieve_T + 25.0)
            by_j: dict[int, list[int]] = {}
            for s in todo:
                by_j.setdefault(self._lam_index(s), []).append(s)
            for j in sorted(by_j):
                for tv in self._tails_at(j, by_j[j]):
                    old = best.get(tv.threshold)
                    if old is None or tv.rel_error < old.rel_error:
                        best[tv.threshold] = tv
        return best

    def _tails_at(self, j: int, thresholds: list[int]) -> list[TailValue]:
        lam, Gn, logm = self._factors(j)
        s_arr = np.array(thresholds, dtype=np.int64)
        res, absres = tilted_sums(Gn, self.nodes, self.n_nodes, s_arr)
        N = self.n_nodes
        log1m = math.log(-math.expm1(-lam))
        # per-node relative rounding: a fixed operation count plus the absolute error of
        # the phases s_g²·a_g·b (≤ s_g²·A_g·λ·π per factor, m_g factors)
        gamma = self._gamma_base + 4 * EPS64 * float(np.sum(self.m * self.s2 * self.A * lam)) * math.pi
        out = []
        for s, r, ab in zip(thresholds, res, absres):
            logR = logm - lam * s - log1m
            if not r > 0:
                out.append(TailValue(s, -math.inf, math.inf, "tilted-trapezoid", self.nodes_kept, N, lam))
                continue
            log_est = logR + math.log(r)
            # absolute error contributions, in units of R (sieve, rounding of the sum)
            rel_from_R = (math.exp(-self.sieve_T) + gamma * ab + 4 * EPS64 * (1 + len(self.nodes) * EPS64) * ab) / r
            # aliasing (absolute probabilities)
            mu = (s + N) / self.vproxy
            # j < 0 aliases e^{−λ|j|N} P(S ≥ s − |j|N), the tail by the sub-Gaussian bound
            j0 = max(1, s // N + 1)
            terms = [-lam * j * N - ((s - j * N) ** 2) / (2 * self.vproxy) for j in range(1, j0)]
            terms.append(-lam * j0 * N - math.log(-math.expm1(-lam * N)))
            mx = max(terms)
            la_neg = mx + math.log(sum(math.exp(t - mx) for t in terms))
            la_pos = (-((s + N) ** 2) / (2 * self.vproxy) + lam * N - math.log(-math.expm1(-(mu - lam) * N))
                      if mu > lam else math.inf)
            la = max(la_neg, la_pos) + math.log1p(math.exp(-abs(la_neg - la_pos)))
            rel_alias = math.exp(min(la - log_est, 700.0))
            # error of R itself and of the float64 variances (first-order perturbation)
            rel_R = 3 * EPS64 * (abs(logm) + abs(lam * s) + abs(log1m) + 10)
            rel_s2 = 4 * EPS64 * float(np.sum(self.m * (1 + (self.A * lam) ** 2 * self.s2)))
            rel = rel_from_R + rel_alias + rel_R + rel_s2
            out.append(TailValue(s, log_est, rel, "tilted-trapezoid", self.nodes_kept, N, lam))
        return out
