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
from exactdp.engine.resonance import MAX_HITS, family_arcs, generation_plan, window_nodes, windows
from exactdp.engine.resonance_lattice import lattice_windows
from exactdp.kernels.dgauss import log_theta_real
from exactdp.kernels.smoothed import PHASE_ERR, dd_phases, interval_penalty, smoothed_factors, smoothed_sums
from exactdp.numerics.precision import DPS_RESULT, EPS64, to_mpf

__all__ = ["SmoothedTails", "RES_OVER_S", "resolution_for", "float_enclosure", "log_sub"]

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
#: exponent slack of the sieve's per-node level (Σ_n (1+n)^{−1−ε} ≤ 1 + 1/ε)
SIEVE_EPS = 0.1


def resolution_for(c: float, delta_floor: float = 1e-40, width: float = 3e-10) -> float:
    """Bracket half-width a that gives δ brackets about ``width`` relative wide down to
    ``delta_floor``: with the δ kernel the relative width is ≈ 2·rel + 2a·λ, λ =
    sqrt(ln(1/δ)/c) the log-slope at the threshold (rel ≈ 3e-11, the inversion's own
    bound; Gaussian approximation — any a is certified, the accountant refines)."""
    lam = math.sqrt(math.log(1 / delta_floor) / max(c, 1e-300))
    return max(width - 1e-10, width / 3) / (2 * (lam + 1))


def dd_over(x: np.ndarray, P: int) -> tuple:
    """(hi, lo) float arrays with ``hi + lo ≡ x/P (mod 1)`` to ``2^-104`` (x float, exact):
    ``q = fl(x/P)``, the remainder ``x − qP`` is exact (Dekker's product, Sterbenz), and
    ``hi = q − ⌊q + 1/2⌋`` is exact; thresholds with ``|x/P| ≥ 2`` go through Fractions."""
    x = np.asarray(x, dtype=float)
    Pf = float(P)
    q = x / Pf
    c = _SPLIT * q
    qh = c - (c - q)
    ql = q - qh
    c = _SPLIT * Pf
    Ph = c - (c - Pf)
    Pl = Pf - Ph
    ph = q * Pf
    pl = ((qh * Ph - ph) + qh * Pl + ql * Ph) + ql * Pl
    rem = (x - ph) - pl
    hi = q - np.floor(q + 0.5)
    lo = rem / Pf
    for i in np.flatnonzero(~(np.abs(q) < 2.0)):
        hi[i], lo[i] = _dd(Fraction(float(x[i])) / P)
    return hi, lo


_SPLIT = 134217729.0  # 2^27 + 1 (Dekker)


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
        # the sieve level of node n: T(n) = T0 + (1+ε)·log(1+n) − log max(1, u_n/λ_max); a
        # dropped node has |G_n| ≤ e^{−pen_n}·min(1, λ/u_n) ≤ e^{−T0}(1+n)^{−1−ε}·max(1, λ/λ_max)
        self.lam_max = math.sqrt(1400.0 / self.var) + 2.0 / self.sd
        self.sieve_T0 = (0.5 * math.log(2 * math.pi * self.vproxy) + math.log(20 / self.rel_tol)
                         + math.log(1 + 1 / SIEVE_EPS) + math.log(2.0))
        self.sieve_T = float(self.sieve_level(np.array([self.n_max]))[0])  # the largest level
        self.logtheta0 = np.array([log_theta_real(0.0, s) for s in self.s2])
        self.e_abs = np.array([math.sqrt(s + (s * wl + 1.0) ** 2) for s, wl in zip(self.s2, self.w)])
        self._build_nodes()
        self._cache: dict = {}

    # -- nodes ------------------------------------------------------------------------
    def sieve_level(self, n) -> np.ndarray:
        """T(n) of the module docstring for node indices n (non-decreasing in n)."""
        n = np.maximum(np.asarray(n, dtype=float), 0.0)
        u = 2 * math.pi * n / self.period
        return (self.sieve_T0 + (1 + SIEVE_EPS) * np.log1p(n)
                - np.log(np.maximum(1.0, u / self.lam_max)))

    def _build_nodes(self) -> None:
        fams = families_of(self.groups, SIEVE_MULTIPLIER)
        # arcs of as few families as needed, the cheapest first, until the generation is
        # cheap (the window refinement below uses every group anyway).  The order depends
        # on the design only (never on which arcs an earlier accountant left cached), so
        # the nodes, and every number, are the same whatever was computed before.
        order = sorted(range(len(fams)), key=lambda i: (max(fams[i].multipliers) * len(fams[i].groups), i))
        arcs = [None] * len(fams)
        for i in order:
            arcs[i] = family_arcs(fams[i], self.sieve_T)
            if generation_plan(fams, arcs, self.v_max)[0] <= CHEAP_GENERATION:
                break
        cost = generation_plan(fams, arcs, self.v_max)[0]
        self.generation = "pairwise"
        if cost > MAX_HITS and len(self.groups) >= 3:
            # many incommensurate groups: enumerate the joint peaks by lattice reduction
            wins = lattice_windows(self.groups, self.sk2, self.sieve_T, self.v_max, self.period)
            self.generation = "lattice"
        else:
            wins = windows(fams, arcs, self.v_max, self.sieve_T, dd_phases)
        P = self.period
        nodes = window_nodes(self.groups, wins, self.sieve_T, P, self.sk2, self.n_max, dd_phases,
                             level=self.sieve_level)
        self.tau = [_dd(g.weight * self.nu) for g in self.groups]
        phase = np.empty((nodes.size, len(self.groups)))
        for k, (hi, lo) in enumerate(self.tau):
            phase[:, k] = dd_phases(nodes, hi, lo)
        s2a, ma, logd = penalty_arrays(self.groups)
        pt = np.ascontiguousarray(phase.T)
        pen = 0.5 * self.sk2 * (2 * math.pi * nodes.astype(float) / P) ** 2 + interval_penalty(pt, pt, s2a, ma, logd)
        keep = pen <= self.sieve_level(nodes)
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

    def _factors(self, j: int, kind: int):
        """(λ, G, err, log M_W(λ)) of tilt index j; kind 1 multiplies G (and err) by the
        second pole ``(λ+1)/(λ+1+iu)`` of the δ kernel (|·| ≤ 1)."""
        key = (j, kind)
        hit = self._cache.get(key)
        if hit is None:
            if kind:
                lam, G, err, logm = self._factors(j, 0)
                z = (lam + 1.0) / (lam + 1.0 + 1j * self.u)
                hit = (lam, G * z, err * np.abs(z), logm)
            else:
                lam = max(j / self.sd, self.lam_floor)
                G, err = smoothed_factors(self.w, self.m, self.s2, self.e_abs, self.phase, self.u, lam, self.sk2,
                                          PHASE_ERR)
                hit = (lam, G, err, self._log_mgf(lam))
            if len(self._cache) > 128:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = hit
        return hit

    # -- the inversion: Ψ(x) = P(W + Z > x) (kind 0) or D(x) = E(1 − e^{x−W−Z})₊ (kind 1) --
    def _inversion(self, xf: np.ndarray, kind: int = 0) -> tuple:
        """Arrays (log estimate, certified relative error, tilt index) at each float x
        (an exact binary rational; ``x ≥ 0`` for kind 0, ``x ≥ −P/4`` for kind 1).

        The phases ``frac(n·x/P)`` are formed in double-double from the exact ``x/P``
        (error charged through PHASE_ERR).  For kind 1 the transform of the kernel
        ``(1 − e^{x−v})₊`` is ``e^{−zx}/(z(z+1))``; aliases and the dropped nodes are bounded
        as for the tail (``0 ≤ D ≤ min(1, Ψ)``)."""
        xf = np.asarray(xf, dtype=float)
        n = xf.size
        log_est = np.full(n, -np.inf)
        rel = np.full(n, np.inf)
        js = np.maximum(np.round(xf / (self.var + self.sk2) * self.sd).astype(np.int64), 1)
        P = self.period
        his, los = dd_over(xf, P)
        gamma = EPS64 * (64.0 + 8.0 * float(self.m.sum())) + 1e-21 * float(self.m.sum()) + PHASE_ERR + 8 * EPS64
        u_last = 2 * math.pi * self.n_max / P
        e_sieve0 = 2.0 * (1 + 1 / SIEVE_EPS) * math.exp(-self.sieve_T0)
        e_gauss = (P / math.pi) * math.exp(-0.5 * self.sk2 * u_last**2) / (self.sk2 * u_last)
        vs = self.vproxy + self.sk2
        for j in np.unique(js):
            idx = np.flatnonzero(js == j)
            lam, G, err, logm = self._factors(int(j), kind)
            res, absres = smoothed_sums(G, self.nodes, his[idx], los[idx])
            x = xf[idx]
            ok = res > 0
            r = np.where(ok, res, 1.0)
            pole = math.log(lam) + (math.log1p(lam) if kind else 0.0)
            le = logm + 0.5 * self.sk2 * lam * lam - lam * x - pole - math.log(P) + np.log(r)
            e_sieve = e_sieve0 * max(1.0, lam / self.lam_max) + e_gauss
            units = e_sieve + 2.0 * float(err.sum()) + gamma * absres
            la_neg = -lam * P - math.log(-math.expm1(-lam * P))
            e1 = lam * P - (x + P) ** 2 / (2 * vs)
            e2 = 2 * lam * P - (x + 2 * P) ** 2 / (2 * vs)
            with np.errstate(divide="ignore", invalid="ignore"):
                la_pos = np.where(e2 < e1, e1 - np.log(-np.expm1(np.minimum(e2 - e1, -1e-300))), np.inf)
            la = np.logaddexp(la_neg, la_pos)
            rel_par = 4 * EPS64 * float(np.sum(self.m * (1 + (self.w * lam) ** 2 * self.s2)))
            rr = (units / r + np.exp(np.minimum(la - le, 700.0))
                  + 3 * EPS64 * (abs(logm) + np.abs(lam * x) + abs(pole) + 10) + rel_par)
            log_est[idx] = np.where(ok, le, -np.inf)
            rel[idx] = np.where(ok, rr, np.inf)
        return log_est, rel, js

    def _log_psi_bracket(self, x: np.ndarray) -> tuple:
        """Certified (log lo, log hi) of Ψ(x) at float x (any sign; Ψ(−x) = 1 − Ψ(x))."""
        x = np.asarray(x, dtype=float)
        neg = x < 0
        le, rel, js = self._inversion(np.abs(x), 0)
        lo, hi = _log_interval(le, rel)
        # Ψ(x) = 1 − Ψ(|x|) for x < 0
        return np.where(neg, _log1m(hi, -1), lo), np.where(neg, _log1m(lo, +1), hi), js

    # -- brackets of W -----------------------------------------------------------------
    def log_tail_brackets(self, t_dn, t_up) -> tuple:
        """Certified (log lo, log hi) containing ``P(W > t)`` and ``P(W ≥ t)`` for every
        exact t with ``t_dn ≤ t ≤ t_up`` (float arrays)."""
        t_dn = np.asarray(t_dn, dtype=float)
        t_up = np.asarray(t_up, dtype=float)
        neg = t_up < 0
        # brackets of |t| (for t < 0: |t| ∈ [−t_up, −t_dn]), flipped at the end
        p_dn = np.where(neg, -t_up, t_dn)
        p_up = np.where(neg, -t_dn, t_up)
        straddle = (t_dn < 0) & ~neg
        x_lo = np.nextafter(p_up + self.a, np.inf)  # Ψ(x_lo) ≤ Ψ(|t| + a)
        x_hi = np.nextafter(p_dn - self.a, -np.inf)  # Ψ(x_hi) ≥ Ψ(|t| − a)
        lo_lo, _, js = self._log_psi_bracket(x_lo)
        _, hi_hi, _ = self._log_psi_bracket(x_hi)
        # lower side: Ψ(|t|+a) − Φ̄(8)·M(λ)e^{−λ|t|}
        lam = np.array([self._factors(int(j), 0)[0] for j in js])
        logm = np.array([self._factors(int(j), 0)[3] for j in js])
        log_ch = math.log(_PHI_BAR) + logm - lam * np.maximum(p_dn, 0.0) + 1e-9
        lo = log_sub(lo_lo, log_ch)
        hi = np.minimum(hi_hi - math.log1p(-_PHI_BAR) + 1e-15, 0.0)
        lo = lo - 8 * EPS64 * (np.abs(lo) + 1)
        out_lo, out_hi = np.where(neg, _log1m(hi, -1), lo), np.where(neg, _log1m(lo, +1), hi)
        # a threshold interval containing 0: both tails lie in [P(W > |t_up|)·, P(W ≥ −|t_dn|)]
        out_lo = np.where(straddle, -np.inf, out_lo)
        out_hi = np.where(straddle, 0.0, out_hi)
        return out_lo, out_hi

    def log_delta_brackets(self, th_dn, th_up) -> tuple:
        """Certified (log lo, log hi) of ``δ = E(1 − e^{θ−W})₊`` for every exact θ with
        ``th_dn ≤ θ ≤ th_up`` (float arrays, ``θ ≥ −P/8``); see the module docstring."""
        th_dn = np.asarray(th_dn, dtype=float)
        th_up = np.asarray(th_up, dtype=float)
        if np.any(th_dn < -self.period / 8):
            raise ValueError("δ kernel: θ below −P/8 (use the tails there)")
        x_lo = np.nextafter(th_up + self.a, np.inf)
        x_hi = np.nextafter(th_dn - self.a, -np.inf)
        le_lo, r_lo, js = self._inversion(x_lo, 1)
        le_hi, r_hi, _ = self._inversion(x_hi, 1)
        lo, _ = _log_interval(le_lo, r_lo)
        _, hi = _log_interval(le_hi, r_hi)
        lam = np.array([self._factors(int(j), 0)[0] for j in js])
        logm = np.array([self._factors(int(j), 0)[3] for j in js])
        log_ch = math.log(_PHI_BAR) + logm - lam * th_dn + 1e-9
        lo = log_sub(lo, log_ch)
        lo = lo - 8 * EPS64 * (np.abs(lo) + 1)
        hi = np.minimum(hi - math.log1p(-_PHI_BAR) + 1e-15, 0.0)
        return lo, hi

    def log_tail_estimate(self, x) -> np.ndarray:
        """log Ψ(x) (an estimate of log P(W > x), no bound), float x ≥ 0."""
        return self._inversion(np.asarray(x, dtype=float), 0)[0]

    def brackets(self, ts) -> list:
        """Certified ``(lo, hi)`` (mpf) containing both ``P(W > t)`` and ``P(W ≥ t)`` for each
        t (mpf, Fraction or float)."""
        dn, up = float_enclosure(ts)
        lo, hi = self.log_tail_brackets(dn, up)
        with mpmath.workdps(DPS_RESULT):
            return [(mpmath.exp(mpmath.mpf(float(a))) if a > -np.inf else mpmath.mpf(0),
                     mpmath.exp(mpmath.mpf(float(b)))) for a, b in zip(lo, hi)]


def float_enclosure(ts) -> tuple:
    """Float arrays (dn, up) with ``dn ≤ t ≤ up`` for exact reals t (Fraction, int, float or
    mpf — an mpf is taken as the exact binary rational it holds)."""
    dn = np.empty(len(ts))
    up = np.empty(len(ts))
    for i, t in enumerate(ts):
        if isinstance(t, float):
            dn[i] = up[i] = t
            continue
        if isinstance(t, mpmath.mpf):
            sign, man, exp, _ = t._mpf_
            if not man and exp:
                raise ValueError(f"not a finite real: {t}")
            man = -int(man) if sign else int(man)
            n, d = (man * 2**exp, 1) if exp >= 0 else (man, 2 ** (-exp))
        else:
            n, d = t.numerator, t.denominator
        f = n / d  # correctly rounded (int true division)
        p, q = f.as_integer_ratio()
        cmp = p * d - n * q  # sign of f − t
        dn[i] = f if cmp <= 0 else math.nextafter(f, -math.inf)
        up[i] = f if cmp >= 0 else math.nextafter(f, math.inf)
    return dn, up


def _log_interval(le, rel):
    """(log lo, log hi) of ``exp(le)·[1 − rel, 1 + rel]`` (−inf / 0 where not certified),
    widened by the rounding of the float operations."""
    ok = np.isfinite(rel) & (rel < 1) & np.isfinite(le)
    r = np.where(ok, rel, 0.0)
    e = np.where(ok, le, 0.0)
    slack = 8 * EPS64 * (np.abs(e) + 1)
    lo = np.where(ok, e + np.log1p(-r) - slack, -np.inf)
    hi = np.where(ok, np.minimum(e + np.log1p(r) + slack, 0.0), 0.0)
    return lo, hi


def _log1m(log_p, side: int):
    """log(1 − p) from log p (−inf when p ≥ 1), moved by its rounding towards ``side``
    (+1 up, −1 down)."""
    lp = np.minimum(log_p, 0.0)
    with np.errstate(divide="ignore"):
        out = np.where(lp < -0.693, np.log1p(-np.exp(lp)), np.log(-np.expm1(lp)))
    out = out + side * 8 * EPS64 * (np.abs(np.where(np.isfinite(out), out, 0.0)) + 1)
    return np.minimum(out, 0.0)


def log_sub(log_a, log_b):
    """log(a − b) (−inf when a ≤ b); the caller widens for rounding."""
    d = log_b - log_a
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d < 0, log_a + np.log(-np.expm1(np.minimum(d, -1e-300))), -np.inf)
