"""A pair's composition from its ρ, built from cached unit mechanisms (sweep and tuner).

``Composition.from_rhos`` validates and builds one mechanism per distinct ρ of every pair; a
sweep or a tune pass builds hundreds of compositions from the same few dozen ρ.  Here each
unit-shift mechanism is built once and a pair's groups are formed directly, in the order
``Composition``'s own sort gives them: the same Composition.
"""

from __future__ import annotations

from fractions import Fraction

__all__ = ["composition_from_rhos"]

_UNIT_MECHANISMS: dict = {}  # (p, q) of ρ = p/q → its unit-shift mechanism


def _unit_mechanism(key: tuple, rho: Fraction) -> tuple:
    """``(DiscreteGaussian(variance(ρ, "production"), 1), float(ρ))`` of one ρ > 0 (built
    once: a sweep's and a tune's compositions share their groups), keyed by ``(p, q)`` of
    the normalised ρ."""
    m = _UNIT_MECHANISMS.get(key)
    if m is None:
        from exactdp.dgauss.conventions import variance
        from exactdp.mechanisms import DiscreteGaussian

        if len(_UNIT_MECHANISMS) >= 4096:
            _UNIT_MECHANISMS.clear()
        m = _UNIT_MECHANISMS[key] = (DiscreteGaussian(variance(rho, "production"), 1), float(rho))
    return m


def composition_from_rhos(rhos):
    """``Composition.from_rhos(rhos)``, the same Composition (equal groups in the same order).

    For a sequence of Fractions ρ ≥ 0 (an allocation's, already validated) the groups are
    formed here: one cached mechanism per distinct ρ > 0 (σ² = 1/ρ, so distinct ρ give
    distinct mechanisms), ordered by σ² ascending — the order of ``Composition``'s sort of
    ``(mechanism, count)`` pairs, whose mechanisms compare by ``(σ², shift)`` with every
    shift 1 — without its per-group validation; anything else goes to ``from_rhos``.
    """
    from exactdp.mechanisms import MAX_COUNT, Composition

    counts: dict = {}  # (p, q) of each ρ = p/q > 0 (normalised: equal values, equal keys) → [ρ, count]
    if isinstance(rhos, (tuple, list)):
        for r in rhos:
            if type(r) is not Fraction:
                counts = {}
                break
            p = r.numerator
            if p < 0:
                counts = {}
                break
            if p:
                key = (p, r.denominator)
                got = counts.get(key)
                if got is None:
                    counts[key] = [r, 1]
                else:
                    got[1] += 1
    if not counts or max(c for _, c in counts.values()) > MAX_COUNT:
        return Composition.from_rhos(rhos)
    # σ² = 1/ρ ascending is ρ descending (distinct ρ: the order is total); float(ρ) is
    # correctly rounded, so monotone: where the floats are distinct they sort as the ρ do
    rows = [(_unit_mechanism(k, r), r, c) for k, (r, c) in counts.items()]
    if len({mf[1] for mf, _, _ in rows}) == len(rows):
        rows.sort(key=_float_of, reverse=True)
    else:
        rows.sort(key=_rho_of, reverse=True)
    comp = object.__new__(Composition)
    object.__setattr__(comp, "groups", tuple((mf[0], c) for mf, _, c in rows))
    return comp


def _float_of(row):
    return row[0][1]


def _rho_of(row):
    return row[1]
