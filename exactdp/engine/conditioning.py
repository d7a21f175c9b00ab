"""Coarse groups by exact enumeration of their *tilted* atoms, alone or conditioning a
sub-engine for the rest.

Groups whose characteristic function never decays below the sieve level (few mechanisms
with small σ², nearly deterministic noise) defeat the sieve and, with large lattice
weights, make the rule's node count huge.  Their sum ``C = Σ_{g∈C} A_g T_g`` has few
atoms *that matter*: for a threshold s, tilt by the saddle point λ of S at s; under the
tilt each factor is N_Z(A_gλs_g², s_g²) = n0_g + N_Z(f_g, s_g²) (|f_g| ≤ 1/2), whose mass
beyond ``n0_g ± w`` is at most ``2 e^{(1/4 − (w+½)²)/(2s²)}/(1 − e^{−(w+½)/s²})``.  Keeping
a window per factor, convolving m_g windows (non-negative float64 arrays, relative
error ≤ (n+1)u per entry and level) and taking the product over groups gives atoms
``v_c`` with tilted weights p̃_c; the untilted ``p_c = p̃_c e^{K_C(λ) − λ v_c}`` with
``K_C(λ)`` split as in :mod:`exactdp.engine.tilt` (exact rational + κ) — relative accuracy
at any depth.  With the fine part F = d·T_F (``d = gcd`` of its weights):

    P(S ≥ s) = Σ_c p_c P(T_F ≥ ⌈(s − v_c)/d⌉),     (no fine part: Σ_{c: v_c ≥ s} p_c),

a sum of non-negative terms; the fine tails come from a sub-engine on F's own lattice
(:func:`fine_sublattice`), each certified.  Hockey-stick sums split the same way, each
atom's with its own exact offset.

Error bound: the certified relative errors of the sub-values and of the atoms carry over
(non-negative terms), plus the dropped tilted mass η: by Chernoff, the dropped atoms add
at most ``e^{K_C(λ) + λ²V'_F/2 − λs}·η`` (sub-Gaussian bound K_F(λ) ≤ λ²V'_F/2 of
Canonne–Kamath–Steinke 2020), measured against the estimate.
"""

from __future__ import annotations

import math
from fractions import Fraction
from functools import reduce

import mpmath
import numpy as np

from exactdp.engine.lattice import LatticeSum
from exactdp.engine.quadrature import TailValue, WeightedQuery, certified
from exactdp.engine.tilt import (HUGE_MU, ell_ratio_mp, exact_saddle, frac_parts, log_as_value, log_mgf_parts,
                                 mp_bits_for)
from exactdp.kernels.convolution import convolve_strided
from exactdp.kernels.tilted import saddle_point
from exactdp.numerics.precision import EPS64, to_mpf

__all__ = ["fine_sublattice", "atoms_estimate", "CoarseAtoms", "ConditionedTails", "EnumeratedTails"]

#: tilted mass left out of the coarse atoms (relative to the tilted total, ≤ 1)
ETA = 1e-24
MAX_ATOMS = 200_000


def fine_sublattice(lattice: LatticeSum, coarse) -> tuple[int, LatticeSum]:
    """``(d, lattice of T_F)`` with ``S_F = d·T_F`` for the groups not in ``coarse``."""
    fine = [g for g in range(lattice.n_groups) if g not in tuple(coarse)]
    d = reduce(math.gcd, (int(lattice.weights[g]) for g in fine))
    sub = LatticeSum(
        weights=tuple(int(lattice.weights[g]) // d for g in fine),
        counts=tuple(int(lattice.counts[g]) for g in fine),
        sigma2=tuple(lattice.sigma2[g] for g in fine),
        scale=lattice.scale / d,
        c=lattice.c,
        shift=0,
    )
    return d, sub


def _window(s2: float, eta: float) -> int:
    """Half-width w ≥ 1 of a tilted factor's window with dropped mass ≤ eta."""
    w = 1
    while True:
        x = w + 0.5
        lb = math.log(2) + (0.25 - x * x) / (2 * s2) - math.log(-math.expm1(-x / s2))
        if lb <= math.log(eta):
            return w
        w += 1


def atoms_estimate(s2, m) -> int:
    """Rough number of tilted atoms of the coarse groups (s2, m) (worst tilt f = 1/2)."""
    n = 1
    for s, c in zip(s2, m):
        w = _window(float(s), ETA / max(int(c), 1))
        width = min(int(c) * (2 * w + 1), int(2 * math.sqrt(int(c) * max(float(s), 0.25) * 2 * 60)) + 2 * w + 1)
        n *= max(width, 1)
    return n


class CoarseAtoms:
    """Tilted atoms of ``C = Σ_g A_g T_g`` for the given groups (exact weights, variances)."""

    def __init__(self, weights, counts, sigma2):
        self.A = tuple(int(a) for a in weights)
        self.m = tuple(int(c) for c in counts)
        self.s2q = tuple(Fraction(s) for s in sigma2)
        self.s2 = tuple(float(s) for s in self.s2q)
        self.vq = sum((m * a * a * s for a, m, s in zip(self.A, self.m, self.s2q)), Fraction(0))
        self.step = reduce(math.gcd, self.A)  # every value of C is a multiple of it
        self._cache: dict = {}

    def K(self, t: Fraction):
        """``K_C(t) = log E e^{tC}`` as an mpmath number (exact part + κ, rounded up)."""
        exact, kappa, kerr = log_mgf_parts(self.A, self.m, self.s2q, t)
        return to_mpf(exact) + kappa + kerr

    def saddle(self, x: int) -> Fraction:
        """The saddle point of C at x (K_C'(t) = x; negative for x < 0, C symmetric)."""
        if x == 0:
            return Fraction(0)
        if x < 0:
            return -self.saddle(-x)
        A = np.array(self.A, dtype=np.int64)
        m = np.array(self.m, dtype=np.int64)
        s2 = np.array(self.s2)
        v = float(self.vq)
        lam = float(saddle_point(A, m, s2, float(x), float(x) / v))
        if lam * float(np.max(np.abs(A) * s2)) > HUGE_MU:
            return exact_saddle(self.A, self.m, self.s2q, int(x), self.vq)
        return Fraction(lam)

    def at(self, lamq: Fraction):
        """``(V0, offsets, log p̃, rel, eta, K_exact, kappa)`` at tilt λ: atoms
        ``v = V0 + offsets`` with tilted log-weights, their relative error, the dropped
        tilted mass, and ``K_C(λ) = K_exact + kappa``."""
        hit = self._cache.get(lamq)
        if hit is not None:
            return hit
        n0, ff, fq = frac_parts(self.A, self.s2q, lamq)
        V0 = sum(a * m * n for a, m, n in zip(self.A, self.m, n0))
        K_exact = lamq * lamq * self.vq / 2
        for m, s2, f in zip(self.m, self.s2q, fq):
            if float(s2) < 1.0:
                K_exact -= m * f * f / (2 * s2)
        kappa, kerr = ell_ratio_mp([(s2, m, f) for s2, m, f in zip(self.s2q, self.m, fq)])
        offs = np.zeros(1, dtype=np.int64)
        probs = np.ones(1)
        rel = 0.0
        eta = 0.0
        for a, m, s2, f in zip(self.A, self.m, self.s2, ff):
            p, lo, r, e = self._group(s2, m, f)
            rel += r + 2 * EPS64
            eta += e
            xs = (np.arange(p.shape[0], dtype=np.int64) + lo) * a
            offs = (offs[:, None] + xs[None, :]).ravel()
            probs = (probs[:, None] * p[None, :]).ravel()
            if probs.shape[0] > MAX_ATOMS:
                raise ArithmeticError("too many coarse atoms")
        with np.errstate(divide="ignore"):
            logp = np.log(probs)
        # entries that underflowed to 0 stand for < 1e-300 of tilted mass each
        eta += 1e-300 * float(np.count_nonzero(probs == 0))
        out = (V0, offs, logp, rel + 4 * EPS64 + kerr, eta, K_exact, kappa)
        if len(self._cache) > 24:
            self._cache.clear()
        self._cache[lamq] = out
        return out

    @staticmethod
    def _group(s2: float, m: int, f: float):
        """Tilted pmf of the m-fold sum (offset from m·n0) on a window: ``(p, lo, rel, eta)``."""
        w = _window(s2, ETA / m)
        y = np.arange(-w, w + 1, dtype=float)
        ex = -((y - f) ** 2) / (2 * s2)
        mx = ex.max()
        base = np.exp(ex - mx)
        # normaliser θ̃(f) ≥ Σ_window; the window misses ≤ eta/m of the tilted mass
        base /= math.fsum(base)
        rel = EPS64 * (3 * float(np.max(np.abs(ex))) + 2 * len(y) + 8) + ETA / m
        eta_single = ETA / m
        out = None
        lo_out = 0
        power, lo_p = base, -w
        k = m
        eta = 0.0
        first = True
        while k:
            if k & 1:
                if first:
                    out, lo_out = power, lo_p
                    first = False
                else:
                    out = convolve_strided(out, power, 1)
                    lo_out += lo_p
                    rel += (min(out.shape[0], power.shape[0]) + 1) * EPS64
                out, lo_out, e = _trim(out, lo_out)
                eta += e
            k >>= 1
            if k:
                power = convolve_strided(power, power, 1)
                lo_p *= 2
                rel += (power.shape[0] + 1) * EPS64
                power, lo_p, e = _trim(power, lo_p)
                eta += e
        return out, lo_out, rel, eta + m * eta_single


def _trim(p: np.ndarray, lo: int):
    """Drop both ends of a non-negative array while their mass stays ≤ 1e-30·total."""
    tot = float(p.sum())
    c = np.cumsum(p)
    cut = 1e-30 * tot
    i = int(np.searchsorted(c, cut, side="right"))
    r = np.cumsum(p[::-1])
    j = int(np.searchsorted(r, cut, side="right"))
    i = min(i, p.shape[0] - 1)
    j = min(j, p.shape[0] - 1 - i)
    dropped = (float(c[i - 1]) if i else 0.0) + (float(r[j - 1]) if j else 0.0)
    return p[i:p.shape[0] - j], lo + i, dropped * (1 + 1e-12)


class _TiltedSum:
    """The tilt grid and saddle point of the full lattice sum (shared by both classes)."""

    def __init__(self, lattice: LatticeSum):
        self.lattice = lattice
        self.A = np.array(lattice.weights, dtype=np.int64)
        self.m = np.array(lattice.counts, dtype=np.int64)
        self.s2 = np.array([float(s) for s in lattice.sigma2])
        self.vproxy = float(np.sum(self.m * self.A.astype(float) ** 2 * self.s2))
        self.vq = sum((int(m) * int(a) ** 2 * Fraction(s) for a, m, s in zip(lattice.weights, lattice.counts,
                                                                           lattice.sigma2)), Fraction(0))
        self.step = 1.0 / math.sqrt(self.vproxy)
        self.mu_scale = float(np.max(np.abs(self.A.astype(float)) * self.s2))

    def lam_for(self, s: int) -> Fraction:
        """The saddle point of S at s on the tilt grid (exact when it is huge; 0 for s ≤ 0)."""
        if s <= 0:
            return Fraction(0)
        lam = float(saddle_point(self.A, self.m, self.s2, float(s), float(s) / self.vproxy))
        if lam * self.mu_scale > HUGE_MU:
            lat = self.lattice
            return exact_saddle(lat.weights, lat.counts, [Fraction(x) for x in lat.sigma2], int(s), self.vq)
        return Fraction(round(lam / self.step) * self.step)


def _logsum(parts):
    """``(log Σ e^{x}, weights)`` of a list of exponents (floats or mpf; call it at the
    working precision the result needs)."""
    if any(not isinstance(x, float) for x in parts):
        mx = max(parts)
        ws = [float(mpmath.exp(x - mx)) for x in parts]
        return mx + math.log(math.fsum(ws)), ws
    mx = max(parts)
    ws = [math.exp(x - mx) for x in parts]
    return mx + math.log(math.fsum(ws)), ws


class ConditionedTails:
    """Certified tails of S with the groups ``coarse`` enumerated (tilted atoms) and the
    rest by a sub-engine on the fine lattice.

    Parameters
    ----------
    lattice : LatticeSum
        The full lattice sum.
    coarse : sequence of int
        The groups to enumerate.
    d : int
        ``gcd`` of the fine weights (from :func:`fine_sublattice`).
    sub : object or None
        Values of T_F: ``sub.weighted(queries, strict=False)`` / ``sub.tails(...)``
        returning TailValues, with attributes ``vproxy``, ``nodes_kept``, ``n_nodes``;
        None when every group is coarse.
    """

    def __init__(self, lattice: LatticeSum, coarse, d: int = 1, sub=None):
        self.coarse = tuple(coarse)
        self.d = d
        self.sub = sub
        self.full = _TiltedSum(lattice)
        self.atoms = CoarseAtoms([lattice.weights[g] for g in self.coarse], [lattice.counts[g] for g in self.coarse],
                                 [lattice.sigma2[g] for g in self.coarse])
        self.vq_fine = sum((int(lattice.counts[g]) * int(lattice.weights[g]) ** 2 * Fraction(lattice.sigma2[g])
                            for g in range(lattice.n_groups) if g not in self.coarse), Fraction(0))
        self.nodes_kept = sub.nodes_kept if sub is not None else 0
        self.n_nodes = sub.n_nodes if sub is not None else 0
        self.method = "conditioned-quadrature" if sub is not None else "enumeration"

    def tails(self, thresholds):
        """List of TailValue for the integer thresholds (s ≥ 1)."""
        qs = [WeightedQuery(int(s), -math.inf, 0.0, 1.0) for s in thresholds]
        return self.weighted(qs)

    def weighted(self, queries):
        """List of TailValue for WeightedQuery's (tails when x0 = −inf)."""
        return [self._one(q) for q in queries]

    def _one(self, q: WeightedQuery) -> TailValue:
        s = q.threshold
        lamq = self.full.lam_for(s)
        lam = float(lamq)
        fail = TailValue(s, -math.inf, math.inf, self.method, self.nodes_kept, self.n_nodes, lam)
        try:
            V0, offs, logp, rel_atoms, eta, K_exact, kappa = self.atoms.at(lamq)
        except ArithmeticError:
            return fail
        common = K_exact - lamq * V0  # K_C(λ) − λ V0 − κ
        if self.sub is None:
            vals, rels = self._enumerated(q, V0, offs)
        else:
            vals, rels = self._conditioned(q, V0, offs)
        prec = mp_bits_for(common) + 64
        lam_offs = lam * offs.astype(float)
        exact = float(np.max(np.abs(lam_offs))) > 1e5 if lam_offs.size else False
        # per atom: log W_c = log[e^{K_C − λ v_c} P_F(s − v_c)] − (common + κ), and log p̃_c
        logW, parts, xerr, idx, bad = [], [], [], [], []
        with mpmath.workprec(prec):
            for i, v in enumerate(vals):
                if v is None:
                    bad.append(i)
                    continue
                if isinstance(v, float) and v == -math.inf:
                    continue
                lo = to_mpf(-lamq * int(offs[i])) if exact else -float(lam_offs[i])
                w = lo + v
                logW.append(w)
                parts.append(w + float(logp[i]))
                xerr.append(EPS64 * ((0 if exact else 2 * abs(float(lam_offs[i]))) + abs(float(logp[i])) + 2))
                idx.append(i)
            if not parts or max(parts) == -math.inf:
                return fail
            log_sum, ws = _logsum(parts)
            tot = math.fsum(ws)
            err = math.fsum(w * (rels[i] + e) for w, i, e in zip(ws, idx, xerr)) / tot
            base = to_mpf(common) + kappa
            log_est = base + log_sum
            rel_trunc = self._truncation(q, s, V0, offs, logp, eta, base, max(logW), log_est, lamq, bad)
        rel = (err + rel_atoms + rel_trunc) * (1 + 1e-6) + EPS64 * 8
        if not math.isfinite(rel):
            rel = math.inf
        log_value, rel = log_as_value(log_est if abs(log_est) >= 1e4 else float(log_est), rel)
        return TailValue(s, log_value, rel, self.method, self.nodes_kept, self.n_nodes, lam)

    def _truncation(self, q, s, V0, offs, logp, eta, base, max_logW, log_est, lamq, bad) -> float:
        """Relative bound of everything the window leaves out (at the caller's precision).

        With ``p_c ≤ e^{K_C(t) − t v_c}`` for every real t and ``P_F(x) ≤ e^{−x_+²/(2V'_F)}``
        (sub-Gaussian fine part), and the tilted masses summing to ≤ 1:

        * coarse sums in the window with some factor outside its own window (tilted mass
          ≤ η): ≤ η · e^{base} · max_c W_c (W_c = e^{K_C − λ v_c} P_F(s − v_c), computed);
        * sums above the window: ≤ e^{K_C(t) − t(v_max+1) − (s − v_max − 1)_+²/(2V'_F)} with
          t ≥ (s − v_max − 1)_+/V'_F (the exponent then decreases in v);
        * sums in [s, v_min): ≤ e^{K_C(t) − t s}, t ≥ 0;
        * sums below u = min(s, v_min), i.e. ≤ x (the largest value of C below u):
          ≤ e^{K_C(t) − t x − (s − x)²/(2V'_F)} with t ≤ (s − x)/V'_F (fine part only; a
          pure enumeration has nothing there);
        (values of C are multiples of d_C = gcd of the coarse weights: the next value above
        v_max is v_max + d_C, and so on.)
        * atoms whose fine value could not be certified: ``p_c e^{−(s − v_c)_+²/(2V'_F)}``."""
        atoms = self.atoms
        v_min, v_max = V0 + int(offs.min()), V0 + int(offs.max())
        dc = atoms.step  # the values of C are the multiples of dc
        has_fine = self.sub is not None
        vf = mpmath.mpf(self.vq_fine) if has_fine else None
        terms = []
        if eta:
            terms.append(mpmath.log(eta) + base + max_logW)
        # above the window
        x = v_max + dc
        t = atoms.saddle(x) if x > 0 else Fraction(0)
        gap = max(s - x, 0)
        if has_fine:
            t = max(t, Fraction(gap) / self.vq_fine)
            terms.append(atoms.K(t) - to_mpf(t * x) - mpmath.mpf(gap) ** 2 / (2 * vf))
        else:
            terms.append(atoms.K(t) - to_mpf(t * x))
        # in [s, v_min)
        if v_min > s:
            x = -((-s) // dc) * dc
            t = atoms.saddle(x) if x > 0 else Fraction(0)
            terms.append(atoms.K(t) - to_mpf(t * x))
        # below u = min(s, v_min)
        if has_fine:
            u = min(s, v_min)
            x = ((u - 1) // dc) * dc  # the largest value of C below u
            cap = Fraction(s - x) / self.vq_fine
            t = min(atoms.saddle(x), cap)
            terms.append(atoms.K(t) - to_mpf(t * x) - mpmath.mpf(s - x) ** 2 / (2 * vf))
            for i in bad:
                uu = max(s - (V0 + int(offs[i])), 0)
                terms.append(base - to_mpf(lamq * int(offs[i])) + float(logp[i]) - mpmath.mpf(uu) ** 2 / (2 * vf))
        mx = max(terms)
        if mx == -math.inf:
            return 0.0
        tot = mx + mpmath.log(mpmath.fsum(mpmath.exp(t - mx) for t in terms))
        return float(mpmath.exp(min(tot - log_est, mpmath.mpf(700))))

    def _enumerated(self, q: WeightedQuery, V0: int, offs):
        """Per atom: log of its factor (0 or log(1 − c e^{−β r})) and relative error."""
        s = q.threshold
        r = (V0 - s) + offs  # v_c − s (int64 may overflow only if V0 − s is beyond 2⁶²)
        vals, rels = [], []
        for ri in r.tolist():
            if ri < 0:
                vals.append(-math.inf)
                rels.append(0.0)
            elif q.x0 == -math.inf:
                vals.append(0.0)
                rels.append(0.0)
            else:
                x = q.x0 - q.beta * ri
                vals.append(math.log(-math.expm1(x)))
                rels.append(EPS64 * (8 + 4 * abs(x)))
        return vals, rels

    def _conditioned(self, q: WeightedQuery, V0: int, offs):
        """Per atom: log of the fine sub-value and its certified relative error (None when
        the sub-value is not certified: bounded by the truncation term instead)."""
        s = q.threshold
        d = self.d
        base = s - V0
        us = [-((-(base - o)) // d) for o in offs.tolist()]  # ⌈(s − v_c)/d⌉
        if q.x0 == -math.inf:
            subq = {u: WeightedQuery(u, -math.inf, 0.0, 1.0) for u in set(us)}
        else:
            subq = {}
            for o, u in zip(offs.tolist(), us):
                rc = V0 + o + d * u - s  # ∈ [0, d)
                subq[(u, rc)] = WeightedQuery(u, q.x0 - q.beta * rc, q.x1 + q.beta * (d - 1 - rc), q.beta * d)
        keys = list(subq)
        if q.x0 == -math.inf:
            tv = self.sub.tails(keys, strict=False)
        else:
            tv = self.sub.weighted([subq[k] for k in keys], strict=False)
        got = dict(zip(keys, tv))
        vals, rels = [], []
        for o, u in zip(offs.tolist(), us):
            if q.x0 == -math.inf:
                t = got[u]
            else:
                t = got[(u, V0 + o + d * u - s)]
            if certified(t, 1e-3):
                vals.append(t.log_value if not isinstance(t.log_value, float) else float(t.log_value))
                rels.append(t.rel_error)
            else:
                vals.append(None)
                rels.append(0.0)
        return vals, rels


EnumeratedTails = ConditionedTails
