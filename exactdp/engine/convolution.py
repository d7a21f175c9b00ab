"""Tails by direct lattice convolution, for coarse designs where the sieve prunes little.

Split the groups into C (enumerated) and F (dense).  With ``d = gcd(A_g : g ∈ F)`` the
fine part is ``S_F = d·T_F`` where T_F has a short dense pmf, computed exactly by
convolving non-negative arrays; the coarse part is a list of atoms ``(v_c, p_c)``.  Then

    P(S ≥ s) = Σ_c p_c · P(T_F ≥ ⌈(s − v_c)/d⌉)

is a sum of non-negative terms (no cancellation).

Error bound: every single discrete Gaussian is truncated to ``|x| ≤ w`` with
``w = ⌈sqrt(2 s² · TRUNC)⌉``; its dropped mass is ≤ ``2 e^{−TRUNC}`` (sub-Gaussian tail of
N_Z(0, s²), Canonne–Kamath–Steinke 2020), so every tail of S is off by at most
``Σ_g m_g · 2e^{−TRUNC}`` in absolute terms (TRUNC = 690: 2e-300 per mechanism);
rounding adds a relative ``4u·(#terms)``.  Tails so small that this absolute bound is
not below ``rel_tol`` relative are left to the quadrature.
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from functools import reduce

import numpy as np

from exactdp.kernels.convolution import atom_residues, atom_tails, convolve_strided, dg_pmf, suffix_sums
from exactdp.kernels.dgauss import log_theta_real
from exactdp.numerics.precision import EPS64

__all__ = ["TRUNC", "truncation_width", "group_pmf", "ConvolutionPlan", "plan_split", "ConvolutionTails"]

TRUNC = 690.0
MAX_ATOMS = 300_000
MAX_DENSE = 3_000_000
MAX_SETUP = 4e8


def truncation_width(s2: float, m: int = 1) -> int:
    """Half-width of the support kept for a sum of m iid N_Z(0, s2): the dropped mass of
    each factor is ≤ 2e^{−TRUNC}."""
    return int(math.ceil(math.sqrt(2.0 * s2 * m * TRUNC))) + 1


@dataclass(frozen=True)
class ConvolutionPlan:
    coarse: tuple  # group indices enumerated as atoms
    fine: tuple  # group indices convolved densely
    n_atoms: int


def plan_split(A, m, s2, order) -> ConvolutionPlan | None:
    """Best feasible split taking the first k groups of ``order`` as coarse (k ≥ 1)."""
    best = None
    G = len(A)
    for k in range(1, G):
        coarse = tuple(order[:k])
        fine = tuple(order[k:])
        atoms = 1
        for g in coarse:
            atoms *= 2 * truncation_width(s2[g], m[g]) + 1
            if atoms > MAX_ATOMS:
                break
        if atoms > MAX_ATOMS:
            break
        d = reduce(math.gcd, (int(A[g]) for g in fine))
        dense = 1 + sum((int(A[g]) // d) * 2 * truncation_width(s2[g], m[g]) for g in fine)
        if dense > MAX_DENSE:
            continue
        setup = sum(dense * (2 * truncation_width(s2[g], m[g]) + 1) for g in fine)
        setup += sum(m[g] * (2 * truncation_width(s2[g], m[g]) + 1) * (2 * truncation_width(s2[g]) + 1)
                     for g in range(G))
        if setup > MAX_SETUP:
            continue
        plan = ConvolutionPlan(coarse, fine, atoms)
        if best is None or atoms < best.n_atoms:
            best = plan
    return best


#: pmfs of :func:`group_pmf` kept for the next lattices with the same group (LRU), at
#: most this many bytes in all
PMF_BYTES = 64 * 2**20
_PMFS: OrderedDict = OrderedDict()
_PMFS_LOCK = threading.Lock()


def group_pmf(s2: float, m: int):
    """pmf of the sum of m iid N_Z(0, s2) on −m·w..m·w (truncated single factors), and a
    bound on the relative rounding error of each entry.  A pure function of (s2, m): the
    last ones (:data:`PMF_BYTES` in all) are kept, as the lattices of one pair and of the
    pairs a sweep worker computes share groups, and handed out as copies."""
    key = (float(s2), int(m))
    with _PMFS_LOCK:
        hit = _PMFS.get(key)
        if hit is not None:
            _PMFS.move_to_end(key)
            return hit[0].copy(), hit[1]
    w = truncation_width(s2)
    base = dg_pmf(s2, w, log_theta_real(0.0, s2))
    # each entry: exp of an argument ≤ TRUNC+|log_norm| in size → rel. error ≤ 4u(TRUNC+10)
    rel = 4 * EPS64 * (TRUNC + 10 + abs(math.log(2 * math.pi * s2)))
    one = rel
    out = base
    for _ in range(m - 1):
        out = convolve_strided(out, base, 1)
        rel += one + (base.shape[0] + 1) * EPS64
    if out.nbytes <= PMF_BYTES:
        with _PMFS_LOCK:
            _PMFS[key] = (out.copy(), rel)
            while sum(v[0].nbytes for v in _PMFS.values()) > PMF_BYTES:
                _PMFS.popitem(last=False)
    return out, rel


class ConvolutionTails:
    """Certified tails of ``S = Σ_g A_g Σ_k X_{g,k}`` by the split convolution."""

    def __init__(self, A, m, s2, plan: ConvolutionPlan):
        self.plan = plan
        pmfs = {}
        rel = 0.0
        for g in range(len(A)):
            pmfs[g], r = group_pmf(float(s2[g]), int(m[g]))
            rel += r
        d = reduce(math.gcd, (int(A[g]) for g in plan.fine))
        dense = np.ones(1)
        lo = 0
        for g in plan.fine:
            p = pmfs[g]
            half = (p.shape[0] - 1) // 2
            stride = int(A[g]) // d
            dense = convolve_strided(dense, p, stride)
            rel += (p.shape[0] + 1) * EPS64
            lo -= stride * half
        self.d = d
        self.lo = lo
        self.suffix = suffix_sums(dense)
        # atoms of the coarse part
        vals = np.zeros(1, dtype=np.int64)
        probs = np.ones(1)
        for g in plan.coarse:
            p = pmfs[g]
            half = (p.shape[0] - 1) // 2
            xs = (np.arange(p.shape[0], dtype=np.int64) - half) * int(A[g])
            vals = (vals[:, None] + xs[None, :]).ravel()
            probs = (probs[:, None] * p[None, :]).ravel()
            rel += EPS64
        keep = probs > 0
        self.values = np.ascontiguousarray(vals[keep])
        self.probs = np.ascontiguousarray(probs[keep])
        self.atom_q, self.atom_r = atom_residues(self.values, d)
        self.abs_trunc = float(sum(int(m[g]) for g in range(len(A)))) * 2.0 * math.exp(-TRUNC)
        # products/sums above plus the two compensated summations (suffix, atoms)
        self.round_rel = rel + 8 * EPS64

    def tails(self, thresholds):
        """List of (log_value, rel_error) for each integer threshold."""
        th = np.asarray(thresholds, dtype=np.int64)
        vals = atom_tails(self.suffix, self.atom_q, self.atom_r, self.probs, self.lo, self.d, th)
        out = []
        for v in vals:
            if v <= 0:
                out.append((-math.inf, math.inf))
                continue
            rel = self.abs_trunc / v + self.round_rel
            out.append((math.log(v), rel))
        return out
