"""``D_R`` and its complement by direct summation over R's atoms, for a rest of small support.

When the rest R of a design has few atoms down to a deep level (a few groups of small σ²:
each ``N_Z(0, σ²)`` has ``2⌈√(2σ²·depth)⌉ + 3`` atoms to e^{−depth}), neither the smoothed
inversion (its characteristic function revives every 2π/w) nor a per-threshold lattice
query is the cheap way: the atoms themselves are (:func:`exactdp.engine.coarse_split.
coarse_atoms`, each probability a certified lower bound ``p̃_a`` within its log error, the
mass left out ``ω`` bounded).  With values enclosed in ``[v_a⁻, v_a⁺]``:

    D_R(x) = Σ_a P(R = a)(1 − e^{x−v_a})₊ ∈ [Σ p̃_a⁻ (1 − e^{x−v_a⁻})₊,  Σ p̃_a⁺ (1 − e^{x−v_a⁺})₊ + ω],
    C_R(x) = 1 − D_R(x) = Σ_a P(R = a) min(1, e^{x−v_a})
           ∈ [Σ p̃_a⁻ min(1, e^{x−v_a⁺}),  Σ p̃_a⁺ min(1, e^{x−v_a⁻}) + ω],

with ``p̃⁻ = e^{log p̃ − err}``, ``p̃⁺ = e^{log p̃ + err}`` (the deficit of the lower bounds is
inside ω).  Every sum has positive terms only and is taken in log space (max-shifted), its
float rounding bounded by ``8u(n + |log|)``.
"""

from __future__ import annotations

import math

import numpy as np

from exactdp.engine.coarse_split import coarse_atoms, joint_atom_count
from exactdp.numerics.precision import EPS64

__all__ = ["EnumeratedRest", "REST_DEPTH", "REST_ATOMS"]

#: the rest's atoms are enumerated to e^{−REST_DEPTH} (deeper than any query the
#: conditioned profile answers: its own coarse enumeration stops at 3000 nats)
REST_DEPTH = 3200.0
#: the first, shallow enumeration (nats): enough wherever D_R or C_R is above e^{−220}
SHALLOW_DEPTH = 250.0
#: the shallow omitted mass must be below this fraction of the lower end, else the deep atoms
SHALLOW_REL = 1e-13
#: a rest is enumerated when it has at most this many joint atoms at REST_DEPTH
REST_ATOMS = 4096
#: x values per chunk of the (x, atom) matrix
_CHUNK = 1 << 20


def rest_atom_count(groups) -> int:
    """The joint atoms of ``groups`` at :data:`REST_DEPTH` (an upper bound)."""
    return joint_atom_count(groups, REST_DEPTH)


def _log_sum(logs: np.ndarray) -> tuple:
    """Row-wise ``log Σ exp`` of a matrix with −inf entries, and its absolute error bound."""
    mx = np.max(logs, axis=1)
    safe = np.where(np.isfinite(mx), mx, 0.0)
    with np.errstate(divide="ignore"):
        s = np.log(np.sum(np.exp(logs - safe[:, None]), axis=1)) + safe
    n = logs.shape[1]
    err = 8 * EPS64 * (n + np.abs(np.where(np.isfinite(s), s, 0.0)) + 1)
    return np.where(np.isfinite(mx), s, -np.inf), err


class _AtomSums:
    """The sums of the module docstring over one enumeration of R's atoms."""

    def __init__(self, at):
        self.v_dn, self.v_up = at.value_dn, at.value_up
        self.lp_lo, self.lp_hi = at.log_p - at.log_err, at.log_p + at.log_err
        self.log_omitted = math.log(at.omitted) if at.omitted > 0 else -math.inf

    @property
    def size(self) -> int:
        return int(self.v_dn.size)

    def sums(self, x: np.ndarray, complement: bool) -> tuple:
        lo = np.empty(x.size)
        hi = np.empty(x.size)
        step = max(1, _CHUNK // max(self.size, 1))
        for k in range(0, x.size, step):
            xs = x[k:k + step, None]
            # x − v shifted outward by its rounding: up for the lower sums, down for the upper
            d_lo = xs - self.v_dn + 2 * EPS64 * (np.abs(xs) + np.abs(self.v_dn))
            d_hi = xs - self.v_up - 2 * EPS64 * (np.abs(xs) + np.abs(self.v_up))
            if complement:  # min(1, e^{x−v}): in log, min(0, x − v); lower at v⁺, upper at v⁻
                t_lo = self.lp_lo + np.minimum(0.0, d_hi)
                t_hi = self.lp_hi + np.minimum(0.0, d_lo)
            else:  # (1 − e^{x−v})₊: log(−expm1(x − v)) where v > x; lower at v⁻, upper at v⁺
                with np.errstate(divide="ignore"):
                    t_lo = np.where(d_lo < 0, self.lp_lo + np.log(-np.expm1(np.where(d_lo < 0, d_lo, -1.0))), -np.inf)
                    t_hi = np.where(d_hi < 0, self.lp_hi + np.log(-np.expm1(np.where(d_hi < 0, d_hi, -1.0))), -np.inf)
            s_lo, e_lo = _log_sum(t_lo)
            s_hi, e_hi = _log_sum(t_hi)
            # each term's log (one expm1, one log, one add) is within 4u(|term| + 1); weighted
            # by the terms, within 4u(|sum| + 1 + n) of the sum's log (n in _log_sum's bound)
            lo[k:k + step] = s_lo - e_lo - 4 * EPS64 * (np.abs(np.where(np.isfinite(s_lo), s_lo, 0.0)) + 1)
            hi_core = s_hi + e_hi + 4 * EPS64 * (np.abs(np.where(np.isfinite(s_hi), s_hi, 0.0)) + 1)
            hi[k:k + step] = np.minimum(np.logaddexp(hi_core, self.log_omitted), 0.0)
        return lo, hi



class EnumeratedRest:
    """Certified log brackets of ``D_R`` and ``C_R = 1 − D_R`` by summation over R's atoms.

    Parameters
    ----------
    groups : sequence of Group
        The rest; :func:`rest_atom_count` should be at most :data:`REST_ATOMS`.

    Notes
    -----
    Method and error bound in the module docstring; the atoms and their certified
    probabilities come from :func:`exactdp.engine.coarse_split.coarse_atoms` (log-domain
    convolution of truncated discrete Gaussian pmfs, truncation mass by the
    sub-Gaussian bound of Canonne, Kamath & Steinke 2020).
    """

    nodes_kept = 0

    def __init__(self, groups):
        self.groups = tuple(groups)
        self._levels = [_AtomSums(coarse_atoms(self.groups, depth)) for depth in (SHALLOW_DEPTH, REST_DEPTH)]
        self._vproxy = float(sum(g.count * g.weight**2 * g.sigma2 for g in self.groups))

    @property
    def size(self) -> int:
        return self._levels[-1].size

    def log_mgf(self, lam: float) -> tuple:
        """(log M_R(λ) from above, 0): the sub-Gaussian bound ``λ²V/2`` (CKS)."""
        return 0.5 * lam * lam * self._vproxy * (1 + 1e-12), 0.0

    def _sums(self, x: np.ndarray, complement: bool) -> tuple:
        """The shallow atoms' brackets; the deep atoms' where the shallow enumeration's
        omitted mass is not below :data:`SHALLOW_REL` of the lower end."""
        shallow, deep = self._levels
        lo, hi = shallow.sums(x, complement)
        redo = np.flatnonzero(~(shallow.log_omitted <= lo + math.log(SHALLOW_REL)))
        if redo.size:
            lo[redo], hi[redo] = deep.sums(x[redo], complement)
        return lo, hi

    def log_brackets(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``D_R`` at each float x."""
        return self._sums(np.asarray(x, dtype=float), complement=False)

    def log_complement(self, x) -> tuple:
        """Certified ``(log lo, log hi)`` of ``C_R = 1 − D_R`` at each float x."""
        return self._sums(np.asarray(x, dtype=float), complement=True)
