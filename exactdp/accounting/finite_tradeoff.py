"""β = f(α) of a finite privacy loss: the exact Neyman–Pearson test on certified balls.

The loss of :class:`~exactdp.engine.finite_loss.FiniteLoss` (finite kinds, and discrete
Gaussians as windows) has finitely many atoms on one grid; the Neyman–Pearson test rejects
them in increasing order of the loss (first the Q-only atom of mass p_∞, free), so on the
piece ``P[L < v_k] ≤ α ≤ P[L ≤ v_k]``

    β = P[L ≤ −v_{k+1}] + (P[L ≤ v_k] − α)·e^{−v_k}          (``Q[L = v] = P[L = −v]``),

in ball arithmetic at rising precision.  The windows leave out a P-mass D (their deficit):
``β_true ∈ [β_kept, β_kept + D]``; where β is far below D (a near-deterministic discrete
Gaussian with a large shift: β ≈ 1e-2852 beside D ≈ 5e-488) the windows are widened to the
depth β needs rather than the precision raised.  Reference: Dong, Roth & Su (2022), Prop. 2.2
(f-DP as the Neyman–Pearson trade-off); Neyman & Pearson (1933).
"""

from __future__ import annotations

import math
from fractions import Fraction

import flint
import mpmath

from exactdp.accounting.mixed_balls import FLOOR, PRECS, to_mpf
from exactdp.engine.finite_loss import FiniteLoss, prec_ctx
from exactdp.kinds.dgauss_window import GaussianWindow
from exactdp.numerics.errors import UncertifiedError
from exactdp.numerics.exact import alpha_display

__all__ = ["BETA_WIDTH", "beta_finite", "exact_ball"]

#: the relative width aimed at for β
BETA_WIDTH = 2.4e-10


def exact_ball(x: Fraction) -> flint.arb:
    """The ball of an exact rational at no less than 512 bits (or the context's precision)."""
    with prec_ctx(max(flint.ctx.prec, 512)):
        return flint.arb(flint.fmpq(x.numerator, x.denominator))


_q = exact_ball


def beta_finite(acc, alpha: Fraction) -> tuple:
    """The exact Neyman–Pearson β of the finite loss (α = 0 and 1 also with a Gaussian part).

    β_true lies in ``[β_kept, β_kept + D]`` (D the discrete-Gaussian windows' deficit).  Where
    β_kept is certified to the width asked but lies below D/BETA_WIDTH (a β of 1e-2852 beside
    windows of deficit 5e-488), higher precision cannot help: the windows are widened instead
    (:func:`_wider_windows`), at most :data:`_WIDENINGS` times, and the
    query is refused at once when they cannot be."""
    fin = acc.finite
    widened = 0
    for p in PRECS:
        while True:
            kept = _beta_kept(fin, alpha, p)
            if kept is None:
                break  # (too wide at this precision)
            with prec_ctx(p):
                b = kept + fin.deficit(p)  # β_true ∈ [β_kept, β_kept + D]
            lo, hi = max(to_mpf(b, False), mpmath.mpf(0)), min(to_mpf(b, True), mpmath.mpf(1))
            if hi <= FLOOR or hi - lo <= BETA_WIDTH / 2 * hi:
                return lo, hi
            k_lo, k_hi = to_mpf(kept, False), to_mpf(kept, True)
            if not (k_lo > 0 and k_hi - k_lo <= BETA_WIDTH / 8 * k_lo):
                break  # β_kept itself too wide: more precision
            wider = _wider_windows(fin, k_lo) if widened < _WIDENINGS else None
            if wider is None:
                raise UncertifiedError(f"β(α = {alpha_display(alpha)}) ≈ {mpmath.nstr(k_lo, 6)} lies below the "
                                       f"discrete-Gaussian windows' deficit {mpmath.nstr(hi - k_hi, 3)}, and the "
                                       f"windows cannot be widened within the finite composition's budget")
            fin, widened = wider, widened + 1
    raise UncertifiedError(f"β(α = {alpha_display(alpha)}) could not be bracketed to {BETA_WIDTH:g} relative")


#: how many times :func:`beta_finite` may widen the discrete-Gaussian windows
_WIDENINGS = 3
#: the deepest window asked (nats; β ≥ FLOOR = 1e-4000 is above e^{−9211})
_MAX_NATS = 12_000.0


def _beta_kept(fin, alpha: Fraction, p: int):
    """The Neyman–Pearson β of the kept atoms at ``p`` bits (a ball; without the deficit), or
    None once the union of the candidate pieces is already too wide for :data:`BETA_WIDTH`
    (it only grows: the next precision is due)."""
    n = fin.size
    masses, prefix, suffix, p_inf = fin.tables(p)
    with prec_ctx(p):
        a = _q(alpha)
        if alpha == 0:
            return 1 - p_inf
        if alpha == 1 or a >= 1 - p_inf:
            return flint.arb(0) if alpha == 1 or (1 - p_inf).upper() <= a else flint.arb(0).union(1 - p_inf - a)
        b = None
        lo_k, hi_k = 0, n - 1  # the pieces whose α-range [prefix[k], prefix[k+1]] may hold α
        while lo_k < hi_k:
            mid = (lo_k + hi_k) // 2
            if prefix[mid + 1].upper() < a:
                lo_k = mid + 1
            else:
                hi_k = mid
        k = lo_k
        seen = 0
        while k < n and not prefix[k].lower() > a:
            if not masses[k].is_zero():
                gap = prefix[k + 1] - a if 2 * k < n else (1 - p_inf - a) - suffix[k + 1]
                piece = prefix[n - 1 - k] + gap.nonnegative_part() * (-_q(fin.value(k))).exp()
                b = piece if b is None else b.union(piece)
                seen += 1
                if seen % 64 == 0 and _too_wide(b):
                    return None
            k += 1
        return flint.arb(0).union(1 - a) if b is None else b


def _too_wide(b: flint.arb) -> bool:
    """Whether a ball that can only grow already fails :func:`beta_finite`'s width test."""
    lo, hi = max(to_mpf(b, False), mpmath.mpf(0)), min(to_mpf(b, True), mpmath.mpf(1))
    return hi > FLOOR and hi - lo > BETA_WIDTH / 2 * hi


def _wider_windows(fin, beta_lo: mpmath.mpf):
    """The finite loss with its discrete-Gaussian windows deep enough that their deficit lies
    below ``BETA_WIDTH/8 · beta_lo``, or None (no windows, deeper than :data:`_MAX_NATS`, or
    a composition beyond the dense / sparse budgets)."""
    wins = [g for g, _ in fin.groups if isinstance(g, GaussianWindow)]
    if not wins:
        return None
    target = BETA_WIDTH / 8 * beta_lo
    nats = float(-mpmath.log(target)) + math.log(len(wins)) + 3
    if nats > _MAX_NATS:
        return None
    groups = tuple((GaussianWindow(g.mech, c, nats=max(g.nats + 1, nats)), c) if isinstance(g, GaussianWindow)
                   else (g, c) for g, c in fin.groups)
    try:
        wider = FiniteLoss(groups)
    except UncertifiedError:
        return None
    if not (wider.sparse or wider._sparse_pays() or wider.size <= 4 * fin.size):
        return None
    return wider
