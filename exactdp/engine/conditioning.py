"""Tails by conditioning on the coarse groups, quadrature for the rest.

Groups whose characteristic function never decays below the sieve level (few mechanisms
with small σ²) defeat the sieve: every node near a peak of the fine groups survives.
Enumerate them exactly instead: with C the coarse groups (atoms ``(v_c, p_c)`` of
``Σ_{g∈C} A_g X_g``) and F the rest, ``S_F = d·T_F`` with ``d = gcd(A_g : g ∈ F)``,

    P(S ≥ s) = Σ_c p_c · P(T_F ≥ ⌈(s − v_c)/d⌉),

a sum of non-negative terms; the tails of T_F come from a sub-engine on F's own (smaller)
lattice (:func:`fine_sublattice`), where the sieve prunes well.  The sub-engine is built
by the caller (:class:`exactdp.engine.tails.TailEngine`, without this method) and passed
in, so this module depends on no engine that chooses.

Error bound: the certified relative errors of the T_F tails carry over (the sum has
non-negative terms), plus the atoms' truncation, ≤ ``Σ_{g∈C} m_g·2e^{−690}`` absolute.
"""

from __future__ import annotations

import math
from functools import reduce

import numpy as np

from exactdp.engine.convolution import TRUNC, group_pmf, truncation_width
from exactdp.engine.lattice import LatticeSum
from exactdp.numerics.precision import EPS64

__all__ = ["coarse_atoms_count", "fine_sublattice", "ConditionedTails"]


def coarse_atoms_count(s2, m, coarse) -> int:
    """Number of atoms of the coarse part ``Σ_{g∈C} A_g X_g`` after truncation."""
    n = 1
    for g in coarse:
        n *= 2 * truncation_width(float(s2[g]), int(m[g])) + 1
    return n


def fine_sublattice(lattice: LatticeSum, A, m, coarse) -> tuple[int, LatticeSum]:
    """``(d, lattice of T_F)`` with ``S_F = d·T_F`` for the groups not in ``coarse``."""
    fine = [g for g in range(len(A)) if g not in tuple(coarse)]
    d = reduce(math.gcd, (int(A[g]) for g in fine))
    sub = LatticeSum(
        weights=tuple(int(A[g]) // d for g in fine),
        counts=tuple(int(m[g]) for g in fine),
        sigma2=tuple(lattice.sigma2[g] for g in fine),
        scale=lattice.scale / d,
        c=lattice.c,
        shift=0,
    )
    return d, sub


class ConditionedTails:
    """Certified tails of S with the groups ``coarse`` enumerated and the rest by a
    sub-engine on the fine lattice.

    Parameters
    ----------
    A, m, s2 : arrays
        Lattice weights, multiplicities and variances of all groups.
    coarse : sequence of int
        The groups to enumerate.
    d : int
        ``gcd`` of the fine weights (from :func:`fine_sublattice`).
    sub : object
        Tails of T_F: ``sub.tails(thresholds, strict=False)`` returning TailValues, with
        attributes ``vproxy``, ``nodes_kept``, ``n_nodes``.
    """

    def __init__(self, A, m, s2, coarse, d: int, sub):
        self.coarse = tuple(coarse)
        self.d = d
        self.sub = sub
        vals = np.zeros(1, dtype=np.int64)
        probs = np.ones(1)
        rel = 0.0
        for g in self.coarse:
            p, r = group_pmf(float(s2[g]), int(m[g]))
            rel += r + EPS64
            half = (p.shape[0] - 1) // 2
            xs = (np.arange(p.shape[0], dtype=np.int64) - half) * int(A[g])
            vals = (vals[:, None] + xs[None, :]).ravel()
            probs = (probs[:, None] * p[None, :]).ravel()
        keep = probs > 0
        self.values = vals[keep]
        self.probs = probs[keep]
        self.round_rel = rel + 8 * EPS64
        self.abs_trunc = float(sum(int(m[g]) for g in self.coarse)) * 2.0 * math.exp(-TRUNC)
        self.nodes_kept = self.sub.nodes_kept
        self.n_nodes = self.sub.n_nodes

    def tails(self, thresholds):
        """List of (log_value, rel_error) for each integer threshold."""
        th = np.asarray(thresholds, dtype=np.int64)
        ks = -((-(th[:, None] - self.values[None, :])) // self.d)  # ceil((s − v)/d)
        uniq = np.unique(ks)
        tv = self.sub.tails(uniq.tolist(), strict=False)
        # uncertified sub-tails contribute nothing to the estimate and their sub-Gaussian
        # upper bound exp(−k²/(2V')) (k > 0; 1 otherwise) to the error
        vp = self.sub.vproxy
        ok = np.array([math.isfinite(t.rel_error) and math.isfinite(t.log_value) for t in tv])
        logt = np.array([t.log_value if o else -math.inf for t, o in zip(tv, ok)])
        relt = np.array([t.rel_error if o else 0.0 for t, o in zip(tv, ok)])
        logb = np.array([-(max(int(k), 0) ** 2) / (2 * vp) for k in uniq])
        idx = np.searchsorted(uniq, ks)
        logp = np.log(self.probs)
        out = []
        for i in range(th.shape[0]):
            j = idx[i]
            terms = logp + logt[j]
            mx = float(np.max(terms))
            if not math.isfinite(mx):
                out.append((-math.inf, math.inf))
                continue
            w = np.exp(terms - mx)
            tot = math.fsum(w)
            err = math.fsum(w * relt[j])
            bad = ~ok[j]
            if bad.any():
                err += math.fsum(np.exp(logp[bad] + logb[j][bad] - mx))
            log_est = mx + math.log(tot)
            rel = err / tot + self.round_rel + 4 * EPS64 * len(w) + self.abs_trunc * math.exp(min(-log_est, 700.0))
            out.append((log_est, rel))
        return out
