"""The ℓ-level uniqueness attack (Kazan and Reiter, supplement §S1.3), exact.

The adversary knows every variable of the target except one value ``c_e`` and knows
that the target's other characteristics ``c_-e`` are unique at the ``ℓ`` lowest levels.
The count of ``(c_-e, c_e)`` at each of those levels is then the same indicator
``X ∈ {0, 1}``, released as ``X_i* = X + E_i`` with independent ``E_i`` of coefficient
``a_i``.  The posterior is::

    P[X = 1 | x_1*, …, x_ℓ*] = σ(log(p/(1-p)) + Σ_i a_i (2 x_i* - 1)),  σ(t) = 1/(1+e^-t).

Given ``X = 1``, ``Σ_i a_i(2x_i* - 1) = A + 2U`` with ``A = Σ a_i`` and ``U = Σ a_i E_i``.

* ``E[posterior | X = 1]`` (and the risk = that / p) is computed with a *moment grid*:
  the law of ``U`` is carried on a grid of step δ together with the first three moments
  of the rounding offset in every cell, which is closed under adding an independent
  level.  A third-order Taylor expansion of ``φ(u) = σ(c + 2u)`` at the grid points is
  exact up to ``sup|φ''''|/4!·(ℓδ/2)⁴ = 16·0.1277/24·(ℓδ/2)⁴`` (``sup|σ''''| < 0.1277``).
* ``P[correct decision | X = 1] = P[U > τ]`` is summed exactly by meet-in-the-middle
  (enumerate two halves of the levels, sort one, binary search); pairs within 1e-9 of
  the threshold are re-decided exactly (rational arithmetic when p = 1/2, otherwise
  mpmath: ``log((1-p)/p)`` is transcendental for rational ``p ≠ 1/2``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import mpmath
import numpy as np

from exactdp.dgauss.conventions import check_convention, coefficient
from exactdp.dgauss.tables import dg_table
from exactdp.numerics.bracket import CentredBracket
from exactdp.numerics.exact import InputError
from exactdp.numerics.precision import DPS_ANALYSIS, DPS_LOW, DPS_RESULT, EPS64, to_mpf
from exactdp.risk._validate import check_prior, check_rho
from exactdp.risk.single import log_prior_odds

__all__ = ["UniquenessResult", "uniqueness_posterior", "uniqueness_attack", "uniqueness_curve", "SIGMA4_SUP"]

#: Upper bound on sup_t |σ''''(t)| (the maximum of |s(1-s)(1-2s)(1-12s+12s²)| on [0, 1]
#: is 0.12768…).
SIGMA4_SUP = 0.1277

_PRUNE = 1e-30  # product weights below this are dropped (counted in left_out)


def _levels(rhos, convention):
    """(validated ρ per level, kernel coefficient per level)."""
    rhos = tuple(rhos)
    if len(rhos) == 0:
        raise InputError("rhos", rhos, "need at least one level")
    fr = tuple(check_rho(r, f"rho[{i + 1}]") for i, r in enumerate(rhos))
    return fr, tuple(coefficient(r, convention) for r in fr)


def uniqueness_posterior(x_stars, p, rhos, *, convention: str = "paper", dps: int = DPS_RESULT):
    """Posterior ``P[X = 1 | x_1*, …, x_ℓ*]`` (closed form, mpf at ``dps`` digits).

    Notes
    -----
    ``σ(log(p/(1-p)) + Σ a_i (2x_i* - 1))``; exact up to 10^-(dps-5).  Reference: Kazan
    and Reiter, supplement §S1.3.
    """
    p = check_prior(p)
    _, coeffs = _levels(rhos, convention)
    if len(x_stars) != len(coeffs):
        raise InputError("x_stars", x_stars, f"need one value per level ({len(coeffs)})")
    W = sum((a * (2 * int(x) - 1) for a, x in zip(coeffs, x_stars)), Fraction(0))
    with mpmath.workdps(dps):
        return 1 / (1 + mpmath.exp(-(log_prior_odds(p) + to_mpf(W))))


@dataclass(frozen=True)
class UniquenessResult(CentredBracket):
    """Exact risk of the ℓ-level uniqueness attack for one prior.

    Attributes
    ----------
    p : Fraction
    rhos : tuple of Fraction
        ρ of levels 1..ℓ.
    convention : str
    expected_posterior : float
        ``E[P[X = 1 | X*] | X = 1]``.
    expected_risk : float
        ``expected_posterior / p``.
    p_correct : float
        ``P[posterior > 1/2 | X = 1]``.
    left_out : float
        Noise mass not summed (all levels).
    error_bound : float
        Absolute bound on the error of ``expected_posterior`` (Taylor remainder + left-out
        + rounding); ``error_bound / p`` for ``expected_risk``.
    p_correct_error_bound : float
        Absolute bound for ``p_correct`` (left-out + rounding).
    """

    _CAP, _ARG, _NAME = 1, "", "expected posterior"

    p: Fraction
    rhos: tuple
    convention: str
    expected_posterior: float
    expected_risk: float
    p_correct: float
    left_out: float
    error_bound: float
    p_correct_error_bound: float

    @property
    def estimate(self):
        """``expected_posterior``: the number ``error_bound`` bounds (``value`` is its certified upper end)."""
        return self.expected_posterior

    @property
    def ell(self) -> int:
        return len(self.rhos)


def _atoms(a: Fraction, log_eps: float):
    table = dg_table(a, dps=DPS_LOW, log_eps=log_eps)
    eta = np.arange(-table.K, table.K + 1, dtype=np.int64)
    with mpmath.workdps(DPS_LOW):
        out = float(table.outside)
    return eta, table.floats(), out


class _MomentGrid:
    """Law of U = Σ a_i E_i on a δ-grid with rounding-offset moments of order 0..3."""

    def __init__(self, delta: float):
        self.delta = delta
        self.kmin = 0
        self.M = np.zeros((4, 1))
        self.M[0, 0] = 1.0
        self.levels = 0

    def add(self, a: float, eta: np.ndarray, w: np.ndarray):
        v = a * eta.astype(np.float64)
        n = np.rint(v / self.delta).astype(np.int64)
        e = v - n * self.delta
        L = self.M.shape[1]
        lo, hi = int(n.min()), int(n.max())
        new = np.zeros((4, L + hi - lo))
        binom = ((1,), (1, 1), (1, 2, 1), (1, 3, 3, 1))
        for j in range(eta.size):
            s = int(n[j] - lo)
            ej = e[j]
            wj = w[j]
            for q in range(4):
                acc = np.zeros(L)
                for r in range(q + 1):
                    acc += binom[q][r] * ej ** (q - r) * self.M[r]
                new[q, s : s + L] += wj * acc
        self.M = new
        self.kmin += lo
        self.levels += 1

    def expect_sigmoid(self, c: float) -> float:
        """Σ_k Σ_q φ^(q)(kδ)/q! M_q[k] with φ(u) = σ(c + 2u)."""
        k = np.arange(self.kmin, self.kmin + self.M.shape[1], dtype=np.float64)
        t = c + 2 * k * self.delta
        s = 1.0 / (1.0 + np.exp(-t))
        d1 = s * (1 - s)
        d2 = d1 * (1 - 2 * s)
        d3 = d1 * (1 - 6 * s + 6 * s * s)
        total = np.sum(s * self.M[0]) + np.sum(2 * d1 * self.M[1]) + np.sum(4 * d2 / 2 * self.M[2]) + np.sum(
            8 * d3 / 6 * self.M[3]
        )
        return float(total)

    def remainder_bound(self) -> float:
        r = self.levels * self.delta / 2
        return 16 * SIGMA4_SUP / 24 * r**4


def _half_product(coeffs, atoms):
    """Enumerate one half: values Σ a_i η_i, weights, and the η tuples (pruned)."""
    vals = np.zeros(1)
    wts = np.ones(1)
    etas = np.zeros((0, 1), dtype=np.int64)
    pruned = 0.0
    for a, (eta, w, _) in zip(coeffs, atoms):
        v = (vals[:, None] + float(a) * eta[None, :]).ravel()
        ww = (wts[:, None] * w[None, :]).ravel()
        et = np.vstack([np.repeat(etas, eta.size, axis=1), np.tile(eta, vals.size)[None, :]])
        keep = ww >= _PRUNE
        pruned += float(ww[~keep].sum())
        vals, wts, etas = v[keep], ww[keep], et[:, keep]
    return vals, wts, etas, pruned


def _decide_exact(p: Fraction, coeffs, etas) -> bool:
    """Exact decision "posterior > 1/2" for X* = 1 + η (rational arithmetic / mpmath)."""
    W = sum((a * (2 * (1 + int(e)) - 1) for a, e in zip(coeffs, etas)), Fraction(0))
    if p == Fraction(1, 2):
        return W > 0
    dps = DPS_ANALYSIS
    while True:
        with mpmath.workdps(dps):
            diff = log_prior_odds(p) + to_mpf(W)
            if abs(diff) > mpmath.mpf(10) ** (-(dps - 10)):
                return bool(diff > 0)
        dps *= 2
        if dps > 2000:  # pragma: no cover - impossible by Lindemann–Weierstrass
            raise ArithmeticError("tie not resolvable")


def _p_correct(p: Fraction, coeffs, atoms, lpo: float):
    ell = len(coeffs)
    h = (ell + 1) // 2
    va, wa, ea, pa = _half_product(coeffs[:h], atoms[:h])
    vb, wb, eb, pb = _half_product(coeffs[h:], atoms[h:])
    order = np.argsort(vb, kind="stable")
    vb, wb, eb = vb[order], wb[order], eb[:, order]
    suffix = np.concatenate([np.cumsum(wb[::-1])[::-1], [0.0]])
    A = float(sum(coeffs, Fraction(0)))
    tau = -(lpo + A) / 2  # decide iff U > tau
    tol = 1e-9 * (1 + abs(tau) + float(np.max(np.abs(va))) + float(np.max(np.abs(vb))))
    lo_idx = np.searchsorted(vb, tau - va - tol, side="left")
    hi_idx = np.searchsorted(vb, tau - va + tol, side="right")
    total = float(np.sum(wa * suffix[hi_idx]))  # certainly above the threshold
    extra = []
    for i in np.nonzero(hi_idx > lo_idx)[0]:
        for j in range(int(lo_idx[i]), int(hi_idx[i])):
            et = list(ea[:, i]) + list(eb[:, j])
            if _decide_exact(p, coeffs, et):
                extra.append(wa[i] * wb[j])
    value = total + math.fsum(extra)
    # binary64: suffix sums (≤ γ_nb), products and the final sum (≤ γ_na), weights (ℓ·u)
    rounding = 1.01 * (vb.size + va.size + 4 * ell + 16) * EPS64 * max(value, 1e-300)
    return value, pa + pb, rounding


def uniqueness_attack(p, rhos, *, convention: str = "paper", eps: float = 1e-16,
                      delta: float | None = None) -> UniquenessResult:
    """Expected posterior, risk and decision probability of the ℓ-level attack.

    Parameters
    ----------
    p : rational
        The adversary's prior ``p_v`` that the target has ``c_e``.
    rhos : sequence of rationals
        ρ of levels 1..ℓ (e.g. ``presets.PRESETS["paper"].level_rhos(ell)``).
    convention : {"paper", "production"}
    eps : float
        Noise mass left out per level.
    delta : float, optional
        Grid step of the moment grid (default makes the Taylor remainder ≤ 1e-14).

    Returns
    -------
    UniquenessResult

    Notes
    -----
    See the module docstring for the two exact methods and their error bounds.
    Reference: Kazan and Reiter (arXiv 2204.04253), supplement §S1.3, Figure 7.
    """
    return uniqueness_curve(p, rhos, convention=convention, eps=eps, delta=delta, ells=(len(rhos),))[0]


def uniqueness_curve(p, rhos, *, convention: str = "paper", eps: float = 1e-16, delta: float | None = None,
                     ells=None) -> tuple:
    """:func:`uniqueness_attack` for ``ℓ = 1 … len(rhos)`` (or the given ``ells``).

    Returns
    -------
    tuple of UniquenessResult

    Notes
    -----
    The moment grid is built incrementally, so the whole curve costs about as much as
    the largest ``ℓ``.  Error bounds as in the module docstring (Taylor remainder
    ``16·0.1277/24·(ℓδ/2)⁴`` ≤ 1e-14 by default, plus left-out mass and rounding).
    Reference: Kazan and Reiter, supplement §S1.3.
    """
    check_convention(convention)
    p = check_prior(p)
    rho_fr, coeffs = _levels(rhos, convention)
    L = len(coeffs)
    ells = tuple(range(1, L + 1)) if ells is None else tuple(int(e) for e in ells)
    for e in ells:
        if not 1 <= e <= L:
            raise InputError("ell", e, f"must be in 1..{L}")
    log_eps = math.log(eps)
    atoms = [_atoms(a, log_eps) for a in coeffs]
    if delta is None:
        # 16·SIGMA4_SUP/24·(ℓδ/2)^4 ≤ 1e-14
        delta = 2 * (1e-14 * 24 / (16 * SIGMA4_SUP)) ** 0.25 / max(ells)
    with mpmath.workdps(DPS_LOW):
        lpo = float(log_prior_odds(p))
    grid = _MomentGrid(float(delta))
    out = []
    n_ops = 0
    for ell in range(1, max(ells) + 1):
        eta, w, _ = atoms[ell - 1]
        grid.add(float(coeffs[ell - 1]), eta, w)
        n_ops += eta.size + 8
        if ell not in ells:
            continue
        A = float(sum(coeffs[:ell], Fraction(0)))
        epost = grid.expect_sigmoid(lpo + A)
        left = sum(at[2] for at in atoms[:ell])
        rounding = 1.01 * (n_ops + 64) * EPS64 * 4
        err = grid.remainder_bound() + left + rounding
        pc, pruned, pc_round = _p_correct(p, coeffs[:ell], atoms[:ell], lpo)
        pc_err = left + pruned + pc_round
        out.append(
            UniquenessResult(
                p=p,
                rhos=rho_fr[:ell],
                convention=convention,
                expected_posterior=epost,
                expected_risk=epost / float(p),
                p_correct=pc,
                left_out=left,
                error_bound=err,
                p_correct_error_bound=pc_err,
            )
        )
    return tuple(out)
