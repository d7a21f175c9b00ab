"""Exact tails of a few-family design: enumerate all families but one, tilt-free.

With families f (unit a_f, integer lattice sums S_f; :mod:`exactdp.engine.families`)
and one *base* family b,

    P(W > t) = Σ_c p_c · P(S_b ≥ ⌊(t − c)/a_b⌋ + 1),   P(W ≥ t) = Σ_c p_c · P(S_b ≥ ⌈(t − c)/a_b⌉),

over the atoms ``c = Σ_{f≠b} a_f s_f`` of the other families (probabilities ``p_c``, the
product of the families' exact lattice pmfs): a sum of non-negative terms, exact up to
rounding and truncation.  Every threshold ``(t − c)/a_b`` is rounded exactly: integer
and fractional parts of ``(a_f/a_b)·s_f`` are exact integer divisions; a fractional sum
within 1e-9 of an integer is settled in rational (or 60-digit) arithmetic.  The tails
of S_b come from its dense pmf (suffix sums) or, when its support is too long, from the
exact lattice engine :class:`exactdp.engine.tails.TailEngine` on b's own lattice.

Error bound: each single discrete Gaussian is truncated at ``|x| ≤ sqrt(2σ²·690)`` (mass
≤ 2e^{−690} each, Canonne–Kamath–Steinke sub-Gaussian tail), an absolute
``Σ m_g·2e^{−690}``; entries of pmfs carry a relative rounding error from their
operation count, the base tails their certified bounds; the sums are compensated.
"""

from __future__ import annotations

import math
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.engine.families import families_of, family_lattice
from exactdp.engine.tails import TailEngine
from exactdp.kernels.convolution import dg_pmf, suffix_sums
from exactdp.kernels.dgauss import log_theta_real
from exactdp.numerics.precision import EPS64

__all__ = ["SplitTails", "TooManyAtoms", "split_cost"]

TRUNC = 690.0
#: largest number of enumerated atoms, and longest dense pmf of the base family
MAX_ATOMS = 3_000_000
MAX_DENSE = 4_000_000
MAX_FAMILY_PMF = 200_000


class TooManyAtoms(ArithmeticError):
    """The enumerated part of the design would have too many atoms."""


def _width(s2: float) -> int:
    return int(math.ceil(math.sqrt(2.0 * s2 * TRUNC))) + 1


def _family_len(fam) -> int:
    return 1 + sum(n * 2 * _width(float(g.sigma2)) * g.count for g, n in zip(fam.groups, fam.multipliers))


def split_cost(groups):
    """(families, base index, cost) of the cheapest split, or None if none fits.

    Decompositions tried: the largest feasible families, families with multipliers
    ≤ 2^20, and one family per group; cost = enumerated atoms, ×200 when the base
    family's tails need the lattice engine instead of a dense pmf."""
    best = None
    widest = families_of(groups)
    lens = sorted(_family_len(f) for f in widest)
    if any(x > MAX_FAMILY_PMF for x in lens[:-1]) or math.prod(lens[:-1]) > MAX_ATOMS:
        return None  # finer decompositions only enumerate more
    for fams in (widest, families_of(groups, 2**20), families_of(groups, 1)):
        lens = [_family_len(f) for f in fams]
        for b in range(len(fams)):
            others = [lens[i] for i in range(len(fams)) if i != b]
            if any(x > MAX_FAMILY_PMF for x in others):
                continue
            atoms = math.prod(others) if others else 1
            if atoms > MAX_ATOMS:
                continue
            cost = atoms * (1 if lens[b] <= MAX_DENSE else 200)
            if best is None or cost < best[2]:
                best = (fams, b, cost)
    return best


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
        spread = np.zeros((p.size - 1) * n + 1)
        spread[::n] = p
        dense = np.convolve(dense, spread)
        lo -= n * half
        rel += r + (min(dense.size, p.size) + 1) * EPS64
    return dense, lo, rel


class SplitTails:
    """Exact certified ``P(W > t)`` / ``P(W ≥ t)`` of a design with few families.

    Parameters
    ----------
    groups : sequence of Group
    rel_tol : float
        Certified relative accuracy required of the base engine's tails.

    Raises
    ------
    TooManyAtoms
        When no split has at most :data:`MAX_ATOMS` enumerated atoms.
    """

    def __init__(self, groups, rel_tol: float = 1e-11):
        plan = split_cost(groups)
        if plan is None:
            raise TooManyAtoms("every split of the design enumerates too many atoms")
        fams, b, _ = plan
        self.families, self.base = fams, fams[b]
        self.rel_tol = rel_tol
        self.abs_trunc = 2.0 * math.exp(-TRUNC) * sum(g.count for g in groups)
        # atoms of the enumerated families: integer and fractional parts of (a_f/a_b)·s_f
        ints = np.zeros(1, dtype=np.int64)
        fracs = np.zeros(1)
        probs = np.ones(1)
        self.exact_parts = []  # (ratio, support lo) for the exact fallback
        rel = 0.0
        for i, f in enumerate(fams):
            if i == b:
                continue
            pmf, lo, r = _family_pmf(f)
            rel += r + EPS64
            ratio = f.unit / self.base.unit
            P, Q = ratio.numerator, ratio.denominator
            vals = [divmod(P * (lo + k), Q) for k in range(pmf.size)]
            ii = np.array([q for q, _ in vals], dtype=np.int64)
            ff = np.array([rr / Q for _, rr in vals])
            ints = (ints[:, None] + ii[None, :]).ravel()
            fracs = (fracs[:, None] + ff[None, :]).ravel()
            probs = (probs[:, None] * pmf[None, :]).ravel()
            self.exact_parts.append((ratio, lo, pmf.size))
        keep = probs > 0
        self.ints, self.fracs, self.probs = ints[keep], fracs[keep], probs[keep]
        self.index = np.flatnonzero(keep)
        self.atom_rel = rel + 8 * EPS64 * len(self.exact_parts)
        # the base family: dense suffix sums, or the lattice engine
        self.engine = None
        if _family_len(self.base) <= MAX_DENSE:
            pmf, self.base_lo, r = _family_pmf(self.base)
            self.suffix = suffix_sums(pmf)
            self.base_rel = r + 6 * EPS64
        else:
            self.engine = TailEngine(family_lattice(self.base, Fraction(0)), rel_tol=rel_tol)
        self.method = "split-enumeration" if self.engine is None else "split-quadrature"

    @property
    def n_atoms(self) -> int:
        return int(self.probs.size)

    def _atom_value(self, i: int) -> Fraction:
        """Exact Σ_f (a_f/a_b)·s_f of atom i (for the rounding fallback)."""
        k = int(self.index[i])
        tot = Fraction(0)
        for ratio, lo, size in reversed(self.exact_parts):
            k, r = divmod(k, size)
            tot += ratio * (lo + r)
        return tot

    def _thresholds(self, t, strict: bool) -> np.ndarray:
        """Integer k_c with ``{a_b S_b (>|≥) t − c} = {S_b ≥ k_c}`` for every atom c."""
        if isinstance(t, Fraction):
            y = t / self.base.unit
            it = math.floor(y)
            ft = float(y - it)
        else:
            with mpmath.workdps(60):
                y = mpmath.mpf(t) / (mpmath.mpf(self.base.unit.numerator) / self.base.unit.denominator)
                it = int(mpmath.floor(y))
                ft = float(y - it)
        frac = ft - self.fracs
        fl = np.floor(frac)
        base = it - self.ints + fl.astype(np.int64)
        k = base + 1 if strict else base + (frac - fl > 0)
        near = np.flatnonzero((np.abs(frac - np.round(frac)) < 1e-9))
        for i in near:
            if isinstance(t, Fraction):
                yy = t / self.base.unit - self._atom_value(i)
                k[i] = math.floor(yy) + 1 if strict else math.ceil(yy)
            else:
                with mpmath.workdps(80):
                    c = self._atom_value(i)
                    yy = mpmath.mpf(t) / (mpmath.mpf(self.base.unit.numerator) / self.base.unit.denominator) \
                        - mpmath.mpf(c.numerator) / c.denominator
                    f = mpmath.floor(yy)
                    if min(yy - f, f + 1 - yy) < mpmath.mpf(10) ** -60:
                        raise ArithmeticError("an irrational threshold within 1e-60 of an atom")
                    k[i] = int(f) + 1
        return k

    def tails(self, ts, strict: bool = True) -> list:
        """``(value, rel_error)`` (floats) of ``P(W > t)`` (strict) or ``P(W ≥ t)``."""
        out = []
        for t in ts:
            ks = self._thresholds(t, strict)
            if self.engine is None:
                idx = ks - self.base_lo
                n = self.suffix.size - 1
                tv = np.where(idx <= 0, self.suffix[0], self.suffix[np.clip(idx, 0, n)])
                tv = np.where(idx >= n, 0.0, tv)
                rel_t = np.full(tv.size, self.base_rel)
            else:
                uniq, inv = np.unique(ks, return_inverse=True)
                vals = self.engine.tails([int(x) for x in uniq], strict=False)
                tv = np.array([math.exp(v.log_value) if math.isfinite(v.rel_error) else 0.0 for v in vals])[inv]
                bad = np.array([not math.isfinite(v.rel_error) for v in vals])[inv]
                rel_t = np.array([v.rel_error if math.isfinite(v.rel_error) else 0.0 for v in vals])[inv]
                # an uncertified base tail contributes its trivial bound 1 to the error
                rel_t = rel_t + 0.0
                extra = float(np.sum(self.probs[bad]))
            terms = self.probs * tv
            tot = math.fsum(terms)
            err = math.fsum(terms * rel_t) + tot * (self.atom_rel + 4 * EPS64) + self.abs_trunc
            if self.engine is not None:
                err += extra
            out.append((tot, err / tot if tot > 0 else math.inf))
        return out
