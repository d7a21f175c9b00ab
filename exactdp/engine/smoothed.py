"""Lattice-free tails: the tilted inversion of a Gaussian-smoothed tail on the real line.

For ``W = Σ_g w_g Σ_k X_{g,k}`` (any positive rational weights, any lattice scale) let
``V = W + Z`` with ``Z ~ N(0, s²)`` independent.  V has a density and, for λ > 0,

    Ψ(x) = P(V > x) = (1/2π) ∫ M_W(λ+iu) e^{s²(λ+iu)²/2} e^{−(λ+iu)x} / (λ+iu) du,

the Fourier transform of ``k(y) = e^{λy}·Ψ(x+y)``.  The trapezoid rule with step
``Δu = 2πν`` returns ``Σ_j e^{λj/ν} Ψ(x + j/ν)`` (Poisson summation): the wanted j = 0 term
plus aliases bounded by ``e^{−λ/ν}/(1−e^{−λ/ν})`` and, W + Z being (V'+s²)-sub-Gaussian
(Canonne–Kamath–Steinke 2020), ``Σ_{j≥1} exp(λj/ν − (x+j/ν)²/(2(V'+s²)))``.

**Brackets by monotonicity** (resolution a = 8s, ``Φ̄(8) < 6.3e-16``): for every t,

    Ψ(t+a) − Φ̄(8)·M_W(μ)e^{−μt}  ≤  P(W > t) ≤ P(W ≥ t)  ≤  Ψ(t−a)/(1 − Φ̄(8)),

(upper: ``{W ≥ t, Z > −a} ⊂ {V > t−a}``; lower: ``{V > t+a} ⊂ {W > t} ∪ {W ≤ t, Z > t+a−W}``
and ``Φ̄((a+y)/s) ≤ Φ̄(a/s)e^{−μy}`` for y ≥ 0, 0 ≤ μ ≤ a/s²).  The width is about
``2a·f_W(t)``: relative ``2aλ`` for a tail, set by the chosen a, not by the lattice.

**Which frequencies.** The integrand is ≤ ``e^{−s²u²/2}``, so |u| ≤ U = sqrt(2·T_G)/s
suffices; there it is dropped only where the certified resonance sieve
(:mod:`exactdp.engine.resonance`) proves it below e^{−T}.  Error bound of Ψ(x): dropped
nodes ``≤ 2 n_U e^{−T}`` plus the Gaussian tail beyond U, the aliases, the rounding of
every node (operation count, the theta series, and the phases:
:func:`exactdp.kernels.smoothed.smoothed_factors`), of R and of the float64 parameters.
References: Daniels (1954) saddle-point inversion; Abate & Whitt (1992) for the
Fourier-series method with damping; Trefethen & Weideman (2014) for the trapezoid rule.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.dgauss.float64 import variance_float
from exactdp.engine.families import families_of, penalty_arrays
from exactdp.engine.resonance import arcs_known, family_arcs, generation_plan, window_nodes, windows
from exactdp.kernels.dgauss import log_theta_real
from exactdp.kernels.smoothed import PHASE_ERR, dd_phases, interval_penalty, smoothed_factors, smoothed_sums
from exactdp.numerics.precision import DPS_RESULT, EPS64, to_mpf

__all__ = ["SmoothedTails", "RES_OVER_S", "resolution_for"]

#: a/s: the bracket half-width in units of the smoothing sd (Φ̄(8) ≈ 6.2e-16)
RES_OVER_S = 8
_PHI_BAR = 6.3e-16
#: Gaussian cut of the frequency range: e^{−T_G}
T_GAUSS = 62.0
#: below this node index thresholds may be float64 (phase error ≤ 2π·n·|x/P|·2^-52, charged)
FLOAT_PHASE_NODES = 2**20
#: stop adding sieving families once the generation expects at most this many candidates
CHEAP_GENERATION = 2000
#: largest integer multiplier of a sieving family (its arcs need resolution ~1/n)
SIEVE_MULTIPLIER = 2**17
#: aliasing period in units of sd(W)
PERIOD_SD = 48.0


def resolution_for(c: float, delta_floor: float = 1e-21, width: float = 3e-10) -> float:
    """Bracket half-width a that gives δ brackets about ``width`` relative wide down to
    ``delta_floor``: the relative width is ≈ 4aλ(λ+1) with λ = sqrt(ln(1/δ)/c) the
    log-slope of the loss density at ε − c (Gaussian approximation; any a is certified)."""
    lam = math.sqrt(math.log(1 / delta_floor) / max(c, 1e-300))
    return width / (4 * lam * (lam + 1))


def _dd(x: Fraction):
    """(hi, lo) with frac(x) ≈ hi + lo to ~2^-106 (hi ∈ [−1/2, 1/2))."""
    f = x - math.floor(x + Fraction(1, 2))
    hi = float(f)
    return hi, float(f - Fraction(hi))


class SmoothedTails:
    """Certified brackets of ``P(W > t)`` and ``P(W ≥ t)`` for any real t.

    Parameters
    ----------
    groups : sequence of Group
        The privacy-loss noise (see :mod:`exactdp.engine.families`).
    resolution : float
        Half-width a of the brackets in loss units (see :func:`resolution_for`).
    rel_tol : float
        Certified relative accuracy of every smoothed tail Ψ.

    Raises
    ------
    TooManyResonances
        When the sieve would need too many candidate resonances.
    """

    def __init__(self, groups, resolution: float, rel_tol: float = 1e-12):
        self.groups = tuple(groups)
        self.rel_tol = float(rel_tol)
        self.w = np.array([float(g.weight) for g in self.groups])
        self.m = np.array([int(g.count) for g in self.groups], dtype=np.int64)
        self.s2 = np.array([float(g.sigma2) for g in self.groups])
        self.var = float(sum(g.count * float(g.weight) ** 2 * variance_float(float(g.sigma2)) for g in self.groups))
        self.vproxy = float(sum(g.count * g.weight**2 * g.sigma2 for g in self.groups))
        self.a = float(resolution)
        self.s = self.a / RES_OVER_S
        self.sk2 = self.s**2
        self.sd = math.sqrt(self.vproxy + self.sk2)
        self.period = int(math.ceil(PERIOD_SD * self.sd))
        self.nu = Fraction(1, self.period)
        self.lam_floor = 1.0 / self.sd
        self.u_max = math.sqrt(2 * T_GAUSS) / self.s
        self.v_max = self.u_max / (2 * math.pi)
        self.n_max = int(self.v_max * self.period) + 1
        self.sieve_T = (math.log(2 * self.v_max) + 0.5 * math.log(2 * math.pi * self.vproxy)
                        + math.log(20 / self.rel_tol))
        self.logtheta0 = np.array([log_theta_real(0.0, s) for s in self.s2])
        self.e_abs = np.array([math.sqrt(s + (s * wl + 1.0) ** 2) for s, wl in zip(self.s2, self.w)])
        self._build_nodes()
        self._cache: dict = {}

    # -- nodes ------------------------------------------------------------------------
    def _build_nodes(self) -> None:
        fams = families_of(self.groups, SIEVE_MULTIPLIER)
        # arcs of as few families as needed: cached ones first, then the cheapest, until
        # the generation is cheap (the window refinement below uses every group anyway)
        order = sorted(range(len(fams)), key=lambda i: (not arcs_known(fams[i], self.sieve_T),
                                                       max(fams[i].multipliers) * len(fams[i].groups)))
        arcs = [None] * len(fams)
        for i in order:
            arcs[i] = family_arcs(fams[i], self.sieve_T)
            if generation_plan(fams, arcs, self.v_max)[0] <= CHEAP_GENERATION:
                break
        wins = windows(fams, arcs, self.v_max, self.sieve_T, dd_phases)
        P = self.period
        nodes = window_nodes(self.groups, wins, self.sieve_T, P, self.sk2, self.n_max, dd_phases)
        self.tau = [_dd(g.weight * self.nu) for g in self.groups]
        phase = np.empty((nodes.size, len(self.groups)))
        for k, (hi, lo) in enumerate(self.tau):
            phase[:, k] = dd_phases(nodes, hi, lo)
        s2a, ma, logd = penalty_arrays(self.groups)
        pt = np.ascontiguousarray(phase.T)
        pen = 0.5 * self.sk2 * (2 * math.pi * nodes.astype(float) / P) ** 2 + interval_penalty(pt, pt, s2a, ma, logd)
        keep = pen <= self.sieve_T
        self.nodes = np.ascontiguousarray(nodes[keep])
        self.phase = np.ascontiguousarray(phase[keep])
        self.u = 2 * math.pi * self.nodes.astype(float) / P
        self.n_windows = int(wins[0].size)

    @property
    def nodes_kept(self) -> int:
        return int(self.nodes.size)

    # -- tilts ------------------------------------------------------------------------
    def _log_mgf(self, lam: float) -> float:
        return float(sum(m * (log_theta_real(w * lam, s) - t0)
                         for w, m, s, t0 in zip(self.w, self.m, self.s2, self.logtheta0)))

    def _factors(self, j: int):
        hit = self._cache.get(j)
        if hit is None:
            lam = max(j / self.sd, self.lam_floor)
            G, err = smoothed_factors(self.w, self.m, self.s2, self.e_abs, self.phase, self.u, lam, self.sk2,
                                      PHASE_ERR)
            hit = (lam, G, err, self._log_mgf(lam))
            if len(self._cache) > 64:
                self._cache.pop(next(iter(self._cache)))
            self._cache[j] = hit
        return hit

    def _lam_index(self, x: float) -> int:
        return max(int(round(x / (self.var + self.sk2) * self.sd)), 1)

    # -- smoothed tails Ψ(x) = P(W + Z > x), x ≥ 0 --------------------------------------
    def _psi(self, xs) -> tuple:
        """Arrays (log Ψ̂, certified relative error, tilt index) for each x ≥ 0 (mpf values,
        or a float64 array: exact binary rationals whose phase rounding is charged)."""
        n = len(xs)
        log_est = np.full(n, -np.inf)
        rel = np.full(n, np.inf)
        xf = np.array([float(x) for x in xs])
        js = np.maximum(np.round(xf / (self.var + self.sk2) * self.sd).astype(np.int64), 1)
        P = self.period
        if isinstance(xs, np.ndarray):  # float thresholds (exact binary rationals): x/P rounded once
            his = xf / P - np.floor(xf / P + 0.5)
            los = np.zeros(n)
            x_phase = 2 * math.pi * float(self.nodes.max(initial=0)) * (np.abs(xf / P) + 1.0) * EPS64
        else:
            his = np.empty(n)
            los = np.empty(n)
            x_phase = np.zeros(n)
            with mpmath.workdps(DPS_RESULT):
                half = mpmath.mpf(0.5)
                for i, x in enumerate(xs):
                    y = x / P
                    f = y - mpmath.floor(y + half)
                    his[i] = float(f)
                    los[i] = float(f - his[i])
        gamma = EPS64 * (64.0 + 8.0 * float(self.m.sum())) + 1e-21 * float(self.m.sum()) + PHASE_ERR + 8 * EPS64
        u_last = 2 * math.pi * self.n_max / P
        e_sieve = (2.0 * self.n_max * math.exp(-self.sieve_T)
                   + (P / math.pi) * math.exp(-0.5 * self.sk2 * u_last**2) / (self.sk2 * u_last))
        vs = self.vproxy + self.sk2
        for j in np.unique(js):
            idx = np.flatnonzero(js == j)
            lam, G, err, logm = self._factors(int(j))
            res, absres = smoothed_sums(G, self.nodes, his[idx], los[idx])
            x = xf[idx]
            ok = res > 0
            r = np.where(ok, res, 1.0)
            le = logm + 0.5 * self.sk2 * lam * lam - lam * x - math.log(lam) - math.log(P) + np.log(r)
            units = e_sieve + 2.0 * float(err.sum()) + (gamma + x_phase[idx]) * absres
            la_neg = -lam * P - math.log(-math.expm1(-lam * P))
            e1 = lam * P - (x + P) ** 2 / (2 * vs)
            e2 = 2 * lam * P - (x + 2 * P) ** 2 / (2 * vs)
            with np.errstate(divide="ignore", invalid="ignore"):
                la_pos = np.where(e2 < e1, e1 - np.log(-np.expm1(np.minimum(e2 - e1, -1e-300))), np.inf)
            la = np.logaddexp(la_neg, la_pos)
            rel_par = 4 * EPS64 * float(np.sum(self.m * (1 + (self.w * lam) ** 2 * self.s2)))
            rr = (units / r + np.exp(np.minimum(la - le, 700.0))
                  + 3 * EPS64 * (abs(logm) + np.abs(lam * x) + abs(math.log(lam)) + 10) + rel_par)
            log_est[idx] = np.where(ok, le, -np.inf)
            rel[idx] = np.where(ok, rr, np.inf)
        return log_est, rel, js

    def _psi_bracket(self, xs) -> tuple:
        """Certified (lo, hi) of Ψ(x) for real x (mpf), by symmetry for x < 0, as float
        arrays when Ψ is above e^{−700} (each widened by 4 EPS64 for its own rounding),
        else as mpf; and the tilt index used for each |x|."""
        if isinstance(xs, np.ndarray):
            vals, rels, js = self._psi(np.abs(xs))
            neg = xs < 0
        else:
            vals, rels, js = self._psi([abs(x) for x in xs])
            neg = np.array([x < 0 for x in xs])
        ok = np.isfinite(rels) & (rels < 1)
        big = ok & (vals > -700.0)
        v = np.exp(np.where(big, vals, 0.0))
        lo = np.where(ok, v * (1 - rels) * (1 - 4 * EPS64), 0.0)
        hi = np.where(ok, np.minimum(v * (1 + rels) * (1 + 4 * EPS64), 1.0), 1.0)
        out = []
        with mpmath.workdps(DPS_RESULT):
            for k in range(len(xs)):
                if ok[k] and not big[k]:
                    w = mpmath.exp(mpmath.mpf(float(vals[k])))
                    l, h = w * (1 - rels[k]), w * (1 + rels[k])
                else:
                    l, h = mpmath.mpf(float(lo[k])), mpmath.mpf(float(hi[k]))
                out.append((1 - h, 1 - l) if neg[k] else (l, h))
        return out, js

    # -- brackets of the tails of W ------------------------------------------------------
    def brackets(self, ts) -> list:
        """Certified ``(lo, hi)`` containing both ``P(W > t)`` and ``P(W ≥ t)``, each t an
        mpf (exact rationals converted at 40 digits by the caller)."""
        with mpmath.workdps(DPS_RESULT):
            ts = [mpmath.mpf(t) for t in ts]
            a = mpmath.mpf(self.a)
            pos = [t if t >= 0 else -t for t in ts]
            if self.nodes.size and self.nodes.max() < FLOAT_PHASE_NODES:
                # float thresholds moved outwards past the rounding of |t| (so x ≥ |t| + a and
                # x ≤ |t| − a hold exactly); their phases are charged in _psi
                pf = np.array([float(p) for p in pos])
                pad = self.a + 4 * EPS64 * (pf + 1e-300)
                xs = np.concatenate([pf + pad, pf - pad])
            else:
                xs = [p + a for p in pos] + [p - a for p in pos]
        br, js = self._psi_bracket(xs)
        n = len(ts)
        out = []
        with mpmath.workdps(DPS_RESULT):
            for k, t in enumerate(ts):
                lam, _, _, logm = self._factors(int(js[k]))
                ch = logm - lam * float(pos[k])
                chern = (_PHI_BAR * math.exp(ch) * (1 + 1e-9) if ch < 700 else
                         _PHI_BAR * mpmath.exp(mpmath.mpf(ch)) * (1 + 1e-9))
                lo = max(br[k][0] - chern, mpmath.mpf(0))
                hi = min(br[n + k][1] / (1 - _PHI_BAR), mpmath.mpf(1))
                out.append((lo, hi) if t >= 0 else (1 - hi, 1 - lo))
        return out
