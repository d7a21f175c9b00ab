"""The trade-off of a :class:`~exactdp.kinds.Mixture` whose discrete-Gaussian oracle cannot give
``1 − δ``: its twin with every discrete Gaussian as a window of the finite part.

The dual ``G = e^ε(1 − α − δ(−ε))`` needs ``1 − δ(t) − α`` to β's relative width.  Beside the
discrete Gaussians' oracle, ``1 − δ`` is summed from ``c_G(s) = 1 − δ_G(s)``
(:mod:`~exactdp.accounting.mixed_complement`), ``c_G`` as wide as the oracle's δ_G (1e-12
relative) over ``1 − δ_G(0)``; where δ_G(0) is within a hundredth of 1 (1e-10 relative and worse;
a near-deterministic part: second audit design 4, ``DG(0.1125, 8)×38``, ρ ≈ 10808, δ_G(0) ≈
1 − e^{−2700}) the oracle's 1e-12 relative width leaves c_G no digit: β(1e-12) was refused
"[0, 1]" after 42 CPU-s.  The same discrete Gaussians as windows
(:class:`~exactdp.kinds.dgauss_window.GaussianWindow`, mass e^{−760} relative left out, on the
conservative side) compose with the other finite kinds sparsely into few atoms (26,010 there,
although the common grid has 1.7e10 points), and the finite part's ball of δ is then exact up to
its precision and the windows' deficit D: ``δ ∈ [δ_kept, δ_kept + D]``, which the dual's G carries
(``e^ε D`` absolute, far below ``e^ε(1 − α − δ)`` ≈ β where β is far below D itself).

:func:`windowed_twin` builds that twin (a shallow copy of the accountant with the finite part,
oracle and caches replaced), where the twin's atoms are at most
:data:`TWIN_ATOMS` and the oracle's δ_G(0) is certified above
``1 −`` :data:`NEAR_ONE`; otherwise None and the oracle's route answers.
"""

from __future__ import annotations

import copy
from fractions import Fraction

import flint

from exactdp.engine.finite_loss import FiniteLoss, prec_ctx
from exactdp.kinds.dgauss_window import GaussianWindow
from exactdp.numerics.errors import UncertifiedError

__all__ = ["windowed_twin", "rr_twin", "NEAR_ONE", "TWIN_ATOMS"]

#: the most atoms of the twin's finite part (as many as the near-deterministic split's, ``mixed.SPLIT_ATOMS``)
TWIN_ATOMS = 100_000
#: the twin is taken where the oracle's δ_G(0) is certified above 1 − this
NEAR_ONE = Fraction(1, 100)


def windowed_twin(acc):
    """The accountant ``acc`` with its discrete-Gaussian oracle replaced by windows of the
    finite part, or None (no oracle, continuous parts beside it, an oracle whose δ_G(0) is not
    near 1, or a twin of more than :data:`TWIN_ATOMS` atoms).
    Cached on the accountant."""
    if "twin" in acc._f_cache:
        return acc._f_cache["twin"]
    twin = None
    if acc.gauss is not None and not acc.mu and acc.laplace is None and acc.finite.step != 0:
        key = acc._key(Fraction(0))
        if key not in acc._g_cache:
            acc._fill({key: Fraction(0)}, acc._g_cache)
        with prec_ctx(128):
            near_one = bool(acc._g_cache[key].lower() > 1 - flint.arb(flint.fmpq(NEAR_ONE.numerator,
                                                                                  NEAR_ONE.denominator)))
        if near_one:
            twin = _build(acc)
    acc._f_cache["twin"] = twin
    return twin


def rr_twin(acc):
    """The same twin beside randomized responses by noise parameter, whatever δ_G(0), or None (no
    such responses, no oracle, continuous parts, or beyond :data:`TWIN_ATOMS`): its loss is finite,
    so β is the Neyman–Pearson split on its joint atoms
    (:mod:`~exactdp.accounting.rr_neyman_pearson`, the windows' deficit on the conservative side)
    rather than the dual's stencils around irrational kinks over the oracle (sixth audit, rrnbeta
    #0: 24.6 CPU-s).  Cached on the accountant."""
    if "rr_twin" not in acc._f_cache:
        ok = acc.rr is not None and acc.gauss is not None and not acc.mu and acc.laplace is None
        acc._f_cache["rr_twin"] = _build(acc) if ok and acc.finite.step != 0 else None
    return acc._f_cache["rr_twin"]


def _build(acc):
    moving = tuple((m, c) for m, c in acc.gauss.composition.groups if m.shift)
    try:
        fin = FiniteLoss(acc.finite.groups + tuple((GaussianWindow(m, c), c) for m, c in moving))
    except UncertifiedError:  # (beyond the finite part's own limits)
        return None
    if min(fin.size, fin.sparse_bound()) > TWIN_ATOMS:
        return None
    twin = copy.copy(acc)
    twin.finite = fin
    twin.gauss, twin.gauss_route = None, ""
    twin.split = acc.split + moving
    twin.curve_rho = Fraction(0)  # (no oracle: its curve's zCDP caps are not used)
    twin._g_cache, twin._rids, twin._f_cache = {}, {}, {"twin": None, "rr_twin": None}
    return twin
