"""Meet in the middle in balls: the joint privacy loss of incommensurate groups, enumerated.

For a design whose weights share no small lattice, the privacy loss under P is
``L = Σ_u L_u`` over *units* u (the mechanisms of one weight ``w_u = |Δ|/σ²``, merged by
an exact polynomial product), ``L_u = c_u + w_u Y_u`` with ``Y_u`` the integer sum of the
unit's discrete Gaussians.  Each unit's atoms are enumerated exactly (Arb polynomials of
the pmf, :mod:`.dgball`), with the Q-probability of an atom ``q = p·e^{−ℓ}`` (the
likelihood ratio, exact for N_Z(0, σ²) against N_Z(Δ, σ²) at an integer shift).  The units
are split into two halves; the atoms of each half are the products of its units' atoms,
less those whose ball is certainly below a level ``τ`` (their mass is bounded from
float64 upper bounds, rounded up, and counted as left out).
For a threshold t the sums

    P(L > t) = Σ_a P_a · Σ_{b > t − a} P_b,     P(L < t) = Σ_a P_a · Σ_{b < t − a} P_b

(and the same for Q) are evaluated by sorting half B once (by a float64 image of its
values) and keeping suffix and prefix sums of its balls: each atom of half A takes one
product.  The float64 order decides only pairs that are certainly on one side:
``|float − exact| < E`` for every value and threshold (``E = 2⁻⁴⁰(1 + Σ_u max|ℓ_u| + |t|)``,
far above the ≤ 2⁻⁵³·(units + 3) relative error of the float sums), and every pair with
``|a + b − t| ≤ 2E`` in floats is decided by exact rational arithmetic.

What is left out is bounded, in the measure ``P·e^{λL}/M`` tilted by some λ ≥ 0 (λ = 0: P
itself; ``M = E_P e^{λL}`` from Arb's theta function): the coordinates beyond ``|x| ≤ W_g``
(W_g beyond the tilted mean) have mass at most ``Σ m_g`` times a geometric tail bound
(:func:`tilted_outside`), and a unit's atoms whose tilted ball is below ``τ`` are dropped,
their balls' upper ends added to it.  A caller turns the tilted mass into
``P(left out, L > t) ≤ e^{−λt} M · (tilted mass)`` (:meth:`Halves.lost_above`).
Nothing here is shared with the engine (no sieve, no node selection, no lattice, not
:mod:`exactdp.engine.halves`).
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
from flint import arb

from exactdp.certify.balls import ball, prefix_sums, suffix_sums
from exactdp.certify.dgball import DGBall, float_variance

__all__ = ["Unit", "units_of", "Halves", "Sums", "Pruner", "float_uppers", "exact_ball", "estimate_atoms",
           "half_estimate", "split_halves", "MAX_HALF_ATOMS", "MAX_WINDOW_PAIRS"]

#: most atoms one half may hold (memory: four Arb lists of this length), and most
#: pairs decided in exact arithmetic for one threshold
MAX_HALF_ATOMS = 1_200_000
#: most candidate products (float64 upper bounds) weighed at one step of building a half
MAX_CANDIDATES = 40_000_000
MAX_WINDOW_PAIRS = 400_000
#: most units (float64 error analysis of the values holds far beyond this)
MAX_UNITS = 4096
#: relative safety of the float64 image of a value (see the module docstring)
_E_REL = 2.0**-40


class Unit:
    """The atoms of one weight: ``ℓ_i = c + w·y_i`` with P- and Q-probability balls.

    Attributes
    ----------
    weight, offset : Fraction
        ``w`` and ``c`` (the unit's share of ρ).
    ys : list of int
    P, Q : list of arb
    values : numpy.ndarray
        float64 images of ``ℓ_i`` (correctly rounded from the exact rationals).
    T : list of arb
        The tilted weights ``P·e^{λℓ}/M`` (``M = E_P e^{λ L_u}``, so they sum to ≤ 1): atoms are
        kept by them, and what is left out is counted in them.
    lost : arb
        A ball whose upper end bounds the tilted mass left out (truncation and pruning).
    log_mgf : arb
        ``log M``.
    """

    def __init__(self, weight: Fraction, members, log_inv_tau: float, lam: Fraction = Fraction(0)):
        self.weight = Fraction(weight)
        self.offset = Fraction(0)
        lam = Fraction(lam)
        wb = ball(self.weight)
        a = ball(lam) * wb  # the tilt of each X (the same for every member: one weight)
        a_f = float(lam * self.weight)
        poly = None
        y0 = 0
        lost = arb(0)
        log_m = arb(0)
        for s2, shift, m in members:
            dg = DGBall(Fraction(s2))
            d = abs(int(shift))
            W = dg.width(log_inv_tau) + int(math.ceil(a_f * float(s2)))
            factor = dg.pmf_poly(W) ** m
            poly = factor if poly is None else poly * factor
            y0 -= m * W
            self.offset += Fraction(m * d * d) / (2 * Fraction(s2))
            ratio = dg.theta_real(a) / dg.theta0 if lam else arb(1)  # E e^{aX} = Θ(a)/Θ(0)
            log_m += m * ratio.log()
            lost += m * tilted_outside(dg, W, a) / ratio
        assert poly is not None
        cb = ball(self.offset)
        self.log_mgf = ball(lam) * cb + log_m
        tau = (-arb(log_inv_tau)).exp()
        ys, P, Q, T = [], [], [], []
        for i in range(poly.degree() + 1):
            p = poly[i]
            y = i + y0
            t = p * (a * y - log_m).exp() if lam else p
            if t.upper() < tau:
                lost += t.upper()
                continue
            ys.append(y)
            P.append(p)
            Q.append(p * (-(cb + wb * y)).exp())
            T.append(t)
        self.ys, self.P, self.Q, self.T = ys, P, Q, T
        self.lost = lost
        # the correctly rounded float64 image of each exact value
        self.values = np.array([float(self.offset + self.weight * y) for y in ys], dtype=float)

    def __len__(self) -> int:
        return len(self.ys)

    def exact(self, i: int) -> Fraction:
        """The exact loss value of atom i."""
        return self.offset + self.weight * self.ys[i]

    @property
    def magnitude(self) -> float:
        return float(np.max(np.abs(self.values))) if len(self.values) else 0.0


def tilted_outside(dg: DGBall, W: int, a: arb) -> arb:
    """A ball whose upper end bounds ``Σ_{|x|>W} e^{−x²/(2s²) + a x}/Θ(0)`` for ``a ≥ 0`` and
    ``W + 1 > a s²``: on the right the terms fall by the factor ``e^{−(2x+1)/(2s²) + a}``,
    largest at ``x = W + 1``; on the left they are below the untilted ones
    (:meth:`~exactdp.certify.dgball.DGBall.outside_mass`, which bounds both sides)."""
    if a.is_zero():
        return dg.outside_mass(W)
    two_s2 = 2 * dg.s2b
    r = (-(arb(2 * W + 3) / two_s2) + a).exp()
    if not r < 1:
        return arb(1e300)  # not reached: W is chosen beyond a s²
    head = (-(arb((W + 1) ** 2) / two_s2) + a * (W + 1)).exp()
    return head / (1 - r) / dg.theta0 + dg.outside_mass(W)


def units_of(design) -> list:
    """``[(weight, [(σ², shift, count), ...]), ...]`` of a Composition: the mechanisms with a
    non-zero shift, grouped by their exact weight ``|Δ|/σ²``."""
    by_weight: dict = {}
    for mech, count in design.groups:
        if mech.shift == 0:
            continue
        by_weight.setdefault(mech.weight, []).append((mech.sigma2, abs(int(mech.shift)), int(count)))
    return sorted(by_weight.items())


def estimate_atoms(members, log_inv_tau: float) -> int:
    """The atoms a unit will keep, estimated from its variance (for planning: atoms with
    ``P ≥ e^{−log_inv_tau}`` lie within ``sqrt(2V log 1/τ)`` of the mean)."""
    var = sum(m * float_variance(Fraction(s2)) for s2, _, m in members)
    return 2 * int(math.ceil(math.sqrt(2.0 * var * log_inv_tau))) + 1


def half_estimate(sizes) -> float:
    """Atoms kept of a half whose units have ``sizes`` atoms each: the products above the
    level fill about the inscribed ball of the box (fraction ``V_d/2^d``, d = units with
    more than one atom); planning only."""
    d = sum(1 for n in sizes if n > 1)
    frac = math.pi ** (d / 2) / math.gamma(d / 2 + 1) / 2**d
    return math.prod(sizes) * frac


def split_halves(sizes) -> tuple[list, list]:
    """Indices of the units in two halves with products of sizes as equal as the greedy
    rule makes them (largest first, each to the smaller product)."""
    order = sorted(range(len(sizes)), key=lambda i: -sizes[i])
    a, b, pa, pb = [], [], 1, 1
    for i in order:
        if pa <= pb:
            a.append(i)
            pa *= max(1, sizes[i])
        else:
            b.append(i)
            pb *= max(1, sizes[i])
    return a, b


class Pruner:
    """The products of independent factors' atoms, one factor at a time, less those whose
    float64 upper bound is below ``tau``; the dropped mass is bounded from float64 upper bounds
    (rounded up).  Shared by the Gaussian halves (:class:`_Half`) and the mixed-kinds halves
    (:mod:`.kinds_mitm`): only the float64 bookkeeping of which products are kept.

    Parameters
    ----------
    tau : float
    limit : int
        OverflowError when more products would be kept.

    Attributes
    ----------
    lost : float
        An upper bound (rounded up) of the weight of the dropped products.
    """

    def __init__(self, tau: float = 0.0, limit: int = MAX_HALF_ATOMS):
        self.tau, self.limit = tau, limit
        self.up = np.ones(1)
        self.lost = 0.0

    def step(self, uppers: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(ii, jj)``: the kept products of kept product ``ii`` with the factor's atom ``jj``
        (``uppers``: float64 upper bounds of the factor's weights, :func:`float_uppers`)."""
        if len(self.up) * len(uppers) > MAX_CANDIDATES:
            raise OverflowError(f"meet in the middle would weigh {len(self.up) * len(uppers):.3g} products in one "
                                f"half (at most {MAX_CANDIDATES:.3g})")
        cp = np.multiply.outer(self.up, uppers) * _INFLATE
        keep = cp >= self.tau
        if not keep.all():
            self.lost = math.nextafter(self.lost + _upper_sum(cp[~keep]), math.inf)
        ii, jj = np.nonzero(keep)
        if len(ii) > self.limit:
            raise OverflowError(f"meet in the middle needs at least {len(ii):.3g} atoms in one half "
                                f"(at most {self.limit:.3g})")
        self.up = cp[ii, jj]
        return ii, jj


class _Half:
    """The atoms of a set of units whose product tilted weight is not certainly below ``τ``;
    the tilted mass of the left-out products is bounded from float64 upper bounds (rounded up).

    Parameters
    ----------
    units : list of Unit
    tau : float
        Products whose float64 upper bound is below ``tau`` are dropped.
    limit : int
        OverflowError when more atoms would be kept.
    """

    def __init__(self, units: list, tau: float = 0.0, limit: int = MAX_HALF_ATOMS):
        self.units = units
        coords = np.zeros((1, 0), dtype=np.int64)
        P, Q = [arb(1)], [arb(1)]
        vals = np.zeros(1)
        pruner = Pruner(tau, limit)
        for u in units:
            ii, jj = pruner.step(float_uppers(u.T))
            il, jl = ii.tolist(), jj.tolist()
            P = [P[i] * u.P[j] for i, j in zip(il, jl)]
            Q = [Q[i] * u.Q[j] for i, j in zip(il, jl)]
            coords = np.concatenate([coords[ii], jj[:, None].astype(np.int64)], axis=1)
            vals = vals[ii] + u.values[jj]
        self.values, self.P, self.Q, self.coords = vals, P, Q, coords
        #: an upper bound (a float, rounded up) of the tilted mass of the dropped products
        self.lost = pruner.lost

    def __len__(self) -> int:
        return len(self.values)

    def balls(self, i: int) -> tuple:
        """The P- and Q-balls of atom i, from its units (the half's lists may be freed)."""
        p, q = arb(1), arb(1)
        for u, k in zip(self.units, self.coords[i].tolist()):
            p, q = p * u.P[k], q * u.Q[k]
        return p, q

    def exact(self, i: int) -> Fraction:
        row = self.coords[i]
        return sum((u.exact(int(k)) for u, k in zip(self.units, row)), Fraction(0))


#: factor applied to every float64 product of upper bounds: ≥ 1/(1 − 2⁻⁵³)² so that the
#: rounded product of two upper bounds stays an upper bound (positive normal numbers)
_INFLATE = 1.0 + 2.0**-50


def float_uppers(balls: list) -> np.ndarray:
    """float64 numbers ≥ the upper ends of the balls (rounded up by one ulp)."""
    return np.array([math.nextafter(float(b.upper()), math.inf) for b in balls], dtype=float)


def _upper_sum(x: np.ndarray) -> float:
    """A float ≥ the exact sum of the exact values the (non-negative) entries bound: the
    correctly rounded ``math.fsum`` raised by a relative 2⁻⁵⁰, plus ``n·2⁻¹⁰⁶⁰`` for
    entries that lost their relative accuracy below the normal range."""
    if x.size == 0:
        return 0.0
    return math.fsum(x.tolist()) * (1.0 + 2.0**-50) + x.size * 2.0**-1060


class Sums:
    """Balls of the kept sums at one threshold t: ``gt_p = P(kept, L > t)``, ``gt_q``,
    ``lt_p = P(kept, L < t)``, ``lt_q``, ``eq_q = Q(kept, L = t)`` (the last three only when
    asked), and the number of pairs decided exactly."""

    __slots__ = ("gt_p", "gt_q", "lt_p", "lt_q", "eq_q", "window")

    def __init__(self, gt_p, gt_q, lt_p, lt_q, eq_q, window):
        self.gt_p, self.gt_q, self.lt_p, self.lt_q, self.eq_q = gt_p, gt_q, lt_p, lt_q, eq_q
        self.window = window


class Halves:
    """The two halves of a design's units, half B sorted, with its suffix/prefix balls.

    Parameters
    ----------
    units : list of Unit
    lower_sums : bool
        Also keep prefix sums (for ``P(L < t)``: the trade-off needs them).
    tau : float
        Products of a half below ``tau`` are dropped (their mass is added to the lost mass).
    """

    def __init__(self, units: list, lower_sums: bool = False, tau: float = 0.0, lam: Fraction = Fraction(0)):
        if len(units) > MAX_UNITS:
            raise OverflowError(f"{len(units)} distinct weights (at most {MAX_UNITS})")
        ia, ib = split_halves([len(u) for u in units])
        self.A = _Half([units[i] for i in ia], tau)
        B = _Half([units[i] for i in ib], tau)
        order = np.argsort(B.values, kind="stable")
        self.B = B
        self.order = order
        self.vb = B.values[order]
        olist = order.tolist()
        PB = [B.P[i] for i in olist]
        QB = [B.Q[i] for i in olist]
        B.P = B.Q = []  # the sorted copies are kept
        n = len(order)
        self.suf_p, self.suf_q = suffix_sums(PB), suffix_sums(QB)
        self.pre_p: list = prefix_sums(PB) if lower_sums else []
        self.pre_q: list = prefix_sums(QB) if lower_sums else []
        self.magnitude = 1.0 + sum(u.magnitude for u in units)
        self.lam = Fraction(lam)
        self.lost = sum((u.lost for u in units), arb(0)) + exact_ball(self.A.lost + B.lost)
        self.log_mgf = sum((u.log_mgf for u in units), arb(0))
        # float64 images for the searches (planning only)
        fpa = np.array([float(p.mid()) for p in self.A.P])
        fqa = np.array([float(q.mid()) for q in self.A.Q])
        fpb = np.array([float(p.mid()) for p in PB])
        fqb = np.array([float(q.mid()) for q in QB])
        del PB, QB
        self._f = (fpa, fqa, np.concatenate([np.cumsum(fpb[::-1])[::-1], [0.0]]),
                   np.concatenate([np.cumsum(fqb[::-1])[::-1], [0.0]]),
                   np.concatenate([[0.0], np.cumsum(fpb)]))
        self.atoms = (len(self.A), n)

    @property
    def lost_p(self) -> arb:
        """A ball whose upper end bounds the P-mass left out (untilted halves only)."""
        if self.lam:
            raise ValueError("tilted halves bound the tilted mass, not the P-mass")
        return self.lost

    def lost_above(self, t: Fraction) -> arb:
        """Upper end bounds ``P(left out, L > t)``: ``e^{−λt} E[e^{λL}; left out] ≤ e^{log M − λt}·lost``
        (Chernoff on the left-out configurations; ``P(left out)`` itself when λ = 0)."""
        if not self.lam:
            return self.lost.upper()
        return ((self.log_mgf - ball(self.lam) * ball(t)).exp() * self.lost).upper()

    # -- float64 images (planning) -----------------------------------------------------
    def float_gt(self, t: float) -> tuple[float, float]:
        """float64 estimates of ``P(L > t)`` and ``Q(L > t)``."""
        fpa, fqa, sp, sq, _ = self._f
        j = np.searchsorted(self.vb, t - self.A.values, side="right")
        return float(np.dot(fpa, sp[j])), float(np.dot(fqa, sq[j]))

    def float_lt(self, t: float) -> float:
        """float64 estimate of ``P(L < t)``."""
        fpa, _, _, _, pp = self._f
        j = np.searchsorted(self.vb, t - self.A.values, side="left")
        return float(np.dot(fpa, pp[j]))

    def atom_values(self, lo: Fraction, hi: Fraction, limit: int = 32) -> list | None:
        """The distinct exact values ``a + b`` in ``(lo, hi]`` of kept pairs (sorted), or None
        when more than ``limit`` pairs fall near the interval in float64."""
        E = _E_REL * (self.magnitude + abs(float(lo)) + abs(float(hi)))
        j_lo = np.searchsorted(self.vb, float(lo) - self.A.values - 2 * E, side="left")
        j_hi = np.searchsorted(self.vb, float(hi) - self.A.values + 2 * E, side="right")
        if int(np.sum(j_hi - j_lo)) > limit:
            return None
        out = set()
        for i in np.nonzero(j_hi > j_lo)[0].tolist():
            a = self.A.exact(i)
            for j in range(int(j_lo[i]), int(j_hi[i])):
                v = a + self.B.exact(int(self.order[j]))
                if lo < v <= hi:
                    out.add(v)
        return sorted(out)

    # -- balls ---------------------------------------------------------------------------
    def sums(self, t: Fraction, lower: bool = False) -> Sums:
        """Ball sums at the exact threshold t (module docstring)."""
        t = Fraction(t)
        tf = float(t)
        E = _E_REL * (self.magnitude + abs(tf))
        thr = tf - self.A.values
        j_hi = np.searchsorted(self.vb, thr + 2 * E, side="right")
        j_lo = np.searchsorted(self.vb, thr - 2 * E, side="left")
        window = int(np.sum(j_hi - j_lo))
        if window > MAX_WINDOW_PAIRS:
            raise OverflowError(f"{window} pairs of atoms tie with the threshold in float64 "
                                f"(at most {MAX_WINDOW_PAIRS})")
        if lower and not self.pre_p:
            raise ValueError("built without prefix sums")
        gp, gq, lp, lq, eq = arb(0), arb(0), arb(0), arb(0), arb(0)
        AP, AQ = self.A.P, self.A.Q
        sp, sq = self.suf_p, self.suf_q
        pp, pq = self.pre_p, self.pre_q
        for i, (jh, jl) in enumerate(zip(j_hi.tolist(), j_lo.tolist())):
            pa, qa = AP[i], AQ[i]
            wp, wq = sp[jh], sq[jh]
            vp, vq = (pp[jl], pq[jl]) if lower else (arb(0), arb(0))
            if jl < jh:
                rest = t - self.A.exact(i)
                for j in range(jl, jh):
                    k = int(self.order[j])
                    b = self.B.exact(k)
                    pb, qb = self.B.balls(k)
                    if b > rest:
                        wp += pb
                        wq += qb
                    elif lower and b < rest:
                        vp += pb
                        vq += qb
                    elif lower:
                        eq += qa * qb
            gp += pa * wp
            gq += qa * wq
            if lower:
                lp += pa * vp
                lq += qa * vq
        if not lower:
            return Sums(gp, gq, None, None, None, window)
        return Sums(gp, gq, lp, lq, eq, window)


def exact_ball(x: float) -> arb:
    """A ball ≥ the float x (floats add with rounding: one ulp up covers it)."""
    return arb(math.nextafter(x, math.inf)) if x > 0 else arb(0)
