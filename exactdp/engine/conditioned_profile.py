"""The privacy profile of any design: coarse atoms enumerated, the fine rest smoothed.

``δ(θ) = Σ_a P(A = a)·D_R(θ − a)`` (see :mod:`exactdp.engine.coarse_split`), with
``D_R`` from :class:`~exactdp.engine.fine_profile.FineProfile` (R = ∅: ``D_R(x) =
(1 − e^x)₊`` exactly).  For each θ the atoms are ranked by a certified upper bound of
their term (``p_a·min(1, e^{−(x)₊²/(2V)}/…)``, sub-Gaussian); the terms within
:data:`SKIP_NATS` of the largest bound are evaluated, the rest are bounded and added to
the upper end, as is the mass the enumeration left out.  If the skipped bound is not
negligible against the lower end, the cut is lowered (the answer never depends on it
beyond its bound).
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.engine.coarse_split import coarse_atoms, coarse_candidates
from exactdp.engine.families import family_of
from exactdp.engine.fine_profile import TARGET_WIDTH, FineProfile, TooCostly
from exactdp.engine.lattice_rest import MAX_SUPPORT, LatticeRest, lattice_support
from exactdp.numerics.precision import EPS64

__all__ = ["ConditionedProfile", "SKIP_NATS"]

#: terms whose bound is this many nats below the largest one are bounded, not evaluated
SKIP_NATS = 48.0
#: the skipped and omitted mass must stay below this fraction of the lower end
SKIP_REL = 1e-12
#: a one-family rest with more resonances than this in its frequency range is enumerated
MAX_RESONANCES = 64
#: theta evaluations per tilt the smoothed rest may cost (nodes × groups)
NODE_WORK = 4_000_000


def _log1m_exp(a):
    a = np.minimum(np.asarray(a, dtype=float), 0.0)
    with np.errstate(divide="ignore"):
        return np.where(a < -0.693, np.log1p(-np.exp(a)), np.log(-np.expm1(a)))


def _logsumexp(v):
    v = np.asarray(v, dtype=float)
    if v.size == 0:
        return -np.inf
    mx = float(np.max(v))
    if mx == -np.inf:
        return -np.inf
    return mx + math.log(float(np.sum(np.exp(v - mx))))


def _rest_engine(fine, v_rest: float):
    """The engine of the fine part, or None when it would cost too much: the atoms of its
    lattice when it is one family whose resonances would crowd the smoothed inversion's
    frequency range (more than :data:`MAX_RESONANCES` below the range a typical tilt
    needs) and whose support is small; else the smoothed inversion within its node
    budget (:data:`NODE_WORK` theta evaluations per tilt)."""
    unit = float(family_of(fine).unit)
    sd = math.sqrt(max(v_rest, 1e-300))
    lam = 10.0 / sd
    u_range = math.sqrt(2 * 60.0) * (lam + 1) / math.sqrt(TARGET_WIDTH)
    if u_range * unit / (2 * math.pi) > MAX_RESONANCES and lattice_support(fine) <= MAX_SUPPORT:
        return LatticeRest(fine)
    try:
        return FineProfile(fine, node_budget=max(2000, NODE_WORK // len(fine)))
    except TooCostly:
        return None


class ConditionedProfile:
    """Certified log brackets of ``δ(θ) = E(1 − e^{θ−W})₊`` for float θ enclosures.

    Parameters
    ----------
    groups : sequence of Group
        The privacy-loss noise W.
    """

    def __init__(self, groups):
        self.groups = tuple(groups)
        self.depth = 1000.0
        coarse: list = []
        fine = list(self.groups)
        order = coarse_candidates(self.groups, self.depth)
        while True:
            v_rest = float(sum(g.count * g.weight**2 * g.sigma2 for g in fine))
            rest = _rest_engine(fine, v_rest) if fine else None
            if rest is not None or not fine:
                break
            nxt = next((g for g in order if g in fine), None)
            if nxt is None:
                raise TooCostly("no split of the design into enumerated coarse groups and a smoothed rest fits "
                                "the work budget")
            coarse.append(nxt)
            fine.remove(nxt)
        self.coarse, self.fine = tuple(coarse), tuple(fine)
        self.atoms = coarse_atoms(self.coarse, self.depth)
        self.v_rest = v_rest
        self.rest = rest

    @property
    def method(self) -> str:
        if self.rest is None:
            return "enumeration"
        inner = "lattice-enumeration" if isinstance(self.rest, LatticeRest) else "smoothed-inversion"
        return inner if not self.coarse else "conditioned-" + inner

    @property
    def nodes_kept(self) -> int:
        return self.rest.nodes_kept if self.rest is not None else 0

    def _rest_brackets(self, x_dn, x_up) -> tuple:
        """(log lo, log hi) of D_R over [x_dn, x_up] (D_R is non-increasing)."""
        if self.rest is None:  # D_R(x) = (1 − e^x)₊ exactly; log1p/expm1 to a few ulps
            with np.errstate(divide="ignore"):
                lo = np.where(x_up < 0, _log1m_exp(x_up), -np.inf)
                hi = np.where(x_dn < 0, _log1m_exp(x_dn), -np.inf)
            lo = lo - 8 * EPS64 * (1 + np.abs(np.where(np.isfinite(lo), lo, 0.0)))
            hi = np.minimum(hi + 8 * EPS64 * (1 + np.abs(np.where(np.isfinite(hi), hi, 0.0))), 0.0)
            return lo, hi
        both = np.concatenate([x_up, x_dn])
        lo, hi = self.rest.log_brackets(both)
        n = x_up.size
        return lo[:n], hi[n:]

    def _term_bounds(self, x_dn) -> np.ndarray:
        """Cheap certified log upper bounds of D_R(x) (sub-Gaussian: log M_R(λ) ≤ λ²V/2)."""
        if self.rest is None:
            return np.where(x_dn < 0, 0.0, -np.inf)
        v = max(self.v_rest, 1e-300)
        lam = np.maximum(x_dn / v, 0.0)
        return np.minimum(0.0, 0.5 * lam * lam * v - lam * x_dn + 1e-9)

    def log_brackets(self, th_dn, th_up) -> tuple:
        """Certified ``(log lo, log hi)`` of δ(θ) for every θ in ``[th_dn, th_up]`` (floats)."""
        th_dn = np.asarray(th_dn, dtype=float)
        th_up = np.asarray(th_up, dtype=float)
        at = self.atoms
        out_lo = np.full(th_dn.size, -np.inf)
        out_hi = np.zeros(th_dn.size)
        for i in range(th_dn.size):
            x_dn = np.nextafter(th_dn[i] - at.value_up, -np.inf)
            x_up = np.nextafter(th_up[i] - at.value_dn, np.inf)
            bound = at.log_p + at.log_err + self._term_bounds(x_dn)
            top = float(np.max(bound)) if bound.size else -np.inf
            cut = top - SKIP_NATS
            done = np.zeros(at.size, dtype=bool)
            lo_terms = np.full(at.size, -np.inf)
            hi_terms = np.full(at.size, -np.inf)
            for _ in range(6):
                sel = np.flatnonzero(~done & (bound >= cut))
                if sel.size:
                    lo, hi = self._rest_brackets(x_dn[sel], x_up[sel])
                    lo_terms[sel] = at.log_p[sel] - at.log_err[sel] + lo
                    hi_terms[sel] = at.log_p[sel] + at.log_err[sel] + hi
                    done[sel] = True
                lo_sum = _logsumexp(lo_terms[done])
                rest = bound[~done]
                skipped = _logsumexp(rest) if rest.size else -np.inf
                extra = np.logaddexp(skipped, math.log(at.omitted) if at.omitted > 0 else -np.inf)
                if extra <= lo_sum + math.log(SKIP_REL) or not rest.size:
                    break
                cut -= SKIP_NATS
            hi_sum = np.logaddexp(_logsumexp(hi_terms[done]), extra)
            n_terms = max(1, int(done.sum()))
            slack = 4 * EPS64 * (n_terms + 4) + 8 * EPS64 * (abs(lo_sum) if np.isfinite(lo_sum) else 0.0)
            out_lo[i] = lo_sum - slack if np.isfinite(lo_sum) else -np.inf
            out_hi[i] = min(0.0, hi_sum + 4 * EPS64 * (n_terms + 4) + 8 * EPS64 * abs(hi_sum))
        return out_lo, out_hi
