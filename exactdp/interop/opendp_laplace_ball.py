"""The Laplace on an ℓ1 ball of shift vectors: one coordinate moved by the whole norm is the worst case.

OpenDP adds independent discrete Laplace noise (``make_laplace`` / ``make_geometric`` on integer
vectors, or on a float vector's 2^k grid) to a vector query whose neighbours differ by an integer
shift vector ``r`` of ℓ1 norm at most ``B``.  Each coordinate's ``r_i`` is one pair of the product;
the maximal vectors (the partitions of ``B``) are more than :data:`~exactdp.interop.opendp.MAX_PATTERNS`
already for ``B = 12``.  They need not be enumerated: :func:`l1_worst_shifts` returns the one
pattern ``(B,)``, which dominates every vector of the ball, alone and beside any other mechanisms.

Theorem.  Write ``E_s`` for the pair ``(P_s, Q_s) = (Lap_b(0), Lap_b(s))`` (discrete: pmf ∝
``r^{|x|}``, ``r = e^{−1/b}``, integer ``s ≥ 0``; continuous: density ∝ ``e^{−|x|/b}``, real ``s ≥ 0``).
For ``s, t ≥ 0`` the pair ``E_s ⊗ E_t`` is a garbling of ``E_{s+t}``: its trade-off function is
pointwise at least that of ``E_{s+t}``.  Hence (by induction, and since a tensor product of
trade-off functions is monotone in each factor: Dong, Roth & Su 2022, Lemma C.1; and ``E_s ≤ E_s ⊗ E_u``),
for every shift vector ``r`` with ``‖r‖₁ ≤ B`` and every other pair ``G``,
``T(⊗_i E_{|r_i|} ⊗ G) ≥ T(E_B ⊗ G)``: the privacy profile at ``(B,)`` is the maximum over the ball.

Proof.  In ``E_s`` the likelihood ratio ``P_s/Q_s(x) = e^{(s − 2C)/b}`` depends on ``x`` only through
``C = clip(x, 0, s)``; in ``E_s ⊗ E_t`` it is ``e^{(s + t − 2T)/b}`` with ``T = C₁ + C₂`` (each clipped to
its own range), the same decreasing function ``λ`` of a statistic on ``[0, s + t]``.  Under ``P``,
``C`` has atoms ``1/(1 + r)`` at 0 and ``r^s/(1 + r)`` at ``s`` (continuous: ``1/2``, ``e^{−s/b}/2``) and
mass ``c·r^u``, ``c = (1 − r)/(1 + r)``, at each interior ``u`` (continuous: density ``e^{−u/b}/(2b)``).
``T`` has atoms ``1/(1 + r)²`` and ``r^{s+t}/(1 + r)²`` at the ends — less than ``C``'s.  At an
interior ``u`` the pairs ``(i, u − i)`` with ``i ∈ [max(0, u − t), min(s, u)]`` are at least two, and the
first and the last each have one coordinate at an end of its range: each carries at least
``(1/(1 + r))·c·r^u`` (continuous: an atom ``1/2`` or ``e^{−s/b}/2`` times the other's density, ``e^{−u/b}/(4b)``),
so ``P(T = u) ≥ 2c·r^u/(1 + r) ≥ c·r^u = P(C = u)``.  Thus ``P_C − P_T`` is ``+`` at both ends and
``≤ 0`` inside, and so is ``Q_C − Q_T`` (``dQ = dP/λ``, the same ``λ``).  With ``x = e^ε``,
``D(x) = δ_C(ε) − δ_T(ε) = ∫ (λ − x)₊ d(Q_C − Q_T)`` is 0 for ``x`` at or beyond the range of ``λ``
(both measures have mass 1 and ``∫λ dQ = 1``) and has slope ``−(Q_C − Q_T)(λ > x)``, which is
``≥ 0`` and then ``≤ 0`` as ``x`` grows (the sign pattern ``+, −, +`` in the order of ``λ``): ``D`` rises
and then falls, from 0 back to 0, so ``D ≥ 0``: ``δ_{s+t}(ε) ≥ δ_{s⊗t}(ε)`` for every real ε.
Both pairs are symmetric (``x ↦ s − x`` swaps ``P`` and ``Q``), so the reversed pairs are ordered the
same way, and δ(ε) for all ε determines the trade-off function (Dong, Roth & Su 2022,
Proposition 2.12).  ∎  (``tests/test_opendp_laplace_ball.py`` checks the conclusion against every
integer vector of small balls, exactly.)

>>> from exactdp.interop.opendp_laplace_ball import l1_worst_shifts
>>> l1_worst_shifts(13)
[(13,)]
"""

from __future__ import annotations

__all__ = ["l1_worst_shifts", "LAPLACE_NOISE"]

#: the OpenDP constructors whose integer noise is the discrete Laplace
LAPLACE_NOISE = frozenset({"make_laplace", "make_geometric"})


def l1_worst_shifts(budget: int) -> list[tuple[int, ...]]:
    """The one worst-case pattern of independent Laplace noise on an ℓ1 ball of integer shifts.

    Parameters
    ----------
    budget : int
        The largest ℓ1 norm ``B ≥ 0`` a shift vector may have (in grid steps).

    Returns
    -------
    list of tuple of int
        ``[(B,)]`` (one coordinate moved by the whole norm), ``[()]`` for ``B = 0``.

    Notes
    -----
    Method and proof: the module docstring (a garbling argument; no pattern is enumerated).
    Reference: Dong, Roth & Su (2022), "Gaussian differential privacy", JRSS B — trade-off
    functions, their tensor products and Proposition 2.12 (profiles and trade-off functions).
    """
    b = int(budget)
    if b != budget or b < 0:
        raise ValueError(f"budget must be an integer >= 0, got {budget!r}")
    return [(b,)] if b else [()]
