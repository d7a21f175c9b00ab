"""Coarse groups to enumerate, and their atoms.

A group whose atoms are far apart compared with the spread of everything else (a large
weight ``w_g`` against the rest's sd, or a near-deterministic σ² ≪ 1) makes the
privacy-loss distribution clumpy: its characteristic function has many lobes inside the
rest's main lobe, and a smoothed inversion would need many nodes.  Such groups are
*conditioned on* (:class:`exactdp.engine.conditioned_profile.ConditionedProfile` moves
them, coarsest first by :func:`coarse_candidates`, while the rest costs too much):
with ``W = A + R`` (A the coarse part, R the rest),

    δ(θ) = E(1 − e^{θ−W})₊ = Σ_a P(A = a)·D_R(θ − a),   D_R(x) = E(1 − e^{x−R})₊,

an identity.  :func:`coarse_atoms` enumerates A's atoms exactly enough: each group's pmf
(the sum of its m discrete Gaussians) by log-domain convolution of truncated pmfs, so every
probability is a certified *lower* bound within its log error, and the mass left out
(truncation at the sub-Gaussian depth, Canonne–Kamath–Steinke 2020: N_Z(0, σ²) is
σ²-sub-Gaussian) is bounded.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.kernels.atom_sums import log_convolve
from exactdp.kernels.enumeration import product_step, stable_repair
from exactdp.numerics.precision import EPS64, workdps

__all__ = ["ball_atom_count", "MAX_ATOMS", "TINY_S2",
           "CoarseAtoms", "coarse_candidates", "coarse_atoms", "group_atom_count",
           "joint_atom_count", "group_pmf", "log_add_up", "closed_form_error", "sum_pmf_closed_form",
           "CLOSED_FORM_REL", "stable_order"]

#: σ² below this: the group is near-deterministic (its penalty bound is void): coarse
TINY_S2 = 0.25
#: at most this many joint atoms are enumerated
MAX_ATOMS = 200_000
#: the precision of the single-mechanism normaliser (digits)
_DPS_NORMALISER = 30


def _sd_proxy(g) -> float:
    return float(g.weight) * math.sqrt(g.count) * math.sqrt(float(g.sigma2))  # no overflow at σ² 1e300 × 1e9


def group_atom_count(g, depth: float) -> int:
    """Atoms of the sum of one group's m mechanisms down to e^{−depth}: ``2K + 1`` with
    ``K = ⌈√(2mσ²·depth)⌉ + 1``."""
    return 2 * (int(math.ceil(math.sqrt(2 * g.count * depth) * math.sqrt(float(g.sigma2)))) + 1) + 1


def joint_atom_count(groups, depth: float) -> int:
    """The joint atoms of ``groups`` down to e^{−depth} (the product of
    :func:`group_atom_count`: an upper bound of what :func:`coarse_atoms` lists)."""
    n = 1
    for g in groups:
        n *= group_atom_count(g, depth)
    return n


def ball_atom_count(groups, depth: float) -> float:
    """An estimate of the joint atoms of ``groups`` with probability above ``e^{−depth}`` (what
    :func:`coarse_atoms` lists with ``margin=0``): the integer points of the ellipsoid
    ``Σ_g k_g²/(2m_gσ_g²) + ½log(2πm_gσ_g²) ≤ depth``, counted over cost buckets of
    ``max(1/4, depth/512)`` nats
    (each group's cost rounded down: an over-count).  Only a work estimate, never part of a
    certified number."""
    return _ball_count(tuple(groups), float(depth))


#: a group's half-width beyond which the ellipsoid is not counted (its atoms alone exceed
#: every enumeration budget: the count is +inf)
_BALL_MAX_K = 10**7


@functools.lru_cache(maxsize=256)
def _ball_count(groups: tuple, depth: float) -> float:
    step = max(0.25, depth / 512)
    nb = int(depth / step) + 1
    hist = np.zeros(nb)
    hist[0] = 1.0
    for g in groups:
        v = g.count * float(g.sigma2)
        if not v < _BALL_MAX_K**2:  # a group this wide alone has more atoms than any engine enumerates
            return math.inf
        c0 = max(0.5 * math.log(2 * math.pi * v), 0.0)
        K = int(math.sqrt(2 * v * max(depth - c0, 0.0))) + 1
        if K > _BALL_MAX_K:
            return math.inf
        k = np.arange(-K, K + 1, dtype=float)
        b = np.floor((k * k / (2 * v) + c0) / step).astype(np.int64)
        gh = np.bincount(b[b < nb], minlength=nb).astype(float)[:nb]
        hist = np.convolve(hist, gh)[:nb]
    return float(hist.sum())


def coarse_candidates(groups, depth: float = 1000.0) -> tuple:
    """The groups worth conditioning on, coarsest first: ranked by the weight over the
    rest's sd (near-deterministic σ² < TINY_S2 first), those whose atoms would exceed
    :data:`MAX_ATOMS` together left out (deterministic order)."""
    total = sum(_sd_proxy(g) ** 2 for g in groups)

    def score(g):
        rest = math.sqrt(max(total - _sd_proxy(g) ** 2, 0.0))
        r = math.inf if rest == 0.0 else float(g.weight) / rest
        return (0 if float(g.sigma2) < TINY_S2 else 1, -r, g.weight, g.sigma2, g.count)

    out, atoms = [], 1
    for g in sorted(groups, key=score):
        n = group_atom_count(g, depth)
        if atoms * n > MAX_ATOMS:
            continue
        atoms *= n
        out.append(g)
    return tuple(out)


@dataclass(frozen=True)
class CoarseAtoms:
    """The joint atoms of the coarse part A, sorted by value (unless built with ``sort=False``).

    Attributes
    ----------
    value_dn, value_up : numpy.ndarray
        Float enclosures of each atom's exact value ``Σ_g w_g k_g``.
    log_p : numpy.ndarray
        log of a certified lower bound of each atom's probability, up to ``log_err``.
    log_err : numpy.ndarray
        Absolute error bound of each ``log_p``.
    log_omitted : float
        log of a bound on the probability mass of every atom not listed plus the lower
        bounds' deficits (``Σ_a (P(A = a) − p̃_a) ≤ e^{log_omitted}``; −inf for none).  Kept
        as a log: below e^{−745} a float mass would underflow to a false zero.
    depth : float
        The depth (nats) the enumeration covers.
    """

    value_dn: np.ndarray
    value_up: np.ndarray
    log_p: np.ndarray
    log_err: np.ndarray
    log_omitted: float
    depth: float

    @property
    def size(self) -> int:
        return int(self.log_p.size)


def _single_pmf(s2: Fraction, K: int) -> tuple:
    """log pmf of N_Z(0, s²) on −K..K (each log within 4u(|log| + 1)) and the mass beyond."""
    with workdps(_DPS_NORMALISER):
        s2m = mpmath.mpf(s2.numerator) / s2.denominator
        if s2 < 4:  # Θ(0) = θ₃(0, e^{−1/(2s²)})
            z = mpmath.jtheta(3, 0, mpmath.exp(-1 / (2 * s2m)))
        else:  # Poisson: Θ(0) = √(2πs²)·θ₃(0, e^{−2π²s²})
            z = mpmath.sqrt(2 * mpmath.pi * s2m) * mpmath.jtheta(3, 0, mpmath.exp(-2 * mpmath.pi**2 * s2m))
        logz = float(mpmath.log(z))
    k = np.arange(-K, K + 1, dtype=float)
    lp = -k * k / (2 * float(s2)) - logz
    err = 4 * EPS64 * (np.abs(lp) + 1) + 1e-28
    log_beyond = math.log(2) - (K + 1) ** 2 / (2 * float(s2))  # log P(|X| > K), sub-Gaussian
    return lp, err, log_beyond


def log_add_up(*logs: float) -> float:
    """An upper bound of ``log Σ e^{logs}`` (−inf for none), widened by its rounding."""
    top = max(logs, default=-math.inf)
    if top == -math.inf:
        return top
    tot = top + math.log(sum(math.exp(v - top) for v in logs))
    return tot + 8 * EPS64 * (abs(tot) + len(logs) + 1)


#: the m-fold closed form is used when its relative error bound is at most this
CLOSED_FORM_REL = 1e-14


def closed_form_error(s2, m: int) -> float:
    """An upper bound ``E`` of ``|η_k|`` in :func:`sum_pmf_closed_form` (inf when useless):
    ``E = θ₃(q)^m − 1 ≤ expm1(m·2q/(1 − q³))``, ``q = e^{−π²σ²/2}``, rounded up."""
    a = math.pi**2 * float(s2) / 2
    if a < 20:
        return math.inf
    q = math.exp(-a) * (1 + 1e-12)
    return math.expm1(m * 2 * q / (1 - q**3)) * (1 + 1e-12)


def sum_pmf_closed_form(s2: Fraction, m: int, K: int) -> tuple:
    """log pmf of the sum S of m independent N_Z(0, σ²) on −K..K, with absolute log errors.

    By Poisson summation, ``P(S = k) = (1/2π)∫ φ(t)^m e^{−ikt} dt`` with ``φ = G/G(0)``,
    ``G(t) = √(2πσ²) Σ_n e^{−σ²(t − 2πn)²/2}``; expanding ``G^m`` over ``n ∈ Z^m`` and folding
    the classes ``n + Z·1`` onto the real line,

        P(S = k) = e^{−k²/(2mσ²)} / √(2πmσ²) · θ^{−m} · (1 + η_k),
        θ = Σ_n e^{−2π²σ²n²},   η_k = Σ_{classes ≠ 0} e^{−2π²σ²V(n)} e^{2πik n̄},

    ``V(n) = Σ_j (n_j − n̄)²``.  Taking the representative with ``round(n̄) = 0``, every
    ``n_j ≠ 0`` has ``|n_j − n̄| ≥ |n_j|/2``, so ``|η_k| ≤ Σ_{n ≠ 0} e^{−(π²σ²/2)Σ n_j²} =
    θ₃(e^{−π²σ²/2})^m − 1`` (:func:`closed_form_error`), uniformly in k: a relative error, so
    the deep tails are as accurate as the bulk."""
    E = closed_form_error(s2, m)
    with workdps(_DPS_NORMALISER):
        s2m = mpmath.mpf(s2.numerator) / s2.denominator
        theta = mpmath.jtheta(3, 0, mpmath.exp(-2 * mpmath.pi**2 * s2m))
        const = float(-mpmath.log(2 * mpmath.pi * m * s2m) / 2 - m * mpmath.log(theta))
    k = np.arange(-K, K + 1, dtype=float)
    lp = const - k * k / (2 * float(m) * float(s2))
    # the float arithmetic (4u per operation on the magnitudes), the constant's rounding, |log(1 + η)|
    err = 4 * EPS64 * (np.abs(lp) + abs(const) + 1) + 2 * E + 1e-300
    return lp, err


def group_pmf(g, depth: float) -> tuple:
    """(offset, log pmf estimates, log errors, log deficit) of the sum of the group's m
    mechanisms.  Where :func:`closed_form_error` is at most :data:`CLOSED_FORM_REL`, the
    closed form of :func:`sum_pmf_closed_form`; otherwise binary powering of the single pmf;
    a partial sum of j mechanisms is cut to ``|s| ≤ K_j = ⌈√(2jσ²·depth)⌉ + 1`` (mass beyond
    ≤ 2e^{−depth}) and entries below ``e^{−depth−60}`` are dropped (mass ≤ their count times
    that).  Every kept entry's log is within its error of the truth, and ``e^{log deficit}``
    bounds the total mass lost."""
    s2, m = Fraction(g.sigma2), int(g.count)
    if m > 1 and closed_form_error(s2, m) <= CLOSED_FORM_REL:  # no convolution needed
        K = int(math.ceil(math.sqrt(2 * m * float(s2) * depth))) + 1
        lp, err = sum_pmf_closed_form(s2, m, K)
        # S is mσ²-sub-Gaussian (CKS): P(|S| > K) ≤ 2e^{−(K+1)²/(2mσ²)}
        return -K, lp, err, math.log(2) - (K + 1) ** 2 / (2 * m * float(s2)) + 1e-12
    K1 = int(math.ceil(math.sqrt(2 * float(s2) * depth))) + 1
    lp1, e1, log_beyond1 = _single_pmf(s2, K1)
    floor = -depth - 60.0
    lost = [math.log(m) + log_beyond1]

    def conv(a, b):
        off = a[0] + b[0]
        lp, err = log_convolve(a[1], a[2], b[1], b[2], floor)
        j = a[3] + b[3]
        K = int(math.ceil(math.sqrt(2 * j * float(s2) * depth))) + 1
        lo, hi = max(0, -K - off), min(lp.size, K - off + 1)
        lost[0] = log_add_up(lost[0], math.log(2) - depth, math.log(lp.size) + floor)
        return off + lo, np.ascontiguousarray(lp[lo:hi]), np.ascontiguousarray(err[lo:hi]), j

    result = None
    base = (-K1, lp1, e1, 1)
    n = m
    while n:
        if n & 1:
            result = base if result is None else conv(result, base)
        n >>= 1
        if n:
            base = conv(base, base)
    assert result is not None  # m ≥ 1
    return result[0], result[1], result[2], lost[0]


def coarse_atoms(coarse, depth: float = 1000.0, margin: float = 40.0, sort: bool = True) -> CoarseAtoms:
    """The joint atoms of the coarse groups (see the module docstring), sorted by value (by
    the midpoints of their enclosures; unsorted when ``sort`` is false, for a caller that
    orders them its own way).

    Group entries and joint combinations below ``e^{−depth−margin}`` are pruned (their mass is
    at most their count times that, added to ``log_omitted``).  Values are float enclosures of the exact
    ``Σ_g w_g k_g`` (each product and sum widened by its rounding)."""
    v_dn = np.zeros(1)
    v_up = np.zeros(1)
    lp = np.zeros(1)
    le = np.zeros(1)
    log_omitted = -math.inf
    cut = -depth - margin
    for g in coarse:
        off, glp, gle, log_deficit = group_pmf(g, depth)
        keep = np.flatnonzero(np.isfinite(glp) & (glp >= cut))
        n_cut = int(np.count_nonzero(np.isfinite(glp))) - keep.size  # each below e^{cut}
        wf = float(g.weight)
        w_err = float(abs(Fraction(wf) - g.weight)) * (1 + 4 * EPS64) + 1e-320
        add = (keep + off) * wf
        add_err = 2 * EPS64 * np.abs(add) + w_err * np.abs(keep + off)
        # the pairs at or above the cut, row-major (the float operations of the broadcast
        # ``lp[:, None] + glp[None, :]`` and its gathers, in one pass)
        v_dn, v_up, lp, le, n_below = product_step(v_dn, v_up, lp, le, np.ascontiguousarray(add),
                                                   np.ascontiguousarray(add_err), np.ascontiguousarray(glp[keep]),
                                                   np.ascontiguousarray(gle[keep]), float(cut))
        n_pruned = int(n_below) + n_cut
        log_omitted = log_add_up(log_omitted, log_deficit, (math.log(n_pruned) + cut) if n_pruned else -math.inf)
    if not sort:
        return CoarseAtoms(v_dn, v_up, lp, le, log_omitted, depth)
    order = stable_order(0.5 * (v_dn + v_up))
    return CoarseAtoms(v_dn[order], v_up[order], lp[order], le[order], log_omitted, depth)


def stable_order(keys: np.ndarray) -> np.ndarray:
    """``numpy.argsort(keys, kind="stable")``, faster: the keys' monotone quantisation to
    ``62 − b`` bits with the index in the low ``b`` bits is sorted as int64 (NumPy's vectorised
    sort), and the rare ties of the quantisation are put in (key, index) order
    (:func:`exactdp.kernels.enumeration.stable_repair`).  ``x ↦ ⌊(x − lo)·c⌋`` is
    non-decreasing (each rounding is), so only tied quantised keys can be out of order."""
    n = keys.size
    lo = float(np.min(keys)) if n else 0.0
    hi = float(np.max(keys)) if n else 0.0
    bits = max((n - 1).bit_length(), 1)
    top = float(2 ** (62 - bits) - 1)
    if n < 2 or not (np.isfinite(lo) and np.isfinite(hi) and hi > lo and np.isfinite(top / (hi - lo))):
        return np.argsort(keys, kind="stable")
    q = np.minimum(np.floor((keys - lo) * (top / (hi - lo))), top).astype(np.int64)
    packed = np.sort((q << bits) | np.arange(n, dtype=np.int64))
    return stable_repair(np.ascontiguousarray(keys, dtype=float), packed & ((1 << bits) - 1))
