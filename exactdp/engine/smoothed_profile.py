"""The privacy profile of any design by smoothed inversion, with a second-order bracket.

For the privacy-loss noise ``R = Σ_g w_g Σ_k X_{g,k}`` (``X ~ N_Z(0, σ_g²)``, any positive
rational weights ``w_g = Δ_g/σ_g²``: no common lattice is needed) this module brackets

    D(x) = E (1 − e^{x − R})₊,

the hockey-stick profile at ``x = ε − ρ``.  Let ``Z ~ N(0, s²)`` be independent and
``V = R + Z``.  With ``f(v) = (1 − e^{x−v})₊`` and ``D_s(x) = E f(V)``:

* **Second-order bracket.**  Write ``f(x + y) = y₊ − q(y)`` with ``q(y) = (y − 1 + e^{−y})₊``
  (C¹, ``q'' = e^{−y}1{y>0}``).  Then ``D_s − D = s·E ψ((R−x)/s) − E κ(R)`` where
  ``ψ(z) = φ(z) − |z|Φ̄(|z|) ∈ [0, φ(z)]`` (the smoothing of the kink) and
  ``κ = E q(·+Z) − q ≥ 0`` (Taylor with the Peano kernel K, ``∫K = s²/2``).  Hence

      D_s(x) − s²·p_V(x)  ≤  D(x)  ≤  D_s(x) + κ̄,

  ``p_V`` the density of V (``E φ((R−x)/s) = s·p_V(x)``) and
  ``κ̄ = [(e^{s²/2} − 1) + (e^{λ²s²/2} − 1)/λ²]·M_R(λ)e^{−λx}`` for any λ > 0 (bound
  ``e^{x−R}1{R>x} ≤ e^{λ(R−x)}`` and ``1{x−t<R≤x} ≤ e^{λ(R−x+t)}``).  The width is
  ≈ s²·p_V(x): *second order* in s, so a relative width of 3e-10 needs s ≈ 1e-5/λ, not
  the first-order 1e-10/λ of a shifted bracket, and the frequency range 1/s stays small.
* **Inversion.**  D_s, p_V and the tail ``P(V > x)`` are tilted Fourier integrals,

      D_s(x) = (1/2π) ∫ M_R(z) e^{s²z²/2} e^{−zx} / (z(z+1)) du,   z = λ + iu,

  (``/z`` for the tail, no factor for the density), evaluated by the trapezoid rule on
  ``u_n = 2πn/P`` at the nodes a certified sieve keeps (:func:`exactdp.kernels.profile.sieve_nodes`):
  the integrand's modulus relative to its value at u = 0 is bounded by
  ``exp(−Σ_g pen_g(dist(w_g u/2π, ℤ)) − s²u²/2)`` (:mod:`exactdp.engine.families`,
  independent of λ), so one node set serves every tilt and threshold.
* **Error bound** of each sum: dropped nodes (``≤ 2(1 + 1/ε)e^{−T0}`` with the level
  ``T0 + (1+ε)log(1+n)``; or, at a flat level, twice the dropped intervals' summed bound,
  :func:`exactdp.kernels.mass_sieve.sieve_nodes_flat`), the Gaussian tail beyond ``U = √(2·T_GAUSS)/s``, aliasing
  (``j = −1``: ``e^{−λP}``; ``j ≥ 1``: Chernoff at ``λ' = λ + P/V``), the node values'
  own bounds (:func:`exactdp.kernels.ratio_factors.smoothed_factors`), the threshold phases,
  the compensated sums, and the prefactor ``M_R(λ)`` (:func:`exactdp.kernels.profile.log_mgf`).

References: Daniels (1954) saddle-point inversion; Abate & Whitt (1992) damped Fourier
series; Canonne, Kamath & Steinke (2020) for the sub-Gaussian tails of N_Z.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.group_consts import GroupConsts, exact_sum
from exactdp.kernels.mass_sieve import block_length, sieve_nodes_flat
from exactdp.kernels.profile import (
    penalty_tables,
    profile_sums,
    saddles,
    saddles_strip,
    sieve_nodes,
)
from exactdp.kernels.ratio_factors import smoothed_factors
from exactdp.numerics.precision import EPS64

__all__ = ["SmoothedProfile", "GroupConsts", "exact_sum", "TooCostly", "dd_quotient", "float_enclosure", "log_sub",
           "flat_sieve_blocks"]

#: aliasing period in units of the proxy sd
PERIOD_SD = 48.0
#: the Gaussian factor beyond U is below e^{−T_GAUSS}
T_GAUSS = 60.0
#: slope slack of the sieve level (Σ_n (1+n)^{−1−ε} ≤ 1 + 1/ε)
SIEVE_EPS = 0.1
#: absolute target of the dropped nodes in units of the normalised sums (which are ~P/√(2πV))
DROP_TOL = 1e-15
#: a flat-level sieve's dropped nodes (twice its a-posteriori sum, normalised units) above
#: this: sieved again 4 nats higher (the sums are ≳ 8 where the brackets are narrowest, so
#: this is ≲ 1 % of the target width 2.5e-10; 1e-11 before: ten σ² in [2.5, 4.5] at shift
#: 3 sieved its level 39 twice for 2·6.5e-12, 3.6× the nodes)
FLAT_DROP = 2e-11
#: a level filtered from a finer flat-level profile also drops its least nodes (largest
#: ``pen + s²u²/2``) while its dropped mass (normalised units, as FLAT_DROP's) stays below this
FILTER_MASS = 3e-12
#: entries of a group's penalty table
PEN_TABLE = 256
#: sieve intervals visited before the design is called too costly for this resolution
SIEVE_BUDGET = 1_000_000
#: tilts are quantised to multiples of 1/(TILT_GRID·sd) (sd of R alone where the smoothing is
#: below 1e-6 of its variance: every level then shares the tilts, and their theta logs)
TILT_GRID = 1.0
#: Φ̄(8) rounded up
_PHI_BAR_8 = 6.3e-16


class TooCostly(ArithmeticError):
    """The sieve would need more work than its budget at this resolution."""


_SPLIT = 134217729.0  # 2^27 + 1 (Dekker)


def _split(a):
    c = _SPLIT * a
    h = c - (c - a)
    return h, a - h


def dd_quotient(x: np.ndarray, P: int) -> tuple:
    """(hi, lo) float arrays with ``hi + lo ≡ x/P (mod 1)``, ``|x/P − hi − lo − k| ≤
    2^-104·(1 + |x/P|)`` for an integer k (x exact floats, |x/P| < 2^50).  ``q = fl(x/P)``;
    ``q·P = p + e`` exactly (Dekker), ``x − p`` is exact (Sterbenz), so the remainder
    ``x − qP`` is formed to u² relative; ``hi = q − ⌊q + 1/2⌋`` is exact."""
    x = np.asarray(x, dtype=float)
    Pf = float(P)
    q = x / Pf
    p = q * Pf
    qh, ql = _split(q)
    ph, pl = _split(np.full_like(q, Pf))
    e = ((qh * ph - p) + qh * pl + ql * ph) + ql * pl
    rem = (x - p) - e
    hi = q - np.floor(q + 0.5)
    lo = rem / Pf
    return hi, lo


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


def flat_sieve_blocks(n_max: int, P: float, sk2: float, T: float, lam2: float, blen: int) -> int:
    """A lower bound of the intervals :func:`~exactdp.kernels.mass_sieve.sieve_nodes_flat`
    visits at the level T (and at any higher level): it visits each block of ``blen`` nodes
    at least once until the first block start ``a`` where the Gaussian part and the kernel
    weight alone drop the rest, ``s²u_a²/2 + log w₂(u_a) > T + log(n_max − a + 1)``.  That
    function of a is increasing (in exact arithmetic), so the first such block is found by
    bisection; it is evaluated 10⁻⁶ nats generously (the kernel's float rounding moves it by
    ~10⁻¹¹), and one block fewer is counted."""
    c_u = 2 * math.pi / P
    ll = math.log(lam2) if lam2 < math.inf else math.inf

    def cut(k: int) -> bool:
        a = k * blen
        if a > n_max:
            return True
        u = c_u * a
        lw = max(0.0, 2 * math.log(u) - ll) if u > 0 and ll < math.inf else 0.0
        return 0.5 * sk2 * u * u + lw > T + math.log(n_max - a + 1) - 1e-6

    lo, hi = 0, n_max // blen + 1  # cut(hi) holds
    while lo < hi:
        mid = (lo + hi) // 2
        if cut(mid):
            hi = mid
        else:
            lo = mid + 1
    return max(0, lo - 1)


def log_sub(a, b):
    """log(e^a − e^b), −inf where a ≤ b (the caller widens for rounding)."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    d = b - a
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(d < 0, a + np.log(-np.expm1(np.minimum(d, -1e-300))), -np.inf)


class SmoothedProfile:
    """Certified log brackets of ``D(x) = E(1 − e^{x−R})₊`` for float thresholds x.

    Parameters
    ----------
    groups : sequence of Group
        The noise R (:class:`exactdp.engine.families.Group`: weight, σ², count).
    s : float
        The smoothing sd (the bracket's relative width is ≈ s²·λ(λ+1)).

    node_budget : int, optional
        Refuse (TooCostly) a node set larger than this.
    sieve_budget : int, optional
        Refuse (TooCostly) when the sieve visits more intervals than this (default
        :data:`SIEVE_BUDGET`).
    flat_level : float, optional
        Sieve at this flat level instead, the dropped nodes bounded a posteriori by the sum
        :func:`exactdp.kernels.mass_sieve.sieve_nodes_flat` returns (raised by 4 nats, up to
        twice, while twice that sum exceeds 1e-11 normalised units).
    lam_w : float, optional
        With ``flat_level``: the tilt Λ whose kernel decay weights the sieve
        (:func:`exactdp.kernels.mass_sieve.sieve_nodes_flat`): a node is dropped by its
        integrand bound times the profile kernel's ``min(1, Λ(Λ+1)/u²)``, and the dropped
        mass is kept per kernel (density: unweighted; tail: ``min(1, Λ/u)``; profile:
        ``min(1, Λ(Λ+1)/u²)``), each scaled up at a tilt above Λ.  None: unweighted.
    source : SmoothedProfile, optional
        A flat-level profile of the same groups and period at a smoothing ``s' ≤ s`` whose
        nodes cover this one's range: this level's nodes are filtered from its nodes (their
        groups' penalties kept), the dropped ones bounded by its dropped mass (its integrand
        bound ``e^{−pen − s'²u²/2}`` is the larger) plus the filtered-out nodes' own bounds.

    Raises
    ------
    TooCostly
        When the sieve exceeds its budget.

    Notes
    -----
    Method and error bound: see the module docstring.  The node set depends on the
    design and s only (never on earlier queries), so every number is reproducible.
    """

    def __init__(self, groups, s: float, node_budget: int | None = None, consts: GroupConsts | None = None,
                 sieve_budget: int | None = None, flat_level: float | None = None, source=None,
                 lam_w: float | None = None):
        self.groups = tuple(groups)
        c = consts if consts is not None else GroupConsts(self.groups)
        self.consts = c
        self.s = float(s)
        self.sk2 = self.s**2
        self.w, self.s2, self.m, self.delta = c.w, c.s2, c.m, c.delta
        self.vproxy = c.vproxy
        self.var = c.var
        self.sd = math.sqrt(self.vproxy + self.sk2)
        self.period = max(8, int(math.ceil(PERIOD_SD * self.sd)))
        self.lam_floor = 1.0 / self.sd
        # the tilt grid's unit: R's own sd where the smoothing is negligible beside it (the same
        # tilts at every level, so the theta logs are shared), else this level's sd
        self.grid_sd = math.sqrt(self.vproxy) if self.sk2 <= 1e-6 * self.vproxy else self.sd
        P = self.period
        self.tau_hi, self.tau_lo = c.taus(P)
        u_max = math.sqrt(2 * T_GAUSS) / self.s
        self.n_max = int(u_max * P / (2 * math.pi)) + 1
        self.T0 = math.log(2 * (1 + 1 / SIEVE_EPS) / DROP_TOL)
        self.slope = 1 + SIEVE_EPS
        t_cap = self.T0 + self.slope * math.log1p(self.n_max) + 1.0
        order = c.order
        visits = SIEVE_BUDGET if sieve_budget is None else int(sieve_budget)
        cap = node_budget if node_budget is not None else 2**62
        mass = None
        masses = None
        self.lam_w = float(lam_w) if lam_w is not None else math.inf
        # Λ(Λ+1) rounded up: the profile kernel's bound λ(λ+1)/u² ≤ lam2/u² for every λ ≤ Λ
        self._lam2 = self.lam_w * (self.lam_w + 1.0) * (1 + 4 * EPS64) if lam_w is not None else math.inf
        self.node_pens = None
        self.flat_level = None  # the flat level finally sieved at (None: the ordinary sieve)
        if flat_level is None:
            tab, scale = self._penalty_tables(t_cap)
            nodes, visited = sieve_nodes(self.tau_hi[order], self.tau_lo[order], tab[order], scale[order], self.n_max,
                                         float(P), self.sk2, self.T0, self.slope, 16, visits, cap)
        elif source is not None and source.period == P and source.s <= self.s and source.n_max >= self.n_max \
                and source.dropped_mass is not None and source.lam_w >= self.lam_w:
            nodes, self.node_pens, masses = self._filtered(source)
            mass = masses[2]
            visited = 0
            self.flat_level = source.flat_level
        else:
            least = flat_sieve_blocks(self.n_max, float(P), self.sk2, float(flat_level), self._lam2,
                                      int(block_length(self.tau_hi, 16, self.n_max)))
            if least > visits:  # the sieve would stop at its budget (TooCostly below) after ~1 s: not run
                raise TooCostly(f"the frequency sieve would visit more than {visits} intervals at s = {self.s:.3g} "
                                f"(at least {least} blocks)")
            for level in (flat_level, flat_level + 4.0, flat_level + 8.0):
                tab, scale = self._penalty_tables(level + math.log1p(self.n_max) + 1.0)
                nodes, self.node_pens, visited, masses = sieve_nodes_flat(
                    self.tau_hi[order], self.tau_lo[order], tab[order], scale[order], self.n_max, float(P), self.sk2,
                    level, self.lam_w, self._lam2, 16, visits, cap)
                masses = tuple(float(v) for v in masses)
                mass = masses[2]
                self.flat_level = level
                if visited < 0 or 2 * mass <= FLAT_DROP:
                    break
        if node_budget is not None and nodes.size > node_budget:
            raise TooCostly(f"the frequency sieve keeps more than {node_budget} nodes at s = {self.s:.3g}")
        if visited < 0:
            raise TooCostly(f"the frequency sieve visited more than {visits} intervals at s = {self.s:.3g}")
        self.visited = visited
        self.nodes = np.ascontiguousarray(nodes)
        u_last = 2 * math.pi * self.n_max / P
        # the flat sieve's a-posteriori bound of the profile kernel's dropped terms (None: the a-priori one)
        self.dropped_mass = mass
        # per kernel (density, tail, profile): the dropped mass at tilts ≤ Λ (see _drop)
        self.drop_masses = masses
        self.e_gauss = (P / math.pi) * math.exp(-0.5 * self.sk2 * u_last**2) / (self.sk2 * u_last)
        head = 2 * (1 + 1 / SIEVE_EPS) * math.exp(-self.T0) if mass is None else 2 * mass
        self.e_drop = head + self.e_gauss
        self._factors: dict = {}

    def _log_weights(self, u: np.ndarray) -> tuple:
        """``(log w₁, log w₂)`` of the kernel weights at u (numpy; rounded down, as the
        sieve's :func:`exactdp.kernels.mass_sieve.kernel_log_weight`): ``w₁ = max(1, u/Λ)``,
        ``w₂ = max(1, u²/(Λ(Λ+1)))``; zeros when unweighted."""
        if not self.lam_w < math.inf:
            return np.zeros(u.size), np.zeros(u.size)
        lam2 = self._lam2
        with np.errstate(divide="ignore"):
            lu = np.log(np.maximum(u, 1e-300))
        l1, l2 = math.log(self.lam_w), math.log(lam2)
        lw1 = np.maximum(0.0, (lu - l1) - 8 * EPS64 * (np.abs(lu) + abs(l1) + 4.0))
        lw2 = np.maximum(0.0, (2 * lu - l2) - 8 * EPS64 * (2 * np.abs(lu) + abs(l2) + 4.0))
        return lw1, lw2

    def _filtered(self, src) -> tuple:
        """``(nodes, pens, masses)`` of this smoothing from the finer flat-level profile ``src``
        (whose kernel tilt Λ is at least this one's): its nodes n ≤ n_max whose ``pen +
        s²u²/2 + log w₂(u)`` (rounded down) is at most its level, less the largest of those
        while the profile kernel's dropped mass stays within :data:`FILTER_MASS`, and per
        kernel j its dropped mass plus ``Σ e^{−pen − s²u²/2}/w_j(u)`` over the nodes
        filtered out (rounded up: every term is a bound of its node's weighted integrand
        modulus, whatever the cut).  The source's masses bound this level's dropped nodes
        too: its ``pen + s'²u²/2`` is the smaller and its weights (Λ' ≥ Λ) the smaller."""
        n = src.nodes
        pens = src.node_pens
        u = (2 * math.pi / self.period) * n.astype(float)
        tot = pens + 0.5 * self.sk2 * u * u * (1 - 8 * EPS64)
        lw1, lw2 = self._log_weights(u)
        wtot = tot + lw2
        inside = n <= self.n_max
        keep = inside & (wtot <= src.flat_level)
        # the least kept nodes dropped too within FILTER_MASS (an estimate picks the cut; the mass is summed below)
        room = FILTER_MASS - src.dropped_mass - math.fsum(np.exp(-wtot[inside & ~keep]).tolist())
        k = np.flatnonzero(keep)
        if room > 0 and k.size:
            order = k[np.argsort(-wtot[k], kind="stable")]
            cum = np.cumsum(np.exp(-wtot[order]))
            keep[order[:int(np.searchsorted(cum, room, side="right"))]] = False
        out = inside & ~keep
        grow = (1 + 1e-12) * (1 + 4 * EPS64 * (int(out.sum()) + 1))
        masses = tuple(m + math.fsum(np.exp(-(tot[out] + lw)).tolist()) * grow + 1e-300
                       for m, lw in zip(src.drop_masses, (0.0, lw1[out], lw2[out])))
        return np.ascontiguousarray(n[keep]), np.ascontiguousarray(pens[keep]), masses

    def _drop(self, j: int, lam: float) -> float:
        """The bound (normalised units) of kernel j's terms (0 density, 1 tail, 2 profile) at
        the nodes not summed, at the tilt λ: twice the dropped mass (nodes ±n), scaled by
        ``max(1, |λ|/Λ)`` (tail) or ``max(1, |λ(λ+1)|/(Λ(Λ+1)))`` (profile) above the
        sieve's tilt Λ, plus the Gaussian tail beyond n_max."""
        if self.drop_masses is None or not self.lam_w < math.inf:
            return self.e_drop
        # the masses hold for |λ| ≤ Λ (tail) and |λ(λ+1)| ≤ Λ(Λ+1) rounded up (profile); above, the
        # ratio of the kernel bounds (rounding: the factor 1 + 8u)
        scale = (1.0, max(1.0, abs(lam) / self.lam_w), max(1.0, abs(lam * (lam + 1)) / self._lam2))[j]
        return 2 * self.drop_masses[j] * scale * (1 + 8 * EPS64) + self.e_gauss

    @property
    def rho(self) -> Fraction:
        """ρ of the noise's design, exactly."""
        return self.consts.rho

    # -- sieve tables ----------------------------------------------------------------
    def _penalty_tables(self, t_cap: float) -> tuple:
        """Per group: lower bounds of pen_g at ``d_k = k·d_cap/K`` (k = 0..K): pen is
        non-decreasing, so the table bounds pen on [d_k, d_{k+1}) and beyond d_cap by its last
        entry, for any d_cap; d_cap ≈ where the Gaussian part of pen reaches t_cap, so the
        table resolves the kept region (one kernel call for every group:
        :func:`exactdp.kernels.profile.penalty_tables`)."""
        K = PEN_TABLE
        c = self.consts
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            d_cap = np.minimum(0.5, 1.25 * np.sqrt(2 * t_cap / (c.m * c.s2)) / (2 * math.pi))
        if not np.all(d_cap > 0):  # m·σ² beyond float64 (σ² 1e300 × 10⁹): no frequency resolves it
            i = int(np.flatnonzero(~(d_cap > 0))[0])
            raise TooCostly(f"a group's m·σ² = {int(c.m[i])}·{c.s2[i]:.3g} is beyond the float64 range of the "
                            "frequency sieve")
        tab = penalty_tables(c.s2, c.m_int, c.log_d, np.ascontiguousarray(d_cap), K)
        return np.ascontiguousarray(tab), K / d_cap

    @property
    def nodes_kept(self) -> int:
        return int(self.nodes.size)

    # -- tilts -----------------------------------------------------------------------
    def log_mgf(self, lam: float) -> tuple:
        """(log M_R(λ), absolute error bound)."""
        val, err = self.consts.log_mgf(lam)
        return val, err + 4 * EPS64 * (abs(val) + 1.0)

    def saddle(self, x) -> np.ndarray:
        """The tilts λ ≥ λ_floor solving ``K'(λ) + s²λ − 1/λ − 1/(λ+1) = x`` (Newton, float64
        estimates: any λ > 0 is valid, the saddle keeps the integrand one-signed)."""
        x = np.atleast_1d(np.asarray(x, dtype=float))
        return saddles(x, self.delta, self.s2, self.m, self.w, self.sk2, self.lam_floor, self.var, self.consts.mct)

    def _tilt(self, lam: float) -> tuple:
        hit = self._factors.get(lam)
        if hit is None:
            re, im, e, lw = self.consts.ratio_logs(lam, self.period, self.nodes)
            G, err = smoothed_factors(self.nodes, re, im, e, lw, lam, self.sk2, float(self.period))
            logm, logm_err = self.log_mgf(lam)
            lam2 = lam + self.period / max(self.vproxy + self.sk2, 1e-300)
            logm2, logm2_err = self.log_mgf(lam2)
            hit = (G, err, logm, logm_err, lam2, logm2 + logm2_err)
            if len(self._factors) > 256:
                self._factors.pop(next(iter(self._factors)))
            self._factors[lam] = hit
        return hit

    # -- the inversion ---------------------------------------------------------------
    def _sum_error_and_prefactor(self, A: float, E: float, xi, P: int, lam: float, logm: float,
                                 logm_err: float) -> tuple:
        """``(e_sum, lp, lp_err)`` at the thresholds ``xi`` of one tilt λ: the absolute error of
        every sum in normalised units (node values, threshold phases, kernel factors and
        compensated sums; the dropped nodes and the Gaussian tail are each kernel's own,
        :meth:`_drop`), and the prefactor
        ``log M(λ) + s²λ²/2 − λx`` with its error."""
        last = float(self.nodes[-1] if self.nodes.size else 0)
        e_sum = E + A * (2 * math.pi * (EPS64 + 2.0**-103 * (1 + 2 * last * np.abs(xi) / P))
                         + 16 * EPS64)
        lp = logm + 0.5 * self.sk2 * lam * lam - lam * xi
        lp_err = logm_err + 4 * EPS64 * (abs(logm) + np.abs(lam * xi) + 1.0)
        return e_sum, lp, lp_err

    def log_terms(self, x: np.ndarray) -> dict:
        """Certified log intervals of ``D_s``, ``p_V``, ``P(V > x)`` and the log of κ̄ at each
        float x (exact binary rationals), as a dict of arrays: ``d_lo, d_hi, p_hi, t_mid,
        kappa`` (t_mid an estimate), plus ``lam``."""
        x = np.asarray(x, dtype=float)
        n = x.size
        # the tail at x − 16s bounds P(R > x − 8s) (for κ̄): evaluated beside x
        xs = np.concatenate([x, np.nextafter(x - 16 * self.s, -np.inf)])
        t = self._log_terms(xs)
        tail_hi = t["t_hi"][n:] - math.log1p(-_PHI_BAR_8)
        kappa_tail = np.log(0.5 * self.sk2 * (1 + self.sk2)) + tail_hi
        t = {key: v[:n] for key, v in t.items()}
        t["kappa"] = np.minimum(t["kappa"], np.logaddexp(kappa_tail, t["kappa_far"]))
        return t

    def _log_terms(self, x: np.ndarray, bias: bool = True) -> dict:  # (bias=False: κ̄ no bound, never overflows)
        n = x.size
        out = {k: np.full(n, -np.inf) for k in ("d_lo", "p_hi", "t_mid", "kappa", "kappa_far")}
        out["t_hi"] = np.zeros(n)
        out["d_hi"] = np.zeros(n)
        out["lam"] = np.zeros(n)
        P = self.period
        saddles = self.saddle(x)
        lams = np.maximum(self.lam_floor, np.round(saddles * self.grid_sd * TILT_GRID) / (self.grid_sd * TILT_GRID))
        t_hi, t_lo = dd_quotient(x, P)
        s = self.s
        for lam in np.unique(lams):
            idx = np.flatnonzero(lams == lam)
            lam = float(lam)
            G, err, logm, logm_err, lam2, logm2_hi = self._tilt(lam)
            S, A_sums, E_sums = profile_sums(G, err, self.nodes, lam, float(P), t_hi[idx], t_lo[idx])
            A, E = float(A_sums[0]), float(E_sums[0])
            xi = x[idx]
            e_sum, lp, lp_err = self._sum_error_and_prefactor(A, E, xi, P, lam, logm, logm_err)
            # aliases in normalised units: (term)/exp(lp) · (kernel normalisation)
            log_al_neg = -lam * P - math.log(-math.expm1(-lam * P))
            ratio = lam2 - lam
            log_al_pos = (logm2_hi + 0.5 * self.sk2 * lam2**2 - lam2 * xi - ratio * P
                          - math.log(-math.expm1(-ratio * P)))
            log_dens = -math.log(s * math.sqrt(2 * math.pi))
            for j, (norm, key) in enumerate(((math.log(P), "p"), (math.log(lam * P), "t"),
                                             (math.log(lam * (lam + 1) * P), "d"))):
                extra = log_dens if j == 0 else 0.0
                al = np.logaddexp(log_al_neg + extra - lp, log_al_pos + extra - lp) + norm
                err_j = e_sum + self._drop(j, lam) + np.exp(np.minimum(al, 700.0))
                val = S[j]
                base = lp - norm
                with np.errstate(divide="ignore", invalid="ignore"):
                    l_hi = base + np.log(np.abs(val) + err_j) + lp_err
                    l_lo = np.where(val > err_j, base + np.log(np.maximum(val - err_j, 1e-300)) - lp_err, -np.inf)
                if key == "p":
                    out["p_hi"][idx] = l_hi
                elif key == "t":
                    out["t_mid"][idx] = np.where(val > 0, base + np.log(np.maximum(val, 1e-300)), -np.inf)
                    out["t_hi"][idx] = np.minimum(l_hi, 0.0)
                else:
                    out["d_lo"][idx] = l_lo
                    out["d_hi"][idx] = np.minimum(l_hi, 0.0)
            coef = math.expm1(self.sk2 * bias / 2) + math.expm1(lam**2 * self.sk2 * bias / 2) / lam**2 + (1 - bias)
            out["kappa"][idx] = logm + logm_err - lam * xi + math.log(coef) + 8 * EPS64 * (np.abs(lam * xi) + 1)
            # ∫_{t>8s} K(t)·P(R > x − t) dt ≤ s²e^{λ²s²/2}Φ̄(8 − λs)·M_R(λ)e^{−λx} (K(t) ≤ sφ(t/s))
            phibar = 0.5 * math.erfc((8.0 - lam * s) / math.sqrt(2.0)) * (1 + 1e-12)
            out["kappa_far"][idx] = (out["kappa"][idx] - math.log(coef) + math.log(self.sk2)
                                            + 0.5 * (lam * s) ** 2 + math.log(phibar))
            out["lam"][idx] = lam
        return out

    def log_brackets(self, x: np.ndarray) -> tuple:
        """Certified ``(log lo, log hi)`` of ``D(x) = E(1 − e^{x−R})₊`` at float x, and the
        terms of :meth:`log_terms` (for diagnostics and derivative estimates)."""
        t = self.log_terms(x)
        lo = log_sub(t["d_lo"], t["p_hi"] + 2 * math.log(self.s))
        hi = np.minimum(np.logaddexp(t["d_hi"], t["kappa"]), 0.0)
        lo = lo - 8 * EPS64 * (np.abs(np.where(np.isfinite(lo), lo, 0.0)) + 1)
        hi = np.minimum(hi + 8 * EPS64 * (np.abs(hi) + 1), 0.0)
        return lo, hi, t

    # -- the complement C(x) = 1 − D(x) = E min(1, e^{x−R}), for x < 0 ------------------
    def log_complement(self, x: np.ndarray) -> tuple:
        """Certified ``(log lo, log hi)`` of ``C(x) = E min(1, e^{x−R})`` at float x < 0 by
        the same inversion on the strip between the kernel's poles: for −1 < λ < 0,

            C_s(x) = E min(1, e^{x−V}) = (1/2π) ∫ M_R(z) e^{s²z²/2} e^{−zx} (−1/(z(z+1))) du,

        the trapezoid rule on the same nodes (aliases: ``j ≥ 1`` below ``e^{−|λ|P}``,
        ``j ≤ −1`` below ``e^x M(1) e^{−(1−|λ|)P}``, Chernoff ``C(y) ≤ e^y M(1)``; the
        density's at ``ν = |λ| + P/V``), and the second-order bracket flipped:
        ``C_s − κ ≤ C ≤ C_s + s²p_V`` with ``κ ≤ (e^{μ²s²/2} − 1)/μ²·e^{μx}M(μ)`` at μ = |λ|
        (``e^y 1{y<0} ≤ e^{μy}`` in the Peano form).  Where the strip is too narrow for
        the aliases (``P ≤ 80``) nothing is certified (−inf, 0)."""
        x = np.asarray(x, dtype=float)
        n = x.size
        lo_out = np.full(n, -np.inf)
        hi_out = np.zeros(n)
        P = self.period
        a_lo, a_hi = -1.0 + 40.0 / P, -40.0 / P
        if not a_lo < a_hi or n == 0:
            return lo_out, hi_out
        lam = saddles_strip(x, self.delta, self.s2, self.m, self.w, self.sk2, a_lo, a_hi, self.consts.mct)
        lams = np.clip(np.round(lam * self.grid_sd * TILT_GRID) / (self.grid_sd * TILT_GRID), a_lo, a_hi)
        t_hi, t_lo = dd_quotient(x, P)
        lm1, e1 = self.log_mgf(1.0)
        V = max(self.vproxy + self.sk2, 1e-300)
        log_dens = -math.log(self.s * math.sqrt(2 * math.pi))
        for lam in np.unique(lams):
            idx = np.flatnonzero(lams == lam)
            lam = float(lam)
            a = -lam
            G, err, logm, logm_err, _, _ = self._tilt(lam)
            S, A_sums, E_sums = profile_sums(G, err, self.nodes, lam, float(P), t_hi[idx], t_lo[idx])
            A, E = float(A_sums[0]), float(E_sums[0])
            xi = x[idx]
            e_sum, lp, lp_err = self._sum_error_and_prefactor(A, E, xi, P, lam, logm, logm_err)
            geo_r = -a * P - math.log(-math.expm1(-a * P))
            geo_l = xi + lm1 + e1 - (1 - a) * P - math.log(-math.expm1(-(1 - a) * P))
            nu = a + P / V
            lmn, emn = self.log_mgf(nu)
            dens_l = (0.5 * self.sk2 * nu * nu + lmn + emn + nu * xi - (nu - a) * P
                      - math.log(-math.expm1(-(nu - a) * P)))
            al_c = np.logaddexp(geo_r, geo_l) - lp + math.log(a * (1 - a) * P)
            al_p = np.logaddexp(geo_r + log_dens, dens_l + log_dens) - lp + math.log(P)
            vals = {}
            for key, val, al, norm in (("c", S[2], al_c, math.log(a * (1 - a) * P)), ("p", S[0], al_p, math.log(P))):
                err_j = e_sum + self._drop(2 if key == "c" else 0, lam) + np.exp(np.minimum(al, 700.0))
                base = lp - norm
                with np.errstate(divide="ignore", invalid="ignore"):
                    l_hi = base + np.log(np.abs(val) + err_j) + lp_err
                    l_lo = np.where(val > err_j, base + np.log(np.maximum(val - err_j, 1e-300)) - lp_err, -np.inf)
                vals[key] = (l_lo, l_hi)
            kappa = (math.log(math.expm1(0.5 * a * a * self.sk2) / (a * a)) + logm + logm_err + a * xi
                     + 8 * EPS64 * (np.abs(a * xi) + 1))
            c_lo, c_hi = vals["c"]
            p_hi = vals["p"][1]
            lo = log_sub(c_lo, kappa)
            hi = np.logaddexp(c_hi, p_hi + 2 * math.log(self.s))
            lo_out[idx] = lo - 8 * EPS64 * (np.abs(np.where(np.isfinite(lo), lo, 0.0)) + 1)
            hi_out[idx] = np.minimum(hi + 8 * EPS64 * (np.abs(hi) + 1), 0.0)
        return lo_out, hi_out
