"""β = f(α) of a finite loss beside randomized response by noise parameter: the Neyman–Pearson
test on the joint atoms, exactly at the split atom (no dual, no stencils around the kinks).

Without a continuous part (no Gaussian oracle, no continuous Gaussian or Laplace) the loss of a
:class:`~exactdp.kinds.Mixture` with :class:`~exactdp.kinds.RandomizedResponseNoise` groups has
finitely many atoms ``ℓ = v_k + log r_b``: ``v_k`` the finite part's grid atoms (P-mass ``m_k``,
discrete Gaussians as windows), ``r_b = Π_g R_g^{b_g}`` for the net counts b (P-mass ``P[b]``,
exact), each of P-mass ``m_k P[b]`` and Q-mass ``e^{−ℓ}·m_k P[b]``.  Two atoms have the same loss
only if they have the same ``(k, r_b)`` (``log`` of a rational ≠ 1 is irrational), so atoms are
merged by that key and every other comparison with the split atom τ is decided on balls.

For every τ, weak duality gives ``β ≥ Σ_i min(q_i, e^{−τ} p_i) − e^{−τ}α`` (for any test φ with
``E_P φ ≤ α`` and λ ≥ 0, ``β_φ ≥ β_φ + λ(E_P φ − α) ≥ Σ min(q_i, λ p_i) − λα``), that is

    β ≥ Q[L > τ] + e^{−τ}(P[L ≤ τ] − α),

with equality on the kept atoms where ``P[L < τ] ≤ α ≤ P[L ≤ τ]`` (Neyman–Pearson).  The windows
leave out a P-mass D (and, symmetrically, a Q-mass D): the test rejecting every left-out atom
(P-cost ≤ D), every kept atom below τ and a share of τ's atom, at level α in all, is feasible
where ``P[L < τ] ≤ α − D``, so ``β ≤ Q[L > τ] + e^{−τ}(P[L ≤ τ] − α + D)``: a relative width
``D/(P[L ≤ τ] − α)``, not ``D/β`` — a β of 1e-43000 beside windows of deficit e^{−760} is answered
(the dual's G at β's scale has no such room).  Balls (:mod:`flint`) at rising precision; the
ordering by floats only proposes τ.  Reference: Neyman & Pearson (1933); Dong, Roth & Su (2022),
Prop. 2.2 and 2.12.
"""

from __future__ import annotations

import bisect
import math
from fractions import Fraction

import flint
import mpmath
import numpy

from exactdp.accounting.finite_tradeoff import BETA_WIDTH
from exactdp.accounting.mixed_balls import to_mpf
from exactdp.engine.finite_loss import prec_ctx

__all__ = ["applies", "beta_rr_atoms", "MAX_JOINT_ATOMS"]

#: the most joint atoms (finite part's atoms × net counts) enumerated
MAX_JOINT_ATOMS = 400_000
_PRECS = (128, 256, 512, 1024)


def _fq(x: Fraction) -> flint.arb:
    return flint.arb(flint.fmpq(x.numerator, x.denominator))


def applies(acc) -> bool:
    """Whether the joint atoms are finite (randomized responses by noise beside a finite rest only)."""
    return acc.rr is not None and acc.gauss is None and not acc._curved


def beta_rr_atoms(acc, alpha: Fraction) -> tuple | None:
    """``(lower, upper)`` (mpmath) of β(α), 0 < α < 1, within :data:`BETA_WIDTH` relative, or None
    (not applicable, too many atoms, or τ not certified at 1024 bits: the dual answers then)."""
    if not applies(acc):
        return None
    fin, rr = acc.finite, acc.rr
    if len(fin.atoms(128)[0]) * len(rr.terms) > MAX_JOINT_ATOMS:
        return None
    # the net counts merged by r_b (dependent ratios give equal losses), with their P-mass
    by_r: dict = {}
    for bs, q in rr.terms:
        r = math.prod((Fraction(R) ** b for R, b in zip(rr.ratios, bs)), start=Fraction(1))
        by_r[r] = by_r.get(r, flint.fmpq(0)) + q
    rs = sorted(by_r)
    for p in _PRECS:
        got = _at(acc, alpha, p, rs, by_r)
        if got is not None:
            return got
    return None


def _at(acc, alpha, p, rs, by_r):
    fin = acc.finite
    idx, masses = fin.atoms(p)  # (the atoms of positive mass at this precision, with their balls)
    if not idx or len(idx) * len(rs) > MAX_JOINT_ATOMS:
        return None
    logs_f = [math.log(r.numerator) - math.log(r.denominator) for r in rs]
    off, st = flint.fmpq(fin.offset.numerator, fin.offset.denominator), flint.fmpq(fin.step.numerator,
                                                                                    fin.step.denominator)
    vals_q = [off + st * k for k in idx]
    vals_f = [float(v) for v in vals_q]
    # the candidate split atom from the floats (an order and prefix sums that only propose τ)
    loss = (numpy.array(vals_f)[:, None] + numpy.array(logs_f)[None, :]).ravel()
    mass = (numpy.array([float(m.mid()) for m in masses])[:, None] *
            numpy.array([float(by_r[r]) for r in rs])[None, :]).ravel()
    order = numpy.argsort(loss, kind="stable")
    if alpha <= Fraction(1, 2):
        pos = min(int(numpy.searchsorted(numpy.cumsum(mass[order]), float(alpha))), len(order) - 1)
    else:  # (near α = 1 from the top: the first atom whose upper tail P[L > ℓ] is at most 1 − α)
        top = int(numpy.searchsorted(numpy.cumsum(mass[order][::-1]), float(1 - alpha), side="right"))
        pos = max(len(order) - 1 - top, 0)
    with prec_ctx(p):
        a = _fq(alpha)
        d = fin.deficit(p)
        tabs = _Tables(rs, by_r, vals_q, vals_f, logs_f, masses)
        for n in sorted(range(max(0, pos - 3), min(len(order), pos + 4)), key=lambda n: abs(n - pos)):
            got = tabs.piece(*divmod(int(order[n]), len(rs)), a, d)
            if got is not None and got[0] > 0 and got[1] - got[0] <= BETA_WIDTH / 2 * got[0]:
                return got
        return None


class _Tables:
    """The joint atoms at the context's precision: rest atom i (loss ``v_i``, P-mass ``m_i``) and
    net counts j (``r_j`` increasing, P-mass ``P_j``); for each i the atoms below τ are those with
    ``j < c_i`` (``log r_j`` increases with j), so only two comparisons with τ are decided per i,
    and the sums are ``m_i Σ_{j<c} P_j`` and ``m_i e^{−v_i} Σ_{j≥c} P_j/r_j`` (exact rationals)."""

    def __init__(self, rs, by_r, vals_q, vals_f, logs_f, masses):
        self.vals = [flint.arb(v) for v in vals_q]
        self.vals_f, self.logs_f, self.masses = vals_f, logs_f, masses
        self.logs = [_fq(r).log() for r in rs]
        n = len(rs)
        pre, acc = [flint.fmpq(0)], flint.fmpq(0)
        for r in rs:
            acc += by_r[r]
            pre.append(acc)
        suf, acc = [flint.fmpq(0)], flint.fmpq(0)
        for r in reversed(rs):
            acc += by_r[r] / flint.fmpq(r.numerator, r.denominator)
            suf.append(acc)
        self.pre = [flint.arb(x) for x in pre]  # Σ_{j<c} P_j
        self.suf = [flint.arb(x) for x in suf[::-1]]  # Σ_{j≥c} P_j/r_j
        self.n = n

    def _side(self, i, j, ti, tj) -> int:
        """The sign of ``ℓ_ij − τ`` (0: undecided at this precision)."""
        dv = self.vals[i] - self.vals[ti]
        diff = dv + (self.logs[j] - self.logs[tj]) if j != tj else dv
        return -1 if diff.upper() < 0 else 1 if diff.lower() > 0 else 0

    def piece(self, ti, tj, a, d):
        """The bracket from the split atom ``(ti, tj)``, or None where an atom's side of τ or the
        piece's α-range (``P[L < τ] ≤ α − D``, ``α ≤ P[L ≤ τ]``) is not certified."""
        vals, masses, n = self.vals, self.masses, self.n
        tau = vals[ti] + self.logs[tj]
        tau_f = self.vals_f[ti] + self.logs_f[tj]
        below, above_q = flint.arb(0), flint.arb(0)
        at = masses[ti] * (self.pre[tj + 1] - self.pre[tj])
        for i, m in enumerate(masses):
            if m.is_zero():
                continue
            if i == ti:
                below += m * self.pre[tj]
                above_q += m * (-vals[i]).exp() * self.suf[tj + 1]
                continue
            c = bisect.bisect_left(self.logs_f, tau_f - self.vals_f[i])
            for _ in range(4):  # (the floats' cut, moved until both neighbours are decided)
                lo_s = self._side(i, c - 1, ti, tj) if c > 0 else -1
                hi_s = self._side(i, c, ti, tj) if c < n else 1
                if lo_s == 0 or hi_s == 0:
                    return None
                if lo_s > 0:
                    c -= 1
                elif hi_s < 0:
                    c += 1
                else:
                    break
            else:
                return None
            below += m * self.pre[c]
            if c < n:
                above_q += m * (-vals[i]).exp() * self.suf[c]
        if not ((below + d).upper() <= a.lower() and a.upper() <= (below + at).lower()):
            return None
        e_tau = (-tau).exp()
        low = above_q + e_tau * (below + at - a)
        high = low + e_tau * d
        return max(to_mpf(low, False), mpmath.mpf(0)), to_mpf(high, True)
