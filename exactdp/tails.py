"""Certified tail probabilities ``P(S ≥ s)`` of a lattice sum of discrete Gaussians.

Method (fast path, float64): the tilted-contour trapezoid rule of
:mod:`exactdp.kernels.tilted` with a sieve.  For threshold s the contour is shifted to
``Re z = λ`` near the saddle point ``λ* ≈ s/Var(S)``; there the integrand near θ = 0 has
one sign and size ≈ P(S ≥ s)·sqrt(2π Var S), so a tail of 1e-300 is obtained with
*relative* accuracy from sums of O(1) terms (everything in log space, no cancellation).

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

Thresholds ``s ≤ 0`` use the symmetry of S: ``P(S ≥ s) = 1 − P(S ≥ 1 − s)``.

Regime where float64 is trusted: every term above is computed; a tail is *returned* only
when its certified relative error is below the engine's ``rel_tol`` (default 1e-10), or,
for tails below e^{−700} (beyond float64's range, carried as logarithms), below
``32u·|log P|``;
otherwise the sieve threshold is raised and, failing that, :class:`UncertifiedError` is
raised (use :mod:`exactdp.verify`).  References: exponential tilting / saddle-point
contours for lattice distributions (Daniels 1954); trapezoid-rule convergence for
periodic analytic integrands (Trefethen & Weideman, SIAM Review 2014).
"""

from __future__ import annotations

import math
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from exactdp.conditioning import ConditionedTails, coarse_atoms_count
from exactdp.convolution import ConvolutionTails, plan_split
from exactdp.dgauss import variance_float
from exactdp.kernels.dgauss import log_theta_real
from exactdp.kernels.tilted import ANCHOR, log_mgf_real, node_factors, sieve_candidates, tilted_sums
from exactdp.lattice import LatticeSum

__all__ = ["TailValue", "TailEngine", "UncertifiedError"]

U64 = 2.0**-52
#: above this many sieved nodes a direct-convolution split is considered
SPLIT_MIN_NODES = 4000


class UncertifiedError(ArithmeticError):
    """The float64 fast path could not certify the requested accuracy."""


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


def _wrapped_log(u: float, s2: float) -> float:
    """log Σ_k exp(−s²(u − 2πk)²/2) for u in [0, π] (decreasing in u)."""
    terms = [-0.5 * s2 * (u - 2 * math.pi * k) ** 2 for k in range(-3, 4)]
    mx = max(terms)
    return mx + math.log(sum(math.exp(t - mx) for t in terms))


def _umax(s2: float, m: int, T: float) -> float:
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


class TailEngine:
    """Tail probabilities of one lattice sum, with node sets and factors cached.

    Parameters
    ----------
    lattice : LatticeSum
    rel_tol : float
        Required certified relative error of every returned tail (default 1e-10).
    kappa : float
        Nodes per standard deviation: ``N ≈ kappa·sqrt(V')`` (default 16).
    lam_step_sd : float
        Spacing of the tilt grid in units of 1/sd(S) (default 1).
    """

    def __init__(self, lattice: LatticeSum, rel_tol: float = 1e-10, kappa: float = 16.0,
                 allow_conditioning: bool = True, lam_step_sd: float = 1.0):
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
            raise ValueError("lattice too large for int64 phase arithmetic")
        # tilts on a grid of lam_step_sd/sd(S): thresholds on the same tilt share one
        # evaluation of the product; a tilt ≤ lam_step_sd/2 sd from the saddle point
        # enlarges the integrand by at most exp(lam_step_sd²/8) (and the bound says so)
        self.lam_step = lam_step_sd / math.sqrt(self.var)
        self.lam_min = (math.log(1.0 / self.rel_tol) + 12.0) / self.n_nodes
        # per-node operation count, plus ≤ 4u per phase rotation between exact anchors
        # (each factor's complex log carries ≲ 6u absolute error: angle, phase product,
        # exp/cos/sin, sum, abs, log/atan2, each within one ulp; 8u per factor is used)
        self._gamma_base = U64 * (64.0 + 8.0 * float(self.m.sum()) + 4.0 * ANCHOR)
        self._set_sieve(math.log(1.0 / self.rel_tol) + 0.5 * math.log(2 * math.pi * self.vproxy) + 6.0)
        self._cache: OrderedDict = OrderedDict()
        self.conv = None
        self.method = "tilted-trapezoid"
        # least prunable groups first: they are the ones to enumerate exactly
        order = sorted(range(len(self.A)), key=lambda g: (-self.umax[g], self.s2[g]))
        self._plan = plan_split(self.A, self.m, self.s2, order) if len(self.A) > 1 else None
        self.cond = None
        if self.nodes_kept > SPLIT_MIN_NODES or np.max(self.umax) >= math.pi:
            # weak pruning (many nodes, or a factor that never decays).  Per tail the
            # quadrature costs ~nodes_kept·n_groups, the convolution n_atoms, the
            # conditioned quadrature n_atoms(coarse)·(nodes kept on the fine lattice).
            costs = {"quadrature": self.nodes_kept * len(self.A)}
            if self._plan is not None:
                costs["convolution"] = self._plan.n_atoms
            coarse = [g for g in range(len(self.A)) if self.umax[g] >= math.pi]
            cond = None
            if allow_conditioning and coarse and len(coarse) < len(self.A):
                if coarse_atoms_count(self.s2, self.m, coarse) <= 4000:
                    cond = ConditionedTails(lattice, self.A, self.m, self.s2, coarse, self.rel_tol)
                    costs["conditioned"] = len(cond.values) * max(cond.nodes_kept, 1) * (len(self.A) - len(coarse))
            best = min(costs, key=costs.get)
            if best == "convolution":
                self._use_convolution()
            elif best == "conditioned":
                self.cond = cond
                self.method = "conditioned-quadrature"

    def _use_convolution(self) -> None:
        if self.conv is None and self._plan is not None:
            self.conv = ConvolutionTails(self.A, self.m, self.s2, self._plan)
            self.method = "lattice-convolution"

    # -- sieve ------------------------------------------------------------------------
    def _set_sieve(self, T: float) -> None:
        self.sieve_T = T
        self.umax = np.array([_umax(s, int(m), T) for s, m in zip(self.s2, self.m)])
        gstar = int(np.argmin(self.umax))
        self.nodes = sieve_candidates(self.A, self.umax, self.n_nodes, gstar)
        self._cache = OrderedDict()

    @property
    def nodes_kept(self) -> int:
        return int(self.nodes.shape[0])

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
    def tails(self, thresholds, strict: bool = True) -> list[TailValue]:
        """Certified ``P(S ≥ s)`` for each integer threshold (order preserved).

        With ``strict=False`` nothing is raised: a tail that could not be certified to
        ``rel_tol`` is returned with the (larger, possibly infinite) bound it has.
        """
        thr = [int(s) for s in thresholds]
        best: dict[int, TailValue] = {}

        def offer(tv: TailValue) -> None:
            old = best.get(tv.threshold)
            if old is None or tv.rel_error < old.rel_error:
                best[tv.threshold] = tv

        def done(s: int) -> bool:
            tv = best.get(s)
            return tv is not None and tv.rel_error <= self._tol_for(tv.log_value)

        upper = sorted({s if s >= 1 else 1 - s for s in thr})
        for alt, name in ((self.cond, "conditioned-quadrature"), (self.conv, "lattice-convolution")):
            if alt is None:
                continue
            todo = [s for s in upper if not done(s)]
            for s, (lv, rel) in zip(todo, alt.tails(todo)):
                offer(TailValue(s, lv, rel, name, getattr(alt, "nodes_kept", 0), getattr(alt, "n_nodes", 0), 0.0))
        for attempt in range(2):
            todo = [s for s in upper if not done(s)]
            if not todo:
                break
            if attempt:
                self._set_sieve(self.sieve_T + 25.0)
            by_j: dict[int, list[int]] = {}
            for s in todo:
                by_j.setdefault(self._lam_index(s), []).append(s)
            for j in sorted(by_j):
                for tv in self._tails_at(j, by_j[j]):
                    offer(tv)
        missing = [s for s in upper if not done(s)]
        if missing and strict:
            if self.conv is None and self._plan is not None:
                self._use_convolution()
                return self.tails(thresholds, strict)
            raise UncertifiedError(f"float64 tail not certified at thresholds {missing[:5]}")
        return [self._complement(best[1 - s]) if s <= 0 else best[s] for s in thr]

    def _tol_for(self, log_value: float) -> float:
        """``rel_tol``, relaxed for tails beyond float64's range (< e^{−700}) to the float64
        floor ``32u·|log P|`` of a result carried as a logarithm (still certified)."""
        return max(self.rel_tol, 32 * U64 * abs(log_value))

    def tail(self, s: int) -> TailValue:
        return self.tails([s])[0]

    def _complement(self, tv: TailValue) -> TailValue:
        p = tv.value
        q = -math.expm1(tv.log_value)  # 1 − p, p ≤ 1/2 here
        err = (tv.rel_error * p + 2 * U64) / q
        return TailValue(1 - tv.threshold, math.log(q), err, tv.method + "+complement", tv.nodes_kept, tv.nodes_total, tv.lam)

    def _tails_at(self, j: int, thresholds: list[int]) -> list[TailValue]:
        lam, Gn, logm = self._factors(j)
        s_arr = np.array(thresholds, dtype=np.int64)
        res, absres = tilted_sums(Gn, self.nodes, self.n_nodes, s_arr)
        N = self.n_nodes
        log1m = math.log(-math.expm1(-lam))
        # per-node relative rounding: a fixed operation count plus the absolute error of
        # the phases s_g²·a_g·b (≤ s_g²·A_g·λ·π per factor, m_g factors)
        gamma = self._gamma_base + 4 * U64 * float(np.sum(self.m * self.s2 * self.A * lam)) * math.pi
        out = []
        for s, r, ab in zip(thresholds, res, absres):
            logR = logm - lam * s - log1m
            if not r > 0:
                out.append(TailValue(s, -math.inf, math.inf, "tilted-trapezoid", self.nodes_kept, N, lam))
                continue
            log_est = logR + math.log(r)
            # absolute error contributions, in units of R (sieve, rounding of the sum)
            rel_from_R = (math.exp(-self.sieve_T) + gamma * ab + 4 * U64 * (1 + len(self.nodes) * U64) * ab) / r
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
            rel_R = 3 * U64 * (abs(logm) + abs(lam * s) + abs(log1m) + 10)
            rel_s2 = 4 * U64 * float(np.sum(self.m * (1 + (self.A * lam) ** 2 * self.s2)))
            rel = rel_from_R + rel_alias + rel_R + rel_s2
            out.append(TailValue(s, log_est, rel, "tilted-trapezoid", self.nodes_kept, N, lam))
        return out
