"""A half's atoms in a *tilted* ellipsoid, and a per-threshold bound of what it leaves out.

The two-half enumeration (:mod:`exactdp.engine.halves`) lists each half's atoms of
probability above ``e^{−depth}``: an ellipsoid about the mode.  A deep threshold θ (δ ~ 1e-20)
is carried by atoms far from the mode — those of the tilted law ``p_a e^{λa}`` with the
saddle λ ≈ θ/Var W — so the untilted ellipsoid must reach ~100 nats, and a half of five groups
of σ² ≈ 3 has ~5·10⁷ atoms there.  Here a half of groups of one mechanism each is listed in
the ellipsoid of the tilted costs ``Σ_g c_g − ℓ_g(k_g) ≤ depth``, ``ℓ_g(k) = log p_g(k) + λw_g k``,
``c_g = max_k ℓ_g`` (:func:`tilted_atoms`; ~6·10⁶ atoms at 40 nats), and what it leaves out is
bounded at each threshold (:class:`OmissionBound`), not once for all.  A group of m > 1
mechanisms (``tilted_fit(groups, grouped=True)``) enters as one coordinate, its sum S: the
pmf pointwise from its m residue values (:mod:`exactdp.engine.group_log_pmf`), ``G_g`` below
bounded by the smaller of ``G₁^m`` and the Poisson form with ``V = mσ²`` and the peak
``A = max_k P(S = k)e^{k²/(2V)}`` in place of ``(2πσ²)^{−1/2}``.

**The bound.**  Every atom left out has tilted cost above ``D' = depth − slack`` (pruned
prefixes can only grow: each group's cost is ≥ 0 up to the slack; the entries beyond ``K_g``
are checked to cost more than the depth).  For ``s ∈ [0, 1)`` and any ``ν`` (Chernoff),

    Σ_{a left out} p_a e^{νa} ≤ e^{−sD'} Π_g e^{s c_g} G_g(s, ν − sλ),
    G_g(s, b) = Σ_k p_g(k)^{1−s} e^{b w_g k}
             ≤ (2πσ²)^{−(1−s)/2} e^{b²w²σ²/(2(1−s))} √(2πσ²/(1−s)) (1 + 2q/(1 − q)),

``q = e^{−2π²σ²/(1−s)}`` (``Z_g ≥ √(2πσ²)`` and Poisson summation of the Gaussian sum).
With ``(1 − e^{−y})₊ ≤ c_μ e^{μy}``, ``c_μ = (1+μ)^{−1}(μ/(1+μ))^μ`` (μ ≥ 0), the pairs with an atom
left out on side A add at most ``c_μ e^{−μθ} M_B(μ) Σ_{a left out} p_a e^{μa}`` to δ(θ), with
``M_B(μ) ≤ Π_{g∈B} G_g(0, μ)``; to ``1 − δ(θ) = E min(1, e^{θ−W})`` at most
``e^{μθ} M_B(−μ) Σ p_a e^{−μa}`` (μ ∈ [0, 1]).  The bound is minimised over a grid of (μ, s)
(any point of it is a bound) and each half's side added; every log is widened by
:data:`LOG_SLACK` (the float evaluation of closed forms of a few operations).
"""

from __future__ import annotations

import functools
import math
from fractions import Fraction

import numpy as np

from exactdp.engine.coarse_split import CoarseAtoms, _single_pmf, stable_order
from exactdp.engine.group_log_pmf import group_log_pmf, residue_log_pmf
from exactdp.kernels.enumeration import product_step
from exactdp.kernels.half_build import gather_atoms, untilted_logs
from exactdp.numerics.precision import EPS64

__all__ = ["tilted_atoms", "tilted_fit", "OmissionBound", "chernoff_log_mgf", "LOG_SLACK"]

#: relative widening of every log of the bound (float evaluation of its closed forms)
LOG_SLACK = 1e-9
#: the Chernoff grid: μ for δ (0 … 16) and for 1 − δ (0 … 1), s in [0, 0.95]
_MU = np.linspace(0.0, 16.0, 321)
_MU_C = np.linspace(0.0, 1.0, 21)
_S = np.linspace(0.0, 0.95, 20)


#: the most mechanisms a group may have to enter the tilted levels as one coordinate
#: (:func:`exactdp.engine.group_log_pmf.group_log_pmf`; ``grouped=True``)
MAX_GROUP_COUNT = 8
#: ... and whose sum's variance mσ² is at most this (its residues are an m-fold convolution
#: on ~√(mσ²) entries a copy; the grouped levels are for clumpy groups of small σ²)
MAX_GROUP_VAR = 1e4


def tilted_fit(groups, grouped: bool = False) -> bool:
    """Whether :func:`tilted_atoms` takes ``groups``: one mechanism each (its pmf in closed
    form, a pointwise bound) with σ² ≥ 1/4; with ``grouped``, groups of up to
    :data:`MAX_GROUP_COUNT` mechanisms and variance ``mσ²`` at most :data:`MAX_GROUP_VAR` too
    (each sum's pmf pointwise from its residues, :mod:`exactdp.engine.group_log_pmf`)."""
    top = MAX_GROUP_COUNT if grouped else 1
    return all(1 <= g.count <= top and float(g.sigma2) >= 0.25 and (g.count == 1 or g.count * float(g.sigma2)
                                                                      <= MAX_GROUP_VAR) for g in groups)


def tilted_atoms(groups, lam: float, depth: float, sort: bool = True) -> tuple:
    """``(atoms, d_prime, c_sum)``: the atoms of ``groups`` (:func:`tilted_fit`) whose tilted
    cost is at most ``depth`` (a :class:`~exactdp.engine.coarse_split.CoarseAtoms` sorted by value,
    ``log_p`` the untilted log probability within ``log_err``, ``log_omitted`` −inf: what is
    left out is bounded by :class:`OmissionBound`), the depth ``D'`` every atom left out
    exceeds, and the floats ``c_g`` of the costs (one per group, in order); unsorted when
    ``sort`` is false."""
    v_dn = np.zeros(1)
    v_up = np.zeros(1)
    lp = np.zeros(1)
    le = np.zeros(1)
    cut = -float(depth)
    cs = []
    slack = 1e-6
    tilt_err = 0.0
    for g in groups:
        s2 = Fraction(g.sigma2)
        v = float(s2)
        wf = float(g.weight)
        w_err = float(abs(Fraction(wf) - g.weight)) * (1 + 4 * EPS64) + 1e-320
        m = int(g.count)
        mode = lam * wf * v * m
        K = int(math.ceil(abs(mode) + math.sqrt(2 * v * m * (depth + 2)))) + 2
        if m == 1:
            lp1, e1, _ = _single_pmf(s2, K)
        else:  # the group's sum as one coordinate (its pmf from its m residues)
            lp_w, e_w = group_log_pmf(s2, m, K + 1)
            lp1, e1 = lp_w[1:-1], e_w[1:-1]
        k = np.arange(-K, K + 1, dtype=float)
        tau = lam * wf * k
        lt = lp1 + tau
        c = float(np.max(lt))
        # beyond ±K the (concave) tilted log must lie more than depth + 1 below c
        if m == 1:
            logz = -float(lp1[K])  # log p(0) = −log Z
            ends = [-kk * kk / (2 * v) - logz + lam * wf * kk for kk in (-(K + 1), K + 1)]
        else:  # upper bounds of the log pmf at ±(K + 1) (S is log-concave)
            ends = [float(lp_w[i] + e_w[i]) + lam * wf * kk + 4 * EPS64 * (abs(lam * wf * kk) + 1)
                    for i, kk in ((0, -(K + 1)), (-1, K + 1))]
        for end in ends:
            if not c - end > depth + 1:
                raise OverflowError("a tilted group's support reaches beyond its table")
        glt = np.minimum(lt - c, 0.0)
        gle = e1 + 4 * EPS64 * (np.abs(lt) + abs(c) + np.abs(tau) + 1)
        keep = np.flatnonzero(glt >= cut)
        add = (k[keep]) * wf
        add_err = 2 * EPS64 * np.abs(add) + w_err * np.abs(k[keep])
        v_dn, v_up, lp, le, _ = product_step(v_dn, v_up, lp, le, np.ascontiguousarray(add),
                                             np.ascontiguousarray(add_err), np.ascontiguousarray(glt[keep]),
                                             np.ascontiguousarray(gle[keep]), cut)
        cs.append(c)
        slack += float(np.max(gle)) + 4 * EPS64 * (depth + 1)
        # the float τ against the exact λ·w·k, at every kept k
        tilt_err += abs(lam) * K * (w_err + 2 * EPS64 * abs(wf)) + 2 * EPS64 * float(np.max(np.abs(tau)))
    c_sum = math.fsum(cs)
    # untilted log: lp_t + Σc − λ·value (the value within its enclosure), with every rounding:
    # log_err = le + |λ|·½(v⁺ − v⁻) + tilt_err + 8u(|lp| + |Σc| + |λ|·|mid| + Σ|c| + 4)
    mid, log_p, log_err = untilted_logs(v_dn, v_up, lp, le, c_sum, float(lam), tilt_err, sum(abs(c) for c in cs))
    if sort:
        v_dn, v_up, log_p, log_err = gather_atoms(stable_order(mid), v_dn, v_up, log_p, log_err)
    at = CoarseAtoms(v_dn, v_up, log_p, log_err, -math.inf, float(depth))
    return at, float(depth) - slack - tilt_err, cs


def _log_g(sigma2: float, w: float, s: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Upper bound of ``log G_g(s, b)`` (module docstring), broadcast over ``s`` and ``b``."""
    one = 1.0 - s
    two_pi_v = 2 * math.pi * sigma2
    q = np.exp(-2 * math.pi**2 * sigma2 / one)
    out = (-0.5 * one * math.log(two_pi_v) + (b * w) ** 2 * sigma2 / (2 * one) + 0.5 * np.log(two_pi_v / one)
           + np.log1p(2 * q / (1 - q)))
    return out + LOG_SLACK * (np.abs(out) + 1)


def _log_gm(g, s: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Upper bound of ``log G_g(s, b)`` for a group of ``m`` mechanisms (S their sum, V = mσ²):
    the smaller of ``m`` times the single's (``G_g ≤ G₁^m``: ``(Σ x)^{1−s} ≤ Σ x^{1−s}`` splits
    ``P(S = k)^{1−s}`` over the convolution's terms) and, with ``P(S = k) ≤ A e^{−k²/(2V)}``
    (:func:`_log_peak`), ``A^{1−s} √(2πV/(1−s)) e^{b²w²V/(2(1−s))} (1 + 2q/(1 − q))``,
    ``q = e^{−2π²V/(1−s)}`` (Poisson summation, as for one mechanism); widened by its rounding."""
    one = _log_g(float(g.sigma2), float(g.weight), s, b)
    if g.count == 1:
        return one
    prod = g.count * one
    prod = prod + 4 * EPS64 * (np.abs(prod) + 1)
    big_v = g.count * float(g.sigma2)
    w = float(g.weight)
    one_s = 1.0 - s
    q = np.exp(-2 * math.pi**2 * big_v / one_s)
    peak = (one_s * _log_peak(g.sigma2, g.count) + (b * w) ** 2 * big_v / (2 * one_s)
            + 0.5 * np.log(2 * math.pi * big_v / one_s) + np.log1p(2 * q / (1 - q)))
    peak = peak + LOG_SLACK * (np.abs(peak) + 1)
    return np.minimum(prod, peak)


@functools.lru_cache(maxsize=512)
def _log_peak(s2, m: int) -> float:
    """An upper bound of ``log A``, ``A = max_k P(S = k) e^{k²/(2mσ²)} = max_r P(S = r) e^{r²/(2mσ²)}``
    (the residue identity of :mod:`exactdp.engine.group_log_pmf`)."""
    lr, er = residue_log_pmf(Fraction(s2), m)
    r = np.arange(m, dtype=float)
    top = lr + er + r * r / (2.0 * m * float(s2))
    out = float(np.max(top))
    return out + 8 * EPS64 * (abs(out) + float(np.max(r * r / (2.0 * m * float(s2)))) + 1)


def chernoff_log_mgf(groups, complement: bool) -> tuple:
    """``(μ, log c_μ + Σ_g log G_g(0, ±μ))`` on the grid of :class:`OmissionBound` (``+μ`` for
    δ, ``−μ`` for 1 − δ): ``min_μ(· ∓ μθ)`` is Chernoff's bound of log δ(θ) (of log(1 − δ(θ))),
    up to the floats of its closed forms."""
    mus, sign = (_MU_C, -1.0) if complement else (_MU, 1.0)
    base = sum(_log_gm(g, np.zeros(1), sign * mus) for g in groups)
    if not complement:
        with np.errstate(divide="ignore", invalid="ignore"):
            base = base + np.where(mus > 0, -np.log1p(mus) + mus * np.log(mus / (1 + mus)), 0.0)
    return mus, base


class OmissionBound:
    """Per-threshold upper bounds (logs) of what the two tilted halves leave out of δ(θ) and
    of 1 − δ(θ) (module docstring).

    Parameters
    ----------
    halves : (groups A, groups B)
    lam : float
        The tilt both halves were listed with.
    d_primes : (float, float)
        Each half's ``D'`` (:func:`tilted_atoms`).
    c_lists : (list, list)
        Each half's ``c_g``.
    """

    def __init__(self, halves, lam: float, d_primes, c_lists):
        self.sides = []
        for mus, sign in ((_MU, 1.0), (_MU_C, -1.0)):
            nu = sign * mus
            logm = [sum(_log_gm(g, np.zeros(1), nu) for g in h) for h in halves]
            t = []
            for h, dp, cl in zip(halves, d_primes, c_lists):
                s = _S[None, :]
                acc = -s * dp + s * math.fsum(cl) + sum(_log_gm(g, s, nu[:, None] - s * lam) for g in h)
                t.append(np.min(acc, axis=1))
            # side A left out (with B's mgf), then side B left out (with A's)
            pair = np.logaddexp(logm[1] + t[0], logm[0] + t[1])
            with np.errstate(divide="ignore", invalid="ignore"):
                logc = np.where(mus > 0, -np.log1p(mus) + mus * np.log(mus / (1 + mus)), 0.0) if sign > 0 \
                    else np.zeros_like(mus)
            self.sides.append((mus, logc + pair + LOG_SLACK * (np.abs(pair) + 1) + 1e-12))

    def log_bound(self, th_dn: np.ndarray, th_up: np.ndarray, complement: bool) -> np.ndarray:
        """Upper bounds of the log of the left-out part of δ (of ``1 − δ`` with
        ``complement``) at every θ in ``[th_dn, th_up]``."""
        mus, base = self.sides[1 if complement else 0]
        th = np.asarray(th_up if complement else th_dn, dtype=float)
        sgn = 1.0 if complement else -1.0
        vals = base[None, :] + sgn * mus[None, :] * th[:, None]
        # the product μθ rounded: widen by its magnitude
        vals = vals + 4 * EPS64 * (np.abs(mus[None, :] * th[:, None]) + 1)
        return np.min(vals, axis=1)
