"""Exact tails of a few-family design: enumerate all families but one in tilted windows.

With families f (unit a_f, integer lattice sums S_f; :mod:`exactdp.engine.families`)
and one *base* family b,

    P(W > t) = Σ_c p_c · P(S_b ≥ ⌊(t − c)/a_b⌋ + 1),   P(W ≥ t) = Σ_c p_c · P(S_b ≥ ⌈(t − c)/a_b⌉),

over the atoms ``c = Σ_{u≠b} a_u s_u`` of the other *units* (each a family, or a single
group of a family whose dense window would be longer than its groups' product): a sum
of non-negative terms.  Every threshold ``(t − c)/a_b`` is rounded exactly: integer and
fractional parts of ``(a_u/a_b)·s_u`` are exact integer divisions; a fractional sum within
1e-9 of an integer is settled in rational (or 80-digit) arithmetic.  The tails of S_b
come from its dense pmf (suffix sums), the sums from :func:`exactdp.kernels.split.split_tail_sums`.

**Tilted windows.**  Only the atoms with ``s_u ∈ [L_u, H_u]`` are enumerated, a window
around the unit's centre ``μ_u(λ) = λ a_u V_u`` under the tilt λ ≈ t/V of the query
(``V_u = Σ m n² σ²``): for any λ ≥ 0 the dropped atoms contribute at most

    Σ_dropped p_c P(W_b > t − c) ≤ M_W(λ) e^{−λt} Σ_u P_λ(S_u ∉ [L_u, H_u])

(Chernoff on W_b, then a union over units), and under the tilt each X ~ N_Z(0, σ²)
becomes N_Z(λwσ², σ²), whose centred mgf is ≤ ρ e^{s²σ²/2} with
``ρ = (1 + 2q)/(1 − 2q)``, ``q = Σ_{k≥1} e^{−2π²σ²k²}`` (Poisson summation of the
normaliser), so ``P_λ(S_u ≥ H+1) ≤ ρ_u exp(−(H + 1 − μ_u)²/(2V_u))`` (and the mirror
image below).  Windows are sized by ``T = ln(1/rel_tol) + 8``; the bound is evaluated
for every threshold and charged.  This makes the enumeration independent of the depth
of the tail (a tilt moves the window, it does not widen it).

Error bound: each single discrete Gaussian is truncated at ``|x| ≤ sqrt(2σ²·690)`` (mass
≤ 2e^{−690} each, Canonne–Kamath–Steinke sub-Gaussian tail), an absolute
``Σ m_g·2e^{−690}``; entries of pmfs carry a relative rounding error from their
operation count; the window bound above; the sums are compensated.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.families import families_of, family_of
from exactdp.kernels.convolution import convolve_strided, dg_pmf, suffix_sums
from exactdp.kernels.dgauss import log_theta_real
from exactdp.kernels.split import NEAR_BAND, NEAR_SLOTS, grouped_tail_sums, split_tail_sums
from exactdp.numerics.precision import EPS64

__all__ = ["SplitTails", "TooManyAtoms", "split_plan"]

TRUNC = 690.0
#: largest number of enumerated atoms per window, and longest dense pmf of the base family
MAX_ATOMS = 3_000_000
MAX_DENSE = 4_000_000
MAX_FAMILY_PMF = 200_000
#: σ² below which a group is not windowed (its support is short; ρ would be large)
WINDOW_MIN_S2 = 0.5
#: the tilt range a plan is sized for: λ up to that of δ ≈ 1e-21 at the design's c
PLAN_LOG_DELTA = 48.4
#: window sets (tilt ranges) kept per engine
ATOM_SETS = 8
#: canonical tilt buckets of the window sets (see WindowedTails._bucket)
BUCKETS = 1
MAX_BUCKET_LEVEL = 12
LAM_ZERO = 2.0**-40
MAX_BUCKET_EXP = 40


class TooManyAtoms(ArithmeticError):
    """The enumerated part of the design would have too many atoms."""


def _width(s2: float) -> int:
    return int(math.ceil(math.sqrt(2.0 * s2 * TRUNC))) + 1


def _family_len(fam) -> int:
    return 1 + sum(n * 2 * _width(float(g.sigma2)) * g.count for g, n in zip(fam.groups, fam.multipliers))


def _log_rho(s2: float) -> float:
    q = sum(math.exp(-2 * math.pi**2 * s2 * k * k) for k in range(1, 6))
    return math.log1p(2 * q) - math.log1p(-2 * q) + 1e-15


def window_T(rel_tol: float) -> float:
    return math.log(1.0 / rel_tol) + 8.0


class _Unit:
    """An enumerated family (or single group): pmf of S_u on lo..hi, weight ratio to the
    base unit, variance proxy and the sub-Gaussian constant of its window bound."""

    def __init__(self, fam, base_unit: Fraction):
        self.fam = fam
        self.pmf, self.lo, self.rel = _family_pmf(fam)
        self.hi = self.lo + self.pmf.size - 1
        self.ratio = fam.unit / base_unit
        self.unit = float(fam.unit)
        self.V = fam.vproxy
        self.windowed = all(float(g.sigma2) >= WINDOW_MIN_S2 for g in fam.groups)
        self.log_rho = sum(g.count * _log_rho(float(g.sigma2)) for g in fam.groups) if self.windowed else 0.0

    def window(self, lam_lo: float, lam_hi: float, T: float) -> tuple:
        if not self.windowed:
            return self.lo, self.hi
        R = math.sqrt(2 * self.V * T) + 1
        L = math.floor(lam_lo * self.unit * self.V - R)
        H = math.ceil(lam_hi * self.unit * self.V + R)
        return max(L, self.lo), min(H, self.hi)

    def log_eta(self, lam: np.ndarray, L: int, H: int) -> np.ndarray:
        """log of a bound on P_λ(S_u ∉ [L, H]) for each λ (−inf for the full support)."""
        mu = lam * self.unit * self.V
        out = np.full(lam.size, -np.inf)
        if H < self.hi:
            d = np.maximum(H + 1 - mu, 0.0)
            out = np.logaddexp(out, self.log_rho - d * d / (2 * self.V))
        if L > self.lo:
            d = np.maximum(mu - (L - 1), 0.0)
            out = np.logaddexp(out, self.log_rho - d * d / (2 * self.V))
        return np.minimum(out, 0.0)


def _unit_cost(fam, lam_nom: float, T: float) -> tuple:
    """(atoms, units) of enumerating family ``fam``: as one dense family, or group by group."""
    if len(fam.groups) == 1:
        g = fam.groups[0]
        n = _window_len(g, lam_nom, T) if _family_len(fam) <= MAX_FAMILY_PMF else math.inf
        return n, [fam]
    parts = math.prod(_window_len(g, lam_nom, T) for g in fam.groups)
    whole = math.inf
    if _family_len(fam) <= MAX_FAMILY_PMF:
        whole = _family_len(fam)
        if all(float(g.sigma2) >= WINDOW_MIN_S2 for g in fam.groups):
            V = fam.vproxy
            whole = min(whole, int(2 * math.sqrt(2 * V * T) + lam_nom * float(fam.unit) * V) + 3)
    if whole <= parts:
        return whole, [fam]
    return parts, [family_of([g]) for g in fam.groups]


def split_plan(groups, rel_tol: float = 1e-11):
    """(base family, enumerated units, atoms) of the cheapest split, or None if none fits.

    Decompositions tried: the largest feasible families, families with multipliers
    ≤ 2^20, and one family per group; every family with a dense pmf (≤ MAX_DENSE) is tried
    as the base; cost = atoms enumerated over the tilt range of δ ≥ 1e-21."""
    T = window_T(rel_tol)
    c = sum(g.count * float(g.weight) ** 2 * float(g.sigma2) for g in groups) / 2
    lam_nom = math.sqrt(PLAN_LOG_DELTA / max(c, 1e-300))
    # a lower bound on any split's atoms: the product of all groups' windows but the largest
    lens = sorted(_window_len(g, lam_nom, T) for g in groups)
    if math.prod(lens[:-1]) > MAX_ATOMS * 1e6:
        return None
    best = None
    seen = set()
    for fams in (families_of(groups), families_of(groups, 2**20), families_of(groups, 1)):
        key = tuple(sorted((f.unit, f.multipliers) for f in fams))
        if key in seen:
            continue
        seen.add(key)
        costs = [_unit_cost(f, lam_nom, T) for f in fams]
        logs = [math.log(a) if a < math.inf else math.inf for a, _ in costs]
        for b, base in enumerate(fams):
            rest = sum(x for i, x in enumerate(logs) if i != b)
            if rest > math.log(MAX_ATOMS) or _family_len(base) > MAX_DENSE:
                continue
            atoms = math.prod(a for i, (a, _) in enumerate(costs) if i != b)
            score = (atoms, -base.vproxy * float(base.unit) ** 2)
            if best is None or score < best[0]:
                best = (score, base, [u for i, (_, us) in enumerate(costs) if i != b for u in us])
    return None if best is None else (best[1], best[2], best[0][0])


def _window_len(g, lam_nom: float, T: float) -> int:
    """Length of one group's tilted window in its own lattice (cf. :meth:`_Unit.window`)."""
    s2, m = float(g.sigma2), g.count
    full = 2 * m * _width(s2) + 1
    if s2 < WINDOW_MIN_S2:
        return full
    return min(full, int(2 * math.sqrt(2 * m * s2 * T) + lam_nom * m * float(g.weight) * s2 + 3))


def _group_pmf(s2: float, m: int):
    """pmf of a sum of m iid truncated N_Z(0, s2) and the relative error of its entries."""
    w = _width(s2)
    base = dg_pmf(s2, w, log_theta_real(0.0, s2))
    rel = 4 * EPS64 * (TRUNC + 10 + abs(math.log(2 * math.pi * s2)))
    out, r_out = np.ones(1), 0.0
    p, r_p = base, rel
    k = m
    while k:
        if k & 1:
            out = np.convolve(out, p)
            r_out += r_p + (min(out.size, p.size) + 1) * EPS64
        k >>= 1
        if k:
            p = np.convolve(p, p)
            r_p = 2 * r_p + (p.size + 1) * EPS64
    return out, r_out


def _family_pmf(fam):
    """Dense pmf of S_f on lo..lo+len−1, its lo, and the relative error of the entries."""
    dense, lo, rel = np.ones(1), 0, 0.0
    for g, n in zip(fam.groups, fam.multipliers):
        p, r = _group_pmf(float(g.sigma2), int(g.count))
        half = (p.size - 1) // 2
        dense = convolve_strided(dense, p, n) if n > 1 else np.convolve(dense, p)
        lo -= n * half
        rel += r + (min(dense.size, p.size) + 1) * EPS64
    return dense, lo, rel


class _Atoms:
    """The enumerated atoms of one window set: exact integer and float fractional parts of
    ``c/a_b``, probabilities, and the windows (for the exact fallback and the bound)."""

    def __init__(self, units, windows):
        ints = np.zeros(1, dtype=np.int64)
        fracs = np.zeros(1)
        probs = np.ones(1)
        for u, (L, H) in zip(units, windows):
            s = list(range(L, H + 1))
            P, Q = u.ratio.numerator, u.ratio.denominator
            qr = [divmod(P * x, Q) for x in s]
            ii = np.array([q for q, _ in qr], dtype=np.int64)
            ff = np.array([r / Q for _, r in qr])
            pm = u.pmf[L - u.lo:H - u.lo + 1]
            ints = (ints[:, None] + ii[None, :]).ravel()
            fracs = (fracs[:, None] + ff[None, :]).ravel()
            probs = (probs[:, None] * pm[None, :]).ravel()
        keep = probs > 0
        self.ints = np.ascontiguousarray(ints[keep])
        self.fracs = np.ascontiguousarray(fracs[keep])
        self.probs = np.ascontiguousarray(probs[keep])
        self.index = np.flatnonzero(keep)
        self.windows = list(windows)
        self.pairs = list(zip(units, self.windows))
        self.sizes = [H - L + 1 for L, H in windows]


#: window sets of at least this many atoms are grouped by integer part (sorted once) and
#: summed by :func:`grouped_tail_sums`; smaller ones by one pass per threshold.  A property
#: of the set, not of the batch, so the roundings do not depend on the other thresholds
GROUPED_MIN_ATOMS = 200_000


def _grouped(atoms: _Atoms) -> tuple:
    """The atoms grouped by integer part for :func:`grouped_tail_sums` (built once per
    window set): ``value = ints + fracs = d + f2`` with ``f2 = fracs − ⌊fracs⌋`` (exact in
    binary64), sorted by (d, f2); returns (starts, d per group, d per atom, f2, probs,
    original index per sorted position)."""
    g = getattr(atoms, "grouped", None)
    if g is None:
        carry = np.floor(atoms.fracs)
        ints2 = atoms.ints + carry.astype(np.int64)
        f2 = atoms.fracs - carry
        by_f = np.argsort(f2)  # then a stable (radix) sort by integer part: sorted by (d, f2)
        order = by_f[np.argsort(ints2[by_f], kind="stable")]
        ints_s = np.ascontiguousarray(ints2[order])
        cut = np.flatnonzero(np.diff(ints_s)) + 1
        starts = np.concatenate(([0], cut, [ints_s.size])).astype(np.int64)
        g = (starts, np.ascontiguousarray(ints_s[starts[:-1]]), ints_s, np.ascontiguousarray(f2[order]),
             np.ascontiguousarray(atoms.probs[order]), order)
        atoms.grouped = g
    return g


class WindowedTails:
    """What the exact enumerations share: the tilted windows chosen per batch of
    thresholds, the window bound, the truncated support, and the certified intervals.

    A subclass provides ``_chunk_cost(lam_lo, lam_hi)`` (≤ 1 within its atom budget),
    ``_build_set(lam_lo, lam_hi)`` (the enumerated atoms of those windows, with
    ``pairs``: each enumerated unit and its window) and
    ``_chunk_tails(aset, ts, tf, strict)`` (the sums, as floats)."""

    def _init_common(self, groups, rel_tol: float) -> None:
        self.groups = tuple(groups)
        self.rel_tol = rel_tol
        self.T = window_T(rel_tol)
        self.vproxy = float(sum(g.count * g.weight**2 * g.sigma2 for g in groups))
        self.abs_trunc = 2.0 * math.exp(-TRUNC) * sum(g.count for g in groups)
        #: W ≤ w_top on the truncated supports (|x| < _width), rounded up
        self.w_top = sum(g.count * float(g.weight) * _width(float(g.sigma2)) for g in groups) * (1 + 1e-9)
        self._w = np.array([float(g.weight) for g in groups])
        self._s2 = np.array([float(g.sigma2) for g in groups])
        self._m = np.array([g.count for g in groups], dtype=float)
        self._t0 = np.array([log_theta_real(0.0, s) for s in self._s2])
        self._sets: list = []

    def _set_for(self, lam_lo: float, lam_hi: float):
        """The atoms of the windows for tilts in [lam_lo, lam_hi] (a few sets cached, by
        their exact range: a rebuilt set is the same set)."""
        key = (lam_lo, lam_hi)
        for k, aset in self._sets:
            if k == key:
                return aset
        aset = self._build_set(lam_lo, lam_hi)
        self._sets = ([(key, aset)] + self._sets)[:ATOM_SETS]
        return aset

    def _cost_or_inf(self, lam_lo: float, lam_hi: float) -> float:
        try:
            return self._chunk_cost(lam_lo, lam_hi)
        except (OverflowError, ValueError):  # a tilt range too wide to size: not a candidate
            return math.inf

    def _bucket(self, lam: float) -> tuple:
        """The canonical tilt range of a threshold's window set: ``[0, 2^e]`` with the
        largest e ≥ log2 λ whose windows stay within the threshold's own single-tilt
        budget, else
        ``[2^(b/R), 2^((b+1)/R)]`` at the coarsest level (R = BUCKETS·2^ℓ) that does, else
        ``[λ, λ]``.  A function of λ and the design only, so no
        number depends on the other thresholds of the batch or on earlier queries (the
        window bound is taken at the threshold's own tilt either way)."""
        cap = max(1.0, self._chunk_cost(lam, lam))
        if lam < LAM_ZERO:
            return (0.0, LAM_ZERO) if self._chunk_cost(0.0, LAM_ZERO) <= cap else (lam, lam)
        x = math.log2(lam)
        e = math.ceil(x)  # small tilts share one set from 0: the largest [0, 2^e] in budget
        if 2.0**e >= lam and self._chunk_cost(0.0, 2.0**e) <= cap:
            while e < MAX_BUCKET_EXP and self._cost_or_inf(0.0, 2.0 ** (e + 1)) <= cap:
                e += 1
            return 0.0, 2.0**e
        for level in range(MAX_BUCKET_LEVEL):
            R = BUCKETS << level
            b = math.floor(x * R)
            lo, hi = 2.0 ** (b / R), 2.0 ** ((b + 1) / R)
            if lo <= lam <= hi and self._cost_or_inf(lo, hi) <= cap:
                return lo, hi
        return lam, lam

    def _log_mgf(self, lam: np.ndarray) -> np.ndarray:
        out = np.zeros(lam.size)
        for w, m, s, t0 in zip(self._w, self._m, self._s2, self._t0):
            out += m * (np.array([log_theta_real(w * x, s) for x in lam.tolist()]) - t0)
        return out

    def _window_bound(self, pairs, lam: np.ndarray, tf: np.ndarray) -> np.ndarray:
        """``M_W(λ)e^{−λt} Σ_u P_λ(S_u ∉ window_u)`` for the (unit, window) pairs."""
        log_eta = np.full(lam.size, -np.inf)
        for u, (L, H) in pairs:
            log_eta = np.logaddexp(log_eta, u.log_eta(lam, L, H))
        with np.errstate(over="ignore"):
            return np.exp(self._log_mgf(lam) - lam * tf + log_eta) * (1 + 1e-9)

    def _positive_tails(self, ts, strict: bool) -> list:
        """(value, absolute error bound) for thresholds t ≥ 0 (Fraction or mpf)."""
        if not ts:
            return []
        tf = np.array([float(t) for t in ts])
        lam_all = tf / self.vproxy
        out = [None] * len(ts)
        beyond = tf > self.w_top  # beyond every truncated support: only the truncated mass
        for i in np.flatnonzero(beyond):
            out[i] = (0.0, self.abs_trunc)
        inside = np.flatnonzero(~beyond)
        groups: dict = {}
        for i in inside:
            groups.setdefault(self._bucket(float(lam_all[i])), []).append(i)
        for (lam_lo, lam_hi), members in sorted(groups.items()):
            idx = np.array(members, dtype=np.int64)
            lam = lam_all[idx]
            aset = self._set_for(lam_lo, lam_hi)
            sums, rel = self._chunk_tails(aset, [ts[i] for i in idx], tf[idx], strict)
            e_win = self._window_bound(aset.pairs, lam, tf[idx])
            for k, i in enumerate(idx):
                tot = max(float(sums[k]), 0.0)
                out[i] = (tot, tot * rel + self.abs_trunc + float(e_win[k]))
        return out

    def intervals(self, ts, strict: bool = True) -> list:
        """Certified float ``(lo, hi)`` of ``P(W > t)`` (strict) or ``P(W ≥ t)``; t < 0 by
        symmetry, ``P(W > t) = 1 − P(W ≥ −t)`` (a complement only there, where it is
        ≥ 1/2).  ``lo = 0`` where the enumeration certifies nothing better."""
        ts = list(ts)
        neg = [i for i, t in enumerate(ts) if t < 0]
        pos = [i for i, t in enumerate(ts) if not t < 0]
        out = [None] * len(ts)
        for i, (v, e) in zip(pos, self._positive_tails([ts[i] for i in pos], strict)):
            out[i] = (max((v - e) * (1 - 4 * EPS64), 0.0), min((v + e) * (1 + 4 * EPS64), 1.0))
        for i, (v, e) in zip(neg, self._positive_tails([-ts[i] for i in neg], not strict)):
            lo_c, hi_c = max(v - e, 0.0), min(v + e, 1.0)
            out[i] = (max((1.0 - hi_c) * (1 - 4 * EPS64), 0.0), min((1.0 - lo_c) * (1 + 4 * EPS64), 1.0))
        return out

    def tails(self, ts, strict: bool = True) -> list:
        """``(value, rel_error)`` (floats) of ``P(W > t)`` (strict) or ``P(W ≥ t)``
        (midpoint and half-width of :meth:`intervals`; rel = inf where value is 0)."""
        out = []
        for lo, hi in self.intervals(ts, strict):
            v = 0.5 * (lo + hi)
            out.append((v, (0.5 * (hi - lo) + 2 * EPS64 * v) / v if v > 0 else math.inf))
        return out


class SplitTails(WindowedTails):
    """Exact certified ``P(W > t)`` / ``P(W ≥ t)`` of a design with few families.

    Parameters
    ----------
    groups : sequence of Group
    rel_tol : float
        Relative size of the window bound (the tails' own accuracy is ~1e-13).

    Raises
    ------
    TooManyAtoms
        When no split has at most :data:`MAX_ATOMS` enumerated atoms.
    """

    def __init__(self, groups, rel_tol: float = 1e-11):
        plan = split_plan(groups, rel_tol)
        if plan is None:
            raise TooManyAtoms("every split of the design enumerates too many atoms")
        self.base, units, self.n_atoms = plan
        self.units = [_Unit(f, self.base.unit) for f in units]
        self._init_common(groups, rel_tol)
        if self.w_top / float(self.base.unit) > 2.0**62:  # thresholds t/a_b beyond int64
            raise TooManyAtoms("the base family's unit is too small for int64 threshold indices")
        self.atom_rel = sum(u.rel for u in self.units) + 8 * EPS64 * (len(self.units) + 1)
        pmf, self.base_lo, r = _family_pmf(self.base)
        self.suffix = suffix_sums(pmf)
        self.base_rel = r + 6 * EPS64
        self.method = "split-enumeration"

    # -- atoms --------------------------------------------------------------------------
    def _chunk_cost(self, lam_lo: float, lam_hi: float) -> float:
        n = math.prod(max(H - L + 1, 0) for L, H in (u.window(lam_lo, lam_hi, self.T) for u in self.units))
        return n / min(MAX_ATOMS, max(2 * self.n_atoms, 1))

    def _build_set(self, lam_lo: float, lam_hi: float) -> _Atoms:
        return _Atoms(self.units, [u.window(lam_lo, lam_hi, self.T) for u in self.units])

    def _atom_value(self, atoms: _Atoms, i: int) -> Fraction:
        """Exact Σ_u (a_u/a_b)·s_u of atom i (for the rounding fallback)."""
        k = int(atoms.index[i])
        tot = Fraction(0)
        for u, (L, _), size in reversed(list(zip(self.units, atoms.windows, atoms.sizes))):
            k, r = divmod(k, size)
            tot += u.ratio * (L + r)
        return tot

    def _exact_k(self, atoms, i, t, strict: bool) -> int:
        if isinstance(t, Fraction):
            yy = t / self.base.unit - self._atom_value(atoms, i)
            return math.floor(yy) + 1 if strict else math.ceil(yy)
        with mpmath.workdps(80):
            c = self._atom_value(atoms, i)
            yy = mpmath.mpf(t) / (mpmath.mpf(self.base.unit.numerator) / self.base.unit.denominator) \
                - mpmath.mpf(c.numerator) / c.denominator
            f = mpmath.floor(yy)
            if min(yy - f, f + 1 - yy) < mpmath.mpf(10) ** -60:
                raise ArithmeticError("an irrational threshold within 1e-60 of an atom")
            return int(f) + 1

    def _split_t(self, t) -> tuple:
        if isinstance(t, Fraction):
            y = t / self.base.unit
            it = math.floor(y)
            return it, float(y - it)
        with mpmath.workdps(60):
            y = mpmath.mpf(t) / (mpmath.mpf(self.base.unit.numerator) / self.base.unit.denominator)
            it = int(mpmath.floor(y))
            return it, float(y - it)

    def _suffix_at(self, k: int) -> float:
        idx = k - self.base_lo
        return 0.0 if idx >= self.suffix.size - 1 else float(self.suffix[max(idx, 0)])

    def _chunk_tails(self, atoms: _Atoms, ts, tf, strict: bool) -> tuple:
        """Tail sums of one window set (near-integer floors settled exactly), and their
        relative rounding error.  In sets of GROUPED_MIN_ATOMS atoms or more, thresholds
        whose fractional part is at least NEAR_BAND from an
        integer go through :func:`grouped_tail_sums` (atoms grouped by integer part), the
        others through :func:`split_tail_sums`; both sum the same terms."""
        parts = [self._split_t(t) for t in ts]
        its = np.array([p[0] for p in parts], dtype=np.int64)
        fts = np.array([p[1] for p in parts])
        out = np.empty(len(ts))
        inner = (fts >= NEAR_BAND) & (fts <= 1.0 - NEAR_BAND)
        if atoms.probs.size < GROUPED_MIN_ATOMS:
            inner[:] = False  # a small set: one pass per threshold costs less than the grouping's sort
        if inner.any():
            starts, dvals, ints_s, f2, p2, order = _grouped(atoms)
            sel = np.flatnonzero(inner)
            sel = sel[np.argsort(fts[sel], kind="stable")]
            near = np.zeros((sel.size, NEAR_SLOTS), dtype=np.int64)
            sums, cnt = grouped_tail_sums(starts, dvals, f2, p2, self.suffix, self.base_lo, fts[sel], its[sel],
                                          bool(strict), near)

            def used_k(k, q):  # the k the grouped kernel gave sorted atom q, and its original index
                below = f2[q] <= fts[k] if strict else f2[q] < fts[k]
                return int(order[q]), int(its[k]) - int(ints_s[q]) + (1 if below else 0)

            self._settle(atoms, ts, its, fts, strict, sel, sums, cnt, near, used_k, out)
        edge = np.flatnonzero(~inner)
        if edge.size:
            near = np.zeros((edge.size, NEAR_SLOTS), dtype=np.int64)
            sums, cnt = split_tail_sums(atoms.ints, atoms.fracs, atoms.probs, self.suffix, self.base_lo, fts[edge],
                                        its[edge], bool(strict), near)

            def used_k(k, j):  # the k the one-pass kernel gave atom j
                f = fts[k] - atoms.fracs[j]
                return int(j), int(its[k]) - int(atoms.ints[j]) + math.floor(f) + (1 if strict or f - math.floor(f) > 0 else 0)

            self._settle(atoms, ts, its, fts, strict, edge, sums, cnt, near, used_k, out)
        return out, self.atom_rel + self.base_rel + 8 * EPS64

    def _settle(self, atoms, ts, its, fts, strict, rows, sums, cnt, near, used_k, out) -> None:
        """``out[k]`` for the thresholds ``rows``: the kernel's sum with each near atom
        moved from the k the kernel used (``used_k(k, slot) -> (atom, k)``) to its exact
        k, or recomputed by :meth:`_redo` when more atoms were near than reported."""
        for r, k in enumerate(rows):
            t, tot = ts[k], float(sums[r])
            if cnt[r] > NEAR_SLOTS:
                tot = self._redo(atoms, t, strict, its[k], fts[k])
            else:
                for q in near[r, :cnt[r]]:
                    j, k_f = used_k(k, q)
                    k_x = self._exact_k(atoms, j, t, strict)
                    if k_x != k_f:
                        tot += float(atoms.probs[j]) * (self._suffix_at(k_x) - self._suffix_at(k_f))
            out[k] = tot

    def _redo(self, atoms, t, strict, it, ft) -> float:
        """Tail sum with every near-integer atom settled exactly (vectorised fallback)."""
        frac = ft - atoms.fracs
        fl = np.floor(frac)
        k = it - atoms.ints + fl.astype(np.int64)
        k = k + 1 if strict else k + (frac - fl > 0)
        for i in np.flatnonzero(np.abs(frac - np.round(frac)) < 1e-9):
            k[i] = self._exact_k(atoms, int(i), t, strict)
        idx = k - self.base_lo
        n = self.suffix.size - 1
        tv = np.where(idx >= n, 0.0, self.suffix[np.clip(idx, 0, n)])
        return math.fsum(atoms.probs * tv)
